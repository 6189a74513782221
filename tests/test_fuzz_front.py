"""Seeded fuzz of the front doors (issue 14, item 7): the convenience layer, the tiling front door and the CLI, called
as a user would call them -- with random shapes (broadcast, strided, 0-d, empty), dtypes, SoCs, kernel flavours
(invalid names included), thresholds, out arrays of every wrong kind; random tiling arguments (counts of any size
and type, dtypes, core counts, UB sizes, SoCs, kernels, attributes); and random CLI argument lists.

Properties:

* nothing but ``ValueError``/``TypeError`` with a message escapes the convenience layer or the tiling front door,
  and never an exception from the aclnn/acl layers underneath (they answer with status codes);
* every status-0 result equals, bit for bit, the oracle of the kernel that ran (``helpers.oracle_of``), after the
  promotion, broadcast and output cast the graph does;
* a tiling that is returned packs to bytes and asks for at least one core;
* the CLI returns 0, 1 or 2 and never prints a traceback;
* the process survives (the fuzz runs in a subprocess), and the global state is intact afterwards: the SoC in force,
  ACL's init state, no device set, no device memory held, no custom package installed.

The normal suite runs about 16 s (10 s + two modes of 3 s; 9,402 cases in the 10 s when measured);
``ASCEND_LAB_FUZZ_SECONDS`` (``make fuzz`` sets it) runs longer and ``ASCEND_LAB_FUZZ_SEED`` picks the seed.
A failure names its case: ``main(seed, 0, cases=[n])`` replays it.

Two more modes (issue 25), each in a subprocess and bounded like the main one:

* threaded (``main_threaded``): ``THREADS`` fuzzers call the convenience layer and the tiling front door at once
  (the CLI, which writes sys.stdout, stays serial); the same properties hold in every thread, every thread's outcomes
  equal a serial replay of its cases, and the process state is unchanged;
* limits (``main_limits``, run under ``RLIMIT_AS``): broadcast views and arrays too large for the simulated device or
  the host, element counts at and past int64, absurd UB sizes and SoCs, bad aclFormats, the CLI on shapes the host
  cannot hold -- a status code, a ValueError/TypeError naming the argument or a one-line CLI error each, never a
  MemoryError or a traceback.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
from helpers import oracle_of

import ascend_lab as al
from ascend_lab import acl, cli, golden, tiling
from ascend_lab.acl import runtime as rt
from ascend_lab.base import platform
from ascend_lab.dtypes import to_numpy
from ascend_lab.ops import registry

SECONDS = float(os.environ.get("ASCEND_LAB_FUZZ_SECONDS", "10"))
SEED = int(os.environ.get("ASCEND_LAB_FUZZ_SEED", "14"))

F32, F16, F64 = np.dtype(np.float32), np.dtype(np.float16), np.dtype(np.float64)
BF16 = np.dtype(ml_dtypes.bfloat16)
FLOATS = [F32, F16, BF16]
TH_DTYPES = [*FLOATS, np.dtype(np.int8), np.dtype(np.uint8), np.dtype(np.int32)]
ODD_DTYPES = [F64, np.dtype(np.int64), np.dtype(np.bool_), np.dtype(np.int16), np.dtype(np.complex64)]
#: Every registered op, and each spelled in turn by its key and by its op type (the CLI takes both).
OPS = [spec.key for spec in registry.ops()]
OP_SPELLINGS = [spec.op_type if i % 2 else spec.key for i, spec in enumerate(registry.ops())]
KERNELS = [None] * 6 + ["tbe", "main", "experimental", "bogus", "", 3]
SOCS = [None, *platform.socs(), "Ascend999", "", 7]
FLT_EPSILON = np.float32(1.1920929e-07)
ALLOWED = (ValueError, TypeError)


class Fuzzer:
    """One seeded stream of random front-door calls; counts every call and its outcome."""

    def __init__(self, seed: int, tmp: str):
        self.seed = seed
        self.tmp = tmp
        self.calls = 0
        self.outcomes: dict[str, Counter] = defaultdict(Counter)
        self.failures: list[str] = []
        self.oracle_checks = 0
        self.case = 0
        self.serial_cli = True                      # threaded mode: the CLI (it writes sys.stdout) is left out
        self.trail: list[tuple[int, str, str]] = []     # (case, area, outcome) of every call, in order

    def fail(self, message: str) -> None:
        self.failures.append(f"case {self.case} (seed {self.seed}): {message}")

    def guarded(self, area: str, fn: Any, *args: Any, **kwargs: Any) -> tuple[str, Any]:
        """Call ``fn``; ("ok", result) or ("ValueError"/"TypeError", exc). Anything else is a failure."""
        self.calls += 1
        try:
            result = fn(*args, **kwargs)
        except ALLOWED as exc:
            if not str(exc).strip():
                self.fail(f"{area}: {type(exc).__name__} without a message")
            self.outcomes[area][type(exc).__name__] += 1
            self.trail.append((self.case, area, f"{type(exc).__name__}: {exc}"))
            return type(exc).__name__, exc
        except Exception:
            self.fail(f"{area} raised {traceback.format_exc(limit=6)}")
            self.outcomes[area]["escaped"] += 1
            self.trail.append((self.case, area, "escaped"))
            return "escaped", None
        status = getattr(result, "status", None)
        self.trail.append((self.case, area, type(result).__name__ if status is None else
                           f"status {status}" + (f": {result.messages[-1:]}" if status in (361001, 561000) else "")))
        return "ok", result

    # --- random arrays ---------------------------------------------------------------------------------------
    def values(self, shape: tuple[int, ...], dt: np.dtype) -> np.ndarray:
        rng = self.rng
        n = math.prod(shape)
        if dt == np.bool_:
            return rng.integers(0, 2, n).astype(bool).reshape(shape)
        if dt.kind in "iu":
            info = np.iinfo(dt)
            return rng.integers(max(info.min, -2**31), min(info.max, 2**31), n, endpoint=True).astype(dt).reshape(shape)
        v = rng.uniform(-6, 6, n)
        special = np.array([0.0, -0.0, 3.0, -3.0, 1.0, np.inf, -np.inf, np.nan, 2.9999998, 0.5, 1e-8])
        v = np.where(rng.random(n) < 0.25, special[rng.integers(0, special.size, n)], v)
        with np.errstate(all="ignore"):
            return v.astype(np.float32).astype(dt).reshape(shape)

    def shape(self) -> tuple[int, ...]:
        rng = self.rng
        rank = int(rng.integers(0, 5))
        dims = [int(rng.choice([1, 1, 2, 3, 4, 5, 8, 16, 33, 0])) for _ in range(rank)]
        while math.prod(dims) > 3000:
            dims[dims.index(max(dims))] //= 2
        return tuple(dims)

    def array(self, shape: tuple[int, ...], dt: np.dtype) -> Any:
        """An array of ``shape``: contiguous, a strided view, a transposed view, a broadcast view, a list, a scalar."""
        rng = self.rng
        kind = rng.choice(["plain"] * 5 + ["strided", "T", "bcast", "list", "fortran"])
        if kind == "strided" and shape:
            big = self.values((*shape[:-1], shape[-1] * 2), dt)
            return big[..., ::2]
        if kind == "T" and len(shape) >= 2:
            return self.values(shape[::-1], dt).T
        if kind == "bcast" and shape:
            return np.broadcast_to(self.values((1,) * len(shape), dt), shape)
        if kind == "fortran":
            return np.asfortranarray(self.values(shape, dt))
        a = self.values(shape, dt)
        if kind == "list" and a.dtype.kind in "fi" and a.dtype != BF16:
            return a.tolist()
        return a

    def out_array(self, shape: tuple[int, ...], dt: np.dtype) -> Any:
        rng = self.rng
        kind = rng.choice(["none"] * 6 + ["right", "right", "null", "dtype", "shape", "readonly", "bcast", "strided",
                                          "list"])
        if kind == "none":
            return None
        if kind == "null":
            return al.NULLPTR
        if kind == "right":
            return np.zeros(shape, dt)
        if kind == "dtype":
            return np.zeros(shape, rng.choice([*FLOATS, *ODD_DTYPES]))
        if kind == "shape":
            return np.zeros(self.shape(), dt)
        if kind == "readonly":
            a = np.zeros(shape, dt)
            a.flags.writeable = False
            return a
        if kind == "bcast":
            return np.broadcast_to(np.zeros((1,) * len(shape), dt), shape)
        if kind == "strided" and shape:
            return np.zeros((*shape[:-1], shape[-1] * 2), dt)[..., ::2]
        return [0.0] * (math.prod(shape) if shape else 1)

    # --- the convenience layer -------------------------------------------------------------------------------
    def convenience(self) -> None:
        rng = self.rng
        op = rng.choice(["hs", "th", "call"])
        shape = self.shape()
        dtypes = FLOATS if op == "hs" else TH_DTYPES
        g_dt = dtypes[int(rng.integers(0, len(dtypes)))] if rng.random() < 0.92 else ODD_DTYPES[int(rng.integers(0, 5))]
        x_dt = g_dt if rng.random() < 0.8 else dtypes[int(rng.integers(0, len(dtypes)))]
        g_shape = shape
        if rng.random() < 0.25 and shape:
            g_shape = tuple(1 if rng.random() < 0.5 else d for d in shape)[int(rng.integers(0, 2)):]
        elif rng.random() < 0.05:
            g_shape = self.shape()
        g, x = self.array(g_shape, g_dt), self.array(shape, x_dt)
        if rng.random() < 0.03:
            g = [[1.0, 2.0], [3.0]]                                             # ragged
        if rng.random() < 0.02:
            x = None                                                            # nullptr
        out = self.out_array(shape, x_dt)
        kw: dict[str, Any] = {"soc": SOCS[int(rng.integers(0, len(SOCS)))] if rng.random() < 0.6 else "Ascend950PR",
                              "kernel": KERNELS[int(rng.integers(0, len(KERNELS)))], "out": out}
        if rng.random() < 0.1:
            kw["out_dtype"] = rng.choice(["float32", "float16", "bfloat16", "int32", "float64", "nope"])
        if rng.random() < 0.05:
            kw["trace"] = True
        if op == "hs":
            area, fn, args = "hardsigmoid_backward", al.hardsigmoid_backward, (g, x)
        else:
            thr = rng.choice([0.0, 0.5, -1.5, 3.0, 1e-9, 1e39, float("nan"), 2**40, -0.0, "x", None])
            thr = thr if isinstance(thr, (str, type(None))) else (float(thr) if rng.random() < 0.8 else int(thr)
                                                                    if np.isfinite(thr) else float(thr))
            if rng.random() < 0.15:
                kw["threshold_dtype"] = rng.choice(["float16", "int8", "int32", "bfloat16", "double", "bogus"])
            if op == "th":
                area, fn, args = "threshold_backward", al.threshold_backward, (g, x, thr)
            else:
                area, fn, args = "call", al.call, ("threshold_backward", g, x, thr)
                if rng.random() < 0.1:
                    args = (rng.choice(["threshold_backward", "aclnnHardsigmoidBackward", "softmax", ""]), g, x)
        hs = area == "hardsigmoid_backward" or (area == "call" and args[0] == "aclnnHardsigmoidBackward")
        outcome, res = self.guarded(area, fn, *args, **kw)
        if outcome != "ok":
            return
        self.outcomes[area][f"status {res.status}"] += 1
        if res.status == 0:
            self.check_result(area, hs, res, g, x, None if hs else (args[-1], kw.get("threshold_dtype", "float32")),
                              out)

    def check_result(self, area: str, hs: bool, run: Any, g: Any, x: Any, thr: Any, out: Any) -> None:
        """A status-0 run: its out is the oracle of the kernel that ran, promoted, broadcast and cast as the graph
        does (HardSigmoid: two different floats compute in float32; the result is cast to out's dtype)."""
        self.oracle_checks += 1
        try:
            gv, xv = np.asarray(g), np.asarray(x)
            if run.out is None:
                self.fail(f"{area}: status 0 without an out")
                return
            if isinstance(out, np.ndarray) and run.out is not out and not np.shares_memory(run.out, out):
                if not np.array_equal(np.asarray(out), run.out, equal_nan=out.dtype.kind == "f"):
                    self.fail(f"{area}: status 0 but the out array given was not written")
            kernel = run.kernel_node
            shape = np.broadcast_shapes(gv.shape, xv.shape)
            if kernel is None:                                                  # an empty tensor: no kernel ran
                if run.out.size:
                    self.fail(f"{area}: a graph without a kernel produced {run.out.size} elements")
                return
            if run.kernel == "experimental" and not hs and gv.shape != xv.shape:
                # a documented defect: the experimental ThresholdGradV2D/ReluGrad do not broadcast (chapter 10:
                # too few outputs, or a read past self); its oracle is elementwise, so there is nothing to compare
                self.outcomes[area]["experimental broadcast (not compared)"] += 1
                return
            _, oracle = oracle_of(run)
            gb, xb = np.broadcast_to(gv, shape).copy(), np.broadcast_to(xv, shape).copy()
            with np.errstate(all="ignore"):
                p = to_numpy(kernel.inputs[0].dtype)         # the graph casts both inputs to the kernel's dtype
                if not hs:                     # the threshold as its scalar holds it (int8 0.5 is 0: ReluGrad)
                    scalar = acl.aclCreateScalar(*thr)
                    relu = abs(np.float32(scalar.ToFloat())) <= FLT_EPSILON
                    acl.aclDestroyScalar(scalar)
                    if kernel.op != ("ReluGrad" if relu else "ThresholdGradV2D"):
                        self.fail(f"threshold {thr} ran {kernel.op}")
                        return
                y = oracle(golden.cast(gb, p), golden.cast(xb, p))
                if run.out.dtype.kind == "c":                   # golden models no cast to complex
                    self.outcomes[area]["complex out (not compared)"] += 1
                    return
                want = y if run.out.dtype == y.dtype else golden.cast(y, run.out.dtype, "CAST_RINT")
            got, want = np.array(run.out), np.array(want)                  # contiguous copies, 0-d kept
            same = got.shape == want.shape and got.dtype == want.dtype and (
                got.reshape(-1).view(np.uint8) == want.reshape(-1).view(np.uint8)).all()
            if not same:
                self.fail(f"{area} on {run.soc} ({run.kernel}): out differs from the oracle (g {gv.dtype}"
                          f"{list(gv.shape)}, x {xv.dtype}{list(xv.shape)}, out {run.out.dtype}{list(run.out.shape)})")
        except Exception:
            self.fail(f"oracle check of {area} failed: {traceback.format_exc(limit=4)}")

    # --- the tiling front door -------------------------------------------------------------------------------
    def tiling_call(self) -> None:
        rng = self.rng
        op = rng.choice(OPS)
        n = rng.choice([0, 1, 7, 100, 4097, 10**6, 2**31, 2**63 - 1, 2**63, -1, 1.5, "10", None, True,
                        np.int64(33), np.uint64(2**63)])
        dtype = rng.choice(["float32", "float16", "bfloat16", "int8", "uint8", "int32", "int64", "float64", 0, 1,
                            27, 999, -1, None, "fp32", np.float16, ml_dtypes.bfloat16])
        kw: dict[str, Any] = {}
        if rng.random() < 0.6:
            kw["core_num"] = rng.choice([1, 2, 40, 64, 0, -3, 2**40, 1.0, True, "8", None])
        if rng.random() < 0.6:
            kw["ub_size"] = rng.choice([1024, 4096, 196608, 196352, 262144, 253952, 0, 31, 10**9, -5, 2.5, None])
        if rng.random() < 0.6:
            kw["soc"] = rng.choice([*platform.socs(), "Ascend999", "", 5, None,
                                    {"vector_core_num": 8, "ub_size": 65536}, {"vector_core_num": 8}])
        if rng.random() < 0.5:
            kw["kernel"] = KERNELS[int(rng.integers(0, len(KERNELS)))]
        for name in ("alpha", "beta", "threshold", "bogus"):
            if rng.random() < 0.15:
                kw[name] = rng.choice([0.5, 1 / 6, 0.0, -1.0, float("nan"), float("inf"), 1e300, "x", None, True, 3])
        for key in ("core_num", "ub_size", "n"):
            if key in kw and isinstance(kw[key], np.generic):
                kw[key] = kw[key].item()
        front = getattr(tiling, op)
        outcome, td = self.guarded(f"tiling.{op}", front, n.item() if isinstance(n, np.str_) else n, dtype, **kw)
        if outcome == "ok":
            self.outcomes[f"tiling.{op}"]["TilingData"] += 1
            try:
                packed = td.to_bytes()
                if not isinstance(packed, bytes) or not packed or td.blockDim < 1:
                    self.fail(f"tiling.{op}({n!r}, {dtype!r}, {kw}) gave {td!r}")
            except Exception:
                self.fail(f"tiling.{op}: the TilingData does not pack: {traceback.format_exc(limit=3)}")

    # --- the CLI ---------------------------------------------------------------------------------------------
    def cli_args(self) -> list[str]:
        rng = self.rng
        command = rng.choice(["tiling", "run", "socs", "bogus", "--version", "--help", ""])
        argv = [command] if command else []
        if command == "tiling":
            argv.append(rng.choice([*OP_SPELLINGS, "nope", "-1"]))
            pool = [["--n", rng.choice(["100", "0", "-4", "1e3", "x", "99999999999999999999999", "4097"])],
                    ["--dtype", rng.choice(["float16", "int8", "bfloat16", "float64", "zz"])],
                    ["--soc", rng.choice([*platform.socs(), "Ascend999"])],
                    ["--cores", rng.choice(["8", "0", "-1", "x", "100000"])],
                    ["--ub-size", rng.choice(["196608", "10", "0", "1" + "0" * 30])],
                    ["--kernel", rng.choice(["tbe", "main", "experimental", "x"])],
                    ["--alpha", rng.choice(["0.2", "nan", "inf", "x"])], ["--threshold", "0.5"], ["--all"]]
        elif command == "run":
            argv.append(rng.choice(["hardsigmoid_backward", "threshold_backward", "aclnnThresholdBackward", "nope"]))
            trace = os.path.join(self.tmp, f"t{self.case}.json")
            pool = [["--shape", rng.choice(["4,2", "0,3", "3", "1", "", "a", "-1", ",".join(["1"] * 70), "65,33",
                                            "100000000000000000000", "1000000,1000000", "2,,3", " 5"])],
                    ["--dtype", rng.choice(["float16", "int8", "bfloat16", "float64", "zz", "int32"])],
                    ["--soc", rng.choice([*platform.socs(), "Ascend999"])],
                    ["--seed", rng.choice(["0", "7", "-1", "x", "1" + "0" * 25])],
                    ["--threshold", rng.choice(["0", "0.5", "nan", "1e39", "x"])],
                    ["--trace", rng.choice([trace, self.tmp, "", "/proc/nope/t.json", "/dev/full", trace])],
                    ["--buffer-num", rng.choice(["1", "2", "3", "0", "9", "x"])],
                    ["--kernel", rng.choice(["tbe", "main", "experimental", "x"])]]
        elif command == "socs":
            pool = [["--notes"], ["--bogus"]]
        else:
            pool = [["--x"], ["y"]]
        for i in rng.permutation(len(pool))[: int(rng.integers(0, len(pool) + 1))]:
            argv += pool[int(i)]
        if rng.random() < 0.05:
            argv.insert(int(rng.integers(0, len(argv) + 1)), rng.choice(["--unknown", "-", "--", "\x00", "é"]))
        return [str(a) for a in argv]

    def cli_call(self) -> None:
        argv = self.cli_args()
        stdout, stderr = io.StringIO(), io.StringIO()
        self.calls += 1
        try:
            with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
                code = cli.main(argv)
        except BaseException:
            self.fail(f"cli.main({argv!r}) raised {traceback.format_exc(limit=6)}")
            self.outcomes["cli"]["escaped"] += 1
            return
        text = stdout.getvalue() + stderr.getvalue()
        self.outcomes["cli"][f"exit {code}"] += 1
        if code not in (0, 1, 2):
            self.fail(f"cli.main({argv!r}) returned {code!r}")
        if "Traceback" in text:
            self.fail(f"cli.main({argv!r}) printed a traceback:\n{text[-1500:]}")
        if code in (1, 2) and not text.strip():
            self.fail(f"cli.main({argv!r}) exited {code} without saying why")

    def run_case(self, case: int) -> None:
        self.case = case
        self.rng = np.random.default_rng([self.seed, case])
        what = self.rng.random()
        if what < 0.5:
            self.convenience()
        elif what < 0.8 or not self.serial_cli:
            self.tiling_call()
        else:
            self.cli_call()


def _state() -> dict[str, Any]:
    return {"soc": acl.current_soc().name, "initialized": rt.is_initialized(), "device": rt.current_device(),
            "allocated": rt._state.allocated, "custom": platform.custom_packages()}


def main(seed: int, seconds: float, cases: list[int] | None = None) -> dict:
    """Fuzz for ``seconds`` (or replay ``cases``), then compare the global state with the state before."""
    before = _state()
    t0 = time.perf_counter()
    n = 0
    with tempfile.TemporaryDirectory() as tmp:
        fz = Fuzzer(seed, tmp)
        for c in (cases if cases is not None else iter(int, 1)):
            fz.run_case(c if cases is not None else n)
            n += 1
            if cases is None and time.perf_counter() - t0 >= seconds:
                break
    after = _state()
    return {"seed": seed, "seconds": round(time.perf_counter() - t0, 1), "cases": n, "calls": fz.calls,
            "oracle_checks": fz.oracle_checks, "failures": fz.failures[:20], "n_failures": len(fz.failures),
            "state": {k: before[k] == after[k] for k in before}, "state_after": {k: repr(v) for k, v in after.items()},
            "outcomes": {area: dict(c) for area, c in sorted(fz.outcomes.items())}}


#: Threads of the threaded mode, and the share of the fuzzing time each extra mode takes by default.
THREADS = 4
MODE_SECONDS = max(SECONDS / 8, 3.0)
#: Address space of the limits mode's process: Python, numpy and the package fit, a 2**27-element array does not.
LIMIT_MB = 1100


def main_threaded(seed: int, seconds: float, threads: int = THREADS) -> dict:
    """``threads`` fuzzers at once for ``seconds``; then each one's cases replayed serially (same outcomes)."""
    before = _state()
    fuzzers: list[Fuzzer] = []
    cases: list[list[int]] = [[] for _ in range(threads)]
    errors: list[str] = []
    barrier = threading.Barrier(threads)
    with tempfile.TemporaryDirectory() as tmp:
        fuzzers = [Fuzzer(seed * 1000 + t, tmp) for t in range(threads)]
        t0 = time.perf_counter()

        def work(t: int) -> None:
            fz = fuzzers[t]
            fz.serial_cli = False
            try:
                barrier.wait()
                n = 0
                while time.perf_counter() - t0 < seconds or n < 5:
                    fz.run_case(n)
                    cases[t].append(n)
                    n += 1
            except BaseException:
                errors.append(traceback.format_exc(limit=6))

        switch = sys.getswitchinterval()
        sys.setswitchinterval(1e-4)
        try:
            pool = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
            for th in pool:
                th.start()
            for th in pool:
                th.join()
        finally:
            sys.setswitchinterval(switch)
        elapsed = time.perf_counter() - t0
        mismatches = []
        for t, fz in enumerate(fuzzers):
            again = Fuzzer(fz.seed, tmp)
            again.serial_cli = False
            for c in cases[t]:
                again.run_case(c)
            if again.trail != fz.trail:
                i = next((i for i, (a, b) in enumerate(zip(again.trail, fz.trail, strict=False)) if a != b),
                         min(len(again.trail), len(fz.trail)))
                mismatches.append(f"thread {t} (seed {fz.seed}): call {i} serial {again.trail[i:i + 1]} vs "
                                  f"threaded {fz.trail[i:i + 1]}")
    after = _state()
    outcomes: dict[str, Counter] = defaultdict(Counter)
    for fz in fuzzers:
        for area, c in fz.outcomes.items():
            outcomes[area].update(c)
    failures = errors + [f for fz in fuzzers for f in fz.failures] + mismatches
    return {"seed": seed, "threads": threads, "seconds": round(elapsed, 1), "cases": sum(map(len, cases)),
            "calls": sum(fz.calls for fz in fuzzers), "oracle_checks": sum(fz.oracle_checks for fz in fuzzers),
            "failures": failures[:20], "n_failures": len(failures), "state": {k: before[k] == after[k] for k in before},
            "state_after": {k: repr(v) for k, v in after.items()},
            "outcomes": {area: dict(c) for area, c in sorted(outcomes.items())}}


def main_limits(seed: int, seconds: float) -> dict:
    """The limit cases, random within each kind, for ``seconds`` (at least one round of every kind). Meant to run
    under ``RLIMIT_AS`` (``_fuzz_in_subprocess(..., limit_mb=LIMIT_MB)``)."""
    from ascend_lab import aclnn, standalone
    from ascend_lab.base import log as oplog
    rng = np.random.default_rng([seed, 25])
    outcomes: dict[str, Counter] = defaultdict(Counter)
    failures: list[str] = []
    before = _state()
    kinds = ("broadcast", "arrays", "tiling", "ub_size", "soc", "format", "int64", "cli")
    t0 = time.perf_counter()
    n = 0
    while time.perf_counter() - t0 < seconds or n < len(kinds):
        kind = kinds[n % len(kinds)]
        n += 1
        fn = al.hardsigmoid_backward if rng.random() < 0.5 else (lambda g, x, **kw: al.threshold_backward(
            g, x, float(rng.choice([0.0, 0.5])), **kw))
        soc = str(rng.choice(platform.socs()))
        try:
            if kind == "broadcast":                 # a view of 2**k elements over one: the output cannot be held
                k = int(rng.integers(28, 46))
                x = np.broadcast_to(np.float32(rng.uniform(-4, 4)), (2**k,))
                run = fn(x, x, soc=soc)
                want = {0} if k <= 28 else set()
                if 4 * 2**k > rt.DEVICE_MEMORY_BYTES:
                    want = {rt.ACL_ERROR_RT_MEMORY_ALLOCATION}
                want |= {0, rt.ACL_ERROR_RT_MEMORY_ALLOCATION, rt.ACL_ERROR_BAD_ALLOC} if not want else set()
                if run.status not in want or (run.status and not run.messages):
                    failures.append(f"{kind} 2**{k} on {soc}: status {run.status}, messages {run.messages}")
                outcomes[kind][f"status {run.status}"] += 1
            elif kind == "arrays":                  # real arrays the host holds once, not their device copies too
                k = int(rng.integers(26, 28))      # 256-512 MiB each: never all three, device copies included
                try:
                    g = np.full(2**k, 0.5, np.float32)
                    x = np.full(2**k, -1.0, np.float32)
                except MemoryError:
                    outcomes[kind]["inputs do not fit (skipped)"] += 1
                    continue
                run = fn(g, x, soc=soc)
                if run.status not in (0, rt.ACL_ERROR_RT_MEMORY_ALLOCATION, rt.ACL_ERROR_BAD_ALLOC):
                    failures.append(f"{kind} 2**{k} on {soc}: status {run.status}")
                outcomes[kind][f"status {run.status}"] += 1
                del g, x, run
            elif kind == "tiling":
                count = int(rng.choice([2**62, 2**63 - 1, 2**63, 2**64, 10**30]))
                op = str(rng.choice(OPS))
                try:
                    td = tiling.compute(op, count, str(rng.choice(["float32", "int8", "float16"])), soc=soc)
                    outcomes[kind][type(td).__name__] += 1
                    if count > 2**63 - 1:
                        failures.append(f"tiling of {count} elements accepted: {td!r}")
                except ValueError as exc:
                    outcomes[kind]["ValueError"] += 1
                    if not str(exc).strip():
                        failures.append(f"tiling {count}: ValueError without a message")
            elif kind in ("ub_size", "soc"):
                bad = int(rng.choice([2**40, 2**31, 2**25])) if kind == "ub_size" else \
                    [5, 5.0, b"x", [1]][int(rng.integers(0, 4))]
                x = np.ones(64, np.float32)
                try:
                    if kind == "ub_size":
                        standalone.run_kernel("threshold_grad_v2_d", x, x, ub_size=bad, record=False)
                    else:
                        tiling.compute("relu_grad", 100, "float32", soc=bad)
                    failures.append(f"{kind}={bad!r} accepted")
                except ValueError as exc:
                    outcomes[kind]["ValueError"] += 1
                    if kind.split("_")[0] not in str(exc):
                        failures.append(f"{kind}={bad!r}: the ValueError does not name the argument: {exc}")
            elif kind == "format":
                fmt = int(rng.choice([77, 5, -2, 2**31, 36]))
                acl.aclInit(None)
                acl.aclrtSetDevice(0)
                try:
                    _, ptr = acl.aclrtMalloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST)
                    with oplog.capture() as records:
                        t = acl.aclCreateTensor([4], acl.ACL_FLOAT, [1], 0, fmt, [4], ptr)
                    if t is None and not records:
                        failures.append(f"format {fmt}: nullptr without a logged reason")
                    outcomes[kind]["nullptr" if t is None else "tensor"] += 1
                finally:
                    acl.aclFinalize()
            elif kind == "int64":
                d = int(rng.choice([2**32, 2**40, 2**62]))
                acl.aclInit(None)
                acl.aclrtSetDevice(0)
                try:
                    _, ptr = acl.aclrtMalloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST)
                    ts = [acl.aclCreateTensor([d, 2**32], acl.ACL_FLOAT, [0, 0], 0, acl.ACL_FORMAT_ND, [1], ptr)
                          for _ in range(3)]
                    with acl.soc(soc):
                        if rng.random() < 0.5:
                            status = aclnn.aclnnHardsigmoidBackwardGetWorkspaceSize(*ts)[0]
                        else:
                            sc = acl.aclCreateScalar(float(rng.choice([0.0, 1.0])), acl.ACL_FLOAT)
                            status = aclnn.aclnnThresholdBackwardGetWorkspaceSize(ts[0], ts[1], sc, ts[2])[0]
                    if status != 161002:
                        failures.append(f"{d} x 2**32 elements on {soc}: status {status}, not 161002")
                    outcomes[kind][f"status {status}"] += 1
                finally:
                    acl.aclFinalize()
            else:                                   # the CLI on a shape the host cannot hold
                shape = str(int(rng.choice([2**27, 2**28])))
                argv = ["run", str(rng.choice(["hardsigmoid_backward", "threshold_backward"])), "--shape", shape]
                stdout, stderr = io.StringIO(), io.StringIO()
                with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
                    code = cli.main(argv)
                text = stdout.getvalue() + stderr.getvalue()
                outcomes[kind][f"exit {code}"] += 1
                if code not in (0, 1) or "Traceback" in text or (code and "memory" not in text):
                    failures.append(f"cli {argv}: exit {code}, {text[-500:]!r}")
        except MemoryError:
            failures.append(f"{kind}: MemoryError escaped: {traceback.format_exc(limit=6)}")
        except Exception:
            failures.append(f"{kind}: {traceback.format_exc(limit=6)}")
    after = _state()
    return {"seed": seed, "seconds": round(time.perf_counter() - t0, 1), "cases": n, "failures": failures[:20],
            "n_failures": len(failures), "state": {k: before[k] == after[k] for k in before},
            "outcomes": {k: dict(c) for k, c in sorted(outcomes.items())}}


