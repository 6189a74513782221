"""HardSigmoidGrad host side: op definition, infer-shape and tiling (Ascend950 / arch35).

Mirrors ``ops-nn:experimental/activation/hard_sigmoid_grad/op_host/``: ``hard_sigmoid_grad_def.cpp``
(``OP_DEF``), the infer-shape registration (``infer_shape``) and ``arch35/hard_sigmoid_grad_tiling.cpp``
(``tiling``; ``cann_facts.md`` §2.1). ``tiling_main950`` is the main-tree tiling
(``activation/hard_sigmoid_grad/op_host/arch35/hard_sigmoid_grad_tiling_arch35.cpp``, kernel_flavours.md
§2.1) that the shipping 950 kernel (``op_kernel/main.py``) runs with. ``core_ranges`` shows what each core
of either kernel does (§2.3; the two split the work the same way).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from ...acl.types import aclDataType as DT
from ...acl.types import dtype_itemsize as itemsize  # numpy-free (the live tiling page)
from ...opdev.op_def import Attr, Input, OpDef, Output, infer_shape_same_as_input
from ...opdev.tiling_data import (
    TilingData,
    TilingError,
    block_factor_ranges,
    ceil_div,
    float32,
    floor_align,
    int64,
    require_count,
    to_float32,
)
from ...tbe.schedule import TbeElewiseTilingData

__all__ = [
    "ALPHA_EXPERIMENTAL", "ALPHA_MAIN", "BETA", "OP_DEF", "SCH_MODE", "UB_SPLIT", "HardSigmoidGradTbeTilingData",
    "HardSigmoidGradTilingData",
    "core_ranges", "infer_shape", "tiling", "tiling_dtype", "tiling_main950",
]

_DTYPES = (DT.ACL_FLOAT, DT.ACL_FLOAT16, DT.ACL_BF16)

#: ``0.16666666f`` (experimental op_def default and aclnn constant, §1.3) as a C float.
ALPHA_EXPERIMENTAL = to_float32(0.16666666)
#: ``1.0f / 6.0f`` (main tree since 2026-05-22, §1.3).
#: (A quotient of two floats computed in double and rounded to float is the float quotient: 53 >= 2*24 + 2.)
ALPHA_MAIN = to_float32(1.0 / 6.0)
BETA = 0.5

OP_DEF = OpDef(
    name="HardSigmoidGrad",
    inputs=(Input("grad_output", dtypes=_DTYPES), Input("self", dtypes=_DTYPES)),
    outputs=(Output("grad_input", dtypes=_DTYPES),),
    attrs=(Attr("alpha", "float", ALPHA_EXPERIMENTAL), Attr("beta", "float", BETA)),
    aicore_configs=("ascend950",),
    auto_contiguous=True,
    source="ops-nn:experimental/activation/hard_sigmoid_grad/op_host/hard_sigmoid_grad_def.cpp",
)

#: Template tiling key ``schMode`` per dtype (ASCENDC_TPL_SEL_PARAM; taken as the key value, §11).
SCH_MODE: dict[DT, int] = {DT.ACL_FLOAT: 0, DT.ACL_FLOAT16: 1, DT.ACL_BF16: 2}

#: Experimental (bufferNum, typeSize): bf16 computes through fp32 buffers, so it budgets 4 B/element
#: and 7 buffers; fp32 and fp16 budget their own size and 8 buffers (§2.1).
UB_SPLIT: dict[DT, tuple[int, int]] = {
    DT.ACL_FLOAT: (8, 4), DT.ACL_FLOAT16: (8, 2), DT.ACL_BF16: (7, 4),
}
_UB_BLOCK_SIZE = 32  # Ops::Base::GetUbBlockSize() is hard-coded to 32 (§2.1, §6)
_MAIN_MIN_SPLIT = 1024  # main tree: fewer elements than this run on one core (§2.2)


class HardSigmoidGradTbeTilingData(TbeElewiseTilingData):
    """The TBE kernel's run-time variables plus alpha (a compile-time constant in TBE, carried here;
    ``op_kernel/tbe.py``). Declared on the host side, beside the other struct, so the tiling imports without
    the kernel."""

    alpha: float32


class HardSigmoidGradTilingData(TilingData):
    """``HardSigmoidGradTilingData`` (3 x int64 + 2 x float = 32 bytes)."""

    totalLength: int64
    blockFactor: int64
    ubFactor: int64
    alpha: float32
    beta: float32


def infer_shape(input_shape: Iterable[int]) -> tuple[int, ...]:
    """Output ``grad_input`` has the shape of input 0 (elementwise, no broadcasting)."""
    return infer_shape_same_as_input(input_shape)


def _common_checks(total_length: int, dtype: Any, core_num: int, ub_size: int) -> tuple[DT, int, int, int]:
    dt = OP_DEF.require_dtype(dtype)
    total_length = require_count("total_length", total_length)
    core_num = require_count("core_num", core_num)
    ub_size = require_count("ub_size", ub_size)
    if core_num == 0:
        raise TilingError("HardSigmoidGrad tiling: core_num is 0 (GetCoreNumAiv() returned 0); "
                          "need at least 1 vector core")
    return dt, total_length, core_num, ub_size


def tiling(total_length: int, dtype: Any, core_num: int, ub_size: int,
           alpha: float = ALPHA_EXPERIMENTAL, beta: float = BETA) -> HardSigmoidGradTilingData:
    """Experimental arch35 tiling, exactly as §2.1.

    ``blockFactor = CeilDiv(N, coreNum)`` elements per core, ``blockDim = CeilDiv(N, blockFactor)``,
    ``ubFactor = FloorAlign((ubSize // typeSize) // bufferNum, 32)`` elements per tile. An empty input
    gives an all-zero struct (alpha and beta included), blockDim 1 and tilingKey 0 whatever the dtype.
    The experimental code does not check ``ubFactor > 0``; neither does this function.
    """
    dt, total_length, core_num, ub_size = _common_checks(total_length, dtype, core_num, ub_size)
    if total_length == 0:
        return HardSigmoidGradTilingData(totalLength=0, blockFactor=0, ubFactor=0, alpha=0.0, beta=0.0,
                                         blockDim=1, tilingKey=0)
    block_factor = ceil_div(total_length, core_num)
    used_core_num = ceil_div(total_length, block_factor)
    buffer_num, type_size = UB_SPLIT[dt]
    ub_factor = floor_align((ub_size // type_size) // buffer_num, _UB_BLOCK_SIZE)  # 32 ELEMENTS, as in CANN
    return HardSigmoidGradTilingData(totalLength=total_length, blockFactor=block_factor, ubFactor=ub_factor,
                                     alpha=alpha, beta=beta, blockDim=used_core_num, tilingKey=SCH_MODE[dt])


def tiling_main950(total_length: int, dtype: Any, core_num: int, ub_size: int,
                   alpha: float = ALPHA_MAIN, beta: float = BETA) -> HardSigmoidGradTilingData:
    """Main-tree arch35 tiling: the one the shipping 950 kernel (``op_kernel.main``) runs with
    (kernel_flavours.md §2.1, ``hard_sigmoid_grad_tiling_arch35.cpp``).

    Differences from the experimental one: a UB size of 0 fails; alpha must be finite and non-zero and beta
    finite; fewer than 1024 elements use one core; every dtype budgets 4 B/element (fp16/bf16 compute in
    fp32) with 7 buffers for fp16/bf16, 8 for fp32; ubFactor is aligned to 64 elements (256 B / 4 B) so
    CompareScalar's 256-byte-rounded count stays inside the buffers, and must be positive; an empty input
    gives an all-zero struct with blockDim 1 and keeps the dtype's tiling key.
    """
    dt, total_length, core_num, ub_size = _common_checks(total_length, dtype, core_num, ub_size)
    if ub_size == 0:
        raise TilingError("HardSigmoidGrad tiling: ub_size is 0 (GetCoreMemSize(UB) returned 0)")
    a, b = to_float32(alpha), to_float32(beta)
    if not math.isfinite(a) or a == 0.0 or not math.isfinite(b):
        raise TilingError(f"HardSigmoidGrad tiling: alpha must be finite and non-zero and beta finite; "
                          f"got alpha={alpha!r}, beta={beta!r}")
    if total_length == 0:
        return HardSigmoidGradTilingData(totalLength=0, blockFactor=0, ubFactor=0, alpha=0.0, beta=0.0,
                                         blockDim=1, tilingKey=SCH_MODE[dt])
    actual_core_num = 1 if total_length < _MAIN_MIN_SPLIT else core_num
    block_factor = ceil_div(total_length, actual_core_num)
    used_core_num = ceil_div(total_length, block_factor)
    buffer_num = 8 if dt == DT.ACL_FLOAT else 7
    align = max(_UB_BLOCK_SIZE, 256) // 4  # 64 elements
    ub_factor = floor_align((ub_size // 4) // buffer_num, align)
    if ub_factor <= 0:
        raise TilingError(f"HardSigmoidGrad tiling: ub_size {ub_size} B leaves ubFactor {ub_factor} "
                          f"(needs >= {4 * buffer_num * align} B)")
    return HardSigmoidGradTilingData(totalLength=total_length, blockFactor=block_factor, ubFactor=ub_factor,
                                     alpha=a, beta=b, blockDim=used_core_num, tilingKey=SCH_MODE[dt])


_ITEMSIZE_BY_KEY = {0: 4, 1: 2, 2: 2}
_DTYPE_BY_KEY = {0: "float32", 1: "float16", 2: "bfloat16"}


def tiling_dtype(td: TilingData) -> str | None:
    """The input dtype the tiling key selects (schMode 0/1/2 = float32/float16/bfloat16)."""
    return _DTYPE_BY_KEY.get(td.tilingKey)


def core_ranges(td: TilingData, dtype: Any = None, n: int | None = None, *, tiles: bool = True) -> list[dict[str, Any]]:
    """What each core of the arch35 kernel does (§2.3), in the same shape as ThresholdGradV2D's.

    Core ``i`` starts at ``offset = blockFactor * i`` and handles ``min(blockFactor, totalLength - offset)``
    elements in tiles of ``ubFactor`` with a shorter last tile; cores left with nothing return at once and
    are not listed. ``kind`` is "big" for a full ``blockFactor`` share, "small" for a shorter last core.
    DataCopyPad moves exact byte counts, so ``padded_end == offset + data_num`` never passes the end and
    ``padding`` is 0. ``bytes`` uses ``dtype`` when given, else the dtype the tiling key selects (fp32 4,
    fp16/bf16 2). ``n`` is accepted for a uniform signature (the tiling already holds totalLength);
    ``tiles=False`` leaves out the per-tile lists, for inputs with millions of tiles.
    """
    total, factor, ub_factor = td.totalLength, td.blockFactor, td.ubFactor
    if total > 0 and ub_factor <= 0:
        raise TilingError(f"ubFactor is {ub_factor}: the kernel would loop forever; the experimental "
                          "tiling does not check this (the main-tree one fails), so pick a larger ub_size")
    size = itemsize(dtype) if dtype is not None else _ITEMSIZE_BY_KEY.get(td.tilingKey, 4)
    return block_factor_ranges(total, factor, ub_factor, td.blockDim, size, tiles)
