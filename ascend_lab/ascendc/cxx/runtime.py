"""What translated C++ calls at run time for the scalar semantics Python does not have.

* Integers: Python ints are unbounded, C++'s are not. A conversion to an unsigned type keeps the low bits; to a
  signed type it wraps modulo 2^bits (C++20); an arithmetic result that overflows a signed type is undefined
  behaviour in C++, so the simulator stops with an ``int-overflow`` finding naming the C++ line. ``/`` truncates
  toward zero and ``%`` takes the dividend's sign (:func:`idiv`, :func:`imod`).
* Floats: ``float`` is ``np.float32``, ``half`` ``np.float16``, ``bfloat16_t`` ml_dtypes' bfloat16, ``double`` a
  Python float. numpy scalar arithmetic rounds in the operands' own type, so ``alpha_ * x`` on two floats rounds
  to float as the scalar unit does; Python doubles never leak into a float expression.
* A float converted to an integer truncates; NaN, inf or a value out of range is undefined behaviour (a finding).

Every function is small and called per scalar operation (per tile, never per element).
"""

from __future__ import annotations

import copy
import math
from typing import Any

import numpy as np

from ...dtypes import bfloat16
from .. import sanitizer
from ..core import current

__all__ = ["bool_c", "f16", "bf16", "f32", "f64", "ftoi", "idiv", "imod", "overflow", "struct_copy"]


def overflow(value: int, ctype: str) -> int:
    """A signed result out of range: undefined behaviour in C++, a finding here."""
    raise sanitizer.scalar_overflow(current(), f"{ctype} arithmetic overflowed: the exact result {value} is "
                                    "outside its range (signed overflow is undefined behaviour in C++)")


def s8(v: int) -> int:
    return v if -0x80 <= v <= 0x7F else overflow(v, "int8_t")


def s16(v: int) -> int:
    return v if -0x8000 <= v <= 0x7FFF else overflow(v, "int16_t")


def s32(v: int) -> int:
    return v if -0x80000000 <= v <= 0x7FFFFFFF else overflow(v, "int32_t")


def s64(v: int) -> int:
    return v if -0x8000000000000000 <= v <= 0x7FFFFFFFFFFFFFFF else overflow(v, "int64_t")


def wrap_s(v: int, bits: int) -> int:
    """Conversion to a signed type of ``bits``: modulo 2^bits (C++20; every compiler before)."""
    half = 1 << (bits - 1)
    return ((v + half) & ((1 << bits) - 1)) - half


def idiv(a: int, b: int) -> int:
    """C++ integer ``/``: truncates toward zero (Python's ``//`` floors). ``b == 0`` raises ZeroDivisionError,
    which the launcher reports as the sanitizer's ``tiling-zero`` finding."""
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


def imod(a: int, b: int) -> int:
    """C++ integer ``%``: the remainder takes the dividend's sign."""
    return a - b * idiv(a, b)


def f32(v: Any) -> np.float32:
    return np.float32(v)


def f16(v: Any) -> np.float16:
    return np.float16(v)


def bf16(v: Any) -> Any:
    return bfloat16.type(v)


def f64(v: Any) -> float:
    return float(v)


def bool_c(v: Any) -> bool:
    return bool(v)


def ftoi(v: Any, bits: int, signed: bool) -> int:
    """A float converted to an integer type: truncation toward zero; NaN, inf or out of range is undefined."""
    x = float(v)
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    if math.isnan(x) or math.isinf(x) or not (lo - 1 < x < hi + 1):
        raise sanitizer.scalar_overflow(current(), f"converting {x} to a {'' if signed else 'u'}int{bits}_t is "
                                        "undefined behaviour (NaN, inf, or out of the type's range)")
    return int(x)


def kernel_assert(ok: bool, message: str) -> None:
    """``ASSERT(cond && "message")`` failed: the ``kernel-assert`` finding, with the message."""
    if not ok:
        raise sanitizer.kernel_assert(current(), message)


def struct_copy(value: Any) -> Any:
    """``S b = a;`` for a struct: a copy, as C++ copies by value."""
    return copy.copy(value)
