"""plot_ub_layout on small kernels: no two labels overlap and no title is cut (issue 12 item 3).

Each figure is rendered (Agg) and every text the UB bar drew -- block labels, queue names, callouts, the
capacity note, the titles, the tick labels -- is measured with ``get_window_extent``: no two boxes intersect
and every box lies inside the figure."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from ascend_lab import standalone as sa
from ascend_lab import viz
from ascend_lab.ascendc import (
    VECCALC,
    VECIN,
    VECOUT,
    DataCopyPad,
    DataCopyParams,
    GlobalTensor,
    Muls,
    TBuf,
    TPipe,
    TQue,
)
from ascend_lab.opdev.tiling_data import TilingData, int64
from ascend_lab.viz import stepper as E
from ascend_lab.viz import style as S


class SmallTilingData(TilingData):
    totalLength: int64


class KernelManySmallBuffers:
    """Init only matters here: three queues and four TBufs of 32 B to 1 KB, as a learner's first kernel may have."""

    def __init__(self):
        self.pipe = TPipe()
        self.inQueueA = TQue(VECIN, 2)
        self.inQueueB = TQue(VECIN, 1)
        self.outQueueZ = TQue(VECOUT, 2)
        self.maskBuf = TBuf(VECCALC)
        self.tmpBuf = TBuf(VECCALC)
        self.scaleBuf = TBuf(VECCALC)
        self.idxBuf = TBuf(VECCALC)
        self.aGm = GlobalTensor(np.float32)
        self.zGm = GlobalTensor(np.float32)

    def Init(self, a, z, td):
        self.n = td.totalLength
        self.aGm.SetGlobalBuffer(a, self.n)
        self.zGm.SetGlobalBuffer(z, self.n)
        self.pipe.InitBuffer(self.inQueueA, 2, 128)
        self.pipe.InitBuffer(self.inQueueB, 1, 64)
        self.pipe.InitBuffer(self.outQueueZ, 2, 128)
        self.pipe.InitBuffer(self.maskBuf, 32)
        self.pipe.InitBuffer(self.tmpBuf, 1024)
        self.pipe.InitBuffer(self.scaleBuf, 32)
        self.pipe.InitBuffer(self.idxBuf, 64)
        return True

    def Process(self):
        a = self.inQueueA.AllocTensor(np.float32)
        DataCopyPad(a, self.aGm[0], DataCopyParams(1, self.n * 4, 0, 0))
        self.inQueueA.EnQue(a)
        a = self.inQueueA.DeQue(np.float32)
        z = self.outQueueZ.AllocTensor(np.float32)
        Muls(z, a, np.float32(2), self.n)
        self.outQueueZ.EnQue(z)
        self.inQueueA.FreeTensor(a)
        z = self.outQueueZ.DeQue(np.float32)
        DataCopyPad(self.zGm[0], z, DataCopyParams(1, self.n * 4, 0, 0))
        self.outQueueZ.FreeTensor(z)


def _small_run(ub_size=None):
    td = SmallTilingData(totalLength=32, blockDim=1, tilingKey=0)
    return viz.step_kernel(KernelManySmallBuffers, td, [np.arange(32, dtype=np.float32)], ub_size=ub_size)


def _text_boxes(fig):
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = []
    for ax in fig.axes:
        texts = [t for t in ax.texts if t.get_text().strip()]
        texts += [t for t in (ax.title, ax._left_title, ax._right_title, ax.xaxis.label) if t.get_text().strip()]
        lo, hi = ax.get_xlim()                             # tick labels outside the view are not drawn
        texts += [t for t in ax.get_xticklabels() if t.get_text().strip() and lo <= t.get_position()[0] <= hi]
        boxes += [(t.get_text(), t.get_window_extent(renderer)) for t in texts]
    return boxes


def _assert_no_overlap_and_inside(fig):
    boxes = _text_boxes(fig)
    assert boxes
    frame = fig.bbox
    for text, box in boxes:
        assert box.x0 >= frame.x0 - 0.5 and box.x1 <= frame.x1 + 0.5, f"{text!r} is cut at the side: {box}"
        assert box.y0 >= frame.y0 - 0.5 and box.y1 <= frame.y1 + 0.5, f"{text!r} is cut at the top/bottom: {box}"
    for (ta, a), (tb, b) in itertools.combinations(boxes, 2):
        w = min(a.x1, b.x1) - max(a.x0, b.x0)
        h = min(a.y1, b.y1) - max(a.y0, b.y0)
        assert w <= 0.5 or h <= 0.5, f"labels {ta!r} and {tb!r} overlap ({w:.1f} x {h:.1f} px)"
    return boxes


@pytest.mark.parametrize("ub_size", [None, 8192, 2048])
def test_small_kernel_labels_do_not_overlap(ub_size):
    steps = _small_run(ub_size)
    fig = viz.plot_ub_layout(steps)
    boxes = _assert_no_overlap_and_inside(fig)
    texts = " ".join(t for t, _ in boxes)
    for name in ("inQueueA", "inQueueB", "outQueueZ", "maskBuf", "tmpBuf", "scaleBuf", "idxBuf"):
        assert name in texts, name          # every buffer is named somewhere
    assert "KernelManySmallBuffers UB of core 0" in texts.replace("\n", " ")


def test_the_zoom_draws_small_buffers_wide_enough():
    steps = _small_run()
    fig = viz.plot_ub_layout(steps.run)
    assert len(fig.axes) == 2                              # the whole UB, then the zoom
    lo, hi = fig.axes[1].get_xlim()
    used = max(b.offset + b.size for b in steps.run.trace.ub_layout[0])
    assert lo == 0 and used <= hi < 1.1 * used
    one_block = fig.axes[1].transData.transform([(0, 0), (128, 0)])
    assert one_block[1][0] - one_block[0][0] > 40           # a 128-byte block is > 40 px wide in the zoom


@pytest.mark.parametrize("plan", [
    dict(op="hard_sigmoid_grad", n=10**6, dtype="float16"),
    dict(op="threshold_grad_v2_d", n=3000, dtype="float32", ub_size=8192),
    dict(op="hard_sigmoid_grad", n=10**6, dtype="float32", tiling_ub_size=300_000),    # over capacity
    dict(op="relu_grad", n=100, dtype="float16", soc="Ascend950PR"),
])
def test_op_layouts_do_not_overlap(plan):
    kw = dict(plan)
    fig = viz.plot_ub_layout(sa.ub_plan(kw.pop("op"), kw.pop("n"), kw.pop("dtype"), **kw))
    _assert_no_overlap_and_inside(fig)


def test_titles_fit_a_long_kernel_name():
    steps = _small_run()
    steps.run.trace.kernel = "KernelWithAVeryLongNameThatALearnerMightChooseForTheirFirstKernel" * 2
    fig = viz.plot_ub_layout(steps)
    _assert_no_overlap_and_inside(fig)


def test_stepper_ub_bar_labels_do_not_overlap():
    steps = _small_run()
    view = E.StepperView(steps.run, steps=steps)
    view.update(0, 1)
    fig = view.fig
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in view.ax_ub.texts if t.get_text().strip()]
    for (ta, a), (tb, b) in itertools.combinations(boxes, 2):
        assert min(a.x1, b.x1) - max(a.x0, b.x0) <= 0.5 or min(a.y1, b.y1) - max(a.y0, b.y0) <= 0.5, (ta, tb)
    assert S.png_bytes(fig)[:4] == b"\x89PNG"
