"""Live tiling: every registered op's host tiling for any element count, dtype, SoC, core count and UB size,
computed where there is no numpy -- the live tiling page runs this module in the reader's browser (pyodide).

CANN splits a kernel's tiling in two: what the kernel's compilation fixes (a TBE description's compile info, an
atvoss DAG's buffer count and dtype widths, C++ constants of the template) and the run-time tiling that takes the
shape and the platform. This module keeps that split:

* :func:`build_facts` runs at book build with the whole package (numpy, the kernels, the registry) and writes,
  per op and kernel flavour, what the run-time tiling needs besides its inputs: the host tiling function's name,
  or the TBE description's counts (``tbe.schedule.compile_counts``) or the DAG's counts
  (``atvoss.tiling.DagCounts``) per dtype; the TilingData class, the attribute defaults, the SoC families the
  kernel is registered for and the flavour a stock CANN runs per SoC. JSON-able.
* :func:`compute` is the run-time half and imports without numpy: the inputs go through the same checks as
  ``ascend_lab.tiling.compute`` (``live.tiling_inputs``), the tiling through the package's own functions
  (``op_host.tiling*``, ``tbe.schedule.elewise_tiling``, ``atvoss.tiling.broadcast_base_tiling``), and the
  per-core assignment through the kernel's ``core_ranges`` and ``live.tile_map.tile_map_parts`` -- what the
  matplotlib tile map draws. The result is JSON-able too (the page renders it).

``tests/test_tiling_no_numpy.py`` imports this module with numpy blocked and checks :func:`compute` against
``ascend_lab.tiling.compute`` for every op, kernel, dtype and SoC.
"""

from __future__ import annotations

import importlib
from typing import Any

from ..acl.types import as_acl_dtype, dtype_itemsize
from ..atvoss.tiling import DagCounts, broadcast_base_tiling, template_core_ranges
from ..base.platform import get_soc, socs
from ..opdev.tiling_data import TilingError
from ..tbe.schedule import (
    TbeElewiseTilingData,
    check_dtype,
    compile_counts,
    compile_info_of,
    core_ranges,
    elewise_tiling,
)
from .tile_map import tile_map_parts
from .tiling_inputs import check_float, check_n, resolve_platform

__all__ = ["FACTS_VERSION", "MAX_CORES", "build_facts", "compute", "default_kernel"]

#: Bumped when the facts' layout changes (:func:`compute` refuses facts of another version).
FACTS_VERSION = 3

#: The largest core count the live page's form and the notebook tiling explorer accept (a what-if beyond any SoC's
#: vector cores; every chart then has at most this many rows). The page reads it from the facts.
MAX_CORES = 256

#: Past this many tiles the rows leave out the per-tile lists (``core_ranges(tiles=False)``), as the explorers do.
MAX_TILES = 20000


def _name(obj: Any) -> str:
    """``module:qualname`` of a function or class, for :func:`_resolve`."""
    return f"{obj.__module__}:{obj.__qualname__}"


def _resolve(name: str) -> Any:
    module, _, attr = name.partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


# --- build time (the whole package) ----------------------------------------------------------------------------
def _kernel_facts(spec: Any, flavour: str, k: Any) -> dict[str, Any]:
    """One kernel's facts, by the live tiling its spec declares (``KernelSpec.live``)."""
    entry: dict[str, Any] = {
        "flavour": flavour, "socs": list(k.socs), "source": k.source, "tile_field": k.tile_field,
        "attrs": spec.check_attrs({}, flavour), "tiling_data": _name(k.tiling_data), "kind": k.live.kind,
    }
    if k.live.kind == "host":
        entry.update(tiling=_name(k.tiling), core_ranges=_name(k.core_ranges))
    elif k.live.kind == "tbe":
        module = k.live.source
        entry.update(op_type=spec.op_type, dtypes=list(module.DTYPES),
                     counts={soc: _tbe_counts(module, soc) for soc in socs()})
    else:
        op = k.live.source
        entry.update(name=op.name, dtype_names=[str(d) for d in op.dtype_ids],
                     dtype_ids={str(d): i for d, i in op.dtype_ids.items()},
                     dags={str(d): vars(DagCounts.of(op.dag_for(d))) for d in op.dtype_ids},
                     scalars=[float(v) for v in op.scalars(entry["attrs"])])
    return entry


