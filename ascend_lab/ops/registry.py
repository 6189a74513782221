"""The operator registry: every ``ops/<op>/`` package's :class:`~.spec.OpSpec`, in one place.

CANN finds an operator through registration macros (``OP_ADD``, ``REGISTER_TILING_DATA_CLASS``, the aclnn
symbol table); here the registry imports each package listed in :data:`OPERATOR_PACKAGES` and collects
its ``SPEC``. Adding an operator is one folder plus one line in that list -- or, for an operator that
lives outside the package (a lab's, a test's), one :func:`register` call, or, for an installed distribution,
an entry point in the group ``ascend_lab.operators`` (:data:`ENTRY_POINT_GROUP`) naming its package (or its
``SPEC``), found the first time the registry is asked and again by :func:`discover`. ``ops/README.md`` is the
guide.

Lookups accept any spelling of an op: the package key (``hard_sigmoid_grad``), CANN's op type
(``HardSigmoidGrad``), with case, ``-`` and ``_`` ignored; aclnn APIs likewise by convenience name
(``hardsigmoid_backward``) or API name (``aclnnHardsigmoidBackward``).
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import threading
import warnings
from collections.abc import Callable
from typing import Any

from ..base.platform import get_soc
from .spec import AclnnSpec, KernelSpec, OpSpec

__all__ = ["ENTRY_POINT_GROUP", "OPERATOR_PACKAGES", "aclnn_api", "aclnn_apis", "discover", "get", "kernel_oracle",
           "op_for_tiling", "ops", "oracle", "oracle_call", "register", "unregister"]

#: One line per operator package. The order is the order tables and menus show.
OPERATOR_PACKAGES: tuple[str, ...] = (
    "ascend_lab.ops.hard_sigmoid_grad",
    "ascend_lab.ops.threshold_grad_v2_d",
    "ascend_lab.ops.relu_grad",
    "ascend_lab.ops.silu_grad",
    "ascend_lab.ops.gelu_grad",
    "ascend_lab.ops.hard_swish_grad",
)

#: The entry point group an installed distribution declares its operators in (``pyproject.toml``:
#: ``[project.entry-points."ascend_lab.operators"] my_op = "my_pkg.my_op"``).
ENTRY_POINT_GROUP = "ascend_lab.operators"

_specs: dict[str, OpSpec] = {}
#: Entry points already loaded ("name = value") -> the key of the op each added (None: skipped), so
#: :func:`discover` adds only new ones and :func:`unregister` lets one be found again.
_entry_points: dict[str, str | None] = {}
_loaded = False
_ready = False
_load_lock = threading.RLock()


def _fold(name: str) -> str:
    return str(name).strip().lower().replace("_", "").replace("-", "")


def _spec_of(module_name: str) -> OpSpec:
    module = importlib.import_module(module_name)
    spec = getattr(module, "SPEC", None)
    if not isinstance(spec, OpSpec):
        raise TypeError(f"operator package {module_name} must define SPEC = OpSpec(...) in its __init__.py")
    return spec


def _entry_point_spec(ep: importlib.metadata.EntryPoint) -> OpSpec:
    """An entry point's OpSpec: it names either the spec (``pkg:SPEC``) or a package that defines ``SPEC``."""
    obj = ep.load()
    spec = obj if isinstance(obj, OpSpec) else getattr(obj, "SPEC", None)
    if not isinstance(spec, OpSpec):
        raise TypeError(f"it names {ep.value!r}, which is neither an OpSpec nor a package defining SPEC = OpSpec(...)")
    return spec


def discover() -> list[OpSpec]:
    """Register the operators of installed distributions (entry point group :data:`ENTRY_POINT_GROUP`) not seen
    yet; returns the specs added. One that fails to load or clashes with a registered op is skipped with a
    RuntimeWarning saying which distribution and why, so a broken plug-in never takes the simulator down."""
    _load()
    added = []
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        key = f"{ep.name} = {ep.value}"
        if key in _entry_points:
            continue
        _entry_points[key] = None
        try:
            added.append(register(_entry_point_spec(ep)))
            _entry_points[key] = added[-1].key
        except Exception as exc:  # a plug-in's import error, a bad SPEC, a name clash: say it, keep going
            dist = getattr(ep.dist, "name", "?")
            warnings.warn(f"operator entry point {key!r} of {dist} skipped: {exc}", RuntimeWarning, stacklevel=2)
    return added


def _load() -> None:
    global _loaded, _ready
    if _ready:
        return
    with _load_lock:            # another thread asking meanwhile waits for the whole registry
        if not _loaded:
            _loaded = True      # (an operator package asking the registry while it loads sees it as loaded)
            for name in OPERATOR_PACKAGES:
                spec = _spec_of(name)
                _specs.setdefault(spec.key, spec)
            _ready = True
            discover()          # installed distributions' operators (entry points), after the built-in ones


