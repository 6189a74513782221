"""aclnn status codes (``opbase:include/nnopbase/opdev/op_errno.h``), with the meaning CANN's docs give.

Every ``aclnn*`` function in this package returns one of these as a plain ``int``, exactly as the C API
returns ``aclnnStatus``; ``describe(code)`` turns it back into a sentence for the book and the CLI.
"""

from __future__ import annotations

from enum import IntEnum


class AclnnStatus(IntEnum):
    """aclnnStatus values; ``describe(code)`` gives the meaning."""
    ACLNN_SUCCESS = 0
    ACLNN_ERR_PARAM_NULLPTR = 161001
    ACLNN_ERR_PARAM_INVALID = 161002
    ACLNN_ERR_RUNTIME_ERROR = 361001
    ACLNN_ERR_INNER = 561000
    ACLNN_ERR_INNER_INFERSHAPE_ERROR = 561001
    ACLNN_ERR_INNER_TILING_ERROR = 561002
    ACLNN_ERR_INNER_FIND_KERNEL_ERROR = 561003
    ACLNN_ERR_INNER_CREATE_EXECUTOR = 561101
    ACLNN_ERR_INNER_NOT_TRANS_EXECUTOR = 561102
    ACLNN_ERR_INNER_NULLPTR = 561103
    ACLNN_ERR_INNER_WRONG_ATTR_INFO_SIZE = 561104
    ACLNN_ERR_INNER_KEY_CONFLICT = 561105
    ACLNN_ERR_INNER_INVALID_IMPL_MODE = 561106
    ACLNN_ERR_INNER_OPP_PATH_NOT_FOUND = 561107
    ACLNN_ERR_INNER_LOAD_JSON_FAILED = 561108
    ACLNN_ERR_INNER_JSON_VALUE_NOT_FOUND = 561109
    ACLNN_ERR_INNER_JSON_FORMAT_INVALID = 561110
    ACLNN_ERR_INNER_JSON_DTYPE_INVALID = 561111
    ACLNN_ERR_INNER_OPP_KERNEL_PKG_NOT_FOUND = 561112
    ACLNN_ERR_INNER_OP_FILE_INVALID = 561113
    ACLNN_ERR_INNER_ATTR_NUM_OUT_OF_BOUND = 561114
    ACLNN_ERR_INNER_ATTR_LEN_NOT_ENOUGH = 561115
    ACLNN_ERR_INNER_INPUT_NUM_IN_JSON_TOO_LARGE = 561116
    ACLNN_ERR_INNER_INPUT_JSON_IS_NULL = 561117
    ACLNN_ERR_INNER_STATIC_WORKSPACE_INVALID = 561118
    ACLNN_ERR_INNER_STATIC_BLOCK_DIM_INVALID = 561119


#: The old spelling still found in CANN headers.
ACLNN_ERR_INNER_KEY_CONFILICT = AclnnStatus.ACLNN_ERR_INNER_KEY_CONFLICT

MEANING: dict[AclnnStatus, str] = {
    AclnnStatus.ACLNN_SUCCESS: "success",
    AclnnStatus.ACLNN_ERR_PARAM_NULLPTR: "an argument that must not be null is a nullptr",
    AclnnStatus.ACLNN_ERR_PARAM_INVALID: "an argument is invalid (dtype, shape, rank, ...)",
    AclnnStatus.ACLNN_ERR_RUNTIME_ERROR: "a call into the NPU runtime failed",
    AclnnStatus.ACLNN_ERR_INNER: "internal error",
    AclnnStatus.ACLNN_ERR_INNER_INFERSHAPE_ERROR: "output shape inference failed",
    AclnnStatus.ACLNN_ERR_INNER_TILING_ERROR: "tiling failed",
    AclnnStatus.ACLNN_ERR_INNER_FIND_KERNEL_ERROR: "no kernel found (binary package missing)",
    AclnnStatus.ACLNN_ERR_INNER_CREATE_EXECUTOR: "creating the executor failed",
    AclnnStatus.ACLNN_ERR_INNER_NOT_TRANS_EXECUTOR: "the executor was not handed over (ReleaseTo not called)",
    AclnnStatus.ACLNN_ERR_INNER_NULLPTR: "internal nullptr (an L0 op returned null)",
    AclnnStatus.ACLNN_ERR_INNER_WRONG_ATTR_INFO_SIZE: "wrong number of attributes",
    AclnnStatus.ACLNN_ERR_INNER_KEY_CONFLICT: "kernel hash key conflict",
    AclnnStatus.ACLNN_ERR_INNER_INVALID_IMPL_MODE: "invalid implementation mode",
    AclnnStatus.ACLNN_ERR_INNER_OPP_PATH_NOT_FOUND: "ASCEND_OPP_PATH is not set",
    AclnnStatus.ACLNN_ERR_INNER_LOAD_JSON_FAILED: "loading the op info json failed",
    AclnnStatus.ACLNN_ERR_INNER_JSON_VALUE_NOT_FOUND: "a field is missing from the op info json",
    AclnnStatus.ACLNN_ERR_INNER_JSON_FORMAT_INVALID: "a format field in the op info json is invalid",
    AclnnStatus.ACLNN_ERR_INNER_JSON_DTYPE_INVALID: "a dtype field in the op info json is invalid",
    AclnnStatus.ACLNN_ERR_INNER_OPP_KERNEL_PKG_NOT_FOUND: "the kernel binary package is not loaded",
    AclnnStatus.ACLNN_ERR_INNER_OP_FILE_INVALID: "the op json could not be parsed",
    AclnnStatus.ACLNN_ERR_INNER_ATTR_NUM_OUT_OF_BOUND: "more attributes than the op json declares",
    AclnnStatus.ACLNN_ERR_INNER_ATTR_LEN_NOT_ENOUGH: "fewer attributes than the op json declares",
    AclnnStatus.ACLNN_ERR_INNER_INPUT_NUM_IN_JSON_TOO_LARGE: "more than 32 inputs in the op json",
    AclnnStatus.ACLNN_ERR_INNER_INPUT_JSON_IS_NULL: "op json information is missing",
    AclnnStatus.ACLNN_ERR_INNER_STATIC_WORKSPACE_INVALID: "static binary: workspace could not be parsed",
    AclnnStatus.ACLNN_ERR_INNER_STATIC_BLOCK_DIM_INVALID: "static binary: block dim could not be parsed",
}

globals().update({m.name: int(m) for m in AclnnStatus})


def describe(code: int) -> str:
    """``161002`` -> ``"ACLNN_ERR_PARAM_INVALID (161002): an argument is invalid (...)"``."""
    try:
        status = AclnnStatus(code)
    except ValueError:
        return f"unknown status {code}"
    return f"{status.name} ({int(status)}): {MEANING[status]}"