def _fuzz_in_subprocess(seed: int, seconds: float, mode: str = "main", limit_mb: int | None = None) -> dict:
    here = Path(__file__).resolve().parent
    code = (f"import sys, json; sys.path.insert(0, {str(here)!r}); import test_fuzz_front as f; "
            f"print(json.dumps(f.{mode}({seed}, {seconds})))")

    def cap() -> None:
        if limit_mb is not None:
            resource.setrlimit(resource.RLIMIT_AS, (limit_mb << 20, limit_mb << 20))

    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=seconds * 3 + 120,
                         cwd=here.parent, preexec_fn=cap)
    assert res.returncode == 0, f"the fuzz process died (exit {res.returncode}):\n{res.stderr[-3000:]}"
    return json.loads(res.stdout.strip().splitlines()[-1])


def test_fuzz_front_doors():
    report = _fuzz_in_subprocess(SEED, SECONDS)
    outcomes = report["outcomes"]
    print(f"\nfront-door fuzz seed {report['seed']}: {report['calls']} calls in {report['cases']} cases "
          f"({report['seconds']} s), {report['oracle_checks']} results checked against the oracle")
    for area, counts in outcomes.items():
        print(f"  {area}: {counts}")
    assert report["n_failures"] == 0, "\n".join(report["failures"])
    assert all(report["state"].values()), report["state_after"]
    # the run must reach the interesting outcomes, or it proves little
    assert report["calls"] > 300 and report["oracle_checks"] > 40, report
    for area in ("hardsigmoid_backward", "threshold_backward", "call"):
        assert outcomes[area].get("status 0", 0) > 0 and outcomes[area].get("ValueError", 0) > 0, (area, outcomes[area])
        assert sum(v for k, v in outcomes[area].items() if k.startswith("status") and k != "status 0") > 0, area
    assert all(outcomes[f"tiling.{op}"].get("TilingData", 0) > 0 and outcomes[f"tiling.{op}"].get("ValueError", 0) > 0
               for op in OPS), outcomes
    assert all(outcomes["cli"].get(f"exit {c}", 0) > 0 for c in (0, 1, 2)), outcomes["cli"]


