"""ThresholdGradV2D (``aclnnThresholdBackward``): op_api, op_host, op_kernel, and the spec the registry reads.

aclnnThresholdBackward belongs to this package; with a threshold of 0 it reaches ReluGrad (``ops/relu_grad``)."""

from ..spec import KernelSpec, OpSpec
from . import op_api, op_host, op_kernel

SPEC = OpSpec(
    key="threshold_grad_v2_d", op_type="ThresholdGradV2D", op_def=op_host.OP_DEF, infer_shape=op_host.infer_shape,
    n_name="input_num", attrs={"threshold": 1.0},
    kernels={
        "experimental": KernelSpec(
            flavour="experimental", socs=op_host.OP_DEF.aicore_configs, tiling=op_host.tiling,
            tiling_data=op_host.ThresholdGradV2DTilingData, core_ranges=op_host.core_ranges,
            tile_field="tileDataNum", entry=op_kernel.threshold_grad_v2_d, template=op_kernel.template_args,
            launch=op_kernel.launch, args=("input_gradient", "input_feature", "output_backprops"),
            buffer_num=op_kernel.BUFFER_NUM,
            source="ops-nn:experimental/activation/threshold_grad_v2_d/op_kernel/threshold_grad_v2_d.h"),
    },
    aclnn=op_api.ACLNN, oracle="ascend_lab.golden:threshold_grad_v2_d", oracle_attrs=("threshold",),
    summary="out = grad where feature > threshold, else 0",
)
