"""Lab 8 -- capstone: a new operator end to end, ``aclnnSoftshrinkBackward``.

``gradInput = (self > lambd or self < -lambd) ? gradOutput : 0`` (NaN in ``self`` gives 0), for FLOAT and
FLOAT16 everywhere and BFLOAT16 on DAV_2201 / DAV_3510 SoCs. The learner writes every layer, as the
package's operators are written (``ops/hard_sigmoid_grad/``):

* ``SoftshrinkGradTilingData`` and ``softshrink_grad_tiling(total_length, dtype, core_num, ub_size, lambd)``;
* the AscendC kernel and its entry ``softshrink_grad(gradOutput, self_, gradInput, workspace, tiling, *,
  schMode)``, which reads the struct with ``GET_TILING_DATA``;
* the L0 op ``SoftshrinkGrad`` and the two-phase API ``aclnnSoftshrinkBackwardGetWorkspaceSize`` /
  ``aclnnSoftshrinkBackward`` (checks in the spec's order, then Contiguous -> Cast -> SoftshrinkGrad ->
  Cast -> ViewCopy),

and hands them over with ``softshrink_backward() -> {"TilingData", "tiling", "kernel",
"GetWorkspaceSize", "Run"}``. :func:`check` runs, in this order: the struct's layout; the tiling against
:func:`oracle_tiling`; the kernel on the simulator against :func:`oracle_kernel` (every SoC, all three
dtypes, tails, many tiles, thresholds that round in half precision); the status codes of phase 1
against :func:`expected_status` (nulls, dtypes per SoC, CanCast, lambd, rank 9, shapes, empty tensors);
and the whole API on real aclTensors -- contiguous or not, mixed dtypes, other output dtypes -- against
:func:`oracle`, including the L0 graph's shape. A passing report renders the learner's kernel in the
book's figures (tile map, UB layout, pipeline lanes) from one recorded run.

The oracles are plain numpy and rule lists over descriptions of the inputs; they share no code with
:mod:`labkit.solutions`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ascend_lab import acl, standalone
from ascend_lab.acl.runtime import (
    ACL_MEM_MALLOC_HUGE_FIRST,
    aclrtCreateStream,
    aclrtDestroyStream,
    aclrtFree,
    aclrtMalloc,
    aclrtSynchronizeStream,
)
from ascend_lab.base import log as oplog
from ascend_lab.base import platform
from ascend_lab.base.platform import NpuArch
from ascend_lab.dtypes import as_acl_dtype, to_numpy
from ascend_lab.opdev.aclnn_common import OUT
from ascend_lab.opdev.data_type_utils import CanCast, PromoteType
from ascend_lab.opdev.errno import (
    ACLNN_ERR_PARAM_INVALID,
    ACLNN_ERR_PARAM_NULLPTR,
    ACLNN_ERR_RUNTIME_ERROR,
    ACLNN_SUCCESS,
    describe,
)
from ascend_lab.opdev.tiling_data import TilingData, TilingError
from ascend_lab.ops.hard_sigmoid_grad import op_host as hsg_host
from ascend_lab.run import DeviceTensors, acl_session

from .checker import Case, Raises, answer_key, compare_arrays, locator, run_battery
from .lab1_checks import ScalarSpec
from .lab5_copy_compute import (
    KernelReport,
    SocLimits,
    compare_kernel_output,
    describe_run,
    instruction_case,
    is_cxx,
    launch_kernel,
    limited_call,
    limited_compare,
    limited_hint,
    sample,
    show_array,
    show_limited,
    usable_ub,
)

__all__ = ["API", "FUNCTION", "LAB_INSTRUCTIONS", "Arr", "cases", "check", "expected_status", "figures", "oracle",
           "oracle_kernel", "oracle_tiling", "supported_dtypes"]

API = "aclnnSoftshrinkBackwardGetWorkspaceSize"
API2 = "aclnnSoftshrinkBackward"
FUNCTION = "softshrink_backward"
TITLE = "Lab 8 \u00b7 aclnnSoftshrinkBackward, end to end"
NULLPTR, INVALID, SUCCESS = int(ACLNN_ERR_PARAM_NULLPTR), int(ACLNN_ERR_PARAM_INVALID), int(ACLNN_SUCCESS)
RUNTIME = int(ACLNN_ERR_RUNTIME_ERROR)
_SOC_LIMIT = "[unsupported-on-soc]"
KERNEL_DTYPES = ("float32", "float16", "bfloat16")
PARTS = ("TilingData", "tiling", "kernel", "GetWorkspaceSize", "Run")
MAX_DIMS = 8

#: The struct the spec asks for: (field, C type), in order; 3 x 8 + 4 bytes, padded to 32.
STRUCT = (("totalLength", "int64_t"), ("blockFactor", "int64_t"), ("ubFactor", "int64_t"), ("lambd", "float"))
STRUCT_SIZE = 32
#: UB bytes per element of a tile, by dtype: 3 double-buffered queues of T, the compute temporaries
#: and the mask, budgeted (bufferNum x typeSize) as in HardSigmoidGrad's tiling.
UB_BYTES_PER_ELEMENT = {"float32": 7 * 4, "float16": 7 * 2, "bfloat16": 6 * 4}
COMPUTE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 4}
SCH_MODE = {"float32": 0, "float16": 1, "bfloat16": 2}


def supported_dtypes(soc: str) -> tuple[str, ...]:
    """gradOutput / self dtypes on ``soc``: BFLOAT16 too on DAV_2201 (A2/A3) and DAV_3510 (Ascend950)."""
    arch = platform.get_soc(soc).npu_arch
    return KERNEL_DTYPES if arch in (NpuArch.DAV_2201, NpuArch.DAV_3510) else ("float32", "float16")


# ==================================================================================================
# the oracles
# ==================================================================================================
@answer_key
def oracle_tiling(total_length: int, dtype: str, core_num: int, ub_size: int, lambd: float) -> dict[str, Any] | Raises:
    """The expected fields (with blockDim and tilingKey), or ``Raises(TilingError)``. ``ubFactor`` is
    found as the largest number of whole 256-byte compute repeats whose buffers fit ``ub_size``, and
    ``blockDim`` by counting the cores whose share is not empty."""
    if dtype not in KERNEL_DTYPES or core_num <= 0 or total_length <= 0:
        return Raises(TilingError)
    per_repeat = 256 // COMPUTE_BYTES[dtype]                             # elements of one compute repeat
    repeats = ub_size // (per_repeat * UB_BYTES_PER_ELEMENT[dtype])       # whole repeats whose buffers fit
    if repeats == 0:
        return Raises(TilingError)
    block_factor = -(-total_length // core_num)
    block_dim = sum(1 for core in range(core_num) if core * block_factor < total_length)
    return {"totalLength": total_length, "blockFactor": block_factor, "ubFactor": repeats * per_repeat,
            "lambd": float(np.float32(lambd)), "blockDim": block_dim, "tilingKey": SCH_MODE[dtype]}


@answer_key
def oracle_kernel(grad: np.ndarray, x: np.ndarray, lambd: float) -> np.ndarray:
    """The kernel on arrays of one dtype T: compare in half for FLOAT16 (``half(lambd)``), in float for
    FLOAT and BFLOAT16 (``x`` widened exactly), keep ``grad``'s bits where ``|x| > lambd``, else +0."""
    lam = np.float32(lambd)
    with np.errstate(all="ignore"):
        if grad.dtype == np.float16:
            xs, thr = x, np.float16(lam)
        else:
            xs, thr = x.astype(np.float32), lam
        keep = (xs > thr) | (xs < -thr)
    return np.where(keep, grad, grad.dtype.type(0))


