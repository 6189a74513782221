"""A compiled C++ kernel: preprocessed and parsed once, instantiated per template arguments, run by ``launch``.

:class:`CxxKernel` is what :func:`ascend_lab.ascendc.cxx.compile` returns. It is the kernel's ``__global__`` entry
as the launcher sees it: ``launch(kernel, blockDim, gm_args, tiling, soc, schMode=1)`` calls it once per core
with the GM addresses, the workspace and the tiling bytes, and the template arguments -- the entry's own
(``schMode``), ``tilingKey`` for ``TILING_KEY_IS``, and the simulator's knobs (a launch may override a named
``static constexpr``, e.g. ``BUFFER_NUM``, for a what-if study).

Each instantiation is translated to Python once and cached. The Python of one C++ function is compiled under the
C++ file's name with the C++ line numbers (:func:`_compile_chunk`), so every frame of a running kernel *is* a
C++ line: tracebacks, sanitizer findings and the trace name the C++, and ``linecache`` shows its text.
"""

from __future__ import annotations

import ast
import collections
import hashlib
import itertools
import linecache
import os
import re
import struct
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .. import instructions as _ins
from .. import instructions_adv as _adv
from .. import instructions_math as _math
from .. import instructions_reduce as _reduce
from .. import mask as _mask
from .. import sync as _sync
from .. import tensor as _tensor
from ..core import GetBlockIdx, GetBlockNum
from ..generated import AST_LOCK
from ..numerics import RoundMode
from ..pipe import VECCALC, VECIN, VECOUT, TBuf, TPipe, TQue
from ..quebind import TQueBind
from . import runtime as _rt
from .ctypes import DTYPE_OF, scalar_type
from .errors import KernelCompileError, Where
from .preprocess import Preprocessed, SourceFile, preprocess
from .translate import Chunk, Translator, parse

__all__ = ["CxxKernel", "load_kernel", "C_SOURCE_FILES"]

#: File names of every C++ source compiled in this process (the trace asks whether a frame is C++).
C_SOURCE_FILES: set[str] = set()


class DataCopyExtParams(_ins.DataCopyParams):
    """``DataCopyExtParams{blockCount, blockLen, srcStride, dstStride, rsv}``: the 32-bit-length form."""
    __slots__ = ("rsv",)

    def __init__(self, blockCount: int = 1, blockLen: int = 0, srcStride: int = 0, dstStride: int = 0,
                 rsv: int = 0):
        super().__init__(blockCount, blockLen, srcStride, dstStride)
        self.rsv = rsv


def _with(obj: Any, **fields: Any) -> Any:
    for k, v in fields.items():
        setattr(obj, k, v)
    return obj


_FLOAT_CODES = {"f": np.float32, "e": np.float16}


def _tiling(cls: type, raw: Any) -> Any:
    """``GET_TILING_DATA``: the struct read from the tiling bytes (a C struct, natural alignment, little-endian),
    one parse per distinct bytes, a fresh copy per core (the kernel owns its copy, as the macro's local does)."""
    fmt, size, fields = cls._cx_layout
    raw = bytes(raw)
    cache = cls._cx_cache
    values = cache.get(raw)
    if values is None:
        if len(raw) < size:
            raise ValueError(f"the tiling holds {len(raw)} bytes, but {cls.__doc__} needs {size}")
        unpacked = struct.unpack(fmt, raw[:size])
        values = []
        for (fname, ftype), v in zip(fields, unpacked, strict=True):
            if ftype.kind == "float" and ftype.name in ("float", "half"):
                v = (np.float32 if ftype.name == "float" else np.float16)(v)
            values.append((fname, v))
        if len(cache) > 64:
            cache.clear()
        cache[raw] = values
    obj = cls.__new__(cls)
    for k, v in values:
        setattr(obj, k, v)
    return obj


