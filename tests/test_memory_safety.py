"""Memory safety between the two phases (issue 14, item 1): free or destroy any tensor of an aclnn graph after
phase 1 and phase 2 must answer with a status and a log line naming the tensor -- never run over freed
memory, never crash the process.

The scenarios run in a fresh interpreter (``sys.executable -c``), all of them one after another in the same one
(one interpreter start instead of ten: about 6 CPU s less): a heap corruption or SIGSEGV there fails the tests
instead of killing pytest. After each scenario the worker allocates and collects plenty of Python objects, which is
what made the corrupted heap of the original bug abort ("corrupted double-linked list") -- in the scenario that
corrupted it, or at the latest in the next one.

Expected answers (the docstring of ``opdev.aclnn_common.CommonOpExecutorRun`` gives the reasons):

* an input or ``out`` freed by ``aclrtFree``, destroyed by ``aclDestroyTensor``, or everything released by
  ``aclFinalize``: ``ACLNN_ERR_RUNTIME_ERROR`` (361001), the log names the tensor, ``out`` is untouched;
* the workspace freed: ``ACLNN_ERR_PARAM_INVALID`` (161002) -- the workspace pointer is a phase-2 argument --
  and the log names the workspace tensors it would hold;
* nothing freed: 0 and the values of the oracle of the kernel that ran (``helpers.oracle_of``: the stock
  kernel of the SoC, kernel_flavours §1).

The graphs cover every L0 node kind: Contiguous of a strided input, Cast (mixed dtypes, and a narrower out)
for aclnnHardsigmoidBackward, ViewCopy into a strided out, plus both kernels of ThresholdBackward
(ThresholdGradV2D, ReluGrad). Broadcasting shapes have no node of their own any more (kernel_flavours §6): the
kernel takes both inputs with their own shapes, on the default SoC (TBE) and on Ascend950PR (main).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

RUNTIME_ERROR, INVALID = 361001, 161002
TARGETS = ("none", "gradOutput", "self", "out", "workspace", "destroy:gradOutput", "destroy:self", "destroy:out",
           "finalize")

#: (op, kind) -> the L0 node whose path the scenario must exercise
CASES = {
    ("hs", "plain"): "HardSigmoidGrad",
    ("hs", "contiguous"): "Contiguous",
    ("hs", "cast"): "Cast",
    ("hs", "viewcopy"): "ViewCopy",
    ("th", "plain"): "ThresholdGradV2D",
    ("th", "contiguous"): "Contiguous",
    ("th", "broadcast"): "ThresholdGradV2D",
    ("th", "broadcast-950"): "ThresholdGradV2D",
    ("th", "viewcopy"): "ViewCopy",
    ("th", "relu"): "ReluGrad",
}
TESTS = str(Path(__file__).resolve().parent)

_WORKER = r'''
import contextlib, gc, json, sys
import numpy as np
from ascend_lab import acl, aclnn, golden
from ascend_lab.base import log as oplog
sys.path.insert(0, sys.argv[2])
from helpers import oracle_of

F32, F16 = np.dtype(np.float32), np.dtype(np.float16)
ACL = {F32: acl.ACL_FLOAT, F16: acl.ACL_FLOAT16}
rng = np.random.default_rng(14)


def start():
    assert acl.aclInit(None) == 0 and acl.aclrtSetDevice(0) == 0


def upload(storage):
    ret, p = acl.aclrtMalloc(storage.nbytes, 0)
    assert ret == 0
    assert acl.aclrtMemcpy(p, storage.nbytes, storage, storage.nbytes, 1) == 0
    return p


def tensor(storage, shape, strides, offset=0):
    p = upload(storage)
    t = acl.aclCreateTensor(shape, ACL[storage.dtype], strides, offset, acl.ACL_FORMAT_ND, storage.shape, p)
    assert t is not None
    return t, p


def host_view(storage, shape, strides, offset=0):
    item = storage.itemsize
    return np.lib.stride_tricks.as_strided(storage.reshape(-1)[offset:], shape, [s * item for s in strides])


def values(shape, dtype):
    return rng.uniform(-5, 5, shape).astype(dtype)


def build(op, kind):
    """Tensors and host copies for one graph; returns (args, ptrs, out_storage, out view spec, expected(oracle))."""
    shape = (6, 8)
    g_dt = F16 if kind == "cast" else F32
    o_dt = F16 if kind == "cast" else F32
    g_shape = (6, 1) if kind.startswith("broadcast") else shape
    g_np = values(g_shape, g_dt)
    x_np = values(shape, F32)
    if kind == "contiguous":                      # self is a transposed view of an (8, 6) storage
        x_store = np.ascontiguousarray(x_np.T)
        x, px = tensor(x_store, shape, (1, 6))
    else:
        x, px = tensor(x_np.copy(), shape, (8, 1))
    g, pg = tensor(g_np.copy(), g_shape, (g_shape[1], 1))
    if kind == "viewcopy":                        # out: every other column of a (6, 16) storage
        o_store, o_spec = np.full((6, 16), 7, o_dt), (shape, (16, 2))
    else:
        o_store, o_spec = np.full(shape, 7, o_dt), (shape, (8, 1))
    o, po = tensor(o_store.copy(), *o_spec)
    if op == "hs":
        p = np.result_type(g_dt, F32)

        def want(oracle):
            y = oracle(golden.cast(g_np, p), golden.cast(x_np, p))
            return y if o_dt == p else golden.cast(y, o_dt, "CAST_RINT")
        return [g, x, o], {"gradOutput": pg, "self": px, "out": po}, o_store, o_spec, want
    thr = 0.0 if kind == "relu" else 1.0
    gb = np.broadcast_to(g_np, shape).copy()
    return [g, x, acl.aclCreateScalar(thr, acl.ACL_FLOAT), o], {"gradOutput": pg, "self": px, "out": po}, \
        o_store, o_spec, lambda oracle: oracle(gb, x_np)


def scenario(op, kind, target):
    with acl.soc("Ascend950PR") if kind.endswith("-950") else contextlib.nullcontext():
        return _scenario(op, kind, target)


def _scenario(op, kind, target):
    start()
    args, ptrs, o_store, o_spec, expected = build(op, kind)
    gws = aclnn.aclnnHardsigmoidBackwardGetWorkspaceSize if op == "hs" else aclnn.aclnnThresholdBackwardGetWorkspaceSize
    run = aclnn.aclnnHardsigmoidBackward if op == "hs" else aclnn.aclnnThresholdBackward
    ret, ws, exe = gws(*args)
    assert ret == 0, ret
    graph = [n.op for n in exe.nodes if n.launches_kernel]
    kernel = next(n for n in exe.nodes if "kernel" in n.attrs)
    want = expected(oracle_of(exe)[1])
    w = None
    if ws:
        r, w = acl.aclrtMalloc(ws, 0)
        assert r == 0
    ret_stream, stream = acl.aclrtCreateStream()
    tensors = {"gradOutput": args[0], "self": args[1], "out": args[-1]}
    res = {"graph": graph, "ws": ws, "workspace_tensors": [t.name for t, _ in exe.workspace_tensors],
           "kernel": kernel.attrs["kernel"], "kernel_inputs": [list(t.view_dims) for t in kernel.inputs]}
    if target == "workspace":
        if w is None:
            res["skipped"] = "no workspace"
            acl.aclFinalize()
            return res
        assert acl.aclrtFree(w) == 0
    elif target == "finalize":
        assert acl.aclFinalize() == 0
    elif target.startswith("destroy:"):
        assert acl.aclDestroyTensor(tensors[target.split(":")[1]]) == 0
    elif target != "none":
        assert acl.aclrtFree(ptrs[target]) == 0
    with oplog.capture() as recs:
        res["status"] = run(w, ws, exe, stream)
    res["log"] = [r.message for r in recs]
    junk = [np.ones(100) for _ in range(1000)]          # what made the corrupted heap abort
    del junk
    gc.collect()
    if target not in ("out", "finalize"):
        host = np.zeros_like(o_store)
        assert acl.aclrtMemcpy(host, host.nbytes, ptrs["out"], host.nbytes, 2) == 0
        got = host_view(host, *o_spec)
        if target == "none":
            res["matches_oracle"] = bool((got.view(np.uint8 if got.itemsize == 1 else
                                          {2: np.uint16, 4: np.uint32}[got.itemsize])
                                          == np.ascontiguousarray(want).view(
                                              {2: np.uint16, 4: np.uint32}[want.itemsize])).all())
            untouched = host.copy()
            host_view(untouched, *o_spec)[...] = 7
            res["rest_untouched"] = bool((untouched == 7).all())
        else:
            res["out_untouched"] = bool((host == 7).all())
    if target != "finalize":
        acl.aclrtDestroyStream(stream)
        acl.aclFinalize()
    return res


results = {}
for op, kind, target in json.loads(sys.argv[1]):
    results[f"{op}/{kind}/{target}"] = scenario(op, kind, target)
print(json.dumps(results))
print("SURVIVED")
'''


def _run_worker(scenarios: list[tuple[str, str, str]]) -> dict:
    res = subprocess.run([sys.executable, "-c", _WORKER, json.dumps(scenarios), TESTS], capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 0, f"the worker died (exit {res.returncode}):\n{res.stderr[-3000:]}"
    lines = res.stdout.strip().splitlines()
    assert lines[-1] == "SURVIVED"
    return json.loads(lines[-2])


@pytest.fixture(scope="module")
def every_scenario() -> dict:
    """Every (op, kind, target) of CASES x TARGETS, run in one worker process."""
    return _run_worker([(op, kind, t) for op, kind in CASES for t in TARGETS])


@pytest.mark.parametrize("op, kind", list(CASES))
def test_free_or_destroy_each_graph_tensor_between_the_phases(op, kind, every_scenario):
    results = every_scenario
    node = CASES[(op, kind)]
    for target in TARGETS:
        r = results[f"{op}/{kind}/{target}"]
        where = f"{op}/{kind}/{target}: {r}"
        assert node in r["graph"], where
        assert r["kernel"] == ("main" if kind.endswith("-950") else "tbe"), where      # the stock kernel
        if kind.startswith("broadcast"):           # no BroadcastTo: the kernel takes the inputs as they are
            assert "BroadcastTo" not in r["graph"] and r["kernel_inputs"] == [[6, 1], [6, 8]], where
        if target == "none":
            assert r["status"] == 0 and r["log"] == [], where
            assert r["matches_oracle"] and r["rest_untouched"], where
            continue
        if target == "workspace":                     # the kernel's output always lives in the workspace
            assert r["ws"] > 0 and not r.get("skipped"), where
            assert r["status"] == INVALID, where
            (line,) = r["log"]
            assert "workspace" in line and "aclrtMalloc" in line, where
            for name in r["workspace_tensors"]:
                assert f"workspace tensor {name}" in line, where
            assert r["out_untouched"], where
            continue
        assert r["status"] == RUNTIME_ERROR, where
        (line,) = r["log"]
        if target == "finalize":
            assert "aclFinalize" in line and "gradOutput (" in line, where
            continue
        name = target.split(":")[-1]
        assert f"{name} (" in line and "nothing was run" in line, where
        reason = "destroyed by aclDestroyTensor" if target.startswith("destroy:") else "released by aclrtFree"
        assert reason in line, where
        if name != "out":
            assert r["out_untouched"], where           # the graph did not half-run


#: The reproducer from issue 14, verbatim: it segfaulted every time before the fix.
ISSUE_14_REPRODUCER = """\
import numpy as np; from ascend_lab import acl, aclnn
acl.aclInit(None); acl.aclrtSetDevice(0)
def t(a):
    _, p = acl.aclrtMalloc(a.nbytes, 0); acl.aclrtMemcpy(p, a.nbytes, a, a.nbytes, 1)
    return acl.aclCreateTensor(a.shape, a.dtype, None, 0, 2, a.shape, p), p
