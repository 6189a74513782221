"""Lab 10 -- the int8 ThresholdGradV2D kernel from the tiling and the dtype rules alone.

The learner writes the whole kernel of ThresholdGradV2D (``out = feature > threshold ? grad : 0``) for int8 on
Ascend910B4 in AscendC C++ (a ``%%ascendc KernelThresholdGradV2DInt8`` cell), against the TilingData of the op's
experimental host tiling (``labs/threshold_grad_v2_d_tiling.h``; ``ascend_lab.ops.threshold_grad_v2_d.op_host.tiling``:
256-byte blocks, big and small cores, tiles of ``tileDataNum`` elements with a ``*TailDataNum`` last tile;
``threshold`` is a C float in the struct)::

    class KernelThresholdGradV2DInt8 { Init(input_gradient, input_feature, output_backprops, td); Process(); ... };
    __global__ __aicore__ void threshold_grad_v2_d_int8(GM_ADDR ..., GM_ADDR workspace, GM_ADDR tiling)  // given

:func:`check` launches the compiled kernel on the simulated Ascend910B4 (and on what-if copies with
fewer cores and a smaller UB, so cores run several tiles), with the sanitizer strict (:data:`STRICT`: a buffer
used past its declared size or a compare over a partial repeat stops the kernel), and compares every byte with
:func:`oracle` -- plain numpy on the exact values, written from the formula and sharing no code with the
simulator -- over sizes with tails, one core and forty, every int8 value as a feature, and thresholds that are
integers, fractions, values half cannot hold, values outside int8's range, infinities and NaN. The last cases
weigh the kernel: its vector instructions per tile (:data:`MAX_VECTOR`) and its UB plan; a case after the worked
example reads its instruction stream (it must issue ``CompareScalar`` and ``Select``). A Python class is refused.

The reference kernel of the book (chapter 12) takes another route than the one this lab ends on; the lab's
page and this module show neither.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ascend_lab import standalone
from ascend_lab.ascendc import GmAddr, KernelError, KernelRun, launch
from ascend_lab.base.platform import SocInfo
from ascend_lab.opdev.tiling_data import GET_TILING_DATA
from ascend_lab.ops.common.kernel_args import gm_from_array
from ascend_lab.ops.threshold_grad_v2_d import op_host

from .checker import Case, Report, compare_arrays, locator, quote_lines, run_battery
from .lab5_copy_compute import cpp_lines, instruction_case, is_cxx, not_cxx_report

__all__ = [
    "FUNCTION", "MAX_VECTOR", "SOC", "STRICT", "cases", "check", "entry", "oracle", "run", "sample", "tiling",
    "vector_steps",
]

FUNCTION = "KernelThresholdGradV2DInt8"
TITLE = "Lab 10 \u00b7 The int8 ThresholdGradV2D kernel"
SOC = "Ascend910B4"
#: The most vector instructions per tile the checker accepts.
MAX_VECTOR = 5
SENTINEL = 0xFF
#: What a Select in mode 1/2 leaves free on A2 (the library's scratch at TMP_UB_OFFSET = 184 KB).
TMP_UB_OFFSET = 188416

#: Findings the hardware tolerates that this lab treats as errors. Reads and writes inside the 256-byte GM
#: padding stay allowed: the experimental tiling pads every length to whole 256-byte blocks and the op's tensors
#: are allocated in such blocks (chapter 12), so a plain DataCopy of a tail block is the op's own contract.
STRICT = {
    "ub-overrun": "this lab's sanitizer is strict: a buffer is used past the size InitBuffer gave it",
    "partial-repeat": "this lab's sanitizer is strict: a compare must cover whole 256-byte repeats",
}


def _strict(w: Any) -> str | None:
    return STRICT.get(w.kind)


# --------------------------------------------------------------------------------------------------
# the host side (given), the entry, and the oracle
# --------------------------------------------------------------------------------------------------
def tiling(n: int, soc: SocInfo, threshold: float) -> op_host.ThresholdGradV2DTilingData:
    """The experimental host tiling for ``n`` int8 elements on ``soc`` (``GetCoreNumAiv()`` cores,
    ``GetCoreMemSize(UB)`` bytes: ubDataNumber 14 for int8)."""
    return op_host.tiling(n, "int8", soc.vector_core_num, soc.core_mem_size_ub, threshold=threshold)


def entry(input_gradient: GmAddr, input_feature: GmAddr, output_backprops: GmAddr, workspace: Any,
          tiling: bytes, *, kernel: Any) -> None:
    """The ``__global__ __aicore__`` entry: unpack the TilingData, build your class, ``Init``, ``Process``."""
    td = GET_TILING_DATA(op_host.ThresholdGradV2DTilingData, tiling)
    op = kernel()
    op.Init(input_gradient, input_feature, output_backprops, td)
    op.Process()


def oracle(grad: np.ndarray, feature: np.ndarray, threshold: float) -> np.ndarray:
    """``feature > threshold ? grad : 0`` on exact values: the threshold as the C float the TilingData holds,
    every int8 feature exactly, compared in float64 (exact for both). NaN compares false."""
    t = float(np.float32(threshold))
    with np.errstate(invalid="ignore"):
        keep = feature.astype(np.float64) > t
    return np.where(keep, grad, np.int8(0)).astype(np.int8)


def sample(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``(grad, feature)``: ``n`` int8 gradients (the extremes -128 and 127 and zeros included) and features that
    run through every int8 value, in a shuffled order."""
    rng = np.random.default_rng(seed)
    grad = rng.integers(-128, 128, n, dtype=np.int16).astype(np.int8)
    grad[: min(n, 3)] = np.array([-128, 127, 1], np.int8)[: min(n, 3)]
    every = np.resize(np.arange(-128, 128, dtype=np.int16), max(n, 256)).astype(np.int8)
    feature = rng.permutation(every)[:n]
    return grad, feature


