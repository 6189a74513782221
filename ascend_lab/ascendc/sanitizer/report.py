"""How a finding is reported: :func:`stop` builds the error that stops the kernel, :func:`warn` records a warning.

Every check of the package goes through these two, so a finding always carries its catalogue hint and the
learner's line, and a ``strict`` launch policy sees every warning.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from ..errors import FROM_STACK, KernelError, SourceLine, learner_line
from ..running import running_core
from ..trace import Warning_
from .catalogue import explain

if TYPE_CHECKING:        # annotations only: core imports this package
    from ..core import CoreContext


def stop(kind: str, message: str, *, instruction: str, core: int | None = None,
         tile: int | None = None, line: SourceLine | None = FROM_STACK) -> KernelError:
    """The error that stops a kernel on a ``kind`` finding (the caller raises it, so the traceback ends at
    the instruction). Its text is ``[kind] message (instruction ..., core ..., tile ...)`` and the learner's line
    (``line``; by default the innermost frame of the learner's kernel on the stack, looked up now -- a finding is
    rare, so the walk costs nothing per instruction); ``hint`` carries the catalogue's advice."""
    finding = explain(kind)
    if not finding.stops:
        raise ValueError(f"{kind} is a warning, not an error: report it with sanitizer.warn")
    if line is FROM_STACK:
        line = learner_line(sys._getframe(1))
    if tile is None and core is not None:       # inside the tile loop: the tile the core is working on
        ctx = running_core()
        if ctx is not None and ctx.core == core:
            tile = ctx.current_tile
    return KernelError(message, instruction=instruction, core=core, tile=tile, kind=kind, hint=finding.hint,
                       line=line)


def warn(ctx: CoreContext, instr: str, tile: int | None, kind: str, message: str) -> None:
    """Record a finding the hardware tolerates as a warning (always, trace or not), with the learner's line. Under
    a ``strict`` policy (see ``launch``) a finding the policy names stops the kernel right here."""
    finding = explain(kind)
    if not finding.warns:
        raise ValueError(f"{kind} stops the kernel: raise sanitizer.stop(...) instead of warning")
    line = learner_line(sys._getframe(1))
    w = Warning_(ctx.core, tile, instr, kind, message, line)
    ctx.trace.warnings.append(w)
    if ctx.strict is not None:
        why = ctx.strict(w)
        if why:
            raise KernelError(f"{message} -- {why}", instruction=instr, core=ctx.core, tile=tile, kind=kind,
                              hint=finding.hint, line=line)

