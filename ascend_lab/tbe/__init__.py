"""``ascend_lab.tbe`` -- a model of the TBE DSL and its automatic elementwise schedule.

The legacy kernels of HardSigmoidGrad, ThresholdGradV2D and ReluGrad (910A, 910B, 910_93, 310P) are TBE
compute descriptions: Python functions that describe the result with DSL calls, scheduled automatically
(``kernel_flavours.md`` §5). Here:

* :mod:`.dsl` -- placeholders, the elementwise operations those kernels use and TBE's dtype rules; a
  description is a small graph (:class:`~.dsl.Compute`);
* :mod:`.storage_bound` -- the schedules' compile-time walk (CANN 8.1.RC1 ``elewise_schedule.py`` and
  ``broadcast_schedule.py``): how many tensors coexist in UB and the extra UB their instructions need;
* :mod:`.schedule` -- the compile info (``maxUb``, ``maxUbDb``) from that walk and the ini's UB, and the public
  run-time tiling of ``elewise_v3.cc`` (block split, UB split, double buffering, tiling key); for inputs that
  broadcast (``ELEWISE_WITH_BROADCAST``) a *modelled* tiling of the output, with the inputs' fused dims in the
  struct (``op_tiling_shapes``);
* :mod:`.lowering` -- the description as vector instructions of the simulated AI Core in a CopyIn/Compute/
  CopyOut kernel, so a TBE run has a trace, a UB layout and a cost estimate like an AscendC run; a
  broadcasting input is read per tile with a modelled strided, repeating GM copy (``broadcast_copy``). Its
  parts: :mod:`.steps`, :mod:`.plan`, :mod:`.program`, :mod:`.copy_in`, :mod:`.kernel` (``ARCHITECTURE.md``).
"""

from . import copy_in, dsl, kernel, lowering, plan, program, schedule, steps, storage_bound
from .dsl import Compute, Tensor, compile_for
from .lowering import Program, build, make_entry
from .schedule import SCHEDULE_LABEL, CompileInfo, TbeElewiseTilingData, compile_info, core_ranges, elewise_tiling

__all__ = [
    "SCHEDULE_LABEL", "CompileInfo", "Compute", "Program", "TbeElewiseTilingData", "Tensor", "build",
    "compile_for", "compile_info", "core_ranges", "dsl", "elewise_tiling", "lowering", "make_entry",
    "schedule", "storage_bound", "copy_in", "kernel", "plan", "program", "steps",
]
