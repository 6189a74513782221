"""The legacy TBE ReluGrad (910A, 910B, 910_93, 310P) as a compute description on the TBE model.

Written as the TBE source states it (``kernel_flavours.md`` §5.3; the dynamic ``relu_grad.py``):

0. the compute is registered with ``support_bfp16=True``: on 910B/910_93 (no bf16 ``vadd``, a bf16 -> fp32
   ``vconv``) TBE's framework casts bf16 inputs to fp32 before the compute runs and rounds the result back to bf16
   (:func:`ascend_lab.tbe.dsl.register_operator_compute`), so the compute sees fp32 there;
1. int8/uint8 are cast to fp16, bf16 to fp32 (reached only where the wrapper did not cast);
2. with ``after_v200()`` (which is ``api_check_support("tik.vcopy")``) and an fp16/fp32 dtype as the compute sees
   it (bf16 on 910B/910_93, through the wrapper):
   ``vsel(vcmp(x, 0, 'le', 'bit'), 0, g)`` -- a NaN feature passes its gradient, an inf/NaN gradient
   passes where x > 0 and gives 0 where x <= 0;
3. otherwise (int8, uint8, int32 everywhere; fp16/fp32 on Ascend910 and Ascend310P, whose CANN 8.1.RC1 inis list
   no ``Intrinsic_vcopy``) a mask ``vmax(vmin(x, tiny), 0) * s1 * s2`` (fp32: * s2 twice) with
   tiny/s1/s2 = 2^-126/2^38/2^44 (fp32), 2^-24/2^12/2^12 (fp16), 1/1/1 (int32), then ``g * mask``: x <= 0
   gives ``g * 0`` (so -0 for a negative g and NaN for an inf/NaN g), a NaN x gives NaN (IEEE 754, as the
   simulator's Mins/Maxs compute it; 910A and 310P have no INF/NaN mode and what their saturation mode does with
   inf/NaN operands is not documented, so such runs carry a warning), and an fp32 subnormal x a fraction;
4. int8/uint8 are cast back (``f1628IntegerFlag=True``), bf16 rounded back (``round(..., "bfloat16")``; on
   910B/910_93 the wrapper's ``round``).

So TBE ReluGrad bf16 on 910B/910_93 is ``vsel(vcmp(x, 0, 'le'), 0, g)`` in fp32: grad ``[3, inf, -2, 3, 5]``, x
``[nan, -1, -1, 1e-39, 2]`` give ``[3, 0, +0, 3, 5]`` (not the min/max/mul mask's NaN, -0 and a fraction).

int64 (``vcmp`` in 'bool' mode) reaches ReluGrad only on Ascend950 through aclnn, so it is not lowered here.
The source's broadcasts of the constants are folded into Mins/Maxs/Muls (see ``ascend_lab.tbe.lowering``).

Broadcasting: the operator is classified ``ELEWISE_WITH_BROADCAST`` and its compute broadcasts both inputs to
``shape_util.broadcast_shapes``' shape (§5.3 step 2), so the inputs reach the kernel in their own shapes and the
output has the broadcast shape. :func:`tiling_for_shapes` tiles the output (the modelled broadcast schedule of
:mod:`ascend_lab.tbe.schedule`) and the kernel's copy-in reads each tile's input elements with the broadcast
applied (:mod:`ascend_lab.tbe.lowering`).
"""

from __future__ import annotations

from typing import Any

from .... import tbe
from ....ascendc import KernelRun
from ....tbe import dsl
from ....tbe.lowering import launch as _launch
from ....tbe.lowering import template_args
from ..op_host import ReluGradTbeTilingData

__all__ = ["CONSTANTS", "DTYPES", "ReluGradTbeTilingData", "calculate_one_or_zero", "core_ranges", "describe",
           "launch", "relu_grad", "relu_grad_compute", "template_args", "tiling", "tiling_for_shapes"]

#: The TBE check list (§5.3) without int64, which aclnn sends to ReluGrad only on Ascend950.
DTYPES = ("float16", "float32", "int32", "int8", "uint8", "bfloat16")
#: (help_min, help_rec_one, help_rec_sec) per compute dtype (§5.3).
CONSTANTS: dict[str, tuple[float, float, float]] = {
    "float32": (2.0**-126, 2.0**38, 2.0**44), "float16": (2.0**-24, 2.0**12, 2.0**12), "int32": (1, 1, 1),
}


