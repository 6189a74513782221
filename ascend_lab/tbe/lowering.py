"""From a TBE compute description to instructions on the simulated AI Core.

TBE's ``auto_schedule`` emits CCE code; this model emits the simulator's AscendC-like instructions instead,
inside the same CopyIn -> Compute -> CopyOut pipeline an AscendC kernel has, so a TBE run has a trace, a UB
layout and a cost estimate like any other run. Per tile of ``n`` elements:

* **CopyIn**: one ``DataCopyPad`` per placeholder (exact bytes: 32-byte aligned in UB, nothing read past the
  tensor's end in GM) into a VECIN queue -- or, for an input that broadcasts (a broadcast tiling, see
  *broadcasting* below), one broadcast read of the tile's input elements (:func:`broadcast_copy`);
* **Compute**: the description's nodes in order, each a few vector instructions over the whole tile
  (table below), results in VECCALC buffers that are reused once their value is dead, the last node
  writing into the VECOUT queue;
* **CopyOut**: one ``DataCopyPad`` back to GM.

Queues have two blocks when the tiling key says double buffer (+10000) and one otherwise: TBE's schedule,
not the caller, decides double buffering. Each tile buffer holds ``roundUp(ubFactor, 128)`` elements.

The plan's instructions are :class:`Step` records (an instruction and its operands). The kernel does not loop over
them per tile: each program's **tile body** -- CopyIn, Compute and CopyOut with every call written out -- is
generated once and compiled, as TBE's compiler emits one binary per program, and the kernel calls it per tile
(``print(program.kernel_source())`` shows it). It is the only way a TBE kernel runs: the tests hold it to the
oracles, the trace and cost checks and a golden listing.

============================  ================================================================================
DSL node                      instructions
============================  ================================================================================
vmuls / vadds / vmins / vmaxs  Muls / Adds / Mins / Maxs
vmul / vmin / vmax             Mul; with a broadcast scalar operand Muls / Mins / Maxs (see *workarounds*)
broadcast (a scalar)           nothing when every user takes a scalar operand, else Duplicate
vcmp (bit)                     CompareScalar (Compare for a tensor rhs) over whole 256-byte repeats
vsel                           Select, TENSOR_SCALAR mode when the second value is a scalar, TENSOR_TENSOR
                               when both are tensors; a scalar first value: Not on the mask, then Select
vcmpsel                        CompareScalar into a mask buffer, then Select as for vsel
vabs                           CompareScalar(sign bit) + Muls(-1) + Select (see *workarounds*)
cast_to / round                Cast with the node's RoundMode (TRUNC float -> int, RINT otherwise)
============================  ================================================================================

**Broadcasting** (ELEWISE_WITH_BROADCAST; a MODEL, :mod:`.schedule` says what of it is public). The tiles cut
the *output*, fused to one dimension; an input whose fused dims (in the tiling struct) are not the output's
is read per tile as the output elements of that tile need it: element ``k`` of the tile is the input element
at ``sum(axis index * stride)``, with stride 0 on the input's broadcast axes -- a strided, repeating GM read.
The simulated AscendC API has no stride-0 ``DataCopy``, so :func:`broadcast_copy` models it here as
:func:`ascend_lab.atvoss.schedule.nddma_copy` models the NDDMA copy: the GM bounds are checked by the
simulator's own GM read checks over the span it touches, the MTE2 time is that of one copy of the distinct
bytes it reads, and the trace records a ``DataCopy`` event with those bytes. (Real TBE copies the
un-broadcast block and expands it in UB, or uses its broadcast-on-copy forms; which it picks is not
public.) The source's ``tbe.broadcast(t, shape_max)`` nodes therefore lower to nothing: a broadcast node is
its operand's buffer, already expanded by the copy-in. When a cast stands between a placeholder and its
broadcast (ThresholdGradV2D's int paths) the cast runs on the expanded tile: the same values, since an
elementwise operation commutes with broadcasting. One program serves both tilings (the copy-in reads the
tiling), as TBE's dynamic binary does for every shape of its class.

**Workarounds** (the simulated AscendC API lacks three instructions this lowering would use): there is no
``Abs``, so ``vabs`` is the sign-bit test on the integer view, ``-x`` and a bitwise Select (bit-exact, signed
zeros and infinities included; a NaN keeps its sign bit, which no consumer here can see); there is no
tensor-tensor ``Min``/``Max``, so ``vmin``/``vmax`` need one operand to be a broadcast scalar (the ReluGrad
constants are) and become Mins/Maxs (same values; the Duplicate the source's broadcast implies is not
issued); ``vmul`` by a broadcast scalar becomes Muls for the same reason of uniformity. TBE pairs ``vcmp``
and ``vsel`` per repeat through the CMPMASK register (910A's Select offers only that mode); the model
collapses each pair into one compare and one Select over the tile: same values, two instructions' cost.
The entry is marked ``kernel_api = "cce"``: the simulator then applies neither the AscendC API's limits
(910A's mode-0-only Select, Compare dtypes) nor the AscendC library's Select scratch at TMP_UB_OFFSET,
which TBE's own code does not use; dead values share buffers (the schedule's ``coexist`` budget is an
upper bound).

The parts live in their own modules, re-exported here: :mod:`.steps` (the plan's records), :mod:`.plan`
(``build``: nodes to instructions), :mod:`.program` (``Program`` and its generated tile body), :mod:`.copy_in`
(the broadcast copy-in) and :mod:`.kernel` (the kernel, its entry and launch).
"""

from __future__ import annotations

from .copy_in import broadcast_copy
from .kernel import NON_IEEE_WARNING, TbeElewiseKernel, launch, make_entry, template_args, warn_non_ieee
from .plan import build
from .program import Program
from .steps import Length, N, Operand, Slot, Step

__all__ = ["NON_IEEE_WARNING", "N", "Length", "Operand", "Program", "Slot", "Step", "TbeElewiseKernel",
           "broadcast_copy", "build", "launch", "make_entry", "template_args", "warn_non_ieee"]