@answer_key
def oracle(grad: np.ndarray, x: np.ndarray, lambd: float, out_dtype: Any) -> np.ndarray:
    """The whole API: both inputs converted to PromoteType(gradOutput, self) (round to nearest even, as the
    L0 Cast does), the kernel, the result converted to gradInput's dtype."""
    promote = to_numpy(PromoteType(as_acl_dtype(grad.dtype), as_acl_dtype(x.dtype)))
    with np.errstate(all="ignore"):
        y = oracle_kernel(np.asarray(grad).astype(promote), np.asarray(x).astype(promote), lambd)
        return y.astype(to_numpy(as_acl_dtype(out_dtype)))


@dataclass(frozen=True)
class Arr:
    """A tensor to create: shape, dtype, layout ("contiguous", "transposed" or "sliced": a strided view)
    and the seed of its data (uniform in [lo, hi) with +-lambd, 0, +-0, +-inf and NaN sprinkled in)."""

    shape: tuple[int, ...]
    dtype: str = "float32"
    layout: str = "contiguous"
    seed: int = 0
    edges: tuple[float, ...] = ()

    def array(self, fill: bool = False) -> np.ndarray:
        n = math.prod(self.shape)
        npdt = to_numpy(as_acl_dtype(self.dtype))
        if self.layout == "sliced" and self.shape:
            base_shape = self.shape[:-1] + (2 * self.shape[-1],)
        elif self.layout == "transposed":
            base_shape = tuple(reversed(self.shape))
        else:
            base_shape = self.shape
        size = math.prod(base_shape)
        if fill:
            base = np.full(size * npdt.itemsize, 0xFF, np.uint8).view(npdt).reshape(base_shape)
        elif npdt.kind == "f" or npdt.name == "bfloat16":
            base = sample(size, self.dtype, self.seed, -2.0, 2.0, edges=self.edges).reshape(base_shape)
        else:
            base = np.arange(size, dtype=npdt).reshape(base_shape)
        if self.layout == "sliced" and self.shape:
            view = base[..., ::2]
        elif self.layout == "transposed":
            view = base.T
        else:
            view = base
        assert view.shape == self.shape and view.size == n
        return view

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def empty(self) -> bool:
        return math.prod(self.shape) == 0

    def __repr__(self) -> str:
        strided = f" ({self.layout} view)" if self.layout != "contiguous" else ""
        return f"{self.dtype}{list(self.shape)}{strided}"


def _as_c_float(lam: ScalarSpec) -> np.float32:
    """The scalar as the kernel will see it: its dtype's value, then a C float."""
    with np.errstate(all="ignore"):
        return np.float32(to_numpy(as_acl_dtype(lam.dtype)).type(lam.value))


