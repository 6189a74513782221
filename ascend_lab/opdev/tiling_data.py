"""TilingData: the small C struct a host tiling function fills in and a kernel reads back.

In CANN an operator's ``op_host/*_tiling.cpp`` fills a plain C struct (``HardSigmoidGradTilingData``,
``ThresholdGradV2DTilingData``...), the framework copies its bytes to device memory next to the kernel
arguments, and the kernel recovers the struct with the ``GET_TILING_DATA(tilingData, tiling)`` macro.
Two more numbers travel *beside* the struct, not inside it: ``blockDim`` (``context->SetBlockDim``, how
many cores run the kernel) and the tiling key (``context->SetTilingKey``, which kernel template runs).

A subclass declares CANN's fields, in CANN's order, with their C types::

    class HardSigmoidGradTilingData(TilingData):
        totalLength: int64
        blockFactor: int64
        ubFactor: int64
        alpha: float32
        beta: float32

Byte layout rule (``to_bytes``/``from_bytes``): little-endian (Ascend is little-endian), natural C
alignment as a C compiler lays out a plain struct: every field starts at a multiple of its own size
and the struct size is rounded up to its largest member. So a trailing ``float`` after ``uint64_t``
members is followed by 4 bytes of padding (ThresholdGradV2D: 8*8 + 4 -> 72 bytes), while two trailing
floats fill the last 8-byte slot exactly (HardSigmoidGrad: 3*8 + 2*4 = 32 bytes). Padding bytes are
written as zero and ignored when reading.

Values are immutable; a ``float`` field stores the value a C ``float`` holds (rounded to float32,
e.g. ``0.16666666f`` is 0.1666666567325592), so what you read is what the kernel reads.
"""

from __future__ import annotations

import math
import numbers
import struct
import sys
import typing
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Self

__all__ = [
    "CType", "GET_TILING_DATA", "TilingData", "TilingError",
    "ceil_div", "float32_text", "floor_align", "is_int", "is_real", "require_count", "to_float32",
    "float32", "int32", "int64", "uint32", "uint64",
]

# This module imports without numpy (the live tiling page runs it in pyodide, which has none). numpy values are
# still accepted: a numpy scalar can only exist when numpy is loaded, so the helpers below reach numpy through
# sys.modules and treat such a value exactly as numpy would.


def _numpy_value(value: Any, kind: str = "generic") -> bool:
    """Whether ``value`` is a numpy scalar of ``kind`` (``np.generic``, ``np.number``): never when numpy is not
    loaded, since then no numpy value exists."""
    np = sys.modules.get("numpy")
    return np is not None and isinstance(value, getattr(np, kind))


def is_int(value: Any) -> bool:
    """A Python or numpy integer, not a bool (what ``isinstance(v, (int, np.integer))`` without bools meant)."""
    return not isinstance(value, bool) and isinstance(value, numbers.Integral)


def is_real(value: Any) -> bool:
    """An int, a float or a numpy number, not a bool (the values a C ``float`` field takes)."""
    if isinstance(value, bool):
        return False
    return isinstance(value, (int, float)) or _numpy_value(value, "number")


def to_float32(value: Any) -> float:
    """``float(np.float32(value))`` without numpy: the C ``float`` nearest ``value`` (round to nearest even;
    a finite value past the float range becomes +-inf, as the C conversion and numpy give)."""
    if _numpy_value(value):
        return float(sys.modules["numpy"].float32(value))
    x = float(value)
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:                      # struct refuses what rounds to inf; C and numpy give inf
        return math.copysign(math.inf, x)


def float32_text(value: Any) -> str:
    """``str(np.float32(value))`` without numpy: the shortest text that reads back as the same float32
    (``0.16666666``), positional for 1e-4 <= |x| < 1e6 and scientific (``1.5e+07``, ``1e-05``) otherwise."""
    if _numpy_value(value):
        return str(sys.modules["numpy"].float32(value))
    f = to_float32(value)
    if math.isnan(f) or math.isinf(f):
        return str(f)
    for digits in range(1, 10):
        text = f"{f:.{digits}g}"
        if to_float32(float(text)) == f:
            break
    if f == 0.0 or 1e-4 <= abs(f) < 1e6:
        return repr(float(text))
    return f"{float(text):.{digits - 1}e}"


class TilingError(ValueError):
    """A tiling function refused its inputs (CANN: the tiling func returns ``ge::GRAPH_FAILED``,
    which the aclnn layer reports as 561002 ACLNN_ERR_INNER_TILING_ERROR)."""


def ceil_div(x: int, y: int) -> int:
    """``Ops::Base::CeilDiv`` (opbase ``op_common/op_host/util/math_util.h``): ``CeilDiv(x, 0) == x``."""
    return x if y == 0 else (x + y - 1) // y


