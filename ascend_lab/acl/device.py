"""Init, devices and streams: aclInit, aclFinalize, aclrtSetDevice, aclrtResetDevice, aclrtCreateStream,
aclrtDestroyStream, aclrtSynchronizeStream -- each acting on the runtime in force (:mod:`.state`)."""

from __future__ import annotations

import numpy as np

from .codes import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_REPEAT_INITIALIZE,
    ACL_ERROR_RT_INVALID_DEVICEID,
    ACL_ERROR_RT_STREAM_CONTEXT,
    ACL_ERROR_UNINITIALIZE,
    ACL_SUCCESS,
    DEVICE_COUNT,
)
from .handles import aclrtStream
from .pool import LOCK
from .state import context_error, current, log, release_all


def aclInit(config_path: str | None = None) -> int:
    """Initialise ACL once per process (a second call returns ACL_ERROR_REPEAT_INITIALIZE). Process-wide, as in
    ACL: not for one thread of several to call while others use the runtime (module docstring)."""
    st = current()
    with LOCK:
        if st.initialized:
            return ACL_ERROR_REPEAT_INITIALIZE
        st.initialized = True
    return ACL_SUCCESS


def aclFinalize() -> int:
    """Release ACL; the device in use is reset and every allocation still live is released -- for every thread
    (process-wide, as in ACL; module docstring)."""
    st = current()
    with LOCK:
        if not st.initialized:
            return ACL_ERROR_UNINITIALIZE
        st.initialized = False
        st.device = None
    release_all(st, "aclFinalize")
    return ACL_SUCCESS


def aclrtSetDevice(device_id: int) -> int:
    """Choose the device (0..7) that later calls run on; needs aclInit first."""
    st = current()
    if not st.initialized:
        return ACL_ERROR_UNINITIALIZE
    if not isinstance(device_id, (int, np.integer)) or isinstance(device_id, bool):
        raise TypeError(f"deviceId must be an int, not {type(device_id).__name__}")
    if not 0 <= device_id < DEVICE_COUNT:
        log("aclrtSetDevice", f"deviceId {device_id} is out of range [0, {DEVICE_COUNT})")
        return ACL_ERROR_RT_INVALID_DEVICEID
    st.device = int(device_id)
    return ACL_SUCCESS


def aclrtResetDevice(device_id: int) -> int:
    """Release the device set by aclrtSetDevice."""
    st = current()
    if st.device != device_id:
        return ACL_ERROR_RT_INVALID_DEVICEID
    st.device = None
    return ACL_SUCCESS


def aclrtCreateStream() -> tuple[int, aclrtStream | None]:
    """``ret, stream = aclrtCreateStream()``: a task queue on the current device."""
    err = context_error()
    if err:
        return err, None
    s = aclrtStream()
    current().streams.add(s.id)
    return ACL_SUCCESS, s


def aclrtDestroyStream(stream: aclrtStream | None) -> int:
    """Destroy a stream; using it afterwards is an error. Anything but a live stream (``None``, a
    destroyed stream, an object that is no stream) is ACL_ERROR_INVALID_PARAM."""
    if not isinstance(stream, aclrtStream) or stream.destroyed:
        log("aclrtDestroyStream", f"{stream!r} is not a live stream from aclrtCreateStream")
        return ACL_ERROR_INVALID_PARAM
    stream.destroyed = True
    current().streams.discard(stream.id)
    return ACL_SUCCESS


def aclrtSynchronizeStream(stream: aclrtStream | None) -> int:
    """Wait for the stream's tasks (immediate here: the simulator runs each task when it is submitted).
    ``None`` is the default stream; a destroyed stream is ACL_ERROR_RT_STREAM_CONTEXT, an object that is
    no stream ACL_ERROR_INVALID_PARAM."""
    if stream is not None and not isinstance(stream, aclrtStream):
        log("aclrtSynchronizeStream", f"{type(stream).__name__} is not a stream from aclrtCreateStream")
        return ACL_ERROR_INVALID_PARAM
    if stream is not None and stream.destroyed:
        return ACL_ERROR_RT_STREAM_CONTEXT
    return context_error()


def is_initialized() -> bool:
    """Whether aclInit has been called (and not finalized) -- on the runtime in force (module docstring)."""
    return current().initialized


def current_device() -> int | None:
    """The device set by aclrtSetDevice, or None."""
    return current().device
