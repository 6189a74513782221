"""Lab 7 -- from single to double buffering, and measuring the speed-up from the trace.

The learner starts from a correct, single-buffered HardswishGrad kernel in AscendC C++ (the ``%%ascendc
KernelHardswishGrad`` cell holds the text of ``lab7_single_buffered.cpp``: ``BUFFER_NUM = 1``, a tiling that
budgets 3 queue blocks + a temporary + the mask) and

1. makes it double-buffered: two blocks per queue, and a tiling whose budget counts them
   (``hardswish_grad_tiling``), so that the plan still fits the UB;
2. writes two measurements on simulator traces (:class:`~ascend_lab.ascendc.Trace`, its ``events``)::

       speedup(trace_single, trace_double) -> float   # duration(single) / duration(double)
       overlap(trace) -> float                         # share of V busy time spent while MTE2 copies
                                                       # in another tile

and hands them over with ``double_buffering() -> {"kernel", "tiling", "speedup", "overlap"}``.

:func:`check` verifies, in this order: the UB plan of the learner's kernel has two blocks per queue and
fits; the tiling matches :func:`tiling` with ``buffer_num=2``; the kernel is bit-exact against
:func:`oracle` over sizes, dtypes and SoCs; and the two measurements equal the reference ones
(:func:`reference_speedup` from the cores' summaries, :func:`reference_overlap` from
``viz.data.lanes``) on the same traces -- the lab's own kernels, the learner's kernel and a
HardSigmoidGrad trace the learner did not make. :func:`study` runs the lab's single-buffered kernel and
the learner's double-buffered one for ``viz.plot_buffer_num``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ascend_lab import standalone
from ascend_lab.acl.runtime import DeviceAllocation, DevicePtr
from ascend_lab.ascendc import (
    GmAddr,
    KernelRun,
    Trace,
    launch,
)
from ascend_lab.base import platform
from ascend_lab.base.platform import SocInfo
from ascend_lab.dtypes import as_acl_dtype, to_numpy
from ascend_lab.opdev.tiling_data import TilingData, TilingError, ceil_div, int64

from .checker import Case, Report, answer_key, checker_side, run_battery
from .lab5_copy_compute import LAB_DIR, SocLimits, is_cxx, kernel_case, launch_kernel, sample, usable_ub

__all__ = ["FUNCTION", "HardswishGradTilingData", "SingleBuffered", "cases", "check", "oracle",
           "study"]

FUNCTION = "double_buffering"
TITLE = "Lab 7 \u00b7 double buffering, measured"
DTYPES = ("float32", "float16")
SCH_MODE = {"float32": 0, "float16": 1}
REPEAT_BYTES = 256
REL_TOL = 1e-9


# --------------------------------------------------------------------------------------------------
# host side, entry, oracle
# --------------------------------------------------------------------------------------------------
class HardswishGradTilingData(TilingData):
    """``HardswishGradTilingData`` (3 x int64 = 24 bytes)."""

    totalLength: int64
    blockFactor: int64
    ubFactor: int64


@answer_key
def tiling(total_length: int, dtype: Any, core_num: int, ub_size: int, buffer_num: int = 2
           ) -> HardswishGradTilingData:
    """The reference tiling the checker compares yours with (an answer key: not callable from your code)."""
    dt = as_acl_dtype(dtype).short
    if dt not in DTYPES or core_num <= 0 or total_length <= 0:
        raise TilingError(f"cannot tile {total_length} {dt} elements on {core_num} cores")
    size = to_numpy(as_acl_dtype(dt)).itemsize
    slots = 3 * buffer_num + 2
    ub_factor = ub_size // (slots * REPEAT_BYTES) * (REPEAT_BYTES // size)   # whole repeats that fit
    if ub_factor <= 0:
        raise TilingError(f"ub_size {ub_size} B is too small")
    block_factor = ceil_div(total_length, core_num)
    return HardswishGradTilingData(totalLength=total_length, blockFactor=block_factor, ubFactor=ub_factor,
                                   blockDim=ceil_div(total_length, block_factor), tilingKey=SCH_MODE[dt])


@answer_key
def oracle(grad: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``x < -3: 0; x <= 3: grad * (x * T(1/3) + T(0.5)); else grad`` with every step rounded to T (numpy
    arithmetic on T arrays), NaN in x gives 0."""
    t = grad.dtype.type
    with np.errstate(all="ignore"):
        slope = (x * t(1.0 / 3.0) + t(0.5)) * grad
    inner = np.where(x <= t(3), slope, grad)
    return np.where(x >= t(-3), inner, t(0))


