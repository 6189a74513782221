"""What PyTorch answers for the cases chapter 14 compares, without PyTorch installed.

PyTorch is not a dependency of ``ascend_lab``; its numbers live in the package data file
``ascend_lab/data/pytorch_reference.json`` (read with :mod:`importlib.resources`, so an installed wheel has
them too), written by ``scripts/make_pytorch_reference.py``. This module reads that table: :func:`load` it,
:func:`case` finds an entry, :func:`inputs_of` decodes its inputs and :func:`pytorch` answers "what does
PyTorch give for case X" -- live torch when importable, else the stored bits, else the package's model of
PyTorch checked against the stored hash.

Floats are stored as hex bit patterns (exact, NaN-safe) and integers as JSON integers; the two exhaustive
sweeps (every finite float16 / bfloat16 gradient, ``self = 0``) store a SHA-256 of the output bits and are
rebuilt by :func:`all_finite`.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from .. import golden
from ..dtypes import bfloat16
from ..dtypes import to_numpy as _acl_to_numpy
from ..opdev.data_type_utils import PromoteType

#: The table inside the package (``ascend_lab/data/pytorch_reference.json``).
RESOURCE = resources.files("ascend_lab.data").joinpath("pytorch_reference.json")
#: How the table names itself in :func:`pytorch`'s answers.
RESOURCE_NAME = "ascend_lab/data/pytorch_reference.json"
#: ``source`` of a table computed by the golden model instead of torch.
GOLDEN_SOURCE = "golden-pytorch-model"
#: The table layout this module reads.
FORMAT = 1

DTYPES: dict[str, np.dtype] = {
    "float32": np.dtype(np.float32), "float16": np.dtype(np.float16), "bfloat16": bfloat16,
    "int32": np.dtype(np.int32), "int8": np.dtype(np.int8), "uint8": np.dtype(np.uint8),
}
_UINT = {2: np.uint16, 4: np.uint32}


def dtype_name(dt: Any) -> str:
    """The table's name of a numpy dtype (one of :data:`DTYPES`)."""
    dt = np.dtype(dt)
    for name, d in DTYPES.items():
        if d == dt:
            return name
    raise ValueError(f"dtype {dt} is not used by the reference table; use one of {', '.join(DTYPES)}")


def encode(a: np.ndarray) -> dict[str, Any]:
    """An array as a table entry: dtype name, shape, and values (floats as hex bit patterns)."""
    a = np.ascontiguousarray(a)
    if a.dtype.kind in "iu":
        values: list[Any] = [int(v) for v in a.ravel()]
    else:
        width = a.dtype.itemsize * 2
        values = [f"0x{int(v):0{width}x}" for v in a.view(_UINT[a.dtype.itemsize]).ravel()]
    return {"dtype": dtype_name(a.dtype), "shape": list(a.shape), "values": values}


def decode(d: dict[str, Any]) -> np.ndarray:
    """The array of a table entry written by :func:`encode`, bit for bit."""
    dt = DTYPES[d["dtype"]]
    if dt.kind in "iu":
        flat = np.array(d["values"], dtype=dt)
    else:
        flat = np.array([int(v, 16) for v in d["values"]], dtype=_UINT[dt.itemsize]).view(dt)
    return flat.reshape(d["shape"])


def bits(a: np.ndarray) -> np.ndarray:
    """Integers as they are, floats as their bit patterns: equal bits means the same value (NaN included)."""
    a = np.ascontiguousarray(a)
    return a if a.dtype.kind in "iu" else a.view(_UINT[a.dtype.itemsize])


def sha256_bits(a: np.ndarray) -> str:
    """The SHA-256 the table stores for a generator case's output."""
    return hashlib.sha256(np.ascontiguousarray(bits(a)).tobytes()).hexdigest()


def all_finite(dtype_name_: str) -> np.ndarray:
    """Every finite value of a 16-bit float dtype, in ascending bit-pattern order."""
    dt = DTYPES[dtype_name_]
    if dt.itemsize != 2 or dt.kind in "iu":
        raise ValueError(f"all_finite covers the 16-bit float dtypes, not {dtype_name_}")
    v = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(dt)
    with np.errstate(invalid="ignore"):
        return v[np.isfinite(v.astype(np.float32))]


def load(path: Path | None = None) -> dict[str, Any]:
    """The stored table (the package's copy, or the JSON file at ``path``)."""
    text = RESOURCE.read_text(encoding="utf-8") if path is None else Path(path).read_text(encoding="utf-8")
    table = json.loads(text)
    if table.get("format") != FORMAT:
        raise ValueError(f"PyTorch reference table has format {table.get('format')!r}, this module reads {FORMAT}:"
                         " regenerate it with scripts/make_pytorch_reference.py")
    return table


