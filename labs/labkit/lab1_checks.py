"""Lab 1 -- the argument checks of a new operator, ``aclnnSoftplusBackward``.

The learner writes phase 1's checks (no graph) as a function

    softplus_backward_checks(gradOutput, self, beta, threshold, gradInput,
                             workspaceSize=OUT, executor=OUT) -> int

that returns the aclnn status code (or raises ``ParamError(code, message)``, as the package's own APIs
do). The spec is the notebook's (``labs/01_checks.md``); in short, in this order:

 1. ``workspaceSize`` or ``executor`` out-pointer is nullptr                          -> 161001
 2. ``gradOutput``, ``self``, ``beta``, ``threshold``, ``gradInput`` nullptr (in order) -> 161001
 3. ``gradOutput`` / ``self`` dtype not in the SoC's list                             -> 161002
    (A2/A3/Ascend950: FLOAT, FLOAT16, BFLOAT16; Ascend910 and 310P: FLOAT, FLOAT16)
 4. ``CanCast(PromoteType(gradOutput, self), gradInput)`` is false                    -> 161002
 5. ``beta->ToFloat() == 0``                                                          -> 161002
 6. rank > 8 for ``gradOutput``, ``self``, ``gradInput`` (in order)                   -> 161002
 7. ``gradOutput`` and ``self`` do not broadcast                                      -> 161002
 8. the broadcast shape differs from ``gradInput``'s view shape                       -> 161002
 9. otherwise 0 (an empty tensor still goes through every check; it only skips the graph).

The oracle below is *table-driven* (a list of rules; the first violated one decides), evaluated on plain
descriptions of the inputs (shapes and dtype names, a scalar's value converted with numpy), so it shares
no code path with the procedural reference solution in :mod:`labkit.solutions`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ascend_lab import acl
from ascend_lab.base import platform
from ascend_lab.base.log import OP_LOGE
from ascend_lab.dtypes import as_acl_dtype, to_numpy
from ascend_lab.opdev.aclnn_common import OUT, ParamError
from ascend_lab.opdev.data_type_utils import CanCast, PromoteType
from ascend_lab.opdev.errno import ACLNN_ERR_PARAM_INVALID, ACLNN_ERR_PARAM_NULLPTR, ACLNN_SUCCESS, describe
from ascend_lab.run import DeviceTensors, acl_session

from .checker import Case, Report, answer_key, run_battery

__all__ = ["API", "FUNCTION", "RULES", "ScalarSpec", "TensorSpec", "cases", "check", "oracle"]

API = "aclnnSoftplusBackwardGetWorkspaceSize"
FUNCTION = "softplus_backward_checks"
TITLE = "Lab 1 \u00b7 aclnnSoftplusBackward checks"
NULLPTR, INVALID, SUCCESS = int(ACLNN_ERR_PARAM_NULLPTR), int(ACLNN_ERR_PARAM_INVALID), int(ACLNN_SUCCESS)


# --------------------------------------------------------------------------------------------------
# descriptions of the inputs (what a case is made of; turned into real aclTensor/aclScalar per call)
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TensorSpec:
    """A tensor to create: shape, dtype name and layout ("contiguous" or "transposed" -- a strided view)."""

    shape: tuple[int, ...]
    dtype: str = "float32"
    layout: str = "contiguous"

    def array(self) -> np.ndarray:
        np_dtype = to_numpy(as_acl_dtype(self.dtype))
        if self.layout == "transposed":
            return np.zeros(tuple(reversed(self.shape)), np_dtype).T
        return np.zeros(self.shape, np_dtype)

    def __repr__(self) -> str:
        strided = " (strided view)" if self.layout != "contiguous" else ""
        return f"{self.dtype}{list(self.shape)}{strided}"


@dataclass(frozen=True)
class ScalarSpec:
    """An aclScalar to create with ``aclCreateScalar(value, dtype)``."""

    value: float
    dtype: str = "float32"

    def as_float(self) -> np.float32:
        """``ToFloat()``, computed the oracle's way: store in the scalar's dtype, then convert to float32."""
        with np.errstate(all="ignore"):
            stored = to_numpy(as_acl_dtype(self.dtype)).type(self.value)
            return np.float32(stored)

    def __repr__(self) -> str:
        return f"{self.value!r} ({self.dtype})"


# --------------------------------------------------------------------------------------------------
# the oracle: a table of rules, the first violated one decides
# --------------------------------------------------------------------------------------------------
#: dtypes the (hypothetical) SoftplusGrad kernel is built for, by op_def family.
_SUPPORT_BY_FAMILY: dict[str, frozenset[str]] = {
    "ascend910": frozenset({"float32", "float16"}),
    "ascend310p": frozenset({"float32", "float16"}),
    "ascend910b": frozenset({"float32", "float16", "bfloat16"}),
    "ascend910_93": frozenset({"float32", "float16", "bfloat16"}),
    "ascend950": frozenset({"float32", "float16", "bfloat16"}),
}
MAX_DIMS = 8


def _supported(soc: str) -> frozenset[str]:
    family = platform.get_soc(soc).family
    if family not in _SUPPORT_BY_FAMILY:
        raise KeyError(f"lab 1 has no dtype list for SoC family {family!r} ({soc}); add it to _SUPPORT_BY_FAMILY")
    return _SUPPORT_BY_FAMILY[family]


def _broadcast(a: TensorSpec, b: TensorSpec) -> tuple[int, ...] | None:
    try:
        return tuple(int(d) for d in np.broadcast_shapes(a.shape, b.shape))
    except ValueError:
        return None


@dataclass(frozen=True)
class Rule:
    number: str
    code: int
    text: str
    violated: Callable[[dict[str, Any]], bool]


def _null(name: str) -> Callable[[dict[str, Any]], bool]:
    return lambda a: a[name] is None


def _dtype_bad(name: str) -> Callable[[dict[str, Any]], bool]:
    return lambda a: a[name].dtype not in _supported(a["soc"])


def _rank_bad(name: str) -> Callable[[dict[str, Any]], bool]:
    return lambda a: len(a[name].shape) > MAX_DIMS


RULES: tuple[Rule, ...] = (
    Rule("1", NULLPTR, "rule 1: the workspaceSize out-pointer is nullptr (checked before anything else)",
         _null("workspaceSize")),
    Rule("1", NULLPTR, "rule 1: the executor out-pointer is nullptr (checked before anything else)",
         _null("executor")),
    *(Rule("2", NULLPTR, f"rule 2: {n} is nullptr (nulls are checked before dtypes, values and shapes)", _null(n))
      for n in ("gradOutput", "self", "beta", "threshold", "gradInput")),
    Rule("3", INVALID, "rule 3: gradOutput's dtype is not in this SoC's list", _dtype_bad("gradOutput")),
    Rule("3", INVALID, "rule 3: self's dtype is not in this SoC's list", _dtype_bad("self")),
    Rule("4", INVALID, "rule 4: PromoteType(gradOutput, self) cannot be cast to gradInput's dtype (CanCast)",
         lambda a: not CanCast(PromoteType(a["gradOutput"].dtype, a["self"].dtype), a["gradInput"].dtype)),
    Rule("5", INVALID, "rule 5: beta is 0 once converted with ToFloat() (the formula divides by beta)",
         lambda a: a["beta"].as_float() == 0),
    *(Rule("6", INVALID, f"rule 6: {n} has more than 8 dims", _rank_bad(n))
      for n in ("gradOutput", "self", "gradInput")),
    Rule("7", INVALID, "rule 7: gradOutput and self do not broadcast (numpy rules)",
         lambda a: _broadcast(a["gradOutput"], a["self"]) is None),
    Rule("8", INVALID, "rule 8: gradInput's shape is not the broadcast shape of gradOutput and self",
         lambda a: _broadcast(a["gradOutput"], a["self"]) != tuple(a["gradInput"].shape)),
)

_PASS_TEXT = "every check passes: the call succeeds (an empty tensor only skips the graph)"


@answer_key
def oracle(inputs: dict[str, Any]) -> tuple[int, str]:
    """``(status code, the rule that decided it)`` for a case's inputs."""
    for rule in RULES:
        if rule.violated(inputs):
            return rule.code, rule.text
    return SUCCESS, _PASS_TEXT


