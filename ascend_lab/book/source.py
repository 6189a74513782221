"""Show the simulator's own source in a chapter, so the code a reader sees is the code that ran.

A chapter that copied a kernel into its prose would drift from the package; ``show_source`` prints the
current definition instead, as a highlighted Python block. ``show_cxx`` does the same for the C++ kernel files
(the file's own line numbers, one definition or a line range), with the translated Python the simulator executes
one click away; ``cxx_line`` finds a line's number for the prose.
"""

from __future__ import annotations

import html
import inspect
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def source_markdown(*objs: Any) -> str:
    """The source of each object (function, class, method, module), joined into one fenced Python block.

    The fence has four backticks so a docstring holding a three-backtick example cannot end it early."""
    if not objs:
        raise TypeError("source_markdown() needs at least one function, class or module")
    src = "\n".join(inspect.getsource(o) for o in objs)
    return f"````python\n{src}````"


def show_source(*objs: Any) -> None:
    """Display the objects' current source as a highlighted block (a notebook's Markdown output)."""
    # deferred: IPython is the notebook's display layer; imported here so `import ascend_lab.book` works without it
    from IPython.display import Markdown, display
    display(Markdown(source_markdown(*objs)))


# --- C++ kernel source ------------------------------------------------------------------------------------------
# The book's AscendC kernels are C++ files compiled by ``ascendc.cxx``: a chapter shows the file itself, with the
# file's own line numbers, so a line the prose names ("line 129 calls Muls") is the line the reader sees.

#: AscendC qualifiers that tree-sitter-cpp does not know; blanked (same length) before a symbol is looked up.
_QUALIFIERS = re.compile(r"\b(?:__aicore__|__global__|__gm__|__inline__)\b")
_DEF_TYPES = ("function_definition", "class_specifier", "struct_specifier")


@dataclass(frozen=True)
class CxxListing:
    """Lines ``first``..``last`` (1-based, inclusive) of a C++ file, ready to display.

    ``name`` is the file as the page names it (relative to the package's folder, never a machine path), ``code``
    the lines' text, ``symbol`` what was asked for (``None`` for a whole file or a line range), ``python`` the
    translated Python of those lines for one instantiation (``None`` when not asked): what the simulator runs."""

    name: str
    first: int
    last: int
    code: str
    symbol: str | None = None
    python: str | None = None
    python_args: str = ""

    def caption(self) -> str:
        what = f"<code>{html.escape(self.symbol)}</code> in " if self.symbol else ""
        span = f"lines {self.first}–{self.last}" if self.last > self.first else f"line {self.first}"
        return f"{what}<code>{html.escape(self.name)}</code>, {span}"

    def _repr_html_(self) -> str:
        # deferred: pygments colours a listing only when a notebook shows it as HTML
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import CppLexer, PythonLexer
        # classes, not inline styles: the site's Pygments stylesheet (light and dark) colours them, as it does
        # every code cell; inline line numbers are plain spans the theme keeps unselectable
        cpp = highlight(self.code, CppLexer(), HtmlFormatter(linenos="inline", linenostart=self.first,
                                                             cssclass="highlight"))
        out = [f'<div class="cxx-listing"><p class="cxx-listing-caption">{self.caption()}</p>',
               f'<div class="highlight-cpp notranslate">{cpp}</div>']
        if self.python is not None:
            py = highlight(self.python, PythonLexer(), HtmlFormatter(cssclass="highlight"))
            args = f" ({html.escape(self.python_args)})" if self.python_args else ""
            out.append(f"<details><summary>What the simulator executes{args}</summary>"
                       f'<div class="highlight-python notranslate">{py}</div></details>')
        out.append("</div>")
        return "".join(out)

    def __repr__(self) -> str:
        width = len(str(self.last))
        body = "\n".join(f"{n:>{width}}  {t}" for n, t in enumerate(self.code.splitlines(), self.first))
        tail = f"\n\n# What the simulator executes{self.python_args and f' ({self.python_args})'}:\n{self.python}" \
            if self.python is not None else ""
        return f"// {self.name}, lines {self.first}-{self.last}\n{body}{tail}"


