"""The runtime's handles: a device memory block (:class:`DeviceAllocation`), a pointer into one
(:class:`DevicePtr`) and a stream (:class:`aclrtStream`). Memory safety and copy-on-write uploads (``lend``) are the
allocation's business; see the :mod:`.runtime` docstring."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from . import pool
from .codes import GUARD_BYTES, round_up

_ids = itertools.count(1)
_address = itertools.count(0)


class DeviceAllocation:
    """One ``aclrtMalloc`` block: requested size, documented capacity and the backing bytes."""

    def __init__(self, size: int):
        self.id = next(_ids)
        self.size = size
        self.capacity = round_up(size, 32) + 32
        self._buffer, self._stale = pool.take(self.capacity + GUARD_BYTES)
        self.base_address = 0x12C0_0000_0000 + next(_address) * 0x20_0000   # 2 MB huge-page spacing
        self.freed = False
        self.freed_by = ""                    # "aclrtFree" or "aclFinalize" once released
        # copy on write (``lend``): the caller's bytes standing for the first ``size`` bytes until anything but a
        # kernel's read needs the buffer, and the GlobalTensor view caches made over them (dropped at that point)
        self._lent: np.ndarray | None = None
        self._lent_views: list[list[Any]] = []
        self.runtime: Any = None    # the acl.state runtime whose aclrtMalloc made it (None: made directly)

    @property
    def buffer(self) -> np.ndarray | None:
        """The backing bytes (None once freed); a reused buffer's old bytes are zeroed before the first look,
        lent bytes (``lend``) are copied in first."""
        if self._lent is not None:
            self.take_back()
        if self._stale:
            self._stale = False
            self._buffer.fill(0)
        return self._buffer

    def lend(self, host: np.ndarray) -> None:
        """Let ``host`` (``size`` bytes, uint8, C-contiguous) stand for this allocation's contents without a copy:
        an upload that a kernel only reads then costs nothing. The bytes are copied in (copy on write) the moment
        anything else needs the buffer -- a write, a memcpy, a look through ``buffer`` -- so every reader and
        writer sees exactly what an upload would have left. Only for a caller that keeps ``host`` unchanged while
        the allocation lives (``ascend_lab.standalone.run_kernel``, the convenience calls of ``ascend_lab.run``, which
        free their device memory before they return)."""
        if host.dtype != np.uint8 or host.ndim != 1 or host.size != self.size or not host.flags.c_contiguous:
            raise ValueError(f"lend needs {self.size} C-contiguous uint8 bytes, got {host.dtype} {host.shape}")
        if self._buffer is None:
            raise ValueError(f"{self!r} is released")
        view = host.view()
        view.flags.writeable = False          # a write path that forgot to take the bytes back fails loudly
        self._lent_views.clear()
        self._lent = view

    def read_bytes(self) -> np.ndarray | None:
        """The bytes for a kernel's reads of ``[0, size)``: the lent bytes while they stand (no copy), else
        ``buffer``. A view made from them must be registered with ``lent_view`` so that it is dropped when the
        bytes are copied in."""
        return self._lent if self._lent is not None else self.buffer

    @property
    def lent(self) -> bool:
        """Whether lent bytes stand for the contents (a write must go through ``buffer`` first)."""
        return self._lent is not None

    def lent_view(self, cache: list[Any]) -> None:
        """Register a one-element view cache (``GlobalTensor.typed_cache``) holding a view of the lent bytes."""
        self._lent_views.append(cache)

    def take_back(self) -> None:
        """Copy lent bytes in (the rest of a reused buffer zeroed) and drop every view made of them: from now on
        the allocation is an ordinary one. Nothing to do when no bytes are lent."""
        host, self._lent = self._lent, None
        if host is None:
            return
        for cache in self._lent_views:
            cache[0] = None
        self._lent_views.clear()
        buf = self._buffer
        if buf is None:
            return
        buf[:host.size] = host
        if self._stale:
            self._stale = False
            buf[host.size:] = 0

    def overwrite(self, offset: int, nbytes: int) -> np.ndarray:
        """The uint8 view of ``[offset, offset + nbytes)`` for a caller that writes every byte of it at once
        (an upload): a reused buffer's old bytes are zeroed everywhere else, not there. The span must lie inside
        the buffer (the caller has checked it, as ``DevicePtr.bytes`` does)."""
        if self._lent is not None:
            self.take_back()
        buf = self._buffer
        if buf is None or offset < 0 or nbytes < 0 or offset + nbytes > buf.size:
            raise ValueError(f"{nbytes} B at offset {offset} are outside {self!r}")
        if self._stale:
            self._stale = False
            buf[:offset] = 0
            buf[offset + nbytes:] = 0
        return buf[offset:offset + nbytes]

    @property
    def released(self) -> bool:
        """Whether the backing bytes are gone (freed, or the allocation is being reclaimed)."""
        return self._buffer is None

    @property
    def backing_bytes(self) -> int:
        """Host bytes behind this allocation (capacity plus the hidden guard)."""
        return self.capacity + GUARD_BYTES

    def release(self, by: str) -> None:
        """Give the bytes back: from now on nothing can reach them through this allocation."""
        buf, self._buffer, self._stale = self._buffer, None, False
        self._lent = None                     # the caller's bytes are theirs again (never pooled)
        for cache in self._lent_views:
            cache[0] = None
        self._lent_views.clear()
        self.freed, self.freed_by = True, by
        if buf is not None:
            pool.recycle(buf)

    def __del__(self) -> None:
        # Dropped without aclrtFree (a kernel argument made by ops.common.kernel_args, or a leaked allocation Python
        # reclaims): its bytes go back to the pool like a freed buffer's -- unless a numpy view still reaches them
        # (``pool.recycle`` checks) -- so the next run of the same size is spared the page faults of fresh memory.
        buf = getattr(self, "_buffer", None)
        if buf is not None:
            self._buffer = None
            try:
                pool.recycle(buf)
            except (TypeError, AttributeError):   # interpreter shutdown: the module's globals may be gone
                pass

    def __repr__(self) -> str:
        return f"<DeviceAllocation #{self.id} {self.size} B at {self.base_address:#x}>"


class DevicePtr:
    """A ``void*`` into device memory. Supports ``ptr + nbytes`` like C pointer arithmetic."""

    __slots__ = ("allocation", "offset")

    def __init__(self, allocation: DeviceAllocation, offset: int = 0):
        self.allocation = allocation
        self.offset = offset

    def __add__(self, nbytes: int) -> DevicePtr:
        return DevicePtr(self.allocation, self.offset + int(nbytes))

    @property
    def address(self) -> int:
        return self.allocation.base_address + self.offset

    @property
    def available(self) -> int:
        """Bytes from this pointer to the end of the requested allocation size."""
        return self.allocation.size - self.offset

    def bytes(self, nbytes: int) -> np.ndarray:
        """The uint8 view of ``nbytes`` at this address. Refuses (``ValueError``) freed memory and any span
        outside the allocation's physical buffer, so no view can reach bytes the allocation does not own."""
        buf = self.allocation.buffer
        if buf is None or self.allocation.freed:
            raise ValueError(f"{self!r} points into device memory released by {self.allocation.freed_by}")
        if self.offset < 0 or nbytes < 0 or self.offset + nbytes > buf.size:
            raise ValueError(f"{nbytes} B at {self!r} (offset {self.offset}) are outside its allocation")
        return buf[self.offset:self.offset + nbytes]

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, DevicePtr) and other.allocation is self.allocation
                and other.offset == self.offset)

    def __hash__(self) -> int:
        return hash((id(self.allocation), self.offset))

    def __repr__(self) -> str:
        return f"DevicePtr({self.address:#x})"


class aclrtStream:
    """A stream. The simulator executes each task when it is submitted, so synchronising is a no-op
    that still checks the stream is alive (real streams are asynchronous: always synchronise before
    reading results, as the seed samples do)."""

    def __init__(self) -> None:
        self.id = next(_ids)
        self.destroyed = False
        self.tasks: list[str] = []

    def __repr__(self) -> str:
        return f"aclrtStream(#{self.id})"

