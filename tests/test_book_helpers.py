"""The book helpers (``ascend_lab.book``): what the chapters used to define for themselves.

Each helper is checked against something computed another way (the C-named runtime, the trace's own
events, plain numpy), so a helper that drifts fails here before a chapter prints a wrong number.
"""

from __future__ import annotations

import sys
import types

import ipywidgets as widgets
import numpy as np
import pytest
from helpers import device as device_session

import ascend_lab as al
from ascend_lab import acl, book
from ascend_lab.ascendc import options
from ascend_lab.book import api_reference as api
from ascend_lab.opdev import errno
from ascend_lab.ops.hard_sigmoid_grad import op_api as hs_api
from ascend_lab.ops.threshold_grad_v2_d import op_api as th_api

F32, F16 = np.float32, np.float16
BF16 = al.dtypes.bfloat16


# --- show_source -----------------------------------------------------------------------------------------------
def _sample(x):
    """A function whose source the test knows."""
    return x + 1


def test_source_markdown_is_the_current_source_in_one_fence():
    md = book.source_markdown(_sample, book.pct)
    assert md.startswith("````python\n") and md.endswith("````")
    assert "def _sample(x):\n" in md and "return x + 1" in md and "def pct(" in md
    assert md.index("def _sample") < md.index("def pct")


def test_source_markdown_needs_an_object():
    with pytest.raises(TypeError, match="at least one"):
        book.source_markdown()


# --- show_cxx: C++ kernel source with its own line numbers ----------------------------------------------------------
SCALE_CPP = """#include "kernel_operator.h"
using namespace AscendC;

class Scale {
public:
    __aicore__ inline Scale() {}
    __aicore__ inline void Run(GM_ADDR x)
    {
        GlobalTensor<float> g;
        g.SetGlobalBuffer((__gm__ float*)x, 64);
        pipe.InitBuffer(q, 1, 256);
        LocalTensor<float> t = q.AllocTensor<float>();
        DataCopy(t, g, 64);
        q.EnQue(t);
        t = q.DeQue<float>();
        Muls(t, t, 2.0f, 64);
        DataCopy(g, t, 64);
        q.FreeTensor(t);
    }
private:
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> q;
};

extern "C" __global__ __aicore__ void scale(GM_ADDR x, GM_ADDR workspace, GM_ADDR tiling)
{
    Scale op;
    op.Run(x);
}
"""


@pytest.fixture(scope="module")
def hsg_kernel():
    from ascend_lab.ops.hard_sigmoid_grad import op_kernel
    return op_kernel.hard_sigmoid_grad


def test_cxx_listing_shows_one_definition_with_the_files_line_numbers(hsg_kernel):
    from ascend_lab.book.source import cxx_listing
    header = hsg_kernel.path.parent / "arch35" / "hard_sigmoid_grad.h"
    file_lines = header.read_text().splitlines()
    lst = cxx_listing(hsg_kernel, "HardSigmoidGrad<T>::Compute")
    assert lst.name == "ascend_lab/ops/hard_sigmoid_grad/op_kernel/experimental/arch35/hard_sigmoid_grad.h"
    assert lst.code.splitlines() == file_lines[lst.first - 1:lst.last]
    assert file_lines[lst.first - 1].startswith("template <typename T>")          # the template head belongs to it
    assert "::Compute(" in file_lines[lst.first] and file_lines[lst.last - 1] == "}"
    for spelled in ("HardSigmoidGrad::Compute", "HardSigmoidGrad < T >::Compute"):    # template args and spaces
        assert cxx_listing(hsg_kernel, spelled) == lst
    assert cxx_listing(header, "HardSigmoidGrad<T>::Compute").code == lst.code      # a path works alike
    html_ = lst._repr_html_()
    assert f'<span class="linenos">{lst.first}</span>' in html_ and "highlight" in html_
    assert "/work/" not in html_ and str(header.parent) not in html_ and "<details>" not in html_
    whole = cxx_listing(hsg_kernel)                                                 # no symbol: the entry .cpp
    assert whole.name.endswith("hard_sigmoid_grad_apt.cpp") and whole.first == 1
    part = cxx_listing(hsg_kernel, "HardSigmoidGrad<T>::Compute", lines=(lst.first + 2, lst.first + 4))
    assert part.code.splitlines() == file_lines[lst.first + 1:lst.first + 4]