@answer_key
def expected_status(inputs: dict[str, Any]) -> int:
    """Phase 1's status code from the spec's rule list (the first broken rule decides)."""
    g, s, lam, out, soc = inputs["gradOutput"], inputs["self"], inputs["lambd"], inputs["gradInput"], inputs["soc"]
    rules: list[tuple[Callable[[], bool], int]] = [
        (lambda: inputs["workspaceSize"] is None or inputs["executor"] is None, NULLPTR),
        (lambda: None in (g, s, lam, out), NULLPTR),
        (lambda: g.dtype not in supported_dtypes(soc), INVALID),
        (lambda: s.dtype not in supported_dtypes(soc), INVALID),
        (lambda: not CanCast(PromoteType(as_acl_dtype(g.dtype), as_acl_dtype(s.dtype)), as_acl_dtype(out.dtype)),
         INVALID),
        (lambda: bool(_as_c_float(lam) < 0), INVALID),
        (lambda: max(g.ndim, s.ndim, out.ndim) > MAX_DIMS, INVALID),
        (lambda: g.shape != s.shape or out.shape != s.shape, INVALID),
    ]
    for broken, code in rules:
        if broken():
            return code
    return SUCCESS


# ==================================================================================================
# calling the learner's pieces
# ==================================================================================================
def _part(name: str) -> Callable[[Any], Any]:
    def pick(fn: Any) -> Any:
        parts = fn()
        if not isinstance(parts, dict) or name not in parts:
            raise TypeError(f"softshrink_backward() must return a dict with {', '.join(PARTS)}; got "
                            f"{type(parts).__name__}" + (f" without {name!r}" if isinstance(parts, dict) else ""))
        if name == "kernel" and not is_cxx(parts[name]):
            raise TypeError("this lab's kernel is AscendC C++: edit the softshrink_grad cell (%%ascendc), run it, "
                            "and hand the kernel it binds over as softshrink_backward()['kernel']")
        return parts[name]
    return pick


@dataclass
class Outcome:
    """What one aclnn call did: phase 1's status and workspace, the L0 graph, phase 2's status, the output."""

    status: Any
    workspace: Any = None
    graph: list[str] | None = None
    run_status: Any = None
    out: np.ndarray | None = None
    run_log: list[str] = field(default_factory=list)      # what phase 2 logged

    def __str__(self) -> str:
        if not isinstance(self.status, (int, np.integer)) or isinstance(self.status, bool):
            return f"phase 1 returned {self.status!r}"
        text = describe(int(self.status))
        if self.status == SUCCESS:
            text += f", workspace {self.workspace} B"
            if self.graph is not None:
                text += f", graph {self.graph}"
            if isinstance(self.run_status, (int, np.integer)):
                text += f"; phase 2: {describe(int(self.run_status))}"
            elif self.run_status is not None:
                text += f"; phase 2 returned {self.run_status!r}"
            if self.out is not None:
                text += f"; out {show_array(self.out)}"
        return text


@dataclass
class Expect:
    """The expected outcome: status, and for a successful non-empty call the graph's casts and the output."""

    status: int
    empty: bool = False
    casts_in: int = 0
    cast_out: bool = False
    out: np.ndarray | None = None
    run_status: int | None = None       # for phase-2-only cases
    note: str = field(default="", compare=False)
    limited_soc: str = ""               # a SoC whose AscendC API lacks the kernel's instructions (lab5.SocLimits)

    def __str__(self) -> str:
        text = describe(self.status)
        if self.status == SUCCESS and self.empty:
            text += ", workspace 0 (an empty tensor: nothing to launch)"
        elif self.status == SUCCESS and self.out is not None:
            graph = ["Contiguous", "Contiguous"] + ["Cast"] * self.casts_in + ["SoftshrinkGrad"] + \
                    ["Cast"] * self.cast_out + ["ViewCopy"]
            text += f", graph {graph} (Contiguous/Cast may interleave); out {show_array(self.out)}"
        if self.run_status is not None:
            text += f"; phase 2: {describe(self.run_status)}"
        return text


def _call_api(fn: Any, inputs: dict[str, Any]) -> Outcome:
    """Create the tensors, run phase 1 (and phase 2 when it succeeded), read the output back."""
    get_ws, run = _part("GetWorkspaceSize")(fn), _part("Run")(fn)
    with platform.soc(inputs["soc"]), acl_session():
        held = DeviceTensors()
        scalars, ptrs = [], []
        try:
            args = []
            for key in ("gradOutput", "self", "lambd", "gradInput"):
                spec = inputs[key]
                if spec is None:
                    args.append(None)
                elif isinstance(spec, ScalarSpec):
                    scalars.append(acl.aclCreateScalar(spec.value, spec.dtype))
                    args.append(scalars[-1])
                else:
                    args.append(held.upload(spec.array(fill=key == "gradInput"), key))
            result = get_ws(*args, workspaceSize=inputs["workspaceSize"], executor=inputs["executor"])
            if not isinstance(result, tuple) or len(result) != 3:
                return Outcome(result)
            status, ws, exe = result
            outcome = Outcome(status, ws)
            if status != SUCCESS or exe is None:
                return outcome
            outcome.graph = list(getattr(exe, "graph", []))
            if inputs.get("phase2") == "executor nullptr":
                outcome.run_status = run(None, ws, None, None)
                return outcome
            ws_ptr = None
            if ws:
                _, ws_ptr = aclrtMalloc(ws, ACL_MEM_MALLOC_HUGE_FIRST)
                ptrs.append(ws_ptr)
            _, stream = aclrtCreateStream()
            with oplog.capture() as records:
                outcome.run_status = run(ws_ptr, ws, exe, stream)
                aclrtSynchronizeStream(stream)
            outcome.run_log = [r.message for r in records]
            aclrtDestroyStream(stream)
            if args[3] is not None and not args[3].IsEmpty():
                outcome.out = args[3].numpy().copy()
            return outcome
        finally:
            held.release()
            for p in ptrs:
                aclrtFree(p)
            for sc in scalars:
                acl.aclDestroyScalar(sc)