def _namespace() -> dict[str, Any]:
    """The names translated code reads: the simulated AscendC API, dtypes and the scalar helpers."""
    ns: dict[str, Any] = {"__name__": "ascend_lab.ascendc.cxx.generated"}
    for name in ("DataCopy", "DataCopyPad", "Muls", "Adds", "Maxs", "Mins", "Add", "Mul", "Max", "Min", "Not",
                 "Duplicate", "Cast", "CompareScalar", "Compare", "Select", "PipeBarrier", "CMPMODE", "SELMODE",
                 "DataCopyParams", "DataCopyPadParams"):
        ns[name] = getattr(_ins, name)
    ns["DataCopyExtParams"] = DataCopyExtParams
    ns.update(_math.NAMESPACE)              # Sub, Div, Exp, Ln, Abs, Relu, LeakyRelu, And, Or, Axpy ...
    ns.update(_reduce.NAMESPACE)            # WholeReduce*, BlockReduce*, ReduceOrder
    ns.update(_adv.NAMESPACE)               # Log, Sigmoid, Tanh (the high-level compositions)
    ns.update(_mask.NAMESPACE)              # SetMaskCount ... and the mask forms (_mask_Add ...)
    ns.update(SetFlag=_sync.SetFlag, WaitFlag=_sync.WaitFlag, FetchEventID=_sync.FetchEventID,
              HardEvent=_sync.HardEvent)
    ns.update(GetBlockIdx=GetBlockIdx, GetBlockNum=GetBlockNum, RoundMode=RoundMode, VECIN=VECIN, VECOUT=VECOUT,
              VECCALC=VECCALC, TPipe=TPipe, TQue=TQue, TQueBind=TQueBind, TBuf=TBuf, GlobalTensor=_tensor.GlobalTensor)
    ns.update(half=_tensor.half, float_=_tensor.float_, bfloat16_t=_tensor.bfloat16_t, int8_t=_tensor.int8_t,
              uint8_t=_tensor.uint8_t, int16_t=_tensor.int16_t, int32_t=_tensor.int32_t, int64_t=_tensor.int64_t,
              uint16_t=np.dtype(np.uint16), uint32_t=np.dtype(np.uint32), uint64_t=np.dtype(np.uint64),
              float64=np.dtype(np.float64), bool_=np.dtype(np.bool_))
    ns.update(_s8=_rt.s8, _s16=_rt.s16, _s32=_rt.s32, _s64=_rt.s64, _wrap_s=_rt.wrap_s, _idiv=_rt.idiv,
              _imod=_rt.imod, _f32=_rt.f32, _f16=_rt.f16, _bf16=_rt.bf16, _f64=_rt.f64, _ftoi=_rt.ftoi,
              _struct_copy=_rt.struct_copy, _cx_tiling=_tiling, _cx_with=_with, _cx_assert=_rt.kernel_assert)
    return ns


def _compile_chunk(chunk: Chunk) -> Any:
    """Python code for one C++ function whose every line number is the C++ line it came from, and whose function
    is named as C++ names it (``K<float>::Init``), so a traceback reads as the C++."""
    text = "\n".join(t for t, _ in chunk.lines) + "\n"
    with AST_LOCK:                  # ast objects <-> code is not thread-safe in CPython 3.11/3.12 (generated.AST_LOCK)
        tree = ast.parse(text, filename=chunk.file)
        line_of = [0] + [ln for _, ln in chunk.lines]
        for node in ast.walk(tree):
            if hasattr(node, "lineno"):
                node.lineno = line_of[min(node.lineno, len(line_of) - 1)]
                end = getattr(node, "end_lineno", None)
                node.end_lineno = max(node.lineno, line_of[min(end, len(line_of) - 1)]) if end else node.lineno
        code = compile(tree, chunk.file, "exec")
    return _renamed(code, chunk) if chunk.cxx_name else code


def _renamed(code: Any, chunk: Chunk) -> Any:
    """Module code whose function (a class chunk: its ``__init__``) is named ``chunk.cxx_name``."""
    def rename(c: Any, target: str) -> Any:
        return c.replace(co_consts=tuple(
            k.replace(co_name=chunk.cxx_name, co_qualname=chunk.cxx_name)
            if hasattr(k, "co_code") and k.co_name == target else k for k in c.co_consts))
    if chunk.kind == "class":
        return code.replace(co_consts=tuple(rename(k, "__init__") if hasattr(k, "co_code") else k
                                            for k in code.co_consts))
    return rename(code, chunk.name)


