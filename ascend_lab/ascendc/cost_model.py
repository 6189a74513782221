"""A small, documented cost model: how many cycles each instruction occupies its pipe.

Sources (``shared/reference/ascendc_facts.md`` Part 2) and the choices made here:

* **Vector (PIPE_V)**: ``cycles = b + k * n * beats`` per API call, n = elements, from Huawei's GE-ATT V1 fits
  (§2.5; read in hicann/ge ``.../att/gen_model_info/api_perf_register/v1/perf_param_v1.cpp``, :data:`GE_ATT_SOURCE`):
  about one 256-byte repeat per cycle plus 11-46 cycles fixed cost. Each instruction the simulator models has
  GE-ATT's own fit, to the digit (:data:`VECTOR_COST`), except two without one, which borrow a named row
  (:data:`BORROWED_ROWS`: ``Not``, ``Broadcast``). A row is chosen by the operands' element *type*, not only their
  width: an integer type with a fit of its own uses it (GE-ATT V1 fits int32 only for ``Muls``:
  :data:`INTEGER_ROWS`), any other type the float row (4-byte types) or the half row (1-2-byte types). A ``Cast``
  is costed by its direction, source and destination type (:data:`CAST_COST`, :func:`cast_fit`); a
  ``CompareScalar`` by its mode, a ``Compare`` by its mode and by GE-ATT's alignment test on its length
  (:func:`compare_row`, :data:`COMPARE_ALIGN`). An instruction with no row is an error
  (:class:`MissingCostRow`), never a silent guess. ``beats`` is the mean beats per repeat that UB bank conflicts
  force, from the operands' UB addresses (:mod:`.ub_banks`, kernel_flavours §7; 1 when conflict-free, up to 8):
  it scales the per-repeat part ``k * n``, read as GE-ATT's conflict-free cost of one beat per repeat, and leaves the
  fixed ``b`` alone. :meth:`CostModel.vector` gives the conflict-free cost.
* **Copies (MTE2 in, MTE3 out)**: ``cycles = latency + bytes / bandwidth`` (§2.4 model 2/3). Each core's
  bandwidth is ``min(per-core cap, chip GM bandwidth / active cores / clock)``, and when a kernel both
  reads and writes GM the two directions split that share in proportion to their bytes -- this is the
  docs' rule "time = (bytes_in + bytes_out) / GM bandwidth" (§2.3) while still letting MTE2 and MTE3
  overlap. Per-core caps are the single-core measurements of the Add case study (§2.4: 43.2 GB/s in,
  51.4 GB/s out at 1.85 GHz = 23.4 and 27.8 B/cycle). MTE2 reads are rounded up to 512-byte bursts,
  MTE3 writes to 32 bytes. Latencies: GE-ATT V1 ``h`` (27 cycles in, 12 out).
* **Scalar (PIPE_S)**: one cycle to issue each API call; queue operations cost nothing themselves --
  their waits are what create the gaps in the timeline (§1.2).
* **Kernel head**: a fixed launch overhead (op head 300 + MTE2 head ``15.89 * blockDim + 882`` cycles,
  GE-ATT V1, §2.4) is reported separately, not drawn on the lanes.
* **Ascend950 (DAV_3510)**: GE-ATT's own V2 table (``v35/att/api_perf_register/perf_param_v2.cpp``, registered for
  platform "3510", :data:`GE_ATT_V2_SOURCE`) wherever it has a row, V1 elsewhere (:func:`ge_att_table`): its vector
  fits (:data:`VECTOR_COST_V2`, :data:`CAST_COST_V2` -- for every instruction the simulator models the same figures
  as V1, to the digit), its Load/Store latencies (``h`` = 160 cycles each, not V1's 27.01/12.09), op head 0 and its
  MTE2 pipe head, 1174.3 cycles when the largest copy-in block is at least 256 bytes, else 775
  (:func:`kernel_head_cycles`; no per-core term, unlike V1's).

Sanity check against the Add case study (8192x8192 half on 48 cores, double-buffered): the model
predicts ~(268 MB + 134 MB) / 1.6 TB/s = 252 us of MTE2 time vs 250.5 us measured (case 4); see
``add_case_check()`` and the performance chapter.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache, cached_property, lru_cache
from typing import Any

import numpy as np

from ..base import context as _context
from ..base.platform import SocInfo
from . import ub_banks

#: Where the figures are read: hicann/ge, the last commit holding GE-ATT (3d7dd1d40a5e, 2026-03-12; the table is the
#: same at 74573e24c43f; the ``att`` tree left the repository in 3f6bb57d82bc), directory
#: ``compiler/graph/optimize/autofuse/att/gen_model_info/api_perf_register/``.
GE_ATT_SOURCE = "hicann/ge@3d7dd1d40a5e compiler/graph/optimize/autofuse/att/gen_model_info/api_perf_register"

#: GE-ATT V1 per-call vector costs (k per element, b fixed), by the simulator's instruction, and by operand type
#: class: "half" (GE-ATT's ``float16tofloat16`` fit: 1-2-byte types), "float" (``float32tofloat32``: 4-byte types;
#: 8-byte ones at twice k), and an integer type's own fit where GE-ATT has one -- the figures exactly as
#: ``v1/perf_param_v1.cpp`` writes them (its ``kParamV1Info`` table, lines 67-557; file:line below). A row named like
#: GE-ATT's is GE-ATT's row of that name; :data:`GE_ATT_ROW` names the others. ``Compare`` and ``CompareScalar`` have
#: a row per mode (and for ``Compare`` per alignment, :func:`compare_row`), as in GE-ATT.
VECTOR_COST: dict[str, dict[str, tuple[float, float]]] = {
    "Muls":      {"half": (0.0071, 23.1006), "float": (0.0142, 23.0966), "int32": (0.0180, 20.7457)},   # :354-361
    "Adds":      {"half": (0.0071, 22.0938), "float": (0.0141, 22.0936)},                               # :76-82
    "Mul":       {"half": (0.0110, 23.1243), "float": (0.0206, 23.2291)},                               # :362-368
    "Add":       {"half": (0.0103, 22.2173), "float": (0.0206, 23.2225)},                               # :83-89
    "Maxs":      {"half": (0.0071, 20.0912), "float": (0.0141, 20.0887)},                               # :326-332
    "Mins":      {"half": (0.0071, 20.0896), "float": (0.0142, 20.0876)},                               # :340-346
    "Max":       {"half": (0.0111, 20.1200), "float": (0.0215, 20.1333)},                               # :333-339
    "Min":       {"half": (0.0111, 20.1104), "float": (0.0215, 20.1271)},                               # :347-353
    "Duplicate": {"half": (0.0078, 16.9993), "float": (0.0156, 16.9965)},                               # :291-297
    "Select":    {"half": (0.0118, 45.9656), "float": (0.0229, 43.9906)},                               # :403-409
    # the f16->f32 fit (:123); a Cast is costed by its direction (CAST_COST), this row only where none fits
    "Cast":      {"half": (0.0147, 20.1204), "float": (0.0147, 20.1204)},
    # a UB->UB DataCopy: GE-ATT's "Ub2ub" (:130-136), the node its code generator emits as DataCopy
    "Copy":      {"half": (0.0076, 11.6372), "float": (0.0152, 11.6372)},
    # GE-ATT's "Copy" (:137-143): the vector Copy API, no instruction of the simulator; borrowed by Broadcast
    "VecCopy":   {"half": (0.0078, 13.0049), "float": (0.0157, 12.9966)},
    # CompareScalar (Compares) by mode, "CompareScalar<MODE>" (:144-185): one fit per mode, no alignment split
    "CompareScalarEQ": {"half": (0.0084, 21.9204), "float": (0.0160, 21.9749)},
    "CompareScalarGE": {"half": (0.0086, 21.9025), "float": (0.0161, 21.9643)},
    "CompareScalarGT": {"half": (0.0084, 21.9200), "float": (0.0160, 21.9712)},
    "CompareScalarLE": {"half": (0.0084, 21.9210), "float": (0.0161, 21.9722)},
    "CompareScalarNE": {"half": (0.0084, 21.9114), "float": (0.0161, 22.9690)},
    "CompareScalarLT": {"half": (0.0084, 21.9381), "float": (0.0161, 22.9860)},
    # tensor-tensor Compare by mode and alignment, "Compare<MODE>Aligned/Unaligned" (:186-269); see compare_row
    "CompareEQAligned":   {"half": (0.0155, 21.0340), "float": (0.0310, 21.0316)},
    "CompareEQUnaligned": {"half": (0.0081, 21.0340), "float": (0.0157, 21.0316)},
    "CompareGEAligned":   {"half": (0.0155, 21.0279), "float": (0.0310, 21.0309)},
    "CompareGEUnaligned": {"half": (0.0079, 21.0279), "float": (0.0156, 21.0309)},
    "CompareGTAligned":   {"half": (0.0160, 20.9711), "float": (0.0310, 21.0319)},
    "CompareGTUnaligned": {"half": (0.0114, 20.9711), "float": (0.0157, 21.0319)},
    "CompareLEAligned":   {"half": (0.0155, 21.9556), "float": (0.0310, 21.0303)},
    "CompareLEUnaligned": {"half": (0.0080, 21.9556), "float": (0.0158, 21.0303)},
    "CompareLTAligned":   {"half": (0.0155, 21.0297), "float": (0.0316, 20.9940)},
    "CompareLTUnaligned": {"half": (0.0079, 21.0297), "float": (0.0173, 20.9940)},
    "CompareNEAligned":   {"half": (0.0164, 20.9123), "float": (0.0310, 21.0313)},
    "CompareNEUnaligned": {"half": (0.0115, 20.9123), "float": (0.0156, 21.0313)},
}
VEC_PIPE_HEAD = 37.37

#: Where the Ascend950's figures are read: GE-ATT's V2 parameter table, the one its platform "3510" uses
#: (``v35/optimize/platformv2.cpp:114`` registers PlatformV2 for "3510"; ``v35/att/api_perf_register/
#: ascir_api_perf_v2.cpp`` registers every API with ``perf_param_table_v2``). Same at 74573e24c43f.
GE_ATT_V2_SOURCE = "hicann/ge@3d7dd1d40a5e compiler/graph/optimize/autofuse/v35/att/api_perf_register/perf_param_v2.cpp"

#: GE-ATT V2's per-call vector fits for the simulator's instructions (``kParamV2Info``, lines 387-857; file:line
#: below), laid out as :data:`VECTOR_COST`. Every one equals its V1 row to the digit: the 950's vector unit is costed
#: with the same ``b + k * n`` fits (V2 differs from V1 in its Load/Store fits and pipe heads, below).
VECTOR_COST_V2: dict[str, dict[str, tuple[float, float]]] = {
    "Muls":      {"half": (0.0071, 23.1006), "float": (0.0142, 23.0966), "int32": (0.0180, 20.7457)},   # :674-681
    "Adds":      {"half": (0.0071, 22.0938), "float": (0.0141, 22.0936)},                               # :396-402
    "Mul":       {"half": (0.0110, 23.1243), "float": (0.0206, 23.2291)},                               # :682-688
    "Add":       {"half": (0.0103, 22.2173), "float": (0.0206, 23.2225)},                               # :403-409
    "Maxs":      {"half": (0.0071, 20.0912), "float": (0.0141, 20.0887)},                               # :646-652
    "Mins":      {"half": (0.0071, 20.0896), "float": (0.0142, 20.0876)},                               # :660-666
    "Max":       {"half": (0.0111, 20.1200), "float": (0.0215, 20.1333)},                               # :653-659
    "Min":       {"half": (0.0111, 20.1104), "float": (0.0215, 20.1271)},                               # :667-673
    "Duplicate": {"half": (0.0078, 16.9993), "float": (0.0156, 16.9965)},                               # :611-617
    "Select":    {"half": (0.0118, 45.9656), "float": (0.0229, 43.9906)},                               # :723-729
    "Cast":      {"half": (0.0147, 20.1204), "float": (0.0147, 20.1204)},               # float16tofloat32, :438-449
    "Copy":      {"half": (0.0076, 11.6372), "float": (0.0152, 11.6372)},                       # "Ub2ub", :450-456
    "VecCopy":   {"half": (0.0078, 13.0049), "float": (0.0157, 12.9966)},                        # "Copy", :457-463
    "CompareScalarEQ": {"half": (0.0084, 21.9204), "float": (0.0160, 21.9749)},                         # :464-470
    "CompareScalarGE": {"half": (0.0086, 21.9025), "float": (0.0161, 21.9643)},                         # :471-477
    "CompareScalarGT": {"half": (0.0084, 21.9200), "float": (0.0160, 21.9712)},                         # :478-484
    "CompareScalarLE": {"half": (0.0084, 21.9210), "float": (0.0161, 21.9722)},                         # :485-491
    "CompareScalarNE": {"half": (0.0084, 21.9114), "float": (0.0161, 22.9690)},                         # :492-498
    "CompareScalarLT": {"half": (0.0084, 21.9381), "float": (0.0161, 22.9860)},                         # :499-505
    "CompareEQAligned":   {"half": (0.0155, 21.0340), "float": (0.0310, 21.0316)},                      # :506-512
    "CompareEQUnaligned": {"half": (0.0081, 21.0340), "float": (0.0157, 21.0316)},                      # :513-519
    "CompareGEAligned":   {"half": (0.0155, 21.0279), "float": (0.0310, 21.0309)},                      # :520-526
    "CompareGEUnaligned": {"half": (0.0079, 21.0279), "float": (0.0156, 21.0309)},                      # :527-533
    "CompareGTAligned":   {"half": (0.0160, 20.9711), "float": (0.0310, 21.0319)},                      # :534-540
    "CompareGTUnaligned": {"half": (0.0114, 20.9711), "float": (0.0157, 21.0319)},                      # :541-547
    "CompareLEAligned":   {"half": (0.0155, 21.9556), "float": (0.0310, 21.0303)},                      # :548-554
    "CompareLEUnaligned": {"half": (0.0080, 21.9556), "float": (0.0158, 21.0303)},                      # :555-561
    "CompareLTAligned":   {"half": (0.0155, 21.0297), "float": (0.0316, 20.9940)},                      # :562-568
    "CompareLTUnaligned": {"half": (0.0079, 21.0297), "float": (0.0173, 20.9940)},                      # :569-575
    "CompareNEAligned":   {"half": (0.0164, 20.9123), "float": (0.0310, 21.0313)},                      # :576-582
    "CompareNEUnaligned": {"half": (0.0115, 20.9123), "float": (0.0156, 21.0313)},                      # :583-589
}

#: GE-ATT V2's ``Cast`` fits by direction (``"Cast"``, :438-449): the same five as V1.
CAST_COST_V2: dict[tuple[str, str], tuple[float, float]] = {
    ("float16", "float32"): (0.0147, 20.1204),
    ("float32", "float16"): (0.0087, 20.4393),
    ("float16", "uint8"):   (0.0083, 19.9408),
    ("uint8", "float16"):   (0.0102, 46.512),
    ("int64", "int32"):     (0.0332, 18.8690),
}

#: GE-ATT V2's copy and head figures: the ``h`` (fixed cycles) of its ``Load`` (:796-805) and ``Store`` (:826-835)
#: LoadStoreFunc fits -- ``cycles = data_size / (a + b / blockDim) + h`` (``utils/api_perf_utils.cpp:289-318``); the
#: simulator keeps its own bandwidth model and takes ``h`` as the copy latency, as for V1 --, its op head
#: (``GetOpHeadCost``, :377-380) and MTE2 pipe head (``GetMTE2PipeHead``, :16-19 and :22-53: the normal cost when the
#: largest Load's innermost block, last dim times element size, is at least ``kLoadThreshold`` = 256 bytes, else the
#: small one). Its MTE3 pipe head (571, :20) is not used, as V1's (497.36) is not.
V2_LOAD_LATENCY = 160.0
V2_STORE_LATENCY = 160.0
V2_OP_HEAD = 0.0
V2_MTE2_HEAD_NORMAL = 1174.3
V2_MTE2_HEAD_SMALL = 775.0
V2_MTE2_HEAD_THRESHOLD = 256


@cache
def ge_att_table(arch: Any) -> str:
    """Which GE-ATT parameter table costs a SoC of NpuArch ``arch``: "V2" for DAV_3510 (the Ascend950: GE-ATT's
    PlatformV2 is registered for "3510"), "V1" for every other architecture."""
    return "V2" if int(arch) == 3510 else "V1"

#: GE-ATT's name of a VECTOR_COST row that the simulator names otherwise (every other row has GE-ATT's name).
GE_ATT_ROW: dict[str, str] = {"Copy": "Ub2ub", "VecCopy": "Copy", "Cast": "Cast (float16tofloat32)"}

#: The compare modes by their AscendC value (``CMPMODE``: LT=0 ... NE=5), as GE-ATT spells them in its row names.
CMP_MODES: tuple[str, ...] = ("LT", "GT", "EQ", "LE", "GE", "NE")

#: GE-ATT's condition for its "Aligned" Compare fits (``ascendc_api_perf.cpp`` ``GetAlignedCase``, lines 20-42, and
#: ``RptElementwisePerf``, 44-65): ``data_size % kRptSize == 0`` with ``kRptSize = 512`` and ``data_size`` = the
#: element count times ``kRptEleMap[dtype]`` -- the elements per 256-byte repeat (256 int8, 128 half, 64 float, 32
#: int64; ``base/att_const_values.h:97-108``), not the bytes per element the formula comments' "data_size % 512B"
#: suggest. So a half Compare is "aligned" when its count is a multiple of 4, a float one a multiple of 8: every
#: whole-repeat count is. (GE-ATT's branch for a symbolic length tests ``% 256`` instead, line 39; the simulator's
#: counts are always known, so its constant branch, lines 29-36, is the one that applies.)
COMPARE_ALIGN = 512


def compare_aligned(n: int, itemsize: int) -> bool:
    """GE-ATT's test for its "Aligned" Compare fit (:data:`COMPARE_ALIGN`): ``n * (256 // itemsize) % 512 == 0``."""
    return not n * (256 // itemsize) % COMPARE_ALIGN


@cache
def compare_row(api: str, mode: int, n: int, itemsize: int) -> str:
    """The VECTOR_COST row of a ``CompareScalar`` (``"CompareScalar" + mode``) or ``Compare`` (``"Compare" + mode +
    "Aligned"/"Unaligned"``, :func:`compare_aligned` on its ``n`` elements of ``itemsize`` bytes) with compare mode
    ``mode`` (AscendC's CMPMODE value). Cached: it is asked for every compare of every tile."""
    name = CMP_MODES[mode]
    if api == "CompareScalar":
        return "CompareScalar" + name
    if api == "Compare":
        return "Compare" + name + ("Aligned" if compare_aligned(n, itemsize) else "Unaligned")
    raise ValueError(f"compare_row costs Compare or CompareScalar, not {api!r}")


#: The VECTOR_COST key of an *integer* operand type's own fit, by its width in bytes: a row with that key costs
#: integer operands of that width with it (int32 Muls: 0.0180 / 20.7457, not float32's 0.0142 / 23.0966); a row
#: without one costs them like floating-point operands of the same width -- GE-ATT's own rule (``GetPerf`` falls back
#: from a missing ``int32toint32`` entry to ``float32tofloat32``, ``utils/api_perf_utils.cpp:67-84, 583-587``).
INTEGER_ROWS: dict[int, str] = {4: "int32"}

#: Vector instructions GE-ATT V1 has no fit for, costed with another row: ``Not`` (a one-input bitwise pass over
#: 16-bit elements; GE-ATT fits only the two-input ``And``/``Or``) like a UB->UB ``Copy``; the high-level
#: ``Broadcast`` (GE-ATT V1 fits only basic APIs) like GE-ATT's vector ``Copy`` API (``VecCopy``) over its
#: *destination* elements -- GE-ATT itself costs a broadcast with that fit (``v1/ascir_api_perf_v1.cpp:426-446``,
#: ``BroadcastOuter``); on the 950 it is one vector load/gather and store pass over dst (AD
#: ``impl/adv_api/detail/pad/broadcast/broadcast_3510_impl.h``). Tensor-tensor ``Max``/``Min`` have their own fits.
BORROWED_ROWS: dict[str, str] = {"Not": "Copy", "Broadcast": "VecCopy"}

#: GE-ATT V1's fits of the math instructions (:mod:`.instructions_math`), laid out as :data:`VECTOR_COST` and kept
#: apart from it (its rows are pinned as the first instructions' set) -- the figures as ``v1/perf_param_v1.cpp`` writes
#: them (file:line below); V2 (``perf_param_v2.cpp``, the 950) has the same figures for each, at the line in brackets.
#: GE-ATT fits ``Or`` for ``uint16touint16`` only: that is its 1-2-byte row; its 4-byte row is a stand-in, the same
#: fixed cost and twice k (half the elements per 256-byte repeat).
MATH_COST: dict[str, dict[str, tuple[float, float]]] = {
    "Sub":        {"half": (0.0107, 22.1226), "float": (0.0213, 22.1254)},      # :431-435 [:754-755]
    "Div":        {"half": (0.0460, 29.1233), "float": (0.0454, 29.0892)},      # :284-288 [:607-608]
    "Abs":        {"half": (0.0077, 20.0153), "float": (0.0147, 20.0592)},      # :69-73 [:392-393]
    "Exp":        {"half": (0.0311, 28.0144), "float": (0.0307, 28.0376)},      # :305-309 [:628-629]
    "Sqrt":       {"half": (0.0312, 29.0056), "float": (0.0313, 28.9961)},      # :424-428 [:747-748]
    "Rsqrt":      {"half": (0.0071, 21.0970), "float": (0.0143, 21.0979)},      # :396-400 [:719-720]
    "Reciprocal": {"half": (0.0078, 21.0076), "float": (0.0146, 21.0639)},      # :382-386 [:705-706]
    "Relu":       {"half": (0.0077, 20.0173), "float": (0.0154, 20.0189)},      # :389-393 [:712-713]
    "And":        {"half": (0.0107, 17.1393), "float": (0.0112, 17.5611)},      # :90-94 [:413-414]
    "Or":         {"half": (0.0132, 12.4018), "float": (0.0264, 12.4018)},      # :369-372 [:692] (float: stand-in)
    # n = the elements of the repeats read (repeatTime * 256 / sizeof(T))
    "WholeReduceSum": {"half": (0.0547, 35.0021), "float": (0.1094, 32.0029)},  # :459-463 [:782-783]
    "WholeReduceMax": {"half": (0.0547, 21.0027), "float": (0.1094, 20.0051)},  # :445-449 [:768-769]
    "WholeReduceMin": {"half": (0.0547, 21.0056), "float": (0.1094, 20.0068)},  # :452-456 [:775-776]
    "BlockReduceMax": {"half": (0.0547, 18.0042), "float": (0.0198, 16.7401)},  # :97-101 [V2 same]
    "BlockReduceMin": {"half": (0.0547, 18.0092), "float": (0.0198, 16.7413)},  # :104-108 [V2 same]
    # the high-level APIs, costed whole only on the 950 (one register loop); elsewhere their composition's rows
    "Sigmoid":    {"half": (0.1011, 116.0436), "float": (0.1256, 115.9747)},    # :410-414 [:733-734]
    "Tanh":       {"half": (0.1976, 181.6919), "float": (0.1570, 153.9298)},    # :438-442 [:761-762]
}
#: Math instructions GE-ATT (V1 and V2) has no fit for, costed with a named row: ``Ln`` like ``Exp`` (the other
#: transcendental of the vector unit), ``LeakyRelu`` like ``Muls`` (one source and a scalar, a multiply), ``Axpy``
#: like ``Mul`` (two reads -- src and dst -- and a multiply), ``Subs`` like ``Adds``, ``Divs`` like ``Div``, the
#: high-level ``Log`` (one ``Ln``) like ``Exp``, ``BlockReduceSum`` (GE-ATT fits only BlockReduceMax/Min) like
#: ``BlockReduceMax``, the same per-block pass, and the 950's one-loop ``Erf`` (a clipped rational function in float,
#: GE-ATT has no fit) like ``Tanh`` (a clip, a transcendental and a division in float).
MATH_BORROWED: dict[str, str] = {"Ln": "Exp", "LeakyRelu": "Muls", "Axpy": "Mul", "Subs": "Adds", "Divs": "Div",
                                 "Log": "Exp", "BlockReduceSum": "BlockReduceMax", "Erf": "Tanh"}

#: GE-ATT V1's ``Cast`` fits (k per element, b fixed) by direction, (source type, destination type) in GE-ATT's own
#: type names -- all the conversions it has a fit for (``v1/perf_param_v1.cpp``, ``"Cast"``; ascendc_facts §2.5).
#: Narrowing f32->f16 is cheaper per element than widening f16->f32: the width alone cannot choose the row. GE-ATT
#: also lists f16->f16 and f32->f32 as ``{k: 0, b: 0}``: a Cast to the same type that its graphs drop, not a fit.
#: :func:`cast_fit` says which direction each conversion is costed with; ``VECTOR_COST["Cast"]`` (the f16->f32 fit)
#: costs the directions without one.
CAST_COST: dict[tuple[str, str], tuple[float, float]] = {           # perf_param_v1.cpp:118-129
    ("float16", "float32"): (0.0147, 20.1204),
    ("float32", "float16"): (0.0087, 20.4393),
    ("float16", "uint8"):   (0.0083, 19.9408),
    ("uint8", "float16"):   (0.0102, 46.512),
    ("int64", "int32"):     (0.0332, 18.8690),
}

#: GE-ATT's stand-in type for a type pair its table has no fit for (``GetPerf`` / ``GetDefaultDataType``, hicann/ge
#: ``.../att/gen_model_info/api_perf_register/utils/api_perf_utils.cpp``): 1-2-byte integers -> float16, 4-8-byte
#: integers and float32 -> float32. GE-ATT sends every other type to
#: float16; here only the other floating-point types of at most 2 bytes (bfloat16, the float8 types) go there -- a
#: float64 read as float16 would be no rule at all, so it has no stand-in.
GE_DEFAULT_TYPE: dict[str, str] = {"int8": "float16", "uint8": "float16", "int16": "float16", "uint16": "float16",
                                   "int32": "float32", "uint32": "float32", "int64": "float32", "uint64": "float32",
                                   "float32": "float32"}

#: Per architecture with a UB bank model: the cost of each vector instruction already met, by (cost row -- the api,
#: or a compare's mode/alignment row --, width, integer, Cast direction, count, operand offsets and widths) -- filled
#: by ``issue.vector_done``, emptied by :func:`clear_caches`.
VECTOR_MEMO: dict[Any, dict[tuple[Any, ...], tuple[float, int]]] = {arch: {} for arch in ub_banks.MODELLED}

#: Per-core copy caps in bytes/cycle (single-core Add measurements, A2) and latencies (GE-ATT V1).
MTE2_CAP_B_PER_CYCLE = 23.4
MTE3_CAP_B_PER_CYCLE = 27.8
MTE2_LATENCY = 27.0
MTE3_LATENCY = 12.0
ISSUE_CYCLES = 1.0
OP_HEAD = 300.0


def kernel_head_cycles(block_dim: int, soc: SocInfo | None = None, max_block_bytes: int = 0) -> float:
    """Launch overhead outside the lanes: op head + MTE2 start-up. GE-ATT V1 (small loads): ``300 + 15.89 *
    blockDim + 882``; on a SoC costed with V2 (:func:`ge_att_table`, the Ascend950): ``0 + 1174.3`` when the largest
    copy-in block is at least 256 bytes, else ``0 + 775``, whatever the core count."""
    if soc is not None and ge_att_table(soc.npu_arch) == "V2":
        head = V2_MTE2_HEAD_NORMAL if max_block_bytes >= V2_MTE2_HEAD_THRESHOLD else V2_MTE2_HEAD_SMALL
        return V2_OP_HEAD + head
    return OP_HEAD + 15.89 * block_dim + 882.0


@dataclass
class CostModel:
    """Per-launch constants: the SoC, the active core count and the in/out byte split."""
    soc: SocInfo
    block_dim: int
    in_fraction: float = 0.5        # share of GM traffic that is reads (set from the kernel's GM args)
    #: :meth:`copy_in`'s and :meth:`copy_out`'s memo, cycles by byte count. Public so that DataCopy's fast path
    #: can read it inline (``memo.get(nbytes)``, the method only on a miss): a method call per copy costs ~1% of a
    #: copy-only launch. Only those two methods write it.
    copy_in_memo: dict[int, float] = field(default_factory=dict, repr=False)
    copy_out_memo: dict[int, float] = field(default_factory=dict, repr=False)

    @property
    def clock_hz(self) -> float:
        return self.soc.clock_mhz * 1e6

    @cached_property
    def table(self) -> str:
        """The GE-ATT table this SoC is costed with (:func:`ge_att_table`)."""
        return ge_att_table(self.soc.npu_arch)

    @cached_property
    def mte2_latency(self) -> float:
        """Fixed cycles of a GM->UB copy: GE-ATT's Load ``h`` (V1 :data:`MTE2_LATENCY`, V2 160)."""
        return V2_LOAD_LATENCY if self.table == "V2" else MTE2_LATENCY

    @cached_property
    def mte3_latency(self) -> float:
        """Fixed cycles of a UB->GM copy: GE-ATT's Store ``h`` (V1 :data:`MTE3_LATENCY`, V2 160)."""
        return V2_STORE_LATENCY if self.table == "V2" else MTE3_LATENCY

    def head_cycles(self) -> float:
        """The kernel head of this launch (:func:`kernel_head_cycles`), the largest copy-in costed so far standing
        for GE-ATT V2's largest Load block."""
        return kernel_head_cycles(self.block_dim, self.soc, max(self.copy_in_memo, default=0))

    @cached_property
    def gm_share_b_per_cycle(self) -> float:
        return self.soc.gm_bandwidth_gbps * 1e9 / max(self.block_dim, 1) / self.clock_hz

    @cached_property
    def mte2_b_per_cycle(self) -> float:
        return min(MTE2_CAP_B_PER_CYCLE, self.gm_share_b_per_cycle * max(self.in_fraction, 1e-6))

    @cached_property
    def mte3_b_per_cycle(self) -> float:
        return min(MTE3_CAP_B_PER_CYCLE, self.gm_share_b_per_cycle * max(1.0 - self.in_fraction, 1e-6))

    def copy_in(self, nbytes: int) -> float:
        """MTE2 cycles of one GM->UB copy: latency + whole 512-byte bursts at this core's bandwidth."""
        cached = self.copy_in_memo.get(nbytes)
        if cached is None:
            cached = self.mte2_latency + math.ceil(nbytes / 512) * 512 / self.mte2_b_per_cycle
            self.copy_in_memo[nbytes] = cached
        return cached

    def copy_out(self, nbytes: int) -> float:
        """MTE3 cycles of one UB->GM copy: latency + whole 32-byte blocks at this core's bandwidth."""
        cached = self.copy_out_memo.get(nbytes)
        if cached is None:
            cached = self.mte3_latency + math.ceil(nbytes / 32) * 32 / self.mte3_b_per_cycle
            self.copy_out_memo[nbytes] = cached
        return cached

    def vector(self, api: str, n: int, itemsize: int, beats_per_repeat: float = 1.0, integer: bool = False,
               cast_dir: tuple[str, str] | None = None) -> float:
        """PIPE_V cycles of one ``api`` call on ``n`` elements of ``itemsize`` bytes (of an integer type when
        ``integer``; a ``Cast`` costed with the fit of direction ``cast_dir``, :func:`cast_fit`): ``b + k * n`` when its
        repeats are conflict-free, ``b + k * n * beats_per_repeat`` when UB bank conflicts stretch them
        (:mod:`.ub_banks`). The row comes from this SoC's GE-ATT table (:func:`ge_att_table`)."""
        return vector_cycles(api, itemsize, n, beats_per_repeat, integer, cast_dir, self.table)

    @cached_property
    def vector_memo(self) -> dict[tuple[Any, ...], tuple[float, int]] | None:
        """The vector instructions' (cycles, bank-conflict beats) by instruction, count and operand layout, shared by
        every launch on this SoC's architecture (:data:`VECTOR_MEMO`); None where no bank model applies (or inside
        :func:`without_bank_conflicts`)."""
        return VECTOR_MEMO.get(self.soc.npu_arch) if _context.current().bank_conflicts else None

    def us(self, cycles: float) -> float:
        return cycles / self.soc.clock_mhz


class MissingCostRow(LookupError):
    """A vector instruction the cost model has no row for: add one to VECTOR_COST (or BORROWED_ROWS)."""


@cache
def cast_fit(src: np.dtype, dst: np.dtype) -> tuple[str, str] | None:
    """The :data:`CAST_COST` direction a ``Cast`` from ``src`` to ``dst`` is costed with, or None for the width row
    ``VECTOR_COST["Cast"]``. In order:

    1. its own fit (f16->f32, f32->f16, f16->u8, u8->f16, i64->i32);
    2. the fit of a direction with the same kinds (integer or floating point) and widths on both sides -- the same
       kind of conversion, apart from the signedness or float format: int8 <-> float16 like uint8 <-> float16,
       bfloat16 <-> float32 like float16 <-> float32, uint64 -> uint32 like int64 -> int32;
    3. GE-ATT's own rule for a type pair it has no fit for: both types replaced by their stand-ins
       (:data:`GE_DEFAULT_TYPE`), when that gives a conversion between two different types with a fit -- int32 ->
       float16 like float32 -> float16, float16 -> int32 like float16 -> float32;
    4. otherwise None: same-width conversions (int32 <-> float32, int16 <-> float16, bfloat16 <-> float16, a
       rounding float32 -> float32), float64, int32 <-> int64. GE-ATT's rule lands these on its zero-cost same-type
       entries, but each is a real pass over the data, so they keep the row every Cast had before the directions:
       the f16->f32 fit, twice its k for an 8-byte operand. No source gives a figure for them.

    Cached: the Cast call site asks once per instruction (``np.dtype.name`` alone costs more than a cached call)."""
    s, d = src.name, dst.name
    if (s, d) in CAST_COST:
        return s, d
    shape = (_kind(src), src.itemsize, _kind(dst), dst.itemsize)
    for fs, fd in CAST_COST:
        a, b = np.dtype(fs), np.dtype(fd)
        if (_kind(a), a.itemsize, _kind(b), b.itemsize) == shape:
            return fs, fd
    s, d = _stand_in(src), _stand_in(dst)
    if s is not None and d is not None and s != d and (s, d) in CAST_COST:
        return s, d
    return None


def _kind(t: np.dtype) -> str:
    """"i" for an integer type (either signedness), "f" for a floating-point one (ml_dtypes' bfloat16 and float8 types
    have numpy kind "V"), else numpy's kind."""
    return "i" if t.kind in "iu" else "f" if t.kind in "fV" else t.kind


def _stand_in(t: np.dtype) -> str | None:
    """GE-ATT's stand-in type name for ``t`` (:data:`GE_DEFAULT_TYPE`), None for a type it has none for here."""
    if t.name in GE_DEFAULT_TYPE:
        return GE_DEFAULT_TYPE[t.name]
    return "float16" if t.itemsize <= 2 and _kind(t) == "f" else None       # float16, bfloat16, the float8 types


@cache
def _vector_coeffs(api: str, itemsize: int, integer: bool = False,
                   cast_dir: tuple[str, str] | None = None, table: str = "V1") -> tuple[float, float]:
    """(k, b) for an API and operand type: a ``Cast``'s direction fit when ``cast_dir`` names one (:data:`CAST_COST`,
    chosen by :func:`cast_fit`); an integer type's own row where the API has one (:data:`INTEGER_ROWS`: int32
    ``Muls``), else the float row for 4-byte types, the half row for 1-2-byte types, twice the float k for 8-byte
    types. ``integer`` is what tells int32 from float32, ``cast_dir`` f32->f16 from f16->f32: the width alone cannot."""
    name = BORROWED_ROWS.get(api) or MATH_BORROWED.get(api, api)
    if table == "V2":                       # GE-ATT V2 where it has the row, V1 elsewhere
        if cast_dir is not None:
            return CAST_COST_V2.get(cast_dir) or CAST_COST[cast_dir]
        row = VECTOR_COST_V2.get(name) or VECTOR_COST.get(name) or MATH_COST.get(name)
    elif cast_dir is not None:
        return CAST_COST[cast_dir]
    else:
        row = VECTOR_COST.get(name) or MATH_COST.get(name)
    if row is None:
        if api in ("Compare", "CompareScalar"):
            raise MissingCostRow(f"{api} is costed by its compare mode (and, for Compare, its length): ask "
                                 f"cost_model.compare_row({api!r}, mode, n, itemsize) for its row")
        raise MissingCostRow(f"the cost model has no row for the vector instruction {api!r}: add its GE-ATT fit "
                             f"(k per element, b fixed, per 'half'/'float') to cost_model.VECTOR_COST, or name the "
                             f"row it borrows in cost_model.BORROWED_ROWS; rows: {', '.join(VECTOR_COST)}")
    if integer:
        own = row.get(INTEGER_ROWS.get(itemsize, ""))
        if own is not None:
            return own
    k, b = row["float"] if itemsize >= 4 else row["half"]
    return (2 * k if itemsize == 8 else k), b


@lru_cache(maxsize=4096)
def vector_cycles(api: str, itemsize: int, n: int, beats_per_repeat: float = 1.0, integer: bool = False,
                  cast_dir: tuple[str, str] | None = None, table: str = "V1") -> float:
    """``b + k * n * beats_per_repeat`` for one vector instruction (MissingCostRow if ``api`` has no row).

    ``itemsize``, ``integer`` (the operands are of an integer type) and, for a ``Cast``, ``cast_dir`` (the direction
    whose fit it uses, :func:`cast_fit`) pick the row (:func:`_vector_coeffs`).
    ``beats_per_repeat`` is the mean number of beats its 256-byte repeats take under the UB bank rules
    (:mod:`.ub_banks`; 1.0 = conflict-free). GE-ATT's ``k * n`` is the per-repeat part -- about one beat per
    repeat -- so it scales by the beats; ``b`` (call issue, pipeline fill) does not. Cached: a kernel repeats the
    same few tile sizes and layouts, and this runs for every vector instruction of every tile. ``table``: the GE-ATT
    table of the SoC (:func:`ge_att_table`: "V2" on the Ascend950, "V1" elsewhere)."""
    k, b = _vector_coeffs(api, itemsize, integer, cast_dir, table)
    return b + k * n * beats_per_repeat


@contextlib.contextmanager
def without_bank_conflicts() -> Iterator[None]:
    """Launches started inside cost every vector instruction as if its repeats were conflict-free (one beat each):
    the what-if "how much do this layout's UB bank conflicts cost?" (``ub_banks``). Events then record 0.
    Thread-safe: a switch of the simulation context (``base.context``), read once per launch."""
    with _context.scoped(bank_conflicts=False):
        yield


def clear_caches() -> None:
    """Forget cached vector costs (after editing VECTOR_COST(_V2), CAST_COST(_V2), BORROWED_ROWS or COMPARE_ALIGN at
    run time)."""
    vector_cycles.cache_clear()
    _vector_coeffs.cache_clear()
    cast_fit.cache_clear()
    compare_row.cache_clear()
    for memo in VECTOR_MEMO.values():
        memo.clear()
    ub_banks.clear_caches()


def add_case_check(soc: SocInfo) -> dict[str, float]:
    """The ascendc_facts §2.7 case 4 (Add, 8192x8192 half, 48 cores, double buffer) under this model:
    MTE2-bound time in microseconds, to compare with the measured 250.5 us."""
    n = 8192 * 8192
    bytes_in, bytes_out = 2 * n * 2, n * 2
    model = CostModel(soc, 48, in_fraction=bytes_in / (bytes_in + bytes_out))
    per_core_in = bytes_in / 48
    tile = 16384 * 2
    tiles = per_core_in / tile
    cycles = tiles * model.copy_in(tile)
    return {"mte2_us": model.us(cycles), "measured_us": 250.53}
