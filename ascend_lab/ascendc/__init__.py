"""``ascend_lab.ascendc`` — the simulated AI Core and an AscendC-like programming model.

A kernel is written once against these names, as a real AscendC kernel is::

    from ascend_lab.ascendc import *   # GlobalTensor, LocalTensor, TPipe, TQue, TBuf, DataCopyPad, Muls, Exp ...

and runs through :func:`launch` on ``blockDim`` simulated cores, each with a Unified Buffer of the SoC's
size. The same code computes the numbers and (``record=True``) the trace the figures are drawn from.
The simulator's checks are in :mod:`.sanitizer` (``sanitizer.FINDINGS`` lists every kind of finding with
its meaning and a hint), its rounding in :mod:`.numerics`, its timing in :mod:`.cost_model`.
"""

from .core import GetBlockIdx, GetBlockNum, reserved_ub_bytes
from .cost_model import CostModel
from .errors import KernelError
from .instructions import (
    CMPMODE,
    SELMODE,
    Add,
    Adds,
    Broadcast,
    Cast,
    Compare,
    CompareScalar,
    DataCopy,
    DataCopyExtParams,
    DataCopyPad,
    DataCopyPadExtParams,
    DataCopyPadParams,
    DataCopyParams,
    Duplicate,
    GetBroadCastMaxMinTmpSize,
    Max,
    Maxs,
    Min,
    Mins,
    Mul,
    Muls,
    Not,
    PipeBarrier,
    Select,
)
from .instructions_adv import Erf, Log, Sigmoid, Tanh
from .instructions_math import (
    Abs,
    And,
    Axpy,
    Div,
    Divs,
    Exp,
    LeakyRelu,
    Ln,
    Or,
    Reciprocal,
    Relu,
    Rsqrt,
    Sqrt,
    Sub,
    Subs,
)
from .instructions_reduce import (
    BlockReduceMax,
    BlockReduceMin,
    BlockReduceSum,
    ReduceOrder,
    WholeReduceMax,
    WholeReduceMin,
    WholeReduceSum,
)
from .launcher import KernelRun, launch
from .mask import (
    MASK_PLACEHOLDER,
    BinaryRepeatParams,
    CopyRepeatParams,
    MaskMode,
    ResetMask,
    SetMaskCount,
    SetMaskNorm,
    SetVectorMask,
    UnaryRepeatParams,
)
from .numerics import RoundMode
from .options import options
from .pipe import VECCALC, VECIN, VECOUT, QuePosition, TBuf, TPipe, TPosition, TQue
from .quebind import TQueBind
from .sync import FetchEventID, HardEvent, SetFlag, WaitFlag
from .tensor import (
    GlobalTensor,
    GmAddr,
    LocalTensor,
    bfloat16_t,
    float32,
    float_,
    half,
    int8_t,
    int16_t,
    int32_t,
    int64_t,
    sizeof,
    uint8_t,
)
from .trace import Event, Trace

__all__ = [
    "GetBlockIdx", "GetBlockNum", "reserved_ub_bytes", "CostModel", "KernelError", "CMPMODE", "SELMODE", "Add",
    "Adds", "Broadcast", "GetBroadCastMaxMinTmpSize",
    "Cast", "Compare", "CompareScalar", "DataCopy", "DataCopyExtParams", "DataCopyPad",
    "DataCopyPadExtParams", "DataCopyPadParams", "DataCopyParams", "Duplicate", "Max", "Maxs", "Min", "Mins", "Mul",
    "Muls", "Not",
    "PipeBarrier", "RoundMode", "Select", "KernelRun", "launch", "options", "VECCALC", "VECIN", "VECOUT",
    "QuePosition", "TBuf", "TPipe", "TPosition", "TQue", "GlobalTensor", "GmAddr", "LocalTensor", "bfloat16_t",
    "float32", "float_", "half", "int8_t", "int16_t", "int32_t", "int64_t", "sizeof", "uint8_t", "Event", "Trace",
    "Abs", "And", "Axpy", "Div", "Divs", "Exp", "LeakyRelu", "Ln", "Or", "Reciprocal", "Relu", "Rsqrt", "Sqrt", "Sub",
    "Subs", "FetchEventID", "HardEvent", "SetFlag", "WaitFlag", "ReduceOrder", "WholeReduceMax", "WholeReduceMin",
    "WholeReduceSum", "Log", "Sigmoid", "Tanh", "BlockReduceMax", "BlockReduceMin", "BlockReduceSum",
    "Erf", "MASK_PLACEHOLDER", "BinaryRepeatParams", "CopyRepeatParams", "MaskMode", "ResetMask", "SetMaskCount",
    "SetMaskNorm", "SetVectorMask", "UnaryRepeatParams", "TQueBind",
]
