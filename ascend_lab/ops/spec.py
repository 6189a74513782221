"""What an operator package declares about itself: one :class:`OpSpec` per L0 op.

CANN spreads an operator over several files -- ``op_api`` (the aclnn L2 API and the L0 op), ``op_host``
(op definition, infer-shape, tiling) and ``op_kernel`` (one kernel per SoC family) -- and registers each
piece with a macro. The simulator does the same with one declaration per ``ops/<op>/`` package, collected
by :mod:`.registry`. Everything that lists operators (the CLI, the tiling facade, the convenience layer,
direct kernel launch, explorers, tile maps, support tables, the validation playground) reads these specs,
so a new operator is one folder plus one registry line and no other code names it.

A spec holds:

* CANN's names (``op_type`` such as ``HardSigmoidGrad``) and the op definition (``OP_DEF``);
* the tiling attributes and their defaults (``alpha``/``beta``, ``threshold``);
* its kernels keyed by *flavour* (``tbe`` built-in TBE, ``main`` ops-nn main-tree AscendC, ``experimental``
  the ops-nn experimental custom package), each with the SoC configs it is registered for, its tiling,
  TilingData class, per-core ranges and ``__global__`` entry;
* optionally the aclnn entry points it owns (:class:`AclnnSpec`): the two phases, the convenience call's
  arguments, the dtype support lists per SoC;
* the name of its test oracle, as text: the simulator never imports the oracle (``ascend_lab.golden``, or the
  op's own ``oracle.py``; ``registry.oracle`` resolves it for tests and the CLI's check).

What tools once guessed is declared: the inputs and outputs (from the op definition: ``OpSpec.inputs``), the
attributes and their defaults, the kernel flavours present (``OpSpec.flavours``) and how the live tiling page
recomputes each kernel's tiling (``KernelSpec.live``). ``ops/README.md`` is the guide to adding an operator.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..opdev.op_def import OpDef

__all__ = ["FLAVOURS", "LIVE_KINDS", "AclnnSpec", "KernelSpec", "LiveTiling", "OpSpec", "ScalarArg"]

#: Kernel flavours, as design §8 names them: built-in TBE, built-in AscendC (main tree), custom package.
FLAVOURS: tuple[str, ...] = ("tbe", "main", "experimental")

#: How the live tiling page (pyodide: no numpy) recomputes a kernel's tiling (``live.live_tiling``).
LIVE_KINDS: tuple[str, ...] = ("host", "tbe", "template")


@dataclass(frozen=True)
class LiveTiling:
    """Where the live tiling page finds a kernel's run-time tiling -- declared, never guessed from module names.

    * ``host`` (the default): the kernel's ``tiling`` and ``core_ranges`` import and run without numpy (an
      ``op_host`` module on ``acl.types``/``opdev.tiling_data``), so the page calls them as they are;
    * ``tbe``: ``source`` is the TBE kernel module (its ``describe`` and ``DTYPES``); the page runs
      ``tbe.schedule.elewise_tiling`` on the description's compile-time counts, recorded at book build;
    * ``template``: ``source`` is the atvoss ``TemplateOp``; the page runs ``atvoss.tiling.broadcast_base_tiling``
      on the DAG's counts, recorded at book build.
    """
    kind: str = "host"
    source: Any = None

    def __post_init__(self) -> None:
        if self.kind not in LIVE_KINDS:
            raise ValueError(f"live tiling kind must be one of {LIVE_KINDS}, got {self.kind!r}")
        if (self.kind == "host") != (self.source is None):
            raise ValueError(f"live tiling {self.kind!r}: a host tiling takes no source, tbe/template need one")


@dataclass(frozen=True)
class KernelSpec:
    """One kernel of an L0 op: where it is registered, how it tiles, what it runs.

    ``tiling(n, dtype, core_num, ub_size, **attrs)`` returns the TilingData (plus ``blockDim`` and
    ``tilingKey``); ``core_ranges(td, dtype, n, tiles=True)`` says what each core touches (``tiles=False``
    leaves out the per-tile lists for very large inputs); ``entry`` is the ``__global__`` function and
    ``template(td, dtype, buffer_num)`` its template arguments; ``launch`` is what the L0 node calls in
    phase 2 with the graph's aclTensors. ``args`` names the GM arguments in order (inputs, then output).
    """
    flavour: str
    socs: tuple[str, ...]
    tiling: Callable[..., Any]
    tiling_data: type
    core_ranges: Callable[..., list[dict[str, Any]]]
    tile_field: str
    entry: Callable[..., Any]
    template: Callable[[Any, Any, int], dict[str, Any]]
    launch: Callable[..., Any]
    args: tuple[str, ...]
    source: str
    buffer_num: int = 2
    #: The dtype a tiling encodes on its own (HardSigmoidGrad's tilingKey), or None when it does not.
    tiling_dtype: Callable[[Any], str | None] = lambda td: None
    #: For kernels that tile from shapes (the broadcast template): ``tiling_shapes(input_shapes, out_shape, dtype,
    #: core_num, ub_size, **attrs)``. When None the L0 node calls ``tiling(n, ...)`` with n = input 0's element
    #: count, as the experimental kernels' tilings count it.
    tiling_shapes: Callable[..., Any] | None = None
    #: The workspace the tiling requests on a SoC (``context->GetWorkspaceSizes``), in bytes; 0 for none.
    workspace: Callable[[Any], int] = lambda soc: 0
    #: "module:function" of this kernel's numpy oracle and the kernel-node attributes it takes ("soc" passes the
    #: SoC name, for kernels whose numerics differ per SoC). Empty: the op's oracle. The simulator never imports
    #: the oracle; tests and the CLI's check resolve the name.
    oracle: str = ""
    oracle_attrs: tuple[str, ...] = ()
    #: Other TilingData classes this kernel's tiling can produce (the broadcast template's general struct).
    tiling_data_more: tuple[type, ...] = ()
    #: False for kernels that choose their own buffering (TBE's schedule, the template): BUFFER_NUM does not apply.
    takes_buffer_num: bool = True
    #: Tiling-attribute defaults of this kernel that differ from the op's (the main-tree HardSigmoidGrad tiling
    #: defaults alpha to 1/6f, the value the shipping aclnn passes).
    attr_defaults: Mapping[str, float] = field(default_factory=dict)
    #: What this kernel computes, in one line for the graph's "why" (the flavours differ: TBE's HardSigmoidGrad
    #: tests |x| < 3). Empty: the op_api's own description.
    formula: str = ""
    #: Platform facts the oracle takes as keyword arguments for a SoC (e.g. TBE's ``{"vcopy": ...}``).
    oracle_params: Callable[[Any], dict[str, Any]] = lambda soc: {}
    #: How the live tiling page recomputes this kernel's tiling without numpy (default: a numpy-free host tiling);
    #: None leaves the kernel out of the page.
    live: LiveTiling | None = LiveTiling()

    def __post_init__(self) -> None:
        if self.flavour not in FLAVOURS:
            raise ValueError(f"kernel flavour must be one of {FLAVOURS}, got {self.flavour!r}")

    def tiles(self, td: Any) -> bool:
        """Whether ``td`` is a TilingData this kernel's tiling produces."""
        return isinstance(td, (self.tiling_data, *self.tiling_data_more))

    def tile_elements(self, td: Any, dtype: Any = None, n: int | None = None) -> int:
        """Elements in one full tile: the tiling's ``tile_field``, or (for a struct without it, such as a
        broadcast tiling) the longest tile its ``core_ranges`` list."""
        value = getattr(td, self.tile_field, None)
        if value is not None:
            return int(value)
        rows = self.core_ranges(td, dtype, n)
        return max((length for r in rows for _, _, length in r.get("tiles", [])), default=0)

    def registered_for(self, soc: Any) -> bool:
        """Whether this kernel's op definition registers it for ``soc`` (``AddConfig("ascend910b")``)."""
        return soc.family in self.socs


