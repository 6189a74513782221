"""Plain-numpy oracles that reproduce the simulated kernels' arithmetic bit for bit.

Every function works on whole arrays (no Python loop over elements) and rounds each
instruction's result in that instruction's own dtype, exactly as the AscendC / TBE kernels
described in ``sources/cann_facts.md`` do:

* ``Muls``/``Adds``/``Mul`` round to nearest-even in the instruction dtype after every op;
  there is no fused multiply-add (§2.3, §11 "assumed IEEE RNE").
* ``Cast`` follows AscendC's ``RoundMode`` (§10): see :func:`cast`.
* ``CompareScalar`` + ``Select`` give exactly ``grad`` or ``T(0)`` (+0.0); a NaN operand makes
  every comparison false.

The PyTorch references (§9) are here too, so the book can show where CANN and PyTorch differ.
The kernel simulator is tested against these oracles, so the two stay independent: this module imports
only numpy, ml_dtypes and ``ascend_lab.dtypes``, and the simulator (``ascend_lab.ascendc``, whose ``Cast``
has its own implementation in ``ascendc.numerics``) never imports it. A rounding mistake in one then shows
up as a mismatch instead of cancelling out.

Two modules: :mod:`.rounding` (``cast`` per ``RoundMode``, ``rounded_mul``/``rounded_add``) and :mod:`.backward`
(the operators' oracles and the PyTorch references); this package re-exports both (``golden.X`` as before, and
the op specs' ``"ascend_lab.golden:<function>"``). An operator's oracle may also live in its own folder
(``ops/<op>/oracle.py``).
"""

from __future__ import annotations

from .backward import (
    ALPHA_EXPERIMENTAL,
    ALPHA_MAIN950,
    ALPHA_PYTORCH,
    hard_sigmoid_grad,
    hard_sigmoid_grad_legacy_tbe,
    hard_sigmoid_grad_main950,
    hard_sigmoid_grad_pytorch,
    relu_grad,
    relu_grad_experimental,
    relu_grad_legacy_tbe,
    relu_grad_main950,
    threshold_backward_pytorch,
    threshold_grad_v2_d,
    threshold_grad_v2_d_legacy_tbe,
    threshold_grad_v2_d_main950,
)
from .rounding import BF16 as BF16  # the dtype constants: golden.F32 ... as before (outside __all__)
from .rounding import F16 as F16
from .rounding import F32 as F32
from .rounding import F64 as F64
from .rounding import ROUND_MODES, cast, round_mode, rounded_add, rounded_mul

__all__ = [
    "ROUND_MODES",
    "round_mode",
    "cast",
    "rounded_mul",
    "rounded_add",
    "hard_sigmoid_grad",
    "hard_sigmoid_grad_main950",
    "hard_sigmoid_grad_legacy_tbe",
    "hard_sigmoid_grad_pytorch",
    "threshold_grad_v2_d",
    "threshold_grad_v2_d_main950",
    "threshold_grad_v2_d_legacy_tbe",
    "threshold_backward_pytorch",
    "relu_grad",
    "relu_grad_experimental",
    "relu_grad_legacy_tbe",
    "relu_grad_main950",
    "ALPHA_EXPERIMENTAL",
    "ALPHA_MAIN950",
    "ALPHA_PYTORCH",
]
