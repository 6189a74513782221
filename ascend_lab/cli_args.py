"""What every ``ascend-lab`` command shares: the error a bad argument raises, the argument types (op names, dtype,
SoC, integers, shapes) and how values are printed. Imported by :mod:`.cli`, :mod:`.cli_run` and (through
:mod:`.cli`) :mod:`.cli_kernel`."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import numpy as np

from .base.platform import get_soc
from .dtypes import as_acl_dtype, to_numpy
from .ops import registry

PROG = "ascend-lab"

#: ``--n`` / ``--shape`` above this many elements is refused (the simulator holds everything in host memory).
MAX_RUN_ELEMENTS = 2**28

#: ``--shape`` with more dimensions than this is refused before numpy sees it (numpy holds at most 64).
MAX_SHAPE_DIMS = 64


class CliError(Exception):
    """A bad argument: reported as one ``ascend-lab: error: ...`` line on stderr, exit code 2."""


class Parser(argparse.ArgumentParser):
    """argparse, but an error raises :class:`CliError` instead of printing usage and exiting."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise CliError(message)


# --------------------------------------------------------------------------------------------------
# Names accepted on the command line
# --------------------------------------------------------------------------------------------------

def tiling_op(text: str) -> str:
    try:
        return registry.get(text).key
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def run_op(text: str) -> str:
    try:
        return registry.aclnn_api(text)[1].convenience
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def dtype_arg(text: str) -> Any:
    try:
        dt = as_acl_dtype(text)
        to_numpy(dt)
    except (TypeError, ValueError) as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return dt


def soc_arg(text: str) -> str:
    try:
        return get_soc(text).name
    except (TypeError, ValueError) as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def int_arg(text: str, what: str, minimum: int) -> int:
    body = text.strip().replace("_", "")
    try:
        value = int(body, 10) if body.lstrip("+-").isdigit() else int(body, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{what} must be an integer, got {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"{what} must be >= {minimum}, got {value}")
    return value


def count_arg(text: str) -> int:
    return int_arg(text, "an element count", 0)


def positive_arg(what: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        return int_arg(text, what, 1)
    parse.__name__ = what
    return parse


def shape_arg(text: str) -> tuple[int, ...]:
    """``4,2`` -> (4, 2); ``0,3`` is an empty tensor; ``""`` or ``()`` is a 0-d tensor."""
    body = text.strip()
    if body[:1] in "([" and body[-1:] in ")]":
        body = body[1:-1].strip()
    if not body:
        return ()
    parts = [p.strip() for p in body.split(",")]
    if parts[-1] == "" and len(parts) > 1:
        parts = parts[:-1]   # "4," is the 1-d shape (4,)
    dims = []
    for p in parts:
        if not p.isdigit():
            raise argparse.ArgumentTypeError(f"malformed shape {text!r}: use non-negative integers separated "
                                             "by commas, e.g. 4,2 (0,3 is an empty tensor)")
        dims.append(int(p))
    if len(dims) > MAX_SHAPE_DIMS:
        raise argparse.ArgumentTypeError(f"shape {text!r} has {len(dims)} dimensions; at most {MAX_SHAPE_DIMS} "
                                         "can be given (aclnn itself accepts up to 8)")
    if any(d >= 2**63 for d in dims):
        raise argparse.ArgumentTypeError(f"shape {text!r} has a dimension of 2**63 or more, which no tensor can "
                                         "have (CANN's dimensions are int64)")
    return tuple(dims)



def fmt_value(value: Any) -> str:
    if isinstance(value, float):
        return str(np.float32(value))   # the shortest text that is the C float the kernel reads
    return str(value)


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"



def option_names() -> list[str]:
    """Every ``--<name>`` value option the registry's ops and APIs contribute (attributes and scalars)."""
    names = {name for spec in registry.ops() for name in spec.attrs}
    names |= {sc.name for _, api in registry.aclnn_apis() for sc in api.scalars}
    return sorted(names)


def attrs_given(args: argparse.Namespace, allowed: Any, op: str) -> dict[str, float]:
    """The ``--<attr>`` options given on the command line; one the op does not take is a CliError."""
    given = {name: getattr(args, name) for name in option_names() if getattr(args, name, None) is not None}
    wrong = sorted(set(given) - set(allowed))
    if wrong:
        raise CliError(f"--{wrong[0]} does not apply to {op}; it takes "
                       f"{', '.join('--' + a for a in allowed) or 'no such options'}")
    return given



class WriteError(Exception):
    """The trace could not be written after the run (disk full, permissions changed): exit code 1."""