#: The lab's single-buffered kernel, C++ (the page's starting point; the learner's skeleton cell is its text).
SINGLE_BUFFERED_CPP = Path(__file__).resolve().parent / "lab7_single_buffered.cpp"


@functools.cache
def _kit_cxx() -> Any:
    from ascend_lab.ascendc import cxx

    return cxx.compile(SINGLE_BUFFERED_CPP, include_dirs=[LAB_DIR], knobs={"bufferNum": "BUFFER_NUM"})


class _KitKernel:
    """The lab's own HardswishGrad kernel (:data:`SINGLE_BUFFERED_CPP`), run with ``buffer_num`` blocks per queue
    (the compile-time knob ``bufferNum`` overrides its ``BUFFER_NUM``): the traces the measurement cases use."""

    def __init__(self, buffer_num: int) -> None:
        self.buffer_num = buffer_num

    def __repr__(self) -> str:
        return f"the lab's HardswishGrad kernel with BUFFER_NUM {self.buffer_num}"


#: The lab's single-buffered kernel (the skeleton's C++), and the same kernel run with two blocks per queue.
SingleBuffered = _KitKernel(1)
_Buffered = _KitKernel(2)


def _entry_template(kernel: Any, dtype: Any) -> tuple[Any, dict[str, Any]]:
    """The entry to launch and its template arguments, for the lab's own kernel or the learner's C++ kernel."""
    if isinstance(kernel, _KitKernel):
        return _kit_cxx(), {"D_T": np.dtype(dtype), "bufferNum": kernel.buffer_num}
    if is_cxx(kernel):
        return kernel, {"D_T": np.dtype(dtype)}
    raise TypeError("this lab's kernel is AscendC C++: edit the KernelHardswishGrad cell (%%ascendc), run it, and "
                    "hand the kernel it binds over as double_buffering()['kernel']")


# --------------------------------------------------------------------------------------------------
# the reference measurements
# --------------------------------------------------------------------------------------------------
@answer_key
def reference_speedup(trace_single: Trace, trace_double: Trace) -> float:
    """Duration of the slowest core (its summary's cycles; the launch head left out), single / double."""
    def duration(trace: Trace) -> float:
        return max((c.cycles for c in trace.cores), default=0.0)
    return duration(trace_single) / duration(trace_double)


@answer_key
def reference_overlap(trace: Trace) -> float:
    """Share of the V busy time during which MTE2 copies in another tile of the same core, from the
    pipeline lanes of ``viz.data.lanes`` (which give an untiled V event the tile of the V event before it)."""
    from ascend_lab.viz.data import lanes  # matplotlib comes with ascend_lab.viz: imported only when measuring

    bars = lanes(trace).bars
    busy = overlapped = 0.0
    for core in {b.core for b in bars}:
        v = np.array([(b.start, b.end, -1 if b.tile is None else b.tile) for b in bars
                      if b.core == core and b.pipe == "V"], dtype=float).reshape(-1, 3)
        m = np.array([(b.start, b.end, -1 if b.tile is None else b.tile) for b in bars
                      if b.core == core and b.pipe == "MTE2"], dtype=float).reshape(-1, 3)
        busy += float((v[:, 1] - v[:, 0]).sum())
        if len(v) and len(m):
            inter = np.minimum(v[:, None, 1], m[None, :, 1]) - np.maximum(v[:, None, 0], m[None, :, 0])
            other = v[:, None, 2] != m[None, :, 2]
            overlapped += float(np.where(other, np.clip(inter, 0.0, None), 0.0).sum())
    return overlapped / busy if busy else 0.0


