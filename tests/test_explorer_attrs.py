"""Issue 21: an op's tiling attributes are first-class in the tiling explorer -- whatever their names.

The live explorer shows one number box (a FloatText described by the attribute's name) per tiling attribute of the
selected op, at the selected kernel's default (``OpSpec.check_attrs``), rebuilt when the op or the kernel changes;
a changed box redraws with its value, which reaches ``TilingView.update(..., attrs=...)``. The static explorer holds
``attrs=`` fixed. ``threshold=`` still works (the older spelling), but no longer lands in every op's attributes.

Every registered operator is covered, built-in ones and the two C++ fixture operators of ``tests/fixture_ops``
(ScaleShift: gain, bias; DiffScaleAdd: scale), registered here as ``tests/fixture_ops/plugin.py`` does.
The widgets are driven without a browser: setting ``.value`` runs the ``observe`` callbacks.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import ipywidgets as W
import numpy as np
import pytest

from ascend_lab import viz
from ascend_lab.base.platform import get_soc, socs
from ascend_lab.book import widgets_of
from ascend_lab.explore.explorers import op_attr_defaults
from ascend_lab.ops import registry

try:                                     # the explorers' own layer (issue 21 item 6)
    from ascend_lab import explore as E
except ImportError:
    from ascend_lab.viz import explorers as E

FIXTURE_PACKAGES = {"scale_shift": "tests.fixture_ops.scale_shift",
                    "diff_scale_add": "tests.fixture_ops.diff_scale_add"}
#: Every operator: the registry's at collection (the fixture operators too under ``-p tests.fixture_ops.plugin``),
#: then the fixture operators, registered by the module fixture below.
OPS = list(dict.fromkeys([spec.key for spec in registry.ops()] + list(FIXTURE_PACKAGES)))


@pytest.fixture(scope="module", autouse=True)
def _fixture_ops():
    added = []
    for key, package in FIXTURE_PACKAGES.items():
        try:
            registry.get(key)
        except ValueError:
            registry.register(package)
            added.append(key)
    yield
    for key in added:
        registry.unregister(key)


@pytest.fixture
def updates(monkeypatch) -> list[tuple[dict, dict]]:
    """Every ``TilingView.update`` call from now on: (its keyword arguments, the state it returned)."""
    calls: list[tuple[dict, dict]] = []
    real = E.TilingView.update

    def spy(self, *args, **kw):
        state = real(self, *args, **kw)
        calls.append((kw, state))
        return state

    monkeypatch.setattr(E.TilingView, "update", spy)
    return calls


def _setting(op: str, flavour: str) -> tuple[str, str]:
    """(a SoC the kernel is registered for, a dtype the op definition takes: float32 when it can)."""
    spec = registry.get(op)
    soc = next(s for s in socs() if spec.kernel(flavour).registered_for(get_soc(s)))
    dtype = "float32" if "float32" in [d.short for d in spec.dtypes] else spec.dtypes[0].short
    return soc, dtype


def _attr_boxes(box) -> dict[str, W.FloatText]:
    """The live explorer's attribute controls (its only FloatText widgets), by description."""
    found = widgets_of(box, W.FloatText)
    assert len({w.description for w in found}) == len(found), [w.description for w in found]
    return {w.description: w for w in found}


def _control(box, description: str):
    return next(w for w in widgets_of(box, W.Dropdown) if w.description == description)


def _defaults(op: str, flavour: str) -> dict[str, float]:
    spec = registry.get(op)
    want = {**spec.attrs, **spec.kernel(flavour).attr_defaults}
    assert list(want) == list(spec.attrs)             # a kernel's defaults are for the op's own attributes
    return want


def test_every_registered_operator_is_covered():
    assert {spec.key for spec in registry.ops()} <= set(OPS)
    assert {"alpha", "beta", "threshold", "gain", "bias", "scale"} <= {n for s in registry.ops() for n in s.attrs}
    assert any(not spec.attrs for spec in registry.ops())      # an op without attributes is covered too


