"""Plumbing shared by every aclnn API: C-style out-pointers, the never-raise guard, argument type
checks, and phase 2 (``CommonOpExecutorRun``).

Out-pointers: a C caller passes ``&workspaceSize`` and ``&executor``; here those are keyword
arguments whose default ``OUT`` means "a valid pointer". Pass ``None`` to re-enact a nullptr.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from ..acl.runtime import DevicePtr, aclrtStream
from ..acl.tensor import aclScalar, aclTensor
from ..base.log import OP_LOGE
from .errno import (
    ACLNN_ERR_INNER,
    ACLNN_ERR_INNER_TILING_ERROR,
    ACLNN_ERR_PARAM_INVALID,
    ACLNN_ERR_PARAM_NULLPTR,
    ACLNN_ERR_RUNTIME_ERROR,
    ACLNN_SUCCESS,
)
from .executor import KernelLaunchError, aclOpExecutor


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


def guard_phase1(api: str) -> Callable:
    """Decorator: phase-1 functions return ``(status, workspace_size, executor)`` and never raise."""
    def deco(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> tuple[int, int, aclOpExecutor | None]:
            try:
                return fn(*args, **kwargs)
            except ParamError as exc:
                OP_LOGE(api, str(exc))
                return exc.code, 0, None
            except Exception as exc:  # the C API cannot throw: anything unexpected is an inner error
                from ..opdev.tiling_data import TilingError
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
    """Phase 2: check the workspace against the plan, bind it, run the L0 graph."""
    try:
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
        need = executor.workspace_size
        if (isinstance(workspace_size, bool) or not isinstance(workspace_size, (int, np.integer))
                or workspace_size < 0):
            OP_LOGE(api, f"workspaceSize must be a non-negative int, got {workspace_size!r}")
            return ACLNN_ERR_PARAM_INVALID
        if need > 0:
            if workspace is None:
                OP_LOGE(api, f"workspace should not be nullptr: the executor needs {need} B")
                return ACLNN_ERR_PARAM_NULLPTR
            if not isinstance(workspace, DevicePtr) or workspace.allocation.freed:
                OP_LOGE(api, "workspace must be live device memory from aclrtMalloc")
                return ACLNN_ERR_PARAM_INVALID
            if workspace_size < need or workspace.available < need:
                OP_LOGE(api, f"workspace too small: the executor needs {need} B, got workspaceSize "
                             f"{workspace_size} B ({workspace.available} B available at the pointer)")
                return ACLNN_ERR_PARAM_INVALID
        executor.run(workspace, stream)
        return ACLNN_SUCCESS
    except Exception as exc:
        if isinstance(exc, KernelLaunchError):
            OP_LOGE(api, f"kernel failed on the device: {exc}")
            return ACLNN_ERR_RUNTIME_ERROR
        OP_LOGE(api, f"internal error: {type(exc).__name__}: {exc}")
        return ACLNN_ERR_INNER
