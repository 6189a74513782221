"""Lab 12 -- a kernel whose second input is broadcast along one axis: RowThresholdGrad, in AscendC C++.

``out[r, c] = x[r, c] > threshold[r] ? grad[r, c] : 0`` for ``grad, x`` of shape ``[rows, cols]`` and a
``threshold`` of shape ``[rows]``, broadcast along the columns (float32 and float16; the compare in T). The learner
hands over ``row_threshold() -> {"tiling": ..., "kernel": ...}``:

* ``tiling(rows, cols, dtype, core_num, ub_size) -> RowThresholdTilingData(rows, cols, rowsPerCore, tileRows,
  blockDim=...)``: how the broadcast axis is split -- whole rows per core, whole rows per tile, within the UB;
* ``kernel``: the C++ kernel of a ``%%ascendc RowThresholdGrad`` cell (``template <typename D_T>`` entry
  ``row_threshold_grad(grad, x, threshold, out, workspace, tiling)``; the struct is ``labs/row_threshold_tiling.h``).

:func:`check` validates the tiling (every row on exactly one core, no idle core, the cores balanced, at least one
row per tile), runs the kernel with it on the simulated Ascend910B4 and on what-if copies with few cores and a
small UB (so a core runs several tiles and its last tile has fewer rows), and compares every bit with
:func:`oracle`; it reads the instruction stream (``CompareScalar`` and ``Select``). After the announced shapes it
draws more at check time (a seed per check, named in a failing report): odd row counts (no even tile divides
them), a few cores and small UBs, so that a core's rows run over several tiles and its last tile is short.
``cols`` is a whole number of 256-byte repeats (the lab is about the broadcast axis, not about padding rows).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ascend_lab import standalone
from ascend_lab.ascendc import KernelRun, launch
from ascend_lab.base.platform import SocInfo
from ascend_lab.opdev.tiling_data import TilingData, ceil_div, int64
from ascend_lab.ops.common.kernel_args import gm_from_array

from .checker import Case, Report, answer_key, compare_arrays, run_battery
from .lab5_copy_compute import SENTINEL, instruction_case, is_cxx, usable_ub

__all__ = ["DTYPES", "FUNCTION", "LAB_INSTRUCTIONS", "RowThresholdTilingData", "cases", "check", "oracle", "run"]

FUNCTION = "row_threshold"
TITLE = "Lab 12 \u00b7 A threshold broadcast along the rows"
SOC = "Ascend910B4"
DTYPES = ("float32", "float16")
REPEAT_BYTES = 256
#: The vector instructions the lab is about: the kernel must issue them.
LAB_INSTRUCTIONS = {"CompareScalar": "the mask of one row, x[r, :] > threshold[r] (the row's threshold a scalar)",
                    "Select": "grad where the mask bit is 1, else 0"}


class RowThresholdTilingData(TilingData):
    """``RowThresholdTilingData`` of ``row_threshold_tiling.h`` (4 x int64 = 32 bytes)."""

    rows: int64
    cols: int64
    rowsPerCore: int64
    tileRows: int64


@answer_key
def oracle(grad: np.ndarray, x: np.ndarray, threshold: np.ndarray) -> np.ndarray:
    """``x > threshold[:, None] ? grad : 0`` in numpy, compared in T (NaN compares false)."""
    with np.errstate(invalid="ignore"):
        return np.where(x > threshold[:, None], grad, grad.dtype.type(0))


def _sample(rows: int, cols: int, dtype: str, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    t = np.dtype(dtype).type
    thr = rng.uniform(-1.0, 1.0, rows).astype(dtype)
    x = rng.uniform(-2.0, 2.0, (rows, cols)).astype(dtype)
    ties = rng.random((rows, cols)) < 0.05                  # x == its row's threshold: GT, not GE
    x[ties] = np.broadcast_to(thr[:, None], (rows, cols))[ties]
    if rows and cols:
        x.flat[rng.integers(0, x.size, 3)] = [t(np.nan), t(-0.0), t(np.inf)]
    grad = rng.uniform(-2.0, 2.0, (rows, cols)).astype(dtype)
    return grad, x, thr


def _tiling_problem(td: Any, rows: int, cols: int, core_num: int) -> str:
    """Why the learner's tiling cannot be right, or ""."""
    if not isinstance(td, RowThresholdTilingData):
        return f"return a RowThresholdTilingData(rows, cols, rowsPerCore, tileRows, blockDim=...), not {td!r}"
    if (td.rows, td.cols) != (rows, cols):
        return f"rows/cols: {td.rows}/{td.cols} instead of {rows}/{cols}"
    if td.rowsPerCore <= 0 or td.tileRows <= 0:
        return f"rowsPerCore {td.rowsPerCore}, tileRows {td.tileRows}: both must be at least one row"
    if not 1 <= td.blockDim <= core_num:
        return f"blockDim {td.blockDim}: between 1 and the {core_num} cores"
    if td.blockDim * td.rowsPerCore < rows:
        return (f"blockDim {td.blockDim} x rowsPerCore {td.rowsPerCore} = {td.blockDim * td.rowsPerCore} rows: "
                f"{rows - td.blockDim * td.rowsPerCore} of the {rows} rows are on no core")
    if (td.blockDim - 1) * td.rowsPerCore >= rows:
        return f"blockDim {td.blockDim}: the last core gets no row (launch only cores that have work)"
    if td.rowsPerCore > ceil_div(rows, min(core_num, rows)):
        return (f"rowsPerCore {td.rowsPerCore}: with {core_num} cores, {ceil_div(rows, min(core_num, rows))} rows per "
                "core are enough -- split the broadcast axis over every core you have")
    if td.tileRows > td.rowsPerCore:
        return f"tileRows {td.tileRows} is more than a core's {td.rowsPerCore} rows"
    return ""


