"""Every figure, animation and explorer of ascend_lab.viz drawn headless (Agg).

Checked: each figure renders to a non-blank PNG no wider than the book's page with no text under 8 pt,
without warnings (a warning is stderr, which fails the book build) and without leaving pyplot figures open;
each animation's page HTML embeds the expected number of frames, stays under 2 MB, makes no external
request and is byte-identical when rebuilt; the static explorers hold at most 25 states; the live explorers
redraw when a control changes. ``import ascend_lab`` must not import matplotlib.
"""

from __future__ import annotations

import io
import subprocess
import sys
import warnings

import matplotlib

matplotlib.use("Agg")

import ipywidgets as W
import numpy as np
import pytest
from matplotlib.figure import Figure
from matplotlib.text import Text
from PIL import Image

import ascend_lab as al
from ascend_lab import explore as E
from ascend_lab import standalone as sa
from ascend_lab import tiling, viz
from ascend_lab.viz import data as D
from ascend_lab.viz import html as H
from ascend_lab.viz import style as S

UB_A2 = 196608


@pytest.fixture(scope="module")
def run6():
    """Core 0 of HardSigmoidGrad fp16 with a 32 KB UB on the 950: several tiles to pipeline."""
    run, note = sa.pipeline_run("hard_sigmoid_grad", 9000, "float16", "Ascend950PR", ub_size=32768, core_num=1)
    return run


@pytest.fixture(scope="module")
def snap():
    g = np.linspace(-1, 1, 128).astype(np.float32)
    x = np.linspace(-4, 4, 128).astype(np.float32)
    run, _ = sa.run_kernel("hard_sigmoid_grad", g, x, snapshot=True, core_num=1)
    return run


def check_png(data: bytes, min_w: int = 200, min_h: int = 100) -> Image.Image:
    img = Image.open(io.BytesIO(data))
    assert img.format == "PNG" and img.width >= min_w and img.height >= min_h
    assert np.unique(np.asarray(img.convert("L"))).size > 8, "image is (nearly) blank"
    return img


def check_figure(fig: Figure) -> None:
    assert isinstance(fig, Figure)
    assert fig.get_figwidth() <= S.PAGE_WIDTH + 1e-9
    check_png(S.png_bytes(fig))
    for t in fig.findobj(Text):
        if t.get_text().strip() and t.get_visible():
            assert t.get_fontsize() >= 8, f"{t.get_text()!r} is {t.get_fontsize()} pt"


@pytest.fixture(autouse=True)
def no_warnings_no_pyplot():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield
    if "matplotlib.pyplot" in sys.modules:
        assert sys.modules["matplotlib.pyplot"].get_fignums() == []


# --- figures -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda: viz.plot_tile_map(tiling.hard_sigmoid_grad(10**6, "float32", core_num=40, ub_size=UB_A2)),
    lambda: viz.plot_tile_map(tiling.threshold_grad_v2_d(300_001, "int8", core_num=40, ub_size=UB_A2), "int8",
                              300_001),
    lambda: viz.plot_tile_map(tiling.threshold_grad_v2_d(1000, "float16", core_num=4, ub_size=UB_A2), "float16", 1000),
    lambda: viz.plot_tile_map(tiling.threshold_grad_v2_d(2 * 10**8, "float32", core_num=40, ub_size=UB_A2), "float32",
                              2 * 10**8),
    lambda: viz.plot_ub_layout(sa.ub_plan("hard_sigmoid_grad", 100_000, "bfloat16")),
    lambda: viz.plot_ub_layout(sa.ub_plan("threshold_grad_v2_d", 100_000, "int8", buffer_num=4)),
    lambda: viz.plot_dtype_tables(),
    lambda: viz.plot_support(),
    lambda: viz.plot_l0_graph(al.hardsigmoid_backward(np.zeros(4, np.float16), np.zeros(4, np.float32))),
    lambda: viz.plot_l0_graph(al.threshold_backward(np.zeros((2, 1), np.float32), np.zeros((2, 3), np.float32), 0.0)),
    lambda: viz.plot_l0_graph(al.hardsigmoid_backward(np.zeros(4, np.int8), np.zeros(4, np.int8))),
], ids=["tile-hsg", "tile-tg-big-small", "tile-tg-padding", "tile-28680-tiles", "ub", "ub-overflow", "dtypes",
        "support", "l0-cast", "l0-broadcast-relu", "l0-error"])
def test_static_figures(make):
    check_figure(make())


def test_trace_figures(run6, snap):
    x = np.linspace(-4, 4, 3000).astype(np.float16)
    three, _ = sa.run_kernel("hard_sigmoid_grad", x, x, core_num=3)
    assert len(D.lanes(three).cores) == 3
    check_figure(viz.plot_pipeline(three))
    check_figure(viz.plot_ub_occupancy(run6))
    check_figure(viz.plot_pipeline(run6, note="core 0"))
    check_figure(viz.plot_ub_layout(run6))
    check_figure(viz.plot_mask_steps(snap))


def test_buffer_num_figure():
    fig = viz.plot_buffer_num(sa.buffer_num_study("hard_sigmoid_grad", 9000, "float16", "Ascend950PR", ub_size=32768,
                                                  core_num=1))
    check_figure(fig)
    assert "speed-up x" in fig.get_suptitle()


def test_figures_show_themselves_once_in_jupyter():
    fig = viz.plot_dtype_tables()
    png, metadata = fig._repr_png_()            # the PNG and its alt text, from the figure's own titles and labels
    check_png(png)
    assert metadata["alt"].startswith("Figure: ") and len(metadata["alt"]) > 20, metadata


