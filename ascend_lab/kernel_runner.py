"""Run a compiled C++ kernel on seeded random inputs and say what happened: the engine of ``ascend-lab kernel run``
and of ``%%ascendc --run``.

The kernel's GM arguments are its entry's parameters but the last two (``workspace`` and ``tiling``), in order; the
last of them is the output unless :attr:`RunSpec.output` names another. Each input is random (seeded; floats
N(0, 2^2), integers uniform in [-100, 100], unsigned [0, 200]) of ``n`` elements of ``dtype``, or what
``--input name=shape:dtype`` / ``name=file.npy`` says; the output starts as 0xFF bytes, so elements the kernel never
wrote show up in the summary. ``n`` is ``--n``, else the tiling's ``totalLength``, else the first ``--input``'s size.
The tiling bytes are :meth:`CxxKernel.pack_tiling` of the ``--tiling`` values (the rest keep the struct's defaults).

The report: the findings (the sanitizer's warnings grouped by kind and C++ line, or the error that stopped the
kernel with its C++ ``file:line``), the estimated cycles and microseconds, the UB each core laid out
(``trace.ub_layout``) and a summary of the output. :func:`run` returns 0 when the kernel ran to the end, 1 when a
finding (or any error in the kernel) stopped it; a bad request is a :class:`RunError`, a kernel outside the C++
subset a :class:`~.errors.KernelCompileError` (both for the caller to print).
"""

from __future__ import annotations

import itertools
import math
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .ascendc.cxx.ctypes import DTYPE_OF
from .ascendc.cxx.errors import KernelCompileError
from .ascendc.errors import KernelError, display_path, learner_line
from .ascendc.launcher import launch
from .base.platform import DEFAULT_SOC, get_soc
from .dtypes import as_acl_dtype, to_numpy
from .ops.common.kernel_args import gm_from_array

__all__ = ["RunError", "RunSpec", "parse_pairs", "parse_number", "resolve_template", "run", "show", "np_dtype"]

#: At most this many elements per GM argument (the simulator holds everything in host memory).
MAX_ELEMENTS = 2**26


class RunError(Exception):
    """A request the runner cannot carry out (a bad --tiling, --input, --template ...): one line, exit code 2."""


@dataclass
class RunSpec:
    """What to run: every field as the command line gives it (strings), parsed by :func:`run`."""
    tiling: dict[str, str] = field(default_factory=dict)
    template: dict[str, str] = field(default_factory=dict)
    inputs: dict[str, str] = field(default_factory=dict)
    n: int | None = None
    dtype: str = "float32"
    soc: str | None = None
    block_dim: int = 1
    seed: int = 0
    output: str | None = None
    trace: str | None = None


# --------------------------------------------------------------------------------------------------------------
# parsing
# --------------------------------------------------------------------------------------------------------------

def parse_pairs(items: Iterable[str] | None, what: str, default: str | None = None) -> dict[str, str]:
    """``["a=1", "b=2"]`` -> ``{"a": "1", "b": "2"}``; ``default`` is the value of a bare ``KEY`` (None: refused)."""
    out: dict[str, str] = {}
    for item in items or ():
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq and default is not None:
            value = default
        elif not eq or not key:
            hint = " (put the kernel file before the options)" if item.endswith((".cpp", ".cc", ".cxx")) else ""
            raise RunError(f"{what} takes key=value, got {item!r}{hint}")
        if not key.replace("_", "a").isalnum() or key[0].isdigit():
            raise RunError(f"{what}: {key!r} is not a C++ name")
        out[key] = value.strip()
    return out


def parse_number(text: str, what: str) -> int | float:
    """A C++ literal as a command line gives it: an integer (decimal or 0x.., ``_`` separators and ``u``/``l``
    suffixes allowed), a float (``0.5``, ``1e-3``, ``2.5f``), ``true``/``false`` (1/0)."""
    body = text.strip().replace("_", "").lower()
    if body in ("true", "false"):
        return int(body == "true")
    m = re.fullmatch(r"([+-]?)(0x[0-9a-f]+|\d+)[ul]*", body)
    if m:
        return int(m.group(1) + m.group(2), 16 if m.group(2).startswith("0x") else 10)
    try:
        return float(body[:-1] if body.endswith("f") and not body.endswith("inf") else body)
    except ValueError:
        raise RunError(f"{what} must be a number, got {text!r}") from None


