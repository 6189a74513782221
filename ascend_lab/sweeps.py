"""Parameter sweeps: a grid of tiling or kernel runs on any ``concurrent.futures.Executor``.

``ascend_lab.sweep("tiling", ops=..., dtypes=..., socs=..., sizes=..., attrs=..., buffer_nums=...)`` builds the
grid (every combination; an attribute only for the ops that have it), runs it in chunks on the executor you pass --
a ``ThreadPoolExecutor`` (the simulator is thread-safe, README "Threads"), a ``ProcessPoolExecutor`` (the default,
sized to the machine: kernel runs are Python per instruction, so processes scale where threads share one GIL), or a
Dask cluster's ``client.get_executor()`` to go past one machine -- with a progress bar (``tqdm``; the notebook
widget in Jupyter) and returns one row per case, in grid order: a pandas ``DataFrame`` when pandas is installed,
else a list of dicts.

Each row holds the case (kind, op, kernel, dtype, soc, n, buffer_num, attributes), ``status`` ("ok" or the
``ValueError``/``TypeError``/sanitizer message that refused it: one bad case does not stop a sweep), the tiling's
fields (``blockDim``, ``tilingKey`` and CANN's TilingData names), and for kernel runs the estimated ``cycles`` and
``us`` of the launch and ``ub_bytes``, the bytes of UB the kernel's TPipe laid out on core 0.

>>> rows = al.sweep("tiling", ops=["relu_grad"], dtypes=["float16", "int8"], sizes=[10**3, 10**6],
...                 executor=concurrent.futures.ThreadPoolExecutor(2), progress=False)      # doctest: +SKIP
>>> from dask.distributed import Client                                                  # doctest: +SKIP
>>> al.sweep("kernel", sizes=[2**k for k in range(10, 21)], executor=Client(...).get_executor())  # doctest: +SKIP
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from typing import Any

import numpy as np

from . import standalone, tiling
from .ascendc import KernelError
from .base.platform import get_soc
from .base.platform import socs as all_socs
from .dtypes import to_numpy
from .ops import registry
from .ops.common.l0_kernel import dispatch

__all__ = ["KINDS", "grid", "run_case", "sweep"]

#: What a sweep runs: the host tiling alone, or the tiling and a launch of the kernel on seeded data.
KINDS = ("tiling", "kernel")


def _names(values: Any, what: str) -> list[Any]:
    if values is None or isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        values = [values]
    values = list(values)
    if not values:
        raise ValueError(f"{what} is empty: give at least one value (or leave it out for the default)")
    return values


def grid(kind: str = "tiling", *, ops: Any = None, dtypes: Any = ("float32",), socs: Any = None,
         sizes: Any = (4096,), attrs: Mapping[str, Any] | None = None, buffer_nums: Any = (2,),
         kernels: Any = (None,)) -> list[dict[str, Any]]:
    """The cases of a sweep, in order: ops x kernels x dtypes x SoCs x sizes x attribute values x buffer counts.

    ``ops`` default to every registered operator, ``socs`` to every catalogued SoC; ``attrs`` maps an attribute name
    to its values (``{"threshold": [0.0, 1.0]}``), each applied to the ops that have that attribute; ``buffer_nums``
    only matter to kernel runs (a tiling sweep has one case per buffer count ignored)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    op_keys = [registry.get(op).key for op in _names(ops, "ops")] if ops is not None else \
        [s.key for s in registry.ops()]
    soc_names = _names(socs, "socs") if socs is not None else all_socs()
    attrs = dict(attrs or {})
    for name, values in attrs.items():
        attrs[name] = _names(values, f"attrs[{name!r}]")
    if kind == "kernel":
        unknown = sorted(set(attrs) - {"threshold"})
        if unknown:
            raise ValueError(f"a kernel sweep takes the threshold attribute only (standalone.run_kernel), "
                             f"not {unknown}")
    counts = _names(buffer_nums, "buffer_nums") if kind == "kernel" else [None]
    cases = []
    for op in op_keys:
        spec = registry.get(op)
        mine = {n: v for n, v in attrs.items() if n in spec.attrs}
        combos = [dict(zip(mine, vals, strict=True)) for vals in itertools.product(*mine.values())] or [{}]
        for kernel, dtype, soc, n, values, bn in itertools.product(
                _names(kernels, "kernels"), _names(dtypes, "dtypes"), soc_names, _names(sizes, "sizes"), combos,
                counts):
            cases.append({"kind": kind, "op": op, "kernel": kernel, "dtype": str(np.dtype(dtype).name)
                          if not isinstance(dtype, str) else dtype, "soc": soc, "n": n, "buffer_num": bn, **values})
    return cases


_CASE_KEYS = ("kind", "op", "kernel", "dtype", "soc", "n", "buffer_num")


