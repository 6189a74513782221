"""Labs 10 and 11 (the harder labs of issue 12 item 5): the checkers' teaching messages fire on the usual mistakes,
the book's published int8 kernel does not pass lab 10, lab 10's oracle agrees with the formula at the edges, and
lab 11's target is the best plan of an exhaustive search and is not the tiling's own plan. Like labs 1-9, both refuse
the reference solution handed in, and quote the learner's lines with the kit's one ``checker.quote_lines``."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
from labkit import checker, solutions
from labkit import lab10_int8_threshold as lab10
from labkit import lab11_tuning as lab11
from labkit.checker import reference_allowed

from ascend_lab.ascendc import (
    CMPMODE,
    SELMODE,
    VECCALC,
    VECIN,
    VECOUT,
    Cast,
    CompareScalar,
    DataCopy,
    GetBlockIdx,
    GlobalTensor,
    RoundMode,
    Select,
    TBuf,
    TPipe,
    TQue,
    float_,
    half,
    int8_t,
    sizeof,
    uint8_t,
)
from ascend_lab.ops import standalone

Solution = solutions.KernelThresholdGradV2DInt8


# ------------------------------------------------------------------------------------------------
# lab 10
# ------------------------------------------------------------------------------------------------
class Published:
    """The int8 path of chapter 12's published kernel (``threshold_grad_v2_d.h``), as a learner porting it to lab
    10's Python kernel class writes it: its second temp is half-sized but used as float, as in the source."""

    def __init__(self):
        self.T = np.dtype(np.int8)
        self.pipe = TPipe()
        self.inQueueG, self.inQueueF, self.outQueue = TQue(VECIN, 2), TQue(VECIN, 2), TQue(VECOUT, 2)
        self.maskBuf, self.tmpQueue1, self.tmpQueue2 = TBuf(VECCALC), TBuf(VECCALC), TBuf(VECCALC)
        self.gGm, self.fGm, self.outGm = GlobalTensor(self.T), GlobalTensor(self.T), GlobalTensor(self.T)

    def Init(self, input_gradient, input_feature, output_backprops, td):
        core_id = GetBlockIdx()
        if core_id < td.tailBlockNum:
            self.coreDataNum, self.tileNum, self.tailDataNum = td.bigCoreDataNum, td.finalBigTileNum, td.bigTailDataNum
            offset = td.bigCoreDataNum * core_id
        else:
            self.coreDataNum, self.tileNum = td.smallCoreDataNum, td.finalSmallTileNum
            self.tailDataNum = td.smallTailDataNum
            offset = (td.bigCoreDataNum * core_id
                      - (td.bigCoreDataNum - td.smallCoreDataNum) * (core_id - td.tailBlockNum))
        self.tileDataNum, self.threshold = td.tileDataNum, td.threshold
        self.gGm.SetGlobalBuffer(input_gradient + offset, self.coreDataNum)
        self.fGm.SetGlobalBuffer(input_feature + offset, self.coreDataNum)
        self.outGm.SetGlobalBuffer(output_backprops + offset, self.coreDataNum)
        for q in (self.inQueueG, self.inQueueF, self.outQueue):
            self.pipe.InitBuffer(q, 2, self.tileDataNum)
        self.pipe.InitBuffer(self.maskBuf, self.tileDataNum * sizeof(uint8_t))
        self.pipe.InitBuffer(self.tmpQueue1, self.tileDataNum * sizeof(half))
        self.pipe.InitBuffer(self.tmpQueue2, self.tileDataNum * sizeof(half))

    def Process(self):
        n = self.tileDataNum
        for i in range(self.tileNum):
            if i == self.tileNum - 1:
                n = self.tailDataNum
            g, f = self.inQueueG.AllocTensor(self.T), self.inQueueF.AllocTensor(self.T)
            DataCopy(g, self.gGm[i * self.tileDataNum], n)
            DataCopy(f, self.fGm[i * self.tileDataNum], n)
            self.inQueueG.EnQue(g)
            self.inQueueF.EnQue(f)
            g, f, out = self.inQueueG.DeQue(self.T), self.inQueueF.DeQue(self.T), self.outQueue.AllocTensor(self.T)
            mask = self.maskBuf.Get(uint8_t)
            tmp_h, tmp_f = self.tmpQueue1.AllocTensor(half), self.tmpQueue2.AllocTensor(float_)
            Cast(tmp_h, f, RoundMode.CAST_NONE, n)
            Cast(tmp_f, tmp_h, RoundMode.CAST_NONE, n)
            CompareScalar(mask, tmp_f, float_.type(self.threshold), CMPMODE.GT, n)
            Cast(tmp_h, g, RoundMode.CAST_NONE, n)
            Cast(tmp_f, tmp_h, RoundMode.CAST_NONE, n)
            Select(tmp_f, mask, tmp_f, float_.type(0), SELMODE.VSEL_TENSOR_SCALAR_MODE, n)
            Cast(tmp_h, tmp_f, RoundMode.CAST_NONE, n)
            Cast(out, tmp_h, RoundMode.CAST_TRUNC, n)
            self.outQueue.EnQue(out)
            self.inQueueG.FreeTensor(g)
            self.inQueueF.FreeTensor(f)
            out = self.outQueue.DeQue(self.T)
            DataCopy(self.outGm[i * self.tileDataNum], out, n)
            self.outQueue.FreeTensor(out)


