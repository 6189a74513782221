"""BroadcastBaseTiling: the atvoss template's host tiling (kernel_flavours.md §3.1, §3.4).

``BroadcastBaseTiling<Dag>::DoTiling`` (OB ``broadcast_tiling.h``, ``src/op_common/atvoss/broadcast/*.cpp``):

1. **DimensionCollapse** -- left-pad every input with 1s to the output rank, mark per axis which inputs
   are 1 there, drop size-1 output axes, merge neighbours with the same mark; strides are contiguous, 0 on
   an input's broadcast axes (:func:`dimension_collapse`).
2. **Path** -- a collapsed rank of 1 takes the one-dim schedules: **202** ("advance") when
   ``#in + #out <= 4`` and the DAG reads no Var scalar, else **201** (:func:`one_dim_tiling`,
   :func:`one_dim_advance_tiling`); a higher rank takes the general broadcast tiling, NDDMA (schMode 1/2)
   or UB-broadcast (101-104, 109) (:func:`general_tiling`).
3. ``workspace[0] = 16 MiB`` whatever the path (``DEFAULT_TILING_WORKSPACE_SIZE``; :func:`workspace_size`).

The tiling key is ``index(schMode in SCH_MODES) | dtypeId << 16`` (:func:`tiling_key`); the dtype ids are
the op's own (its ``*_struct.h``), so the op passes ``dtype_id``. The TilingData classes carry the C
structs' field names and byte layout (``broadcast_base_struct.h``); ``char scalarData[16]`` holds the
op's ``SetScalar<float>`` values (ThresholdGradV2D's threshold at bytes 0..3).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Self

from ..acl.types import as_acl_dtype, dtype_itemsize
from ..opdev.tiling_data import CType, TilingData, TilingError, int32, int64, is_int, to_float32

if TYPE_CHECKING:
    from .dag import Dag

# This module imports without numpy: the live tiling page runs it in pyodide, with a DAG's compile-time counts
# (:class:`DagCounts`) in place of the DAG, as the C++ template has them as constants.

__all__ = [
    "BROADCAST_MAX_DIMS_NUM", "DEFAULT_TILING_WORKSPACE_SIZE", "SCH_MODES", "BroadcastBaseTilingData",
    "BroadcastOneDimTilingData", "BroadcastOneDimTilingDataAdvance", "DagCounts", "advance_split", "base_tiling_class",
    "template_core_ranges",
    "broadcast_base_tiling", "pool_bytes",
    "dimension_collapse", "general_tiling", "is_ub_broadcast", "one_dim_advance_tiling", "one_dim_tiling",
    "sch_mode_of", "tiling_key", "workspace_size",
]

int16 = Annotated[int, CType("int16_t", "h", 2)]

#: ``ASCENDC_TPL_UINT_DECL(schMode, 16, ASCENDC_TPL_UI_LIST, ...)``: the key stores a mode's index here.
SCH_MODES: tuple[int, ...] = (1, 2, 101, 102, 103, 104, 109, 201, 202, 301, 302, 303, 304, 305, 999)
DEFAULT_TILING_WORKSPACE_SIZE = 16 * 1024 * 1024          # broadcast_tiling_base.h:47
CACHE_LINE = 128
CACHE_LINE_512 = 512
PER_CORE_MIN_UB_BYTE = 8192
HALF_CORE_NUM_DIVIDE = 2
DB_LOOP = 2
MAX_IN_OUT_ARGS_NUMBER = 4
BLOCK_LENGTH = 32
NDDMA_DCACHE_SIZE = 8192                                   # platform_util.h:126-129
MAX_NDDMA_DIM = 5
HIGH_PERF_RANK = 4
BROADCAST_MAX_DIMS_NUM = 8
BROADCAST_MAX_SCALAR_BYTES = 16
#: Input dtypes whose aligned last axis prefers the UB-broadcast schedule (``ubBroadcastDtypes``).
UB_BRC_DTYPES = frozenset(["int8", "uint8", "float16", "int16", "uint16", "bfloat16"])


def workspace_size(soc: Any = None) -> int:
    """Bytes of GM workspace the template's tiling requests: ``workspace[0] = 16 MiB`` on every path and SoC
    (``BroadcastBaseTiling::DoTiling``; kernel_flavours.md §3.1, §6). ``soc`` is accepted so every kernel
    flavour answers the same call."""
    return DEFAULT_TILING_WORKSPACE_SIZE


def tiling_key(sch_mode: int, dtype_id: int) -> int:
    """``GET_TPL_TILING_KEY(schMode, dtypeId)``: the schMode's index in :data:`SCH_MODES` (16 bits), the
    op's dtype id at bit 16."""
    if sch_mode not in SCH_MODES:
        raise ValueError(f"schMode {sch_mode} is not one of the template's modes {SCH_MODES}")
    return SCH_MODES.index(sch_mode) | (int(dtype_id) << 16)


