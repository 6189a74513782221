"""Lab 5 -- the UB plan and CopyIn / Compute / CopyOut of an elementwise kernel, LeakyReluGrad, in AscendC C++.

The learner's kernel is C++ in a ``%%ascendc KernelLeakyReluGrad`` cell of the notebook (compiled by the package's
C++ front end, ``ascend_lab.ascendc.cxx``), in the style of the package's HardSigmoidGrad kernel
(``ops/hard_sigmoid_grad/op_kernel/experimental/arch35/hard_sigmoid_grad.h``)::

    template <typename T> class KernelLeakyReluGrad {
        bool Init(gradOutput, self, gradInput, td);   // given: this core's GM slices; TODO the UB plan (InitBuffer)
        void Process();                               // given: the tile loop
        void CopyIn(i, n);                            // TODO  MTE2: GM -> UB, EnQue
        void Compute(n);                              // TODO  V: DeQue, the select, EnQue, FreeTensor
        void CopyOut(i, n);                           // TODO  MTE3: DeQue, UB -> GM, FreeTensor
    };
    template <typename D_T> __global__ __aicore__ void leaky_relu_grad(...)   // given: D_T = float or half

computing ``gradInput = self > 0 ? gradOutput : gradOutput * negative_slope`` for float32 and float16,
every instruction rounding to T (so float16 computes ``grad * half(slope)`` in half). From C++ only the AscendC
API is at hand: no numpy write into a tensor, no call into the kit. The tiling struct is
``labs/leaky_relu_grad_tiling.h``.

The checker launches the compiled kernel on the simulator (:func:`launch_kernel`, ``D_T`` = the input's dtype) with the
lab's host tiling (:func:`tiling`, HardSigmoidGrad's scheme: ``blockFactor`` elements per core, tiles of
``ubFactor``), over a battery of sizes with tails, one core and many, both dtypes and every SoC, and compares the
result bit for bit with :func:`oracle`, plain numpy (``np.where`` over arrays of T, which round every product to
T) that shares no code with the simulator's instructions. It also looks at the instruction stream (the kernel must
issue ``Muls``, ``CompareScalar`` and ``Select``: :func:`instruction_case`), compares the UB plan the kernel lays
out with the plan the tiling budgets, and reads the trace of a run with many tiles for the overlap of copy-in and
compute that the plan exists for. A Python class handed in is refused: the lab's kernel is C++.

This module also holds the plumbing every kernel lab (5-8) shares: device memory for numpy arrays, a
launcher that turns the sanitizer's tolerated-but-wrong findings into errors (:data:`STRICT`), input
generators, a compare that names the core/tile and the inputs of the first wrong element, a summary of
a :class:`~ascend_lab.ascendc.KernelRun`, :class:`KernelReport`, a report that can show figures, and
:class:`SocLimits`, the rule for SoCs whose AscendC API lacks an instruction the lab kernels use.

SoCs without the instructions (kernel_flavours §6; AD ``Compares.md``, ``Select.md``): the AscendC API of
Atlas training (Ascend910A, DAV_1001) has no ``CompareScalar`` and offers ``Select`` in mode 0 only. The
labs keep that SoC in their batteries as a lesson rather than leaving it out: there a kernel written with
those instructions must be stopped by the sanitizer with ``unsupported-on-soc`` (on a device it would not
build), and a kernel that avoids them must compute every bit right. CANN itself runs its built-in TBE
kernels on that SoC, which compile the compare-and-select to the vector unit's own instructions.
"""

from __future__ import annotations

import base64
import dataclasses
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ascend_lab import standalone
from ascend_lab.ascendc import KernelError, KernelRun, launch, reserved_ub_bytes
from ascend_lab.base import platform
from ascend_lab.base.platform import NpuArch, SocInfo
from ascend_lab.dtypes import as_acl_dtype, to_numpy
from ascend_lab.opdev.tiling_data import TilingData, TilingError, ceil_div, float32, floor_align, int64
from ascend_lab.ops.common.kernel_args import gm_from_array
from ascend_lab.ops.hard_sigmoid_grad import op_host as hsg_host

from .checker import Case, KernelFault, Report, answer_key, compare_arrays, locator, run_battery

__all__ = [
    "FUNCTION", "LIMITED_ARCHS", "KernelReport", "LeakyReluGradTilingData", "STRICT", "SocLimitStop", "SocLimits",
    "cases", "check", "compare_kernel_output", "compile_kernel", "cpp_calls", "cpp_lines", "describe_run",
    "instruction_case", "is_cxx", "launch_kernel", "limited_call", "limited_compare", "limited_hint", "oracle", "run",
    "sample", "show_limited", "strict_policy", "tiling", "usable_ub",
]

FUNCTION = "KernelLeakyReluGrad"
TITLE = "Lab 5 \u00b7 CopyIn / Compute / CopyOut of LeakyReluGrad"
DTYPES = ("float32", "float16")
SCH_MODE = {"float32": 0, "float16": 1}
REPEAT_BYTES = 256
SENTINEL = 0xFF            # the output is filled with 0xFF bytes before every launch ("never written")


# ==================================================================================================
# plumbing shared by the kernel labs (5-8)
# ==================================================================================================
#: Sanitizer findings the hardware tolerates (the simulator only records them as warnings) that the
#: labs treat as errors: in an elementwise kernel each of them means a wrong result somewhere.
STRICT = {
    "gm-padding": "the hardware would carry on, but a write past the end of a tensor overwrites whatever "
                  "lies next in global memory; copy exactly n elements with DataCopyPad",
    "partial-repeat": "the hardware would carry on, but the mask bits of the last elements keep stale values; "
                      "give CompareScalar a count rounded UP to whole 256-byte repeats",
    "ub-overrun": "the hardware would carry on, but the instruction touches UB outside its buffer",
}


