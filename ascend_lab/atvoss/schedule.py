"""The template's kernel side: ``BroadcastSch<schMode, Dag>`` walking a DAG on the simulated cores (§3.5).

Every schedule cuts the output into tiles, and for each tile walks ``dag.funlist`` in order:

* **CopyInBrc** -- ``DataCopyPad`` of the tile's ``len * sizeof(T)`` bytes GM -> UB into the node's ping
  (even tiles) or pong (odd tiles) slot; an input of one element (``scalarFlag``) is instead read once
  and ``Duplicate``-d into both slots on the first two tiles; a broadcast input of the general schedule
  is one multi-dimensional "NDDMA" copy whose broadcast axes have stride 0;
* **compute nodes** (Cast, Duplicate, Compare, Select, Mul) -- one AscendC instruction each on exactly
  ``len`` elements, into the node's temp slot (shared by all tiles) or, for the node a CopyOut reads, its
  ping/pong MTE3 slot;
* **CopyOut** -- ``DataCopyPad`` UB -> GM.

The buffer pool is laid out as the real one, one tile-sized slot per live buffer in ``dag.slots`` order
(slot k at ``k * tile * MaxDtypeBytes``). The real schedules keep that pool in one TBuf and order the
pipes with hardware buffer mutexes (``Mutex::Lock/Unlock<pipe>(slot)``, OB ``util/sync.h``); here each
ping and each pong slot is a one-block ``TQue`` -- its AllocTensor/EnQue/DeQue/FreeTensor flags are the
same per-slot waits -- and each temp slot a ``TBuf``. Double buffering therefore comes only from the
ping/pong copy slots, as on the device; compute is serial on PIPE_V.

Schedules: 201 (``broadcast_sch_one_dim.h``), 202 (``broadcast_sch_one_dim_advance.h``: the split is
recomputed from the 16-byte struct), NDDMA 1/2 (``broadcast_sch_nddma.h``) and UB-broadcast 101-104/109
(``broadcast_sch_ub_broadcast.h``, :func:`_ub_broadcast`): each CopyInBrc copies the input's *un-broadcast*
window (the split-axis slice of its own contiguous data) into its ping/pong MTE2 slot and expands it with
AscendC's ``Broadcast<T, R>`` (R = the running rank, -1 for 109) into a persistent slot of its own, which the
rest of the DAG reads like any tile; an input broadcast along the split axis is copied and expanded only when
the outer index moves (``CopyInAndVecBrc`` skips it otherwise, the persistent slot still holds it). The pool is
``GetBufferNum<false, true>`` slots (``Dag.ub_broadcast_slots``).

``BroadcastSch<schMode, Dag>`` is a C++ template, which the compiler turns into straight-line code for each DAG.
Here too the walk of ``funlist`` is written out once per DAG and schedule family -- :func:`instantiation` returns
that source, the template's *instantiation*: one AscendC call per line, compiled once and bound to each core's
pool -- and it is what runs for every tile. This module is the launch: the schedules' loops over tiles, which
call that tile body; :mod:`.plan` (the steps), :mod:`.emit` (the source) and :mod:`.instance` (compile and bind)
make it (``ARCHITECTURE.md`` in this folder maps them).

Two places where the simulated AscendC differs from what this template needs on Ascend950, worked
around here only:

* ``Compare`` simulates whole 256-byte repeats (the documented A2/A3 rule, ascendc_facts §1.5); the
  DAV_3510 count form masks the tail with a predicate instead (kernel_flavours.md §6, open question 7).
  A Compare node therefore runs over ``len`` rounded up to a whole repeat -- inside the pool, whose
  slots are contiguous -- and the extra mask bits are never read (Select and the copy-out use ``len``).
* There is no multi-dimensional (NDDMA) ``DataCopy`` and no ``GlobalTensor::GetValue``: the broadcast
  copy and the scalar read are modelled here (:func:`nddma_copy`, :func:`gm_value`) with the simulator's
  own GM checks, MTE2 timing and trace events (:mod:`.primitives`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..ascendc import Broadcast, DataCopyPad, DataCopyParams, GetBlockIdx, GlobalTensor, GmAddr, LocalTensor
from ..opdev.tiling_data import GET_TILING_DATA
from .dag import Dag, Node
from .instance import instance, instantiation
from .plan import family_of
from .primitives import gm_value, nddma_copy
from .tiling import advance_split

__all__ = ["broadcast_sch", "gm_value", "instantiation", "nddma_copy"]


def _globals(dag: Dag, gm_args: tuple[GmAddr, ...]) -> tuple[list[GlobalTensor], list[GlobalTensor]]:
    n_in = dag.input_size
    by_index = {n.inputs[0].index: n.dtype for n in dag.copy_ins}
    ins, outs = [], []
    for k, addr in enumerate(gm_args[:n_in]):
        g = GlobalTensor(by_index[k])
        g.SetGlobalBuffer(addr, addr.arg_nbytes // by_index[k].itemsize)
        ins.append(g)
    for k, node in enumerate(dag.copy_outs):
        addr = gm_args[n_in + k]
        g = GlobalTensor(node.dtype)
        g.SetGlobalBuffer(addr, addr.arg_nbytes // node.dtype.itemsize)
        outs.append(g)
    return ins, outs


def _contiguous(node: Node, dst: LocalTensor, gm: GlobalTensor, offset: int, length: int) -> None:
    DataCopyPad(dst, gm[offset], DataCopyParams(1, length * node.dtype.itemsize, 0, 0))


_last_tiling: list[tuple[type, bytes, Any]] = []


def _tiling_data(tiling_class: type, tiling: Any) -> Any:
    """``GET_TILING_DATA``, parsed once for all the cores of a launch (they read the same bytes; the kernel
    only reads the struct)."""
    raw = bytes(tiling)
    if _last_tiling and _last_tiling[0][0] is tiling_class and _last_tiling[0][1] == raw:
        return _last_tiling[0][2]
    td = GET_TILING_DATA(tiling_class, raw)
    _last_tiling[:] = [(tiling_class, raw, td)]
    return td


def broadcast_sch(*args: Any, dag: Dag, sch_mode: int, tiling_class: type) -> None:
    """The ``__global__`` entry: ``args`` are the GM inputs, the GM outputs, the workspace and the tiling
    (``launch`` passes them so). ``dag`` and ``sch_mode`` are the template arguments (``BroadcastSch<schMode,
    Dag>``); ``tiling_class`` is the struct ``GET_TILING_DATA`` reads."""
    n_gm = dag.input_size + dag.output_size
    gm_args, tiling = args[:n_gm], args[n_gm + 1]
    td = _tiling_data(tiling_class, tiling)
    ins, outs = _globals(dag, gm_args)
    core = GetBlockIdx()
    family = family_of(sch_mode)
    if family == "one-dim":
        _one_dim(dag, td, ins, outs, core, sch_mode)
    elif family == "nddma":
        _nddma(dag, td, ins, outs, core)
    else:
        _ub_broadcast(dag, td, ins, outs, core, sch_mode)


def _one_dim(dag: Dag, td: Any, ins: list[GlobalTensor], outs: list[GlobalTensor], core: int, sch_mode: int) -> None:
    """schMode 201 (``broadcast_sch_one_dim.h``) / 202 (``..._advance.h``: the split recomputed from the 16-byte
    struct): ``blockFormer`` tiles per core (``blockTail`` on the last), the last one ``ubTail`` long; each tile a
    contiguous run of ``length`` elements at the same offset in every input and output."""
    if sch_mode == 201:
        tile, bf, bt, ub_tail = td.ubFormer, td.blockFormer, td.blockTail, td.ubTail
    else:
        split = advance_split(td)
        tile, bf, bt, ub_tail = td.tileNum, split["blockFormer"], split["blockTail"], split["ubTail"]
    flags = td.scalarFlag
    scalars = frozenset({i for i in range(dag.input_size) if flags >> i & 1})
    body = instance(dag, "one-dim", scalars).bind(tile * dag.max_dtype_bytes, ins, outs, td)
    last_core = core == td.blockNum - 1
    n_tiles = bt if last_core else bf
    start = bf * tile * core
    for i in range(n_tiles):
        length = ub_tail if (last_core and i == n_tiles - 1) else tile
        body(i, length, start + i * tile)                   # contiguous copies of ``length`` at the offset


def _ub_loops(td: Any, core: int) -> Iterator[tuple[int, list[int], int, int, int]]:
    """One core's UB loops in the NDDMA and UB-broadcast schedules (``BroadcastGetAxesIndices``): loop ``i`` of
    ``blockFormer`` (last core ``blockTail``) is fused index ``core * blockFormer + i``, which splits into the
    split-axis index (``ubOuter`` of them, the last ``ubTail`` long, the others ``ubFormer``) and the outer dims'
    indices. Yields ``(i, outer, split_idx, split_len, out_off)``, ``out_off`` the output's GM offset."""
    rank, axis = td.shapeLen, td.ubSplitAxis
    dims = td.array("outputDims")[:rank]
    out_strides = td.array("outputStrides")[:rank]
    n_loops = td.blockTail if core == td.blockNum - 1 else td.blockFormer
    first = core * td.blockFormer
    outer_dims = dims[:axis]
    for i in range(n_loops):
        split_idx, rest = (first + i) % td.ubOuter, (first + i) // td.ubOuter
        outer = [int(o) for o in np.unravel_index(rest, outer_dims)] if outer_dims else []
        split_len = td.ubTail if split_idx == td.ubOuter - 1 else td.ubFormer
        out_off = sum(o * s for o, s in zip(outer, out_strides, strict=False)) + \
            split_idx * td.ubFormer * out_strides[axis]
        yield i, outer, split_idx, split_len, out_off


