"""Plumbing shared by every aclnn API: C-style out-pointers, the never-raise guard, argument type
checks, and phase 2 (``CommonOpExecutorRun``).

Out-pointers: a C caller passes ``&workspaceSize`` and ``&executor``; here those are keyword
arguments whose default ``OUT`` means "a valid pointer". Pass ``None`` to re-enact a nullptr.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from ..acl.runtime import DevicePtr, aclrtStream, current_device, is_initialized
from ..acl.tensor import aclScalar, aclTensor
from ..base.log import OP_LOGE
from .errno import (
    ACLNN_ERR_INNER,
    ACLNN_ERR_INNER_NULLPTR,
    ACLNN_ERR_INNER_TILING_ERROR,
    ACLNN_ERR_PARAM_INVALID,
    ACLNN_ERR_PARAM_NULLPTR,
    ACLNN_ERR_RUNTIME_ERROR,
    ACLNN_SUCCESS,
)
from .executor import KernelLaunchError, UnsupportedDtypeError, aclOpExecutor
from .tiling_data import TilingError


class _OutPointer:
    def __repr__(self) -> str:
        return "OUT"


#: "a valid out-pointer" (C's ``&workspaceSize`` / ``&executor``).
OUT: Any = _OutPointer()


class ParamError(Exception):
    """Raised inside an aclnn implementation to return a status code after logging ``message``."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


def _name_arguments(sig: inspect.Signature, args: tuple, kwargs: dict, exe: aclOpExecutor) -> None:
    """Remember which L2 argument each tensor was, so phase 2 can name it in its messages."""
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError:
        return
    for name, value in bound.arguments.items():
        if isinstance(value, aclTensor):
            exe.arg_names.setdefault(id(value), name)


def guard_phase1(api: str) -> Callable:
    """Decorator: phase-1 functions return ``(status, workspace_size, executor)`` and never raise.

    An L0 op asked for a dtype no kernel supports (``UnsupportedDtypeError``) is ACLNN_ERR_INNER_NULLPTR,
    as CANN's ``CHECK_RET(l0Result != nullptr, ACLNN_ERR_INNER_NULLPTR)`` answers."""
    def deco(fn: Callable) -> Callable:
        sig = inspect.signature(fn)

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> tuple[int, int, aclOpExecutor | None]:
            try:
                result = fn(*args, **kwargs)
                exe = result[2] if isinstance(result, tuple) and len(result) == 3 else None
                if isinstance(exe, aclOpExecutor):
                    _name_arguments(sig, args, kwargs, exe)
                return result
            except ParamError as exc:
                OP_LOGE(api, str(exc))
                return exc.code, 0, None
            except UnsupportedDtypeError as exc:
                OP_LOGE(api, f"an L0 op returned nullptr: {exc}")
                return ACLNN_ERR_INNER_NULLPTR, 0, None
            except Exception as exc:  # the C API cannot throw: anything unexpected is an inner error
                if isinstance(exc, TilingError):
                    OP_LOGE(api, f"tiling failed: {exc}")
                    return ACLNN_ERR_INNER_TILING_ERROR, 0, None
                OP_LOGE(api, f"internal error: {type(exc).__name__}: {exc}")
                return ACLNN_ERR_INNER, 0, None
        return wrapper
    return deco


def check_tensor_type(name: str, t: object) -> None:
    """A Python caller may pass anything; C would only pass an aclTensor* (or nullptr)."""
    if t is None:
        return
    if not isinstance(t, aclTensor):
        raise ParamError(ACLNN_ERR_PARAM_INVALID,
                         f"{name} must be an aclTensor created by aclCreateTensor, got {type(t).__name__}")
    if t.destroyed:
        raise ParamError(ACLNN_ERR_PARAM_INVALID, f"{name} was used after aclDestroyTensor")


def check_scalar_type(name: str, s: object) -> None:
    if s is not None and not isinstance(s, aclScalar):
        raise ParamError(ACLNN_ERR_PARAM_INVALID,
                         f"{name} must be an aclScalar created by aclCreateScalar, got {type(s).__name__}")


def check_not_null(name: str, value: object) -> None:
    """``OP_CHECK_NULL``: a nullptr argument -> 161001."""
    if value is None:
        raise ParamError(ACLNN_ERR_PARAM_NULLPTR, f"{name} should not be nullptr.")