def sch_mode_of(key: int) -> int:
    """The schMode a tiling key selects (the inverse of :func:`tiling_key` for the low 16 bits)."""
    return SCH_MODES[int(key) & 0xFFFF]


# --- TilingData structs ----------------------------------------------------------------------------------
class _CharTail(TilingData):
    """A struct whose last member is ``char scalarData[16]`` (alignment 1), kept as 16 raw bytes.

    ``opdev.tiling_data`` lays out scalar members only; this base appends the char array after them, so the
    byte layout is the C one (BroadcastOneDimTilingData: 5 x int32, 4 B padding, 2 x int64, 16 chars = 56 B)."""

    CHARS: ClassVar[int] = BROADCAST_MAX_SCALAR_BYTES

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        fmt, offset, max_align = "<", 0, 1
        for _, ctype in cls.FIELDS:
            pad = -offset % ctype.size
            fmt += "x" * pad + ctype.fmt
            offset += pad + ctype.size
            max_align = max(max_align, ctype.size)
        offset += cls.CHARS
        tail = -offset % max_align
        cls._FORMAT = fmt + f"{cls.CHARS}s" + "x" * tail
        cls.SIZE = offset + tail

    def __init__(self, *, scalarData: bytes = b"", blockDim: int = 1, tilingKey: int = 0, **values: Any) -> None:
        raw = bytes(scalarData)
        if len(raw) > self.CHARS:
            raise ValueError(f"scalarData holds {self.CHARS} bytes, got {len(raw)}")
        super().__init__(blockDim=blockDim, tilingKey=tilingKey, **values)
        object.__setattr__(self, "scalarData", raw.ljust(self.CHARS, b"\0"))

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {n: getattr(self, n) for n, _ in self.FIELDS}
        out["scalarData"] = self.scalarData
        out["blockDim"] = self.blockDim
        out["tilingKey"] = self.tilingKey
        return out

    def __repr__(self) -> str:
        d = self.as_dict()
        d["scalarData"] = self.scalarData.hex()
        return f"{type(self).__name__}({', '.join(f'{k}={v}' for k, v in d.items())})"

    def to_bytes(self) -> bytes:
        return struct.pack(self._FORMAT, *(getattr(self, n) for n, _ in self.FIELDS), self.scalarData)

    @classmethod
    def from_bytes(cls, raw: bytes | bytearray | memoryview, *, blockDim: int = 1, tilingKey: int = 0) -> Self:
        raw = bytes(raw)
        if len(raw) != cls.SIZE:
            raise ValueError(f"{cls.__name__} is {cls.SIZE} bytes, got {len(raw)}")
        *values, chars = struct.unpack(cls._FORMAT, raw)
        fields = dict(zip(cls.field_names(), values, strict=True))
        return cls(**fields, scalarData=chars, blockDim=blockDim, tilingKey=tilingKey)

    def scalar(self, index: int = 0, dtype: Any = "float32") -> Any:
        """The ``index``-th scalar of ``dtype`` in scalarData (``SetScalar`` packs them back to back), as the
        numpy scalar the kernel computes with."""
        import numpy as np  # deferred: only the kernel reads scalars back; the tiling imports without numpy
        dt = np.dtype(dtype)
        return np.frombuffer(self.scalarData, dt, count=1, offset=index * dt.itemsize)[0]


class BroadcastOneDimTilingData(_CharTail):
    """``BroadcastOneDimTilingData`` (schMode 201; 56 bytes)."""

    scalarFlag: int32
    ubSplitAxis: int32
    ubFormer: int32
    ubTail: int32
    blockNum: int32
    blockFormer: int64
    blockTail: int64


class BroadcastOneDimTilingDataAdvance(TilingData):
    """``BroadcastOneDimTilingDataAdvance`` (schMode 202; 16 bytes, no scalar: a DAG with a Var takes 201)."""

    dimLen: int64
    tileNum: int32
    blockNum: int16
    scalarFlag: int16