def _is_kernel(obj: Any) -> bool:
    return hasattr(obj, "python_source") and hasattr(obj, "instance")


def _package_parent() -> Path:
    return Path(__file__).resolve().parents[2]          # the folder holding ascend_lab/


def _display_name(file: str) -> str:
    """A file as a page may print it: relative to the package's folder, else its bare name (no machine path)."""
    if file.startswith("<"):
        return file
    path = Path(file)
    try:
        return path.resolve().relative_to(_package_parent()).as_posix()
    except ValueError:
        return path.name


def _resolve(path: str | os.PathLike[str]) -> Path:
    p = Path(path)
    for cand in (p, _package_parent() / p):
        if cand.is_file():
            return cand.resolve()
    raise FileNotFoundError(f"no C++ file {os.fspath(path)!r} (give a path, or one relative to the folder "
                            "holding ascend_lab/)")


def _kernel_files(kernel: Any) -> list[tuple[str, str]]:
    """(file name, text) of each C++ file a compiled kernel is made of, the compiled file first."""
    files = [(s.name, s.text) for s in kernel.sources]
    main = kernel.main
    return sorted(files, key=lambda f: f[0] != main)


def _norm(name: str) -> str:
    return re.sub(r"\s+", "", name)


def _strip_targs(name: str) -> str:
    """``K<T>::Init`` -> ``K::Init`` (template arguments, nested ones too, dropped)."""
    prev = None
    while prev != name:
        prev, name = name, re.sub(r"<[^<>]*>", "", name)
    return name


def _definitions(text: str) -> list[tuple[str, int, int]]:
    """(name, first line, last line) of every function, class and struct definition in C++ text.

    A definition's lines include its ``template <...>`` head and an ``extern "C"`` around it."""
    from tree_sitter import Parser  # deferred: the C++ parser loads only when a C++ listing is cut

    from ..ascendc.cxx.syntax import LANGUAGE  # deferred: tree-sitter loads only for a C++ listing
    blanked = _QUALIFIERS.sub(lambda m: " " * len(m.group()), text)
    root = Parser(LANGUAGE).parse(blanked.encode("utf-8")).root_node
    found: list[tuple[str, int, int]] = []
    stack: list[tuple[Any, str]] = [(root, "")]          # (node, the enclosing class's name + "::")
    while stack:
        node, scope = stack.pop()
        inner = scope
        if node.type in ("class_specifier", "struct_specifier") and node.child_by_field_name("name") is not None:
            inner = scope + node.child_by_field_name("name").text.decode("utf-8") + "::"
        stack.extend((c, inner) for c in reversed(node.named_children))
        if node.type not in _DEF_TYPES:
            continue
        if node.type == "function_definition":
            decl = node.child_by_field_name("declarator")
            while decl is not None and decl.type not in ("function_declarator",):
                decl = decl.child_by_field_name("declarator")
            name_node = decl.child_by_field_name("declarator") if decl is not None else None
        else:
            if node.child_by_field_name("body") is None:
                continue                                   # a forward declaration or an elaborated type
            name_node = node.child_by_field_name("name")
        if name_node is None:
            continue
        outer = node
        while outer.parent is not None and outer.parent.type in ("template_declaration", "linkage_specification"):
            outer = outer.parent
        name = _norm(name_node.text.decode("utf-8"))
        if node.type == "function_definition" and "::" not in name:
            name = scope + name                            # a method defined in its class: K::K, K::Process
        found.append((name, outer.start_point[0] + 1, outer.end_point[0] + 1))
    return found