def _launch(kernel: Any, td: Any, grad: np.ndarray, feature: np.ndarray, soc: SocInfo, *, record: bool = False,
            strict: bool = True, cores: Sequence[int] | None = None) -> tuple[KernelRun, np.ndarray]:
    n = grad.size
    args = [gm_from_array(grad, "input_gradient"), gm_from_array(feature, "input_feature"),
            gm_from_array(None, "output_backprops", nbytes=n, fill=SENTINEL)]
    order = list(cores) if cores is not None else list(range(td.blockDim))[::-1]   # last core first
    template = {} if is_cxx(kernel) else {"kernel": kernel}          # C++: the kernel is the entry
    r = launch(kernel if is_cxx(kernel) else entry, td.blockDim, args, td.to_bytes(), soc, outputs=(2,),
               record=record, tiling_data=td, cores=order, kernel_name="ThresholdGradV2D<int8_t>",
               strict=_strict if strict else None, **template)
    return r, args[2].ptr.allocation.buffer[:n].view(np.int8).copy()


def run(kernel: Any, n: int = 20_000, threshold: float = 0.5, *, core_num: int | None = None,
        ub_size: int | None = None, seed: int = 0, record: bool = True, strict: bool = True,
        cores: Sequence[int] | None = None) -> tuple[KernelRun, np.ndarray]:
    """Launch your class once on ``n`` elements (every core, in order) and return ``(run, output)`` -- for
    ``viz.plot_pipeline(run)`` and ``viz.plot_ub_layout(run)``. ``core_num`` / ``ub_size`` make a what-if
    Ascend910B4 (fewer cores, a smaller UB: more tiles per core)."""
    soc = standalone.make_soc(SOC, core_num, ub_size)
    td = tiling(n, soc, threshold)
    grad, feature = sample(n, seed)
    return _launch(kernel, td, grad, feature, soc, record=record, strict=strict,
                   cores=cores if cores is not None else range(td.blockDim))


