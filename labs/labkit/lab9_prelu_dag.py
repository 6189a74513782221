"""Lab 9 -- a new operator's backward as a DAG on the atvoss template: PReluGradUpdate on Ascend950PR.

On Ascend950 ops-nn writes PReLU's backward (the elementwise half of ``aclnnPreluBackward``) as a DAG on
the atvoss elementwise/broadcast template (``activation/p_relu_grad_update/op_kernel/arch35/
prelu_grad_update_dag.h``). It reads three tensors and writes two:

* In0 ``grads`` (the gradient of PReLU's output), In1 ``features`` (PReLU's input x), In2 ``weights``
  (one slope per channel, broadcast to x's shape);
* Out0 ``dx = x > 0 ? grads : weights * grads``;
* Out1 ``update = x > 0 ? 0 : x * grads`` (PReluGradReduce later sums it over the broadcast axes into the
  weights' gradient).

The learner writes ``prelu_grad_update_dag(T) -> Dag`` with the template's nodes (``CopyInBrc``, ``Cast``,
``Duplicate``, ``Compare``, ``Select``, ``Mul``, ``CopyOut`` from :mod:`ascend_lab.atvoss`) for T in
float32, float16 and bfloat16. :func:`check` hands that DAG to the template as an operator on it would:
``BroadcastBaseTiling`` on the inputs' own shapes (one-dim 202, NDDMA or UB-broadcast) and
``BroadcastSch<schMode, Dag>`` on the simulated Ascend950PR cores (and on what-if copies with fewer cores
and a smaller UB, so cores run several ping/pong tiles). The results are compared bit for bit with
:func:`oracle`, plain numpy written from the formulas above (each product formed exactly in float64 and
rounded once to T), over sizes with tails, one and many cores, specials (NaN, +-inf, -0, the boundary 0,
products that overflow T) and weights broadcast along one axis or given as one element.

Then the checker weighs the DAG as the template's tiling does: the live-buffer count ("aliveNum", the
number of tile-sized slots UB is divided into) and the widest element decide the tile, so a DAG that
keeps more tiles alive than it must, or computes in a wider type than it must, gets a shorter tile. It
compares the count the learner's DAG implies with the fewest these nodes allow (:data:`MIN_BUFFERS`) and
counts the vector instructions per tile (:data:`MIN_VECTOR_NODES`).

Findings name the learner's own line: the checker notes where each node was created while it calls the
learner's function (:func:`declare`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ascend_lab import standalone
from ascend_lab.ascendc import KernelRun, errors, launch
from ascend_lab.atvoss import Dag, Node, broadcast_sch, sch_mode_of
from ascend_lab.atvoss import dag as atvoss_dag
from ascend_lab.atvoss.kernel import TemplateOp
from ascend_lab.base.platform import SocInfo
from ascend_lab.dtypes import as_acl_dtype, bfloat16, to_numpy
from ascend_lab.opdev.tiling_data import TilingError
from ascend_lab.ops.common.kernel_args import gm_from_array

from .checker import Case, Report, compare_arrays, locator, run_battery
from .lab5_copy_compute import SENTINEL, sample, strict_policy

__all__ = [
    "DTYPES", "DTYPE_IDS", "FUNCTION", "INPUTS", "MIN_BUFFERS", "MIN_VECTOR_NODES", "OUTPUTS", "SOC", "Declared",
    "cases", "check", "declare", "live_buffers", "one_dim_ub_former", "oracle", "prelu_grad_update", "run",
]

FUNCTION = "prelu_grad_update_dag"
TITLE = "Lab 9 \u00b7 PReluGradUpdate as a DAG on the atvoss template"
SOC = "Ascend950PR"
DTYPES = ("float32", "float16", "bfloat16")
#: The lab's tiling-key dtype ids (an op on the template numbers its dtypes in its own ``*_struct.h``).
DTYPE_IDS: dict[np.dtype, int] = {np.dtype(np.float16): 1, bfloat16: 2, np.dtype(np.float32): 3}
INPUTS = ("grads", "features", "weights")
OUTPUTS = ("dx", "update")
#: The fewest live buffers a DAG of the template's nodes can have for this operator (one-dim and NDDMA
#: schedules, MemOptCfg LEVEL_2): 2 x 3 copy-in slots + 2 x 2 copy-out slots + 3 temps. Why 3 temps: ``update``
#: is a Select between a Duplicate'd zero tile and a product, so when it runs the mask, the zero tile and that
#: product (or the Select's own result, if a Mul follows it) are all computed tiles, none of them a copy-in.
MIN_BUFFERS = 2 * 3 + 2 * 2 + 3
#: Vector instructions per tile that suffice: one Duplicate (the zero tile), one Compare (the mask both outputs
#: share), two Muls (weights*grads and x*grads) and two Selects (one per output).
MIN_VECTOR_NODES = 6
_COPY_OPS = ("CopyInBrc", "CopyOut")
_NODE_FUNCS = frozenset({"CopyInBrc", "CopyOut", "Cast", "Duplicate", "Compare", "Select", "Mul"})
_DAG_FILE = str(Path(atvoss_dag.__file__).resolve())


# ==================================================================================================
# the oracle
# ==================================================================================================
def _product(a: np.ndarray, b: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``a * b`` rounded once to ``dtype``: the product of two float32 (or narrower) values is exact in
    float64, so rounding it to T is the one rounding a T multiply makes."""
    with np.errstate(all="ignore"):
        return (a.astype(np.float64) * b.astype(np.float64)).astype(dtype)


