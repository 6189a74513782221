"""ThresholdGradV2D (``aclnnThresholdBackward``): op_api, op_host, op_kernel, and the spec the registry reads.

aclnnThresholdBackward belongs to this package; with a threshold of 0 it reaches ReluGrad (``ops/relu_grad``)."""

from ...atvoss.tiling import BroadcastBaseTilingData
from ...base.platform import lib_api_workspace_size
from ...tbe.dsl import has_vcopy
from ..spec import KernelSpec, LiveTiling, OpSpec
from . import op_api, op_host, op_kernel
from .op_kernel import main as main_kernel
from .op_kernel import tbe as tbe_kernel

SPEC = OpSpec(
    key="threshold_grad_v2_d", op_type="ThresholdGradV2D", op_def=op_host.OP_DEF, infer_shape=op_host.infer_shape,
    n_name="input_num", attrs={"threshold": 1.0},
    kernels={
        "experimental": KernelSpec(
            flavour="experimental", socs=op_host.OP_DEF.aicore_configs, tiling=op_host.tiling,
            tiling_data=op_host.ThresholdGradV2DTilingData, core_ranges=op_host.core_ranges,
            tile_field="tileDataNum", entry=op_kernel.threshold_grad_v2_d, template=op_kernel.template_args,
            launch=op_kernel.launch, args=("input_gradient", "input_feature", "output_backprops"),
            buffer_num=op_kernel.BUFFER_NUM, workspace=lib_api_workspace_size,
            source="ops-nn:experimental/activation/threshold_grad_v2_d/op_kernel/threshold_grad_v2_d.h"),
        # the 950 main-tree kernel: a DAG on the atvoss template (kernel_flavours.md §3)
        "main": KernelSpec(
            flavour="main", socs=("ascend950",), live=LiveTiling("template", main_kernel.OP),
            tiling=main_kernel.tiling, tiling_shapes=main_kernel.tiling_for_shapes,
            tiling_data=main_kernel.TilingData, tiling_data_more=(BroadcastBaseTilingData,), takes_buffer_num=False,
            core_ranges=main_kernel.core_ranges, tile_field="ubFormer",
            entry=main_kernel.threshold_grad_v2_d, template=main_kernel.template_args, launch=main_kernel.launch,
            args=main_kernel.ARGS, buffer_num=main_kernel.BUFFER_NUM, workspace=main_kernel.workspace_size,
            oracle="ascend_lab.golden:threshold_grad_v2_d_main950", oracle_attrs=("threshold",),
            source="ops-nn:activation/threshold_grad_v2_d/op_kernel/arch35/threshold_grad_v2_d_dag.h (atvoss)"),
        # the legacy TBE kernel of 910A/910B/910_93/310P on the TBE model (kernel_flavours.md §5.2)
        "tbe": KernelSpec(
            flavour="tbe", takes_buffer_num=False, live=LiveTiling("tbe", tbe_kernel),
            socs=("ascend910", "ascend910b", "ascend910_93", "ascend310p"),
            tiling=tbe_kernel.tiling,
            tiling_shapes=tbe_kernel.tiling_for_shapes,
            tiling_data=tbe_kernel.ThresholdGradV2DTbeTilingData, core_ranges=tbe_kernel.core_ranges,
            tile_field="ubFactor",
            entry=tbe_kernel.threshold_grad_v2_d, template=tbe_kernel.template_args, launch=tbe_kernel.launch,
            args=("input_gradient", "input_feature", "output_backprops"),
            oracle="ascend_lab.golden:threshold_grad_v2_d_legacy_tbe", oracle_attrs=("threshold",),
            oracle_params=lambda soc: {"vcopy": has_vcopy(soc)},
            source="built-in TBE impl/dynamic/threshold_grad_v2_d.py (modelled schedule)"),
    },
    aclnn=op_api.ACLNN, oracle="ascend_lab.golden:threshold_grad_v2_d", oracle_attrs=("threshold",),
    summary="out = grad where feature > threshold, else 0",
)