@dataclass(frozen=True)
class ScalarArg:
    """A scalar argument of an aclnn API (``aclScalar*``), e.g. ThresholdBackward's ``threshold``."""
    name: str                     # the convenience/CLI name, e.g. "threshold"
    c_name: str                   # the aclnn parameter name
    default: float                # the CLI's default value
    help: str = ""


@dataclass(frozen=True)
class AclnnSpec:
    """The aclnn entry points an op package owns, and how the convenience layer calls them.

    ``tensors`` pairs each convenience argument with its aclnn parameter (``("grad_output", "gradOutput")``).
    ``default_out(arrays, out_dtype)`` gives the (shape, dtype) torch_npu would allocate for ``out`` (or
    None when it cannot tell). ``dtype_support(**scalars)`` is the list the API accepts on the SoC in
    force; ``support_cases`` are the scalar values whose lists the support table shows (one column each).
    """
    api: str
    get_workspace_size: Callable[..., tuple[int, int, Any]]
    run: Callable[..., int]
    convenience: str
    formula: str
    tensors: tuple[tuple[str, str], ...]
    default_out: Callable[[Mapping[str, Any], Any], tuple[tuple[int, ...], Any] | None]
    dtype_support: Callable[..., tuple[Any, ...]]
    scalars: tuple[ScalarArg, ...] = ()
    support_cases: tuple[Mapping[str, float], ...] = ({},)
    #: The L0 ops this API can reach (for the CLI's help and the book's tables).
    l0_ops: tuple[str, ...] = ()
    #: When only some ``support_cases`` accept a dtype: (cell text, legend text) for the support figure.
    partial_support: tuple[str, str] = ("", "")

    @property
    def name(self) -> str:
        """The API without its prefix: ``HardsigmoidBackward``."""
        return self.api.removeprefix("aclnn")