class PublishedFixedTemp(Published):
    """The published int8 path with its float temp declared float-sized: correct, UB within budget, 8 steps."""

    def Init(self, a, b, c, td):
        pipe, tmp2 = self.pipe, self.tmpQueue2

        class Pipe:
            def InitBuffer(self, q, *args):
                return pipe.InitBuffer(q, 4 * td.tileDataNum) if q is tmp2 else pipe.InitBuffer(q, *args)

        self.pipe = Pipe()
        super().Init(a, b, c, td)


class HalfThreshold(Solution):
    def Init(self, a, b, c, td):
        super().Init(a, b, c, td)
        self.threshold = half.type(td.threshold)


class TruncThreshold(Solution):
    def Init(self, a, b, c, td):
        super().Init(a, b, c, td)
        self.threshold = half.type(math.trunc(min(max(float(td.threshold), -129.0), 128.0)))


class CompareInt8(Solution):
    def Compute(self, n):
        f = self.inQueueF.DeQue(int8_t)
        CompareScalar(self.maskBuf.Get(uint8_t), f, int8_t.type(0), CMPMODE.GT, n)


class SwappedSelect(Solution):
    def Compute(self, n):
        g, f = self.inQueueG.DeQue(int8_t), self.inQueueF.DeQue(int8_t)
        out, h, mask = self.outQueue.AllocTensor(int8_t), self.halfBuf.Get(half), self.maskBuf.Get(uint8_t)
        Cast(h, f, RoundMode.CAST_NONE, n)
        CompareScalar(mask, h, self.threshold, CMPMODE.LE, n)
        Cast(h, g, RoundMode.CAST_NONE, n)
        Select(h, mask, h, half.type(0), SELMODE.VSEL_TENSOR_SCALAR_MODE, n)
        Cast(out, h, RoundMode.CAST_TRUNC, n)
        self.outQueue.EnQue(out)
        self.inQueueG.FreeTensor(g)
        self.inQueueF.FreeTensor(f)


class NoTail(Solution):
    def Process(self):
        for i in range(self.tileNum):
            self.CopyIn(i, self.tileDataNum)
            self.Compute(self.tileDataNum)
            self.CopyOut(i, self.tileDataNum)


class SkipsLastTile(Solution):
    def Process(self):
        for i in range(self.tileNum - 1):
            self.CopyIn(i, self.tileDataNum)
            self.Compute(self.tileDataNum)
            self.CopyOut(i, self.tileDataNum)


class TwoFloatTemps(Solution):
    def Init(self, a, b, c, td):
        super().Init(a, b, c, td)
        self.f1, self.f2 = TBuf(VECCALC), TBuf(VECCALC)
        self.pipe.InitBuffer(self.f1, 4 * td.tileDataNum)
        self.pipe.InitBuffer(self.f2, 4 * td.tileDataNum)


@pytest.fixture
def mutants():
    """These tests grade variants of the reference kernel (subclasses with one bug) on purpose: inside
    ``reference_allowed()``, which lifts the refusal and the guard a learner meets."""
    with reference_allowed():
        yield