def _tbe_counts(module: Any, soc: str) -> dict[str, Any]:
    """A TBE kernel's compile counts per dtype for the binary built for ``soc`` (``tbe.schedule.compile_counts``);
    a dtype whose description cannot be built there keeps the error the package raises."""
    counts: dict[str, Any] = {}
    for dtype in module.DTYPES:
        try:
            counts[dtype] = compile_counts(module.describe, dtype, soc)
        except (TypeError, ValueError) as exc:
            counts[dtype] = {"error": [type(exc).__name__, str(exc)]}
    return counts


def _op_facts(spec: Any, catalogue: list[Any], stock_flavour: Any) -> dict[str, Any] | None:
    """One op's facts (None when none of its kernels declares a live tiling)."""
    kernels = [_kernel_facts(spec, flavour, k) for flavour, k in spec.kernels.items() if k.live is not None]
    if not kernels:
        return None
    if _resolve(spec.op_def_name) is not spec.op_def:
        raise TypeError(f"{spec.op_type}: {spec.op_def_name} is not its op definition; declare OpSpec.host_module")

    def stock(soc: Any) -> str:
        flavour = stock_flavour(soc)
        ok = flavour in spec.kernels and spec.kernels[flavour].registered_for(soc)
        return flavour if ok else spec.kernel().flavour

    return {"key": spec.key, "op_type": spec.op_type, "n_name": spec.n_name, "summary": spec.summary,
            "op_def": spec.op_def_name, "dtypes": [d.short for d in spec.dtypes], "inputs": list(spec.inputs),
            "kernels": kernels, "stock": {s.name: stock(s) for s in catalogue}}


def build_facts() -> dict[str, Any]:
    """What :func:`compute` needs besides its inputs, for every registered op, kernel and SoC (see the module
    docstring). Runs with the whole package at book build; the page loads the result as JSON."""
    # These three need numpy (the dtype table, the registry's kernels, the dispatch's aclTensors); this half runs
    # at book build only, and the module must import without numpy for the browser:
    from ..dtypes import BOOK_DTYPES  # deferred: numpy (see above)
    from ..ops import registry  # deferred: numpy (see above)
    from ..ops.common.l0_kernel import stock_flavour  # deferred: numpy (see above)

    catalogue = [get_soc(name) for name in socs()]
    ops = [facts for spec in registry.ops() if (facts := _op_facts(spec, catalogue, stock_flavour)) is not None]
    return {"version": FACTS_VERSION, "ops": ops, "dtypes": [d.short for d in BOOK_DTYPES], "max_cores": MAX_CORES,
            "socs": [{"name": s.name, "family": s.family, "vector_core_num": s.vector_core_num,
                      "ub_size": s.core_mem_size_ub} for s in catalogue]}


# --- run time (no numpy) -----------------------------------------------------------------------------------------
def _op(facts: dict[str, Any], op: str) -> dict[str, Any]:
    fold = str(op).strip().lower().replace("_", "").replace("-", "")
    for entry in facts["ops"]:
        if fold in (entry["key"].replace("_", ""), entry["op_type"].lower()):
            return entry
    raise ValueError(f"unknown op {op!r}; choose one of: {', '.join(e['key'] for e in facts['ops'])}")


def default_kernel(facts: dict[str, Any], op: str, soc: str) -> str:
    """The flavour a stock CANN install runs for ``op`` on ``soc`` (``ops.common.l0_kernel.dispatch`` without a custom
    package), as :func:`build_facts` recorded it."""
    return _op(facts, op)["stock"][get_soc(soc).name]


def _kernel(entry: dict[str, Any], flavour: str | None) -> dict[str, Any]:
    if flavour is None:
        return entry["kernels"][0]
    for k in entry["kernels"]:
        if k["flavour"] == flavour:
            return k
    raise ValueError(f"{entry['op_type']} has no {flavour!r} kernel in the simulator; it has "
                     f"{', '.join(k['flavour'] for k in entry['kernels'])}")


def _tiling(k: dict[str, Any], n: int, dtype: str, soc: str, core_num: int, ub_size: int, attrs: dict[str, float],
            inputs: int) -> Any:
    """The kernel's tiling, as its ``KernelSpec.tiling`` computes it."""
    if k["kind"] == "host":
        return _resolve(k["tiling"])(n, dtype, core_num, ub_size, **attrs)
    if k["kind"] == "tbe":                             # op_kernel/tbe.py: tbe.schedule.op_tiling
        name = check_dtype(k["op_type"], k["dtypes"], dtype)
        cls = _resolve(k["tiling_data"])
        extra = {f: attrs[f] for f, _ in cls.FIELDS if f not in dict(TbeElewiseTilingData.FIELDS)}
        counts = k["counts"][get_soc(soc).name][name]
        if "error" in counts:
            kind, message = counts["error"]
            raise {"TypeError": TypeError, "ValueError": ValueError}[kind](message)
        info = compile_info_of(**counts, core_num=core_num, ub_size=ub_size)
        return elewise_tiling(n, info, cls, **extra)
    # the atvoss template: TemplateOp.tiling -> broadcast_base_tiling on the op's inputs, n elements each
    if n <= 0:
        raise TilingError(f"{k['name']}: the template's tiling fails on an empty tensor (dimLength is zero)")
    name = _template_dtype(k, dtype)
    dag = DagCounts(**k["dags"][name])
    return broadcast_base_tiling(dag, [(n,)] * inputs, (n,), core_num, ub_size, dtype_id=k["dtype_ids"][name],
                                 scalars=k["scalars"])


