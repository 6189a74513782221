"""The core launcher: ``<<<blockDim, ...>>>`` for the simulator.

``launch`` runs the kernel body once per core (cores are simulated one after another; they share
nothing but global memory, so the order does not matter), each with its own Unified Buffer of the SoC's
size and its own pipe clocks, and returns a :class:`KernelRun` with the trace and per-core summaries.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..base.platform import SocInfo
from . import sanitizer
from .core import KERNEL_APIS, CoreContext, PlanComplete, reserved_ub_bytes
from .cost_model import CostModel
from .options import current as _options
from .running import set_current
from .tensor import GmAddr
from .trace import Trace


@dataclass
class KernelRun:
    """One launch: its kernel name, blockDim, tiling and trace (cycles, warnings, UB layouts, events)."""
    kernel: str
    block_dim: int
    tiling: Any
    trace: Trace

    @property
    def cycles(self) -> float:
        return self.trace.cycles

    @property
    def microseconds(self) -> float:
        return self.trace.microseconds

    @property
    def warnings(self) -> list:
        return self.trace.warnings

    def __repr__(self) -> str:
        return (f"KernelRun({self.kernel}, blockDim={self.block_dim}, cycles={self.cycles:.0f}, "
                f"events={len(self.trace.events)}, warnings={len(self.trace.warnings)})")


def launch(entry: Callable[..., None], block_dim: int, gm_args: Sequence[GmAddr], tiling: bytes, soc: SocInfo,
           *, outputs: Sequence[int] = (-1,), record: bool = False, kernel_name: str | None = None,
           tiling_data: Any = None, cores: Sequence[int] | None = None, snapshot: bool | None = None,
           plan_only: bool = False, strict: Callable[[Any], str | None] | None = None, api: str | None = None,
           **template: Any) -> KernelRun:
    """Run ``entry(*gm_args, workspace, tiling, **template)`` on ``block_dim`` simulated cores.

    ``outputs`` are the indexes of the GM arguments the kernel writes (for the read/write bandwidth
    split of the cost model); ``record`` keeps every instruction as a trace event (``snapshot`` also keeps
    each result's values); ``cores`` limits the run to some cores (the figures use it to step through one
    core cheaply); ``plan_only`` stops each core at its first AllocTensor, after Init has laid out the UB,
    and records an over-capacity plan instead of refusing it (for the UB layout figure); ``strict`` is a
    policy that turns chosen warnings into errors: called with each :class:`~.trace.Warning_`, it returns
    an explanation (raise a KernelError at that instruction) or None (keep it a warning); ``api`` says what the
    kernel is written against, ``"ascendc"`` (the default, or the entry's ``kernel_api`` attribute) or ``"cce"``
    (compiler output such as TBE's: the AscendC API limits and the library's Select scratch do not apply).

    Kernel code that divides by zero (a tiling whose ``ubFactor`` or tile size is 0) stops with the sanitizer's
    ``tiling-zero`` finding, which names the line and the 0 field of ``tiling_data``, not a ZeroDivisionError.
    """
    api = getattr(entry, "kernel_api", "ascendc") if api is None else api
    if api not in KERNEL_APIS:
        raise ValueError(f"api must be one of {', '.join(KERNEL_APIS)}, got {api!r}")
    if snapshot is None:
        snapshot = _options().snapshot
    name = kernel_name or getattr(entry, "__name__", "kernel")
    sanitizer.check_launch(block_dim)
    out_idx = {i % len(gm_args) for i in outputs}
    bytes_out = sum(a.arg_nbytes for i, a in enumerate(gm_args) if i in out_idx)
    bytes_in = sum(a.arg_nbytes for i, a in enumerate(gm_args) if i not in out_idx)
    in_fraction = bytes_in / (bytes_in + bytes_out) if bytes_in + bytes_out else 0.5
    cost = CostModel(soc, block_dim, in_fraction)
    trace = Trace(name, soc.name, block_dim, soc.ub_size, soc.clock_mhz, head_cycles=cost.head_cycles())
    trace.meta.update(template)
    trace.kernel_api = api
    if plan_only and api == "ascendc":      # no instruction will run: keep what a Select kernel must leave free
        trace.ub_reserved = reserved_ub_bytes(soc)
    source_files = getattr(entry, "source_files", None)         # a C++ kernel: events name its lines
    with np.errstate(all="ignore"):
        for core in (range(block_dim) if cores is None else cores):
            ctx = CoreContext(core, block_dim, soc, cost, trace, record, snapshot, plan_only, strict, api,
                              tiling_data, gm_args)
            if record:
                ctx.source_files = source_files
            set_current(ctx)
            try:
                entry(*gm_args, None, tiling, **template)
            except PlanComplete:
                pass
            except ZeroDivisionError as exc:     # kernel code divided by a tiling field of 0: say which
                raise sanitizer.zero_division(ctx, name, exc) from None
            finally:
                set_current(None)
            trace.cores.append(ctx.finish())
    trace.head_cycles = cost.head_cycles()         # GE-ATT V2's MTE2 head depends on the largest copy-in block
    return KernelRun(name, block_dim, tiling_data, trace)