class Instance:
    """One instantiation: its Python source (what the simulator executes) and the entry function."""

    def __init__(self, chunks: list[Chunk], entry: str, layouts: dict[str, Any]):
        self.chunks = chunks
        ns = _namespace()
        for chunk in chunks:
            if chunk.kind == "class":
                exec(_compile_chunk(chunk), ns)
        for chunk in chunks:
            if chunk.kind != "class":
                exec(_compile_chunk(chunk), ns)
                if chunk.kind == "method":
                    setattr(ns[chunk.owner], chunk.method, ns.pop(chunk.name))
        for pyname, layout in layouts.items():
            cls = ns[pyname]
            cls._cx_layout = layout
            cls._cx_cache = {}
        self.namespace = ns
        self.entry = ns[entry]
        #: the struct GET_TILING_DATA reads (None when the kernel reads no tiling): its Python class
        self.tiling_class = ns[next(iter(layouts))] if layouts else None

    def tiling_fields(self) -> dict[str, Any]:
        """The tiling struct's fields in C++ order with their default values (the struct's own initialisers, 0
        where it has none): what a host must fill in."""
        if self.tiling_class is None:
            return {}
        defaults = self.tiling_class()
        return {name: getattr(defaults, name) for name, _t in self.tiling_class._cx_layout[2]}

    def tiling_struct(self) -> tuple[str, int, list[tuple[str, str, Any]]] | None:
        """The tiling struct the kernel reads: its C++ name, size in bytes and fields as (C type, name, default);
        None for a kernel that reads no tiling."""
        if self.tiling_class is None:
            return None
        _fmt, size, layout = self.tiling_class._cx_layout
        defaults = self.tiling_fields()
        return (self.tiling_class.__doc__.split()[-1], size,
                [(ctype.spelled(), name, defaults[name]) for name, ctype in layout])

    def pack_tiling(self, values: Mapping[str, Any] | None = None, **more: Any) -> bytes:
        """The tiling bytes for these field values (unnamed fields keep their defaults): the C struct, natural
        alignment, little-endian -- what the host copies next to the kernel's arguments. A kernel that reads no
        tiling takes none (empty bytes)."""
        given = {**(values or {}), **more}
        if self.tiling_class is None:
            if given:
                raise ValueError(f"the kernel reads no tiling struct, so it has no field {', '.join(sorted(given))}")
            return b""
        fields = self.tiling_fields()
        unknown = set(given) - set(fields)
        if unknown:
            raise ValueError(f"the tiling struct has no field {', '.join(sorted(unknown))}; its fields are "
                             f"{', '.join(fields) or 'none'}")
        fmt, _size, layout = self.tiling_class._cx_layout
        out = []
        for name, ctype in layout:
            v = given.get(name, fields[name])
            if ctype.kind == "int":
                lo, hi = (-(1 << (ctype.bits - 1)), (1 << (ctype.bits - 1)) - 1) if ctype.signed else \
                    (0, (1 << ctype.bits) - 1)
                v = int(v)
                if not lo <= v <= hi:
                    raise ValueError(f"tiling field {name} = {v} does not fit its type {ctype}")
            elif ctype.kind == "bool":
                v = bool(v)
            else:
                v = float(v)
            out.append(v)
        return struct.pack(fmt, *out)

    def python_source(self) -> str:
        """The translated Python, classes with their methods, each line tagged with its C++ line."""
        out: list[str] = []
        methods: dict[str, list[Chunk]] = collections.defaultdict(list)
        for c in self.chunks:
            if c.kind == "method":
                methods[c.owner].append(c)
        width = max((len(t) for c in self.chunks for t, _ in c.lines), default=40)
        width = min(width, 96)

        def put(text: str, file: str, line: int) -> None:
            out.append(f"{text:<{width}}  # {Path(file).name}:{line}" if line else text)

        for c in self.chunks:
            if c.kind == "method":
                continue
            for text, line in c.lines:
                put(text, c.file, line)
            for m in methods.get(c.name, []):
                for i, (text, line) in enumerate(m.lines):
                    text = text.replace(f"def {m.name}(", f"def {m.method}(", 1) if i == 0 else text
                    put("    " + text, m.file, line)
            out.append("")
        return "\n".join(out).rstrip() + "\n"


