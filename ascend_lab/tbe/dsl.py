"""The TBE DSL, small: placeholders, the elementwise operations the three legacy kernels use, and
TBE's dtype rules. A compute description written with it is a small graph (:class:`Tensor` nodes).

Legacy CANN operators (the ones 910A, 910B, 910_93 and 310P run for HardSigmoidGrad, ThresholdGradV2D and
ReluGrad) are not AscendC programs: their source is a Python function that *describes* the result with
``tbe.dsl`` calls on ``tvm.placeholder`` tensors, and ``tbe.auto_schedule`` decides the tiling, the buffers
and the instructions (``sources/kernel_flavours.md`` §5). This module models the describing half:

* :func:`placeholder` (``tvm.placeholder``), scalar constants converted to the operation's dtype
  (``tvm.const(v, dtype)``: nearest-even, as the attribute helper ``get_attr_by_cls`` does);
* :func:`vabs`, :func:`vmuls`, :func:`vadds`, :func:`vmins`, :func:`vmaxs` (tensor-scalar), :func:`vmul`,
  :func:`vmin`, :func:`vmax` (tensor-tensor), :func:`broadcast` (a scalar to a tensor, or a tensor to a
  shape it broadcasts to), :func:`broadcast_shapes` (``shape_util.broadcast_shapes``), :func:`vcmp` ('bit'
  or 'bool' mode), :func:`vsel`, :func:`vcmpsel`, :func:`cast_to` (with TBE's cast route and truncation rule
  and ``f1628IntegerFlag``) and :func:`round`;
* the dtype rules of §5.4: ``vcmpsel``/``vcmp``/``vsel``/``vabs`` take fp16/fp32 (``vcmp`` also int64 in
  'bool' mode), every operand of one operation shares one dtype, scalars take the tensor's dtype;
* the platform queries the sources branch on (:func:`api_check_support`, :func:`after_v200`,
  :func:`intrinsic_check_support`), answered for the SoC a description is built for (:func:`compile_for`), as TBE
  answers them for the SoC it compiles for: a ``tik.*`` api or an intrinsic from the SoC's platform ini (the SoC
  catalogue records the CANN 8.1.RC1 ini's entries), a ``tbe.dsl.*`` api from the DSL's own per-SoC dtype table
  (:data:`DSL_CHECK_SUPPORT`) -- defined in :mod:`.target` and re-exported here.

A description's result is turned into a kernel by :mod:`.schedule` (tiling) and :mod:`.lowering`
(instructions on the simulated AI Core). Nothing here computes values.
"""

from __future__ import annotations

import builtins
import functools
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..ascendc.numerics import scalar as _const
from ..base.platform import SocInfo, get_soc
from ..dtypes import bfloat16
from .storage_bound import storage_bound
from .target import (
    DSL_CHECK_SUPPORT,
    TBE_FAMILIES,
    after_v200,
    api_check_support,
    compile_for,
    compile_soc,
    current_target,
    has_vcopy,
    intrinsic_check_support,
)

__all__ = [
    "DSL_CHECK_SUPPORT", "DTYPES", "TBE_FAMILIES", "Compute", "Tensor", "after_v200", "api_check_support", "broadcast",
    "broadcast_shapes", "cast_to", "compile_for", "compile_soc", "has_vcopy", "intrinsic_check_support", "placeholder",
    "register_operator_compute", "round", "storage", "vabs", "vadds", "vcmp", "vcmpsel", "vmax", "vmaxs", "vmin",
    "vmins", "vmul", "vmuls", "vsel",
]

#: TBE dtype names and their numpy storage; ``uint1`` is vcmp's 'bit' result (one bit per element).
DTYPES: dict[str, np.dtype] = {
    "float16": np.dtype(np.float16), "float32": np.dtype(np.float32), "bfloat16": bfloat16,
    "int8": np.dtype(np.int8), "uint8": np.dtype(np.uint8), "int32": np.dtype(np.int32),
    "int64": np.dtype(np.int64), "bool": np.dtype(np.bool_), "uint1": np.dtype(np.uint8),
}
_FLOAT = ("float16", "float32")
_CMP_OPS = ("lt", "gt", "le", "ge", "eq", "ne")