# --------------------------------------------------------------------------------------------------
# the battery
# --------------------------------------------------------------------------------------------------
F32_23 = TensorSpec((2, 3))
ONE = ScalarSpec(1.0)
TWENTY = ScalarSpec(20.0)
_IN_DTYPES = ("float32", "float16", "bfloat16", "int32", "int8", "float64")
_OUT_DTYPES = _IN_DTYPES + ("int64", "bool")


def _inputs(soc: str = platform.DEFAULT_SOC, g: Any = F32_23, s: Any = F32_23, beta: Any = ONE,
            thr: Any = TWENTY, out: Any = F32_23, ws: Any = OUT, exe: Any = OUT) -> dict[str, Any]:
    return {"soc": soc, "gradOutput": g, "self": s, "beta": beta, "threshold": thr, "gradInput": out,
            "workspaceSize": ws, "executor": exe}


def _make(name: str, covers: Iterable[str], **kw: Any) -> Case:
    inputs = _inputs(**kw)
    code, why = oracle(inputs)
    return Case(name, inputs, code, covers=(f"soc:{inputs['soc']}", *covers), hint=why,
                compare=_compare_code, show=_show_code)


def cases(socs: Iterable[str] | None = None) -> list[Case]:
    """The battery, simplest cases first."""
    socs = list(platform.socs() if socs is None else socs)
    out: list[Case] = []
    t = TensorSpec
    # A. the plain valid call on every SoC
    for soc in socs:
        out.append(_make(f"a valid float32 call on {soc}", ["topic:valid call"], soc=soc))
    # B. out-pointers
    out += [
        _make("workspaceSize is nullptr", ["null:workspaceSize"], ws=None),
        _make("executor is nullptr", ["null:executor"], exe=None),
        _make("executor is nullptr and gradOutput has an unsupported dtype",
              ["null:executor", "topic:order of checks"], exe=None, g=t((2, 3), "int32")),
        _make("workspaceSize is nullptr and self is nullptr", ["null:workspaceSize", "topic:order of checks"],
              ws=None, s=None),
    ]
    # C. null arguments, alone and together with a later error
    for name, key in (("gradOutput", "g"), ("self", "s"), ("beta", "beta"), ("threshold", "thr"),
                      ("gradInput", "out")):
        out.append(_make(f"{name} is nullptr", [f"null:{name}"], **{key: None}))
    out += [
        _make("self is nullptr and gradOutput is int32", ["null:self", "topic:order of checks"],
              s=None, g=t((2, 3), "int32")),
        _make("threshold is nullptr and beta is 0", ["null:threshold", "topic:order of checks"],
              thr=None, beta=ScalarSpec(0.0)),
        _make("gradInput is nullptr and gradOutput has 9 dims", ["null:gradInput", "topic:order of checks"],
              out=None, g=t((1,) * 9)),
        _make("gradInput is nullptr and the shapes do not broadcast", ["null:gradInput", "topic:order of checks"],
              out=None, g=t((2, 3)), s=t((4, 3))),
        _make("every tensor and scalar is nullptr", ["topic:order of checks"], g=None, s=None, beta=None,
              thr=None, out=None),
    ]
    # D. dtypes: every (gradOutput, self, gradInput) combination on every SoC
    for soc in socs:
        for gd in _IN_DTYPES:
            for sd in _IN_DTYPES:
                for od in _OUT_DTYPES:
                    out.append(_make(f"gradOutput {gd}, self {sd}, gradInput {od} on {soc}",
                                     [f"dtype:{gd}", f"dtype:{od}", "topic:dtype combinations"],
                                     soc=soc, g=t((2, 3), gd), s=t((2, 3), sd), out=t((2, 3), od)))
    # E. the values of beta and threshold
    for beta, note in ((ScalarSpec(0.0), "beta = 0.0"), (ScalarSpec(-0.0), "beta = -0.0"),
                       (ScalarSpec(0, "int32"), "beta = 0 given as an INT32 scalar"),
                       (ScalarSpec(1e-50, "float64"), "beta = 1e-50 as a DOUBLE (ToFloat() gives 0.0f)"),
                       (ScalarSpec(1e-30, "float16"), "beta = 1e-30 stored as FLOAT16 (it is 0 in half)"),
                       (ScalarSpec(1e-30), "beta = 1e-30 as a FLOAT (tiny but not zero)"),
                       (ScalarSpec(-2.0), "beta = -2.0 (negative is fine)"),
                       (ScalarSpec(2, "int32"), "beta = 2 as an INT32 scalar"),
                       (ScalarSpec(float("nan")), "beta = NaN (NaN is not equal to 0)"),
                       (ScalarSpec(float("inf")), "beta = +inf")):
        out.append(_make(note, ["topic:beta values"], beta=beta))
    out.append(_make("beta = 0 on an empty tensor", ["topic:beta values", "topic:empty tensor"],
                     beta=ScalarSpec(0.0), g=t((0, 3)), s=t((0, 3)), out=t((0, 3))))
    out.append(_make("beta = 0 and gradOutput int8", ["topic:beta values"], beta=ScalarSpec(0.0),
                     g=t((2, 3), "int8")))
    for thr in (ScalarSpec(0.0), ScalarSpec(-5.0), ScalarSpec(float("nan")), ScalarSpec(3, "int64")):
        out.append(_make(f"threshold = {thr!r} (any threshold is allowed)", ["topic:threshold values"], thr=thr))
    # F. ranks 0..9
    for rank in range(10):
        shape = (1,) * rank
        out.append(_make(f"all three tensors have {rank} dims", ["topic:ranks"],
                         g=t(shape), s=t(shape), out=t(shape)))
    nine, eight = (1,) * 9, (1,) * 8
    out += [
        _make("self has 9 dims, gradOutput 8, gradInput 9", ["topic:ranks"], g=t(eight), s=t(nine), out=t(nine)),
        _make("gradInput has 9 dims, gradOutput and self 1", ["topic:ranks"], g=t((1,)), s=t((1,)), out=t(nine)),
        _make("gradOutput has 9 dims, self 1, gradInput 9 (a valid broadcast, but too many dims)",
              ["topic:ranks"], g=t(nine), s=t((1,)), out=t(nine)),
        _make("8 dims of size 2 everywhere", ["topic:ranks"], g=t((2,) * 8), s=t((2,) * 8), out=t((2,) * 8)),
    ]
    # G. broadcasting
    shapes = [
        ((2, 3), (3,), (2, 3)), ((3,), (2, 3), (2, 3)), ((2, 1), (1, 3), (2, 3)), ((4, 1, 3), (2, 3), (4, 2, 3)),
        ((2, 3), (3,), (3,)), ((3,), (2, 3), (3,)), ((2, 3), (4, 3), (4, 3)), ((2, 1), (1, 3), (3, 2)),
        ((2, 3), (2, 3), (3, 2)), ((2, 3), (2, 3), (1, 2, 3)), ((5,), (), (5,)), ((), (), ()),
        ((1,), (), (1,)), ((), (1,), ()), ((3, 1), (3,), (3, 3)),
    ]
    for gs, ss, os_ in shapes:
        out.append(_make(f"gradOutput {list(gs)}, self {list(ss)}, gradInput {list(os_)}", ["topic:broadcasting"],
                         g=t(gs), s=t(ss), out=t(os_)))
    out.append(_make("broadcasting float16 with bfloat16 into float32", ["topic:broadcasting"],
                     soc="Ascend950PR", g=t((4, 1), "float16"), s=t((5,), "bfloat16"), out=t((4, 5), "float32")))
    # H. empty tensors: still checked
    empties = [
        ("all three [0, 3]", {}, ((0, 3), (0, 3), (0, 3))),
        ("gradOutput [0, 3], self [1, 3]", {}, ((0, 3), (1, 3), (0, 3))),
        ("gradOutput [0, 3], self [2, 3]: 0 and 2 do not broadcast", {}, ((0, 3), (2, 3), (0, 3))),
        ("gradInput [0] but the broadcast shape is [2, 3]", {}, ((2, 3), (2, 3), (0,))),
        ("empty, int32 on every tensor", {"dt": "int32"}, ((0,), (0,), (0,))),
        ("empty, bfloat16 on Ascend910A", {"dt": "bfloat16", "soc": "Ascend910A"}, ((0,), (0,), (0,))),
        ("empty with 9 dims", {}, ((0,) + (1,) * 8, (0,) + (1,) * 8, (0,) + (1,) * 8)),
    ]
    for note, extra, (gs, ss, os_) in empties:
        dt = extra.get("dt", "float32")
        soc = extra.get("soc", platform.DEFAULT_SOC)
        if soc not in socs:
            continue
        out.append(_make(f"empty tensor: {note}", ["topic:empty tensor"], soc=soc, g=t(gs, dt), s=t(ss, dt),
                         out=t(os_, dt)))
    out.append(_make("empty tensor with a nullptr threshold", ["topic:empty tensor"], g=t((0,)), s=t((0,)),
                     out=t((0,)), thr=None))
    # I. strided views
    out += [
        _make("gradOutput is a strided (transposed) view", ["topic:strided views"], g=t((3, 2), layout="transposed"),
              s=t((3, 2)), out=t((3, 2))),
        _make("gradInput is a strided view, all float16", ["topic:strided views"], g=t((3, 2), "float16"),
              s=t((3, 2), "float16"), out=t((3, 2), "float16", "transposed")),
    ]
    return [c for c in out if c.inputs["soc"] in socs]


