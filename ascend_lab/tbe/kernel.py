"""The kernel TBE's elementwise schedule produces (:class:`TbeElewiseKernel`: queues, buffers, the tile loop), its
``__global__`` entry (:func:`make_entry`, one program per SoC, dtype and attribute values) and the launch from the
aclnn path (:func:`launch`, with the saturation-mode warning of 910A/310P)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from ..ascendc import (
    VECCALC,
    VECIN,
    VECOUT,
    DataCopyParams,
    GetBlockIdx,
    GlobalTensor,
    GmAddr,
    KernelRun,
    LocalTensor,
    TBuf,
    TPipe,
    TQue,
)
from ..ascendc import launch as _launch
from ..ascendc.core import current
from ..ascendc.options import current as _options
from ..base.log import OP_LOGW
from ..base.platform import get_soc
from ..dtypes import to_numpy
from ..opdev.tiling_data import GET_TILING_DATA, TilingData
from .copy_in import broadcast_strides
from .dsl import Compute, compile_for
from .plan import build
from .program import Program
from .schedule import ALIGN, EMPTY_TILING_KEY, broadcast_dims, broadcast_tiling_class, double_buffered, is_broadcast

__all__ = ["NON_IEEE_WARNING", "TbeElewiseKernel", "launch", "make_entry", "template_args", "warn_non_ieee"]


def _round_up(a: int, b: int) -> int:
    return -(-a // b) * b


def _view(t: LocalTensor, dt: np.dtype) -> LocalTensor:
    return t if t.dtype is dt or t.dtype == dt else t.ReinterpretCast(dt)


class TbeElewiseKernel:
    """The kernel TBE's elementwise schedule produces, as CopyIn/Compute/CopyOut over queues: ``Process`` runs the
    program's *tile body* (:meth:`Program.kernel_source`) per tile -- the plan's calls written out as straight-line
    Python, generated and compiled once per program, as TBE's compiler emits one binary."""

    def __init__(self, program: Program, buffer_num: int):
        self.program = program
        self.bufferNum = buffer_num
        self.pipe = TPipe()
        slots = program.slots
        self.inQueues = [TQue(VECIN, buffer_num, name=s.name) for s in slots[:program.n_inputs]]
        self.outQueue = TQue(VECOUT, buffer_num, name="outQueue")
        self.tmpBufs = [TBuf(VECCALC, name=s.name) for s in slots[program.n_inputs + 1:]]
        self.gms = [GlobalTensor(s.dtype) for s in slots[:program.n_inputs + 1]]

    def Init(self, gm_addrs: Sequence[GmAddr], td: TilingData) -> bool:
        block_idx = GetBlockIdx()
        self.ubFactor = td.ubFactor
        self.blockLength = min(td.blockFactor, td.dim0 - td.blockFactor * block_idx)
        if self.blockLength <= 0:
            return False
        slots = self.program.slots
        offset = td.blockFactor * block_idx
        self.blockOffset = offset
        # per input: None (read this core's slice as is) or (output dims, input strides) for a broadcast read
        self.brc: list[tuple[list[int], list[int]] | None] = [None] * self.program.n_inputs
        sizes: list[int] = []
        if is_broadcast(td):
            out_dims, in_dims = broadcast_dims(td)
            for k, dims in enumerate(in_dims):
                sizes.append(math.prod(dims))
                if sizes[k] != td.dim0:
                    self.brc[k] = (out_dims, broadcast_strides(dims))
        self.broadcasts = tuple(b is not None for b in self.brc)
        for k, (gm, addr, s) in enumerate(zip(self.gms, gm_addrs, slots, strict=False)):
            if k < len(self.brc) and self.brc[k] is not None:
                gm.SetGlobalBuffer(addr, sizes[k])          # the whole (smaller) input: tiles index into it
            else:
                gm.SetGlobalBuffer(addr + offset * s.itemsize, self.blockLength)
        capacity = _round_up(max(self.ubFactor, 1), ALIGN)
        for q, s in zip(self.inQueues, slots, strict=False):
            self.pipe.InitBuffer(q, self.bufferNum, capacity * s.itemsize)
        self.pipe.InitBuffer(self.outQueue, self.bufferNum, capacity * slots[self.program.n_inputs].itemsize)
        self.temps: list[LocalTensor] = []
        for buf, s in zip(self.tmpBufs, slots[self.program.n_inputs + 1:], strict=True):
            self.pipe.InitBuffer(buf, _round_up(capacity // 8, 32) if s.kind == "mask" else capacity * s.itemsize)
            self.temps.append(buf.Get(s.dtype))
        # the temporaries' views (Program.views, last first: view k is at -1 - k), made here once; the tile body
        # makes a queue block's views every tile (its tensor is new every tile)
        n_fixed = self.program.n_inputs + 1
        self.bufs: list[Any] = [None] * n_fixed + self.temps + [None] * len(self.program.views)
        for k, (loc, dt) in enumerate(self.program.views):
            if loc >= n_fixed:
                self.bufs[-1 - k] = _view(self.bufs[loc], dt)
        self.params: dict[int, list[DataCopyParams]] = {}     # by tile length: one per input, then the output's
        return True

    def Process(self) -> None:
        ub = self.ubFactor
        loops = -(-self.blockLength // ub)
        copy_in, compute, copy_out = self.program.body(self.broadcasts)[1](self)
        tail = self.blockLength - ub * (loops - 1)
        p, p_tail = self._params(ub), self._params(tail)
        for i in range(loops - 1):
            copy_in(self, i, ub, p)
            compute(self, ub)
            copy_out(self, i, ub, p)
        copy_in(self, loops - 1, tail, p_tail)
        compute(self, tail)
        copy_out(self, loops - 1, tail, p_tail)

    def _params(self, n: int) -> list[DataCopyParams]:
        """DataCopyParams of a tile of ``n`` elements (a core has two lengths at most; DataCopyPad only reads them)."""
        p = self.params.get(n)
        if p is None:
            p = self.params[n] = [DataCopyParams(1, n * gm.dtype.itemsize, 0, 0) for gm in self.gms]
        return p


def template_args(td: TilingData, dtype: Any, buffer_num: int | None = None) -> dict[str, Any]:
    """The entry's template arguments: the input dtype, the queue depth the *schedule* chose (2 when the
    tiling key carries +10000, else 1) and whether the tiling is a broadcast one (its struct carries the
    inputs' dims; the key selects that kernel). A requested ``buffer_num`` is ignored: a TBE binary's double
    buffering is decided by its schedule, not by its caller."""
    return {"dtype": to_numpy(dtype), "bufferNum": 2 if double_buffered(td) else 1, "broadcast": is_broadcast(td)}


def make_entry(name: str, describe: Callable[..., Compute], tiling_cls: type[TilingData],
               attrs: Sequence[str] = ()) -> Callable[..., None]:
    """The ``__global__`` entry of a TBE kernel: ``entry(*gm_args, workspace, tiling, dtype=, bufferNum=,
    broadcast=)`` (``broadcast``: the struct is ``tiling_cls`` with the broadcast variables).

    ``describe(dtype_name, **attrs)`` builds the compute description; it runs (once per SoC family, dtype and
    attribute values, then cached) inside :func:`~.dsl.compile_for` for the SoC of the core running the
    kernel, as a TBE binary is compiled for one SoC. Attribute values come from the tiling struct."""

    @lru_cache(maxsize=64)
    def program(dtype_name: str, soc_name: str, values: tuple[Any, ...]) -> Program:
        with compile_for(soc_name) as soc:
            return build(describe(dtype_name, **dict(zip(attrs, values, strict=True))), soc)

    def program_for(td: Any, dtype: Any, soc: Any) -> Program:
        """The program a launch of this entry with tiling ``td`` runs for ``dtype`` on ``soc`` (a name or a SocInfo):
        the attribute values are read from ``td`` -- what the entry itself runs, so ``run.tiling`` of an aclnn call
        gives that run's program (the cached object itself)."""
        soc_name = soc if isinstance(soc, str) else soc.name
        return program(np.dtype(dtype).name, soc_name, tuple(getattr(td, a) for a in attrs))

    def entry(*args: Any, dtype: Any, bufferNum: int, broadcast: bool = False) -> None:
        *gm, _workspace, tiling = args
        cls = broadcast_tiling_class(tiling_cls, len(gm) - 1) if broadcast else tiling_cls
        td = GET_TILING_DATA(cls, tiling)
        prog = program_for(td, dtype, current().soc)
        if len(gm) != prog.n_inputs + 1:
            raise TypeError(f"{name}: expected {prog.n_inputs} inputs and one output, got {len(gm)} GM arguments")
        kernel = TbeElewiseKernel(prog, bufferNum)
        if kernel.Init(gm, td):
            kernel.Process()

    entry.__name__ = name
    entry.__qualname__ = name
    entry.program = program          # type: ignore[attr-defined]
    entry.program_for = program_for  # type: ignore[attr-defined]
    entry.kernel_api = "cce"         # type: ignore[attr-defined]  # TBE emits CCE: no AscendC API limits or scratch
    return entry


def launch(entry: Callable[..., None], td: TilingData, tensors: Sequence[Any], names: Sequence[str], soc: Any,
           kernel_name: str, record: bool | None = None, cores: Any = None) -> KernelRun:
    """Launch a TBE kernel with aclTensors from the L0 graph (inputs, then the output). ``td`` must describe
    these tensors: a tiling of the output's element count, a broadcast one when the inputs' sizes differ
    (ValueError otherwise, naming the tiling to use)."""
    sizes = [t.Size() for t in tensors]
    if td.tilingKey != EMPTY_TILING_KEY and not is_broadcast(td) and any(n != td.dim0 for n in sizes):
        raise ValueError(f"{kernel_name}: the tiling covers {td.dim0} elements but the tensors hold {sizes}; "
                         "tile broadcasting inputs with the kernel's tiling_shapes (tiling_for_shapes)")
    rec = _options().trace if record is None else record
    args = [_gm(t, name) for t, name in zip(tensors, names, strict=True)]
    warn_non_ieee(tensors[:-1], names[:-1], soc, kernel_name)
    return _launch(entry, td.blockDim, args, td.to_bytes(), soc, outputs=(len(args) - 1,), record=rec,
                   kernel_name=kernel_name, tiling_data=td, cores=cores, **template_args(td, tensors[0].dtype))


#: What the docs say about a vector unit without the INF/NaN mode: the saturation mode "converts the calculation
#: result of Inf to a maximum value and the calculation result of NaN to 0" (CANN ``aclrtFloatOverflowMode``;
#: Atlas training and Atlas inference products support only that mode; ``util_soc_common.support_inf_nan()`` is
#: False for Ascend910 and Ascend310P). That is about results that overflow; what vcmp/vsel/vcmpsel/vmin/vmax and the
#: multiplies produce for inf or NaN *operands* is not documented, so the simulator computes them as IEEE 754 does
#: and says so on every such run.
NON_IEEE_WARNING = ("{soc} computes in saturation mode (no INF/NaN mode: util_soc_common.support_inf_nan() is False "
                    "for {short}), and {what} hold{s} inf or NaN: the simulated result follows IEEE 754; what the "
                    "device's vector unit produces for inf/NaN operands in saturation mode is not documented")


def warn_non_ieee(tensors: Sequence[Any], names: Sequence[str], soc: Any, kernel_name: str) -> bool:
    """On a SoC without the INF/NaN mode (``SocInfo.inf_nan_mode``), log a warning (``OP_LOGW``, so it reaches
    ``run.messages``) when a floating-point input of the kernel holds inf or NaN (:data:`NON_IEEE_WARNING`).
    Returns whether it warned."""
    info = get_soc(soc)
    if info.inf_nan_mode:
        return False
    found = []
    for t, name in zip(tensors, names, strict=True):
        if t is None or t.IsEmpty():
            continue
        a = t.numpy()
        if a.dtype.kind not in "fV" and a.dtype != to_numpy("bfloat16"):
            continue
        with np.errstate(invalid="ignore", over="ignore"):
            if not np.isfinite(a.astype(np.float32)).all():
                found.append(name)
    if not found:
        return False
    what = " and ".join(found)
    OP_LOGW(kernel_name, NON_IEEE_WARNING.format(soc=info.name, short=info.short_soc_version, what=what,
                                                 s="" if len(found) > 1 else "s"))
    return True


def _gm(t: Any, name: str) -> GmAddr:
    if t.data is None:
        raise ValueError(f"{name} has no device memory bound")
    return GmAddr(t.data + t.offset * t.itemsize, name, arg_nbytes=t.Size() * t.itemsize)