def _variants(trace: Trace) -> dict[str, float]:
    """Plausible wrong overlaps, to say what a learner's number probably did."""
    from ascend_lab.viz.data import lanes

    bars = [(b.core, b.pipe, b.start, b.end, b.tile) for b in lanes(trace).bars]

    def measure(copy_pipe: str, same_core: bool, per_core_span: bool = False) -> float:
        vector = [b for b in bars if b[1] == "V"]
        copies = [b for b in bars if b[1] == copy_pipe]
        total = sum(max(0.0, min(v[3], m[3]) - max(v[2], m[2])) for v in vector for m in copies
                    if (v[0] == m[0] or not same_core) and v[4] != m[4])
        busy = sum(v[3] - v[2] for v in vector)
        if per_core_span:
            busy = sum(c.cycles for c in trace.cores)
        return total / busy if busy else 0.0

    return {
        "copy-in is MTE2 (MTE3 is the copy-out)": measure("MTE3", True),
        "compare events of the same core only: every core's cycles start at 0, so events of two cores never "
        "run at the same time in any meaningful sense": measure("MTE2", False),
        "divide by the V busy time (the sum of the V events' durations), not by the cores' durations":
            measure("MTE2", True, per_core_span=True),
    }


# --------------------------------------------------------------------------------------------------
# the battery
# --------------------------------------------------------------------------------------------------
def _part(name: str) -> Callable[[Any], Any]:
    def pick(fn: Any) -> Any:
        parts = fn()
        if not isinstance(parts, dict) or name not in parts:
            raise TypeError("double_buffering() must return {'kernel': ..., 'tiling': ..., 'speedup': ..., "
                            f"'overlap': ...}}; got {type(parts).__name__}")
        if name == "kernel":
            _entry_template(parts[name], "float32")          # a Python class is refused: the kernel is C++
        return parts[name]
    return pick


def _launch_plan(kernel: Any, td: TilingData, dtype: str, soc: SocInfo) -> KernelRun:
    item = to_numpy(as_acl_dtype(dtype)).itemsize
    args = [GmAddr(DevicePtr(DeviceAllocation(1)), name, arg_nbytes=td.totalLength * item)
            for name in ("gradOutput", "self", "gradInput")]
    entry, template = _entry_template(kernel, to_numpy(as_acl_dtype(dtype)))
    return launch(entry, td.blockDim, args, td.to_bytes(), soc, outputs=(2,), cores=[0], plan_only=True, **template)


def _plan_case(n: int, dtype: str, soc: str) -> Case:
    info = platform.get_soc(soc)
    ub = usable_ub(info)

    def call(fn: Any, _inputs: dict[str, Any]) -> dict[str, Any]:
        td = _part("tiling")(fn)(n, dtype, info.vector_core_num, ub)
        run = _launch_plan(_part("kernel")(fn), td, dtype, info)
        layout = run.trace.ub_layout.get(0, [])
        queues: dict[str, int] = {}
        for b in layout:
            if b.kind in ("VECIN", "VECOUT"):
                q = b.name.rsplit("[", 1)[0]
                queues[q] = queues.get(q, 0) + 1
        return {"blocks per queue": queues, "used": max((b.offset + b.size for b in layout), default=0),
                "usable": ub, "ubFactor": td.ubFactor}

    def compare(_exp: Any, got: Any) -> str | None:
        single = [q for q, blocks in got["blocks per queue"].items() if blocks != 2]
        if not got["blocks per queue"]:
            return "your kernel's Init laid out no queues"
        if single:
            return (f"{', '.join(single)}: {got['blocks per queue'][single[0]]} block(s); double buffering needs "
                    "2 blocks per queue (TQue(..., BUFFER_NUM) and InitBuffer(queue, BUFFER_NUM, bytes))")
        if got["used"] > got["usable"]:
            return (f"your plan needs {got['used']:,} B of UB, {got['used'] - got['usable']:,} B more than the "
                    f"{got['usable']:,} B usable: the tiling still budgets for single buffering (ubFactor "
                    f"{got['ubFactor']}); count the queues' second blocks in its slots")
        return None

    def show(value: Any) -> str:
        if not isinstance(value, dict):
            return str(value)
        return (f"queues {value['blocks per queue']}, plan {value['used']:,} B of {value['usable']:,} B usable, "
                f"ubFactor {value['ubFactor']}")

    return Case(f"UB plan of your kernel: N = {n} {dtype} on {soc}", {"N": n, "dtype": dtype, "soc": soc},
                "two blocks per queue, and the plan fits the usable UB", covers=("topic:UB plan",), call=call,
                compare=compare, show=show,
                hint="with two blocks per queue a tile costs 3 x 2 + 2 = 8 slots of T instead of 5")