# --------------------------------------------------------------------------------------------------
# teaching: what a sanitizer stop or a wrong byte usually means here
# --------------------------------------------------------------------------------------------------
def _lesson(err: KernelError, td: Any, soc: SocInfo) -> str:
    """The lab's reading of a sanitizer stop, appended to the finding."""
    kind, detail = err.kind, err.detail
    n = td.tileDataNum
    if kind == "unsupported-on-soc" and "int8" in detail:
        return ("\nlab 10: the A2 vector unit compares and selects half and float only (chapter 12's table). "
                "Widen first: a Cast from int8 to half is exact for every int8 value, so compare and select "
                "in half (or wider), and narrow the result back to int8 at the end")
    if kind == "unsupported-on-soc":
        return ("\nlab 10: pick an instruction, mode and dtype the Ascend910B4 library offers (CompareScalar and "
                "Select of half or float, Select mode 1 with a scalar 0)")
    if kind == "ub-overrun":
        return (f"\nlab 10: every buffer must hold what you write into it: n elements of the dtype you "
                f"Get/AllocTensor it as. A tile here is up to {n} elements, so a half temp needs {2 * n} B "
                f"and a float temp {4 * n} B; size the buffer in InitBuffer for the widest dtype you use it as")
    if kind in ("ub-overflow", "select-scratch"):
        budget = op_host.ub_data_number("int8") * n
        return (f"\nlab 10: your UB plan does not fit. The tiling budgets ubDataNumber = "
                f"{op_host.ub_data_number('int8')} bytes per element of a tile: {budget:,} B for "
                f"tileDataNum = {n:,}; a Select in mode 1 needs everything below TMP_UB_OFFSET = {TMP_UB_OFFSET:,} B "
                f"on {soc.name}. Three double-buffered int8 queues take {6 * n:,} B; count your temps "
                "(the mask needs one bit per element) and reuse a temp once its value is dead")
    if kind in ("gm-out-of-bounds", "gm-clobber"):
        return _gm_lesson(err, td)
    if kind == "partial-repeat":
        return ("\nlab 10: the tiling makes every length a whole number of 256-byte blocks of int8; in half "
                "that is still a whole number of 256-byte repeats. Compare the tile's own length")
    return ""


def _gm_lesson(err: KernelError, td: Any) -> str:
    """A copy outside the core's share: an offset problem when the copy does not start where the core's tile starts,
    a tail problem when it starts there but runs past the tile (item 8 of issue 22: say which)."""
    import re

    core, tile = getattr(err, "core", None), getattr(err, "tile", None)
    found = re.search(r"at byte (\d+)", err.detail)
    if core is not None and tile is not None and found:
        big = core < td.tailBlockNum
        start = (td.bigCoreDataNum * core if big else
                 td.bigCoreDataNum * core - (td.bigCoreDataNum - td.smallCoreDataNum) * (core - td.tailBlockNum))
        tile_start = start + tile * td.tileDataNum
        at = int(found.group(1))
        if at != tile_start:
            kind = "big" if big else "small"
            return (f"\nlab 10: an OFFSET problem: core {core} (a {kind} core) copies tile {tile} at element "
                    f"{at:,}, but its share starts at element {start:,} and tile {tile} at {tile_start:,}. "
                    f"The first tailBlockNum = {td.tailBlockNum} cores are big and start at bigCoreDataNum * i; "
                    "a small core starts at bigCoreDataNum * i - (bigCoreDataNum - smallCoreDataNum) * "
                    "(i - tailBlockNum)")
        return (f"\nlab 10: a TAIL problem: core {core}'s tile {tile} starts at the right element ({tile_start:,}) but "
                "the copy runs past the core's share: its LAST tile is only tailDataNum long (bigTailDataNum or "
                "smallTailDataNum), the others tileDataNum")
    return ("\nlab 10: a copy leaves this core's share. Each core starts at its own offset (big cores first: "
            "bigCoreDataNum * i; a small core after them subtracts one block per big core), runs tileNum "
            "tiles of tileDataNum elements, and its LAST tile is only tailDataNum long")


