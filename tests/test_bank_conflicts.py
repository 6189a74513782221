"""UB bank conflicts (ascendc.ub_banks, kernel_flavours §7): the guide's examples, the cost they add, the trace.

Every expected beat count below is one the AscendC guide states for its example addresses (避免bank冲突 2201 /
3510) or the add_high_performance case study's layouts; the cost side is recomputed from the model's formula.
"""

from __future__ import annotations

import numpy as np
import pytest

from ascend_lab.ascendc import (
    CMPMODE,
    SELMODE,
    VECCALC,
    VECIN,
    VECOUT,
    Add,
    Cast,
    CompareScalar,
    DataCopy,
    Duplicate,
    GlobalTensor,
    Select,
    TBuf,
    TPipe,
    TQue,
    half,
    launch,
    ub_banks,
)
from ascend_lab.ascendc.cost_model import compare_row, vector_cycles, without_bank_conflicts
from ascend_lab.ascendc.numerics import RoundMode
from ascend_lab.ascendc.ub_banks import Access, instruction_beats, repeat_beats
from ascend_lab.base.platform import NpuArch, get_soc, socs
from ascend_lab.ops.common.kernel_args import gm_from_array

A2, A5 = NpuArch.DAV_2201, NpuArch.DAV_3510


# --- DAV_2201 (A2/A3): the guide's address examples ------------------------------------------------------------
@pytest.mark.parametrize("addr, bank", [(0x10000, 16), (0x10020, 17), (0x10E20, 17), (0x20020, 33)])
def test_a2_address_to_bank_examples(addr, bank):
    lay = ub_banks.layout(A2)
    assert lay.bank(addr) == bank
    assert lay.group(addr) == bank % 16                  # bank 15, 31 and 47 form one group
    assert lay.groups * lay.banks_per_group * lay.bank_bytes == 192 * 1024


def test_a2_read_write_conflict_is_one_bank():
    assert repeat_beats(A2, [0x10020], [0x10000]) == 1    # bank 17 read, bank 16 written: no conflict
    assert repeat_beats(A2, [0x10020], [0x10E20]) == 2    # both bank 17: serialised
    assert repeat_beats(A2, [0x10020], [0x20020]) == 1    # one group, different banks: one read + one write per beat


def test_a2_read_read_conflict_is_one_group():
    assert repeat_beats(A2, [0x10020, 0x20020]) == 2      # banks 17 and 33: one group
    assert repeat_beats(A2, [0x10020, 0x10000]) == 1      # groups 1 and 0


@pytest.mark.parametrize("write", [True, False])
@pytest.mark.parametrize("block_stride, beats", [(16, 8), (8, 4), (1, 1)])
def test_a2_blocks_of_one_repeat(block_stride, beats, write):
    """dst 0x1FE00: block stride 16 (512 B) puts the 8 blocks of a repeat in one group -> 8 beats; stride 8 puts
    blocks 0 and 2 together -> 4 beats (the guide's write-write table; its single-source read-read table alike)."""
    acc = Access(0x1FE00, write, 8, block_stride * 32, 256)
    assert instruction_beats(A2, 1, (acc,)).beats == beats


def test_a2_add_case_study_layouts():
    """add_high_performance case 5 vs 6: x at 0, z at 128 KB, y right after x. 16384 half per buffer puts y 32 KB
    after x (512-B multiple): every repeat reads two blocks per group -> 2 beats. 16256 half moves y 256 B down,
    onto the other 8 groups -> 1 beat, the documented fix (12.846 us -> 6.954 us of vector time)."""
    def add(n, y_at):
        return ub_banks.count_form(A2, 128, n, ((128 * 1024, 16, True), (0, 16, False), (y_at, 16, False)))
    before, after = add(16384, 16384 * 2), add(16256, 16256 * 2)
    assert before.repeats == 128 and before.beats == 256 and before.per_repeat == 2.0
    assert after.repeats == 127 and after.conflicts == 0
    # the fix is the 256-byte offset, not the shorter tile
    assert add(16256, 16256 * 2 + 256).per_repeat == 2.0