def _graph_problem(exp: Expect, graph: list[str]) -> str | None:
    if graph.count("SoftshrinkGrad") != 1:
        return f"the graph needs exactly one SoftshrinkGrad node, got {graph}"
    k = graph.index("SoftshrinkGrad")
    before, after = graph[:k], graph[k + 1:]
    if before.count("Contiguous") != 2:
        return f"Contiguous(gradOutput) and Contiguous(self) come before the kernel node; your graph is {graph}"
    if before.count("Cast") != exp.casts_in:
        return (f"{exp.casts_in} Cast node(s) before the kernel (one per input whose dtype differs from "
                f"PromoteType(gradOutput, self)); your graph is {graph}")
    want_after = ["Cast"] * exp.cast_out + ["ViewCopy"]
    if after != want_after:
        return (f"after the kernel: {want_after} (a Cast only when gradInput's dtype differs from the promoted "
                f"one); your graph is {graph}")
    return None


def _soc_limit_stop(exp: Expect, got: Outcome) -> str | None:
    """On a SoC of ``lab5_copy_compute.LIMITED_ARCHS``: the message of phase 2's kernel stop for an instruction
    the SoC lacks, when that is why phase 2 failed (an accepted outcome there), else None."""
    if not exp.limited_soc or got.run_status != RUNTIME:
        return None
    return next((m for m in got.run_log if _SOC_LIMIT in m), None)


def _compare_api(exp: Expect, got: Any, limits: SocLimits | None = None) -> str | None:
    if not isinstance(got, Outcome):
        return f"expected an Outcome, got {got!r}"
    status = got.status
    if isinstance(status, bool) or not isinstance(status, (int, np.integer)):
        return ("aclnnSoftshrinkBackwardGetWorkspaceSize returns (status, workspaceSize, executor); keep the "
                "@guard_phase1(API) decorator and raise ParamError(code, message) for a failed check")
    if int(status) != exp.status:
        if exp.status == SUCCESS:
            return "every check passes for these inputs, but phase 1 rejected them (see your log)"
        if int(status) == SUCCESS:
            return "the spec rejects these inputs, but phase 1 accepted them"
        if exp.status == NULLPTR:
            return "a nullptr check comes earlier in the spec's order than the check that fired"
        return "a different check should have fired first (or a Python error inside phase 1: see your log)"
    if exp.status != SUCCESS:
        return None
    if exp.run_status is not None:
        return None if got.run_status == exp.run_status else f"phase 2 should return {describe(exp.run_status)}"
    if exp.empty:
        if got.workspace != 0:
            return f"an empty tensor needs no workspace: return workspace 0, not {got.workspace!r}"
        if got.graph:
            return f"an empty tensor builds no graph: return before the L0 calls (your graph: {got.graph})"
        return None if got.run_status in (None, SUCCESS) else "phase 2 of an empty call should succeed"
    problem = _graph_problem(exp, got.graph or [])
    if problem:
        return problem
    stop = _soc_limit_stop(exp, got)
    if stop is not None:
        if limits is not None:
            limits.api.setdefault(exp.limited_soc, stop)
        return None
    if got.run_status != SUCCESS:
        return ("phase 2 failed (see your log: a kernel stopped by the sanitizer is reported there as "
                "ACLNN_ERR_RUNTIME_ERROR)")
    return compare_arrays(exp.out, got.out)


def _api_case(name: str, covers: Iterable[str], *, soc: str, g: Any, s: Any, lam: Any, out: Any,
              workspace: Any = OUT, executor: Any = OUT, hint: str = "", phase2: str = "",
              limits: SocLimits | None = None) -> Case:
    inputs = {"soc": soc, "gradOutput": g, "self": s, "lambd": lam, "gradInput": out, "workspaceSize": workspace,
              "executor": executor}
    if phase2:
        inputs["phase2"] = phase2
    status = expected_status(inputs)
    exp = Expect(status)
    if phase2:
        exp.run_status = NULLPTR
    elif status == SUCCESS:
        if g.empty or s.empty or out.empty:
            exp.empty = True
        else:
            promote = PromoteType(as_acl_dtype(g.dtype), as_acl_dtype(s.dtype))
            exp.casts_in = sum(as_acl_dtype(a.dtype) != promote for a in (g, s))
            exp.cast_out = as_acl_dtype(out.dtype) != promote
            exp.out = oracle(g.array(), s.array(), float(lam.value), out.dtype)
            if SocLimits.lacks(platform.get_soc(soc)) is not None:
                exp.limited_soc = soc
                hint = limited_hint(platform.get_soc(soc), hint) + (
                    "; through the API a kernel stop makes phase 2 return ACLNN_ERR_RUNTIME_ERROR and log the "
                    "sanitizer's message")

    def compare(e: Expect, got: Any) -> str | None:
        return _compare_api(e, got, limits)

    return Case(name, inputs, exp, covers=tuple(covers), hint=hint, call=_call_api, compare=compare, show=str)