def _find_symbol(files: list[tuple[str, str]], symbol: str) -> tuple[str, str, int, int, str]:
    """The one definition ``symbol`` names among ``files``: (file, text, first, last, its name as defined).

    ``symbol`` is matched as written (``HardSigmoidGrad<T>::Init``), without its template arguments
    (``HardSigmoidGrad::Init``), or, when it has no ``::``, as a function's or class's own name (``Compute``)."""
    want = _norm(symbol)
    exact, by_last, seen = [], [], []
    for file, text in files:
        for name, first, last in _definitions(text):
            seen.append(name)
            bare = _strip_targs(name)
            if want in (name, bare) or _strip_targs(want) == bare:
                exact.append((file, text, first, last, name))
            elif "::" not in want and bare.rsplit("::", 1)[-1] == _strip_targs(want):
                by_last.append((file, text, first, last, name))
    hits = exact or by_last                                # a class by its name before its constructor
    if not hits:
        raise LookupError(f"no definition of {symbol!r} in {', '.join(_display_name(f) for f, _ in files)}; "
                          f"it defines {', '.join(dict.fromkeys(seen)) or 'nothing'}")
    if len({(h[0], h[2]) for h in hits}) > 1:
        where = ", ".join(f"{h[4]} ({_display_name(h[0])}:{h[2]})" for h in hits)
        raise LookupError(f"{symbol!r} names several definitions: {where}; qualify it (K<T>::Init)")
    return hits[0]


def _source(source: Any) -> tuple[Any, list[tuple[str, str]]]:
    """(the kernel or None, the files to search) for a compiled kernel or a path."""
    if _is_kernel(source):
        return source, _kernel_files(source)
    path = _resolve(source)
    return None, [(str(path), path.read_text(encoding="utf-8"))]


def cxx_listing(source: Any, symbol: str | None = None, lines: tuple[int, int] | None = None, *,
                python: Mapping[str, Any] | None = None, kernel: Any = None) -> CxxListing:
    """Lines of a C++ kernel file with their own line numbers (see :func:`show_cxx`)."""
    found_kernel, files = _source(source)
    kernel = kernel if kernel is not None else found_kernel
    if symbol is not None:
        file, text, first, last, symbol = _find_symbol(files, symbol)
    else:
        file, text = files[0]
        first, last = 1, len(text.splitlines())
    all_lines = text.splitlines()
    if lines is not None:
        lo, hi = lines
        if not (first <= lo <= hi <= last):
            raise ValueError(f"lines {lo}-{hi} are not inside {first}-{last} of {_display_name(file)}")
        first, last = lo, hi
    code = "\n".join(all_lines[first - 1:last]) + "\n"
    py = None
    args = ""
    if python is not None:
        if kernel is None:
            if not file.endswith(".cpp"):
                raise TypeError(f"{_display_name(file)} is a header: say which kernel includes it (kernel=...)")
            from ..ascendc import cxx  # deferred: the front end loads only for a C++ listing
            kernel = cxx.compile(file)
        py = translation_text(kernel, file=file, lines=(first, last), **python)
        args = ", ".join(f"{k}={v!r}" for k, v in python.items())
    return CxxListing(_display_name(file), first, last, code, symbol, py, args)


def translation_text(kernel: Any, *, file: str | None = None, lines: tuple[int, int] | None = None,
                     **template: Any) -> str:
    """The translated Python of one instantiation (``template``: its template arguments and knobs), each line
    tagged with the C++ line it came from; only the functions of ``file`` that overlap ``lines`` when given."""
    inst = kernel.instance(**template)
    if file is None:
        return inst.python_source()

    def wanted(c: Any) -> bool:
        if c.file != file:
            return False
        if lines is None:
            return True
        nums = [ln for _, ln in c.lines if ln]
        return bool(nums) and min(nums) <= lines[1] and max(nums) >= lines[0]

    picked = [c for c in inst.chunks if wanted(c)]
    if not picked:
        where = f"{_display_name(file)}" + (f" lines {lines[0]}-{lines[1]}" if lines else "")
        raise LookupError(f"no translated code comes from {where} in this instantiation ({template})")
    classes = {c.name: c for c in inst.chunks if c.kind == "class"}
    rows: list[tuple[str, str, int]] = []
    opened: str | None = None
    for c in picked:
        if c.kind == "method":
            if opened != c.owner:
                owner = classes.get(c.owner)
                head = owner.lines[0] if owner else (f"class {c.owner}:", 0)
                rows.append((head[0], owner.file if owner else c.file, head[1]))
                opened = c.owner
            for i, (text, ln) in enumerate(c.lines):
                text = text.replace(f"def {c.name}(", f"def {c.method}(", 1) if i == 0 else text
                rows.append(("    " + text, c.file, ln))
        else:
            opened = c.name if c.kind == "class" else None
            rows.extend((text, c.file, ln) for text, ln in c.lines)
    width = min(max(len(t) for t, _, _ in rows), 96)
    return "\n".join(f"{t:<{width}}  # {Path(f).name}:{ln}" if ln else t for t, f, ln in rows) + "\n"


