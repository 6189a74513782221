"""The checks a tiling front door makes on its inputs, and where it takes the core count and UB size from.

``ascend_lab.tiling.compute`` (the convenience layer) and ``live.live_tiling.compute`` (the live tiling page, run
by pyodide in the reader's browser) both take their arguments through here, so a value the one refuses the other
refuses with the same message. Imports without numpy.

When ``core_num``/``ub_size`` are not given they come from the SoC as CANN's tiling takes them
(``GetCoreNumAiv()`` and ``GetCoreMemSize(UB)``): from ``soc`` (a catalogue name, an entry, a mapping or a
callable returning one) or from the SoC in force.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any

from ..base.platform import get_soc, socs
from ..opdev.tiling_data import require_count

__all__ = ["BLOCK_BYTES", "MAX_ELEMENTS", "check_float", "check_n", "resolve_platform"]

#: One data block: the unit of every copy between GM and the UB (32 bytes on every SoC).
BLOCK_BYTES = 32

#: CANN's element counts are int64 (``GetShapeSize``): the largest count any tiling accepts.
MAX_ELEMENTS = 2**63 - 1


def _entry_numbers(entry: Any) -> tuple[int, int]:
    if isinstance(entry, Mapping):
        try:
            return entry["vector_core_num"], entry["ub_size"]
        except KeyError as exc:
            raise ValueError("soc mapping needs 'vector_core_num' and 'ub_size' keys; "
                             f"missing {exc}") from None
    try:
        return entry.vector_core_num, getattr(entry, "core_mem_size_ub", entry.ub_size)
    except AttributeError:
        raise ValueError(f"soc={entry!r} is not a SoC: pass a SoC name such as 'Ascend910B4', a catalogue entry, "
                         "a mapping with 'vector_core_num' and 'ub_size', or core_num= and ub_size=") from None


def _platform(soc: Any) -> tuple[int, int]:
    """(vector core count, UB bytes) for ``soc``; ``None`` means the SoC in force."""
    if soc is not None and not isinstance(soc, str):
        if callable(soc) and not hasattr(soc, "vector_core_num"):
            soc = soc()
        return _entry_numbers(soc)
    return _entry_numbers(get_soc(soc))


def _max_ub() -> int:
    return max(get_soc(name).ub_size for name in socs())


def resolve_platform(core_num: int | None, ub_size: int | None, soc: Any) -> tuple[int, int]:
    """(core count, UB bytes) for a tiling. A SoC name is checked even when both numbers are given (a typo
    should not pass silently); a UB larger than any catalogued SoC's is refused."""
    if isinstance(soc, str):
        get_soc(soc)                                   # ValueError naming the catalogue for an unknown SoC
    if core_num is None or ub_size is None:
        soc_cores, soc_ub = _platform(soc)
        core_num = soc_cores if core_num is None else core_num
        ub_size = soc_ub if ub_size is None else ub_size
    core_num, ub_size = require_count("core_num", core_num), require_count("ub_size", ub_size)
    if ub_size < BLOCK_BYTES:
        raise ValueError(f"ub_size {ub_size} B is smaller than one {BLOCK_BYTES}-byte block, the smallest amount "
                         f"of UB a copy moves; pass at least {BLOCK_BYTES} B")
    if ub_size > _max_ub():
        raise ValueError(f"ub_size {ub_size} B is larger than any catalogued SoC's UB ({_max_ub()} B); "
                         "pass the UB of a real SoC or less")
    return core_num, ub_size


def check_n(n_name: str, n: Any) -> int:
    """The element count as an int within CANN's int64 (``n_name`` is the op's name for it)."""
    n = require_count(n_name, n)
    if n > MAX_ELEMENTS:
        raise ValueError(f"{n_name} {n} does not fit CANN's int64 element count (max {MAX_ELEMENTS})")
    return n


def check_float(what: str, value: Any) -> float:
    """A tiling attribute (alpha, threshold...) as a float; TypeError for anything but a real number."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{what} must be a real number, got {type(value).__name__} {value!r}")
    return float(value)