def _launch(kernel: Any, td: RowThresholdTilingData, arrays: Sequence[np.ndarray], soc: SocInfo, *,
            record: bool = False) -> tuple[KernelRun, np.ndarray]:
    grad, x, thr = arrays
    args = [gm_from_array(grad.ravel(), "grad"), gm_from_array(x.ravel(), "x"), gm_from_array(thr, "threshold"),
            gm_from_array(None, "out", nbytes=grad.nbytes, fill=SENTINEL)]
    order = list(range(td.blockDim))[::-1]                     # last core first: a core writing too far shows
    r = launch(kernel, td.blockDim, args, td.to_bytes(), soc, outputs=(3,), record=record, tiling_data=td,
               cores=order, D_T=grad.dtype, kernel_name="RowThresholdGrad")
    out = args[3].ptr.allocation.buffer[:grad.nbytes].view(grad.dtype).reshape(grad.shape).copy()
    return r, out


def _parts(fn: Any) -> tuple[Callable[..., Any], Any]:
    parts = fn()
    if not isinstance(parts, dict) or not {"tiling", "kernel"} <= set(parts):
        raise TypeError("row_threshold() must return {'tiling': your tiling function, 'kernel': your C++ kernel}")
    if not is_cxx(parts["kernel"]):
        raise TypeError("this lab's kernel is AscendC C++: edit the RowThresholdGrad cell (%%ascendc) and hand the "
                        "kernel it binds over as row_threshold()['kernel']")
    return parts["tiling"], parts["kernel"]


def run(fn: Any, rows: int = 37, cols: int = 256, dtype: str = "float32", *, core_num: int | None = None,
        ub_size: int | None = None, seed: int = 0, record: bool = True) -> tuple[KernelRun, np.ndarray]:
    """Launch your kernel with your tiling once and return ``(run, out)`` (for ``viz.plot_pipeline(run)``)."""
    tiling_fn, kernel = _parts(fn)
    soc = standalone.make_soc(SOC, core_num, ub_size)
    td = tiling_fn(rows, cols, dtype, soc.vector_core_num, usable_ub(soc))
    return _launch(kernel, td, _sample(rows, cols, dtype, seed), soc, record=record)


def _locate(td: Any, cols: int) -> Callable[[int], str]:
    def locate(index: int) -> str:
        row = index // cols
        if not isinstance(td, RowThresholdTilingData) or td.rowsPerCore <= 0 or td.tileRows <= 0:
            return f"row {row}"
        core, inside = divmod(row, td.rowsPerCore)
        return f"row {row}: core {core}, tile {inside // td.tileRows}, row {inside % td.tileRows} of the tile"
    return locate