# --- DAV_3510 (950) ------------------------------------------------------------------------------------------------
def test_950_layout_is_low_order_interleaved():
    lay = ub_banks.layout(A5)
    assert lay.groups * lay.banks_per_group * lay.bank_bytes == 256 * 1024
    assert [lay.group(a) for a in (0x0, 0x20, 0xE0, 0x100, 0x4000, 0x4100)] == [0, 1, 7, 0, 0, 0]
    assert lay.bank(0x0) == lay.bank(0x4000) != lay.bank(0x4100)


def test_950_rules():
    assert repeat_beats(A5, [0x0], [0x4000]) == 2             # table 1 ex. 1: read and write in one bank
    assert repeat_beats(A5, [0x0], [0x4100]) == 1             # table 1 ex. 2: same group, other bank
    assert repeat_beats(A5, [0x0, 0x4000], [0x8000]) == 3     # table 2 ex. 1: one bank read twice and written
    assert repeat_beats(A5, [0x0, 0x0], [0x4100]) == 1        # table 2 ex. 2: same start address read once
    assert repeat_beats(A5, [], [0x0, 0x4100]) == 2           # table 3: two writes in one group
    assert repeat_beats(A5, [0x0, 0x4000]) == 2               # table 4: two reads in one bank
    assert repeat_beats(A5, [0x0, 0x4100]) == 1               # two reads, one group, two banks: allowed
    assert repeat_beats(A5, [0x0, 0x4100, 0x8100]) == 2       # three reads in one group: more than 2
    # table 2 ex. 3 (src1 0x4100, dst 0x8900 share a bank): the guide calls it conflict-free against its own rule;
    # the model follows the rule (module docstring)
    assert repeat_beats(A5, [0x0, 0x4100], [0x8900]) == 2


def test_950_two_sources_and_a_write_need_two_beats_unless_the_reads_overlap():
    """Every group gets 2 reads + 1 write per repeat of a binary instruction: 2 beats at best (the guide: 读/写口不足),
    3 if both sources sit in one bank; a unary instruction is conflict-free when src and dst are in other banks."""
    def beats(*ops):
        return ub_banks.count_form(A5, 64, 4096, ops).per_repeat
    assert beats((0x10000, 32, True), (0x0, 32, False), (0x4100, 32, False)) == 2.0
    assert beats((0x10000, 32, True), (0x0, 32, False), (0x4000, 32, False)) == 3.0
    assert beats((0x10000, 32, True), (0x0, 32, False), (0x0, 32, False)) == 2.0   # merged reads; dst shares x's bank
    assert beats((0x10100, 32, True), (0x0, 32, False), (0x0, 32, False)) == 1.0
    assert beats((0x10100, 32, True), (0x0, 32, False)) == 1.0
    assert beats((0x0, 32, True), (0x0, 32, False)) == 2.0        # in place: read and write in one bank


# --- other SoCs: no source, no conflicts -----------------------------------------------------------------------------
@pytest.mark.parametrize("soc", ["Ascend910A", "Ascend310P3"])
def test_socs_without_a_bank_source_model_no_conflicts(soc):
    arch = get_soc(soc).npu_arch
    assert ub_banks.layout(arch) is None
    assert repeat_beats(arch, [0x0, 0x4000], [0x0]) == 1
    assert ub_banks.count_form(arch, 64, 4096, ((0, 32, True), (0, 32, False), (0, 32, False))).conflicts == 0


def test_every_catalogue_soc_has_a_stated_rule():
    modelled = {get_soc(s).npu_arch for s in socs()} & ub_banks.MODELLED
    assert modelled == {A2, A5}