@pytest.mark.parametrize("op", OPS)
def test_the_live_explorer_shows_the_ops_own_attributes(op, updates):
    spec = registry.get(op)
    flavour = spec.flavours[0]
    soc, dtype = _setting(op, flavour)
    box = viz.tiling_explorer(op=op, dtype=dtype, soc=soc, n=50_000)
    boxes = _attr_boxes(box)
    assert list(boxes) == list(spec.attrs)                      # exactly the declared names, in order, or none
    assert {name: w.value for name, w in boxes.items()} == _defaults(op, flavour)
    assert op_attr_defaults(op, flavour) == _defaults(op, flavour)
    kw, state = updates[-1]
    assert kw["op"] == op and kw["attrs"] == _defaults(op, flavour) and state["attrs"] == _defaults(op, flavour)
    assert "error" not in state, state.get("error")


def test_switching_the_op_or_kernel_rebuilds_the_attribute_controls(updates):
    box = viz.tiling_explorer(op="hard_sigmoid_grad", n=50_000)
    op_control, kernel_control = _control(box, "op"), _control(box, "kernel")
    seen = set()
    for spec in registry.ops():
        before, switched = len(updates), op_control.value != spec.key
        op_control.value = spec.key
        assert len(updates) == before + switched                # one redraw per op switch, not one per control
        for flavour in spec.flavours:
            kernel_control.value = flavour
            boxes = _attr_boxes(box)
            assert list(boxes) == list(spec.attrs), (spec.key, flavour)
            assert {n: w.value for n, w in boxes.items()} == _defaults(spec.key, flavour), (spec.key, flavour)
            kw, state = updates[-1]
            assert (kw["op"], kw["kernel"]) == (spec.key, kernel_control.value)
            assert kw["attrs"] == state["attrs"] == {n: w.value for n, w in boxes.items()}
            seen.add((spec.key, flavour))
    assert len(seen) == sum(len(spec.kernels) for spec in registry.ops())
    # HardSigmoidGrad's main kernel defaults alpha to 1/6f, not the op's 0.16666666: the box follows the kernel
    op_control.value = "hard_sigmoid_grad"
    kernel_control.value = "main"
    assert _attr_boxes(box)["alpha"].value == registry.get("hard_sigmoid_grad").kernel("main").attr_defaults["alpha"]
    kernel_control.value = "experimental"
    assert _attr_boxes(box)["alpha"].value == registry.get("hard_sigmoid_grad").attrs["alpha"]


@pytest.mark.parametrize("op, name, value", [("hard_sigmoid_grad", "alpha", 0.25), ("hard_sigmoid_grad", "beta", 0.75),
                                             ("threshold_grad_v2_d", "threshold", -0.5),
                                             ("scale_shift", "gain", 3.0), ("scale_shift", "bias", -2.0),
                                             ("diff_scale_add", "scale", 0.125)])
def test_an_attribute_control_redraws_with_its_value(op, name, value, updates):
    soc, dtype = _setting(op, registry.get(op).flavours[0])
    box = viz.tiling_explorer(op=op, dtype=dtype, soc=soc, n=50_000)
    _, before = updates[-1]
    assert getattr(before["tiling"], name) == pytest.approx(_defaults(op, registry.get(op).flavours[0])[name])
    count = len(updates)
    _attr_boxes(box)[name].value = value
    assert len(updates) == count + 1
    kw, state = updates[-1]
    assert kw["attrs"][name] == value and state["attrs"][name] == value
    assert "error" not in state, state.get("error")
    assert getattr(state["tiling"], name) == np.float32(value)     # the TilingData carries the attribute
    assert state["tiling"] != before["tiling"] and state["plan"]["tiling"] == state["tiling"]


@pytest.mark.parametrize("op", OPS)
def test_update_takes_every_attribute_of_every_kernel(op):
    view = E.TilingView()
    spec = registry.get(op)
    for flavour in spec.flavours:
        soc, dtype = _setting(op, flavour)
        default = view.update(op, dtype, soc, 50_000, kernel=flavour, max_tiles=2)
        assert "error" not in default, default.get("error")
        assert default["attrs"] == _defaults(op, flavour)
        for name in spec.attrs:
            new = default["attrs"][name] / 2 - 0.25
            state = view.update(op, dtype, soc, 50_000, kernel=flavour, max_tiles=2, attrs={name: new})
            assert state["attrs"] == {**_defaults(op, flavour), name: new}
            if hasattr(state["tiling"], name):                  # a tiling that stores the attribute stores this one
                assert getattr(state["tiling"], name) == np.float32(new), (flavour, name)
    if spec.key == "threshold_grad_v2_d":                       # the main kernel's broadcast tiling: a scalar
        a = view.update(op, "float32", "Ascend910B4", 50_000, kernel="main", attrs={"threshold": 1.0})
        b = view.update(op, "float32", "Ascend910B4", 50_000, kernel="main", attrs={"threshold": 2.0})
        assert a["tiling"].scalarData != b["tiling"].scalarData