@dataclass(frozen=True)
class _Variant:
    name: str
    text: str


def _variants(grad: np.ndarray, feature: np.ndarray, t: float) -> dict[_Variant, np.ndarray]:
    """Outputs of the usual wrong kernels, from numpy on the same inputs, to name a mistake by its bytes."""
    t32 = np.float32(t)
    f = feature.astype(np.float64)
    zero = np.int8(0)
    out: dict[_Variant, np.ndarray] = {}
    with np.errstate(invalid="ignore", over="ignore"):
        half_t = float(np.float16(t32))
        out[_Variant("half", "your kernel compares against half(threshold): the C float rounded to half. Half holds "
                             f"every int8 value but not every threshold: {float(t32)!r} becomes {half_t!r}, and the "
                             "features between the two land on the wrong side. Compare against a value that half "
                             "holds exactly and that splits the int8 values where the float threshold does")] = \
            np.where(f > half_t, grad, zero)
        if math.isfinite(float(t32)):
            for name, value, why in (
                    ("trunc", math.trunc(float(t32)), "int() and C's (int) cast round toward zero"),
                    ("round", round(float(t32)), "rounding to the nearest integer moves the threshold up for "
                                                 "fractions of .5 and more"),
                    ("ceil", math.ceil(float(t32)), "the ceiling works with GE, not with GT")):
                out[_Variant(name, f"your kernel compares with an integer threshold that splits the values "
                                   f"differently: {why} ({float(t32)!r} -> {value}). For an integer x, "
                                   "x > t holds exactly when x > the largest integer not above t")] = \
                    np.where(f > value, grad, zero)
        out[_Variant("ge", "your kernel keeps the gradient where feature == threshold: the op compares with GT "
                           "(feature > threshold), not GE")] = np.where(f >= float(t32), grad, zero)
        if math.isfinite(float(t32)):
            low = math.floor(float(t32))
            out[_Variant("ge-floor", f"your kernel keeps the gradient of feature {low}, which is not greater than "
                                     f"{float(t32)!r}: with {low}, the largest integer not above the threshold, the "
                                     "compare must be GT, not GE")] = np.where(f >= low, grad, zero)
        out[_Variant("swap", "your kernel selects the other way round: zero where feature > threshold. "
                             "Select takes src0 where the mask bit is 1")] = np.where(f > float(t32), zero, grad)
    return out


#: Where in the learner's class each mistake lives: the source text its lines contain.
_THRESHOLD = ("td.threshold", "CompareScalar(", "Compare(")
_WHERE = {"half": _THRESHOLD, "trunc": _THRESHOLD, "round": _THRESHOLD, "ceil": _THRESHOLD,
          "ge": ("CompareScalar(", "Compare("), "ge-floor": ("CompareScalar(", "Compare("), "swap": ("Select(",),
          "sentinel": ("tileNum", "TailDataNum", "tailDataNum", "range(")}


def _your_lines(kernel: Any, needles: Sequence[str], limit: int = 3) -> str:
    """The learner's lines (in their class's own methods, comments left out) that contain one of ``needles``, one
    a line as ``checker.quote_lines`` names it ("your notebook cell, line N, in Init: code"); "" when the source
    cannot be read (a class built at run time) or the class is not the learner's."""
    if is_cxx(kernel):
        return "\n".join(cpp_lines(kernel, needles)[:limit])
    found = [line for fn in (vars(kernel).values() if isinstance(kernel, type) else ()) if inspect.isfunction(fn)
             for line in quote_lines(fn, needles, skip_comments=True)]
    found.sort(key=lambda line: (line.filename, line.lineno))
    return "\n".join(str(line) for line in found[:limit])