def _tiling_case(n: int, dtype: str, cores: int, ub: int) -> Case:
    expected = tiling(n, dtype, cores, ub, buffer_num=2)

    def compare(exp: Any, got: Any) -> str | None:
        if not isinstance(got, HardswishGradTilingData):
            return f"return a HardswishGradTilingData, not {type(got).__name__}"
        for key, value in exp.as_dict().items():
            if got.as_dict()[key] != value:
                return (f"{key}: expected {value}, got {got.as_dict()[key]} -- the double-buffered budget is 3 queues "
                        "x 2 blocks + tmpBuf + maskBuf = 8 slots of T; ubFactor = FloorAlign((ub_size // sizeof(T)) "
                        "// 8, 256 // sizeof(T))")
        return None

    return Case(f"your tiling: N = {n} {dtype}, {cores} cores, UB {ub} B",
                {"total_length": n, "dtype": dtype, "core_num": cores, "ub_size": ub}, expected,
                covers=("topic:tiling",), call=lambda fn, inp: _part("tiling")(fn)(*inp.values()), compare=compare)


def _kernel_case(name: str, covers: list[str], n: int, dtype: str, soc: str, *, core_num: int | None = None,
                 tiling_ub: int | None = None, seed: int = 0, limits: SocLimits | None = None) -> Case:
    info = standalone.make_soc(soc, core_num)
    td = tiling(n, dtype, info.vector_core_num, tiling_ub or usable_ub(info), buffer_num=2)
    g = sample(n, dtype, seed, -2.0, 2.0)
    x = sample(n, dtype, seed + 1, -5.0, 5.0, edges=(-3.0, 3.0, -2.9990234375))
    shown = {"N": n, "dtype": dtype, "soc": info.name, "cores": info.vector_core_num,
             "tiling": f"blockFactor {td.blockFactor}, ubFactor {td.ubFactor}, blockDim {td.blockDim}"}
    return kernel_case(name, covers, entry=None, td=td, arrays={"grad": g, "self": x},
                       expected=oracle(g, x), soc=info, show=shown, template={"D_T": g.dtype},
                       hint="the numbers were right with one block per queue: look at what changed",
                       pick=_part("kernel"), limits=limits)


@dataclass(frozen=True)
class Measured:
    """What a measurement case returns: your value and the reference's, on the same traces."""

    yours: Any
    reference: float
    variants: dict[str, float]

    def __str__(self) -> str:
        return f"yours {self.yours!r}, reference {self.reference!r}"


class _Reference:
    def __repr__(self) -> str:
        return "the reference's value on the same traces"


_REFERENCE = _Reference()


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=1e-12)


def _compare_measure(_exp: Any, got: Any) -> str | None:
    if not isinstance(got, Measured):
        return f"could not measure: {got!r}"
    yours = got.yours
    if isinstance(yours, bool) or not isinstance(yours, (int, float, np.floating, np.integer)):
        return f"return a float, not {type(yours).__name__}"
    yours = float(yours)
    if _close(yours, got.reference):
        return None
    text = f"yours is {yours!r}, the reference {got.reference!r}"
    for why, value in got.variants.items():
        if _close(yours, value):
            return f"{text}: {why}"
    return text


def _show_measure(value: Any) -> str:
    return str(value) if isinstance(value, Measured) else repr(value)


