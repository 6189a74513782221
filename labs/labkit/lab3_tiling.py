"""Lab 3 -- a HardSigmoidGrad-style tiling for a new kernel, SoftplusGrad.

SoftplusGrad (``grad_input = beta*x > threshold ? grad : grad / (1 + exp(-beta*x))``) is a kernel of
this book's own design, laid out like HardSigmoidGrad's arch35 kernel (one share of ``blockFactor``
elements per core, tiles of ``ubFactor`` elements, a double-buffered CopyIn -> Compute -> CopyOut loop),
but it computes in fp32 for every dtype and needs more temporaries. Its UB buffers are :data:`BUFFERS`.
The learner writes

    softplus_grad_tiling(total_length, dtype, core_num, ub_size, beta=1.0, threshold=20.0)
        -> SoftplusGradTilingData

following the spec of ``labs/03_tiling.md``:

    dtype not float32/float16/bfloat16 -> TilingError;  core_num == 0 -> TilingError
    total_length == 0 -> every field 0 (beta and threshold too), blockDim 1, tilingKey 0
    (bufferNum, typeSize) = counted by the learner from the buffer table, per dtype
    blockAlign  = 32 // sizeof(T)                                  # one 32-byte block of the input dtype
    blockFactor = CeilDiv(CeilDiv(N, coreNum), blockAlign) * blockAlign
    blockDim    = CeilDiv(N, blockFactor)
    ubFactor    = FloorAlign((ubSize // typeSize) // bufferNum, 64)  # whole 256-byte fp32 repeats
    ubFactor == 0 -> TilingError;  tilingKey = 0 / 1 / 2 for float32 / float16 / bfloat16

The oracle derives the numbers differently: the UB budget from the buffer table itself (bytes of every
queue and buffer), ``ubFactor`` as the largest multiple of 64 whose tile fits, ``blockFactor`` as the
smallest multiple of ``blockAlign`` that lets ``coreNum`` cores cover ``N`` and ``blockDim`` by counting
the cores whose share is not empty.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ascend_lab.base import platform
from ascend_lab.dtypes import itemsize
from ascend_lab.opdev.tiling_data import TilingData, TilingError, float32, int64
from ascend_lab.ops.hard_sigmoid_grad import op_host as hsg_host

from .checker import Case, Raises, Report, answer_key, positional, run_battery

__all__ = ["BUFFERS", "FUNCTION", "REPEAT_ELEMS", "SoftplusGradTilingData", "cases", "check", "oracle",
           "ub_bytes_per_element"]

FUNCTION = "softplus_grad_tiling"
TITLE = "Lab 3 \u00b7 SoftplusGrad tiling"
DTYPES = ("float32", "float16", "bfloat16")
SCH_MODE = {"float32": 0, "float16": 1, "bfloat16": 2}
REPEAT_ELEMS = 256 // 4     # ubFactor alignment: one 256-byte repeat of the fp32 compute buffers
GM_BLOCK_BYTES = 32         # each core's share starts on a 32-byte boundary of the input dtype


class SoftplusGradTilingData(TilingData):
    """``SoftplusGradTilingData`` (3 x int64 + 2 x float = 32 bytes), as HardSigmoidGrad's with beta/threshold."""

    totalLength: int64
    blockFactor: int64
    ubFactor: int64
    beta: float32
    threshold: float32


@dataclass(frozen=True)
class Buffer:
    """One UB allocation of the kernel, per tile of ``ubFactor`` elements."""

    name: str
    kind: str
    count: int                  # buffers of this name (2 for a double-buffered queue)
    elem_bytes: str             # "T" (the input dtype) or "4" (fp32)
    dtypes: tuple[str, ...]     # the dtypes whose kernel allocates it
    purpose: str


_ALL = DTYPES
_NARROW = ("float16", "bfloat16")