def _nddma(dag: Dag, td: Any, ins: list[GlobalTensor], outs: list[GlobalTensor], core: int) -> None:
    """schMode 1/2 (``broadcast_sch_nddma.h``): ``blockFormer`` (last core ``blockTail``) UB loops of the
    fused outer index; the split axis is ``ubTail`` long on the last ub-outer index, ``ubFormer`` otherwise."""
    rank, axis = td.shapeLen, td.ubSplitAxis
    in_strides = {node.inputs[0].index: td.array("inputBrcStrides", pos)[:rank]
                  for pos, node in enumerate(dag.copy_ins)}
    inner = td.array("outputDims")[:rank][axis + 1:]
    body = instance(dag, "nddma", frozenset()).bind(td.elemNum * dag.max_dtype_bytes, ins, outs, td)
    for i, outer, split_idx, split_len, out_off in _ub_loops(td, core):
        split_start = split_idx * td.ubFormer
        length = split_len * math.prod(inner)

        def copy_in(node: Node, dst: LocalTensor, gm: GlobalTensor, outer: list = outer,
                    split_start: int = split_start, split_len: int = split_len, length: int = length) -> None:
            st = in_strides[node.inputs[0].index]
            base = sum(o * s for o, s in zip(outer, st, strict=False)) + split_start * st[axis]
            wdims, wst = [split_len, *inner], st[axis:]
            if all(s != 0 for s in wst) and wst == _dense(wdims):
                _contiguous(node, dst, gm, base, length)       # nothing broadcast in this window
            else:
                nddma_copy(dst, gm, base, wdims, list(wst))

        body(i, length, out_off, copy_in)


