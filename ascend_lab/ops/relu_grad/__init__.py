"""ReluGrad (reached from aclnnThresholdBackward when threshold == 0): op_host, op_kernel, and its spec."""

from ...atvoss.tiling import BroadcastBaseTilingData
from ...tbe.dsl import has_vcopy
from ..spec import KernelSpec, LiveTiling, OpSpec
from . import op_host, op_kernel
from .op_kernel import main as main_kernel
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
            workspace=op_host.workspace_size, oracle="ascend_lab.golden:relu_grad_experimental",
            source="ops-nn:experimental/activation/relu_grad/op_kernel/relu_grad.h"),
        # the 950 main-tree kernel (relu_grad_apt): a DAG on the atvoss template (kernel_flavours.md §3)
        "main": KernelSpec(
            flavour="main", socs=("ascend950",), live=LiveTiling("template", main_kernel.OP),
            tiling=main_kernel.tiling, tiling_shapes=main_kernel.tiling_for_shapes,
            tiling_data=main_kernel.TilingData, tiling_data_more=(BroadcastBaseTilingData,), takes_buffer_num=False,
            core_ranges=main_kernel.core_ranges, tile_field="tileNum",
            entry=main_kernel.relu_grad, template=main_kernel.template_args, launch=main_kernel.launch,
            args=main_kernel.ARGS, buffer_num=main_kernel.BUFFER_NUM, workspace=main_kernel.workspace_size,
            oracle="ascend_lab.golden:relu_grad_main950",
            source="ops-nn:activation/relu_grad/op_kernel/arch35/relu_grad_dag.h (atvoss)"),
        # the legacy TBE kernel of 910A/910B/910_93/310P on the TBE model (kernel_flavours.md §5.3)
        "tbe": KernelSpec(
            flavour="tbe", takes_buffer_num=False, live=LiveTiling("tbe", tbe_kernel),
            socs=("ascend910", "ascend910b", "ascend910_93", "ascend310p"),
            tiling=tbe_kernel.tiling,
            tiling_shapes=tbe_kernel.tiling_for_shapes,
            tiling_data=tbe_kernel.ReluGradTbeTilingData, core_ranges=tbe_kernel.core_ranges, tile_field="ubFactor",
            entry=tbe_kernel.relu_grad, template=tbe_kernel.template_args, launch=tbe_kernel.launch,
            args=("gradients", "features", "backprops"),
            oracle="ascend_lab.golden:relu_grad_legacy_tbe", oracle_params=lambda soc: {"vcopy": has_vcopy(soc)},
            source="built-in TBE impl/dynamic/relu_grad.py (modelled schedule)"),
    },
    oracle="ascend_lab.golden:relu_grad",
    summary="out = grad where feature > 0, else 0",
)
