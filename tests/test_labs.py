"""The labs (the lab kit ``labs/labkit`` + the notebooks ``labs/*.md``): every reference solution passes its
checker, every untouched skeleton fails it (with a report, not an exception), the notebooks follow the lab
conventions (tags, header, toc), the shared checker machinery -- including the hook for kernel labs -- works,
and the kit stays apart from the ``ascend_lab`` package (not imported by it, not in it, public names only).

The repository's ``conftest.py`` puts ``labs/`` on ``sys.path``, as Jupyter's working directory does for
the notebooks."""

from __future__ import annotations

import ast
import functools
import linecache
import re
from pathlib import Path

import jupytext
import numpy as np
import pytest
from labkit import LABS, checker, get, solutions
from labkit.checker import Case, KernelFault, Raises, Report, compare_arrays, locator, reference_allowed, run_battery
from labkit.notebook import SETUP, SKELETON, cells, exec_cells, show_source

from ascend_lab.ascendc.errors import KernelError

ROOT = Path(__file__).resolve().parents[1]
IDS = [f"lab{lab.number}" for lab in LABS]


@pytest.fixture
def mutants():
    """A test that grades a learner's variant built from the reference (a subclass with one bug, the reference's
    source with one line edited) does so on purpose: inside ``reference_allowed()``, which lifts both the refusal
    and the guard a learner meets (tests/test_labs_integrity.py proves those)."""
    with reference_allowed():
        yield


def _tags(cell) -> list[str]:
    return list(cell.metadata.get("tags", []))


# ------------------------------------------------------------------------------------------------
# solutions pass, skeletons fail
# ------------------------------------------------------------------------------------------------
@functools.cache
def _reference_report(lab) -> Report:
    """``check(reference)`` with the checker's defaults, once per session: the proof checks the reference on purpose
    (inside ``reference_allowed()``), and test_solution_passes_its_checker and test_kernel_batteries_cover_every_soc
    assert on the same report (a report is not changed after its check)."""
    with reference_allowed():
        return lab.load().check(getattr(solutions, lab.function))


@pytest.mark.parametrize("lab", LABS, ids=IDS)
def test_solution_passes_its_checker(lab):
    report = _reference_report(lab)
    assert isinstance(report, Report)
    assert report.passed, str(report)
    assert report.run == report.total > 0
    text = str(report)
    assert "PASSED" in text and report.summary, text
    said = f"this checked the reference solution, labkit.solutions.{lab.function}, not code of yours"
    assert report.summary[0] == said


@pytest.mark.parametrize("lab", LABS, ids=IDS)
def test_a_reference_solution_handed_in_fails(lab):
    """``from labkit.solutions import X`` then ``check(X)``: fails before the first case, saying why; so does the
    reference behind a ``functools.wraps`` wrapper. Nothing of the learner's ran, so no case is blamed."""
    import functools

    reference = getattr(solutions, lab.function)
    for handed_in in (reference, functools.wraps(reference)(lambda *a, **k: reference(*a, **k))):
        report = lab.load().check(handed_in)
        assert not report.passed and report.run == 0 and report.failure.case is None, str(report)
        assert report.failure.why.startswith("this is the reference solution, not your code"), str(report)
        assert report.failure.got == f"labkit.solutions.{lab.function}"
        assert "FAILED before the first case" in str(report)


def test_what_counts_as_the_reference():
    """A function or class of ``labkit.solutions`` (or compiled from solutions.py) is the reference; so, for the
    refusal before the first case, is anything built on it that a static walk sees: a subclass, a wrapper that
    reads it as a global or closes over it, a ``functools.partial``, a default argument. A lookup no walk sees
    (``sys.modules``) meets the guard instead: the reference raises ReferenceUsed while the learner's code runs."""
    import functools
    import sys

    lab3 = get(3).load()
    ref = solutions.softplus_grad_tiling
    assert checker.is_reference(ref) and checker.is_reference(solutions.SoftshrinkGradTilingData)
    assert checker.is_reference(solutions.KernelLeakyReluGrad)           # lab 5's C++, compiled
    from labkit import lab5_copy_compute as lab5

    included = lab5.compile_kernel('#include "labkit/reference/lab5_leaky_relu_grad.cpp"\n', name="<my cell>")
    assert not checker.is_reference(included)
    assert checker.reference_behind(included).startswith("#includes the reference solution's C++")
    report = lab5.check(included)
    assert not report.passed and report.failure.why.startswith("you called the reference"), str(report)

    class Mine(solutions.SoftshrinkGradTilingData):
        pass

    def mine(*args):
        return solutions.softplus_grad_tiling(*args)

    def closure(*args):
        return ref(*args)

    def default(*args, _f=ref):
        return _f(*args)

    assert checker.reference_behind(Mine).startswith("subclasses labkit.solutions.SoftshrinkGradTilingData")
    assert "reads the global 'solutions'" in checker.reference_behind(mine)
    assert checker.reference_behind(closure).startswith("closes over")
    assert checker.reference_behind(default).startswith("has a default argument")
    assert checker.reference_behind(functools.partial(ref)).startswith("is labkit.solutions.softplus_grad_tiling")
    for cheat in (mine, closure, default, functools.partial(mine)):
        report = lab3.check(cheat)
        assert not report.passed and report.run == 0, str(report)
        assert report.failure.why.startswith("you called the reference"), str(report)

    def sneaky(*args):
        return sys.modules["labkit." + "solutions"].softplus_grad_tiling(*args)

    report = lab3.check(sneaky)
    assert not report.passed and report.run == 1 and report.failure.error.startswith("ReferenceUsed: you called the "
                                                                                     "reference solution"), str(report)

    namespace = {"__name__": "my_cell"}   # the reference's source, exec'd as one's own module
    exec(compile(ref.reference_source, solutions.__file__, "exec"), namespace)
    assert "def softplus_grad_tiling(" in ref.reference_source and not hasattr(ref, "__wrapped__")
    assert checker.is_reference(namespace["softplus_grad_tiling"])    # its code still comes from solutions.py


@functools.cache
def _skeleton_report(lab) -> tuple[object, Report]:
    """The untouched skeleton (the lab-setup cells, then the lab-skeleton cells, in a fresh namespace) and its check
    with the checker's defaults, once per session: three tests assert on the same report."""
    fn = exec_cells(ROOT / lab.notebook).get(lab.function)
    return fn, (lab.load().check(fn) if callable(fn) else None)


@pytest.mark.parametrize("lab", LABS, ids=IDS)
def test_untouched_skeleton_fails_its_checker(lab):
    fn, report = _skeleton_report(lab)
    assert callable(fn), f"the skeleton of {lab.notebook} does not define {lab.function}()"
    assert isinstance(report, Report)             # it reports, it does not raise
    assert not report.passed, f"the untouched skeleton of lab {lab.number} passes its checker"
    failure = report.failure
    assert failure.case is not None and failure.expected and failure.got
    assert "FAILED at case" in str(report) and "\u2717" in report._repr_html_()


def test_skeletons_fail_for_a_reason_not_a_crash():
    """A realistic skeleton runs: its first failure is a wrong answer, not an exception in its own code."""
    for lab in LABS:
        report = _skeleton_report(lab)[1]
        assert not report.failure.error, f"lab {lab.number}: {report}"


# ------------------------------------------------------------------------------------------------
# the notebooks follow the conventions
# ------------------------------------------------------------------------------------------------
def test_registry_matches_the_files_and_the_toc():
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    assert "- caption: Labs" in toc
    notebooks = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "labs").glob("*.md"))
    assert notebooks == sorted(lab.notebook for lab in LABS)
    assert [lab.number for lab in LABS] == list(range(1, len(LABS) + 1))
    assert toc.index("- caption: Labs") > max(toc.index(f"chapters/{p.stem}") for p in (ROOT / "chapters").glob("*.md"))
    for lab in LABS:
        assert f"file: {lab.notebook.removesuffix('.md')}" in toc
        module = lab.load()
        assert module.FUNCTION == lab.function and callable(module.check)
        assert callable(getattr(solutions, lab.function))
        assert get(lab.number) is lab