def _ub_broadcast(dag: Dag, td: Any, ins: list[GlobalTensor], outs: list[GlobalTensor], core: int,
                  sch_mode: int) -> None:
    """schMode 101-104 / 109 (``BroadcastUbSch<Dag, R>``, OB ``broadcast_sch_ub_broadcast.h``), R = running rank
    ``shapeLen - ubSplitAxis`` (1-4), -1 for 109. The UB loops walk the fused outer index as the NDDMA schedule
    does (``BroadcastGetAxesIndices``); in each, every CopyInBrc:

    1. skips (its persistent slot still holds the tile) when the input is broadcast along the split axis
       (``inputBrcStrides[split] == 0``), this is not the core's first loop and the split index is not 0;
    2. else copies its window with one ``DataCopyPad`` from ``gmOffset = sum(outer_i * stride_i) + split_idx *
       ubFormer * stride[split]``: ``ubSplitSize * stride[split]`` elements when it is not broadcast on the split
       axis, else the product of its inner dims (its split dim is 1);
    3. ``Broadcast<T, R>`` from ``[ubFormer | ubTail | 1, input inner dims]`` to ``[ubFormer | ubTail, output
       inner dims]`` (tail on the last split index) into its persistent slot.

    The compute nodes then run on ``ubSplitSize * outputStrides[split]`` elements and CopyOut writes them."""
    rank, axis = td.shapeLen, td.ubSplitAxis
    out_strides = td.array("outputStrides")[:rank]
    brc = {id(node): (td.array("inputBrcDims", pos)[:rank], td.array("inputBrcStrides", pos)[:rank])
           for pos, node in enumerate(dag.copy_ins)}
    inner = td.array("outputDims")[:rank][axis + 1:]
    const_rank = -1 if sch_mode == 109 else rank - axis
    body = instance(dag, "ub-broadcast", frozenset()).bind(td.elemNum * dag.max_dtype_bytes, ins, outs, td)
    for i, outer, split_idx, split_len, out_off in _ub_loops(td, core):

        def window(node: Node, outer: list[int] = outer, split_idx: int = split_idx,
                   split_len: int = split_len) -> tuple[int, int, tuple[int, ...]]:
            """(GM offset, elements, UB shape) of the input's un-broadcast window in this loop."""
            in_dims, st = brc[id(node)]
            base = sum(o * s for o, s in zip(outer, st, strict=False)) + split_idx * td.ubFormer * st[axis]
            if st[axis] != 0:
                return base, split_len * st[axis], (split_len, *in_dims[axis + 1:])
            return base, math.prod(in_dims[axis + 1:]), (1, *in_dims[axis + 1:])

        def copy_in(node: Node, dst: LocalTensor, gm: GlobalTensor, window: Any = window) -> None:
            base, count, _ = window(node)
            _contiguous(node, dst, gm, base, count)

        def expand(node: Node, i: int = i, split_idx: int = split_idx, window: Any = window,
                   dst_shape: tuple[int, ...] = (split_len, *inner)) -> Any:
            if brc[id(node)][1][axis] == 0 and i > 0 and split_idx > 0:
                return None                                  # cached: same outer index as the previous loop
            src_shape = window(node)[2]
            return lambda out, raw: Broadcast(out, raw, dst_shape, src_shape, const_rank=const_rank)

        body(i, split_len * out_strides[axis], out_off, copy_in, expand)


def _dense(dims: list[int]) -> list[int]:
    out, base = [], 1
    for d in reversed(dims):
        out.append(base)
        base *= d
    return out[::-1]