def storage(dtype: str) -> np.dtype:
    """The numpy dtype that stores a TBE dtype (``uint1`` masks are stored as packed uint8)."""
    try:
        return DTYPES[dtype]
    except KeyError:
        raise ValueError(f"unknown TBE dtype {dtype!r}; use one of {', '.join(DTYPES)}") from None


_SERIAL = itertools.count()


def _dtype_name(dtype: Any) -> str:
    if isinstance(dtype, str):
        name = dtype.lower()
        if name in DTYPES:
            return name
    else:
        dt = np.dtype(dtype)
        for name, stored in DTYPES.items():
            if stored == dt and name != "uint1":
                return name
    raise ValueError(f"unknown TBE dtype {dtype!r}; use one of {', '.join(DTYPES)}")


# --- the graph ------------------------------------------------------------------------------------------
@dataclass(eq=False, frozen=True)
class Tensor:
    """One node of a compute description: an operation, its dtype and its operands (``serial`` orders them).

    ``args`` holds the operands in the DSL call's order: :class:`Tensor` nodes or numpy scalars already
    converted to the operation's dtype; ``attrs`` the rest (comparison, cast rounding...)."""
    op: str
    dtype: str
    shape: tuple[int, ...]
    args: tuple[Any, ...] = ()
    attrs: dict[str, Any] = field(default_factory=dict)
    name: str = ""
    #: creation order: a description's nodes are listed in the order the compute function wrote them
    serial: int = field(default_factory=lambda: next(_SERIAL), repr=False)

    @property
    def inputs(self) -> tuple[Tensor, ...]:
        """The tensor operands."""
        return tuple(a for a in self.args if isinstance(a, Tensor))

    @property
    def is_scalar_broadcast(self) -> bool:
        """A scalar broadcast to a tensor (``tbe.broadcast(tvm.const(0, dt), shape)``)."""
        return self.op == "broadcast" and not isinstance(self.args[0], Tensor)

    @property
    def is_tensor_broadcast(self) -> bool:
        """A tensor broadcast to a larger shape (``tbe.broadcast(t, shape_max)`` with ``t.shape != shape_max``)."""
        return self.op == "broadcast" and isinstance(self.args[0], Tensor)

    def __repr__(self) -> str:
        return f"Tensor({self.name or self.op}: {self.dtype}{list(self.shape)})"


def _shape(shape: Sequence[int]) -> tuple[int, ...]:
    out = tuple(int(d) for d in shape)
    if any(d < 0 for d in out):
        raise ValueError(f"a shape has non-negative dims, got {shape}")
    return out


def placeholder(shape: Sequence[int], dtype: Any, name: str = "") -> Tensor:
    """``tvm.placeholder(shape, dtype, name)``: an input of the operator."""
    return Tensor("placeholder", _dtype_name(dtype), _shape(shape), name=name or "placeholder")


def _tensor(t: Any, what: str) -> Tensor:
    if not isinstance(t, Tensor):
        raise TypeError(f"{what} must be a tbe Tensor, got {type(t).__name__}")
    return t


def _check(t: Tensor, allowed: tuple[str, ...], api: str) -> None:
    if t.dtype not in allowed:
        raise TypeError(f"tbe.{api} supports {', '.join(allowed)}, got {t.dtype}")


def _scalar(value: Any, dtype: str, api: str) -> Any:
    """``tvm.const(value, dtype)``: a Python number converted (nearest-even) to the operation's dtype."""
    if isinstance(value, Tensor):
        raise TypeError(f"tbe.{api}: expected a scalar, got a tensor")
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"tbe.{api}: a scalar operand must be a number, got {value!r}")
    with np.errstate(over="ignore"):
        return _const(storage(dtype), value)