# ==================================================================================================
# the battery
# ==================================================================================================
def _struct_case() -> Case:
    def call(fn: Any, _inputs: dict[str, Any]) -> Any:
        cls = _part("TilingData")(fn)
        if not (isinstance(cls, type) and issubclass(cls, TilingData)):
            return f"{cls!r} is not a TilingData subclass"
        return (tuple((n, c.c_name) for n, c in cls.FIELDS), cls.SIZE)

    def compare(exp: Any, got: Any) -> str | None:
        if isinstance(got, str):
            return got
        if got[0] != exp[0]:
            return ("the fields, in this order, with these C types: "
                    + ", ".join(f"{t} {n}" for n, t in exp[0]) + " (annotate them int64 / float32)")
        return None if got[1] == exp[1] else f"{got[1]} bytes instead of {exp[1]}"

    return Case("SoftshrinkGradTilingData: fields, C types and size", {"class": "softshrink_backward()['TilingData']"},
                (STRUCT, STRUCT_SIZE), covers=("topic:TilingData",), call=call, compare=compare)


def _tiling_case(n: int, dtype: str, cores: int, ub: int, lambd: float = 0.5) -> Case:
    inputs = {"total_length": n, "dtype": dtype, "core_num": cores, "ub_size": ub, "lambd": lambd}
    expected = oracle_tiling(n, dtype, cores, ub, lambd)

    def call(fn: Any, inp: dict[str, Any]) -> Any:
        return _part("tiling")(fn)(*inp.values())

    def compare(exp: Any, got: Any) -> str | None:
        if not isinstance(got, TilingData) or not hasattr(got, "ubFactor"):
            return f"return your SoftshrinkGradTilingData(...), not {type(got).__name__}"
        have = got.as_dict()
        for key, value in exp.items():
            if have.get(key) != value:
                why = {"ubFactor": f"FloorAlign((ub_size // typeSize) // bufferNum, 256 // typeSize) with "
                                   f"(bufferNum, typeSize) = {_split(dtype)} for {dtype}",
                       "blockFactor": f"CeilDiv({n}, {cores})", "blockDim": "CeilDiv(N, blockFactor)",
                       "tilingKey": "schMode: float32 0, float16 1, bfloat16 2",
                       "lambd": "lambd as a C float"}.get(key, "")
                return f"{key}: expected {value!r}, got {have.get(key)!r}" + (f" -- {why}" if why else "")
        return None

    return Case(f"tiling: N = {n} {dtype}, {cores} cores, UB {ub} B, lambd {lambd}", inputs, expected,
                covers=("topic:tiling",), call=call, compare=compare,
                hint="refuse (TilingError) an unsupported dtype, no cores, an empty input, or a UB too small for one "
                     "256-byte repeat per buffer" if isinstance(expected, Raises) else "")


def _split(dtype: str) -> tuple[int, int]:
    return UB_BYTES_PER_ELEMENT[dtype] // COMPUTE_BYTES[dtype], COMPUTE_BYTES[dtype]


def _kernel_case(name: str, covers: list[str], n: int, dtype: str, soc: str, *, core_num: int | None = None,
                 tiling_ub: int | None = None, lambd: float = 0.5, seed: int = 0,
                 limits: SocLimits | None = None) -> Case:
    info = standalone.make_soc(soc, core_num)
    ub = tiling_ub or usable_ub(info)
    g = sample(n, dtype, seed, -2.0, 2.0)
    x = sample(n, dtype, seed + 1, -2.0, 2.0, edges=(lambd, -lambd, 0.0))
    expected = oracle_kernel(g, x, lambd)
    fields = oracle_tiling(n, dtype, info.vector_core_num, ub, lambd)
    ranges = hsg_host.core_ranges(hsg_host.HardSigmoidGradTilingData(
        totalLength=n, blockFactor=fields["blockFactor"], ubFactor=fields["ubFactor"], alpha=0.0, beta=0.0,
        blockDim=fields["blockDim"], tilingKey=0))

    def call(fn: Any, _inputs: dict[str, Any]) -> np.ndarray:
        td = _part("tiling")(fn)(n, dtype, info.vector_core_num, ub, lambd)
        _, out = launch_kernel(_part("kernel")(fn), td, [g, x], g.dtype, info, schMode=td.tilingKey,
                               kernel_name="SoftshrinkGrad")
        return out

    shown = {"N": n, "dtype": dtype, "soc": info.name, "cores": info.vector_core_num, "ub_size": ub, "lambd": lambd,
             "tiling": f"blockFactor {fields['blockFactor']}, ubFactor {fields['ubFactor']}, "
                       f"blockDim {fields['blockDim']}"}
    hint = {"float16": "float16 compares in half: the thresholds are half(lambd) and half(-lambd), which may round "
                       "(or overflow to inf)",
            "bfloat16": "bfloat16 compares in float: Cast x up with CAST_NONE (exact); grad's bits can be selected as "
                        "they are (Select copies bits)",
            "float32": "out = x > lambd or x < -lambd ? grad : +0; NaN compares false both times"}[dtype]
    return Case(f"kernel: {name}", shown, expected, covers=tuple(covers), hint=limited_hint(info, hint),
                call=limited_call(call, info, limits),
                compare=limited_compare(compare_kernel_output({"grad": g, "self": x}, locator(ranges))),
                show=show_limited)