def np_dtype(text: Any) -> np.dtype:
    """A dtype from its C++ name (``half``, ``float``, ``bfloat16_t``) or any name ``ascend_lab.dtypes`` accepts."""
    if isinstance(text, str) and text.strip() in DTYPE_OF:
        return DTYPE_OF[text.strip()]
    try:
        return to_numpy(as_acl_dtype(text.strip() if isinstance(text, str) else text))
    except (TypeError, ValueError):
        raise RunError(f"unknown dtype {text!r}: use float32, float16, bfloat16, int8, int32, ... or a C++ name "
                       "(float, half, bfloat16_t, int32_t)") from None


def _shape(text: str, what: str) -> tuple[int, ...]:
    body = text.strip().strip("()[]").strip()
    if not body:
        return ()
    dims = []
    for p in body.replace("x", ",").split(","):
        p = p.strip()
        if not p.isdigit():
            raise RunError(f"{what}: malformed shape {text!r} (write e.g. 4096 or 64,32)")
        dims.append(int(p))
    return tuple(dims)


def _template_value(kernel: Any, name: str, text: str) -> Any:
    """A template value from the command line: a dtype name for a type parameter (``D_T=float16``), else a number."""
    if name in getattr(kernel, "type_params", ()):
        return np_dtype(text)
    return parse_number(text, f"--template {name}")


def resolve_template(kernel: Any, given: Mapping[str, str], dtype: Any = None) -> dict[str, Any]:
    """The launch keywords for ``--template k=v``: a number each (a dtype name for a type parameter), every name one
    the kernel takes; a type parameter not given is the run's ``dtype`` (when one is given)."""
    template = {k: _template_value(kernel, k, v) for k, v in given.items()}
    if dtype is not None:
        for n in getattr(kernel, "type_params", ()):
            template.setdefault(n, np_dtype(dtype) if isinstance(dtype, str) else dtype)
    known = set(kernel.template_params) | set(kernel.knobs) | {"tilingKey"}
    unknown = sorted(set(template) - known)
    if unknown:
        raise RunError(f"the kernel '{kernel.entry_name}' has no template parameter {', '.join(unknown)}; "
                       f"it takes {template_help(kernel)}")
    missing = [n for n in kernel.template_params if n not in template]
    if missing:
        raise RunError(f"the kernel '{kernel.entry_name}' needs --template {' '.join(m + '=V' for m in missing)} "
                       f"(it takes {template_help(kernel)})")
    return template


def template_help(kernel: Any) -> str:
    parts = []
    for n in kernel.template_params:
        values = kernel.template_values.get(n)
        parts.append(f"{n} ({', '.join(map(str, values))})" if values else n)
    if kernel.knobs:
        parts.append("the knobs " + ", ".join(kernel.knobs))
    return ", ".join(parts) or "no template arguments (tilingKey= for TILING_KEY_IS)"


def _describe(kernel: Any, template: Mapping[str, Any]) -> str:
    targs = [f"{n}={template[n]}" for n in kernel.template_params if n in template]
    extra = [f"{k}={v}" for k, v in template.items() if k not in kernel.template_params]
    name = kernel.entry_name + (f"<{', '.join(targs)}>" if targs else "")
    return name + (f" [{', '.join(extra)}]" if extra else "")


def _fmt(value: Any) -> str:
    if isinstance(value, (float, np.floating)):
        return str(np.float32(value)) if not isinstance(value, np.float16) else str(value)
    return str(value)


