"""The experimental ReluGrad (ops-nn custom package, ascend910b) against ``kernel_flavours.md`` §4.

The numbers below are §4's tables, typed in from the reference (not computed from the package): the tiling
of N = 1e6 on Ascend910B4 (40 AIV) with the UB CANN reports there (196352 B), the UB plan and tileData per
dtype, the per-dtype instruction sequences. The kernel runs through ``ascend_lab.standalone.run_kernel`` and is
compared bit for bit with ``golden.relu_grad_experimental`` (written from §4) and, where §4 says the result
is exact, with the plain formula ``x > 0 ? grad : 0``.

The bf16, int8/uint8 and int32 plans (194560 B, 194560 B, 195072 B) issue no Select and use the UB up to
the top; they run once the UB reserve follows §4 (Select modes 1/2 use 32 B at 184 KB, issue 10 item 4).
"""

from __future__ import annotations

import numpy as np
import pytest

from ascend_lab import golden, tiling
from ascend_lab.ascendc import VECIN, DataCopy, GlobalTensor, Max, Min, PipeBarrier, TPipe, TQue, launch
from ascend_lab.ascendc.cost_model import vector_cycles
from ascend_lab.ascendc.cxx import KernelCompileError
from ascend_lab.base.platform import get_soc
from ascend_lab.dtypes import bfloat16
from ascend_lab.ops import registry
from ascend_lab.ops.common.kernel_args import gm_from_array
from ascend_lab.ops.relu_grad import op_host
from ascend_lab.ops.relu_grad.op_kernel import experimental as kernel
from ascend_lab.standalone import run_kernel, ub_plan

UB = 196352              # GetCoreMemSize(UB) on 910B/910_93 as CANN reports it (§6)
SOC = "Ascend910B4"
F16, F32, BF16 = np.dtype(np.float16), np.dtype(np.float32), bfloat16
I8, U8, I32 = np.dtype(np.int8), np.dtype(np.uint8), np.dtype(np.int32)
MiB = 1024 * 1024


def bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(f"u{a.dtype.itemsize}")


