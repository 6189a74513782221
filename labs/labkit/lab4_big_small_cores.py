"""Lab 4 -- a ThresholdGradV2D-style big/small-core tiling with tails, for 512-byte blocks.

ThresholdGradV2D's experimental tiling (cann_facts §4.1) counts in 256-byte blocks: it pads the input
to whole blocks, gives every core ``e`` blocks and the first ``tailBlockNum`` cores ("big" cores) one
more, and cuts each core's share into tiles of ``tileDataNum`` elements with a shorter last tile. The
learner writes the same scheme for a variant kernel that works on 512-byte blocks and lays out its UB
differently; the page lists the variant's ``Init``, and the learner works each dtype's ``ubDataNumber``
out of it (the page gives no table of them):

    threshold_grad_512_tiling(input_num, dtype, core_num, ub_size, threshold=1.0)
        -> ThresholdGradV2DTilingData   (the package's struct: same fields, same order)

Spec (``labs/04_big_small_cores.md``): dtypes float32/float16/bfloat16/int32/int8/uint8, anything
else, ``core_num == 0``, ``input_num == 0`` or a UB too small for one tile -> ``TilingError``; the rest
is §4.1 with ``BLOCK_SIZE = 512`` -- including its quirks: the "big core" fields are filled in even
when ``tailBlockNum`` is 0, a tail equal to zero becomes a whole tile, and an input that fits one tile
runs on one core.

The oracle does not use the formulas: it sizes the tile from its own model of the variant's UB plan,
deals the padded blocks to the cores one round at a time (``range(totalBlocks)[core::cores]``), chunks
each core's blocks into tiles, and reads the fields off the smallest share and a share one block larger.
The checker also lays the learner's tiling over the input with ``op_host.core_ranges`` to say which core
or tile goes wrong.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ascend_lab.base import platform
from ascend_lab.dtypes import itemsize
from ascend_lab.opdev.tiling_data import TilingError
from ascend_lab.ops.threshold_grad_v2_d import op_host as tg_host
from ascend_lab.ops.threshold_grad_v2_d.op_host import ThresholdGradV2DTilingData

from .checker import Case, Raises, Report, answer_key, positional, run_battery

__all__ = ["BLOCK_SIZE", "FUNCTION", "cases", "check", "oracle"]

FUNCTION = "threshold_grad_512_tiling"
TITLE = "Lab 4 \u00b7 big and small cores, 512-byte blocks"
BLOCK_SIZE = 512
DTYPES = ("float32", "float16", "bfloat16", "int32", "int8", "uint8")
#: The variant kernel's Init as the page lists it: (buffer, tiles of it, bytes per element; None for sizeof(T)),
#: and the dtypes that lay it out (None: every dtype).
_VARIANT_INIT: tuple[tuple[str, int, int | None, tuple[str, ...] | None], ...] = (
    ("inQueueG", 2, None, None), ("inQueueF", 2, None, None), ("outQueue", 2, None, None),
    ("maskBuf", 2, 1, None), ("selectBuf", 1, None, None),
    ("tmp1 (float)", 1, 4, ("bfloat16", "int32")),
    ("tmp1 (half)", 1, 2, ("int8", "uint8")), ("tmp2 (float)", 1, 4, ("int8", "uint8")),
)


def _plan_bytes(dtype: str) -> int:
    """Bytes the variant's Init lays out per element of a tile."""
    return sum(count * (itemsize(dtype) if size is None else size)
               for _, count, size, only in _VARIANT_INIT if only is None or dtype in only)


