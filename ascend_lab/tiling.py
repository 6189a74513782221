"""Tiling, callable on its own: ``tiling.hard_sigmoid_grad(N, "float16", core_num=40, ub_size=196608)``.

A thin front door to the operators' host tiling functions (``ascend_lab/ops/*/op_host.py``), one function
per registered operator, named by its package (``tiling.relu_grad``). It checks arguments with messages
that say what to fix and, when ``core_num``/``ub_size`` are not given, takes them from the SoC as CANN's
tiling does (``GetCoreNumAiv()`` and ``GetCoreMemSize(UB)``): from the ``soc`` argument (a catalogue name,
an entry, a mapping or a callable returning one) or from the SoC in force.

The returned TilingData carries CANN's field names plus ``blockDim`` and ``tilingKey``. The tiling is
computed for whatever SoC numbers you give -- a what-if study: whether the kernel is registered for that
SoC is a separate question (``registry.get(op).kernel().registered_for(soc)``), and this front door does
not ask it. ``kernel=`` picks a kernel flavour of the op (default: its first).
"""

from __future__ import annotations

import inspect
import numbers
from collections.abc import Callable, Mapping
from typing import Any

from .base.platform import get_soc, socs
from .opdev.tiling_data import TilingError, require_count
from .ops import registry
from .ops.spec import OpSpec


def _entry_numbers(entry: Any) -> tuple[int, int]:
    if isinstance(entry, Mapping):
        try:
            return entry["vector_core_num"], entry["ub_size"]
        except KeyError as exc:
            raise ValueError("soc mapping needs 'vector_core_num' and 'ub_size' keys; "
                             f"missing {exc}") from None
    try:
        return entry.vector_core_num, getattr(entry, "core_mem_size_ub", entry.ub_size)
    except AttributeError:
        raise TypeError(f"soc entry {entry!r} has no .vector_core_num/.ub_size; pass a SoC name, "
                        "a catalogue entry, a mapping with those keys, or core_num= and ub_size=") from None


def _platform(soc: Any) -> tuple[int, int]:
    """(vector core count, UB bytes) for ``soc``; ``None`` means the SoC in force."""
    if soc is not None and not isinstance(soc, str):
        if callable(soc) and not hasattr(soc, "vector_core_num"):
            soc = soc()
        return _entry_numbers(soc)
    return _entry_numbers(get_soc(soc))


#: CANN's element counts are int64 (``GetShapeSize``): the largest count any tiling accepts.
MAX_ELEMENTS = 2**63 - 1


def _max_ub() -> int:
    return max(get_soc(name).ub_size for name in socs())


def _resolve(core_num: int | None, ub_size: int | None, soc: Any) -> tuple[int, int]:
    """(core count, UB bytes) for a tiling. A SoC name is checked even when both numbers are given (a typo
    should not pass silently); a UB larger than any catalogued SoC's is refused."""
    if isinstance(soc, str):
        get_soc(soc)                                   # ValueError naming the catalogue for an unknown SoC
    if core_num is None or ub_size is None:
        soc_cores, soc_ub = _platform(soc)
        core_num = soc_cores if core_num is None else core_num
        ub_size = soc_ub if ub_size is None else ub_size
    core_num, ub_size = require_count("core_num", core_num), require_count("ub_size", ub_size)
    if ub_size > _max_ub():
        raise ValueError(f"ub_size {ub_size} B is larger than any catalogued SoC's UB ({_max_ub()} B); "
                         "pass the UB of a real SoC or less")
    return core_num, ub_size


def _check_float(what: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{what} must be a real number, got {type(value).__name__} {value!r}")
    return float(value)


def compute(op: str, n: int, dtype: Any, core_num: int | None = None, ub_size: int | None = None,
            soc: Any = None, kernel: str | None = None, **attrs: Any) -> Any:
    """The tiling of any registered op: ``compute("ThresholdGradV2D", 10**6, "int8", soc="Ascend910B4")``."""
    spec = registry.get(op)
    k = spec.kernel(kernel)
    attrs = {name: _check_float(name, value) for name, value in spec.check_attrs(attrs, kernel).items()}
    n = require_count(spec.n_name, n)
    if n > MAX_ELEMENTS:
        raise ValueError(f"{spec.n_name} {n} does not fit CANN's int64 element count (max {MAX_ELEMENTS})")
    spec.op_def.require_dtype(dtype)
    core_num, ub_size = _resolve(core_num, ub_size, soc)
    return k.tiling(n, dtype, core_num, ub_size, **attrs)


def _front_door(spec: OpSpec) -> Callable[..., Any]:
    """``tiling.<op>(n, dtype, core_num=None, ub_size=None, soc=None, kernel=None, **attrs)`` with the op's
    own name for ``n`` and its attributes as keyword parameters."""
    P = inspect.Parameter
    params = [P(spec.n_name, P.POSITIONAL_OR_KEYWORD), P("dtype", P.POSITIONAL_OR_KEYWORD)]
    params += [P(name, P.POSITIONAL_OR_KEYWORD, default=None) for name in ("core_num", "ub_size", "soc")]
    params += [P("kernel", P.KEYWORD_ONLY, default=None)]
    params += [P(name, P.KEYWORD_ONLY, default=value) for name, value in spec.attrs.items()]
    sig = inspect.Signature(params)

    def front(*args: Any, **kwargs: Any) -> Any:
        try:
            ba = sig.bind(*args, **kwargs)
        except TypeError as exc:
            valid = ", ".join(spec.attrs) or "none"
            raise TypeError(f"{spec.key}(): {exc} (its tiling attributes: {valid})") from None
        ba.apply_defaults()
        kw = dict(ba.arguments)
        n, dtype = kw.pop(spec.n_name), kw.pop("dtype")
        return compute(spec.key, n, dtype, **kw)

    front.__name__ = front.__qualname__ = spec.key
    front.__signature__ = sig  # type: ignore[attr-defined]
    kernels = ", ".join(f"{f} ({k.source})" for f, k in spec.kernels.items())
    front.__doc__ = (f"{spec.op_type} host tiling for ``{spec.n_name}`` elements of ``dtype``. Kernels: {kernels}. "
                     f"Attributes: {', '.join(f'{k}={v!r}' for k, v in spec.attrs.items()) or 'none'}. "
                     f"Returns a {next(iter(spec.kernels.values())).tiling_data.__name__}.")
    return front


def __getattr__(name: str) -> Any:
    """``tiling.<op>`` and ``tiling.<Op>TilingData`` for every registered op, including ones registered later."""
    for spec in registry.ops():
        if name == spec.key:
            return _front_door(spec)
        for k in spec.kernels.values():
            if name == k.tiling_data.__name__:
                return k.tiling_data
    raise AttributeError(f"module 'ascend_lab.tiling' has no attribute {name!r}; operators: "
                         f"{', '.join(s.key for s in registry.ops())}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = ["TilingError", "compute", *(s.key for s in registry.ops()),
           *sorted({k.tiling_data.__name__ for s in registry.ops() for k in s.kernels.values()})]
