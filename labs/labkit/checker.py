"""What every lab's ``check()`` shares: cases, a battery runner, and a report that teaches.

A lab module (``lab1_checks``, ``lab2_dtypes``, ...) builds a list of :class:`Case` from its own *oracle*
and hands it, with the learner's function, to :func:`run_battery`. The runner calls the function on
every case in order and stops at the FIRST case whose result differs from the oracle's, so the report
names one concrete situation to fix: the inputs, what was expected, what came back, why they differ and
a hint. Whatever the learner's code raises is caught and reported as that case's failure, with the last
line of the traceback; ``check()`` never re-raises, it always returns a :class:`Report`.

Expected outcomes (``Case.expected``)
    a plain value, compared with ``==`` or with ``Case.compare`` (which returns ``None`` for "equal" or a
    sentence saying what differs); ``Raises(TilingError)`` when the function must raise; or a
    :class:`KernelFault` when the simulated kernel must be stopped by the sanitizer.

Hook for the kernel labs
    A kernel lab runs the learner's kernel through ``ascend_lab.ascendc.launch`` inside ``Case.call``.
    When the sanitizer stops it, ``ascendc.KernelError`` propagates; the runner turns it into a
    :class:`KernelFault` (message, kind, instruction, core, tile), which the report prints as "sanitizer"
    and "where" lines. For wrong numbers instead of a crash, :func:`compare_arrays` finds the first
    differing element and, given ``locate`` (see :func:`locator`, built from an ``op_host.core_ranges``
    list), names the core and tile that wrote it. A case may also *expect* a fault
    (``expected=KernelFault(kind="ub-out-of-range", core=3)``) for "make the sanitizer fire" exercises.

Answer keys
    A lab's oracle is a public callable (``lab3.oracle``, ``lab7.reference_overlap``): the notebook uses it to
    show what the checker compares against. :func:`answer_key` marks such a function: called while the
    learner's own code runs (inside a case), it raises :class:`AnswerKeyUsed`, so a function that hands back
    the checker's answer fails with a report that names the learner's line instead of passing.

Reference solutions
    ``labkit.solutions`` holds the book's answers, and none of them is reachable from the learner's code during a
    check. A battery run with ``refuse_reference=True`` (every lab) fails, before its first case, a function or
    class that is a reference or is built on one (:func:`reference_behind`: the object itself, a subclass -- a
    walk of its MRO --, ``functools.wraps``/``partial`` layers, a closure cell, a default argument, or a global
    name its code reads that is a reference or the ``solutions`` module). Every function and method of the
    solutions is also guarded (:func:`guard_references`): called while the learner's code runs in a case, it
    raises :class:`ReferenceUsed` ("you called the reference"), which catches what no static walk sees (a lookup
    through ``sys.modules``, ``getattr`` on a string). A test checks the reference on purpose inside
    :class:`reference_allowed`; its passing report says that it checked the reference. Pages never run a
    reference: :data:`REFERENCE_CALLS` counts every call, and ``tests/test_labs_integrity.py`` executes every lab
    page and asserts it stays 0.

Hidden cases
    A battery may add cases drawn at check time (``run_battery(hidden=draw)``, ``draw(rng) -> cases``), from a
    seed taken from ``os.urandom`` per check unless one is given: they are nowhere in the lab's module, so a table
    of the announced cases does not pass. A failing hidden case names the seed, and ``check(fn, seed=S)``
    draws the same cases again.

Reports print as text (``str``/``repr``, for a terminal) and as HTML (``_repr_html_``, for Jupyter and
the static book); ``bool(report)`` is ``report.passed``.
"""

from __future__ import annotations

import dataclasses
import functools
import html
import os
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import ascend_lab
from ascend_lab.ascendc import errors
from ascend_lab.ascendc.errors import KernelError
from ascend_lab.base import log as oplog

from . import integrity

__all__ = [
    "REFERENCE_CALLS", "AnswerKeyUsed", "Case", "Failure", "KernelFault", "Raises", "ReferenceUsed", "Report",
    "answer_key", "checker_side", "compare_arrays", "draw_seed", "guard_references", "is_reference", "locator",
    "positional", "quote_line", "quote_lines", "reference_allowed", "reference_behind", "run_battery",
]

#: Code the learner did not write: the ascend_lab package and this lab kit. A report names the learner's own
#: line first and shows where in these folders an error was raised. The kit registers its folder with the
#: package (``labkit/__init__``), so the package's walk (``errors.learner_line``, and the line a sanitizer
#: finding carries) skips the kit's checkers and reference kernels as it skips the package.
_LIBRARY_DIRS = (Path(ascend_lab.__file__).resolve().parent, Path(__file__).resolve().parent)
_THIS_FILE = Path(__file__).resolve()
_MAX_TEXT = 600


# --------------------------------------------------------------------------------------------------
# answer keys: the oracles may not be called from the learner's code
# --------------------------------------------------------------------------------------------------
class AnswerKeyUsed(RuntimeError):
    """The learner's code called (or handed back) one of the checker's oracles."""


#: True while a case runs the learner's code (one flag, not a ContextVar: kernel cores may run anywhere).
_LEARNER_RUNNING = [False]


