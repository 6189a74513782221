"""Per-architecture element types of Add/Mul/Max/Min, Adds/Muls/Maxs/Mins and Duplicate (issue 23 item 3): a type
the architecture's AscendC library does not take is an ``unsupported-on-soc`` finding naming the instruction, the
core and the tile, with the list it does take; every type on the list runs and computes in that type.

The lists are written out here from asc-devkit (dav_c220 / dav_m200 / dav_3510 ``kernel_operator_vec_*_impl.h``
@ 82b89a15), independently of ``ascendc.arith_dtypes``, and the test compares the two.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_ascendc_math import A2, A950, P310, T910A, run_api

from ascend_lab.ascendc import Add, Adds, Duplicate, KernelError, Max, Maxs, Min, Mins, Mul, Muls
from ascend_lab.ascendc.arith_dtypes import ARITH_DTYPES
from ascend_lab.dtypes import bfloat16

ALL = ["uint8", "int8", "float16", "uint16", "int16", "bfloat16", "uint32", "int32", "float32", "int64", "uint64"]
FOUR = {"float16", "float32", "int16", "int32"}
SOURCE = {
    "A2": {**dict.fromkeys(["Add", "Mul", "Max", "Min", "Adds", "Muls", "Maxs", "Mins"], FOUR),
           "Duplicate": {"float16", "bfloat16", "int16", "uint16", "int32", "uint32", "float32"}},
    "310P": {**dict.fromkeys(["Add", "Mul", "Max", "Min", "Adds", "Muls", "Maxs", "Mins"], FOUR),
             "Duplicate": {"float16", "int16", "uint16", "int32", "uint32", "float32"}},
    "950": {"Add": set(ALL), "Max": set(ALL), "Min": set(ALL), "Mul": set(ALL) - {"uint8", "int8"},
            "Adds": set(ALL) - {"uint16", "uint32"}, "Maxs": set(ALL) - {"uint16", "uint32"},
            "Mins": set(ALL) - {"uint16", "uint32"},
            "Muls": {"float16", "bfloat16", "float32", "int16", "int32", "int64", "uint64"},
            "Duplicate": set(ALL) | {"bool"}},
}
SOCS = {"A2": A2, "310P": P310, "950": A950}
CALLS = {
    "Add": lambda o, s: Add(o, s, s, 64), "Mul": lambda o, s: Mul(o, s, s, 64), "Max": lambda o, s: Max(o, s, s, 64),
    "Min": lambda o, s: Min(o, s, s, 64), "Adds": lambda o, s: Adds(o, s, 3, 64),
    "Muls": lambda o, s: Muls(o, s, 3, 64), "Maxs": lambda o, s: Maxs(o, s, 3, 64),
    "Mins": lambda o, s: Mins(o, s, 3, 64),
    "Duplicate": lambda o, s: Duplicate(o, 3, 64),
}
WANT = {"Add": lambda x: x + x, "Mul": lambda x: x * x, "Max": lambda x: x, "Min": lambda x: x,
        "Adds": lambda x: x + x.dtype.type(3), "Muls": lambda x: x * x.dtype.type(3),
        "Maxs": lambda x: np.maximum(x, x.dtype.type(3)), "Mins": lambda x: np.minimum(x, x.dtype.type(3)),
        "Duplicate": lambda x: np.full_like(x, 3)}


def _dt(name):
    return np.dtype(bfloat16) if name == "bfloat16" else np.dtype(name)


@pytest.mark.parametrize("soc", list(SOCS))
def test_the_lists_are_asc_devkits(soc):
    table = ARITH_DTYPES[SOCS[soc].npu_arch]
    for api, names in SOURCE[soc].items():
        assert table[api] == {_dt(n) for n in names}, api
    assert ARITH_DTYPES[T910A.npu_arch] == ARITH_DTYPES[P310.npu_arch]     # 910A asserts nothing: the 310P lists


CASES = [(soc, api, name) for soc in SOCS for api in CALLS for name in ALL]


@pytest.mark.parametrize("soc, api, name", CASES, ids=[f"{s}-{a}-{n}" for s, a, n in CASES])
def test_each_type_runs_or_is_refused_by_name(soc, api, name):
    dt = _dt(name)
    x = (np.arange(64) % 5).astype(dt)
    if name in SOURCE[soc][api]:
        got, _ = run_api(SOCS[soc], CALLS[api], [x], dt, 64)
        assert got.dtype == dt and (got == WANT[api](x)).all()
        return
    with pytest.raises(KernelError) as info:
        run_api(SOCS[soc], CALLS[api], [x], dt, 64)
    err = info.value
    text = str(err)
    assert err.kind == "unsupported-on-soc" and err.core == 0 and err.tile == 0
    assert f"{api} of {name}" in text and "(instruction " + api + ", core 0, tile 0)" in text
    offered = text.split(" offers ")[1].split(" (instruction")[0]
    spelled = {"float16": "half", "float32": "float"}
    assert set(offered.split(" of ", 1)[1].split(", ")) == {spelled.get(n, n) for n in SOURCE[soc][api]}
