"""``ascend-lab``: the simulator from a shell (console script, or ``python -m ascend_lab``).

Three commands::

    ascend-lab tiling hard_sigmoid_grad --n 100000 --dtype float32 --cores 64 --ub-size 253952
    ascend-lab run hardsigmoid_backward --shape 4,2 --dtype float32 --soc Ascend910B4 --trace out.json
    ascend-lab socs
    ascend-lab kernel run my_kernel.cpp --tiling totalLength=4096 tileLength=512   (ascend_lab.cli_kernel)

``tiling`` prints a TilingData (CANN field names, plus blockDim and tilingKey), the packed bytes the kernel
reads and what every core does with them. ``run`` runs the aclnn op on seeded random data and prints the
status, the L0 graph, the tiling, the kernel's estimated cycles, the sanitizer warnings and whether the output
is bit-exact against the golden oracle. ``socs`` lists the SoC catalogue.

Exit codes: 0 success; 1 a non-zero aclnn status (printed with its log), an output that is not bit-exact
vs golden, or a tiling the kernel could not run; 2 a bad argument (one ``ascend-lab: error:`` line on
stderr, no traceback).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import __version__, tiling
from .ascendc import options
from .base import platform
from .base.platform import DEFAULT_SOC, get_soc, socs
from .dtypes import as_acl_dtype, is_floating, to_numpy
from .opdev.errno import describe
from .opdev.tiling_data import TilingError
from .ops import registry
from .ops.spec import FLAVOURS
from .run import call

PROG = "ascend-lab"

#: ``--n`` / ``--shape`` above this many elements is refused (the simulator holds everything in host memory).
MAX_RUN_ELEMENTS = 2**28

#: ``--shape`` with more dimensions than this is refused before numpy sees it (numpy holds at most 64).
MAX_SHAPE_DIMS = 64

#: Per-core tables longer than this show the first ``_HEAD`` and last ``_TAIL`` rows around an ellipsis.
_MAX_ROWS, _HEAD, _TAIL = 12, 6, 3

#: Above this many tiles in total, the per-core rows are computed without listing every tile.
_MAX_LISTED_TILES = 1_000_000


class CliError(Exception):
    """A bad argument: reported as one ``ascend-lab: error: ...`` line on stderr, exit code 2."""


class _Parser(argparse.ArgumentParser):
    """argparse, but an error raises :class:`CliError` instead of printing usage and exiting."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise CliError(message)


# --------------------------------------------------------------------------------------------------
# Names accepted on the command line
# --------------------------------------------------------------------------------------------------

def _tiling_op(text: str) -> str:
    try:
        return registry.get(text).key
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _run_op(text: str) -> str:
    try:
        return registry.aclnn_api(text)[1].convenience
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _dtype(text: str) -> Any:
    try:
        dt = as_acl_dtype(text)
        to_numpy(dt)
    except (TypeError, ValueError) as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return dt