def register(spec_or_module: OpSpec | str) -> OpSpec:
    """Add an operator: an :class:`OpSpec`, or the dotted name of a package that defines ``SPEC``.

    Re-registering the same key replaces the earlier spec (handy while developing an op in a notebook)."""
    _load()
    spec = _spec_of(spec_or_module) if isinstance(spec_or_module, str) else spec_or_module
    if not isinstance(spec, OpSpec):
        raise TypeError(f"register() takes an OpSpec or a package name, not {type(spec).__name__}")
    clash = [s.key for s in _specs.values() if s.key != spec.key and
             {_fold(n) for n in s.names()} & {_fold(n) for n in spec.names()}]
    if clash:
        raise ValueError(f"{spec.op_type}: its names clash with the registered op {clash[0]}")
    _specs[spec.key] = spec
    return spec


def unregister(key: str) -> None:
    """Remove an operator added with :func:`register` or found by :func:`discover` (the built-in ones stay; an
    entry point's operator is found again by the next :func:`discover`)."""
    _load()
    spec = get(key)
    if f"ascend_lab.ops.{spec.key}" in OPERATOR_PACKAGES:
        raise ValueError(f"{spec.key} is a built-in operator and cannot be unregistered")
    del _specs[spec.key]
    for ep_key in [k for k, op in _entry_points.items() if op == spec.key]:
        del _entry_points[ep_key]


def ops() -> list[OpSpec]:
    """Every registered operator, built-in ones first."""
    _load()
    return list(_specs.values())


def get(name: str) -> OpSpec:
    """The spec of an op by any spelling; unknown names raise ValueError listing the choices."""
    if isinstance(name, OpSpec):
        return name
    _load()
    key = _fold(name)
    for spec in _specs.values():
        if key in {_fold(n) for n in spec.names()}:
            return spec
    choices = ", ".join(f"{s.key} ({s.op_type})" for s in _specs.values())
    raise ValueError(f"unknown op {name!r}; choose one of: {choices}")


def aclnn_apis() -> list[tuple[OpSpec, AclnnSpec]]:
    """Every registered aclnn API with the op package that owns it."""
    return [(s, s.aclnn) for s in ops() if s.aclnn is not None]


def aclnn_api(name: str) -> tuple[OpSpec, AclnnSpec]:
    """An aclnn API by convenience name (``threshold_backward``) or API name (``aclnnThresholdBackward``)."""
    key = _fold(name)
    for spec, api in aclnn_apis():
        if key in (_fold(api.convenience), _fold(api.api), _fold(api.name)):
            return spec, api
    choices = ", ".join(f"{a.convenience} ({a.api})" for _, a in aclnn_apis())
    raise ValueError(f"unknown op {name!r}: no aclnn API of that name; choose one of: {choices}")


def oracle_call(node: Any) -> tuple[str, dict[str, Any]]:
    """("module:function", keyword arguments) of the oracle for what a kernel node ran: the node attributes the
    kernel's oracle takes (alpha, threshold...) plus the platform facts its SoC implies (``oracle_params``)."""
    return _oracle_call(get(node.op), node.attrs["kernel"], node.attrs)


def _oracle_call(spec: OpSpec, flavour: str, attrs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    name, wanted = spec.oracle_for(flavour)
    kwargs = {a: attrs[a] for a in wanted}
    kwargs.update(spec.kernel(flavour).oracle_params(get_soc(attrs["soc"])))
    return name, kwargs


def _bind(name: str, kwargs: dict[str, Any], op_type: str) -> Callable[..., Any]:
    module, _, attr = name.partition(":")
    if not module or not attr:
        raise ValueError(f"{op_type}: its spec names no oracle (OpSpec.oracle = 'module:function')")
    return functools.partial(getattr(importlib.import_module(module), attr), **kwargs)


def oracle(node: Any) -> Callable[..., Any]:
    """The numpy oracle of what a kernel node ran, bound to the node's attributes and its SoC's platform facts:
    ``registry.oracle(run.kernel_node)(*inputs)`` is the expected output.

    The oracle is imported here, by its name, when a test or the CLI's check asks: the simulator itself never
    imports an oracle (``ascend_lab.golden`` or an op's ``oracle.py``), so nothing that runs kernels depends on it."""
    if node is None or "kernel" not in getattr(node, "attrs", {}):
        raise ValueError("oracle() takes a kernel node (run.kernel_node); this run built none")
    return _bind(*oracle_call(node), node.op)


def kernel_oracle(op: str, flavour: str, soc: Any, attrs: dict[str, float] | None = None) -> Callable[..., Any]:
    """The bound oracle of ``op``'s ``flavour`` kernel on ``soc`` with tiling attributes ``attrs`` (the kernel's
    defaults filled in) -- for a kernel launched directly (``ascend_lab.standalone.run_kernel``), with no graph node."""
    spec = get(op)
    values = {**spec.check_attrs(attrs or {}, flavour), "soc": get_soc(soc).name}
    return _bind(*_oracle_call(spec, flavour, values), spec.op_type)


def op_for_tiling(td: Any) -> tuple[OpSpec, KernelSpec]:
    """The op and kernel whose TilingData class ``td`` is (a figure handed a bare TilingData uses this)."""
    for spec in ops():
        for kernel in spec.kernels.values():
            if kernel.tiles(td):
                return spec, kernel
    raise TypeError(f"{type(td).__name__} is not the TilingData of any registered operator")