def _instance(kernel: Any, template: Mapping[str, Any]) -> Any:
    try:
        return kernel.instance(**template)
    except (TypeError, ValueError) as exc:      # a template argument the kernel refuses (not a compile error)
        raise RunError(str(exc)) from None


def tiling_struct(inst: Any) -> tuple[str, int, list[tuple[str, str, Any]]]:
    """(struct name, size in bytes, [(C type, field, default)]) of the tiling struct an instance reads."""
    cls = inst.tiling_class
    if cls is None:
        return "", 0, []
    _fmt_, size, layout = cls._cx_layout
    defaults = inst.tiling_fields()
    name = (cls.__doc__ or cls.__name__).replace("struct ", "").strip()
    return name, size, [(str(ctype), fname, defaults[fname]) for fname, ctype in layout]


def pack_tiling(inst: Any, given: Mapping[str, str]) -> tuple[bytes, dict[str, Any]]:
    """(tiling bytes, every field's value) for ``--tiling`` values; an unknown field or a value that does not fit
    its type is a RunError."""
    _name, _size, fields = tiling_struct(inst)
    if not fields:
        if given:
            raise RunError(f"the kernel reads no tiling struct, so --tiling {' '.join(given)} cannot apply")
        return b"", {}
    values = {k: parse_number(v, f"--tiling {k}") for k, v in given.items()}
    try:
        raw = inst.pack_tiling(values)
    except ValueError as exc:
        raise RunError(str(exc)) from None
    everything = {f: values.get(f, d) for _t, f, d in fields}
    return raw, everything


# --------------------------------------------------------------------------------------------------------------
# GM arguments
# --------------------------------------------------------------------------------------------------------------

def _random(shape: tuple[int, ...], dt: np.dtype, rng: np.random.Generator) -> np.ndarray:
    if dt.kind == "f" or dt.kind == "V" or dt.name == "bfloat16":
        return (rng.standard_normal(shape, dtype=np.float32) * np.float32(2)).astype(dt)
    if dt.kind == "b":
        return rng.integers(0, 1, size=shape, endpoint=True).astype(dt)
    lo, hi = (0, 200) if dt.kind == "u" else (-100, 100)
    return rng.integers(lo, hi, size=shape, endpoint=True).astype(dt)


@dataclass
class _Arg:
    name: str
    array: np.ndarray
    origin: str            # "random", "file x.npy", "output"


def _gm_args(kernel: Any, spec: RunSpec, fields: Mapping[str, Any]) -> tuple[list[_Arg], int]:
    params = list(kernel.params)
    if len(params) < 3:
        raise RunError(f"the kernel '{kernel.entry_name}' takes ({', '.join(params)}): an entry needs its GM "
                       "arguments, then workspace and tiling")
    names = params[:-2]
    out_name = spec.output or names[-1]
    if out_name not in names:
        raise RunError(f"--output {out_name}: the kernel's GM arguments are {', '.join(names)}")
    unknown = sorted(set(spec.inputs) - set(names))
    if unknown:
        raise RunError(f"--input {unknown[0]}: the kernel's GM arguments are {', '.join(names)}")
    default_dt = np_dtype(spec.dtype)
    rng = np.random.default_rng(spec.seed)
    given: dict[str, tuple[np.ndarray | None, tuple[int, ...] | None, np.dtype, str]] = {}
    for name, text in spec.inputs.items():
        if text.endswith(".npy"):
            try:
                arr = np.load(text, allow_pickle=False)
            except (OSError, ValueError) as exc:
                raise RunError(f"--input {name}={text}: cannot read it ({exc})") from None
            given[name] = (arr, arr.shape, arr.dtype, f"file {text}")
        else:
            shape_text, colon, dt_text = text.partition(":")
            dt = np_dtype(dt_text) if colon else default_dt
            given[name] = (None, _shape(shape_text, f"--input {name}"), dt, "random")
    n = spec.n
    if n is None:
        total = fields.get("totalLength")
        if isinstance(total, (int, np.integer)) and total > 0:
            n = int(total)
        elif given:
            n = int(math.prod(next(iter(given.values()))[1] or ()))
        else:
            raise RunError("how many elements? give --n N, a totalLength tiling field, or --input name=shape:dtype")
    args = []
    for name in names:
        arr, shape, dt, origin = given.get(name, (None, (n,), default_dt, "random"))
        size = math.prod(shape or ())
        if size > MAX_ELEMENTS:
            raise RunError(f"{name} would hold {size} elements; the runner takes at most {MAX_ELEMENTS}")
        if name == out_name:
            if arr is None:
                arr = np.full(size * dt.itemsize, 0xFF, np.uint8).view(dt).reshape(shape)
            args.append(_Arg(name, arr.copy(), "output"))
        else:
            if arr is None:
                arr = _random(shape, dt, rng)
            args.append(_Arg(name, arr, origin))
    return args, names.index(out_name)


