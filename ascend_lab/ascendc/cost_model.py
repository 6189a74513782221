"""A small, documented cost model: how many cycles each instruction occupies its pipe.

Sources (``shared/reference/ascendc_facts.md`` Part 2) and the choices made here:

* **Vector (PIPE_V)**: ``cycles = b + k * n * beats`` per API call, n = elements, from Huawei's GE-ATT V1 fits
  (§2.5): about one 256-byte repeat per cycle plus 17-46 cycles fixed cost. A row is chosen by the operands'
  element *type*, not only their width: an integer type with a fit of its own uses it (GE-ATT V1 fits int32
  only for ``Muls``: :data:`INTEGER_ROWS`), any other type the float row (4-byte types) or the half row
  (1-2-byte types). A ``Cast`` is costed by its direction, source and destination type (:data:`CAST_COST`,
  :func:`cast_fit`). An instruction with no row is an error
  (:class:`MissingCostRow`), never a silent guess; the few without a fit of their own borrow a named row
  (:data:`BORROWED_ROWS`). ``beats`` is the mean beats per repeat that UB bank conflicts force, from the
  operands' UB addresses (:mod:`.ub_banks`, kernel_flavours §7; 1 when conflict-free, up to 8): it scales
  the per-repeat part ``k * n``, read as GE-ATT's conflict-free cost of one beat per repeat, and leaves the
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

from ..base.platform import SocInfo
from . import ub_banks

#: GE-ATT V1 per-call vector costs (k per element, b fixed), by API and operand type class: "half" (1-2-byte types),
#: "float" (4-byte types; 8-byte ones at twice k), and an integer type's own fit where GE-ATT has one.
VECTOR_COST: dict[str, dict[str, tuple[float, float]]] = {
    "Muls":          {"half": (0.0071, 23.10), "float": (0.0142, 23.10), "int32": (0.0180, 20.75)},
    "Adds":          {"half": (0.0071, 22.09), "float": (0.0141, 22.09)},
    "Mul":           {"half": (0.0110, 23.12), "float": (0.0206, 23.23)},
    "Add":           {"half": (0.0103, 22.22), "float": (0.0206, 23.22)},
    "Maxs":          {"half": (0.0077, 20.0), "float": (0.0154, 20.0)},
    "Mins":          {"half": (0.0077, 20.0), "float": (0.0154, 20.0)},
    "Duplicate":     {"half": (0.0078, 17.00), "float": (0.0156, 17.00)},
    "CompareScalar": {"half": (0.0084, 21.9), "float": (0.0160, 22.5)},
    "Compare":       {"half": (0.0079, 21.0), "float": (0.0156, 21.0)},
    "Select":        {"half": (0.0118, 45.97), "float": (0.0229, 43.99)},
    "Cast":          {"half": (0.0147, 20.12), "float": (0.0147, 20.12)},     # f16->f32; by direction: CAST_COST
    "Copy":          {"half": (0.0078, 17.00), "float": (0.0156, 17.00)},
}
VEC_PIPE_HEAD = 37.37

#: The VECTOR_COST key of an *integer* operand type's own fit, by its width in bytes: a row with that key costs
#: integer operands of that width with it (int32 Muls: 0.0180 / 20.75, not float32's 0.0142 / 23.10); a row
#: without one costs them like floating-point operands of the same width.
INTEGER_ROWS: dict[int, str] = {4: "int32"}

#: Vector instructions GE-ATT V1 has no fit for, costed with another API's row: ``Not`` (a one-input
#: bitwise pass over 16-bit elements) like a UB->UB ``Copy``; tensor-tensor ``Min``/``Max`` (two inputs,
#: one output per element) like ``Add``; the high-level ``Broadcast`` (no measured figure: GE-ATT V1 fits only
#: basic APIs) like a UB->UB ``Copy`` of its *destination* elements -- on the 950 it is one vector load/gather
#: and store pass over dst (AD ``impl/adv_api/detail/pad/broadcast/broadcast_3510_impl.h``), and an un-broadcast
#: call is literally ``DataCopy`` (``broadcast_common_impl.h``, srcSize == dstSize).
BORROWED_ROWS: dict[str, str] = {"Not": "Copy", "Min": "Add", "Max": "Add", "Broadcast": "Copy"}

#: GE-ATT V1's ``Cast`` fits (k per element, b fixed) by direction, (source type, destination type) in GE-ATT's own
#: type names -- all the conversions it has a fit for (``v1/perf_param_v1.cpp``, ``"Cast"``; ascendc_facts §2.5).
#: Narrowing f32->f16 is cheaper per element than widening f16->f32: the width alone cannot choose the row. GE-ATT
#: also lists f16->f16 and f32->f32 as ``{k: 0, b: 0}``: a Cast to the same type that its graphs drop, not a fit.
#: :func:`cast_fit` says which direction each conversion is costed with; ``VECTOR_COST["Cast"]`` (the f16->f32 fit)
#: costs the directions without one.
CAST_COST: dict[tuple[str, str], tuple[float, float]] = {
    ("float16", "float32"): (0.0147, 20.12),
    ("float32", "float16"): (0.0087, 20.44),
    ("float16", "uint8"):   (0.0083, 19.94),
    ("uint8", "float16"):   (0.0102, 46.51),
    ("int64", "int32"):     (0.0332, 18.87),
}

#: GE-ATT's stand-in type for a type pair its table has no fit for (``GetPerf`` / ``GetDefaultDataType``, hicann/ge
#: ``.../att/gen_model_info/api_perf_register/utils/api_perf_utils.cpp``): 1-2-byte integers -> float16, 4-8-byte
#: integers and float32 -> float32. GE-ATT sends every other type to
#: float16; here only the other floating-point types of at most 2 bytes (bfloat16, the float8 types) go there -- a
#: float64 read as float16 would be no rule at all, so it has no stand-in.
GE_DEFAULT_TYPE: dict[str, str] = {"int8": "float16", "uint8": "float16", "int16": "float16", "uint16": "float16",
                                   "int32": "float32", "uint32": "float32", "int64": "float32", "uint64": "float32",
                                   "float32": "float32"}

#: Per architecture with a UB bank model: the cost of each vector instruction already met, by (api, width, integer,
#: Cast direction, count, operand offsets and widths) -- filled by ``instructions._vector_done``, emptied by
#: :func:`clear_caches`.
VECTOR_MEMO: dict[Any, dict[tuple[Any, ...], tuple[float, int]]] = {arch: {} for arch in ub_banks.MODELLED}

#: Per-core copy caps in bytes/cycle (single-core Add measurements, A2) and latencies (GE-ATT V1).
MTE2_CAP_B_PER_CYCLE = 23.4
MTE3_CAP_B_PER_CYCLE = 27.8
MTE2_LATENCY = 27.0
MTE3_LATENCY = 12.0
ISSUE_CYCLES = 1.0
OP_HEAD = 300.0


def kernel_head_cycles(block_dim: int) -> float:
    """Launch overhead outside the lanes: op head + MTE2 start-up (GE-ATT V1, small loads)."""
    return OP_HEAD + 15.89 * block_dim + 882.0


@dataclass
class CostModel:
    """Per-launch constants: the SoC, the active core count and the in/out byte split."""
    soc: SocInfo
    block_dim: int
    in_fraction: float = 0.5        # share of GM traffic that is reads (set from the kernel's GM args)
    _in_cache: dict[int, float] = field(default_factory=dict, repr=False)     # copy costs by byte count
    _out_cache: dict[int, float] = field(default_factory=dict, repr=False)

    @property
    def clock_hz(self) -> float:
        return self.soc.clock_mhz * 1e6

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
        cached = self._in_cache.get(nbytes)
        if cached is None:
            cached = self._in_cache[nbytes] = MTE2_LATENCY + math.ceil(nbytes / 512) * 512 / self.mte2_b_per_cycle
        return cached

    def copy_out(self, nbytes: int) -> float:
        """MTE3 cycles of one UB->GM copy: latency + whole 32-byte blocks at this core's bandwidth."""
        cached = self._out_cache.get(nbytes)
        if cached is None:
            cached = self._out_cache[nbytes] = MTE3_LATENCY + math.ceil(nbytes / 32) * 32 / self.mte3_b_per_cycle
        return cached

    def vector(self, api: str, n: int, itemsize: int, beats_per_repeat: float = 1.0, integer: bool = False,
               cast_dir: tuple[str, str] | None = None) -> float:
        """PIPE_V cycles of one ``api`` call on ``n`` elements of ``itemsize`` bytes (of an integer type when
        ``integer``; a ``Cast`` costed with the fit of direction ``cast_dir``, :func:`cast_fit`): ``b + k * n`` when its
        repeats are conflict-free, ``b + k * n * beats_per_repeat`` when UB bank conflicts stretch them
        (:mod:`.ub_banks`)."""
        return vector_cycles(api, itemsize, n, beats_per_repeat, integer, cast_dir)

    @cached_property
    def vector_memo(self) -> dict[tuple[Any, ...], tuple[float, int]] | None:
        """The vector instructions' (cycles, bank-conflict beats) by instruction, count and operand layout, shared by
        every launch on this SoC's architecture (:data:`VECTOR_MEMO`); None where no bank model applies (or inside
        :func:`without_bank_conflicts`)."""
        return VECTOR_MEMO.get(self.soc.npu_arch) if _banks_on else None

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
                   cast_dir: tuple[str, str] | None = None) -> tuple[float, float]:
    """(k, b) for an API and operand type: a ``Cast``'s direction fit when ``cast_dir`` names one (:data:`CAST_COST`,
    chosen by :func:`cast_fit`); an integer type's own row where the API has one (:data:`INTEGER_ROWS`: int32
    ``Muls``), else the float row for 4-byte types, the half row for 1-2-byte types, twice the float k for 8-byte
    types. ``integer`` is what tells int32 from float32, ``cast_dir`` f32->f16 from f16->f32: the width alone cannot."""
    if cast_dir is not None:
        return CAST_COST[cast_dir]
    row = VECTOR_COST.get(BORROWED_ROWS.get(api, api))
    if row is None:
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
                  cast_dir: tuple[str, str] | None = None) -> float:
    """``b + k * n * beats_per_repeat`` for one vector instruction (MissingCostRow if ``api`` has no row).

    ``itemsize``, ``integer`` (the operands are of an integer type) and, for a ``Cast``, ``cast_dir`` (the direction
    whose fit it uses, :func:`cast_fit`) pick the row (:func:`_vector_coeffs`).
    ``beats_per_repeat`` is the mean number of beats its 256-byte repeats take under the UB bank rules
    (:mod:`.ub_banks`; 1.0 = conflict-free). GE-ATT's ``k * n`` is the per-repeat part -- about one beat per
    repeat -- so it scales by the beats; ``b`` (call issue, pipeline fill) does not. Cached: a kernel repeats the
    same few tile sizes and layouts, and this runs for every vector instruction of every tile."""
    k, b = _vector_coeffs(api, itemsize, integer, cast_dir)
    return b + k * n * beats_per_repeat


_banks_on = True


@contextlib.contextmanager
def without_bank_conflicts() -> Iterator[None]:
    """Launches started inside cost every vector instruction as if its repeats were conflict-free (one beat each):
    the what-if "how much do this layout's UB bank conflicts cost?" (``ub_banks``). Events then record 0."""
    global _banks_on
    before, _banks_on = _banks_on, False
    try:
        yield
    finally:
        _banks_on = before


def clear_caches() -> None:
    """Forget cached vector costs (after editing VECTOR_COST, CAST_COST or BORROWED_ROWS at run time)."""
    vector_cycles.cache_clear()
    _vector_coeffs.cache_clear()
    cast_fit.cache_clear()
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
