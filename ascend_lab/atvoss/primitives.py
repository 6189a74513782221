"""What the template needs that the simulated AscendC does not offer, modelled here only (see :mod:`.schedule`).

* :func:`gm_value` -- ``GlobalTensor::GetValue(0)``, the scalar read of a one-element input (``scalarFlag``);
* :func:`nddma_copy` -- the multi-dimensional (NDDMA) ``DataCopy`` of the general broadcast schedule, whose
  broadcast axes have stride 0;
* :func:`widen` -- a tensor seen over whole 256-byte repeats, for the ``Compare`` of a short last tile (the
  simulated Compare works in whole repeats; the DAV_3510 count form masks the tail instead).

Each goes through the simulator's own GM and UB checks, pipe timing and trace events.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..ascendc import GlobalTensor, LocalTensor, sanitizer
from ..ascendc.core import current

__all__ = ["gm_value", "nddma_copy", "widen"]


def gm_value(gm: GlobalTensor, tile: int | None = None) -> Any:
    """``gm.GetValue(0)``: a scalar read of GM by the scalar unit (bounds-checked like a copy)."""
    return gm.gm_slice(current(), 1, "GlobalTensor::GetValue", tile, write=False)[0]


def nddma_copy(dst: LocalTensor, gm: GlobalTensor, base: int, dims: list[int], strides: list[int]) -> int:
    """One NDDMA ``DataCopy`` GM -> UB: ``dims`` elements (row-major) read at element ``base + sum(i*stride)``
    of ``gm``; a stride of 0 repeats the same elements (a broadcast axis). Lands contiguously at ``dst``.

    Timed on MTE2 as a copy of the distinct GM bytes it reads (the NDDMA cache serves the repeats) and
    recorded as a ``DataCopy`` event. Returns the element count written."""
    ctx = dst.ctx
    item = gm.dtype.itemsize
    count = math.prod(dims)
    span = 1 + sum((d - 1) * s for d, s in zip(dims, strides, strict=True))
    src = gm[base].gm_slice(ctx, span, "DataCopy(NDDMA)", dst.tile, write=False)
    view = np.lib.stride_tricks.as_strided(src, shape=tuple(dims), strides=tuple(s * item for s in strides),
                                           writeable=False)
    if count > dst.size or not dst.alive:
        raise ValueError(f"NDDMA copy of {count} elements does not fit {dst!r}")
    # through the sanitizer's UB write (MTE2): it records the bytes as written and checks the pipes' hand-off
    sanitizer.ub_span(dst, count, "DataCopy(NDDMA)", True)[...] = view.reshape(-1)
    distinct = math.prod(d for d, s in zip(dims, strides, strict=True) if s != 0) * item
    start, end = ctx.issue("MTE2", ctx.cost.copy_in(distinct))
    ctx.summary.bytes_in += distinct
    if ctx.record:
        ctx.event("MTE2", "DataCopy", dst.tile, start, end, nbytes=distinct, count=count,
                  ub=dst.ub_range(count), buffer=dst.buffer,
                  detail=f"NDDMA GM {gm.label()} dims {dims} strides {strides} -> UB {dst.buffer}",
                  values=dst.data[:count].copy() if ctx.snapshot else None)
    return count


def widen(t: LocalTensor, count: int) -> LocalTensor:
    """``t`` seen over ``count`` elements when its slot is shorter (the pool continues past it)."""
    if count <= t.size:
        return t
    w = LocalTensor(t.ctx, t.dtype, t.offset, count, t.buffer, t.tile, t.block, t.queue)
    w.life = t.life
    return w