class CxxKernel:
    """A C++ AscendC kernel, compiled: call it as the launcher calls an entry, or look at what it became.

    ``template`` arguments of a call: the entry's own template parameters (``schMode=1``), ``tilingKey`` (for
    ``TILING_KEY_IS``), and the knobs given at compile time (``knobs={"bufferNum": "BUFFER_NUM"}``: the call's
    ``bufferNum`` overrides every ``static constexpr``/``constexpr`` named ``BUFFER_NUM``)."""

    kernel_api = "ascendc"

    def __init__(self, pre: Preprocessed, trees: list[Any], entry_name: str, knobs: Mapping[str, str],
                 sources: list[SourceFile], build: dict[str, Any] | None = None):
        self.build = build or {}          # how it was compiled (load_kernel's arguments): a dtype variant reuses them
        self._variants: dict[tuple[str, ...], CxxKernel] = {}
        self.pre = pre
        self.trees = trees
        self.entry_name = entry_name
        self.__name__ = entry_name
        self.knobs = dict(knobs)
        self.sources = sources
        self.files = [s.name for s in sources]
        #: the C++ files whose lines the kernel's code objects carry (the launcher tags trace events with them)
        self.source_files = frozenset(self.files)
        self.main = sources[-1].name if sources else entry_name       # the file compiled (included ones first)
        self._instances: dict[tuple[Any, ...], Instance] = {}
        self._lock = threading.Lock()
        tr = Translator(pre, trees)
        decls = tr.funcs.get(entry_name)
        if not decls:
            raise KernelCompileError(f"no kernel entry '{entry_name}' in {sources[0].name}")
        self._entry_decl = decls[0]
        self.template_params = [n for _k, n, _t in decls[0].tparams]
        #: which template parameters are types (``template <typename D_T>``: a launch gives a dtype)
        self.type_params = {n for k, n, _t in decls[0].tparams if k == "type"}
        self.template_values = {n: _declared(pre.template_args.get(n), n in self.type_params)
                                for n in self.template_params}
        self.params = self._entry_params()

    def _entry_params(self) -> list[str]:
        node = self._entry_decl.node.child_by_field_name("declarator")
        while node is not None and node.type != "function_declarator":
            node = node.child_by_field_name("declarator")
        names = []
        for p in node.child_by_field_name("parameters").named_children:
            d = p.child_by_field_name("declarator")
            while d is not None and d.type in ("pointer_declarator", "reference_declarator"):
                d = d.child_by_field_name("declarator")
            names.append(d.text.decode() if d is not None else "")
        return names

    def check(self) -> None:
        """Translate what a build would compile, so that :func:`compile` reports errors at once: the entry's one
        instantiation, or every combination of the values its tiling key declares (``ASCENDC_TPL_ARGS_DECL``).
        A kernel whose element types come from ``dtype_macros`` or whose branches need the launch's tiling key is
        checked at its first launch instead."""
        if self.build.get("dtype_macros") or any("TILING_KEY_IS" in u.text for u in self.pre.units):
            return
        values = [self.template_values.get(n) for n in self.template_params]
        if any(v is None for v in values):
            return
        for combo in itertools.islice(itertools.product(*values), 16):
            self.instance(**dict(zip(self.template_params, combo, strict=True)))

    def variant(self, **dtypes: Any) -> CxxKernel:
        """The kernel compiled for these element types of its ``dtype_macros`` (``dtype=np.float16`` defines
        ``DTYPE_INPUT_GRADIENT`` as ``half``): what the build does once per input dtype of the op definition."""
        macros = self.build.get("dtype_macros") or {}
        defines = dict(self.build.get("defines") or {})
        for key, dt in dtypes.items():
            defines[macros[key]] = c_type_name(dt)
        vkey = tuple(sorted(defines.items()))
        v = self._variants.get(vkey)
        if v is None:
            args = {k: v for k, v in self.build.items() if k not in ("main", "defines", "dtype_macros")}
            v = load_kernel(self.build["main"], defines=defines, **args)
            self._variants[vkey] = v
        return v

    def _split(self, template: dict[str, Any]) -> tuple[CxxKernel, dict[str, Any]]:
        macros = self.build.get("dtype_macros") or {}
        if not macros:
            return self, template
        dtypes = {k: template.pop(k) for k in list(template) if k in macros}
        if len(dtypes) != len(macros):
            raise TypeError(f"the kernel '{self.entry_name}' needs the element types "
                            f"{', '.join(sorted(set(macros) - set(dtypes)))}= (they define "
                            f"{', '.join(macros[k] for k in macros)})")
        return self.variant(**dtypes), template

    def _key(self, template: Mapping[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any], Any]:
        unknown = set(template) - set(self.template_params) - set(self.knobs) - {"tilingKey"}
        if unknown:
            raise TypeError(f"the kernel '{self.entry_name}' has no template parameter or knob "
                            f"{', '.join(sorted(unknown))}; it takes {', '.join(self.template_params) or 'none'}"
                            f"{' and the knobs ' + ', '.join(self.knobs) if self.knobs else ''}")
        targs = []
        for n in self.template_params:
            if n not in template:
                raise TypeError(f"the kernel '{self.entry_name}' needs its template argument {n}= (the host's "
                                "tiling key picks it)")
            v = template[n]
            declared = self.template_values.get(n)
            if n in self.type_params:
                v = np.dtype(v)
                if declared and v not in declared:
                    raise ValueError(f"{n}={v} is not one of the element types the kernel's tiling key declares "
                                     f"({', '.join(map(str, declared))})")
                targs.append(scalar_type(c_type_name(v)))
                continue
            if declared and int(v) not in declared:
                raise ValueError(f"{n}={v} is not one of the values the kernel's tiling key declares "
                                 f"({', '.join(map(str, declared))})")
            targs.append(v)
        constants = {self.knobs[k]: v for k, v in template.items() if k in self.knobs}
        return tuple(targs), constants, template.get("tilingKey")

    def instance(self, **template: Any) -> Instance:
        """The instantiation for these template arguments (translated and compiled on first use)."""
        kernel, template = self._split(template)
        if kernel is not self:
            return kernel.instance(**template)
        targs, constants, key = self._key(template)
        cache_key = (targs, tuple(sorted(constants.items())), key)
        inst = self._instances.get(cache_key)
        if inst is None:
            with self._lock:
                inst = self._instances.get(cache_key)
                if inst is None:
                    inst = self._translate(targs, constants, key)
                    self._instances[cache_key] = inst
        return inst

    def _translate(self, targs: tuple[Any, ...], constants: dict[str, Any], key: Any) -> Instance:
        tr = Translator(self.pre, self.trees, constants)
        tr.tiling_key = key
        try:
            entry, _ = tr.function(tr.funcs[self.entry_name][0], targs, None, None, entry=True)
        except KernelCompileError:
            raise
        except Exception as exc:     # a gap of the front end: said at the statement, never as a Python traceback
            where = tr.error(*tr.last, "") if tr.last else None
            raise KernelCompileError(f"the front end cannot translate this ({type(exc).__name__}: {exc}); this is "
                                     "a gap of the simulator, not necessarily of your kernel",
                                     where.where if where else None, "write the statement more plainly, and "
                                     "report the construct",
                                     where.source_line if where else None) from None
        layouts = {}
        for decl_ in tr.classes.values():
            for inst in decl_.insts.values():
                if inst.pyname in tr.used_struct_names:
                    layouts[inst.pyname] = tr.struct_layout(inst)
        return Instance(tr.chunks, entry, layouts)

    def __call__(self, *args: Any, **template: Any) -> None:
        kernel, template = self._split(template)
        if kernel is not self:
            return kernel(*args, **template)
        if len(args) != len(self.params):
            raise TypeError(f"the kernel '{self.entry_name}' takes {len(self.params)} arguments "
                            f"({', '.join(self.params)}), got {len(args)}")
        self.instance(**template).entry(*args)

    def tiling_fields(self, **template: Any) -> dict[str, Any]:
        """The fields of the tiling struct this instantiation reads, with their defaults."""
        return self.instance(**template).tiling_fields()

    def pack_tiling(self, values: Mapping[str, Any] | None = None, **template: Any) -> bytes:
        """Tiling bytes for field ``values`` (by name; the rest keep the struct's defaults)."""
        return self.instance(**template).pack_tiling(values)

    def python_source(self, **template: Any) -> str:
        """What the simulator executes for these template arguments: the translated Python."""
        return self.instance(**template).python_source()

    def __repr__(self) -> str:
        tp = f"<{', '.join(self.template_params)}>" if self.template_params else ""
        return f"CxxKernel({self.entry_name}{tp} from {Path(self.main).name})"


