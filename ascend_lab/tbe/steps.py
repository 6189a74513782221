"""The records a TBE program is made of: its buffers (:class:`Slot`) and its instructions (:class:`Step`), whose
operands are buffers (:class:`Operand`), tile lengths (:class:`Length`) or constants. :mod:`.plan` makes them,
:mod:`.program` writes them out as the tile body."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["N", "Length", "Operand", "Slot", "Step"]


@dataclass(frozen=True)
class Slot:
    """One buffer of the plan: a per-tile queue block (``in``/``out``) or a VECCALC temporary."""
    name: str
    kind: str          # "in", "out", "tile" (VECCALC, elements of ``itemsize`` bytes) or "mask" (bits)
    itemsize: int      # bytes per element (1 for masks' bytes)
    dtype: np.dtype


@dataclass(frozen=True, slots=True)
class Operand:
    """A step's tensor operand: position ``at`` in the kernel's operand list (a slot's tensor for ``at >= 0``,
    view ``-1 - at`` of :attr:`Program.views` otherwise)."""
    at: int


@dataclass(frozen=True, slots=True)
class Length:
    """A step's count operand, from the tile's element count ``n``: ``-(-n // per) * scale`` -- ``n`` itself
    (:data:`N`), whole 256-byte repeats of ``per`` elements (``Length(per, per)``) or the uint16 words of a
    bit-mask (``Length(256, 16)``)."""
    per: int = 1
    scale: int = 1

    def of(self, n: int) -> int:
        return n if self.per == 1 and self.scale == 1 else -(-n // self.per) * self.scale


N = Length()


@dataclass(frozen=True)
class Step:
    """One instruction of the plan: ``fn(*args)`` per tile, each arg an :class:`Operand`, a :class:`Length` or a
    constant (a scalar already converted to the instruction's dtype, a mode). :meth:`Program.kernel_source` writes
    the calls out as code."""
    fn: Callable[..., None]
    args: tuple[Any, ...]
