"""The TBE schedules' compile-time count (``ascend_lab.tbe.storage_bound``) and the ubFactor it leads to, worked by
hand from the CANN 8.1.RC1 sources (``tbe/dsl/unify_schedule/vector/elewise/elewise_schedule.py`` and
``broadcast/broadcast_schedule.py``).

Each worked example walks the graph as the schedule does, in a comment, and states the counts it finds; the
numbers after that come from the documented formulas, written out in :func:`_base_info` and :func:`_elewise_split`
(not from the simulator). These are the three examples chapter 12.6 prints.

The rules used, as the sources state them:

* a node's count is the tensors in the dependent map, +1 when it cannot reuse an operand's slice (a placeholder, a
  compare/select/cast, or operands all still alive -- for every node here; the broadcast schedule: every node), +1
  for an unaligned tensor broadcast (broadcast schedule);
* 32 B each for: a scalar that vcmp/vsel/vcmpsel takes in place of a tensor operand (2/3/4 operands); a vsel of
  three tensors on v200/v220; a tensor-scalar max/min; in the elementwise schedule, a scalar broadcast, any
  consumer of an absorbed scalar broadcast, and any instruction of SUPPORT_SCALAR_INSNS other than add/mul;
* the elementwise count gets +1 for two or more inputs;
* ``maxUb = ((UB - 2 * extra) // coexist // 32 * 32) // maxDtypeBytes``, ``maxUbDb`` the same with ``// 2`` first,
  UB the ini's ``UB_SIZE`` (GetCoreMemSize(UB) + 256 on 910B/910_93).
"""

from __future__ import annotations

import math

import pytest

from ascend_lab import tbe
from ascend_lab import tiling as front
from ascend_lab.ops.hard_sigmoid_grad.op_kernel import tbe as hsg
from ascend_lab.ops.relu_grad.op_kernel import tbe as rg
from ascend_lab.ops.threshold_grad_v2_d.op_kernel import tbe as tg
from ascend_lab.tbe import dsl, storage_bound

#: The inis (CANN 8.1.RC1 ``data/platform_config``): UB_SIZE, vector cores; GetCoreMemSize keeps 256 B on A2/A3.
INI = {"Ascend910B4": (196608, 40, 256), "Ascend910A": (262144, 32, 0), "Ascend310P3": (262144, 8, 0)}
SPLIT = {1: 32767, 2: 32767, 4: 16383, 8: 8191}