def test_an_unknown_attribute_raises_type_error():
    view = E.TilingView()
    with pytest.raises(TypeError, match="gamma"):
        view.update("hard_sigmoid_grad", "float16", attrs={"gamma": 1.0})
    with pytest.raises(TypeError, match="gamma"):
        view.update("relu_grad", "float16", attrs={"gamma": 1.0})
    with pytest.raises(TypeError, match="gamma"):
        viz.tiling_explorer(static=True, op="hard_sigmoid_grad", ns=(1000,), buffer_nums=(2,),
                            attrs={"gamma": 1.0})


def test_threshold_keyword_still_works_and_is_only_threshold_grads():
    view = E.TilingView()
    hsg = view.update("hard_sigmoid_grad", "float16", n=10_000)
    assert hsg["attrs"] == _defaults("hard_sigmoid_grad", "experimental") and "threshold" not in hsg["attrs"]
    # a threshold for an op without one is dropped, as standalone.op_attrs does: one control for every op
    assert view.update("hard_sigmoid_grad", "float16", n=10_000, threshold=0.5)["attrs"] == hsg["attrs"]
    assert view.update("relu_grad", "float16", n=10_000, threshold=0.5)["attrs"] == {}
    tg = view.update("threshold_grad_v2_d", "float32", n=10_000, threshold=0.5)
    assert tg["attrs"] == {"threshold": 0.5} and tg["tiling"].threshold == np.float32(0.5)
    assert view.update("threshold_grad_v2_d", "float32", n=10_000)["attrs"] == {"threshold": 1.0}
    # attrs= wins over the older keyword
    both = view.update("threshold_grad_v2_d", "float32", n=10_000, threshold=0.5, attrs={"threshold": 2.0})
    assert both["attrs"] == {"threshold": 2.0}


def test_the_live_explorer_opens_at_given_attributes(updates):
    box = viz.tiling_explorer(op="hard_sigmoid_grad", n=50_000, attrs={"alpha": 0.25})
    assert {n: w.value for n, w in _attr_boxes(box).items()} == {"alpha": 0.25, "beta": 0.5}
    box = viz.tiling_explorer(op="threshold_grad_v2_d", dtype="float32", n=50_000, threshold=0.5)
    assert {n: w.value for n, w in _attr_boxes(box).items()} == {"threshold": 0.5}
    assert updates[-1][1]["tiling"].threshold == np.float32(0.5)
    box = viz.tiling_explorer(op="relu_grad", n=50_000, threshold=0.5)
    assert _attr_boxes(box) == {}
    _control(box, "op").value = "threshold_grad_v2_d"          # another op: its own defaults
    assert {n: w.value for n, w in _attr_boxes(box).items()} == {"threshold": 1.0}


def test_the_static_explorer_holds_attrs_fixed(updates):
    box = viz.tiling_explorer(static=True, op="hard_sigmoid_grad", dtype="float16", ns=(1000, 100_000),
                              buffer_nums=(1, 2), attrs={"alpha": 0.25, "beta": 0.75})
    assert len(widgets_of(box, W.Image)) == 4 and len(updates) == 4
    for kw, state in updates:
        assert kw["attrs"] == {"alpha": 0.25, "beta": 0.75} and state["attrs"] == kw["attrs"]
        assert (state["tiling"].alpha, state["tiling"].beta) == (np.float32(0.25), np.float32(0.75))
    updates.clear()
    viz.tiling_explorer(static=True, op="threshold_grad_v2_d", dtype="float32", ns=(1000,), buffer_nums=(2,),
                        threshold=0.5)
    assert [state["tiling"].threshold for _, state in updates] == [np.float32(0.5)]