def calculate_one_or_zero(input_tensor: dsl.Tensor, dtype: str) -> dsl.Tensor:
    """``calculate_one_or_zero``: 1 where x > 0, else 0, by min/max/multiply with broadcast constants."""
    help_min, help_rec_one, help_rec_sec = CONSTANTS[dtype]
    shape = input_tensor.shape
    help_tensor = dsl.broadcast(help_min, shape, dtype)
    help_zero_tensor = dsl.broadcast(0, shape, dtype)
    help_rec_one_tensor = dsl.broadcast(help_rec_one, shape, dtype)
    help_rec_sec_tensor = dsl.broadcast(help_rec_sec, shape, dtype)
    tmp_min_y = dsl.vmin(input_tensor, help_tensor)
    tmp_max_y = dsl.vmax(tmp_min_y, help_zero_tensor)
    result_tmp = dsl.vmul(tmp_max_y, help_rec_one_tensor)
    if dtype == "float32":
        result_tmp = dsl.vmul(result_tmp, help_rec_sec_tensor)
    return dsl.vmul(result_tmp, help_rec_sec_tensor)


@dsl.register_operator_compute("ReluGrad", op_mode="dynamic", support_fusion=True, support_bfp16=True)
def relu_grad_compute(input_gradients: dsl.Tensor, input_features: dsl.Tensor,
                      output_backprops: dict[str, Any]) -> dsl.Tensor:
    """``relu_grad_compute``, line for line (the int64 branch is left out, see the module docstring;
    ``output_backprops`` names the output's dtype, which the bf16 wrapper reads)."""
    dtype = input_gradients.dtype
    trans_type = dtype
    if dtype in ("int8", "uint8"):
        input_gradients = dsl.cast_to(input_gradients, "float16")
        input_features = dsl.cast_to(input_features, "float16")
        trans_type = "float16"
    if dtype == "bfloat16":
        input_gradients = dsl.cast_to(input_gradients, "float32")
        input_features = dsl.cast_to(input_features, "float32")
        trans_type = "float32"
    _, _, y_shape = dsl.broadcast_shapes(input_gradients.shape, input_features.shape, "input_gradients",
                                         "input_features")
    input_gradients = dsl.broadcast(input_gradients, y_shape)
    input_features = dsl.broadcast(input_features, y_shape)
    if dsl.after_v200() and dtype in ("float16", "float32"):
        res_cmp = dsl.vcmp(input_features, 0.0, "le", mode="bit")
        return dsl.vsel(res_cmp, 0.0, input_gradients)
    derivative_relu = calculate_one_or_zero(input_features, trans_type)
    result = dsl.vmul(input_gradients, derivative_relu)
    if dtype in ("int8", "uint8"):
        result = dsl.cast_to(result, dtype, f1628IntegerFlag=True)
    if dtype == "bfloat16":
        result = dsl.round(result, "bfloat16")
    return result


def describe(dtype: str, n: int = 1, shapes: tuple[Any, Any] | None = None) -> dsl.Compute:
    """The description for one dtype, built for the SoC of :func:`ascend_lab.tbe.compile_for`: inputs of
    ``n`` elements, or of ``shapes`` (grad's, feature's) to see the broadcast nodes."""
    if dtype not in DTYPES:
        raise TypeError(f"TBE ReluGrad on 910A/910B/910_93/310P supports {', '.join(DTYPES)}, got {dtype}")
    g_shape, x_shape = shapes if shapes is not None else ((n,), (n,))
    g = dsl.placeholder(g_shape, dtype, "tensor_g")
    x = dsl.placeholder(x_shape, dtype, "tensor_x")
    return dsl.Compute("relu_grad", (g, x), relu_grad_compute(g, x, {"dtype": dtype}))


def tiling(n: int, dtype: Any, core_num: int, ub_size: int) -> ReluGradTbeTilingData:
    """The schedule's compile info of the description (built for the SoC in force), then elewise_v3's tiling."""
    return tbe.schedule.op_tiling("ReluGrad", describe, DTYPES, n, dtype, core_num, ub_size, ReluGradTbeTilingData)


def tiling_for_shapes(shapes: Any, out_shape: Any, dtype: Any, core_num: int,
                      ub_size: int) -> ReluGradTbeTilingData:
    """The tiling from the inputs' own shapes: elewise when nothing broadcasts, else the modelled broadcast
    tiling of the output (``tbe.schedule.op_tiling_shapes``)."""
    return tbe.schedule.op_tiling_shapes("ReluGrad", describe, DTYPES, shapes, out_shape, dtype, core_num, ub_size,
                                         ReluGradTbeTilingData)


core_ranges = tbe.core_ranges
relu_grad = tbe.make_entry("relu_grad", describe, ReluGradTbeTilingData)


def launch(td: ReluGradTbeTilingData, grad: Any, x: Any, out: Any, soc: Any, record: bool | None = None,
           buffer_num: int | None = None, cores: Any = None) -> KernelRun:
    """Launch with aclTensors from the L0 graph. ``buffer_num`` is ignored: the schedule decides (key +10000)."""
    return _launch(relu_grad, td, (grad, x, out), ("gradients", "features", "backprops"), soc, "ReluGrad",
                   record=record, cores=cores)
