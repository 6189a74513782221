"""Lab 11 -- tune a kernel: BUFFER_NUM and the tile size of HardSigmoidGrad (float16) on Ascend950PR.

The kernel is the package's experimental HardSigmoidGrad (C++ in ``ops/hard_sigmoid_grad/op_kernel/experimental/``):
three queues of ``BUFFER_NUM`` blocks of ``ubFactor`` elements, a temp of ``ubFactor`` elements and a mask, a
tile loop of ``ceil(blockFactor / ubFactor)`` tiles per core, seven vector instructions per tile. Its host
tiling gives every core ``blockFactor = ceil(N / 64)`` elements and takes the largest tile the UB allows
(``ubFactor = FloorAlign(UB / 2 / 8, 32)``). The learner writes ``choose_plan(n) -> (buffer_num, ub_factor)``
instead, a rule that picks both from the problem size.

:func:`check` runs the kernel with the learner's plan on core 0 of the simulated Ascend950PR (64 cores launched,
so the cost model's share of GM bandwidth is the real one; the other cores do the same work) and compares its
estimated cycles with the best legal plan the checker finds by searching every ``BUFFER_NUM`` in 1..4 and every
``ubFactor`` of whole 256-byte repeats that fits the UB and copies at least :data:`MIN_TRANSFER` bytes per
transfer, with the same simulator and cost model (:func:`best_plan`; a few hundred core-0 runs per size, cached). A
plan passes within :data:`TOLERANCE` of the best. The report says when a plan exceeds the UB, is not 32-byte
aligned, leaves a partial repeat or copies less than 16 KB per transfer, and, when it is slower, by how much,
which pipe is the bottleneck and which way to move.

Why the 16 KB floor (chapter 13, issue 22): the cost model charges a transfer only a fixed latency plus its bytes,
so it rewards tiles far shorter than the device runs well -- chapter 13 measures that blind spot and says not to
tune tile sizes with it; the hardware documentation asks for transfers of at least 16 KB. The lab therefore
searches, and accepts, only plans whose full tiles copy at least 16 KB per input (a core's last tile may be
shorter). Under that rule the model's preference for short tiles meets the floor: what is left to decide is the
number of blocks per queue and where the floor binds. The cost model itself (cost_model.py) is not the lab's to
change. The problem sizes are the announced :data:`SIZES` and two drawn at check time from :data:`DRAWN_SIZES`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from ascend_lab import standalone
from ascend_lab.ascendc import KernelError, KernelRun, launch
from ascend_lab.ops.common.kernel_args import gm_from_array
from ascend_lab.ops.hard_sigmoid_grad import op_host

from .checker import Case, Report, answer_key, quote_lines, run_battery

__all__ = ["FUNCTION", "SIZES", "SOC", "TOLERANCE", "best_plan", "cases", "check", "measure",
           "plan_bytes", "run_plan"]

FUNCTION = "choose_plan"
TITLE = "Lab 11 \u00b7 Tuning BUFFER_NUM and the tile size"
SOC = "Ascend950PR"
DTYPE = "float16"
ITEM = 2
#: Elements of one 256-byte repeat of half: the kernel rounds CompareScalar's count up to whole repeats.
REPEAT = 256 // ITEM
#: The problem sizes the checker announces, the worked example first.
SIZES = (1_000_003, 640_000, 3_200_000)
#: The fewest bytes a full tile copies per input: the hardware guidance chapter 13 quotes (the cost model does
#: not charge small transfers what the device does, so the lab does not let a plan exploit that).
MIN_TRANSFER = 16 * 1024
MIN_TILE = MIN_TRANSFER // 2            # halves
#: Sizes it grades without announcing them are drawn at check time from this range (a table of the announced
#: sizes' plans is not a rule); the report names the seed.
DRAWN_SIZES = (600_000, 4_000_000)
#: How far above the best plan's cycles a plan may be.
TOLERANCE = 0.02
BUFFER_NUMS = (1, 2, 3, 4)
#: MTE2 reads GM in bursts of this many bytes (the cost model rounds every read up to them).
BURST = 512
PIPES = ("MTE2", "V", "MTE3")


def _strict(w: Any) -> str | None:
    return "this lab's sanitizer is strict" if w.kind in ("ub-overrun", "partial-repeat") else None


def _soc() -> Any:
    return standalone.make_soc(SOC)


def plan_bytes(buffer_num: int, ub_factor: int) -> int:
    """The UB bytes the kernel's Init asks for with this plan: 3 queues x ``buffer_num`` blocks and one temp of
    ``ub_factor`` halves, and a mask of one bit per element rounded up to 32 bytes (at least 32)."""
    mask_bytes = -(-ub_factor // 8)
    mask = max(32, -(-mask_bytes // 32) * 32)
    return (3 * buffer_num + 1) * ub_factor * ITEM + mask


@cache
def _data(d: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(d)
    return rng.uniform(-2, 2, d).astype(np.float16), rng.uniform(-4, 4, d).astype(np.float16)


def _tiling(n: int, ub_factor: int | None = None) -> Any:
    soc = _soc()
    td = standalone.tiling_for("hard_sigmoid_grad", n, DTYPE, soc, kernel="experimental")
    if ub_factor is None:
        return td
    return op_host.HardSigmoidGradTilingData(totalLength=td.totalLength, blockFactor=td.blockFactor,
                                             ubFactor=int(ub_factor), alpha=td.alpha, beta=td.beta,
                                             blockDim=td.blockDim, tilingKey=td.tilingKey)


def _run(n: int, buffer_num: int, ub_factor: int, record: bool) -> KernelRun:
    """Core 0 of the launch: only its share of GM is allocated, the arguments keep the full tensor sizes."""
    td = _tiling(n, ub_factor)
    grad, x = _data(int(td.blockFactor))
    args = [gm_from_array(grad, "gradOutput", n * ITEM), gm_from_array(x, "self", n * ITEM),
            gm_from_array(None, "gradInput", n * ITEM, nbytes=grad.nbytes)]
    entry, template = standalone.kernel_entry("hard_sigmoid_grad", td, DTYPE, buffer_num, kernel="experimental")
    return launch(entry, td.blockDim, args, td.to_bytes(), _soc(), outputs=(2,), record=record, tiling_data=td,
                  cores=[0], kernel_name="HardSigmoidGrad", strict=_strict, **template)


def _cycles(run: KernelRun) -> float:
    return standalone.core_cycles(run.trace, 0)


_grading = False


def measure(buffer_num: int, ub_factor: int, n: int = SIZES[0]) -> KernelRun:
    """Run core 0 of HardSigmoidGrad float16 on Ascend950PR for ``n`` elements with your plan and return the
    recorded run: ``standalone.core_cycles(run.trace, 0)`` is the estimate the checker grades,
    ``run.trace.cores[0].busy`` each pipe's busy cycles, ``viz.plot_pipeline(run)`` the lanes. A plan the UB
    cannot hold, or one the strict sanitizer stops, raises KernelError. (Not available to ``choose_plan`` while
    the checker runs: the plan must come from your rule, not from a search.)"""
    if _grading:
        raise RuntimeError("choose_plan must pick its plan from n by a rule you worked out; it may not call "
                           "lab11.measure while the checker grades it")
    return _run(int(n), int(buffer_num), int(ub_factor), record=True)


@answer_key
@cache
def best_plan(n: int) -> tuple[tuple[int, int], float]:
    """The best legal plan for ``n`` elements and its core-0 cycles, searched with the simulator and its cost model:
    for every BUFFER_NUM in 1..4, the ubFactors of whole 256-byte repeats (multiples of 128 halves) of at least
    MIN_TILE halves (16 KB per transfer) that fit the UB and are no longer than a core's share rounded up to a repeat
    (or MIN_TILE, when the share is shorter) -- first on a geometric grid (each about 15 %
    longer than the last), then every one of them between the grid neighbours of the grid's best. The cycles
    change slowly with the tile (within 2 % over a factor of two around the best), so the grid cannot step over
    a better valley; a plan better than the one found here passes anyway."""
    soc = _soc()
    share = int(_tiling(n).blockFactor)
    top = -(-share // REPEAT) * REPEAT
    best: tuple[tuple[int, int], float] | None = None
    for b in BUFFER_NUMS:
        legal = [u for u in range(MIN_TILE, max(top, MIN_TILE) + 1, REPEAT) if plan_bytes(b, u) <= soc.ub_size]
        if not legal:
            continue
        grid = sorted({legal[min(len(legal) - 1, int(1.15 ** k) - 1)] for k in range(64)})
        cycles = {u: _cycles(_run(n, b, u, record=False)) for u in grid}
        k = grid.index(min(grid, key=cycles.__getitem__))
        lo, hi = grid[max(k - 1, 0)], grid[min(k + 1, len(grid) - 1)]
        for u in legal:
            if lo < u < hi and u not in cycles:
                cycles[u] = _cycles(_run(n, b, u, record=False))
        u = min(cycles, key=cycles.__getitem__)
        if best is None or cycles[u] < best[1]:
            best = ((b, u), cycles[u])
    assert best is not None
    return best


def _default_plan(n: int) -> tuple[int, int]:
    return 2, int(_tiling(n).ubFactor)


# --------------------------------------------------------------------------------------------------
# the battery
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Graded:
    plan: tuple[int, int]
    cycles: float
    run: KernelRun | None
    problem: str = ""


def _legal(plan: Any, n: int) -> str:
    """Why ``plan`` cannot run, or ""."""
    if not (isinstance(plan, tuple) and len(plan) == 2 and all(isinstance(v, (int, np.integer))
                                                                and not isinstance(v, bool) for v in plan)):
        return (f"choose_plan({n}) returned {plan!r}; return a tuple of two ints: (BUFFER_NUM, ubFactor in "
                "elements)")
    b, u = (int(v) for v in plan)
    soc = _soc()
    if b not in BUFFER_NUMS:
        return f"BUFFER_NUM {b}: a queue takes 1 to 4 blocks (1 single-buffered, 2 double-buffered)"
    if u <= 0:
        return f"ubFactor {u}: a tile needs at least one element"
    if (u * ITEM) % 32:
        return (f"ubFactor {u} halves = {u * ITEM} B is not a multiple of 32 B: every queue block and DataCopyPad "
                f"destination must start 32-byte aligned, so ubFactor must be a multiple of {32 // ITEM}")
    if u % REPEAT:
        return (f"ubFactor {u} is not a whole number of 256-byte repeats ({REPEAT} halves): the kernel rounds "
                f"CompareScalar's count up to whole repeats, so a full tile of {u} would compare "
                f"{-(-u // REPEAT) * REPEAT} elements of a {u}-element temp -- the strict sanitizer stops that "
                "(ub-overrun). Use a multiple of 128")
    if u * ITEM < MIN_TRANSFER:
        return (f"ubFactor {u} halves copies {u * ITEM:,} B per input per tile, less than the "
                f"{MIN_TRANSFER // 1024} KB the hardware guidance asks of a transfer. The cost model charges a copy "
                "only its latency and its bytes, so it favours short tiles that cost the device more than it says "
                f"(chapter 13: do not tune tile sizes with it); this lab accepts only plans of at least {MIN_TILE} "
                "halves per tile")
    need = plan_bytes(b, u)
    if need > soc.ub_size:
        return (f"the plan needs {need:,} B of UB: (3 queues x {b} blocks + 1 temp) x {u} halves x 2 B + the mask; "
                f"{soc.name} has {soc.ub_size:,} B, so it is {need - soc.ub_size:,} B over. With BUFFER_NUM {b} "
                f"the largest ubFactor that fits is "
                f"{max(x for x in range(REPEAT, soc.ub_size, REPEAT) if plan_bytes(b, x) <= soc.ub_size):,}")
    return ""


def _busy(run: KernelRun) -> dict[str, float]:
    core0 = next(c for c in run.trace.cores if c.core == 0)
    return {p: float(core0.busy[p]) for p in PIPES}


def _verdict(g: _Graded, n: int) -> str | None:
    (_, u_best), best = best_plan(n)
    b, u = g.plan
    slower = g.cycles / best - 1
    if slower <= TOLERANCE:
        return None
    busy = _busy(g.run) if g.run is not None else {}
    neck = max(busy, key=busy.get) if busy else "MTE2"
    share = int(_tiling(n).blockFactor)
    tiles = -(-share // u)
    text = (f"your plan (BUFFER_NUM {b}, ubFactor {u:,}) takes {g.cycles:,.0f} cycles on core 0; the best legal plan "
            f"the checker found takes {best:,.0f}. Yours is {slower:.1%} slower (the target is within "
            f"{TOLERANCE:.0%}: at most {best * (1 + TOLERANCE):,.0f} cycles)."
            f"\ncore 0 with your plan: {tiles} tile{'s' if tiles != 1 else ''} of up to {u:,} elements; busy "
            + ", ".join(f"{p} {busy[p]:,.0f}" for p in PIPES)
            + f" of {g.cycles:,.0f} cycles: {neck} is the bottleneck pipe, and the gap between its busy time and "
              f"the total is time it waits.")
    if (u * ITEM) % BURST:
        text += (f"\nMTE2 reads GM in whole {BURST}-byte bursts: a tile of {u:,} halves is {u * ITEM:,} B and reads "
                 f"{-(-u * ITEM // BURST) * BURST:,} B, so every tile pays for bytes it does not use")
    if b == 1:
        text += ("\nwith BUFFER_NUM 1 every queue has one block: MTE2 cannot fetch tile i+1 while V computes tile i, "
                 "so the pipes take turns instead of overlapping")
    elif u > u_best:
        text += ("\nyour tiles are longer than the best plan's: the first tile's copy-in runs before V can start and "
                 "the last tile's compute and copy-out after MTE2 has finished, and both grow with the tile. "
                 "Shorter tiles shrink that fill and drain")
    else:
        text += ("\nyour tiles are shorter than the best plan's: every tile pays fixed costs (each copy's latency, "
                 "each of the 7 vector instructions' ~20-46 cycles of issue cost) however short it is, so more "
                 "tiles add more of them than they save in fill and drain")
    return text


def _return_line(fn: Any) -> str:
    """The learner's last ``return`` line in ``choose_plan``, as ``checker.quote_lines`` names it ("your notebook
    cell, line N, in choose_plan: return ..."), or ""."""
    returns = [line for line in quote_lines(fn, ("return",), skip_comments=True) if line.code.startswith("return")]
    return str(returns[-1]) if returns else ""


