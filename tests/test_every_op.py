"""Every registered operator and kernel flavour gets what the registry promises: a direct launch checked against its
oracle, with a trace; the sanitizer watching its GM accesses; its aclnn API through dispatch and the convenience
call; the CLI's ``tiling`` and ``run``; the tiling explorer; a tile map; the live tiling page's tiling.

The cases are read from the registry at collection, so nothing here names an operator: one registered before
collection is tested like the built-in ones (``pytest -p tests.fixture_ops.plugin`` adds the two C++ fixture
operators; ``tests/test_fixture_ops.py`` checks they are picked up).
"""

from __future__ import annotations

import json

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

import ascend_lab as al
from ascend_lab import cli, tiling, viz
from ascend_lab import standalone as sa
from ascend_lab.ascendc import KernelError
from ascend_lab.ascendc.launcher import launch
from ascend_lab.base.platform import get_soc, socs
from ascend_lab.live import live_tiling
from ascend_lab.ops import registry
from ascend_lab.ops.common.kernel_args import gm_from_array

try:                                     # the explorers' own layer (issue 21 item 6), where it exists yet
    from ascend_lab import explore as E
except ImportError:
    from ascend_lab.viz import explorers as E

CASES = [pytest.param(spec.key, flavour, id=f"{spec.key}-{flavour}") for spec in registry.ops()
         for flavour in spec.kernels]
API_CASES = [case for case in CASES if registry.get(case.values[0]).aclnn is not None]


def _setting(op: str, flavour: str) -> tuple[str, str]:
    """(a SoC the kernel is registered for, a dtype the op definition takes: float32 when it can)."""
    spec = registry.get(op)
    soc = next(s for s in socs() if spec.kernel(flavour).registered_for(get_soc(s)))
    dtype = "float32" if "float32" in [d.short for d in spec.dtypes] else spec.dtypes[0].short
    return soc, dtype


def _same_bits(got: np.ndarray, want: np.ndarray) -> bool:
    return got.dtype == want.dtype and got.shape == want.shape and got.tobytes() == want.tobytes()


@pytest.mark.parametrize("op, flavour", CASES)
def test_direct_launch_equals_the_oracle_and_traces(op, flavour, tmp_path):
    soc, dtype = _setting(op, flavour)
    inputs = cli.random_inputs((3001,), al.dtypes.as_acl_dtype(dtype), 1, len(registry.get(op).inputs))
    run, out = sa.run_kernel(op, *inputs, soc=soc, kernel=flavour)
    assert _same_bits(out, registry.kernel_oracle(op, flavour, soc)(*inputs))
    assert run.trace.events and run.trace.meta["kernel_flavour"] == flavour
    run.trace.save_chrome_trace(str(tmp_path / "trace.json"))
    assert json.loads((tmp_path / "trace.json").read_text())["traceEvents"]