# --- the period machinery agrees with repeat-by-repeat counting -------------------------------------------------------
def _brute(arch, lanes, count, ops):
    """Beats of every repeat from explicit block addresses (repeat_beats), summed."""
    total = 0
    repeats = -(-count // lanes)
    for r in range(repeats):
        n = min(lanes, count - r * lanes)
        reads, writes = [], []
        for off, bits, write in ops:
            stride = lanes * bits // 8
            start = off + r * stride
            nbytes = -(-n * bits // 8)
            blocks = sorted({(start + j) // 32 * 32 for j in range(0, nbytes, 32)} | {(start + nbytes - 1) // 32 * 32})
            (writes if write else reads).extend(blocks)
        total += repeat_beats(arch, reads, writes)
    return total


@pytest.mark.parametrize("arch", [A2, A5])
@pytest.mark.parametrize("seed", range(12))
def test_periodic_sum_matches_repeat_by_repeat(arch, seed):
    rng = np.random.default_rng(seed)
    width = int(rng.choice([2, 4]))
    lanes = 256 // width
    count = int(rng.integers(1, 300)) * lanes // 4 + int(rng.integers(0, lanes))
    # three operands in distinct 24 KB slots (disjoint, as real operands are), 256-B aligned anywhere in the first 4 KB
    base = [int(slot) * 24576 + int(rng.integers(0, 16)) * 256 for slot in rng.choice(8, 3, replace=False)]
    ops = ((base[0], width * 8, True), (base[1], width * 8, False), (base[2], 1, False))   # + a bit-mask read
    got = ub_banks.count_form(arch, lanes, count, ops)
    assert got.repeats == -(-count // lanes)
    assert got.beats == _brute(arch, lanes, count, ops)


def test_a2_bank_rows_follow_the_repeats_across_64kb():
    """dst 32 KB after src in place of the group: read and write share a bank while both are below 64 KB, then not."""
    n = 32768 // 4 * 2                                # 64 KB of float: src 0..64K, dst 32K..96K
    got = ub_banks.count_form(A2, 64, n, ((32768, 32, True), (0, 32, False)))
    assert got.repeats == 256 and got.beats == 256 + 128    # the first 128 repeats conflict


# --- a vector instruction: its event records the conflicts, its cycles grow ------------------------------------------
def k_add(x, y, z, workspace, tiling, *, n, y_at, z_at):
    """z = x + y with x at UB 0, y at ``y_at`` and z at ``z_at`` (gaps are TBufs)."""
    pipe = TPipe()
    qx, qy, qz = TQue(VECIN, 1, name="x"), TQue(VECIN, 1, name="y"), TQue(VECOUT, 1, name="z")
    pipe.InitBuffer(qx, 1, n * 2)
    if y_at > n * 2:
        pipe.InitBuffer(TBuf(VECCALC, name="gap0"), y_at - n * 2)
    pipe.InitBuffer(qy, 1, n * 2)
    if z_at > y_at + n * 2:
        pipe.InitBuffer(TBuf(VECCALC, name="gap1"), z_at - y_at - n * 2)
    pipe.InitBuffer(qz, 1, n * 2)
    gx, gy, gz = GlobalTensor(half), GlobalTensor(half), GlobalTensor(half)
    for g, a in ((gx, x), (gy, y), (gz, z)):
        g.SetGlobalBuffer(a, n)
    tx, ty = qx.AllocTensor(half), qy.AllocTensor(half)
    DataCopy(tx, gx, n)
    DataCopy(ty, gy, n)
    qx.EnQue(tx)
    qy.EnQue(ty)
    tx, ty = qx.DeQue(half), qy.DeQue(half)
    tz = qz.AllocTensor(half)
    Add(tz, tx, ty, n)
    qz.EnQue(tz)
    qx.FreeTensor(tx)
    qy.FreeTensor(ty)
    tz = qz.DeQue(half)
    DataCopy(gz, tz, n)
    qz.FreeTensor(tz)


def run_add(n, y_at, z_at, soc="Ascend910B1"):
    a = np.arange(n, dtype=np.float16)
    args = [gm_from_array(a, "x"), gm_from_array(a, "y"), gm_from_array(np.zeros(n, np.float16), "z")]
    run = launch(k_add, 1, args, b"", get_soc(soc), outputs=(2,), record=True, n=n, y_at=y_at, z_at=z_at)
    out = args[2].ptr.allocation.buffer[:n * 2].view(np.float16)
    np.testing.assert_array_equal(out, a + a)
    return next(e for e in run.trace.events if e.instr == "Add"), run


def test_add_event_records_conflicts_and_costs_them():
    n = 16384
    bad, run_bad = run_add(n, 2 * n, 128 * 1024)            # case 5 layout: 2 beats per repeat
    good, run_good = run_add(n, 2 * n + 256, 128 * 1024)    # y 256 B further: 1 beat
    repeats = n * 2 // 256
    assert bad.bank_conflicts == repeats and good.bank_conflicts == 0
    assert good.end - good.start == pytest.approx(vector_cycles("Add", 2, n))
    assert bad.end - bad.start == pytest.approx(vector_cycles("Add", 2, n, 2.0))
    k_b = vector_cycles("Add", 2, n) - vector_cycles("Add", 2, 0)
    assert (bad.end - bad.start) - (good.end - good.start) == pytest.approx(k_b)   # the k*n part doubled, b kept
    assert run_bad.trace.cores[0].busy["V"] > run_good.trace.cores[0].busy["V"]
    # the copies do not see banks
    assert [e.end - e.start for e in run_bad.trace.events if e.pipe != "V"] == \
        pytest.approx([e.end - e.start for e in run_good.trace.events if e.pipe != "V"])


def test_no_conflicts_on_a_soc_without_a_bank_model():
    ev, _ = run_add(4096, 8192, 16384, soc="Ascend910A")
    assert ev.bank_conflicts == 0 and ev.end - ev.start == pytest.approx(vector_cycles("Add", 2, 4096))


def test_without_bank_conflicts_costs_every_repeat_one_beat():
    with without_bank_conflicts():
        free, _ = run_add(16384, 2 * 16384, 128 * 1024)
    assert free.bank_conflicts == 0 and free.end - free.start == pytest.approx(vector_cycles("Add", 2, 16384))
    again, _ = run_add(16384, 2 * 16384, 128 * 1024)            # back on once the block ends
    assert again.bank_conflicts == 16384 * 2 // 256


# --- every operand an instruction touches is counted -------------------------------------------------------------
def k_ops(a, workspace, tiling, *, n, at):
    """Cast, CompareScalar and a tensor-tensor Select on sub-tensors of one TBuf at the byte offsets ``at``."""
    pipe = TPipe()
    buf = TBuf(VECCALC, name="buf")
    pipe.InitBuffer(buf, 96 * 1024)
    raw = buf.Get(np.uint8)
    h = raw[at["h"]].ReinterpretCast(half)
    f0, f1, f2 = (raw[at[k]].ReinterpretCast(np.float32) for k in ("f0", "f1", "f2"))
    m = raw[at["m"]]
    Duplicate(h, 1.5, n)
    Duplicate(f1, 2.0, n)
    Cast(f0, h, RoundMode.CAST_NONE, n)
    CompareScalar(m, f0, 1.0, CMPMODE.GT, n)
    Select(f2, m, f0, f1, SELMODE.VSEL_TENSOR_TENSOR_MODE, n)


@pytest.mark.parametrize("soc", ["Ascend910B4", "Ascend950PR"])
@pytest.mark.parametrize("layout", [
    {"h": 0, "f0": 8192, "f1": 16384, "f2": 32768, "m": 49152},          # everything 512-B aligned: conflicts
    {"h": 256, "f0": 8192 + 256, "f1": 16384, "f2": 65536 + 256, "m": 49152 + 64},
])
def test_each_instruction_counts_all_its_operands(soc, layout):
    n = 1024
    args = [gm_from_array(np.zeros(8, np.float32), "a")]
    run = launch(k_ops, 1, args, b"", get_soc(soc), outputs=(), record=True, n=n, at=layout)
    arch = get_soc(soc).npu_arch
    ev = {e.instr: e for e in run.trace.events if e.pipe == "V" and e.instr != "Duplicate"}
    want = {
        "Cast": ub_banks.count_form(arch, 64, n, ((layout["f0"], 32, True), (layout["h"], 16, False))),
        "CompareScalar": ub_banks.count_form(arch, 64, n, ((layout["m"], 1, True), (layout["f0"], 32, False))),
        "Select": ub_banks.count_form(arch, 64, n, ((layout["f2"], 32, True), (layout["f0"], 32, False),
                                                    (layout["f1"], 32, False), (layout["m"], 1, False))),
    }
    assert set(ev) == set(want)
    for instr, beats in want.items():
        assert ev[instr].bank_conflicts == beats.conflicts, instr
        row = compare_row(instr, CMPMODE.GT, n, 4) if instr == "CompareScalar" else instr   # its mode's row
        assert ev[instr].end - ev[instr].start == pytest.approx(vector_cycles(row, 4, n, beats.per_repeat))
    if layout["h"] == 0:          # the aligned layout conflicts somewhere on both architectures
        assert sum(e.bank_conflicts for e in ev.values()) > 0
    if soc == "Ascend950PR":      # two sources + a mask + a write: never one beat on the 950
        assert ev["Select"].bank_conflicts >= beats.repeats
