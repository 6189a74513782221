"""The C preprocessor of the front end: includes, guards, ``#define`` and ``#if``, line for line.

Each file is preprocessed into a text with **the same number of lines** as the file (a directive becomes an empty
line, a macro call spanning lines leaves empty lines behind its expansion), so that every line the parser sees is
the line of the file the user wrote: the line map back to the C++ is the identity, per file.

Files are handed on in include order (an included header before the file including it), each once (include
guards and ``#pragma once`` work as in C). ``kernel_operator.h``, ``kernel_tiling/kernel_tiling.h`` and the other
CANN headers real kernels include are provided by the simulator (:data:`BUILTIN_HEADERS`): they define the AscendC
qualifiers (``__aicore__``, ``__global__``, ``__gm__`` vanish; ``GM_ADDR`` is ``uint8_t*``) and the tiling-data
macros. ``ASCENDC_TPL_ARGS_DECL``/``ASCENDC_TPL_SEL`` (a kernel's ``*_tiling_key.h``) are a macro language, not C++:
they are read here (:attr:`Preprocessed.template_args`) and removed from the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from .errors import KernelCompileError, Where

__all__ = ["BUILTIN_HEADERS", "Macro", "Preprocessed", "SourceFile", "Unit", "preprocess"]

_QUALIFIERS = """
#define __aicore__
#define __global__
#define __gm__
#define __inline__ inline
#define __attribute__(x)
#define GM_ADDR uint8_t*
"""

_TILING = """
#define BEGIN_TILING_DATA_DEF(name) struct name {
#define TILING_DATA_FIELD_DEF(type, name) type name
#define TILING_DATA_FIELD_DEF_ARR(type, n, name) type name[n]
#define TILING_DATA_FIELD_DEF_STRUCT(type, name) type name
#define END_TILING_DATA_DEF }
#define REGISTER_TILING_DATA_CLASS(op, cls)
"""

#: Headers the simulator provides in place of CANN's (what they define is what a kernel may rely on).
BUILTIN_HEADERS: dict[str, str] = {
    "kernel_operator.h": _QUALIFIERS,
    "kernel_tiling/kernel_tiling.h": _QUALIFIERS + _TILING,
    "kernel_tiling.h": _QUALIFIERS + _TILING,
    "register/tilingdata_base.h": _TILING,
    "ascendc/host_api/tiling/template_argument.h": "",
    "tiling/template_argument.h": "",
    "kernel_tpipe_impl.h": "",
    "kernel_log.h": "",
    "lib/math/kernel_operator_math_intf.h": "",
    "op_kernel/platform_util.h": "",
}

_TOKEN = re.compile(r"""(?P<str>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')|(?P<num>\.?\d(?:[eEpP][+-]|[\w.])*)"""
                    r"""|(?P<id>[A-Za-z_]\w*)|(?P<ws>\s+)|(?P<other>.)""", re.S)
_DIRECTIVE = re.compile(r"^\s*#\s*(\w*)(.*)$", re.S)
_TPL_MACROS = ("ASCENDC_TPL_ARGS_DECL", "ASCENDC_TPL_SEL")


@dataclass
class Macro:
    name: str
    body: str
    params: list[str] | None = None       # None: object-like
    variadic: bool = False


@dataclass
class SourceFile:
    """A C++ source: ``name`` is what messages say (a path, or ``<ascendc cell 3>``), ``text`` its contents."""
    name: str
    text: str
    directory: Path | None = None          # where its ``#include "..."`` look first
    builtin: bool = False                  # a header the simulator provides (macros only: no code of its own)


@dataclass
class Unit:
    """One preprocessed file: same line count as ``source.text``."""
    source: SourceFile
    text: str


@dataclass
class Preprocessed:
    units: list[Unit]
    macros: dict[str, Macro]
    #: ``ASCENDC_TPL_ARGS_DECL`` of the kernel's tiling key: template parameter name -> its declared values.
    template_args: dict[str, list[int]] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)


