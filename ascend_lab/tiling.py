"""Tiling, callable on its own: ``tiling.hard_sigmoid_grad(N, "float16", core_num=40, ub_size=196608)``.

A thin front door to the operators' host tiling functions (``ascend_lab/ops/*/op_host.py``). It checks
arguments with messages that say what to fix and, when ``core_num``/``ub_size`` are not given, takes them
from the SoC as CANN's tiling does (``GetCoreNumAiv()`` and ``GetCoreMemSize(UB)``): from the ``soc``
argument (a catalogue name, an entry, a mapping or a callable returning one) or from the SoC in force.

The returned TilingData carries CANN's field names plus ``blockDim`` and ``tilingKey``. The tiling is
computed for whatever SoC numbers you give; whether the kernel is actually registered for that SoC is a
separate question (``OP_DEF.registered_for(soc)``).
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any

from .opdev.tiling_data import TilingError, require_count
from .ops.hard_sigmoid_grad import op_host as _hsg
from .ops.hard_sigmoid_grad.op_host import HardSigmoidGradTilingData
from .ops.relu_grad import op_host as _relu
from .ops.relu_grad.op_host import ReluGradTilingData
from .ops.threshold_grad_v2_d import op_host as _tgv2d
from .ops.threshold_grad_v2_d.op_host import ThresholdGradV2DTilingData

__all__ = [
    "HardSigmoidGradTilingData", "ReluGradTilingData", "ThresholdGradV2DTilingData", "TilingError",
    "hard_sigmoid_grad", "relu_grad", "threshold_grad_v2_d",
]


def _entry_numbers(entry: Any) -> tuple[int, int]:
    if isinstance(entry, Mapping):
        try:
            return entry["vector_core_num"], entry["ub_size"]
        except KeyError as exc:
            raise ValueError("soc mapping needs 'vector_core_num' and 'ub_size' keys; "
                             f"missing {exc}") from None
    try:
        return entry.vector_core_num, entry.ub_size
    except AttributeError:
        raise TypeError(f"soc entry {entry!r} has no .vector_core_num/.ub_size; pass a SoC name, "
                        "a catalogue entry, a mapping with those keys, or core_num= and ub_size=") from None


def _platform(soc: Any) -> tuple[int, int]:
    """(vector core count, UB bytes) for ``soc``; ``None`` means the SoC in force."""
    if soc is not None and not isinstance(soc, str):
        if callable(soc) and not hasattr(soc, "vector_core_num"):
            soc = soc()
        return _entry_numbers(soc)
    try:
        from .base.platform import get_soc
    except ImportError as exc:
        if exc.name not in ("ascend_lab.base.platform", "ascend_lab.opdev"):
            raise
        raise ValueError("no SoC catalogue is available: pass core_num= and ub_size= explicitly") from None
    return _entry_numbers(get_soc(soc))


def _resolve(core_num: int | None, ub_size: int | None, soc: Any) -> tuple[int, int]:
    if core_num is None or ub_size is None:
        soc_cores, soc_ub = _platform(soc)
        core_num = soc_cores if core_num is None else core_num
        ub_size = soc_ub if ub_size is None else ub_size
    return require_count("core_num", core_num), require_count("ub_size", ub_size)


def _check_float(what: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{what} must be a real number, got {type(value).__name__} {value!r}")
    return float(value)


def hard_sigmoid_grad(total_length: int, dtype: Any, core_num: int | None = None, ub_size: int | None = None,
                      soc: Any = None, **attrs: float) -> HardSigmoidGradTilingData:
    """Experimental HardSigmoidGrad tiling (cann_facts §2.1). ``attrs``: ``alpha``, ``beta``."""
    unknown = sorted(set(attrs) - {"alpha", "beta"})
    if unknown:
        raise TypeError(f"HardSigmoidGrad has attrs alpha and beta only; unknown {unknown}")
    alpha = _check_float("alpha", attrs.get("alpha", _hsg.ALPHA_EXPERIMENTAL))
    beta = _check_float("beta", attrs.get("beta", _hsg.BETA))
    total_length = require_count("total_length", total_length)
    _hsg.OP_DEF.require_dtype(dtype)
    core_num, ub_size = _resolve(core_num, ub_size, soc)
    return _hsg.tiling(total_length, dtype, core_num, ub_size, alpha=alpha, beta=beta)


def threshold_grad_v2_d(input_num: int, dtype: Any, core_num: int | None = None, ub_size: int | None = None,
                        soc: Any = None, threshold: float = 1.0) -> ThresholdGradV2DTilingData:
    """Experimental ThresholdGradV2D tiling (cann_facts §4.1)."""
    threshold = _check_float("threshold", threshold)
    input_num = require_count("input_num", input_num)
    _tgv2d.OP_DEF.require_dtype(dtype)
    core_num, ub_size = _resolve(core_num, ub_size, soc)
    return _tgv2d.tiling(input_num, dtype, core_num, ub_size, threshold=threshold)


def relu_grad(input_num: int, dtype: Any, core_num: int | None = None, ub_size: int | None = None,
              soc: Any = None) -> ReluGradTilingData:
    """Experimental ReluGrad tiling (cann_facts §5, the §4.1 scheme with ReluGrad's UB budget)."""
    input_num = require_count("input_num", input_num)
    _relu.OP_DEF.require_dtype(dtype)
    core_num, ub_size = _resolve(core_num, ub_size, soc)
    return _relu.tiling(input_num, dtype, core_num, ub_size)