def _same(a: Tensor, b: Tensor, api: str) -> None:
    if a.dtype != b.dtype:
        raise TypeError(f"tbe.{api}: operands must share one dtype, got {a.dtype} and {b.dtype}")
    if a.shape != b.shape:
        raise ValueError(f"tbe.{api}: operand shapes {a.shape} and {b.shape} differ; broadcast them first")


def vabs(raw: Tensor) -> Tensor:
    """``tbe.vabs``: |x| (fp16/fp32)."""
    raw = _tensor(raw, "vabs operand")
    _check(raw, _FLOAT, "vabs")
    return Tensor("vabs", raw.dtype, raw.shape, (raw,))


def _tensor_scalar(api: str, allowed: tuple[str, ...], raw: Tensor, scalar: Any) -> Tensor:
    raw = _tensor(raw, f"{api} operand")
    _check(raw, allowed, api)
    return Tensor(api, raw.dtype, raw.shape, (raw, _scalar(scalar, raw.dtype, api)))


def vmuls(raw: Tensor, scalar: Any) -> Tensor:
    """``tbe.vmuls``: x * s, s converted to x's dtype (fp16/fp32/int32)."""
    return _tensor_scalar("vmuls", (*_FLOAT, "int32"), raw, scalar)


def vadds(raw: Tensor, scalar: Any) -> Tensor:
    """``tbe.vadds``: x + s, s converted to x's dtype (fp16/fp32/int32)."""
    return _tensor_scalar("vadds", (*_FLOAT, "int32"), raw, scalar)


def vmins(raw: Tensor, scalar: Any) -> Tensor:
    """``tbe.vmins``: min(x, s) (fp16/fp32/int32)."""
    return _tensor_scalar("vmins", (*_FLOAT, "int32"), raw, scalar)


def vmaxs(raw: Tensor, scalar: Any) -> Tensor:
    """``tbe.vmaxs``: max(x, s) (fp16/fp32/int32)."""
    return _tensor_scalar("vmaxs", (*_FLOAT, "int32"), raw, scalar)


def _binary(api: str, lhs: Tensor, rhs: Tensor) -> Tensor:
    lhs, rhs = _tensor(lhs, f"{api} lhs"), _tensor(rhs, f"{api} rhs")
    _check(lhs, (*_FLOAT, "int32"), api)
    _same(lhs, rhs, api)
    return Tensor(api, lhs.dtype, lhs.shape, (lhs, rhs))


def vmul(lhs: Tensor, rhs: Tensor) -> Tensor:
    """``tbe.vmul``: elementwise product of two tensors of one dtype (fp16/fp32/int32)."""
    return _binary("vmul", lhs, rhs)


def vmin(lhs: Tensor, rhs: Tensor) -> Tensor:
    """``tbe.vmin``: elementwise minimum (fp16/fp32/int32). The simulator's Mins propagates NaN, as IEEE 754 min
    would. The kernels here reach vmin with floats only on 910A and 310P, which have no INF/NaN mode and whose
    saturation mode is documented for overflowing results only, so what the device gives for a NaN operand is not
    documented; a run with NaN inputs there carries that warning (``tbe.lowering.warn_non_ieee``)."""
    return _binary("vmin", lhs, rhs)


def vmax(lhs: Tensor, rhs: Tensor) -> Tensor:
    """``tbe.vmax``: elementwise maximum (fp16/fp32/int32); NaN as for :func:`vmin`."""
    return _binary("vmax", lhs, rhs)


def broadcast_shapes(shape1: Sequence[int], shape2: Sequence[int], param_name_input1: str = "input1",
                     param_name_input2: str = "input2") -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """``shape_util.broadcast_shapes``: both shapes padded with leading 1s to one rank, and the broadcast shape
    (numpy's rule: per axis the dims are equal or one of them is 1). ValueError naming the inputs otherwise."""
    a, b = _shape(shape1), _shape(shape2)
    rank = builtins.max(len(a), len(b))
    a, b = (1,) * (rank - len(a)) + a, (1,) * (rank - len(b)) + b
    out = []
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        if x != y and 1 not in (x, y):
            raise ValueError(f"{param_name_input1} {list(shape1)} and {param_name_input2} {list(shape2)} do not "
                             f"broadcast (axis {i}: {x} vs {y})")
        out.append(y if x == 1 else x)
    return a, b, tuple(out)


