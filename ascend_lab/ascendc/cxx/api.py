"""The AscendC API as the C++ front end binds it: classes, methods, free functions with their overloads, structs,
enums -- each mapped onto the simulator's Python API (``ascend_lab.ascendc``).

An overload is a list of parameter kinds; the translator picks the one whose arity and operand kinds (LocalTensor,
GlobalTensor, scalar, struct ...) match the call, converts the scalar arguments as C++ converts them (to the
operands' element type ``T``, the count to ``int32_t``), and refuses a call no overload takes, naming the
overloads. A name that is real AscendC but not modelled here is refused as such (:data:`KNOWN_UNMODELLED`), so a
user learns whether the simulator or the kernel is missing something.

Parameter kinds: ``L`` LocalTensor<T>, ``G`` GlobalTensor<T>, ``M`` a LocalTensor of any element type (a mask,
Cast's other side), ``S`` a scalar converted to T, ``S|L`` a scalar or a LocalTensor<T> (Select's second source),
``I`` an ``int32_t`` count, ``E:NAME`` a value of the enum NAME, ``P`` DataCopyParams/DataCopyExtParams,
``PAD`` DataCopyPadParams/DataCopyPadExtParams<T>, ``MASK`` a ``uint64_t`` mask (``MASK_PLACEHOLDER``), ``R`` a
``uint8_t`` repeatTime, ``U64`` a ``uint64_t``, ``BRP``/``URP``/``CRP`` Binary/Unary/CopyRepeatParams.

A mask/repeat form (:data:`MASK_FORMS`) is called as ``_mask_<Name>(..., is_set_mask)``, its ``isSetMask`` template
argument (``Add<T, false>``) last.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..mask import MASK_FORMS
from ..sync import HardEvent
from .ctypes import INT_TYPES, CType

__all__ = ["API_CLASSES", "ENUMS", "FUNCTIONS", "KNOWN_UNMODELLED", "STRUCTS", "Overload", "StructSpec"]


@dataclass(frozen=True)
class Overload:
    params: tuple[str, ...]
    returns: str = "void"          # void | int64 | bool | T | LocalTensor<T> ...
    note: str = ""

    def spelled(self, name: str) -> str:
        return f"{name}({', '.join(_KIND_TEXT.get(p, p) for p in self.params)})"


_KIND_TEXT = {"L": "LocalTensor<T>&", "G": "GlobalTensor<T>&", "M": "LocalTensor<U>&", "S": "const T& scalar",
              "S|L": "const T& scalar or LocalTensor<T>&", "I": "int32_t count", "P": "DataCopyParams/ExtParams",
              "PAD": "DataCopyPadParams/PadExtParams<T>", "MASK": "uint64_t mask", "R": "uint8_t repeatTime",
              "U64": "uint64_t", "BRP": "BinaryRepeatParams&", "URP": "UnaryRepeatParams&",
              "CRP": "CopyRepeatParams&"}


def _ov(*params: str, returns: str = "void", note: str = "") -> Overload:
    return Overload(tuple(params), returns, note)


#: Free functions of the AscendC API that the simulator models, by C++ name: overloads.
FUNCTIONS: dict[str, list[Overload]] = {
    "DataCopy": [_ov("L", "G", "I"), _ov("G", "L", "I"), _ov("L", "L", "I"), _ov("L", "G", "P"), _ov("G", "L", "P")],
    "DataCopyPad": [_ov("L", "G", "P", "PAD"), _ov("G", "L", "P")],
    "Muls": [_ov("L", "L", "S", "I")], "Adds": [_ov("L", "L", "S", "I")],
    "Maxs": [_ov("L", "L", "S", "I")], "Mins": [_ov("L", "L", "S", "I")],
    "Add": [_ov("L", "L", "L", "I")], "Mul": [_ov("L", "L", "L", "I")],
    "Max": [_ov("L", "L", "L", "I")], "Min": [_ov("L", "L", "L", "I")],
    "Not": [_ov("L", "L", "I")],
    # instructions_math: the rest of the basic vector API of the ops-nn elementwise kernels (count form)
    "Sub": [_ov("L", "L", "L", "I")], "Div": [_ov("L", "L", "L", "I")],
    "And": [_ov("L", "L", "L", "I")], "Or": [_ov("L", "L", "L", "I")],
    "Subs": [_ov("L", "L", "S", "I"), _ov("L", "S", "L", "I")],
    "Divs": [_ov("L", "L", "S", "I"), _ov("L", "S", "L", "I")],
    "Abs": [_ov("L", "L", "I")], "Exp": [_ov("L", "L", "I")], "Ln": [_ov("L", "L", "I")],
    "Sqrt": [_ov("L", "L", "I")], "Rsqrt": [_ov("L", "L", "I")], "Reciprocal": [_ov("L", "L", "I")],
    "Relu": [_ov("L", "L", "I")],
    "LeakyRelu": [_ov("L", "L", "S", "I")],
    "Axpy": [_ov("M", "L", "S", "I")],
    # high-level (adv_api): (dst, src[, sharedTmpBuffer][, calCount])
    "Log": [_ov("L", "L", "I"), _ov("L", "L")],
    "Sigmoid": [_ov("L", "L", "M", "I"), _ov("L", "L", "I"), _ov("L", "L", "M"), _ov("L", "L")],
    "Tanh": [_ov("L", "L", "M", "I"), _ov("L", "L", "I"), _ov("L", "L", "M"), _ov("L", "L")],
    "Erf": [_ov("L", "L", "M", "I"), _ov("L", "L", "I"), _ov("L", "L", "M"), _ov("L", "L")],
    # mask/repeat form, continuous mask: (dst, src, mask, repeatTime, dstRepStride, srcBlkStride, srcRepStride[, order])
    "WholeReduceSum": [_ov("L", "L", "I", "I", "I", "I", "I")],
    # BlockReduce*: (dst, src, repeatTime, mask, dstRepStride, srcBlkStride, srcRepStride) -- repeatTime first
    "BlockReduceSum": [_ov("L", "L", "I", "I", "I", "I", "I")],
    "BlockReduceMax": [_ov("L", "L", "I", "I", "I", "I", "I")],
    "BlockReduceMin": [_ov("L", "L", "I", "I", "I", "I", "I")],
    "WholeReduceMax": [_ov("L", "L", "I", "I", "I", "I", "I"), _ov("L", "L", "I", "I", "I", "I", "I", "E:ReduceOrder")],
    "WholeReduceMin": [_ov("L", "L", "I", "I", "I", "I", "I"), _ov("L", "L", "I", "I", "I", "I", "I", "E:ReduceOrder")],
    "Duplicate": [_ov("L", "S", "I")],
    "Cast": [_ov("M", "M", "E:RoundMode", "I")],
    "CompareScalar": [_ov("M", "L", "S", "E:CMPMODE", "I")],
    "Compares": [_ov("M", "L", "S", "E:CMPMODE", "I")],
    "Compare": [_ov("M", "L", "L", "E:CMPMODE", "I")],
    "Select": [_ov("L", "M", "L", "S|L", "E:SELMODE", "I")],
    "PipeBarrier": [_ov()],
    "GetBlockIdx": [_ov(returns="int64")],
    "GetBlockNum": [_ov(returns="int64")],
    # the mask register (ascendc.mask): SetVectorMask<T[, MaskMode]>(len) / (maskHigh, maskLow)
    "SetMaskCount": [_ov()], "SetMaskNorm": [_ov()], "ResetMask": [_ov()],
    "SetVectorMask": [_ov("I"), _ov("U64", "U64")],
}
_REPEAT_FORM = {"binary": ("L", "L", "L", "MASK", "R", "BRP"), "scalar": ("L", "L", "S", "MASK", "R", "URP"),
                "unary": ("L", "L", "MASK", "R", "URP"), "copy": ("L", "L", "MASK", "R", "CRP"),
                "cast": ("M", "M", "E:RoundMode", "MASK", "R", "URP")}
for _name, (_kind, _params) in MASK_FORMS.items():
    FUNCTIONS.setdefault(_name, []).append(_ov(*_REPEAT_FORM[_kind], note="mask"))

#: The first operand whose element type is T, per function (Cast, the compares: their sources).
T_FROM: dict[str, int] = {"Cast": 1, "CompareScalar": 1, "Compares": 1, "Compare": 1, "Axpy": 1}
#: Functions the simulator models under another name (``Compares`` is the newer spelling of ``CompareScalar``).
PYTHON_NAME: dict[str, str] = {"Compares": "CompareScalar"}
#: Functions whose L operands must all hold T (mixing half and float is refused at compile time).
SAME_T = {"Copy",
          "Muls", "Adds", "Maxs", "Mins", "Add", "Mul", "Max", "Min", "Not", "Select", "DataCopy", "DataCopyPad",
          "Sub", "Div", "And", "Or", "Subs", "Divs", "Abs", "Exp", "Ln", "Sqrt", "Rsqrt", "Reciprocal", "Relu",
          "LeakyRelu", "WholeReduceSum", "WholeReduceMax", "WholeReduceMin", "Log", "Sigmoid", "Tanh", "Erf",
          "BlockReduceSum", "BlockReduceMax", "BlockReduceMin"}

#: Real AscendC names the simulator does not model (yet): a call says so instead of "unknown".
KNOWN_UNMODELLED = frozenset({
    "ShiftLeft", "ShiftRight",
    "ReduceSum", "ReduceMax", "ReduceMin", "AllocEventID", "ReleaseEventID", "Gelu", "FasterGelu", "Silu",
    "Swish", "Softmax", "Power",
    "Sin", "Cos", "Brcb", "Gather", "Scatter", "Transpose", "Mmad", "LoadData", "SetAtomicAdd", "SetAtomicNone",
    "DumpTensor", "printf", "PRINTF", "SyncAll", "GetSysWorkSpacePtr", "SetSysWorkspace", "CopyCubeIn", "Fixpipe",
    "InitGlobalMemory", "DataCachePreload", "DataCacheCleanAndInvalid", "Trunc", "Floor", "Ceil", "Round",
    "GetTaskRation", "GetSubBlockIdx", "SetDeqScale", "CastDeq", "AddRelu", "MulAddDst", "FusedMulAdd", "Sign",
    "Clamp", "ClampMax", "ClampMin", "IsFinite", "Xor", "Cumsum", "ArithProgression", "AscendAntiQuant",
})


@dataclass(frozen=True)
class Method:
    params: tuple[str, ...]
    returns: str = "void"
    python: str = ""               # the Python method name when it differs


#: AscendC classes: constructor arguments (from template arguments) and methods (name -> overloads).
API_CLASSES: dict[str, dict[str, list[Method]]] = {
    "TPipe": {"InitBuffer": [Method(("Q", "U8", "U32"), "bool"), Method(("B", "U32"), "bool")],
              "FetchEventID": [Method(("E:HardEvent",), "int32")],
              "Destroy": [Method((), "void")], "Init": [Method((), "void")], "Reset": [Method((), "void")]},
    "TQue": {"AllocTensor": [Method((), "LocalTensor<U>")], "EnQue": [Method(("L",), "bool")],
             "DeQue": [Method((), "LocalTensor<U>")], "FreeTensor": [Method(("L",), "void")],
             "VacantInQue": [Method((), "bool")]},
    # TQueBind<VECIN, VECOUT, depth>: EnQue<src, dst, T>(t) / DeQue<src, dst, T>() name the hand-over (ascendc.quebind)
    "TQueBind": {"AllocTensor": [Method((), "LocalTensor<U>")], "EnQue": [Method(("L",), "bool")],
                 "DeQue": [Method((), "LocalTensor<U>")], "FreeTensor": [Method(("L",), "void")],
                 "VacantInQue": [Method((), "bool")]},
    "TBuf": {"Get": [Method((), "LocalTensor<U>"), Method(("U32",), "LocalTensor<U>")],
             "AllocTensor": [Method((), "LocalTensor<U>")], "FreeTensor": [Method(("L",), "void")]},
    "GlobalTensor": {"SetGlobalBuffer": [Method(("PTR", "U64"), "void"), Method(("PTR",), "void")],
                     "GetSize": [Method((), "uint64")]},
    "LocalTensor": {"GetValue": [Method(("U32",), "T")], "SetValue": [Method(("U32", "S"), "void")],
                    "GetSize": [Method((), "uint32")], "ReinterpretCast": [Method((), "LocalTensor<U>")]},
}


@dataclass(frozen=True)
class StructSpec:
    """An AscendC parameter struct: its fields in C++ order with their types, and the Python class built."""
    name: str
    fields: tuple[tuple[str, CType], ...]
    python: str
    templated: bool = False
    defaults: dict[str, int] = field(default_factory=dict)


_U8, _U16, _U32, _U64 = (INT_TYPES[n] for n in ("uint8_t", "uint16_t", "uint32_t", "uint64_t"))
_BOOL = CType("bool", "bool", 1, False)
_TPARAM = CType("tparam", "T")

#: asc-devkit include/basic_api/kernel_struct_data_copy.h: fields, order and types.
STRUCTS: dict[str, StructSpec] = {
    "DataCopyParams": StructSpec("DataCopyParams", (("blockCount", _U16), ("blockLen", _U16), ("srcStride", _U16),
                                                    ("dstStride", _U16)), "DataCopyParams", defaults={"blockCount": 1}),
    "DataCopyExtParams": StructSpec("DataCopyExtParams", (("blockCount", _U16), ("blockLen", _U32),
                                                          ("srcStride", _U32), ("dstStride", _U32), ("rsv", _U32)),
                                    "DataCopyExtParams", defaults={"blockCount": 1}),
    "DataCopyPadParams": StructSpec("DataCopyPadParams", (("isPad", _BOOL), ("leftPadding", _U8),
                                                          ("rightPadding", _U8), ("paddingValue", _U64)),
                                    "DataCopyPadParams"),
    "DataCopyPadExtParams": StructSpec("DataCopyPadExtParams", (("isPad", _BOOL), ("leftPadding", _U8),
                                                                ("rightPadding", _U8), ("paddingValue", _TPARAM)),
                                       "DataCopyPadParams", templated=True),
    # kernel_struct_binary.h / kernel_struct_unary.h / kernel_struct_data_copy.h: the constructors' argument order
    "BinaryRepeatParams": StructSpec("BinaryRepeatParams", tuple((f, _U8) for f in (
        "dstBlkStride", "src0BlkStride", "src1BlkStride", "dstRepStride", "src0RepStride", "src1RepStride")),
        "BinaryRepeatParams", defaults={"dstBlkStride": 1, "src0BlkStride": 1, "src1BlkStride": 1, "dstRepStride": 8,
                                        "src0RepStride": 8, "src1RepStride": 8}),
    "UnaryRepeatParams": StructSpec("UnaryRepeatParams", (("dstBlkStride", _U16), ("srcBlkStride", _U16),
                                                          ("dstRepStride", _U8), ("srcRepStride", _U8)),
                                    "UnaryRepeatParams", defaults={"dstBlkStride": 1, "srcBlkStride": 1,
                                                                   "dstRepStride": 8, "srcRepStride": 8}),
    "CopyRepeatParams": StructSpec("CopyRepeatParams", tuple((f, _U16) for f in (
        "dstStride", "srcStride", "dstRepeatSize", "srcRepeatSize")), "CopyRepeatParams",
        defaults={"dstStride": 1, "srcStride": 1, "dstRepeatSize": 8, "srcRepeatSize": 8}),
}
PARAM_STRUCTS = {"P": ("DataCopyParams", "DataCopyExtParams"), "PAD": ("DataCopyPadParams", "DataCopyPadExtParams"),
                 "BRP": ("BinaryRepeatParams",), "URP": ("UnaryRepeatParams",), "CRP": ("CopyRepeatParams",)}

#: AscendC constants (kernel_reg.h): name -> value, a ``uint64_t``.
CONSTANTS: dict[str, int] = {"MASK_PLACEHOLDER": 0,
                             # event_t's members (kernel_event.h: EVENT_ID0 ... EVENT_ID7 = 0 ... 7)
                             **{f"EVENT_ID{i}": i for i in range(8)}}

#: AscendC enums: C++ name -> (Python expression prefix, members).
ENUMS: dict[str, tuple[str, tuple[str, ...]]] = {
    "CMPMODE": ("CMPMODE.", ("LT", "GT", "EQ", "LE", "GE", "NE")),
    "SELMODE": ("SELMODE.", ("VSEL_CMPMASK_SPR", "VSEL_TENSOR_SCALAR_MODE", "VSEL_TENSOR_TENSOR_MODE")),
    "RoundMode": ("RoundMode.", ("CAST_NONE", "CAST_RINT", "CAST_FLOOR", "CAST_CEIL", "CAST_ROUND", "CAST_TRUNC",
                                 "CAST_ODD")),
    "ReduceOrder": ("ReduceOrder.", ("ORDER_VALUE_INDEX", "ORDER_INDEX_VALUE", "ORDER_ONLY_VALUE",
                                     "ORDER_ONLY_INDEX")),
    # GM names a TQueBind hand-over (EnQue<GM, VECIN, T>); a queue or buffer placed there is refused by position()
    "QuePosition": ("", ("VECIN", "VECOUT", "VECCALC", "GM")),
    "TPosition": ("", ("VECIN", "VECOUT", "VECCALC", "GM")),
    "pipe_t": ("", ("PIPE_V", "PIPE_MTE2", "PIPE_MTE3", "PIPE_ALL", "PIPE_S")),
    "HardEvent": ("HardEvent.", tuple(e.name for e in HardEvent)),
    "MaskMode": ("MaskMode.", ("NORMAL", "COUNTER")),
    # kernel_utils_macros.h; only SetL2CacheHint takes one, and the simulator models no L2 (a no-op)
    "CacheMode": ("CacheMode.", ("CACHE_MODE_DISABLE", "CACHE_MODE_NORMAL", "CACHE_MODE_LAST",
                                 "CACHE_MODE_PERSISTENT")),
}
#: The explicit synchronisation calls: ``SetFlag<HardEvent::V_MTE3>(id)`` / ``WaitFlag<...>(id)`` take their event as
#: a template argument (Python: the first argument, ascendc.sync); ``FetchEventID(event)`` is a TPipe method.
SYNC_FUNCTIONS = ("SetFlag", "WaitFlag")
#: AscendC types the simulator does not model, with what a kernel using them needs.
UNMODELLED_TYPES: dict[str, str] = {
    "RegTensor": "RegTensor is the Ascend950 register-based MicroAPI (vector registers), not modelled: the "
                 "simulator runs the membase API (LocalTensor instructions)",
    "MaskReg": "MaskReg is the Ascend950 register-based MicroAPI, not modelled",
}

#: Positions of TPosition the simulator does not model (A1/B1/CO1 ...: the cube side).
UNMODELLED_POSITIONS = frozenset({"A1", "A2", "B1", "B2", "CO1", "CO2", "TSCM", "GM", "LCM", "SPM", "C1", "C2"})
PIPES = ("PIPE_V", "PIPE_MTE2", "PIPE_MTE3", "PIPE_ALL")