def _base_info(ub: int, extra: int, coexist: int, width: int) -> tuple[int, int]:
    room = ub - 2 * extra
    return (room // coexist // 32 * 32) // width, (room // 2 // coexist // 32 * 32) // width


def _elewise_split(n: int, cores: int, out_bytes: int, max_ub: int, max_ub_db: int, width: int) -> tuple:
    """elewise_v3.cc DoTiling: (blockFactor, blockDim, ubFactor, key)."""
    if n < 32 // out_bytes * cores * 2:
        return n, 1, n, 210000000
    bf = math.ceil(math.ceil(n / cores) / 128) * 128
    db = bf > min(max_ub, SPLIT[width])
    limit = min(max_ub_db if db else max_ub, SPLIT[width])
    ub = bf
    if limit < ub:
        adjust = math.ceil(ub / math.ceil(ub / limit))
        ub = math.ceil(adjust / 128) * 128
        if ub > limit:
            ub = adjust // 128 * 128
    return bf, math.ceil(n / bf), ub, 210000000 + (10000 if db else 0)


def _counts(describe, dtype, soc, shapes=None):
    c = tbe.schedule.compile_counts(describe, dtype, soc, shapes)
    return c["coexist"], c["extra_ub"], c["max_dtype_bytes"]


def test_example_1_hard_sigmoid_grad_fp32_910b4():
    # vcmpsel(vabs(x), 3.0, 'lt', vmuls(grads, alpha), broadcast(0)) -- fp32 keeps one cmpsel node.
    # walk (dependent map in braces): x 0+1=1 {x}; vabs 1+1=2 {abs} +32 (abs takes a scalar);
    # grads 1+1=2 {abs,grads}; vmuls 2+1=3 {abs,alpha}; broadcast(0) 2+1=3 {abs,alpha,zero} +32 (scalar broadcast;
    # its consumer cmpsel takes no scalar, so it is not absorbed); cmpsel (output) 3+1=4, +32 (3 of 4 operands).
    # coexist max 4, +1 for two inputs = 5; extra 96; maxDtypeBytes 4.
    assert _counts(hsg.describe, "float32", "Ascend910B4") == (5, 96, 4)
    ub, cores, reserve = INI["Ascend910B4"]
    max_ub, max_ub_db = _base_info(ub, 96, 5, 4)
    assert (max_ub, max_ub_db) == (9816, 4904)
    td = front.compute("hard_sigmoid_grad", 2**24, "float32", soc="Ascend910B4", kernel="tbe")
    want = _elewise_split(2**24, cores, 4, max_ub, max_ub_db, 4)
    assert (td.blockFactor, td.blockDim, td.ubFactor, td.tilingKey) == want == (419456, 40, 4864, 210010000)
    info = tbe.compile_info(hsg.describe("float32"), cores, ub - reserve, "Ascend910B4")
    assert (info.ub_size, info.coexist, info.extra_ub, info.base_info) == (ub, 5, 96, [cores, 4, max_ub, max_ub_db])


def test_example_2_threshold_grad_v2_d_int8_310p3():
    # No tik.vcopy on 310P: vcmpsel(x32, thr, 'gt', g32, 0) in fp32; int8 -> fp16 -> fp32 and back are casts.
    # walk: x 1 {x}; cast x->fp16 1+1=2 +32; cast ->fp32 2 +32 {x32}; g 1+1=2 {x32,g}; g casts 2+1=3 +32 +32
    # {x32,g32}; cmpsel 2+1=3 +64 (2 of 4 operands are scalars) {cmpsel}; cast ->fp16 2 +32; cast ->int8 (output)
    # 1+1=2 +32. coexist 3 + 1 = 4; extra 6 casts * 32 + 64 = 256; maxDtypeBytes 4.
    assert _counts(tg.describe, "int8", "Ascend310P3") == (4, 256, 4)
    ub, cores, _ = INI["Ascend310P3"]
    max_ub, max_ub_db = _base_info(ub, 256, 4, 4)
    assert (max_ub, max_ub_db) == (16352, 8176)
    for n in (500, 10**6, 8 * 24320):          # one core; a split; a round-up past the limit, rounded down
        td = front.compute("threshold_grad_v2_d", n, "int8", soc="Ascend310P3", kernel="tbe", threshold=0.5)
        want = _elewise_split(n, cores, 1, max_ub, max_ub_db, 4)
        assert (td.blockFactor, td.blockDim, td.ubFactor, td.tilingKey) == want
    assert want[2] == 8064                      # 24320 in 3 chunks: 8107 -> 8192 > 8176 -> 8064


def test_example_3_threshold_grad_v2_d_broadcast_910b4():
    # (4, 1) x (4, 1000) fp32, broadcast schedule: both inputs become unified_broadcast nodes.
    # walk: x 1 {x}; brc(x) 1+1+1 (unaligned broadcast) = 3 {bx}; vcmpv(bx, thr) 1+1=2 +32 {cmp};
    # g 1+1=2 {cmp,g}; brc(g) 2+1+1 = 4 {cmp,bg}; vsel(cmp, 0, bg) (output) 2+1=3 +32.
    # coexist 4 (no +1 in this schedule); extra 64 (>= 32, so no extra block for the broadcast).
    assert _counts(tg.describe, "float32", "Ascend910B4", [(4, 1), (4, 1000)]) == (4, 64, 4)
    ub, cores, reserve = INI["Ascend910B4"]
    max_ub, max_ub_db = _base_info(ub, 64, 4, 4)
    assert (max_ub, max_ub_db) == (12280, 6136)
    td = tg.tiling_for_shapes([(4, 1), (4, 1000)], (4, 1000), "float32", cores, ub - reserve, threshold=0.5)
    bf, dim, ubf, key = _elewise_split(4000, cores, 4, max_ub, max_ub_db, 4)
    assert (td.blockFactor, td.blockDim, td.ubFactor, td.tilingKey) == (bf, dim, ubf, key - 10000000)


def test_relu_grad_910a_absorbed_broadcasts():
    # 910A (no vcopy): g * calculate_one_or_zero(x) = vmul(g, vmul(vmul(vmul(vmax(vmin(x, H), Z), R1), R2), R2)),
    # H, Z, R1, R2 scalar broadcasts, every consumer a min/max/mul: absorbed. Each broadcast +32, each consumer of
    # one +32 (five), the last vmul none: extra 9 * 32 = 288. The walk peaks at 4 ({g, tmp, brc} + own slice);
    # +1 for two inputs: 5.
    assert _counts(rg.describe, "float32", "Ascend910A") == (5, 288, 4)
    # fp16 has one vmul(R2) fewer: 8 * 32
    assert _counts(rg.describe, "float16", "Ascend910A") == (5, 256, 2)


def test_vsel_of_three_tensors_takes_a_block_on_v200_and_v220():
    # HardSigmoidGrad fp16: vcmpsel is built as vcmpv + vsel(cond, alpha, zero): three tensors. Elementwise schedule:
    # one more block on v200 (310P) and v220 (910B), not on v100 (910A). x, abs (+32), vcmpv (+32 scalar, +32
    # SUPPORT_SCALAR), grads, vmuls, broadcast(0) (+32), vsel: 128 (+32).
    assert _counts(hsg.describe, "float16", "Ascend910A") == (5, 128, 2)
    assert _counts(hsg.describe, "float16", "Ascend310P3") == (5, 160, 2)
    assert _counts(hsg.describe, "float16", "Ascend910B4") == (5, 160, 2)


def test_the_graph_the_schedule_walks():
    with dsl.compile_for("Ascend910B4"):
        half = hsg.describe("float16")
        full = hsg.describe("float32")
    tags = [n.tag for n in storage_bound.tvm_nodes(half)[0]]
    assert "elewise_binary_vcmpv_lt" in tags and tags[-1] == "elewise_multiple_sel"
    assert storage_bound.tvm_nodes(full)[1].tag == "elewise_binary_cmpsel_lt"
    with pytest.raises(ValueError, match="'elewise' or 'broadcast'"):
        storage_bound.storage_bound(full, full.soc, "reduce")


def test_the_tiling_compiles_for_the_soc_it_tiles_for():
    # the same call on 910A and 310P3 differs where the sources say the SoCs differ (vsel of three tensors)
    a = front.compute("hard_sigmoid_grad", 2**22, "float16", soc="Ascend910A", kernel="tbe")
    p = front.compute("hard_sigmoid_grad", 2**22, "float16", core_num=32, soc="Ascend310P3", kernel="tbe")
    ma, mda = _base_info(262144, 128, 5, 2)
    mp, mdp = _base_info(262144, 160, 5, 2)
    assert a.ubFactor == _elewise_split(2**22, 32, 2, ma, mda, 2)[2]
    assert p.ubFactor == _elewise_split(2**22, 32, 2, mp, mdp, 2)[2]