def _blank_comments(text: str) -> str:
    """Comments become spaces (newlines kept), string literals are left alone."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == "/" and i + 1 < n and text[i + 1] == "/":
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c == "/" and i + 1 < n and text[i + 1] == "*":
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


class _State:
    def __init__(self, defines: dict[str, str], include_dirs: list[Path], sources: dict[str, str]):
        self.macros: dict[str, Macro] = {}
        for k, v in defines.items():
            self.macros[k] = Macro(k, str(v))
        self.include_dirs = include_dirs
        self.sources = sources                 # virtual files by name (a kernel given as text with its headers)
        self.done: set[str] = set()            # files preprocessed (a header is included once per kernel)
        self.pragma_once: set[str] = set()
        self.units: list[Unit] = []
        self.template_args: dict[str, list[int]] = {}
        self.files: list[str] = []

    # ---- macro expansion ----------------------------------------------------------------------------
    def expand(self, text: str, where: Where, disabled: frozenset[str] = frozenset()) -> str:
        out: list[str] = []
        pos, n = 0, len(text)
        while pos < n:
            m = _TOKEN.match(text, pos)
            assert m is not None
            pos = m.end()
            name = m.group("id")
            macro = self.macros.get(name) if name else None
            if macro is None or name in disabled:
                out.append(m.group(0))
                continue
            if macro.params is None:
                out.append(self.expand(macro.body, where, disabled | {name}))
                continue
            j = pos
            while j < n and text[j] in " \t\n\r":
                j += 1
            if j >= n or text[j] != "(":
                out.append(m.group(0))
                continue
            args, end = self._args(text, j, where, name)
            newlines = text.count("\n", pos, end)
            out.append(self.expand(self._substitute(macro, args, where, disabled), where, disabled | {name}))
            out.append("\n" * newlines)
            pos = end
        return "".join(out)

    def _args(self, text: str, open_at: int, where: Where, name: str) -> tuple[list[str], int]:
        depth, i, start, args = 0, open_at, open_at + 1, []
        while i < len(text):
            c = text[i]
            if c in "\"'":
                m = _TOKEN.match(text, i)
                i = m.end() if m else i + 1
                continue
            if c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
                if depth == 0:
                    args.append(text[start:i])
                    return ([] if len(args) == 1 and not args[0].strip() else args), i + 1
            elif c == "," and depth == 1:
                args.append(text[start:i])
                start = i + 1
            i += 1
        raise KernelCompileError(f"unterminated call of the macro '{name}'", where,
                                 "close the macro's argument list with ')'")

    def _substitute(self, macro: Macro, args: list[str], where: Where, disabled: frozenset[str]) -> str:
        params = macro.params or []
        if macro.variadic:
            fixed = len(params) - 1
            if len(args) < fixed:
                raise KernelCompileError(f"the macro '{macro.name}' takes at least {fixed} arguments, "
                                         f"got {len(args)}", where)
            args = args[:fixed] + [",".join(args[fixed:])]
        elif len(args) != len(params) and not (not params and not args):
            raise KernelCompileError(f"the macro '{macro.name}' takes {len(params)} arguments, got {len(args)}",
                                     where)
        raw = {p: a.strip() for p, a in zip(params, args, strict=False)}
        body = macro.body
        body = re.sub(r"\s*##\s*", "\x00", body)                          # token pasting: mark, join after
        body = re.sub(r"#\s*([A-Za-z_]\w*)", lambda m: ('"' + raw[m.group(1)].replace('"', '\\"') + '"')
                      if m.group(1) in raw else m.group(0), body)
        out, pos = [], 0
        while pos < len(body):
            m = _TOKEN.match(body, pos)
            assert m is not None
            pos = m.end()
            tok = m.group("id")
            if tok in raw:
                pasted = (out and out[-1].endswith("\x00")) or body[pos:pos + 1] == "\x00"
                out.append(raw[tok] if pasted else self.expand(raw[tok], where, disabled))
            else:
                out.append(m.group(0))
        return "".join(out).replace("\x00", "")

    # ---- #if ----------------------------------------------------------------------------------------
    def condition(self, expr: str, where: Where) -> bool:
        expr = re.sub(r"defined\s*\(\s*([A-Za-z_]\w*)\s*\)|defined\s+([A-Za-z_]\w*)",
                      lambda m: "1" if (m.group(1) or m.group(2)) in self.macros else "0", expr)
        expr = self.expand(expr, where)
        expr = re.sub(r"\b(\d+)[uUlL]+\b", r"\1", expr)
        expr = re.sub(r"\b[A-Za-z_]\w*\b", "0", expr)                # C: an unknown name in #if is 0
        expr = expr.replace("&&", " and ").replace("||", " or ")
        expr = re.sub(r"!(?!=)", " not ", expr).replace("/", "//")
        try:
            return bool(eval(expr, {"__builtins__": {}}, {}))      # only numbers and operators are left
        except Exception:
            raise KernelCompileError(f"cannot evaluate the #if condition '{expr.strip()}'", where,
                                     "the front end evaluates #if on integers, defined(), &&, ||, ! and "
                                     "comparisons") from None


def _read_tpl_decl(text: str, state: _State, where: Where) -> None:
    """``ASCENDC_TPL_ARGS_DECL(Op, ASCENDC_TPL_UINT_DECL(schMode, 8, ASCENDC_TPL_UI_LIST, 0, 1, 2), ...)``: the
    values each template parameter of the entry is declared with."""
    for m in re.finditer(r"ASCENDC_TPL_(?:UINT|BOOL|DTYPE|FORMAT|DATATYPE)_DECL\s*\(", text):
        args, _ = state._args(text, m.end() - 1, where, "ASCENDC_TPL_*_DECL")
        args = [state.expand(a, where).strip() for a in args]
        if not args:
            continue
        name = args[0]
        if "DTYPE" in m.group(0) or "DATATYPE" in m.group(0):      # C_DT_FLOAT, C_DT_FLOAT16 ...: element types
            state.template_args[name] = [a for a in args[1:] if a.startswith("C_DT_")]
            continue
        if "BOOL" in m.group(0):
            values = [int(a, 0) for a in args[1:] if re.fullmatch(r"\d+", a)] or [0, 1]
        else:
            kind = args[2] if len(args) > 2 else "ASCENDC_TPL_UI_LIST"
            nums = [int(re.sub(r"[uUlL]+$", "", a), 0) for a in args[3:] if re.fullmatch(r"\d+[uUlL]*", a)]
            if kind.endswith("RANGE") and nums:
                count, values, rest = nums[0], [], nums[1:]
                for k in range(count):
                    lo, hi = rest[2 * k], rest[2 * k + 1]
                    values.extend(range(lo, hi + 1))
            else:
                values = nums
        state.template_args[name] = values


def _blank_tpl_macros(text: str, state: _State, source: SourceFile) -> str:
    """Read and remove the tiling-key macro language, keeping the line count."""
    for name in _TPL_MACROS:
        while True:
            m = re.search(r"\b" + name + r"\s*\(", text)
            if not m:
                break
            line = text.count("\n", 0, m.start()) + 1
            where = Where(source.name, line, m.start() - text.rfind("\n", 0, m.start()), len(name))
            _, end = state._args(text, m.end() - 1, where, name)
            if end < len(text) and text[end] == ";":
                end += 1
            if name == "ASCENDC_TPL_ARGS_DECL":
                _read_tpl_decl(text[m.start():end], state, where)
            text = text[:m.start()] + re.sub(r"[^\n]", " ", text[m.start():end]) + text[end:]
    return text


def _resolve(state: _State, name: str, current: SourceFile, where: Where, angled: bool) -> SourceFile | None:
    if name in BUILTIN_HEADERS:
        return SourceFile(f"<{name}>", BUILTIN_HEADERS[name], builtin=True)
    dirs = ([current.directory] if current.directory is not None and not angled else []) + state.include_dirs
    for d in dirs:
        p = (d / name)
        if p.is_file():
            return SourceFile(str(p.resolve()), p.read_text(encoding="utf-8"), p.resolve().parent)
    for key in (name, str(Path(current.name).parent / name) if not current.name.startswith("<") else name):
        if key in state.sources:
            return SourceFile(key, state.sources[key], None)
    if angled:
        return None                # a system header (<cstdint>, <type_traits>): nothing a kernel needs from it
    raise KernelCompileError(f"cannot find the header \"{name}\"", where,
                             "a kernel may include its own headers (relative to the including file) and "
                             f"the CANN headers the simulator provides: {', '.join(sorted(BUILTIN_HEADERS))}")


def _join_continued(lines: list[str]) -> list[str]:
    """Lines ending in a backslash joined to the next, keeping the count: the joined line first, empty lines after
    it (so that every later line keeps its number)."""
    i = 0
    while i < len(lines):
        k = i
        while lines[k].endswith("\\") and k + 1 < len(lines):
            lines[i] = lines[i][:-1] + " " + lines[k + 1]
            lines[k + 1] = "\x01"
            k += 1
        i = k + 1
    return [("" if ln == "\x01" else ln) for ln in lines]


class _Output:
    """One file's preprocessed lines, as many as the file has: ordinary lines gather into a block, macro-expanded
    at the next directive (a macro call may span lines); a directive becomes an empty line."""

    def __init__(self, state: _State, source: SourceFile):
        self.state, self.source = state, source
        self.lines: list[str] = []
        self.block: list[str] = []
        self.block_start = 1

    def add(self, idx: int, line: str) -> None:
        if not self.block:
            self.block_start = idx
        self.block.append(line)

    def flush(self) -> None:
        """Expand the gathered block into as many lines as it had (extra lines of an expansion join its last)."""
        block = self.block
        if not block:
            return
        joined = "\n".join(block)
        where = Where(self.source.name, self.block_start, 1)
        joined = _blank_tpl_macros(joined, self.state, SourceFile(self.source.name, joined))
        got = self.state.expand(joined, where).split("\n")
        got += [""] * (len(block) - len(got))
        out = self.lines
        out.extend(got[:len(block)] if len(got) > len(block) else got)
        if len(got) > len(block):       # an expansion added lines: keep them on the block's last line
            out[-1] = " ".join([out[-1], *got[len(block):]])
        self.block = []


#: The directives that open, switch or close a conditional region (handled even inside an inactive one).
_CONDITIONALS = ("if", "ifdef", "ifndef", "elif", "else", "endif")


def _active(stack: list[list[bool]]) -> bool:
    return all(s[0] for s in stack)


def _conditional(state: _State, stack: list[list[bool]], word: str, rest: str, where: Where) -> None:
    """``#if``/``#ifdef``/``#ifndef``/``#elif``/``#else``/``#endif`` on the stack of
    [this branch active, a branch was taken, parent active] -- one entry per open ``#if``."""
    if word in ("if", "ifdef", "ifndef"):
        parent = _active(stack)
        if word == "if":
            cond = parent and state.condition(rest, where)
        else:
            name = rest.split()[0] if rest.split() else ""
            cond = parent and ((name in state.macros) == (word == "ifdef"))
        stack.append([cond, cond, parent])
    elif word in ("elif", "else"):
        if not stack:
            raise KernelCompileError(f"#{word} without #if", where)
        top = stack[-1]
        if top[1] or not top[2]:
            top[0] = False
        else:
            top[0] = True if word == "else" else state.condition(rest, where)
            top[1] = top[0]
    else:
        if not stack:
            raise KernelCompileError("#endif without #if", where)
        stack.pop()