def _template_dtype(k: dict[str, Any], dtype: str) -> str:
    """``TemplateOp.dtype``: the dtype's name when the template op takes it, TilingError otherwise."""
    name = as_acl_dtype(dtype).short
    if name not in k["dtype_ids"]:
        raise TilingError(f"{k['name']} (atvoss) supports {', '.join(k['dtype_names'])}; got {name}")
    return name


def _core_ranges(k: dict[str, Any], td: Any, dtype: str, n: int, tiles: bool) -> list[dict[str, Any]]:
    """The kernel's ``core_ranges`` rows."""
    if k["kind"] == "host":
        return _resolve(k["core_ranges"])(td, dtype, n, tiles=tiles)
    if k["kind"] == "tbe":
        return core_ranges(td, dtype, n, tiles=tiles)
    return template_core_ranges(td, dtype_itemsize(_template_dtype(k, dtype)), tiles=tiles)


def compute(facts: dict[str, Any], op: str, n: int, dtype: str, soc: str, core_num: int | None = None,
            ub_size: int | None = None, kernel: str | None = None, *, tiles: bool = True) -> dict[str, Any]:
    """The tiling of ``op`` (its ``kernel`` flavour; None: the one a stock CANN runs on ``soc``) for ``n`` elements
    of ``dtype`` on ``core_num`` cores with ``ub_size`` bytes of UB (None: the SoC's), as a JSON-able dict:
    ``struct`` (the TilingData's class name), ``fields`` (CANN's fields, then blockDim and tilingKey), ``rows``
    (the per-core ``core_ranges``, tiles left out past :data:`MAX_TILES`), ``segments``/``title``/``labels`` (the
    tile map's, from ``live.tile_map``), ``kernel``/``default_kernel``/``registered`` (whether the op definition
    registers this kernel for the SoC). Bad inputs raise as ``ascend_lab.tiling.compute`` raises."""
    if facts.get("version") != FACTS_VERSION:
        raise ValueError(f"facts of version {facts.get('version')!r}, this module reads version {FACTS_VERSION}: "
                         "rebuild them (scripts/live_tiling_bundle.py)")
    entry = _op(facts, op)
    stock = entry["stock"][get_soc(soc).name]
    k = _kernel(entry, kernel if kernel is not None else stock)
    attrs = {name: check_float(name, value) for name, value in k["attrs"].items()}
    n = check_n(entry["n_name"], n)
    _resolve(entry["op_def"]).require_dtype(dtype)
    core_num, ub_size = resolve_platform(core_num, ub_size, soc)
    td = _tiling(k, n, dtype, soc, core_num, ub_size, attrs, len(entry["inputs"]))
    rows = _core_ranges(k, td, dtype, n, tiles=False)
    tiles = tiles and sum(r["tile_num"] for r in rows) <= MAX_TILES
    if tiles:
        rows = _core_ranges(k, td, dtype, n, tiles=True)
    field = k["tile_field"] if hasattr(td, k["tile_field"]) else None
    parts = tile_map_parts(td, dtype, n, rows, field, entry["op_type"]) if tiles else None
    fields = {key: (value.hex() if isinstance(value, bytes) else value) for key, value in td.as_dict().items()}
    return {
        "op": entry["op_type"], "kernel": k["flavour"], "default_kernel": stock, "source": k["source"],
        "registered": get_soc(soc).family in k["socs"], "struct": type(td).__name__, "size": td.SIZE,
        "fields": fields, "n": n, "dtype": dtype, "core_num": core_num, "ub_size": ub_size,
        "rows": [{key: value for key, value in r.items() if key != "tiles"} for r in rows],
        "segments": [[s.core, s.tile, s.start, s.end, s.tail] for s in parts["segments"]] if parts else None,
        "title": parts["title"] if parts else None, "labels": parts["labels"] if parts else None,
        "tile_elems": parts["tile_elems"] if parts else None,
    }