def broadcast(var: Any, shape: Sequence[int], output_dtype: Any = None) -> Tensor:
    """``tbe.broadcast``: a scalar to a tensor of ``shape`` (dtype ``output_dtype``, default float16 as in TBE),
    or a tensor to a shape it broadcasts to (numpy's rule, leading axes added). A tensor that already has
    ``shape`` is returned as is, as TBE does; otherwise the result is a ``broadcast`` node of the tensor. The
    lowering has no instruction for that node: the kernel's copy-in reads each tile's input elements with the
    broadcast already applied (see :mod:`.lowering`)."""
    shape = _shape(shape)
    if isinstance(var, Tensor):
        if var.shape == shape:
            return var
        _, _, out = broadcast_shapes(var.shape, shape, "tensor", "shape")
        if out != shape:
            raise ValueError(f"tbe.broadcast: {list(var.shape)} does not broadcast to {list(shape)}")
        return Tensor("broadcast", var.dtype, shape, (var,))
    dtype = _dtype_name(output_dtype) if output_dtype is not None else "float16"
    return Tensor("broadcast", dtype, shape, (_scalar(var, dtype, "broadcast"),))


def vcmp(lhs: Tensor, rhs: Any, operation: str = "lt", mode: str = "bool") -> Tensor:
    """``tbe.vcmp``: compare ``lhs`` with a tensor or scalar ``rhs``. 'bit' mode gives a ``uint1`` bit-mask
    (one bit per element, 8 per byte), 'bool' mode a ``bool`` tensor. fp16/fp32 (+int64 in 'bool' mode)."""
    lhs = _tensor(lhs, "vcmp lhs")
    if operation not in _CMP_OPS:
        raise ValueError(f"tbe.vcmp operation must be one of {_CMP_OPS}, got {operation!r}")
    if mode not in ("bit", "bool"):
        raise ValueError(f"tbe.vcmp mode must be 'bit' or 'bool', got {mode!r}")
    _check(lhs, _FLOAT + (("int64",) if mode == "bool" else ()), "vcmp")
    if isinstance(rhs, Tensor):
        _same(lhs, rhs, "vcmp")
    else:
        rhs = _scalar(rhs, lhs.dtype, "vcmp")
    return Tensor("vcmp", "uint1" if mode == "bit" else "bool", lhs.shape, (lhs, rhs),
                  {"operation": operation, "mode": mode})


def _sel_dtype(api: str, a: Any, b: Any, allowed: tuple[str, ...]) -> str:
    tensors = [t for t in (a, b) if isinstance(t, Tensor)]
    if not tensors:
        raise TypeError(f"tbe.{api}: at least one of the selected operands must be a tensor")
    dtype = tensors[0].dtype
    if dtype not in allowed:
        raise TypeError(f"tbe.{api} supports {', '.join(allowed)}, got {dtype}")
    if len(tensors) == 2:
        _same(tensors[0], tensors[1], api)
    return dtype


def vsel(condition: Tensor, x: Any, y: Any) -> Tensor:
    """``tbe.vsel``: ``condition ? x : y``; x and y are tensors or scalars (fp16/fp32). A 'bit' condition is
    tested bit by bit (§5.4: TBE also wants the last dim divisible by 8; the 1-D model does not check it)."""
    condition = _tensor(condition, "vsel condition")
    if condition.dtype not in ("uint1", "bool"):
        raise TypeError(f"tbe.vsel condition must be a vcmp result ('bit' or 'bool'), got {condition.dtype}")
    allowed = _FLOAT + (("int64",) if condition.dtype == "bool" else ())
    dtype = _sel_dtype("vsel", x, y, allowed)
    args = tuple(v if isinstance(v, Tensor) else _scalar(v, dtype, "vsel") for v in (x, y))
    for t in args:
        if isinstance(t, Tensor) and t.shape != condition.shape:
            raise ValueError(f"tbe.vsel: condition shape {condition.shape} and operand shape {t.shape} differ")
    return Tensor("vsel", dtype, condition.shape, (condition, *args))


