"""The legacy TBE ThresholdGradV2D (910A, 910B, 910_93, 310P) as a compute description on the TBE model.

Written as the TBE source states it (``kernel_flavours.md`` §5.2; the dynamic ``threshold_grad_v2_d.py``):

1. int8/int32/uint8 are cast to fp32 (``cast_to``: int8/uint8 through fp16, exact; int32 -> fp32 rounds to
   nearest even above 2^24) and the result is cast back (``f1628IntegerFlag`` True; float -> int truncates);
2. if fp32 ``vcmpsel`` is missing on the SoC, fp32 drops to fp16 (no TBE SoC here lacks it, §5.4);
3. the threshold becomes a constant of the compute dtype (fp16: ``half(thr)``);
4. with ``tik.vcopy``: ``vsel(vcmp(x, thr, 'le', 'bit'), 0, g)`` -- a NaN feature passes its gradient;
   without: ``vcmpsel(x, thr, 'gt', g, 0)`` -- a NaN feature gives 0. ``tik.vcopy`` is the SoC ini's
   ``Intrinsic_vcopy`` (CANN 8.1.RC1: listed for 910B and 910_93, not for 910A and 310P; ``tbe.dsl.has_vcopy``).

bf16: the compute is registered with ``register_operator_compute(..., support_bfp16=True)``, so TBE's framework
wraps it (:func:`ascend_lab.tbe.dsl.register_operator_compute`, CANN 8.1.RC1 ``tbe/common/register/
operation_func_mgr.py``): on a SoC whose vector add has no bf16 and whose ``vconv`` has bf162f32 (910B, 910_93) the
inputs are cast to fp32, the compute sees fp32 and takes its fp32 path (vsel/vcmp there), and the result is rounded
back to bf16 (``round``, half to even). The threshold is a runtime attribute of the shipped binaries (their
``kernel/config/<soc>/threshold_grad_v2_d.json`` entries carry ``"threshold"`` with ``"value": null``, so the compute
reads it with ``tbe.var_attr``); the simulator carries it in the tiling struct.

Broadcasting: the operator is classified ``ELEWISE_WITH_BROADCAST`` and its compute broadcasts both inputs to
``shape_util.broadcast_shapes``' shape (§5.2 steps 1 and 3), so the inputs reach the kernel in their own shapes
and the output has the broadcast shape. :func:`tiling_for_shapes` tiles the output (the modelled broadcast
schedule of :mod:`ascend_lab.tbe.schedule`) and the kernel's copy-in reads each tile's input elements with the
broadcast applied (:mod:`ascend_lab.tbe.lowering`).
"""

from __future__ import annotations

from typing import Any

from .... import tbe
from ....ascendc import KernelRun
from ....tbe import dsl
from ....tbe.lowering import launch as _launch
from ....tbe.lowering import template_args
from ..op_host import ThresholdGradV2DTbeTilingData

__all__ = ["DTYPES", "ThresholdGradV2DTbeTilingData", "core_ranges", "describe", "launch", "template_args",
           "threshold_grad_v2_d", "threshold_grad_v2_d_compute", "tiling", "tiling_for_shapes"]

#: The TBE check list (§5.2); bf16 reaches it only where aclnn allows bf16 (910B, 910_93).
DTYPES = ("bfloat16", "float16", "float32", "int32", "int8", "uint8")
FLOAT_16, FLOAT_32 = "float16", "float32"