def show_cxx(source: Any, symbol: str | None = None, lines: tuple[int, int] | None = None, *,
             python: Mapping[str, Any] | None = None, kernel: Any = None) -> None:
    """Display C++ kernel source, highlighted, with the file's own line numbers.

    ``source`` is a compiled kernel (``op_kernel.hard_sigmoid_grad``, a :func:`ascend_lab.ascendc.cxx.compile`
    result: its files are searched, the ``.cpp`` shown when no ``symbol`` is given) or a path to a C++ file.
    ``symbol`` picks one definition: ``"HardSigmoidGrad<T>::Compute"``, ``"Compute"``, a class, the entry.
    ``lines=(first, last)`` narrows to file lines. ``python=dict(schMode=0)`` adds, collapsed under "What the
    simulator executes", the translated Python of the shown lines for that instantiation (``kernel=`` names the
    kernel when ``source`` is a header)."""
    # deferred: IPython is the notebook's display layer; imported here so `import ascend_lab.book` works without it
    from IPython.display import display
    display(cxx_listing(source, symbol, lines, python=python, kernel=kernel))


def show_translation(kernel: Any, symbol: str | None = None, **template: Any) -> None:
    """Display, collapsed, what the simulator executes for one instantiation: the Python the C++ front end made
    (all of it, or only ``symbol``'s), each line tagged with its C++ file and line."""
    from IPython.display import HTML, display  # deferred: IPython only in a notebook
    if symbol is not None:
        listing = cxx_listing(kernel, symbol, python=template)
        text, what = listing.python, f" {symbol}"
    else:
        text, what = translation_text(kernel, **template), ""
    # deferred: pygments colours the translation only when a notebook shows it
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer
    args = ", ".join(f"{k}={v!r}" for k, v in template.items())
    display(HTML(f"<details><summary>What the simulator executes{html.escape(what)} ({html.escape(args)})</summary>"
                 f'<div class="highlight-python notranslate">'
                 f'{highlight(text, PythonLexer(), HtmlFormatter(cssclass="highlight"))}</div></details>'))


def cxx_line(source: Any, text: str, symbol: str | None = None, *, occurrence: int | None = None) -> int:
    """The file line number of the line holding ``text`` (inside ``symbol`` when given): for a page that names a
    line of a kernel ("line 129 calls Muls") without typing the number.

    ``text`` must occur on exactly one line unless ``occurrence`` (1-based) says which."""
    listing = cxx_listing(source, symbol)
    hits = [n for n, line in enumerate(listing.code.splitlines(), listing.first) if text in line]
    if occurrence is not None:
        if not 1 <= occurrence <= len(hits):
            raise LookupError(f"{text!r} occurs {len(hits)} times in {listing.name}, not {occurrence}")
        return hits[occurrence - 1]
    if len(hits) != 1:
        where = f"{symbol} in {listing.name}" if symbol else listing.name
        raise LookupError(f"{text!r} occurs on {len(hits)} lines of {where} ({hits}); say which with occurrence=")
    return hits[0]