def block_factor_ranges(total: int, block_factor: int, ub_factor: int, block_dim: int, itemsize: int,
                        tiles: bool = True) -> list[dict[str, Any]]:
    """The ``core_ranges`` rows of a kernel that splits ``total`` elements into ``block_factor`` per core and
    each core's share into tiles of ``ub_factor`` (a shorter last tile), moving exact byte counts: core ``i``
    starts at ``block_factor * i``; cores left with nothing return at once and are not listed; ``padding`` is 0.
    Shared by the 950 HardSigmoidGrad and the TBE elementwise schedule, whose splits are the same; each caller
    checks ``ub_factor`` first and says why it could be 0."""
    out = []
    for core in range(block_dim):
        offset = block_factor * core
        data_num = min(block_factor, total - offset)
        if data_num <= 0:
            continue
        tile_num = ceil_div(data_num, ub_factor)
        entry: dict[str, Any] = {
            "core": core, "kind": "big" if data_num == block_factor else "small", "offset": offset,
            "data_num": data_num, "tile_num": tile_num, "tail": data_num - (tile_num - 1) * ub_factor,
            "padded_end": offset + data_num, "padding": 0, "bytes": data_num * itemsize,
        }
        if tiles:
            entry["tiles"] = [(i, offset + i * ub_factor, min(ub_factor, data_num - i * ub_factor))
                              for i in range(tile_num)]
        out.append(entry)
    return out


def floor_align(x: int, align: int) -> int:
    """``Ops::Base::FloorAlign``: ``x`` rounded down to a multiple of ``align``; ``FloorAlign(x, 0) == 0``."""
    return 0 if align == 0 else (x // align) * align


def require_count(what: str, value: Any) -> int:
    """A non-negative int (element count, core count, UB bytes); TypeError/ValueError saying what to pass."""
    if not is_int(value):
        raise TypeError(f"{what} must be an int, got {type(value).__name__} {value!r}")
    if value < 0:
        raise ValueError(f"{what} must be >= 0, got {value}")
    return int(value)


@dataclass(frozen=True)
class CType:
    """One C scalar type: its spelling, ``struct`` format character and size in bytes."""

    c_name: str
    fmt: str
    size: int

    @property
    def is_float(self) -> bool:
        return self.fmt in "fd"

    def bounds(self) -> tuple[int, int]:
        bits = 8 * self.size
        if self.fmt.isupper():  # unsigned
            return 0, 2**bits - 1
        return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1


# Field annotations: ``name: int64`` reads like CANN's ``int64_t name;``.
int64 = Annotated[int, CType("int64_t", "q", 8)]
uint64 = Annotated[int, CType("uint64_t", "Q", 8)]
int32 = Annotated[int, CType("int32_t", "i", 4)]
uint32 = Annotated[int, CType("uint32_t", "I", 4)]
float32 = Annotated[float, CType("float", "f", 4)]


def _ctype_of(hint: Any) -> CType | None:
    for meta in getattr(hint, "__metadata__", ()):
        if isinstance(meta, CType):
            return meta
    return None


def _layout(fields: tuple[tuple[str, CType], ...]) -> tuple[str, int]:
    """``struct`` format string and size for natural C alignment (see the module docstring)."""
    fmt, offset, max_align = "<", 0, 1
    for _, ctype in fields:
        pad = -offset % ctype.size
        fmt += "x" * pad + ctype.fmt
        offset += pad + ctype.size
        max_align = max(max_align, ctype.size)
    tail = -offset % max_align
    fmt += "x" * tail
    return fmt, offset + tail


class TilingData:
    """Base class: subclasses annotate their fields with ``int64``/``uint64``/``uint32``/``float32``.

    Construct with keyword arguments named as in CANN, plus ``blockDim`` and ``tilingKey``::

        HardSigmoidGradTilingData(totalLength=100, blockFactor=2, ubFactor=7936,
                                  alpha=0.16666666, beta=0.5, blockDim=50, tilingKey=0)
    """

    FIELDS: ClassVar[tuple[tuple[str, CType], ...]] = ()
    _FORMAT: ClassVar[str] = "<"
    SIZE: ClassVar[int] = 0

    blockDim: int
    tilingKey: int

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        hints = typing.get_type_hints(cls, include_extras=True)
        own = [n for n in cls.__dict__.get("__annotations__", {}) if n not in ("blockDim", "tilingKey")]
        fields = list(cls.FIELDS)
        for field_name in own:
            hint = hints[field_name]
            if typing.get_origin(hint) is ClassVar:
                continue
            ctype = _ctype_of(hint)
            if ctype is None:
                raise TypeError(f"{cls.__name__}.{field_name}: annotate TilingData fields with a C type "
                                "from ascend_lab.opdev.tiling_data (int64, uint64, uint32, int32, float32)")
            fields.append((field_name, ctype))
        cls.FIELDS = tuple(fields)
        cls._FORMAT, cls.SIZE = _layout(cls.FIELDS)

    def __init__(self, *, blockDim: int = 1, tilingKey: int = 0, **values: Any) -> None:
        names = [n for n, _ in self.FIELDS]
        missing = [n for n in names if n not in values]
        unknown = [n for n in values if n not in names]
        if missing or unknown:
            raise TypeError(f"{type(self).__name__} needs exactly the fields {names}; "
                            f"missing {missing}, unknown {unknown}")
        for field_name, ctype in self.FIELDS:
            object.__setattr__(self, field_name, _convert(field_name, values[field_name], ctype))
        object.__setattr__(self, "blockDim", _convert("blockDim", blockDim, CType("uint32_t", "I", 4)))
        object.__setattr__(self, "tilingKey", _convert("tilingKey", tilingKey, CType("uint64_t", "Q", 8)))

    # -- immutability -------------------------------------------------------------------------
    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable; use .replace({key}=...) for a copy")

    def __delattr__(self, key: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def replace(self, **changes: Any) -> Self:
        """A copy with some fields (or blockDim/tilingKey) changed, e.g. to try a bad tiling on purpose."""
        return type(self)(**{**self.as_dict(), **changes})

    # -- views --------------------------------------------------------------------------------
    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return tuple(n for n, _ in cls.FIELDS)

    def as_dict(self) -> dict[str, int | float]:
        """Fields in CANN order, then ``blockDim`` and ``tilingKey``."""
        out: dict[str, int | float] = {n: getattr(self, n) for n, _ in self.FIELDS}
        out["blockDim"] = self.blockDim
        out["tilingKey"] = self.tilingKey
        return out

    def __repr__(self) -> str:
        parts = []
        for key, value in self.as_dict().items():
            # the shortest text that round-trips as float32 (0.16666666), as str(np.float32) prints it
            text = float32_text(value) if isinstance(value, float) else str(value)
            parts.append(f"{key}={text}")
        return f"{type(self).__name__}({', '.join(parts)})"

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return _key(self.as_dict()) == _key(other.as_dict())  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self).__name__, _key(self.as_dict())))

    # -- bytes --------------------------------------------------------------------------------
    def to_bytes(self) -> bytes:
        """The packed struct the kernel reads (layout rule in the module docstring)."""
        return struct.pack(self._FORMAT, *(getattr(self, n) for n, _ in self.FIELDS))

    @classmethod
    def from_bytes(cls, raw: bytes | bytearray | memoryview, *,
                   blockDim: int = 1, tilingKey: int = 0) -> Self:
        """Unpack exactly ``SIZE`` bytes. ``blockDim``/``tilingKey`` are not in the struct, so pass them."""
        raw = bytes(raw)
        if len(raw) != cls.SIZE:
            raise ValueError(f"{cls.__name__} is {cls.SIZE} bytes, got {len(raw)}")
        values = struct.unpack(cls._FORMAT, raw)
        fields = dict(zip(cls.field_names(), values, strict=True))
        return cls(**fields, blockDim=blockDim, tilingKey=tilingKey)