# --------------------------------------------------------------------------------------------------------------
# the report
# --------------------------------------------------------------------------------------------------------------

def _where(line: Any) -> str:
    """``file:line`` of a SourceLine, the file named as every message names it (``errors.display_path``)."""
    return f"{display_path(line.filename)}:{line.lineno}"


def _cores(cores: Iterable[int]) -> str:
    cs = sorted(set(cores))
    runs = []
    for _k, grp in itertools.groupby(enumerate(cs), lambda p: p[1] - p[0]):
        g = [c for _i, c in grp]
        runs.append(str(g[0]) if len(g) == 1 else f"{g[0]}-{g[-1]}")
    return ("core " if len(cs) == 1 else "cores ") + ", ".join(runs)


def report_error(exc: BaseException, out: Callable[[str], None]) -> None:
    """The error that stopped the kernel: ``error: file:line: [kind] message``, the C++ line, the hint."""
    line = learner_line(exc)
    if isinstance(exc, KernelError):
        where = [f"instruction {exc.instruction}"] if exc.instruction else []
        where += [f"core {exc.core}"] if exc.core is not None else []
        where += [f"tile {exc.tile}"] if exc.tile is not None else []
        text = f"[{exc.kind}] {exc.detail}" + (f" ({', '.join(where)})" if where else "")
    else:
        text = f"{type(exc).__name__}: {exc}"
    out(f"  error: {_where(line) + ': ' if line is not None else ''}{text}")
    if line is not None and line.code:
        out(f"      {line.code}")
    hint = getattr(exc, "hint", "")
    if hint:
        out(f"    hint: {hint}")


def report_warnings(warnings: list[Any], out: Callable[[str], None]) -> None:
    groups: dict[tuple[str, str, str], list[Any]] = {}
    for w in warnings:
        key = (w.kind, _where(w.line) if w.line is not None else "", w.instr)
        groups.setdefault(key, []).append(w)
    for (kind, where, instr), ws in groups.items():
        first = ws[0]
        count = f" x{len(ws)} ({_cores(w.core for w in ws)})" if len(ws) > 1 else f" (core {first.core})"
        out(f"  warning: {where + ': ' if where else ''}[{kind}] {first.message} (instruction {instr}){count}")
        if first.line is not None and first.line.code:
            out(f"      {first.line.code}")


def report_ub(trace: Any, out: Callable[[str], None]) -> None:
    layouts: dict[tuple[tuple[str, int], ...], list[int]] = {}
    for core in sorted(trace.ub_layout):
        key = tuple((b.name, b.size) for b in trace.ub_layout[core])
        layouts.setdefault(key, []).append(core)
    if not layouts:
        out("UB: nothing laid out (no InitBuffer ran)")
        return
    cap = trace.ub_capacity
    for key, cores in layouts.items():
        used = sum(size for _n, size in key)
        alike = f"every core ({len(cores)})" if len(cores) == trace.block_dim else _cores(cores)
        out(f"UB per core, {alike}: {used} of {cap} B ({100 * used / cap:.1f}%) in {len(key)} buffers: "
            + ", ".join(f"{n} {s}" for n, s in key))
    if trace.ub_reserved:
        out(f"  (the top {trace.ub_reserved} B of UB stay free for the library's Select scratch)")