# --- animations ------------------------------------------------------------------------------------------------------
def html_of(anim) -> str:
    return H.anim_html(anim).data


def check_anim_html(html: str, frames: int) -> None:
    assert H.frame_count(html) == frames
    assert len(html.encode()) <= H.MAX_BYTES
    assert "<link" not in html and "maxcdn" not in html and "https://" not in html


def test_pipeline_animation(run6):
    html = html_of(viz.animate_pipeline(run6, frames=8))
    check_anim_html(html, 8)


def test_ub_animation(run6):
    occ = D.occupancy(run6)
    changes = {0.0, occ.makespan} | {iv.t0 for iv in occ.intervals} | {iv.t1 for iv in occ.intervals}
    assert len(changes) > 8              # more alloc/free instants than frames: evenly spaced frames instead
    check_anim_html(html_of(viz.animate_ub(run6, frames=8)), 8)


def test_mask_animation_is_deterministic():
    f = np.linspace(-2, 2, 64).astype(np.float32)
    run, _ = sa.run_kernel("threshold_grad_v2_d", f, f, threshold=0.5, snapshot=True, core_num=1)
    rows = len(D.mask_steps(run))
    first, second = html_of(viz.animate_mask_steps(run)), html_of(viz.animate_mask_steps(run))
    check_anim_html(first, rows)
    assert first == second


def test_animation_limits(run6):
    with pytest.raises(ValueError, match="frames"):
        viz.animate_pipeline(run6, frames=61)
    anim = viz.animate_pipeline(run6, frames=4)
    with pytest.raises(ValueError, match="MB"):
        H.anim_html(anim, max_bytes=1000)


# --- static sliders and explorers -------------------------------------------------------------------------------------
def widgets_of(w, kind):
    out = [w] if isinstance(w, kind) else []
    for child in getattr(w, "children", ()):
        out += widgets_of(child, kind)
    return out


def test_static_slider_limits_and_links():
    png = S.png_bytes(viz.plot_dtype_tables(), dpi=30)
    box = viz.static_slider([png, png, png], ["a", "b", "c"], "state")
    assert len(widgets_of(box, W.Image)) == 3 and len(widgets_of(box, W.SelectionSlider)) == 1
    grid = viz.static_slider([[png, png], [png, png]], (["x", "y"], ["1", "2"]), ("first", "second"))
    assert len(widgets_of(grid, W.Stack)) == 3 and len(widgets_of(grid, W.SelectionSlider)) == 2
    with pytest.raises(ValueError, match="25"):
        viz.static_slider([png] * 26, [str(i) for i in range(26)])


def test_tiling_explorer_static():
    box = viz.tiling_explorer(static=True, ns=(1000, 10**6), buffer_nums=(1, 2, 4))
    images = widgets_of(box, W.Image)
    assert len(images) == 6
    for img in images:
        check_png(img.value)
    assert sum(len(i.value) for i in images) < 2_000_000


def test_tiling_explorer_live_redraws():
    box = viz.tiling_explorer(n=10**6)
    image = widgets_of(box, W.Image)[0]
    before = image.value
    check_png(before)
    n_box = next(w for w in widgets_of(box, W.BoundedIntText) if w.description.startswith("N"))
    n_box.value = 12_345
    assert image.value != before
    op = next(w for w in widgets_of(box, W.Dropdown) if w.description == "op")
    op.value = "threshold_grad_v2_d"
    dtype = next(w for w in widgets_of(box, W.Dropdown) if w.description == "dtype")
    assert "int8" in dtype.options
    check_png(image.value)


def test_tiling_view_reports_a_refused_tiling():
    view = E.TilingView()
    state = view.update("threshold_grad_v2_d", "float32", "Ascend910B4", 1000, ub_size=1024)
    assert "error" in state
    check_png(view.png())


def test_validation_playground_static_and_live():
    static = viz.validation_playground(static=True)
    cards = widgets_of(static, W.HTML)
    assert len(cards) == len(E.PRESET_CASES) <= 25
    assert any("161002" in c.value for c in cards) and any("ReluGrad" in c.value for c in cards)
    live = viz.validation_playground()
    card = [w for w in widgets_of(live, W.HTML)][-1]
    assert "<b style='color:var(--ascend-pass, #2b7a2b)'>0</b>" in card.value
    grad = next(w for w in widgets_of(live, W.Dropdown) if w.description == "grad dtype")
    grad.value = "int8"
    assert "161002" in card.value and "dtype support list" in card.value


def test_kernel_stepper_static_and_live():
    static = viz.kernel_stepper(static=True)
    images = widgets_of(static, W.Image)
    sliders = widgets_of(static, W.SelectionSlider)
    tiles, steps = len(sliders[0].options), len(sliders[1].options)
    assert (tiles, steps) == (2, 10) and len(images) == tiles * steps <= 25
    check_png(images[0].value)
    live = viz.kernel_stepper()
    image = widgets_of(live, W.Image)[0]
    before = image.value
    step = next(w for w in widgets_of(live, W.IntSlider) if w.description == "instruction")
    step.value = 5
    assert image.value != before


def test_bench_explorer_update_runs():
    from benchmarks.bench_viz import bench_explorer_update
    r = bench_explorer_update(repeats=2)
    assert len(r["times_ms"]) == 2 and r["median_ms"] > 0


def test_import_ascend_lab_does_not_import_matplotlib():
    code = "import sys, ascend_lab; print('matplotlib' in sys.modules, 'ipywidgets' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
