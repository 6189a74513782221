"""The operator registry: every ``ops/<op>/`` package's :class:`~.spec.OpSpec`, in one place.

CANN finds an operator through registration macros (``OP_ADD``, ``REGISTER_TILING_DATA_CLASS``, the aclnn
symbol table); here the registry imports each package listed in :data:`OPERATOR_PACKAGES` and collects
its ``SPEC``. Adding an operator is one folder plus one line in that list -- or, for an operator that
lives outside the package (a lab's, a test's), one :func:`register` call.

Lookups accept any spelling of an op: the package key (``hard_sigmoid_grad``), CANN's op type
(``HardSigmoidGrad``), with case, ``-`` and ``_`` ignored; aclnn APIs likewise by convenience name
(``hardsigmoid_backward``) or API name (``aclnnHardsigmoidBackward``).
"""

from __future__ import annotations

import functools
import importlib
import threading
from collections.abc import Callable
from typing import Any

from ..base.platform import get_soc
from .spec import AclnnSpec, KernelSpec, OpSpec

__all__ = ["OPERATOR_PACKAGES", "aclnn_api", "aclnn_apis", "get", "op_for_tiling", "ops", "oracle", "oracle_call",
           "register", "unregister"]

#: One line per operator package. The order is the order tables and menus show.
OPERATOR_PACKAGES: tuple[str, ...] = (
    "ascend_lab.ops.hard_sigmoid_grad",
    "ascend_lab.ops.threshold_grad_v2_d",
    "ascend_lab.ops.relu_grad",
)

_specs: dict[str, OpSpec] = {}
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
    """Remove an operator added with :func:`register` (the built-in ones stay)."""
    _load()
    spec = get(key)
    if f"ascend_lab.ops.{spec.key}" in OPERATOR_PACKAGES:
        raise ValueError(f"{spec.key} is a built-in operator and cannot be unregistered")
    del _specs[spec.key]


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
    spec = get(node.op)
    flavour = node.attrs["kernel"]
    name, attrs = spec.oracle_for(flavour)
    kwargs = {a: node.attrs[a] for a in attrs}
    kwargs.update(spec.kernel(flavour).oracle_params(get_soc(node.attrs["soc"])))
    return name, kwargs


def oracle(node: Any) -> Callable[..., Any]:
    """The numpy oracle of what a kernel node ran, bound to the node's attributes and its SoC's platform facts:
    ``registry.oracle(run.kernel_node)(*inputs)`` is the expected output.

    The oracle is imported here, by its name, when a test or the CLI's check asks: the simulator itself never
    imports an oracle (``ascend_lab.golden`` or an op's ``oracle.py``), so nothing that runs kernels depends on it."""
    if node is None or "kernel" not in getattr(node, "attrs", {}):
        raise ValueError("oracle() takes a kernel node (run.kernel_node); this run built none")
    name, kwargs = oracle_call(node)
    module, _, attr = name.partition(":")
    if not module or not attr:
        raise ValueError(f"{node.op}: its spec names no oracle (OpSpec.oracle = 'module:function')")
    function = getattr(importlib.import_module(module), attr)
    return functools.partial(function, **kwargs)


def op_for_tiling(td: Any) -> tuple[OpSpec, KernelSpec]:
    """The op and kernel whose TilingData class ``td`` is (a figure handed a bare TilingData uses this)."""
    for spec in ops():
        for kernel in spec.kernels.values():
            if kernel.tiles(td):
                return spec, kernel
    raise TypeError(f"{type(td).__name__} is not the TilingData of any registered operator")