@pytest.mark.parametrize("op, flavour", CASES)
def test_the_sanitizer_sees_an_output_too_small(op, flavour):
    spec, (soc, dtype) = registry.get(op), _setting(op, flavour)
    kernel, info, n = spec.kernel(flavour), sa.make_soc(soc), 4096
    td = sa.tiling_for(op, n, dtype, info, flavour)
    size = al.dtypes.to_numpy(dtype).itemsize
    args = [gm_from_array(np.ones(n, al.dtypes.to_numpy(dtype)), name) for name in kernel.args[:-1]]
    args.append(gm_from_array(None, kernel.args[-1], n * size // 2, nbytes=n * size))   # half of what it writes
    entry, template = sa.kernel_entry(op, td, dtype, 2, flavour)
    with pytest.raises(KernelError, match=rf"gm-out-of-bounds.* of {kernel.args[-1]} is outside"):
        launch(entry, td.blockDim, args, td.to_bytes(), info, outputs=(len(args) - 1,), tiling_data=td, **template)


@pytest.mark.parametrize("op, flavour", API_CASES)
def test_dispatch_and_the_convenience_call(op, flavour):
    spec, (soc, dtype) = registry.get(op), _setting(op, flavour)
    api = spec.aclnn
    inputs = cli.random_inputs((4, 777), al.dtypes.as_acl_dtype(dtype), 2, len(api.tensors))
    run = getattr(al, api.convenience, None) or (lambda *a, **k: al.call(api.api, *a, **k))
    run = run(*inputs, *[sc.default for sc in api.scalars], soc=soc, kernel=flavour, trace=True)
    assert run.status == 0 and run.kernel == flavour, run.messages
    assert run.kernel_node.op in api.l0_ops and run.trace is not None and run.trace.events
    assert _same_bits(run.out, registry.oracle(run.kernel_node)(*inputs))
    tm = viz.tile_map(run)
    assert tm.op == run.kernel_node.op and sum(s.length for s in tm.segments) >= 4 * 777


@pytest.mark.parametrize("op, flavour", CASES)
def test_cli_tiling(op, flavour, capsys):
    soc, dtype = _setting(op, flavour)
    code = cli.main(["tiling", op, "--n", "100000", "--dtype", dtype, "--soc", soc, "--kernel", flavour])
    out = capsys.readouterr().out
    td = tiling.compute(op, 100000, dtype, soc=soc, kernel=flavour)
    assert code == 0 and f"{registry.get(op).op_type} tiling: 100000 x {dtype}" in out
    assert type(td).__name__ in out and f"blockDim {td.blockDim}" in " ".join(out.split())


@pytest.mark.parametrize("op, flavour", API_CASES)
def test_cli_run_is_bit_exact(op, flavour, capsys):
    soc, dtype = _setting(op, flavour)
    code = cli.main(["run", registry.get(op).aclnn.convenience, "--shape", "3,1000", "--dtype", dtype, "--soc", soc,
                     "--kernel", flavour])
    out = capsys.readouterr().out
    assert code == 0 and "bit-exact vs golden: yes" in out, out


@pytest.mark.parametrize("op, flavour", CASES)
def test_the_tiling_explorer_draws_it(op, flavour):
    soc, dtype = _setting(op, flavour)
    attrs = {name: value / 2 for name, value in registry.get(op).attrs.items()}      # the op's own, not defaults
    state = E.TilingView().update(op=op, dtype=dtype, soc=soc, n=50_000, max_tiles=2, kernel=flavour, attrs=attrs)
    assert "error" not in state, state.get("error")
    assert state["tiling"] == tiling.compute(op, 50_000, dtype, soc=soc, kernel=flavour, **attrs)
    assert state["lanes"].bars and state["plan"]["tiling"] == state["tiling"]


@pytest.fixture(scope="module")
def facts() -> dict:
    return json.loads(json.dumps(live_tiling.build_facts()))


@pytest.mark.parametrize("op, flavour", CASES)
def test_the_live_tiling_page_tiles_it_as_the_package(op, flavour, facts):
    soc, dtype = _setting(op, flavour)
    if registry.get(op).kernel(flavour).live is None:
        assert flavour not in [k["flavour"] for o in facts["ops"] if o["key"] == op for k in o["kernels"]]
        return
    got = live_tiling.compute(facts, op, 100_003, dtype, soc, kernel=flavour)
    td = tiling.compute(op, 100_003, dtype, soc=soc, kernel=flavour)
    assert got["struct"] == type(td).__name__
    assert got["fields"] == json.loads(json.dumps({k: (v.hex() if isinstance(v, bytes) else v)
                                                   for k, v in td.as_dict().items()}))
    assert got["segments"] and len({s[0] for s in got["segments"]}) == td.blockDim


@pytest.mark.parametrize("op, flavour", API_CASES)
def test_the_validation_playground_names_the_null_tensor(op, flavour):
    api = registry.get(op).aclnn
    soc, dtype = _setting(op, flavour)
    ok = al.validation_case(api.convenience, grad_dtype=dtype, self_dtype=dtype, soc=soc)
    assert ok["status"] == 0 and registry.get(op).op_type in ok["graph"]
    last = api.tensors[-1]
    bad = al.validation_case(api.convenience, grad_dtype=dtype, self_dtype=dtype, soc=soc, null=(last[0],))
    assert bad["status"] == 161001 and last[1] in bad["check"], bad
