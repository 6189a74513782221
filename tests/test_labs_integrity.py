"""Each lab can only be passed by doing it (issue 22).

Two things are proved here for every lab in ``labkit.LABS`` -- a new lab gets both by being listed there:

* **The cheat battery** (:func:`cheat_battery`, one helper applied to every lab): the reference solution passes
  (checked on purpose, inside ``reference_allowed()``), the untouched skeleton fails, and so does every cheat
  that reuses the reference -- a subclass, a wrapper, a ``functools.partial``, a lookup through ``sys.modules``
  that no static walk sees (the guard on every function of ``labkit.solutions`` stops it while the learner's code
  runs), for a C++ reference an ``#include`` of its file -- each with a "you called the reference" message. For a
  C++ kernel lab (``LAB_INSTRUCTIONS``), a kernel that skips the instructions the lab is about (the skeleton)
  fails its instruction-stream case with a message naming the missing instruction. For the labs with cases drawn
  at check time, a table of the announced cases' answers (built from the lab's own importable ``cases()``, with
  the most common answer for anything else) fails at a case drawn at check time, that case is in no importable
  battery, and the seed the report names draws it again.
* **No answers on the page**: every code cell a lab page runs under nbval (all but ``nbval-skip`` /
  ``skip-execution``, in order, in one IPython shell in the lab's folder, with ``%%ascendc`` and the other magics
  working) runs no reference solution -- ``labkit.checker.REFERENCE_CALLS`` does not move -- and every checker
  report a cell shows is a failing one (the untouched skeleton's). The collapsed solution cell shows the
  reference's *source* only. The built lab pages are scanned for a passing report by
  ``tests/test_site_outputs.py``, with the other checks of the built site (``make test`` builds it meanwhile).
"""

from __future__ import annotations

import collections
import functools
import sys
from inspect import unwrap as inspect_unwrap
from pathlib import Path

import pytest
from labkit import LABS, checker, solutions
from labkit.checker import Raises, Report, reference_allowed
from labkit.notebook import exec_cells

ROOT = Path(__file__).resolve().parents[1]
IDS = [f"lab{lab.number}" for lab in LABS]
#: labs whose check draws cases at check time (the host labs); the kernel labs' turn comes with their C++ form
DRAWN = {1, 2, 3, 4, 9, 11, 12}
_CALLED = ("you called the reference", "this is the reference solution")


def _says_reference(report: Report) -> bool:
    f = report.failure
    return f is not None and any(words in f.why or words in f.error for words in _CALLED)


def _reference_cheats(lab) -> list[tuple[str, object]]:
    """Ways to hand the reference in as one's own: the object, a subclass (classes) or a wrapper and a partial
    (functions), and a lookup through ``sys.modules`` that only the runtime guard sees."""
    name = lab.function
    ref = getattr(solutions, name)

    def lookup():
        return getattr(sys.modules["labkit." + "solutions"], name)

    if getattr(ref, "sources", None):                     # a C++ kernel: from C++ only an #include reaches it
        from labkit.lab5_copy_compute import compile_kernel

        path = ref.sources[-1].name
        included = compile_kernel(f'#include "{path}"\n', name="<a learner cell>")

        def wrapper(*args, **kwargs):
            return ref(*args, **kwargs)

        return [("the reference", ref), ("a wrapper", wrapper), ("a functools.partial", functools.partial(ref)),
                ("an #include of the reference's C++", included)]
    if isinstance(ref, type):
        class Delegate:                                   # builds the reference inside the case
            def __init__(self, *args, **kwargs):
                self.__dict__["_inner"] = lookup()(*args, **kwargs)

            def __getattr__(self, attr):
                return getattr(self.__dict__["_inner"], attr)

        return [("the reference", ref), ("a subclass", type("Mine", (ref,), {})), ("a sys.modules lookup", Delegate)]

    def wrapper(*args, **kwargs):
        return ref(*args, **kwargs)

    def sneaky(*args, **kwargs):
        return lookup()(*args, **kwargs)

    def unwrapped(*args, **kwargs):                       # the guard's own wrapper, peeled off
        return inspect_unwrap(lookup())(*args, **kwargs)

    return [("the reference", ref), ("a wrapper", wrapper), ("a functools.partial", functools.partial(ref)),
            ("functools.wraps", functools.wraps(ref)(lambda *a, **k: ref(*a, **k))), ("a sys.modules lookup", sneaky),
            ("inspect.unwrap of the guard", unwrapped)]


