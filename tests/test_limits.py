"""At the limits (issue 25, item 4): a clear answer and nothing lost.

Memory that runs out is a status code in the convenience API and a one-line error in the CLI, never a traceback;
an element count beyond int64 is a parameter error on every kernel; arguments that would make the simulator
allocate absurd amounts are refused with a ValueError naming them; a bad aclFormat is a null tensor with a reason
(``test_acl_runtime``). The host-memory cases run in a subprocess under ``RLIMIT_AS`` (``run_limited``), so they
cannot disturb the test process; ``test_fuzz_front`` reuses it for its limit mode.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ascend_lab as al
from ascend_lab import acl, aclnn, standalone, tiling
from ascend_lab.acl import runtime as rt
from ascend_lab.base import log as oplog
from ascend_lab.opdev.errno import ACLNN_ERR_PARAM_INVALID

#: Address space a limited subprocess may use: room for Python, numpy and the package, not for a big array.
LIMIT_MB = 900


def run_limited(args: list[str], limit_mb: int = LIMIT_MB, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run ``python *args`` with its address space limited to ``limit_mb`` MiB."""
    limit = limit_mb * 2**20

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return subprocess.run([sys.executable, *args], preexec_fn=cap, capture_output=True, text=True, timeout=timeout)


def run_limited_code(code: str, limit_mb: int = LIMIT_MB, timeout: float = 120) -> subprocess.CompletedProcess:
    return run_limited(["-c", textwrap.dedent(code)], limit_mb, timeout)


