"""UB bank conflicts: how many beats one repeat of a vector instruction takes, from its operands' UB addresses.

The Unified Buffer is built from banks; per beat (one vector cycle) the vector unit can read and write only so
many rows of them. When the 32-byte blocks one repeat of an instruction touches collide, the repeat takes more
than one beat. The rules are Ascend's own (``shared/reference/kernel_flavours.md`` §7, from the AscendC guide
"避免UB的bank冲突" and the ``add_high_performance`` case study); the cost model turns the beats into cycles
(:func:`.cost_model.vector_cycles`).

**DAV_2201** (Atlas A2/A3: Ascend910B*, Ascend910_93). UB 192 KB = 48 banks of 4 KB (128 rows of 32 B) in
16 bank groups of 3 banks. ``group = (addr >> 5) & 15``, ``bank = 16 * (addr >> 16) + group`` (the guide's
examples: 0x10000 -> bank 16, 0x10020 -> 17, 0x10E20 -> 17, 0x20020 -> 33). Per beat the unit reads one row
from each group and writes one row to each group (16 x 32 = 512 B). Conflicts: two reads in one group, two
writes in one group, a read and a write in one bank.

**DAV_3510** (Ascend950). UB 256 KB = 8 groups x 2 banks x 16 KB, low-order interleaved:
``addr = {row[8:0], bank[0], group[2:0], byte[4:0]}``, so ``group = (addr >> 5) & 7`` and the bank inside the
group is ``(addr >> 8) & 1``. Per beat each bank does one read or one write, and each group at most 2 reads and
no write, or 1 read and 1 write. Two reads starting at the same address are merged by the hardware into one
(the guide's "address overlap" fix).

**How a repeat's beats are counted.** All blocks one repeat touches (every source's blocks read, the
destination's written) are placed on their groups and banks; the repeat takes the fewest beats that schedule
them under the per-beat limits -- the serialisations the rules force:

* DAV_2201, per group: ``max(reads, writes, max over banks (reads + writes in that bank))``: one read and one
  write per group per beat, never a read and a write in the same bank in one beat.
* DAV_3510, per group: ``max(writes, max over banks (reads + writes in that bank), ceil((reads + writes) / 2))``.

The repeat takes the maximum over groups (at least 1). Two reads of the very same address count once on both
architectures (documented for 3510; assumed for 2201, whose guide does not say).

What the sources leave open, and the choice made here:

* **950 mixed cases.** The 3510 guide gives the rules but no beat counts for mixed reads and writes; the formula
  above is the fewest beats the rules allow. The guide's own example 3 (src1 0x4100, dst 0x8900: one bank)
  calls a read and a write in one bank conflict-free, against its rule and its table 1; the model follows the
  rule. By the rule every two-source instruction on the 950 (two reads + one write per group) takes 2 beats per
  repeat unless its two sources start at the same address, as the guide says ("读/写口不足").
* **Ascend910 (DAV_1001) and Ascend310P (DAV_2002).** No public source describes their UB banks: no conflicts
  are modelled there (every repeat one beat). DAV_3002 (310B) likewise.
* **A2 bank row of a repeat.** Which of a group's 3 banks a block is in (``addr >> 16``) is taken at the start of
  each operand's repeat (a 256-B repeat of an operand not 256-B aligned may straddle a 64 KB line).
* **Broadcast and other gathers** are costed on their destination writes only (how their sources are read is
  not documented); Select in mode 0 reads its mask from the CMPMASK register, not from UB.

Speed: the simulator asks for every vector instruction. ``issue.vector_done`` keeps the resulting cycles in
a memo per architecture (``cost_model.VECTOR_MEMO``, keyed by instruction, count and operand offsets and widths:
one dict lookup per call, about 0.2-0.3 us); only a new layout reaches :func:`count_form`, itself cached, whose miss
works out the beats of one period of the repeat pattern (the group pattern repeats every 512 B: at most 64 repeats
of a 1-bit mask operand), vectorised over its repeats and blocks, cached by the operands' offsets modulo 512 B,
strides and the A2 bank rows (tens of microseconds, a few dozen times per kernel).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from ..base.platform import NpuArch

#: Bytes of one data block, one repeat, and the period of the group pattern (both modelled architectures).
BLOCK_BYTES = 32
REPEAT_BYTES = 256
PERIOD_BYTES = 512


class BankLayout(NamedTuple):
    """How one architecture maps a UB byte address to a bank group and a bank, with its per-beat limits."""
    arch: NpuArch
    groups: int              # bank groups
    banks_per_group: int
    bank_bytes: int
    beat_bytes: int          # bytes one beat reads (one row per group)
    source: str

    def group(self, addr: int) -> int:
        """Bank group of a UB byte address."""
        return (addr >> 5) & (self.groups - 1)

    def bank(self, addr: int) -> int:
        """Bank id of a UB byte address (A2: ``16 * (addr >> 16) + group``; 950: ``2 * group + bank bit``)."""
        if self.arch == NpuArch.DAV_2201:
            return self.groups * (addr >> 16) + self.group(addr)
        return self.banks_per_group * self.group(addr) + ((addr >> 8) & 1)


LAYOUTS: dict[NpuArch, BankLayout] = {
    NpuArch.DAV_2201: BankLayout(NpuArch.DAV_2201, 16, 3, 4096, 512,
                                 "AD guide 避免bank冲突（NPU架构版本2201）; kernel_flavours §7"),
    NpuArch.DAV_3510: BankLayout(NpuArch.DAV_3510, 8, 2, 16384, 512,
                                 "AD guide 避免bank冲突（NPU架构版本3510）; kernel_flavours §7"),
}
#: Architectures whose bank conflicts are modelled (the others: none, the sources are silent).
MODELLED = frozenset(LAYOUTS)


def layout(arch: NpuArch) -> BankLayout | None:
    """The bank layout of ``arch``, or None where no conflicts are modelled (DAV_1001, DAV_2002, DAV_3002)."""
    return LAYOUTS.get(NpuArch(arch))


class Access(NamedTuple):
    """How one operand of a vector instruction touches UB, repeat by repeat (AscendC's high-dim form).

    Block ``j`` (``0 <= j < blocks``) of repeat ``r`` starts at ``offset + r * repeat_stride + j * block_stride``
    bytes; the block it lies in is that address rounded down to 32 B. A bit-mask operand moves fewer bytes per
    repeat than a block (16 B for half, 8 B for float): ``blocks=1`` and a ``repeat_stride`` under 32 B.
    ``last_blocks``: blocks of the last repeat (a partial tail), default ``blocks``."""
    offset: int
    write: bool = False
    blocks: int = 8
    block_stride: int = BLOCK_BYTES
    repeat_stride: int = REPEAT_BYTES
    last_blocks: int | None = None


class Beats(NamedTuple):
    """An instruction's repeats and the beats they take; ``beats - repeats`` is what bank conflicts added."""
    repeats: int
    beats: int

    @property
    def conflicts(self) -> int:
        """Beats added by bank conflicts (0: conflict-free)."""
        return self.beats - self.repeats

    @property
    def per_repeat(self) -> float:
        """Mean beats per repeat: the multiplier on the per-repeat part of the vector cost (1.0 if none)."""
        return self.beats / self.repeats if self.repeats else 1.0


def _schedule(arch: NpuArch, groups: np.ndarray, banks: np.ndarray, writes: np.ndarray, valid: np.ndarray,
              n_banks: int) -> np.ndarray:
    """Beats per repeat for blocks given as (repeats, blocks) arrays of group, bank and write flag: the fewest
    beats that serve them under the architecture's per-beat limits (module docstring)."""
    lay = LAYOUTS[arch]
    rows = groups.shape[0]
    cell = groups * n_banks + banks                           # (group, bank) cell of each block
    ncell = lay.groups * n_banks
    idx = (np.arange(rows)[:, None] * ncell + cell)[valid]
    w = writes[valid]
    size = rows * ncell
    reads = np.bincount(idx[~w], minlength=size).reshape(rows, lay.groups, n_banks)
    wr = np.bincount(idx[w], minlength=size).reshape(rows, lay.groups, n_banks)
    r_g, w_g = reads.sum(-1), wr.sum(-1)
    per_bank = (reads + wr).max(-1)
    if arch == NpuArch.DAV_2201:
        beats = np.maximum(np.maximum(r_g, w_g), per_bank)
    else:
        beats = np.maximum(np.maximum(w_g, per_bank), (r_g + w_g + 1) // 2)
    return np.maximum(beats.max(-1), 1)


def _blocks(accesses: tuple[Access, ...], starts: np.ndarray, counts: list[int]) -> tuple[np.ndarray, ...]:
    """Byte addresses (repeats, total blocks) of every block, with its write flag and whether it is used."""
    nb = max(a.blocks for a in accesses)
    cols, wcols, vcols = [], [], []
    j = np.arange(nb)
    for i, a in enumerate(accesses):
        cols.append(starts[:, i:i + 1] + j * a.block_stride)
        wcols.append(np.full(nb, a.write))
        vcols.append(j < counts[i])
    addr = np.concatenate(cols, axis=1)
    writes = np.broadcast_to(np.concatenate(wcols), addr.shape)
    valid = np.broadcast_to(np.concatenate(vcols), addr.shape)
    return (addr // BLOCK_BYTES) * BLOCK_BYTES, writes, valid


def _beats_of(arch: NpuArch, accesses: tuple[Access, ...], starts: np.ndarray, counts: list[int],
              rows: tuple[int, ...] | None) -> np.ndarray:
    """Beats per repeat for repeats whose operands start at ``starts`` (repeats, operands). ``rows``: on A2, each
    operand's bank row (``addr >> 16``, or a label that keeps their equalities) for all these repeats."""
    addr, writes, valid = _blocks(accesses, starts, counts)
    lay = LAYOUTS[arch]
    groups = (addr >> 5) & (lay.groups - 1)
    if arch == NpuArch.DAV_2201:
        assert rows is not None
        nb = max(a.blocks for a in accesses)
        banks = np.broadcast_to(np.repeat(np.asarray(rows), nb), addr.shape)
        n_banks = max(rows) + 1
    else:
        banks = (addr >> 8) & 1
        n_banks = 2
    return _schedule(arch, groups, banks, writes, valid, n_banks)


@lru_cache(maxsize=4096)
def _period(arch: NpuArch, accesses: tuple[Access, ...], rows: tuple[int, ...] | None) -> np.ndarray:
    """Prefix sums of the beats of one period of full repeats, for accesses whose offsets are already reduced
    modulo 512 B: entry p is the beats of repeats 0..p-1 of the period (length period + 1)."""
    period = 1
    for a in accesses:
        period = math.lcm(period, PERIOD_BYTES // math.gcd(PERIOD_BYTES, a.repeat_stride % PERIOD_BYTES or
                                                            PERIOD_BYTES))
    r = np.arange(period)[:, None]
    starts = np.array([a.offset for a in accesses])[None, :] + r * np.array([a.repeat_stride for a in accesses])
    beats = _beats_of(arch, accesses, starts, [a.blocks for a in accesses], rows)
    out = np.zeros(period + 1, dtype=np.int64)
    np.cumsum(beats, out=out[1:])
    out.flags.writeable = False
    return out


def _labels(rows: tuple[int, ...]) -> tuple[int, ...]:
    """Bank rows relabelled by first appearance (only their equalities matter to the pattern)."""
    seen: dict[int, int] = {}
    return tuple(seen.setdefault(x, len(seen)) for x in rows)


def _dedupe(accesses: tuple[Access, ...]) -> tuple[Access, ...]:
    """Two reads of the very same blocks are one read (the hardware merges them)."""
    out: list[Access] = []
    for a in accesses:
        if a.write or a not in out:
            out.append(a)
    return tuple(out)


@lru_cache(maxsize=8192)
def instruction_beats(arch: NpuArch, repeats: int, accesses: tuple[Access, ...]) -> Beats:
    """Repeats and total beats of one vector instruction whose operands touch UB as ``accesses`` describe.

    On an architecture without a bank model every repeat is one beat. Exact for the rules above: full repeats
    are summed period by period (the group pattern repeats every 512 B of each operand), the A2 bank rows taken
    per repeat, and a partial last repeat counted with its own blocks."""
    repeats = int(repeats)
    if repeats <= 0 or not accesses:
        return Beats(max(repeats, 0), max(repeats, 0))
    arch = NpuArch(arch)
    if arch not in LAYOUTS:
        return Beats(repeats, repeats)
    accesses = _dedupe(accesses)
    partial = any(a.last_blocks is not None and a.last_blocks != a.blocks for a in accesses)
    full = repeats - 1 if partial else repeats
    reduced = tuple(a._replace(offset=a.offset % PERIOD_BYTES, last_blocks=None) for a in accesses)
    total = 0
    if full:
        if arch == NpuArch.DAV_2201:
            # the bank rows change only where an operand crosses a 64 KB line: sum each stretch on its own pattern
            r = np.arange(full)
            row = np.array([a.offset for a in accesses])[:, None] + np.outer([a.repeat_stride for a in accesses], r)
            row >>= 16
            cut = np.flatnonzero((np.diff(row, axis=1) != 0).any(axis=0)) + 1
            edges = [0, *cut.tolist(), full]
            for lo, hi in zip(edges[:-1], edges[1:], strict=True):
                pre = _period(arch, reduced, _labels(tuple(row[:, lo].tolist())))
                total += _span(pre, lo, hi)
        else:
            total += _span(_period(arch, reduced, None), 0, full)
    if partial:
        r = repeats - 1
        starts = np.array([[a.offset + r * a.repeat_stride for a in accesses]])
        counts = [a.blocks if a.last_blocks is None else a.last_blocks for a in accesses]
        rows = tuple((a.offset + r * a.repeat_stride) >> 16 for a in accesses) if arch == NpuArch.DAV_2201 else None
        total += int(_beats_of(arch, accesses, starts, counts, _labels(rows) if rows else None)[0])
    return Beats(repeats, int(total))


def _span(prefix: np.ndarray, lo: int, hi: int) -> int:
    """Beats of repeats lo..hi-1 from one period's prefix sums."""
    period = len(prefix) - 1
    f = lambda x: (x // period) * int(prefix[period]) + int(prefix[x % period])  # noqa: E731
    return f(hi) - f(lo)


@lru_cache(maxsize=16384)
def count_form(arch: NpuArch, lanes: int, count: int, operands: tuple[tuple[int, int, bool], ...]) -> Beats:
    """Beats of a count-form vector instruction (AscendC ``Op(dst, src..., count)``, contiguous operands).

    ``lanes``: elements per 256-byte repeat (256 / the widest operand's size, as the hardware sets it);
    ``operands``: ``(UB byte offset, bits per element, written)`` for each operand -- 1 bit for a compare
    bit-mask. Repeat r of an operand covers ``lanes * bits / 8`` bytes from ``offset + r * that``; the last
    repeat only the blocks holding the remaining elements. Cached: a kernel repeats the same few layouts."""
    if count <= 0:
        return Beats(0, 0)
    if arch not in LAYOUTS:
        repeats = -(-count // lanes)
        return Beats(repeats, repeats)
    repeats = -(-count // lanes)
    tail = count - (repeats - 1) * lanes
    accesses = []
    for offset, bits, write in operands:
        stride = lanes * bits // 8
        blocks = max(-(-stride // BLOCK_BYTES), 1)
        tail_bytes = -(-tail * bits // 8)
        last = max(-(-tail_bytes // BLOCK_BYTES), 1)
        accesses.append(Access(offset, write, blocks, BLOCK_BYTES, stride, last if last != blocks else None))
    return instruction_beats(arch, repeats, tuple(accesses))


def repeat_beats(arch: NpuArch, reads: list[int] | tuple[int, ...], writes: list[int] | tuple[int, ...] = ()) -> int:
    """Beats of one repeat that reads the 32-byte blocks at byte addresses ``reads`` and writes those at
    ``writes`` (identical read addresses merged) -- the rules on explicit addresses, for teaching and tests."""
    arch = NpuArch(arch)
    if arch not in LAYOUTS:
        return 1
    reads = list(dict.fromkeys(int(a) for a in reads))
    accesses = tuple(Access(a, False, 1) for a in reads) + tuple(Access(int(a), True, 1) for a in writes)
    starts = np.array([[a.offset for a in accesses]])
    rows = tuple(a.offset >> 16 for a in accesses) if arch == NpuArch.DAV_2201 else None
    return int(_beats_of(arch, accesses, starts, [1] * len(accesses), rows)[0])


def clear_caches() -> None:
    """Forget every cached answer (tests that edit the layouts)."""
    instruction_beats.cache_clear()
    count_form.cache_clear()
    _period.cache_clear()