@functools.cache
def _announced(module) -> tuple:
    """The battery a lab's check announces (importable): ``announced()`` where the lab has one, else ``cases()``. Built
    once per session: the tables below only read its names and answers (each table is a fresh function)."""
    return tuple(getattr(module, "announced", module.cases)())


@functools.cache
def _skeleton(lab):
    """The lab's untouched skeleton: its setup and skeleton cells run once per session (the tests hand it to checks,
    or wrap it; none changes it)."""
    return exec_cells(ROOT / lab.notebook)[lab.function]


def _table_of_announced(module):
    """A learner's table: the announced battery's answers, in its order, then its most common answer."""
    battery = _announced(module)
    if module.FUNCTION == "choose_plan":                       # lab 11: answers are plans, graded by cycles
        plans = {n: module.best_plan(n)[0] for n in module.SIZES}
        return lambda n: plans.get(n, (2, 15_872))
    if not battery or module.FUNCTION in ("prelu_grad_update_dag", "row_threshold"):
        return None                                             # a DAG, or a kernel and its tiling: no answer table
    answers = [c.expected for c in battery]
    common = collections.Counter(map(repr, answers)).most_common(1)[0][0]
    fallback = next(a for a in answers if repr(a) == common)
    tape = iter(answers)

    def table(*args, **kwargs):
        answer = next(tape, fallback)
        if isinstance(answer, Raises):
            raise answer.exc(answer.match or "from the table")
        return answer
    return table


@functools.cache
def _reference_report(lab, seed: int | None = None) -> Report:
    """``check(reference)`` inside ``reference_allowed()`` (with ``seed`` when given), once per session: the cheat
    battery, the drawn-cases test and the chosen-seed test assert on the same report. (A report is not changed after
    its check; the checks that must run fresh -- the learner's, the cheats, the tables -- are never cached.)"""
    with reference_allowed():
        return lab.load().check(getattr(solutions, lab.function), **({} if seed is None else {"seed": seed}))


def cheat_battery(lab) -> None:
    """The integrity battery of one lab (see the module's docstring)."""
    module = lab.load()
    assert _reference_report(lab).passed, f"lab {lab.number}: the reference fails"
    skeleton = module.check(_skeleton(lab))
    assert not skeleton.passed and skeleton.failure.case is not None, f"lab {lab.number}: the skeleton passes"
    before = checker.REFERENCE_CALLS[0]
    for how, cheat in _reference_cheats(lab):
        report = module.check(cheat)
        assert not report.passed and _says_reference(report), f"lab {lab.number}, {how}:\n{report}"
    assert checker.REFERENCE_CALLS[0] - before <= len(_reference_cheats(lab)), "a reference ran past its guard"
    instructions = getattr(module, "LAB_INSTRUCTIONS", None)
    if instructions:                                      # a C++ kernel lab: its instruction-stream case
        case = next(c for c in module.cases() if c.covers and "instructions" in " ".join(c.covers)
                    and "instructions of your Compute" in c.name)
        got = case.call(_skeleton(lab), case.inputs)   # issues none of them
        why = case.compare(case.expected, got)
        assert why and why.startswith("your kernel never issues " + next(iter(instructions))), why
    if lab.number not in DRAWN:
        return
    table = _table_of_announced(module)
    if table is None:
        return
    announced = {c.name for c in _announced(module)}
    first = module.check(table, seed=1)
    assert not first.passed and first.failure.case.name.startswith("hidden case (seed 1)"), str(first)
    assert first.failure.case.name not in announced and first.seed == 1 and first.hidden > 0
    assert "check(..., seed=1) draws it again" in str(first)
    again = module.check(_table_of_announced(module), seed=1)
    assert again.failure.case.name == first.failure.case.name and again.run == first.run
    other = module.check(_table_of_announced(module), seed=2)
    assert other.failure.case.name.startswith("hidden case (seed 2)")
    assert other.failure.case.name != first.failure.case.name