def _status_cases(socs: Sequence[str]) -> list[Case]:
    soc = "Ascend910B4" if "Ascend910B4" in socs else socs[0]
    old = next((s for s in socs if supported_dtypes(s) == ("float32", "float16")), None)

    def t(shape: tuple[int, ...] = (2, 3), dtype: str = "float32", layout: str = "contiguous") -> Arr:
        return Arr(shape, dtype, layout)

    lam = ScalarSpec(0.5)
    cases = [
        _api_case("workspaceSize is nullptr", ["topic:nullptr"], soc=soc, g=t(), s=t(), lam=lam, out=t(),
                  workspace=None),
        _api_case("executor is nullptr", ["topic:nullptr"], soc=soc, g=t(), s=t(), lam=lam, out=t(), executor=None),
        _api_case("gradOutput is nullptr", ["topic:nullptr"], soc=soc, g=None, s=t(), lam=lam, out=t()),
        _api_case("self is nullptr", ["topic:nullptr"], soc=soc, g=t(), s=None, lam=lam, out=t()),
        _api_case("lambd is nullptr", ["topic:nullptr"], soc=soc, g=t(), s=t(), lam=None, out=t()),
        _api_case("gradInput is nullptr", ["topic:nullptr"], soc=soc, g=t(), s=t(), lam=lam, out=None),
        _api_case("self nullptr and gradOutput INT32: the nullptr wins", ["topic:nullptr"], soc=soc,
                  g=t(dtype="int32"), s=None, lam=lam, out=t()),
        _api_case("gradOutput INT32", ["topic:dtypes"], soc=soc, g=t(dtype="int32"), s=t(), lam=lam, out=t()),
        _api_case("self FLOAT64", ["topic:dtypes"], soc=soc, g=t(), s=t(dtype="float64"), lam=lam, out=t()),
        _api_case("gradInput INT32: FLOAT cannot be cast to it", ["topic:dtypes"], soc=soc, g=t(), s=t(), lam=lam,
                  out=t(dtype="int32")),
        _api_case("gradInput BOOL", ["topic:dtypes"], soc=soc, g=t(dtype="float16"), s=t(dtype="float16"), lam=lam,
                  out=t(dtype="bool")),
        _api_case("lambd = -0.5", ["topic:lambd"], soc=soc, g=t(), s=t(), lam=ScalarSpec(-0.5), out=t()),
        _api_case("lambd = -1e-50 as a DOUBLE: the C float is -0.0, not < 0", ["topic:lambd"], soc=soc, g=t(), s=t(),
                  lam=ScalarSpec(-1e-50, "float64"), out=t()),
        _api_case("lambd = -3 as an INT32", ["topic:lambd"], soc=soc, g=t(), s=t(), lam=ScalarSpec(-3, "int32"),
                  out=t()),
        _api_case("gradOutput has 9 dims", ["topic:rank"], soc=soc, g=t((1,) * 7 + (2, 3)), s=t(), lam=lam, out=t()),
        _api_case("self and gradInput have 9 dims", ["topic:rank"], soc=soc, g=t((1,) * 7 + (2, 3)),
                  s=t((1,) * 7 + (2, 3)), lam=lam, out=t((1,) * 7 + (2, 3))),
        _api_case("gradInput has 9 dims", ["topic:rank"], soc=soc, g=t(), s=t(), lam=lam, out=t((1,) * 7 + (2, 3))),
        _api_case("gradOutput [3, 2] and self [2, 3]", ["topic:shapes"], soc=soc, g=t((3, 2)), s=t(), lam=lam,
                  out=t()),
        _api_case("gradOutput [1, 3] would broadcast, but this operator does not", ["topic:shapes"], soc=soc,
                  g=t((1, 3)), s=t(), lam=lam, out=t()),
        _api_case("gradInput [3, 2]", ["topic:shapes"], soc=soc, g=t(), s=t(), lam=lam, out=t((3, 2))),
        _api_case("lambd = -1 and 9 dims: lambd is checked first", ["topic:lambd"], soc=soc, g=t((1,) * 9),
                  s=t((1,) * 9), lam=ScalarSpec(-1.0), out=t((1,) * 9)),
        _api_case("an empty INT32 gradOutput is still checked", ["topic:empty tensors"], soc=soc,
                  g=t((0, 3), "int32"), s=t((0, 3)), lam=lam, out=t((0, 3))),
        _api_case("empty tensors [0, 3]: success, workspace 0", ["topic:empty tensors"], soc=soc, g=t((0, 3)),
                  s=t((0, 3)), lam=lam, out=t((0, 3))),
        _api_case("empty tensors [4, 0, 2], float16 in, FLOAT out", ["topic:empty tensors"], soc=soc,
                  g=t((4, 0, 2), "float16"), s=t((4, 0, 2), "float16"), lam=lam, out=t((4, 0, 2))),
        _api_case("phase 2 with a nullptr executor", ["topic:phase 2"], soc=soc, g=t(), s=t(), lam=lam, out=t(),
                  phase2="executor nullptr"),
    ]
    if old is not None:
        cases.insert(9, _api_case(f"BFLOAT16 on {old} ({platform.get_soc(old).npu_arch.name})", ["topic:dtypes"],
                                  soc=old, g=t(dtype="bfloat16"), s=t(dtype="bfloat16"), lam=lam,
                                  out=t(dtype="bfloat16")))
    return cases


