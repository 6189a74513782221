"""Seeded fuzz of the C-named API (issue 14, item 7): random programs of ``acl.*`` and ``aclnn.*`` calls as a C
caller could write them -- malloc/memcpy/memset with random sizes, kinds and (dangling, offset, null) pointers,
aclCreateTensor with random shapes, strides, offsets, storage and dtypes (out-of-enum ones included), phase 1 of
both operators, frees/destroys/aclFinalize/aclrtResetDevice between the phases, workspaces of every wrong kind,
phase 2, destroy, finalize.

Properties:

* no exception escapes the acl/aclnn layers (every argument is one a C caller can pass: ints of any sign and size,
  nullptr, live/freed/offset device pointers, live/destroyed tensors, non-stream handles);
* every status is a documented code, and the statuses the fuzzer can predict are the predicted ones (phase 2
  after a free/destroy of a graph tensor: 361001; after a freed or too small workspace: 161002; ...);
* every status-0 phase 2 equals, bit for bit, the oracle of the kernel that ran (``helpers.oracle_of``: each SoC's
  stock flavour, kernel_flavours §1), and the out allocation outside the out view is untouched;
* the process survives (the fuzz runs in a subprocess) and the global state is intact afterwards: the SoC in force,
  ACL not initialised, no device, no device memory in use, the simulated device size and pool limit restored.

The normal suite runs about 9 s of fuzzing (6 s + 3 s threaded; 107,839 calls in the 6 s when measured);
``ASCEND_LAB_FUZZ_SECONDS`` (``make fuzz`` sets it) runs longer and ``ASCEND_LAB_FUZZ_SEED`` picks the seed.
A failure names its episode seed: ``main(seed, 0, episodes=[n])``
replays it.

Threaded mode (``main_threaded``, issue 25): ``THREADS`` threads fuzz at once, each as its own "process" -- an ACL
runtime of its own (``base.context.scoped(runtime=...)``), so one thread's ``aclFinalize`` is not another's -- over
the shared memory pool, kernels, caches and log. Phase 1 of aclnnThresholdBackward is serialised as its docstring
asks of a multi-threaded caller (CANN keeps the threshold in a file-scope global). Same properties, plus: the
statuses each thread saw equal those of the same episodes replayed serially afterwards.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import threading
import time
import traceback
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
from helpers import oracle_of

from ascend_lab import acl, aclnn, golden
from ascend_lab.acl import runtime as rt
from ascend_lab.base import log as oplog
from ascend_lab.base import platform
from ascend_lab.opdev.errno import AclnnStatus

SECONDS = float(os.environ.get("ASCEND_LAB_FUZZ_SECONDS", "6"))
SEED = int(os.environ.get("ASCEND_LAB_FUZZ_SEED", "14"))

F32, F16, F64 = np.dtype(np.float32), np.dtype(np.float16), np.dtype(np.float64)
BF16 = np.dtype(ml_dtypes.bfloat16)
DT = acl.aclDataType
NP = {DT.ACL_FLOAT: F32, DT.ACL_FLOAT16: F16, DT.ACL_BF16: BF16, DT.ACL_DOUBLE: F64,
      DT.ACL_INT8: np.dtype(np.int8), DT.ACL_UINT8: np.dtype(np.uint8), DT.ACL_INT32: np.dtype(np.int32),
      DT.ACL_INT64: np.dtype(np.int64), DT.ACL_BOOL: np.dtype(np.bool_), DT.ACL_INT16: np.dtype(np.int16)}
FLOATS = (DT.ACL_FLOAT, DT.ACL_FLOAT16, DT.ACL_BF16)
HS_DTYPES = [*FLOATS] * 4 + [DT.ACL_DOUBLE, DT.ACL_INT32, DT.ACL_BOOL, 999, -5]
TH_DTYPES = [*FLOATS, DT.ACL_INT8, DT.ACL_UINT8, DT.ACL_INT32] * 2 + [DT.ACL_INT64, DT.ACL_INT16, DT.ACL_BOOL, 77]
ACLNN_CODES = {int(m) for m in AclnnStatus}
ACL_CODES = {acl.ACL_SUCCESS, acl.ACL_ERROR_INVALID_PARAM, acl.ACL_ERROR_UNINITIALIZE, acl.ACL_ERROR_REPEAT_INITIALIZE,
             acl.ACL_ERROR_RT_PARAM_INVALID, acl.ACL_ERROR_RT_INVALID_DEVICEID, acl.ACL_ERROR_RT_CONTEXT_NULL,
             acl.ACL_ERROR_RT_STREAM_CONTEXT, acl.ACL_ERROR_RT_MEMORY_ALLOCATION}
FLT_EPSILON = np.float32(1.1920929e-07)
#: the fuzz runs with a small simulated device so that absurd workspaces fail fast with 207001
FUZZ_DEVICE_BYTES = 64 << 20
NULLPTR, INVALID, RUNTIME = 161001, 161002, 361001

class _Escaped(Exception):
    pass


class Fuzzer:
    """One seeded stream of random programs; counts every call and its outcome."""

    def __init__(self, seed: int):
        self.seed = seed
        self.calls = 0
        self.outcomes: dict[str, Counter] = defaultdict(Counter)
        self.failures: list[str] = []
        self.oracle_checks = 0
        self.predicted = 0
        self.trail: list[tuple[int, str, str]] = []     # (episode, api, outcome) of every call, in order
        self.episode = 0

    # --- plumbing ------------------------------------------------------------------------------------------
    #: Set in threaded mode: the lock a multi-threaded caller holds around aclnnThresholdBackward's phase 1.
    phase1_lock: Any = None

    def call(self, api: str, fn, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        try:
            if self.phase1_lock is not None and api == "aclnnThresholdBackwardGetWorkspaceSize":
                with self.phase1_lock:
                    res = fn(*args, **kwargs)
            else:
                res = fn(*args, **kwargs)
        except Exception:
            self.fail(f"{api} raised: {traceback.format_exc(limit=4)}")
            raise _Escaped from None
        status = res[0] if isinstance(res, tuple) else res
        if api == "aclCreateTensor" or api == "aclCreateScalar":
            key = "nullptr" if res is None else "object"
        else:
            key = str(status)
            codes = ACLNN_CODES if api.startswith("aclnn") else ACL_CODES
            if status not in codes:
                self.fail(f"{api} returned an undocumented status {status!r}")
        self.outcomes[api][key] += 1
        self.trail.append((self.episode, api, key))
        return res

    def fail(self, message: str) -> None:
        self.failures.append(f"episode {self.episode} (seed {self.seed}): {message}")

    def expect(self, what: str, got: int, want: int | set) -> None:
        wants = want if isinstance(want, set) else {want}
        self.predicted += 1
        if got not in wants:
            self.fail(f"{what}: status {got}, expected {sorted(wants)}")

    # --- memory --------------------------------------------------------------------------------------------
    def malloc(self, nbytes: int) -> Any:
        ret, p = self.call("aclrtMalloc", acl.aclrtMalloc, nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        if ret == 0:
            self.ptrs.append(p)
        return p if ret == 0 else None

    def upload(self, host: np.ndarray, ptr: Any) -> None:
        if host.nbytes:
            self.call("aclrtMemcpy", acl.aclrtMemcpy, ptr, host.nbytes, host, host.nbytes,
                      acl.ACL_MEMCPY_HOST_TO_DEVICE)

    def download(self, ptr: Any, nbytes: int) -> np.ndarray:
        host = np.zeros(nbytes, np.uint8)
        if nbytes:
            ret = self.call("aclrtMemcpy", acl.aclrtMemcpy, host, nbytes, ptr, nbytes, acl.ACL_MEMCPY_DEVICE_TO_HOST)
            if ret != 0:
                self.fail(f"download of a live allocation failed with {ret}")
        return host

    def values(self, n: int, dt: np.dtype) -> np.ndarray:
        rng = self.rng
        if dt == np.bool_:
            return rng.integers(0, 2, n).astype(bool)
        if dt.kind in "iu":
            info = np.iinfo(dt)
            return rng.integers(max(info.min, -2**40), min(info.max, 2**40), n, endpoint=True).astype(dt)
        v = rng.uniform(-6, 6, n)
        special = np.array([0.0, -0.0, 3.0, -3.0, 1.0, np.inf, -np.inf, 2.9999998, -2.9999998, 0.5])
        v = np.where(rng.random(n) < 0.25, special[rng.integers(0, special.size, n)], v)
        with np.errstate(all="ignore"):
            return v.astype(np.float32).astype(dt)

    # --- random tensors ------------------------------------------------------------------------------------
    def shape(self) -> tuple[int, ...]:
        rng = self.rng
        if rng.random() < 0.03:
            return (1,) * 9                                           # rank 9: 161002
        rank = int(rng.integers(0, 5))
        dims = [int(rng.choice([1, 1, 2, 3, 4, 5, 7, 8, 16, 33, 0])) for _ in range(rank)]
        while math.prod(dims) > 600:
            dims[dims.index(max(dims))] //= 2
        return tuple(dims)

    def tensor(self, dtype: Any, shape: tuple[int, ...], *, out: bool) -> dict | None:
        """A random (mostly valid) aclTensor over a fresh allocation; returns its record or None."""
        rng = self.rng
        dtype = int(dtype)                                             # rng.choice hands back numpy ints
        dt = NP.get(DT(dtype)) if dtype in DT._value2member_map_ else None
        item = dt.itemsize if dt is not None else 4
        kind = rng.choice(["plain", "plain", "T", "step", "offset"] + ([] if out else ["bcast"]))
        strides = list(acl.contiguous_strides(shape))
        offset = 0
        if kind == "T" and len(shape) >= 2:
            rev = acl.contiguous_strides(shape[::-1])[::-1]
            strides = list(rev)
        elif kind == "step" and shape:
            strides = [s * 2 for s in strides]
        elif kind == "offset":
            offset = int(rng.integers(1, 9))
        elif kind == "bcast" and shape:
            strides[int(rng.integers(0, len(shape)))] = 0
        span = 1 + sum((d - 1) * s for d, s in zip(shape, strides, strict=True)) if math.prod(shape) else 0
        storage_elems = offset + span if span else int(rng.integers(0, 3))
        storage = (storage_elems,)
        ptr_off = int(rng.choice([0, 0, 0, item, 8 * item]))
        slack = int(rng.choice([0, 0, 32, 100]))
        nbytes = storage_elems * item + ptr_off + slack
        # misuse, a few percent each: negative dim, view past the storage, storage past the allocation, nullptr
        bad = rng.random()
        if bad < 0.02 and shape:
            shape = (-1, *shape[1:])
        elif bad < 0.04 and span:
            storage = (storage_elems - 1,)
        elif bad < 0.06 and storage_elems:
            nbytes -= item
        base = self.malloc(max(nbytes, 1))
        if base is None:
            return None
        ptr = base + ptr_off
        host = self.values(max(storage_elems, 0), dt) if dt is not None else np.zeros(0, np.uint8)
        self.upload(np.ascontiguousarray(host), ptr)
        data = None if (bad > 0.985 and not storage_elems == 0) else ptr
        t = self.call("aclCreateTensor", acl.aclCreateTensor, shape, int(dtype), strides, offset,
                      acl.ACL_FORMAT_ND, storage, data)
        if t is None:
            return None
        return {"t": t, "base": base, "ptr_off": ptr_off, "alloc_bytes": max(nbytes, 1), "dt": dt,
                "shape": shape, "strides": strides, "offset": offset}

    def host_view(self, rec: dict, raw: np.ndarray) -> np.ndarray:
        """The tensor's elements from a host copy of its whole allocation (our own bounds check first)."""
        dt, item = rec["dt"], rec["dt"].itemsize
        start = rec["ptr_off"] + rec["offset"] * item
        n = math.prod(rec["shape"])
        last = start + (sum((d - 1) * s for d, s in zip(rec["shape"], rec["strides"], strict=True)) + 1) * item
        if n and last > raw.size:
            raise AssertionError("status 0 for a tensor reaching past its allocation")
        flat = raw[start:].view(np.uint8)
        usable = (flat.size // item) * item
        elems = flat[:usable].view(dt)
        return np.lib.stride_tricks.as_strided(elems, rec["shape"], [s * item for s in rec["strides"]],
                                               writeable=False).copy()

    # --- one episode ---------------------------------------------------------------------------------------
    def run_episode(self, episode: int) -> None:
        self.episode = episode
        self.rng = np.random.default_rng([self.seed, episode])
        self.ptrs: list[Any] = []
        rng = self.rng
        soc = str(rng.choice(platform.socs()))
        try:
            with acl.soc(soc), oplog.capture():
                self.call("aclInit", acl.aclInit, None)
                if rng.random() < 0.05:
                    again = self.call("aclInit", acl.aclInit, None)
                    self.expect("aclInit twice", again, acl.ACL_ERROR_REPEAT_INITIALIZE)
                dev = int(rng.choice([0] * 12 + [1, 7, 8, -1]))
                ret = self.call("aclrtSetDevice", acl.aclrtSetDevice, dev)
                self.expect("aclrtSetDevice", ret, 0 if 0 <= dev < 8 else acl.ACL_ERROR_RT_INVALID_DEVICEID)
                if ret:
                    self.misuse(3)
                    return
                ret, stream = self.call("aclrtCreateStream", acl.aclrtCreateStream)
                for _ in range(int(rng.integers(1, 4))):
                    self.misuse(int(rng.integers(0, 4)))
                    if not self.operator(stream):
                        return                                      # the runtime was finalized mid-episode
                if rng.random() < 0.5:
                    for t in list(self.ptrs)[: int(rng.integers(0, len(self.ptrs) + 1))]:
                        self.call("aclrtFree", acl.aclrtFree, t)
                if stream is not None:
                    self.call("aclrtDestroyStream", acl.aclrtDestroyStream, stream)
                self.call("aclrtResetDevice", acl.aclrtResetDevice, rt.current_device())
        except _Escaped:
            pass
        finally:
            if rt.is_initialized():
                self.call("aclFinalize", acl.aclFinalize)

    def misuse(self, n: int) -> None:
        """Calls with the arguments a careless C caller passes."""
        rng = self.rng
        for _ in range(n):
            what = int(rng.integers(0, 7))
            ptr = self.ptrs[int(rng.integers(0, len(self.ptrs)))] if self.ptrs and rng.random() < 0.8 else None
            if ptr is not None and rng.random() < 0.3:
                ptr = ptr + int(rng.choice([-8, 4, 1 << 20]))
            size = int(rng.choice([0, -1, 1, 31, 4096, 2**31, 2**40, 2**63, -2**63]))
            if what == 0:
                ret, p = self.call("aclrtMalloc", acl.aclrtMalloc, size, int(rng.choice([0, 1, 2, 3, -1])))
                if ret == 0:
                    self.ptrs.append(p)
                else:
                    self.expect("aclrtMalloc", ret, {acl.ACL_ERROR_INVALID_PARAM, acl.ACL_ERROR_RT_MEMORY_ALLOCATION,
                                                     acl.ACL_ERROR_RT_CONTEXT_NULL})
            elif what == 1:
                self.call("aclrtFree", acl.aclrtFree, ptr)
            elif what == 2:
                host = np.zeros(int(rng.choice([0, 8, 64])), np.uint8)
                kind = int(rng.choice([0, 1, 2, 3, 4, -1]))
                count = int(rng.choice([0, 8, 64, -1, 2**40]))
                dst, src = (ptr, host) if rng.random() < 0.5 else (host, ptr)
                self.call("aclrtMemcpy", acl.aclrtMemcpy, dst, int(rng.choice([count, 64, 0])), src, count, kind)
            elif what == 3:
                value = rng.choice([0, 255, 0x1FF, -1, 1.5, None, "x"])
                self.call("aclrtMemset", acl.aclrtMemset, ptr, int(rng.choice([64, -1, 2**40])),
                          value if not isinstance(value, np.generic) else int(value),
                          int(rng.choice([0, 8, 64, -5])))
            elif what == 4:
                handle = rng.choice([None, 5, "s"]) if rng.random() < 0.5 else ptr
                self.call("aclrtSynchronizeStream", acl.aclrtSynchronizeStream, handle)
                self.call("aclrtDestroyStream", acl.aclrtDestroyStream, handle)
            elif what == 5:
                dims = [int(d) for d in rng.choice([-3, 0, 1, 4, 2**40], size=int(rng.integers(0, 4)))]
                strides = [int(s) for s in rng.choice([-1, 0, 1, 7, 2**50], size=len(dims))]
                self.call("aclCreateTensor", acl.aclCreateTensor, dims, int(rng.choice([0, 1, 27, 13, 500, -9])),
                          strides, int(rng.choice([0, 3, -2, 2**62])), acl.ACL_FORMAT_ND,
                          [int(d) for d in rng.choice([0, 4, 2**40], size=int(rng.integers(0, 3)))], ptr)
            else:
                self.call("aclCreateScalar", acl.aclCreateScalar, float(rng.choice([1.0, 1e300, -0.0, np.nan])),
                          int(rng.choice([0, 1, 11, 3, 27])))

    def operator(self, stream: Any) -> bool:
        """Phase 1 of a random operator call, something between the phases, phase 2, checks. False when the
        runtime is no longer initialised afterwards."""
        rng = self.rng
        op = "hs" if rng.random() < 0.5 else "th"
        shape = self.shape()
        if op == "hs":
            g_dt = rng.choice(HS_DTYPES)
            x_dt = g_dt if rng.random() < 0.6 else rng.choice(HS_DTYPES)
            o_dt = rng.choice([*FLOATS, DT.ACL_DOUBLE, DT.ACL_INT32, 12345])
            g_shape = shape if rng.random() < 0.9 else self.shape()
            o_shape = shape if rng.random() < 0.9 else self.shape()
            thr = None
        else:
            g_dt = rng.choice(TH_DTYPES)
            x_dt = g_dt if rng.random() < 0.85 else rng.choice(TH_DTYPES)
            o_dt = x_dt if rng.random() < 0.9 else rng.choice(TH_DTYPES)
            g_shape = shape
            if rng.random() < 0.35 and shape:                          # broadcasting gradOutput
                g_shape = tuple(1 if rng.random() < 0.5 else d for d in shape)[int(rng.integers(0, 2)):]
            o_shape = tuple(np.broadcast_shapes(shape, g_shape)) if rng.random() < 0.9 else self.shape()
            thr_value = float(rng.choice([0.0, 1.0, -0.5, 2.5, 1e-9, 100.0, 3.0]))
            thr_dtype = int(rng.choice([0, 0, 11, 1]))
            thr = self.call("aclCreateScalar", acl.aclCreateScalar, thr_value, thr_dtype)
        g = self.tensor(g_dt, g_shape, out=False)
        x = g if (rng.random() < 0.1 and g_shape == shape and x_dt == g_dt and g is not None) else \
            self.tensor(x_dt, shape, out=False)
        o = self.tensor(o_dt, o_shape, out=True)
        args = [None if r is None else r["t"] for r in (g, x, o)]
        if op == "hs":
            ret, ws, exe = self.call("aclnnHardsigmoidBackwardGetWorkspaceSize",
                                     aclnn.aclnnHardsigmoidBackwardGetWorkspaceSize, *args)
        else:
            ret, ws, exe = self.call("aclnnThresholdBackwardGetWorkspaceSize",
                                     aclnn.aclnnThresholdBackwardGetWorkspaceSize, args[0], args[1], thr, args[2])
        if ret != 0:
            if exe is not None:
                self.fail(f"phase 1 returned {ret} and an executor")
            return True
        phase2 = aclnn.aclnnHardsigmoidBackward if op == "hs" else aclnn.aclnnThresholdBackward
        # the inputs as the device holds them now (after phase 1, before anything is freed)
        snap = {k: self.download(r["base"], r["alloc_bytes"]) for k, r in (("g", g), ("x", x), ("o", o))}
        # the workspace
        w_kind = rng.choice(["ok"] * 8 + ["bigger", "small", "null", "freed", "badsize"])
        w, w_size, want = None, ws, {0}
        if ws:
            if w_kind == "null":
                want = {NULLPTR}
            elif w_kind == "small":
                w = self.malloc(max(ws // 2, 1))
                want = {INVALID}
            else:
                w = self.malloc(ws + (4096 if w_kind == "bigger" else 0))
                if w is None:                                          # 207001: too big for the fuzz device
                    want = {NULLPTR}
                elif w_kind == "freed":
                    self.call("aclrtFree", acl.aclrtFree, w)
                    want = {INVALID}
        if w_kind == "badsize":
            w_size, want = -1, {INVALID}
        # between the phases
        graph_nodes = list(exe.nodes)
        between = rng.choice(["nothing"] * 6 + ["free_g", "free_x", "free_o", "destroy_g", "destroy_x",
                                                  "destroy_o", "finalize", "reset", "stream"])
        s = stream
        touched_graph = bool(graph_nodes)
        if between.startswith(("free_", "destroy_")):
            rec = {"g": g, "x": x, "o": o}[between[-1]]
            if between.startswith("free_"):
                self.call("aclrtFree", acl.aclrtFree, rec["base"])
            else:
                self.call("aclDestroyTensor", acl.aclDestroyTensor, rec["t"])
            if touched_graph and want == {0}:
                want = {RUNTIME}
        elif between in ("finalize", "reset"):
            if between == "finalize":
                self.call("aclFinalize", acl.aclFinalize)
            else:
                device = rt.current_device()
                self.expect("aclrtResetDevice", self.call("aclrtResetDevice", acl.aclrtResetDevice, device), 0)
            # workspaceSize is checked before the context, the workspace pointer after it
            want = {INVALID} if w_kind == "badsize" else {RUNTIME}
        elif between == "stream" and stream is not None:
            ret_s, s = self.call("aclrtCreateStream", acl.aclrtCreateStream)
            self.call("aclrtDestroyStream", acl.aclrtDestroyStream, s)
            want = {INVALID} if w_kind != "null" or not ws else want | {INVALID}
        status = self.call(phase2.__name__, phase2, w, w_size, exe, s)
        self.expect(f"{phase2.__name__} after {between} with a {w_kind} workspace", status, want)
        if status == 0:
            self.check_result(op, exe, g, x, o, snap, thr)
            again = self.call(phase2.__name__, phase2, w, w_size, exe, s)
            self.expect("phase 2 run twice", again, INVALID)
        if between == "finalize":
            return False
        if between == "reset":
            ret = self.call("aclrtSetDevice", acl.aclrtSetDevice, int(rng.integers(0, 8)))
            self.expect("aclrtSetDevice after reset", ret, 0)
        for r in (g, x, o):
            if r is not None and rng.random() < 0.7:
                self.call("aclDestroyTensor", acl.aclDestroyTensor, r["t"])
        return True

    def check_result(self, op: str, exe: Any, g: dict, x: dict, o: dict, snap: dict, thr: Any) -> None:
        """A status-0 phase 2: out's view holds the oracle's values and the rest of its allocation is intact."""
        self.oracle_checks += 1
        try:
            gv, xv = self.host_view(g, snap["g"]), self.host_view(x, snap["x"])
            kernel = next((n for n in exe.nodes if "tiling" in n.attrs), None)
            if kernel is None:                                     # an empty graph writes nothing
                if o["base"].allocation.freed:
                    return
                got = self.download(o["base"], o["alloc_bytes"])
                if not (got == snap["o"]).all():
                    self.fail("an empty graph changed out")
                return
            flavour = kernel.attrs["kernel"]
            _, oracle = oracle_of(exe)                             # the kernel node's oracle, its attrs bound
            with np.errstate(all="ignore"):
                if op == "hs":
                    p = gv.dtype if gv.dtype == xv.dtype else F32     # PromoteType of two different floats
                    y = oracle(golden.cast(gv, p), golden.cast(xv, p))
                    want = y if o["dt"] == p else (y.astype(F64) if o["dt"] == F64 else
                                                   golden.cast(y, o["dt"], "CAST_RINT"))
                else:
                    thr32 = thr.ToFloat()
                    shape = np.broadcast_shapes(gv.shape, xv.shape)
                    gb, xb = np.broadcast_to(gv, shape).copy(), np.broadcast_to(xv, shape).copy()
                    relu = abs(thr32) <= FLT_EPSILON
                    if kernel.op != ("ReluGrad" if relu else "ThresholdGradV2D"):
                        self.fail(f"threshold {thr32} ran {kernel.op}")
                        return
                    if not relu and np.float32(kernel.attrs["threshold"]).view(np.uint32) != np.float32(thr32).view(
                            np.uint32):                    # the oracle reads the node's threshold: check it first
                        self.fail(f"threshold {thr32} reached {kernel.op} as {kernel.attrs['threshold']}")
                        return
                    want = oracle(gb, xb)
            expected = snap["o"].copy()
            dt, item = o["dt"], o["dt"].itemsize
            start = o["ptr_off"] + o["offset"] * item
            elems = expected[start:start + ((expected.size - start) // item) * item].view(dt)
            np.lib.stride_tricks.as_strided(elems, o["shape"], [s * item for s in o["strides"]])[...] = want
            got = self.download(o["base"], o["alloc_bytes"])
            if not (got == expected).all():
                bad = int((got != expected).sum())
                self.fail(f"{op} on {acl.current_soc().name} ({flavour}): {bad} bytes of out differ from the oracle "
                          f"(g {gv.dtype}{list(gv.shape)}, x {xv.dtype}{list(xv.shape)}, out {dt}{list(o['shape'])})")
        except Exception:
            self.fail(f"oracle check failed: {traceback.format_exc(limit=4)}")


def main(seed: int, seconds: float, episodes: list[int] | None = None) -> dict:
    """Fuzz for ``seconds`` (or replay ``episodes``), then check the global state; returns the report."""
    soc_before = acl.current_soc().name
    init_before = rt.is_initialized()
    size_before = rt.set_device_memory_size(FUZZ_DEVICE_BYTES)
    pool_limit = rt.pool_limit()
    fz = Fuzzer(seed)
    t0 = time.perf_counter()
    n = 0
    try:
        for e in (episodes if episodes is not None else iter(int, 1)):
            fz.run_episode(e if episodes is not None else n)
            n += 1
            if episodes is None and time.perf_counter() - t0 >= seconds:
                break
    finally:
        rt.set_device_memory_size(size_before)
    state = {"soc": acl.current_soc().name == soc_before, "initialized": rt.is_initialized() == init_before,
             "device": rt.current_device() is None, "allocated": rt._state.allocated == 0,
             "device_size": rt.device_memory_size() == size_before, "pool": rt.pool_bytes() <= rt.pool_limit()
             and rt.pool_limit() == pool_limit}
    return {"seed": seed, "seconds": round(time.perf_counter() - t0, 1), "episodes": n, "calls": fz.calls,
            "oracle_checks": fz.oracle_checks, "predicted": fz.predicted, "failures": fz.failures[:20],
            "n_failures": len(fz.failures), "state": state,
            "outcomes": {api: dict(c) for api, c in sorted(fz.outcomes.items())}}


#: Threads of the threaded mode, and its share of the fuzzing time (the suite's default: a few seconds).
THREADS = 4
THREADED_SECONDS = max(SECONDS / 5, 3.0)


def main_threaded(seed: int, seconds: float, threads: int = THREADS) -> dict:
    """``threads`` fuzzers at once for ``seconds``, each on an ACL runtime of its own; then each thread's episodes
    replayed serially, which must give the same statuses. Returns the report (as ``main``)."""
    from ascend_lab.base import context
    soc_before, pool_limit = acl.current_soc().name, rt.pool_limit()
    process_before = context.process()
    lock = threading.Lock()
    fuzzers = [Fuzzer(seed * 1000 + t) for t in range(threads)]
    episodes: list[list[int]] = [[] for _ in range(threads)]
    errors: list[str] = []
    barrier = threading.Barrier(threads)
    t0 = time.perf_counter()

    def work(t: int) -> None:
        fz = fuzzers[t]
        fz.phase1_lock = lock
        try:
            with context.scoped(runtime=rt._State(device_memory=FUZZ_DEVICE_BYTES)):
                barrier.wait()
                n = 0
                while time.perf_counter() - t0 < seconds or n < 3:
                    fz.run_episode(n)
                    episodes[t].append(n)
                    n += 1
        except BaseException:
            errors.append(traceback.format_exc(limit=6))

    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)                        # interleave the threads inside calls, not only between them
    try:
        pool = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
        for th in pool:
            th.start()
        for th in pool:
            th.join()
    finally:
        sys.setswitchinterval(before)
    threaded_seconds = time.perf_counter() - t0
    mismatches = []
    for t, fz in enumerate(fuzzers):                   # the same episodes, one thread, one runtime of their own
        again = Fuzzer(fz.seed)
        with context.scoped(runtime=rt._State(device_memory=FUZZ_DEVICE_BYTES)):
            for e in episodes[t]:
                again.run_episode(e)
        if again.trail != fz.trail:
            first = next((i for i, (a, b) in enumerate(zip(again.trail, fz.trail, strict=False)) if a != b),
                         min(len(again.trail), len(fz.trail)))
            mismatches.append(f"thread {t} (seed {fz.seed}): call {first} serial "
                              f"{again.trail[first:first + 1]} vs threaded {fz.trail[first:first + 1]}")
    outcomes: dict[str, Counter] = defaultdict(Counter)
    for fz in fuzzers:
        for api, c in fz.outcomes.items():
            outcomes[api].update(c)
    failures = errors + [f for fz in fuzzers for f in fz.failures] + mismatches
    state = {"soc": acl.current_soc().name == soc_before, "process": context.process() == process_before,
             "initialized": not rt.is_initialized(), "device": rt.current_device() is None,
             "allocated": rt._state.allocated == 0, "pool": rt.pool_bytes() <= rt.pool_limit()
             and rt.pool_limit() == pool_limit}
    return {"seed": seed, "threads": threads, "seconds": round(threaded_seconds, 1),
            "episodes": sum(map(len, episodes)), "calls": sum(fz.calls for fz in fuzzers),
            "oracle_checks": sum(fz.oracle_checks for fz in fuzzers), "failures": failures[:20],
            "n_failures": len(failures), "state": state,
            "outcomes": {api: dict(c) for api, c in sorted(outcomes.items())}}


def _fuzz_in_subprocess(seed: int, seconds: float, mode: str = "main") -> dict:
    here = Path(__file__).resolve().parent
    code = (f"import sys, json; sys.path.insert(0, {str(here)!r}); import test_fuzz_capi as f; "
            f"print(json.dumps(f.{mode}({seed}, {seconds})))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=seconds * 3 + 120,
                         cwd=here.parent)
    assert res.returncode == 0, f"the fuzz process died (exit {res.returncode}):\n{res.stderr[-3000:]}"
    return json.loads(res.stdout.strip().splitlines()[-1])


def test_fuzz_c_api():
    report = _fuzz_in_subprocess(SEED, SECONDS)
    outcomes = report["outcomes"]
    print(f"\nfuzz seed {report['seed']}: {report['calls']} calls in {report['episodes']} episodes "
          f"({report['seconds']} s), {report['oracle_checks']} results checked against the oracle, "
          f"{report['predicted']} statuses predicted")
    for api, counts in outcomes.items():
        print(f"  {api}: {counts}")
    assert report["n_failures"] == 0, "\n".join(report["failures"])
    assert all(report["state"].values()), report["state"]
    # the run must have reached the interesting outcomes, or it proves little
    assert report["calls"] > 1000 and report["oracle_checks"] > 30, report
    for api in ("aclnnHardsigmoidBackward", "aclnnThresholdBackward"):
        for code in ("0", str(RUNTIME), str(INVALID)):
            assert outcomes[api].get(code, 0) > 0, (api, code, outcomes[api])
    assert outcomes["aclrtMalloc"].get(str(acl.ACL_ERROR_RT_MEMORY_ALLOCATION), 0) > 0
    assert outcomes["aclCreateTensor"].get("nullptr", 0) > 0 and outcomes["aclCreateTensor"]["object"] > 0


def test_fuzz_c_api_threaded():
    """THREADS fuzzers at once (each its own ACL runtime, as separate processes would have): nothing escapes, the
    oracle holds, every thread's statuses equal a serial replay of its episodes, the process state is intact."""
    report = _fuzz_in_subprocess(SEED, THREADED_SECONDS, "main_threaded")
    print(f"\nthreaded fuzz seed {report['seed']}: {report['threads']} threads, {report['calls']} calls in "
          f"{report['episodes']} episodes ({report['seconds']} s), {report['oracle_checks']} oracle checks")
    assert report["n_failures"] == 0, "\n".join(report["failures"])
    assert all(report["state"].values()), report["state"]
    assert report["calls"] > 200 and report["oracle_checks"] > 5, report