def test_fuzz_front_doors_threaded():
    report = _fuzz_in_subprocess(SEED, MODE_SECONDS, "main_threaded")
    print(f"\nthreaded front-door fuzz seed {report['seed']}: {report['threads']} threads, {report['calls']} calls in "
          f"{report['cases']} cases ({report['seconds']} s), {report['oracle_checks']} oracle checks")
    assert report["n_failures"] == 0, "\n".join(report["failures"])
    assert all(report["state"].values()), report["state_after"]
    assert report["calls"] > 100 and report["oracle_checks"] > 10, report


def test_fuzz_front_doors_at_the_limits():
    report = _fuzz_in_subprocess(SEED, MODE_SECONDS, "main_limits", limit_mb=LIMIT_MB)
    print(f"\nlimits fuzz seed {report['seed']}: {report['cases']} cases ({report['seconds']} s): {report['outcomes']}")
    assert report["n_failures"] == 0, "\n".join(report["failures"])
    assert all(report["state"].values()), report["state"]
    outcomes = report["outcomes"]
    assert outcomes["broadcast"].get(f"status {rt.ACL_ERROR_RT_MEMORY_ALLOCATION}", 0) > 0, outcomes
    assert outcomes["cli"].get("exit 1", 0) > 0 and outcomes["int64"] == {"status 161002": outcomes["int64"][
        "status 161002"]}, outcomes
