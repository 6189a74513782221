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

import contextlib
import inspect
from collections.abc import Callable, Iterator
from typing import Any

from .base import platform
from .live.tiling_inputs import check_float, check_n, resolve_platform
from .opdev.tiling_data import TilingError
from .ops import registry
from .ops.spec import OpSpec


class _KernelDefault:
    """The default of a front door's attribute parameters: the chosen kernel's own value (OpSpec.check_attrs)."""

    def __repr__(self) -> str:
        return "<the kernel's default>"


KERNEL_DEFAULT = _KernelDefault()


def compute(op: str, n: int, dtype: Any, core_num: int | None = None, ub_size: int | None = None,
            soc: Any = None, kernel: str | None = None, **attrs: Any) -> Any:
    """The tiling of any registered op: ``compute("ThresholdGradV2D", 10**6, "int8", soc="Ascend910B4")``."""
    spec = registry.get(op)
    k = spec.kernel(kernel)
    attrs = {name: check_float(name, value) for name, value in spec.check_attrs(attrs, kernel).items()}
    n = check_n(spec.n_name, n)
    spec.op_def.require_dtype(dtype)
    core_num, ub_size = resolve_platform(core_num, ub_size, soc)
    with platform_in_force(soc):
        return k.tiling(n, dtype, core_num, ub_size, **attrs)


@contextlib.contextmanager
def platform_in_force(soc: Any) -> Iterator[None]:
    """Run a tiling with ``soc`` (a name or SocInfo) in force, as CANN runs a tiling on the platform it tiles for: a
    TBE kernel's tiling reads the compile info of the binary built for that SoC (``tbe.schedule.compile_target``).
    Anything else (None, a mapping of core count and UB) leaves the SoC in force as it is."""
    if isinstance(soc, (str, platform.SocInfo)):
        with platform.soc(platform.get_soc(soc).name):
            yield
    else:
        yield


def _front_door(spec: OpSpec) -> Callable[..., Any]:
    """``tiling.<op>(n, dtype, core_num=None, ub_size=None, soc=None, kernel=None, **attrs)`` with the op's
    own name for ``n`` and its attributes as keyword parameters."""
    P = inspect.Parameter
    params = [P(spec.n_name, P.POSITIONAL_OR_KEYWORD), P("dtype", P.POSITIONAL_OR_KEYWORD)]
    params += [P(name, P.POSITIONAL_OR_KEYWORD, default=None) for name in ("core_num", "ub_size", "soc")]
    params += [P("kernel", P.KEYWORD_ONLY, default=None)]
    # An attribute left out takes the chosen kernel's own default (OpSpec.check_attrs), as compute() and a run do:
    # HardSigmoidGrad's TBE and main kernels use alpha = float32(1/6), the experimental one float32(0.16666666).
    params += [P(name, P.KEYWORD_ONLY, default=KERNEL_DEFAULT) for name in spec.attrs]
    sig = inspect.Signature(params)

    def front(*args: Any, **kwargs: Any) -> Any:
        try:
            ba = sig.bind(*args, **kwargs)
        except TypeError as exc:
            valid = ", ".join(spec.attrs) or "none"
            raise TypeError(f"{spec.key}(): {exc} (its tiling attributes: {valid})") from None
        ba.apply_defaults()
        kw = {k: v for k, v in ba.arguments.items() if v is not KERNEL_DEFAULT}
        n, dtype = kw.pop(spec.n_name), kw.pop("dtype")
        return compute(spec.key, n, dtype, **kw)

    front.__name__ = front.__qualname__ = spec.key
    front.__signature__ = sig  # type: ignore[attr-defined]
    kernels = ", ".join(f"{f} ({k.source})" for f, k in spec.kernels.items())
    defaults = "; ".join(f"{f}: " + ", ".join(f"{a}={v!r}" for a, v in spec.check_attrs({}, f).items())
                         for f in spec.kernels if spec.attrs)
    front.__doc__ = (f"{spec.op_type} host tiling for ``{spec.n_name}`` elements of ``dtype``. Kernels: {kernels}. "
                     f"Attributes: {', '.join(spec.attrs) or 'none'}"
                     f"{' (left out: the kernel’s own default -- ' + defaults + ')' if defaults else ''}. "
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