def _explain_wrong(expected: np.ndarray, got: np.ndarray, grad: np.ndarray, feature: np.ndarray, t: float,
                   ranges: list[dict[str, Any]], kernel: Any = None) -> str:
    bad = np.flatnonzero(expected.view(np.uint8) != got.view(np.uint8))
    text = ""
    first = int(bad[0])
    text += f"\ninputs there: input_gradient[{first}] = {grad[first]}, input_feature[{first}] = {feature[first]}, " \
            f"threshold = {float(np.float32(t))!r}"
    if (got.view(np.uint8)[bad] == SENTINEL).all():
        text += "\nthose bytes still hold the 0xFF the output was filled with: no core wrote them"
        for r in ranges:
            last = r["tiles"][-1]
            if last[1] <= first < last[1] + last[2] and r["tile_num"] > 0:
                text += (f"; element {first} is in the LAST tile of core {r['core']} ({r['kind']} core: tile "
                         f"{last[0]} of {r['tile_num']}, {last[2]} elements = its tailDataNum)")
                lines = _your_lines(kernel, _WHERE["sentinel"])
                text += f"\nyour lines:\n{lines}" if lines else ""
                break
        return text
    for variant, out in _variants(grad, feature, t).items():
        if np.array_equal(out, got):
            lines = _your_lines(kernel, _WHERE.get(variant.name, ()))
            return text + "\n" + variant.text + (f"\nyour lines:\n{lines}" if lines else "")
    return text


# --------------------------------------------------------------------------------------------------
# the battery
# --------------------------------------------------------------------------------------------------
def _show(value: Any) -> str:
    if isinstance(value, np.ndarray):
        head = ", ".join(str(v) for v in value[:6])
        return f"int8[{value.size}]: [{head}{', ...' if value.size > 6 else ''}]"
    return repr(value)


def _case(name: str, covers: Sequence[str], n: int, threshold: float, *, core_num: int | None = None,
          ub_size: int | None = None, seed: int = 0, hint: str = "") -> Case:
    soc = standalone.make_soc(SOC, core_num, ub_size)
    td = tiling(n, soc, threshold)
    grad, feature = sample(n, seed)
    expected = oracle(grad, feature, threshold)
    ranges = op_host.core_ranges(td, "int8", n)
    locate = locator(ranges)

    context: dict[str, Any] = {}

    def call(kernel: Any, _inputs: dict[str, Any]) -> np.ndarray:
        context["kernel"] = kernel
        try:
            return _launch(kernel, td, grad, feature, soc)[1]
        except KernelError as err:
            err.detail = err.detail + _lesson(err, td, soc)
            raise

    def compare(exp: Any, got: Any) -> str | None:
        why = compare_arrays(exp, got, locate=locate)
        if why is None or not isinstance(got, np.ndarray) or got.shape != exp.shape:
            return why
        return why + _explain_wrong(exp, got, grad, feature, threshold, ranges, context.get("kernel"))

    shown = {"N": n, "threshold": threshold, "soc": soc.name, "cores": soc.vector_core_num,
             "UB (GetCoreMemSize)": soc.core_mem_size_ub,
             "tiling": f"blockDim {td.blockDim}, tileDataNum {td.tileDataNum}, big cores {td.tailBlockNum} x "
                       f"{td.bigCoreDataNum} in {td.finalBigTileNum} tiles (tail {td.bigTailDataNum}), small cores "
                       f"{td.smallCoreDataNum} in {td.finalSmallTileNum} tiles (tail {td.smallTailDataNum})",
             "data": f"sample({n}, seed {seed}): every int8 value as a feature"}
    return Case(name, shown, expected, covers=(f"soc:{SOC}", "dtype:int8", *covers), hint=hint, call=call,
                compare=compare, show=_show)