def vcmpsel(lhs: Tensor, rhs: Any, operation: str, slhs: Any, srhs: Any) -> Tensor:
    """``tbe.vcmpsel``: ``(lhs <op> rhs) ? slhs : srhs``, every operand in lhs's dtype (fp16/fp32, §5.4).
    All five arguments are required here (the DSL's own defaults are not modelled)."""
    lhs = _tensor(lhs, "vcmpsel lhs")
    _check(lhs, _FLOAT, "vcmpsel")
    if operation not in _CMP_OPS:
        raise ValueError(f"tbe.vcmpsel operation must be one of {_CMP_OPS}, got {operation!r}")
    args = []
    for v in (rhs, slhs, srhs):
        if isinstance(v, Tensor):
            _same(lhs, v, "vcmpsel")
            args.append(v)
        else:
            args.append(_scalar(v, lhs.dtype, "vcmpsel"))
    return Tensor("vcmpsel", lhs.dtype, lhs.shape, (lhs, *args), {"operation": operation})


# --- casts --------------------------------------------------------------------------------------------
#: ``vconv`` conversions with an instruction of their own (TBE's ``is_cast_support``); others go through
#: fp32, else fp16 (``cast._cast``). bf16<->fp32 exist on A2/A3, the only SoCs whose kernels see bf16.
_DIRECT = {("float16", "float32"), ("float32", "float16"), ("float16", "int8"), ("float16", "uint8"),
           ("int8", "float16"), ("uint8", "float16"), ("float16", "int32"), ("float32", "int32"),
           ("int32", "float32"), ("int32", "float16"), ("bfloat16", "float32"), ("float32", "bfloat16")}

#: Widening conversions: every value is representable, so the instruction needs no rounding (CAST_NONE).
_EXACT = {("float16", "float32"), ("bfloat16", "float32"), ("int8", "float16"), ("uint8", "float16")}


def _cast_node(raw: Tensor, dst: str, mode: str, api: str = "cast") -> Tensor:
    return Tensor(api, dst, raw.shape, (raw,), {"round": mode})


def _one_cast(raw: Tensor, dst: str) -> Tensor:
    """One ``vconv``: a float to an int truncates (TBE picks the ``...z`` instruction, §5.4's table: "drop
    the fraction"); everything else is the instruction's default, round to nearest even (exact when it can be)."""
    if dst.startswith(("int", "uint")) and raw.dtype.startswith(("float", "bfloat")):
        mode = "CAST_TRUNC"
    elif (raw.dtype, dst) in _EXACT:
        mode = "CAST_NONE"
    else:
        mode = "CAST_RINT"
    return _cast_node(raw, dst, mode)


def cast_to(data: Tensor, dtype: Any, f1628IntegerFlag: bool = True) -> Tensor:
    """``tbe.cast_to``: convert, through fp32 or else fp16 when there is no direct ``vconv``.

    ``f1628IntegerFlag`` says the data are already integral: when it is False, an fp16 -> int8/uint8 cast
    first adds -0.5 (``vadds``), as TBE does. int8/uint8 -> fp32 therefore goes int8 -> fp16 -> fp32 (exact),
    fp32 -> int8 goes fp32 -> fp16 (nearest even) -> int8 (truncating), int32 <-> fp32 is one instruction."""
    data = _tensor(data, "cast_to data")
    dst = _dtype_name(dtype)
    src = data.dtype
    if src in ("uint1", "bool") or dst in ("uint1", "bool"):
        raise NotImplementedError(f"tbe.cast_to {src} -> {dst} is not modelled")
    if src == "float16" and dst in ("int8", "uint8") and not f1628IntegerFlag:
        data = vadds(data, -0.5)
    if src == dst:
        return data
    if (src, dst) in _DIRECT:
        return _one_cast(data, dst)
    for via in ("float32", "float16"):
        if src != via and (src, via) in _DIRECT and (via, dst) in _DIRECT:
            return _one_cast(_one_cast(data, via), dst)
    raise TypeError(f"tbe.cast_to: unsupported cast {src} -> {dst}")


