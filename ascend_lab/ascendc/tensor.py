"""GM_ADDR, GlobalTensor and LocalTensor: the memory a kernel sees.

* :class:`GmAddr` is the ``__gm__ uint8_t*`` a kernel receives: a device pointer plus, for the
  sanitizer, the logical size of the tensor it belongs to. ``addr + nbytes`` is pointer arithmetic.
* :class:`GlobalTensor` is ``GlobalTensor<T>``: typed global memory set with ``SetGlobalBuffer``.
* :class:`LocalTensor` is ``LocalTensor<T>``: a typed window of the core's Unified Buffer, handed out
  by ``TQue::AllocTensor`` / ``TBuf::Get``; it knows its UB byte range, which buffer it came from and
  which tile of the core's loop its data belongs to.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..acl.runtime import DevicePtr
from . import sanitizer
from .core import CoreContext, UBState
from .running import running_core

# AscendC scalar type names -> numpy dtypes (``half``, ``float``, ``bfloat16_t``, ...)
half = np.dtype(np.float16)
float_ = np.dtype(np.float32)
float32 = float_
from ..dtypes import bfloat16 as _bf16  # noqa: E402

bfloat16_t = _bf16

int8_t = np.dtype(np.int8)
uint8_t = np.dtype(np.uint8)
int16_t = np.dtype(np.int16)
int32_t = np.dtype(np.int32)
int64_t = np.dtype(np.int64)


def sizeof(t: Any) -> int:
    """``sizeof(T)`` for an AscendC element type."""
    return np.dtype(t).itemsize


class GmAddr:
    """A global-memory address (``GM_ADDR``) with the bounds of the tensor argument it points into."""

    __slots__ = ("ptr", "name", "arg_start", "arg_nbytes")

    def __init__(self, ptr: DevicePtr, name: str, arg_start: int | None = None, arg_nbytes: int = 0):
        self.ptr = ptr
        self.name = name
        self.arg_start = ptr.offset if arg_start is None else arg_start
        self.arg_nbytes = arg_nbytes

    def __add__(self, nbytes: int) -> GmAddr:
        return GmAddr(self.ptr + int(nbytes), self.name, self.arg_start, self.arg_nbytes)

    def __repr__(self) -> str:
        return f"GM_ADDR({self.name}+{self.ptr.offset - self.arg_start})"


class GlobalTensor:
    """``GlobalTensor<T>``: ``gm = GlobalTensor(float_); gm.SetGlobalBuffer(x + off * sizeof(T), n)``.

    Internally it keeps the allocation and byte offset directly (``xGm[i]`` is taken once per tile, so it
    must be cheap); ``addr`` rebuilds the GM_ADDR when a message needs it. Those fields are public (read-only
    outside this module) because DataCopy's fast path (:mod:`.datacopy`) checks a copy against them inline:
    ``allocation`` (None before SetGlobalBuffer), ``byte_offset`` into it, the kernel argument's ``arg_start`` and
    ``arg_nbytes``, and ``typed_cache`` -- a one-element list holding the allocation's bytes as T (:func:`typed_view`),
    shared by every ``xGm[i]`` of one SetGlobalBuffer."""

    __slots__ = ("dtype", "size", "allocation", "byte_offset", "arg_start", "arg_nbytes", "_name", "typed_cache")

    def __init__(self, dtype: Any):
        self.dtype = np.dtype(dtype)
        self.size = 0
        self.allocation = None
        self.typed_cache = [None]

    def SetGlobalBuffer(self, addr: GmAddr, buffer_size: int = 0) -> None:
        if not isinstance(addr, GmAddr):
            raise TypeError(f"SetGlobalBuffer needs a GM_ADDR, got {type(addr).__name__}")
        self.allocation = addr.ptr.allocation
        self.byte_offset = addr.ptr.offset
        self.arg_start = addr.arg_start
        self.arg_nbytes = addr.arg_nbytes
        self._name = addr.name
        self.typed_cache = [None]        # the allocation's bytes as T, made at the first element-aligned access and
                                    # shared with every xGm[i] made from this tensor (one view per launch, not per copy)
        self.size = int(buffer_size)

    @property
    def addr(self) -> GmAddr | None:
        if self.allocation is None:
            return None
        return GmAddr(DevicePtr(self.allocation, self.byte_offset), self._name, self.arg_start, self.arg_nbytes)

    def GetSize(self) -> int:
        return self.size

    @property
    def bytes_to_end(self) -> int:
        """Bytes from this tensor's start to the logical end of its kernel argument (the padding after it not
        counted): how much of a copy to GM from here lands in the result (the sanitizer's ``ub_span``)."""
        return self.arg_start + self.arg_nbytes - self.byte_offset

    def label(self) -> str:
        """``x+1024`` -- the argument name and the byte offset into it, for trace details."""
        return f"{self._name}+{self.byte_offset - self.arg_start}" if self.allocation is not None else "unset"

    def __getitem__(self, offset: int) -> GlobalTensor:
        """``xGm[off]``: the GlobalTensor starting ``off`` elements further (as in AscendC)."""
        off = offset if offset.__class__ is int else int(offset)
        g = GlobalTensor.__new__(GlobalTensor)
        g.dtype = dt = self.dtype
        g.allocation = self.allocation
        try:
            g.byte_offset = self.byte_offset + off * dt.itemsize
        except AttributeError:                      # no SetGlobalBuffer yet: the sanitizer's gm-unset
            raise sanitizer.gm_unset(running_core(), "GlobalTensor::operator[]", None) from None
        g.arg_start = self.arg_start
        g.arg_nbytes = self.arg_nbytes
        g._name = self._name
        g.typed_cache = self.typed_cache
        size = self.size - off
        g.size = size if size > 0 else 0
        return g

    def gm_slice(self, ctx: CoreContext, count: int, instr: str, tile: int | None, write: bool) -> np.ndarray:
        """The numpy view of ``count`` elements at this address. The common case (inside the live tensor)
        is answered here; everything else goes to the sanitizer's GM checks."""
        alloc = self.allocation
        if alloc is None:
            raise sanitizer.gm_unset(ctx, instr, tile)
        start = self.byte_offset
        end = start + count * self.dtype.itemsize
        arg_start = self.arg_start
        if not (start >= arg_start and end <= arg_start + self.arg_nbytes and not alloc.freed):
            sanitizer.check_gm(ctx, instr, tile, self._name, alloc, start, end - start, arg_start,
                               self.arg_nbytes, write)
            if alloc.lent:                          # past the tensor (padding, guard): the whole buffer
                alloc.take_back()
        elif write and alloc.lent:                  # copy on write: the lent bytes are copied in first
            alloc.take_back()
        item = self.dtype.itemsize
        if start % item:                            # not element-aligned in the allocation: a view of its own
            return alloc.buffer[start:end].view(self.dtype)
        typed = self.typed_cache[0]
        if typed is None:                           # once per SetGlobalBuffer (xGm[i] shares it): no view per copy
            typed = self.typed_cache[0] = typed_view(alloc, self.typed_cache, self.dtype)
        return typed[start // item:end // item]


def typed_view(alloc: Any, cache: list[Any], dtype: np.dtype) -> np.ndarray:
    """The allocation's bytes seen as ``dtype`` for a GlobalTensor's view cache (``typed_cache``; DataCopy's
    fast path makes it as :meth:`GlobalTensor.gm_slice` does): the lent bytes while they stand
    (registered, so that the cache is dropped when they are copied in), else the whole buffer."""
    buf = alloc.read_bytes()
    if alloc.lent:
        alloc.lent_view(cache)
    item = dtype.itemsize
    return buf[:buf.size - buf.size % item].view(dtype)


class Life:
    """Whether a UB block still holds a tensor's data: one flag shared by a tensor and every tensor derived from it
    (ReinterpretCast, ``x[i]``); the queue that frees the block clears it, so a read through any of them is caught."""

    __slots__ = ("alive",)

    def __init__(self) -> None:
        self.alive = True


class LocalTensor:
    """``LocalTensor<T>``: ``count`` elements of UB at byte ``offset``."""

    __slots__ = ("ctx", "dtype", "offset", "size", "nbytes", "data", "buffer", "tile", "life", "block", "queue",
                 "region")

    def __init__(self, ctx: CoreContext, dtype: Any, offset: int, size: int, buffer: str,
                 tile: int | None = None, block: Any = None, queue: Any = None, data: np.ndarray | None = None,
                 region: UBState | None = None):
        self.ctx = ctx
        self.dtype = dtype if isinstance(dtype, np.dtype) else np.dtype(dtype)
        self.offset = offset
        self.size = size
        self.nbytes = size * self.dtype.itemsize
        self.data = ctx.ub[offset:offset + self.nbytes].view(self.dtype) if data is None else data
        self.buffer = buffer
        self.tile = tile
        self.life = Life()        # shared with every tensor derived from this one (ReinterpretCast, x[i])
        self.block = block
        self.queue = queue
        # the buffer's sanitizer state (a queue block is its own; a TBuf passes its own): None for a tensor made
        # by hand over raw UB, which the race checks then skip
        self.region = block if region is None else region

    def GetSize(self) -> int:
        return self.size

    def ReinterpretCast(self, dtype: Any) -> LocalTensor:
        """Same UB bytes seen as another element type (``tensor.ReinterpretCast<float>()``)."""
        dt = np.dtype(dtype)
        t = LocalTensor(self.ctx, dt, self.offset, self.nbytes // dt.itemsize, self.buffer, self.tile,
                        self.block, self.queue, region=self.region)
        t.life = self.life
        return t

    @property
    def alive(self) -> bool:
        """False once FreeTensor released the block (for this tensor and everything derived from it)."""
        return self.life.alive

    def __getitem__(self, offset: int) -> LocalTensor:
        """``x[off]``: the LocalTensor starting ``off`` elements further."""
        off = int(offset)
        t = LocalTensor(self.ctx, self.dtype, self.offset + off * self.dtype.itemsize, self.size - off,
                        self.buffer, self.tile, self.block, self.queue, region=self.region)
        t.life = self.life
        return t

    def GetValue(self, i: int) -> Any:
        """Element ``i``, read by the scalar unit (checked: alive, in range; the read counts for ub-uninit)."""
        i = int(i)
        sanitizer.scalar_access(self, i, False)
        return self.data[i]

    def SetValue(self, i: int, value: Any) -> None:
        """Write element ``i`` from the scalar unit (checked: alive, in range, not queued)."""
        i = int(i)
        sanitizer.scalar_access(self, i, True)
        self.data[i] = value

    def ub_range(self, count: int | None = None) -> tuple[int, int]:
        n = self.nbytes if count is None else count * self.dtype.itemsize
        return (self.offset, self.offset + n)

    def __repr__(self) -> str:
        return f"LocalTensor<{self.dtype}>({self.buffer}, UB[{self.offset}:{self.offset + self.nbytes}])"
