"""Numbers as a chapter prints them, and the inputs its measurements run on.

Tables in the book say ``fp16`` or ``f16``, ``43 %``, ``0.1`` (not ``0.10000000149011612``); these helpers
are the one place that decides how, so two chapters never print the same value two ways by accident.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes

_FLOAT_BITS = {"float32": "32", "float16": "16", "float64": "64"}
_UINT = {2: np.uint16, 4: np.uint32}


def dtype_abbr(dtype: Any, prefix: str = "fp") -> str:
    """A dtype's short table name: ``fp32``/``fp16``/``bf16`` (``prefix="f"``: ``f32``/``f16``/``bf16``);
    integer and other dtypes keep their name (``int8``). Accepts every spelling of :mod:`ascend_lab.dtypes`
    (``"half"``, ``np.float16``, ``aclDataType.ACL_FLOAT16`` ...)."""
    name = dtypes.name(dtype)
    if name == "bfloat16":
        return "bf16"
    bits = _FLOAT_BITS.get(name)
    return prefix + bits if bits else name


def pct(fraction: float, digits: int = 0) -> str:
    """A fraction as a percentage for a table: ``0.4321 -> "43 %"``."""
    return f"{100 * fraction:.{digits}f} %"


def format_value(v: Any) -> str:
    """One element as the reader should see it: integers exactly, ``NaN``, 16-bit floats (fp16, bf16) to
    8 significant digits (about their exact value), float32/64 by the shortest decimal that round-trips,
    positional between 1e-4 and 1e7 and scientific outside."""
    a = np.asarray(v)
    if a.dtype.kind in "iub":
        return str(int(a))
    f = (a.astype(np.float32) if a.dtype == dtypes.bfloat16 else a)[()]
    if np.isnan(f):
        return "NaN"
    if a.dtype in (np.float16, dtypes.bfloat16):
        return f"{float(f):.8g}"
    if f == 0 or 1e-4 <= abs(float(f)) < 1e7:
        return np.format_float_positional(f, unique=True, trim="-")
    return np.format_float_scientific(f, unique=True, trim="-")


def ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Element-wise distance in units in the last place between two float16, bfloat16 or float32 arrays.

    Bit patterns are mapped to a monotonic integer line (negative values mirrored), so neighbouring
    floats are 1 apart, +0 and -0 are 0 apart, and a distance across zero is counted too."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.dtype.itemsize not in _UINT or not dtypes.is_floating(a.dtype):
        raise TypeError(f"ulp_distance needs two float16, bfloat16 or float32 arrays of one dtype, "
                        f"got {a.dtype} and {b.dtype}")
    sign = 1 << (8 * a.dtype.itemsize - 1)

    def line(x: np.ndarray) -> np.ndarray:
        bits = np.ascontiguousarray(x).view(_UINT[x.dtype.itemsize]).astype(np.int64)
        magnitude = bits & (sign - 1)
        return np.where(bits & sign, -magnitude, magnitude)

    return np.abs(line(a) - line(b))


def bit_pattern(a: np.ndarray) -> np.ndarray:
    """Integers as they are, floats as their unsigned bit patterns (so NaN == NaN and -0 != +0)."""
    a = np.ascontiguousarray(a)
    if a.dtype.kind in "iub":
        return a
    if a.dtype.itemsize not in (*_UINT, 8):
        raise TypeError(f"no bit pattern view for {a.dtype}")
    return a.view({8: np.uint64, **_UINT}[a.dtype.itemsize])


def count_bit_differences(a: np.ndarray, b: np.ndarray) -> int:
    """How many elements of two same-dtype arrays differ in their bits (a NaN equals the same NaN)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        raise ValueError(f"compare arrays of one dtype and shape, got {a.dtype}{list(a.shape)} and "
                         f"{b.dtype}{list(b.shape)}")
    return int((bit_pattern(a) != bit_pattern(b)).sum())


def seeded_inputs(n: int, dtype: Any = "float32", seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A reproducible (gradient, feature) pair of ``n`` elements: uniform in [-4, 4) from ``seed``, the
    feature being the gradient reversed; integer dtypes get the values times 8, rounded and clipped."""
    npdt = dtypes.to_numpy(dtype)
    x = np.random.default_rng(seed).uniform(-4, 4, n)
    if npdt.kind in "iu":
        x = np.clip(np.round(x * 8), np.iinfo(npdt).min, np.iinfo(npdt).max)
    return x.astype(npdt), x[::-1].astype(npdt)