def _define(state: _State, rest: str, where: Where) -> None:
    """``#define NAME body`` or ``#define NAME(params) body`` (``...`` is ``__VA_ARGS__``)."""
    dm = re.match(r"([A-Za-z_]\w*)(\(([^)]*)\))?\s*(.*)$", rest, re.S)
    if not dm:
        raise KernelCompileError("#define needs a macro name", where)
    params = None
    variadic = False
    if dm.group(2) is not None:
        params = [p.strip() for p in dm.group(3).split(",") if p.strip()]
        if params and params[-1] == "...":
            params[-1] = "__VA_ARGS__"
            variadic = True
    state.macros[dm.group(1)] = Macro(dm.group(1), dm.group(4).strip(), params, variadic)


def _include(state: _State, rest: str, source: SourceFile, where: Where) -> None:
    """``#include "file"`` or ``<file>``: the file preprocessed in turn, once per preprocessing."""
    im = re.match(r'"([^"]+)"|<([^>]+)>', rest)
    if not im:
        raise KernelCompileError("#include needs \"file\" or <file>", where)
    name = im.group(1) or im.group(2)
    inc = _resolve(state, name, source, where, angled=im.group(2) is not None)
    if inc is not None and inc.name not in state.done:
        state.done.add(inc.name)
        _process(state, inc)