_COUNT_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen "
    "eighteen nineteen twenty".split())}


def test_readme_and_intro_state_no_stale_lab_count():
    """Issue 22 item 9: where the README or the book's intro counts the labs ("twelve labs", "12 hands-on labs"), the
    count is the table of contents' (they may also name no number and point at the toc's Labs part)."""
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    in_toc = len(re.findall(r"^\s*- file: labs/", toc, re.M))
    assert in_toc == len(LABS)
    number = r"(\d+|" + "|".join(_COUNT_WORDS) + r")"
    for name in ("README.md", "intro.md"):
        text = (ROOT / name).read_text(encoding="utf-8")
        for m in re.finditer(number + r"(?:[ -][a-z-]+)?\s+labs\b", text, re.I):
            said = int(m.group(1)) if m.group(1).isdigit() else _COUNT_WORDS[m.group(1).lower()]
            assert said == in_toc, f"{name} says {m.group(0)!r}; _toc.yml lists {in_toc} labs"
        assert "_toc.yml" in text or "Labs" in text, name


@pytest.mark.parametrize("lab", LABS, ids=IDS)
def test_notebook_follows_the_lab_conventions(lab):
    path = ROOT / lab.notebook
    header = (ROOT / "chapters" / "04_checks.md").read_text(encoding="utf-8").split("\n---\n", 1)[0]
    assert path.read_text(encoding="utf-8").startswith(header + "\n---\n"), "copy the MyST header exactly"
    nb = jupytext.read(path, fmt="md:myst")
    code = [(i, c) for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    setup = [i for i, c in code if SETUP in _tags(c)]
    skeleton = [i for i, c in code if SKELETON in _tags(c)]
    assert setup and skeleton and max(setup) < min(skeleton)
    for i in skeleton:
        tags, src = _tags(nb.cells[i]), nb.cells[i].source
        # a skeleton runs everywhere (the book, nbval): the report the page shows is the untouched skeleton's
        assert "skip-execution" not in tags and "nbval-skip" not in tags, f"cell {i}: {tags}"
        assert "TODO" in src and ('"""' in src or src.startswith("%%ascendc")), "a skeleton has a docstring and TODOs"
    solution = [(i, c) for i, c in code if "hide-cell" in _tags(c) and f"solutions.{lab.function}" in c.source]
    assert len(solution) == 1, "one collapsed solution cell"
    src = solution[0][1].source
    # the solution cell shows the reference's source and runs nothing of it (no check, no stand-in)
    assert "show_source(" in src and ".check(" not in src and "reference_allowed" not in src, src
    assert "stand_in" not in src and not re.search(rf"^{lab.function}\s*=", src, re.M), src
    checker = [c for _, c in code if not _tags(c) and re.search(rf"\.check\({lab.function}\b", c.source)]
    assert checker, "a visible 'run the checker' cell that checks the learner's function"
    markdown = "".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "## What to try next" in markdown
    # before you start: the chapters it builds on (as links) and an honest time estimate
    before = re.search(r"```\{admonition\} Before you start\n(.*?)\n```", markdown, re.S)
    assert before, "a 'Before you start' admonition"
    prerequisites = re.search(r"\*\*Prerequisites:\*\*(.*?)(?=\n- \*\*|\Z)", before.group(1), re.S)
    assert prerequisites and re.search(r"\{doc\}`\.\./chapters/\w+`", prerequisites.group(1)), "chapters as {doc} links"
    for link in re.findall(r"\{doc\}`([^`]+)`", prerequisites.group(1)):
        assert (path.parent / f"{link}.md").is_file(), f"prerequisite {link} does not exist"
    time_line = re.search(r"\*\*Time:\*\*([^\n]*(?:\n  [^\n]*)*)", before.group(1))
    assert time_line and re.search(r"\b(minutes|hours?)\b", time_line.group(1)), "a time estimate"
    # hints: at least two collapsed levels, all before the collapsed solution
    hint_block = re.compile(r"\{dropdown\}[^\n]*Hint|\{admonition\}[^\n]*Hint[^\n]*\n:class: dropdown")
    hints = {i: len(hint_block.findall(c.source)) for i, c in enumerate(nb.cells) if c.cell_type == "markdown"}
    assert sum(n for i, n in hints.items() if i < solution[0][0]) >= 2, "two or more levels of collapsed hints"
    assert not any(n for i, n in hints.items() if i > solution[0][0]), "the hints come before the solution"
    # the setup cells are the only code the skeletons need
    assert cells(path, SETUP) and cells(path, SKELETON)


def test_oracles_are_independent_of_the_solutions():
    """The lab modules (which hold the oracles) never import the solutions."""
    for lab in LABS:
        tree = ast.parse(Path(lab.load().__file__).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""] + [a.name for a in node.names]
                assert not any("solutions" in n for n in names), f"{lab.module} imports the solutions"
            elif isinstance(node, ast.Import):
                assert not any("solutions" in a.name for a in node.names)


# ------------------------------------------------------------------------------------------------
# the lab kit is course material, apart from the ascend_lab package
# ------------------------------------------------------------------------------------------------
KIT = ROOT / "labs" / "labkit"
PACKAGE = ROOT / "ascend_lab"


def _imports(path: Path) -> list[tuple[int, str, list[str]]]:
    """(line, module, imported names) of every import in a file, module-level and inside functions;
    relative imports keep their leading dots."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            out.append((node.lineno, "." * node.level + (node.module or ""), [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            out.extend((node.lineno, a.name, []) for a in node.names)
    return out


def test_the_lab_kit_is_not_part_of_the_package():
    import importlib.util
    import tomllib

    import labkit
    import setuptools

    assert Path(labkit.__file__).resolve().parent == KIT
    assert importlib.util.find_spec("ascend_lab.labs") is None, "the labs must not be importable from ascend_lab"
    assert not (PACKAGE / "labs").exists()
    # what the wheel packs: the packages pyproject.toml's find rule selects
    find = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"]
    packages = setuptools.find_packages(where=str(ROOT), include=find["find"]["include"])
    assert "ascend_lab" in packages and all(p.split(".")[0] == "ascend_lab" for p in packages), packages
    shipped = {p.name for pkg in packages for p in (ROOT / pkg.replace(".", "/")).glob("*.py")}
    assert not shipped & {p.name for p in KIT.glob("*.py") if p.name != "__init__.py"}
    # nothing in the package imports the lab kit
    for path in PACKAGE.rglob("*.py"):
        for line, module, _ in _imports(path):
            assert not module.startswith(("labkit", "ascend_lab.labs")), f"{path.relative_to(ROOT)}:{line}"


def test_the_lab_kit_uses_only_public_names_of_the_package():
    """The kit is a client of ascend_lab like a learner: ``acl_session``/``DeviceTensors``, not ``_session``."""
    assert sorted(p.name for p in KIT.glob("*.py"))  # the scan below sees files
    for path in KIT.glob("*.py"):
        for line, module, names in _imports(path):
            if module.startswith("."):
                assert module.lstrip(".") == "" or not module.lstrip(".").startswith("_")
                continue
            if module.split(".")[0] != "ascend_lab":
                continue
            private = [p for p in module.split(".") + names if p.startswith("_") and p != "__future__"]
            assert not private, f"{path.name}:{line} imports private {private} from {module}"


def _help(module) -> str:
    import pydoc

    return pydoc.render_doc(module, renderer=pydoc.plaintext)


def test_help_of_the_lab_modules_reveals_no_solution():
    """``help(labN)`` shows nothing of the reference solutions that the notebook does not already show:
    no line of ``solutions.py`` that is absent from every lab page turns up in a lab module's help."""
    pages = "\n".join((ROOT / lab.notebook).read_text(encoding="utf-8") for lab in LABS)
    source = Path(solutions.__file__).read_text(encoding="utf-8").splitlines()
    secret = {line.strip() for line in source
              if len(line.strip()) >= 30 and not line.strip().startswith("#") and line.strip() not in pages}
    assert len(secret) > 50, "the scan compares something"
    for lab in LABS:
        text = _help(lab.load())
        leaked = sorted(line for line in secret if line in text)
        assert not leaked, f"help() of {lab.module} shows solution lines: {leaked[:3]}"


#: What each lab asks the learner to decide, as help() of its module must not say it.
_DECISIONS = {
    3: ("(9, 4)", "(8, 4)", "float32 9", "36 bytes"),
    4: ("float32 8", "int32 9", "bfloat16 10", "int8 15", "\": 8,", "\": 9,", "\": 10,", "\": 15", "30 bytes",
        "34 bytes", "ub_data_number"),
    5: ("buffer_num = 2", "buffer_num 2", "two blocks", "double-buffered", "3 queues", "ceil_div(n", "rounded up",
        "round it up"),
    7: ("3 * buffer_num", "3 x buffer_num", "8 slots", "slots = 3"),
}


@pytest.mark.parametrize("number", sorted(_DECISIONS))
def test_help_of_a_lab_module_does_not_make_its_decision(number):
    """help() of lab 3 gives no (bufferNum, typeSize), lab 4 no ubDataNumber of the variant, lab 5 no UB plan or
    compare count, lab 7 no slot count;
    the answer keys (oracles, reference tiling and measurements) are marked and, where they hold an answer,
    out of ``__all__``."""
    module = get(number).load()
    text = _help(module).lower()
    for phrase in _DECISIONS[number]:
        assert phrase not in text, f"help(lab{number}) says {phrase!r}"
    if number == 7:
        assert not {"tiling", "reference_speedup", "reference_overlap"} & set(module.__all__)
        assert all(getattr(module, n).answer_key for n in ("tiling", "reference_speedup", "reference_overlap"))


def test_help_of_lab6_does_not_name_the_bugs():
    """Lab 6 is finding the bugs from the reports: its module's help names none of them (the family is private to
    the module, the fixes are in labkit.solutions)."""
    text = _help(get(6).load()).lower()
    for word in ("ub-overflow", "misaligned-copy", "alloc-exhausted", "twice", "missing", "forget", "plain datacopy",
                 "freetensor", "datacopypad", "sizeof", "cmpmode", "nalign", "maskbytes"):
        assert word not in text, word
    assert "labkit.solutions" in text          # where the bugs are explained


# ------------------------------------------------------------------------------------------------
# the shared checker machinery
# ------------------------------------------------------------------------------------------------
def _lab5_cxx(name: str, *edits: tuple[str, str]):
    """A learner's lab 5 kernel: the reference's C++ with ``edits`` (old, new) applied, compiled as the learner's
    own cell ``name`` (not a reference: its file is the learner's)."""
    from labkit import lab5_copy_compute as lab5

    text = solutions.KernelLeakyReluGrad.sources[-1].text
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    return lab5.compile_kernel(text, name=name)


_MODE0_COMPUTE = """        LocalTensor<T> zero = zeroBuf.template Get<T>();
        Duplicate(zero, static_cast<T>(0), perRepeat);
        Muls(out, grad, slope, n);
        for (int64_t start = 0; start < n; start += perRepeat) {
            int64_t count = n - start < perRepeat ? n - start : perRepeat;
            Compare(mask, x[start], zero, CMPMODE::GT, perRepeat);
            Select(out[start], mask, grad[start], out[start], SELMODE::VSEL_CMPMASK_SPR, count);
        }"""
_LAB5_SELECT = """        Muls(out, grad, slope, n);
        CompareScalar(mask, x, static_cast<T>(0), CMPMODE::GT, nAligned);
        Select(out, mask, grad, out, SELMODE::VSEL_TENSOR_TENSOR_MODE, n);"""


def _lab5_mode0(name: str, compute: str = _MODE0_COMPUTE):
    """The lab 5 kernel written with what Ascend910A's AscendC API offers: per 256-byte repeat, Compare against a
    Duplicate'd zero repeat, then Select in mode 0 (the first repeat's bits for the repeat)."""
    return _lab5_cxx(name, ("    TBuf<QuePosition::VECCALC> maskBuf;\n",
                            "    TBuf<QuePosition::VECCALC> maskBuf;\n    TBuf<QuePosition::VECCALC> zeroBuf;\n"),
                     ("        slope = static_cast<T>(td.negativeSlope);",
                      "        pipe.InitBuffer(zeroBuf, 256);\n        slope = static_cast<T>(td.negativeSlope);"),
                     (_LAB5_SELECT, compute))


def _learner(source: str, name: str, filename: str = "<learner cell>"):
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    ns: dict = {}
    exec(compile(source, filename, "exec"), ns)
    return ns[name]


def test_an_exception_in_learner_code_is_a_failure_with_the_traceback_line():
    fn = _learner("def f(x):\n    y = x + 1\n    return y / (x - 2)\n", "f")
    cases = [Case(f"x = {x}", {"x": x}, x + 1 if x != 2 else 0.0) for x in (0, 2)]
    cases[0].expected = fn(0)
    report = run_battery(fn, cases, title="t")
    assert not report.passed and report.run == 2
    assert report.failure.error == "ZeroDivisionError: division by zero"
    assert "<learner cell>, line 3, in f: return y / (x - 2)" in report.failure.where
    assert "1 earlier case passed" in str(report)


def test_exception_inside_the_package_names_both_lines():
    fn = _learner("from ascend_lab.opdev.data_type_utils import PromoteType\n"
                  "def f(d):\n    return PromoteType(d, d)\n", "f", "<cell 2>")
    report = run_battery(fn, [Case("bad dtype", {"d": "no-such-dtype"}, None)], title="t")
    where = report.failure.where
    assert where.startswith("<cell 2>, line 3, in f: return PromoteType(d, d)")
    assert "(raised in ascend_lab/" in where


def test_expected_exceptions_and_returned_values():
    from ascend_lab.opdev.tiling_data import TilingError

    def tiling(n):
        if n == 0:
            raise TilingError("empty")
        return n

    ok = run_battery(tiling, [Case("empty", {"n": 0}, Raises(TilingError)), Case("one", {"n": 1}, 1)], title="t",
                     summary=["worked example"])
    assert ok.passed and ok.summary == ["worked example"] and "PASSED: 2 cases" in str(ok)
    bad = run_battery(lambda n: n, [Case("empty", {"n": 0}, Raises(TilingError))], title="t")
    assert not bad.passed and bad.failure.expected == "raises TilingError" and bad.failure.got == "0"
    wrong = run_battery(lambda n: 1 / 0, [Case("empty", {"n": 0}, Raises(TilingError))], title="t")
    assert wrong.failure.error.startswith("ZeroDivisionError")


def test_not_a_function():
    report = run_battery(42, [Case("c", {}, 1)], title="Lab 0")
    assert not report.passed and report.failure.case is None
    assert "FAILED before the first case" in str(report)


def test_report_html_escapes():
    report = run_battery(lambda s: "<b>", [Case("<script>", {"s": "&"}, "x")], title="T <1>")
    html = report._repr_html_()
    assert "<script>" not in html and "&lt;script&gt;" in html and "&lt;b&gt;" in html


def test_kernel_hook_reports_the_sanitizer_core_and_tile():
    def kernel(n):
        raise KernelError("UB read past the end of inQueueGrad", instruction="DataCopy", core=3, tile=1,
                          kind="ub-out-of-range")

    report = run_battery(kernel, [Case("N = 1000", {"n": 1000}, np.zeros(3))], title="Lab 5")
    assert report.failure.kernel == KernelFault("UB read past the end of inQueueGrad", "ub-out-of-range", "DataCopy",
                                                3, 1)
    text = str(report)
    assert "sanitizer  [ub-out-of-range] UB read past the end of inQueueGrad" in text
    assert "core 3, tile 1, instruction DataCopy" in text
    expected_fault = run_battery(kernel, [Case("fire", {"n": 1}, KernelFault(kind="ub-out-of-range", core=3))],
                                 title="t")
    assert expected_fault.passed
    other_core = run_battery(kernel, [Case("fire", {"n": 1}, KernelFault(core=4))], title="t")
    assert not other_core.passed and other_core.failure.kernel.core == 3


def test_kernel_hook_with_the_real_simulator():
    """A real sanitizer stop (UB overflow) and a real wrong result located by core and tile."""
    from ascend_lab import golden
    from ascend_lab.base.platform import get_soc
    from ascend_lab.ops.hard_sigmoid_grad import op_host, op_kernel
    from ascend_lab.run import DeviceTensors, acl_session

    soc = get_soc("Ascend950PR")
    n = 1000
    x = np.linspace(-4, 4, n, dtype=np.float32)
    g = np.ones(n, np.float32)
    good = op_host.tiling(n, "float32", soc.vector_core_num, soc.ub_size)

    def run_kernel(td):
        with acl_session():
            held = DeviceTensors()
            try:
                tg, tx, to = held.upload(g, "g"), held.upload(x, "x"), held.upload(np.zeros(n, np.float32), "o")
                op_kernel.launch(td, tg, tx, to, soc)
                return to.numpy().copy()
            finally:
                held.release()

    expected = golden.hard_sigmoid_grad(g, x)
    short = good.replace(blockFactor=12, blockDim=64)           # covers only 768 of 1000 elements
    cases = [Case("good tiling", {"td": good}, expected),
             Case("too short", {"td": short}, expected, locate=locator(op_host.core_ranges(short))),
             Case("UB overflow", {"td": good.replace(ubFactor=100_000)}, expected)]
    report = run_battery(run_kernel, cases, title="kernel")
    assert report.run == 2 and ("of 1000 elements differ; the first is element 768: expected 0.16666666 "
                                "(bits 0x3e2aaaaa), got 0.0 (bits 0x00000000)") in report.failure.why
    assert "no core" in report.failure.why
    report = run_battery(run_kernel, [cases[2]], title="kernel")
    assert report.failure.kernel.kind == "ub-overflow" and report.failure.kernel.core == 0
    assert "where      core 0, instruction TPipe::InitBuffer" in str(report)


def test_compare_arrays_is_bit_exact_and_locates():
    a = np.array([0.0, 1.0, np.nan], np.float32)
    assert compare_arrays(a, a.copy()) is None
    assert "element 0" in compare_arrays(a, np.array([-0.0, 1.0, np.nan], np.float32))
    assert compare_arrays(a, np.array([-0.0, 1.0, np.nan], np.float32), exact=False) is None
    assert compare_arrays(a, a.astype(np.float16)) == "dtype float16 instead of float32"
    ranges = [{"core": 0, "kind": "big", "tiles": [(0, 0, 2), (1, 2, 1)]}]
    assert "core 0 (big), tile 1 [2, 3)" in compare_arrays(a, np.array([0.0, 1.0, 2.0], np.float32),
                                                           locate=locator(ranges))


def test_show_source_renders_markdown():
    block = show_source(solutions.softplus_grad_tiling)
    md = block._repr_markdown_()
    assert md.startswith("**labkit.solutions.softplus_grad_tiling**") and "```python\ndef " in md


def test_labs_are_importable_for_learners():
    from labkit import lab1_checks as lab1

    def mine(gradOutput, self, beta, threshold, gradInput, workspaceSize=None, executor=None):
        return 0

    report = lab1.check(mine, socs=["Ascend910B4"])
    assert not report.passed and report.failure.case.inputs["soc"] == "Ascend910B4"
    assert repr(report) == str(report)


# ------------------------------------------------------------------------------------------------
# the kernel labs (5-9)
# ------------------------------------------------------------------------------------------------
KERNEL_LABS = [lab for lab in LABS if lab.number >= 5]
#: Labs whose kernel exists on some SoCs only: lab 9's DAG runs on the atvoss template, Ascend950's kernel flavour;
#: lab 12 (broadcasting) runs on Ascend910B4 and what-if copies of it; lab 6's rounds on Ascend910B4 and a 950.
KERNEL_LAB_SOCS = {6: {"Ascend910B4", "Ascend950PR"}, 9: {"Ascend950PR"}, 10: {"Ascend910B4"}, 11: {"Ascend950PR"},
                   12: {"Ascend910B4"}}
#: Labs about one dtype: lab 10's int8 kernel, lab 11's float16 tuning.
KERNEL_LAB_DTYPES = {10: {"int8"}, 11: {"float16"}}


@pytest.mark.parametrize("lab", KERNEL_LABS, ids=[f"lab{lab.number}" for lab in KERNEL_LABS])
def test_kernel_batteries_cover_every_soc(lab):
    from ascend_lab.base import platform

    report = _reference_report(lab)
    assert report.passed     # (how long a battery takes is not a test's business: no timed assertions)
    assert set(report.coverage["soc"]) == KERNEL_LAB_SOCS.get(lab.number, set(platform.socs()))
    assert KERNEL_LAB_DTYPES.get(lab.number, {"float32", "float16"}) <= set(report.coverage["dtype"])


def _lab6_round(lab6, bug, sanitizer: bool, folder):
    """A round of lab 6 with ``bug`` put in (every member of the family, not only the ones a seed draws)."""
    source = lab6._header(1, 0, sanitizer) + "\n" + lab6._inject(lab6._clean(), bug)
    return lab6.Round(1, 0, sanitizer, source, folder)


@pytest.mark.parametrize("silent", [False, True], ids=["sanitizer on", "sanitizer off"])
def test_lab6_every_bug_of_the_family_fails_its_round_and_its_fix_passes(silent, tmp_path):
    """Every bug the rounds can draw fails the round's battery with the untouched file -- with the sanitizer on, a
    finding at the learner's line of the round's file; off, no finding but the wrong element, its tile's trace and
    the copies that wrote it -- and the reference's fix (one line) passes the whole round."""
    lab6 = get(6).load()
    family = lab6._SILENT_BUGS if silent else lab6._SANITIZER_BUGS
    kinds = set()
    for bugs in family.values():
        for bug in bugs:
            rnd = _lab6_round(lab6, bug, not silent, tmp_path / bug.new.replace(" ", "")[:40].replace("/", "_"))
            broken = rnd.report()
            assert not broken.passed and broken.failure.case.name.startswith("round 1: N ="), (bug, str(broken))
            if silent:
                assert broken.failure.kernel is None and "the copies that wrote element" in broken.failure.why, \
                    (bug, str(broken))
                assert "the sanitizer is off" in broken.failure.why
            else:
                kinds.add(broken.failure.kernel.kind)
                assert "round1.cpp, line" in broken.failure.where, (bug, str(broken))
            with reference_allowed():
                fixed = rnd.report(solutions.fix_round(rnd))
            assert fixed.passed, (bug, str(fixed))
    if not silent:
        assert kinds == {"ub-overflow", "misaligned-copy", "alloc-exhausted", "gm-out-of-bounds", "ub-overrun",
                         "partial-repeat"}


def test_lab6_rounds_differ_per_session_and_keep_the_learners_edits(tmp_path):
    """Rounds 1-3 draw three different kinds with the sanitizer on, round 4 one with it off; two sessions differ;
    a round's file keeps the learner's edit until write(again=True); a fix that rewrites the kernel, a Python class
    and the reference's kernel are refused."""
    lab6 = get(6).load()
    one, two = lab6.session(seed=11, folder=tmp_path / "a"), lab6.session(seed=12, folder=tmp_path / "b")
    assert [r.sanitizer for r in one.rounds] == [True, True, True, False]
    assert len({lab6._bugs(11)[k].kind for k in range(3)}) == 3
    assert [r.source for r in one.rounds] != [r.source for r in two.rounds]
    rnd = one[1]
    rnd.path.write_text(rnd.path.read_text() + "\n// my note\n")
    assert lab6.session(seed=11, folder=tmp_path / "a")[1].path.read_text().endswith("// my note\n")
    rnd.write(again=True)
    assert rnd.path.read_text() == rnd.source
    renamed = rnd.source.replace("blockIdx", "coreIdx").replace("loopCount", "tiles").replace("perRepeat", "per")
    rnd.path.write_text(renamed)
    report = lab6.check(lambda r: r.load(), seed=11, folder=tmp_path / "a")
    assert not report.passed
    with reference_allowed():
        fixed = solutions.fix_round(rnd)
    rnd.path.write_text(fixed.sources[-1].text.replace("blockIdx", "coreIdx").replace("loopCount", "tiles")
                        .replace("perRepeat", "per"))
    report = rnd.report()
    assert not report.passed and "changes" in report.failure.why and "lines of the kernel" in report.failure.why, \
        str(report)
    report = lab6.check(lambda r: fixed, seed=11, folder=tmp_path / "a")
    assert not report.passed and "you called the reference" in report.failure.why, str(report)
    kernels = {}

    def handed(r):                       # no static walk sees it: the round's first case refuses the kernel
        return kernels["fixed"]
    kernels["fixed"] = fixed
    report = lab6.check(handed, seed=11, folder=tmp_path / "a")
    assert not report.passed and "you called the reference" in report.failure.error, str(report)
    report = lab6.check(lambda r: type("K", (), {}), seed=11, folder=tmp_path / "a")
    assert not report.passed and "C++ kernel" in report.failure.error, str(report)


def test_strict_policy_names_the_learners_line():
    from labkit import lab5_copy_compute as lab5

    padded = _lab5_cxx("<lab5 cell>", ("DataCopyPad(gradInputGm[i * ubFactor], out, params);",
                                       "DataCopy(gradInputGm[i * ubFactor], out, (n + 7) / 8 * 8);"))
    report = lab5.check(padded)
    fault = report.failure.kernel
    assert fault.kind == "gm-padding" and fault.instruction == "DataCopy" and fault.core == 39
    assert "writes 28 B past the logical end of gradInput" in fault.message
    assert report.failure.where.startswith("<lab5 cell>, line "), report.failure.where
    assert "in KernelLeakyReluGrad<float>::CopyOut: DataCopy(gradInputGm" in report.failure.where
    assert "ascend_lab/" not in str(report) and "raised in" not in str(report)      # no library internals
    # without strict mode the same kernel only leaves a warning in the trace
    run, _ = lab5.run(padded, 1000, "float32", record=False)
    assert {w.kind for w in run.warnings} == {"gm-padding"}


def test_kernel_report_points_at_the_first_wrong_element_and_its_inputs():
    from labkit import lab5_copy_compute as lab5

    unscaled = _lab5_cxx("<unscaled>", ("slope = static_cast<T>(td.negativeSlope);",     # forgets the slope
                                        "slope = static_cast<T>(1.0f);"))
    report = lab5.check(unscaled)
    why = report.failure.why
    assert report.run == 1 and "written by core" in why and "inputs there: grad[" in why and ", self[" in why
    assert "(bits 0x" in why


def test_lab5_kernel_is_cxx_and_issues_the_labs_instructions():
    """A Python class is refused (the lab's kernel is C++); a C++ kernel that gets the numbers without
    CompareScalar (a Compare against a zero tile, Select mode 0 per repeat) fails the instruction case, saying so."""
    from labkit import lab5_copy_compute as lab5

    class MyKernel:                              # a learner's Python class, as the lab once asked for
        def __init__(self, T):
            self.T = T

    report = lab5.check(MyKernel)
    assert not report.passed and "this lab's kernel is AscendC C++" in report.failure.why
    report = lab5.check(_lab5_mode0("<mode 0>"))
    assert not report.passed and report.run == 2, str(report)
    assert report.failure.why.startswith("your kernel never issues CompareScalar"), report.failure.why


@pytest.mark.usefixtures("mutants")
def test_lab7_kernel_is_cxx():
    """Lab 7's kernel is C++: double_buffering() handing over a Python class fails at the first case that launches
    it, saying so; the lab's own single-buffered kernel is the C++ the skeleton cell holds."""
    lab7 = get(7).load()

    class Mine:
        BUFFER_NUM = 2

    report = lab7.check(lambda: {**solutions.double_buffering(), "kernel": Mine})
    assert not report.passed and "this lab's kernel is AscendC C++" in report.failure.error, str(report)
    skeleton = "".join(src for _, src in cells(ROOT / get(7).notebook, SKELETON))
    assert lab7.SINGLE_BUFFERED_CPP.read_text(encoding="utf-8").strip() in skeleton


@pytest.mark.usefixtures("mutants")
def test_lab7_reference_measurements():
    lab7 = get(7).load()
    key = lab7.WORKLOADS[0][1:]
    single = lab7._trace_of(lab7.SingleBuffered, 1, *key)
    double = lab7._trace_of(solutions.KernelHardswishGrad, 2, *key)
    ends = [max(e.end for e in t.events if e.pipe in ("MTE2", "V", "MTE3")) for t in (single, double)]
    assert lab7.reference_speedup(single, double) == pytest.approx(ends[0] / ends[1], rel=1e-12)
    assert lab7.reference_overlap(single) == 0.0 and 0.4 < lab7.reference_overlap(double) < 0.9
    assert solutions.overlap(double) == pytest.approx(lab7.reference_overlap(double), rel=1e-12)
    # V never overlaps the copy-in of its own tile (DeQue waits for it), so "another tile" changes nothing here
    same_tile_too = sum(max(0.0, min(v.end, m.end) - max(v.start, m.start)) for v in double.events for m in
                        double.events if v.pipe == "V" and m.pipe == "MTE2")
    assert same_tile_too / sum(v.end - v.start for v in double.events if v.pipe == "V") == pytest.approx(
        lab7.reference_overlap(double), rel=1e-12)
    # a slip is named: events of different cores compared
    four = lab7._trace_of(solutions.KernelHardswishGrad, 2, *lab7.WORKLOADS[1][1:])
    cross = [why for why, value in lab7._variants(four).items() if "same core" in why][0]
    report = lab7.check(lambda: {**solutions.double_buffering(), "overlap": lambda t: lab7._variants(t)[cross]})
    assert not report.passed and "same core" in report.failure.why


@pytest.mark.usefixtures("mutants")
def test_capstone_report_renders_the_learners_kernel():
    lab8 = get(8).load()
    with reference_allowed():
        report = lab8.check(solutions.softshrink_backward)
    assert report.passed and report.figures is not None
    html = report._repr_html_()
    assert html.count("<img") == 3 and html.count("data:image/png;base64,") == 3
    captions = [caption for caption, _ in report.figure_list()]
    assert any("tile map" in c for c in captions) and any("UB" in c for c in captions)
    failing = lab8.check(lambda: {**solutions.softshrink_backward(), "tiling": lambda *a: None})
    assert not failing.passed and "<img" not in failing._repr_html_()
    assert "return your SoftshrinkGradTilingData" in failing.failure.why


@pytest.mark.usefixtures("mutants")
def test_capstone_kernel_is_cxx():
    """Lab 8's kernel is C++ (the %%ascendc softshrink_grad cell, template <uint32_t schMode>): a Python entry handed
    over as the kernel fails the first kernel case, saying so; the skeleton's L0 op launches the C++ kernel."""
    lab8 = get(8).load()

    def python_entry(gradOutput, self_, gradInput, workspace, tiling, *, schMode):
        pass

    report = lab8.check(lambda: {**solutions.softshrink_backward(), "kernel": python_entry})
    assert not report.passed and "this lab's kernel is AscendC C++" in report.failure.error, str(report)
    skeleton = "".join(src for _, src in cells(ROOT / get(8).notebook, SKELETON))
    assert "%%ascendc softshrink_grad" in skeleton and "template <uint32_t schMode>" in skeleton


def test_capstone_oracles():
    lab8 = get(8).load()
    from ascend_lab.dtypes import bfloat16

    x = np.array([0.001, -0.001, 0.5, -0.5, 0.6, np.nan, -np.inf, 0.0], np.float16)
    g = np.arange(1, 9, dtype=np.float16)
    assert lab8.oracle_kernel(g, x, 0.001).tolist() == [0, 0, 3, 4, 5, 0, 7, 0]       # half(0.001) == x[0]
    assert lab8.oracle_kernel(g.astype(np.float32), x.astype(np.float32), 0.001).tolist()[:2] == [1, 2]
    assert lab8.oracle_kernel(g, x, 70000.0).tolist() == [0] * 8                        # half(70000) is inf
    mixed = lab8.oracle(g, x.astype(bfloat16), 0.5, "float16")
    assert mixed.dtype == np.float16 and mixed.tolist() == [0, 0, 0, 0, 5, 0, 7, 0]
    assert lab8.expected_status({"soc": "Ascend910A", "workspaceSize": lab8.OUT, "executor": lab8.OUT,
                                 "gradOutput": lab8.Arr((2,), "bfloat16"), "self": lab8.Arr((2,)),
                                 "lambd": lab8.ScalarSpec(0.5), "gradInput": lab8.Arr((2,))}) == 161002
    assert isinstance(lab8.oracle_tiling(10, "int32", 8, 4096, 0.5), Raises)


# ------------------------------------------------------------------------------------------------
# Ascend910A: the AscendC API there has no CompareScalar and Select in mode 0 only
# ------------------------------------------------------------------------------------------------
def test_ascend910a_stays_in_the_batteries_as_a_lesson():
    """On Ascend910A a kernel battery accepts the sanitizer's unsupported-on-soc stop and says so in the
    summary; a kernel written without CompareScalar and Select modes 1/2 must compute every bit there
    instead (lab 5's own battery then fails it on the instruction case, run on Ascend910B4: the lab is about those
    instructions); wrong bits, and any other stop, still fail."""
    from labkit import lab5_copy_compute as lab5

    with reference_allowed():
        report = lab5.check(solutions.KernelLeakyReluGrad, socs=["Ascend910A"])
    assert report.passed and "Ascend910A" in report.coverage["soc"]
    assert any(line.startswith("Ascend910A: the sanitizer stopped your kernel at CompareScalar "
                               "[unsupported-on-soc]") for line in report.summary), report.summary
    # written with what the SoC has, the kernel runs there and must be right
    limits = lab5.SocLimits()
    battery = [c for c in lab5.cases(["Ascend910A"], limits) if "Ascend910A" in c.name]
    report = run_battery(_lab5_mode0("<mode 0>"), battery, title="lab 5 on Ascend910A")
    assert report.passed, str(report)
    assert any("does without CompareScalar or Select in mode 1 or 2" in line for line in limits.lines())
    # elsewhere a stop is never accepted
    with reference_allowed():
        report = lab5.check(solutions.KernelLeakyReluGrad, socs=["Ascend910B4"])
    assert report.passed and not any("unsupported-on-soc" in line for line in report.summary)
    no_select = _lab5_mode0("<no select>", "        Muls(out, grad, slope, n);")   # grad * slope everywhere
    report = lab5.check(no_select, socs=["Ascend910A"])
    assert not report.passed and "elements differ" in report.failure.why
    assert "has no CompareScalar" in report.failure.hint
    mask_decl = "    TBuf<QuePosition::VECCALC> maskBuf;\n"
    slope = "        slope = static_cast<T>(td.negativeSlope);"
    overflow = _lab5_cxx("<overflow>", (mask_decl, mask_decl + "    TBuf<QuePosition::VECCALC> extra;\n"),
                         (slope, "        pipe.InitBuffer(extra, 300000);\n" + slope))    # another stop on 910A
    report = lab5.check(overflow, socs=["Ascend910A"])
    assert not report.passed and report.failure.kernel.kind == "ub-overflow"


def test_capstone_on_ascend910a_accepts_the_runtime_error_only_for_the_soc_limit():
    """Through the aclnn API on Ascend910A the capstone accepts phase 2's 361001 when its log holds the
    unsupported-on-soc stop, and nothing else in its place."""
    lab8 = get(8).load()
    with reference_allowed():
        report = lab8.check(solutions.softshrink_backward, socs=["Ascend910A"])
    assert report.passed, str(report)
    assert any(line.startswith("Ascend910A, through the aclnn API: phase 2 returned ACLNN_ERR_RUNTIME_ERROR")
               for line in report.summary)
    exp = lab8.Expect(0, casts_in=0, cast_out=False, out=np.zeros(3, np.float32), limited_soc="Ascend910A")
    graph = ["Contiguous", "Contiguous", "SoftshrinkGrad", "ViewCopy"]
    other = lab8.Outcome(0, 0, graph, 361001, None, ["kernel failed on the device: [ub-overflow] ..."])
    assert lab8._compare_api(exp, other) is not None
    limit = lab8.Outcome(0, 0, graph, 361001, None, ["kernel failed on the device: [unsupported-on-soc] ..."])
    assert lab8._compare_api(exp, limit) is None
    elsewhere = lab8.Expect(0, out=np.zeros(3, np.float32))
    assert lab8._compare_api(elsewhere, limit) is not None


# ------------------------------------------------------------------------------------------------
# lab 9: a DAG on the atvoss template
# ------------------------------------------------------------------------------------------------
_LAB9_HEAD = ("import numpy as np\n"
              "from ascend_lab.ascendc import CMPMODE\n"
              "from ascend_lab.atvoss import CAST_RINT, Cast, Compare, CopyInBrc, CopyOut, Dag, Duplicate, In, Mul, "
              "Select\n"
              "def f(T):\n"
              "    g, x, w = CopyInBrc(In(0, T)), CopyInBrc(In(1, T)), CopyInBrc(In(2, T))\n")
# body lines start at line 6 of the learner's cell
_LAB9_MISTAKES = {
    "GE": ("    zero = Duplicate(T, 0.0)\n    m = Compare(x, zero, CMPMODE.GE)\n"
           "    return Dag([CopyOut(0, Select(m, g, Mul(w, g))), CopyOut(1, Select(m, zero, Mul(x, g)))])\n",
           "what `x >= 0` selects", 7),
    "swap": ("    zero = Duplicate(T, 0.0)\n    m = Compare(x, zero, CMPMODE.GT)\n    dx = Select(m, Mul(w, g), g)\n"
             "    return Dag([CopyOut(0, dx), CopyOut(1, Select(m, zero, Mul(x, g)))])\n",
             "Select with its two sources swapped", 8),
    "nan": ("    zero = Duplicate(T, 0.0)\n    m = Compare(x, zero, CMPMODE.LE)\n"
            "    return Dag([CopyOut(0, Select(m, Mul(w, g), g)), CopyOut(1, Select(m, Mul(x, g), zero))])\n",
            "NaN is neither > 0 nor <= 0", 7),
    "mask-then-mul": ("    zero = Duplicate(T, 0.0)\n    m = Compare(x, zero, CMPMODE.GT)\n"
                      "    return Dag([CopyOut(0, Select(m, g, Mul(w, g))), CopyOut(1, Mul(x, Select(m, zero, g)))])\n",
                      "+inf * 0 is NaN", 8),
    "dtype": ("    zero = Duplicate(np.float32, 0.0)\n    m = Compare(x, zero, CMPMODE.GT)\n"
              "    return Dag([CopyOut(0, Select(m, g, Mul(w, g))), CopyOut(1, Select(m, zero, Mul(x, g)))])\n",
              "Compare operands must share a dtype", 7),
    "cast-back": ("    g, x, w = Cast(np.float32, g), Cast(np.float32, x), Cast(np.float32, w)\n"
                  "    zero = Duplicate(np.float32, 0.0)\n    m = Compare(x, zero, CMPMODE.GT)\n"
                  "    dx = Select(m, g, Mul(w, g))\n"
                  "    return Dag([CopyOut(0, dx), CopyOut(1, Cast(T, Select(m, zero, Mul(x, g)), CAST_RINT))])\n",
                  "a Cast back to T is missing", 10),
    "float": ("    g, x, w = Cast(np.float32, g), Cast(np.float32, x), Cast(np.float32, w)\n"
              "    zero = Duplicate(np.float32, 0.0)\n    m = Compare(x, zero, CMPMODE.GT)\n"
              "    dx = Cast(T, Select(m, g, Mul(w, g)), CAST_RINT)\n"
              "    return Dag([CopyOut(0, dx), CopyOut(1, Cast(T, Select(m, zero, Mul(x, g)), CAST_RINT))])\n",
              "your DAG implies BufferNum 16", 6),
    "two-masks": ("    dx = Select(Compare(x, Duplicate(T, 0.0), CMPMODE.GT), g, Mul(w, g))\n"
                  "    zero = Duplicate(T, 0.0)\n"
                  "    up = Select(Compare(x, zero, CMPMODE.GT), zero, Mul(x, g))\n"
                  "    return Dag([CopyOut(0, dx), CopyOut(1, up)])\n",
                  "runs 8 vector instructions per tile", 6),
}


@pytest.mark.parametrize("mistake", list(_LAB9_MISTAKES))
def test_lab9_names_the_mistake_and_the_learners_line(mistake):
    lab9 = get(9).load()
    body, says, line = _LAB9_MISTAKES[mistake]
    report = lab9.check(_learner(_LAB9_HEAD + body, "f", f"<lab9 {mistake}>"))
    assert not report.passed and not report.failure.error, str(report)
    why = report.failure.why
    assert says in why, why
    assert f"<lab9 {mistake}>, line {line}" in why, why
    assert "ascend_lab/" not in why and "labkit/" not in why and ".py" not in why


def test_lab9_live_buffers_follow_the_template():
    """The checker's own count of live buffers agrees with the template's Dag; the solution reaches the minimum,
    and the one-dim tile the report quotes is the ubFormer the template's tiling computes."""
    lab9 = get(9).load()
    from ascend_lab import standalone
    from ascend_lab.atvoss.kernel import TemplateOp
    from ascend_lab.dtypes import bfloat16
    from ascend_lab.ops.relu_grad.op_kernel import main as rg
    from ascend_lab.ops.threshold_grad_v2_d.op_kernel import main as tg

    soc = standalone.make_soc(lab9.SOC)
    for dt in (np.float32, np.float16, bfloat16):
        dag = solutions.prelu_grad_update_dag(dt)
        info = lab9.live_buffers(dag)
        assert info["buffers"] == dag.buffer_num() == lab9.MIN_BUFFERS == 13 and info["temps"] == 3
        assert len([n for n in dag.funlist if n.op not in ("CopyInBrc", "CopyOut")]) == lab9.MIN_VECTOR_NODES
        op = TemplateOp("PReluGradUpdate", lambda _d, dag=dag: dag, lab9.DTYPE_IDS)
        td = op.tiling_for_shapes([(10**6,)] * 3, (10**6,), dt, soc.vector_core_num, soc.ub_size)
        assert td.ubFormer == lab9.one_dim_ub_former(13, np.dtype(dt).itemsize, soc)
        for other in (tg.dag(dt), rg.dag(dt)):
            assert lab9.live_buffers(other)["buffers"] == other.buffer_num()


def test_lab9_oracle_edges():
    lab9 = get(9).load()
    g = np.array([1.0, 2.0, 3.0, 4.0, np.inf, 300.0, -0.0, np.nan], np.float16)
    x = np.array([0.0, -0.0, np.nan, 1.0, -1.0, -300.0, 2.0, 5.0], np.float16)
    dx, update = lab9.oracle(g, x, np.array([0.25], np.float16))        # one weight for every element
    assert dx.dtype == update.dtype == np.float16
    assert dx[:6].tolist() == [0.25, 0.5, 0.75, 4.0, np.inf, 75.0]       # 0, -0 and NaN take w * g
    assert np.signbit(dx[6]) and dx[6] == 0 and np.isnan(dx[7])          # x > 0 passes grads bit for bit
    assert update[0] == 0 and not np.signbit(update[0]) and np.signbit(update[1]) and np.isnan(update[2])
    assert update[3] == update[6] == update[7] == 0 and update[4] == -np.inf
    assert update[5] == -np.inf                                          # -300 * 300 overflows half


# ------------------------------------------------------------------------------------------------
# labs ask for decisions: the oracles are not answers, lab 5's plan and overlap are checked
# ------------------------------------------------------------------------------------------------
@pytest.mark.usefixtures("mutants")
def test_an_oracle_handed_back_fails_and_names_the_learners_line():
    """A learner's function that returns the checker's own oracle (lab3.oracle, lab7.reference_overlap, ...)
    fails with a report that says so and quotes the learner's line; the notebook may still call the oracle."""
    lab3, lab4, lab7 = get(3).load(), get(4).load(), get(7).load()
    assert lab3.oracle(1000, "float32", 40, 196608).ubFactor > 0          # usable outside a check
    cheat = _learner("from labkit import lab3_tiling as lab3\n"
                     "def tiling(total_length, dtype, core_num, ub_size, beta=1.0, threshold=20.0):\n"
                     "    return lab3.oracle(total_length, dtype, core_num, ub_size, beta, threshold)\n",
                     "tiling", "<lab3 cheat>")
    report = lab3.check(cheat)
    assert not report.passed and report.run == 1 and report.failure.error.startswith("AnswerKeyUsed")
    assert "lab3_tiling.oracle" in report.failure.error and report.failure.where.startswith("<lab3 cheat>, line 3")
    assert not lab4.check(lab4.oracle).passed                                 # the oracle itself as the answer
    for name in ("reference_speedup", "reference_overlap"):
        parts = {**solutions.double_buffering(), name.removeprefix("reference_"): getattr(lab7, name)}
        report = lab7.check(lambda parts=parts: parts)
        assert not report.passed and "AnswerKeyUsed" in report.failure.error, str(report)
    parts = {**solutions.double_buffering(), "tiling": lambda n, dt, cores, ub: lab7.tiling(n, dt, cores, ub)}
    report = lab7.check(lambda: parts)
    assert not report.passed and "lab7_double_buffer.tiling" in report.failure.error, str(report)
    lab8 = get(8).load()
    for name in ("oracle", "oracle_kernel", "oracle_tiling", "expected_status"):
        assert getattr(getattr(lab8, name), "answer_key", False), name
    for lab in LABS[:8]:
        keys = [n for n in dir(lab.load()) if getattr(getattr(lab.load(), n), "answer_key", False)]
        assert keys, f"lab {lab.number} marks no oracle as an answer key"


def _lab5_learner(buffer_num: int, name: str, *edits: tuple[str, str]):
    return _lab5_cxx(name, ("BUFFER_NUM = 2;", f"BUFFER_NUM = {buffer_num};"), *edits)


def test_lab5_checks_the_plan_the_tiling_implies():
    lab5 = get(5).load()
    report = lab5.check(_lab5_learner(1, "<lab5 single>"))
    assert not report.passed and report.run == 3 and not report.failure.error, str(report)
    why = report.failure.why
    assert "1 block per queue" in why and "7 slots" in why and "MTE2 waits for V" in why
    assert "<lab5 single>, line " in why and "InitBuffer(inQueueGrad" in why
    assert "ascend_lab/" not in why and "labkit/" not in why
    # bytes where elements were meant: a plan of the right shape with blocks a quarter the size
    small = _lab5_learner(2, "<lab5 small>", ("BUFFER_NUM, ubFactor * sizeof(T));", "BUFFER_NUM, ubFactor);"))
    report = lab5.check(small)
    assert not report.passed and "InitBuffer takes BYTES" in report.failure.why, str(report)
    assert lab5.check(_lab5_learner(2, "<lab5 double>")).passed


def test_lab5_a_mask_too_small_for_a_full_tile_fails_on_the_plan_case():
    """A maskBuf of a fixed 32 bytes works for short tiles; the plan case (a full tile of 6720 elements) catches it,
    with the bytes a full tile's mask needs and the learner's InitBuffer lines (issue 22 item 8)."""
    lab5 = get(5).load()
    report = lab5.check(_lab5_learner(2, "<lab5 mask>", ("pipe.InitBuffer(maskBuf, maskBytes < 32 ? 32 : maskBytes);",
                                                         "pipe.InitBuffer(maskBuf, 32);")))
    assert not report.passed and report.run == 3, str(report)
    why = report.failure.why
    assert why.startswith("your mask buffer is too small for a full tile: maskBuf 32 B") and "needs 864 B" in why
    assert "<lab5 mask>, line " in why and "InitBuffer(maskBuf, 32)" in why


def test_lab5_reads_the_overlap_from_the_trace():
    lab5 = get(5).load()
    case = lab5._overlap_case("Ascend910B4")
    single, double = _lab5_learner(1, "<lab5 s>"), _lab5_learner(2, "<lab5 d>")
    cycles, evidence = case.call(single, case.inputs)
    assert cycles == 0.0 and "V computes tile 0 until cycle" in evidence
    why = case.compare(case.expected, (cycles, evidence))
    assert "no copy-in ever runs while V computes" in why and "FreeTensor" in why
    cycles, _ = case.call(double, case.inputs)
    assert cycles > 0 and case.compare(case.expected, (cycles, "")) is None


def test_lab5_page_shows_no_solution_code():
    """No visible cell of lab 5 subclasses or lists the solution; the skeleton leaves the plan to the learner."""
    nb = jupytext.read(ROOT / get(5).notebook, fmt="md:myst")
    for cell in nb.cells:
        if cell.cell_type == "code" and "hide-cell" not in _tags(cell):
            assert "solutions." not in cell.source, cell.source
    skeleton = "".join(src for _, src in cells(ROOT / get(5).notebook, SKELETON))
    code = "\n".join(line.split("//", 1)[0] for line in skeleton.splitlines())          # not the TODO comments
    assert skeleton.startswith("%%ascendc KernelLeakyReluGrad")                          # the kernel is C++
    assert "BUFFER_NUM = 1" in code and "InitBuffer(" not in code and "CompareScalar" not in code
    setup = "".join(src for _, src in cells(ROOT / get(5).notebook, SETUP))
    assert "BUFFER_NUM" not in setup


@pytest.mark.parametrize("number", [5, 6, 7, 8])
def test_kernel_lab_pages_look_inside_the_learners_kernel(number):
    """Labs 5-8 step through the learner's own kernel (viz.step_kernel with the name the learner's cell binds)
    and draw its UB layout, in visible cells after the solution cell (so the book shows the solution there)."""
    lab = get(number)
    nb = jupytext.read(ROOT / lab.notebook, fmt="md:myst")
    code = [(i, c) for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    solution = next(i for i, c in code if "hide-cell" in _tags(c) and f"solutions.{lab.function}" in c.source)
    step = [(i, c) for i, c in code if "viz.step_kernel(" in c.source and not _tags(c)]
    assert step, "a visible cell steps through the learner's kernel"
    i, cell = step[0]
    assert "solutions." not in cell.source and f"lab{number}.Hardtanh" not in cell.source
    assert number == 6 or i > solution, "the stepper comes after the checker's report"
    assert number == 6 or "if report.passed" in cell.source, "it steps through the learner's kernel once it passes"
    assert any(not _tags(c) and ".plot_ub_layout()" in c.source for j, c in code if j >= i)


def test_lab5_first_hint_names_the_missing_call_not_the_recipe():
    """The first case's hint names the first queue call missing from one of the learner's C++ stages (read from the
    code, not the comments) and its purpose; it never recites the whole stage recipe."""
    lab5 = get(5).load()
    skeleton = _skeleton_report(get(5))[1]
    hint = skeleton.failure.hint
    assert skeleton.run == 1 and hint.startswith("CopyIn has no AllocTensor: "), hint   # the TODO comments don't count
    assert "05_copy_compute.md cell" in hint and "void CopyIn" in hint                  # the learner's own stage
    recipe = ("CompareScalar", "Select", "Muls", "gradInputGm[", "DataCopyPad n elements", "EnQue both")
    assert not any(word in hint for word in recipe), hint
    kept = _lab5_learner(2, "<lab5 kept>", ("        outQueueGradInput.EnQue(out);\n", ""))
    report = lab5.check(kept)
    assert not report.passed and report.run == 1, str(report)
    assert report.failure.hint.startswith("Compute has no EnQue: "), report.failure.hint
    assert "<lab5 kept>, line " in report.failure.hint and "ascend_lab/" not in str(report)


def test_a_finding_in_a_learners_cxx_kernel_names_the_learners_line():
    """A sanitizer finding in a learner's C++ kernel names the learner's cell and line -- no kit or package file."""
    lab5 = get(5).load()
    wide = _lab5_learner(2, "<lab5 wide>", ("DataCopyPad(grad, gradGm[i * ubFactor], params, pad);",
                                            "DataCopyPad(grad, gradGm[i * ubFactor + 1000000], params, pad);"))
    report = lab5.check(wide)
    assert not report.passed and report.failure.kernel is not None, str(report)
    assert report.failure.where.startswith("<lab5 wide>, line "), str(report)
    assert "gradGm[i * ubFactor + 1000000]" in report.failure.where
    assert "labkit/" not in str(report) and "solutions.py" not in str(report) and "ascend_lab/" not in str(report)


def _lab4_learner(edit):

    source = edit(solutions.threshold_grad_512_tiling.reference_source)
    linecache.cache["<lab4 cell>"] = (len(source), None, source.splitlines(keepends=True), "<lab4 cell>")
    namespace = {**vars(solutions), "__name__": "lab4_cell"}
    exec(compile(source, "<lab4 cell>", "exec"), namespace)
    return namespace["threshold_grad_512_tiling"]


@pytest.mark.usefixtures("mutants")
def test_lab4_asks_for_ubdatanumber_from_the_plan():
    """Lab 4's page lists the variant's Init, not its ubDataNumber table: the original's table, a rounding down
    and a slice too many each fail on the tile size, with a message about the plan that gives no number."""
    lab4 = get(4).load()
    page = (ROOT / get(4).notebook).read_text(encoding="utf-8")
    assert "pipe.InitBuffer(selectBuf" in page and "| int32 |" not in page and "this variant (512" not in page
    ceil = "ceil_div(variant_bytes_per_element(dt), input_bytes)"
    original = _lab4_learner(lambda s: s.replace(ceil, '{"float32": 7, "float16": 7, "int32": 8, '
                                                       '"bfloat16": 10}.get(dt.short, 14)'))
    floor = _lab4_learner(lambda s: s.replace(ceil, "variant_bytes_per_element(dt) // input_bytes"))
    extra = _lab4_learner(lambda s: s.replace(ceil, ceil + " + 1"))
    for learner, says in ((original, "too little UB"), (floor, "too little UB"), (extra, "the FEWEST slices")):
        report = lab4.check(learner)
        assert not report.passed and report.failure.why.startswith("tileDataNum: expected"), str(report)
        assert says in report.failure.why, str(report)
        assert not any(f" {n} slices" in report.failure.why for n in (7, 8, 9, 10, 14, 15, 16)), str(report)
    assert lab4.check(_lab4_learner(lambda s: s)).passed       # the same source, as the learner's own: passes


def test_lab12_a_kernel_that_ignores_the_short_last_tile_fails_on_a_shape_the_tile_does_not_divide():
    """Issue 22 item 7: the worked example (one row per core) passes such a kernel; a shape whose rows a tile does not
    divide fails it -- on an announced case, and on every set drawn at check time."""
    lab12 = get(12).load()
    from labkit.lab5_copy_compute import compile_kernel

    source = solutions.KernelRowThreshold.sources[-1].text.replace(
        "int64_t rowsHere = i < tiles - 1 ? tileRows : coreRows - tileRows * i;", "int64_t rowsHere = tileRows;")
    assert "int64_t rowsHere = tileRows;" in source
    mine = compile_kernel(source, name="<lab12 no short tile>")

    def pieces():
        return {"tiling": solutions.row_threshold_tiling, "kernel": mine}

    with reference_allowed():                         # the reference's tiling, the learner's kernel
        report = lab12.check(pieces, seed=1)
        assert not report.passed and report.run == 3, str(report)          # the first shape with tails of rows
        assert "last tile has the rows that are left" in report.failure.hint, str(report)
        assert "<lab12 no short tile>, line" in report.failure.where, str(report)
        for seed in (1, 2, 3):                        # and every set of shapes drawn at check time catches it
            drawn = checker.run_battery(pieces, lab12._hidden(np.random.default_rng(seed)), title="drawn")
            assert not drawn.passed, f"seed {seed}: {drawn}"