# --------------------------------------------------------------------------------------------------
# calling the learner's function, comparing codes
# --------------------------------------------------------------------------------------------------
def _call(fn: Callable[..., Any], inputs: dict[str, Any]) -> Any:
    """Create the aclTensors/aclScalars, call ``fn`` on the case's SoC, release everything.
    A ``ParamError`` becomes its status code after logging, as ``guard_phase1`` does in the package."""
    held = DeviceTensors()
    scalars = []
    with platform.soc(inputs["soc"]):
        try:
            args = []
            for key in ("gradOutput", "self", "beta", "threshold", "gradInput"):
                spec = inputs[key]
                if spec is None:
                    args.append(None)
                elif isinstance(spec, ScalarSpec):
                    scalar = acl.aclCreateScalar(spec.value, spec.dtype)
                    scalars.append(scalar)
                    args.append(scalar)
                else:
                    args.append(held.upload(spec.array(), key))
            try:
                return fn(*args, workspaceSize=inputs["workspaceSize"], executor=inputs["executor"])
            except ParamError as err:
                OP_LOGE(API, str(err))
                return err.code
        finally:
            held.release()
            for scalar in scalars:
                acl.aclDestroyScalar(scalar)


def _show_code(code: Any) -> str:
    if isinstance(code, (bool, acl.aclDataType)) or not isinstance(code, (int, np.integer)):
        return repr(code)
    return describe(int(code))


