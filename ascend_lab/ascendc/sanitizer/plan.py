"""Findings of the launch and the UB plan: blockDim, TPipe::InitBuffer, a tiling field of 0, the kernel's C++ scalar
code (int-overflow, kernel-assert)."""

from __future__ import annotations

import linecache
from dataclasses import fields, is_dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import KernelError, learner_line
from .catalogue import MAX_BUFFERS
from .report import stop

if TYPE_CHECKING:        # annotations only: core imports this package
    from ..core import CoreContext


def scalar_overflow(ctx: CoreContext, message: str) -> KernelError:
    """The kernel's C++ scalar code did what C++ leaves undefined (signed overflow, a bad float -> int)."""
    return stop("int-overflow", message, instruction="scalar", core=ctx.core, tile=ctx.current_tile)


def kernel_assert(ctx: CoreContext, message: str) -> KernelError:
    """``ASSERT(cond && "message")`` in the kernel's C++ failed."""
    return stop("kernel-assert", f"ASSERT failed: {message}", instruction="ASSERT", core=ctx.core,
                tile=ctx.current_tile)


def check_launch(block_dim: int) -> None:
    if block_dim < 1:
        raise stop("bad-launch", f"blockDim must be >= 1, got {block_dim}", instruction="launch")


def zero_fields(tiling_data: Any) -> list[str]:
    """The integer fields of a TilingData that are 0 (``["ubFactor"]``), in declaration order."""
    if tiling_data is None:
        return []
    names = ([f.name for f in fields(tiling_data)] if is_dataclass(tiling_data)
             else list(getattr(tiling_data, "__annotations__", {})))
    out = []
    for name in names:
        value = getattr(tiling_data, name, None)
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value == 0:
            out.append(name)
    return out


def _kernel_frames(tb: Any) -> list[tuple[str, str, int, str]]:
    """(function, file, line, source) of each frame of a traceback below the launcher, innermost last."""
    frames = []
    while tb is not None:
        code = tb.tb_frame.f_code
        line = linecache.getline(code.co_filename, tb.tb_lineno).strip()
        frames.append((code.co_name, code.co_filename, tb.tb_lineno, line))
        tb = tb.tb_next
    return frames[1:]                   # the first frame is launch() itself


def zero_division(ctx: CoreContext, kernel: str, exc: ZeroDivisionError) -> KernelError:
    """A Python ``ZeroDivisionError`` raised by kernel code becomes a ``tiling-zero`` finding: it names the kernel,
    the core, the line that divided and the tiling field that is 0 (the first 0 field named on the innermost
    line that names one; every 0 field when no line does). The line is named as the learner's when it is theirs
    (file or cell and line), else by its function and line only: a message never shows a library path."""
    td = ctx.tiling_data
    zeros = zero_fields(td)
    frames = _kernel_frames(exc.__traceback__)
    at = frames[-1] if frames else ("kernel", "?", 0, "")
    culprit = None
    for frame in reversed(frames):
        named = [z for z in zeros if z in frame[3]]
        if named:
            at, culprit = frame, named[0]
            break
    func, filename, line, source = at
    mine = learner_line(exc)                 # the error's own "at <file or cell, line>" names a learner's file
    where = f"in {func}, line {line}: `{source}`"
    if culprit is not None:
        what = f"{kernel} divides by {culprit} = 0 from its tiling ({where})"
    elif zeros:
        what = f"{kernel} divides by zero ({where}); the tiling's 0 fields are {', '.join(zeros)}"
    else:
        what = f"{kernel} divides by zero ({where})"
    tiling = f"; the tiling is {td!r}" if td is not None else ""
    return stop("tiling-zero", f"{what}{tiling}: a tile of 0 elements, which the host tiling should have refused",
                instruction=func, core=ctx.core, tile=ctx.current_tile, line=mine)


def check_ub_plan(ctx: CoreContext, name: str, start: int, nbytes: int) -> None:
    """TPipe::InitBuffer: the block ``[start, start + nbytes)`` must end inside the UB (a plan-only launch
    records an over-capacity plan instead, for the UB layout figure). Nothing is reserved here: the Select
    scratch is checked when a Select writes it (:func:`check_select_scratch`)."""
    end = start + nbytes
    if end > ctx.ub_limit and not ctx.plan_only:
        raise stop("ub-overflow",
                   f"UB over capacity: {name} needs {nbytes} B at offset {start}, ending at {end} B, but the UB of "
                   f"{ctx.soc.name} holds {ctx.ub_limit} B; overflow {end - ctx.ub_limit} B",
                   instruction="TPipe::InitBuffer", core=ctx.core)


def check_buffer_count(ctx: CoreContext) -> None:
    if ctx.buffer_count > MAX_BUFFERS:
        raise stop("too-many-buffers", f"more than {MAX_BUFFERS} buffers in one TPipe",
                   instruction="TPipe::InitBuffer", core=ctx.core)


def check_initbuffer_num(ctx: CoreContext, name: str, num: int) -> None:
    if num < 1:
        raise stop("bad-initbuffer", f"InitBuffer({name}, {num}, ...) needs at least one block",
                   instruction="TPipe::InitBuffer", core=ctx.core)


def check_initbuffer_len(ctx: CoreContext, name: str, nbytes: int) -> None:
    """A buffer of no bytes. With a tiling that has a field of 0 it is ``tiling-zero`` (the tile size came from
    it: the message names the 0 fields and the whole tiling), else ``bad-initbuffer``."""
    if nbytes >= 1:
        return
    zeros = zero_fields(ctx.tiling_data)
    if zeros:
        raise stop("tiling-zero", f"InitBuffer({name}, ...) asks for {nbytes} B, a buffer of no bytes: the tiling's "
                   f"0 fields are {', '.join(zeros)} ({ctx.tiling_data!r}), so a tile holds 0 elements",
                   instruction="TPipe::InitBuffer", core=ctx.core)
    raise stop("bad-initbuffer", f"InitBuffer({name}, ...) asks for {nbytes} B, a buffer of no bytes",
               instruction="TPipe::InitBuffer", core=ctx.core)