def _failure_text(report) -> str:
    assert not report.passed
    return str(report)


@pytest.mark.parametrize(("kernel", "kind", "lesson"), [
    (Published, "ub-overrun", "size the buffer in InitBuffer for the widest dtype"),
    (CompareInt8, "unsupported-on-soc", "a Cast from int8 to half is exact"),
    (NoTail, "gm-out-of-bounds", "its LAST tile is only tailDataNum long"),
    (TwoFloatTemps, "ub-overflow", "your UB plan does not fit"),
])
@pytest.mark.usefixtures("mutants")
def test_lab10_sanitizer_stops_carry_the_labs_lesson(kernel, kind, lesson):
    report = lab10.check(kernel)
    assert not report.passed and report.failure.kernel is not None
    assert report.failure.kernel.kind == kind and lesson in report.failure.kernel.message, str(report)


@pytest.mark.parametrize(("kernel", "words"), [
    (HalfThreshold, "compares against half(threshold)"),
    (TruncThreshold, "round toward zero"),
    (SwappedSelect, "selects the other way round"),
    (SkipsLastTile, "in the LAST tile of core"),
])
@pytest.mark.usefixtures("mutants")
def test_lab10_wrong_bytes_are_named(kernel, words):
    text = _failure_text(lab10.check(kernel))
    assert words in text and "inputs there:" in text, text
    # the report quotes the learner's own lines (this file), not the library's
    assert "your lines:" in text and "test_labs_10_11.py, line " in text and "ascend_lab/" not in text, text


@pytest.mark.usefixtures("mutants")
def test_lab10_published_path_passes_the_numbers_but_not_the_instruction_budget():
    """With its float temp sized honestly the book's int8 path is right and fits the UB: only the last case fails."""
    report = lab10.check(PublishedFixedTemp)
    assert report.run == report.total, str(report)
    assert "8 vector instructions per tile" in report.failure.why and "5 suffice" in report.failure.why
    assert "widest compute type is float" in report.failure.why


def test_lab10_solution_runs_five_steps_within_the_budget_and_no_warning_but_padding():
    r, out = lab10.run(Solution, 553_737, threshold=99.99)
    assert lab10.vector_steps(r) == ["Cast", "CompareScalar", "Cast", "Select", "Cast"]
    assert {w.kind for w in r.warnings} <= {"gm-padding"}
    plan = r.trace.ub_layout[0]
    assert max(b.offset + b.size for b in plan) < lab10.TMP_UB_OFFSET
    assert np.array_equal(out, lab10.oracle(*lab10.sample(553_737, 0), 99.99))


def test_lab10_oracle_edges():
    g = np.arange(-128, 128, dtype=np.int16).astype(np.int8)
    f = g[::-1].copy()
    assert (lab10.oracle(g, f, math.nan) == 0).all()
    assert np.array_equal(lab10.oracle(g, f, -math.inf), g)
    assert (lab10.oracle(g, f, 127.0) == 0).all() and (lab10.oracle(g, f, 1e30) == 0).all()
    assert np.array_equal(lab10.oracle(g, f, -128.5), g)
    # the C float of 99.99 is below 100: feature 100 keeps its gradient, although half(99.99) == 100
    keep = lab10.oracle(g, f, 99.99) != 0
    assert keep[f == 100].all() and not keep[f == 99].any() and float(np.float16(np.float32(99.99))) == 100.0


def test_lab10_page_shows_no_kernel_code():
    """The page holds the skeleton (no Compute) and the hidden solution cell only; no cell prints a kernel's source
    other than the collapsed solution, and the setup imports no kernel."""
    from pathlib import Path

    import jupytext

    nb = jupytext.read(Path(__file__).resolve().parents[1] / "labs" / "10_int8_threshold_kernel.md", fmt="md:myst")
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        tags = cell.metadata.get("tags", [])
        assert "def Compute" not in cell.source and "CompareScalar(" not in cell.source
        if "hide-cell" not in tags:
            assert "show_source(" not in cell.source and "op_kernel" not in cell.source


