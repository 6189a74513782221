"""The automatic elementwise schedule of the TBE model: compile info, then the runtime tiling.

A TBE kernel's tiling happens in two places (``kernel_flavours.md`` §5.5):

* **at compile time** the schedule counts how many tile-sized tensors live at once (``coexist``) and the UB its
  instructions need besides (``extra``), and writes ``_base_info = [core, maxDtypeBytes, maxUb, maxUbDb]`` into the
  compile info. The schedules ship as Python in the CANN 8.1.RC1 toolkit (``python/site-packages/tbe/dsl/
  unify_schedule/vector/elewise/elewise_schedule.py`` and ``broadcast/broadcast_schedule.py``); their walk is
  :mod:`.storage_bound`, and :func:`compile_info_of` turns it into ``maxUb``/``maxUbDb`` as
  ``elewise_tilingcase.calc_elewise_base_info`` does, from ``UB_SIZE`` of the SoC's ini (``util.get_ub_size``:
  196608 on A2/A3, 262144 on 910A/310P) less twice the extra UB;
* **at run time** ``op_tiling/elewise_v3.cc`` (canndev mirror @01e6dc6c) turns the element count into a
  block split, a UB split and a double-buffer decision, and hands the kernel ``blockDim``, a tiling key and
  the variables ``[dim, blockFactor, ubFactor]``; reproduced exactly by :func:`elewise_tiling`.

The compile info belongs to the binary built for one SoC, so a tiling compiles its description for the SoC in force
(:func:`compile_target`; ``tiling.compute`` and ``ascend_lab.standalone.tiling_for`` put the SoC they tile for in
force, as the aclnn path does). Every caller passes ``ub_size`` as to every host tiling, ``GetCoreMemSize(UB)``
(256 B short of the ini on 910B/910_93); the schedule adds that back (:func:`ub_reserve`).

**Broadcasting** (ThresholdGradV2D and ReluGrad are classified ``ELEWISE_WITH_BROADCAST``, §5.2/§5.3): the
real run-time tiling is ``op_tiling/broadcast_v3.cc`` (canndev mirror @0231fcc2). Its ``BroadcastTiling``
right-aligns the input shapes, checks that they broadcast, hands a call with no broadcast axis (and an empty
output, key INT32_MAX) to the elewise tiling above -- whose compile info the elementwise schedule wrote
(``broadcast_tilingcase._pre_build`` keeps elementwise patterns' base info) --, and otherwise fuses continuous axes
with the same broadcast state (``MulFusionContinuousAxis``), writes each input's fused dims as the variables
``_dim_j_i`` and cuts a block axis and a UB axis of the N-D output (``DoBlockTiling``/``DoUbTiling``), keyed from
``BASE_KEY_NUM`` = 200000000. The model keeps the first half -- the check, the elewise hand-off, the axis
fusion and the per-input dims in the struct (:func:`broadcast_tiling_class`) -- and the broadcast schedule's
compile-time count (:mod:`.storage_bound`, general case), and replaces the N-D split with the elewise rules above
applied to the **output** element count, fused to one dimension (:func:`op_tiling_shapes`): the block and UB factors
count output elements, and the kernel's copy-in reads, per tile, the input elements that tile needs
(:mod:`.lowering`). Key 200000000 (+10000 double-buffered); the pattern and axis digits the real key carries are
not modelled.
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
from .storage_bound import storage_bound

if TYPE_CHECKING:
    from ..base.platform import SocInfo
    from .dsl import Compute

# The run-time half of this module (elewise_tiling, core_ranges, compile_info_of) imports without numpy: the live
# tiling page runs it in pyodide on compile counts made at book build. Only describing an op needs the DSL.

__all__ = [
    "ALIGN", "BROADCAST_TILING_KEY", "COMMON_TILING_KEY", "DB_TILING_KEY", "EMPTY_TILING_KEY", "MAX_DIMS",
    "SCHEDULE_LABEL", "SPLIT_FACTORS", "CompileInfo", "TbeElewiseTilingData", "broadcast_dims",
    "broadcast_tiling_class", "compile_info", "core_ranges", "double_buffered", "elewise_tiling",
    "fuse_broadcast_shapes", "is_broadcast", "op_tiling", "op_tiling_shapes",
]

#: How the book and UI name this schedule.
SCHEDULE_LABEL = "TBE (modelled schedule)"
#: The TBE SoC a tiling compiles for when the SoC in force has no TBE kernels (:func:`compile_target`).
REPRESENTATIVE_SOC = "Ascend910B4"
#: ``dsl.TBE_FAMILIES`` without numpy.
_TBE_FAMILIES = ("ascend910", "ascend910b", "ascend910_93", "ascend310p")
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
    """What the compile step hands the run-time tiling (``_base_info``) plus how it was counted: ``ub_size`` is the
    UB the schedule divides (the ini's ``UB_SIZE``), ``extra_ub`` the bytes it takes off first (twice: see
    :func:`compile_info_of`)."""
    core_num: int
    ub_size: int
    coexist: int
    max_dtype_bytes: int
    max_ub: int          # elements per tile, single buffer
    max_ub_db: int       # elements per tile, double buffer
    out_dtype: str
    extra_ub: int = 0
    ub_reserve: int = 0  # ub_size - the caller's GetCoreMemSize(UB)

    @property
    def base_info(self) -> list[int]:
        """``_base_info`` as the compile info stores it: [core, maxDtypeBytes, maxUb, maxUbDb]."""
        return [self.core_num, self.max_dtype_bytes, self.max_ub, self.max_ub_db]


def compile_target(soc: Any = None) -> SocInfo:
    """The SoC a TBE kernel is compiled for: ``soc`` when given, else the SoC in force when it runs TBE kernels,
    else Ascend910B4 (a what-if TBE tiling on a SoC without TBE kernels)."""
    from ..base.platform import current_soc, get_soc  # deferred: keeps the run-time half importable alone
    info = get_soc(soc) if soc is not None else current_soc()
    return info if info.family in _TBE_FAMILIES else get_soc(REPRESENTATIVE_SOC)


def ub_reserve(soc: SocInfo) -> int:
    """What the caller's ``ub_size`` lacks of the ini's ``UB_SIZE``: every caller passes ``GetCoreMemSize(UB)``, as to
    every host tiling, which keeps 256 B back on 910B and 910_93 (``SocInfo.core_mem_size_ub``); the TBE schedule
    divides ``get_soc_spec("UB_SIZE")`` (``util.get_ub_size``), the whole UB."""
    return soc.ub_size - soc.core_mem_size_ub


def compile_info(compute: Compute, core_num: int, ub_size: int, soc: Any = None) -> CompileInfo:
    """The compile info of ``compute`` for ``core_num`` cores and ``ub_size`` bytes of UB (``GetCoreMemSize(UB)``),
    compiled for ``soc`` (default: :func:`compile_target`)."""
    target = compile_target(soc if soc is not None else compute.soc)
    bound = storage_bound(compute, target)
    return compile_info_of(bound.coexist, bound.max_dtype_bytes, compute.output.dtype, core_num, ub_size,
                           extra_ub=bound.extra_ub, ub_reserve=ub_reserve(target))


def compile_counts(describe: Callable[..., Compute], dtype_name: str, soc: Any = None,
                   shapes: Sequence[Sequence[int]] | None = None) -> dict[str, Any]:
    """What the compile step counts in an op's description for one dtype, compiled for ``soc`` (default:
    :func:`compile_target`): ``{"coexist", "max_dtype_bytes", "out_dtype", "extra_ub", "ub_reserve"}``, the
    arguments of :func:`compile_info_of`. With ``shapes`` (the inputs' own shapes, which broadcast) the broadcast
    schedule counts the description built for them; otherwise the elementwise schedule counts."""
    from .dsl import compile_for  # deferred: the DSL needs numpy; the run-time half imports without it (live page)
    target = compile_target(soc)
    with compile_for(target):
        compute = describe(dtype_name, shapes=tuple(shapes)) if shapes is not None else describe(dtype_name)
    bound = storage_bound(compute, target, "broadcast" if shapes is not None else "elewise")
    return {"coexist": bound.coexist, "max_dtype_bytes": bound.max_dtype_bytes, "out_dtype": compute.output.dtype,
            "extra_ub": bound.extra_ub, "ub_reserve": ub_reserve(target)}


def compile_info_of(coexist: int, max_dtype_bytes: int, out_dtype: str, core_num: int, ub_size: int,
                    extra_ub: int = 0, ub_reserve: int = 0) -> CompileInfo:
    """The compile info from a description's counts (:func:`compile_counts`) for ``core_num`` cores and ``ub_size``
    bytes of UB (``GetCoreMemSize(UB)``; the schedule divides ``ub_size + ub_reserve``, the ini's ``UB_SIZE``).

    The dynamic kernel has two schedules, single- and double-buffered (``elewise_tilingcase.py`` all-fuse cases,
    keys 210000000 and 210010000). Each takes its extra UB off the UB it records, once single-buffered and twice
    double-buffered (``_do_storage_bound``, elewise_schedule.py:906-913); ``calc_elewise_base_info``
    (elewise_tilingcase.py:134-154) turns each into ``maxUb = ((UB // coexist) // 32 * 32) // maxDtypeBytes`` and
    ``maxUbDb`` the same with ``UB // 2``, and keeps the smaller of the two schedules' numbers for the pattern they
    share: both come from ``UB_SIZE - 2 * extra_ub``."""
    core_num = require_count("core_num", core_num)
    ub_size = require_count("ub_size", ub_size) + ub_reserve
    if core_num == 0:
        raise TilingError("TBE elementwise tiling: core_num is 0; need at least one core")
    room = ub_size - 2 * extra_ub
    if room // coexist < _BLOCK_BYTES:
        raise TilingError(f"TBE elementwise tiling: a UB of {ub_size} B, less {2 * extra_ub} B of temporaries, gives "
                          f"each of the {coexist} tensors that coexist in it {max(room, 0) // coexist} B, less than "
                          f"one {_BLOCK_BYTES}-byte block; it needs ub_size >= "
                          f"{coexist * _BLOCK_BYTES + 2 * extra_ub - ub_reserve} B")
    max_ub = (room // coexist) // _BLOCK_BYTES * _BLOCK_BYTES // max_dtype_bytes
    max_ub_db = (room // 2 // coexist) // _BLOCK_BYTES * _BLOCK_BYTES // max_dtype_bytes
    return CompileInfo(core_num, ub_size, coexist, max_dtype_bytes, max_ub, max_ub_db, out_dtype, extra_ub,
                       ub_reserve)


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
                _refuse_tile(info, db, limit)
    key = COMMON_TILING_KEY + (DB_TILING_KEY if db else 0)
    return cls(dim0=n, blockFactor=block_factor, ubFactor=ub_factor, blockDim=block_dim, tilingKey=key, **extra)


def _refuse_tile(info: CompileInfo, db: bool, limit: int) -> None:
    """TilingError: the slices are too small for one tile of :data:`ALIGN` elements (ubFactor would be 0)."""
    buffers = 2 if db else 1
    per = (info.ub_size - 2 * info.extra_ub) // buffers // info.coexist
    need = ALIGN * info.max_dtype_bytes * info.coexist * buffers + 2 * info.extra_ub - info.ub_reserve
    raise TilingError(f"TBE elementwise tiling: a UB of {info.ub_size} B, less {2 * info.extra_ub} B of "
                      f"temporaries, leaves each of the {info.coexist} coexisting tensors {per} B"
                      f"{' per buffer' if db else ''}, {limit} elements of {info.max_dtype_bytes} B, fewer than "
                      f"the {ALIGN} a tile is cut in; it needs ub_size >= {need} B")


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


def op_tiling(op_type: str, describe: Callable[..., Compute], dtypes: Sequence[str], n: int, dtype: Any,
              core_num: int, ub_size: int, cls: type[TbeElewiseTilingData] = TbeElewiseTilingData,
              soc: Any = None, **extra: Any) -> TbeElewiseTilingData:
    """An operator's TBE tiling: the elementwise schedule's compile info of its description, compiled for ``soc``
    (default: :func:`compile_target`, the SoC in force), then :func:`elewise_tiling`."""
    name = check_dtype(op_type, dtypes, dtype)
    counts = compile_counts(describe, name, soc)
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


def op_tiling_shapes(op_type: str, describe: Callable[..., Compute], dtypes: Sequence[str],
                     shapes: Sequence[Sequence[int]], out_shape: Sequence[int], dtype: Any, core_num: int,
                     ub_size: int, cls: type[TbeElewiseTilingData] = TbeElewiseTilingData,
                     soc: Any = None, **extra: Any) -> TbeElewiseTilingData:
    """An ELEWISE_WITH_BROADCAST operator's tiling from its inputs' own shapes (modelled: see the module docstring).

    As broadcast_v3.cc's ``BroadcastTiling``: the shapes must broadcast to ``out_shape``; an empty output, or
    inputs that all have the output's element count (no broadcast axis), take the elewise tiling of
    :func:`op_tiling`, struct and key unchanged. Otherwise the elewise rules run on the output's element
    count into :func:`broadcast_tiling_class`'s struct, with the fused dims of every input and key
    ``BROADCAST_TILING_KEY`` (+10000 double-buffered), from the broadcast schedule's count of the description
    built for these shapes."""
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
        return op_tiling(op_type, describe, dtypes, n, dtype, core_num, ub_size, cls, soc, **extra)
    out_dims, in_dims = fuse_broadcast_shapes(shapes, out)
    if len(out_dims) > MAX_DIMS:
        raise TilingError(f"TBE {op_type}: {len(out_dims)} axes after fusion; the model carries at most {MAX_DIMS}")
    fields: dict[str, int] = {"shapeLen": len(out_dims)}
    for i, dims in enumerate(in_dims):
        fields.update({f"inputDims[{i}][{j}]": dims[j] if j < len(dims) else 1 for j in range(MAX_DIMS)})
    counts = compile_counts(describe, check_dtype(op_type, dtypes, dtype), soc, shapes)
    info = compile_info_of(**counts, core_num=core_num, ub_size=ub_size)
    td = elewise_tiling(n, info, broadcast_tiling_class(cls, len(shapes)), **extra, **fields)
    return td.replace(tilingKey=BROADCAST_TILING_KEY + (DB_TILING_KEY if double_buffered(td) else 0))
