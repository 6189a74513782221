"""Labs 10 and 11 (the harder labs of issue 12 item 5): the checkers' teaching messages fire on the usual mistakes,
the book's published int8 kernel does not pass lab 10, lab 10's oracle agrees with the formula at the edges, and
lab 11's target is the best plan of an exhaustive search and is not the tiling's own plan. Like labs 1-9, both refuse
the reference solution handed in, and quote the learner's lines with the kit's one ``checker.quote_lines``."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
from labkit import lab10_int8_threshold as lab10
from labkit import lab11_tuning as lab11
from labkit import solutions
from labkit.checker import reference_allowed
from labkit.lab5_copy_compute import compile_kernel

from ascend_lab import standalone

Solution = solutions.KernelThresholdGradV2DInt8
_REF = Solution.sources[-1].text


def _variant(name: str, *edits: tuple[str, str]):
    """A learner's lab 10 kernel: the reference's C++ with ``edits`` (old, new) applied, compiled as the learner's own
    cell ``name``."""
    text = _REF
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    return compile_kernel(text, name=name)


# ------------------------------------------------------------------------------------------------
# lab 10: the usual mistakes, as edits of the reference's C++
# ------------------------------------------------------------------------------------------------
_FLOOR = "            if (static_cast<float>(k) > t) {\n                k = k - 1;\n            }\n"
_COMPUTE = """        Cast(h, f, RoundMode::CAST_NONE, n);                         // exact
        CompareScalar(mask, h, threshold, CMPMODE::GT, n);           // n half = whole 256-byte repeats
        Cast(h, g, RoundMode::CAST_NONE, n);                         // the feature is dead: reuse the temp
        Select(h, mask, h, static_cast<half>(0), SELMODE::VSEL_TENSOR_SCALAR_MODE, n);
        Cast(out, h, RoundMode::CAST_TRUNC, n);                      // integers in int8's range: exact"""
_PUBLISHED_COMPUTE = """        LocalTensor<float> tf = floatBuf.Get<float>();
        Cast(h, f, RoundMode::CAST_NONE, n);
        Cast(tf, h, RoundMode::CAST_NONE, n);
        CompareScalar(mask, tf, thresholdF, CMPMODE::GT, n);
        Cast(h, g, RoundMode::CAST_NONE, n);
        Cast(tf, h, RoundMode::CAST_NONE, n);
        Select(tf, mask, tf, static_cast<float>(0), SELMODE::VSEL_TENSOR_SCALAR_MODE, n);
        Cast(h, tf, RoundMode::CAST_NONE, n);
        Cast(out, h, RoundMode::CAST_TRUNC, n);"""
_MEMBERS = "    half threshold = 0;\n"
_HALFBUF = "        pipe.InitBuffer(halfBuf, tileDataNum * sizeof(half));\n"


def _published(name: str, float_bytes: str):
    """The int8 path of chapter 12's published kernel (threshold_grad_v2_d.h) as a learner porting it writes it:
    widen to half, then float, compare and select in float, narrow twice; its float temp sized ``float_bytes``."""
    return _variant(name, (_COMPUTE, _PUBLISHED_COMPUTE),
                    (_MEMBERS, _MEMBERS + "    float thresholdF = 0;\n    TBuf<QuePosition::VECCALC> floatBuf;\n"),
                    (_HALFBUF, _HALFBUF + f"        pipe.InitBuffer(floatBuf, {float_bytes});\n"
                               "        thresholdF = td.threshold;\n"))


Published = _published("<published>", "tileDataNum * sizeof(half)")          # used as float: half-sized, as the source
PublishedFixedTemp = _published("<published, fixed>", "tileDataNum * sizeof(float)")
HalfThreshold = _variant("<half threshold>", ("        if (t == t) {", "        if (false) {"))
TruncThreshold = _variant("<trunc threshold>", (_FLOOR, ""))
CompareInt8 = _variant("<compare int8>",
                       (_COMPUTE, "        CompareScalar(mask, f, static_cast<int8_t>(0), CMPMODE::GT, n);"))
SwappedSelect = _variant("<swapped select>", ("threshold, CMPMODE::GT, n);", "threshold, CMPMODE::LE, n);"))
NoTail = _variant("<no tail>",
                  ("uint64_t n = i < tileNum - 1 ? tileDataNum : tailDataNum;", "uint64_t n = tileDataNum;"))
SkipsLastTile = _variant("<skips the last tile>", ("for (uint64_t i = 0; i < tileNum; i++) {",
                                                   "for (uint64_t i = 0; i + 1 < tileNum; i++) {"))
WrongSmallOffset = _variant("<small-core offset>", (          # every core placed as if it were big
    "offset = td.bigCoreDataNum * core - (td.bigCoreDataNum - td.smallCoreDataNum) * (core - td.tailBlockNum);",
    "offset = td.bigCoreDataNum * core;"))
TwoFloatTemps = _variant("<two float temps>", (_MEMBERS, _MEMBERS + "    TBuf<QuePosition::VECCALC> f1;\n"
                                               "    TBuf<QuePosition::VECCALC> f2;\n"),
                         (_HALFBUF, _HALFBUF + "        pipe.InitBuffer(f1, 4 * tileDataNum);\n"
                                               "        pipe.InitBuffer(f2, 4 * tileDataNum);\n"))


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
    (NoTail, "gm-out-of-bounds", "a TAIL problem: core 0's tile 0 starts at the right element"),
    (WrongSmallOffset, "gm-out-of-bounds", "an OFFSET problem: core 39 (a small core) copies tile 0 at element"),
    (TwoFloatTemps, "ub-overflow", "your UB plan does not fit"),
])
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
def test_lab10_wrong_bytes_are_named(kernel, words):
    text = _failure_text(lab10.check(kernel))
    assert words in text and "inputs there:" in text, text
    # the report quotes the learner's own lines (this file), not the library's
    assert "your lines:" in text and "<" in text.split("your lines:")[1] and "ascend_lab/" not in text, text


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
    from ascend_lab.ops.common.kernel_args import gm_from_array
    from ascend_lab.ops.hard_sigmoid_grad import op_host

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
    namespace = {"__name__": "lab_cell"}
    exec(compile(source, name, "exec", dont_inherit=True), namespace)
    return namespace


def test_lab10_quotes_the_learners_code_lines_not_their_comments():
    """The report's "your lines" are the learner's C++ lines (cell, line, code) that hold the mistake, a comment
    that mentions the threshold left out; never a line of the reference or the kit."""
    cell = "<10_int8_threshold_kernel.md cell 99>"
    mine = _variant(cell, ("        if (t == t) {", "        // TODO: the compare value from td.threshold\n"
                                                     "        if (false) {"))
    text = _failure_text(lab10.check(mine))
    assert "compares against half(threshold)" in text, text
    assert "your lines:" in text and f"{cell}, line " in text and ": float t = td.threshold;" in text, text
    assert "TODO" not in text and "labkit/" not in text, text
    # one implementation: lab 10 and lab 11 quote through the checker or lab 5's cpp_lines, they read no source
    for module in (lab10, lab11):
        source = inspect.getsource(module)
        assert "getsourcelines" not in source and "getsourcefile" not in source
    assert lab10._your_lines(Solution, ("td.threshold",)) == ""       # the reference's lines are never quoted


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
