"""The book's four AscendC kernels are C++: they reproduce the Python kernels they replaced, bit for bit and event
for event, and their tiling structs are the host's.

``data/cxx_kernel_digests.json`` holds, per case of ``cxx_kernel_cases.CASES``, the digest of what the Python kernel
did (output bytes, every trace event, cycles, warnings), recorded before the Python kernels were deleted.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from cxx_kernel_cases import CASES, digest, inputs

from ascend_lab import standalone as sa
from ascend_lab.ascendc import launch
from ascend_lab.ascendc.cxx import KernelFile
from ascend_lab.dtypes import as_acl_dtype
from ascend_lab.ops import registry
from ascend_lab.ops.common.kernel_args import gm_from_array

DIGESTS = json.loads((Path(__file__).parent / "data" / "cxx_kernel_digests.json").read_text())["digests"]


@pytest.mark.parametrize("case", CASES, ids=["/".join(map(str, c)) for c in CASES])
def test_the_cxx_kernel_does_what_the_python_kernel_did(case):
    op, flavour, soc, dname, n, bn = case
    spec = registry.get(op)
    ks = spec.kernel(flavour)
    assert isinstance(ks.entry, KernelFile)
    g, x = inputs(dname, n)
    info = sa.make_soc(soc)
    td = sa.tiling_for(spec, n, as_acl_dtype(g.dtype), info, flavour, threshold=1.0)
    args = [gm_from_array(g, ks.args[0]), gm_from_array(x, ks.args[1]),
            gm_from_array(None, ks.args[2], nbytes=g.nbytes)]
    run = launch(ks.entry, td.blockDim, args, td.to_bytes(), info, outputs=(2,), record=True, tiling_data=td,
                 **ks.template(td, as_acl_dtype(g.dtype), bn))
    assert digest(run, bytes(args[2].ptr.allocation.buffer[:g.nbytes])) == DIGESTS["/".join(map(str, case))]
    events = run.trace.events
    assert all(e.line is not None and e.line[0].endswith((".h", ".cpp")) for e in events)


KERNELS = sorted({(op, flavour) for op, flavour, *_ in CASES})


@pytest.mark.parametrize("op, flavour", KERNELS)
def test_the_tiling_struct_of_the_cxx_header_is_the_hosts(op, flavour):
    """One field list: the C++ struct the kernel reads (its *_tiling_data.h) has the host TilingData's fields, in
    order, with the same C types, so the host's bytes are what the kernel reads."""
    spec = registry.get(op)
    ks = spec.kernel(flavour)
    td = sa.tiling_for(spec, 1000, as_acl_dtype(np.float32), sa.make_soc(CASES[0][2] if op == "hard_sigmoid_grad"
                                                                          else "Ascend910B4"), flavour, threshold=1.0)
    template = ks.template(td, as_acl_dtype(np.float32), 2)
    inst = ks.entry.instance(**template)
    fmt, size, fields = inst.tiling_class._cx_layout
    host = [name for name, _ctype in ks.tiling_data.FIELDS]
    assert [name for name, _ctype in fields] == host
    spelled = re.sub(r"(\d+)x", lambda m: "x" * int(m.group(1)), fmt)
    assert spelled == re.sub(r"(\d+)x", lambda m: "x" * int(m.group(1)), ks.tiling_data._FORMAT)   # types, padding
    assert size == len(td.to_bytes())
    assert inst.pack_tiling({n: getattr(td, n) for n in host}) == td.to_bytes()