@pytest.mark.parametrize("lab", LABS, ids=IDS)
def test_cheat_battery(lab):
    cheat_battery(lab)


@pytest.mark.parametrize("lab", [lab for lab in LABS if lab.number in DRAWN], ids=lambda lab: f"lab{lab.number}")
def test_hidden_cases_are_drawn_per_check(lab):
    """Without a seed each check draws its own cases (from os.urandom); two seeds draw different ones; the report
    of a passing reference names the seed it drew with."""
    report = _reference_report(lab)
    assert report.passed and report.seed is not None and report.hidden > 0
    assert f"drawn at check time (seed {report.seed})" in str(report)
    one, two = _reference_report(lab, seed=1), _reference_report(lab, seed=5)
    assert one.passed and two.passed and one.seed == 1 and two.seed == 5


# --------------------------------------------------------------------------------------------------
# the loopholes of one process: frames, live objects, the kit patched, the guard switched off
# --------------------------------------------------------------------------------------------------
def _spies():
    """Ways to read the checker's state from inside the learner's code (each would hand back expected answers)."""
    import gc
    import inspect

    def stack():
        return [f.frame.f_locals for f in inspect.stack()]

    def getframe():
        return sys._getframe(1).f_back.f_locals

    def traceback_frame():
        try:
            raise ValueError("to get a frame")
        except ValueError as exc:
            return exc.__traceback__.tb_frame.f_back.f_locals

    def live_objects():
        return [o for o in gc.get_objects() if isinstance(o, checker.Case)]

    def tracer():
        sys.settrace(lambda frame, event, arg: None)

    def from_a_string():
        namespace = {"sys": sys}
        exec("result = sys._getframe(1).f_locals", namespace)      # code with no file of its own
        return namespace["result"]

    return {"inspect.stack()": stack, "sys._getframe": getframe, "a traceback's tb_frame": traceback_frame,
            "gc.get_objects()": live_objects, "sys.settrace": tracer, "exec of a string": from_a_string}


def _text(failure) -> str:
    return f"{failure.error}\n{failure.why}"


def _spying(skeleton, spy):
    """The skeleton, with ``spy`` run first whenever the checker calls it (a subclass for a class)."""
    if isinstance(skeleton, type):
        def __init__(self, *args, **kwargs):
            spy()
            skeleton.__init__(self, *args, **kwargs)
        return type("Spying", (skeleton,), {"__init__": __init__})

    def spying(*args, **kwargs):
        spy()
        return skeleton(*args, **kwargs)
    return spying


def _python_skeleton(lab):
    """The lab's skeleton when the learner hands in Python (None for a C++ kernel, which reaches no frame)."""
    from labkit.lab5_copy_compute import is_cxx

    skeleton = _skeleton(lab)
    return None if is_cxx(skeleton) else skeleton


@pytest.mark.parametrize("lab", LABS, ids=IDS)
def test_reading_the_checkers_frames_fails(lab):
    """inspect.stack(), sys._getframe, a traceback's frame, gc.get_objects() and sys.settrace, called from the
    learner's code during a case, fail that case with IntrospectionUsed naming the call and the learner's line."""
    skeleton = _python_skeleton(lab)
    if skeleton is None:
        pytest.skip(f"lab {lab.number} hands in a C++ kernel: no Python of the learner's runs in a case")
    module = lab.load()
    for how, spy in _spies().items():
        report = module.check(_spying(skeleton, spy))
        f = report.failure
        assert f is not None and "IntrospectionUsed" in _text(f), f"lab {lab.number}, {how}:\n{report}"
        assert "test_labs_integrity.py" in _text(f) or "<string>" in _text(f), \
            f"lab {lab.number}, {how}:\n{report}"
    assert sys.gettrace() is None or "coverage" in type(sys.gettrace()).__module__


