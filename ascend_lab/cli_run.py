"""``ascend-lab run``: an aclnn op on seeded random data through the whole simulated stack, checked bit for bit
against its oracle (the op spec names it), with its graph, tiling, cycles and findings printed and, with
``--trace``, a Chrome trace written."""

from __future__ import annotations

import argparse
import json
import math
import os
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np

from .ascendc import options
from .base import platform
from .cli_args import MAX_RUN_ELEMENTS, CliError, WriteError, attrs_given, fmt_value
from .dtypes import is_floating, to_numpy
from .opdev.errno import describe
from .ops import registry
from .run import call


def supported_run_dtypes(op: str) -> tuple[Any, ...]:
    """Every dtype the aclnn API accepts on at least one SoC (a SoC that refuses one returns 161002)."""
    _, api = registry.aclnn_api(op)
    seen: dict[Any, None] = {}
    for name in platform.socs():
        with platform.soc(name):
            for case in api.support_cases:
                seen.update(dict.fromkeys(api.dtype_support(**case)))
    return tuple(seen)


def random_inputs(shape: tuple[int, ...], dtype: Any, seed: int, count: int = 2) -> tuple[np.ndarray, ...]:
    """``count`` inputs for ``run`` (the API's tensors: (grad_output, self) for the backward ops): seeded, each
    ``shape`` in ``dtype``.

    Floats: the first ~ N(0, 1), the others ~ N(0, 4^2), so hardsigmoid's (-3, 3) window and a threshold of 1.0
    cut through the data. Integers: uniform over int8/uint8's range, or [-1000, 1000] for wider types.
    """
    np_dt = to_numpy(dtype)
    rng = np.random.default_rng(seed)
    if is_floating(dtype):
        scales = [np.float32(1.0)] + [np.float32(4.0)] * (count - 1)
        return tuple((rng.standard_normal(shape, dtype=np.float32) * s).astype(np_dt) for s in scales)
    if np_dt.itemsize == 1:
        info = np.iinfo(np_dt)
        lo, hi = int(info.min), int(info.max)
    else:
        lo, hi = -1000, 1000
    return tuple(rng.integers(lo, hi, size=shape, endpoint=True).astype(np_dt) for _ in range(count))


def golden_for(run: Any, *inputs: np.ndarray, threshold: float | None = None) -> tuple[str, np.ndarray]:
    """(oracle name, expected output) for the kernel the L0 graph ran on ``inputs`` (the API's tensors, in order;
    empty tensors: empty output).

    The kernel node names its op; the op's spec names its oracle (``module:function``) and the node
    attributes the oracle takes (``registry.oracle``), so the check follows whatever kernel the graph chose."""
    node = getattr(run, "kernel_node", None)
    if node is None:   # no kernel node: an empty tensor, nothing computed; the output keeps its (empty) shape
        return "empty output", np.zeros(inputs[-1].shape, dtype=inputs[-1].dtype)
    module, _, func = registry.oracle_call(node)[0].partition(":")
    return f"{module.rsplit('.', 1)[-1]}.{func}", registry.oracle(node)(*inputs)


def compare(got: np.ndarray | None, want: np.ndarray) -> tuple[bool, float]:
    """(bit-exact?, max |got - want|); bit-exact means same dtype, shape and bytes (NaNs and -0.0 count)."""
    if got is None or got.dtype != want.dtype or got.shape != want.shape:
        return False, math.inf
    a, b = np.ascontiguousarray(got), np.ascontiguousarray(want)
    if a.size == 0:
        return True, 0.0
    uint = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize]
    same = a.view(uint) == b.view(uint)
    diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
    diff = np.where(same, 0.0, np.nan_to_num(diff, nan=np.inf))
    return bool(same.all()), float(diff.max())


def _validate_run(args: argparse.Namespace) -> tuple[Any, dict[str, float]]:
    """Refuse a bad ``run`` invocation before any device work: the API's dtypes, its scalars, the size."""
    _, api = registry.aclnn_api(args.op)
    if args.dtype not in supported_run_dtypes(args.op):
        names = ", ".join(d.short for d in supported_run_dtypes(args.op))
        raise CliError(f"{api.api} does not support {args.dtype.short}; it accepts {names}")
    given = attrs_given(args, [sc.name for sc in api.scalars], api.convenience)
    numel = math.prod(args.shape)
    if numel > MAX_RUN_ELEMENTS:
        raise CliError(f"shape {','.join(map(str, args.shape))} has {numel} elements; the simulator runs up to "
                       f"{MAX_RUN_ELEMENTS}")
    need = _run_memory_estimate(numel, args.dtype)
    have = _available_memory()
    if have is not None and need > have:
        raise CliError(f"shape {','.join(map(str, args.shape))} needs about {need / 2**30:.1f} GiB of host memory to "
                       f"simulate, more than the {have / 2**30:.1f} GiB available; use a smaller shape")
    if args.trace is not None:
        _check_trace_path(args.trace)
    return api, {sc.name: given.get(sc.name, sc.default) for sc in api.scalars}


def _run_memory_estimate(numel: int, dtype: Any) -> int:
    """Bytes a ``run`` needs: the host inputs and output, their device copies, the workspace copies of the graph
    and the kernel's float32 temporaries -- a generous 12 tensors' worth at 4 bytes or the dtype's size."""
    return 12 * numel * max(to_numpy(dtype).itemsize, 4)


