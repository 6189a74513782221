"""Sanitizer gaps closed (issue 25, item 5): each a broken kernel, launched on two cores and broken on the last core
only, on a later tile where a tile is involved, so the finding must name the instruction, core and tile.

* ``xGm[i]`` before ``SetGlobalBuffer``: ``gm-unset`` (it was an AttributeError);
* more queue blocks allocated at once at one TPosition than the hardware's event IDs (8; 4 on 910A, ascendc_facts
  §1.2): ``queue-blocks``;
* ``EnQue`` of a tensor already in its queue: ``enque-twice``;
* a finding in the tile loop without a tensor of its own (``TBuf::Get`` too small) names the tile the core works on;
* a strided ``DataCopy`` / a multi-block ``DataCopyPad``: ``copy-unmodelled`` (it was a NotImplementedError).
"""

from __future__ import annotations

import pytest
from test_sanitizer import expect_error, last_core, run

from ascend_lab.ascendc import (
    VECCALC,
    VECIN,
    VECOUT,
    DataCopy,
    DataCopyPad,
    DataCopyParams,
    GlobalTensor,
    KernelError,
    Muls,
    TBuf,
    TPipe,
    TQue,
    float_,
    launch,
    sanitizer,
)
from ascend_lab.base.platform import get_soc


def k_index_unset(x, y, z, workspace, tiling):
    pipe = TPipe()
    q = TQue(VECIN, 1, name="inQueueX")
    pipe.InitBuffer(q, 1, 256)
    xg = GlobalTensor(float_)
    if not last_core():
        xg.SetGlobalBuffer(x, 256)
    t = q.AllocTensor(float_)
    DataCopy(t, xg[64], 64)                # indexed before SetGlobalBuffer on the last core


def test_global_tensor_indexed_before_set_global_buffer_is_gm_unset():
    e = expect_error("gm-unset", "GlobalTensor::operator[]", 1, None, kernel=k_index_unset)
    assert "SetGlobalBuffer" in str(e)


def test_global_tensor_indexed_outside_a_launch_is_gm_unset_too():
    with pytest.raises(KernelError) as info:
        GlobalTensor(float_)[3]
    assert info.value.kind == "gm-unset"


def k_positions(x, y, z, workspace, tiling, *, queues: int, blocks: int, pos=VECIN):
    """``queues`` queues of ``blocks`` blocks at one position; on the last core every block is allocated at once
    (tile by tile), elsewhere each tensor is freed before the next is allocated."""
    pipe = TPipe()
    qs = [TQue(pos, blocks, name=f"q{i}") for i in range(queues)]
    for q in qs:
        pipe.InitBuffer(q, blocks, 256)
    held = []
    for _ in range(blocks):
        for q in qs:
            t = q.AllocTensor(float_)
            if last_core():
                held.append((q, t))
            else:
                q.FreeTensor(t)
    for q, t in held:
        q.FreeTensor(t)


@pytest.mark.parametrize("soc, limit", [("Ascend910B4", 8), ("Ascend950PR", 8), ("Ascend310P3", 8),
                                         ("Ascend910A", 4)])