def _slices(dtype: str) -> int:
    """ubDataNumber: the fewest slices of sizeof(T) bytes per element that hold the plan."""
    return -(-_plan_bytes(dtype) // itemsize(dtype))


# --------------------------------------------------------------------------------------------------
# the oracle: deal blocks to cores, chunk them into tiles
# --------------------------------------------------------------------------------------------------
def _share(blocks: int, tile_blocks: int, size: int) -> tuple[int, int, int]:
    """(elements, tiles, elements of the last tile) of a core that gets ``blocks`` blocks."""
    chunks = [tile_blocks] * (blocks // tile_blocks) + ([blocks % tile_blocks] if blocks % tile_blocks else [])
    return blocks * BLOCK_SIZE // size, len(chunks), chunks[-1] * BLOCK_SIZE // size


@answer_key
def oracle(input_num: int, dtype: str, core_num: int, ub_size: int,
           threshold: float = 1.0) -> ThresholdGradV2DTilingData | Raises:
    if dtype not in DTYPES or core_num == 0 or input_num == 0:
        return Raises(TilingError)
    size = itemsize(dtype)
    tile_blocks = ub_size // BLOCK_SIZE // _slices(dtype)
    if tile_blocks == 0:
        return Raises(TilingError)
    total_blocks = -(-input_num * size // BLOCK_SIZE)
    cores = 1 if input_num * size <= tile_blocks * BLOCK_SIZE else min(core_num, total_blocks)
    dealt = [len(range(total_blocks)[core::cores]) for core in range(cores)]   # round-robin deal
    small = min(dealt)
    small_data, small_tiles, small_tail = _share(small, tile_blocks, size)
    big_data, big_tiles, big_tail = _share(small + 1, tile_blocks, size)
    return ThresholdGradV2DTilingData(
        smallCoreDataNum=small_data, bigCoreDataNum=big_data, finalBigTileNum=big_tiles,
        finalSmallTileNum=small_tiles, tileDataNum=tile_blocks * BLOCK_SIZE // size,
        smallTailDataNum=small_tail, bigTailDataNum=big_tail, tailBlockNum=sum(1 for b in dealt if b > small),
        threshold=threshold, blockDim=cores, tilingKey=0)


# --------------------------------------------------------------------------------------------------
# comparing tilings
# --------------------------------------------------------------------------------------------------
_FIELD_HINTS = {
    "tileDataNum": "tileBlockNum = (ubSize // 512) // ubDataNumber blocks per tile; tileDataNum = "
                   "tileBlockNum * 512 // sizeof(T)",
    "tileDataNum:big": "your tile leaves the variant's Init too little UB: count every buffer Init lays out, per "
                       "element of the tile (a queue once per BUFFER_NUM, a temporary at its own type's size), "
                       "then round up to whole slices of sizeof(T)",
    "tileDataNum:small": "your tile is smaller than the UB allows: ubDataNumber is the FEWEST slices of sizeof(T) "
                         "that hold what Init lays out per element -- round the bytes up to a whole slice, no "
                         "further",
    "blockDim": "one core if the input fits a tile, else min(coreNum, number of 512-byte blocks)",
    "tailBlockNum": "the padded blocks left over after every core got e = totalBlocks // coreNum; the first "
                    "tailBlockNum cores are the big ones",
    "smallCoreDataNum": "a small core gets e blocks: e * 512 // sizeof(T) elements",
    "bigCoreDataNum": "a big core gets e + 1 blocks (the field is filled in even when there is no big core)",
    "finalSmallTileNum": "e // tileBlockNum full tiles, plus one if e % tileBlockNum is not 0",
    "finalBigTileNum": "(e + 1) // tileBlockNum full tiles, plus one if (e + 1) % tileBlockNum is not 0",
    "smallTailDataNum": "the small core's data minus its full tiles; 0 means the last tile is a full tile",
    "bigTailDataNum": "the big core's data minus its full tiles; 0 means the last tile is a full tile",
    "threshold": "the threshold attribute, as a C float",
    "tilingKey": "the tiling key is always 0",
}


def _consequence(inputs: dict[str, Any], got: ThresholdGradV2DTilingData) -> str:
    """What the learner's tiling would do to the input, core by core (best effort)."""
    n, dtype, ub = inputs["input_num"], inputs["dtype"], inputs["ub_size"]
    if dtype not in DTYPES:
        return ""
    size = itemsize(dtype)
    try:
        ranges = tg_host.core_ranges(got, dtype, n)
    except Exception:
        return ""
    if got.tileDataNum * _plan_bytes(dtype) > ub:
        return (f"with a tile of {got.tileDataNum} elements the variant's Init would lay out more than the {ub} B "
                "of UB there are")
    for r in ranges:
        for tile, _start, length in r["tiles"]:
            if length > got.tileDataNum or length <= 0:
                return (f"core {r['core']} ({r['kind']}) tile {tile} would have {length} elements "
                        f"(tileDataNum is {got.tileDataNum})")
    if ranges:
        end = ranges[-1]["padded_end"]
        if end < n:
            last = ranges[-1]
            return (f"the last core ({last['core']}, {last['kind']}) stops at element {end}: "
                    f"elements {end}..{n - 1} would never be processed")
        if (end - n) * size >= BLOCK_SIZE:
            return f"the cores reach element {end}, more than one 512-byte block past the end of the input ({n})"
    return ""


def _make_compare(inputs: dict[str, Any]) -> Any:
    def compare(expected: Any, got: Any) -> str | None:
        if not isinstance(got, ThresholdGradV2DTilingData):
            return f"return a ThresholdGradV2DTilingData(...), not {type(got).__name__}"
        e, g = expected.as_dict(), got.as_dict()
        for key in e:
            if e[key] != g[key]:
                hint = _FIELD_HINTS.get(key, "")
                if key == "tileDataNum" and isinstance(g[key], int):
                    hint = _FIELD_HINTS["tileDataNum:big" if g[key] > e[key] else "tileDataNum:small"]
                text = f"{key}: expected {e[key]!r}, got {g[key]!r} \u2014 {hint}"
                effect = _consequence(inputs, got)
                return text + (f"\nwith your numbers: {effect}" if effect else "")
        return None
    return compare


def _case(name: str, covers: Iterable[str], input_num: int, dtype: str, core_num: int, ub_size: int,
          threshold: float = 1.0) -> Case:
    inputs = {"input_num": input_num, "dtype": dtype, "core_num": core_num, "ub_size": ub_size,
              "threshold": threshold}
    expected = oracle(**inputs)
    hint = ("refuse what cannot be tiled: an unsupported dtype, no cores, an empty input (aclnn never tiles one) "
            "or a UB smaller than one tile" if isinstance(expected, Raises) else "")
    return Case(name, inputs, expected, covers=tuple(covers), hint=hint, compare=_make_compare(inputs))


# --------------------------------------------------------------------------------------------------
# the battery
# --------------------------------------------------------------------------------------------------
_SIZES = (1, 2, 127, 128, 129, 255, 256, 257, 1000, 7000, 100_000, 333_333, 1_000_000, 10_000_019)
WORKED = ((100, "float32", 48), (7000, "float32", 48), (100_000, "float32", 48), (1_000_000, "float16", 48),
          (4096, "bfloat16", 40), (333_333, "int8", 48))
WORKED_UB = 196608


def cases(socs: Iterable[str] | None = None) -> list[Case]:
    socs = list(platform.socs() if socs is None else socs)
    out: list[Case] = []
    # A. the worked examples of the notebook
    for n, dtype, cores in WORKED:
        out.append(_case(f"worked example: N = {n}, {dtype}, {cores} cores, UB {WORKED_UB} B",
                         ["topic:worked examples", f"dtype:{dtype}"], n, dtype, cores, WORKED_UB))
    # B. every SoC x dtype x size, plus sizes at the tile and block edges, with the UB a tiling sees there
    #    (GetCoreMemSize(UB): 256 B less than the UB on A2/A3, kernel_flavours §6)
    for soc in socs:
        info = platform.get_soc(soc)
        cores, ub = info.vector_core_num, info.core_mem_size_ub
        for dtype in DTYPES:
            per_block = BLOCK_SIZE // itemsize(dtype)
            tile = ub // BLOCK_SIZE // _slices(dtype) * per_block
            edges = (tile - 1, tile, tile + 1, cores * per_block - 1, cores * per_block, cores * per_block + 1,
                     cores * tile + 1, 3 * cores * tile + 5 * per_block + 1)
            for n in _SIZES + edges:
                tags = [f"soc:{soc}", f"dtype:{dtype}"]
                if n % per_block:
                    tags.append("topic:padding to a whole block")
                if n <= tile:
                    tags.append("topic:one tile, one core")
                elif n > cores * tile:
                    tags.append("topic:several tiles per core")
                out.append(_case(f"N = {n}, {dtype} on {soc} ({cores} cores, GetCoreMemSize(UB) {ub} B)", tags, n,
                                 dtype, cores, ub))
    # C. other platforms
    for cores, ub in ((1, 196608), (5, 65536), (100, 196608), (48, 8192), (48, 4096)):
        for dtype in DTYPES:
            for n in (1000, 65_537, 1_000_003):
                out.append(_case(f"N = {n}, {dtype}, {cores} cores, UB {ub} B",
                                 ["topic:custom platforms", f"dtype:{dtype}"], n, dtype, cores, ub))
    # D. errors
    out += [
        _case("empty input", ["topic:errors"], 0, "float32", 48, 196608),
        _case("no cores", ["topic:errors"], 1000, "float16", 0, 196608),
        _case("int64 is not a ThresholdGradV2D dtype", ["topic:errors"], 1000, "int64", 48, 196608),
        _case("float64 is not a ThresholdGradV2D dtype", ["topic:errors"], 1000, "float64", 48, 196608),
        _case("UB 4095 B: not one 512-byte block per float32 slice", ["topic:errors"], 1000, "float32", 48, 4095),
        _case("UB 7679 B: too small for an int8 tile", ["topic:errors"], 1000, "int8", 48, 7679),
    ]
    out.append(_case("threshold = -0.25 travels as a C float", ["topic:attributes"], 1000, "float32", 48, 196608,
                     threshold=-0.25))
    return out


def _row(td: ThresholdGradV2DTilingData, n: int) -> str:
    processed = td.bigCoreDataNum * td.tailBlockNum + td.smallCoreDataNum * (td.blockDim - td.tailBlockNum)
    return (f"blockDim {td.blockDim}, tileDataNum {td.tileDataNum}, small/big {td.smallCoreDataNum}/"
            f"{td.bigCoreDataNum}, tiles {td.finalSmallTileNum}/{td.finalBigTileNum}, tails "
            f"{td.smallTailDataNum}/{td.bigTailDataNum}, tailBlockNum {td.tailBlockNum}, processed {processed} "
            f"({processed - n} padding)")


def _summary() -> list[str]:
    lines = [f"worked examples (UB {WORKED_UB} B), 512-byte blocks vs the 256-byte original:"]
    for n, dtype, cores in WORKED[1::2]:
        new = oracle(n, dtype, cores, WORKED_UB)
        old = tg_host.tiling(n, dtype, cores, WORKED_UB)
        lines.append(f"  N={n} {dtype} {cores} cores")
        lines.append(f"    512 B: {_row(new, n)}")
        lines.append(f"    256 B: {_row(old, n)}")
    return lines


def _hidden(rng: np.random.Generator) -> list[Case]:
    """Cases drawn at check time: lengths, dtypes, core counts and UB sizes no page names."""
    out = []
    for _ in range(30):
        n = int(10 ** rng.uniform(0, 8.5))
        dtype = str(rng.choice(DTYPES))
        cores = int(rng.integers(1, 129))
        ub = int(32 * rng.integers(128, 8193))
        thr = float(np.float32(rng.normal(0, 3)))
        out.append(_case(f"N = {n}, {dtype}, {cores} cores, UB {ub} B, threshold {thr:.4g}",
                         ["topic:drawn at check time", f"dtype:{dtype}"], n, dtype, cores, ub, threshold=thr))
    return out


def check(fn: Any, socs: Iterable[str] | None = None, *, seed: int | None = None) -> Report:
    """Run ``fn`` (your ``threshold_grad_512_tiling``) on the battery, then on cases drawn now (``seed`` draws a
    reported set again); returns the Report."""
    return run_battery(fn, cases(socs), title=TITLE, call=positional, summary=_summary,
                       refuse_reference=True, hidden=_hidden, seed=seed)
