"""ReluGrad (reached from aclnnThresholdBackward when threshold == 0): op_host, op_kernel, and its spec."""

from ..spec import KernelSpec, OpSpec
from . import op_host, op_kernel
from .op_kernel import tbe as tbe_kernel

SPEC = OpSpec(
    key="relu_grad", op_type="ReluGrad", op_def=op_host.OP_DEF, infer_shape=op_host.infer_shape,
    n_name="input_num",
    kernels={
        "experimental": KernelSpec(
            flavour="experimental", socs=("ascend910b",), tiling=op_host.tiling,
            tiling_data=op_host.ReluGradTilingData, core_ranges=op_host.core_ranges, tile_field="tileDataNum",
            entry=op_kernel.relu_grad, template=op_kernel.template_args, launch=op_kernel.launch,
            args=("gradients", "features", "backprops"), buffer_num=op_kernel.BUFFER_NUM,
            workspace=op_host.workspace_size,
            source="ops-nn:experimental/activation/relu_grad/op_kernel/relu_grad.h"),
        # the legacy TBE kernel of 910A/910B/910_93/310P on the TBE model (kernel_flavours.md §5.3)
        "tbe": KernelSpec(
            flavour="tbe", socs=("ascend910", "ascend910b", "ascend910_93", "ascend310p"), tiling=tbe_kernel.tiling,
            tiling_data=tbe_kernel.ReluGradTbeTilingData, core_ranges=tbe_kernel.core_ranges, tile_field="ubFactor",
            entry=tbe_kernel.relu_grad, template=tbe_kernel.template_args, launch=tbe_kernel.launch,
            args=("gradients", "features", "backprops"),
            source="built-in TBE impl/dynamic/relu_grad.py (modelled schedule)"),
    },
    oracle="ascend_lab.golden:relu_grad_experimental",
    summary="out = grad where feature > 0, else 0",
)