def _kit_functions(module):
    """The kit's judging functions a trainee would patch: the comparison helpers and the lab's oracle."""
    names = [("labkit.checker", "compare_arrays"), ("labkit.checker", "_equal"), ("labkit.checker", "_run_case"),
             ("os", "urandom"), ("numpy", "array_equal")]
    if hasattr(module, "oracle"):
        names.append((module.__name__, "oracle"))
    return names


@pytest.mark.parametrize("lab", LABS, ids=IDS)
def test_patching_the_kit_fails(lab, monkeypatch):
    """A kit function replaced before the check (by a notebook function, or by a builtin), a function's __code__
    swapped, or a comparison helper replaced from inside the learner's code: the check refuses to judge."""
    module = lab.load()
    skeleton = _skeleton(lab)
    for owner, name in _kit_functions(module):
        fakes = [("a function", lambda *a, **k: None)]
        if owner != module.__name__:                     # (the lab's cases call its oracle before the battery runs)
            fakes.append(("a builtin", print))
        for how, fake in fakes:
            with monkeypatch.context() as m:
                m.setattr(sys.modules[owner], name, fake)
                report = module.check(skeleton)
            assert not report.passed and f"{owner}.{name} is not the kit's own" in report.failure.why, \
                f"lab {lab.number}, {owner}.{name} replaced by {how}:\n{report}"
    equal = checker._equal
    code = equal.__code__
    try:
        equal.__code__ = (lambda expected, got, locate=None: None).__code__
        report = module.check(skeleton)
    finally:
        equal.__code__ = code
    assert "labkit.checker._equal is not the kit's own" in report.failure.why, str(report)
    python = _python_skeleton(lab)
    if python is not None:
        def patch_then_run():
            checker._equal = lambda *a, **k: None
        try:
            report = module.check(_spying(python, patch_then_run))
        finally:
            checker._equal = equal
        assert not report.passed and "labkit.checker._equal is not the kit's own" in report.failure.why, str(report)
    assert module.check(skeleton).failure.why != report.failure.why     # the kit is whole again


def test_answer_keys_offer_no_unguarded_handle():
    """An oracle marked answer_key keeps no ``__wrapped__`` (functools.wraps' handle on the unguarded function), so
    ``lab.oracle.__wrapped__(...)`` from the learner's code is no way around the guard."""
    found = 0
    for lab in LABS:
        module = lab.load()
        for name, value in vars(module).items():
            if getattr(value, "answer_key", False):
                found += 1
                inner = value
                while hasattr(inner, "__wrapped__"):           # a cache around the guard leads to the guard
                    inner = inner.__wrapped__
                assert getattr(inner, "answer_key", False), f"{module.__name__}.{name} unwraps to the raw oracle"
    assert found >= 5


class _AlwaysEqual:
    """An answer that says it equals anything."""

    def __eq__(self, other):
        return True

    def __bool__(self):
        return True


@pytest.mark.parametrize("lab", LABS, ids=IDS)
def test_an_answer_that_equals_anything_fails(lab):
    """A returned object whose class defines __eq__ (or __bool__, __array__ ...) in the learner's code fails its case
    with a message naming the method -- alone, or inside a list, tuple or dict it returns."""
    python = _python_skeleton(lab)
    if python is None:
        pytest.skip(f"lab {lab.number} hands in a C++ kernel: its answers are the kernel's bytes")
    module = lab.load()
    for how, answer in (("the object", _AlwaysEqual()), ("in a tuple", (1, _AlwaysEqual())),
                        ("in a dict", {"plan": _AlwaysEqual()})):
        report = module.check(lambda *args, answer=answer, **kwargs: answer)
        assert not report.passed, f"lab {lab.number}, {how}:\n{report}"
        if lab.number in (1, 2, 3, 4):                     # the answer is compared as it is returned
            assert "_AlwaysEqual.__eq__ is your code" in report.failure.why, f"lab {lab.number}, {how}:\n{report}"


