"""``viz.plot_cann_stack``: chapter 1's picture of one aclnn call, drawn from the Run and the SoC's data."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest
from matplotlib.colors import to_rgb
from matplotlib.patches import Rectangle

import ascend_lab as al
from ascend_lab import viz
from ascend_lab.explore import stack
from ascend_lab.ops import registry
from ascend_lab.viz.style import PIPE_COLORS

#: chapter 1's call (the experimental kernel where its package registers it) and the stock kernels of two SoCs
CALLS = {"experimental": ("Ascend950PR", "experimental"), "tbe": ("Ascend910B4", None), "main": ("Ascend950PR", None)}


@pytest.fixture(scope="module", params=list(CALLS))
def run(request):
    soc, kernel = CALLS[request.param]
    r = al.hardsigmoid_backward(np.ones(8, np.float32), np.arange(8, dtype=np.float32), soc=soc, kernel=kernel)
    assert r.kernel == request.param
    return r


def test_layers_say_what_this_call_did(run):
    soc = al.platform.get_soc(run.soc)
    layers = stack.stack_layers(run, soc.vector_core_num)
    language = "TBE" if run.kernel == "tbe" else "AscendC"
    assert [name for name, _ in layers] == ["aclnn L2 API", "L0 graph (executor)",
                                            "op_host: def, infer-shape, tiling", f"op_kernel: {language} on the AIV"]
    api, graph, host, kernel = (did for _, did in layers)
    assert f"status {run.status}, workspace {run.workspace_size} B" in api
    assert " -> ".join(run.graph) in graph and "no-op: 2 x Contiguous" in graph
    td = run.tiling
    spec = registry.get("HardSigmoidGrad").kernel(run.kernel)      # the tile field the kernel's spec names
    assert f"blockDim {td.blockDim}" in host and f"({spec.tile_field} {getattr(td, spec.tile_field)})" in host
    # 8 elements: the experimental tiling splits CeilDiv(8, 64) = 1 per core over 8 cores (cann_facts §2.1); the
    # main tiling keeps fewer than 1024 on one core (kernel_flavours §2.1), TBE's elewise_v3 fewer than
    # elemsPerBlock x cores x 2 (§5.5)
    share = 1 if run.kernel == "experimental" else 8
    assert f"8 elements, up to {share} per core, blockDim {8 // share}" in host
    assert f"tiles of up to {share} elements" in host
    assert f"tilingKey {td.tilingKey} (float32)" in host
    assert f"{run.kernel} kernel on {td.blockDim} of {soc.vector_core_num} vector cores" in kernel
    assert f"{run.kernel_runs[0].cycles:.0f} cycles" in kernel


def test_tiling_key_names_the_kernel_dtype():
    g = np.ones(8, al.dtypes.bfloat16)
    r = al.hardsigmoid_backward(g, g, soc="Ascend950PR")
    host = stack.stack_layers(r, 64)[2][1]
    assert f"tilingKey {r.tiling.tilingKey} (bfloat16)" in host and r.tiling.tilingKey != 0


def test_figure_fills_one_square_per_used_core(run):
    soc = al.platform.get_soc(run.soc)
    fig = viz.plot_cann_stack(run, soc)
    ax = fig.axes[0]
    cores = [p for p in ax.patches if isinstance(p, Rectangle) and not hasattr(p, "get_boxstyle")]
    assert len(cores) == soc.vector_core_num
    filled = [p for p in cores if p.get_facecolor()[:3] != (1.0, 1.0, 1.0)]
    assert len(filled) == run.tiling.blockDim
    assert all(p.get_facecolor()[:3] == pytest.approx(to_rgb(PIPE_COLORS["V"])) for p in filled)
    texts = [t.get_text() for t in ax.texts]
    assert "op_api/aclnn_hardsigmoid_backward.cpp" in texts
    assert ax.get_title() == (f"One aclnnHardsigmoidBackward call: 8 float32 elements "
                              f"on {soc.name}, layer by layer")


def test_any_registered_op_draws():
    """The figure reads the tiling through the KernelSpec, so ops with other TilingData fields draw too."""
    r = al.threshold_backward(np.ones((4, 300), np.float32), np.ones(300, np.float32), 0.0, soc="Ascend950PR")
    assert r.status == 0 and r.kernel == "main"
    host = stack.stack_layers(r, 64)[2][1]
    assert host.startswith("1200 elements") and "tiles of up to" in host
    viz.plot_cann_stack(r, al.platform.get_soc(r.soc))


def test_a_failed_call_has_no_stack_to_draw():
    bad = al.hardsigmoid_backward(np.ones(4, np.int32), np.ones(4, np.float32))
    with pytest.raises(ValueError, match="launched no kernel"):
        viz.plot_cann_stack(bad, al.platform.get_soc(bad.soc))


def test_viz_stack_does_not_import_the_book_layer():
    tree = ast.parse(Path(stack.__file__).read_text(encoding="utf-8"))
    imported = {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert not any("book" in m for m in imported), imported