def _compute_cases(socs: Sequence[str], limits: SocLimits | None = None) -> list[Case]:
    out: list[Case] = []
    for soc in socs:
        for k, dtype in enumerate(supported_dtypes(soc)):
            a = Arr((3, 37), dtype, seed=11 * k + len(soc), edges=(0.5, -0.5))
            b = Arr((3, 37), dtype, seed=11 * k + len(soc) + 1, edges=(0.5, -0.5))
            out.append(_api_case(f"{dtype} [3, 37] on {soc}", [f"soc:{soc}", f"dtype:{dtype}"], soc=soc, g=a, s=b,
                                 lam=ScalarSpec(0.5), out=Arr((3, 37), dtype), limits=limits))
    soc = "Ascend910B4" if "Ascend910B4" in socs else socs[0]
    f32, f16, bf = "float32", "float16", "bfloat16"
    lam = ScalarSpec(0.5)
    more = [
        ("a transposed (strided) self", Arr((37, 5), f32, seed=1),
         Arr((37, 5), f32, "transposed", seed=2, edges=(0.5,)), lam, Arr((37, 5), f32), "topic:strided views"),
        ("a sliced gradOutput and a transposed gradInput", Arr((6, 20), f16, "sliced", seed=3),
         Arr((6, 20), f16, seed=4, edges=(0.5,)), lam, Arr((6, 20), f16, "transposed"), "topic:strided views"),
        ("float16 gradOutput, float32 self: promoted to FLOAT", Arr((4, 50), f16, seed=5), Arr((4, 50), f32, seed=6),
         lam, Arr((4, 50), f32), "topic:promotion"),
        ("bfloat16 and float16: promoted to FLOAT, out float16", Arr((4, 50), bf, seed=7), Arr((4, 50), f16, seed=8),
         lam, Arr((4, 50), f16), "topic:promotion"),
        ("float32 in, float16 gradInput: a Cast after the kernel", Arr((300,), f32, seed=9), Arr((300,), f32, seed=10),
         lam, Arr((300,), f16), "topic:promotion"),
        ("float32 in, FLOAT64 gradInput", Arr((2, 2, 33), f32, seed=11), Arr((2, 2, 33), f32, seed=12), lam,
         Arr((2, 2, 33), "float64"), "topic:promotion"),
        ("a 0-dim tensor", Arr((), f32, seed=13), Arr((), f32, seed=14), lam, Arr((), f32), "topic:shapes"),
        ("8 dims", Arr((1, 1, 1, 1, 1, 1, 5, 7), f16, seed=15), Arr((1, 1, 1, 1, 1, 1, 5, 7), f16, seed=16), lam,
         Arr((1, 1, 1, 1, 1, 1, 5, 7), f16), "topic:shapes"),
        ("lambd = 0 (only +-0 and NaN give 0)", Arr((3, 100), f32, seed=17), Arr((3, 100), f32, seed=18),
         ScalarSpec(0.0), Arr((3, 100), f32), "topic:lambd"),
        ("lambd = 1e-3 as a DOUBLE, float16: half(lambd) rounds", Arr((3, 100), f16, seed=19),
         Arr((3, 100), f16, seed=20, edges=(1e-3, -1e-3, 0.00100040435791015625)), ScalarSpec(1e-3, "float64"),
         Arr((3, 100), f16), "topic:lambd"),
        ("lambd = 70000, float16: half(lambd) is inf", Arr((3, 100), f16, seed=21), Arr((3, 100), f16, seed=22),
         ScalarSpec(70000.0), Arr((3, 100), f16), "topic:lambd"),
        ("lambd = NaN is accepted (NaN < 0 is false)", Arr((3, 100), f32, seed=23), Arr((3, 100), f32, seed=24),
         ScalarSpec(float("nan")), Arr((3, 100), f32), "topic:lambd"),
        ("lambd = 2 as an INT32", Arr((3, 100), bf, seed=25), Arr((3, 100), bf, seed=26), ScalarSpec(2, "int32"),
         Arr((3, 100), bf), "topic:lambd"),
        ("100003 float16 elements on all cores", Arr((100_003,), f16, seed=27), Arr((100_003,), f16, seed=28), lam,
         Arr((100_003,), f16), "topic:large input"),
    ]
    for name, g, s, lam_, o, tag in more:
        out.append(_api_case(name, [tag], soc=soc, g=g, s=s, lam=lam_, out=o))
    return out


#: The vector instructions this lab is about: a kernel must issue them (not compute the result another way).
LAB_INSTRUCTIONS = {"CompareScalar": "the two masks, x > lambd and x < -lambd",
                    "Select": "grad or +0, by the masks"}


def _recorded_run(fn: Any, n: int = 1000, dtype: str = "float32", soc: str = "Ascend910B4", lambd: float = 0.5) -> Any:
    """One recorded run of the learner's tiling and kernel (the instruction-stream case reads its trace)."""
    info = standalone.make_soc(soc)
    g, x = sample(n, dtype, 7, -2.0, 2.0), sample(n, dtype, 8, -2.0, 2.0, edges=(lambd, -lambd, 0.0))
    td = _part("tiling")(fn)(n, dtype, info.vector_core_num, usable_ub(info), lambd)
    run, _ = launch_kernel(_part("kernel")(fn), td, [g, x], g.dtype, info, schMode=td.tilingKey,
                           kernel_name="SoftshrinkGrad", record=True, strict=False)   # the other cases judge the bits
    return run


