"""Make ``ascend_lab/data/pytorch_reference.json``: what PyTorch answers for the cases chapter 14 compares.

PyTorch is not a dependency of ``ascend_lab``. The book still shows PyTorch's numbers, so they are kept in a
small JSON table that this script writes:

* with a real ``torch`` importable, every case is evaluated by ``torch.ops.aten.hardsigmoid_backward`` /
  ``torch.ops.aten.threshold_backward`` on the CPU and the table records ``"source": "torch <version>"``;
* without it, the same cases are evaluated by the package's model of PyTorch
  (``golden.hard_sigmoid_grad_pytorch`` / ``golden.threshold_backward_pytorch``) and the table records
  ``"source": "golden-pytorch-model"``.

Small cases store their inputs and PyTorch's output bit for bit. The two exhaustive sweeps (every finite
float16 / bfloat16 gradient, ``self = 0``) store the SHA-256 of the output bits instead of 64 K values; their
inputs are rebuilt by :func:`inputs_of`.

Reading the table (load it, decode a case, answer "what does PyTorch give for case X") is the package's job:
:mod:`ascend_lab.book.pytorch_reference`, which chapter 14 and the tests use. This script only builds the
table and compares it with a fresh one; ``tests/test_pytorch_reference.py`` keeps the table, the golden model
and the chapter from drifting apart.

Usage::

    python scripts/make_pytorch_reference.py            # write ascend_lab/data/pytorch_reference.json
    python scripts/make_pytorch_reference.py --check    # compare the stored table with a fresh one
    python scripts/make_pytorch_reference.py --golden   # force the golden model even if torch is importable
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from a checkout without installing the package
    sys.path.insert(0, str(ROOT))

from ascend_lab import golden  # noqa: E402
from ascend_lab.book.pytorch_reference import (  # noqa: E402
    DTYPES,
    FORMAT,
    GOLDEN_SOURCE,
    all_finite,
    case,
    dtype_name,
    encode,
    eval_golden,
    eval_torch,
    inputs_of,
    load,
    sha256_bits,
    torch_version,
)

#: The checkout's copy of the package data file, which this script rewrites.
JSON_PATH = ROOT / "ascend_lab" / "data" / "pytorch_reference.json"


# ------------------------------------------------------------------------------------------------------------
# The cases (inputs only; outputs come from torch or the golden model)
# ------------------------------------------------------------------------------------------------------------

def _a(values: Any, dt: str) -> np.ndarray:
    """Python numbers -> ``dt`` (floats round to nearest-even from float64)."""
    return np.asarray(values, dtype=np.float64).astype(DTYPES[dt])


def _f32(*xs: float) -> np.ndarray:
    return np.array(xs, dtype=np.float32)


def _cases() -> list[dict[str, Any]]:
    """Inputs of every case, with a sentence saying what the case is for."""
    below3 = np.nextafter(np.float32(3), np.float32(0))
    fp32_x = np.array([np.nextafter(np.float32(-3), np.float32(-4)), -3, -below3, below3, 3], np.float32)
    fp16_x = np.array([-3.002, -3, -2.998, 2.998, 3, 3.002], np.float16)
    bf16_x = _a([-3.015625, -3, -2.984375, 2.984375, 3, 3.015625], "bfloat16")
    # the bf16 gradients whose fp32 product with 1/6f lands exactly half-way between two bf16 values
    gb = all_finite("bfloat16")
    prod = golden.rounded_mul(gb.astype(np.float32), golden.ALPHA_PYTORCH)
    ties = gb[(prod.view(np.uint32) & 0xFFFF) == 0x8000]
    big = 2**24
    return [
        {"name": "hs_fp32_boundary", "op": "hardsigmoid_backward", "what": "fp32 x around -3 and 3, grad 1",
         "grad": np.ones(5, np.float32), "self": fp32_x},
        {"name": "hs_fp16_boundary", "op": "hardsigmoid_backward", "what": "fp16 x around -3 and 3, grad 1",
         "grad": np.ones(6, np.float16), "self": fp16_x},
        {"name": "hs_bf16_boundary", "op": "hardsigmoid_backward", "what": "bf16 x around -3 and 3, grad 1",
         "grad": _a(np.ones(6), "bfloat16"), "self": bf16_x},
        {"name": "hs_bf16_ties", "op": "hardsigmoid_backward",
         "what": "bf16 grads whose fp32 product grad*(1/6f) is a bf16 tie; self = 0",
         "grad": ties, "self": np.zeros_like(ties)},
        {"name": "hs_fp16_all_finite", "op": "hardsigmoid_backward",
         "what": "every finite fp16 grad (ascending bit order), self = 0", "generator": "all_finite:float16"},
        {"name": "hs_bf16_all_finite", "op": "hardsigmoid_backward",
         "what": "every finite bf16 grad (ascending bit order), self = 0", "generator": "all_finite:bfloat16"},
        {"name": "th_nan_feature", "op": "threshold_backward", "what": "a NaN feature, threshold 0.5",
         "grad": _f32(1.5, 2.5, 3.5), "self": _f32(np.nan, 1.0, 0.25), "threshold": 0.5},
        {"name": "th_eps_threshold", "op": "threshold_backward",
         "what": "threshold 1e-8 (inside FLT_EPSILON of 0)",
         "grad": _f32(1.5, 2.5, 3.5, 4.5), "self": _f32(5e-9, -5e-9, 1e-8, 2e-8), "threshold": 1e-8},
        {"name": "th_int32_fractional", "op": "threshold_backward", "what": "int32 with threshold -0.5",
         "grad": np.array([7, 7, 7], np.int32), "self": np.array([-1, 0, 1], np.int32), "threshold": -0.5},
        {"name": "th_fp16_threshold", "op": "threshold_backward", "what": "fp16 with threshold 0.10002",
         "grad": np.ones(3, np.float16), "self": np.array([0.1, 0.10003662, 0.1001], np.float16),
         "threshold": 0.10002},
        {"name": "th_int32_2p24", "op": "threshold_backward", "what": "int32 values beyond 2**24",
         "grad": np.array([big + 1, big + 3, 5, 7], np.int32),
         "self": np.array([big + 1, big + 2, big + 3, 1], np.int32), "threshold": float(big)},
        {"name": "th_mixed_dtype", "op": "threshold_backward", "what": "fp16 grad with fp32 self",
         "grad": np.array([1.5, 2.5, 3.5], np.float16), "self": _f32(0.25, 0.5, 0.75), "threshold": 0.5},
        {"name": "th_broadcast", "op": "threshold_backward", "what": "grad (2, 3) with self (3,)",
         "grad": np.arange(1, 7, dtype=np.float32).reshape(2, 3), "self": _f32(0.25, 0.75, 1.25),
         "threshold": 0.5},
    ]


# ------------------------------------------------------------------------------------------------------------
# The table
# ------------------------------------------------------------------------------------------------------------

def evaluator(use_torch: bool | None = None) -> tuple[str, Any]:
    """(source, function): torch when importable (or forced), else the golden model."""
    version = torch_version()
    if use_torch is None:
        use_torch = version is not None
    if use_torch:
        if version is None:
            raise RuntimeError("torch is not importable")
        return f"torch {version}", eval_torch
    return GOLDEN_SOURCE, eval_golden


def build(use_torch: bool | None = None) -> dict[str, Any]:
    source, fn = evaluator(use_torch)
    cases = []
    for spec in _cases():
        entry: dict[str, Any] = {"name": spec["name"], "op": spec["op"], "what": spec["what"]}
        if "generator" in spec:
            entry["generator"] = spec["generator"]
            g, s, thr = inputs_of(entry)
        else:
            g, s, thr = spec["grad"], spec["self"], spec.get("threshold")
            entry["grad"], entry["self"] = encode(g), encode(s)
        entry["threshold"] = thr
        out = fn(spec["op"], g, s, thr)
        if "generator" in spec:
            entry["out_summary"] = {"dtype": dtype_name(out.dtype), "shape": list(out.shape),
                                    "sha256": sha256_bits(out)}
        else:
            entry["out"] = encode(out)
        cases.append(entry)
    return {"format": FORMAT, "source": source, "generated_by": "scripts/make_pytorch_reference.py",
            "note": "floats are stored as hex bit patterns; generator cases store the SHA-256 of the output bits",
            "cases": cases}


def dumps(table: dict[str, Any]) -> str:
    """JSON text with every list of plain values on one line (easy to read and to diff)."""
    text = json.dumps(table, indent=1)
    return re.sub(r"\[\s+([^\[\]{}]*?)\s+\]",
                  lambda m: "[" + ", ".join(v.strip() for v in m.group(1).split(",")) + "]", text) + "\n"


def compare(stored: dict[str, Any], fresh: dict[str, Any]) -> list[str]:
    """Differences between two tables, ignoring ``source``."""
    problems = []
    names_s = [c["name"] for c in stored["cases"]]
    names_f = [c["name"] for c in fresh["cases"]]
    if names_s != names_f:
        problems.append(f"case names differ: {names_s} vs {names_f}")
    for cf in fresh["cases"]:
        if cf["name"] not in names_s:
            continue
        cs = case(stored, cf["name"])
        for key in ("op", "grad", "self", "threshold", "generator", "out", "out_summary"):
            if cs.get(key) != cf.get(key):
                problems.append(f"{cf['name']}: {key} differs")
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare the stored table with a fresh one")
    ap.add_argument("--golden", action="store_true", help="use the golden model even if torch is importable")
    args = ap.parse_args(argv)
    fresh = build(use_torch=False if args.golden else None)
    if args.check:
        problems = compare(load(JSON_PATH), fresh)
        for p in problems:
            print(p)
        print(f"{len(fresh['cases'])} cases checked against {fresh['source']}: "
              f"{'OK' if not problems else f'{len(problems)} problems'}")
        return 1 if problems else 0
    JSON_PATH.write_text(dumps(fresh), encoding="utf-8")
    print(f"wrote {JSON_PATH.relative_to(ROOT)} ({len(fresh['cases'])} cases, source: {fresh['source']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