def usable_ub(soc: SocInfo) -> int:
    """The UB bytes a kernel may plan with on ``soc``: the UB minus what the AscendC library reserves."""
    return soc.ub_size - reserved_ub_bytes(soc)


def strict_policy(w: Any) -> str | None:
    """The labs' ``strict`` policy for ``launch``: a :data:`STRICT` finding stops the kernel with a
    KernelError at the instruction that made it, so the report shows the learner's line (reads past the end
    of an input are left alone: they change nothing an elementwise kernel writes)."""
    if w.kind in STRICT and not (w.kind == "gm-padding" and w.message.startswith("reads")):
        return STRICT[w.kind]
    return None


def launch_kernel(entry: Callable[..., None], td: TilingData, inputs: Sequence[np.ndarray], out_dtype: Any,
                  soc: SocInfo, *, names: Sequence[str] = ("gradOutput", "self", "gradInput"), record: bool = False,
                  cores: Sequence[int] | None = None, reverse: bool = True, strict: bool = True,
                  **template: Any) -> tuple[KernelRun, np.ndarray]:
    """Launch ``entry`` on ``td.blockDim`` simulated cores of ``soc`` with ``inputs`` (flat numpy arrays)
    and an output of ``out_dtype`` pre-filled with 0xFF bytes; returns ``(run, output)``.

    The cores run last to first (``reverse``), so a core that writes past its own share overwrites a
    neighbour that has already finished: the result shows it. ``strict`` makes the :data:`STRICT`
    warnings errors (:func:`strict_policy`). ``template`` goes to the entry as keyword arguments (as
    ``launch`` does)."""
    n = int(inputs[0].size)
    out_dt = np.dtype(out_dtype)
    args = [gm_from_array(a, name) for a, name in zip(inputs, names, strict=False)]
    args.append(gm_from_array(None, names[len(inputs)], nbytes=n * out_dt.itemsize, fill=SENTINEL))
    order = cores if cores is not None else (list(range(td.blockDim))[::-1] if reverse else None)
    run = launch(entry, td.blockDim, args, td.to_bytes(), soc, outputs=(len(args) - 1,), record=record,
                 tiling_data=td, cores=order, kernel_name=template.pop("kernel_name", None),
                 strict=strict_policy if strict else None, **template)
    layout = next(iter(run.trace.ub_layout.values()), [])
    blocks = [b.name for b in layout if b.kind in ("VECIN", "VECOUT")]
    if blocks:
        queues = {name.rsplit("[", 1)[0] for name in blocks}
        run.trace.meta["bufferNum"] = max(sum(1 for b in blocks if b.rsplit("[", 1)[0] == q) for q in queues)
    out = args[-1].ptr.allocation.buffer[:n * out_dt.itemsize].view(out_dt).copy()
    return run, out


def sample(n: int, dtype: Any, seed: int, lo: float = -4.0, hi: float = 4.0, edges: Sequence[float] = (),
           specials: bool = True) -> np.ndarray:
    """``n`` deterministic values of ``dtype``: uniform in [lo, hi), with every value of ``edges`` (the
    kernel's decision boundaries) and, when ``specials``, +-0, +-inf and NaN sprinkled at fixed places."""
    rng = np.random.default_rng(seed)
    values = rng.uniform(lo, hi, n)
    extra = list(edges) + ([0.0, -0.0, np.inf, -np.inf, np.nan] if specials else [])
    if extra and n:
        where = rng.choice(n, min(n, 4 * len(extra)), replace=False)     # distinct places, drawn in O(k)
        values[where] = np.resize(np.array(extra, dtype=np.float64), where.size)
    with np.errstate(all="ignore"):
        return values.astype(to_numpy(as_acl_dtype(dtype)))


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


def _value(a: np.ndarray, i: int) -> str:
    """Element ``i`` as numpy's shortest text (``0.001`` for half 0.0010004...)."""
    return str(a.reshape(-1)[i])


def _exact(a: np.ndarray, i: int) -> str:
    """Element ``i`` with its exact value, so a rounded threshold is visible (``0.0010004043579101562``)."""
    v = a.reshape(-1)[i]
    if a.dtype.kind == "f" or a.dtype.name == "bfloat16":
        exact = repr(float(v))
        return exact if exact == str(v) or not np.isfinite(float(v)) else f"{str(v)} (exactly {exact})"
    return str(v)


def compare_kernel_output(inputs: dict[str, np.ndarray], locate: Callable[[int], str] | None = None
                          ) -> Callable[[Any, Any], str | None]:
    """A ``Case.compare`` for kernel outputs: bit-exact, the first wrong element located by core and tile,
    the inputs at that element, and "never written" when it still holds the 0xFF fill."""
    def compare(expected: Any, got: Any) -> str | None:
        why = compare_arrays(expected, got, locate=locate)
        if not why or not isinstance(got, np.ndarray) or got.shape != np.shape(expected):
            return why
        e, g = np.asarray(expected).reshape(-1), got.reshape(-1)
        first = int(np.flatnonzero(_bits(e) != _bits(g))[0])
        there = ", ".join(f"{k}[{first}] = {_exact(v, first)}" for k, v in inputs.items())
        why += f"\ninputs there: {there}"
        if int(_bits(g)[first]) == int.from_bytes(bytes([SENTINEL]) * g.dtype.itemsize, "little"):
            why += ("\nthat element still holds the 0xFF.. bytes the output was filled with before the launch: "
                    "no core wrote it")
        return why
    return compare


def show_array(a: Any) -> str:
    """A short text for an array in a report (``float32[1000]: [0.5, -0.01, ...]``)."""
    if not isinstance(a, np.ndarray):
        return repr(a)
    flat = a.reshape(-1)
    head = ", ".join(_value(flat, i) for i in range(min(4, flat.size)))
    return f"{a.dtype}{list(a.shape)}: [{head}{', ...' if flat.size > 4 else ''}]"