(g, _), (x, _), (o, po) = t(np.ones(1000, np.float32)), t(np.ones(1000, np.float32)), t(np.zeros(1000, np.float32))
ret, ws, exe = aclnn.aclnnHardsigmoidBackwardGetWorkspaceSize(g, x, o); _, w = acl.aclrtMalloc(ws, 0)
acl.aclrtFree(po); print(aclnn.aclnnHardsigmoidBackward(w, ws, exe, None)); [np.ones(100) for _ in range(1000)]
"""


def test_issue_14_reproducer_survives_and_reports_the_freed_out():
    then = "from ascend_lab.base import log; print(log.records()[-1].message)\n"
    res = subprocess.run([sys.executable, "-c", ISSUE_14_REPRODUCER + then], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    status, line = res.stdout.strip().splitlines()
    assert status == str(RUNTIME_ERROR)
    assert "out (float32[1000]) points into device memory released by aclrtFree" in line


def test_phase2_after_reset_device_is_a_runtime_error():
    """No device (aclrtResetDevice) is no context either: the graph does not run."""
    code = r'''
import numpy as np
from ascend_lab import acl, aclnn
from ascend_lab.base import log as oplog
acl.aclInit(None); acl.aclrtSetDevice(0)
def t(a):
    _, p = acl.aclrtMalloc(a.nbytes, 0); acl.aclrtMemcpy(p, a.nbytes, a, a.nbytes, 1)
    return acl.aclCreateTensor(a.shape, a.dtype, None, 0, 2, a.shape, p)
g, x, o = t(np.ones(64, np.float32)), t(np.ones(64, np.float32)), t(np.zeros(64, np.float32))
ret, ws, exe = aclnn.aclnnThresholdBackwardGetWorkspaceSize(g, x, acl.aclCreateScalar(0.5, 0), o)
_, w = acl.aclrtMalloc(ws, 0)
acl.aclrtResetDevice(0)
with oplog.capture() as recs:
    print(aclnn.aclnnThresholdBackward(w, ws, exe, None))
print(recs[0].message)
'''
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    status, line = res.stdout.strip().splitlines()
    assert int(status) == RUNTIME_ERROR and "no device is set" in line