def vector_steps(run: KernelRun, core: int = 0, tile: int = 0) -> list[str]:
    """The vector instructions one tile of a recorded run issued, in order (``Cast``, ``CompareScalar`` ...)."""
    return [e.instr for e in run.trace.events if e.core == core and e.pipe == "V" and e.tile == tile]


def _plan(run: KernelRun, core: int = 0) -> list[Any]:
    return run.trace.ub_layout.get(core) or next(iter(run.trace.ub_layout.values()), [])


def _efficiency_case() -> Case:
    n, threshold = 20_000, 99.99

    context: dict[str, Any] = {}

    def call(kernel: Any, _inputs: dict[str, Any]) -> Any:
        context["kernel"] = kernel
        r, _ = run(kernel, n, threshold, core_num=1)
        return r

    def compare(_exp: Any, r: Any) -> str | None:
        steps = vector_steps(r)
        if len(steps) <= MAX_VECTOR:
            return None
        widest = "float" if any("float32" in e.detail for e in r.trace.events
                                if e.core == 0 and e.pipe == "V" and e.tile == 0) else "half"
        return (f"your kernel runs {len(steps)} vector instructions per tile ({', '.join(steps)}); {MAX_VECTOR} "
                f"suffice. Your widest compute type is {widest}. Every int8 value is exact in half, and so is "
                "every integer a compare of integers needs: if the value you compare against is exact in half "
                "and splits the int8 values where the float threshold does, half is enough for the compare AND "
                "the select, and each widening or narrowing costs one instruction less"
                + (f"\nyour lines:\n{lines}" if (lines := _your_lines(context.get("kernel"), ("Cast(",), 4)) else ""))

    def show(r: Any) -> str:
        if isinstance(r, str):
            return r
        if not isinstance(r, KernelRun):
            return repr(r)
        steps = vector_steps(r)
        used = max((b.offset + b.size for b in _plan(r)), default=0)
        return f"{len(steps)} vector instructions per tile; UB plan {used:,} B"

    return Case(f"vector instructions per tile: N = {n}, threshold {threshold} on one core",
                {"N": n, "threshold": threshold, "soc": SOC, "cores": 1},
                f"at most {MAX_VECTOR} vector instructions per tile", covers=("topic:instructions",), call=call,
                compare=compare, show=show,
                hint="count what each widening, narrowing, compare and select costs; which of them does the int8 "
                     "data really need?")


#: The vector instructions a select lab is about: the kernel must issue them.
LAB_INSTRUCTIONS = {"CompareScalar": "the mask, bit i = feature[i] > threshold (in a type the vector unit compares)",
                    "Select": "grad where the mask bit is 1, else 0"}

_HINTS = {
    "first": "one core, one short tile: Init places the GlobalTensors and InitBuffers the queues and temps; Process "
             "runs CopyIn -> Compute -> CopyOut; Compute widens what the vector unit cannot take as int8",
    "tail": "the last tile of a core is tailDataNum long (bigTailDataNum or smallTailDataNum), the others "
            "tileDataNum; tile i starts at element i * tileDataNum of the core's GlobalTensors",
    "cores": "the first tailBlockNum cores are big (bigCoreDataNum elements each); a small core's offset is "
             "bigCoreDataNum * i - (bigCoreDataNum - smallCoreDataNum) * (i - tailBlockNum)",
    "threshold": "the threshold arrives as a C float; the feature is an integer. Which float thresholds give the "
                 "same answer for every int8 feature, and which of them is exact in the type you compare in?",
}