def describe_run(run: KernelRun, td: Any, n: int, dtype: Any, tile_field: str = "ubFactor") -> list[str]:
    """Summary lines for a recorded run: blockDim, tiles, cycles, UB use and pipe busy time of core 0."""
    dt = as_acl_dtype(dtype).short
    info = platform.get_soc(run.trace.soc) if isinstance(run.trace.soc, str) else run.trace.soc
    tile = getattr(td, tile_field)
    ranges = hsg_host.core_ranges(td) if hasattr(td, "blockFactor") else []
    tiles = max((r["tile_num"] for r in ranges), default=0)
    layout = run.trace.ub_layout.get(0) or next(iter(run.trace.ub_layout.values()), [])
    used = max((b.offset + b.size for b in layout), default=0)
    core0 = next((c for c in run.trace.cores if c.core == 0), run.trace.cores[0])
    busy = ", ".join(f"{p} {core0.busy[p]:,.0f}" for p in ("MTE2", "V", "MTE3"))
    return [
        f"N = {n:,} {dt} on {info.name}: blockDim {td.blockDim}, {tile_field} {tile:,}, up to {tiles} tile"
        f"{'s' if tiles != 1 else ''} per core",
        f"your kernel: {run.cycles:,.0f} cycles ({run.microseconds:,.2f} us, launch head included); "
        f"core 0 {core0.cycles:,.0f} cycles, busy {busy}; {core0.instructions} instructions",
        f"UB of core 0: {used:,} B of {usable_ub(info):,} B usable in {len(layout)} buffers "
        f"({', '.join(b.name for b in layout[:8])}{', ...' if len(layout) > 8 else ''}); "
        f"{len(run.warnings)} sanitizer warning{'s' if len(run.warnings) != 1 else ''}",
    ]


@dataclasses.dataclass
class KernelReport(Report):
    """A :class:`~labkit.checker.Report` that, when it passed, also shows figures of the
    learner's kernel in Jupyter and in the book (``figures`` returns ``(caption, Figure)`` pairs and is
    only called when the report is displayed as HTML)."""

    figures: Callable[[], list[tuple[str, Any]]] | None = None

    @classmethod
    def of(cls, report: Report, figures: Callable[[], list[tuple[str, Any]]] | None) -> KernelReport:
        values = {f.name: getattr(report, f.name) for f in dataclasses.fields(Report)}
        return cls(**values, figures=figures if report.passed else None)

    def figure_list(self) -> list[tuple[str, Any]]:
        return list(self.figures()) if self.figures is not None else []

    def _repr_html_(self) -> str:
        text = super()._repr_html_()
        if not self.passed or self.figures is None:
            return text
        from ascend_lab.viz import png_bytes
        images = []
        for caption, fig in self.figure_list():
            data = base64.b64encode(png_bytes(fig, compact=True)).decode("ascii")
            images.append(f"<figure style='margin:0.6em 0'><img style='max-width:100%' alt='{caption}' "
                          f"src='data:image/png;base64,{data}'/><figcaption style='font-size:0.85em'>{caption}"
                          "</figcaption></figure>")
        return text[: -len("</div>")] + "".join(images) + "</div>"


def _same(fn: Any) -> Any:
    return fn


# --------------------------------------------------------------------------------------------------
# SoCs whose AscendC API lacks an instruction the lab kernels use
# --------------------------------------------------------------------------------------------------
#: Architectures whose AscendC API lacks instructions the lab kernels use (kernel_flavours §6; AD
#: ``API/Memory矢量计算/比较与选择/{Compares,Select}.md``): what is missing, and the calls a kernel must avoid.
LIMITED_ARCHS = {
    NpuArch.DAV_1001: ("the AscendC API of Atlas training (Ascend910A) has no CompareScalar and offers Select in "
                       "mode 0 only", "CompareScalar or Select in mode 1 or 2"),
}
_FINDING = "unsupported-on-soc"


@dataclasses.dataclass(frozen=True)
class SocLimitStop:
    """What a kernel case on a SoC of :data:`LIMITED_ARCHS` returns when the sanitizer stops the kernel with
    ``unsupported-on-soc``: an accepted outcome there (the kernel asks for an instruction the SoC lacks)."""

    soc: str
    fault: KernelFault

    def __str__(self) -> str:
        return f"stopped on {self.soc}: {self.fault}"


class SocLimits:
    """The outcomes of one battery on SoCs of :data:`LIMITED_ARCHS`, for the report's summary."""

    def __init__(self) -> None:
        self.stopped: dict[str, KernelFault] = {}
        self.computed: set[str] = set()
        self.api: dict[str, str] = {}          # SoC -> what phase 2 of an aclnn call logged when it stopped

    @staticmethod
    def lacks(soc: SocInfo) -> str | None:
        """What ``soc``'s AscendC API lacks, or None."""
        entry = LIMITED_ARCHS.get(soc.npu_arch)
        return entry[0] if entry else None

    def lines(self) -> list[str]:
        """One summary line per limited SoC the battery ran on."""
        out = []
        for soc, fault in self.stopped.items():
            lacks = LIMITED_ARCHS[platform.get_soc(soc).npu_arch][0]
            out.append(f"{soc}: the sanitizer stopped your kernel at {fault.instruction} [{fault.kind}], as it must: "
                       f"{lacks}, so this kernel cannot be built for it. A stock CANN install runs its built-in TBE "
                       "kernels there, which compile the compare and select to the vector unit's own instructions")
        for soc, message in self.api.items():
            out.append(f"{soc}, through the aclnn API: phase 2 returned ACLNN_ERR_RUNTIME_ERROR (361001) and logged "
                       f"{message!r}")
        for soc in sorted(self.computed - set(self.stopped)):
            out.append(f"{soc}: your kernel does without {LIMITED_ARCHS[platform.get_soc(soc).npu_arch][1]}, which "
                       f"{soc} lacks, and computed every bit right")
        return out