class _Traces:
    """Traces made once per ``check`` call (the learner's kernel is needed for some of them)."""

    def __init__(self) -> None:
        self.cache: dict[tuple[Any, ...], Trace] = {}

    def get(self, key: tuple[Any, ...], make: Callable[[], Trace]) -> Trace:
        if key not in self.cache:
            self.cache[key] = make()
        return self.cache[key]


#: (name, N, dtype, SoC, core_num, tiling UB) of the workloads the measurement cases trace.
WORKLOADS = (
    ("one core, 8 KB tiling UB", 8192, "float32", "Ascend910B4", 1, 8192),
    ("4 cores, 16 KB tiling UB", 20_000, "float16", "Ascend910B4", 4, 16384),
    ("Ascend950PR, its whole UB (one tile per core)", 100_000, "float32", "Ascend950PR", None, None),
)


def _trace_of(kernel: Any, buffer_num: int, n: int, dtype: str, soc: str, core_num: int | None,
              tiling_ub: int | None, tiling_fn: Callable[..., Any] | None = None) -> Trace:
    info = standalone.make_soc(soc, core_num)
    ub = tiling_ub or usable_ub(info)
    if tiling_fn is not None:
        td = tiling_fn(n, dtype, info.vector_core_num, ub)
    else:
        with checker_side():               # the lab's own kernels, traced inside a case
            td = tiling(n, dtype, info.vector_core_num, ub, buffer_num=buffer_num)
    g = sample(n, dtype, 11, -2.0, 2.0, specials=False)
    x = sample(n, dtype, 12, -5.0, 5.0, specials=False)
    entry, template = _entry_template(kernel, g.dtype)
    run, _ = launch_kernel(entry, td, [g, x], g.dtype, info, record=True, reverse=False, strict=False,
                           kernel_name="HardswishGrad", **template)
    return run.trace


def _hsg_trace() -> Trace:
    rng = np.random.default_rng(3)
    from ascend_lab.dtypes import bfloat16
    g = rng.uniform(-2, 2, 10_000).astype(bfloat16)
    x = rng.uniform(-4, 4, 10_000).astype(bfloat16)
    run, _ = standalone.run_kernel("hard_sigmoid_grad", g, x, soc="Ascend950PR", core_num=2, ub_size=32768,
                                   kernel="main")      # the kernel a stock install runs on Ascend950
    return run.trace


def _trusted(reference: Callable[..., float], *args: Any) -> float:
    """A reference measurement taken inside a case, while the learner's code may be running."""
    with checker_side():
        return reference(*args)


