"""Explicit pipe synchronisation: ``SetFlag`` / ``WaitFlag`` with a ``HardEvent`` and an event ID, ``FetchEventID``.

``SetFlag<HardEvent::V_MTE3>(id)`` (issued in order on the source pipe, V) raises flag ``id`` once every instruction V
was given before it has finished; ``WaitFlag<HardEvent::V_MTE3>(id)`` makes the destination pipe (MTE3) wait for that
flag before its next instruction (asc-devkit ``impl/basic_api/kernel_event.h``; ascendc_facts §1.2). A TQue's
EnQue/DeQue issue exactly these. Python spells the template argument as the first argument:
``SetFlag(HardEvent.V_MTE3, id)``.

What the simulator does with them:

* **timing**: SetFlag records when the source pipe's work issued so far ends (the scalar unit's time for ``S_*``);
  WaitFlag stalls the destination pipe (or the scalar unit) until then.
* **hazards** (:mod:`.sanitizer`): at the WaitFlag, the buffers the source pipe held at the SetFlag are granted to
  the destination pipe, whose next access takes them over (``sanitizer.flag_handover``) -- so a kernel that copies
  into a TBuf on MTE2 and reads it on V with ``SetFlag<MTE2_V>``/``WaitFlag<MTE2_V>`` between is clean, and the
  same kernel with the WaitFlag (or the pair) missing is a ``ub-race`` at V's read. A WaitFlag whose SetFlag never
  came is ``flag-unset`` (the device hangs).

Pipes modelled: MTE2, V, MTE3 and the scalar unit S; the cube side's events (MTE1, M, FIX) are refused.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from . import sanitizer
from .core import current


class HardEvent(IntEnum):
    """``AscendC::HardEvent`` (``kernel_event.h``, values in declaration order): SRC_DST pipe pairs."""
    MTE2_MTE1 = 0
    MTE1_MTE2 = 1
    MTE1_M = 2
    M_MTE1 = 3
    MTE2_V = 4
    V_MTE2 = 5
    MTE3_V = 6
    V_MTE3 = 7
    M_V = 8
    V_M = 9
    V_V = 10
    MTE3_MTE1 = 11
    MTE1_MTE3 = 12
    MTE1_V = 13
    MTE2_M = 14
    M_MTE2 = 15
    V_MTE1 = 16
    M_FIX = 17
    FIX_M = 18
    MTE3_MTE2 = 19
    MTE2_MTE3 = 20
    S_V = 21
    V_S = 22
    S_MTE2 = 23
    MTE2_S = 24
    S_MTE3 = 25
    MTE3_S = 26


_PIPES = ("MTE2", "V", "MTE3", "S")
#: Event IDs per HardEvent (8 on A2/A3/310P/950, 4 on Atlas training 910A: ascendc_facts §1.2).
EVENT_IDS = 8


def _pipes(event: Any) -> tuple[str, str, str]:
    ev = HardEvent(event) if not isinstance(event, str) else HardEvent[event]
    src, dst = ev.name.split("_")
    if src not in _PIPES or dst not in _PIPES:
        raise ValueError(f"HardEvent::{ev.name} belongs to the cube side (MTE1, M, FIX), which the simulator does "
                         "not model; the vector core's pipes are MTE2, V, MTE3 and S")
    return ev.name, src, dst


def _flags(ctx: Any) -> dict[tuple[str, int], list[tuple[float, list[Any]]]]:
    return ctx.__dict__.setdefault("flags", {})


def _time(ctx: Any, pipe: str) -> float:
    return ctx.s_time if pipe == "S" else max(ctx.pipe_free[pipe], ctx.s_time)


def SetFlag(event: Any, event_id: int = 0) -> None:
    """``SetFlag<event>(event_id)``: the flag rises when the source pipe's work issued so far is done."""
    name, src, dst = _pipes(event)
    ctx = current()
    ctx.s_time += 1.0
    at = _time(ctx, src)
    _flags(ctx).setdefault((name, int(event_id)), []).append((at, sanitizer.flag_states(ctx, src)))
    if ctx.record:
        ctx.event("S", "SetFlag", ctx.current_tile, at, at, detail=f"SetFlag<HardEvent::{name}>({int(event_id)})")


def WaitFlag(event: Any, event_id: int = 0) -> None:
    """``WaitFlag<event>(event_id)``: the destination pipe waits for the matching SetFlag (``flag-unset`` if none)."""
    name, src, dst = _pipes(event)
    ctx = current()
    ctx.s_time += 1.0
    pending = _flags(ctx).get((name, int(event_id)))
    if not pending:
        raise sanitizer.flag_unset(ctx, name, int(event_id))
    at, states = pending.pop(0)
    if dst == "S":
        ctx.s_time = max(ctx.s_time, at)
    else:
        ctx.wait(dst, at)
    sanitizer.flag_handover(ctx, states, src, dst)
    if ctx.record:
        ctx.event("S", "WaitFlag", ctx.current_tile, at, at, detail=f"WaitFlag<HardEvent::{name}>({int(event_id)})")


def FetchEventID(event: Any) -> int:
    """``GetTPipePtr()->FetchEventID(event)``: an event ID of ``event`` with no SetFlag pending (0 when all are
    free), without reserving it."""
    name, _src, _dst = _pipes(event)
    flags = _flags(current())
    for i in range(EVENT_IDS):
        if not flags.get((name, i)):
            return i
    return 0


__all__ = ["EVENT_IDS", "FetchEventID", "HardEvent", "SetFlag", "WaitFlag"]