def limited_hint(soc: SocInfo, hint: str | Callable[[Any], str]) -> str | Callable[[Any], str]:
    """A case's hint on a SoC of :data:`LIMITED_ARCHS`: what it lacks and what the case accepts, then ``hint``
    (a sentence, or a function of the learner's code making one)."""
    if SocLimits.lacks(soc) is None:
        return hint
    if callable(hint):
        return lambda fn: limited_hint(soc, hint(fn))  # type: ignore[return-value]
    lacks, calls = LIMITED_ARCHS[soc.npu_arch]
    return (f"{lacks} (AscendC's Compares and Select pages): on {soc.name} a kernel that calls {calls} must be "
            f"stopped with [{_FINDING}], and one that does without them must compute every bit right"
            + (f"; {hint}" if hint else ""))


def limited_call(call: Callable[[Any, dict[str, Any]], Any], soc: SocInfo,
                 limits: SocLimits | None = None) -> Callable[[Any, dict[str, Any]], Any]:
    """Wrap a kernel case's ``call``: on a SoC of :data:`LIMITED_ARCHS` an ``unsupported-on-soc`` stop becomes
    a :class:`SocLimitStop` result (recorded in ``limits``); anywhere else, or for any other stop, the
    KernelError propagates as before."""
    if SocLimits.lacks(soc) is None:
        return call

    def wrapped(fn: Any, inputs: dict[str, Any]) -> Any:
        try:
            result = call(fn, inputs)
        except KernelError as err:
            if err.kind != _FINDING:
                raise
            fault = KernelFault.from_error(err)
            if limits is not None:
                limits.stopped.setdefault(soc.name, fault)
            return SocLimitStop(soc.name, fault)
        if limits is not None:
            limits.computed.add(soc.name)
        return result

    return wrapped


def limited_compare(compare: Callable[[Any, Any], str | None]) -> Callable[[Any, Any], str | None]:
    """A ``Case.compare`` that accepts a :class:`SocLimitStop` (only :func:`limited_call` returns one) and
    otherwise compares as ``compare`` does."""
    def wrapped(expected: Any, got: Any) -> str | None:
        return None if isinstance(got, SocLimitStop) else compare(expected, got)
    return wrapped


def show_limited(value: Any) -> str:
    """``show_array``, or the stop a :class:`SocLimitStop` records."""
    return str(value) if isinstance(value, SocLimitStop) else show_array(value)


def kernel_case(name: str, covers: Iterable[str], *, entry: Callable[..., None] | None, td: TilingData,
                arrays: dict[str, np.ndarray], expected: np.ndarray, soc: SocInfo, show: dict[str, Any],
                hint: str | Callable[[Any], str] = "", template: dict[str, Any] | None = None,
                pick: Callable[[Any], Any] = _same, limits: SocLimits | None = None) -> Case:
    """One kernel case: launch ``entry`` on ``arrays`` with ``kernel=pick(fn)`` (``fn`` is what the learner
    passed to ``check``: the kernel class, or a function handing over several pieces) -- or, with ``entry=None``,
    launch ``pick(fn)`` itself (the learner's compiled C++ kernel) with ``template`` -- and compare with
    ``expected``. On a SoC of :data:`LIMITED_ARCHS` an ``unsupported-on-soc`` stop is accepted as well
    (recorded in ``limits`` for the summary); every other stop, and every wrong bit, still fails."""
    template = dict(template or {})
    locate = locator(hsg_host.core_ranges(td)) if hasattr(td, "blockFactor") else None

    def call(fn: Any, _inputs: dict[str, Any]) -> np.ndarray:
        if entry is None:            # the learner's kernel is the entry (a C++ kernel, compiled)
            _, out = launch_kernel(pick(fn), td, list(arrays.values()), expected.dtype, soc, **template)
        else:
            _, out = launch_kernel(entry, td, list(arrays.values()), expected.dtype, soc, kernel=pick(fn), **template)
        return out

    return Case(name, show, expected, covers=tuple(covers), hint=limited_hint(soc, hint),
                call=limited_call(call, soc, limits), compare=limited_compare(compare_kernel_output(arrays, locate)),
                show=show_limited)


# ==================================================================================================
# Lab 5: the LeakyReluGrad kernel's host side (given) and the oracle
# ==================================================================================================
class LeakyReluGradTilingData(TilingData):
    """``LeakyReluGradTilingData`` (3 x int64 + 1 x float, padded to 32 bytes), HardSigmoidGrad's layout."""

    totalLength: int64
    blockFactor: int64
    ubFactor: int64
    negativeSlope: float32


#: UB slots of T per element of a tile (what they are for is the learner's first decision).
UB_SLOTS = 7


