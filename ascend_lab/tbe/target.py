"""The SoC a TBE description is built for, and the platform queries a description's source branches on.

TBE compiles a Python description for one SoC, and the legacy kernels' sources ask about it while they describe
(``api_check_support("tik.vcopy")``, ``intrinsic_check_support("Intrinsic_vconv", "bf162f32")``). Here:
:func:`compile_for` (the compile target, per thread), :func:`compile_soc` / :func:`current_target`, and the
queries answered as TBE answers them for the SoC it compiles for: a ``tik.*`` api or an intrinsic from the SoC's
platform ini (the SoC catalogue records the CANN 8.1.RC1 ini's entries), a ``tbe.dsl.*`` api from the DSL's own
per-SoC dtype table (:data:`DSL_CHECK_SUPPORT`). Split from :mod:`.dsl` (which re-exports every name) because it
is the DSL's one seam that knows about SoCs and nothing about the graph.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

from ..base.platform import SocInfo, get_soc

__all__ = ["DSL_CHECK_SUPPORT", "TBE_FAMILIES", "after_v200", "api_check_support", "compile_for", "compile_soc",
           "current_target", "has_vcopy", "intrinsic_check_support"]

#: The op_def families whose built-in HardSigmoidGrad/ThresholdGradV2D/ReluGrad kernels are TBE (kernel_flavours §1).
TBE_FAMILIES = ("ascend910", "ascend910b", "ascend910_93", "ascend310p")

#: The rows of the TBE DSL's own dtype table (``DSL_CHECK_SUPPORT_MAP`` in CANN 8.1.RC1
#: ``python/site-packages/tbe/dsl/compute/util.py``: "vadd" :610-633, "vcmpsel" :985-1008) that the three kernels
#: and the bf16 wrapper ask ``api_check_support("tbe.dsl.<api>", dtype)`` about, keyed by ``Short_SoC_version``;
#: a SoC without a row of its own takes ``"AllSoc"`` (``dsl_check_support``, util.py:1789-1822). Neither api has a
#: row in the dynamic-shape ``UNIFY_DSL_CHECK_SUPPORT_MAP``, so the same rows answer for these dynamic kernels.
DSL_CHECK_SUPPORT: dict[str, dict[str, tuple[str, ...]]] = {
    "vadd": {
        "AllSoc": ("float16", "int32"),
        "Ascend310P": ("int16", "float16", "int32", "float32", "uint64", "int64"),
        "Ascend910": ("float16", "float32", "int32", "int64", "uint64"),
        "Ascend910B": ("float16", "float32", "int32", "int64", "uint64", "complex32", "complex64"),
        "Ascend910_93": ("float16", "float32", "int32", "int64", "uint64", "complex32", "complex64"),
        "Ascend910_95": ("float16", "float32", "int32", "int64", "uint64", "complex32", "complex64"),
    },
    "vcmpsel": {
        "AllSoc": ("float16",),
        "Ascend310P": ("float16", "float32"),
        "Ascend910": ("float16", "float32"),
        "Ascend910B": ("float16", "float32"),
        "Ascend910_93": ("float16", "float32"),
        "Ascend910_95": ("float16", "float32"),
    },
}

#: The compile target, per thread (a ContextVar: two threads building programs for two SoCs never mix them up).
_compile_soc: contextvars.ContextVar[SocInfo | None] = contextvars.ContextVar("tbe.compile_soc", default=None)


@contextlib.contextmanager
def compile_for(soc: str | SocInfo) -> Iterator[SocInfo]:
    """``with compile_for("Ascend910A"): ...`` builds descriptions for that SoC (TBE's compile target)."""
    info = get_soc(soc)
    if info.family not in TBE_FAMILIES:
        raise ValueError(f"the legacy TBE kernels are built for {', '.join(TBE_FAMILIES)}; {info.name} is "
                         f"{info.family}")
    token = _compile_soc.set(info)
    try:
        yield info
    finally:
        _compile_soc.reset(token)


def compile_soc() -> SocInfo:
    """The SoC descriptions are being built for (ValueError outside :func:`compile_for`)."""
    info = _compile_soc.get()
    if info is None:
        raise ValueError("no TBE compile target: build the description inside tbe.compile_for(soc)")
    return info


def intrinsic_check_support(intrinsic: str, dtype: str = "", soc: str | SocInfo | None = None) -> bool:
    """``tbe_platform.intrinsic_check_support``: the compile SoC's ini lists ``intrinsic`` (with ``dtype``, e.g.
    ``("Intrinsic_vconv", "bf162f32")``), read from the SoC catalogue (``SocInfo.intrinsic_check_support``)."""
    info = compile_soc() if soc is None else get_soc(soc)
    return info.intrinsic_check_support(intrinsic, dtype)


def has_vcopy(soc: str | SocInfo) -> bool:
    """``api_check_support("tik.vcopy")`` on ``soc``: whether its ini lists ``Intrinsic_vcopy`` (present on
    910B*/910_93/950, absent on 910A and 310P in CANN 8.1.RC1; ``platform_adapter.check_supported_vcopy``: "vcopy
    support after ascend910B")."""
    return get_soc(soc).intrinsic_check_support("Intrinsic_vcopy")


def api_check_support(api: str, dtype: str | None = None) -> bool:
    """``tbe_platform.api_check_support`` for the compile SoC (``platform_info.py:269-297``): a ``tik.<name>`` api
    is the ini's ``Intrinsic_<name>`` (``tik_api_check_support`` -> ``intrinsic_check_support``), a
    ``tbe.dsl.<name>`` api the DSL's own dtype table (:data:`DSL_CHECK_SUPPORT`) for the SoC's Short_SoC_version."""
    info = compile_soc()
    if api.startswith("tik."):
        return info.intrinsic_check_support("Intrinsic_" + api.removeprefix("tik."), dtype or "")
    if api.startswith("tbe.dsl."):
        name = api.removeprefix("tbe.dsl.")
        if name not in DSL_CHECK_SUPPORT:
            raise ValueError(f"api_check_support({api!r}) is not modelled; the model records "
                             f"{', '.join('tbe.dsl.' + n for n in DSL_CHECK_SUPPORT)}")
        rows = DSL_CHECK_SUPPORT[name]
        supported = rows.get(info.short_soc_version, rows["AllSoc"])
        return dtype in (None, "") or dtype in supported
    raise ValueError(f"api_check_support({api!r}): the api is neither tik.* nor tbe.dsl.*")


def after_v200() -> bool:
    """``impl.util.util_soc_common.after_v200()``: ReluGrad's test, which is ``api_check_support("tik.vcopy")``
    (util_soc_common.py:58-69)."""
    return api_check_support("tik.vcopy")


def current_target() -> SocInfo | None:
    """The SoC descriptions are being built for, or None outside :func:`compile_for` (a :class:`.dsl.Compute`
    made outside it records no SoC)."""
    return _compile_soc.get()