def report_output(arg: _Arg, out: Callable[[str], None]) -> None:
    a = arg.array
    shape = "[" + ", ".join(map(str, a.shape)) + "]"
    head = f"output {arg.name}: {a.dtype.name}{shape}"
    if a.size == 0:
        out(head + " (empty)")
        return
    raw = np.ascontiguousarray(a).reshape(-1).view(np.uint8).reshape(a.size, a.dtype.itemsize)
    unwritten = int(np.count_nonzero((raw == 0xFF).all(axis=1)))
    if a.dtype.kind in "fiub" or a.dtype.name == "bfloat16":
        f = a.astype(np.float64).reshape(-1)
        finite = f[np.isfinite(f)]
        stats = (f"min {_num(finite.min())}, max {_num(finite.max())}, mean {_num(finite.mean())}"
                 if finite.size else "no finite value")
        nan = int(np.isnan(f).sum()) - (unwritten if a.dtype.kind == "f" or a.dtype.name == "bfloat16" else 0)
        extra = f", {nan} NaN" if nan > 0 else ""
        first = ", ".join(_num(v) for v in a.reshape(-1)[:6].astype(np.float64))
        out(f"{head}: {stats}{extra}; first [{first}{', ...' if a.size > 6 else ''}]")
    else:
        out(head)
    if unwritten:
        what = "never written" if a.dtype.kind in "fV" or a.dtype.name == "bfloat16" else \
            "never written (or written as all-ones bits)"
        out(f"  {unwritten} of {a.size} elements still hold the 0xFF fill: {what}")


def _num(v: float) -> str:
    return f"{v:.6g}"


# --------------------------------------------------------------------------------------------------------------
# run and show
# --------------------------------------------------------------------------------------------------------------

def check_trace_path(path: str) -> None:
    if not path.strip():
        raise RunError("--trace needs a file name, got an empty path")
    if os.path.isdir(path):
        raise RunError(f"cannot write the trace to {path!r}: it is a folder; give a file name such as out.json")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise RunError(f"cannot write the trace to {path!r}: folder {folder!r} does not exist")
    if not os.access(folder, os.W_OK):
        raise RunError(f"cannot write the trace to {path!r}: no permission to write there")


def run(kernel: Any, spec: RunSpec, out: Callable[[str], None] = print) -> int:
    """Launch ``kernel`` as ``spec`` says with the sanitizer on and print the report; 0 when it ran to the end,
    1 when a finding or an error stopped it. RunError / KernelCompileError for the caller to print."""

    try:
        soc = get_soc(spec.soc or DEFAULT_SOC)
    except (TypeError, ValueError) as exc:
        raise RunError(str(exc)) from None
    if spec.block_dim < 1:
        raise RunError(f"--block-dim must be >= 1, got {spec.block_dim}")
    if spec.trace is not None:
        check_trace_path(spec.trace)
    template = resolve_template(kernel, spec.template, spec.dtype)
    inst = _instance(kernel, template)
    tiling, fields = pack_tiling(inst, spec.tiling)
    args, out_index = _gm_args(kernel, spec, fields)
    gm = [gm_from_array(a.array, a.name) for a in args]

    out(f"{_describe(kernel, template)} from {Path(kernel.main).name} on {soc.name}, blockDim {spec.block_dim}, "
        f"seed {spec.seed}")
    out("GM: " + ", ".join(f"{a.name} {a.array.dtype.name}[{', '.join(map(str, a.array.shape))}] ({a.origin})"
                           for a in args))
    if fields:
        name, size, _ = tiling_struct(inst)
        out(f"tiling: {name} ({size} B) " + " ".join(f"{k}={_fmt(v)}" for k, v in fields.items()))
    try:
        result = launch(kernel, spec.block_dim, gm, tiling, soc, outputs=(out_index,), record=spec.trace is not None,
                        **template)
    except KernelCompileError:
        raise
    except KernelError as exc:
        out("findings: the kernel stopped")
        report_error(exc, out)
        return 1
    except Exception as exc:      # anything the kernel's code raised: said at its C++ line
        out("findings: the kernel stopped on an error")
        report_error(exc, out)
        return 1
    trace = result.trace
    _report_findings(trace, out)
    out(f"cycles: {trace.cycles:.1f} estimated, {trace.microseconds:.3f} us at {trace.clock_mhz} MHz")
    report_ub(trace, out)
    o = args[out_index]
    nbytes = o.array.nbytes
    o.array = gm[out_index].ptr.allocation.buffer[:nbytes].view(o.array.dtype).reshape(o.array.shape).copy()
    report_output(o, out)
    if spec.trace is not None:
        _save_trace(trace, spec.trace, out)
    return 0