def test_cxx_listing_python_is_the_translation_of_the_shown_lines(hsg_kernel):
    from ascend_lab.book.source import cxx_listing
    lst = cxx_listing(hsg_kernel, "HardSigmoidGrad<T>::Compute", python=dict(schMode=1, bufferNum=2))
    py = lst.python.splitlines()
    assert py[0].startswith("class HardSigmoidGrad_half:") and py[1].lstrip().startswith("def Compute(this")
    tags = [int(line.rsplit(":", 1)[1]) for line in py[1:]]
    assert all(lst.first <= t <= lst.last for t in tags)
    assert all(line.rsplit("#", 1)[1].strip().startswith("hard_sigmoid_grad.h:") for line in py)
    full = hsg_kernel.python_source(schMode=1, bufferNum=2)
    assert all(line.strip() in full for line in py[1:])                           # the very lines the simulator runs
    html_ = lst._repr_html_()
    assert "<details><summary>What the simulator executes (schMode=1, bufferNum=2)</summary>" in html_
    assert "Muls" in html_.split("<details>")[1]


def test_cxx_line_finds_a_line_and_refuses_ambiguity(hsg_kernel):
    from ascend_lab.book.source import cxx_line
    header = hsg_kernel.path.parent / "arch35" / "hard_sigmoid_grad.h"
    file_lines = header.read_text().splitlines()
    n = cxx_line(hsg_kernel, "Muls(tmpLocal", "HardSigmoidGrad<T>::Compute")
    assert file_lines[n - 1].lstrip().startswith("Muls(tmpLocal, selfLocal")
    assert cxx_line(hsg_kernel, "Muls(", "HardSigmoidGrad<T>::Compute", occurrence=2) > n
    with pytest.raises(LookupError, match="occurs on 2 lines"):
        cxx_line(hsg_kernel, "Muls(", "HardSigmoidGrad<T>::Compute")


def test_cxx_listing_of_a_kernel_compiled_from_text():
    from ascend_lab.ascendc import cxx
    from ascend_lab.book.source import cxx_line, cxx_listing
    k = cxx.compile(SCALE_CPP, name="scale.cpp")
    lst = cxx_listing(k, "Scale::Run", python={})
    assert lst.name == "scale.cpp" and lst.first == SCALE_CPP.splitlines().index("    __aicore__ inline void "
                                                                                   "Run(GM_ADDR x)") + 1
    assert "def Run(this, x):" in lst.python and "Muls(" in lst.python
    assert cxx_listing(k, "Scale").first == 4                      # the class, not its constructor
    assert cxx_listing(k, "Scale::Scale").first == cxx_listing(k, "Scale::Scale").last == 6
    assert cxx_listing(k, "scale").code.startswith('extern "C"')   # the entry with its linkage
    assert SCALE_CPP.splitlines()[cxx_line(k, "Muls") - 1].strip() == "Muls(t, t, 2.0f, 64);"


def test_cxx_listing_says_what_a_file_defines_when_a_symbol_is_missing(hsg_kernel):
    from ascend_lab.book.source import cxx_listing
    with pytest.raises(LookupError, match=r"no definition of 'Computer'.*HardSigmoidGrad<T>::Compute"):
        cxx_listing(hsg_kernel, "Computer")
    with pytest.raises(LookupError, match="several definitions.*HardSigmoidGradBf16::Compute"):
        cxx_listing(hsg_kernel, "Compute")
    with pytest.raises(ValueError, match="not inside"):
        cxx_listing(hsg_kernel, "HardSigmoidGrad<T>::Compute", lines=(1, 3))
    with pytest.raises(TypeError, match="header"):
        cxx_listing(hsg_kernel.path.parent / "arch35" / "hard_sigmoid_grad.h", python={"schMode": 0})


# --- widget trees ----------------------------------------------------------------------------------------------
def test_widgets_of_finds_nested_widgets_in_order():
    a, b, c = widgets.Image(value=b"a"), widgets.Image(value=b"b"), widgets.Image(value=b"c")
    card = widgets.HTML("card")
    tree = widgets.VBox([widgets.HBox([a, card]), widgets.Tab([widgets.VBox([b])]), c])
    assert book.widgets_of(tree, widgets.Image) == [a, b, c]
    assert book.widgets_of(tree, widgets.HTML) == [card]
    assert book.widgets_of(tree, widgets.Box)[0] is tree          # the root itself counts
    assert book.widgets_of(a, widgets.HTML) == []


# --- the C-named layers by hand --------------------------------------------------------------------------------
@pytest.fixture
def device():
    with device_session():
        yield


def test_to_device_copies_the_bytes(device):
    host = np.arange(12, dtype=F16).reshape(3, 4)
    ptr = book.to_device(host)
    back = np.zeros_like(host)
    assert acl.aclrtMemcpy(back, back.nbytes, ptr, host.nbytes, acl.ACL_MEMCPY_DEVICE_TO_HOST) == acl.ACL_SUCCESS
    np.testing.assert_array_equal(back, host)
    assert book.to_device(np.zeros((0, 3), F32)) is not None            # an empty array still gets an address


