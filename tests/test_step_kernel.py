"""viz.step_kernel: step through a kernel written here (not a package op), tile by tile, instruction by instruction.

The records must say what the kernel did: one tile per AllocTensor round, the instructions in the order the
kernel issues them, UB byte ranges inside the buffers the kernel laid out, and values equal to what each
instruction computes (checked against numpy on the inputs, not against the simulator)."""

from __future__ import annotations

import numpy as np
import pytest

from ascend_lab import standalone as sa
from ascend_lab import viz
from ascend_lab.ascendc import (
    VECCALC,
    VECIN,
    VECOUT,
    Adds,
    DataCopyPad,
    DataCopyParams,
    GetBlockIdx,
    GlobalTensor,
    KernelError,
    Muls,
    TBuf,
    TPipe,
    TQue,
    sizeof,
)
from ascend_lab.opdev.tiling_data import GET_TILING_DATA, TilingData, int64


class AxpbTilingData(TilingData):
    totalLength: int64
    blockLength: int64
    tileLength: int64


class KernelAxpb:
    """y = x * 3 + 1 in float32, double-buffered, with a TBuf for x * 3 (a learner-style kernel class)."""

    def __init__(self, T=np.float32, buffer_num=2):
        self.T = np.dtype(T)
        self.bn = buffer_num
        self.pipe = TPipe()
        self.inQueueX = TQue(VECIN, buffer_num)
        self.outQueueY = TQue(VECOUT, buffer_num)
        self.tmpBuf = TBuf(VECCALC)
        self.xGm = GlobalTensor(self.T)
        self.yGm = GlobalTensor(self.T)

    def Init(self, x, y, td):
        start = GetBlockIdx() * td.blockLength
        self.length = min(td.blockLength, td.totalLength - start)
        self.tile = td.tileLength
        self.xGm.SetGlobalBuffer(x + start * sizeof(self.T), self.length)
        self.yGm.SetGlobalBuffer(y + start * sizeof(self.T), self.length)
        self.pipe.InitBuffer(self.inQueueX, self.bn, self.tile * sizeof(self.T))
        self.pipe.InitBuffer(self.outQueueY, self.bn, self.tile * sizeof(self.T))
        self.pipe.InitBuffer(self.tmpBuf, self.tile * sizeof(self.T))
        return self.length > 0

    def Process(self):
        tiles = -(-self.length // self.tile)
        for i in range(tiles):
            n = min(self.tile, self.length - i * self.tile)
            self.CopyIn(i, n)
            self.Compute(n)
            self.CopyOut(i, n)

    def CopyIn(self, i, n):
        x = self.inQueueX.AllocTensor(self.T)
        DataCopyPad(x, self.xGm[i * self.tile], DataCopyParams(1, n * sizeof(self.T), 0, 0))
        self.inQueueX.EnQue(x)

    def Compute(self, n):
        x = self.inQueueX.DeQue(self.T)
        y = self.outQueueY.AllocTensor(self.T)
        tmp = self.tmpBuf.Get(self.T)
        Muls(tmp, x, self.T.type(3.0), n)
        Adds(y, tmp, self.T.type(1.0), n)
        self.outQueueY.EnQue(y)
        self.inQueueX.FreeTensor(x)

    def CopyOut(self, i, n):
        y = self.outQueueY.DeQue(self.T)
        DataCopyPad(self.yGm[i * self.tile], y, DataCopyParams(1, n * sizeof(self.T), 0, 0))
        self.outQueueY.FreeTensor(y)


def axpb_entry(x, y, workspace, tiling, *, kernel=KernelAxpb, buffer_num=2):
    """A __global__ entry in the labs' style: the kernel class and BUFFER_NUM come as template arguments."""
    td = GET_TILING_DATA(AxpbTilingData, tiling)
    op = kernel(np.float32, buffer_num)
    if op.Init(x, y, td):
        op.Process()


N, TILE, CORES = 200, 64, 2          # core 0: 100 elements = tiles of 64 and 36; core 1 the same
TD = AxpbTilingData(totalLength=N, blockLength=N // CORES, tileLength=TILE, blockDim=CORES, tilingKey=0)
X = (np.arange(N, dtype=np.float32) - 50.5) / np.float32(7)
ORDER = [("MTE2", "DataCopyPad"), ("V", "Muls"), ("V", "Adds"), ("MTE3", "DataCopyPad")]


@pytest.fixture(scope="module")
def steps() -> viz.KernelSteps:
    return viz.step_kernel(KernelAxpb, TD, [X], soc="Ascend910B4", core=1, names=("x", "y"))


def _core_slice(core: int) -> np.ndarray:
    return X[core * (N // CORES):(core + 1) * (N // CORES)]


def test_tiles_and_instruction_order(steps):
    per_core = N // CORES
    assert steps.tiles == -(-per_core // TILE) == 2
    for t in range(steps.tiles):
        recs = steps.records(t)
        assert [(r.pipe, r.instr) for r in recs] == ORDER
        assert [r.step for r in recs] == list(range(len(ORDER)))
        n = min(TILE, per_core - t * TILE)
        assert all(r.count == n for r in recs), [r.count for r in recs]
    # queue calls between them, in AscendC's order for the copy-in side of a tile
    names = [(r.instr, r.buffer) for r in steps.records(0, queue_ops=True)]
    assert names[:3] == [("AllocTensor", "inQueueX[0]"), ("DataCopyPad", "inQueueX[0]"), ("EnQue", "inQueueX[0]")]
    assert ("FreeTensor", "outQueueY[0]") in names


def test_ub_ranges_lie_inside_the_buffers(steps):
    layout = {b.name: b for b in steps.run.trace.ub_layout[1]}
    assert set(layout) == {"inQueueX[0]", "inQueueX[1]", "outQueueY[0]", "outQueueY[1]", "tmpBuf"}
    for r in steps.records(queue_ops=True):
        if r.ub is None:
            continue
        b = layout[r.buffer]
        assert b.offset <= r.ub[0] < r.ub[1] <= b.offset + b.size, (r, b)
        if r.step is not None:
            assert r.nbytes == r.count * 4
            # DataCopyPad into UB fills whole 32-byte blocks (the pad); everything else touches exactly its bytes
            assert r.ub[1] - r.ub[0] == (-(-r.nbytes // 32) * 32 if r.pipe == "MTE2" else r.nbytes), r
    # double buffering: tile 0 in block [0], tile 1 in block [1]
    assert [r.buffer for r in steps.records() if r.pipe == "MTE2"] == ["inQueueX[0]", "inQueueX[1]"]


def test_values_are_what_each_instruction_computes(steps):
    x = _core_slice(1)
    for t in range(steps.tiles):
        xs = x[t * TILE:(t + 1) * TILE]
        copy_in, muls, adds, copy_out = steps.records(t)
        np.testing.assert_array_equal(copy_in.values, xs)
        three_x = xs * np.float32(3)                        # float32 products, rounded once
        np.testing.assert_array_equal(muls.values, three_x)
        np.testing.assert_array_equal(adds.values, three_x + np.float32(1))
        np.testing.assert_array_equal(copy_out.values, adds.values)
    # only core 1 ran: its half of the output is written, core 0's still holds the 0xFF fill
    out = steps.output.view(np.uint32)
    assert (out[: N // CORES] == 0xFFFFFFFF).all()
    np.testing.assert_array_equal(steps.output[N // CORES:], x * np.float32(3) + np.float32(1))


def test_table_lists_every_record(steps):
    text = steps.table()
    lines = text.splitlines()
    assert lines[0].startswith("KernelAxpb on Ascend910B4, core 1: 2 tiles, 8 copy/vector instructions")
    assert lines[1].split() == ["tile", "step", "instr", "pipe", "buffer", "UB", "bytes", "bytes", "values"]
    assert len(lines) == 2 + 8
    first = steps.records(0)[1]
    assert f"[{first.ub[0]}, {first.ub[1]})" in lines[3] and "Muls" in lines[3] and "tmpBuf" in lines[3]
    assert str(first.values[0]) in lines[3]
    assert len(steps.table(queue_ops=True).splitlines()) > len(lines)
    assert "<table" in steps._repr_html_()
    rows = steps.rows(tile=1)
    assert [r["instr"] for r in rows] == [i for _, i in ORDER] and rows[0]["bytes"] == (N // CORES - TILE) * 4


def test_entry_function_with_template_arguments():
    one = viz.step_kernel(axpb_entry, TD, {"x": X}, soc="Ascend950PR", core=0, buffer_num=1)
    assert {b.name for b in one.run.trace.ub_layout[0]} == {"inQueueX[0]", "outQueueY[0]", "tmpBuf"}
    assert [r.buffer for r in one.records() if r.pipe == "MTE2"] == ["inQueueX[0]", "inQueueX[0]"]
    np.testing.assert_array_equal(one.records(1)[2].values, _core_slice(0)[TILE:] * np.float32(3) + np.float32(1))


def _widgets(w):
    yield w
    for child in getattr(w, "children", ()):
        yield from _widgets(child)


def test_pictures_of_your_kernel(steps):
    view = steps.view()
    row = view.update(1, 2)
    assert row.instr == "Adds" and row.buffer.startswith("outQueueY")
    assert view.lanes.bars[view.index[1][2]].ub == steps.at(1, 2).ub
    assert view.png(fast=True)[:4] == b"\x89PNG"
    box = steps.widget(static=True)
    images = [w for w in _widgets(box) if type(w).__name__ == "Image"]
    assert len(images) == steps.tiles * len(ORDER) and images[0].value[:4] == b"\x89PNG"
    fig = steps.plot_ub_layout()
    assert "core 1" in fig.axes[0].get_title(loc="left")
    # occupancy: the TBuf always, each queue block (one in, one out per tile) from its AllocTensor to its FreeTensor;
    # at its peak the core holds the TBuf and at least one block
    occ = viz.occupancy(steps.run, 1)
    assert occ.static_bytes == TILE * 4 and len(occ.intervals) == 2 * steps.tiles
    assert occ.peak >= TILE * 4 * 2
    assert steps.plot_ub_occupancy().axes and steps.plot_pipeline().axes


def test_bad_arguments_say_what_to_fix():
    with pytest.raises(ValueError, match=r"core must be in \[0, 2\)"):
        viz.step_kernel(KernelAxpb, TD, [X], core=2)
    with pytest.raises(TypeError, match="TilingData"):
        viz.step_kernel(KernelAxpb, {"blockDim": 1}, [X])
    with pytest.raises(TypeError, match="Init and Process"):
        sa.entry_run(int, TD, [X])
    with pytest.raises(ValueError, match="at least one"):
        viz.step_kernel(KernelAxpb, TD, [])
    with pytest.raises(ValueError, match="steps 0..3"):
        viz.step_kernel(KernelAxpb, TD, [X]).at(0, 4)


class KernelOverrun(KernelAxpb):
    def Compute(self, n):
        x = self.inQueueX.DeQue(self.T)
        y = self.outQueueY.AllocTensor(self.T)
        Muls(y, x, self.T.type(3.0), n + 8)          # 8 elements past the block: into outQueueY[1]
        self.outQueueY.EnQue(y)
        self.inQueueX.FreeTensor(x)


def test_a_finding_in_your_kernel_raises():
    with pytest.raises(KernelError) as info:
        viz.step_kernel(KernelOverrun, AxpbTilingData(totalLength=128, blockLength=128, tileLength=64, blockDim=1,
                                                      tilingKey=0), [X[:128]])
    assert info.value.kind == "ub-overrun"


def test_the_stepper_names_the_cxx_line_of_each_instruction_of_a_cxx_kernel():
    """A C++ kernel's trace carries each instruction's C++ (file, line): the stepper's records and table show it,
    and the line's text is the call that issued the instruction."""
    steps = viz.KernelSteps(sa.stepper_run(), 0)           # the experimental HardSigmoidGrad (C++) on one core
    recs = steps.records(0)
    assert recs and all(r.line is not None for r in recs)
    for r in recs:
        assert r.where.split(":")[0].endswith(".h")
        if r.pipe == "V":
            assert r.code.startswith(r.instr + "("), (r.instr, r.code)
    table = steps.table(0)
    assert "C++" in table.splitlines()[1] and recs[0].where in table
