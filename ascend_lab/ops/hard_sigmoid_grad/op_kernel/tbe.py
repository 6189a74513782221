"""The legacy TBE HardSigmoidGrad (910A, 910B, 910_93, 310P) as a compute description on the TBE model.

Written as the TBE source states it (CANN 8.1.RC1 ``opp/built-in/op_impl/ai_core/tbe/impl/dynamic/
hard_sigmoid_grad.py``, ``kernel_flavours.md`` §5.1): bf16 inputs are cast to fp32 by the compute itself (it is
registered without ``support_bfp16``), ``alpha`` becomes a value of the compute dtype (fp16: 0.1666259765625),
``result = vcmpsel(vabs(x), 3.0, 'lt', vmuls(grads, alpha), broadcast(0))`` -- so |x| < 3 passes
alpha * grad, x = +-3 and NaN x give 0 -- and bf16 results are rounded back with ``round(..., "bfloat16")``.
**beta is unused**, as in the source. The schedule is :mod:`ascend_lab.tbe.schedule` (a model, see there).

In TBE alpha is a runtime attribute of the shipped binaries: ``kernel/config/ascend910b/hard_sigmoid_grad.json``
lists ``alpha`` and ``beta`` with ``"value": null``, so the compute reads alpha through ``get_attr_by_cls`` as a
``tbe.var_attr`` and one binary serves every value. The simulator carries alpha in the tiling struct and builds
one program per value (a constant of that program).
"""

from __future__ import annotations

from typing import Any

from .... import tbe
from ....ascendc import KernelRun
from ....tbe import dsl
from ....tbe.lowering import launch as _launch
from ....tbe.lowering import template_args
from ..op_host import ALPHA_EXPERIMENTAL, BETA, HardSigmoidGradTbeTilingData

__all__ = ["DTYPES", "HardSigmoidGradTbeTilingData", "core_ranges", "describe", "hard_sigmoid_grad",
           "hard_sigmoid_grad_compute", "launch", "template_args", "tiling"]

#: The TBE check list (§5.1): bf16 reaches it only where aclnn allows bf16 (910B, 910_93).
DTYPES = ("float32", "float16", "bfloat16")


def hard_sigmoid_grad_compute(grads: dsl.Tensor, input_x: dsl.Tensor, alpha: float) -> dsl.Tensor:
    """``hard_sigmoid_grad_compute``, line for line (beta is not an argument because the source ignores it)."""
    input_dtype = input_x.dtype
    if input_dtype == "bfloat16":
        input_x = dsl.cast_to(input_x, "float32")
        grads = dsl.cast_to(grads, "float32")
    abs_bound_value = 3.0
    dtypex = input_x.dtype
    shape = input_x.shape
    result_alpha = dsl.vmuls(grads, alpha)                        # alpha converted to dtypex by vmuls
    zero_tensor_x = dsl.broadcast(0, shape, dtypex)
    result = dsl.vcmpsel(dsl.vabs(input_x), abs_bound_value, "lt", result_alpha, zero_tensor_x)
    if input_dtype == "bfloat16":
        result = dsl.round(result, "bfloat16")
    return result


def describe(dtype: str, alpha: float = ALPHA_EXPERIMENTAL, n: int = 1) -> dsl.Compute:
    """The description for one dtype (one fused dimension of ``n`` elements), as ``tbe.build`` sees it."""
    if dtype not in DTYPES:
        raise TypeError(f"TBE HardSigmoidGrad supports {', '.join(DTYPES)}, got {dtype}")
    g = dsl.placeholder((n,), dtype, "grad_input")
    x = dsl.placeholder((n,), dtype, "data_input")
    return dsl.Compute("hard_sigmoid_grad", (g, x), hard_sigmoid_grad_compute(g, x, alpha))


def tiling(n: int, dtype: Any, core_num: int, ub_size: int, alpha: float = ALPHA_EXPERIMENTAL,
           beta: float = BETA) -> HardSigmoidGradTbeTilingData:
    """The schedule's compile info of the description (built for the SoC in force), then elewise_v3's run-time tiling
    (beta is unused)."""
    return tbe.schedule.op_tiling("HardSigmoidGrad", describe, DTYPES, n, dtype, core_num, ub_size,
                                  HardSigmoidGradTbeTilingData, alpha=alpha)


core_ranges = tbe.core_ranges
hard_sigmoid_grad = tbe.make_entry("hard_sigmoid_grad", describe, HardSigmoidGradTbeTilingData, ("alpha",))


def launch(td: HardSigmoidGradTbeTilingData, grad: Any, x: Any, out: Any, soc: Any, record: bool | None = None,
           buffer_num: int | None = None, cores: Any = None) -> KernelRun:
    """Launch with aclTensors from the L0 graph. ``buffer_num`` is ignored: the schedule decides (key +10000)."""
    return _launch(hard_sigmoid_grad, td, (grad, x, out), ("gradOutput", "self", "gradInput"), soc,
                   "HardSigmoidGrad", record=record, cores=cores)