def round(raw_tensor: Tensor, dtype: Any = "int32") -> Tensor:
    """``tbe.round``: round half to even, to int32 or (fp32 -> bf16, as the bf16 paths use it) to bfloat16."""
    raw_tensor = _tensor(raw_tensor, "round operand")
    dst = _dtype_name(dtype)
    if (raw_tensor.dtype, dst) not in {("float32", "bfloat16"), ("float32", "int32"), ("float16", "int32")}:
        raise TypeError(f"tbe.round {raw_tensor.dtype} -> {dst} is not modelled")
    return _cast_node(raw_tensor, dst, "CAST_RINT", "round")


# --- the framework's bf16 wrapper ---------------------------------------------------------------------------
def _needs_fp32(t: Tensor) -> bool:
    """``need_cast_to_fp32`` (operation_func_mgr.py:47-54): a bf16 tensor on a SoC whose vector add has no bf16
    (``api_check_support("tbe.dsl.vadd", "bfloat16")``) and whose ``vconv`` converts bf16 to fp32
    (``intrinsic_check_support("Intrinsic_vconv", "bf162f32")``)."""
    return (t.dtype == "bfloat16" and not api_check_support("tbe.dsl.vadd", "bfloat16")
            and intrinsic_check_support("Intrinsic_vconv", "bf162f32"))


def _bf16_back(res: Tensor) -> Tensor:
    """``cast_res_to_bf16``'s ``float32_process``: fp32 is rounded to bf16 (``round``), fp16 cast to fp32 first."""
    if res.dtype == "float16":
        res = cast_to(res, "float32")
    return round(res, "bfloat16") if res.dtype == "float32" else res


