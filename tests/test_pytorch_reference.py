"""``ascend_lab/data/pytorch_reference.json``: the PyTorch numbers chapter 14 shows when torch is not installed.

* The package reads it (``ascend_lab.book.pytorch_reference``, through importlib.resources); the script
  ``scripts/make_pytorch_reference.py`` only builds and checks it.
* With torch importable: the table is regenerated with torch and must equal the stored one bit for bit.
* Always: every stored case must agree with the package's golden PyTorch model
  (``golden.hard_sigmoid_grad_pytorch`` / ``golden.threshold_backward_pytorch``), so the table, the model and
  the chapter cannot drift apart; the table must also hold the cases the chapter reads and name its source.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from ascend_lab.book import pytorch_reference as ref

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "make_pytorch_reference.py"

#: the cases chapter 14 reads
CHAPTER_CASES = {
    "hs_fp32_boundary", "hs_fp16_boundary", "hs_bf16_boundary", "hs_bf16_ties", "hs_fp16_all_finite",
    "hs_bf16_all_finite", "th_nan_feature", "th_eps_threshold", "th_int32_fractional", "th_fp16_threshold",
    "th_int32_2p24", "th_mixed_dtype", "th_broadcast",
}


def _load_script():
    spec = importlib.util.spec_from_file_location("make_pytorch_reference", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


script = _load_script()
TABLE = ref.load()
HAS_TORCH = ref.torch_version() is not None


def test_table_header_names_its_source():
    assert TABLE["format"] == ref.FORMAT
    src = TABLE["source"]
    assert src == ref.GOLDEN_SOURCE or src.startswith("torch 2."), src
    assert TABLE["generated_by"] == "scripts/make_pytorch_reference.py"


def test_table_holds_the_chapter_cases():
    names = [c["name"] for c in TABLE["cases"]]
    assert len(names) == len(set(names))
    assert CHAPTER_CASES <= set(names)


def test_table_is_small():
    assert SCRIPT.exists()
    assert script.JSON_PATH.stat().st_size < 64_000


def test_package_reads_the_file_the_script_writes():
    """The resource the package reads is the checkout's data file (editable install), byte for byte."""
    assert ref.load() == json.loads(script.JSON_PATH.read_text(encoding="utf-8"))
    assert ref.load(script.JSON_PATH) == TABLE


def test_script_reads_through_the_package():
    """The script keeps only generate/--check: its readers are the package module's own functions."""
    for name in ("load", "case", "inputs_of", "decode", "eval_golden", "torch_version"):
        if hasattr(script, name):
            assert getattr(script, name) is getattr(ref, name), name
    assert not hasattr(script, "pytorch") and not hasattr(script, "stored_output")


def test_load_refuses_another_format(tmp_path):
    bad = tmp_path / "t.json"
    bad.write_text(json.dumps({**TABLE, "format": ref.FORMAT + 1}), encoding="utf-8")
    with pytest.raises(ValueError, match="format"):
        ref.load(bad)


def test_unknown_case_names_the_known_ones():
    with pytest.raises(KeyError, match="hs_fp32_boundary"):
        ref.case(TABLE, "no_such_case")


@pytest.mark.parametrize("name", [c["name"] for c in TABLE["cases"]])
def test_stored_case_agrees_with_golden_pytorch_model(name):
    entry = ref.case(TABLE, name)
    g, s, thr = ref.inputs_of(entry)
    out = ref.eval_golden(entry["op"], g, s, thr)
    assert ref.matches(entry, out), f"{name}: golden PyTorch model and stored table disagree"


def test_encoding_round_trips_nan_and_bf16():
    from ascend_lab.dtypes import bfloat16
    for a in (np.array([np.nan, -0.0, np.inf, 1e-40], np.float32), np.array([np.nan, -0.0, 65504], np.float16),
              np.array([np.nan, -0.0, 3.0], bfloat16), np.array([-(2**31), 2**31 - 1], np.int32)):
        b = ref.decode(ref.encode(a))
        assert b.dtype == a.dtype and np.array_equal(ref.bits(a), ref.bits(b))


def test_matches_notices_one_flipped_bit():
    entry = ref.case(TABLE, "hs_fp32_boundary")
    out = ref.stored_output(entry).copy()
    assert ref.matches(entry, out)
    out.view(np.uint32)[2] ^= 1
    assert not ref.matches(entry, out)


def test_known_values_in_the_table():
    """A few entries checked against the formula by hand (not through any model)."""
    hs = ref.stored_output(ref.case(TABLE, "hs_fp32_boundary"))
    sixth = np.float32(1.0) / np.float32(6.0)
    # x = -3.0000002, -3, -2.9999998, 2.9999998, 3: PyTorch passes only |x| < 3
    np.testing.assert_array_equal(hs, np.array([0, 0, sixth, sixth, 0], np.float32))
    nan = ref.stored_output(ref.case(TABLE, "th_nan_feature"))
    np.testing.assert_array_equal(nan, np.array([1.5, 2.5, 0.0], np.float32))   # NaN <= thr is false -> grad
    i32 = ref.stored_output(ref.case(TABLE, "th_int32_fractional"))
    np.testing.assert_array_equal(i32, np.array([0, 0, 7], np.int32))           # thr -0.5 -> 0 for int32
    mixed = ref.stored_output(ref.case(TABLE, "th_mixed_dtype"))
    assert mixed.dtype == np.float32                                            # fp16 + fp32 -> fp32
    assert ref.stored_output(ref.case(TABLE, "th_broadcast")).shape == (2, 3)


def test_case_inputs_rebuilds_the_exhaustive_sweep():
    g, s, thr = ref.case_inputs("hs_fp16_all_finite", TABLE)
    assert g.dtype == np.float16 and g.size == 63488 and np.isfinite(g).all() and not s.any() and thr is None


def test_script_check_agrees_with_a_fresh_golden_build():
    fresh = script.build(use_torch=False)
    assert script.compare(TABLE, fresh) == []
    broken = json.loads(json.dumps(fresh))
    broken["cases"][0]["out"]["values"][0] = "0x00000001"
    assert script.compare(TABLE, broken) == [f"{broken['cases'][0]['name']}: out differs"]


@pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed (it is not a project dependency)")
def test_regenerated_with_torch_equals_stored_table():
    fresh = script.build(use_torch=True)
    assert script.compare(TABLE, fresh) == []


def test_pytorch_accessor_falls_back_without_torch(monkeypatch):
    monkeypatch.setattr(ref, "torch_version", lambda: None)
    out, src = ref.pytorch("hs_fp16_all_finite", TABLE)
    assert "ascend_lab/data/pytorch_reference.json" in src and out.size == 63488
    out, src = ref.pytorch("th_eps_threshold", TABLE)
    assert src.startswith("ascend_lab/data/pytorch_reference.json") and out.shape == (4,)


def test_pytorch_accessor_refuses_a_table_the_model_disagrees_with(monkeypatch):
    monkeypatch.setattr(ref, "torch_version", lambda: None)
    bad = json.loads(json.dumps(TABLE))
    ref.case(bad, "hs_fp16_all_finite")["out_summary"]["sha256"] = "0" * 64
    with pytest.raises(ValueError, match="hs_fp16_all_finite"):
        ref.pytorch("hs_fp16_all_finite", bad)