@dsl.register_operator_compute("ThresholdGradV2D", op_mode="dynamic", support_fusion=True, support_bfp16=True)
def threshold_grad_v2_d_compute(input_gradients: dsl.Tensor, input_features: dsl.Tensor,
                                output_backprops: dict[str, Any], threshold: float) -> dsl.Tensor:
    """``threshold_grad_v2_d_compute``, line for line (``output_backprops`` names the output's dtype, which the
    bf16 wrapper reads)."""
    _, _, shape_max = dsl.broadcast_shapes(input_gradients.shape, input_features.shape, "input_x", "input_y")
    dtype = input_gradients.dtype
    ori_dtype = dtype
    has_improve_precision = False
    if dtype in ("int8", "int32", "uint8"):
        input_features = dsl.cast_to(input_features, FLOAT_32)
        input_gradients = dsl.cast_to(input_gradients, FLOAT_32)
        has_improve_precision = True
        dtype = FLOAT_32
    input_gradients = dsl.broadcast(input_gradients, shape_max)
    input_features = dsl.broadcast(input_features, shape_max)
    check_support_flag = False
    if dtype == FLOAT_32 and not dsl.api_check_support("tbe.dsl.vcmpsel", "float32"):
        check_support_flag = True
        dtype = FLOAT_16
        input_features = dsl.cast_to(input_features, FLOAT_16)
        input_gradients = dsl.cast_to(input_gradients, FLOAT_16)
    # get_attr_by_cls(threshold, ..., dtype): the scalar is converted to `dtype` by the operation using it
    if dsl.api_check_support("tik.vcopy"):
        condition = dsl.vcmp(input_features, threshold, "le", "bit")
        result = dsl.vsel(condition, 0, input_gradients)
    else:
        result = dsl.vcmpsel(input_features, threshold, "gt", input_gradients, 0)
    if check_support_flag:
        result = dsl.cast_to(result, FLOAT_32)
    if has_improve_precision:
        result = dsl.cast_to(result, ori_dtype)
    return result


def describe(dtype: str, threshold: float = 1.0, n: int = 1,
             shapes: tuple[Any, Any] | None = None) -> dsl.Compute:
    """The description for one dtype, built for the SoC of :func:`ascend_lab.tbe.compile_for`: inputs of
    ``n`` elements, or of ``shapes`` (grad's, feature's) to see the broadcast nodes."""
    if dtype not in DTYPES:
        raise TypeError(f"TBE ThresholdGradV2D supports {', '.join(DTYPES)}, got {dtype}")
    g_shape, x_shape = shapes if shapes is not None else ((n,), (n,))
    g = dsl.placeholder(g_shape, dtype, "data_input_gradients")
    x = dsl.placeholder(x_shape, dtype, "data_input_features")
    return dsl.Compute("threshold_grad_v2_d", (g, x), threshold_grad_v2_d_compute(g, x, {"dtype": dtype}, threshold))


def tiling(n: int, dtype: Any, core_num: int, ub_size: int,
           threshold: float = 1.0) -> ThresholdGradV2DTbeTilingData:
    """The schedule's compile info of the description (built for the SoC in force), then elewise_v3's tiling."""
    return tbe.schedule.op_tiling("ThresholdGradV2D", describe, DTYPES, n, dtype, core_num, ub_size,
                                  ThresholdGradV2DTbeTilingData, threshold=threshold)


def tiling_for_shapes(shapes: Any, out_shape: Any, dtype: Any, core_num: int, ub_size: int,
                      threshold: float = 1.0) -> ThresholdGradV2DTbeTilingData:
    """The tiling from the inputs' own shapes: elewise when nothing broadcasts, else the modelled broadcast
    tiling of the output (``tbe.schedule.op_tiling_shapes``)."""
    return tbe.schedule.op_tiling_shapes("ThresholdGradV2D", describe, DTYPES, shapes, out_shape, dtype, core_num,
                                         ub_size, ThresholdGradV2DTbeTilingData, threshold=threshold)


core_ranges = tbe.core_ranges
threshold_grad_v2_d = tbe.make_entry("threshold_grad_v2_d", describe, ThresholdGradV2DTbeTilingData, ("threshold",))


def launch(td: ThresholdGradV2DTbeTilingData, grad: Any, x: Any, out: Any, soc: Any, record: bool | None = None,
           buffer_num: int | None = None, cores: Any = None) -> KernelRun:
    """Launch with aclTensors from the L0 graph. ``buffer_num`` is ignored: the schedule decides (key +10000)."""
    return _launch(threshold_grad_v2_d, td, (grad, x, out), ("input_gradient", "input_feature", "output_backprops"),
                   soc, "ThresholdGradV2D", record=record, cores=cores)
