"""Read a kernel trace the way the chapters tabulate it: per-tile vector steps, pipe load, bytes moved.

Everything here reads only the recorded :class:`~ascend_lab.ascendc.trace.Trace` (its events and core
summaries), never the kernel, so a table built from it shows what the simulation did.
"""

from __future__ import annotations

import re
from typing import Any

from .values import dtype_abbr

_CAST = re.compile(r"(CAST_\w+)\((\S+): (\w+)->(\w+)\)")
_CMP = re.compile(r"bits = (\S+) (\w+) (\w+) ")    # "... GT half 0.10003662109375": the scalar's type
_SEL = re.compile(r"\((VSEL_\w+)\)")


def tile_vector_events(run: Any, core: int = 0, tile: int = 0) -> list[Any]:
    """The vector (PIPE_V) events of one tile of one core, in issue order (``run`` traced)."""
    if run.trace is None:
        raise ValueError("the run has no trace: call it with trace=True")
    return [e for e in run.trace.core_events(core, "V") if e.tile == tile]


def vector_step(event: Any) -> tuple[str, str, str]:
    """One vector event -> (instruction, dtypes, mode), read from the event itself: a ``Cast`` names its
    source and destination dtype and round mode, ``CompareScalar`` the scalar's dtype and the compare mode,
    ``Select`` its select mode; other instructions the dtype of the values they wrote (so those need a
    ``snapshot=True`` run)."""
    detail = event.detail or ""
    if event.instr == "Cast":
        m = _CAST.search(detail)
        if m:
            mode, _, src, dst = m.groups()
            return ("Cast", f"{dtype_abbr(src)}→{dtype_abbr(dst)}", mode)
    elif event.instr == "CompareScalar":
        m = _CMP.search(detail)
        if m:
            _, mode, dt = m.groups()
            return ("CompareScalar", dtype_abbr(dt), mode)
    elif event.values is None:
        raise ValueError(f"the {event.instr} event kept no values: run the kernel with snapshot=True")
    elif event.instr == "Select":
        m = _SEL.search(detail)
        if m:
            return ("Select", dtype_abbr(event.values.dtype), m.group(1))
    else:
        return (event.instr, dtype_abbr(event.values.dtype), "")
    raise ValueError(f"cannot read the {event.instr} event's detail {detail!r}")


def step_label(step: tuple[str, str, str]) -> str:
    """``("Cast", "fp16→fp32", "CAST_NONE") -> "Cast fp16→fp32 (CAST_NONE)"``."""
    instr, dts, mode = step
    return f"{instr} {dts}" + (f" ({mode})" if mode else "")


def pipe_load(trace: Any, core: int = 0, pipes: tuple[str, ...] = ("MTE2", "V", "MTE3")) -> dict[str, float]:
    """Fraction of core ``core``'s run time each pipe is busy (from the trace's core summary)."""
    summary = next((c for c in trace.cores if c.core == core), None)
    if summary is None:
        raise ValueError(f"core {core} did not run in this trace (cores {[c.core for c in trace.cores]})")
    return {p: summary.busy.get(p, 0.0) / summary.cycles for p in pipes}


def bytes_moved(trace: Any) -> int:
    """Bytes the DMA moved between GM and UB on all cores, both directions, padding included."""
    return sum(c.bytes_in + c.bytes_out for c in trace.cores)
