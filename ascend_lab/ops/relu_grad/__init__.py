"""ReluGrad (reached from aclnnThresholdBackward when threshold == 0): op_host, op_kernel, and its spec."""

from ..spec import KernelSpec, OpSpec
from . import op_host, op_kernel

SPEC = OpSpec(
    key="relu_grad", op_type="ReluGrad", op_def=op_host.OP_DEF, infer_shape=op_host.infer_shape,
    n_name="input_num",
    kernels={
        "experimental": KernelSpec(
            flavour="experimental", socs=("ascend910b",), tiling=op_host.tiling,
            tiling_data=op_host.ReluGradTilingData, core_ranges=op_host.core_ranges, tile_field="tileDataNum",
            entry=op_kernel.relu_grad, template=op_kernel.template_args, launch=op_kernel.launch,
            args=("gradients", "features", "backprops"), buffer_num=op_kernel.BUFFER_NUM,
            source="ops-nn:experimental/activation/relu_grad/op_kernel/relu_grad.h"),
    },
    oracle="ascend_lab.golden:relu_grad_experimental",
    summary="out = grad where feature > 0, else 0",
)