def oracle(grads: np.ndarray, features: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(dx, update)`` in plain numpy, on the broadcast shape: ``dx = x > 0 ? g : w * g`` and
    ``update = x > 0 ? 0 : x * g``. A NaN x is not > 0, so it takes the products (``x * g`` is then NaN)."""
    shape = np.broadcast_shapes(grads.shape, features.shape, weights.shape)
    g, x, w = (np.broadcast_to(a, shape) for a in (grads, features, weights))
    t = grads.dtype
    positive = x.astype(np.float64) > 0
    dx = np.where(positive, g, _product(w, g, t))
    update = np.where(positive, np.zeros((), t), _product(x, g, t))
    return dx.astype(t), update.astype(t)


def _variants(grads: np.ndarray, features: np.ndarray, weights: np.ndarray) -> dict[str, tuple[Any, Any]]:
    """What the usual mistakes compute, per output (None: the mistake leaves that output alone)."""
    shape = np.broadcast_shapes(grads.shape, features.shape, weights.shape)
    g, x, w = (np.broadcast_to(a, shape) for a in (grads, features, weights))
    t = grads.dtype
    x64 = x.astype(np.float64)
    wg, xg, zero = _product(w, g, t), _product(x, g, t), np.zeros((), t)
    out: dict[str, tuple[Any, Any]] = {}
    for name, mask in (("GE", x64 >= 0), ("NaN", ~(x64 <= 0)), ("LT", x64 < 0), ("LE", x64 <= 0)):
        out[name] = (np.where(mask, g, wg).astype(t), np.where(mask, zero, xg).astype(t))
    positive = x64 > 0
    out["swap"] = (np.where(positive, wg, g).astype(t), np.where(positive, xg, zero).astype(t))
    with np.errstate(all="ignore"):       # update = x * (x > 0 ? 0 : g): +inf * 0 is NaN, not 0
        out["mask-then-mul"] = (None, _product(x, np.where(positive, zero, g), t))
    return out


# ==================================================================================================
# declaring the learner's DAG, and where each node came from
# ==================================================================================================
@dataclass
class Declared:
    """The learner's DAG for one dtype, the line that created each node (``id(node) -> (file, line)``), and
    the problem that stops it from running (``problem`` and ``at``), if any."""

    dtype: np.dtype
    dag: Dag | None = None
    sites: dict[int, errors.SourceLine] = field(default_factory=dict)
    problem: str = ""
    at: str = ""
    hint: str = ""

    def line(self, node: Any) -> str:
        """``your cell, line 7: mask = Compare(...)`` for a node of the DAG (or of the declared graph)."""
        site = self.sites.get(id(node)) or self.sites.get(id(self._original(node)))
        return _text(site)

    def _original(self, node: Any) -> Any:
        """The node as the learner declared it, when the template rebuilt it (a Cast to its own type was
        dropped below it): the declared node of the same kind whose inputs lead to the same nodes."""
        if self.dag is None:
            return None
        for cand in _declared_nodes(self.dag):
            if cand.op == node.op and cand.attrs == node.attrs and cand.dtype == node.dtype and \
                    len(cand.inputs) == len(node.inputs) and all(
                        _same_node(a, b) for a, b in zip(cand.inputs, node.inputs, strict=True)):
                return cand
        return None


def _resolve(n: Any) -> Any:
    while isinstance(n, Node) and n.op == "Cast" and n.inputs[0].dtype == n.dtype:
        n = n.inputs[0]
    return n


def _same_node(declared: Any, built: Any) -> bool:
    """Does the template's node ``built`` stand for the learner's ``declared`` one (after dropping no-op Casts)?"""
    d = _resolve(declared)
    if d is built:
        return True
    if not isinstance(d, Node) or not isinstance(built, Node):
        return d == built
    return (d.op == built.op and d.attrs == built.attrs and d.dtype == built.dtype
            and len(d.inputs) == len(built.inputs)
            and all(_same_node(a, b) for a, b in zip(d.inputs, built.inputs, strict=True)))


def _declared_nodes(dag: Dag) -> list[Node]:
    """Every node the learner declared that the outputs reach, each once, inputs first (no-op Casts kept)."""
    order: list[Node] = []
    seen: set[int] = set()

    def visit(n: Node) -> None:
        if id(n) in seen:
            return
        seen.add(id(n))
        for i in n.node_inputs:
            visit(i)
        order.append(n)

    for o in dag.outputs:
        visit(o)
    return order


def _text(line: errors.SourceLine | None) -> str:
    """A learner's line as the reports quote it ("your notebook cell, line 7, in f: mask = Compare(...)")."""
    return str(line) if line is not None else ""


_CAST_HINT = ("a node's operands must share one dtype: Compare, Select and Mul do not convert. Either compute "
              "in T throughout (Duplicate(T, 0.0) for the zero tile), or Cast every operand to float first and "
              "Cast the results back to T -- decide which from what the casts would change")


def declare(fn: Callable[[Any], Any], dtype: Any) -> Declared:
    """Call ``fn(T)`` (the learner's DAG function) for ``dtype``, noting the learner's line of every node it
    creates (a profile hook on the template's node functions), then check what it returned: a Dag reading
    In0..In2 of T and writing Out0 and Out1 of T. Never raises."""
    t = np.dtype(to_numpy(as_acl_dtype(dtype)))
    found = Declared(t)

    def hook(frame: Any, event: str, arg: Any) -> None:
        code = frame.f_code
        if event == "return" and code.co_name in _NODE_FUNCS and code.co_filename == _DAG_FILE:
            caller = frame.f_back
            if caller is not None and not errors.in_library(caller.f_code.co_filename):
                found.sites[id(arg)] = errors.learner_line(caller)

    previous = sys.getprofile()
    sys.setprofile(hook)
    try:
        dag = fn(t.type)
    except (TypeError, ValueError) as exc:
        found.problem = f"{type(exc).__name__}: {exc}"
        found.at = _text(errors.learner_line(exc))
        found.hint = _CAST_HINT if "share a dtype" in str(exc) else (
            "declare the DAG by its outputs: Dag([CopyOut(0, dx_node), CopyOut(1, update_node)]); every GM input "
            "In0..In2 must be read by some node on the way")
        return found
    except Exception as exc:  # the learner's own code failed: report it with their line
        found.problem, found.at = f"{type(exc).__name__}: {exc}", _text(errors.learner_line(exc))
        return found
    finally:
        sys.setprofile(previous)
    if not isinstance(dag, Dag):
        found.problem = f"{FUNCTION}(T) returned {type(dag).__name__}, not a Dag"
        found.hint = "end with return Dag([CopyOut(0, ...), CopyOut(1, ...)], name)"
        return found
    found.dag = dag
    found.problem, found.at, found.hint = _shape_problem(found)
    return found


def _shape_problem(d: Declared) -> tuple[str, str, str]:
    """What keeps a DAG from being this operator's kernel: its GM inputs and outputs and their dtypes."""
    dag, t = d.dag, d.dtype
    assert dag is not None
    ins = {n.inputs[0].index: n for n in dag.copy_ins}
    if sorted(ins) != [0, 1, 2]:
        got = ", ".join(f"In{i}" for i in sorted(ins))
        return (f"your DAG reads {got}; the kernel's inputs are In0 grads, In1 features and In2 weights, each read "
                "by one CopyInBrc", d.line(dag.copy_ins[0]) if dag.copy_ins else "",
                "every input the formulas use must be copied in: dx needs grads, features and weights")
    for i, node in sorted(ins.items()):
        if node.dtype != t:
            return (f"In{i} ({INPUTS[i]}) is declared {node.dtype}, but for T = {t} the tensor holds {t}",
                    d.line(node), "declare the inputs as In(i, T): the DAG is built once per dtype")
    outs = sorted(o.attrs["index"] for o in dag.copy_outs)
    if outs != [0, 1]:
        return (f"your DAG writes {', '.join(f'Out{i}' for i in outs)}; the kernel writes Out0 dx and Out1 update",
                d.line(dag.copy_outs[0]), "one CopyOut per output: CopyOut(0, dx_node), CopyOut(1, update_node)")
    for o in dag.copy_outs:
        if o.dtype != t:
            k = o.attrs["index"]
            return (f"your CopyOut of Out{k} ({OUTPUTS[k]}) writes {o.dtype} elements, but {OUTPUTS[k]} is a {t} "
                    f"tensor: a Cast back to T is missing", d.line(o),
                    "what a CopyOut writes has its input's dtype; if you computed in float, Cast(T, node, CAST_RINT) "
                    "before the CopyOut")
    return "", "", ""


# ==================================================================================================
# running a DAG on the template
# ==================================================================================================
def _op(dag: Dag) -> TemplateOp:
    return TemplateOp("PReluGradUpdate", lambda _dt: dag, DTYPE_IDS)


def prelu_grad_update(*args: Any, dag: Dag, sch_mode: int, tiling_class: type) -> None:
    """The kernel entry (``KERNEL_TYPE_AIV_ONLY``): ``BroadcastSch<schMode, Dag>`` with your DAG."""
    broadcast_sch(*args, dag=dag, sch_mode=sch_mode, tiling_class=tiling_class)


def _launch(dag: Dag, arrays: Sequence[np.ndarray], soc: SocInfo, *, record: bool = False,
            reverse: bool = True, strict: bool = True) -> tuple[KernelRun, Any, tuple[np.ndarray, np.ndarray]]:
    """Tile ``arrays`` (grads, features, weights) on their own shapes and run ``dag`` on ``soc``; the outputs
    are pre-filled with 0xFF bytes. The cores run last to first (``reverse``), so a core writing past its share
    spoils a finished neighbour."""
    t = arrays[0].dtype
    shape = np.broadcast_shapes(*(a.shape for a in arrays))
    td = _op(dag).tiling_for_shapes([a.shape for a in arrays], shape, t, soc.vector_core_num, soc.ub_size)
    n = int(np.prod(shape))
    args = [gm_from_array(a, name) for a, name in zip(arrays, INPUTS, strict=True)]
    args += [gm_from_array(None, name, nbytes=n * t.itemsize, fill=SENTINEL) for name in OUTPUTS]
    order = list(range(td.blockDim))[::-1] if reverse else None
    run = launch(prelu_grad_update, td.blockDim, args, td.to_bytes(), soc, outputs=(3, 4), record=record,
                 tiling_data=td, cores=order, kernel_name="PReluGradUpdate",
                 strict=strict_policy if strict else None,
                 dag=dag, sch_mode=sch_mode_of(td.tilingKey), tiling_class=type(td))
    outs = tuple(a.ptr.allocation.buffer[:n * t.itemsize].view(t).reshape(shape).copy() for a in args[3:])
    return run, td, outs


def run(fn: Callable[[Any], Any], n: int | Sequence[int] = 8192, dtype: Any = "float16", *,
        weights_shape: Sequence[int] | None = None, core_num: int | None = None, ub_size: int | None = None,
        seed: int = 0, record: bool = True) -> tuple[KernelRun, tuple[np.ndarray, np.ndarray]]:
    """Run your DAG function once on Ascend950PR (``core_num``/``ub_size`` make a what-if copy) and return
    ``(run, (dx, update))`` -- for figures: ``viz.plot_pipeline(run)``. ``n`` is the element count or the
    output shape; ``weights_shape`` broadcasts the weights (default: the full shape)."""
    declared = declare(fn, dtype)
    if declared.dag is None or declared.problem:
        raise ValueError(f"{FUNCTION}({declared.dtype}) cannot run: {declared.problem}"
                         + (f" ({declared.at})" if declared.at else ""))
    shape = (int(n),) if np.ndim(n) == 0 else tuple(int(s) for s in n)   # type: ignore[union-attr]
    soc = standalone.make_soc(SOC, core_num, ub_size)
    g, x, w = _inputs(shape, tuple(weights_shape) if weights_shape is not None else shape, declared.dtype.name,
                      seed, specials=False)
    r, _, outs = _launch(declared.dag, (g, x, w), soc, record=record, reverse=False, strict=False)
    return r, outs


def _inputs(shape: tuple[int, ...], w_shape: tuple[int, ...], dtype: str, seed: int, *,
            specials: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    size = int(np.prod(shape))
    g = sample(size, dtype, seed, -3.0, 3.0, edges=(300.0, -300.0), specials=specials).reshape(shape)
    x = sample(size, dtype, seed + 1, -2.0, 2.0, edges=(0.0, -0.0, 1e-3, -1e-3), specials=specials).reshape(shape)
    w_size = int(np.prod(w_shape))
    w = sample(w_size, dtype, seed + 2, -1.0, 1.0, edges=(0.25, 0.0, -0.0, 300.0, 1.0) if specials else (),
               specials=False).reshape(w_shape)
    return g, x, w


# ==================================================================================================
# the battery
# ==================================================================================================
_MISTAKES = {
    "GE": "this is what `x >= 0` selects: at x = 0 and -0 it takes the x > 0 branch. The spec's mask is x > 0 "
          "(compare mode GT)",
    "LT": "this is what `x < 0` selects for the x > 0 branch: at x = 0 and -0 the branches swap. The spec's mask is "
          "x > 0 (GT), with the Select's operands in the spec's order",
    "LE": "this is the mask x <= 0 with the Select operands in the x > 0 order: every element takes the other branch",
    "NaN": "this is `x <= 0` with the Select operands swapped, which is the same as x > 0 everywhere except at NaN: "
           "NaN is neither > 0 nor <= 0, so there your DAG takes the x > 0 branch and the spec (x > 0 is false) "
           "takes the products. Compare GT against the zero tile",
    "swap": "this is the Select with its two sources swapped: Select(mask, a, b) takes a where the mask bit is 1 "
            "(x > 0 is true) and b where it is 0",
    "mask-then-mul": "this is update = x * (x > 0 ? 0 : grads): where x = +inf the product +inf * 0 is NaN, but the "
                     "spec's update there is 0. Select the zero after multiplying, not before",
}


@dataclass
class _State:
    declared: dict[str, Declared] = field(default_factory=dict)

    def get(self, fn: Callable[[Any], Any], dtype: str) -> Declared:
        if dtype not in self.declared:
            self.declared[dtype] = declare(fn, dtype)
        return self.declared[dtype]


def _nodes(d: Declared, op: str) -> list[Node]:
    return [n for n in (d.dag.funlist if d.dag is not None else ()) if n.op == op]


def _output_node(d: Declared, k: int) -> Node | None:
    assert d.dag is not None
    for o in d.dag.copy_outs:
        if o.attrs["index"] == k:
            return o.inputs[0]
    return None


def _lines_of(d: Declared, nodes: Iterable[Node]) -> str:
    lines = [d.line(n) for n in nodes]
    return "; ".join(dict.fromkeys(line for line in lines if line))


def _explain(d: Declared, k: int, variant: str) -> str:
    """The mistake's text plus the learner's lines that decide it (the Compare(s), or output k's Select)."""
    text = _MISTAKES[variant]
    if variant in ("swap",):
        node = _output_node(d, k)
        chain = [node] if node is not None else []
        while chain and chain[-1].op not in ("Select",) and chain[-1].node_inputs:
            chain.append(chain[-1].node_inputs[0])
        lines = _lines_of(d, [n for n in chain if n.op == "Select"][:1])
    elif variant == "mask-then-mul":
        lines = _lines_of(d, [n for n in (_output_node(d, k),) if n is not None])
    else:
        lines = _lines_of(d, _nodes(d, "Compare"))
    return text + (f"\nyour line: {lines}" if lines else "")


def _locate(td: Any, dag: Dag) -> Callable[[int], str]:
    return locator(_op(dag).core_ranges(td))


def _numbers_case(name: str, covers: Sequence[str], state: _State, dtype: str, shape: tuple[int, ...],
                  w_shape: tuple[int, ...], *, core_num: int | None = None, ub_size: int | None = None,
                  seed: int = 0, hint: str = "") -> Case:
    soc = standalone.make_soc(SOC, core_num, ub_size)
    g, x, w = _inputs(shape, w_shape, dtype, seed)
    expected = oracle(g, x, w)
    context: dict[str, Any] = {}

    def call(fn: Any, _inputs: dict[str, Any]) -> Any:
        d = state.get(fn, dtype)
        if d.problem:
            return d
        try:
            r, td, outs = _launch(d.dag, (g, x, w), soc)
        except TilingError as exc:
            info = live_buffers(d.dag)
            return _Refused(f"the template's tiling refused your DAG: {exc}. Your DAG keeps {info['buffers']} "
                            f"tile-sized buffers of {info['widest']} B live (the fewest possible is {MIN_BUFFERS} of "
                            f"{np.dtype(g.dtype).itemsize} B), so not one tile fits this UB")
        context.update(declared=d, td=td, run=r)
        return outs

    def compare(exp: Any, got: Any) -> str | None:
        if isinstance(got, Declared):
            return _problem_text(got)
        if isinstance(got, _Refused):
            return got.text
        d: Declared = context["declared"]
        variants = _variants(g, x, w)
        bcast = {k: np.broadcast_to(a, shape) for k, a in zip(INPUTS, (g, x, w), strict=True)}
        for k in range(2):
            why = compare_arrays(exp[k], got[k], locate=_locate(context["td"], d.dag))
            if why is None:
                continue
            first = int(np.flatnonzero(_bits(exp[k]).reshape(-1) != _bits(got[k]).reshape(-1))[0])
            there = ", ".join(f"{name}[{first}] = {_value(a, first)}" for name, a in bcast.items())
            text = f"{OUTPUTS[k]} (Out{k}): {why}\ninputs there: {there}"
            if int(_bits(got[k]).reshape(-1)[first]) == int.from_bytes(bytes([SENTINEL]) * got[k].dtype.itemsize,
                                                                          "little"):
                text += "\nthat element still holds the 0xFF.. bytes the output was filled with: no core wrote it"
            for variant, outs in variants.items():
                if outs[k] is not None and np.array_equal(_bits(outs[k]), _bits(got[k])):
                    text += "\n" + _explain(d, k, variant)
                    break
            return text
        return None

    shown = {"soc": soc.name, "cores": soc.vector_core_num, "ub": soc.ub_size, "dtype": dtype,
             "grads/features": shape, "weights": w_shape,
             "data": f"sample(seed {seed}): uniform values with 0, -0, +-inf, NaN; products that overflow"}
    return Case(name, shown, expected, covers=(f"soc:{SOC}", *covers), hint=hint, call=call, compare=compare,
                show=_show_outputs)


@dataclass(frozen=True)
class _Refused:
    """The template's tiling could not place the DAG on this SoC."""

    text: str


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


def _value(a: np.ndarray, i: int) -> str:
    v = a.reshape(-1)[i]
    return f"{v} (bits 0x{int(_bits(np.asarray(a).reshape(-1)[i:i + 1])[0]):0{2 * a.dtype.itemsize}x})"


def _show_outputs(value: Any) -> str:
    if isinstance(value, _Refused):
        return "a TilingError"
    if isinstance(value, Declared):
        if value.dag is None:
            return value.problem.split(":", 1)[0] if value.at else "no Dag"
        ins = ", ".join(f"In{n.inputs[0].index}<{n.dtype}>" for n in value.dag.copy_ins)
        outs = ", ".join(f"Out{n.attrs['index']}<{n.dtype}>" for n in value.dag.copy_outs)
        return f"a Dag reading {ins} and writing {outs}"
    if isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, np.ndarray) for v in value):
        parts = []
        for name, a in zip(OUTPUTS, value, strict=True):
            flat = a.reshape(-1)
            head = ", ".join(str(v) for v in flat[:4])
            parts.append(f"{name} {a.dtype}{list(a.shape)}: [{head}{', ...' if flat.size > 4 else ''}]")
        return "; ".join(parts)
    return repr(value)