class BroadcastBaseTilingData(_CharTail):
    """``BroadcastBaseTilingData<BrcDag>`` (general broadcast, schMode 1/2/10x): the scalar members; the
    array members (``outputDims[8]``, ``inputBrcDims[CopyBrcSize][8]``, ...) are fields named as C indexes
    them (``outputDims[0]``) on the per-DAG subclass :func:`base_tiling_class` builds; :meth:`array`
    reads one back as a list."""

    scheMode: int32
    shapeLen: int32
    ubSplitAxis: int32
    ubFormer: int32
    ubTail: int32
    ubOuter: int64
    blockFormer: int64
    blockTail: int64
    dimProductBeforeUbInner: int64
    elemNum: int64
    blockNum: int64

    def array(self, name: str, row: int | None = None) -> list[int]:
        """``outputDims`` -> its 8 values; ``inputBrcDims``, row 1 -> ``inputBrcDims[1][0..7]``."""
        prefix = f"{name}[" if row is None else f"{name}[{row}]["
        return [getattr(self, n) for n, _ in self.FIELDS if n.startswith(prefix) and
                (row is not None or n.count("[") == 1)]


@cache
def base_tiling_class(input_size: int, copy_brc_size: int, vec_brc_size: int = 0) -> type[BroadcastBaseTilingData]:
    """``BroadcastBaseTilingData<Dag>`` for a DAG's ``InputSize`` and ``CopyBrcSize`` (``VecBrcSize`` 0 here:
    the template's zero-length arrays take no bytes)."""
    if vec_brc_size:
        raise NotImplementedError("VecBrc nodes are not modelled (none of the ops here has one)")
    i64 = int64
    ann: dict[str, Any] = {}
    dims = BROADCAST_MAX_DIMS_NUM
    ann.update({f"outputDims[{j}]": i64 for j in range(dims)})
    ann.update({f"outputStrides[{j}]": i64 for j in range(dims)})
    ann.update({f"inputDims[{i}][{j}]": i64 for i in range(input_size) for j in range(2)})
    ann.update({f"inputBrcDims[{i}][{j}]": i64 for i in range(copy_brc_size) for j in range(dims)})
    ann.update({f"inputStrides[{i}][{j}]": i64 for i in range(input_size) for j in range(dims)})
    ann.update({f"inputBrcStrides[{i}][{j}]": i64 for i in range(copy_brc_size) for j in range(dims)})
    name = f"BroadcastBaseTilingData_In{input_size}_Brc{copy_brc_size}"
    return type(name, (BroadcastBaseTilingData,), {"__annotations__": ann, "__module__": __name__,
                                                    "__doc__": BroadcastBaseTilingData.__doc__})


def _scalar_bytes(scalars: Sequence[float]) -> bytes:
    """``SetScalar<float>(v)`` for each value, back to back (float32, little-endian)."""
    raw = b"".join(struct.pack("<f", to_float32(v)) for v in scalars)
    if len(raw) > BROADCAST_MAX_SCALAR_BYTES:
        raise TilingError(f"at most {BROADCAST_MAX_SCALAR_BYTES // 4} float scalars fit scalarData")
    return raw


# --- DimensionCollapse -------------------------------------------------------------------------------------
def _shape(s: Sequence[int] | int) -> tuple[int, ...]:
    t = (int(s),) if is_int(s) else tuple(int(d) for d in s)
    return t if t else (1,)                                # EnsureNotScalar: a 0-d shape becomes {1}


