"""``ascend_lab.atvoss`` -- CANN's elementwise/broadcast kernel template (atvoss) on the simulated AI Core.

On Ascend950 many ops-nn operators (ThresholdGradV2D, ReluGrad, ...) are not hand-written AscendC kernels
but a *DAG of nodes* handed to a generic template (kernel_flavours.md §3):

* :mod:`.dag` -- declare the DAG (``CopyInBrc``, ``Cast``, ``Duplicate``, ``Compare``, ``Select``, ``Mul``,
  ``CopyOut``); :class:`Dag` derives the execution order, the live-buffer count ("aliveNum") and the
  buffer slots the C++ templates compute at compile time;
* :mod:`.tiling` -- ``BroadcastBaseTiling``: dimension collapse, the one-dim schedules 201/202, the general
  NDDMA / UB-broadcast tiling, the tiling key, the TilingData structs and the 16 MiB workspace;
* :mod:`.schedule` -- ``BroadcastSch``: the kernel entry that runs any such DAG on the simulated cores with
  ping/pong copy slots, recorded in the trace like any AscendC kernel; the tile body it runs is the DAG's
  *instantiation*, planned (:mod:`.plan`), written out (:mod:`.emit`) and compiled (:mod:`.instance`) once.

``ARCHITECTURE.md`` in this folder is the one-screen map.

An operator built on the template declares its DAG per dtype and calls :func:`broadcast_base_tiling` from
its host tiling and :func:`broadcast_sch` as its kernel entry (see ``ops/threshold_grad_v2_d/op_kernel/main.py``).
"""

from .dag import (
    CAST_NONE,
    CAST_RINT,
    CMP_LE,
    SEL_TENSOR,
    Cast,
    Compare,
    Const,
    CopyInBrc,
    CopyOut,
    Dag,
    Duplicate,
    In,
    Mul,
    Node,
    Select,
    Var,
)
from .schedule import broadcast_sch, instantiation
from .tiling import (
    DEFAULT_TILING_WORKSPACE_SIZE,
    SCH_MODES,
    BroadcastBaseTilingData,
    BroadcastOneDimTilingData,
    BroadcastOneDimTilingDataAdvance,
    advance_split,
    broadcast_base_tiling,
    dimension_collapse,
    pool_bytes,
    sch_mode_of,
    tiling_key,
    workspace_size,
)

__all__ = [
    "CAST_NONE", "CAST_RINT", "CMP_LE", "SEL_TENSOR", "Cast", "Compare", "Const", "CopyInBrc", "CopyOut", "Dag",
    "Duplicate", "In", "Mul", "Node", "Select", "Var", "broadcast_sch", "instantiation",
    "DEFAULT_TILING_WORKSPACE_SIZE", "SCH_MODES", "BroadcastBaseTilingData", "BroadcastOneDimTilingData",
    "BroadcastOneDimTilingDataAdvance", "advance_split", "broadcast_base_tiling", "dimension_collapse",
    "pool_bytes", "sch_mode_of", "tiling_key", "workspace_size",
]