_GLOBAL = re.compile(r"__global__[^;{]*?\b([A-Za-z_]\w*)\s*\(", re.S)
_CACHE: collections.OrderedDict[tuple[Any, ...], CxxKernel] = collections.OrderedDict()
#: main file + options -> (kernel, (path, (mtime, size)) of every file it read): a repeat compile of unchanged
#: files skips the preprocessor (profiled: nearly all of a cached compile's time)
_QUICK: collections.OrderedDict[tuple[Any, ...], tuple[CxxKernel, list[Any]]] = collections.OrderedDict()
_CACHE_LOCK = threading.Lock()
_cell_serial = 0


def _entries(sources: list[SourceFile]) -> list[str]:
    names = []
    for s in sources:
        text = re.sub(r"//[^\n]*|/\*.*?\*/", "", s.text, flags=re.S)
        for m in _GLOBAL.finditer(text):
            if m.group(1) not in names and m.group(1) not in ("void", "inline"):
                names.append(m.group(1))
    return names


#: ``ASCENDC_TPL_DATATYPE_DECL`` names -> the element types they stand for
_C_DT = {"C_DT_FLOAT": "float", "C_DT_FLOAT16": "half", "C_DT_BF16": "bfloat16_t", "C_DT_INT8": "int8_t",
         "C_DT_UINT8": "uint8_t", "C_DT_INT16": "int16_t", "C_DT_UINT16": "uint16_t", "C_DT_INT32": "int32_t",
         "C_DT_UINT32": "uint32_t", "C_DT_INT64": "int64_t", "C_DT_UINT64": "uint64_t", "C_DT_DOUBLE": "double",
         "C_DT_BOOL": "bool"}