def dimension_collapse(in_shapes: Sequence[Sequence[int]], out_shape: Sequence[int]
                       ) -> tuple[list[list[int]], list[list[int]]]:
    """(dims, strides), one list per input and the output last, after merging axes (§3.4 step 3)."""
    out = _shape(out_shape)
    rank = len(out)
    ins = []
    for k, s in enumerate(in_shapes):
        s = _shape(s)
        if len(s) > rank:
            raise TilingError(f"input {k} has {len(s)} dims, more than the output's {rank}")
        ins.append((1,) * (rank - len(s)) + s)
    flags = []
    for j in range(rank):
        if out[j] <= 0:
            raise TilingError(f"output dim {j} is {out[j]}: the template needs positive dims (empty tensors "
                              "never reach the kernel)")
        flag = 0
        for k, s in enumerate(ins):
            flag <<= 1
            if s[j] != 1 and s[j] != out[j]:
                raise TilingError(f"input {k} dim {j} is {s[j]}, neither 1 nor the output's {out[j]}")
            if s[j] == 1:
                flag += 1
        flags.append(flag)
    keep = [j for j in range(rank) if out[j] != 1] or [rank - 1]   # size-1 output axes are absorbed
    groups: list[list[int]] = []
    for j in keep:
        if groups and flags[groups[-1][-1]] == flags[j]:
            groups[-1].append(j)
        else:
            groups.append([j])
    dims = [[math.prod(s[j] for j in g) for g in groups] for s in ins]
    dims.append([math.prod(out[j] for j in g) for g in groups])
    strides = []
    for i, d in enumerate(dims):
        base, st = 1, []
        for j in range(len(d) - 1, -1, -1):
            if d[j] == 1 and i != len(dims) - 1 and dims[-1][j] != 1:
                st.append(0)
            else:
                st.append(base)
                base *= d[j]
        strides.append(st[::-1])
    return dims, strides


# --- one-dim schedules -------------------------------------------------------------------------------------
def _scalar_flag(dims: list[list[int]]) -> int:
    return sum(1 << i for i, d in enumerate(dims[:-1]) if d[0] == 1)