def _available_memory() -> int | None:
    """Available physical memory in bytes (None where the platform does not say)."""
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _check_trace_path(path: str) -> None:
    """Refuse a trace path that cannot be written before any work is done (exit code 2)."""
    if not path.strip():
        raise CliError("--trace needs a file name, got an empty path")
    if os.path.isdir(path):
        raise CliError(f"cannot write the trace to {path!r}: it is a folder; give a file name such as out.json")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise CliError(f"cannot write the trace to {path!r}: folder {folder!r} does not exist")
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise CliError(f"cannot write the trace to {path!r}: no permission to write there")



def _execute_run(args: argparse.Namespace, api: Any,
                 scalars: dict[str, float]) -> tuple[Any, tuple[np.ndarray, ...]]:
    """Seeded inputs (one per tensor of the API) through the whole simulated stack; returns (run, inputs)."""
    inputs = random_inputs(args.shape, args.dtype, args.seed, len(api.tensors))
    with options(buffer_num=args.buffer_num):
        run = call(api.api, *inputs, *scalars.values(), soc=args.soc, trace=args.trace is not None,
                   kernel=args.kernel)
    return run, inputs


def _report_run(args: argparse.Namespace, api: Any, scalars: dict[str, float], run: Any,
                inputs: tuple[np.ndarray, ...], out: Callable[[str], None]) -> int:
    """Print what happened, check it against the oracle, write the trace; the exit code."""
    shape_txt = "[" + ", ".join(map(str, args.shape)) + "]"
    extra = "".join(f", {name} {value}" for name, value in scalars.items())
    bufs = f", BUFFER_NUM {args.buffer_num}" if args.buffer_num is not None else ""
    names = " and ".join(c for _, c in api.tensors)
    out(f"{api.api} on {run.soc}: {names} {args.dtype.short} {shape_txt}, seed {args.seed}{extra}{bufs}")
    out(f"status: {describe(run.status)}")
    if run.status != 0:
        for m in run.messages or ["(no log messages)"]:
            out(f"  log: {m}")
        return 1
    for m in run.messages:
        out(f"  log: {m}")
    _report_graph(args, run, out)
    _report_kernels(run, out)
    oracle, want = golden_for(run, *inputs)
    exact, max_diff = compare(run.out, want)
    out(f"max abs diff vs {oracle}: {max_diff:g}")
    out(f"bit-exact vs golden: {'yes' if exact else 'no'}")
    if args.trace is not None:
        _write_trace(args.trace, run, out)
    return 0 if exact else 1


def _report_graph(args: argparse.Namespace, run: Any, out: Callable[[str], None]) -> None:
    """The workspace, the L0 graph (each node and why it is there) and the tiling."""
    node = run.kernel_node
    if args.buffer_num is not None and node is not None \
            and not registry.get(node.op).kernel(node.attrs["kernel"]).takes_buffer_num:
        out(f"note: the {node.attrs['kernel']} kernel chooses its own buffering; --buffer-num does not apply to it")
    out(f"workspace: {run.workspace_size} B")
    if run.graph:
        out(f"L0 graph: {' -> '.join(run.graph)}")
        for node in run.nodes:
            out(f"  {node.op:<16} {node.why}")
    else:
        out("L0 graph: (none: an empty tensor launches no kernel)")
    if run.tiling is not None:
        fields = " ".join(f"{k}={fmt_value(v)}" for k, v in run.tiling.as_dict().items())
        out(f"tiling: {type(run.tiling).__name__} {fields}")
    else:
        out("tiling: (none)")


def _report_kernels(run: Any, out: Callable[[str], None]) -> None:
    """Each kernel launched (flavour, cores, estimated cycles) and the sanitizer's warnings by kind."""
    if not run.kernel_runs:
        out("kernel: not launched (0 cycles)")
        out("warnings: 0")
        return
    for k in run.kernel_runs:
        tr = k.trace
        flavour = tr.meta.get("kernel_flavour", "?")
        out(f"kernel: {k.kernel} ({flavour} flavour) on {k.block_dim} cores: {tr.cycles:.1f} cycles estimated, "
            f"{tr.microseconds:.3f} us at {tr.clock_mhz} MHz")
    warnings = Counter(w.kind for k in run.kernel_runs for w in k.trace.warnings)
    total = sum(warnings.values())
    detail = ", ".join(f"{kind} {count}" for kind, count in sorted(warnings.items()))
    out(f"warnings: {total}" + (f" ({detail})" if detail else ""))


def _write_trace(path: str, run: Any, out: Callable[[str], None]) -> None:
    """The run's Chrome trace (an empty one when no kernel ran); a write that fails is a WriteError (exit 1)."""
    try:
        if run.trace is not None:
            run.trace.save_chrome_trace(path)
            out(f"trace: wrote {len(run.trace.events)} events to {path} "
                "(open in https://ui.perfetto.dev or chrome://tracing)")
        else:
            with open(path, "w", encoding="utf-8") as fh:
                json.dump({"traceEvents": [], "displayTimeUnit": "ns", "otherData": {"kernel": None}}, fh)
            out(f"trace: no kernel ran; wrote an empty trace to {path}")
    except OSError as exc:
        raise WriteError(f"could not write the trace to {path!r}: {exc.strerror or exc}") from None


def cmd_run(args: argparse.Namespace, out: Callable[[str], None]) -> int:
    api, scalars = _validate_run(args)
    run, inputs = _execute_run(args, api, scalars)
    return _report_run(args, api, scalars, run, inputs, out)