def assert_bits_equal(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    bad = bits(got) != bits(want)
    assert not bad.any(), f"{bad.sum()} elements differ: got {got[bad][:8]!r}, want {want[bad][:8]!r}"


def run(g: np.ndarray, x: np.ndarray, **kw):
    """The kernel on Ascend910B4 as CANN tiles it there: the tiling sees GetCoreMemSize(UB) = 196352 B."""
    return run_kernel("relu_grad", g, x, soc=SOC, kernel="experimental", **kw)


# --- registration ----------------------------------------------------------------------------------------------

def test_spec_points_at_the_experimental_kernel():
    spec = registry.get("relu_grad")
    k = spec.kernel("experimental")
    assert k.socs == ("ascend910b",)
    assert k.tiling is op_host.tiling and k.entry is kernel.relu_grad and k.launch is kernel.launch
    assert spec.oracle_for("experimental") == ("ascend_lab.golden:relu_grad_experimental", ())
    assert k.registered_for(get_soc("Ascend910B4")) and not k.registered_for(get_soc("Ascend950PR"))
    assert k.workspace(get_soc("Ascend910B4")) == 16 * MiB                     # GetLibApiWorkSpaceSize on 2201


def test_op_def_is_the_union_and_the_package_has_no_int64():
    # experimental relu_grad_def.cpp (ascend910b): no int64; main-tree relu_grad_def.cpp (ascend950): int64 too
    assert {d.short for d in op_host.OP_DEF.dtypes} == {
        "float32", "float16", "bfloat16", "int8", "uint8", "int32", "int64"}
    assert {d.short for d in op_host.EXPERIMENTAL_DTYPES} == {
        "float32", "float16", "bfloat16", "int8", "uint8", "int32"}
    with pytest.raises(ValueError, match="experimental ReluGrad has no kernel for int64"):
        op_host.tiling(1000, "int64", 40, UB)
    with pytest.raises(KernelCompileError, match="static assertion failed: the experimental ReluGrad has no kernel"):
        kernel.relu_grad.instance(schMode=0, dtype=np.int64)


# --- tiling (§4) ------------------------------------------------------------------------------------------------

def test_ub_num_constants():
    assert {d.short: n for d, n in op_host.UB_NUM.items()} == {
        "float32": 7, "float16": 7, "bfloat16": 10, "int8": 10, "uint8": 10, "int32": 6}
    assert op_host.BLOCK_SIZE == 256


# dtype: (tiles small/big, tails small/big, tailBlockNum), §4 "N = 1e6 on 910B4 (40 AIV, ub 196352)"
N1E6 = {
    "float32": ((4, 4), (4032, 4096), 25),
    "float16": ((2, 2), (11008, 11136), 13),
    "bfloat16": ((3, 3), (5504, 5632), 13),
    "int8": ((2, 2), (5376, 5632), 27),
    "int32": ((4, 4), (576, 640), 25),
}


@pytest.mark.parametrize("dtype", N1E6)
def test_tiling_table_n_1e6(dtype):
    assert get_soc(SOC).vector_core_num == 40                      # GetCoreNum() on A2 = the AIV count
    td = tiling.relu_grad(10**6, dtype, soc=SOC, ub_size=UB)
    (ts, tb), (tails, tailb), tail_blocks = N1E6[dtype]
    assert td.blockDim == 40 and td.tilingKey == 0
    assert (td.finalSmallTileNum, td.finalBigTileNum) == (ts, tb)
    assert (td.smallTailDataNum, td.bigTailDataNum) == (tails, tailb)
    assert td.tailBlockNum == tail_blocks
    assert td.to_bytes().__len__() == 64                           # 8 x uint64


# dtype: (UB bytes of the plan, tileData), §4 "Buffer plan" at ub 196352
PLAN = {
    "float32": (174400, 6976), "float16": (181376, 13952), "bfloat16": (194560, 9728),
    "int8": (194560, 19456), "uint8": (194560, 19456), "int32": (195072, 8128),
}
TEMPS = {"float32": ["tmpQueueMask1"], "float16": ["tmpQueueMask1"], "bfloat16": ["tmpQueue1", "tmpQueue2"],
         "int8": ["tmpQueue1", "tmpQueue2"], "uint8": ["tmpQueue1", "tmpQueue2"], "int32": []}


@pytest.mark.parametrize("dtype", PLAN)
def test_ub_plan_per_dtype(dtype):
    used, tile = PLAN[dtype]
    plan = ub_plan("relu_grad", 10**6, dtype, SOC, kernel="experimental")    # the tiling sees 196352 B
    assert plan["elements_per_tile"] == tile and plan["used"] == used
    assert plan["capacity"] == 196608
    names = [b.name for b in plan["buffers"]]
    queues = [f"{q}[{i}]" for q in ("inQueueX", "inQueueY", "outQueueOut") for i in (0, 1)]
    assert names == TEMPS[dtype] + queues                          # InitBuffer order: temps, then X, Y, Out
    item = np.dtype(bfloat16 if dtype == "bfloat16" else dtype).itemsize
    assert all(b.size == tile * item for b in plan["buffers"] if b.kind in ("VECIN", "VECOUT"))


def test_int32_at_the_full_ub():
    # §4: a tiling that saw the whole 196608 B would give int32 tileData 8192 and a 196608 B plan
    td = op_host.tiling(10**6, "int32", 40, 196608)
    assert td.tileDataNum == 8192
    args = [gm_from_array(None, name, 10**6 * 4) for name in ("gradients", "features", "backprops")]
    r = launch(kernel.relu_grad, td.blockDim, args, td.to_bytes(), get_soc(SOC), outputs=(2,), cores=[0],
               plan_only=True, **kernel.template_args(td, "int32"))
    assert sum(b.size for b in r.trace.ub_layout[0]) == 196608


def test_small_input_runs_on_one_core():
    td = tiling.relu_grad(6976, "float32", soc=SOC, ub_size=UB)            # tileData >= N: one core
    assert td.blockDim == 1
    assert tiling.relu_grad(6977, "float32", soc=SOC, ub_size=UB).blockDim == 40
    assert op_host.tiling(6977, "float32", 200, UB).blockDim == 110       # min(core, ceil(6977 * 4 / 256))


@pytest.mark.parametrize("soc, size", [("Ascend910B4", 16 * MiB), ("Ascend910_9392", 16 * MiB),
                                       ("Ascend950PR", 16 * MiB), ("Ascend310P3", 2 * MiB),
                                       ("Ascend910A", 2 * MiB)])
def test_workspace_request(soc, size):
    assert op_host.workspace_size(soc) == size


# --- the tensor-tensor Min/Max the kernel needs (added to ascendc.instructions) -------------------------------

def k_minmax(a, b, lo, hi, workspace, tiling, *, dtype, n):
    pipe = TPipe()
    qa, qb, qo = TQue(VECIN, 1), TQue(VECIN, 1), TQue(VECIN, 2)
    for q, num in ((qa, 1), (qb, 1), (qo, 2)):
        pipe.InitBuffer(q, num, n * dtype.itemsize)
    gms = [GlobalTensor(dtype) for _ in range(4)]
    for gm, addr in zip(gms, (a, b, lo, hi), strict=True):
        gm.SetGlobalBuffer(addr, n)
    ta, tb, tlo, thi = qa.AllocTensor(dtype), qb.AllocTensor(dtype), qo.AllocTensor(dtype), qo.AllocTensor(dtype)
    DataCopy(ta, gms[0], n)
    DataCopy(tb, gms[1], n)
    PipeBarrier("PIPE_ALL")                   # no queue hand-off here: order MTE2 -> V -> MTE3 by barriers
    Min(tlo, ta, tb, n)
    Max(thi, ta, tb, n)
    PipeBarrier("PIPE_ALL")
    DataCopy(gms[2], tlo, n)
    DataCopy(gms[3], thi, n)


@pytest.mark.parametrize("dt", [F32, F16, I32], ids=["float32", "float16", "int32"])
def test_min_max_instructions(dt):
    n = 256
    rng = np.random.default_rng(5)
    if dt.kind == "f":
        a, b = (rng.standard_normal(n) * 4).astype(dt), (rng.standard_normal(n) * 4).astype(dt)
        a[:3], b[:3] = [np.nan, 1.0, np.inf], [2.0, np.nan, -np.inf]
    else:
        a, b = (rng.integers(-2**31, 2**31, n, dtype=np.int64).astype(dt) for _ in range(2))
    zeros = np.zeros(n, dt)
    args = [gm_from_array(v, name) for v, name in ((a, "a"), (b, "b"), (zeros, "lo"), (zeros, "hi"))]
    r = launch(k_minmax, 1, args, b"", get_soc(SOC), outputs=(2, 3), record=True, dtype=dt, n=n)
    lo, hi = (g.ptr.allocation.buffer[:n * dt.itemsize].view(dt) for g in args[2:])
    assert_bits_equal(lo, np.minimum(a, b))                      # NaN propagates (UNCONFIRMED on device)
    assert_bits_equal(hi, np.maximum(a, b))
    if dt.kind == "f":
        assert np.isnan(lo[:2]).all() and np.isnan(hi[:2]).all() and hi[2] == np.inf and lo[2] == -np.inf
    v = [e for e in r.trace.events if e.pipe == "V"]
    assert [e.instr for e in v] == ["Min", "Max"]
    # costed with GE-ATT's own Min row, its k * n part scaled by the beats per repeat of this UB layout (ub_banks)
    repeats = -(-n * dt.itemsize // 256)
    assert v[0].end - v[0].start == pytest.approx(vector_cycles("Min", dt.itemsize, n,
                                                                1 + v[0].bank_conflicts / repeats))


# --- kernel: instruction sequences (§4 table) -----------------------------------------------------------------

SEQ = {
    "float32": ["CompareScalar", "Duplicate", "Select"],
    "float16": ["CompareScalar", "Duplicate", "Select"],
    "bfloat16": ["Cast", "Duplicate", "Min", "Duplicate", "Max", "Duplicate", "Mul", "Duplicate", "Mul", "Mul",
                 "Cast", "Mul", "Cast"],
    "int8": ["Cast", "Duplicate", "Min", "Duplicate", "Max", "Duplicate", "Mul", "Mul", "Cast", "Mul", "Cast"],
    "uint8": ["Cast", "Duplicate", "Min", "Duplicate", "Max", "Duplicate", "Mul", "Mul", "Cast", "Mul", "Cast"],
    "int32": ["Duplicate", "Min", "Duplicate", "Max", "Duplicate", "Mul", "Mul", "Mul"],
}


@pytest.mark.parametrize("dtype", SEQ)
def test_instruction_sequence(dtype):
    dt = bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    td = tiling.relu_grad(10**6, dtype, soc=SOC, ub_size=UB)
    n = 2 * td.tileDataNum                                          # one core, two full tiles
    x = np.ones(n, dt)
    r, _ = run(x, x, core_num=1)
    v = [e for e in r.trace.events if e.pipe == "V"]
    assert [e.instr for e in v] == SEQ[dtype] * 2
    assert all(e.count == td.tileDataNum for e in v)
    sel = [e for e in v if e.instr == "Select"]
    assert all("VSEL_TENSOR_TENSOR_MODE" in e.detail for e in sel)


def test_bf16_constants_wrap_to_zero():
    # constexpr int scalar_bf16_C = 274877906944 (2^38), _D = 17592186044416 (2^44): both wrap to 0 in the C++ the
    # simulator runs (the front end converts the constant as C++ does), and the bf16 instance multiplies by them
    cls = kernel.relu_grad.instance(schMode=0, dtype=bfloat16).namespace["KernelReluGrad_bfloat16_t"]
    assert cls.SCALAR_BF16_C == 0 and cls.SCALAR_BF16_D == 0
    assert cls.SCALAR_UINT8ORINT8_C == 4096 and cls.SCALAR_INT32_B == 1


# --- kernel vs oracle --------------------------------------------------------------------------------------------

SPECIAL = [0.0, -0.0, 1.0, -1.0, 3.5, -2.25, 65504.0, 1e-7, np.inf, -np.inf, np.nan]


def _grads(dt: np.dtype, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    g = (rng.standard_normal(n) * 8).astype(dt)
    g[::7] = np.array(SPECIAL, dt)[np.arange(g[::7].size) % len(SPECIAL)]
    return g


def test_fp32_bit_exact_and_select_semantics():
    rng = np.random.default_rng(1)
    n = 100_003                                                     # not a whole 256-B block: padding
    x = rng.standard_normal(n).astype(F32)
    x[:6] = [0.0, -0.0, np.nan, np.inf, -np.inf, 1e-45]
    g = _grads(F32, n, 2)
    r, out = run(g, x)
    assert_bits_equal(out, golden.relu_grad_experimental(g, x))
    # §4: x <= 0 -> 0 (+0, also for inf/NaN gradients), NaN x -> grad, else grad bit for bit
    keep = ~(x <= 0)
    assert_bits_equal(out[keep], g[keep])
    assert (bits(out[~keep]) == 0).all()
    assert any(w.kind == "gm-padding" for w in r.trace.warnings)    # plain DataCopy past the end


@pytest.mark.parametrize("dt", [F16, BF16], ids=["float16", "bfloat16"])
def test_every_half_feature_bit_pattern(dt):
    x = np.tile(np.arange(2**16, dtype=np.uint16).view(dt), 3)      # every feature, 3 gradient sets
    g = _grads(dt, x.size, 3)
    _, out = run(g, x, record=False)
    assert_bits_equal(out, golden.relu_grad_experimental(g, x))
    if dt == F16:
        keep = ~(x <= 0)
        assert_bits_equal(out[keep], g[keep])
        assert (bits(out[~keep]) == 0).all()
    else:
        # the source defect (§4): grad * 0 -- a zero of either sign, NaN where grad is inf/NaN or x is NaN
        nan = np.isnan(g.astype(F32)) | np.isinf(g.astype(F32)) | np.isnan(x.astype(F32))
        o = out.astype(F32)
        assert np.isnan(o[nan]).all() and (o[~nan] == 0).all()


@pytest.mark.parametrize("dt", [I8, U8], ids=["int8", "uint8"])
def test_int8_full_range(dt):
    v = np.arange(256, dtype=np.uint8).view(dt)
    g, x = (a.ravel() for a in np.meshgrid(v, v))                  # every (grad, feature) pair
    _, out = run(g, x, record=False)
    assert_bits_equal(out, golden.relu_grad_experimental(g, x))
    assert_bits_equal(out, np.where(x > 0, g, np.zeros((), dt)))   # exact (half subnormals kept)


def test_int32_gradients_above_2_24_are_exact():
    rng = np.random.default_rng(4)
    n = 50_001
    g = rng.integers(-2**31, 2**31, n, dtype=np.int64).astype(I32)
    g[:6] = [2**24 + 1, -(2**24) - 1, 2**31 - 1, -2**31, 16777217, 123456789]
    x = rng.integers(-2**31, 2**31, n, dtype=np.int64).astype(I32)
    x[:6] = [1, 1, 2**31 - 1, 5, 0, -1]
    _, out = run(g, x, record=False)
    assert_bits_equal(out, golden.relu_grad_experimental(g, x))
    assert_bits_equal(out, np.where(x > 0, g, np.int32(0)))
    assert out[:6].tolist() == [2**24 + 1, -(2**24) - 1, 2**31 - 1, -2**31, 0, 0]


# --- the oracle on its own (§4, independent of the simulator) -----------------------------------------------------

def test_oracle_cases():
    f = np.array([-1.0, 0.0, 2.0, np.nan], F32)
    g = np.array([np.inf, np.nan, 3.0, 4.0], F32)
    assert golden.relu_grad_experimental(g, f).tolist()[:3] == [0.0, 0.0, 3.0]
    assert golden.relu_grad_experimental(g, f)[3] == 4.0                       # NaN feature keeps its gradient
    b = golden.relu_grad_experimental(np.array([5.0, -5.0, np.inf], BF16), np.array([3.0, 3.0, 3.0], BF16))
    assert bits(b).tolist()[:2] == [0x0000, 0x8000] and np.isnan(b[2].astype(F32))
    assert golden.relu_grad_experimental(np.array([-128, 127], I8), np.array([1, 0], I8)).tolist() == [-128, 0]
    with pytest.raises(TypeError, match="relu_grad_experimental"):
        golden.relu_grad_experimental(np.zeros(2, np.int64), np.zeros(2, np.int64))