def one_dim_tiling(dag: Dag, n: int, core_num: int, ub_size: int, *, dtype_id: int, scalar_flag: int = 0,
                   scalars: Sequence[float] = ()) -> BroadcastOneDimTilingData:
    """schMode 201 (``DoOneDimOpTiling``, §3.4): UB split first, then cores, with the half-core rule."""
    a = dag.buffer_num(nddma=True)
    d = dag.max_dtype_bytes
    if n <= 0:
        raise TilingError("dimLength is zero: the one-dim tiling fails on an empty tensor")
    ub_former = (ub_size // a) // CACHE_LINE * CACHE_LINE // d
    if ub_former == 0:
        raise TilingError(f"ub size {ub_size} B over aliveNum {a} leaves no 128-byte line per buffer")

    def split(former: int) -> tuple[int, int, int, int, int]:
        ub_outer = -(-n // former)
        ub_tail = n % former or former
        block_former = -(-ub_outer // core_num)
        block_tail = ub_outer % block_former or block_former
        block_num = -(-ub_outer // block_former)
        return ub_outer, ub_tail, block_former, block_tail, block_num

    _, ub_tail, block_former, block_tail, block_num = split(ub_former)
    if block_num < core_num // HALF_CORE_NUM_DIVIDE and ub_former * d * a > PER_CORE_MIN_UB_BYTE:
        dim_per_core = n * 2 // core_num
        align_dim_per_core = -(-(dim_per_core * d) // CACHE_LINE) * CACHE_LINE // d
        ub_former = min(ub_former, align_dim_per_core)
        lowest = (PER_CORE_MIN_UB_BYTE // a) // CACHE_LINE * CACHE_LINE // d
        ub_former = max(ub_former, lowest)
        _, ub_tail, block_former, block_tail, block_num = split(ub_former)
    return BroadcastOneDimTilingData(
        scalarFlag=scalar_flag, ubSplitAxis=0, ubFormer=ub_former, ubTail=ub_tail, blockNum=block_num,
        blockFormer=block_former, blockTail=block_tail, scalarData=_scalar_bytes(scalars),
        blockDim=block_num, tilingKey=tiling_key(201, dtype_id))


def one_dim_advance_tiling(dag: Dag, n: int, core_num: int, ub_size: int, *, dtype_id: int,
                           scalar_flag: int = 0) -> BroadcastOneDimTilingDataAdvance:
    """schMode 202 (``DoOneDimOpTilingAdvance``, §3.4): 512-byte tiles, fewer cores for small inputs, and at
    least two tiles per core (``blockFormer`` 1 becomes 2) so that each core double-buffers."""
    a = dag.buffer_num(nddma=True)
    d, dmin = dag.max_dtype_bytes, dag.min_dtype_bytes
    tile = (ub_size // a) // CACHE_LINE_512 * CACHE_LINE_512 // d
    if tile == 0:
        raise TilingError(f"ub size {ub_size} B over aliveNum {a} leaves no 512-byte line per buffer")
    if n <= 0:
        raise TilingError("dimLength is zero: the one-dim tiling fails on an empty tensor")
    if core_num * (CACHE_LINE_512 // dmin) > n:
        tile = CACHE_LINE_512 // dmin
    elif core_num * tile > n:
        per = CACHE_LINE_512 // d
        tile = (n // core_num) // per * per
    ub_outer = -(-n // tile)
    block_former = -(-ub_outer // core_num)
    if block_former == 1:
        block_former = DB_LOOP
    block_num = -(-ub_outer // block_former)
    return BroadcastOneDimTilingDataAdvance(dimLen=n, tileNum=tile, blockNum=block_num, scalarFlag=scalar_flag,
                                            blockDim=block_num, tilingKey=tiling_key(202, dtype_id))


def advance_split(td: BroadcastOneDimTilingDataAdvance) -> dict[str, int]:
    """What the 202 kernel recomputes from its 16-byte struct (``broadcast_sch_one_dim_advance.h:40-73``)."""
    n, tile, block_num = td.dimLen, td.tileNum, td.blockNum
    ub_outer = -(-n // tile)
    bf = -(-ub_outer // block_num)
    return {"ubOuter": ub_outer, "ubTail": n - (ub_outer - 1) * tile, "blockFormer": bf,
            "blockTail": ub_outer - (block_num - 1) * bf}


# --- general broadcast -------------------------------------------------------------------------------------
def is_ub_broadcast(dag: Dag, dims: list[list[int]], strides: list[list[int]], in_dtypes: Sequence[Any]) -> bool:
    """``IsUbBroadcast`` (§3.4 table), the first matching rule decides (kernelType "both")."""
    out_st = strides[-1]
    brc = next((i for i in range(len(dims) - 1)
                if any(strides[i][j] == 0 and out_st[j] != 0 for j in range(len(out_st)))), None)
    if brc is None:
        return False                               # nothing broadcast: NDDMA
    if dag.copy_brc_size == 0:
        return True
    for i in range(len(dims) - 1):                 # IsBigNLastBrc
        if strides[i][-1] == 0:
            continue
        if any(strides[i][j] == 0 and out_st[j] != 0 for j in range(len(out_st) - 1)):
            if dims[i][-1] * dtype_itemsize(in_dtypes[i]) >= NDDMA_DCACHE_SIZE // 2:
                return True
    dt = as_acl_dtype(in_dtypes[brc])
    last = dims[-1][-1]
    return last % (BLOCK_LENGTH // dtype_itemsize(dt)) == 0 and dt.short in UB_BRC_DTYPES


def general_tiling(dag: Dag, dims: list[list[int]], strides: list[list[int]], core_num: int, ub_size: int, *,
                   dtype_id: int, in_dtypes: Sequence[Any], scalars: Sequence[float] = ()) -> BroadcastBaseTilingData:
    """``DoBroadcastOpTiling`` + ``DoBrodcastTiling`` (§3.4 general outline), ``preferMultiCore`` off."""
    shape_len = len(dims[-1])
    if shape_len > BROADCAST_MAX_DIMS_NUM:
        raise TilingError(f"broadcast can't support dim size greater than {BROADCAST_MAX_DIMS_NUM}")
    ub_brc = is_ub_broadcast(dag, dims, strides, in_dtypes)
    buffer_num = dag.buffer_num(nddma=not ub_brc)
    max_bits, min_bits = dag.max_dtype_bytes * 8, dag.min_dtype_bytes * 8
    align = 256 * 8 // min_bits
    max_elem = (ub_size * 8 // (buffer_num * max_bits)) // align * align
    if max_elem == 0:
        raise TilingError(f"maxElemNum is 0 (ub {ub_size} B, bufferNum {buffer_num})")
    out = dims[-1]
    cur, split_axis, fits = 1, 0, True
    for i in range(shape_len - 1, -1, -1):
        cur *= out[i]
        if cur > max_elem:
            cur //= out[i]
            split_axis, fits = i, False
            break
    if fits:
        cur //= out[0]
    ub_former = max_elem if shape_len == 1 else max_elem // cur
    ub_outer = -(-out[split_axis] // ub_former)
    ub_tail = out[split_axis] - (ub_outer - 1) * ub_former
    fused = ub_outer * math.prod(out[:split_axis])
    block_former = -(-fused // core_num)
    block_num = -(-fused // block_former)
    block_tail = fused - (block_num - 1) * block_former
    r = shape_len - split_axis
    sch = (100 + (r if r <= HIGH_PERF_RANK else 9)) if ub_brc else (2 if r > MAX_NDDMA_DIM else 1)
    cls = base_tiling_class(dag.input_size, dag.copy_brc_size)
    values: dict[str, int] = {f: 0 for f, _ in cls.FIELDS}
    values.update(scheMode=0, shapeLen=shape_len, ubSplitAxis=split_axis, ubFormer=ub_former, ubTail=ub_tail,
                  ubOuter=ub_outer, blockFormer=block_former, blockTail=block_tail,
                  dimProductBeforeUbInner=fused, elemNum=max_elem, blockNum=block_num)
    for j in range(shape_len):
        values[f"outputDims[{j}]"] = out[j]
        values[f"outputStrides[{j}]"] = strides[-1][j]
    for pos, node in enumerate(dag.copy_ins):          # SetInputNddmaParams: CopyBrc nodes in DAG order
        idx = node.inputs[0].index
        for j in range(shape_len):
            values[f"inputBrcDims[{pos}][{j}]"] = dims[idx][j]
            values[f"inputBrcStrides[{pos}][{j}]"] = strides[idx][j]
    # SetInputParams skips CopyInBrc inputs, so inputDims / inputStrides stay 0 for these DAGs
    return cls(**values, scalarData=_scalar_bytes(scalars), blockDim=block_num,
               tilingKey=tiling_key(sch, dtype_id))


def broadcast_base_tiling(dag: Dag, in_shapes: Sequence[Sequence[int] | int], out_shape: Sequence[int] | int,
                          core_num: int, ub_size: int, *, dtype_id: int, in_dtypes: Sequence[Any] | None = None,
                          scalars: Sequence[float] = ()) -> TilingData:
    """``BroadcastBaseTiling<Dag>(context).DoTiling()`` then ``SetScalar`` for each of ``scalars``.

    Returns the TilingData of the path taken, with ``blockDim`` and ``tilingKey`` set. ``in_dtypes`` (the
    inputs' numpy dtypes) matter only for the UB-broadcast choice; by default each CopyIn's own dtype."""
    if core_num <= 0 or ub_size <= 0:
        raise TilingError(f"core num {core_num} and ub size {ub_size} must be positive")
    if len(in_shapes) != dag.input_size:
        raise TilingError(f"{dag.name} reads {dag.input_size} inputs, got {len(in_shapes)} shapes")
    dims, strides = dimension_collapse(in_shapes, out_shape)
    if len(dims[-1]) == 1:
        n, flag = dims[-1][0], _scalar_flag(dims)
        if dag.input_size + dag.output_size <= MAX_IN_OUT_ARGS_NUMBER and dag.var_size <= 0:
            return one_dim_advance_tiling(dag, n, core_num, ub_size, dtype_id=dtype_id, scalar_flag=flag)
        return one_dim_tiling(dag, n, core_num, ub_size, dtype_id=dtype_id, scalar_flag=flag, scalars=scalars)
    if in_dtypes is None:
        by_index = {n.inputs[0].index: n.dtype for n in dag.copy_ins}
        in_dtypes = [by_index[i] for i in range(dag.input_size)]
    return general_tiling(dag, dims, strides, core_num, ub_size, dtype_id=dtype_id, in_dtypes=in_dtypes,
                          scalars=scalars)


def pool_bytes(dag: Dag, td: TilingData) -> int:
    """UB the kernel's buffer pool takes: one tile-sized slot per live buffer (``BufferNum`` of the kernel:
    ``GetBufferNum<true,false>``, the first column of §3.3; the UB-broadcast schedules add their temps)."""
    mode = sch_mode_of(td.tilingKey)
    d = dag.max_dtype_bytes
    if mode == 201:
        return td.ubFormer * d * dag.buffer_num(True)
    if mode == 202:
        return td.tileNum * d * dag.buffer_num(True)
    return td.elemNum * d * dag.buffer_num(nddma=mode < 100)


# --- a DAG's counts, and what each core writes --------------------------------------------------------------------
@dataclass(frozen=True)
class DagCounts:
    """What the one-dimensional tilings read of a :class:`~.dag.Dag` -- compile-time constants of the C++ template
    (``InputSize``, ``OutputSize``, ``VarSize``, the dtype widths, ``GetBufferNum``) -- without the DAG itself,
    whose nodes need numpy. ``DagCounts.of(dag)`` takes them from a DAG; :func:`broadcast_base_tiling` of a
    one-dimensional problem gives the same struct for either (the general broadcast tiling needs the DAG)."""
    name: str
    input_size: int
    output_size: int
    var_size: int
    max_dtype_bytes: int
    min_dtype_bytes: int
    buffer_num_nddma: int
    buffer_num_ub: int
    copy_brc_size: int

    @classmethod
    def of(cls, dag: Dag) -> DagCounts:
        return cls(dag.name, dag.input_size, dag.output_size, dag.var_size, dag.max_dtype_bytes,
                   dag.min_dtype_bytes, dag.buffer_num(nddma=True), dag.buffer_num(nddma=False), dag.copy_brc_size)

    def buffer_num(self, nddma: bool = True) -> int:
        """``Dag.buffer_num``: the live buffers of the NDDMA (True) or UB-broadcast (False) schedules."""
        return self.buffer_num_nddma if nddma else self.buffer_num_ub


def template_core_ranges(td: TilingData, size: int, *, tiles: bool = True) -> list[dict[str, Any]]:
    """What each core of a template kernel writes of the **output**, ``size`` bytes per element (rows as the other
    kernels' ``core_ranges``; :meth:`.kernel.TemplateOp.core_ranges` documents them)."""
    mode = sch_mode_of(td.tilingKey)
    rows: list[dict[str, Any]] = []
    if mode in (201, 202):
        if mode == 201:
            tile, block_num, bf, bt, ub_tail = td.ubFormer, td.blockNum, td.blockFormer, td.blockTail, td.ubTail
        else:
            sp = advance_split(td)
            tile, block_num, bf, bt, ub_tail = td.tileNum, td.blockNum, sp["blockFormer"], sp["blockTail"], \
                sp["ubTail"]
        for core in range(block_num):
            last = core == block_num - 1
            tile_num = bt if last else bf
            lengths = [tile] * tile_num
            if last:
                lengths[-1] = ub_tail
            offset = bf * tile * core
            data_num = sum(lengths)
            row: dict[str, Any] = {
                "core": core, "kind": "big" if tile_num == bf and data_num == bf * tile else "small",
                "offset": offset, "data_num": data_num, "tile_num": tile_num, "tail": lengths[-1],
                "padded_end": offset + data_num, "padding": 0,
                "bytes": data_num * size}
            if tiles:
                row["tiles"] = [(i, offset + i * tile, ln) for i, ln in enumerate(lengths)]
            rows.append(row)
        return rows
    rank, axis = td.shapeLen, td.ubSplitAxis
    dims = td.array("outputDims")[:rank]
    strides = td.array("outputStrides")[:rank]
    inner = math.prod(dims[axis + 1:])
    for core in range(td.blockNum):
        n_loops = td.blockTail if core == td.blockNum - 1 else td.blockFormer
        runs = []
        for i in range(n_loops):
            u = core * td.blockFormer + i
            split_idx, rest = u % td.ubOuter, u // td.ubOuter
            outer = _unravel(rest, dims[:axis])
            ln = (td.ubTail if split_idx == td.ubOuter - 1 else td.ubFormer) * inner
            start = sum(o * s for o, s in zip(outer, strides, strict=False)) + \
                split_idx * td.ubFormer * strides[axis]
            runs.append((i, start, ln))
        data_num = sum(r[2] for r in runs)
        offset = runs[0][1]
        row = {"core": core, "kind": "big" if n_loops == td.blockFormer else "small", "offset": offset,
               "data_num": data_num, "tile_num": n_loops, "tail": runs[-1][2],
               "padded_end": runs[-1][1] + runs[-1][2], "padding": 0, "bytes": data_num * size}
        if tiles:
            row["tiles"] = runs
        rows.append(row)
    return rows


def _unravel(index: int, dims: Sequence[int]) -> tuple[int, ...]:
    """``np.unravel_index(index, dims)`` (C order) without numpy; ValueError past the end, as numpy."""
    if not dims:
        return ()
    if not 0 <= index < math.prod(dims):
        raise ValueError(f"index {index} is out of bounds for array with size {math.prod(dims)}")
    out = []
    for d in reversed(dims):
        index, r = divmod(index, d)
        out.append(r)
    return tuple(reversed(out))