# ------------------------------------------------------------------------------------------------
# lab 11
# ------------------------------------------------------------------------------------------------
def test_lab11_target_is_the_best_of_an_exhaustive_search():
    n = lab11.SIZES[1]
    (b, u), best = lab11.best_plan(n)
    share = -(-n // 64)
    everything = [lab11.measure(bn, x, n) for bn in (1, 2)
                  for x in range(lab11.MIN_TILE, max(share, lab11.MIN_TILE) + 128, 128)]
    exhaustive = min(standalone.core_cycles(r.trace, 0) for r in everything)
    assert best == pytest.approx(exhaustive)
    assert standalone.core_cycles(lab11.measure(b, u, n).trace, 0) == pytest.approx(best)


@pytest.mark.parametrize("n", lab11.SIZES)
def test_lab11_the_tilings_own_plan_misses_the_target(n):
    td = standalone.tiling_for("hard_sigmoid_grad", n, "float16", standalone.make_soc(lab11.SOC), kernel="experimental")
    default = standalone.core_cycles(lab11.measure(2, td.ubFactor, n).trace, 0)
    assert default > (1 + lab11.TOLERANCE) * lab11.best_plan(n)[1]


@pytest.mark.parametrize(("plan", "words"), [
    ((4, 12_800), "B over"),
    ((2, 1290), "not a multiple of 32 B"),
    ((2, 1296), "not a whole number of 256-byte repeats"),
    ((0, 1024), "a queue takes 1 to 4 blocks"),
    ([2, 1024], "return a tuple of two ints"),
    ((2, 15_872), "tiles are longer than the best plan's"),
    ((2, 256), "less than the 16 KB the hardware guidance asks of a transfer"),
    ((2, 8064), "less than the 16 KB"),
    ((1, 8192), "with BUFFER_NUM 1 every queue has one block"),
    ((2, 12_928), "512-byte bursts"),
])
def test_lab11_teaching_messages(plan, words):
    report = lab11.check(lambda n: plan)
    assert not report.passed and words in str(report), str(report)
    if "slower" in report.failure.why:
        assert "bottleneck pipe" in report.failure.why and "% slower" in report.failure.why


def test_lab11_measure_refuses_inside_the_grading():
    def searching(n):
        return min(((2, u) for u in (512, 1024)), key=lambda p: standalone.core_cycles(lab11.measure(*p, n).trace, 0))

    report = lab11.check(searching)
    assert not report.passed and "may not call lab11.measure" in report.failure.error
    lab11.measure(2, 1024)           # outside the grading it runs again


@pytest.mark.parametrize(("buffer_num", "ub_factor"), [(1, 128), (2, 1280), (3, 4096), (4, 9600), (4, 12_800)])
def test_lab11_plan_bytes_is_what_the_kernels_init_lays_out(buffer_num, ub_factor):
    """lab11.plan_bytes (the legality rule and the 'B over' message) equals the end of the UB plan the kernel's own
    Init builds in a plan-only launch, over-capacity plans included."""
    from ascend_lab.ascendc import launch
    from ascend_lab.ops.hard_sigmoid_grad import op_host
    from ascend_lab.ops.kernel_args import gm_from_array

    n = lab11.SIZES[0]
    soc = standalone.make_soc(lab11.SOC)
    td0 = standalone.tiling_for("hard_sigmoid_grad", n, "float16", soc, kernel="experimental")
    td = op_host.HardSigmoidGradTilingData(totalLength=n, blockFactor=td0.blockFactor, ubFactor=ub_factor,
                                           alpha=td0.alpha, beta=td0.beta, blockDim=td0.blockDim,
                                           tilingKey=td0.tilingKey)
    entry, template = standalone.kernel_entry("hard_sigmoid_grad", td, "float16", buffer_num, kernel="experimental")
    args = [gm_from_array(None, name, n * 2) for name in ("gradOutput", "self", "gradInput")]
    run = launch(entry, td.blockDim, args, td.to_bytes(), soc, outputs=(2,), record=False, tiling_data=td, cores=[0],
                 plan_only=True, **template)
    assert max(b.offset + b.size for b in run.trace.ub_layout[0]) == lab11.plan_bytes(buffer_num, ub_factor)


def test_lab11_slow_report_quotes_the_learners_line_but_not_the_best_plan():
    def choose_plan(n):
        return 2, 15_872

    report = lab11.check(choose_plan)
    (_, best_u), _ = lab11.best_plan(lab11.SIZES[0])
    why = report.failure.why
    # named as the package names a learner's line (errors.SourceLine: the file's path from the working directory)
    assert "\nyour line: " in why and "test_labs_10_11.py, line " in why, why
    assert ", in choose_plan: return 2, 15_872" in why, why
    assert f"ubFactor {best_u:,}" not in why and "at most" in why


# ------------------------------------------------------------------------------------------------
# both labs: the reference solution handed in, and the learner's lines
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("lab", "reference"), [(lab10, Solution), (lab11, solutions.choose_plan)],
                         ids=["lab10", "lab11"])