def _soc(text: str) -> str:
    try:
        return get_soc(text).name
    except (TypeError, ValueError) as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _int(text: str, what: str, minimum: int) -> int:
    body = text.strip().replace("_", "")
    try:
        value = int(body, 10) if body.lstrip("+-").isdigit() else int(body, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{what} must be an integer, got {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"{what} must be >= {minimum}, got {value}")
    return value


def _count(text: str) -> int:
    return _int(text, "an element count", 0)


def _positive(what: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        return _int(text, what, 1)
    parse.__name__ = what
    return parse


def _shape(text: str) -> tuple[int, ...]:
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


# --------------------------------------------------------------------------------------------------
# Formatting helpers
# --------------------------------------------------------------------------------------------------

def _fmt_value(value: Any) -> str:
    if isinstance(value, float):
        return str(np.float32(value))   # the shortest text that is the C float the kernel reads
    return str(value)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _field_layout(td: Any) -> list[tuple[int, str, str, bytes]]:
    """(offset, C type, field name, bytes) for every field and padding run of the packed struct."""
    raw = td.to_bytes()
    rows, offset = [], 0
    for name, ctype in td.FIELDS:
        pad = -offset % ctype.size
        if pad:
            rows.append((offset, "", "(padding)", raw[offset:offset + pad]))
            offset += pad
        rows.append((offset, ctype.c_name, name, raw[offset:offset + ctype.size]))
        offset += ctype.size
    if offset < len(raw):
        rows.append((offset, "", "(padding)", raw[offset:]))
    return rows


def _print_tiling_fields(td: Any, out: Callable[[str], None]) -> None:
    out(f"TilingData {type(td).__name__} ({td.SIZE} bytes):")
    values = {k: _fmt_value(v) for k, v in td.as_dict().items()}
    width = max(len(k) for k in values)
    vwidth = max(len(v) for v in values.values())
    notes = {"blockDim": "(beside the struct: SetBlockDim, cores launched)",
             "tilingKey": "(beside the struct: SetTilingKey, kernel template)"}
    for key, text in values.items():
        out(f"  {key:<{width}}  {text:<{vwidth}}  {notes.get(key, '')}".rstrip())
    out("packed bytes (little-endian, natural C alignment; what GET_TILING_DATA reads):")
    for offset, ctype, name, chunk in _field_layout(td):
        out(f"  +{offset:<3d} {ctype:<9} {name:<{width}}  {chunk.hex(' ')}")
    out(f"  hex: {td.to_bytes().hex()}")


# --------------------------------------------------------------------------------------------------
# ascend-lab tiling
# --------------------------------------------------------------------------------------------------

def core_rows(op: str, td: Any, dtype: Any, n: int) -> list[dict[str, Any]]:
    """What each core does (the op kernel's ``core_ranges``), with ``padding`` on every row; without the
    per-tile lists when the input has more than ``_MAX_LISTED_TILES`` tiles."""
    spec, kernel = registry.op_for_tiling(td)
    tile_elems = max(kernel.tile_elements(td, dtype, n), 1)
    rows = kernel.core_ranges(td, dtype, n, tiles=n // tile_elems <= _MAX_LISTED_TILES)
    for r in rows:
        r.setdefault("padding", max(0, r["padded_end"] - max(r["offset"], n)))
    return rows


def _print_core_table(rows: list[dict[str, Any]], n: int, out: Callable[[str], None], show_all: bool) -> None:
    if not rows:
        out("per-core work: no core has any work (empty input: the kernel returns at once)")
        return
    out(f"per-core work ({_plural(len(rows), 'core')} with work):")
    head = ("core", "kind", "offset", "elements", "tiles", "tail", "padding")
    cells = [(str(r["core"]), r["kind"], str(r["offset"]), str(r["data_num"]), str(r["tile_num"]), str(r["tail"]),
              str(r["padding"])) for r in rows]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(head)]

    def line(values: Sequence[str]) -> str:
        return "  " + "  ".join(v.rjust(w) if i != 1 else v.ljust(w) for i, (v, w) in enumerate(zip(values, widths,
                                                                                                     strict=True)))
    out(line(head))
    if show_all or len(cells) <= _MAX_ROWS:
        shown: list[Sequence[str] | None] = list(cells)
    else:
        shown = [*cells[:_HEAD], None, *cells[-_TAIL:]]
    for c in shown:
        if c is None:
            out(f"  {'...':>{widths[0]}}  ({len(cells) - _HEAD - _TAIL} more cores)")
        else:
            out(line(c))
    kinds = Counter(r["kind"] for r in rows)
    by_kind = ", ".join(
        f"{kinds[k]} {k} x {'/'.join(sorted({str(r['data_num']) for r in rows if r['kind'] == k}, key=int))}"
        for k in ("big", "small") if kinds[k])
    covered = sum(r["data_num"] for r in rows)
    padding = sum(r["padding"] for r in rows)
    tiles = [r["tile_num"] for r in rows]
    out(f"summary: {_plural(len(rows), 'core')} ({by_kind} elements), {_plural(sum(tiles), 'tile')} "
        f"({min(tiles)}..{max(tiles)} per core), {covered} elements touched = {n} + {padding} padding")


def _attrs_given(args: argparse.Namespace, allowed: Any, op: str) -> dict[str, float]:
    """The ``--<attr>`` options given on the command line; one the op does not take is a CliError."""
    given = {name: getattr(args, name) for name in _option_names() if getattr(args, name, None) is not None}
    wrong = sorted(set(given) - set(allowed))
    if wrong:
        raise CliError(f"--{wrong[0]} does not apply to {op}; it takes "
                       f"{', '.join('--' + a for a in allowed) or 'no such options'}")
    return given


def cmd_tiling(args: argparse.Namespace, out: Callable[[str], None]) -> int:
    spec = registry.get(args.op)
    kwargs: dict[str, Any] = {"core_num": args.cores, "ub_size": args.ub_size, "soc": args.soc,
                              "kernel": args.kernel}
    kwargs.update(_attrs_given(args, spec.attrs, spec.key))
    try:
        td = tiling.compute(spec.key, args.n, args.dtype, **kwargs)
    except (TypeError, ValueError) as exc:   # TilingError is a ValueError
        raise CliError(str(exc)) from None
    info = get_soc(args.soc)
    cores = info.vector_core_num if args.cores is None else args.cores
    ub = info.core_mem_size_ub if args.ub_size is None else args.ub_size
    source = [f"cores from {'--cores' if args.cores is not None else args.soc}",
              f"UB from {'--ub-size' if args.ub_size is not None else args.soc}"]
    out(f"{spec.op_type} tiling: {args.n} x {args.dtype.short} on {cores} vector cores, UB {ub} B "
        f"({'; '.join(source)})")
    kernel = spec.kernel(args.kernel)
    where = "registered for" if kernel.registered_for(info) else "registered only for"
    out(f"kernel: {kernel.flavour} ({kernel.source}), {where} {', '.join(kernel.socs)}"
        + ("" if kernel.registered_for(info) else f"; on {info.name} this tiling is a what-if study"))
    _print_tiling_fields(td, out)
    try:
        rows = core_rows(spec.key, td, args.dtype, args.n)
    except TilingError as exc:
        out(f"per-core work: the kernel cannot run this tiling: {exc}")
        return 1
    _print_core_table(rows, args.n, out, args.all)
    return 0


# --------------------------------------------------------------------------------------------------
# ascend-lab run
# --------------------------------------------------------------------------------------------------

def supported_run_dtypes(op: str) -> tuple[Any, ...]:
    """Every dtype the aclnn API accepts on at least one SoC (a SoC that refuses one returns 161002)."""
    _, api = registry.aclnn_api(op)
    seen: dict[Any, None] = {}
    for name in platform.socs():
        with platform.soc(name):
            for case in api.support_cases:
                seen.update(dict.fromkeys(api.dtype_support(**case)))
    return tuple(seen)


def random_inputs(shape: tuple[int, ...], dtype: Any, seed: int, count: int = 2) -> tuple[np.ndarray, ...]:
    """``count`` inputs for ``run`` (the API's tensors: (grad_output, self) for the backward ops): seeded, each
    ``shape`` in ``dtype``.

    Floats: the first ~ N(0, 1), the others ~ N(0, 4^2), so hardsigmoid's (-3, 3) window and a threshold of 1.0
    cut through the data. Integers: uniform over int8/uint8's range, or [-1000, 1000] for wider types.
    """
    np_dt = to_numpy(dtype)
    rng = np.random.default_rng(seed)
    if is_floating(dtype):
        scales = [np.float32(1.0)] + [np.float32(4.0)] * (count - 1)
        return tuple((rng.standard_normal(shape, dtype=np.float32) * s).astype(np_dt) for s in scales)
    if np_dt.itemsize == 1:
        info = np.iinfo(np_dt)
        lo, hi = int(info.min), int(info.max)
    else:
        lo, hi = -1000, 1000
    return tuple(rng.integers(lo, hi, size=shape, endpoint=True).astype(np_dt) for _ in range(count))


def golden_for(run: Any, *inputs: np.ndarray, threshold: float | None = None) -> tuple[str, np.ndarray]:
    """(oracle name, expected output) for the kernel the L0 graph ran on ``inputs`` (the API's tensors, in order;
    empty tensors: empty output).

    The kernel node names its op; the op's spec names its oracle (``module:function``) and the node
    attributes the oracle takes (``registry.oracle``), so the check follows whatever kernel the graph chose."""
    node = getattr(run, "kernel_node", None)
    if node is None:   # no kernel node: an empty tensor, nothing computed; the output keeps its (empty) shape
        return "empty output", np.zeros(inputs[-1].shape, dtype=inputs[-1].dtype)
    module, _, func = registry.oracle_call(node)[0].partition(":")
    return f"{module.rsplit('.', 1)[-1]}.{func}", registry.oracle(node)(*inputs)


def compare(got: np.ndarray | None, want: np.ndarray) -> tuple[bool, float]:
    """(bit-exact?, max |got - want|); bit-exact means same dtype, shape and bytes (NaNs and -0.0 count)."""
    if got is None or got.dtype != want.dtype or got.shape != want.shape:
        return False, math.inf
    a, b = np.ascontiguousarray(got), np.ascontiguousarray(want)
    if a.size == 0:
        return True, 0.0
    uint = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize]
    same = a.view(uint) == b.view(uint)
    diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
    diff = np.where(same, 0.0, np.nan_to_num(diff, nan=np.inf))
    return bool(same.all()), float(diff.max())


def _validate_run(args: argparse.Namespace) -> tuple[Any, dict[str, float]]:
    """Refuse a bad ``run`` invocation before any device work: the API's dtypes, its scalars, the size."""
    _, api = registry.aclnn_api(args.op)
    if args.dtype not in supported_run_dtypes(args.op):
        names = ", ".join(d.short for d in supported_run_dtypes(args.op))
        raise CliError(f"{api.api} does not support {args.dtype.short}; it accepts {names}")
    given = _attrs_given(args, [sc.name for sc in api.scalars], api.convenience)
    numel = math.prod(args.shape)
    if numel > MAX_RUN_ELEMENTS:
        raise CliError(f"shape {','.join(map(str, args.shape))} has {numel} elements; the simulator runs up to "
                       f"{MAX_RUN_ELEMENTS}")
    need = _run_memory_estimate(numel, args.dtype)
    have = _available_memory()
    if have is not None and need > have:
        raise CliError(f"shape {','.join(map(str, args.shape))} needs about {need / 2**30:.1f} GiB of host memory to "
                       f"simulate, more than the {have / 2**30:.1f} GiB available; use a smaller shape")
    if args.trace is not None:
        _check_trace_path(args.trace)
    return api, {sc.name: given.get(sc.name, sc.default) for sc in api.scalars}


def _run_memory_estimate(numel: int, dtype: Any) -> int:
    """Bytes a ``run`` needs: the host inputs and output, their device copies, the workspace copies of the graph
    and the kernel's float32 temporaries -- a generous 12 tensors' worth at 4 bytes or the dtype's size."""
    return 12 * numel * max(to_numpy(dtype).itemsize, 4)


def _available_memory() -> int | None:
    """Available physical memory in bytes (None where the platform does not say)."""
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _check_trace_path(path: str) -> None:
    """Refuse a trace path that cannot be written before any work is done (exit code 2)."""
    if not path.strip():
        raise CliError("--trace needs a file name, got an empty path")
    if os.path.isdir(path):
        raise CliError(f"cannot write the trace to {path!r}: it is a folder; give a file name such as out.json")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise CliError(f"cannot write the trace to {path!r}: folder {folder!r} does not exist")
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise CliError(f"cannot write the trace to {path!r}: no permission to write there")


class _WriteError(Exception):
    """The trace could not be written after the run (disk full, permissions changed): exit code 1."""


def _execute_run(args: argparse.Namespace, api: Any,
                 scalars: dict[str, float]) -> tuple[Any, tuple[np.ndarray, ...]]:
    """Seeded inputs (one per tensor of the API) through the whole simulated stack; returns (run, inputs)."""
    inputs = random_inputs(args.shape, args.dtype, args.seed, len(api.tensors))
    with options(buffer_num=args.buffer_num):
        run = call(api.api, *inputs, *scalars.values(), soc=args.soc, trace=args.trace is not None,
                   kernel=args.kernel)
    return run, inputs


def _report_run(args: argparse.Namespace, api: Any, scalars: dict[str, float], run: Any,
                inputs: tuple[np.ndarray, ...], out: Callable[[str], None]) -> int:
    """Print what happened, check it against the oracle, write the trace; the exit code."""
    shape_txt = "[" + ", ".join(map(str, args.shape)) + "]"
    extra = "".join(f", {name} {value}" for name, value in scalars.items())
    bufs = f", BUFFER_NUM {args.buffer_num}" if args.buffer_num is not None else ""
    names = " and ".join(c for _, c in api.tensors)
    out(f"{api.api} on {run.soc}: {names} {args.dtype.short} {shape_txt}, seed {args.seed}{extra}{bufs}")
    out(f"status: {describe(run.status)}")
    if run.status != 0:
        for m in run.messages or ["(no log messages)"]:
            out(f"  log: {m}")
        return 1
    for m in run.messages:
        out(f"  log: {m}")
    node = run.kernel_node
    if args.buffer_num is not None and node is not None \
            and not registry.get(node.op).kernel(node.attrs["kernel"]).takes_buffer_num:
        out(f"note: the {node.attrs['kernel']} kernel chooses its own buffering; --buffer-num does not apply to it")
    out(f"workspace: {run.workspace_size} B")
    if run.graph:
        out(f"L0 graph: {' -> '.join(run.graph)}")
        for node in run.nodes:
            out(f"  {node.op:<16} {node.why}")
    else:
        out("L0 graph: (none: an empty tensor launches no kernel)")
    if run.tiling is not None:
        fields = " ".join(f"{k}={_fmt_value(v)}" for k, v in run.tiling.as_dict().items())
        out(f"tiling: {type(run.tiling).__name__} {fields}")
    else:
        out("tiling: (none)")
    if run.kernel_runs:
        for k in run.kernel_runs:
            tr = k.trace
            flavour = tr.meta.get("kernel_flavour", "?")
            out(f"kernel: {k.kernel} ({flavour} flavour) on {k.block_dim} cores: {tr.cycles:.1f} cycles estimated, "
                f"{tr.microseconds:.3f} us at {tr.clock_mhz} MHz")
        warnings = Counter(w.kind for k in run.kernel_runs for w in k.trace.warnings)
        total = sum(warnings.values())
        detail = ", ".join(f"{kind} {count}" for kind, count in sorted(warnings.items()))
        out(f"warnings: {total}" + (f" ({detail})" if detail else ""))
    else:
        out("kernel: not launched (0 cycles)")
        out("warnings: 0")

    oracle, want = golden_for(run, *inputs)
    exact, max_diff = compare(run.out, want)
    out(f"max abs diff vs {oracle}: {max_diff:g}")
    out(f"bit-exact vs golden: {'yes' if exact else 'no'}")

    if args.trace is not None:
        try:
            if run.trace is not None:
                run.trace.save_chrome_trace(args.trace)
                out(f"trace: wrote {len(run.trace.events)} events to {args.trace} "
                    "(open in https://ui.perfetto.dev or chrome://tracing)")
            else:
                with open(args.trace, "w", encoding="utf-8") as fh:
                    json.dump({"traceEvents": [], "displayTimeUnit": "ns", "otherData": {"kernel": None}}, fh)
                out(f"trace: no kernel ran; wrote an empty trace to {args.trace}")
        except OSError as exc:
            raise _WriteError(f"could not write the trace to {args.trace!r}: {exc.strerror or exc}") from None
    return 0 if exact else 1


def cmd_run(args: argparse.Namespace, out: Callable[[str], None]) -> int:
    api, scalars = _validate_run(args)
    run, inputs = _execute_run(args, api, scalars)
    return _report_run(args, api, scalars, run, inputs, out)


# --------------------------------------------------------------------------------------------------
# ascend-lab socs
# --------------------------------------------------------------------------------------------------

def cmd_socs(args: argparse.Namespace, out: Callable[[str], None]) -> int:
    head = ("name", "NpuArch", "SocVersion", "family", "vector cores", "UB bytes", "clock MHz", "GM GB/s")
    rows = []
    for name in socs():
        s = get_soc(name)
        rows.append((s.name + (" *" if s.name == DEFAULT_SOC else ""), f"{s.npu_arch.name} ({int(s.npu_arch)})",
                     s.soc_version.name, s.family, str(s.vector_core_num), f"{s.ub_size} ({s.ub_size // 1024} KB)",
                     str(s.clock_mhz), str(s.gm_bandwidth_gbps)))
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    numeric = {4, 6, 7}

    def line(values: Sequence[str]) -> str:
        return "  ".join(v.rjust(w) if i in numeric else v.ljust(w)
                         for i, (v, w) in enumerate(zip(values, widths, strict=True))).rstrip()
    out(line(head))
    for r in rows:
        out(line(r))
    out(f"* default SoC. {len(rows)} SoCs; figures from ascend_lab/data/platforms.ini" +
        ("" if args.notes else " (--notes for each figure's source)"))
    if args.notes:
        for name in socs():
            out(f"{name}: {get_soc(name).note}")
    return 0


# --------------------------------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------------------------------

def _option_names() -> list[str]:
    """Every ``--<name>`` value option the registry's ops and APIs contribute (attributes and scalars)."""
    names = {name for spec in registry.ops() for name in spec.attrs}
    names |= {sc.name for _, api in registry.aclnn_apis() for sc in api.scalars}
    return sorted(names)


def _add_value_options(p: argparse.ArgumentParser, options: dict[str, tuple[str, float]], what: str) -> None:
    """One ``--<name> FLOAT`` option per attribute/scalar of the registered ops (last owner named in the help)."""
    for name, (owner, default) in sorted(options.items()):
        p.add_argument(f"--{name.replace('_', '-')}", dest=name, type=float, default=None,
                       help=f"{owner}'s {what} (default {default:g})")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="ascend_lab: CANN's aclnnHardsigmoidBackward / aclnnThresholdBackward "
                                            "simulated down to the AscendC kernel.")
    parser.add_argument("--version", action="version", version=f"{PROG} {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser("tiling", help="print a TilingData, its packed bytes and the per-core split",
                       description="Run an op's host tiling on its own (ascend_lab.tiling).")
    p.add_argument("op", type=_tiling_op, help=" | ".join(s.key for s in registry.ops())
                   + " (or " + ", ".join(s.op_type for s in registry.ops()) + ")")
    p.add_argument("--n", type=_count, required=True, help="element count (totalLength / inputNum)")
    p.add_argument("--dtype", type=_dtype, default="float32", help="float32, float16, bfloat16, int8, ...")
    p.add_argument("--soc", type=_soc, default=DEFAULT_SOC, help=f"SoC for core count and UB (default {DEFAULT_SOC})")
    p.add_argument("--cores", type=_positive("the core count"), default=None, help="override the vector core count")
    p.add_argument("--ub-size", type=_positive("the UB size"), default=None, help="override the UB size in bytes")
    _add_value_options(p, {name: (spec.key, value) for spec in registry.ops() for name, value in spec.attrs.items()},
                       "attribute")
    p.add_argument("--kernel", choices=FLAVOURS, default=None,
                   help="the kernel flavour whose tiling to run (default: the op's first); any SoC: a what-if study")
    p.add_argument("--all", action="store_true", help="list every core, not the first and last few")
    p.set_defaults(func=cmd_tiling)

    p = sub.add_parser("run", help="run an aclnn op on seeded random data and check it against golden",
                       description="Run an aclnn op through the whole simulated stack.")
    p.add_argument("op", type=_run_op, help=" | ".join(a.convenience for _, a in registry.aclnn_apis())
                   + " (or " + ", ".join(a.api for _, a in registry.aclnn_apis()) + ")")
    p.add_argument("--shape", type=_shape, required=True, help="e.g. 4,2 (0,3 is an empty tensor)")
    p.add_argument("--dtype", type=_dtype, default="float32", help="dtype of both inputs (default float32)")
    _add_value_options(p, {sc.name: (api.convenience, sc.default) for _, api in registry.aclnn_apis()
                           for sc in api.scalars}, "scalar")
    p.add_argument("--soc", type=_soc, default=DEFAULT_SOC, help=f"SoC in force (default {DEFAULT_SOC})")
    p.add_argument("--seed", type=lambda s: _int(s, "the seed", 0), default=0, help="random seed (default 0)")
    p.add_argument("--trace", default=None, metavar="PATH", help="record every instruction; write a Chrome trace")
    p.add_argument("--buffer-num", type=_positive("BUFFER_NUM"), default=None,
                   help="queue buffers per kernel queue (simulator knob; CANN hard-codes 2)")
    p.add_argument("--kernel", choices=FLAVOURS, default=None,
                   help="kernel flavour to run (default: what a stock CANN install runs on the SoC; a flavour not "
                        "registered for the SoC returns 561103)")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("socs", help="list the SoC catalogue",
                       description="The SoC catalogue (ascend_lab/data/platforms.ini).")
    p.add_argument("--notes", action="store_true", help="print where each figure comes from")
    p.set_defaults(func=cmd_socs)

    from .cli_kernel import add_kernel_parser  # ascend-lab kernel run|show: a C++ kernel file
    add_kernel_parser(sub)
    return parser


def _version() -> str:
    return __version__


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``ascend-lab`` and ``python -m ascend_lab``; returns the exit code."""
    out = print
    try:
        args = build_parser().parse_args(argv)
        return args.func(args, out)
    except CliError as exc:
        message = " ".join(str(exc).split())   # one line, whatever the message held
        print(f"{PROG}: error: {message}", file=sys.stderr)
        return 2
    except _WriteError as exc:
        print(f"{PROG}: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 1
    except MemoryError as exc:  # a shape the parser admits but this host cannot hold: say so, no traceback
        detail = " ".join(str(exc).split())
        print(f"{PROG}: error: out of memory{': ' + detail if detail else ''}; try a smaller --shape / --n",
              file=sys.stderr)
        return 1
    except SystemExit as exc:   # --help / --version
        return exc.code if isinstance(exc.code, int) else 0
    except BrokenPipeError:    # `ascend-lab socs | head -1`
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # silence the flush at interpreter exit
        return 0