def _case(n: int, name: str, hint: str) -> Case:
    context: dict[str, Any] = {}

    def call(fn: Callable[[int], Any], _inputs: dict[str, Any]) -> _Graded:
        global _grading
        context["fn"] = fn
        _grading = True
        try:
            plan = fn(n)
        finally:
            _grading = False
        problem = _legal(plan, n)
        if problem:
            return _Graded((0, 0), float("inf"), None, problem)
        b, u = int(plan[0]), int(plan[1])
        try:
            r = _run(n, b, u, record=True)
        except KernelError as err:
            return _Graded((b, u), float("inf"), None, f"the sanitizer stopped your plan: {err}")
        return _Graded((b, u), _cycles(r), r)

    def compare(_exp: Any, g: Any) -> str | None:
        if not isinstance(g, _Graded):
            return f"could not grade {g!r}"
        why = g.problem or _verdict(g, n)
        line = _return_line(context.get("fn"))
        return why + (f"\nyour line: {line}" if why and line else "") if why else None

    def show(g: Any) -> str:
        if isinstance(g, str):
            return g
        if isinstance(g, _Graded):
            return "an illegal plan" if g.problem and g.run is None and g.plan == (0, 0) else \
                f"(BUFFER_NUM {g.plan[0]}, ubFactor {g.plan[1]:,}): {g.cycles:,.0f} cycles"
        return repr(g)

    share = int(_tiling(n).blockFactor)
    shown = {"n": n, "soc": SOC, "dtype": DTYPE, "cores": 64, "blockFactor (elements per core)": share,
             "UB": _soc().ub_size}
    return Case(name, shown, f"a legal plan within {TOLERANCE:.0%} of the best plan's core-0 cycles",
                covers=(f"soc:{SOC}", f"dtype:{DTYPE}", "topic:problem sizes"), call=call, compare=compare, show=show,
                hint=hint)