def _measure_cases(traces: _Traces) -> list[Case]:
    out: list[Case] = []
    for label, n, dtype, soc, cores, ub in WORKLOADS:
        key = (n, dtype, soc, cores, ub)

        def single(key: tuple[Any, ...] = key) -> Trace:
            return traces.get(("single",) + key, lambda: _trace_of(SingleBuffered, 1, *key))

        def ours(key: tuple[Any, ...] = key) -> Trace:
            return traces.get(("ours",) + key, lambda: _trace_of(_Buffered, 2, *key))

        def speed(fn: Any, _inputs: dict[str, Any], single: Any = single, ours: Any = ours) -> Measured:
            ts, td = single(), ours()
            wrong = {"speed-up is single / double, not double / single": _trusted(reference_speedup, td, ts),
                     "leave the launch head out: use the cores' time, not trace.cycles": ts.cycles / td.cycles}
            return Measured(_part("speedup")(fn)(ts, td), _trusted(reference_speedup, ts, td), wrong)

        def lap(fn: Any, _inputs: dict[str, Any], which: Any) -> Measured:
            trace = which()
            return Measured(_part("overlap")(fn)(trace), _trusted(reference_overlap, trace), _variants(trace))

        shown = {"workload": label, "N": n, "dtype": dtype, "soc": soc}
        out.append(Case(f"speedup(single, double) of the lab's kernels, {label}", {**shown, "traces": "the lab's"},
                        _REFERENCE, covers=("topic:speedup",), call=speed, compare=_compare_measure,
                        show=_show_measure, hint="duration of a trace: the largest end cycle of its MTE2/V/MTE3 "
                        "events; speed-up = duration(single) / duration(double)"))
        for which, name in ((single, "single"), (ours, "double")):
            out.append(Case(f"overlap() of the lab's {name}-buffered kernel, {label}",
                            {**shown, "trace": f"the lab's {name}-buffered kernel"}, _REFERENCE,
                            covers=("topic:overlap",),
                            call=lambda fn, inp, which=which: lap(fn, inp, which), compare=_compare_measure,
                            show=_show_measure, hint="per core: sum over V events v and MTE2 events m of another tile "
                            "of the length of v and m's intersection, divided by the V busy time"))
    # the learner's own kernel, and a trace from another kernel
    label, n, dtype, soc, cores, ub = WORKLOADS[0]

    def yours_trace(fn: Any) -> Trace:
        return traces.get(("yours", id(fn)), lambda: _trace_of(_part("kernel")(fn), 2, n, dtype, soc, cores, ub,
                                                               tiling_fn=_part("tiling")(fn)))

    def speed_yours(fn: Any, _inputs: dict[str, Any]) -> Measured:
        ts, td = traces.get(("single", n, dtype, soc, cores, ub), lambda: _trace_of(SingleBuffered, 1, n, dtype, soc,
                                                                                   cores, ub)), yours_trace(fn)
        return Measured(_part("speedup")(fn)(ts, td), _trusted(reference_speedup, ts, td), {})

    def lap_yours(fn: Any, _inputs: dict[str, Any]) -> Measured:
        trace = yours_trace(fn)
        return Measured(_part("overlap")(fn)(trace), _trusted(reference_overlap, trace), _variants(trace))

    shown = {"workload": label, "N": n, "dtype": dtype, "soc": soc, "traces": "the lab's single, YOUR double"}
    out.append(Case(f"speedup(single, yours), {label}", shown, _REFERENCE, covers=("topic:your kernel",),
                    call=speed_yours, compare=_compare_measure, show=_show_measure))
    out.append(Case(f"overlap() of your kernel, {label}", shown, _REFERENCE, covers=("topic:your kernel",),
                    call=lap_yours, compare=_compare_measure, show=_show_measure))
    out.append(Case("overlap() of a trace you did not make: HardSigmoidGrad bf16 on 2 cores (32 KB UB)",
                    {"trace": "standalone.run_kernel('hard_sigmoid_grad', bf16[10000], soc='Ascend950PR', "
                              "core_num=2, ub_size=32768, kernel='main')"}, _REFERENCE, covers=("topic:overlap",),
                    call=lambda fn, _inp: Measured(_part("overlap")(fn)(traces.get(("hsg",), _hsg_trace)),
                                                   _trusted(reference_overlap, traces.get(("hsg",), _hsg_trace)),
                                                   _variants(traces.get(("hsg",), _hsg_trace))),
                    compare=_compare_measure, show=_show_measure,
                    hint="only the events' pipe, core, tile, start and end matter; a V event whose tile is None "
                         "belongs to the tile of the V event before it on the same core"))
    return out


def cases(socs: Iterable[str] | None = None, traces: _Traces | None = None,
          limits: SocLimits | None = None) -> list[Case]:
    """The battery; ``limits`` collects what happened on SoCs whose AscendC API lacks the kernel's
    instructions (``lab5_copy_compute.LIMITED_ARCHS``)."""
    socs = list(platform.socs() if socs is None else socs)
    first = "Ascend910B4" if "Ascend910B4" in socs else socs[0]
    out = [_plan_case(100_000, "float32", first), _plan_case(100_000, "float16", first)]
    if "Ascend950PR" in socs:
        out.append(_plan_case(100_000, "float32", "Ascend950PR"))
    out += [_tiling_case(n, dtype, cores, ub) for n, dtype, cores, ub in
            ((100_000, "float32", 40, 188_160), (100_000, "float16", 40, 188_160), (1, "float32", 64, 253_952),
             (8192, "float32", 1, 8192), (20_000, "float16", 4, 16384), (12_345, "float16", 7, 4096))]
    out += [
        _kernel_case(f"N = 1000 float32 on {first}", ["topic:kernel"], 1000, "float32", first),
        _kernel_case("N = 4097 float32 on one core, 4 KB tiling UB", ["topic:kernel"], 4097, "float32", first,
                     core_num=1, tiling_ub=4096, seed=1),
        _kernel_case("N = 3001 float16 on 3 cores, 4 KB tiling UB", ["topic:kernel"], 3001, "float16", first,
                     core_num=3, tiling_ub=4096, seed=2),
    ]
    for soc in socs:
        for dtype in DTYPES:
            out.append(_kernel_case(f"N = 5003 {dtype} on {soc}", [f"soc:{soc}", f"dtype:{dtype}"], 5003, dtype, soc,
                                    seed=len(soc), limits=limits))
    return out + _measure_cases(traces or _Traces())


