"""The UB reserve model and the Select/Compare limits per architecture (issue 10 items 4 and 5).

Expected numbers come from the reference, never from the simulator:

* ``kernel_flavours.md`` §4 -- on A2/A3 (DAV_2201) Select modes 1/2 make the AscendC library write a scratch at
  ``TMP_UB_OFFSET = 184 KB`` = 188416 B; a kernel that issues no such Select may plan up to the whole UB
  (the experimental ReluGrad int32 plan: 195072 B at the tiling's ub 196352, tileData 8128).
* asc-devkit ``impl/basic_api/utils/kernel_utils_constants.h`` -- TMP_UB_OFFSET = 248 KB on DAV_1001/2002/3510;
  ``dav_c220``/``dav_m200`` ``kernel_operator_vec_cmpsel_impl.h`` -- the scratch is a Duplicate over
  ONE_BLK_SIZE = 32 elements (of T for mode 1, of uint32 for mode 2).
* ``kernel_flavours.md`` §6 and asc-devkit ``Select.md`` / ``Compare.md`` / ``Compares.md`` (数据类型) -- Select
  mode 0 only on Atlas training (910A); Select T half/float before the 950; Compare half/float (and int32 EQ on
  A2/A3); Compares not offered on 910A; the 950 masks a compare's partial repeat with a predicate.

Each broken kernel breaks on the last core only, on its last tile, so the finding must name both.
"""

from __future__ import annotations

import numpy as np
import pytest

from ascend_lab import golden
from ascend_lab import standalone as sa
from ascend_lab.ascendc import (
    CMPMODE,
    SELMODE,
    VECCALC,
    VECOUT,
    Compare,
    CompareScalar,
    Duplicate,
    GetBlockIdx,
    GetBlockNum,
    KernelError,
    Muls,
    Select,
    TBuf,
    TPipe,
    TQue,
    launch,
    reserved_ub_bytes,
    sanitizer,
)
from ascend_lab.base.platform import get_soc
from ascend_lab.dtypes import bfloat16

UB_A2 = 196608                      # 192 KB (Ascend910B4, Ascend910_9392)
UB_310P = UB_910A = 262144          # 256 KB
TMP_UB_OFFSET_A2 = 184 * 1024       # 188416
TMP_UB_OFFSET_310P = 248 * 1024     # 253952
SCRATCH_ELEMENTS = 32
HEAD = 256 + 256 + 32               # outQueue block, srcBuf, maskBuf: the bytes below the filler
TILES = 3