def _directive(state: _State, source: SourceFile, word: str, rest: str, where: Where) -> None:
    """One directive of an active region, other than the conditionals."""
    if word == "define":
        _define(state, rest, where)
    elif word == "undef":
        state.macros.pop(rest.split()[0] if rest else "", None)
    elif word == "include":
        _include(state, rest, source, where)
    elif word == "pragma":
        if rest.split()[:1] == ["once"]:
            state.pragma_once.add(source.name)
    elif word == "error":
        raise KernelCompileError(f"#error {rest}", where)
    elif word not in ("line", "warning", ""):
        raise KernelCompileError(f"unknown preprocessor directive '#{word}'", where)


def _process(state: _State, source: SourceFile) -> None:
    """Preprocess one file into ``state.units`` (its includes first, as they are met), line for line."""
    if source.name in state.pragma_once:
        return
    state.files.append(source.name)
    lines = _join_continued(_blank_comments(source.text.replace("\r\n", "\n")).split("\n"))
    out = _Output(state, source)
    stack: list[list[bool]] = []            # per #if: [this branch active, a branch was taken, parent active]
    for idx, line in enumerate(lines, start=1):
        m = _DIRECTIVE.match(line)
        if not m:
            out.add(idx, line if _active(stack) else "")
            continue
        out.flush()
        out.lines.append("")
        word, rest = m.group(1), m.group(2).strip()
        where = Where(source.name, idx, line.find("#") + 1, len(word) + 1)
        if word in _CONDITIONALS:
            _conditional(state, stack, word, rest, where)
        elif _active(stack):
            _directive(state, source, word, rest, where)
    out.flush()
    if stack:
        raise KernelCompileError("#if without #endif", Where(source.name, len(lines), 1))
    if not source.builtin:
        state.units.append(Unit(source, "\n".join(out.lines)))


def preprocess(main: SourceFile, defines: dict[str, str] | None = None, include_dirs: list[Path] | None = None,
               sources: dict[str, str] | None = None) -> Preprocessed:
    """Preprocess ``main`` and everything it includes; ``defines`` are ``-D`` macros (``DTYPE_X``), ``sources``
    headers given as text by name (a kernel compiled from strings)."""
    state = _State(dict(defines or {}), list(include_dirs or []), dict(sources or {}))
    state.done.add(main.name)
    _process(state, main)
    return Preprocessed(state.units, state.macros, state.template_args, state.files)