def _declared(values: list[Any] | None, is_type: bool) -> list[Any] | None:
    """A template parameter's declared values: integers, or (a type parameter) numpy dtypes."""
    if not values or not is_type:
        return values
    return [DTYPE_OF[_C_DT[v]] for v in values if v in _C_DT]


def c_type_name(dt: Any) -> str:
    """The C++ name of a numpy dtype (``float16`` -> ``half``), for a ``DTYPE_<INPUT>`` macro."""
    npdt = np.dtype(dt)
    for name, d in DTYPE_OF.items():
        if d == npdt:
            return name
    raise ValueError(f"no AscendC element type for {npdt}")


def load_kernel(main: SourceFile, *, headers: Mapping[str, str] | None = None, defines: Mapping[str, Any] | None = None,
                entry: str | None = None, knobs: Mapping[str, str] | None = None,
                include_dirs: list[Path] | None = None, dtype_macros: Mapping[str, str] | None = None) -> CxxKernel:
    """Preprocess, parse and check ``main`` (cached by the text of every file, the defines and the knobs).
    ``dtype_macros`` (``{"dtype": "DTYPE_INPUT_GRADIENT"}``): launch keywords that pick the element type a macro
    is defined as; the kernel is preprocessed again per type (:meth:`CxxKernel.variant`)."""
    _register_sources(main, headers)
    defs = {k: (str(v) if not isinstance(v, bool) else ("1" if v else "0")) for k, v in (defines or {}).items()}
    options = (tuple(sorted(defs.items())), entry, tuple(sorted((knobs or {}).items())),
               tuple(sorted((dtype_macros or {}).items())), tuple(map(str, include_dirs or ())))
    quick = (main.name, hashlib.sha256(main.text.encode()).hexdigest(),
             tuple(sorted((k, hashlib.sha256(v.encode()).hexdigest()) for k, v in (headers or {}).items())), options)
    with _CACHE_LOCK:
        seen = _QUICK.get(quick)
    if seen is not None and all(_stat(path) == stat for path, stat in seen[1]):
        return seen[0]                         # no file changed since: no need to preprocess again
    pre = preprocess(main, defs, include_dirs, dict(headers or {}))
    sources = [u.source for u in pre.units]
    digest = hashlib.sha256()
    for s in sources:
        digest.update(s.name.encode() + b"\0" + s.text.encode() + b"\0")
    key = (digest.hexdigest(), *options)
    stats = [(s.name, _stat(s.name)) for s in sources if not s.name.startswith("<")]
    with _CACHE_LOCK:
        hit = _CACHE.get(key)
        if hit is not None:
            _CACHE.move_to_end(key)
            _QUICK[quick] = (hit, stats)
            return hit
    for s in sources:
        C_SOURCE_FILES.add(s.name)
    if entry is None:
        entry = _pick_entry(_entries(sources), main.name)
    trees = []
    for unit in pre.units:
        trees.append((unit, parse(unit.text)))
    build = {"main": main, "headers": headers, "defines": defines, "entry": entry, "knobs": knobs,
             "include_dirs": include_dirs, "dtype_macros": dtype_macros}
    kernel = CxxKernel(pre, trees, entry, knobs or {}, sources, build)
    kernel.check()
    _remember(key, quick, kernel, stats)
    return kernel


