"""The automatic elementwise schedule of the TBE model: compile info, then the runtime tiling.

A TBE kernel's tiling happens in two places (``kernel_flavours.md`` §5.5):

* **at compile time** the elementwise schedule counts how many tile-sized tensors live at once
  (``coexist``) and writes ``_base_info = [core, maxDtypeBytes, maxUb, maxUbDb]`` into the compile info;
* **at run time** ``op_tiling/elewise_v3.cc`` (canndev mirror @01e6dc6c) turns the element count into a
  block split, a UB split and a double-buffer decision, and hands the kernel ``blockDim``, a tiling key and
  the variables ``[dim, blockFactor, ubFactor]``.

The run-time rules are public and reproduced exactly (:func:`elewise_tiling`, citing ``elewise_v3.cc``
lines). The compile-time count is **still a model**. The shipping schedule is public in the CANN 8.1.RC1 toolkit
(``python/site-packages/tbe/dsl/unify_schedule/vector/elewise/elewise_schedule.py``): it walks the graph for the
peak number of coexisting nodes, adds 32-byte temporaries for ``vcmp``/``vsel``/``vcmpsel`` operands it must
materialise (``_correct_ub_size_by_cmp_sel``), and computes ``maxUb = ((UB - extra) // coexist) // 32 * 32 //
maxDtypeBytes`` (``maxUbDb`` with ``(UB - 2 * extra) // 2``) from ``UB = get_soc_spec("UB_SIZE")``, the ini's
whole UB (196608 on A2/A3). The simulator has not been moved onto that walk yet (issue 24 item 4): ``coexist``
follows §5.5's PROPOSAL -- ``#inputs + #outputs + 1``, ``+1`` when a cast to fp32 is live -- with ``maxUb =
floor(floor(UB / coexist) / 32) * 32 / maxDtypeBytes`` (``maxUbDb`` the same with UB / 2) and no extra bytes, and
UB is the ``ub_size`` the caller passes: every caller in the package (the aclnn path's L0 node,
``ops.standalone``, the live tiling page) passes ``GetCoreMemSize(UB)`` (``SocInfo.core_mem_size_ub``: 262144 on
910A/310P, 196352 on A2/A3, where CANN's platform layer keeps 256 B back), not the schedule's 196608. The UI
labels it "TBE (modelled schedule)".

**Broadcasting** (ThresholdGradV2D and ReluGrad are classified ``ELEWISE_WITH_BROADCAST``, §5.2/§5.3): the
real run-time tiling is ``op_tiling/broadcast_v3.cc`` (canndev mirror @0231fcc2). Its ``BroadcastTiling``
right-aligns the input shapes, checks that they broadcast, hands a call with no broadcast axis (and an empty
output, key INT32_MAX) to the elewise tiling above, and otherwise fuses continuous axes with the same
broadcast state (``MulFusionContinuousAxis``), writes each input's fused dims as the variables ``_dim_j_i``
and cuts a block axis and a UB axis of the N-D output (``DoBlockTiling``/``DoUbTiling``), keyed from
``BASE_KEY_NUM`` = 200000000. The model keeps the first half -- the check, the elewise hand-off, the axis
fusion and the per-input dims in the struct (:func:`broadcast_tiling_class`) -- and replaces the N-D split
with the elewise rules above applied to the **output** element count, fused to one dimension
(:func:`op_tiling_shapes`): the block and UB factors count output elements, and the kernel's copy-in reads,
per tile, the input elements that tile needs (:mod:`.lowering`). Key 200000000 (+10000 double-buffered);
the pattern and axis digits the real key carries are not modelled, nor is the extra UB the real schedule
spends on un-broadcast copies (``coexist`` is the elementwise count).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from ..acl.types import as_acl_dtype
from ..acl.types import dtype_itemsize as itemsize
from ..opdev.tiling_data import TilingData, TilingError, block_factor_ranges, ceil_div, int32, require_count

if TYPE_CHECKING:
    from .dsl import Compute

# The run-time half of this module (elewise_tiling, core_ranges, compile_info_of) imports without numpy: the live
# tiling page runs it in pyodide on compile counts made at book build. Only describing an op needs the DSL.

__all__ = [
    "ALIGN", "BROADCAST_TILING_KEY", "COMMON_TILING_KEY", "DB_TILING_KEY", "EMPTY_TILING_KEY", "MAX_DIMS",
    "SCHEDULE_LABEL", "SPLIT_FACTORS", "CompileInfo", "TbeElewiseTilingData", "broadcast_dims",
    "broadcast_tiling_class", "compile_info", "core_ranges", "double_buffered", "elewise_tiling",
    "fuse_broadcast_shapes", "is_broadcast", "op_tiling", "op_tiling_shapes",
]

#: How the book and UI name this schedule: the compile-time half is a model, not the shipping code.
SCHEDULE_LABEL = "TBE (modelled schedule)"
#: ``SPLIT_FACTORS`` (elewise_v3.cc:32-37): the most elements one UB tile may hold, by maxDtypeBytes.
SPLIT_FACTORS: dict[int, int] = {1: 32767, 2: 32767, 4: 16383, 8: 8191}
#: ``ELEWISE_REPEAT_NUMS`` (:38): block and UB factors are multiples of 128 elements.
ALIGN = 128
#: ``CalcCommonKey`` (:350-357): 210000000 for the common elementwise pattern, +10000 when double-buffered.
COMMON_TILING_KEY = 210000000
DB_TILING_KEY = 10000
#: ``DoEmptyTiling``: an empty input runs one core with key INT32_MAX.
EMPTY_TILING_KEY = 2**31 - 1
#: ``BASE_KEY_NUM`` (broadcast_v3.cc): the model's one broadcast schedule (+10000 double-buffered).
BROADCAST_TILING_KEY = 200000000
#: Axes the broadcast struct carries after fusion: aclnn tensors have at most 8 dims (broadcast_v3.cc allows 16).
MAX_DIMS = 8
_BLOCK_BYTES = 32
#: ``dsl.storage(name).itemsize`` for every TBE dtype name, without numpy (``uint1`` masks are stored as uint8).
_STORAGE_ITEMSIZE = {"float16": 2, "float32": 4, "bfloat16": 2, "int8": 1, "uint8": 1, "int32": 4, "int64": 8,
                     "bool": 1, "uint1": 1}


def _storage_itemsize(name: str) -> int:
    try:
        return _STORAGE_ITEMSIZE[name]
    except KeyError:
        raise ValueError(f"unknown TBE dtype {name!r}; use one of {', '.join(_STORAGE_ITEMSIZE)}") from None


@dataclass(frozen=True)
class CompileInfo:
    """What the compile step hands the run-time tiling (``_base_info``) plus how it was counted."""
    core_num: int
    ub_size: int
    coexist: int
    max_dtype_bytes: int
    max_ub: int          # elements per tile, single buffer
    max_ub_db: int       # elements per tile, double buffer
    out_dtype: str

    @property
    def base_info(self) -> list[int]:
        """``_base_info`` as the compile info stores it: [core, maxDtypeBytes, maxUb, maxUbDb]."""
        return [self.core_num, self.max_dtype_bytes, self.max_ub, self.max_ub_db]


def compile_info(compute: Compute, core_num: int, ub_size: int) -> CompileInfo:
    """The compile info of ``compute`` for ``core_num`` cores and ``ub_size`` bytes of UB (the MODEL above)."""
    return compile_info_of(compute.coexist, compute.max_dtype_bytes, compute.output.dtype, core_num, ub_size)


def compile_counts(describe: Callable[[str], Compute], dtype_name: str) -> dict[str, Any]:
    """What the compile step counts in an op's description for one dtype (built for a representative TBE SoC:
    ``coexist`` and ``maxDtypeBytes`` count inputs, outputs, casts to fp32 and dtypes, which every per-SoC path of
    these kernels shares): ``{"coexist", "max_dtype_bytes", "out_dtype"}``, the arguments of :func:`compile_info_of`."""
    # The DSL needs numpy; the run-time tiling in this module must import without it (see the top).
    from .dsl import compile_for
    with compile_for("Ascend910B4"):
        compute = describe(dtype_name)
    return {"coexist": compute.coexist, "max_dtype_bytes": compute.max_dtype_bytes, "out_dtype": compute.output.dtype}


def compile_info_of(coexist: int, max_dtype_bytes: int, out_dtype: str, core_num: int, ub_size: int) -> CompileInfo:
    """The compile info from a description's counts (:func:`compile_counts`) for ``core_num`` cores and
    ``ub_size`` bytes of UB."""
    core_num = require_count("core_num", core_num)
    ub_size = require_count("ub_size", ub_size)
    if core_num == 0:
        raise TilingError("TBE elementwise tiling: core_num is 0; need at least one core")
    width = max_dtype_bytes
    if ub_size // coexist < _BLOCK_BYTES:
        raise TilingError(f"TBE elementwise tiling: a UB of {ub_size} B gives each of the {coexist} tensors that "
                          f"coexist in it {ub_size // coexist} B, less than one {_BLOCK_BYTES}-byte block; "
                          f"it needs at least {coexist * _BLOCK_BYTES} B")
    max_ub = (ub_size // coexist) // _BLOCK_BYTES * _BLOCK_BYTES // width
    max_ub_db = (ub_size // 2 // coexist) // _BLOCK_BYTES * _BLOCK_BYTES // width
    return CompileInfo(core_num, ub_size, coexist, width, max_ub, max_ub_db, out_dtype)


class TbeElewiseTilingData(TilingData):
    """The run-time variables of a one-dimensional TBE elementwise kernel (``AddTilingData`` order,
    elewise_v3.cc ``WriteCommonData``: the fused dim, then blockFactor, then ubFactor, as int32)."""

    dim0: int32
    blockFactor: int32
    ubFactor: int32


def double_buffered(td: TilingData) -> bool:
    """Whether the tiling key asks for the double-buffered kernel (key + 10000)."""
    return td.tilingKey != EMPTY_TILING_KEY and (td.tilingKey // DB_TILING_KEY) % 10 == 1


def elewise_tiling(n: int, info: CompileInfo, cls: type[TbeElewiseTilingData] = TbeElewiseTilingData,
                   **extra: Any) -> TbeElewiseTilingData:
    """elewise_v3.cc ``DoTiling`` for one fused dimension of ``n`` elements.

    1. Empty input: blockDim 1, key INT32_MAX (``DoEmptyTiling``).
    2. Multi-core only if ``n >= elemsPerBlock(outDtype) * core * 2`` (:313-318); otherwise one core,
       ``blockFactor = ubFactor = n`` and no double buffer.
    3. ``blockFactor = roundUp(ceil(n / core), 128)``, ``blockDim = ceil(n / blockFactor)`` (:320-326).
    4. Double buffer if ``blockFactor > min(maxUb, splitFactor)`` (:359-379).
    5. ``limit = min(maxUbDb if double-buffered else maxUb, splitFactor)``; if ``limit < blockFactor`` split
       into ``ceil(blockFactor / limit)`` near-equal chunks rounded up to 128, or down when that passes the
       limit (:328-348).
    6. Key 210000000, + 10000 when double-buffered (:350-357).

    ``extra`` fills the fields a subclass adds (an operator's attributes, see the op's ``tbe.py``).
    """
    n = require_count("n", n)
    if n == 0:
        return cls(dim0=0, blockFactor=0, ubFactor=0, blockDim=1, tilingKey=EMPTY_TILING_KEY, **extra)
    if n > 2**31 - 1:
        raise TilingError(f"TBE elementwise tiling: {n} elements do not fit the int32 tiling variables")
    split = SPLIT_FACTORS[info.max_dtype_bytes]
    per_block = _BLOCK_BYTES // _storage_itemsize(info.out_dtype)
    db = False
    if n < per_block * info.core_num * 2:
        block_dim, block_factor, ub_factor = 1, n, n
    else:
        block_factor = ceil_div(ceil_div(n, info.core_num), ALIGN) * ALIGN
        block_dim = ceil_div(n, block_factor)
        db = block_factor > min(info.max_ub, split)
        limit = min(info.max_ub_db if db else info.max_ub, split)
        ub_factor = block_factor
        if limit < ub_factor:
            if limit > 0:                              # elewise_v3.cc refuses limit <= 0 ("ub limit must be ...")
                ub_for_num = ceil_div(ub_factor, limit)
                adjust = ceil_div(ub_factor, ub_for_num)
                ub_factor = ceil_div(adjust, ALIGN) * ALIGN
                if ub_factor > limit:
                    ub_factor = adjust // ALIGN * ALIGN
            if limit <= 0 or ub_factor == 0:           # limit < ALIGN: no tile of whole ALIGN-element units fits
                per = info.ub_size // (2 if db else 1) // info.coexist
                raise TilingError(f"TBE elementwise tiling: a UB of {info.ub_size} B leaves each of the "
                                  f"{info.coexist} coexisting tensors {per} B{' per buffer' if db else ''}, "
                                  f"{limit} elements of {info.max_dtype_bytes} B, fewer than the {ALIGN} a "
                                  f"tile is cut in; it needs at least "
                                  f"{ALIGN * info.max_dtype_bytes * info.coexist * (2 if db else 1)} B")
    key = COMMON_TILING_KEY + (DB_TILING_KEY if db else 0)
    return cls(dim0=n, blockFactor=block_factor, ubFactor=ub_factor, blockDim=block_dim, tilingKey=key, **extra)


def core_ranges(td: TilingData, dtype: Any = None, n: int | None = None, *,
                tiles: bool = True) -> list[dict[str, Any]]:
    """What each core of a TBE elementwise kernel does, in the shape the other kernels' ``core_ranges`` use.

    Core ``i`` starts at ``blockFactor * i`` and handles ``min(blockFactor, dim0 - offset)`` elements in
    tiles of ``ubFactor`` (a shorter last tile). Copies move exact byte counts (32-byte aligned in UB, no
    GM overrun), so ``padding`` is 0. ``bytes`` uses ``dtype`` (default 4 bytes per element)."""
    total, factor, ub_factor = td.dim0, td.blockFactor, td.ubFactor
    if total > 0 and ub_factor <= 0:
        raise TilingError(f"ubFactor is {ub_factor}: the kernel would loop forever")
    size = itemsize(dtype) if dtype is not None else 4
    return block_factor_ranges(total, factor, ub_factor, td.blockDim, size, tiles)


def op_tiling(op_type: str, describe: Callable[[str], Compute], dtypes: Sequence[str], n: int, dtype: Any,
              core_num: int, ub_size: int, cls: type[TbeElewiseTilingData] = TbeElewiseTilingData,
              **extra: Any) -> TbeElewiseTilingData:
    """An operator's TBE tiling: its description's compile info, then :func:`elewise_tiling`.

    ``describe(dtype_name)`` is built for a representative TBE SoC: ``coexist`` and ``maxDtypeBytes`` count
    inputs, outputs, casts to fp32 and dtypes, which every per-SoC path of these kernels shares."""
    name = check_dtype(op_type, dtypes, dtype)
    counts = compile_counts(describe, name)
    return elewise_tiling(n, compile_info_of(**counts, core_num=core_num, ub_size=ub_size), cls, **extra)


def check_dtype(op_type: str, dtypes: Sequence[str], dtype: Any) -> str:
    """The dtype's name when the TBE kernel supports it; TilingError listing the supported ones otherwise."""
    name = as_acl_dtype(dtype).short
    if name not in dtypes:
        raise TilingError(f"TBE {op_type} supports {', '.join(dtypes)}, got {name}")
    return name