def _problem_text(d: Declared) -> str:
    text = d.problem + (f"\nyour line: {d.at}" if d.at else "")
    return text + (f"\nhow to fix: {d.hint}" if d.hint else "")


def _declare_case(state: _State, dtype: str) -> Case:
    def call(fn: Any, _inputs: dict[str, Any]) -> Any:
        return state.get(fn, dtype)

    def compare(_exp: Any, got: Any) -> str | None:
        return _problem_text(got) if got.problem else None

    return Case(f"declare the DAG for T = {dtype}", {"T": dtype}, "a Dag: In0..In2 and Out0, Out1 of T",
                covers=(f"dtype:{dtype}", "topic:declaration"), call=call, compare=compare, show=_show_outputs,
                hint="the DAG is built once per dtype: In(i, T) for the inputs, CopyOut(k, node) with node of dtype T")


# --------------------------------------------------------------------------------------------------
# live buffers and instructions
# --------------------------------------------------------------------------------------------------
def live_buffers(dag: Dag) -> dict[str, Any]:
    """The template's live-buffer count for ``dag`` (kernel_flavours §3.3, MemOptCfg LEVEL_2), worked here from
    the declared nodes: walk the nodes in execution order, keep each computed tile live from its node to its last
    reader; copy-ins and the tiles a CopyOut writes have ping/pong slots of their own. Returns the count, the temps'
    peak, the node where the peak is reached and the temps live there."""
    order = _execution_order(dag)
    feeders = {id(_resolve(o.inputs[0])) for o in dag.outputs}
    last: dict[int, int] = {}
    for k, n in enumerate(order):
        for i in n.node_inputs:
            last[id(_resolve(i))] = k
    live: dict[int, Node] = {}
    peak, at, at_live = 0, None, []
    for k, n in enumerate(order):
        if n.op not in _COPY_OPS and id(n) not in feeders:
            live[id(n)] = n
            if len(live) > peak:
                peak, at, at_live = len(live), n, list(live.values())
        for i in n.node_inputs:
            i = _resolve(i)
            if last.get(id(i)) == k:
                live.pop(id(i), None)
    n_in = len({n.inputs[0].index for n in order if n.op == "CopyInBrc"})
    n_out = len(feeders)
    widest = max(n.dtype.itemsize for n in order)
    return {"buffers": peak + 2 * n_in + 2 * n_out, "temps": peak, "at": at, "live": at_live, "order": order,
            "widest": widest, "inputs": n_in, "outputs": n_out}


