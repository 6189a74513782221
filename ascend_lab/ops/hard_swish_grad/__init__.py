"""HardSwishGrad, a gallery operator written for the book (chapter "A family of kernels"): ``dx = dy * slope``
with ``slope = 0`` below -3, ``x / 3 + 1/2`` on [-3, 3], ``1`` above (PyTorch's hardswish_backward), reached from
``aclnnHardswishBackward``.

One folder: the spec below, ``op_api`` (the aclnn API and its checks), ``op_host`` (numpy-free tiling),
``op_kernel`` (the C++ kernel in ``op_kernel/experimental/`` and its launcher) and ``oracle`` (numpy + ml_dtypes).
"""

from ..spec import KernelSpec, OpSpec
from . import op_api, op_host, op_kernel

SPEC = OpSpec(
    key="hard_swish_grad", op_type="HardSwishGrad", op_def=op_host.OP_DEF, infer_shape=op_host.infer_shape,
    kernels={"experimental": KernelSpec(
        flavour="experimental", socs=("ascend910b",), tiling=op_host.tiling,
        tiling_data=op_host.HardSwishGradTilingData, core_ranges=op_host.core_ranges, tile_field="ubFactor",
        tiling_dtype=op_host.tiling_dtype, entry=op_kernel.hard_swish_grad, template=op_kernel.template_args,
        launch=op_kernel.launch, args=op_kernel.ARGS, buffer_num=op_host.BUFFER_NUM,
        source="ascend_lab/ops/hard_swish_grad/op_kernel/experimental/hard_swish_grad.h")},
    aclnn=op_api.ACLNN, oracle="ascend_lab.ops.hard_swish_grad.oracle:hard_swish_grad",
    summary="dx = dy * (0 if x < -3, x / 3 + 1/2 if x <= 3, else 1)",
)