def test_broadcast_view_beyond_device_memory_is_the_c_apis_code_and_message():
    x = np.broadcast_to(np.float32(1), (2**40,))            # 4 TiB of output, 4 bytes of input
    for run in (al.hardsigmoid_backward(x, x), al.threshold_backward(x, x, 0.5)):
        assert run.status == rt.ACL_ERROR_RT_MEMORY_ALLOCATION and run.out is None
        assert run.messages and run.messages[-1].startswith(
            f"[ERROR] aclrtMalloc: out of device memory: {2**42} B requested"), run.messages
    # what a C caller gets for the same output allocation
    assert acl.aclInit(None) == 0 and acl.aclrtSetDevice(0) == 0
    try:
        with oplog.capture() as records:
            ret, ptr = acl.aclrtMalloc(2**42, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        assert (ret, ptr) == (rt.ACL_ERROR_RT_MEMORY_ALLOCATION, None)
        assert str(records[-1]).startswith(f"[ERROR] aclrtMalloc: out of device memory: {2**42} B requested")
    finally:
        acl.aclFinalize()


def test_host_memory_error_in_a_call_is_a_status(monkeypatch):
    import ascend_lab.run as run_mod

    def no_memory(*args, **kwargs):
        raise MemoryError("Unable to allocate 1.00 TiB")

    monkeypatch.setattr(run_mod.np, "empty", no_memory)       # the copy back's host array
    run = al.hardsigmoid_backward(np.ones(8, np.float32), np.ones(8, np.float32))
    assert run.status == rt.ACL_ERROR_BAD_ALLOC and run.out is None
    assert "ran out of memory" in run.messages[-1] and rt._state.allocated == 0


def test_convenience_api_under_rlimit_returns_a_status():
    """A shape numpy can hold once but the call's device copies cannot: a code, never a MemoryError."""
    proc = run_limited_code("""
        import numpy as np, ascend_lab as al
        x = np.ones(2**26, np.float32)                 # 256 MiB; inputs + output on the device do not fit
        for fn in (lambda: al.hardsigmoid_backward(x, x), lambda: al.threshold_backward(x, x, 0.5)):
            run = fn()
            print(run.status, run.out is None)
    """, limit_mb=LIMIT_MB + 256)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.split("\n")
    assert "Traceback" not in proc.stderr
    for line in filter(None, lines):
        status, none = line.split()
        assert int(status) in (0, rt.ACL_ERROR_RT_MEMORY_ALLOCATION, rt.ACL_ERROR_BAD_ALLOC), line
        assert none == ("True" if int(status) else "False")


@pytest.mark.parametrize("argv", [["run", "threshold_backward", "--shape", "134217728"],
                                  ["run", "hardsigmoid_backward", "--shape", "8192,16384", "--dtype", "float16"]])
def test_cli_out_of_memory_is_one_line_no_traceback(argv):
    proc = run_limited(["-m", "ascend_lab", *argv])
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout, proc.stderr[-2000:]
    assert proc.returncode in (0, 1), (proc.returncode, proc.stderr[-2000:])
    if proc.returncode == 1:
        assert proc.stderr.startswith("ascend-lab: error: ") and "memory" in proc.stderr, proc.stderr
        assert proc.stderr.count("\n") == 1


def _huge(dev):
    return acl.aclCreateTensor([2**32, 2**32], acl.ACL_FLOAT, [0, 0], 0, acl.ACL_FORMAT_ND, [1], dev)


@pytest.mark.parametrize("soc", al.platform.socs())
@pytest.mark.parametrize("package", [False, True])
def test_element_count_beyond_int64_is_a_parameter_error_on_every_kernel(soc, package):
    assert acl.aclInit(None) == 0 and acl.aclrtSetDevice(0) == 0
    try:
        _, dev = acl.aclrtMalloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        with acl.soc(soc), (acl.custom_package() if package else _null()):
            cases = {"HardSigmoidGrad": lambda: aclnn.aclnnHardsigmoidBackwardGetWorkspaceSize(
                         _huge(dev), _huge(dev), _huge(dev)),
                     "ThresholdGradV2D": lambda: aclnn.aclnnThresholdBackwardGetWorkspaceSize(
                         _huge(dev), _huge(dev), acl.aclCreateScalar(1.0, acl.ACL_FLOAT), _huge(dev)),
                     "ReluGrad": lambda: aclnn.aclnnThresholdBackwardGetWorkspaceSize(
                         _huge(dev), _huge(dev), acl.aclCreateScalar(0.0, acl.ACL_FLOAT), _huge(dev))}
            for op, call in cases.items():
                with oplog.capture() as records:
                    status, ws, exe = call()
                assert (status, ws, exe) == (ACLNN_ERR_PARAM_INVALID, 0, None), (op, status, ws, records)
                assert "int64 element count" in records[-1].message and op in records[-1].message, records
    finally:
        acl.aclFinalize()


class _null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def test_run_kernel_refuses_an_absurd_ub_size():
    x = np.ones(64, np.float32)
    for bad in (2**40, standalone.MAX_WHATIF_UB + 1, 1023, True, 2.0**20):
        with pytest.raises(ValueError, match="ub_size"):
            standalone.run_kernel("threshold_grad_v2_d", x, x, ub_size=bad)
    with pytest.raises(ValueError, match="ub_size"):
        standalone.pipeline_run("hard_sigmoid_grad", 1000, "float32", ub_size=2**40)
    run, _ = standalone.run_kernel("threshold_grad_v2_d", x, x, ub_size=196_608, record=False)
    assert standalone.make_soc("Ascend910B4", ub_size=524_288).ub_size == 524_288     # a what-if larger UB is fine
    assert run.block_dim >= 1
    # a tiling may still *believe* in a larger UB (ub_plan's classic bug): only the core's UB is bounded
    assert standalone.ub_plan("hard_sigmoid_grad", 10**6, "float32", tiling_ub_size=300_000)["overflow"] > 0


@pytest.mark.parametrize("soc", [5, 5.0, b"Ascend910B4", [1], object()])
def test_tiling_refuses_a_soc_that_is_no_soc(soc):
    with pytest.raises(ValueError, match="soc"):
        tiling.compute("relu_grad", 100, "float32", soc=soc)
    with pytest.raises(ValueError, match="soc"):
        tiling.threshold_grad_v2_d(100, "float32", soc=soc)