def cases() -> list[Case]:
    """The battery: the worked example, tails on one core, forty cores with big and small cores, what-if SoCs
    with several tiles per core, the thresholds, then the kernel's weight."""
    out = [_case("worked example: N = 1000, threshold 0.5 on Ascend910B4 (one core, one tile)",
                 ["topic:worked example"], 1000, 0.5, hint=_HINTS["first"])]
    out.append(instruction_case("the instructions of your Compute: N = 1000, threshold 0.5", LAB_INSTRUCTIONS,
                                lambda kernel: run(kernel, 1000, 0.5)[0], covers=("topic:instructions",)))
    for n in (1, 255, 256, 257, 13_824, 13_825):
        out.append(_case(f"N = {n}, threshold 0.5 (one core)", ["topic:tails"], n, 0.5, seed=n,
                         hint=_HINTS["tail"]))
    for n in (333_333, 553_737):
        out.append(_case(f"N = {n}, threshold 0.5 on 40 cores (big and small cores, full tiles)", ["topic:cores"],
                         n, 0.5, seed=n, hint=_HINTS["cores"]))
    for n, cores, ub in ((20_000, 3, 16_384), (9_999, 2, 8_192), (50_001, 7, 16_384)):
        out.append(_case(f"N = {n}, threshold 0.5 on {cores} cores with a {ub // 1024} KiB UB (several tiles per "
                         "core)", ["topic:several tiles per core"], n, 0.5, core_num=cores, ub_size=ub, seed=n,
                         hint=_HINTS["tail"]))
    thresholds = (1.0, -2.5, 3.75, 99.99, -100.01, 126.99, 127.0, -128.0, -128.5, 200.5, -300.0, 70_000.0,
                  -1e30, math.inf, -math.inf, math.nan)
    for k, t in enumerate(thresholds):
        out.append(_case(f"threshold {t} (N = 4099 on 3 cores, 16 KiB UB)", ["topic:thresholds"], 4099, t,
                         core_num=3, ub_size=16_384, seed=100 + k, hint=_HINTS["threshold"]))
    out.append(_efficiency_case())
    return out


def _summary(kernel: Any) -> list[str]:
    r, _ = run(kernel, 333_333, 99.99)
    core0 = next(c for c in r.trace.cores if c.core == 0)
    plan = _plan(r)
    used = max((b.offset + b.size for b in plan), default=0)
    td = r.tiling
    ref, _ = standalone.run_kernel("threshold_grad_v2_d", *sample(333_333, 0), threshold=99.99, soc=SOC,
                                   kernel="experimental", record=True)
    ref_plan = _plan(ref)
    ref_used = max((b.offset + b.size for b in ref_plan), default=0)
    overrun = sum(1 for w in ref.warnings if w.kind == "ub-overrun")
    return [
        f"your kernel per tile: {' -> '.join(vector_steps(r))}",
        f"N = 333,333 on {SOC}: blockDim {td.blockDim}, tileDataNum {td.tileDataNum:,}; {r.cycles:,.0f} cycles; "
        f"core 0 busy MTE2 {core0.busy['MTE2']:,.0f}, V {core0.busy['V']:,.0f}, MTE3 {core0.busy['MTE3']:,.0f}",
        f"your UB plan on core 0: {used:,} B in {len(plan)} buffers ({', '.join(b.name for b in plan)}); the "
        f"tiling budgets {op_host.ub_data_number('int8') * td.tileDataNum:,} B",
        f"the ops-nn experimental kernel on the same input: {ref.cycles:,.0f} cycles, "
        f"{len(vector_steps(ref))} vector instructions per tile, UB plan {ref_used:,} B declared and "
        f"{overrun} ub-overrun warning{'s' if overrun != 1 else ''} (its float temp is declared half-sized)",
    ]


def check(kernel: Any) -> Report:
    """Run your kernel (the C++ kernel the ``%%ascendc`` cell binds) over the battery; returns the Report. The
    reference solution handed in fails before the first case (``labkit.checker``'s ``reference_allowed``)."""
    refused = not_cxx_report(kernel, TITLE, "KernelThresholdGradV2DInt8")
    if refused is not None:
        return refused
    return run_battery(kernel, cases(), title=TITLE, summary=lambda: _summary(kernel), refuse_reference=True)