@dataclass(frozen=True)
class OpSpec:
    """One L0 operator (``ops/<key>/``): names, op definition, tiling attributes, kernels, aclnn API."""
    key: str                                   # the package name, e.g. "hard_sigmoid_grad"
    op_type: str                               # CANN's op type, e.g. "HardSigmoidGrad"
    op_def: OpDef
    infer_shape: Callable[..., tuple[int, ...]]
    kernels: Mapping[str, KernelSpec]
    n_name: str = "total_length"               # the tiling's element-count parameter
    attrs: Mapping[str, float] = field(default_factory=dict)
    aclnn: AclnnSpec | None = None
    #: "module:function" of the numpy oracle and the kernel-node attrs it takes (tests and the CLI's check), for
    #: kernels that do not name their own.
    oracle: str = ""
    oracle_attrs: tuple[str, ...] = ()
    summary: str = ""
    #: The dotted name of the numpy-free module that holds ``OP_DEF`` (the live tiling page checks dtypes with it);
    #: empty: the module of ``infer_shape`` (an ``op_host``).
    host_module: str = ""

    def __post_init__(self) -> None:
        unknown = set(self.kernels) - set(FLAVOURS)
        if unknown:
            raise ValueError(f"{self.op_type}: unknown kernel flavours {sorted(unknown)}; use {FLAVOURS}")
        if not self.kernels:
            raise ValueError(f"{self.op_type}: an operator needs at least one kernel")
        arity = len(self.inputs) + len(self.outputs)
        for flavour, kernel in self.kernels.items():
            if kernel.flavour != flavour:
                raise ValueError(f"{self.op_type}: kernels[{flavour!r}] is a {kernel.flavour!r} kernel")
            if len(kernel.args) != arity:
                raise ValueError(f"{self.op_type} {flavour}: args {kernel.args} must name the {arity} GM tensors "
                                 f"of the op definition ({', '.join(self.inputs + self.outputs)}), in order")

    @property
    def inputs(self) -> tuple[str, ...]:
        """The op definition's input names, in order (``("gradients", "features")``)."""
        return tuple(p.name for p in self.op_def.inputs)

    @property
    def outputs(self) -> tuple[str, ...]:
        """The op definition's output names, in order."""
        return tuple(p.name for p in self.op_def.outputs)

    @property
    def flavours(self) -> tuple[str, ...]:
        """The kernel flavours the simulator has for this op, in declaration order."""
        return tuple(self.kernels)

    @property
    def op_def_name(self) -> str:
        """``module:OP_DEF`` of the op definition, for code that must import it by name (the live tiling page)."""
        return f"{self.host_module or self.infer_shape.__module__}:OP_DEF"

    @property
    def dtypes(self) -> tuple[Any, ...]:
        """Input dtypes the op definition accepts."""
        return tuple(self.op_def.dtypes)

    def kernel(self, flavour: str | None = None) -> KernelSpec:
        """The kernel of ``flavour``; ``None`` means the op's first (today its only) kernel."""
        if flavour is None:
            return next(iter(self.kernels.values()))
        if flavour not in FLAVOURS:
            raise ValueError(f"kernel must be one of {', '.join(FLAVOURS)} (or None), got {flavour!r}")
        try:
            return self.kernels[flavour]
        except KeyError:
            raise ValueError(f"{self.op_type} has no {flavour!r} kernel in the simulator; it has "
                             f"{', '.join(self.kernels)}") from None

    def oracle_for(self, flavour: str) -> tuple[str, tuple[str, ...]]:
        """("module:function", attribute names) of the oracle for the ``flavour`` kernel."""
        kernel = self.kernel(flavour)
        return (kernel.oracle, kernel.oracle_attrs) if kernel.oracle else (self.oracle, self.oracle_attrs)

    def check_attrs(self, attrs: Mapping[str, Any], flavour: str | None = None) -> dict[str, float]:
        """The tiling attributes with defaults filled in (the ``flavour`` kernel's own defaults first, then the
        op's); unknown names raise TypeError naming the valid ones."""
        unknown = sorted(set(attrs) - set(self.attrs))
        if unknown:
            valid = ", ".join(self.attrs) or "none"
            raise TypeError(f"{self.op_type} tiling attributes are: {valid}; unknown {unknown}")
        return {**self.attrs, **self.kernel(flavour).attr_defaults, **attrs}

    def names(self) -> Sequence[str]:
        """Every spelling that selects this op: ``hard_sigmoid_grad``, ``HardSigmoidGrad``."""
        return (self.key, self.op_type)