# --- broadcasting (ELEWISE_WITH_BROADCAST), a model: see the module docstring ---------------------------------
def _broadcast_shapes(shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
    """``np.broadcast_shapes(*shapes)`` without numpy: right-aligned, per axis every size 1 or the same."""
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for j in range(rank):
        sizes = {s[len(s) - rank + j] for s in shapes if len(s) - rank + j >= 0} - {1}
        if len(sizes) > 1:
            raise ValueError(f"shapes {list(shapes)} do not broadcast")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def fuse_broadcast_shapes(shapes: Sequence[Sequence[int]],
                          out_shape: Sequence[int]) -> tuple[list[int], list[list[int]]]:
    """The output's and each input's dims after broadcast_v3.cc's axis fusion (``MulFusionContinuousAxis``):
    shapes right-aligned, axes where the output is 1 dropped, and neighbouring axes merged while every input
    keeps the same broadcast state (1 against a larger output dim, or not). ``(4, 1) x (4, 1000)`` stays
    ``[4, 1000]`` / ``[[4, 1], [4, 1000]]``; ``(1000,) x (3, 1000)`` gives ``[3, 1000]`` /
    ``[[1, 1000], [3, 1000]]``."""
    out = tuple(int(d) for d in out_shape)
    rank = len(out)
    padded = [(1,) * (rank - len(s)) + tuple(int(d) for d in s) for s in shapes]
    out_dims: list[int] = []
    in_dims: list[list[int]] = [[] for _ in padded]
    last: tuple[bool, ...] | None = None
    for j, d in enumerate(out):
        if d == 1:
            continue
        state = tuple(p[j] == 1 for p in padded)
        if state == last:
            out_dims[-1] *= d
            for k, p in enumerate(padded):
                in_dims[k][-1] *= p[j]
        else:
            out_dims.append(d)
            for k, p in enumerate(padded):
                in_dims[k].append(p[j])
            last = state
    if not out_dims:                                  # every dim is 1: one element
        return [1], [[1] for _ in padded]
    return out_dims, in_dims


@cache
def broadcast_tiling_class(base: type[TbeElewiseTilingData], n_inputs: int) -> type[TbeElewiseTilingData]:
    """``base`` (the op's struct: ``dim0``, ``blockFactor``, ``ubFactor``, attributes) plus the broadcast
    variables: ``shapeLen`` and each input's fused dims ``inputDims[i][0..MAX_DIMS-1]`` (broadcast_v3.cc's
    ``_dim_j_i``; unused axes 1), as int32 like the other variables. ``dim0`` counts output elements."""
    ann: dict[str, Any] = {"shapeLen": int32}
    ann.update({f"inputDims[{i}][{j}]": int32 for i in range(n_inputs) for j in range(MAX_DIMS)})
    return type(f"{base.__name__}Broadcast", (base,), {
        "__annotations__": ann, "__module__": base.__module__, "BROADCAST_INPUTS": n_inputs,
        "__doc__": f"{base.__name__} with the broadcast variables of the modelled ELEWISE_WITH_BROADCAST "
                   "schedule (``tbe.schedule.broadcast_tiling_class``)."})


def is_broadcast(td: TilingData) -> bool:
    """Whether ``td`` is a broadcast tiling (its struct carries the inputs' dims)."""
    return getattr(type(td), "BROADCAST_INPUTS", 0) > 0


def broadcast_dims(td: TilingData) -> tuple[list[int], list[list[int]]]:
    """The output's fused dims and each input's, read back from a broadcast tiling (the kernel does this)."""
    rank = td.shapeLen
    ins = [[getattr(td, f"inputDims[{i}][{j}]") for j in range(rank)] for i in range(type(td).BROADCAST_INPUTS)]
    return [max(col) for col in zip(*ins, strict=True)], ins


def op_tiling_shapes(op_type: str, describe: Callable[[str], Compute], dtypes: Sequence[str],
                     shapes: Sequence[Sequence[int]], out_shape: Sequence[int], dtype: Any, core_num: int,
                     ub_size: int, cls: type[TbeElewiseTilingData] = TbeElewiseTilingData,
                     **extra: Any) -> TbeElewiseTilingData:
    """An ELEWISE_WITH_BROADCAST operator's tiling from its inputs' own shapes (the MODEL above).

    As broadcast_v3.cc's ``BroadcastTiling``: the shapes must broadcast to ``out_shape``; an empty output, or
    inputs that all have the output's element count (no broadcast axis), take the elewise tiling of
    :func:`op_tiling`, struct and key unchanged. Otherwise the elewise rules run on the output's element
    count into :func:`broadcast_tiling_class`'s struct, with the fused dims of every input and key
    ``BROADCAST_TILING_KEY`` (+10000 double-buffered)."""
    shapes = [tuple(require_count("a dim", d) for d in s) for s in shapes]
    out = tuple(require_count("a dim", d) for d in out_shape)
    try:
        expected = _broadcast_shapes(shapes)
    except ValueError:
        raise TilingError(f"TBE {op_type}: input shapes {[list(s) for s in shapes]} do not broadcast") from None
    if expected != out:
        raise TilingError(f"TBE {op_type}: input shapes {[list(s) for s in shapes]} broadcast to {list(expected)}, "
                          f"not to the output shape {list(out)}")
    n = math.prod(out)
    if n == 0 or all(math.prod(s) == n for s in shapes):
        return op_tiling(op_type, describe, dtypes, n, dtype, core_num, ub_size, cls, **extra)
    out_dims, in_dims = fuse_broadcast_shapes(shapes, out)
    if len(out_dims) > MAX_DIMS:
        raise TilingError(f"TBE {op_type}: {len(out_dims)} axes after fusion; the model carries at most {MAX_DIMS}")
    fields: dict[str, int] = {"shapeLen": len(out_dims)}
    for i, dims in enumerate(in_dims):
        fields.update({f"inputDims[{i}][{j}]": dims[j] if j < len(dims) else 1 for j in range(MAX_DIMS)})
    td = op_tiling(op_type, describe, dtypes, n, dtype, core_num, ub_size,
                   broadcast_tiling_class(cls, len(shapes)), **extra, **fields)
    return td.replace(tilingKey=BROADCAST_TILING_KEY + (DB_TILING_KEY if double_buffered(td) else 0))
