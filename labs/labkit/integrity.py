"""What keeps a check honest while the learner's code runs in the same Python process (issue 22, items 2-4).

A check runs the learner's function in the checker's own process, so everything the checker holds -- the cases
with their expected answers, the reference solutions, the comparison helpers -- is one frame or one attribute
away. Python cannot wall that off; this module makes each known way in fail loudly instead of pass quietly:

Reading the checker's frames or objects (:func:`install`)
    An audit hook (``sys.addaudithook``; it cannot be removed once added) watches the events that hand out frames
    or every live object -- ``sys._getframe`` (``inspect.stack``, ``inspect.currentframe``), ``sys._current_frames``,
    a traceback's ``tb_frame`` and a generator's ``gi_frame``, ``gc.get_objects`` / ``get_referrers`` /
    ``get_referents``, ``sys.settrace`` / ``setprofile`` and ``ctypes``. While a case runs the learner's code
    (:func:`run_learner` is on the stack) and the event comes from the learner's code, the event raises
    :class:`IntrospectionUsed`; the case fails with that message. The package and the kit may use them (the
    sanitizer names the learner's line from the stack), and so may ``logging``, ``warnings`` and the other
    standard modules that read a caller's module name.

Changing the kit (:func:`tampered`)
    Every module of ``labkit`` and ``ascend_lab``, numpy's namespace and ``builtins`` are sealed: each name's
    object, each function's code, defaults and closure, and the members of each class a module defines, as they
    were when first seen. Before the first case, after every case and before a passing report, the battery asks
    :func:`tampered`; a replaced comparison helper, a function whose ``__code__`` was swapped, a patched
    ``Report.passed`` -- or any function of these modules whose code was written in a notebook cell -- stops
    the check with a message naming what was changed. (After a case the battery looks at the judging modules --
    the kit, numpy, builtins -- once per 25 ms of cases, and at everything before the first case and before a
    passing report: a patch put in and taken out again within one such window can go unseen.)

Returned answers (:func:`learner_dunder`)
    An answer whose class defines ``__eq__``, ``__bool__``, ``__array__`` ... in the learner's code (alone or inside a
    list, tuple or dict) fails its case: it would equal anything.

What stays open, honestly -- each a deliberate act, none of which a passing report hides from a reviewer who reads
the learner's code:

* code that runs before the kit is first imported can patch a module before it is sealed (the code-origin rule
  still catches a function the learner wrote, not a library function put in its place);
* code compiled under a file name of the kit (``compile(src, ".../labkit/x.py", "exec")``) passes for the kit's:
  the hook and the guards judge code by its file;
* an answer key's unguarded oracle stays reachable through its closure (``oracle.__closure__``), and every source
  of the kit can be read and copied (a lab 6 session's bugs, too, from its seed);
* ``ctypes`` before a check, or a C extension, can do anything;
* the judging modules are looked at once per 25 ms of cases: a patch put in and taken out again within one window
  can go unseen, and so can the reference switch flipped on and off again inside one call of the learner's code.
"""

from __future__ import annotations

import gc
import operator
import os
import sys
import sysconfig
import types
from collections.abc import Callable
from itertools import chain, repeat
from pathlib import Path
from typing import Any

__all__ = ["IntrospectionUsed", "install", "learner_dunder", "learner_frame_between", "run_learner", "tampered"]

_SYSTEM_DIRS = tuple(sorted({str(Path(p).resolve()) for k in ("stdlib", "platstdlib", "purelib", "platlib")
                             if (p := sysconfig.get_paths().get(k))}))
#: Standard modules that read a caller's frame for its module name or line, not for its locals.
_BENIGN = ("logging", "warnings", "collections", "typing", "enum", "dataclasses", "abc", "functools")
_FRAME_EVENTS = {"sys._getframe", "sys._current_frames", "sys._current_exceptions", "gc.get_objects",
                 "gc.get_referrers", "gc.get_referents", "sys.settrace", "sys.setprofile"}
_FRAME_ATTRS = {"tb_frame", "gi_frame", "cr_frame", "ag_frame"}
_SEALED_PREFIXES = ("labkit", "ascend_lab")
#: and the modules a check's seed and comparisons come from (os.urandom patched would make the drawn cases known)
_SEALED_EXTRA = ("numpy", "numpy.random", "builtins", "os", "random")
#: Methods through which a returned object decides how it compares, converts or reads: written by the learner, they
#: would make any answer "equal" (an ``__eq__`` that returns True).
_DUNDERS = ("__eq__", "__ne__", "__bool__", "__len__", "__getattr__", "__getattribute__", "__float__", "__int__",
            "__index__", "__array__", "__array_ufunc__", "__array_function__", "__iter__", "__contains__")


class IntrospectionUsed(RuntimeError):
    """The learner's code reached for the checker's frames or objects while a case ran."""