def _case(name: str, covers: Sequence[str], rows: int, cols: int, dtype: str, *, core_num: int | None = None,
          ub_size: int | None = None, seed: int = 0, hint: str = "") -> Case:
    soc = standalone.make_soc(SOC, core_num, ub_size)
    arrays = _sample(rows, cols, dtype, seed)
    expected = oracle(*arrays)
    context: dict[str, Any] = {}

    def call(fn: Any, _inputs: dict[str, Any]) -> Any:
        tiling_fn, kernel = _parts(fn)
        td = tiling_fn(rows, cols, dtype, soc.vector_core_num, usable_ub(soc))
        context["td"] = td
        problem = _tiling_problem(td, rows, cols, soc.vector_core_num)
        if problem:
            return f"your tiling: {problem}"
        return _launch(kernel, td, arrays, soc)[1]

    def compare(exp: Any, got: Any) -> str | None:
        if isinstance(got, str):
            return got
        why = compare_arrays(exp, got, locate=_locate(context.get("td"), cols))
        if why is None:
            return None
        td = context.get("td")
        bad = np.flatnonzero(exp.reshape(-1).view(f"u{exp.itemsize}") != got.reshape(-1).view(f"u{got.itemsize}"))
        row = int(bad[0]) // cols
        why += f"\ninputs there: x = {arrays[1].reshape(-1)[bad[0]]!r}, threshold[{row}] = {arrays[2][row]!r}"
        if td is not None and rows % td.tileRows and (row % td.rowsPerCore) >= (td.rowsPerCore // td.tileRows) * \
                td.tileRows:
            why += (f"\nrow {row} is in a core's LAST tile, which has fewer than tileRows = {td.tileRows} rows: the "
                    "tile's row count, its copies and its thresholds all shrink with it")
        return why

    shown = {"rows": rows, "cols": cols, "dtype": dtype, "soc": soc.name, "cores": soc.vector_core_num,
             "usable UB": usable_ub(soc), "data": f"seed {seed}: x equal to its row's threshold here and there, "
                                                  "NaN, -0, inf"}
    def show(v: Any) -> str:
        return v if isinstance(v, str) else f"{getattr(v, 'dtype', '?')}{list(getattr(v, 'shape', []))}"

    return Case(name, shown, expected, covers=(f"soc:{SOC}", f"dtype:{dtype}", *covers), call=call, compare=compare,
                hint=hint,
                show=show)


_HINTS = {
    "first": "every core takes whole rows: rows [rowsPerCore * i, rowsPerCore * (i + 1)); a tile is tileRows whole "
             "rows, and each row is compared with ITS threshold",
    "tail": "a core's last tile has the rows that are left (coreRows - tileRows * i): copy that many rows and that "
            "many thresholds, and compare that many rows",
    "ub": "a tile's rows must fit in the UB with every buffer your Init lays out, double-buffered",
}


def cases() -> list[Case]:
    """The announced battery: the worked example, the instructions, then shapes with tails of rows."""
    out = [_case(f"worked example: grad [37, 256] float32 on {SOC} (40 cores, one row each)",
                 ["topic:worked example"], 37, 256, "float32", hint=_HINTS["first"])]
    out.append(instruction_case("the instructions of your Compute: [37, 256] float32",
                                LAB_INSTRUCTIONS, lambda fn: run(fn, 37, 256, "float32")[0],
                                covers=("topic:instructions",)))
    shapes = ((100, 128, "float16", 3, 16_384, 1), (7, 512, "float32", 2, 32_768, 2),
              (1000, 256, "float32", 40, None, 3), (61, 1024, "float16", 4, 65_536, 4))
    for rows, cols, dtype, cores, ub, seed in shapes:
        out.append(_case(f"grad [{rows}, {cols}] {dtype} on {cores} cores" + (f", {ub // 1024} KiB UB" if ub else ""),
                         ["topic:rows that the tile does not divide"], rows, cols, dtype, core_num=cores, ub_size=ub,
                         seed=seed, hint=_HINTS["tail"]))
    return out


def _hidden(rng: np.random.Generator) -> list[Case]:
    """Shapes drawn at check time: rows that no tile divides, a few cores, small UBs."""
    out = []
    for _ in range(5):
        dtype = str(rng.choice(DTYPES))
        cols = int(rng.integers(1, 7)) * 128
        cores = int(rng.integers(1, 9))
        ub = int(rng.choice([16_384, 32_768, 65_536]))
        ub = max(ub, 3 * 2 * 2 * cols * np.dtype(dtype).itemsize + 4096)    # room for two rows at least
        rows = int(rng.integers(2, 300)) | 1                                   # odd: no even tile divides it
        out.append(_case(f"grad [{rows}, {cols}] {dtype} on {cores} cores, {ub // 1024} KiB UB",
                         ["topic:drawn at check time"], rows, cols, dtype, core_num=cores, ub_size=ub,
                         seed=int(rng.integers(0, 2**31)), hint=_HINTS["tail"]))
    return out


def _summary(fn: Any) -> list[str]:
    r, _ = run(fn, 1000, 256, "float32")
    td = r.tiling
    core0 = next(c for c in r.trace.cores if c.core == 0)
    return [f"[1000, 256] float32 on {SOC}: blockDim {td.blockDim}, rowsPerCore {td.rowsPerCore}, tileRows "
            f"{td.tileRows}; {r.cycles:,.0f} cycles; core 0 busy MTE2 {core0.busy['MTE2']:,.0f}, V "
            f"{core0.busy['V']:,.0f}, MTE3 {core0.busy['MTE3']:,.0f}"]


def check(fn: Any, *, seed: int | None = None) -> Report:
    """Run your ``row_threshold()`` pieces over the battery and over shapes drawn now (``seed`` draws a reported set
    again); returns the Report."""
    return run_battery(fn, cases(), title=TITLE, summary=lambda: _summary(fn), refuse_reference=True,
                       hidden=_hidden, seed=seed)
