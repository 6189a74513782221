"""The broadcast copy-in of a TBE kernel: per tile, the input elements the output elements need (a MODEL; see
:mod:`.lowering` on broadcasting). The simulated AscendC API has no stride-0 ``DataCopy``, so :func:`broadcast_copy`
reads them with the simulator's GM checks and charges MTE2 for the distinct bytes, as
:func:`ascend_lab.atvoss.schedule.nddma_copy` models the NDDMA copy."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..ascendc import GlobalTensor, LocalTensor, sanitizer

__all__ = ["broadcast_copy", "broadcast_index", "broadcast_strides", "distinct_count"]


def broadcast_strides(dims: Sequence[int]) -> list[int]:
    """Row-major element strides of an input's fused dims, 0 on its broadcast axes (dim 1)."""
    strides, step = [], 1
    for d in reversed(dims):
        strides.append(0 if d == 1 else step)
        step *= d
    return strides[::-1]


def broadcast_index(out_dims: Sequence[int], strides: Sequence[int], start: int, count: int) -> np.ndarray:
    """The input element of each output element ``start .. start + count - 1``: ``sum(coordinate * stride)`` over
    the output's axes (row-major). Axes outside the last one with a stride cost nothing, and the last one costs
    one ``%`` (no quotient is needed past it)."""
    axes = list(zip(reversed(out_dims), reversed(strides), strict=True))      # innermost axis first
    last = max((k for k, (_, stride) in enumerate(axes) if stride), default=-1)
    if last < 0:
        return np.zeros(count, dtype=np.int64)
    flat = np.arange(start, start + count, dtype=np.int64)
    idx = None
    for d, stride in axes[:last]:
        if stride:
            flat, coord = np.divmod(flat, d)
            coord *= stride
            idx = coord if idx is None else np.add(idx, coord, out=idx)
        else:
            flat //= d
    d, stride = axes[last]
    coord = flat % d
    if stride != 1:
        coord *= stride
    return coord if idx is None else np.add(idx, coord, out=idx)


def broadcast_copy(dst: LocalTensor, gm: GlobalTensor, out_dims: Sequence[int], strides: Sequence[int],
                   start: int, count: int) -> int:
    """GM -> UB: the input elements that output elements ``start .. start + count - 1`` (row-major over
    ``out_dims``) need, for an input laid out with ``strides`` (elements, 0 on its broadcast axes); they land
    contiguously at ``dst``, padded to 32 bytes in UB as ``DataCopyPad`` pads.

    A MODEL of a strided, repeating copy (see the module docstring): the GM span it touches goes through the
    simulator's GM read checks; MTE2 is busy for one copy of the *distinct* bytes read (a repeated element
    is read once) and the trace records a ``DataCopy`` event with those bytes. Returns ``count``."""
    instr = "DataCopy(broadcast)"
    ctx = dst.ctx
    item = gm.dtype.itemsize
    sanitizer.check_copy(ctx, instr, dst, count, count * item, True)
    idx = broadcast_index(out_dims, strides, start, count)
    lo, hi = int(idx.min()), int(idx.max())
    src = gm[lo].gm_slice(ctx, hi - lo + 1, instr, dst.tile, write=False)
    ub_count = -(-count * item // 32) * 32 // item
    ub = sanitizer.ub_span(dst, ub_count, instr, True)
    rel = idx - lo
    ub[:count] = src[rel]
    ub[count:] = ub[0]
    distinct = distinct_count(rel, hi - lo + 1) * item
    t0, t1 = ctx.issue("MTE2", ctx.cost.copy_in(distinct))
    ctx.summary.bytes_in += distinct
    if ctx.record:
        ctx.event("MTE2", "DataCopy", dst.tile, t0, t1, nbytes=distinct, count=count, ub=dst.ub_range(ub_count),
                  buffer=dst.buffer,
                  detail=f"broadcast GM {gm.label()} dims {list(out_dims)} strides {list(strides)}, output "
                         f"elements {start}..{start + count - 1} -> UB {dst.buffer}",
                  values=ub[:count].copy() if ctx.snapshot else None)
    return count


def distinct_count(rel: np.ndarray, span: int) -> int:
    """How many distinct values ``rel`` (non-negative, below ``span``) holds: ``np.unique(rel).size``, which in
    numpy 2.4 hashes and costs ten times a sort here. A mark per value when the span is short, else a sort."""
    if span <= 4 * rel.size:
        seen = np.zeros(span, dtype=np.bool_)
        seen[rel] = True
        return int(np.count_nonzero(seen))
    ordered = np.sort(rel)
    return int(np.count_nonzero(ordered[1:] != ordered[:-1])) + 1
