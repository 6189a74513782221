"""Thread safety (issue 25, item 1): many threads calling the package at once get exactly what the same calls give
one after another, and leave the process as they found it.

``mixed_calls`` builds a seeded list of calls over both APIs, every SoC, several kernels, the tiling facade, the
standalone launcher and the explorers' data functions, some under the package's context managers (``acl.soc``,
``acl.custom_package``, ``ascendc.options``, ``without_bank_conflicts``, ``log.capture``, nested). The test runs
them serially, then ``THREADS`` threads run ``CALLS`` each (with a short GIL switch interval, so the threads
interleave inside calls), and compares every result: status, output bits, graph, kernel, tiling, cycles, log.
``test_fuzz_front`` reuses ``run_threaded`` for its threaded mode.
"""

from __future__ import annotations

import random
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from helpers import bits

import ascend_lab as al
from ascend_lab import acl, aclnn, standalone, tiling
from ascend_lab.acl import runtime as rt
from ascend_lab.ascendc import options
from ascend_lab.ascendc.cost_model import without_bank_conflicts
from ascend_lab.ascendc.options import current as current_options
from ascend_lab.base import context
from ascend_lab.base import log as oplog
from ascend_lab.explore import tile_maps
from ascend_lab.ops import registry

THREADS = 8
CALLS = 500
SOCS = al.platform.socs()


def process_state() -> dict[str, Any]:
    """Everything a call must leave as it found it."""
    return {"context": context.current(), "process": context.process(), "soc": acl.current_soc().name,
            "custom": acl.custom_packages(), "options": current_options(),
            "initialized": rt.is_initialized(), "device": rt.current_device(), "allocated": rt._state.allocated,
            "live": len(rt._state.live), "streams": set(rt._state.streams), "device_memory": rt.device_memory_size(),
            "pool_ok": rt.pool_bytes() <= rt.pool_limit()}


def _summary(run: al.Run) -> tuple:
    out = None if run.out is None else (run.out.dtype.str, run.out.shape, bits(run.out).tobytes())
    return (run.status, out, tuple(run.graph), run.kernel, repr(run.tiling), round(run.cycles, 6),
            tuple(run.messages), run.workspace_size)