_HINTS = {
    "first": "measure a few plans with lab11.measure(b, u, n) and look at the lanes: where do MTE2, V and MTE3 wait "
             "for each other, and how long before the first V and after the last MTE2?",
    "small": "a core's share here is shorter: how many tiles of at least 16 KB does it make, and does the pipeline "
             "still have something to overlap?",
    "large": "a core's share here is much longer: which is cheaper in this model, more tiles or longer ones, and "
             "where does the 16 KB floor stop you?",
}

def cases() -> list[Case]:
    """One case per problem size: the worked example (a million elements), a small and a large problem."""
    names = {SIZES[0]: ("worked example: n = 1,000,003 float16 on Ascend950PR", _HINTS["first"]),
             SIZES[1]: ("a smaller problem: n = 640,000 (10,000 elements per core)", _HINTS["small"]),
             SIZES[2]: ("a large problem: n = 3,200,000 (50,000 elements per core)", _HINTS["large"])}
    return [_case(n, *names[n]) for n in SIZES]


def _hidden(rng: np.random.Generator) -> list[Case]:
    """Two sizes drawn at check time: the rule has to work for any n, not only the announced ones."""
    sizes = sorted({int(rng.integers(*DRAWN_SIZES)) for _ in range(2)})
    return [_case(n, f"one more size, n = {n:,}", "your rule has to work for any n, not only for the sizes on "
                  "the page") for n in sizes]