def study(fn: Any, n: int = 8192, dtype: str = "float32", soc: str = "Ascend910B4", *, core_num: int | None = 1,
          tiling_ub: int | None = 8192) -> dict[str, Any]:
    """Core 0 of the lab's single-buffered kernel and of YOUR double-buffered one on the same data, in the
    shape ``viz.plot_buffer_num(study)`` draws; ``speedup`` and ``overlap`` are your functions'."""
    from ascend_lab.viz.data import lanes

    parts = fn()
    ts = _trace_of(SingleBuffered, 1, n, dtype, soc, core_num, tiling_ub)
    td = _trace_of(parts["kernel"], 2, n, dtype, soc, core_num, tiling_ub, tiling_fn=parts["tiling"])
    runs = {1: KernelRun(td.kernel, ts.block_dim, None, ts), 2: KernelRun(td.kernel, td.block_dim, None, td)}
    cycles = {bn: max((c.cycles for c in r.trace.cores if c.core == 0), default=0.0) for bn, r in runs.items()}
    return {"n": n, "dtype": dtype, "runs": runs,
            "lanes": {bn: lanes(r.trace, cores=[0]) for bn, r in runs.items()}, "cycles": cycles,
            "speedup": float(parts["speedup"](ts, td)), "overlap": {bn: float(parts["overlap"](r.trace))
                                                                    for bn, r in runs.items()}}


def _summary(fn: Any, traces: _Traces) -> list[str]:
    parts = fn()
    label, n, dtype, soc, cores, ub = WORKLOADS[0]
    ts = traces.get(("single", n, dtype, soc, cores, ub), lambda: _trace_of(SingleBuffered, 1, n, dtype, soc, cores,
                                                                            ub))
    td = traces.get(("yours", id(fn)), lambda: _trace_of(parts["kernel"], 2, n, dtype, soc, cores, ub,
                                                         tiling_fn=parts["tiling"]))
    busy = {p: sum(e.end - e.start for e in td.events if e.pipe == p) for p in ("MTE2", "V", "MTE3")}
    cycles = {name: max(c.cycles for c in t.cores) for name, t in (("single", ts), ("yours", td))}
    return [f"N = {n} {dtype} on {soc}, {label}: single-buffered {cycles['single']:,.0f} cycles, yours "
            f"{cycles['yours']:,.0f} cycles: speed-up x{parts['speedup'](ts, td):.3f}",
            f"V busy during another tile's copy-in: {100 * parts['overlap'](ts):.1f} % single, "
            f"{100 * parts['overlap'](td):.1f} % yours",
            "your pipes on that core: " + ", ".join(f"{p} {v:,.0f}" for p, v in busy.items())
            + f" busy cycles; {max(busy, key=busy.get)} is the busiest, so no buffering can make the core faster "
            f"than {max(busy.values()):,.0f} cycles"]


def check(double_buffering: Any, socs: Iterable[str] | None = None) -> Report:
    """Run your pieces (``double_buffering() -> {"kernel", "tiling", "speedup", "overlap"}``) over the battery."""
    traces, limits = _Traces(), SocLimits()
    return run_battery(double_buffering, cases(socs, traces, limits), title=TITLE,
                       summary=lambda: _summary(double_buffering, traces) + limits.lines(),
                       refuse_reference=True)