def register_operator_compute(op_type: str, op_mode: str = "dynamic", support_fusion: bool = True,
                              **kwargus: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``tbe.common.register.register_op_compute`` (CANN 8.1.RC1 ``python/site-packages/tbe/common/register/
    operation_func_mgr.py:127-176``) as far as it changes a description: the bf16 wrapper.

    When the ``support_bfp16`` keyword is given (its value is not read: the source tests ``"support_bfp16" in
    kwargus``), the compute function is wrapped:

    1. ``cast_in_to_fp32`` (:42-80): every positional tensor argument that :func:`_needs_fp32` is ``cast_to``
       fp32 (on 910B and 910_93: vadd has no bf16, vconv has bf162f32); a dict argument with ``"dtype":
       "bfloat16"`` (an output's description) is handed on as a copy saying float32; everything else unchanged;
    2. the compute runs on those arguments, so it sees fp32 and takes its fp32 paths;
    3. ``cast_res_to_bf16`` (:83-131): the dtypes of the *original* dict arguments name the outputs; when there are
       as many as results, each result whose output is bf16 and that is not bf16 is rounded back (fp32 ``round``
       to bf16, round half to even; fp16 through fp32).

    Every op that declares ``support_bfp16`` gets this one mechanism (here ThresholdGradV2D and ReluGrad); an op
    without it (HardSigmoidGrad) handles bf16 in its own compute, if at all. ``op_type``, ``op_mode`` and
    ``support_fusion`` only register the function in TBE; here they are recorded on it."""

    def decorator(func: Callable[..., Any]) -> Callable[..., Any]:
        if "support_bfp16" not in kwargus:
            return func

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            new_args = []
            for a in args:
                if isinstance(a, Tensor) and _needs_fp32(a):
                    a = cast_to(a, "float32")
                elif isinstance(a, dict) and a.get("dtype") == "bfloat16":
                    a = {**a, "dtype": "float32"}
                new_args.append(a)
            res = func(*new_args, **kwargs)
            single = isinstance(res, Tensor)
            results = [res] if single else list(res)
            out_dtypes = [a["dtype"] for a in args if isinstance(a, dict) and "dtype" in a]
            if len(results) != len(out_dtypes):
                return res
            results = [_bf16_back(r) if dt == "bfloat16" and r.dtype != dt else r
                       for r, dt in zip(results, out_dtypes, strict=True)]
            return results[0] if single else results

        wrapper.op_type = op_type            # type: ignore[attr-defined]
        wrapper.support_bfp16 = True         # type: ignore[attr-defined]
        return wrapper

    return decorator


# --- a whole description -----------------------------------------------------------------------------------
@dataclass(eq=False)
class Compute:
    """A compute description: its placeholders (in argument order) and its result.

    ``nodes`` lists every node once, operands before users (placeholders first, in order). The schedule walks
    it (:mod:`.storage_bound`), the lowering reads its ``nodes``."""
    name: str
    inputs: tuple[Tensor, ...]
    output: Tensor
    nodes: tuple[Tensor, ...] = ()
    #: the SoC the description was built for (:func:`compile_for`), None outside it
    soc: SocInfo | None = None

    def __post_init__(self) -> None:
        if self.soc is None:
            self.soc = current_target()
        for t in self.inputs:
            if t.op != "placeholder":
                raise TypeError(f"{self.name}: inputs must be placeholders, got {t!r}")
        if self.output.op == "placeholder":
            raise ValueError(f"{self.name}: the result is an input; there is nothing to compute")
        order: list[Tensor] = list(self.inputs)
        seen = {id(t) for t in order}

        def visit(t: Tensor) -> None:
            if id(t) in seen:
                return
            if t.op == "placeholder":
                raise ValueError(f"{self.name}: {t!r} is used but is not one of the inputs")
            for a in t.inputs:
                visit(a)
            seen.add(id(t))
            order.append(t)

        visit(self.output)
        computed = sorted(order[len(self.inputs):], key=lambda t: t.serial)   # as the compute function wrote them
        self.nodes = (*self.inputs, *computed)

    @property
    def fp32_cast_live(self) -> bool:
        """Whether a narrower input is cast up to fp32 somewhere in the description."""
        return any(t.op == "cast" and t.dtype == "float32" and t.inputs[0].dtype != "float32" for t in self.nodes)

    @property
    def max_dtype_bytes(self) -> int:
        """The widest element of any tensor in the description (masks excluded): ``_base_info[1]``."""
        return max(storage(t.dtype).itemsize for t in self.nodes if t.dtype not in ("uint1", "bool"))

    @property
    def coexist(self) -> int:
        """The elementwise schedule's ``_coexisting_quantity`` for this description, on the SoC it was built for
        (:func:`ascend_lab.tbe.storage_bound.storage_bound`; Ascend910B4 when built outside :func:`compile_for`)."""
        return storage_bound(self, self.soc or get_soc("Ascend910B4")).coexist

    def describe(self) -> str:
        """The description as text, one line per node (for the book)."""
        names = {id(t): (t.name if t.op == "placeholder" else f"t{i}") for i, t in enumerate(self.nodes)}
        lines = []
        for t in self.nodes:
            if t.op == "placeholder":
                lines.append(f"{names[id(t)]} = placeholder({list(t.shape)}, {t.dtype!r})")
                continue
            args = [names[id(a)] if isinstance(a, Tensor) else _show(a) for a in t.args]
            args += [repr(v) for k, v in t.attrs.items() if k in ("operation", "mode")]
            if t.op in ("cast", "round"):
                args.append(repr(t.dtype))
            if t.op == "broadcast":
                args.append(str(list(t.shape)))
            lines.append(f"{names[id(t)]} = {t.op}({', '.join(args)})   # {t.dtype}")
        return "\n".join(lines)


def _show(value: Any) -> str:
    dt = np.asarray(value).dtype
    return repr(builtins.float(value)) if dt.kind in "fV" else str(builtins.int(value))