def test_to_device_without_a_device_says_what_to_do():
    assert not acl.is_initialized()
    with pytest.raises(RuntimeError, match="aclInit"):
        book.to_device(np.ones(4, F32))


def test_dense_tensor_is_contiguous_over_its_storage(device):
    host = np.ones((2, 3), BF16)
    t = book.dense_tensor(host)
    assert tuple(t.view_dims) == (2, 3) and t.dtype == acl.aclDataType.ACL_BF16
    assert tuple(t.strides) == (3, 1) and t.offset == 0 and tuple(t.storage_dims) == (2, 3)
    ptr = book.to_device(host)
    assert book.dense_tensor(host, ptr).data is ptr


def test_phase1_raw_reaches_the_out_pointer_checks():
    arrays = [np.ones((2, 3), F32), np.linspace(-4, 4, 6, dtype=F32).reshape(2, 3), np.zeros((2, 3), F32)]
    ok, ok_log = book.phase1_raw(hs_api.aclnnHardsigmoidBackwardGetWorkspaceSize, arrays)
    ws, ws_log = book.phase1_raw(hs_api.aclnnHardsigmoidBackwardGetWorkspaceSize, arrays, workspaceSize=None)
    ex, _ = book.phase1_raw(hs_api.aclnnHardsigmoidBackwardGetWorkspaceSize, arrays, executor=None)
    assert ok == errno.ACLNN_SUCCESS and not [m for m in ok_log if "nullptr" in m]
    assert ws == ex == errno.ACLNN_ERR_PARAM_NULLPTR and ws_log
    assert not acl.is_initialized()                              # its own session, closed again


def test_phase1_raw_passes_the_scalar_between_inputs_and_out():
    arrays = [np.ones(3, F32), np.array([0.2, 1.2, 2.2], F32), np.zeros(3, F32)]
    ok, _ = book.phase1_raw(th_api.aclnnThresholdBackwardGetWorkspaceSize, arrays, 1.0)
    bad, log = book.phase1_raw(th_api.aclnnThresholdBackwardGetWorkspaceSize, arrays, 1.0, workspaceSize=None)
    assert ok == errno.ACLNN_SUCCESS and bad == errno.ACLNN_ERR_PARAM_NULLPTR and log


def test_logged_strips_the_prefix():
    r = al.hardsigmoid_backward(np.ones(4, np.int32), np.ones(4, F32))
    assert r.status == errno.ACLNN_ERR_PARAM_INVALID
    assert r.messages[0].startswith("[ERROR]") and not book.logged(r).startswith("[")
    assert book.logged(r) in r.messages[0]
    clean = al.hardsigmoid_backward(np.ones(4, F32), np.ones(4, F32))
    assert book.logged(clean) == "-" and book.logged(clean, none="") == ""


# --- kernel arguments ------------------------------------------------------------------------------------------
def test_gm_round_trips_and_knows_its_size():
    x = np.linspace(-1, 1, 10, dtype=F32)
    addr = book.gm(x, "x")
    assert addr.name == "x" and addr.arg_nbytes == x.nbytes
    np.testing.assert_array_equal(book.gm_read(addr, F32, 10), x)
    np.testing.assert_array_equal(book.gm_read(addr + 8, F32, 2), x[2:4])    # an offset address reads from there
    with pytest.raises(ValueError, match="does not fit"):
        book.gm_read(addr, F32, 11)


# --- traces ----------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def int8_run():
    """The experimental ThresholdGradV2D (registered for ascend910b, kernel_flavours §1), whose int8 path the
    steps below describe: widen through half to fp32, CompareScalar GT, Select (cann_facts §4.2)."""
    x = np.array([-3, 0, 2, 5] * 16, np.int8)
    with options(trace=True, snapshot=True):            # snapshot: each event keeps the values it wrote
        run = al.threshold_backward(x, x, 1.0, soc="Ascend910B4", trace=True, kernel="experimental")
    assert run.kernel == "experimental"
    return run