def _from_learner() -> bool:
    """Is the caller of the guarded function (two frames up) the learner's code, or called from it, inside a case?
    (Whatever ``_LEARNER_RUNNING`` says: code that switched the flag off is still on the stack.)"""
    import sys

    return integrity.learner_frame_between(sys._getframe(2)) is not None


def _learner_called() -> bool:
    """Is a case running the learner's code, and is the caller of the guarded function (two frames up) either the
    learner's code or called from it? The flag covers what the kit calls on the learner's behalf; the stack walk
    (:func:`integrity.learner_frame_between`) covers a learner that switched the flag off."""
    import sys

    return _LEARNER_RUNNING[0] or integrity.learner_frame_between(sys._getframe(2)) is not None


def answer_key(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark ``fn`` as an oracle: calling it while the learner's code runs raises :class:`AnswerKeyUsed`."""
    @functools.wraps(fn)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        if _learner_called():
            raise AnswerKeyUsed(
                f"your code called the checker's own {fn.__module__.rsplit('.', 1)[-1]}.{fn.__name__}: the checker "
                "compares your answer with it, so handing it back proves nothing. Work the answer out in your "
                "function from the spec")
        return fn(*args, **kwargs)
    guarded.answer_key = True  # type: ignore[attr-defined]
    del guarded.__wrapped__    # functools.wraps' handle on the unguarded oracle: not a way around the guard
    return guarded


class checker_side:
    """Context manager for a case's ``call`` that needs an oracle while the learner's code is running
    (lab 7 measures the same trace both ways): inside it, :func:`answer_key` functions may be called."""

    def __enter__(self) -> None:
        _refuse_from_learner("checker_side()")
        self._was = _LEARNER_RUNNING[0]
        _LEARNER_RUNNING[0] = False

    def __exit__(self, *exc: object) -> None:
        _LEARNER_RUNNING[0] = self._was


def _refuse_from_learner(what: str) -> None:
    """Entering one of the checker's switches (``checker_side``, ``reference_allowed``) from the learner's code while
    a case runs is switching the guard off: refused."""
    import sys

    if integrity.learner_frame_between(sys._getframe(2)) is not None:
        raise ReferenceUsed(f"your code entered the checker's {what} while a case ran: that switches off the guard "
                            "that keeps the reference and the answer keys out of reach. Write the part yourself")


def _invoke_learner(invoke: Callable[..., Any], fn: Any, inputs: dict[str, Any]) -> Any:
    was, _LEARNER_RUNNING[0] = _LEARNER_RUNNING[0], True
    allowed = _REFERENCE_ALLOWED[0]
    try:
        return integrity.run_learner(invoke, fn, inputs)
    finally:
        flipped = _LEARNER_RUNNING[0] is not True or _REFERENCE_ALLOWED[0] != allowed
        _LEARNER_RUNNING[0] = was
        if flipped:
            raise AnswerKeyUsed("your code switched the checker's guard (labkit.checker._LEARNER_RUNNING or "
                                "_REFERENCE_ALLOWED) while the case ran; the check cannot judge code that does that")


# --------------------------------------------------------------------------------------------------
# reference solutions: the book's answers, not the learner's
# --------------------------------------------------------------------------------------------------
_SOLUTIONS_MODULE = f"{__package__}.solutions"
_SOLUTIONS_FILE = _LIBRARY_DIRS[1] / "solutions.py"
#: True inside ``reference_allowed()`` (one flag, as for the answer keys).
_REFERENCE_ALLOWED = [False]
#: How many times a reference solution's function or method ran (``guard_references``), in this process.
REFERENCE_CALLS = [0]


class ReferenceUsed(AnswerKeyUsed):
    """The learner's code called a reference solution (directly, through a subclass, a wrapper, a lookup)."""


#: The C++ reference solutions of the kernel labs (``labkit.solutions`` compiles them).
_REFERENCE_CPP = _LIBRARY_DIRS[1] / "reference"


def _reference_sources(obj: Any) -> list[str]:
    """The source files of a compiled C++ kernel (``%%ascendc``, ``cxx.compile``) that are reference solutions."""
    sources = getattr(obj, "sources", None)
    if isinstance(obj, type) or not isinstance(sources, list):
        return []
    out = []
    for src in sources:
        try:
            if Path(str(src.name)).resolve().is_relative_to(_REFERENCE_CPP):
                out.append(Path(str(src.name)).name)
        except (OSError, ValueError, AttributeError):
            continue
    return out


def _own_reference(obj: Any) -> bool:
    """``obj`` itself (a function, method or class) is defined in ``labkit.solutions`` or compiled from it; or it
    is a C++ kernel compiled from a reference file (its main file is one)."""
    if getattr(obj, "sources", None) and not isinstance(obj, type):
        refs = _reference_sources(obj)
        return bool(refs) and refs[-1] == Path(str(obj.sources[-1].name)).name
    obj = getattr(obj, "__func__", obj)
    if getattr(obj, "__module__", None) == _SOLUTIONS_MODULE:
        return True
    code = getattr(obj, "__code__", None)
    if code is None:
        return False
    try:
        return Path(code.co_filename).resolve() == _SOLUTIONS_FILE
    except (OSError, ValueError):
        return False


def is_reference(obj: Any) -> bool:
    """Is ``obj`` (a function, method or class; unwrapped through ``functools.wraps`` and ``partial``) one of
    the reference solutions -- defined in ``labkit.solutions`` or compiled from ``solutions.py``? (Only the
    object and its wrappers: :func:`reference_behind` also walks subclasses, closures and the names code reads.)"""
    for _ in range(8):                                  # a few layers of wrappers, never a cycle
        if _own_reference(obj):
            return True
        inner = getattr(obj, "__wrapped__", None) or (obj.func if isinstance(obj, functools.partial) else None)
        if inner is None:
            break
        obj = inner
    return _own_reference(obj)


def _codes(code: Any) -> Iterable[Any]:
    yield code
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            yield from _codes(const)


def reference_behind(obj: Any, _depth: int = 0, _seen: set[int] | None = None) -> str:
    """How ``obj`` reaches a reference solution, as a phrase ("is ...", "subclasses ...", "wraps ...", "reads
    the global ... in its code"), or "" when it does not as far as a static walk can tell. Walks
    ``functools.partial`` and ``__wrapped__`` layers, a class's MRO and its methods, a function's closure cells,
    defaults and the global names its code (and its nested functions' code) reads."""
    import types

    seen = set() if _seen is None else _seen
    if id(obj) in seen or _depth > 4:
        return ""
    seen.add(id(obj))
    if is_reference(obj):
        return f"is {_reference_name(obj)}"
    if isinstance(obj, types.ModuleType):
        return "is the solutions module" if obj.__name__ == _SOLUTIONS_MODULE else ""
    included = _reference_sources(obj)
    if included:
        return f"#includes the reference solution's C++ ({', '.join(included)})"
    if isinstance(obj, functools.partial):
        found = reference_behind(obj.func, _depth + 1, seen)
        return f"is functools.partial of something that {found}" if found else ""
    wrapped = getattr(obj, "__wrapped__", None)
    if wrapped is not None:
        found = reference_behind(wrapped, _depth + 1, seen)
        if found:
            return f"wraps something that {found}"
    if isinstance(obj, type):
        for base in obj.__mro__[1:]:
            if is_reference(base):
                return f"subclasses {_reference_name(base)}"
        for name, member in list(vars(obj).items()):
            found = reference_behind(getattr(member, "__func__", member), _depth + 1, seen)
            if found and callable(member):
                return f"has a method {name} that {found}"
        return ""
    func = getattr(obj, "__func__", obj)
    code = getattr(func, "__code__", None)
    if code is None:
        return ""
    for cell in getattr(func, "__closure__", None) or ():
        try:
            value = cell.cell_contents
        except ValueError:
            continue
        found = reference_behind(value, _depth + 1, seen) if callable(value) or hasattr(value, "__name__") else ""
        if found:
            return f"closes over something that {found}"
    defaults = (*(getattr(func, "__defaults__", None) or ()), *(getattr(func, "__kwdefaults__", None) or {}).values())
    for value in defaults:
        found = reference_behind(value, _depth + 1, seen) if callable(value) else ""
        if found:
            return f"has a default argument that {found}"
    globs = getattr(func, "__globals__", {})
    for sub in _codes(code):
        for name in sub.co_names:
            if name in globs:
                value = globs[name]
                if (callable(value) or isinstance(value, types.ModuleType)) and value is not obj:
                    found = reference_behind(value, _depth + 1, seen)
                    if found:
                        return f"reads the global {name!r}, which {found}"
    return ""


def _guarded(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    @functools.wraps(fn)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        REFERENCE_CALLS[0] += 1
        if not _REFERENCE_ALLOWED[0] and (_LEARNER_RUNNING[0] or _from_learner()):
            raise ReferenceUsed(
                f"you called the reference solution {_SOLUTIONS_MODULE}.{name} from your code: during a check the "
                "reference is out of reach (passing through it would prove nothing). Write this part yourself; "
                "the collapsed solution cell shows the reference when you want to compare")
        return fn(*args, **kwargs)
    guarded.reference_guard = True  # type: ignore[attr-defined]
    guarded.reference_source = _source_of(fn)  # type: ignore[attr-defined]   (show_source: the reference's text)
    del guarded.__wrapped__    # functools.wraps' handle on the unguarded reference: not a way around the guard
    return guarded


def _source_of(fn: Callable[..., Any]) -> str:
    import inspect

    try:
        return inspect.getsource(fn)
    except (OSError, TypeError):
        return ""


def guard_references(namespace: dict[str, Any]) -> None:
    """Guard every function, and every method of every class, that the module ``namespace`` (``labkit.solutions``)
    defines: each call counts in :data:`REFERENCE_CALLS` and, while a case runs the learner's code (outside
    :class:`reference_allowed`), raises :class:`ReferenceUsed`. The reference's own calls to its helpers go
    through the guard too, so a check of the reference itself passes only inside ``reference_allowed``."""
    import types

    module = namespace["__name__"]
    for name, obj in list(namespace.items()):
        if getattr(obj, "__module__", None) != module or getattr(obj, "reference_guard", False):
            continue
        if isinstance(obj, types.FunctionType):
            namespace[name] = _guarded(obj, name)
        elif isinstance(obj, type):
            for attr, member in list(vars(obj).items()):
                if isinstance(member, types.FunctionType) and not (attr.startswith("__") and attr != "__init__"):
                    setattr(obj, attr, _guarded(member, f"{name}.{attr}"))
                elif isinstance(member, (staticmethod, classmethod)):
                    if isinstance(member.__func__, types.FunctionType):
                        setattr(obj, attr, type(member)(_guarded(member.__func__, f"{name}.{attr}")))


class reference_allowed:
    """Context manager: inside it a battery checks a reference solution like any code (the tests' proof that every
    solution passes). Its passing report says that it checked the reference."""

    def __enter__(self) -> reference_allowed:
        _refuse_from_learner("reference_allowed()")
        self._was = _REFERENCE_ALLOWED[0]
        _REFERENCE_ALLOWED[0] = True
        return self

    def __exit__(self, *exc: object) -> None:
        _REFERENCE_ALLOWED[0] = self._was


def _reference_name(obj: Any) -> str:
    if getattr(obj, "reference_name", None):
        return f"{_SOLUTIONS_MODULE}.{obj.reference_name}"
    for _ in range(8):
        inner = getattr(obj, "__wrapped__", None) or (obj.func if isinstance(obj, functools.partial) else None)
        if inner is None or _own_reference(obj):
            break
        obj = inner
    obj = getattr(obj, "__wrapped__", obj)
    return f"{_SOLUTIONS_MODULE}.{getattr(obj, '__qualname__', getattr(obj, '__name__', type(obj).__name__))}"


def draw_seed(seed: int | None = None) -> int:
    """The seed of a check's hidden cases: ``seed`` when given (to draw a reported failure again), else fresh
    from ``os.urandom``."""
    return int.from_bytes(os.urandom(4), "little") if seed is None else int(seed)


# --------------------------------------------------------------------------------------------------
# expected outcomes
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Raises:
    """Expected outcome: the function raises ``exc`` (or a subclass); ``match`` must occur in the message."""

    exc: type[BaseException]
    match: str = ""

    def __str__(self) -> str:
        return f"raises {self.exc.__name__}" + (f" ({self.match!r})" if self.match else "")


@dataclass(frozen=True)
class KernelFault:
    """A sanitizer finding (``ascendc.KernelError``) as a record, or the finding a kernel case expects.

    As an expectation, empty/None fields match anything: ``KernelFault(kind="ub-out-of-range")``.
    """

    message: str = ""
    kind: str = ""
    instruction: str = ""
    core: int | None = None
    tile: int | None = None

    @classmethod
    def from_error(cls, err: KernelError) -> KernelFault:
        return cls(message=getattr(err, "detail", str(err)), kind=getattr(err, "kind", ""),
                   instruction=getattr(err, "instruction", ""), core=getattr(err, "core", None),
                   tile=getattr(err, "tile", None))

    def where(self) -> str:
        parts = []
        if self.core is not None:
            parts.append(f"core {self.core}")
        if self.tile is not None:
            parts.append(f"tile {self.tile}")
        if self.instruction:
            parts.append(f"instruction {self.instruction}")
        return ", ".join(parts)

    def matches(self, found: KernelFault) -> bool:
        """Does ``found`` satisfy this expectation? (Unset fields match anything.)"""
        return ((not self.kind or self.kind == found.kind)
                and (not self.instruction or self.instruction == found.instruction)
                and (self.core is None or self.core == found.core)
                and (self.tile is None or self.tile == found.tile)
                and (not self.message or self.message in found.message))

    def __str__(self) -> str:
        head = f"[{self.kind}] " if self.kind else ""
        where = self.where()
        return f"{head}{self.message or 'sanitizer stop'}" + (f" ({where})" if where else "")


# --------------------------------------------------------------------------------------------------
# cases, failures, reports
# --------------------------------------------------------------------------------------------------
@dataclass
class Case:
    """One situation the learner's function must handle.

    ``inputs`` are shown in the report and, unless ``call`` (or the battery's ``call``) says otherwise,
    passed as keyword arguments. ``covers`` are ``"group:value"`` tags (``"soc:Ascend910A"``,
    ``"dtype:bfloat16"``, ``"topic:empty tensor"``) summarised when the battery passes. ``hint`` is a
    sentence, or ``hint(fn)`` making one from the learner's code when the case fails (to point at what is
    missing there rather than recite the whole answer).
    """

    name: str
    inputs: dict[str, Any]
    expected: Any
    covers: tuple[str, ...] = ()
    hint: str | Callable[[Any], str] = ""
    call: Callable[[Callable[..., Any], dict[str, Any]], Any] | None = None
    compare: Callable[[Any, Any], str | None] | None = None
    show: Callable[[Any], str] | None = None
    locate: Callable[[int], str] | None = None


@dataclass
class Failure:
    """The first failing case (``case`` is None when the function could not be run at all)."""

    index: int
    case: Case | None
    expected: str
    got: str
    why: str = ""
    error: str = ""
    where: str = ""
    kernel: KernelFault | None = None
    log: list[str] = field(default_factory=list)
    hint: str = ""


@dataclass
class Report:
    """What ``check()`` found. ``passed`` is True when every case matched the oracle."""

    title: str
    total: int
    run: int
    failure: Failure | None = None
    coverage: dict[str, list[str]] = field(default_factory=dict)
    summary: list[str] = field(default_factory=list)
    seconds: float = 0.0
    #: the seed the hidden cases were drawn with (None: the battery has none), and how many were drawn
    seed: int | None = None
    hidden: int = 0

    @property
    def passed(self) -> bool:
        return self.failure is None

    def __bool__(self) -> bool:
        return self.passed

    # -- text -------------------------------------------------------------------------------------
    def _rows(self) -> list[tuple[str, str]]:
        rows: list[tuple[str, str]] = []
        f = self.failure
        if f is None:
            rows += [(group, ", ".join(values)) for group, values in self.coverage.items()]
            rows += [("summary" if i == 0 else "", line) for i, line in enumerate(self.summary)]
            if self.seed is not None:
                rows.append(("hidden", f"{self.hidden} of the {self.total} cases were drawn at check time "
                                       f"(seed {self.seed})"))
            return rows
        if f.case is not None:
            rows.append(("case", f.case.name))
            rows.append(("inputs", _inputs_text(f.case.inputs)))
        rows.append(("expected", f.expected))
        rows.append(("got", f.got))
        if f.why:
            rows.append(("why", f.why))
        if f.error:
            rows.append(("error", f.error))
        if f.where:
            rows.append(("at", f.where))
        if f.kernel is not None:
            kind = f"[{f.kernel.kind}] " if f.kernel.kind else ""
            rows.append(("sanitizer", kind + (f.kernel.message or "the kernel was stopped")))
            if f.kernel.where():
                rows.append(("where", f.kernel.where()))
        if f.log:
            rows.append(("your log", " | ".join(f.log[-3:])))
        if f.hint:
            rows.append(("hint", f.hint))
        if self.seed is not None and f.case is not None and f.case.name.startswith("hidden case"):
            rows.append(("seed", f"this case was drawn at check time with seed {self.seed}; "
                                 f"check(..., seed={self.seed}) draws it again"))
        before = f.index - 1
        if before > 0:
            covered = "; ".join(f"{g}: {len(v)}" for g, v in self.coverage.items())
            rows.append(("", f"{before} earlier case{'s' if before != 1 else ''} passed"
                             + (f" ({covered})" if covered else "") + "."))
        return rows

    def headline(self) -> str:
        if self.passed:
            return f"{self.title} \u2014 PASSED: {self.total} cases in {self.seconds:.2f} s"
        if self.failure is not None and self.failure.case is None:
            return f"{self.title} \u2014 FAILED before the first case"
        return f"{self.title} \u2014 FAILED at case {self.run} of {self.total}"

    def __str__(self) -> str:
        rows = self._rows()
        width = max((len(k) for k, _ in rows), default=0)
        lines = [("\u2713 " if self.passed else "\u2717 ") + self.headline()]
        for key, value in rows:
            pad = " " * (width + 4)
            body = value.replace("\n", "\n" + pad)
            lines.append(f"  {key:<{width}}  {body}")
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        # the site's theme variables (book.css: light and dark mode) when there are any, GitHub's colours otherwise
        color = "var(--ascend-pass, #1a7f37)" if self.passed else "var(--ascend-fail, #cf222e)"
        mark = "\u2713" if self.passed else "\u2717"
        cell = "padding:0.15em 0.6em;vertical-align:top;border:none"
        mono = "font-family:var(--pst-font-family-monospace, monospace);font-size:0.85em;white-space:pre-wrap"
        body = "".join(
            f"<tr><th style='{cell};text-align:left;white-space:nowrap'>{html.escape(k)}</th>"
            f"<td style='{cell};{mono}'>{html.escape(v)}</td></tr>"
            for k, v in self._rows())
        return (f"<div class='lab-report' style='border-left:4px solid {color};padding:0.3em 0.8em;margin:0.5em 0'>"
                f"<div style='font-weight:bold;color:{color}'>{mark} {html.escape(self.headline())}</div>"
                f"<table style='margin:0.3em 0 0 0;border:none'>{body}</table></div>")


# --------------------------------------------------------------------------------------------------
# formatting helpers
# --------------------------------------------------------------------------------------------------
def _short(text: str, limit: int = _MAX_TEXT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _inputs_text(inputs: dict[str, Any]) -> str:
    return _short(", ".join(f"{k}={v!r}" for k, v in inputs.items()))


def _show(case: Case, value: Any) -> str:
    if case.show is not None:
        try:
            return _short(case.show(value))
        except Exception:  # a learner's odd return value must not break the report
            pass
    return _short(repr(value))


def _library_place(frame: traceback.FrameSummary) -> str:
    """A frame in the library, named from the library's own folder (``ascend_lab/opdev/...``): where an error
    was raised, shown under the learner's line as context, never as the place to fix."""
    path = Path(frame.filename).resolve()
    folder = next((d for d in _LIBRARY_DIRS if path.is_relative_to(d)), None)
    name = str(path.relative_to(folder.parent)) if folder is not None else frame.filename
    code = (frame.line or "").strip()
    return f"{name}, line {frame.lineno}, in {frame.name}" + (f": {code}" if code else "")


def _traceback_where(exc: BaseException) -> str:
    """The learner's line behind ``exc`` (``errors.learner_line``: the package's walk, which skips the
    package and this kit), plus the traceback's last line when that is in the library. For a sanitizer
    finding (KernelError) only the learner's line: where the simulator noticed is no place to fix anything,
    so a finding never points into the library (and names no line for a kernel the learner did not write)."""
    yours = errors.learner_line(exc)
    if isinstance(exc, KernelError):
        return str(yours) if yours is not None else ""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename).resolve() != _THIS_FILE]
    if not frames:
        return ""
    last = frames[-1]
    if not errors.in_library(last.filename):            # raised in the learner's own code: that line alone
        return str(yours) if yours is not None else ""
    text = _library_place(last)
    return f"{yours}\n(raised in {text})" if yours is not None else text


def quote_lines(obj: Any, needles: Sequence[str], *, skip_comments: bool = False) -> list[errors.SourceLine]:
    """Every line of ``obj``'s source (a function or method the learner wrote) that contains one of ``needles``,
    in source order, as :class:`errors.SourceLine` (a Jupyter cell is "your notebook cell"): the lines a report
    quotes when nothing raised -- the line that lays out the plan, every line that sets the threshold.
    ``skip_comments`` leaves out lines that are only a comment (a learner's TODO naming the call is not the
    call). Empty when the source is not to be had or ``obj`` is library code (a report must not point into the
    library). Not :func:`errors.learner_line`, which finds the line behind an error or a frame."""
    import inspect  # only for the reports that quote a line

    func = getattr(obj, "__func__", obj)
    code = getattr(func, "__code__", None)
    if code is None or errors.in_library(code.co_filename):
        return []
    try:
        lines, first = inspect.getsourcelines(func)
    except (OSError, TypeError):
        return []
    return [errors.SourceLine(code.co_filename, first + offset, func.__name__, text.strip())
            for offset, text in enumerate(lines)
            if any(needle in text for needle in needles) and not (skip_comments and text.lstrip().startswith("#"))]


def quote_line(obj: Any, needle: str) -> str:
    """``"<place>, line N, in <function>: <code>"`` of the first line of ``obj``'s source that contains ``needle``
    (:func:`quote_lines`), or "" when there is none to quote."""
    found = quote_lines(obj, (needle,))
    return str(found[0]) if found else ""


def _equal(expected: Any, got: Any, locate: Callable[[int], str] | None = None) -> str | None:
    if isinstance(expected, np.ndarray) or isinstance(got, np.ndarray):
        return compare_arrays(expected, got, locate=locate)
    try:
        same = expected == got
        if isinstance(same, np.ndarray):
            same = bool(same.all())
        return None if bool(same) else ""
    except Exception as exc:  # e.g. comparing incompatible objects
        return f"could not compare: {type(exc).__name__}: {exc}"


# --------------------------------------------------------------------------------------------------
# the runner
# --------------------------------------------------------------------------------------------------
def _default_call(fn: Callable[..., Any], inputs: dict[str, Any]) -> Any:
    return fn(**inputs)


def positional(fn: Callable[..., Any], inputs: dict[str, Any]) -> Any:
    """A ``call`` for ``run_battery``: pass the inputs positionally, in their order (forgiving about the
    parameter names the learner chose)."""
    return fn(*inputs.values())


def _hint(case: Case, fn: Any) -> str:
    if not callable(case.hint):
        return case.hint
    try:
        return case.hint(fn)
    except Exception:  # a hint that cannot read the learner's code says nothing rather than break the report
        return ""


def _run_case(fn: Callable[..., Any], case: Case, index: int,
              call: Callable[[Callable[..., Any], dict[str, Any]], Any]) -> Failure | None:
    failure = _run_case_plain(fn, case, index, call)
    if failure is not None:
        failure.hint = _hint(case, fn)
    return failure


def _run_case_plain(fn: Callable[..., Any], case: Case, index: int,
                    call: Callable[[Callable[..., Any], dict[str, Any]], Any]) -> Failure | None:
    expected = case.expected
    exp_text = str(expected) if isinstance(expected, (Raises, KernelFault)) else _show(case, expected)
    invoke = case.call or call
    with oplog.capture() as records:
        try:
            got = _invoke_learner(invoke, fn, case.inputs)
        except KernelError as err:
            fault = KernelFault.from_error(err)
            if isinstance(expected, KernelFault) and expected.matches(fault):
                return None
            return Failure(index, case, exp_text, "the sanitizer stopped the kernel",
                           where=_traceback_where(err), kernel=fault, log=[str(r) for r in records])
        except Exception as exc:
            if isinstance(expected, Raises) and isinstance(exc, expected.exc) and expected.match in str(exc):
                return None
            return Failure(index, case, exp_text, f"an exception: {type(exc).__name__}",
                           error=_short(f"{type(exc).__name__}: {exc}"), where=_traceback_where(exc),
                           log=[str(r) for r in records])
    log = [str(r) for r in records]
    own = integrity.learner_dunder(got)
    if own:
        return Failure(index, case, exp_text, f"an object whose class defines {own.rsplit('.', 1)[1]} in your code",
                       why=f"{own} is your code: an answer that decides for itself how it compares (or converts) "
                           "would equal anything. Return the plain values the lab asks for", log=log)
    if isinstance(expected, (Raises, KernelFault)):
        what = "raise" if isinstance(expected, Raises) else "be stopped by the sanitizer"
        return Failure(index, case, exp_text, _show(case, got), why=f"it should {what}, but it returned",
                       log=log)
    try:
        why = case.compare(expected, got) if case.compare else _equal(expected, got, case.locate)
    except Exception as exc:  # a learner's odd return value
        why = f"could not compare: {type(exc).__name__}: {exc}"
    if why is None:
        return None
    return Failure(index, case, exp_text, _show(case, got), why=why, log=log)


def run_battery(fn: Any, cases: Iterable[Case], *, title: str,
                summary: Callable[[], Sequence[str]] | Sequence[str] = (),
                call: Callable[[Callable[..., Any], dict[str, Any]], Any] | None = None,
                refuse_reference: bool = False,
                hidden: Callable[[np.random.Generator], Iterable[Case]] | None = None,
                seed: int | None = None) -> Report:
    """Run ``fn`` on every case; stop at the first failure. Never raises for anything ``fn`` does.

    ``call(fn, inputs)`` says how to invoke ``fn`` (default ``fn(**inputs)``; a case's own ``call`` wins).
    ``summary`` (lines, or a callable returning them) is added to a passing report: the worked example.
    ``refuse_reference``: fail ``fn`` before the first case when it is, or is built on, a reference solution
    (:func:`reference_behind`), unless inside :class:`reference_allowed`.
    ``hidden(rng)``: cases drawn now, from ``np.random.default_rng(seed)`` (``seed`` from :func:`draw_seed`),
    run after the announced ones; the report carries the seed.
    """
    start = time.perf_counter()
    cases = list(cases)
    drawn = 0
    seed_given = seed is not None
    if hidden is not None:
        seed = draw_seed(seed)
        extra = [dataclasses.replace(c, name=f"hidden case (seed {seed}): {c.name}")
                 for c in hidden(np.random.default_rng(seed))]
        drawn = len(extra)
        cases += extra
    else:
        seed = None

    def report(run: int, failure: Failure | None, coverage: dict[str, list[str]] | None = None,
               lines: Sequence[str] = ()) -> Report:
        return Report(title, len(cases), run, failure, coverage or {}, list(lines), time.perf_counter() - start,
                      seed=seed, hidden=drawn)

    if not callable(fn):
        return report(0, Failure(0, None, "a function", f"{type(fn).__name__} {_short(repr(fn), 80)}",
                                 why="pass your function itself, e.g. check(my_function), not its result"))
    changed = integrity.tampered()
    refused = _tamper_failure(0, None, changed) if changed else _refusal(fn) if refuse_reference else None
    if refused is not None:
        return report(0, refused)
    reference = is_reference(fn)
    coverage: dict[str, list[str]] = {}
    looked = time.perf_counter()
    for index, case in enumerate(cases, 1):
        failure = _run_case(fn, case, index, call or _default_call)
        changed, looked = _look(failure is not None, looked)
        if changed:
            return report(index, _tamper_failure(index, case, changed), coverage)
        if failure is not None:
            return report(index, failure, coverage)
        _cover(coverage, case)
    lines = list(summary() if callable(summary) else summary)
    changed = integrity.tampered()
    if changed:
        return report(len(cases), _tamper_failure(len(cases), cases[-1] if cases else None, changed), coverage)
    return report(len(cases), None, coverage, _caveats(fn, reference, seed if hidden is not None and seed_given
                                                        else None) + lines)


def _look(now: bool, looked: float) -> tuple[str, float]:
    """The judging kit looked at again (:func:`integrity.tampered`) after a failure, or once per 25 ms of cases: a look
    costs 2 ms, and lab 1 runs 2400 quick cases. Returns what changed ("" for nothing) and when it looked."""
    if now or time.perf_counter() - looked > 0.025:
        return integrity.tampered(judges_only=True), time.perf_counter()
    return "", looked


def _cover(coverage: dict[str, list[str]], case: Case) -> None:
    for tag in case.covers:
        group, _, value = tag.partition(":")
        values = coverage.setdefault(group, [])
        if value not in values:
            values.append(value)


def _refusal(fn: Any) -> Failure | None:
    """The failure before the first case for a reference solution, or code built on one (outside
    ``reference_allowed``); None for the learner's own code."""
    if _REFERENCE_ALLOWED[0]:
        return None
    if is_reference(fn):
        return Failure(0, None, "your own function or class", _reference_name(fn),
                       why="this is the reference solution, not your code: it was imported from "
                           f"{_SOLUTIONS_MODULE}, so passing would prove nothing. Check the one you wrote (the "
                           "skeleton's cell, filled in); the reference is in the collapsed solution cell when you "
                           "want to compare")
    behind = reference_behind(fn)
    if not behind:
        return None
    return Failure(0, None, "your own function or class", f"{getattr(fn, '__qualname__', type(fn).__name__)}, which "
                   f"{behind}", why="you called the reference: your code is built on the reference solution in "
                   f"{_SOLUTIONS_MODULE}, so passing would prove nothing. Write it without the reference (the "
                   "collapsed solution cell shows it when you want to compare)")


def _caveats(fn: Any, reference: bool, given_seed: int | None) -> list[str]:
    """The first lines of a passing report that say what it does not prove."""
    lines = []
    if reference:
        lines.append(f"this checked the reference solution, {_reference_name(fn)}, not code of yours")
    elif _REFERENCE_ALLOWED[0]:
        lines.append("this check ran inside reference_allowed(): the reference was in reach, so this checked the "
                     "reference solution's reach, not code of yours")
    if given_seed is not None:
        lines.append(f"the hidden cases came from the seed you passed (seed={given_seed}), so they could be known "
                     "beforehand: only a check with a seed drawn now, check(fn), counts")
    return lines


def _tamper_failure(index: int, case: Case | None, changed: str) -> Failure:
    return Failure(index, case, "the kit as it ships", "a changed kit", why=changed)


# --------------------------------------------------------------------------------------------------
# helpers for array-valued labs (the kernel labs)
# --------------------------------------------------------------------------------------------------
def _bits(a: np.ndarray) -> np.ndarray:
    if a.dtype.kind in "fV" or a.dtype.name == "bfloat16":
        return a.view(np.dtype(f"u{a.dtype.itemsize}"))
    return a


def _element(a: np.ndarray, i: int) -> str:
    """One element as text; floats also show their bits, so -0.0 vs 0.0 or two NaNs are visible."""
    if a.dtype.kind == "f" or a.dtype.name == "bfloat16":
        return f"{str(a[i])} (bits 0x{int(_bits(a)[i]):0{2 * a.dtype.itemsize}x})"
    return str(a[i])


def compare_arrays(expected: Any, got: Any, *, exact: bool = True, rtol: float = 0.0, atol: float = 0.0,
                   locate: Callable[[int], str] | None = None) -> str | None:
    """``None`` when equal, else a sentence: shape/dtype difference or the first differing element.

    ``exact`` compares bit patterns (so +0.0 and -0.0 differ, and two NaNs with the same bits are equal);
    otherwise ``np.isclose(rtol, atol)`` with NaN equal to NaN. ``locate(flat_index)`` names where the
    element was produced, e.g. "core 3 (big), tile 1".
    """
    if not isinstance(got, np.ndarray):
        return f"expected a numpy array, got {type(got).__name__}"
    expected = np.asarray(expected)
    if got.shape != expected.shape:
        return f"shape {got.shape} instead of {expected.shape}"
    if got.dtype != expected.dtype:
        return f"dtype {got.dtype} instead of {expected.dtype}"
    e, g = expected.reshape(-1), got.reshape(-1)
    if exact:
        bad = _bits(e) != _bits(g)
    else:
        e64, g64 = e.astype(np.float64), g.astype(np.float64)
        bad = ~np.isclose(g64, e64, rtol=rtol, atol=atol, equal_nan=True)
    if not bad.any():
        return None
    first = int(np.flatnonzero(bad)[0])
    text = (f"{int(bad.sum())} of {e.size} elements differ; the first is element {first}: "
            f"expected {_element(e, first)}, got {_element(g, first)}")
    if locate is not None:
        text += f" (written by {locate(first)})"
    return text


def locator(ranges: Sequence[dict[str, Any]]) -> Callable[[int], str]:
    """Element index -> "core c (kind), tile t [start, end)" from an ``op_host.core_ranges`` list."""
    tiles = [(start, start + length, r["core"], r.get("kind", ""), t)
             for r in ranges for (t, start, length) in r["tiles"]]

    def locate(index: int) -> str:
        for start, end, core, kind, tile in tiles:
            if start <= index < end:
                return f"core {core}{f' ({kind})' if kind else ''}, tile {tile} [{start}, {end})"
        return "no core (the element is outside every core's range)"

    return locate


def _refuse_changed_kit(module: Any) -> None:
    """Wrap a lab module's ``check`` (``labkit.labN_*``): a kit changed since it was sealed is refused before the lab
    builds its cases (with a replaced oracle, say), with a report, never an exception."""
    check = vars(module).get("check")
    if not module.__name__.startswith(f"{__package__}.lab") or not callable(check):
        return

    @functools.wraps(check)
    def checked(*args: Any, **kwargs: Any) -> Any:
        changed = integrity.tampered()
        if changed:
            return Report(getattr(module, "TITLE", module.__name__), 0, 0, _tamper_failure(0, None, changed))
        return check(*args, **kwargs)

    module.check = checked


integrity.ON_IMPORT.append(_refuse_changed_kit)
integrity.install()         # last: the checker is sealed with every function it defines