def _compare_code(expected: int, got: Any) -> str | None:
    if got is None:
        return "your function returned None: end it with `return ACLNN_SUCCESS` when every check passes"
    if isinstance(got, (bool, acl.aclDataType)) or not isinstance(got, (int, np.integer)):
        return f"return an int status code (or raise ParamError), not a {type(got).__name__}"
    got = int(got)
    if got == expected:
        return None
    if expected == SUCCESS:
        return "every check passes for these inputs, but your function rejected them"
    if got == SUCCESS:
        return "the spec rejects these inputs, but your function accepted them"
    if expected == NULLPTR and got == INVALID:
        return "a nullptr check comes earlier in the spec's order than the check that fired"
    return "a different check should have fired first"


def _summary(battery: list[Case]) -> list[str]:
    counts = {code: sum(1 for c in battery if c.expected == code) for code in (SUCCESS, NULLPTR, INVALID)}
    fired = {r.text for r in RULES} & {c.hint for c in battery}
    return [f"status codes expected: 0 \u00d7{counts[SUCCESS]}, 161001 \u00d7{counts[NULLPTR]}, "
            f"161002 \u00d7{counts[INVALID]}",
            f"every rule decided at least one case ({len(fired)} of {len(RULES)} rule lines)"]


def _hidden(socs: list[str]) -> Callable[[np.random.Generator], list[Case]]:
    """Cases drawn at check time: random SoCs, dtypes, shapes (broadcasting or not, up to 9 dims, empty ones),
    scalars and null arguments, in combinations the announced battery does not list."""
    def draw(rng: np.random.Generator) -> list[Case]:
        out = []
        for _ in range(40):
            rank = int(rng.integers(0, 10))
            shape = tuple(int(d) for d in rng.integers(0, 5, rank))
            other = tuple(1 if rng.random() < 0.3 else d for d in shape[int(rng.integers(0, rank + 1)):])
            if rng.random() < 0.2 and other:
                other = (*other[:-1], other[-1] + 1)               # does not broadcast
            g, s = (shape, other) if rng.random() < 0.5 else (other, shape)
            out_shape = np.broadcast_shapes(g, s) if _broadcast(TensorSpec(g), TensorSpec(s)) is not None else shape
            if rng.random() < 0.15:
                out_shape = (*out_shape, 2)
            dts = [str(rng.choice(_IN_DTYPES)), str(rng.choice(_IN_DTYPES)), str(rng.choice(_OUT_DTYPES))]
            if rng.random() < 0.6:                                 # mostly float inputs, so later rules decide
                dts[:2] = [str(rng.choice(_IN_DTYPES[:3]))] * 2
            beta = ScalarSpec(float(rng.choice([0.0, -0.0, 1.0, 1e-30, -3.5, 1e-50])),
                              str(rng.choice(["float32", "float16", "float64", "int32"])))
            kw: dict[str, Any] = {"soc": str(rng.choice(socs)), "g": TensorSpec(tuple(g), dts[0]),
                                  "s": TensorSpec(tuple(s), dts[1]), "out": TensorSpec(tuple(out_shape), dts[2]),
                                  "beta": beta, "thr": ScalarSpec(float(rng.normal()))}
            for key in ("g", "s", "beta", "thr", "out", "ws", "exe"):
                if rng.random() < 0.04:
                    kw[key] = None
            out.append(_make(f"gradOutput {kw['g']!r}, self {kw['s']!r}, gradInput {kw['out']!r}, beta "
                             f"{kw['beta']!r} on {kw['soc']}", ["topic:drawn at check time"], **kw))
        return out
    return draw


def check(fn: Any, socs: Iterable[str] | None = None, *, seed: int | None = None) -> Report:
    """Run ``fn`` (your ``softplus_backward_checks``) on the whole battery, then on cases drawn now (``seed``
    draws a reported set again); returns the Report."""
    socs = list(platform.socs() if socs is None else socs)
    battery = cases(socs)
    with acl_session():
        return run_battery(fn, battery, title=TITLE, call=_call, summary=lambda: _summary(battery),
                           refuse_reference=True, hidden=_hidden(socs), seed=seed)


def _spec_dtype_table() -> list[tuple[str, str, str]]:
    """(SoC, NpuArch, dtypes) rows for the notebook's spec table."""
    order = ("float32", "float16", "bfloat16")
    return [(name, platform.get_soc(name).npu_arch.name,
             ", ".join(d for d in order if d in _supported(name))) for name in platform.socs()]