def test_queue_blocks_per_position_limit(soc, limit):
    assert sanitizer.queue_block_limit.__doc__
    queues = limit // 2 + 1                              # BUFFER_NUM 2: one queue too many
    e = expect_error("queue-blocks", "AllocTensor", 1, 1, kernel=k_positions, soc=soc, queues=queues, blocks=2)
    assert f"more than the {limit} event IDs" in str(e) and "VECIN" in str(e)
    # exactly the limit is fine, and so is any number of queues when each block is freed in time
    run(kernel=k_positions, soc=soc, queues=limit // 2, blocks=2)
    run(kernel=k_positions, soc=soc, queues=limit // 2, blocks=2, pos=VECOUT)
    run(kernel=k_positions, soc=soc, queues=limit, blocks=1, pos=VECCALC)


def test_queue_blocks_count_per_position_not_per_pipe():
    """VECIN and VECOUT each have their own event IDs: 4 + 4 blocks at two positions is fine on the 910A."""
    def kernel(x, y, z, workspace, tiling):
        k_positions(x, y, z, workspace, tiling, queues=2, blocks=2, pos=VECIN)
        k_positions(x, y, z, workspace, tiling, queues=2, blocks=2, pos=VECOUT)
    run(kernel=kernel, soc="Ascend910A")


def k_enque_twice(x, y, z, workspace, tiling):
    pipe = TPipe()
    q = TQue(VECIN, 2, name="inQueueX")
    pipe.InitBuffer(q, 2, 256)
    g = GlobalTensor(float_)
    g.SetGlobalBuffer(x, 256)
    for i in range(2):
        t = q.AllocTensor(float_)
        DataCopy(t, g[i * 64], 64)
        q.EnQue(t)
        if i == 1 and last_core():
            q.EnQue(t)                             # the same tensor again: depth 2 has room, the queue has it
        q.FreeTensor(q.DeQue(float_))


def test_enque_of_the_same_tensor_twice():
    e = expect_error("enque-twice", "EnQue", 1, 1, kernel=k_enque_twice)
    assert "inQueueX" in str(e) and "already holds it" in str(e)


def k_tbuf_in_loop(x, y, z, workspace, tiling):
    pipe = TPipe()
    q = TQue(VECIN, 1, name="inQueueX")
    tmp = TBuf(VECCALC, name="tmpBuf")
    pipe.InitBuffer(q, 1, 256)
    pipe.InitBuffer(tmp, 256)
    g = GlobalTensor(float_)
    g.SetGlobalBuffer(x, 256)
    for i in range(3):
        t = q.AllocTensor(float_)
        DataCopy(t, g[i * 64], 64)
        q.EnQue(t)
        t = q.DeQue(float_)
        w = tmp.Get(float_, 65 if i == 2 and last_core() else 64)     # 260 B > 256 B on tile 2
        Muls(w, t, 2.0, 64)
        q.FreeTensor(t)


def test_a_finding_in_the_tile_loop_names_the_tile():
    expect_error("tbuf-too-small", "TBuf::Get", 1, 2, kernel=k_tbuf_in_loop)


@pytest.mark.parametrize("params, api", [
    (DataCopyParams(blockCount=2, blockLen=4, srcStride=0, dstStride=0), "DataCopy"),
    (DataCopyParams(blockCount=1, blockLen=4, srcStride=2, dstStride=0), "DataCopy"),
    (DataCopyParams(blockCount=2, blockLen=128, srcStride=0, dstStride=0), "DataCopyPad"),
])
def test_unmodelled_strided_copy_is_a_finding(params, api):
    def kernel(x, y, z, workspace, tiling):
        pipe = TPipe()
        q = TQue(VECIN, 1, name="inQueueX")
        pipe.InitBuffer(q, 1, 512)
        g = GlobalTensor(float_)
        g.SetGlobalBuffer(x, 256)
        t = q.AllocTensor(float_)
        if last_core():
            (DataCopy if api == "DataCopy" else DataCopyPad)(t, g, params)
        q.FreeTensor(t)
    e = expect_error("copy-unmodelled", api, 1, None, kernel=kernel)
    assert "not modelled" in str(e)


def test_cce_kernels_are_not_held_to_the_ascendc_queue_limit():
    def kernel(x, y, z, workspace, tiling):
        k_positions(x, y, z, workspace, tiling, queues=6, blocks=2)
    launch_args = dict(kernel=kernel, soc="Ascend910A")
    with pytest.raises(KernelError):
        run(**launch_args)
    kernel.kernel_api = "cce"
    run(**launch_args)
    assert get_soc("Ascend910A").family == "ascend910" and launch       # (the 4-block SoC)