#: The SoftplusGrad kernel's UB layout, per tile. The mask needs 1 bit per element but, as in
#: HardSigmoidGrad's budget, it is counted as a whole fp32 slot.
BUFFERS: tuple[Buffer, ...] = (
    Buffer("inQueueGrad", "TQue<VECIN>", 2, "T", _ALL, "gradOutput tiles, double-buffered"),
    Buffer("inQueueSelf", "TQue<VECIN>", 2, "T", _ALL, "self tiles, double-buffered"),
    Buffer("outQueueGradInput", "TQue<VECOUT>", 2, "T", _ALL, "result tiles, double-buffered"),
    Buffer("gradFp32Buf", "TBuf<VECCALC>", 1, "4", _NARROW, "gradOutput cast to fp32"),
    Buffer("betaXBuf", "TBuf<VECCALC>", 1, "4", _ALL, "beta*x in fp32 (kept for the threshold mask)"),
    Buffer("expBuf", "TBuf<VECCALC>", 1, "4", _ALL, "exp(-beta*x), then 1 + exp(-beta*x)"),
    Buffer("resFp32Buf", "TBuf<VECCALC>", 1, "4", _NARROW, "grad / (1 + exp(-beta*x)) in fp32, before the cast down"),
    Buffer("maskBuf", "TBuf<VECCALC>", 1, "4", _ALL, "beta*x <= threshold (1 bit/element, budgeted as a slot)"),
)


@answer_key
def ub_bytes_per_element(dtype: str) -> int:
    """UB bytes one element of a tile costs, summed over :data:`BUFFERS`."""
    size = itemsize(dtype)
    return sum(b.count * (size if b.elem_bytes == "T" else int(b.elem_bytes)) for b in BUFFERS if dtype in b.dtypes)