def run_case(case: Mapping[str, Any]) -> dict[str, Any]:
    """One row of a sweep: the case, its status, the tiling's fields and, for a kernel run, cycles and UB bytes."""
    row: dict[str, Any] = dict(case)
    attrs = {k: v for k, v in case.items() if k not in _CASE_KEYS}
    try:
        if case["kernel"] is None:                 # what CANN runs on the SoC (l0_kernel.dispatch)
            case = {**case, "kernel": dispatch(registry.get(case["op"]), get_soc(case["soc"]))[0].flavour}
            row["kernel"] = case["kernel"]
        if case["kind"] == "tiling":
            td = tiling.compute(case["op"], case["n"], case["dtype"], soc=case["soc"], kernel=case["kernel"], **attrs)
        else:
            n = int(case["n"])
            rng = np.random.default_rng(n)
            npdt = np.dtype(to_numpy(case["dtype"]))
            values = rng.uniform(-4, 4, n)
            if npdt.kind in "iu":
                info = np.iinfo(npdt)
                values = np.clip(np.round(values * 8), info.min, info.max)
            g, x = values.astype(npdt), rng.uniform(-4, 4, n).astype(npdt)
            run, _ = standalone.run_kernel(case["op"], g, x, soc=case["soc"], buffer_num=case["buffer_num"],
                                           record=False, kernel=case["kernel"], **attrs)
            td = run.tiling
            layout = next(iter(run.trace.ub_layout.values()), [])
            row.update(cycles=float(run.cycles), us=float(run.microseconds),
                       ub_bytes=max((b.offset + b.size for b in layout), default=0))
    except (ValueError, TypeError, KernelError) as exc:
        row["status"] = f"{type(exc).__name__}: {' '.join(str(exc).split())}"
        return row
    row["status"] = "ok"
    row.update({"tiling": type(td).__name__, "blockDim": td.blockDim, "tilingKey": td.tilingKey, **td.as_dict()})
    return row


def _run_chunk(cases: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [run_case(c) for c in cases]


def _progress(total: int, progress: Any) -> Any:
    """A tqdm bar (the notebook widget under Jupyter), or a stand-in when ``progress`` is False or tqdm is missing."""
    if progress is not False:
        try:
            from tqdm.auto import tqdm  # deferred: optional progress bar
        except ImportError:                        # tqdm is a dependency; a trimmed install still sweeps
            pass
        else:
            return tqdm(total=total, desc="sweep", unit="case", disable=None if progress is None else not progress)

    class _Quiet:
        def update(self, n: int) -> None:
            pass

        def close(self) -> None:
            pass
    return _Quiet()


def _table(rows: list[dict[str, Any]], frame: bool | None) -> Any:
    if frame is not False:
        try:
            import pandas as pd  # deferred: optional, only a DataFrame needs it
        except ImportError:
            if frame:
                raise ValueError("frame=True needs pandas (pip install pandas); frame=None returns a list of dicts "
                                 "without it") from None
        else:
            return pd.DataFrame(rows)
    return rows


def sweep(kind: str = "tiling", *, ops: Any = None, dtypes: Any = ("float32",), socs: Any = None,
          sizes: Any = (4096,), attrs: Mapping[str, Any] | None = None, buffer_nums: Any = (2,),
          kernels: Any = (None,), executor: Executor | None = None, workers: int | None = None,
          chunksize: int | None = None, progress: bool | None = None, frame: bool | None = None) -> Any:
    """Run the grid of :func:`grid` on ``executor`` (default: a process pool of ``workers`` = the machine's CPU
    count, shut down afterwards; yours is left running) in chunks of ``chunksize`` cases (default: about four chunks
    per worker), with a tqdm progress bar (``progress=None``: shown where tqdm decides a terminal or notebook is
    watching; False: never). Returns a pandas DataFrame (``frame=None`` and pandas installed, or ``frame=True``) or a
    list of dicts (``frame=False``), one row per case in grid order (module docstring)."""
    if executor is not None and not isinstance(executor, Executor) and not hasattr(executor, "submit"):
        raise TypeError(f"executor must be a concurrent.futures.Executor (e.g. ThreadPoolExecutor(4), or a Dask "
                        f"client.get_executor()), not {type(executor).__name__}")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ValueError(f"workers must be a positive int, got {workers!r}")
    if chunksize is not None and (isinstance(chunksize, bool) or not isinstance(chunksize, int) or chunksize < 1):
        raise ValueError(f"chunksize must be a positive int, got {chunksize!r}")
    cases = grid(kind, ops=ops, dtypes=dtypes, socs=socs, sizes=sizes, attrs=attrs, buffer_nums=buffer_nums,
                 kernels=kernels)
    own = executor is None
    n_workers = workers or os.cpu_count() or 1     # chunks per worker: a given executor's size is its own
    if chunksize is None:
        chunksize = max(1, math.ceil(len(cases) / (4 * n_workers)))
    chunks = [cases[i:i + chunksize] for i in range(0, len(cases), chunksize)]
    pool = ProcessPoolExecutor(max_workers=n_workers) if own else executor
    bar = _progress(len(cases), progress)
    results: list[list[dict[str, Any]] | None] = [None] * len(chunks)
    try:
        futures = {pool.submit(_run_chunk, chunk): i for i, chunk in enumerate(chunks)}
        for future in as_completed(futures):
            i = futures[future]
            results[i] = future.result()
            bar.update(len(chunks[i]))
    finally:
        bar.close()
        if own:
            pool.shutdown(cancel_futures=True)
    return _table([row for chunk in results for row in (chunk or [])], frame)