def _report_findings(trace: Any, out: Callable[[str], None]) -> None:
    """The warnings of a kernel that ran to the end, counted by kind and then each at its line ("none" if none)."""
    if not trace.warnings:
        out("findings: none")
        return
    kinds: dict[str, int] = {}
    for w in trace.warnings:
        kinds[w.kind] = kinds.get(w.kind, 0) + 1
    out(f"findings: {len(trace.warnings)} warning{'s' if len(trace.warnings) != 1 else ''} ("
        + ", ".join(f"{k} {c}" for k, c in sorted(kinds.items())) + ")")
    report_warnings(trace.warnings, out)


def _save_trace(trace: Any, path: str, out: Callable[[str], None]) -> None:
    """Write the Chrome trace; a write that fails is a RunError."""
    try:
        trace.save_chrome_trace(path)
    except OSError as exc:
        raise RunError(f"could not write the trace to {path!r}: {exc.strerror or exc}") from None
    out(f"trace: wrote {len(trace.events)} events to {path} (open in https://ui.perfetto.dev or chrome://tracing)")


def default_template(kernel: Any, given: Mapping[str, str]) -> tuple[dict[str, Any], list[str]]:
    """Template keywords for showing a kernel: ``given``, and for a parameter not given, its first declared value
    (with a note saying so)."""
    template = {k: _template_value(kernel, k, v) for k, v in given.items()}
    notes = []
    for n in kernel.template_params:
        if n not in template:
            values = kernel.template_values.get(n)
            if not values:
                raise RunError(f"the kernel '{kernel.entry_name}' needs --template {n}=V to be shown")
            template[n] = values[0]
            notes.append(f"{n}={values[0]}, the first value its tiling key declares ({', '.join(map(str, values))})"
                         f"; --template {n}=V for another")
    resolve_template(kernel, {k: str(v) for k, v in template.items()})
    return template, notes


def show(kernel: Any, given: Mapping[str, str], out: Callable[[str], None] = print) -> int:
    """Print what the simulator executes for ``kernel`` (the translated Python) and its tiling struct's fields."""
    template, notes = default_template(kernel, given)
    inst = _instance(kernel, template)
    out(f"# {_describe(kernel, template)} from {Path(kernel.main).name}: what the simulator executes "
        "(each line tagged with its C++ file:line)")
    for note in notes:
        out(f"# template: {note}")
    out(inst.python_source().rstrip("\n"))
    out("")
    out(f"entry: {kernel.entry_name}({', '.join(kernel.params)})"
        + (f"; template {template_help(kernel)}" if kernel.template_params or kernel.knobs else ""))
    name, size, fields = tiling_struct(inst)
    if not fields:
        out("tiling: the kernel reads no tiling struct")
        return 0
    out(f"tiling struct {name} ({size} bytes; --tiling field=value sets a field, the rest keep these defaults):")
    width = max(len(t) for t, _f, _d in fields)
    fwidth = max(len(f) for _t, f, _d in fields)
    for ctype, fname, default in fields:
        out(f"  {ctype:<{width}} {fname:<{fwidth}} = {_fmt(default)}")
    return 0