def test_the_reference_handed_in_fails_and_passes_on_purpose(lab, reference):
    """``from labkit.solutions import ...`` then ``check(...)`` fails before any case with the kit's message; inside
    ``reference_allowed()`` (the page's collapsed solution cell, the tests' proof) the same object passes and the
    report says that it checked the reference. A learner's function that merely calls the reference is refused."""
    report = lab.check(reference)
    assert not report.passed and report.run == 0 and report.failure.case is None, str(report)
    assert report.failure.why.startswith("this is the reference solution, not your code"), str(report)
    assert report.failure.got == f"labkit.solutions.{lab.FUNCTION}"
    with reference_allowed():
        report = lab.check(reference)
    assert report.passed and report.run == report.total > 0, str(report)
    said = f"this checked the reference solution, labkit.solutions.{lab.FUNCTION}, not code of yours"
    assert report.summary[0] == said
    if lab is lab11:                 # a function that merely calls the reference is refused too
        report = lab11.check(lambda n: solutions.choose_plan(n))
        assert not report.passed and report.failure.why.startswith("you called the reference"), str(report)


def _notebook_cell(source: str, name: str) -> dict:
    """Run ``source`` as ``labkit.notebook.exec_cells`` runs a lab's cell: compiled under a cell's name that
    ``linecache`` knows, so the quoted lines come from the 'notebook', not from this file."""
    import linecache

    linecache.cache[name] = (len(source), None, source.splitlines(keepends=True), name)
    namespace = {"Solution": Solution, "half": half, "__name__": "lab_cell"}
    exec(compile(source, name, "exec", dont_inherit=True), namespace)
    return namespace


@pytest.mark.usefixtures("mutants")
def test_lab10_quotes_the_learners_code_lines_not_their_comments():
    """The report's "your lines" are the kit's ``checker.quote_lines``: named as the package names a learner's line
    (cell, line, method, code), the class's own methods only, a comment that mentions the threshold left out."""
    cell = "<10_int8_threshold_kernel.md cell 99>"
    ns = _notebook_cell(
        "class Mine(Solution):\n"
        "    def Init(self, a, b, c, td):\n"
        "        super().Init(a, b, c, td)\n"
        "        # TODO: the compare value from td.threshold\n"
        "        self.threshold = half.type(td.threshold)\n", cell)
    text = _failure_text(lab10.check(ns["Mine"]))
    assert "compares against half(threshold)" in text, text
    assert "your lines:" in text and f"{cell}, line 5, in Init: self.threshold = half.type(td.threshold)" in text, text
    assert "TODO" not in text and "solutions.py" not in text, text
    # one implementation: lab 10 and lab 11 quote through the checker, they read no source of their own
    for module in (lab10, lab11):
        source = inspect.getsource(module)
        assert "quote_lines(" in source and "getsourcelines" not in source and "getsourcefile" not in source
    assert checker.quote_lines(Solution.Init, ("td.threshold",)) == []       # library code is never quoted


def test_lab11_quotes_the_last_return_of_the_learners_rule():
    cell = "<11_tuning.md cell 99>"
    ns = _notebook_cell(
        "def choose_plan(n):\n"
        "    # return the best plan\n"
        "    if n < 0:\n"
        "        return 1, 128\n"
        "    return 2, 15_872\n", cell)
    why = lab11.check(ns["choose_plan"]).failure.why
    assert f"your line: {cell}, line 5, in choose_plan: return 2, 15_872" in why, why