@pytest.mark.parametrize("lab", [lab for lab in LABS if lab.number in DRAWN], ids=lambda lab: f"lab{lab.number}")
def test_a_pass_with_a_seed_the_learner_chose_says_so(lab):
    """check(fn, seed=S) draws the hidden cases from S, which the learner could have drawn beforehand: a pass says
    that only a check with a seed drawn at check time counts."""
    report = _reference_report(lab, seed=5)
    assert report.passed and "the hidden cases came from the seed you passed (seed=5)" in str(report), str(report)


@pytest.mark.parametrize("lab", LABS, ids=IDS)
def test_switching_the_guard_off_fails(lab):
    """The learner's code enters reference_allowed() or checker_side(), or clears the running flag, and then calls
    the reference through sys.modules: refused; and a check run inside reference_allowed() (the tests' switch) that
    passes says so in its report."""
    python = _python_skeleton(lab)
    if python is None:
        pytest.skip(f"lab {lab.number} hands in a C++ kernel: no Python of the learner's runs in a case")
    module = lab.load()
    name = lab.function

    def lookup():
        return getattr(sys.modules["labkit." + "solutions"], name)

    def allowed(*args, **kwargs):
        with checker.reference_allowed():
            return lookup()(*args, **kwargs)

    def checker_side(*args, **kwargs):
        with checker.checker_side():
            return lookup()(*args, **kwargs)

    def flag(*args, **kwargs):
        checker._LEARNER_RUNNING[0] = False
        return lookup()(*args, **kwargs)

    for how, cheat in (("reference_allowed()", allowed), ("checker_side()", checker_side), ("the flag", flag)):
        report = module.check(cheat)
        f = report.failure
        assert f is not None and ("switch" in _text(f) or "you called the reference" in _text(f)), \
            f"lab {lab.number}, {how}:\n{report}"
    with reference_allowed():                   # the tests' switch: a pass inside it says that it proves nothing
        report = module.check(lambda *args, **kwargs: lookup()(*args, **kwargs))
    assert not report.passed or "this check ran inside reference_allowed()" in str(report), str(report)


def _lab_cells(lab) -> list[str]:
    import jupytext

    nb = jupytext.read(ROOT / lab.notebook, fmt="md:myst")
    skip = {"nbval-skip", "skip-execution"}
    return [c.source for c in nb.cells if c.cell_type == "code" and not skip & set(c.metadata.get("tags", []))]


@pytest.mark.parametrize("lab", LABS, ids=IDS)
def test_lab_page_runs_no_reference_and_shows_no_passing_report(lab, monkeypatch):
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    monkeypatch.chdir(ROOT / "labs")
    shell = InteractiveShell.instance()
    shell.reset(new_session=True)
    before = checker.REFERENCE_CALLS[0]
    for i, source in enumerate(_lab_cells(lab)):
        with capture_output() as captured:
            result = shell.run_cell(source, store_history=False)
        error = result.error_in_exec or result.error_before_exec
        assert result.success, f"{lab.notebook} code cell {i} failed: {error!r}"
        assert checker.REFERENCE_CALLS[0] == before, f"{lab.notebook} code cell {i} ran a reference solution"
        value = result.result
        if isinstance(value, Report):
            assert not value.passed, f"{lab.notebook} code cell {i} shows a passing report:\n{value}"
        text = captured.stdout + "".join(str(o.data.get("text/plain", "")) for o in captured.outputs)
        assert "this checked the reference solution" not in text
        assert "\u2014 PASSED:" not in text, f"{lab.notebook} code cell {i} shows a passing report"