def _execution_order(dag: Dag) -> list[Node]:
    """The declared nodes in the template's order (a post-order walk from the outputs, inputs in argument order,
    each node once, no-op Casts dropped)."""
    order: list[Node] = []
    seen: set[int] = set()

    def visit(n: Node) -> None:
        n = _resolve(n)
        if id(n) in seen:
            return
        seen.add(id(n))
        for i in n.node_inputs:
            visit(i)
        order.append(n)

    for o in dag.outputs:
        visit(o)
    return order


def one_dim_ub_former(buffers: int, widest: int, soc: SocInfo) -> int:
    """The one-dim tile (schMode 201: three inputs and two outputs are more than the four arguments of 202):
    ``ubFormer = floor(floor(ub / a) / 128) * 128 / d`` (kernel_flavours §3.4, step 1)."""
    return (soc.ub_size // buffers) // 128 * 128 // widest


def _efficiency_case(state: _State, dtype: str) -> Case:
    soc = standalone.make_soc(SOC)
    t = np.dtype(to_numpy(as_acl_dtype(dtype)))
    n = 1_000_000

    def call(fn: Any, _inputs: dict[str, Any]) -> Any:
        return state.get(fn, dtype)

    def compare(_exp: Any, d: Any) -> str | None:
        if d.problem:
            return _problem_text(d)
        info = live_buffers(d.dag)
        vector = [node for node in info["order"] if node.op not in _COPY_OPS]
        if info["buffers"] > MIN_BUFFERS or info["widest"] > t.itemsize:
            yours = one_dim_ub_former(info["buffers"], info["widest"], soc)
            best = one_dim_ub_former(MIN_BUFFERS, t.itemsize, soc)
            text = (f"your DAG implies BufferNum {info['buffers']} (2 x {info['inputs']} copy-in + 2 x "
                    f"{info['outputs']} copy-out slots + {info['temps']} temps live at once) with "
                    f"{info['widest']}-byte elements; the fewest these nodes allow is {MIN_BUFFERS} (3 temps) with "
                    f"{t.itemsize}-byte elements. For {n:,} {dtype} elements on {soc.name} ubFormer is {yours:,} "
                    f"elements with your DAG and {best:,} with {MIN_BUFFERS} buffers of {t.itemsize} B")
            if info["temps"] > 3 and info["at"] is not None:
                live = ", ".join(node.label() for node in info["live"])
                text += (f"\nthe peak is at {info['at'].label()} (your line: {d.line(info['at'])}); live there: {live}"
                         f"\nyour lines: {_lines_of(d, info['live'])}")
            if info["widest"] > t.itemsize:
                casts = [node for node in info["order"] if node.op == "Cast" and node.dtype.itemsize > t.itemsize]
                text += (f"\nyour DAG widens {t} to {casts[0].dtype if casts else 'a wider type'}"
                         + (f" at {d.line(casts[0])}" if casts and d.line(casts[0]) else "")
                         + ": every value PReLU's backward computes is one product of two T values (exact in float) "
                           "rounded once to T, or a copy, so the float round trip changes no bit; it only doubles "
                           "every slot and adds the casts' temps")
            return text
        if len(vector) > MIN_VECTOR_NODES:
            ops = [node.op for node in vector]
            extra = sorted({op for op in ops if ops.count(op) > {"Mul": 2, "Select": 2}.get(op, 1)})
            lines = _lines_of(d, [node for node in vector if node.op in extra])
            return (f"your DAG runs {len(vector)} vector instructions per tile ({', '.join(ops)}); "
                    f"{MIN_VECTOR_NODES} suffice: one Duplicate, one Compare (both outputs share the mask), two Mul, "
                    f"two Select. More than needed: {', '.join(extra)}" + (f"\nyour lines: {lines}" if lines else ""))
        return None

    return Case(f"live buffers and instructions of the T = {dtype} DAG", {"T": dtype, "N": n, "soc": soc.name},
                f"BufferNum {MIN_BUFFERS} with {t.itemsize}-byte elements, {MIN_VECTOR_NODES} vector instructions "
                "per tile", covers=(f"dtype:{dtype}", "topic:live buffers"), call=call, compare=compare,
                show=lambda d: (f"BufferNum {live_buffers(d.dag)['buffers']}, widest {live_buffers(d.dag)['widest']} "
                                "B" if isinstance(d, Declared) and d.dag is not None and not d.problem else
                                _show_outputs(d)),
                hint="the template divides UB by the live-buffer count and the widest element: fewer live tiles and "
                     "T-sized ones mean longer tiles and fewer tile loops")


_HINTS = {
    "first": "dx = x > 0 ? grads : weights * grads and update = x > 0 ? 0 : x * grads: one mask (Compare against a "
             "Duplicate'd zero tile), two Muls, two Selects",
    "tail": "the last tile of a core is shorter; the template runs every node on exactly the tile's length",
    "brc": "a CopyInBrc broadcasts its input to the output's shape by itself: the DAG is the same for every shape",
    "special": "NaN is not > 0, so a NaN x takes the products (x * grads is then NaN); -0 is not > 0 either; "
               "Select copies bits, so -0 and NaN in grads come through unchanged where x > 0",
}


def cases(state: _State | None = None) -> list[Case]:
    """The battery: the declarations, then the numbers on Ascend950PR's 64 cores, then the live buffers and
    instructions, then what-if copies of the SoC with fewer cores and a 16 KiB UB (several ping/pong tiles per
    core), which only a DAG with few live buffers fits."""
    state = state or _State()
    out: list[Case] = [_declare_case(state, dt) for dt in DTYPES]
    out.append(_numbers_case("worked example: N = 1000 float32 on Ascend950PR", ["topic:worked example",
                             "dtype:float32"], state, "float32", (1000,), (1000,), hint=_HINTS["first"]))
    for dt in DTYPES:
        for n in (1, 65, 4097, 100_003):
            out.append(_numbers_case(f"N = {n} {dt} on 64 cores", [f"dtype:{dt}", "topic:tails and cores"], state,
                                     dt, (n,), (n,), seed=n, hint=_HINTS["tail"] if n > 1 else _HINTS["special"]))
    for dt, shape in (("float32", (37, 48)), ("float16", (37, 48)), ("float16", (37, 50)), ("bfloat16", (64, 160))):
        out.append(_numbers_case(f"weights [1, {shape[1]}] broadcast over {list(shape)} {dt} on 64 cores",
                                 [f"dtype:{dt}", "topic:broadcast along one axis"], state, dt, shape, (1, shape[1]),
                                 seed=sum(shape), hint=_HINTS["brc"]))
    for dt in DTYPES:
        out.append(_numbers_case(f"one weight for every channel (weights [1]), N = 777 {dt}",
                                 [f"dtype:{dt}", "topic:one weight"], state, dt, (777,), (1,), seed=7,
                                 hint=_HINTS["brc"]))
    out += [_efficiency_case(state, dt) for dt in DTYPES]
    for dt in DTYPES:
        for n, cores in ((5003, 4), (20_000, 3)):
            out.append(_numbers_case(f"N = {n} {dt} on {cores} cores with a 16 KiB UB (several tiles per core)",
                                     [f"dtype:{dt}", "topic:several tiles per core"], state, dt, (n,), (n,),
                                     core_num=cores, ub_size=16384, seed=n, hint=_HINTS["tail"]))
    for dt, shape, cores in (("float32", (300, 160), 4), ("float16", (300, 160), 4), ("bfloat16", (97, 24), 2)):
        out.append(_numbers_case(f"weights [1, {shape[1]}] broadcast over {list(shape)} {dt} on {cores} cores with "
                                 "a 16 KiB UB", [f"dtype:{dt}", "topic:broadcast along one axis",
                                                 "topic:several tiles per core"], state, dt, shape, (1, shape[1]),
                                 core_num=cores, ub_size=16384, seed=sum(shape), hint=_HINTS["brc"]))
    return out


def _summary(fn: Callable[[Any], Any], state: _State) -> list[str]:
    lines: list[str] = []
    soc = standalone.make_soc(SOC)
    for dt in DTYPES:
        d = state.get(fn, dt)
        info = live_buffers(d.dag)
        lines.append(f"T = {dt}: {len(info['order'])} nodes, BufferNum {info['buffers']}, "
                     f"MaxDtypeBytes {info['widest']}, MinDtypeBytes {d.dag.min_dtype_bytes}")
    for shape, w_shape in (((1_000_000,), (1_000_000,)), ((1024, 512), (1, 512))):
        d = state.get(fn, "float16")
        r, outs = run(fn, shape, "float16", weights_shape=w_shape)
        td = r.tiling
        mode = sch_mode_of(td.tilingKey)
        tile = getattr(td, "tileNum", None) or getattr(td, "elemNum", None) or getattr(td, "ubFormer", 0)
        core0 = next((c for c in r.trace.cores if c.core == 0), r.trace.cores[0])
        busy = ", ".join(f"{p} {core0.busy[p]:,.0f}" for p in ("MTE2", "V", "MTE3"))
        lines.append(f"float16 {list(shape)} with weights {list(w_shape)} on {soc.name}: schMode {mode}, blockDim "
                     f"{td.blockDim}, {tile:,} elements per tile; {r.cycles:,.0f} cycles; core 0 busy {busy}")
    return lines


def _hidden(state: _State) -> Callable[[np.random.Generator], list[Case]]:
    """Cases drawn at check time: lengths, 2-D shapes with per-channel weights, core counts and UB sizes no page
    names, on data drawn from the same seed."""
    def draw(rng: np.random.Generator) -> list[Case]:
        out = []
        for _ in range(4):
            dt = str(rng.choice(DTYPES))
            cores = int(rng.integers(1, 65))
            ub = 16384 if rng.random() < 0.5 else None
            data_seed = int(rng.integers(0, 2**31))
            if rng.random() < 0.5:
                shape, w_shape = (int(rng.integers(1, 200_001)),), (1,)
                w_shape = shape if rng.random() < 0.7 else w_shape
            else:
                rows, cols = int(rng.integers(1, 400)), int(rng.integers(1, 300))
                shape, w_shape = (rows, cols), (1, cols)
            where = f"{cores} cores" + (", a 16 KiB UB" if ub else "")
            out.append(_numbers_case(f"grads {list(shape)}, weights {list(w_shape)} {dt} on {where}",
                                     [f"dtype:{dt}", "topic:drawn at check time"], state, dt, shape, w_shape,
                                     core_num=cores, ub_size=ub, seed=data_seed, hint=_HINTS["tail"]))
        return out
    return draw


def check(fn: Callable[[Any], Any], *, seed: int | None = None) -> Report:
    """Run your ``prelu_grad_update_dag(T)`` over the battery, then on cases drawn now (``seed`` draws a reported
    set again); returns the Report."""
    state = _State()
    return run_battery(fn, cases(state), title=TITLE, summary=lambda: _summary(fn, state),
                       refuse_reference=True, hidden=_hidden(state), seed=seed)