def run_learner(invoke: Callable[..., Any], fn: Any, inputs: dict[str, Any]) -> Any:
    """Run one case's call of the learner's code. Its frame marks "a case is running" on the stack: the guards and
    the audit hook look for it, so no flag the learner could flip decides what is allowed."""
    return invoke(fn, inputs)


_RUN_CODE = run_learner.__code__


_ORIGINS: dict[str, str] = {}


def _origin(filename: str) -> str:
    """"kit" (ascend_lab, labkit and the folders the package counts as its own), "system" (stdlib, site-packages,
    frozen modules) or "learner"."""
    origin = _ORIGINS.get(filename)
    if origin is None:
        from ascend_lab.ascendc import errors

        if filename.startswith("<frozen"):
            origin = "system"
        elif filename.startswith("<string"):      # exec("...") of the learner's, or a dataclass's generated method
            origin = "learner"
        elif errors.in_library(filename):
            path = filename if filename.startswith("<") else str(Path(filename).resolve())
            origin = "system" if any(path.startswith(d + os.sep) for d in _SYSTEM_DIRS) else "kit"
        else:
            origin = "learner"
        _ORIGINS[filename] = origin
    return origin


def learner_frame_between(frame: types.FrameType | None) -> types.FrameType | None:
    """The first learner frame from ``frame`` outward before :func:`run_learner`'s frame, or None (also when no case
    runs): who, inside a case, made the call that is being judged."""
    found = None
    origins, run = _ORIGINS, _RUN_CODE            # (locals: the guards walk the stack at every oracle call)
    while frame is not None:
        code = frame.f_code
        if code is run:
            return found
        if found is None and (origins.get(code.co_filename) or _origin(code.co_filename)) == "learner":
            found = frame
        frame = frame.f_back
    return None


_IN_HOOK = [False]


def _culprit(frame: types.FrameType | None, direct: bool) -> types.FrameType | None:
    """The learner frame that caused an audited event, when a case is running; None when the kit, a benign
    standard module or nothing of the learner's is behind it."""
    first = None
    while frame is not None:
        if frame.f_code is _RUN_CODE:
            return first
        if first is None:
            origin = _origin(frame.f_code.co_filename)
            if origin == "kit":
                return None
            if origin == "system":
                if direct or frame.f_globals.get("__name__", "").split(".")[0] in _BENIGN:
                    return None
            else:
                first = frame
        frame = frame.f_back
    return None


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if _IN_HOOK[0]:
        return
    if event == "object.__getattr__":
        if len(args) < 2 or args[1] not in _FRAME_ATTRS:
            return
        direct = True
    elif event in _FRAME_EVENTS or event.startswith("ctypes."):
        direct = False
    else:
        return
    _IN_HOOK[0] = True
    try:
        culprit = _culprit(sys._getframe(1), direct)
        where = f"{culprit.f_code.co_filename}, line {culprit.f_lineno}" if culprit is not None else ""
    finally:
        _IN_HOOK[0] = False
    if culprit is not None:
        what = args[1] if event == "object.__getattr__" else event
        raise IntrospectionUsed(
            f"your code reached for the checker's frames or objects ({what}, at {where}) while a case ran: during a "
            "check the checker's locals -- the cases and their expected answers, the reference -- are out of bounds. "
            "Compute the answer from the inputs your function is given")


def learner_dunder(value: Any, depth: int = 0) -> str:
    """"Class.__eq__" when ``value`` (or an item of a list, tuple, set or dict in it, three levels deep) is of a class
    whose comparison or conversion methods are the learner's code; "" otherwise. The checker compares what a
    function returns with plain values, and an object that decides its own equality would pass anything."""
    kind = type(value)
    for klass in kind.__mro__:
        for name in _DUNDERS:
            member = vars(klass).get(name)
            if member is not None and _written_by_learner(member):
                return f"{kind.__name__}.{name}"
    if depth >= 3 or kind not in (list, tuple, set, frozenset, dict):
        return ""
    items = [*value.keys(), *value.values()] if kind is dict else list(value)
    for item in items[:256]:
        found = learner_dunder(item, depth + 1)
        if found:
            return found
    return ""


# --------------------------------------------------------------------------------------------------
# seals: the kit's functions as they were
# --------------------------------------------------------------------------------------------------
#: module name -> {name or (class, member): (object, code, defaults, closure)} of what was sealed
_SEALS: dict[str, dict[Any, tuple[Any, ...]]] = {}
#: module name -> a function of the learner's that was already in it when it was sealed
_LEARNER_AT_SEAL: dict[str, str] = {}
#: module name -> the same seal laid out for :func:`_intact` (a quick look that proves a module whole or sends it to
#: :func:`_broken_seal`, which names what changed)
_QUICK: dict[str, tuple[Any, ...]] = {}