def run_plan(fn: Callable[[int], Any], n: int = SIZES[0]) -> KernelRun:
    """Your ``choose_plan``'s plan for ``n``, run and recorded on core 0 (for ``viz.plot_pipeline``)."""
    b, u = fn(n)
    return _run(int(n), int(b), int(u), record=True)


def _summary(fn: Callable[[int], Any]) -> list[str]:
    lines = []
    for n in SIZES:
        b, u = (int(v) for v in fn(n))
        mine = _cycles(_run(n, b, u, record=False))
        (bb, ub), best = best_plan(n)
        db, du = _default_plan(n)
        default = _cycles(_run(n, db, du, record=False))
        lines.append(f"n = {n:,}: your plan (BUFFER_NUM {b}, ubFactor {u:,}) {mine:,.0f} cycles on core 0; best "
                     f"(BUFFER_NUM {bb}, ubFactor {ub:,}) {best:,.0f}; the experimental tiling's (BUFFER_NUM {db}, "
                     f"ubFactor {du:,}) {default:,.0f}, {default / mine:.2f}x yours")
    return lines


def check(fn: Callable[[int], Any], *, seed: int | None = None) -> Report:
    """Grade your ``choose_plan(n) -> (BUFFER_NUM, ubFactor)`` on the problem sizes; returns the Report. The
    reference solution handed in fails before the first case (``labkit.checker``'s ``reference_allowed``)."""
    return run_battery(fn, cases(), title=TITLE, summary=lambda: _summary(fn), refuse_reference=True,
                       hidden=_hidden, seed=seed)