# --------------------------------------------------------------------------------------------------
# the oracle
# --------------------------------------------------------------------------------------------------
@answer_key
def oracle(total_length: int, dtype: str, core_num: int, ub_size: int, beta: float = 1.0,
           threshold: float = 20.0) -> SoftplusGradTilingData | Raises:
    """The expected TilingData, or ``Raises(TilingError)``."""
    if dtype not in DTYPES or core_num == 0:
        return Raises(TilingError)
    if total_length == 0:
        return SoftplusGradTilingData(totalLength=0, blockFactor=0, ubFactor=0, beta=0.0, threshold=0.0,
                                      blockDim=1, tilingKey=0)
    per_elem = ub_bytes_per_element(dtype)               # bytes of UB per element of a tile
    ub_factor = ub_size // (per_elem * REPEAT_ELEMS) * REPEAT_ELEMS   # largest multiple of 64 that fits
    if ub_factor == 0:
        return Raises(TilingError)
    align = GM_BLOCK_BYTES // itemsize(dtype)
    block_factor = -(-total_length // (core_num * align)) * align      # smallest multiple of align covering N
    block_dim = sum(1 for core in range(core_num) if core * block_factor < total_length)
    return SoftplusGradTilingData(totalLength=total_length, blockFactor=block_factor, ubFactor=ub_factor,
                                  beta=beta, threshold=threshold, blockDim=block_dim, tilingKey=SCH_MODE[dtype])


# --------------------------------------------------------------------------------------------------
# comparing tilings
# --------------------------------------------------------------------------------------------------
def _explain(field_name: str, inputs: dict[str, Any], exp: TilingData, got: Any) -> str:
    n, dtype, cores, ub = inputs["total_length"], inputs["dtype"], inputs["core_num"], inputs["ub_size"]
    if field_name == "blockFactor" and dtype in DTYPES:
        align = GM_BLOCK_BYTES // itemsize(dtype)
        return (f"CeilDiv({n}, {cores}) = {-(-n // cores)}, rounded up to a multiple of {align} "
                f"({GM_BLOCK_BYTES} B of {dtype}) is {exp.blockFactor}")
    if field_name == "blockDim":
        covered = getattr(got, "blockDim", 0) * getattr(got, "blockFactor", 0)
        text = f"blockDim = CeilDiv({n}, blockFactor {exp.blockFactor}) = {exp.blockDim}"
        if isinstance(covered, int) and covered < n:
            text += f"; your cores cover only {covered} of the {n} elements"
        return text
    if field_name == "ubFactor" and dtype in DTYPES:
        per_elem = ub_bytes_per_element(dtype)
        text = (f"this kernel needs {per_elem} B of UB per element ({per_elem // 4} fp32 slots), "
                f"so ubFactor = FloorAlign(({ub} // 4) // {per_elem // 4}, {REPEAT_ELEMS}) = {exp.ubFactor}")
        got_ub = getattr(got, "ubFactor", None)
        if isinstance(got_ub, int) and got_ub * per_elem > ub:
            text += f"; your ubFactor {got_ub} would need {got_ub * per_elem} B of UB, more than the {ub} B there are"
        elif isinstance(got_ub, int) and got_ub % REPEAT_ELEMS:
            text += f"; your ubFactor {got_ub} is not a whole number of 256-byte fp32 repeats"
        return text
    if field_name == "tilingKey":
        return "tilingKey (schMode) selects the kernel template: float32 0, float16 1, bfloat16 2; 0 when empty"
    if field_name in ("beta", "threshold"):
        return f"{field_name} is passed through as a C float (0 when the input is empty)"
    if field_name == "totalLength":
        return "totalLength is the element count N"
    return ""


def _make_compare(inputs: dict[str, Any]) -> Any:
    def compare(expected: Any, got: Any) -> str | None:
        if not isinstance(got, SoftplusGradTilingData):
            return f"return a SoftplusGradTilingData(...), not {type(got).__name__}"
        e, g = expected.as_dict(), got.as_dict()
        for key in e:
            if e[key] != g[key]:
                return f"{key}: expected {e[key]!r}, got {g[key]!r} \u2014 {_explain(key, inputs, expected, got)}"
        return None
    return compare


def _case(name: str, covers: Iterable[str], **inputs: Any) -> Case:
    inputs = {"total_length": inputs["total_length"], "dtype": inputs["dtype"], "core_num": inputs["core_num"],
              "ub_size": inputs["ub_size"], "beta": inputs.get("beta", 1.0), "threshold": inputs.get("threshold", 20.0)}
    expected = oracle(**inputs)
    hint = ""
    if isinstance(expected, Raises):
        hint = "refuse what the kernel cannot run: an unsupported dtype, no cores, or a UB too small for one repeat"
    return Case(name, inputs, expected, covers=tuple(covers), hint=hint, compare=_make_compare(inputs))


# --------------------------------------------------------------------------------------------------
# the battery
# --------------------------------------------------------------------------------------------------
_SIZES = (1, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65, 127, 128, 129, 1000, 4097, 65535, 100_000, 1_000_003, 2**31 + 5)


def cases(socs: Iterable[str] | None = None) -> list[Case]:
    socs = list(platform.socs() if socs is None else socs)
    out: list[Case] = []
    first = _example_soc(socs)
    info = platform.get_soc(first)
    # A. the worked example first, then small odd sizes
    out.append(_case(f"the worked example: N = 100000, float16 on {first}", ["topic:worked example"],
                     total_length=100_000, dtype="float16", core_num=info.vector_core_num,
                     ub_size=info.core_mem_size_ub))
    # B. every SoC x dtype x size, with the UB a tiling sees there (GetCoreMemSize: 256 B less on A2/A3)
    for soc in socs:
        info = platform.get_soc(soc)
        cores, ub = info.vector_core_num, info.core_mem_size_ub
        for dtype in DTYPES:
            align = GM_BLOCK_BYTES // itemsize(dtype)
            sizes = _SIZES + (cores * align - 1, cores * align, cores * align + 1)
            for n in sizes:
                tags = [f"soc:{soc}", f"dtype:{dtype}"]
                if n % align:
                    tags.append("topic:a last core with a short share")
                if n < cores * align:
                    tags.append("topic:fewer cores than the SoC has")
                out.append(_case(f"N = {n}, {dtype} on {soc} ({cores} cores, GetCoreMemSize(UB) {ub} B)", tags,
                                 total_length=n, dtype=dtype, core_num=cores, ub_size=ub))
            out.append(_case(f"empty input, {dtype} on {soc}", [f"soc:{soc}", "topic:empty input"],
                             total_length=0, dtype=dtype, core_num=cores, ub_size=ub))
    # C. other platforms: odd core counts and UB sizes, the smallest UB that works
    for cores, ub in ((1, 65536), (3, 65536), (7, 131072), (100, 196608), (48, 2304), (48, 2048)):
        for dtype in DTYPES:
            for n in (1, 1000, 123_457):
                out.append(_case(f"N = {n}, {dtype}, {cores} cores, UB {ub} B", ["topic:custom platforms",
                                 f"dtype:{dtype}"], total_length=n, dtype=dtype, core_num=cores, ub_size=ub))
    # D. errors
    out += [
        _case("no vector cores (core_num = 0)", ["topic:errors"], total_length=100, dtype="float32", core_num=0,
              ub_size=196608),
        _case("core_num = 0 and an empty input", ["topic:errors"], total_length=0, dtype="float16", core_num=0,
              ub_size=196608),
        _case("int32 has no SoftplusGrad kernel", ["topic:errors"], total_length=100, dtype="int32", core_num=40,
              ub_size=196608),
        _case("float64 has no SoftplusGrad kernel", ["topic:errors"], total_length=100, dtype="float64",
              core_num=40, ub_size=196608),
        _case("UB 2303 B: too small for 64 float32 elements", ["topic:errors"], total_length=100, dtype="float32",
              core_num=40, ub_size=2303),
        _case("UB 2047 B: too small for 64 bfloat16 elements", ["topic:errors"], total_length=100, dtype="bfloat16",
              core_num=40, ub_size=2047),
        _case("a tiny UB does not matter for an empty input", ["topic:errors", "topic:empty input"],
              total_length=0, dtype="float32", core_num=40, ub_size=100),
    ]
    # E. the attributes travel as C floats
    for beta, thr in ((0.1, -3.5), (2.0, 1e30), (-1.0, float("inf"))):
        out.append(_case(f"beta = {beta}, threshold = {thr} (stored as float32)", ["topic:attributes"],
                         total_length=4096, dtype="float32", core_num=40, ub_size=196608, beta=beta, threshold=thr))
    return out


def _example_soc(socs: list[str] | None) -> str:
    """The worked example runs on Ascend950PR, the SoC HardSigmoidGrad's arch35 tiling is written for."""
    socs = platform.socs() if not socs else socs
    return "Ascend950PR" if "Ascend950PR" in socs else socs[0]


def _summary(socs: list[str] | None = None) -> list[str]:
    info = platform.get_soc(_example_soc(socs))
    n = 100_000
    ub = info.core_mem_size_ub
    lines = [f"worked example, N = {n} on {info.name} ({info.vector_core_num} cores, UB {ub} B):"]
    for dtype in DTYPES:
        td = oracle(n, dtype, info.vector_core_num, ub)
        exp = hsg_host.tiling(n, dtype, info.vector_core_num, ub)
        main = hsg_host.tiling_main950(n, dtype, info.vector_core_num, ub)
        last = n - td.blockFactor * (td.blockDim - 1)
        lines.append(f"  {dtype:<8}  {ub_bytes_per_element(dtype):>2} B/elem  blockFactor {td.blockFactor}, "
                     f"blockDim {td.blockDim}, last core {last}, ubFactor {td.ubFactor} (HardSigmoidGrad: "
                     f"{main.ubFactor} in the main kernel a stock install runs here, {exp.ubFactor} in the "
                     f"experimental one), tiles per full core {-(-td.blockFactor // td.ubFactor)}")
    return lines


def _hidden(rng: np.random.Generator) -> list[Case]:
    """Cases drawn at check time: lengths, core counts, UB sizes and attributes no page names."""
    out = []
    for _ in range(30):
        n = int(10 ** rng.uniform(0, 9.5)) if rng.random() < 0.95 else 0
        dtype = str(rng.choice(DTYPES)) if rng.random() < 0.95 else str(rng.choice(["int32", "int8", "float64"]))
        cores = int(rng.integers(1, 129)) if rng.random() < 0.97 else 0
        ub = int(32 * rng.integers(60, 8193))
        beta, thr = float(np.float32(rng.normal(1, 2))), float(np.float32(rng.normal(20, 10)))
        out.append(_case(f"N = {n}, {dtype}, {cores} cores, UB {ub} B, beta {beta:.4g}, threshold {thr:.4g}",
                         ["topic:drawn at check time"], total_length=n, dtype=dtype, core_num=cores, ub_size=ub,
                         beta=beta, threshold=thr))
    return out


def check(fn: Any, socs: Iterable[str] | None = None, *, seed: int | None = None) -> Report:
    """Run ``fn`` (your ``softplus_grad_tiling``) on the battery, then on cases drawn now (``seed`` draws a
    reported set again); returns the Report."""
    socs = None if socs is None else list(socs)
    return run_battery(fn, cases(socs), title=TITLE, call=positional, summary=lambda: _summary(socs),
                       refuse_reference=True, hidden=_hidden, seed=seed)