def case(table: dict[str, Any], name: str) -> dict[str, Any]:
    """The entry called ``name``."""
    for c in table["cases"]:
        if c["name"] == name:
            return c
    raise KeyError(f"no case {name!r} in the PyTorch reference table; it has "
                   f"{', '.join(c['name'] for c in table['cases'])}")


def inputs_of(entry: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, float | None]:
    """(grad, self, threshold) of a stored case (decoded, or rebuilt from its generator)."""
    gen = entry.get("generator")
    if gen:
        kind, dt = gen.split(":")
        if kind != "all_finite":
            raise ValueError(f"unknown generator {gen!r}")
        g = all_finite(dt)
        return g, np.zeros_like(g), entry.get("threshold")
    return decode(entry["grad"]), decode(entry["self"]), entry.get("threshold")


def case_inputs(name: str, table: dict[str, Any] | None = None) -> tuple[np.ndarray, np.ndarray, float | None]:
    """(grad, self, threshold) of the case called ``name``."""
    return inputs_of(case(load() if table is None else table, name))


def stored_output(entry: dict[str, Any]) -> np.ndarray | None:
    """The stored PyTorch output of a small case (None for generator cases, which store a hash)."""
    return decode(entry["out"]) if "out" in entry else None


def matches(entry: dict[str, Any], out: np.ndarray) -> bool:
    """Does ``out`` agree bit for bit (dtype, shape, bits) with what the table stores for ``entry``?"""
    if "out_summary" in entry:
        summ = entry["out_summary"]
        return (dtype_name(out.dtype) == summ["dtype"] and list(out.shape) == summ["shape"]
                and sha256_bits(out) == summ["sha256"])
    want = decode(entry["out"])
    return out.dtype == want.dtype and out.shape == want.shape and np.array_equal(bits(out), bits(want))


def torch_version() -> str | None:
    """``torch.__version__`` if torch can be imported, else None."""
    if importlib.util.find_spec("torch") is None:
        return None
    import torch  # deferred: optional, torch is not a dependency, only used when installed
    return str(torch.__version__)


def eval_golden(op: str, g: np.ndarray, s: np.ndarray, thr: float | None) -> np.ndarray:
    """The golden model of PyTorch. Mixed dtypes are promoted first, as PyTorch's TensorIterator does
    (CANN's ``PromoteType`` table is PyTorch's, cann_facts §7)."""
    if g.dtype != s.dtype:
        common = _acl_to_numpy(PromoteType(g.dtype, s.dtype))
        g = golden.cast(g, common)
        s = golden.cast(s, common)
    if op == "hardsigmoid_backward":
        return golden.hard_sigmoid_grad_pytorch(g, s)
    if op == "threshold_backward":
        return golden.threshold_backward_pytorch(g, s, thr)
    raise ValueError(f"unknown op {op!r}: the table holds hardsigmoid_backward and threshold_backward")


def _to_torch(a: np.ndarray) -> Any:
    import torch  # deferred: optional, torch is not a dependency, only used when installed
    a = np.ascontiguousarray(a)
    if a.dtype == bfloat16:
        return torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)
    return torch.from_numpy(a.copy())


def _from_torch(t: Any) -> np.ndarray:
    import torch  # deferred: optional, torch is not a dependency, only used when installed
    t = t.contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(bfloat16).copy()
    return t.numpy().copy()


def eval_torch(op: str, g: np.ndarray, s: np.ndarray, thr: float | None) -> np.ndarray:
    """Real PyTorch on the CPU (``torch.ops.aten``), called with a Python-float threshold as autograd does."""
    import torch  # deferred: optional, torch is not a dependency, only used when installed
    tg, ts = _to_torch(g), _to_torch(s)
    if op == "hardsigmoid_backward":
        return _from_torch(torch.ops.aten.hardsigmoid_backward(tg, ts))
    return _from_torch(torch.ops.aten.threshold_backward(tg, ts, thr))


def pytorch(name: str, table: dict[str, Any] | None = None) -> tuple[np.ndarray, str]:
    """PyTorch's output for case ``name`` and where it came from.

    Live torch when importable; otherwise the stored table (small cases) or the golden PyTorch model checked
    against the stored SHA-256 (generator cases). Raises ValueError if the golden model disagrees with the table.
    """
    table = load() if table is None else table
    entry = case(table, name)
    g, s, thr = inputs_of(entry)
    version = torch_version()
    if version is not None:
        return eval_torch(entry["op"], g, s, thr), f"torch {version} (live)"
    if "out" in entry:
        return decode(entry["out"]), f"{RESOURCE_NAME} ({table['source']})"
    out = eval_golden(entry["op"], g, s, thr)
    if not matches(entry, out):
        raise ValueError(f"the golden PyTorch model disagrees with the stored hash of {name}: regenerate the "
                         "table with scripts/make_pytorch_reference.py, or fix the model")
    return out, f"golden PyTorch model, hash-checked against {RESOURCE_NAME} ({table['source']})"