def _capi_hsg(g: np.ndarray, x: np.ndarray, soc: str) -> tuple:
    """aclnnHardsigmoidBackward through the C-named API on the process's runtime (aclInit'ed by the test), the SoC
    chosen for this thread with ``acl.soc``."""
    held, tensors = [], []
    try:
        with acl.soc(soc), oplog.capture() as records:
            for arr in (g, x, np.zeros_like(g)):
                ret, ptr = acl.aclrtMalloc(arr.nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST)
                assert ret == 0
                held.append(ptr)
                assert acl.aclrtMemcpy(ptr, arr.nbytes, arr, arr.nbytes, acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0
                t = acl.aclCreateTensor(arr.shape, acl.ACL_FLOAT, acl.contiguous_strides(arr.shape), 0,
                                        acl.ACL_FORMAT_ND, arr.shape, ptr)
                tensors.append(t)
            ret, ws, exe = aclnn.aclnnHardsigmoidBackwardGetWorkspaceSize(*tensors)
            status = ret
            if ret == 0:
                wsp = None
                if ws:
                    _, wsp = acl.aclrtMalloc(ws, acl.ACL_MEM_MALLOC_HUGE_FIRST)
                    held.append(wsp)
                ret, stream = acl.aclrtCreateStream()
                status = aclnn.aclnnHardsigmoidBackward(wsp, ws, exe, stream)
                acl.aclrtSynchronizeStream(stream)
                acl.aclrtDestroyStream(stream)
            out = np.empty_like(g)
            acl.aclrtMemcpy(out, out.nbytes, held[2], out.nbytes, acl.ACL_MEMCPY_DEVICE_TO_HOST)
        return status, bits(out).tobytes(), ws, tuple(str(r) for r in records)
    finally:
        for t in tensors:
            acl.aclDestroyTensor(t)
        for p in held:
            acl.aclrtFree(p)


def mixed_calls(seed: int, n: int) -> list[tuple[str, Callable[[], Any]]]:
    """``n`` seeded calls, each a (label, thunk) returning a comparable result."""
    rng = random.Random(seed)
    calls: list[tuple[str, Callable[[], Any]]] = []
    ops = tuple(spec.key for spec in registry.ops())
    dtypes = ("float32", "float16", "bfloat16", "int8", "int32", "uint8")
    for i in range(n):
        soc = rng.choice(SOCS)
        r = rng.random()
        size = rng.choice((1, 7, 64, 300))
        nprng = np.random.default_rng(seed * 100_003 + i)
        g = nprng.uniform(-4, 4, size).astype(np.float32)
        x = nprng.uniform(-4, 4, size).astype(np.float32)
        if r < 0.30:
            op, dt, count = rng.choice(ops), rng.choice(dtypes), rng.choice((1, 1000, 10**6, 10**9 + 7))
            in_force = rng.random() < 0.5

            def f(op=op, dt=dt, count=count, soc=soc, in_force=in_force) -> Any:
                try:
                    if in_force:                      # the SoC in force for this thread, not an argument
                        with acl.soc(soc):
                            return repr(tiling.compute(op, count, dt))
                    return repr(tiling.compute(op, count, dt, soc=soc))
                except (ValueError, TypeError) as exc:
                    return f"{type(exc).__name__}: {exc}"
            calls.append(("tiling", f))
        elif r < 0.40:
            op, dt, count = rng.choice(ops), rng.choice(("float32", "float16", "int8")), rng.choice((100, 70_000))

            def f(op=op, dt=dt, count=count, soc=soc) -> Any:
                try:
                    td = tiling.compute(op, count, dt, soc=soc)
                    return repr(tile_maps.tile_map(td, dt, count))
                except (ValueError, TypeError) as exc:
                    return f"{type(exc).__name__}: {exc}"
            calls.append(("tile_map", f))
        elif r < 0.62:
            kernel = rng.choice((None, None, "experimental"))
            wrap = rng.choice(("none", "package", "nobanks", "capture"))
            out_dtype = rng.choice((None, None, "float16", "int32"))

            def f(g=g, x=x, soc=soc, kernel=kernel, wrap=wrap, out_dtype=out_dtype) -> Any:
                def call() -> al.Run:
                    return al.hardsigmoid_backward(g, x, soc=soc, out_dtype=out_dtype, kernel=kernel)

                if wrap == "package":
                    with acl.custom_package():
                        return _summary(call())
                if wrap == "nobanks":
                    with without_bank_conflicts():
                        return _summary(call())
                if wrap == "capture":
                    with oplog.capture() as outer:
                        with oplog.capture() as inner:
                            run = call()
                        return _summary(run), tuple(map(str, outer)), tuple(map(str, inner))
                return _summary(call())
            calls.append(("hardsigmoid_backward", f))
        elif r < 0.80:
            thr = rng.choice((0.0, 0.5, 1.0, -2.0))
            dt = rng.choice((np.float32, np.float16, np.int8))
            trace = rng.random() < 0.2

            def f(g=g, x=x, soc=soc, thr=thr, dt=dt, trace=trace) -> Any:
                run = al.threshold_backward(g.astype(dt), x.astype(dt), thr, soc=soc, trace=trace)
                events = None if run.trace is None else len(run.trace.events)
                return _summary(run), events
            calls.append(("threshold_backward", f))
        elif r < 0.88:
            def f(g=g, x=x, soc=soc) -> Any:
                return _capi_hsg(g, x, soc)
            calls.append(("capi", f))
        elif r < 0.93:
            op, dt = rng.choice(ops), rng.choice(("float32", "int8"))

            def f(op=op, dt=dt, soc=soc) -> Any:
                api = "hardsigmoid_backward" if op == "hard_sigmoid_grad" else "threshold_backward"
                v = al.validation_case(api, grad_dtype=dt, soc=soc)
                return v["status"], v["check"], tuple(v["graph"])
            calls.append(("validation_case", f))
        elif r < 0.97:
            bn = rng.choice((1, 2))
            soc_p = rng.choice(("Ascend910B4", "Ascend950PR", "Ascend310P3"))

            def f(soc=soc_p, bn=bn) -> Any:
                plan = standalone.ub_plan("threshold_grad_v2_d", 50_000, "float16", soc, buffer_num=bn)
                return repr(plan)
            calls.append(("ub_plan", f))
        else:
            soc_k = rng.choice(("Ascend910B4", "Ascend950PR", "Ascend310P3"))
            trace = rng.random() < 0.5

            def f(g=g, x=x, soc=soc_k, trace=trace) -> Any:
                with options(trace=trace):
                    run, out = standalone.run_kernel("threshold_grad_v2_d", g, x, soc=soc, record=trace,
                                                     threshold=0.5)
                return round(run.cycles, 6), bits(out).tobytes(), len(run.trace.events)
            calls.append(("run_kernel", f))
    return calls


def _outcome(thunk: Callable[[], Any]) -> Any:
    try:
        return ("ok", thunk())
    except Exception as exc:                       # an exception is a result too: it must be the same one
        return ("raised", type(exc).__name__, str(exc))


def run_threaded(calls: list[Callable[[], Any]], threads: int, switch_interval: float = 1e-4) -> list[Any]:
    """Run ``calls`` on ``threads`` threads (thread t takes calls t, t + threads, ...), all started together;
    returns the outcomes in the calls' order."""
    results: list[Any] = [None] * len(calls)
    barrier = threading.Barrier(threads)
    errors: list[BaseException] = []

    def worker(t: int) -> None:
        try:
            barrier.wait()
            for i in range(t, len(calls), threads):
                results[i] = _outcome(calls[i])
        except BaseException as exc:               # pragma: no cover - reported below
            errors.append(exc)

    before = sys.getswitchinterval()
    sys.setswitchinterval(switch_interval)
    try:
        pool = [threading.Thread(target=worker, args=(t,), name=f"ascend-lab-{t}") for t in range(threads)]
        for th in pool:
            th.start()
        for th in pool:
            th.join()
    finally:
        sys.setswitchinterval(before)
    assert not errors, errors
    return results


@pytest.fixture
def process_runtime():
    """The process's runtime initialised for the C-API calls (as an application would: aclInit once)."""
    assert acl.aclInit(None) == 0
    assert acl.aclrtSetDevice(0) == 0
    try:
        yield
    finally:
        assert acl.aclFinalize() == 0


def test_threads_match_serial_and_leave_the_process_alone(process_runtime):
    calls = mixed_calls(seed=25, n=THREADS * CALLS)
    thunks = [f for _, f in calls]
    before = process_state()
    t0 = time.perf_counter()
    serial = [_outcome(f) for f in thunks]
    t_serial = time.perf_counter() - t0
    assert process_state() == before
    t0 = time.perf_counter()
    threaded = run_threaded(thunks, THREADS)
    t_threaded = time.perf_counter() - t0
    assert process_state() == before
    bad = [(i, calls[i][0]) for i, (a, b) in enumerate(zip(serial, threaded, strict=True)) if a != b]
    assert not bad, f"{len(bad)} of {len(calls)} threaded calls differ from the serial ones, e.g. {bad[:5]}: " \
                    f"{serial[bad[0][0]]!r:.400} vs {threaded[bad[0][0]]!r:.400}"
    kinds = {label for label, _ in calls}
    assert kinds == {"tiling", "tile_map", "hardsigmoid_backward", "threshold_backward", "capi", "validation_case",
                     "ub_plan", "run_kernel"}, kinds
    assert all(o[0] == "ok" for o in serial), next(o for o in serial if o[0] != "ok")
    print(f"serial {t_serial:.2f} s, {THREADS} threads {t_threaded:.2f} s")


def test_convenience_api_never_touches_the_process_runtime():
    assert not rt.is_initialized()
    run = al.hardsigmoid_backward(np.ones(4, np.float32), np.ones(4, np.float32))
    assert run.status == 0 and not rt.is_initialized() and rt._state.allocated == 0
    assert acl.aclInit(None) == 0        # the caller's runtime: initialised, no device -- and stays so
    try:
        assert al.threshold_backward(np.ones(4, np.float32), np.ones(4, np.float32), 0.5).status == 0
        assert rt.is_initialized() and rt.current_device() is None and rt._state.allocated == 0
    finally:
        assert acl.aclFinalize() == 0


def test_scoped_switches_stay_in_their_thread():
    seen: dict[str, Any] = {}
    entered, leave = threading.Event(), threading.Event()

    def other() -> None:
        entered.wait()
        seen["soc"], seen["custom"] = acl.current_soc().name, acl.custom_packages()
        seen["trace"] = current_options().trace
        leave.set()

    th = threading.Thread(target=other)
    th.start()
    with acl.soc("Ascend950PR"), acl.custom_package(), options(trace=True):
        assert acl.current_soc().name == "Ascend950PR" and current_options().trace
        entered.set()
        leave.wait()
    th.join()
    assert seen == {"soc": "Ascend910B4", "custom": (), "trace": False}


def test_set_soc_is_process_wide_outside_a_block_and_kept_after_an_unrelated_block():
    start = acl.current_soc().name
    try:
        with oplog.capture():
            acl.set_soc("Ascend310P3")          # changed for good: the capture does not undo it
        assert acl.current_soc().name == "Ascend310P3"
        got = []
        th = threading.Thread(target=lambda: got.append(acl.current_soc().name))
        th.start()
        th.join()
        assert got == ["Ascend310P3"]           # a new thread starts from the process-wide SoC
        with acl.soc("Ascend950PR"):
            acl.set_soc("Ascend910A")           # inside the block: undone with it
        assert acl.current_soc().name == "Ascend310P3"
    finally:
        acl.set_soc(start)


def test_nested_captures_by_identity_in_one_thread():
    with oplog.capture() as a:
        with oplog.capture() as b:          # equal (empty) lists: leaving b must remove b, not a
            pass
        with oplog.capture() as c:
            oplog.OP_LOGE("api", "one")
        oplog.OP_LOGE("api", "two")
    assert b == [] and [r.message for r in c] == ["one"] and [r.message for r in a] == ["one", "two"]
    assert context.current().log_sinks == ()


def test_captures_across_threads_collect_their_own_thread():
    got: dict[int, tuple[list[str], list[str]]] = {}
    barrier = threading.Barrier(4)

    def work(t: int) -> None:
        with oplog.capture() as outer:
            barrier.wait()
            for i in range(50):
                with oplog.capture() as inner:
                    oplog.OP_LOGE(f"t{t}", str(i))
                assert [r.message for r in inner] == [str(i)]
            barrier.wait()
        got[t] = [r.api for r in outer], [r.message for r in outer]

    pool = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for th in pool:
        th.start()
    for th in pool:
        th.join()
    assert {t: v for t, v in got.items()} == {t: ([f"t{t}"] * 50, [str(i) for i in range(50)]) for t in range(4)}
    assert context.current().log_sinks == ()