def tiling(total_length: int, dtype: Any, core_num: int, ub_size: int,
           negative_slope: float = 0.01) -> LeakyReluGradTilingData:
    """The lab's host tiling (given): ``blockFactor = CeilDiv(N, coreNum)``, ``blockDim = CeilDiv(N,
    blockFactor)``, ``ubFactor = FloorAlign((ub_size // sizeof(T)) // 7, 256 // sizeof(T))``: 7 slots of T
    per element, whole 256-byte repeats. ``ub_size`` is the usable UB (:func:`usable_ub`). tilingKey 0
    float32, 1 float16."""
    dt = as_acl_dtype(dtype).short
    if dt not in DTYPES:
        raise TilingError(f"LeakyReluGrad has no {dt} kernel; use float32 or float16")
    if core_num <= 0 or total_length <= 0:
        raise TilingError(f"nothing to tile: total_length {total_length}, core_num {core_num}")
    size = to_numpy(as_acl_dtype(dt)).itemsize
    block_factor = ceil_div(total_length, core_num)
    ub_factor = floor_align((ub_size // size) // UB_SLOTS, REPEAT_BYTES // size)
    if ub_factor <= 0:
        raise TilingError(f"ub_size {ub_size} B is too small for one 256-byte repeat per buffer")
    return LeakyReluGradTilingData(totalLength=total_length, blockFactor=block_factor, ubFactor=ub_factor,
                                   negativeSlope=negative_slope, blockDim=ceil_div(total_length, block_factor),
                                   tilingKey=SCH_MODE[dt])


#: Where ``#include "leaky_relu_grad_tiling.h"`` is found: the lab's folder (a notebook's working folder).
LAB_DIR = Path(__file__).resolve().parent.parent
#: The C++ reference solutions of the kernel labs (spoilers; ``labkit.solutions`` compiles them).
REFERENCE_DIR = Path(__file__).resolve().parent / "reference"


def compile_kernel(source: str | Path, name: str | None = None) -> Any:
    """Compile a lab kernel's C++ (a path or the text of a ``%%ascendc`` cell) as the cell magic does, with the
    lab's folder on the include path; returns the :class:`~ascend_lab.ascendc.cxx.CxxKernel`."""
    from ascend_lab.ascendc import cxx

    return cxx.compile(source, include_dirs=[LAB_DIR], **({"name": name} if name else {}))


def is_cxx(kernel: Any) -> bool:
    """Is ``kernel`` a compiled C++ kernel (``%%ascendc``, ``cxx.compile``)?"""
    from ascend_lab.ascendc.cxx import CxxKernel

    return isinstance(kernel, CxxKernel)


def cpp_lines(kernel: Any, needles: Sequence[str]) -> list[str]:
    """``"<file>, line N: code"`` of every line of the learner's C++ (its main file) holding one of ``needles``,
    comments left out: the lines a report quotes (none of a reference solution's file)."""
    if not is_cxx(kernel) or not kernel.sources:
        return []
    src = kernel.sources[-1]
    if str(src.name).startswith(str(REFERENCE_DIR)):
        return []                    # a reference's lines are never quoted to a learner
    out = []
    for number, text in enumerate(src.text.splitlines(), 1):
        code = text.split("//", 1)[0]
        if any(needle in code for needle in needles):
            out.append(f"{src.name}, line {number}: {text.strip()}")
    return out


def _strip_comments(text: str) -> str:
    return re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.S)


def cpp_function_body(kernel: Any, name: str) -> str | None:
    """The body of the learner's C++ member function ``name`` (its definition, comments stripped), or None."""
    if not is_cxx(kernel) or not kernel.sources:
        return None
    text = _strip_comments(kernel.sources[-1].text)
    for m in re.finditer(rf"\b{name}\s*\([^;{{}}]*\)\s*(?:const\s*)?\{{", text):
        depth, i = 1, m.end()
        while depth and i < len(text):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        return text[m.end(): i - 1]
    return None


def cpp_calls(kernel: Any, name: str) -> set[str] | None:
    """The names the learner's C++ function ``name`` calls (``q.EnQue(x)`` -> "EnQue"), or None."""
    body = cpp_function_body(kernel, name)
    if body is None:
        return None
    return set(re.findall(r"\b([A-Za-z_]\w*)\s*(?:<[^;()<>]*>)?\s*\(", body))


@answer_key
def oracle(grad: np.ndarray, x: np.ndarray, negative_slope: float) -> np.ndarray:
    """``x > 0 ? grad : grad * T(slope)`` in plain numpy: T(slope) is the tiling's C float converted to T,
    and numpy rounds the product of two T arrays to T, as ``Muls`` does."""
    t = grad.dtype.type
    slope = t(np.float32(negative_slope))
    with np.errstate(all="ignore"):
        return np.where(x > 0, grad, grad * slope)


def run(kernel: Any, n: int = 4096, dtype: Any = "float32", soc: str | SocInfo = "Ascend910B4", *,
        core_num: int | None = None, tiling_ub: int | None = None, negative_slope: float = 0.01, seed: int = 0,
        record: bool = True, cores: Sequence[int] | None = None) -> tuple[KernelRun, np.ndarray]:
    """Launch ``kernel`` (your C++ kernel, from the ``%%ascendc`` cell) once on ``n`` elements and return
    ``(run, output)`` -- for figures: ``viz.plot_pipeline(run)``. ``tiling_ub`` tiles for a smaller UB (more,
    smaller tiles)."""
    info = standalone.make_soc(soc, core_num)
    dt = as_acl_dtype(dtype).short
    td = tiling(n, dt, info.vector_core_num, tiling_ub or usable_ub(info), negative_slope)
    g, x = sample(n, dt, seed, -2, 2, specials=False), sample(n, dt, seed + 1, specials=False)
    return launch_kernel(kernel, td, [g, x], g.dtype, info, record=record, reverse=False, cores=cores,
                         strict=False, D_T=g.dtype, kernel_name="LeakyReluGrad")


# ==================================================================================================
# the battery
# ==================================================================================================
#: What each stage of the kernel must call for the queues to carry a tile through: (call, why it is needed).
#: The first case's hint names the first one missing from the learner's stages, not the whole recipe.
_STAGE_CALLS = {
    "CopyIn": (("AllocTensor", "a stage that fills a UB block takes one from its queue first"),
               ("DataCopy", "this is the stage that moves the tile from GM into UB"),
               ("EnQue", "the next stage's DeQue waits for the block this stage hands on")),
    "Compute": (("DeQue", "a stage reads a block only after taking it from the stage before"),
                ("AllocTensor", "the result needs a block of its own, taken from the output queue"),
                ("EnQue", "the next stage's DeQue waits for the block this stage hands on"),
                ("FreeTensor", "a block read for the last time goes back to its queue, or the next tile finds "
                               "none free")),
    "CopyOut": (("DeQue", "a stage reads a block only after taking it from the stage before"),
                ("DataCopy", "this is the stage that moves the result from UB to GM"),
                ("FreeTensor", "a block read for the last time goes back to its queue, or the next tile finds "
                               "none free")),
}


def stage_hint(kernel: Any) -> str:
    """The first case's hint: the first call missing from one of the learner's C++ stages and what it is for
    (``DataCopy`` counts as present for ``DataCopyPad``), read from the code, not the comments; a pointer at the
    idea, not the recipe."""
    for stage, calls in _STAGE_CALLS.items():
        names = cpp_calls(kernel, stage)
        if names is None:
            continue
        for call, why in calls:
            if not any(name.startswith(call) for name in names):
                line = next(iter(cpp_lines(kernel, (f"void {stage}(",))), "")
                return f"{stage} has no {call}: {why}" + (f" ({line})" if line else "")
    return ("each stage makes the queue calls it needs; compare the first wrong element and its inputs with the "
            "formula, and look at the values Compute's vector instructions produce (viz.step_kernel)")


_HINTS = {
    "stages": stage_hint,
    "multi": "several tiles per core: every tile needs its own AllocTensor/EnQue/DeQue/FreeTensor, and tile i "
             "starts at element i * ubFactor of the core's GlobalTensors",
    "tail": "the last tile of a core is shorter (n < ubFactor): copy n elements (n * sizeof(T) bytes with "
            "DataCopyPad), and round CompareScalar's count up to whole 256-byte repeats",
    "special": "x > 0 is false for -0.0 and NaN: those take grad * slope; Select copies bits, so -0.0 and "
               "NaN in grad must come through unchanged",
}


def _case(name: str, covers: list[str], n: int, dtype: str, soc: str, *, core_num: int | None = None,
          tiling_ub: int | None = None, slope: float = 0.01, seed: int = 0, hint: str | Callable[[Any], str] = "",
          limits: SocLimits | None = None) -> Case:
    info = standalone.make_soc(soc, core_num)
    td = tiling(n, dtype, info.vector_core_num, tiling_ub or usable_ub(info), slope)
    g = sample(n, dtype, seed, -2.0, 2.0)
    x = sample(n, dtype, seed + 1, edges=(0.0, -0.0, 1e-7))
    shown = {"N": n, "dtype": dtype, "soc": info.name, "cores": info.vector_core_num,
             "tiling": f"blockFactor {td.blockFactor}, ubFactor {td.ubFactor}, blockDim {td.blockDim}",
             "negative_slope": slope, "data": f"sample(seed {seed}): uniform values with 0, -0, +-inf, NaN"}
    return kernel_case(name, covers, entry=None, td=td, arrays={"grad": g, "self": x},
                       expected=oracle(g, x, slope), soc=info, show=shown, hint=hint,
                       template={"D_T": g.dtype, "kernel_name": "LeakyReluGrad"}, limits=limits)


def queue_plan(layout: Sequence[Any]) -> dict[str, tuple[str, int, int]]:
    """``{queue: (kind, blocks, bytes per block)}`` of the TQue blocks of one core's UB layout."""
    plan: dict[str, tuple[str, int, int]] = {}
    for b in layout:
        if b.kind in ("VECIN", "VECOUT"):
            q = b.name.rsplit("[", 1)[0]
            _, blocks, size = plan.get(q, (b.kind, 0, 0))
            plan[q] = (b.kind, blocks + 1, max(size, b.size))
    return plan


def _plan_case(dtype: str, soc: str) -> Case:
    """The UB plan Init lays out, for 100000 elements on ``soc``: the double-buffered plan the tiling budgets."""
    info = platform.get_soc(soc)
    n = 100_000
    td = tiling(n, dtype, info.vector_core_num, usable_ub(info))
    size = to_numpy(as_acl_dtype(dtype)).itemsize
    block = -(-td.ubFactor * size // 32) * 32

    def call(fn: Any, _inputs: dict[str, Any]) -> dict[str, Any]:
        args = [np.zeros(n, to_numpy(as_acl_dtype(dtype)))] * 2
        planned = launch(fn, td.blockDim, [gm_from_array(a, name) for a, name in
                                           zip(args, ("gradOutput", "self"), strict=True)]
                         + [gm_from_array(None, "gradInput", nbytes=n * size)], td.to_bytes(), info, outputs=(2,),
                         cores=[0], plan_only=True, D_T=args[0].dtype)
        layout = planned.trace.ub_layout.get(0, [])
        return {"queues": queue_plan(layout), "used": max((b.offset + b.size for b in layout), default=0),
                "calc": {b.name: b.size for b in layout if b.kind == "VECCALC"},
                "where": where(fn)}

    def where(fn: Any) -> str:
        lines = cpp_lines(fn, ("InitBuffer",))
        return ("\nyour plan: " + "\n           ".join(lines)) if lines else ""

    mask_need = max(32, ceil_div(ceil_div(td.ubFactor, 8), 32) * 32)    # one bit per element, whole 32-byte blocks

    def _mask_problem(calc: dict[str, int]) -> str | None:
        if not calc:
            return (f"your Init lays out no buffer for the mask: CompareScalar writes one bit per element of a tile, "
                    f"{td.ubFactor} elements here = {mask_need} B (ceil(ubFactor / 8), rounded up to whole 32-byte "
                    "blocks); InitBuffer a TBuf for it")
        if max(calc.values()) < mask_need:
            sizes = ", ".join(f"{name} {size} B" for name, size in calc.items())
            return (f"your mask buffer is too small for a full tile: {sizes}, but a tile of ubFactor = {td.ubFactor} "
                    f"elements needs {mask_need} B of mask (one bit per element = ceil(ubFactor / 8) B, rounded up to "
                    "whole 32-byte blocks). Size maskBuf from ubFactor, not from a fixed number: a short tile "
                    "needs less, so smaller inputs do not show it")
        return None

    def compare(_exp: Any, got: Any) -> str | None:
        why = _plan_problem(got["queues"]) or _mask_problem(got.get("calc", {}))
        return why if why is None else why + got["where"]

    def _plan_problem(queues: dict[str, tuple[str, int, int]]) -> str | None:
        if not queues:
            return "your Init lays out no queue blocks: InitBuffer each TQue with its blocks and their BYTES"
        ins = [q for q, (kind, _, _) in queues.items() if kind == "VECIN"]
        outs = [q for q, (kind, _, _) in queues.items() if kind == "VECOUT"]
        if len(ins) < 2 or not outs:
            return (f"your plan has {len(ins)} VECIN and {len(outs)} VECOUT queue(s); the kernel copies two tensors "
                    "in and one out, each through its own queue")
        single = [q for q, (_, blocks, _) in queues.items() if blocks == 1]
        if single:
            return (f"{', '.join(single)}: 1 block per queue. The tiling budgets {UB_SLOTS} slots of T per element "
                    f"(ubFactor {td.ubFactor} = usable UB / sizeof(T) / {UB_SLOTS}); count which of your buffers "
                    "take a slot each, and you will find slots your plan leaves empty. With one block a queue cannot "
                    "take tile i + 1 while V still holds tile i, so MTE2 waits for V and V waits for MTE2. Give "
                    "every queue the blocks the tiling paid for")
        wrong = [f"{q} {blocks} x {bytes_} B" for q, (_, blocks, bytes_) in queues.items()
                 if blocks != 2 or bytes_ < block]
        if wrong:
            return (f"{', '.join(wrong)}: the tiling plans 2 blocks of ubFactor x sizeof(T) = {td.ubFactor} x {size} "
                    f"= {block} B per queue (InitBuffer takes BYTES; a tile is ubFactor elements)")
        return None

    def show(got: Any) -> str:
        if not isinstance(got, dict):
            return str(got)
        return (", ".join(f"{q} {b} x {s} B" for q, (_, b, s) in got["queues"].items()) or "no queue blocks") + \
            f"; {got['used']:,} B of UB laid out"

    return Case(f"the UB plan of your Init: 100000 {dtype} on {soc}", {"N": n, "dtype": dtype, "soc": soc,
                     "ubFactor": td.ubFactor}, "the queue blocks the tiling budgets (from ubFactor and its slots)",
                     covers=("topic:UB plan", f"dtype:{dtype}"), call=call, compare=compare, show=show,
                     hint="count the tiling's slots: which buffers of your kernel take a slot each?")


def overlap_of(trace: Any, core: int = 0) -> tuple[float, str]:
    """``(cycles, evidence)``: how long V on ``core`` computes one tile while MTE2 copies in another, and a
    sentence with the cycles of the first V tile and the next copy-in (the picture of no overlap)."""
    events = [e for e in trace.events if e.core == core and e.tile is not None]
    vector = np.array([(e.start, e.end, e.tile) for e in events if e.pipe == "V"], float).reshape(-1, 3)
    copy = np.array([(e.start, e.end, e.tile) for e in events if e.pipe == "MTE2"], float).reshape(-1, 3)
    if not len(vector) or not len(copy):
        return 0.0, "the trace has no V or no MTE2 events"
    inter = np.minimum(vector[:, None, 1], copy[None, :, 1]) - np.maximum(vector[:, None, 0], copy[None, :, 0])
    other = vector[:, None, 2] != copy[None, :, 2]
    cycles = float(np.where(other, np.clip(inter, 0.0, None), 0.0).sum())
    t = int(vector[0, 2])
    v_end = float(vector[vector[:, 2] == t, 1].max())
    nxt = copy[copy[:, 2] == t + 1]
    if not len(nxt):
        return cycles, f"V computes tile {t} until cycle {v_end:,.0f}; no copy-in of tile {t + 1} follows"
    return cycles, (f"V computes tile {t} until cycle {v_end:,.0f}, and MTE2 starts copying tile {t + 1} in at cycle "
                    f"{float(nxt[:, 0].min()):,.0f}")


def _overlap_case(first: str) -> Case:
    n, ub = 8192, 8192

    def call(fn: Any, _inputs: dict[str, Any]) -> tuple[float, str]:
        r, _ = run(fn, n, "float32", first, core_num=1, tiling_ub=ub)
        return overlap_of(r.trace)

    def compare(_exp: Any, got: Any) -> str | None:
        cycles, evidence = got
        if cycles > 0:
            return None
        return (f"{evidence}: on core 0 no copy-in ever runs while V computes. Double buffering pays off only when "
                "MTE2 fills the second block of a queue while V works on the first. Each queue call queues work on "
                "a pipe, and a block comes back to its queue at its FreeTensor: free the input blocks in Compute as "
                "soon as V has read them, and let CopyIn wait on nothing but AllocTensor")

    def show(got: Any) -> str:
        return f"{got[0]:,.0f} cycles of V overlap a copy-in; {got[1]}" if isinstance(got, tuple) else str(got)

    return Case(f"the trace of your kernel: N = {n} float32 on one core of {first}, tiled for an 8 KB UB (32 tiles)",
                {"N": n, "dtype": "float32", "soc": first, "cores": 1, "tiling_ub": ub},
                "MTE2 copies tile i + 1 in while V computes tile i", covers=("topic:copy-in overlaps compute",),
                call=call, compare=compare, show=show)


#: The vector instructions this lab is about: a kernel must issue them (not compute the result another way).
LAB_INSTRUCTIONS = {"CompareScalar": "the mask, bit i = x[i] > 0", "Select": "the choice between grad and the "
                    "scaled grad, by the mask", "Muls": "grad * T(slope)"}


def instruction_case(title: str, needed: dict[str, str], launch_one: Callable[[Any], KernelRun],
                     covers: Sequence[str] = ("topic:the lab's instructions",)) -> Case:
    """A case on the instruction stream of one recorded run of the learner's kernel: every vector instruction in
    ``needed`` (name -> what it is for) must appear on V. ``launch_one(fn)`` makes the run. Shared by the C++
    kernel labs."""
    def call(fn: Any, _inputs: dict[str, Any]) -> list[str]:
        r = launch_one(fn)
        return [e.instr for e in r.trace.events if e.pipe == "V"]

    def compare(_exp: Any, got: Any) -> str | None:
        missing = [name for name in needed if name not in got]
        if not missing:
            return None
        issued = ", ".join(dict.fromkeys(got)) or "no vector instruction at all"
        return ("your kernel never issues " + " or ".join(missing) + f" (it issued: {issued}). This lab is about "
                + "; ".join(f"{k}: {needed[k]}" for k in missing) + ". Compute the tile with them: a kernel that "
                "gets the numbers another way does not do the lab")

    def show(got: Any) -> str:
        return ", ".join(dict.fromkeys(got)) if isinstance(got, list) else str(got)

    return Case(title, {"needs": ", ".join(needed)}, "the lab's vector instructions on V", covers=tuple(covers),
                call=call, compare=compare, show=show)


def cases(socs: Iterable[str] | None = None, limits: SocLimits | None = None) -> list[Case]:
    """The battery; ``limits`` collects what happened on SoCs of :data:`LIMITED_ARCHS` (for the summary)."""
    socs = list(platform.socs() if socs is None else socs)
    first = "Ascend910B4" if "Ascend910B4" in socs else socs[0]
    out = [_case(f"worked example: N = 1000 float32 on {first}, one short tile per core", ["topic:worked example"],
                 1000, "float32", first, hint=_HINTS["stages"])]
    # the instructions the lab is about, on a SoC whose API has them all
    out.append(instruction_case("the instructions of your Compute: N = 1000 float32 on Ascend910B4", LAB_INSTRUCTIONS,
                                lambda fn: run(fn, 1000, "float32", "Ascend910B4", record=True)[0]))
    # the plan the tiling budgets, and the overlap it exists for (on a SoC whose API has every instruction used)
    out += [_plan_case(dtype, "Ascend910B4") for dtype in DTYPES]
    out.append(_overlap_case("Ascend910B4"))
    # one core, many tiles: the double-buffered loop
    for dtype in DTYPES:
        for n in (1, 1000, 4096, 4097):
            out.append(_case(f"N = {n} {dtype} on one core, tiled for a 4 KB UB (many tiles)",
                             ["topic:one core, many tiles", f"dtype:{dtype}"], n, dtype, first, core_num=1,
                             tiling_ub=4096, seed=n, hint=_HINTS["multi"] if n > 1 else _HINTS["tail"]))
    # several cores, several tiles each
    for dtype, cores, n in (("float32", 3, 3000), ("float16", 7, 7 * 256 + 5), ("float16", 5, 9)):
        out.append(_case(f"N = {n} {dtype} on {cores} cores, tiled for a 4 KB UB", ["topic:several cores and tiles",
                         f"dtype:{dtype}"], n, dtype, first, core_num=cores, tiling_ub=4096, seed=cores,
                         hint=_HINTS["multi"]))
    # every SoC with its own cores and UB
    for soc in socs:
        for dtype in DTYPES:
            for n in (37, 5003):
                out.append(_case(f"N = {n} {dtype} on {soc}", [f"soc:{soc}", f"dtype:{dtype}"], n, dtype, soc,
                                 seed=n + len(soc), hint=_HINTS["tail"], limits=limits))
    big = "Ascend950PR" if "Ascend950PR" in socs else first
    out.append(_case(f"N = 100003 float16 on {big}", ["topic:large input", "dtype:float16"], 100_003, "float16", big,
                     seed=5))
    # the slope travels as a C float and is rounded to T
    for slope in (0.0, -2.5, 1e-8, 3.0):
        for dtype in DTYPES:
            out.append(_case(f"negative_slope = {slope}, N = 777 {dtype} on 3 cores", ["topic:slopes",
                             f"dtype:{dtype}"], 777, dtype, first, core_num=3, tiling_ub=4096, slope=slope,
                             seed=int(abs(slope) * 10) + 1, hint=_HINTS["special"]))
    return out


def _summary(kernel: Any) -> list[str]:
    lines: list[str] = []
    for n, dtype, soc, core_num, ub in ((100_000, "float16", "Ascend910B4", None, None),
                                        (8192, "float32", "Ascend910B4", 1, 8192)):
        r, _ = run(kernel, n, dtype, soc, core_num=core_num, tiling_ub=ub)
        td = r.tiling
        lines += describe_run(r, td, n, dtype)
    return lines


def not_cxx_report(kernel: Any, title: str, cell: str) -> Report | None:
    """The report for a kernel handed in that is not compiled C++ (a Python class, say), or None when it is."""
    from .checker import Failure, is_reference, reference_behind

    if is_cxx(kernel) or not callable(kernel) or is_reference(kernel) or reference_behind(kernel):
        return None                  # run_battery says what it is (a reference is refused there, saying so)
    return Report(title, 0, 0, Failure(0, None, "your C++ kernel (the %%ascendc cell, compiled)",
                                       f"{type(kernel).__name__} {getattr(kernel, '__name__', '')}",
                                       why=f"this lab's kernel is AscendC C++: edit the {cell} cell (%%ascendc) and "
                                           "run it, then check the kernel it binds"))


def check(kernel: Any, socs: Iterable[str] | None = None) -> Report:
    """Run your ``KernelLeakyReluGrad`` (the C++ kernel the ``%%ascendc`` cell binds) over the battery; returns the
    Report."""
    refused = not_cxx_report(kernel, TITLE, "KernelLeakyReluGrad")
    if refused is not None:
        return refused
    limits = SocLimits()
    return run_battery(kernel, cases(socs, limits), title=TITLE, summary=lambda: _summary(kernel) + limits.lines(),
                       refuse_reference=True)
