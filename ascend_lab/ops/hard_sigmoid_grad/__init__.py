"""HardSigmoidGrad (``aclnnHardsigmoidBackward``): op_api, op_host, op_kernel, and the spec the registry reads."""

from ..spec import KernelSpec, LiveTiling, OpSpec
from . import op_api, op_host, op_kernel
from .op_kernel import main as main_kernel
from .op_kernel import tbe as tbe_kernel

SPEC = OpSpec(
    key="hard_sigmoid_grad", op_type="HardSigmoidGrad", op_def=op_host.OP_DEF, infer_shape=op_host.infer_shape,
    n_name="total_length", attrs={"alpha": op_host.ALPHA_EXPERIMENTAL, "beta": op_host.BETA},
    kernels={
        "experimental": KernelSpec(
            flavour="experimental", socs=op_host.OP_DEF.aicore_configs, tiling=op_host.tiling,
            tiling_data=op_host.HardSigmoidGradTilingData, core_ranges=op_host.core_ranges, tile_field="ubFactor",
            entry=op_kernel.hard_sigmoid_grad, template=op_kernel.template_args, launch=op_kernel.launch,
            args=("gradOutput", "self", "gradInput"), buffer_num=op_kernel.BUFFER_NUM,
            formula="out = (0 < alpha*x+beta < 1) ? grad*alpha : 0, in T (fp16 natively, bf16 through fp32)",
            tiling_dtype=op_host.tiling_dtype, oracle="ascend_lab.golden:hard_sigmoid_grad",
            oracle_attrs=("alpha", "beta"),
            source="ops-nn:experimental/activation/hard_sigmoid_grad/op_kernel/arch35/hard_sigmoid_grad.h"),
        # the built-in AscendC kernel a stock CANN runs on 950 (kernel_flavours.md §1, §2)
        "main": KernelSpec(
            flavour="main", socs=("ascend950",), tiling=op_host.tiling_main950,
            tiling_data=op_host.HardSigmoidGradTilingData, core_ranges=op_host.core_ranges, tile_field="ubFactor",
            entry=main_kernel.hard_sigmoid_grad, template=main_kernel.template_args, launch=main_kernel.launch,
            args=("gradOutput", "self", "gradInput"), buffer_num=main_kernel.BUFFER_NUM,
            formula="out = (0 < alpha*x+beta < 1) ? grad*alpha : 0, every dtype computed in fp32",
            attr_defaults={"alpha": op_host.ALPHA_MAIN},
            tiling_dtype=op_host.tiling_dtype, oracle="ascend_lab.golden:hard_sigmoid_grad_main950",
            oracle_attrs=("alpha", "beta"),
            source="ops-nn:activation/hard_sigmoid_grad/op_kernel/arch35/hard_sigmoid_grad.h"),
        # the legacy TBE kernel of 910A/910B/910_93/310P on the TBE model (kernel_flavours.md §5.1)
        "tbe": KernelSpec(
            flavour="tbe", takes_buffer_num=False, live=LiveTiling("tbe", tbe_kernel),
            socs=("ascend910", "ascend910b", "ascend910_93", "ascend310p"),
            tiling=tbe_kernel.tiling,
            tiling_data=tbe_kernel.HardSigmoidGradTbeTilingData, core_ranges=tbe_kernel.core_ranges,
            tile_field="ubFactor", entry=tbe_kernel.hard_sigmoid_grad, template=tbe_kernel.template_args,
            launch=tbe_kernel.launch, args=("gradOutput", "self", "gradInput"),
            formula="out = |x| < 3 ? grad*alpha : 0 (beta unused; fp16 in half, bf16 through fp32)",
            attr_defaults={"alpha": op_host.ALPHA_MAIN},
            oracle="ascend_lab.golden:hard_sigmoid_grad_legacy_tbe", oracle_attrs=("alpha",),
            source="built-in TBE impl/dynamic/hard_sigmoid_grad.py (modelled schedule)"),
    },
    aclnn=op_api.ACLNN, oracle="ascend_lab.golden:hard_sigmoid_grad", oracle_attrs=("alpha", "beta"),
    summary="grad_input = grad*alpha where 0 < alpha*x+beta < 1, else 0",
)
