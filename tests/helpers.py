"""Helpers the test modules share: bit-exact comparison, a device session, and the oracle of whatever ran.

A test imports them as ``from helpers import ...`` (pytest puts this folder on ``sys.path``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from ascend_lab import acl
from ascend_lab.opdev.executor import aclOpExecutor
from ascend_lab.ops import registry
from ascend_lab.ops.common.l0_kernel import find_kernel_node

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def bits(a: Any) -> np.ndarray:
    """The raw bit patterns of an array (complex: per component), for comparisons where NaN == NaN and -0 != 0."""
    a = np.asarray(a)
    if not a.flags.c_contiguous:        # (np.ascontiguousarray would also turn a 0-d array into 1-d)
        a = a.copy()
    if a.dtype.kind == "c":
        return a.view(_UINT[a.dtype.itemsize // 2])
    return a.view(_UINT[a.dtype.itemsize])


def assert_bits_equal(got: Any, want: Any, what: str = "", *, any_nan: bool = False) -> None:
    """Same dtype, shape and bits. ``any_nan``: a NaN matches any NaN (payloads and signs may differ)."""
    assert got is not None, f"{what}: no output"
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    bad = bits(got) != bits(want)
    if any_nan and bad.any() and got.dtype.kind in "fV":
        g, w = got.astype(np.float64), want.astype(np.float64)
        bad &= ~(np.isnan(g) & np.isnan(w))
    assert not bad.any(), (f"{what + ': ' if what else ''}{int(bad.sum())} of {bad.size} differ, e.g. got "
                           f"{got[bad][:6]!r} want {want[bad][:6]!r}")


@contextmanager
def device(device_id: int = 0) -> Iterator[Any]:
    """aclInit + aclrtSetDevice + a stream, undone afterwards (even when the test fails)."""
    assert acl.aclInit(None) == 0
    assert acl.aclrtSetDevice(device_id) == 0
    ret, stream = acl.aclrtCreateStream()
    assert ret == 0
    try:
        yield stream
    finally:
        acl.aclrtDestroyStream(stream)
        acl.aclrtResetDevice(device_id)
        acl.aclFinalize()


def oracle_of(run: Any) -> tuple[str, Any]:
    """("module:function", callable(grad, x)) -- the oracle of the kernel the run's graph chose (a Run, or an
    aclOpExecutor whose graph was built), with the kernel node's attributes bound (alpha/beta, threshold, soc): what
    that flavour must produce, bit for bit."""
    return _oracle(find_kernel_node(run.nodes))


def _oracle(node: Any) -> tuple[str, Any]:
    return registry.oracle_call(node)[0], registry.oracle(node)


#: The kernel nodes the executors built since the last reset, newest last (``watch_kernel_nodes`` fills it).
KERNEL_NODES: list[Any] = []


@contextmanager
def watch_kernel_nodes() -> Iterator[list[Any]]:
    """Record every kernel node any executor adds while the block runs (tests that call the aclnn API and then
    ask which kernel ran, and so which oracle applies)."""
    original = aclOpExecutor.add

    def add(self: Any, node: Any) -> Any:
        if "kernel" in node.attrs:
            KERNEL_NODES.append(node)
        return original(self, node)

    KERNEL_NODES.clear()
    aclOpExecutor.add = add
    try:
        yield KERNEL_NODES
    finally:
        aclOpExecutor.add = original


def last_kernel_oracle() -> tuple[str, Any]:
    """The oracle of the newest kernel node recorded by ``watch_kernel_nodes``."""
    assert KERNEL_NODES, "no kernel node was built (is watch_kernel_nodes active?)"
    return _oracle(KERNEL_NODES[-1])