def _register_sources(main: SourceFile, headers: Mapping[str, str] | None) -> None:
    """Make the kernel's files known: a file on disk is recorded as C++ (the trace asks whether a frame is C++);
    an in-memory file or header goes into ``linecache`` so that its lines can be shown."""
    if not main.name.startswith("<"):
        C_SOURCE_FILES.add(main.name)
    else:
        linecache.cache[main.name] = (len(main.text), None, main.text.splitlines(keepends=True), main.name)
    for name, text in (headers or {}).items():
        linecache.cache[name] = (len(text), None, text.splitlines(keepends=True), name)


def _pick_entry(names: list[str], main_name: str) -> str:
    """The kernel entry when ``entry=`` is not given: the only ``__global__`` function, or of several the one the
    main file is named after; none, or several with no such name, is a compile error saying what to write."""
    if not names:
        raise KernelCompileError("no kernel entry: a kernel needs a __global__ __aicore__ function",
                                 Where(main_name, 1, 1),
                                 'write extern "C" __global__ __aicore__ void my_kernel(GM_ADDR x, ..., '
                                 "GM_ADDR workspace, GM_ADDR tiling)")
    if len(names) == 1:
        return names[0]
    stem = Path(main_name).stem
    entry = next((n for n in names if n == stem or stem.startswith(n)), None)
    if entry is None:
        raise KernelCompileError(f"several kernel entries ({', '.join(names)}): say which with entry=")
    return entry


def _remember(key: tuple[Any, ...], quick: tuple[Any, ...], kernel: CxxKernel, stats: list[Any]) -> None:
    """Cache a checked kernel by its preprocessed text (``key``) and by its inputs' text (``quick``), each an LRU
    of bounded size (a session edits and reloads a kernel many times)."""
    with _CACHE_LOCK:
        _CACHE[key] = kernel
        _QUICK[quick] = (kernel, stats)
        while len(_CACHE) > 64:
            _CACHE.popitem(last=False)
        while len(_QUICK) > 256:
            _QUICK.popitem(last=False)


def _stat(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size