def _key(d: dict[str, int | float]) -> tuple[Any, ...]:
    # NaN == NaN for equality of two tiling structs (bitwise view of the float field).
    return tuple((k, struct.pack("<f", v) if isinstance(v, float) else v) for k, v in d.items())


def _convert(field_name: str, value: Any, ctype: CType) -> int | float:
    if ctype.is_float:
        if not is_real(value):
            raise TypeError(f"{field_name} is a C {ctype.c_name}; got {value!r}")
        return to_float32(value)
    if not is_int(value):
        raise TypeError(f"{field_name} is a C {ctype.c_name}; pass an int, not {value!r}")
    lo, hi = ctype.bounds()
    if not lo <= int(value) <= hi:
        raise ValueError(f"{field_name}={value} does not fit a C {ctype.c_name} [{lo}, {hi}]")
    return int(value)


def GET_TILING_DATA(cls: type[TilingData], raw_bytes: bytes | bytearray | memoryview) -> TilingData:
    """The kernel-side macro: rebuild ``cls`` from the tiling buffer.

    Like the C macro, which copies ``sizeof(struct)`` bytes from the tiling pointer, it reads the first
    ``cls.SIZE`` bytes and ignores anything after them (the framework's buffer may be larger).
    ``blockDim``/``tilingKey`` are not in the buffer; a kernel gets them from ``GetBlockNum()`` and its
    template parameters, so they come back as 1 and 0 here.
    """
    raw = bytes(raw_bytes)
    if len(raw) < cls.SIZE:
        raise ValueError(f"tiling buffer has {len(raw)} bytes, {cls.__name__} needs {cls.SIZE}")
    return cls.from_bytes(raw[: cls.SIZE])