def test_vector_steps_read_dtypes_and_modes_from_the_events(int8_run):
    events = book.tile_vector_events(int8_run)
    raw = [e for e in int8_run.trace.events if e.core == 0 and e.pipe == "V" and e.tile == 0]
    assert events == raw and events
    steps = [book.vector_step(e) for e in events]
    casts = [s for s in steps if s[0] == "Cast"]
    assert casts and all("→" in s[1] and s[2].startswith("CAST_") for s in casts)
    assert casts[0][1].startswith("int8→")                                     # int8 is widened first
    cmp = next(s for s in steps if s[0] == "CompareScalar")
    assert cmp[2] == "GT" and cmp[1] in ("fp16", "fp32")
    sel = next(s for s in steps if s[0] == "Select")
    assert sel[2].startswith("VSEL_")
    assert book.step_label(("Cast", "fp16→fp32", "CAST_NONE")) == "Cast fp16→fp32 (CAST_NONE)"
    assert book.step_label(("Muls", "fp32", "")) == "Muls fp32"


def test_vector_step_refuses_an_unreadable_event(int8_run):
    cast = next(e for e in book.tile_vector_events(int8_run) if e.instr == "Cast")
    broken = types.SimpleNamespace(instr="Cast", detail="no modes here", values=cast.values)
    with pytest.raises(ValueError, match="Cast"):
        book.vector_step(broken)
    no_values = types.SimpleNamespace(instr="Muls", detail="", values=None)
    with pytest.raises(ValueError, match="snapshot"):
        book.vector_step(no_values)


def test_tile_vector_events_needs_a_trace():
    r = al.hardsigmoid_backward(np.ones(8, F32), np.ones(8, F32))
    with pytest.raises(ValueError, match="trace=True"):
        book.tile_vector_events(r)


def test_pipe_load_and_bytes_moved_agree_with_the_events():
    g = np.ones(100_000, F32)
    r = al.hardsigmoid_backward(g, g, soc="Ascend950PR", trace=True)
    load = book.pipe_load(r.trace)
    core0 = r.trace.core_events(0)
    cycles = next(c.cycles for c in r.trace.cores if c.core == 0)
    for pipe in ("MTE2", "V", "MTE3"):
        busy = sum(e.end - e.start for e in core0 if e.pipe == pipe)
        assert load[pipe] == pytest.approx(busy / cycles) and 0 < load[pipe] <= 1
    copies = [e for e in r.trace.events if e.pipe in ("MTE2", "MTE3")]
    assert book.bytes_moved(r.trace) == sum(e.nbytes for e in copies) >= 3 * g.nbytes
    with pytest.raises(ValueError, match="did not run"):
        book.pipe_load(r.trace, core=10_000)


# --- values ----------------------------------------------------------------------------------------------------
def test_dtype_abbr_both_styles():
    assert [book.dtype_abbr(d) for d in ("float32", np.float16, BF16, "int8", "half", "float")] == \
        ["fp32", "fp16", "bf16", "int8", "fp16", "fp32"]
    assert [book.dtype_abbr(d, "f") for d in (F32, acl.aclDataType.ACL_FLOAT16, "bfloat16", np.float64)] == \
        ["f32", "f16", "bf16", "f64"]


def test_pct():
    assert book.pct(0.4321) == "43 %" and book.pct(1) == "100 %" and book.pct(0.12345, 1) == "12.3 %"


def test_format_value():
    assert book.format_value(np.int32(-7)) == "-7"
    assert book.format_value(np.float32(np.nan)) == "NaN"
    assert book.format_value(np.float32(0.1)) == "0.1"                 # shortest round-trip, not 0.10000000149
    assert book.format_value(np.float32(1e-8)) == "1e-08"
    assert book.format_value(np.float32(16777216.0)) == "1.6777216e+07"
    assert book.format_value(np.float16(0.1)) == "0.099975586"
    assert book.format_value(np.array(3.0, BF16)) == "3"


def test_ulp_distance():
    x = np.array([1.0, -2.0, 0.0, 1000.0], F16)
    up = np.nextafter(x, np.array(np.inf, F16))
    np.testing.assert_array_equal(book.ulp_distance(x, up), [1, 1, 1, 1])
    tiny = np.array([np.float32(1e-45)], F32)
    assert book.ulp_distance(tiny, -tiny)[0] == 2                      # across zero: -min, 0, +min
    assert book.ulp_distance(np.array([0.0], F32), np.array([-0.0], F32))[0] == 0
    b = np.array([1.0], BF16)
    b_up = (b.view(np.uint16) + 1).view(BF16)                          # the next bfloat16 up
    assert b_up[0] > b[0] and book.ulp_distance(b, b_up)[0] == 1
    with pytest.raises(TypeError, match="one dtype"):
        book.ulp_distance(np.ones(2, F16), np.ones(2, F32))
    with pytest.raises(TypeError):
        book.ulp_distance(np.ones(2, np.int16), np.ones(2, np.int16))