def CommonOpExecutorRun(api: str, workspace: DevicePtr | None, workspace_size: int,
                        executor: aclOpExecutor | None, stream: aclrtStream | None) -> int:
    """Phase 2: check the arguments, the ACL context and every graph tensor's memory, then bind the
    workspace and run the L0 graph.

    Status codes, in the order they are checked:

    * 161001 / 161002: the executor, stream, ``workspaceSize`` or workspace pointer is missing or invalid
      (a freed workspace pointer is an invalid *argument*: 161002, with the workspace tensors it would hold).
    * 361001 ``ACLNN_ERR_RUNTIME_ERROR``: there is no ACL context (after ``aclFinalize`` or
      ``aclrtResetDevice``), or a tensor of the graph -- an input, ``out`` or a workspace intermediate --
      was destroyed by ``aclDestroyTensor``, lives in memory released by ``aclrtFree``/``aclFinalize``, or no
      longer fits in its allocation. The log line names the tensor, and nothing has run.

    Why 361001: on a device, such a graph hands the NPU runtime an invalid device address (a freed or
    unmapped pointer). The runtime rejects it (its own code for an invalid argument is
    ``ACL_ERROR_RT_PARAM_INVALID`` 107000, or an AI Core exception 5070xx when the kernel touches it), and
    an aclnn API reports any failure of a runtime call as ``ACLNN_ERR_RUNTIME_ERROR``, which CANN's return
    code table describes as "a memory error when calling the NPU Runtime API". An aclnn API returns an
    ``aclnnStatus``, so the runtime's ``ACL_ERROR_RT_*`` value cannot be the answer itself. Real CANN may
    instead crash or read stale data (a freed input is undefined behaviour); the simulator stops before
    any kernel touches the memory, because a crash teaches nothing.
    """
    try:
        err = _argument_error(api, executor, stream, workspace_size)
        if err:
            return err
        need = executor.workspace_size
        if not is_initialized() or current_device() is None:
            why = ("ACL is not initialised (aclFinalize was called, or aclInit never was)" if not is_initialized()
                   else "no device is set (aclrtResetDevice was called, or aclrtSetDevice never was)")
            problem = executor.memory_problem(arguments_only=True)
            OP_LOGE(api, f"no ACL context: {why}; nothing was run" + (f" ({problem})" if problem else ""))
            return ACLNN_ERR_RUNTIME_ERROR
        if need > 0:
            err = _workspace_error(api, executor, workspace, workspace_size, need)
            if err:
                return err
        executor.bind(workspace if need > 0 else None)
        problem = executor.memory_problem()
        if problem is not None:
            OP_LOGE(api, f"{problem}; nothing was run (the NPU runtime would be handed an invalid device "
                         "address)")
            return ACLNN_ERR_RUNTIME_ERROR
        executor.run(workspace, stream)
        return ACLNN_SUCCESS
    except Exception as exc:
        if isinstance(exc, KernelLaunchError):
            OP_LOGE(api, f"kernel failed on the device: {exc}")
            return ACLNN_ERR_RUNTIME_ERROR
        OP_LOGE(api, f"internal error: {type(exc).__name__}: {exc}")
        return ACLNN_ERR_INNER


def _argument_error(api: str, executor: Any, stream: Any, workspace_size: Any) -> int:
    """161001 / 161002 for a missing, foreign or spent executor, a stream that is not live or a bad
    ``workspaceSize``; 0 when they are fine."""
    if executor is None:
        OP_LOGE(api, "executor should not be nullptr.")
        return ACLNN_ERR_PARAM_NULLPTR
    if not isinstance(executor, aclOpExecutor):
        OP_LOGE(api, f"executor must come from the GetWorkspaceSize call, got {type(executor).__name__}")
        return ACLNN_ERR_PARAM_INVALID
    if executor.executed:
        OP_LOGE(api, "this executor has already run; call GetWorkspaceSize again for a new one")
        return ACLNN_ERR_PARAM_INVALID
    if stream is not None and (not isinstance(stream, aclrtStream) or stream.destroyed):
        OP_LOGE(api, "stream is not a live aclrtStream")
        return ACLNN_ERR_PARAM_INVALID
    if isinstance(workspace_size, bool) or not isinstance(workspace_size, (int, np.integer)) or workspace_size < 0:
        OP_LOGE(api, f"workspaceSize must be a non-negative int, got {workspace_size!r}")
        return ACLNN_ERR_PARAM_INVALID
    return 0


def _workspace_error(api: str, executor: aclOpExecutor, workspace: Any, workspace_size: int, need: int) -> int:
    """161001 / 161002 for a workspace that is missing, not live device memory, or smaller than the ``need``
    bytes the executor asked for; 0 when it is fine."""
    if workspace is None:
        OP_LOGE(api, f"workspace should not be nullptr: the executor needs {need} B")
        return ACLNN_ERR_PARAM_NULLPTR
    if not isinstance(workspace, DevicePtr) or workspace.allocation.freed:
        held = ", ".join(executor.describe_tensor(t) for t, _ in executor.workspace_tensors)
        OP_LOGE(api, f"workspace must be live device memory from aclrtMalloc (it would hold {held})")
        return ACLNN_ERR_PARAM_INVALID
    if workspace_size < need or workspace.available < need or workspace.offset < 0:
        OP_LOGE(api, f"workspace too small: the executor needs {need} B, got workspaceSize "
                     f"{workspace_size} B ({workspace.available} B available at the pointer)")
        return ACLNN_ERR_PARAM_INVALID
    return 0
