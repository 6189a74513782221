"""A readable model of CANN's operator definition (``op_host/<op>_def.cpp``).

In CANN each AscendC operator registers itself with a class derived from ``ops::OpDef``::

    this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT, ...}).Format({ge::FORMAT_ND, ...});
    this->Output("y")...;
    this->Attr("alpha").AttrType(OPTIONAL).Float(0.16666666f);
    OpAICoreConfig cfg; cfg.DynamicShapeSupportFlag(true).PrecisionReduceFlag(true)...;
    this->AICore().AddConfig("ascend950", cfg);
    OP_ADD(HardSigmoidGrad);

The definition says which dtype/format combinations have a kernel binary, which attributes exist and
with what defaults, and on which SoC families (``AddConfig("ascend950")``) this AscendC kernel is built.
On a SoC family that is not registered, the L0 op falls back to another implementation (for these ops,
the legacy built-in TBE kernel; ``cann_facts.md`` §0 "Which kernel runs on which SoC").

Here the same facts are frozen dataclasses. Two simplifications: ``auto_contiguous`` is one flag for the
whole op (CANN writes ``.AutoContiguous()`` on each Input/Output), and the per-config dtype lists that
some ops give a particular ``OpAICoreConfig`` are not modelled (these three ops do not use them).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..acl.types import aclDataType, as_acl_dtype  # acl.types' as_acl_dtype: this module imports without numpy
from .tiling_data import is_int, to_float32

__all__ = [
    "SOC_FAMILIES", "Attr", "Input", "OpDef", "Output", "soc_family", "infer_shape_same_as_input",
]

#: ``AddConfig`` family names used by ops-nn and the NpuArch (``DAV_xxxx``) their chips have.
#: ascend910b and ascend910_93 share DAV_2201 but are separate configs (separate kernel binaries).
SOC_FAMILIES: dict[str, int] = {
    "ascend910": 1001,
    "ascend310p": 2002,
    "ascend910b": 2201,
    "ascend910_93": 2201,
    "ascend310b": 3002,
    "ascend950": 3510,
}

_PARAM_TYPES = ("REQUIRED", "OPTIONAL", "DYNAMIC")
_ATTR_TYPES = ("float", "int", "bool", "str", "list_int", "list_float")


def soc_family(soc: str) -> str:
    """Map a family name or a product SoC name to the ``AddConfig`` family.

    ``"Ascend910B4"`` -> ``"ascend910b"``, ``"Ascend910_9392"`` -> ``"ascend910_93"``,
    ``"Ascend950PR"`` / ``"Ascend910_95"`` -> ``"ascend950"``, ``"Ascend310P3"`` -> ``"ascend310p"``,
    ``"Ascend910A"`` -> ``"ascend910"``.
    """
    key = str(soc).strip().lower()
    if key in SOC_FAMILIES:
        return key
    for prefix, family in (("ascend910_93", "ascend910_93"), ("ascend910_95", "ascend950"),
                           ("ascend950", "ascend950"), ("ascend910b", "ascend910b"),
                           ("ascend310p", "ascend310p"), ("ascend310b", "ascend310b"),
                           ("ascend910", "ascend910")):
        if key.startswith(prefix):
            return family
    raise ValueError(f"unknown SoC {soc!r}; use a family ({', '.join(SOC_FAMILIES)}), a product name such "
                     "as 'Ascend910B4', or an NpuArch number such as 2201")


def _dtypes(values: Iterable[Any]) -> tuple[aclDataType, ...]:
    return tuple(as_acl_dtype(v) for v in values)


@dataclass(frozen=True)
class _Param:
    name: str
    param_type: str = "REQUIRED"
    dtypes: tuple[aclDataType, ...] = ()
    formats: tuple[str, ...] = ("ND",)

    def __post_init__(self) -> None:
        if self.param_type not in _PARAM_TYPES:
            raise ValueError(f"{self.name}: param_type must be one of {_PARAM_TYPES}, "
                             f"not {self.param_type!r}")
        object.__setattr__(self, "dtypes", _dtypes(self.dtypes))
        formats = tuple(str(f).upper().removeprefix("FORMAT_") for f in self.formats)
        # CANN pairs DataType and Format lists index by index; one format means "the same for all".
        if len(formats) == 1:
            formats *= max(1, len(self.dtypes))
        if len(formats) != len(self.dtypes):
            raise ValueError(f"{self.name}: {len(self.dtypes)} dtypes but {len(formats)} formats; "
                             "give one format or one per dtype")
        object.__setattr__(self, "formats", formats)

    def supports(self, dtype: Any) -> bool:
        return as_acl_dtype(dtype) in self.dtypes


@dataclass(frozen=True)
class Input(_Param):
    """``this->Input(name).ParamType(...).DataType({...}).Format({...})``."""


@dataclass(frozen=True)
class Output(_Param):
    """``this->Output(name).ParamType(...).DataType({...}).Format({...})``."""


@dataclass(frozen=True)
class Attr:
    """``this->Attr(name).AttrType(OPTIONAL).Float(default)``.

    A ``float`` default is stored as the C ``float`` value (``0.16666666f`` -> 0.1666666567325592).
    """

    name: str
    type: str
    default: Any = None
    optional: bool = True

    def __post_init__(self) -> None:
        if self.type not in _ATTR_TYPES:
            raise ValueError(f"attr {self.name}: type must be one of {_ATTR_TYPES}, not {self.type!r}")
        if self.type == "float" and self.default is not None:
            object.__setattr__(self, "default", to_float32(self.default))


@dataclass(frozen=True)
class OpDef:
    """One operator definition (``class <Op> : public OpDef`` + ``OP_ADD``).

    Flags mirror ``OpAICoreConfig``: ``DynamicShapeSupportFlag``, ``DynamicRankSupportFlag``,
    ``DynamicCompileStaticFlag``, ``DynamicFormatFlag``, ``NeedCheckSupportFlag``, ``PrecisionReduceFlag``.
    """

    name: str
    inputs: tuple[Input, ...]
    outputs: tuple[Output, ...]
    attrs: tuple[Attr, ...] = ()
    aicore_configs: tuple[str, ...] = ()
    dynamic_shape: bool = True
    dynamic_rank: bool = True
    dynamic_compile_static: bool = True
    dynamic_format: bool = False
    need_check_support: bool = False
    auto_contiguous: bool = False
    precision_reduce: bool = False
    source: str = field(default="", compare=False)  # the .cpp this definition mirrors

    def __post_init__(self) -> None:
        object.__setattr__(self, "inputs", tuple(self.inputs))
        object.__setattr__(self, "outputs", tuple(self.outputs))
        object.__setattr__(self, "attrs", tuple(self.attrs))
        configs = tuple(soc_family(c) for c in self.aicore_configs)
        object.__setattr__(self, "aicore_configs", configs)
        names = [p.name for p in (*self.inputs, *self.outputs)] + [a.name for a in self.attrs]
        if len(names) != len(set(names)):
            raise ValueError(f"{self.name}: duplicate input/output/attr names in {names}")

    def input(self, name: str) -> Input:
        return _find(self.inputs, name, self.name, "input")

    def output(self, name: str) -> Output:
        return _find(self.outputs, name, self.name, "output")

    def attr(self, name: str) -> Attr:
        return _find(self.attrs, name, self.name, "attr")

    def attr_defaults(self) -> dict[str, Any]:
        return {a.name: a.default for a in self.attrs}

    @property
    def dtypes(self) -> tuple[aclDataType, ...]:
        """The dtypes of input 0 (for these elementwise ops every input/output uses the same list)."""
        return self.inputs[0].dtypes

    def supports_dtype(self, dtype: Any) -> bool:
        return self.inputs[0].supports(dtype)

    def require_dtype(self, dtype: Any) -> aclDataType:
        """Normalise ``dtype`` and check input 0 has a kernel for it (else ValueError saying which do)."""
        dt = as_acl_dtype(dtype)
        if dt not in self.dtypes:
            raise ValueError(f"{self.name} has no kernel for {dt.short}; its op definition lists "
                             f"{', '.join(d.short for d in self.dtypes)}")
        return dt

    def registered_for(self, npu_arch_or_family: Any) -> bool:
        """Is this AscendC kernel built for a SoC? (``AICore().AddConfig(family)``.)

        Accepts a family (``"ascend950"``), a product SoC name (``"Ascend910B4"``), an NpuArch number
        (``3510``, ``NpuArch.DAV_3510``, ``"DAV_3510"``) or a catalogue entry with a ``.family``. An NpuArch
        answers True when any family with that arch is registered; note DAV_2201 covers both ascend910b
        and ascend910_93, which CANN registers separately.
        """
        family = getattr(npu_arch_or_family, "family", None)
        if isinstance(family, str):
            return soc_family(family) in self.aicore_configs
        arch: int | None = None
        if is_int(npu_arch_or_family):
            arch = int(npu_arch_or_family)
        elif isinstance(npu_arch_or_family, str) and npu_arch_or_family.strip().upper().startswith("DAV_"):
            try:
                arch = int(npu_arch_or_family.strip()[4:])
            except ValueError:
                raise ValueError(f"bad NpuArch {npu_arch_or_family!r}; expected e.g. 'DAV_2201'") from None
        if arch is not None:
            if arch not in SOC_FAMILIES.values():
                raise ValueError(f"unknown NpuArch {arch}; known: {sorted(set(SOC_FAMILIES.values()))}")
            return any(SOC_FAMILIES[f] == arch for f in self.aicore_configs)
        if not isinstance(npu_arch_or_family, str):
            raise TypeError("expected a SoC family/product name or an NpuArch int, "
                            f"not {npu_arch_or_family!r}")
        return soc_family(npu_arch_or_family) in self.aicore_configs


def _find(items: tuple[Any, ...], name: str, op: str, what: str) -> Any:
    for item in items:
        if item.name == name:
            return item
    raise KeyError(f"{op} has no {what} {name!r}; it has {[i.name for i in items]}")


def infer_shape_same_as_input(input_shape: Iterable[int]) -> tuple[int, ...]:
    """InferShape of an elementwise op without broadcasting: output shape = input 0 shape.

    Mirrors the ``IMPL_OP_INFERSHAPE(...).InferShape(InferShape4Elewise...)`` registrations of these ops'
    ``op_host/*_infershape.cpp``: copy input 0's shape to output 0 (a 0-d shape stays 0-d).
    """
    shape = tuple(input_shape)
    for d in shape:
        if not is_int(d) or d < 0:
            raise ValueError(f"shape {shape!r} must contain non-negative ints")
    return tuple(int(d) for d in shape)