def k_select(*args, filler: int, mode: int, dtype: str = "float32", mask_dtype: str = "uint8",
             tiles: int = TILES):
    """One VECOUT block, a source TBuf, a mask TBuf, then ``fillerBuf`` of ``filler`` bytes; ``tiles`` Selects, all
    mode 0 but the last one, which uses ``mode``. Only the last core asks for ``filler``, ``mode``, ``dtype`` and
    ``mask_dtype``; the others run a harmless float32 mode-0 kernel with a 32-byte filler."""
    last = GetBlockIdx() == GetBlockNum() - 1
    if not last:
        dtype, mask_dtype, mode = "float32", "uint8", 0
    T = np.dtype(bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    pipe = TPipe()
    qout = TQue(VECOUT, 1, name="outQueue")
    src, msk, fill = TBuf(VECCALC, name="srcBuf"), TBuf(VECCALC, name="maskBuf"), TBuf(VECCALC, name="fillerBuf")
    pipe.InitBuffer(qout, 1, 256)
    pipe.InitBuffer(src, 256)
    pipe.InitBuffer(msk, 32)
    pipe.InitBuffer(fill, filler if last else 32)
    n = 256 // T.itemsize
    s, m = src.Get(T), msk.Get(np.dtype(mask_dtype))
    if T.itemsize == 2:         # 1 as its 16 bits: Duplicate takes no bfloat16 on 910A/310P (ascendc.arith_dtypes)
        Duplicate(src.Get(np.uint16), int(np.ones(1, T).view(np.uint16)[0]), n)
    else:
        Duplicate(s, 1, n)
    Duplicate(msk.Get(np.uint16), 0x5555, 16)     # Duplicate takes no uint8 (arith_dtypes): the same bytes as uint16
    for t in range(tiles):
        out = qout.AllocTensor(T)
        sel = mode if t == tiles - 1 else 0
        Select(out, m, s, T.type(0) if sel == 1 else s, SELMODE(sel), n)
        qout.EnQue(out)
        qout.FreeTensor(qout.DeQue(T))


def run(kernel, soc: str = "Ascend910B4", block_dim: int = 2, **kw):
    return launch(kernel, block_dim, [], b"", get_soc(soc), outputs=(), record=False, **kw)


def expect(kind: str, instruction: str, soc: str = "Ascend910B4", block_dim: int = 2, tile: int | None = TILES - 1,
           kernel=k_select, **kw) -> KernelError:
    with pytest.raises(KernelError) as info:
        run(kernel, soc, block_dim, **kw)
    e = info.value
    msg = str(e)
    assert e.kind == kind and msg.startswith(f"[{kind}]"), msg
    assert e.instruction == instruction and f"instruction {instruction}" in msg, msg
    assert e.core == block_dim - 1 and f"core {block_dim - 1}" in msg, msg
    if tile is not None:
        assert e.tile == tile and f"tile {tile}" in msg, msg
    assert e.hint == sanitizer.explain(kind).hint and e.hint, msg
    return e


# --- item 4: the Select scratch at TMP_UB_OFFSET ------------------------------------------------------------------

@pytest.mark.parametrize("mode", [1, 2])
def test_a_buffer_covering_188416_is_clobbered_by_select_modes_1_and_2_on_a2(mode):
    filler = TMP_UB_OFFSET_A2 + 32 - HEAD                         # fillerBuf ends at 188448: it covers 188416
    e = expect("select-scratch", "Select", filler=filler, mode=mode)
    msg = str(e)
    # 32 floats (mode 1) or 32 uint32 addresses (mode 2): 128 B at 188416
    assert f"UB [{TMP_UB_OFFSET_A2}, {TMP_UB_OFFSET_A2 + SCRATCH_ELEMENTS * 4})" in msg, msg
    assert f"fillerBuf at [{HEAD}, {TMP_UB_OFFSET_A2 + 32})" in msg and f"mode {mode}" in msg, msg
    assert "TBuf" in msg and f"below {TMP_UB_OFFSET_A2} B" in msg, msg


@pytest.mark.parametrize("soc", ["Ascend910B4", "Ascend910_9392"])
@pytest.mark.parametrize("mode", [1, 2])
def test_a_plan_ending_at_188416_passes_and_the_scratch_is_written(soc, mode):
    kr = run(k_select, soc, filler=TMP_UB_OFFSET_A2 - HEAD, mode=mode)
    assert kr.trace.ub_reserved == UB_A2 - TMP_UB_OFFSET_A2 == 8192
    assert max(b.offset + b.size for b in kr.trace.ub_layout[1]) == TMP_UB_OFFSET_A2


def test_the_scratch_holds_the_duplicated_scalar_or_the_mask_address():
    """The scratch is real UB bytes: 32 copies of T(src1) in mode 1, of the selMask's UB address in mode 2."""
    seen = {}

    def k(*args, mode, dtype):
        T = np.dtype(dtype)
        pipe = TPipe()
        a, m, d = TBuf(VECCALC, name="a"), TBuf(VECCALC, name="m"), TBuf(VECCALC, name="d")
        for b, size in ((a, 256), (m, 32), (d, 256)):
            pipe.InitBuffer(b, size)
        n = 256 // T.itemsize
        Select(d.Get(T), m.Get(np.uint8), a.Get(T), T.type(-2.5) if mode == 1 else a.Get(T), SELMODE(mode), n)
        ctx = a.Get(T).ctx
        seen[mode, dtype] = (ctx.ub[TMP_UB_OFFSET_A2:TMP_UB_OFFSET_A2 + 256].copy(), m.offset)

    run(k, block_dim=1, mode=1, dtype="float16")
    run(k, block_dim=1, mode=1, dtype="float32")
    run(k, block_dim=1, mode=2, dtype="float32")
    ub, _ = seen[1, "float16"]
    assert (ub[:64].view(np.float16) == -2.5).all() and not ub[64:].any()       # 32 halves = 64 B
    ub, _ = seen[1, "float32"]
    assert (ub[:128].view(np.float32) == -2.5).all() and not ub[128:].any()     # 32 floats = 128 B
    ub, mask_at = seen[2, "float32"]
    assert mask_at == 256 and (ub[:128].view(np.uint32) == mask_at).all() and not ub[128:].any()


def test_select_mode_0_needs_no_scratch_and_reserves_nothing():
    kr = run(k_select, filler=UB_A2 - HEAD, mode=0)                 # the plan fills the whole UB
    assert kr.trace.ub_reserved == 0


def test_a_plan_without_select_may_fill_the_whole_ub():
    def k(*args):
        pipe = TPipe()
        q, t = TQue(VECOUT, 2, name="outQueue"), TBuf(VECCALC, name="tmpBuf")
        pipe.InitBuffer(q, 2, 65536)
        pipe.InitBuffer(t, UB_A2 - 2 * 65536)                        # 196608 B in all
        x = t.Get(np.float32)
        Duplicate(x, 3.0, x.GetSize())                              # writes up to the last byte of UB
        for _ in range(2):
            out = q.AllocTensor(np.float32)
            Muls(out, x, 2.0, 16384)
            q.EnQue(out)
            q.FreeTensor(q.DeQue(np.float32))

    kr = run(k, block_dim=1)
    assert kr.trace.ub_reserved == 0
    assert max(b.offset + b.size for b in kr.trace.ub_layout[0]) == UB_A2


def test_310p_scratch_sits_at_248_kb():
    e = expect("select-scratch", "Select", soc="Ascend310P3", filler=TMP_UB_OFFSET_310P + 32 - HEAD, mode=1)
    assert f"UB [{TMP_UB_OFFSET_310P}, {TMP_UB_OFFSET_310P + 128})" in str(e)
    kr = run(k_select, "Ascend310P3", filler=TMP_UB_OFFSET_310P - HEAD, mode=1)
    assert kr.trace.ub_reserved == UB_310P - TMP_UB_OFFSET_310P == 8192
    # the A2 offset means nothing on the 310P: a buffer there is fine
    run(k_select, "Ascend310P3", filler=TMP_UB_OFFSET_A2 + 32 - HEAD, mode=1)


def test_the_950_count_form_select_uses_no_scratch():
    kr = run(k_select, "Ascend950PR", filler=253952 - HEAD, mode=1)   # the whole 248 KB, Select mode 1
    assert kr.trace.ub_reserved == 0


@pytest.mark.parametrize("soc, want", [("Ascend910B4", 8192), ("Ascend910_9392", 8192), ("Ascend310P3", 8192),
                                       ("Ascend910A", 0), ("Ascend950PR", 0)])
def test_reserved_ub_bytes_per_soc(soc, want):
    info = get_soc(soc)
    assert reserved_ub_bytes(info) == want
    assert reserved_ub_bytes(info, select=False) == 0


def test_a_plan_only_launch_assumes_a_select_and_ub_plan_asks_the_kernel():
    # ThresholdGradV2D (Select mode 1) keeps the 8 KB; ReluGrad int32 (no Select) does not
    assert sa.ub_plan("threshold_grad_v2_d", 10**6, "float32", "Ascend910B4", kernel="experimental")["reserved"] \
        == UB_A2 - TMP_UB_OFFSET_A2
    plan = sa.ub_plan("relu_grad", 10**6, "int32", "Ascend910B4", kernel="experimental")
    assert plan["reserved"] == 0 and plan["overflow"] == 0 and plan["used"] == 195_072


# --- the experimental ReluGrad plans of §4 run under the new model ---------------------------------------------

def test_relu_grad_int32_plan_of_195072_bytes_runs_and_is_exact():
    n = 3 * 8128 + 100                                             # three full tiles of tileData 8128 and a tail
    rng = np.random.default_rng(7)
    g = rng.integers(-2**31, 2**31 - 1, n, dtype=np.int64).astype(np.int32)
    x = rng.integers(-5, 6, n).astype(np.int32)
    run_, out = sa.run_kernel("relu_grad", g, x, soc="Ascend910B4", core_num=1, kernel="experimental")
    assert run_.tiling.tileDataNum == 8128
    assert max(b.offset + b.size for b in run_.trace.ub_layout[0]) == 195_072 > TMP_UB_OFFSET_A2
    assert run_.trace.ub_reserved == 0
    np.testing.assert_array_equal(out, np.where(x > 0, g, 0))
    np.testing.assert_array_equal(out, golden.relu_grad_experimental(g, x))


def test_relu_grad_fp32_plan_stays_below_the_scratch_and_uses_it():
    n = 2 * 6976
    x = np.linspace(-3, 3, n).astype(np.float32)
    run_, out = sa.run_kernel("relu_grad", x, x, soc="Ascend910B4", core_num=1, kernel="experimental")
    assert max(b.offset + b.size for b in run_.trace.ub_layout[0]) == 174_400 < TMP_UB_OFFSET_A2
    assert run_.trace.ub_reserved == UB_A2 - TMP_UB_OFFSET_A2
    np.testing.assert_array_equal(out, np.where(x > 0, x, 0))


# --- item 5: Select and Compare limits per architecture ------------------------------------------------------------

@pytest.mark.parametrize("mode", [1, 2])
def test_910a_offers_select_mode_0_only(mode):
    run(k_select, "Ascend910A", filler=32, mode=0)
    e = expect("unsupported-on-soc", "Select", soc="Ascend910A", filler=32, mode=mode)
    assert f"Select mode {mode} is not offered" in str(e) and "mode 0 (VSEL_CMPMASK_SPR) only" in str(e)


@pytest.mark.parametrize("soc", ["Ascend910A", "Ascend310P3", "Ascend910B4", "Ascend910_9392"])
@pytest.mark.parametrize("dtype", ["int32", "int16", "bfloat16"])
def test_select_takes_half_and_float_only_before_the_950(soc, dtype):
    for ok in ("float16", "float32"):
        run(k_select, soc, filler=32, mode=0, dtype=ok)
    e = expect("unsupported-on-soc", "Select", soc=soc, filler=32, mode=0, dtype=dtype, tile=0)
    assert f"Select of {dtype}" in str(e) and "Select of float, half" in str(e)


@pytest.mark.parametrize("dtype", ["int32", "int16", "bfloat16", "uint8", "int64"])
def test_the_950_selects_its_longer_dtype_list(dtype):
    run(k_select, "Ascend950PR", filler=32, mode=1, dtype=dtype)


def test_select_mask_must_be_an_unsigned_type():
    expect("unsupported-on-soc", "Select", filler=32, mode=1, mask_dtype="int8", tile=0)


def k_compare(*args, instr: str, dtype: str, mode: int, count: int | None = None):
    T = np.dtype(bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    pipe = TPipe()
    a, b, m = TBuf(VECCALC, name="a"), TBuf(VECCALC, name="b"), TBuf(VECCALC, name="mask")
    for buf, size in ((a, 512), (b, 512), (m, 64)):
        pipe.InitBuffer(buf, size)
    n = 512 // T.itemsize if count is None else count
    if GetBlockIdx() == GetBlockNum() - 1:
        if instr == "Compare":
            Compare(m.Get(np.uint8), a.Get(T), b.Get(T), CMPMODE(mode), n)
        else:
            CompareScalar(m.Get(np.uint8), a.Get(T), T.type(0), CMPMODE(mode), n)


COMPARE_OK = {   # (soc, instr): dtypes with every mode; int32 with EQ only where listed
    ("Ascend910B4", "Compare"): ["float16", "float32"], ("Ascend910B4", "CompareScalar"): ["float16", "float32"],
    ("Ascend310P3", "Compare"): ["float16", "float32"], ("Ascend310P3", "CompareScalar"): ["float16", "float32"],
    ("Ascend910A", "Compare"): ["float16", "float32"],
    ("Ascend950PR", "Compare"): ["int8", "uint8", "int16", "float16", "bfloat16", "int32", "float32", "int64"],
    ("Ascend950PR", "CompareScalar"): ["int8", "uint16", "bfloat16", "int32", "uint32", "float32", "uint64"],
}


@pytest.mark.parametrize("soc, instr", list(COMPARE_OK))
def test_compare_dtypes_offered_per_architecture(soc, instr):
    for dtype in COMPARE_OK[soc, instr]:
        for mode in (CMPMODE.LT, CMPMODE.EQ, CMPMODE.NE):
            run(k_compare, soc, instr=instr, dtype=dtype, mode=mode)


@pytest.mark.parametrize("instr", ["Compare", "CompareScalar"])
def test_a2_compares_int32_with_eq_only(instr):
    run(k_compare, "Ascend910B4", instr=instr, dtype="int32", mode=CMPMODE.EQ)
    e = expect("unsupported-on-soc", instr, kernel=k_compare, tile=None, instr=instr, dtype="int32", mode=CMPMODE.GT)
    assert "int32 with EQ only" in str(e)
    e = expect("unsupported-on-soc", instr, kernel=k_compare, tile=None, instr=instr, dtype="int16", mode=CMPMODE.EQ)
    assert f"{instr} of int16" in str(e)


@pytest.mark.parametrize("soc", ["Ascend310P3", "Ascend910A"])
def test_310p_and_910a_compare_half_and_float_only(soc):
    e = expect("unsupported-on-soc", "Compare", soc=soc, kernel=k_compare, tile=None, instr="Compare",
               dtype="int32", mode=CMPMODE.EQ)
    assert "Compare of half, float" in str(e)


def test_910a_has_no_compare_scalar():
    """Compares.md marks Atlas training as unsupported (kernel_flavours §6: 'not listed'); UNCONFIRMED on device."""
    e = expect("unsupported-on-soc", "CompareScalar", soc="Ascend910A", kernel=k_compare, tile=None,
               instr="CompareScalar", dtype="float32", mode=CMPMODE.GT)
    assert "UNCONFIRMED" in str(e) and "Compare two tensors instead" in str(e)


def test_the_950_compares_double_with_eq_only():
    run(k_compare, "Ascend950PR", instr="CompareScalar", dtype="float64", mode=CMPMODE.EQ)
    expect("unsupported-on-soc", "CompareScalar", soc="Ascend950PR", kernel=k_compare, tile=None,
           instr="CompareScalar", dtype="float64", mode=CMPMODE.LE)
    e = expect("unsupported-on-soc", "Compare", soc="Ascend950PR", kernel=k_compare, tile=None, instr="Compare",
               dtype="complex64", mode=CMPMODE.EQ)
    assert "Compare of complex64" in str(e)


@pytest.mark.parametrize("instr", ["Compare", "CompareScalar"])
def test_a_partial_repeat_is_predicate_masked_on_the_950_and_stale_elsewhere(instr):
    """100 floats = 400 B, not a multiple of 256 B: A2 computes one repeat (64 elements) and warns; the 950
    computes all 100 and writes the rest of the last repeat's 64 bits as 0."""
    got = {}

    def k(*args):
        pipe = TPipe()
        a, b, m = TBuf(VECCALC, name="a"), TBuf(VECCALC, name="b"), TBuf(VECCALC, name="mask")
        for buf, size in ((a, 512), (b, 512), (m, 64)):
            pipe.InitBuffer(buf, size)
        x = a.Get(np.float32)
        Duplicate(x, 0.0, 128)            # an instruction writes x (no ub-uninit); its values are then set by hand
        x.data[:] = np.arange(128, dtype=np.float32)
        Duplicate(b.Get(np.float32), -1.0, 128)
        mask = m.Get(np.uint8)
        Duplicate(m.Get(np.uint16), 0xA5A5, 32)                        # stale bits (Duplicate takes no uint8)
        if instr == "Compare":
            Compare(mask, x, b.Get(np.float32), CMPMODE.GT, 100)
        else:
            CompareScalar(mask, x, np.float32(-1), CMPMODE.GT, 100)
        got["bits"] = np.unpackbits(mask.data.copy(), bitorder="little")

    kr = launch(k, 1, [], b"", get_soc("Ascend950PR"), outputs=())
    bits = got["bits"]
    assert bits[:100].all() and not bits[100:128].any() and (np.packbits(bits[128:], bitorder="little") == 0xA5).all()
    assert not kr.warnings
    kr = launch(k, 1, [], b"", get_soc("Ascend910B4"), outputs=())
    bits = got["bits"]
    assert bits[:64].all() and (np.packbits(bits[64:], bitorder="little") == 0xA5).all()
    assert [w.kind for w in kr.warnings] == ["partial-repeat"]


def test_kernels_standing_for_compiler_output_are_not_held_to_the_ascendc_api():
    """The TBE lowering marks its entries ``kernel_api = "cce"``: TBE's vsel is not AscendC's Select, so 910A's
    mode-0-only rule and the A2 scratch do not apply."""
    def k(*args, **kw):
        k_select(*args, **kw)

    k.kernel_api = "cce"
    kr = run(k, "Ascend910A", filler=32, mode=1)
    assert kr.trace.kernel_api == "cce"
    kr = run(k, "Ascend910B4", filler=TMP_UB_OFFSET_A2 + 32 - HEAD, mode=2)
    assert kr.trace.ub_reserved == 0
    with pytest.raises(ValueError, match="api must be one of ascendc, cce"):
        run(k_select, api="tik", filler=32, mode=0)
