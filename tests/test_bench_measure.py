"""``benchmarks.measure``: the one interleaved measurement every benchmark uses (issue 13 item 4)."""

from __future__ import annotations

import gc

import pytest

from benchmarks.measure import BASELINE, SelfTimed, Series, interleaved, ratio_row, verdict


@pytest.fixture(autouse=True)
def _no_full_collections(monkeypatch):
    """interleaved() runs gc.collect() before every timed call, as a benchmark should; these tests check which calls
    it makes in which order and what it records, not the collector, and a full collection of a test worker's heap
    (every module the worker imported before) costs 0.1-0.3 CPU s each: this file 2.4-5.5 CPU s -> under 0.1 s."""
    monkeypatch.setattr(gc, "collect", lambda generation=2: 0)


def test_baseline_runs_just_before_every_candidate_run():
    calls: list[str] = []
    m = interleaved({"a": lambda: calls.append("a"), "b": lambda: calls.append("b")}, k=3,
                    baseline=lambda: calls.append("np"), warmup=1, baseline_settle=0)
    timed = calls[3:]                                   # the warm-up round: np, a, b
    assert calls[:3] == ["np", "a", "b"]
    assert timed == ["np", "a", "np", "b"] * 3
    assert len(m.series[BASELINE].runs) == 6 and len(m.series["a"].runs) == 3
    assert m.neighbour["a"] == m.series[BASELINE].runs[0::2]
    assert m.neighbour["b"] == m.series[BASELINE].runs[1::2]


def test_a_self_timed_candidate_reports_its_own_seconds_and_result():
    m = interleaved({"part": lambda: SelfTimed(0.25, "out")}, k=2)
    assert m.series["part"].runs == [0.25, 0.25] and m.last["part"] == "out"
    assert BASELINE not in m.series


def test_series_statistics_and_ratio_row():
    sim, base = Series([3.0, 1.0, 2.0, 10.0, 4.0]), Series([1.0, 1.0, 2.0, 1.0, 1.0])
    assert (sim.median, sim.lo, sim.hi) == (3.0, 1.0, 10.0)
    assert sim.quartiles() == (2.0, 4.0)
    text, entry = ratio_row("x", sim, base, 2.0, neighbour=base.runs)
    assert entry["ratio_vs_numpy"] == 3.0 and entry["met"] is False and "MISSED" in text
    assert entry["ratio_per_round"] == [3.0, 1.0, 1.0, 10.0, 4.0]
    assert verdict(True) == "PASS"


def test_bad_k_and_a_candidate_named_like_the_baseline_are_refused():
    with pytest.raises(ValueError, match="positive"):
        interleaved({"a": lambda: None}, k=0)
    with pytest.raises(ValueError, match="baseline"):
        interleaved({BASELINE: lambda: None}, k=1, baseline=lambda: None)


def test_a_settle_call_precedes_each_timed_baseline_run():
    calls: list[str] = []
    m = interleaved({"a": lambda: calls.append("a")}, k=2, baseline=lambda: calls.append("np"), warmup=0)
    assert calls == ["np", "np", "a"] * 2 and len(m.series[BASELINE].runs) == 2
