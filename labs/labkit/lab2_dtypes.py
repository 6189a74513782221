"""Lab 2 -- dtype reasoning for aclnnHardsigmoidBackward: promote type, compute dtype, Cast nodes.

The learner writes

    hardsigmoid_dtype_plan(grad_dtype, self_dtype, out_dtype, soc) -> DtypePlan

predicting, for tensors of the given dtypes on the given SoC, what phase 1 answers (``status``), the
dtype both inputs meet in (``promote``), the dtype the kernel's vector instructions compute in
(``compute``) and the ``Cast`` nodes of the L0 graph in graph order (``casts``: ``(role, src, dst)`` with
role ``"gradOutput"``, ``"self"`` or ``"out"``).

The oracle does not reason at all: it *runs the package* (``al.hardsigmoid_backward`` with
``trace=True``) for every (gradOutput, self, out) dtype triple of ``dtypes.BOOK_DTYPES`` on every SoC of
the catalogue, and reads the answer off what was built and executed: the status, the dtype of the
``HardSigmoidGrad`` node's inputs, the bytes per element of the kernel's first ``Muls`` in the trace,
and the ``Cast`` nodes of ``run.nodes``. So it checks the learner against the real graphs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ascend_lab.base import platform
from ascend_lab.dtypes import BOOK_DTYPES, as_acl_dtype, to_numpy
from ascend_lab.opdev.errno import ACLNN_SUCCESS, describe

from .checker import Case, Report, answer_key, positional, run_battery

__all__ = ["FUNCTION", "ROLES", "DtypePlan", "cases", "check", "observe"]

FUNCTION = "hardsigmoid_dtype_plan"
TITLE = "Lab 2 \u00b7 HardsigmoidBackward dtype plan"
ROLES = ("gradOutput", "self", "out")
_BYTES_TO_COMPUTE = {4: "float32", 2: "float16"}


@dataclass(frozen=True)
class DtypePlan:
    """The answer: ``status`` (0 or the failing code); when 0, also ``promote``, ``compute`` and ``casts``.

    Dtypes may be given in any spelling the package accepts ("float16", ``np.float16``, ``ACL_FLOAT16``).
    ``casts`` lists the Cast nodes in graph order as ``(role, src_dtype, dst_dtype)``.
    """

    status: int
    promote: Any = None
    compute: Any = None
    casts: tuple[tuple[str, Any, Any], ...] | list[tuple[str, Any, Any]] = field(default_factory=tuple)

    def __repr__(self) -> str:
        if self.status != ACLNN_SUCCESS:
            return f"DtypePlan(status={self.status!r})"
        casts = ", ".join(f"{r} {_name(a)}->{_name(b)}" for r, a, b in self.casts)
        return (f"DtypePlan(status={self.status!r}, promote={_name(self.promote)}, compute={_name(self.compute)}, "
                f"casts=[{casts}])")


def _name(dtype: Any) -> str:
    try:
        return as_acl_dtype(dtype).short
    except (TypeError, ValueError):
        return repr(dtype)


# --------------------------------------------------------------------------------------------------
# the oracle: observe the real package
# --------------------------------------------------------------------------------------------------
def _role(tensor_name: str) -> str:
    for role in ("gradOutput", "self"):
        if tensor_name.startswith(role):
            return role
    return "out"


@functools.cache
@answer_key
def observe(grad_dtype: str, self_dtype: str, out_dtype: str, soc: str) -> DtypePlan:
    """Run aclnnHardsigmoidBackward on one-element tensors and read the plan off the run."""
    import ascend_lab as al  # the convenience layer (imported late: it pulls in every operator)

    run = al.hardsigmoid_backward(np.zeros(1, to_numpy(as_acl_dtype(grad_dtype))),
                                  np.zeros(1, to_numpy(as_acl_dtype(self_dtype))), soc=soc,
                                  out_dtype=out_dtype, trace=True)
    if run.status != ACLNN_SUCCESS:
        return DtypePlan(run.status)
    kernel = next(n for n in run.nodes if n.op == "HardSigmoidGrad")
    muls = next(e for e in run.trace.events if e.instr == "Muls")
    casts = tuple((_role(n.inputs[0].name), n.inputs[0].dtype.short, n.outputs[0].dtype.short)
                  for n in run.nodes if n.op == "Cast")
    return DtypePlan(run.status, kernel.inputs[0].dtype.short, _BYTES_TO_COMPUTE[muls.nbytes // muls.count], casts)


# --------------------------------------------------------------------------------------------------
# comparing plans
# --------------------------------------------------------------------------------------------------
_FIELD_HINTS = {
    "status": "phase 1 rejects a call (161002) when gradOutput or self is outside the SoC's list, or when "
              "PromoteType(gradOutput, self) cannot be cast to out (CanCast); out itself is not checked "
              "against the list",
    "promote": "both inputs are cast to PromoteType(gradOutput, self) before the kernel",
    "compute": "which kernel computes depends on the SoC (run.kernel names it): a stock CANN install runs "
               "the built-in TBE kernel on 910A/910B/910_93/310P and the main-tree AscendC kernel on "
               "Ascend950; look at the bytes per element of each kernel's Muls for a float16 and a bfloat16 run",
    "casts": "a Cast node appears only where the dtypes differ (l0op::Cast returns its input unchanged "
             "otherwise): gradOutput -> promote, self -> promote, then promote -> out after the kernel",
}


def _norm_dtype(value: Any) -> str:
    return as_acl_dtype(value).short


def _norm(plan: Any) -> tuple[int, str | None, str | None, tuple[tuple[str, str, str], ...]]:
    if isinstance(plan, dict):
        get = plan.get
    else:
        def get(key: str, default: Any = None) -> Any:
            return getattr(plan, key, default)
    status = get("status")
    if isinstance(status, bool) or not isinstance(status, (int, np.integer)):
        raise TypeError(f"status must be an int status code, got {status!r}")
    if int(status) != ACLNN_SUCCESS:
        return int(status), None, None, ()
    casts = tuple((str(r), _norm_dtype(a), _norm_dtype(b)) for r, a, b in (get("casts") or ()))
    return (int(status), _norm_dtype(get("promote")), _norm_dtype(get("compute")), casts)


def _compare(expected: DtypePlan, got: Any) -> str | None:
    if got is None:
        return "your function returned None: return a DtypePlan(status, promote, compute, casts)"
    try:
        g = _norm(got)
    except (TypeError, ValueError) as exc:
        return f"could not read your plan: {exc}"
    e = _norm(expected)
    for i, key in enumerate(("status", "promote", "compute", "casts")):
        if e[i] != g[i]:
            if key == "status":
                exp, gotv = describe(e[0]), describe(g[0])
            elif key == "casts":
                def text(cs: tuple[tuple[str, str, str], ...]) -> str:
                    return ", ".join(f"{r} {a}->{b}" for r, a, b in cs) or "no Cast node"
                exp, gotv = text(e[3]), text(g[3])
            else:
                exp, gotv = e[i], g[i]
            return f"{key}: expected {exp}, got {gotv} \u2014 {_FIELD_HINTS[key]}"
    return None


def _show(plan: Any) -> str:
    return repr(plan)


# --------------------------------------------------------------------------------------------------
# the battery
# --------------------------------------------------------------------------------------------------
_FIRST = ("float32", "float16", "bfloat16")   # the dtypes that can pass: try them first


def cases(socs: Iterable[str] | None = None, dtypes: Iterable[Any] | None = None,
          triples: Iterable[tuple[str, str, str]] | None = None) -> list[Case]:
    """Every (gradOutput, self, out) triple (or the ``triples`` given) on every SoC; the accepted float triples
    first."""
    socs = list(platform.socs() if socs is None else socs)
    names = [as_acl_dtype(d).short for d in (BOOK_DTYPES if dtypes is None else dtypes)]
    ordered = [d for d in _FIRST if d in names] + [d for d in names if d not in _FIRST]
    walk = list(triples) if triples is not None else [(g, s, o) for g in ordered for s in ordered for o in ordered]
    out = []
    for soc in socs:
        for g, s, o in walk:
            exp = observe(g, s, o, soc)
            topics = ["topic:accepted" if exp.status == ACLNN_SUCCESS else "topic:rejected"]
            if exp.status == ACLNN_SUCCESS and exp.compute != exp.promote:
                topics.append("topic:computes wider than it promotes")
            out.append(Case(f"gradOutput {g}, self {s}, out {o} on {soc}",
                            {"grad_dtype": g, "self_dtype": s, "out_dtype": o, "soc": soc}, exp,
                            covers=(f"soc:{soc}", f"dtype:{g}", *topics), compare=_compare, show=_show))
    return out


def _summary(battery: list[Case]) -> list[str]:
    ok = [c for c in battery if c.expected.status == ACLNN_SUCCESS]
    casts = sum(len(c.expected.casts) for c in ok)
    socs = len({c.inputs["soc"] for c in battery})
    lines = [f"{len(battery)} dtype triples on {socs} SoCs, each checked against the graph and trace the package "
             f"built: {len(ok)} accepted, {len(battery) - len(ok)} rejected with 161002; "
             f"{casts} Cast nodes in the accepted graphs"]
    example = next((c for c in ok if c.inputs["grad_dtype"] == "bfloat16" and c.inputs["self_dtype"] == "bfloat16"
                    and c.inputs["out_dtype"] == "float16"), None)
    if example is not None:
        lines.append(f"e.g. bfloat16, bfloat16 -> float16 on {example.inputs['soc']}: {example.expected!r}")
    return lines


#: dtypes only the cases drawn at check time use (the announced battery walks BOOK_DTYPES)
_DRAWN_DTYPES = ("int16", "uint8", "int64", "float64", "bool", "uint16", "uint32", "uint64", "complex64")


#: The SoCs whose every triple the battery announces; elsewhere it announces the float triples and draws the
#: rest at check time.
ANNOUNCED_SOCS = ("Ascend910A", "Ascend910B4", "Ascend950PR")


def _hidden(socs: list[str]) -> Callable[[np.random.Generator], list[Case]]:
    """Cases drawn at check time: triples of the book's dtypes (mostly the float ones, so most are accepted) and
    of others, on random SoCs -- most of them on a SoC whose triples the battery does not announce."""
    names = [as_acl_dtype(d).short for d in BOOK_DTYPES]

    def draw(rng: np.random.Generator) -> list[Case]:
        out = []
        for _ in range(24):
            pool = list(_FIRST) if rng.random() < 0.6 else names + list(_DRAWN_DTYPES)
            g, s, o = (str(rng.choice(pool)) for _ in range(3))
            out += cases([str(rng.choice(socs))], triples=[(g, s, o)])
        return out
    return draw


def check(fn: Any, socs: Iterable[str] | None = None, *, seed: int | None = None) -> Report:
    """Run ``fn`` (your ``hardsigmoid_dtype_plan``) on every dtype triple and SoC, then on triples drawn now
    (``seed`` draws a reported set again); returns the Report."""
    socs = list(platform.socs() if socs is None else socs)
    battery = announced(socs)
    return run_battery(fn, battery, title=TITLE, call=positional, summary=lambda: _summary(battery),
                       refuse_reference=True, hidden=_hidden(socs), seed=seed)


def announced(socs: Iterable[str] | None = None) -> list[Case]:
    """The battery a check announces: every triple on :data:`ANNOUNCED_SOCS`, the float triples on the others."""
    socs = list(platform.socs() if socs is None else socs)
    full = [s for s in socs if s in ANNOUNCED_SOCS] or socs[:1]
    return cases(full) + cases([s for s in socs if s not in full], dtypes=_FIRST)