def _sealable(value: Any) -> bool:
    """Only code is sealed: functions, classes, methods, properties. Data a module rebinds as it works (a cache, a
    lazily built table) is not the kit's judgement and may change."""
    return callable(value) or isinstance(value, (property, staticmethod, classmethod))


def _state(value: Any) -> tuple[Any, ...]:
    """What must stay the same object: the value, and for a function its code, defaults and closure."""
    func = getattr(value, "__func__", value)
    if isinstance(func, types.FunctionType):
        return (value, func.__code__, func.__defaults__, func.__closure__, func.__kwdefaults__)
    return (value, None, None, None, None)


def _same(value: Any, state: tuple[Any, ...]) -> bool:
    # A bound method is a new object at every attribute access: ipykernel sets builtins.input = self.raw_input for
    # each cell JupyterLab runs (allow_stdin), so the same method of the same kernel is the same code.
    rebound = isinstance(value, types.MethodType) and value == state[0]
    if value is not state[0] and not rebound:
        return False
    if state[1] is None:
        return True
    func = getattr(value, "__func__", value)
    return (func.__code__ is state[1] and func.__defaults__ is state[2] and func.__closure__ is state[3]
            and func.__kwdefaults__ is state[4])


def _written_by_learner(value: Any) -> bool:
    """A Python function (or method, property) whose code the learner wrote. (Compiled functions -- Cython's, C's --
    are never the learner's, whatever relative file name their code object carries.)"""
    func = getattr(value, "__func__", value)
    func = getattr(func, "fget", func)
    if not isinstance(func, types.FunctionType) or func.__code__.co_filename.startswith("<string"):
        return False           # (dataclasses and namedtuples generate the kit's own methods from "<string>")
    return _origin(func.__code__.co_filename) == "learner"


def _seal(module: types.ModuleType) -> None:
    entries: dict[Any, tuple[Any, ...]] = {}
    for name, value in list(vars(module).items()):
        if not _sealable(value):
            continue
        entries[name] = _state(value)
        if _written_by_learner(value):
            _LEARNER_AT_SEAL.setdefault(module.__name__, name)
        if isinstance(value, type) and value.__module__ == module.__name__:
            for attr, member in list(vars(value).items()):
                if _sealable(member):
                    entries[(name, attr)] = _state(member)
                    if _written_by_learner(member):
                        _LEARNER_AT_SEAL.setdefault(module.__name__, f"{name}.{attr}")
    _SEALS[module.__name__] = entries
    _QUICK[module.__name__] = _quick_layout(entries)


def _quick_layout(entries: dict[Any, tuple[Any, ...]]) -> tuple[Any, ...]:
    """A seal's entries as flat tuples, for :func:`_intact`: the names and their objects; per class, its members and
    theirs; the functions, what ``getattr(value, "__func__", value)`` gave for each, and each one's referents now
    (``gc.get_referents``: its code, defaults, keyword defaults and closure among them, in a fixed order); and apart,
    the entries :func:`_same` must judge itself (a bound method, equal when rebound)."""
    names, objs, members, slow, values, funcs = [], [], {}, [], [], []
    for key, state in entries.items():
        if isinstance(state[0], types.MethodType):
            slow.append((key, state))
            continue
        if isinstance(key, tuple):
            owner_name, attr = key
            members.setdefault(owner_name, ([], []))
            members[owner_name][0].append(attr)
            members[owner_name][1].append(state[0])
        else:
            names.append(key)
            objs.append(state[0])
        if state[1] is not None:
            values.append(state[0])
            funcs.append(getattr(state[0], "__func__", state[0]))
    classes = tuple((entries[name][0], tuple(attrs), tuple(values)) for name, (attrs, values) in members.items())
    referents = tuple(tuple(gc.get_referents(func)) for func in funcs)
    return (tuple(names), tuple(objs), classes, tuple(values), tuple(funcs), referents,
            sum(map(len, referents)) + len(referents), tuple(slow))


