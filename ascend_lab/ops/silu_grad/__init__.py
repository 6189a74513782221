"""SiluGrad, a gallery operator written for the book (chapter "A family of kernels"): ``dx = dy * s * (1 + x (1 - s))``
with ``s = sigmoid(x)``, reached from ``aclnnSiluBackward``.

One folder: the spec below, ``op_api`` (the aclnn API and its checks), ``op_host`` (numpy-free tiling),
``op_kernel`` (the C++ kernel in ``op_kernel/experimental/`` and its launcher) and ``oracle`` (numpy + ml_dtypes).
"""

from ..spec import KernelSpec, OpSpec
from . import op_api, op_host, op_kernel

SPEC = OpSpec(
    key="silu_grad", op_type="SiluGrad", op_def=op_host.OP_DEF, infer_shape=op_host.infer_shape,
    kernels={"experimental": KernelSpec(
        flavour="experimental", socs=("ascend910b",), tiling=op_host.tiling,
        tiling_data=op_host.SiluGradTilingData, core_ranges=op_host.core_ranges, tile_field="ubFactor",
        tiling_dtype=op_host.tiling_dtype, entry=op_kernel.silu_grad, template=op_kernel.template_args,
        launch=op_kernel.launch, args=op_kernel.ARGS, buffer_num=op_host.BUFFER_NUM,
        source="ascend_lab/ops/silu_grad/op_kernel/experimental/silu_grad.h")},
    aclnn=op_api.ACLNN, oracle="ascend_lab.ops.silu_grad.oracle:silu_grad",
    summary="dx = dy * s * (1 + x (1 - s)), s = sigmoid(x)",
)
