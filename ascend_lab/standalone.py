"""Run one kernel directly on numpy data, outside the aclnn graph -- for figures, explorers and labs.

The aclnn API is how an application reaches a kernel; a learner exploring tiling wants the kernel alone,
on a SoC whose core count or UB size they may override, with double buffering on or off. These helpers
do the host's part (tiling, device memory, launch) and hand back the :class:`KernelRun` (trace included)
and the output. ``ub_plan`` lays out the UB without running anything, and reports an over-capacity plan
instead of refusing it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from .ascendc import KernelError, KernelRun
from .ascendc.launcher import launch as _launch
from .base import platform
from .base.platform import SocInfo, get_soc
from .dtypes import as_acl_dtype, to_numpy
from .ops import registry
from .ops.common.kernel_args import gm_from_array
from .ops.spec import KernelSpec, OpSpec

BUFFER_NUMS = (1, 2, 3, 4)


def op_key(op: str) -> str:
    """``"HardSigmoidGrad"`` / ``"hard_sigmoid_grad"`` -> ``"hard_sigmoid_grad"``; unknown -> ValueError."""
    return registry.get(op).key


def _kernel(op: str | OpSpec, kernel: str | None) -> tuple[OpSpec, KernelSpec]:
    spec = registry.get(op)
    return spec, spec.kernel(kernel)


#: The largest UB a what-if may give a simulated core (each core allocates its UB): 64 times the largest catalogued UB.
MAX_WHATIF_UB = 16 * 2**20


def make_soc(soc: str | SocInfo | None = None, core_num: int | None = None, ub_size: int | None = None, *,
             believed: bool = False) -> SocInfo:
    """A SoC entry with the core count and/or UB size overridden (for "what if" exploration). A UB larger than
    :data:`MAX_WHATIF_UB` is refused (a simulated core allocates it), unless the entry is only what a tiling
    ``believed`` (``ub_plan``'s ``tiling_ub_size``)."""
    info = get_soc(soc)
    changes: dict[str, Any] = {}
    if core_num is not None:
        if isinstance(core_num, bool) or not isinstance(core_num, (int, np.integer)) or core_num < 1:
            raise ValueError(f"core_num must be a positive int, got {core_num!r}")
        changes["vector_core_num"] = int(core_num)
    if ub_size is not None:
        largest = 2**62 if believed else MAX_WHATIF_UB
        if isinstance(ub_size, bool) or not isinstance(ub_size, (int, np.integer)) or not 1024 <= ub_size <= largest:
            raise ValueError(f"ub_size must be an int number of bytes in [1024, {largest}] (a what-if UB up to 64 "
                             f"times the largest SoC's: each simulated core allocates it), got {ub_size!r}")
        changes["ub_size"] = int(ub_size)
    return dataclasses.replace(info, **changes) if changes else info


def op_attrs(op: str | OpSpec, attrs: Mapping[str, float] | None = None, **named: float) -> dict[str, float]:
    """The tiling attributes of ``op`` out of ``attrs`` and keyword spellings (``threshold=1.0``): the names the op
    declares (``OpSpec.attrs``) are kept, names only other registered ops have are dropped -- so one explorer's
    controls serve every op --, and a name no registered op has raises TypeError (a typo). Defaults are not filled
    in here: the kernel's tiling has them."""
    spec = registry.get(op)
    given = {**(attrs or {}), **named}
    known = {name for s in registry.ops() for name in s.attrs}
    unknown = sorted(set(given) - known)
    if unknown:
        raise TypeError(f"unknown tiling attributes {unknown}: {spec.op_type} takes "
                        f"{', '.join(spec.attrs) or 'none'} (other operators: {', '.join(sorted(known)) or 'none'})")
    return {name: value for name, value in given.items() if name in spec.attrs}


def tiling_for(op: str, n: int, dtype: Any, soc: SocInfo, kernel: str | None = None,
               attrs: Mapping[str, float] | None = None, **named: float) -> Any:
    """The TilingData the op's host tiling computes for ``n`` elements on ``soc`` (any SoC: a what-if study),
    with the UB as the tiling sees it (``GetCoreMemSize(UB)``: 256 B less than the UB on A2/A3).

    ``attrs`` (or keywords such as ``threshold=``) are tiling attributes, filtered by :func:`op_attrs`; the ones
    not given take the defaults the spec declares for this kernel (``OpSpec.check_attrs``), as the aclnn path and
    ``ascend_lab.tiling`` do."""
    spec, k = _kernel(op, kernel)
    values = spec.check_attrs(op_attrs(spec, attrs, **named), k.flavour)
    with platform.soc(soc.name):          # a TBE tiling reads the compile info of the binary built for ``soc``
        return k.tiling(n, dtype, soc.vector_core_num, soc.core_mem_size_ub, **values)


def kernel_entry(op: str, td: Any, dtype: Any, buffer_num: int = 2,
                 kernel: str | None = None) -> tuple[Any, dict[str, Any]]:
    """The op's ``__global__`` entry and its template arguments (``schMode`` from the tiling key for
    HardSigmoidGrad; ``DTYPE_INPUT_GRADIENT`` for ThresholdGradV2D / ReluGrad), ready for ``launch``."""
    _, k = _kernel(op, kernel)
    return k.entry, k.template(td, as_acl_dtype(dtype), buffer_num)


def _named(run: KernelRun, kernel: KernelSpec) -> KernelRun:
    """Record the flavour in the trace, as the aclnn path's kernel node does."""
    run.trace.meta["kernel_flavour"] = kernel.flavour
    return run


def _check_buffer_num(buffer_num: Any) -> int:
    if buffer_num not in BUFFER_NUMS:
        raise ValueError(f"buffer_num must be 1, 2, 3 or 4 (BUFFER_NUM blocks per queue), got {buffer_num!r}")
    return int(buffer_num)


def _check_inputs(spec: OpSpec, inputs: tuple[Any, ...]) -> list[np.ndarray]:
    arrays = [np.asarray(a) for a in inputs]
    if len(arrays) != len(spec.inputs):
        raise TypeError(f"{spec.op_type} takes {len(spec.inputs)} input arrays ({', '.join(spec.inputs)}), "
                        f"got {len(arrays)}")
    if any(a.shape != arrays[0].shape or a.dtype != arrays[0].dtype for a in arrays):
        raise ValueError(f"the inputs must have one shape and dtype, got "
                         f"{', '.join(f'{a.shape} {a.dtype}' for a in arrays)}")
    return arrays


def run_kernel(op: str, *inputs: np.ndarray, attrs: Mapping[str, float] | None = None,
               soc: str | SocInfo | None = "Ascend910B4", core_num: int | None = None, ub_size: int | None = None,
               buffer_num: int = 2, record: bool = True, snapshot: bool = False,
               cores: list[int] | None = None, kernel: str | None = None,
               **named: float) -> tuple[KernelRun, np.ndarray]:
    """Tile and launch ``op`` on its input arrays (as many as its op definition has: ``grad, feat`` for the
    backward ops), flattened; returns (run, output). ``attrs`` (or keywords such as ``threshold=``) are the tiling
    attributes (:func:`op_attrs`).

    The inputs' device memory is lent their bytes (copy on write, ``DeviceAllocation.lend``): the kernel reads
    them where they are, and the arrays stay untouched even by a kernel that writes its inputs.

    The output is a view of the output's device memory, not a copy (a copy of a 2**24-element result costs about
    as much as the simulated kernel's own copies): it keeps those bytes alive for as long as it lives -- the
    runtime's pool never hands out a buffer a view still reaches -- and nothing else writes them after the call."""
    spec, k = _kernel(op, kernel)
    arrays = _check_inputs(spec, inputs)
    first = arrays[0]
    buffer_num = _check_buffer_num(buffer_num)
    info = make_soc(soc, core_num, ub_size)
    dtype = as_acl_dtype(first.dtype)
    td = tiling_for(spec, first.size, dtype, info, k.flavour, attrs, **named)
    # the inputs are lent, not copied (copied in only if the kernel writes them: the caller's arrays are not
    # touched); the output is allocated, not uploaded: its device bytes start zeroed, as an upload of zeros would
    args = [gm_from_array(a, name, lend=True) for a, name in zip(arrays, k.args, strict=False)]
    args.append(gm_from_array(None, k.args[len(arrays)], nbytes=first.nbytes))
    entry, template = kernel_entry(spec, td, dtype, buffer_num, k.flavour)
    run = _named(_launch(entry, td.blockDim, args, td.to_bytes(), info, outputs=(len(arrays),), record=record,
                         kernel_name=spec.op_type, tiling_data=td, cores=cores, snapshot=snapshot, **template), k)
    result = args[-1].ptr.allocation.buffer[:first.nbytes].view(first.dtype).reshape(first.shape)
    return run, result


def _plan_reserve(spec: OpSpec, k: KernelSpec, conservative: int, dt: Any, info: SocInfo, buffer_num: int,
                  attrs: Mapping[str, float]) -> int:
    """The bytes a plan must leave free at the top of UB (kernel_flavours §4): only a kernel that issues Select
    modes 1/2 needs any (``conservative``, what a plan-only launch records), so a one-core run on a few elements
    of the same dtype tells whether this kernel does -- the instruction sequence depends on the dtype and the
    SoC, not on N. If even that run fails, the conservative answer stands."""
    if not conservative:
        return 0
    probe = np.zeros(1024, dtype=to_numpy(dt))
    try:
        run, _ = run_kernel(spec.key, *[probe] * len(spec.inputs), attrs=attrs, soc=info, core_num=1,
                            buffer_num=buffer_num, record=False, kernel=k.flavour)
    except (KernelError, ValueError, TypeError):
        return min(conservative, info.ub_size)
    return min(run.trace.ub_reserved, info.ub_size)


def ub_plan(op: str, n: int, dtype: Any, soc: str | SocInfo | None = "Ascend910B4", *, core_num: int | None = None,
            ub_size: int | None = None, buffer_num: int = 2, core: int = 0, attrs: Mapping[str, float] | None = None,
            tiling_ub_size: int | None = None, kernel: str | None = None, **named: float) -> dict[str, Any]:
    """The UB layout core ``core`` would build for ``n`` elements (its Init only), with the capacity,
    the bytes the plan must leave free for the library (the Select scratch, only if the kernel issues Select
    modes 1/2 on this SoC: ``ascendc.reserved_ub_bytes``) and, when the plan does not fit, the overflow in bytes.

    ``tiling_ub_size`` lets the tiling believe in another UB size than the core has (a classic bug:
    the plan then overflows); ``buffer_num`` 3 or 4 shows why the kernels stop at double buffering. ``attrs`` (or
    keywords such as ``threshold=``): the tiling attributes (:func:`op_attrs`)."""
    spec, k = _kernel(op, kernel)
    attrs = op_attrs(spec, attrs, **named)
    info = make_soc(soc, core_num, ub_size)
    dt = as_acl_dtype(dtype)
    believed = make_soc(info, None, tiling_ub_size, believed=True) if tiling_ub_size else info
    td = tiling_for(spec, n, dt, believed, k.flavour, attrs)
    item = to_numpy(dt).itemsize
    args = [gm_from_array(None, name, n * item) for name in k.args]   # Init reads no data
    entry, template = kernel_entry(spec, td, dt, buffer_num, k.flavour)
    run = _launch(entry, td.blockDim, args, td.to_bytes(), info, outputs=(len(spec.inputs),), record=False,
                  kernel_name=spec.op_type, tiling_data=td, cores=[min(core, td.blockDim - 1)], plan_only=True,
                  **template)
    buffers = next(iter(run.trace.ub_layout.values()), [])
    used = max((b.offset + b.size for b in buffers), default=0)
    reserved = _plan_reserve(spec, k, run.trace.ub_reserved, dt, info, buffer_num, attrs)
    usable = info.ub_size - reserved
    return {"op": spec.op_type, "dtype": dt.short, "soc": info.name, "tiling": td, "buffers": buffers,
            "capacity": info.ub_size, "reserved": reserved, "usable": usable, "used": used,
            "free": max(usable - used, 0), "overflow": max(used - usable, 0), "buffer_num": buffer_num,
            "elements_per_tile": getattr(td, "ubFactor", None) or getattr(td, "tileDataNum", None)}



# --- simulation drivers for figures and explorers (viz draws their results; it never launches) -------------
def core_cycles(trace: Any, core: int) -> float:
    """Estimated cycles of one core in a trace (its own end, not the launch's)."""
    for c in trace.cores:
        if c.core == core:
            return float(c.cycles)
    return max((e.end for e in trace.events if e.core == core), default=0.0)


def _sample(rng: np.random.Generator, n: int, npdt: np.dtype, lo: float, hi: float) -> np.ndarray:
    values = rng.uniform(lo, hi, n)
    if npdt.kind in "iu":
        info = np.iinfo(npdt)
        return np.clip(np.round(values * 8), info.min, info.max).astype(npdt)
    return values.astype(npdt)


def _sample_inputs(count: int, extent: int, npdt: np.dtype, seed: int) -> list[np.ndarray]:
    """``count`` inputs of ``extent`` elements, a 4096-element random pattern repeated: the first (a gradient)
    uniform in [-2, 2], the others (features) in [-4, 4] -- drawn features first, so the two-input ops see the
    data they always saw."""
    rng = np.random.default_rng(seed)
    pattern = min(extent, 4096)
    rest = [np.resize(_sample(rng, pattern, npdt, lo=-4.0, hi=4.0), extent) for _ in range(count - 1)]
    return [np.resize(_sample(rng, pattern, npdt, lo=-2.0, hi=2.0), extent), *rest]


def pipeline_run(op: str, n: int, dtype: Any, soc: Any = "Ascend910B4", *, core_num: int | None = None,
                 ub_size: int | None = None, buffer_num: int = 2, max_tiles: int | None = 6,
                 attrs: Mapping[str, float] | None = None, snapshot: bool = False, seed: int = 0,
                 kernel: str | None = None, **named: float) -> tuple[KernelRun, dict[str, Any]]:
    """Simulate core 0 of ``op`` on ``n`` elements, cheaply enough for a live figure.

    When core 0 would run more than ``max_tiles`` tiles, the run uses a smaller tensor that gives every core
    exactly ``max_tiles`` full tiles with the same tile size and the same number of active cores (so the
    cost model's share of GM bandwidth is unchanged): the lanes are then core 0's first ``max_tiles`` tiles.
    Only core 0's slice of global memory is allocated (``run_kernel`` would copy the whole tensors), but the
    kernel arguments keep the full tensor sizes, so the launch and its cost model see the real problem.
    Returns the run and a note saying which N was simulated. ``attrs`` (or keywords such as ``threshold=``): the
    tiling attributes (:func:`op_attrs`).
    """
    spec, k = _kernel(op, kernel)
    attrs = op_attrs(spec, attrs, **named)
    info = make_soc(soc, core_num, ub_size)
    dt = as_acl_dtype(dtype)
    buffer_num = _check_buffer_num(buffer_num)
    td = tiling_for(spec, n, dt, info, k.flavour, attrs)
    first = k.core_ranges(td, dt, n, tiles=False)[0]
    n_sim, sim_info, td_sim = int(n), info, td
    if max_tiles is not None and first["tile_num"] > max_tiles:
        n_sim = td.blockDim * max_tiles * k.tile_elements(td, dt, n)
        sim_info = make_soc(info, td.blockDim, None)
        td_sim = tiling_for(spec, n_sim, dt, sim_info, k.flavour, attrs)
        first = k.core_ranges(td_sim, dt, n_sim, tiles=False)[0]
    npdt = to_numpy(dt)
    extent = int(first["padded_end"])                       # elements core 0 reads and writes
    arrays = _sample_inputs(len(spec.inputs), extent, npdt, seed)
    args = [gm_from_array(a, name, n_sim * npdt.itemsize) for a, name in
            zip((*arrays, np.zeros(extent, npdt)), k.args, strict=True)]
    entry, template = kernel_entry(spec, td_sim, dt, buffer_num, k.flavour)
    run = _named(_launch(entry, td_sim.blockDim, args, td_sim.to_bytes(), sim_info, outputs=(len(arrays),),
                         record=True,
                         kernel_name=spec.op_type, tiling_data=td_sim, cores=[0], snapshot=snapshot, **template), k)
    note = (f"core 0 of N = {n:,}" if n_sim == n else
            f"core 0's first {max_tiles} tiles (simulated on N = {n_sim:,}: same tile size and blockDim)")
    return run, {"n": int(n), "n_sim": n_sim, "tiling": td, "tiling_sim": td_sim, "note": note, "soc": info}


def buffer_num_study(op: str, n: int, dtype: Any, soc: Any = "Ascend910B4", **kw: Any) -> dict[str, Any]:
    """Core 0 with BUFFER_NUM = 1 and 2 on the same data; ``speedup`` = cycles(1) / cycles(2) of core 0.
    ``kw`` goes to :func:`pipeline_run`. ``viz.plot_buffer_num`` draws the result."""
    runs = {bn: pipeline_run(op, n, dtype, soc, buffer_num=bn, **kw)[0] for bn in (1, 2)}
    cycles = {bn: core_cycles(r.trace, 0) for bn, r in runs.items()}
    return {"op": registry.get(op).op_type, "n": int(n), "dtype": as_acl_dtype(dtype).short, "runs": runs,
            "cycles": cycles, "speedup": cycles[1] / cycles[2] if cycles[2] else float("nan")}


def stepper_run(op: str = "hard_sigmoid_grad", dtype: Any = "float32", n: int = 224, soc: str = "Ascend950PR",
                ub_size: int | None = 4096, core_num: int | None = 1, attrs: Mapping[str, float] | None = None,
                kernel: str | None = None, **named: float) -> KernelRun:
    """A small snapshot run for the kernel stepper: by default HardSigmoidGrad float32 on one core with a 4 KB
    UB, so N = 224 becomes a 128-element tile (two 256-byte repeats) and a 96-element tail tile."""
    run, _ = pipeline_run(op, n, dtype, soc, ub_size=ub_size, core_num=core_num, attrs=attrs, snapshot=True,
                          max_tiles=None, kernel=kernel, **named)
    return run


# --- any kernel: the learner's entry or kernel class (for viz.step_kernel) -----------------------------------
SENTINEL = 0xFF      # an output's bytes before the launch: a byte still 0xFF after it was (probably) never written


def class_entry(kernel_class: type, tiling_data: Any, *init_args: Any) -> Any:
    """A ``__global__`` entry for a kernel class: ``op = kernel_class(*init_args)``, then
    ``op.Init(*gm_args, tiling_data)`` and, unless Init returned False, ``op.Process()`` -- the body every
    AscendC entry function has (``GET_TILING_DATA``; ``KernelX op; op.Init(...); op.Process();``)."""
    if not (hasattr(kernel_class, "Init") and hasattr(kernel_class, "Process")):
        missing = " and ".join(n for n in ("Init", "Process") if not hasattr(kernel_class, n))
        raise TypeError(f"a kernel class needs Init and Process methods; {kernel_class!r} has no {missing}")

    def entry(*args: Any, **_template: Any) -> None:
        gm = args[:-2]                           # the last two are workspace and the tiling bytes
        op = kernel_class(*init_args)
        if op.Init(*gm, tiling_data) is not False:
            op.Process()

    entry.__name__ = getattr(kernel_class, "__name__", "kernel")
    entry.__qualname__ = entry.__name__
    return entry


def _named_inputs(inputs: Any, names: Any) -> tuple[list[np.ndarray], list[str]]:
    if isinstance(inputs, dict):
        arrays = [np.asarray(v) for v in inputs.values()]
        keys = [str(k) for k in inputs]
    elif isinstance(inputs, np.ndarray):
        arrays, keys = [inputs], ["x0"]
    else:
        arrays = [np.asarray(v) for v in inputs]
        keys = [f"x{i}" for i in range(len(arrays))]
    if not arrays:
        raise ValueError("inputs must hold at least one numpy array (the kernel's input tensors)")
    if names is not None:
        names = [str(n) for n in names]
        if len(names) not in (len(arrays), len(arrays) + 1):
            raise ValueError(f"names must name the {len(arrays)} inputs (and optionally the output), got {names}")
        keys = names[:len(arrays)] + keys[len(names):]
    return arrays, keys


def entry_run(entry: Any, tiling_data: Any, inputs: Any, *, soc: str | SocInfo | None = "Ascend910B4",
              out_dtype: Any = None, out_size: int | None = None, names: Any = None, core: int | None = 0,
              core_num: int | None = None, ub_size: int | None = None, snapshot: bool = True, record: bool = True,
              init_args: tuple[Any, ...] = (), kernel_name: str | None = None,
              strict: Any = None, **template: Any) -> tuple[KernelRun, np.ndarray]:
    """Launch ANY kernel -- a registered op's or one you wrote -- on numpy inputs, keeping every instruction
    (and, with ``snapshot``, the values each one produced): what :func:`ascend_lab.viz.step_kernel` steps through.

    ``entry`` is a ``__global__`` entry function called as ``entry(*gm_args, workspace, tiling_bytes,
    **template)`` (the calling convention of :func:`ascend_lab.ascendc.launch`), or a kernel class with
    ``Init(*gm_args, tiling_data)`` and ``Process()`` (see :func:`class_entry`; ``init_args`` go to its
    constructor). ``tiling_data`` is the TilingData your host tiling returned (its ``blockDim`` is the launch's
    core count, its ``to_bytes()`` what the entry receives). ``inputs``: flat numpy arrays in the entry's argument
    order (a list, or a dict whose keys name the GM arguments); the output, the last GM argument, holds
    ``out_size`` elements of ``out_dtype`` (default: the first input's size and dtype) filled with 0xFF bytes.
    ``core`` runs only that core (None: every core; a stepper wants one); ``core_num`` / ``ub_size`` override the
    SoC as :func:`make_soc` does. Returns ``(run, output)``; a sanitizer finding raises
    :class:`~ascend_lab.ascendc.KernelError` naming your line.

    >>> run, out = entry_run(MyKernel, td, [x], soc="Ascend910B4", init_args=(np.float32,))  # doctest: +SKIP
    """
    arrays, keys = _named_inputs(inputs, names)
    info = make_soc(soc, core_num, ub_size)
    if isinstance(entry, type):
        entry = class_entry(entry, tiling_data, *init_args)
    elif init_args:
        raise ValueError("init_args are for a kernel class; an entry function takes template keywords instead")
    block_dim = getattr(tiling_data, "blockDim", None)
    if not hasattr(tiling_data, "to_bytes") or not isinstance(block_dim, (int, np.integer)) or block_dim < 1:
        raise TypeError(f"tiling_data must be a TilingData (with to_bytes() and blockDim >= 1), got "
                        f"{type(tiling_data).__name__}")
    if core is not None and not 0 <= core < block_dim:
        raise ValueError(f"core must be in [0, {block_dim}) (the tiling's blockDim), got {core}")
    if out_dtype is None:
        out_dt = arrays[0].dtype
    else:
        out_dt = out_dtype if isinstance(out_dtype, np.dtype) else np.dtype(to_numpy(as_acl_dtype(out_dtype)))
    n_out = int(arrays[0].size if out_size is None else out_size)
    out_name = str(names[len(arrays)]) if names is not None and len(names) > len(arrays) else "out"
    args = [gm_from_array(a, k) for a, k in zip(arrays, keys, strict=True)]
    args.append(gm_from_array(None, out_name, nbytes=n_out * out_dt.itemsize, fill=SENTINEL))
    name = kernel_name or getattr(entry, "__name__", "kernel")
    run = _launch(entry, int(block_dim), args, tiling_data.to_bytes(), info, outputs=(len(args) - 1,), record=record,
                  snapshot=snapshot, kernel_name=name, tiling_data=tiling_data,
                  cores=None if core is None else [core], strict=strict, **template)
    blocks = [b.name.rsplit("[", 1)[0] for bs in run.trace.ub_layout.values() for b in bs
              if b.kind in ("VECIN", "VECOUT")]
    if blocks and "bufferNum" not in run.trace.meta:      # BUFFER_NUM as the figures title it: blocks per queue
        run.trace.meta["bufferNum"] = max(blocks.count(q) for q in set(blocks)) // len(run.trace.ub_layout)
    out = args[-1].ptr.allocation.buffer[:n_out * out_dt.itemsize].view(out_dt).copy()
    return run, out