def _intact(module: types.ModuleType, layout: tuple[Any, ...], _all: Any = all, _map: Any = map, _len: Any = len,
            _vars: Any = vars, _getattr: Any = getattr, _zip: Any = zip, _is: Any = operator.is_,
            _repeat: Any = repeat, _flat: Any = chain.from_iterable, _referents: Any = gc.get_referents) -> bool:
    """True when every entry of the module's seal is as it was sealed -- what :func:`_broken_seal` asks entry by entry
    with :func:`_same`, asked in bulk (a look at the kit and numpy runs after every 25 ms of cases): each name and class
    member is the sealed object, and each function refers to the very objects it did when sealed (its code, defaults,
    keyword defaults and closure among them), read in one ``gc.get_referents`` call -- ``__code__`` and
    ``__defaults__`` are audited reads, three hook calls per function. A fresh marker object between the functions
    keeps each function's referents apart. False means "look closer": :func:`_broken_seal` decides and names what
    changed. (The builtins it uses are bound here, in a tuple of defaults: a learner's ``builtins.all`` does not make
    every look pass; tampered() passes only the first two arguments.)"""
    names, objs, classes, values, funcs, referents, count, slow = layout
    namespace = _vars(module)
    if not _all(_map(_is, _map(namespace.get, names), objs)):
        return False
    for owner, attrs, members in classes:       # the class itself is one of the names, checked above
        if not _all(_map(_is, _map(_vars(owner).get, attrs), members)):
            return False
    if not _all(_map(_is, _map(_getattr, values, _repeat("__func__"), values), funcs)):
        return False
    if funcs:
        mark = (object(),)                      # its one referent exists only during this look
        live = _referents(*_flat(_zip(funcs, _repeat(mark))))
        if _len(live) != count or not _all(_map(_is, live, _flat(_flat(_zip(referents, _repeat(mark)))))):
            return False
    for key, state in slow:
        if not _same(_sealed_value(namespace, key), state):
            return False
    return True


def _sealed_value(namespace: dict[str, Any], key: str | tuple[str, str]) -> Any:
    """What a sealed key names now: a module global, or (class, member) a class's own member."""
    if isinstance(key, tuple):
        owner = namespace.get(key[0])
        return vars(owner).get(key[1]) if isinstance(owner, type) else None
    return namespace.get(key)


def _sealed_modules() -> list[types.ModuleType]:
    return [m for name, m in list(sys.modules.items()) if isinstance(m, types.ModuleType)
            and (name.split(".")[0] in _SEALED_PREFIXES or name in _SEALED_EXTRA)]


def _broken_seal(module: types.ModuleType, entries: dict[Any, tuple[Any, ...]]) -> str:
    namespace = vars(module)
    for key, state in entries.items():
        value = _sealed_value(namespace, key)
        if not _same(value, state):
            name = key if isinstance(key, str) else ".".join(key)
            return _tamper_text(module.__name__, name, value)
    return ""


def tampered(judges_only: bool = False) -> str:
    """"" when every sealed module is as it was sealed, else a sentence naming what changed. A module seen for the
    first time is sealed now (the import finder seals the kit's and the package's modules as they load).
    ``judges_only``: only the modules that judge (the kit, numpy's namespace, builtins) -- the quick look after
    every case; the whole package is looked at before the first case and before a passing report."""
    for module in _sealed_modules():
        if judges_only and module.__name__.startswith("ascend_lab"):
            continue
        entries = _SEALS.get(module.__name__)
        if entries is None:
            _seal(module)
            continue
        if _intact(module, _QUICK[module.__name__]):
            continue
        broken = _broken_seal(module, entries)
        if broken:
            return broken
        _QUICK[module.__name__] = _quick_layout(entries)    # whole: a referent created since (a lazy __dict__)
    for module, name in _LEARNER_AT_SEAL.items():
        return _tamper_text(module, name, vars(sys.modules[module]).get(name.split(".")[0]))
    return ""


def _tamper_text(module: str, name: str, value: Any) -> str:
    what = "was removed" if value is None else "is not the kit's own any more"
    func = getattr(getattr(value, "__func__", value), "fget", getattr(value, "__func__", value))
    code = getattr(func, "__code__", None)
    origin = f" (it now runs code from {code.co_filename})" if isinstance(code, types.CodeType) else ""
    return (f"{module}.{name} {what}{origin}: the checker and the simulator were changed before or during this "
            "check, so it cannot judge your code. Restart the kernel, run the lab's cells and check your own code "
            "without patching the kit")


#: Called with each module of the kit and the package once it has run, before it is sealed (the checker wraps every
#: lab's ``check`` here, so that a changed kit is refused before the lab builds its cases with it).
ON_IMPORT: list[Callable[[types.ModuleType], None]] = []


class _SealOnImport:
    """A ``sys.meta_path`` finder that seals every module of the kit and the package the moment it has been
    executed, before code of the learner's can touch it."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name.split(".")[0] not in _SEALED_PREFIXES:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        run = getattr(loader, "exec_module", None)
        if run is None:
            return spec

        def exec_and_seal(module: types.ModuleType) -> None:
            run(module)
            for hook in ON_IMPORT:
                hook(module)
            if module.__name__ not in _SEALS:
                _seal(module)

        try:
            loader.exec_module = exec_and_seal
        except (AttributeError, TypeError):          # a loader that will not take it: sealed at the first check
            pass
        return spec


_INSTALLED = [False]


def install() -> None:
    """Add the audit hook and the sealing finder (once per process) and seal the modules loaded so far."""
    if not _INSTALLED[0]:
        _INSTALLED[0] = True
        sys.addaudithook(_hook)
        sys.meta_path.insert(0, _SealOnImport())
    tampered()