def cases(socs: Iterable[str] | None = None, limits: SocLimits | None = None) -> list[Case]:
    """The battery; ``limits`` collects what happened on SoCs whose AscendC API lacks the kernel's
    instructions (``lab5_copy_compute.LIMITED_ARCHS``), for the summary."""
    socs = list(platform.socs() if socs is None else socs)
    first = "Ascend910B4" if "Ascend910B4" in socs else socs[0]
    out = [_struct_case()]
    out += [_tiling_case(*args) for args in (
        (1000, "float32", 40, 188_160), (100_000, "float16", 64, 253_952), (100_000, "bfloat16", 48, 188_160, 1e-3),
        (1, "float32", 8, 253_952, 0.0), (65, "float16", 64, 253_952), (5000, "bfloat16", 1, 4096, 0.1),
        (12_345, "float32", 7, 4096, 2.0))]
    out += [_tiling_case(*args) for args in (
        (1000, "int32", 40, 188_160), (1000, "float32", 0, 188_160), (0, "float16", 40, 188_160),
        (1000, "float32", 40, 1000))]
    # the kernel alone
    out += [
        _kernel_case(f"N = 1000 float32 on {first}", ["topic:kernel"], 1000, "float32", first),
        instruction_case("the instructions of your Compute: N = 1000 float32 on Ascend910B4", LAB_INSTRUCTIONS,
                         _recorded_run),
        _kernel_case("N = 4097 float32 on one core, 4 KB UB budget", ["topic:many tiles"], 4097, "float32", first,
                     core_num=1, tiling_ub=4096, seed=1),
        _kernel_case("N = 3001 float16 on 3 cores, 4 KB UB budget", ["topic:many tiles"], 3001, "float16", first,
                     core_num=3, tiling_ub=4096, seed=2),
        _kernel_case("N = 2000 bfloat16 on one core, 4 KB UB budget", ["topic:many tiles"], 2000, "bfloat16", first,
                     core_num=1, tiling_ub=4096, seed=3),
        _kernel_case("lambd = 1e-3, float16 (half(lambd) = 0.0010004)", ["topic:thresholds"], 999, "float16", first,
                     core_num=4, tiling_ub=4096, lambd=1e-3, seed=4),
        _kernel_case("lambd = 70000, float16 (half(lambd) = inf)", ["topic:thresholds"], 999, "float16", first,
                     core_num=4, tiling_ub=4096, lambd=70000.0, seed=5),
        _kernel_case("lambd = 0, bfloat16", ["topic:thresholds"], 999, "bfloat16", first, core_num=4, tiling_ub=4096,
                     lambd=0.0, seed=6),
    ]
    for soc in socs:
        for dtype in KERNEL_DTYPES:
            for n in (37, 5003):
                out.append(_kernel_case(f"N = {n} {dtype} on {soc}", [f"soc:{soc}", f"dtype:{dtype}"], n, dtype, soc,
                                        seed=n + len(soc), limits=limits))
    # the API
    out += _status_cases(socs)
    out += _compute_cases(socs, limits)
    return out


# ==================================================================================================
# figures and summary
# ==================================================================================================
FIGURE_RUN = (1_500_000, "float16", "Ascend910B4")


def _figure_run(fn: Any) -> tuple[Any, Any]:
    n, dtype, soc = FIGURE_RUN
    info = platform.get_soc(soc)
    td = _part("tiling")(fn)(n, dtype, info.vector_core_num, usable_ub(info), 0.5)
    g = sample(n, dtype, 1, -2.0, 2.0, specials=False)
    x = sample(n, dtype, 2, -2.0, 2.0, specials=False)
    run, _ = launch_kernel(_part("kernel")(fn), td, [g, x], g.dtype, info, record=True, cores=[0], strict=False,
                           schMode=td.tilingKey, kernel_name="SoftshrinkGrad")
    run.trace.meta["dtype"] = dtype
    return run, td


def figures(fn: Any) -> list[tuple[str, Any]]:
    """Your kernel in the book's figures, from one recorded run (core 0 of N = 1.5 M float16 elements on
    Ascend910B4): the tile map of your tiling, core 0's UB layout and its pipeline lanes."""
    from ascend_lab import viz

    run, td = _figure_run(fn)
    n, dtype, soc = FIGURE_RUN
    ranges = hsg_host.core_ranges(hsg_host.HardSigmoidGradTilingData(   # the same split as HardSigmoidGrad's
        totalLength=td.totalLength, blockFactor=td.blockFactor, ubFactor=td.ubFactor, alpha=0.0, beta=0.0,
        blockDim=td.blockDim, tilingKey=0), dtype, n)
    return [(f"the tile map of your tiling for N = {n:,} {dtype} on {soc}",
             viz.plot_tile_map(td, dtype=dtype, n=n, ranges=ranges, tile_field="ubFactor")),
            ("the UB of core 0 as your Init laid it out", viz.plot_ub_layout(run)),
            ("the pipes of core 0 running your kernel", viz.plot_pipeline(run, cores=[0]))]


def _summary(fn: Any, battery: list[Case]) -> list[str]:
    run, td = _figure_run(fn)
    n, dtype, _ = FIGURE_RUN
    counts: dict[str, int] = {}
    for c in battery:
        prefix = c.name.split(":", 1)[0]
        part = prefix if prefix in ("tiling", "kernel") else "API" if c.call is _call_api else "TilingData"
        counts[part] = counts.get(part, 0) + 1
    return [", ".join(f"{v} {k} cases" for k, v in counts.items()),
            *describe_run(run, td, n, dtype)]


def check(softshrink_backward: Any, socs: Iterable[str] | None = None) -> KernelReport:
    """Run your operator (``softshrink_backward() -> {"TilingData", "tiling", "kernel", "GetWorkspaceSize",
    "Run"}``) over the whole battery; a passing report shows your kernel in the book's figures."""
    limits = SocLimits()
    battery = cases(socs, limits)
    report = run_battery(softshrink_backward, battery, title=TITLE,
                         summary=lambda: _summary(softshrink_backward, battery) + limits.lines(),
                         refuse_reference=True)
    return KernelReport.of(report, lambda: figures(softshrink_backward))