def test_count_bit_differences():
    a = np.array([np.nan, 0.0, 1.0, 2.0], F32)
    b = np.array([np.nan, -0.0, 1.0, 3.0], F32)
    assert book.count_bit_differences(a, b) == 2                        # -0 vs +0 and 2 vs 3; NaN == NaN
    assert book.count_bit_differences(np.arange(4), np.arange(4)) == 0
    with pytest.raises(ValueError, match="one dtype and shape"):
        book.count_bit_differences(a, b[:3])


def test_seeded_inputs():
    g, f = book.seeded_inputs(1000, "float16", seed=3)
    g2, _ = book.seeded_inputs(1000, "float16", seed=3)
    assert g.dtype == f.dtype == np.float16 and np.array_equal(g, g2) and np.array_equal(f, g[::-1])
    assert -4 <= g.min() and g.max() <= 4
    i8, _ = book.seeded_inputs(1000, "int8")
    assert i8.dtype == np.int8 and i8.min() >= -32 and i8.max() <= 32 and len(np.unique(i8)) > 20
    assert not np.array_equal(book.seeded_inputs(10)[0], book.seeded_inputs(10, seed=1)[0])


# --- tables ----------------------------------------------------------------------------------------------------
def test_table_escapes_every_cell():
    html = book.table_html(["a<b", "c"], [(1, "<script>"), ("x & y", None)])
    assert "<th>a&lt;b</th>" in html and "&lt;script&gt;" in html and "x &amp; y" in html
    assert html.count("<tr>") == 3 and "<script>" not in html


def test_column_table_formats_each_column():
    t = book.column_table({"x": np.array([0.1, np.nan], F32), "n": np.array([3, 4], np.int8)})
    assert "<th>x</th><th>n</th>" in t.data and "<td>0.1</td><td>3</td>" in t.data and "<td>NaN</td>" in t.data
    with pytest.raises(ValueError, match="different lengths"):
        book.column_table({"x": [1, 2], "y": [1]})


# --- names -----------------------------------------------------------------------------------------------------
def test_resolve_name():
    from ascend_lab.opdev.executor import aclOpExecutor
    assert book.resolve_name("ascend_lab.opdev.executor.aclOpExecutor") is aclOpExecutor
    assert book.resolve_name("ascend_lab.acl") is acl
    with pytest.raises(AttributeError):
        book.resolve_name("ascend_lab.acl.no_such_function")
    with pytest.raises(ImportError):
        book.resolve_name("no_such_package.x")


# --- the API reference -----------------------------------------------------------------------------------------
@pytest.fixture
def fake_module(monkeypatch):
    mod = types.ModuleType("fake_api_mod", "``fake_api_mod`` -- A module for the test.\n\nNot this paragraph.")

    def documented(a: int, b: str = "x") -> int:
        """Does *one* thing with ``a``.

        Second paragraph."""
        return a

    def undocumented():
        pass

    for f in (documented, undocumented):
        f.__module__ = "fake_api_mod"
        setattr(mod, f.__name__, f)
    mod.LIMIT = 42
    mod.__all__ = ["documented", "undocumented"]
    monkeypatch.setitem(sys.modules, "fake_api_mod", mod)
    return mod


def test_api_section_lists_signatures_and_first_paragraphs(fake_module):
    sec = api.api_section("fake_api_mod")
    assert sec.modules == {"fake_api_mod": ["documented", "undocumented"]}
    assert "documented(a: int, b: str = &#x27;x&#x27;) -&gt; int" in sec.html or \
        "documented(a: int, b: str = 'x') -&gt; int" in sec.html
    assert "Does <em>one</em> thing with <code>a</code>." in sec.html and "Second paragraph" not in sec.html
    assert "No docstring yet." in sec.html
    assert "A module for the test." in sec.html and "Not this paragraph" not in sec.html
    assert sec._repr_html_() == sec.html


def test_api_reference_collects_sections_and_skips_optional_modules(fake_module):
    ref = api.ApiReference(optional={"no_such_module_here"})
    ref.section("fake_api_mod", "no_such_module_here")
    assert ref.rendered == {"fake_api_mod": ["documented", "undocumented"]}
    with pytest.raises(ImportError):
        api.ApiReference().section("no_such_module_here")


def test_public_names_and_constants():
    names = api.public_names(errno)
    assert "describe" in names and "ACLNN_SUCCESS" in names or hasattr(errno, "__all__")
    assert api.short_value(acl.aclDataType.ACL_FLOAT) == "0"
    assert api.short_value("x" * 100).endswith("...") and len(api.short_value("x" * 100)) == 60
    assert api.own_doc(acl.aclDataType) and api.documentable(acl.aclInit) and not api.documentable(3)
