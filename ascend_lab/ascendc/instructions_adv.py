"""The high-level math API (adv_api) the ops-nn activation kernels call -- ``Log``, ``Sigmoid``, ``Tanh`` -- as the
library's documented compositions, with their temporary buffers.

Where the library composes basic instructions (A2/A3, 310P, 910A), the simulator runs that composition -- the same
instructions in the same order over the same chunks of the temporary buffer, each rounding in its own dtype (the
numerics model of :mod:`.instructions_math`) and each an event of the trace with its own cost row. On the Ascend950
the library runs one register-based loop (``__simd_vf__``) that computes in float32 registers and rounds to T once
at the store: one event, costed with GE-ATT's fit of the whole API (V1 = V2: ``Sigmoid`` perf_param_v1.cpp:410-414,
``Tanh`` :438-442).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..base.platform import NpuArch
from . import sanitizer
from .core import reserved_ub_bytes
from .instructions import Adds, Cast, Duplicate, Maxs, Mins, Muls
from .instructions_math import Div, Exp
from .issue import check_local as _check_local
from .issue import tile_of as _tile_of
from .issue import ub_operand as _span
from .issue import vector_done as _vector_done
from .mask import BinaryRepeatParams as _BRP
from .mask import Cast as _mcast
from .mask import MaskMode, ResetMask, SetMaskCount, SetMaskNorm, SetVectorMask
from .mask import UnaryRepeatParams as _URP
from .mask import binary as _mbin
from .mask import with_scalar as _mscalar
from .math_common import FLOAT, check_dtype, dtype_set, same_dtype, unary, via_float64
from .numerics import RoundMode, cast
from .tensor import LocalTensor

__all__ = ["Erf", "Log", "NAMESPACE", "Sigmoid", "Tanh"]


_LOG_ARCHS = "the high-level Log exists on A2/A3, 310P and the 950 (adv_api/math/log.h)"


def Log(dst: LocalTensor, src: LocalTensor, count: int | None = None) -> None:
    """``AscendC::Log(dst, src[, calCount])`` (adv_api/math/log.h): the natural logarithm, one ``Ln`` over
    ``calCount`` elements (the whole of src when omitted); on the 950 its own loop, the same correctly rounded
    result here. Not on Atlas training (910A), where the library compiles it to nothing."""
    ctx = dst.ctx
    if ctx.soc.npu_arch == NpuArch.DAV_1001:
        sanitizer.check_api_dtype(ctx, "Log", ctx.current_tile, dst.dtype, dtype_set(), _LOG_ARCHS)
    unary("Log", via_float64(np.log), dst, src, src.size if count is None else count)


def _stack_buffer(ctx: Any) -> LocalTensor:
    """``PopStackBuffer<uint8_t, TPosition::LCM>``: the UB the TPipe has not allocated (from its 32-byte aligned top
    to the end of UB less the SoC's reserve). UNCONFIRMED in its exact extent; it is not a buffer of the plan, so the
    race checks do not see it."""
    start = -(-ctx.ub_top // 32) * 32
    end = ctx.ub.size - reserved_ub_bytes(ctx.soc)
    return LocalTensor(ctx, np.uint8, start, max(end - start, 0), "stack buffer")


def _vf_once(api: str, fn: Any, dst: LocalTensor, src: LocalTensor, count: int) -> None:
    """The 950's register loop: ``fn`` over float32 (each step rounded in float32), stored to T (RINT)."""
    _check_local(api, dst, src)
    dt = same_dtype(api, dst, src)
    ctx = dst.ctx
    check_dtype(ctx, api, _tile_of(dst, src), dt)
    count = int(count)
    x = _span(src, count, api, False).astype(FLOAT)
    with np.errstate(all="ignore"):
        y = fn(x)
    _span(dst, count, api, True)[...] = y if dt == FLOAT else cast(y, dt, RoundMode.CAST_RINT)
    _vector_done(ctx, api, dst, count, dt.itemsize, lambda: f"{dst.buffer} = {api}({src.buffer})", src)


def _f32(fn: Any) -> Any:
    """A float32 step whose exact result is rounded once to float32 (Exp, Div)."""
    return lambda *a: fn(*(np.asarray(v, np.float64) for v in a)).astype(FLOAT)


_EXP32, _DIV32 = _f32(np.exp), _f32(np.divide)


def _sigmoid32(x: np.ndarray) -> np.ndarray:
    t = _EXP32(np.multiply(x, FLOAT.type(-1)))
    return _DIV32(np.ones_like(t), np.add(t, FLOAT.type(1)))


def _tanh32(x: np.ndarray) -> np.ndarray:
    c = np.maximum(np.minimum(x, FLOAT.type(8.8)), FLOAT.type(-8.8))
    e = _EXP32(np.multiply(c, FLOAT.type(2)))
    return _DIV32(np.add(e, FLOAT.type(-1)), np.add(e, FLOAT.type(1)))


def _chunks(count: int, split: int) -> list[tuple[int, int]]:
    return [(o, min(split, count - o)) for o in range(0, count, split)]


def Sigmoid(dst: LocalTensor, src: LocalTensor, *args: Any) -> None:
    """``Sigmoid(dst, src[, sharedTmpBuffer][, calCount])`` (adv_api/activation/sigmoid.h): 1 / (1 + e^-x).

    A2/A3, 310P, 910A: the library's composition in T, over chunks of ``sharedTmpBuffer.GetSize() / sizeof(T)``
    elements -- ``Muls(dst, src, -1)``, ``Exp(dst, dst)``, ``Adds(dst, dst, 1)``, ``Duplicate(tmp, 1)``,
    ``Div(dst, tmp, dst)`` (sigmoid_impl.h) -- so a half Sigmoid rounds to half at every step. Without a
    sharedTmpBuffer the library pops its stack buffer (the UB the TPipe left free). Ascend950: one float32 loop
    (sigmoid_3510_impl.h), no temporary buffer."""
    tmp, count = _tmp_and_count(src, args)
    ctx = dst.ctx
    if ctx.soc.npu_arch == NpuArch.DAV_3510:
        _vf_once("Sigmoid", _sigmoid32, dst, src, count)
        return
    _check_local("Sigmoid", dst, src)
    dt = same_dtype("Sigmoid", dst, src)
    check_dtype(ctx, "Sigmoid", _tile_of(dst, src), dt)
    buf = (tmp if tmp is not None else _stack_buffer(ctx)).ReinterpretCast(dt)
    split = buf.size
    if split == 0:
        raise ValueError("Sigmoid: the temporary buffer holds no element of T (splitSize == 0: the library asserts)")
    for off, n in _chunks(int(count), split):
        d, s = dst[off], src[off]
        Muls(d, s, -1.0, n)
        Exp(d, d, n)
        Adds(d, d, 1.0, n)
        Duplicate(buf, 1.0, n)
        Div(d, buf, d, n)


def Tanh(dst: LocalTensor, src: LocalTensor, *args: Any) -> None:
    """``Tanh(dst, src[, sharedTmpBuffer][, calCount])`` (adv_api/math/tanh.h): (e^2x - 1) / (e^2x + 1) with x
    clipped to [-8.8, 8.8], in float32.

    A2/A3, 310P, 910A: the library's composition (tanh_common_impl.h) over chunks of ``stackSize`` floats --
    the temporary buffer (as float) halved for half (a float copy of the chunk, then the clip buffer), whole for
    float, rounded down to 32-element multiples: [``Cast`` half->float,] ``Mins`` 8.8, ``Maxs`` -8.8, ``Muls`` 2,
    ``Exp``, ``Adds`` -1 (to dst), ``Adds`` 1, ``Div`` [, ``Cast`` float->half]. Ascend950: one float32 loop, the
    same formula (tanh_3510_impl.h, the default TanhConfig -- UNCONFIRMED which of its two algorithms that is)."""
    tmp, count = _tmp_and_count(src, args)
    ctx = dst.ctx
    if ctx.soc.npu_arch == NpuArch.DAV_3510:
        _vf_once("Tanh", _tanh32, dst, src, count)
        return
    _check_local("Tanh", dst, src)
    dt = same_dtype("Tanh", dst, src)
    check_dtype(ctx, "Tanh", _tile_of(dst, src), dt)
    buf = (tmp if tmp is not None else _stack_buffer(ctx)).ReinterpretCast(FLOAT)
    half = dt.itemsize == 2
    stack = buf.size // (2 if half else 1) // 32 * 32
    if stack == 0:
        raise ValueError("Tanh: the temporary buffer is too small (stackSize == 0: the library asserts)")
    conv, clip = (buf, buf[stack]) if half else (None, buf)
    for off, n in _chunks(int(count), stack):
        d, s = dst[off], src[off]
        if half:
            Cast(conv, s, RoundMode.CAST_NONE, n)
            d32, s32 = conv, conv
        else:
            d32, s32 = d, s
        Mins(clip, s32, 8.8, n)
        Maxs(clip, clip, -8.8, n)
        Muls(clip, clip, 2.0, n)
        Exp(clip, clip, n)
        Adds(d32, clip, -1.0, n)
        Adds(clip, clip, 1.0, n)
        Div(d32, d32, clip, n)
        if half:
            Cast(d, conv, RoundMode.CAST_NONE, n)


def _tmp_and_count(src: LocalTensor, args: tuple[Any, ...]) -> tuple[LocalTensor | None, int]:
    """(sharedTmpBuffer, calCount) of the overloads ``(tmp)``, ``(tmp, count)``, ``(count)``, ``()``."""
    tmp = next((a for a in args if isinstance(a, LocalTensor)), None)
    counts = [a for a in args if not isinstance(a, LocalTensor)]
    if len(args) > 2 or len(counts) > 1:
        raise TypeError("takes (dst, src[, sharedTmpBuffer][, calCount])")
    return tmp, int(counts[0]) if counts else src.size


# --- Erf (adv_api/math/erf.h): a rational approximation on the mask register ---------------------------------------
#: P and Q of erf(x) ~ x P(x^2) / Q(x^2) on [-3.92, 3.92] (asc-devkit erf_common_impl.h / erf_3510_impl.h @ 82b89a15)
_ERF_P = (0.29639384698e5, 0.50637915060e4, 0.13938061484e4, 0.10162808918e3, 0.75517016694e1, 0.053443748819)
_ERF_Q = (0.26267224157e5, 0.13243365831e5, 0.30231248150e4, 0.39856963806e3, 0.31212858877e2)
_ERF_CLIP = 3.92


def _erf_steps(out: LocalTensor, src: LocalTensor, x: LocalTensor, t1: LocalTensor, t2: LocalTensor,
               t3: LocalTensor) -> None:
    """ErfClip, ErfComputeP, ErfComputeQ and the Div of erf_common_impl.h on float tensors, each an isSetMask=false
    mask-form instruction (the count is the register's): ``src`` clipped into ``x`` (Q's partials overwrite it, as
    in the library), ``out`` = P / Q."""
    u, b = _URP(), _BRP()
    _mscalar("Mins", t1, src, _ERF_CLIP, 0, 1, u, False)
    _mscalar("Maxs", x, t1, -_ERF_CLIP, 0, 1, u, False)
    _mbin("Mul", t1, x, x, 0, 1, b, False)                          # t1 = x^2
    _mscalar("Muls", t2, t1, _ERF_P[5], 0, 1, u, False)
    for p in _ERF_P[4:0:-1]:                                         # Horner in x^2: + P4 .. + P1, each * x^2
        _mscalar("Adds", t3, t2, p, 0, 1, u, False)
        _mbin("Mul", t2, t1, t3, 0, 1, b, False)
    _mscalar("Adds", t3, t2, _ERF_P[0], 0, 1, u, False)
    _mbin("Mul", t2, x, t3, 0, 1, b, False)                         # t2 = x P(x^2)
    _mscalar("Adds", t3, t1, _ERF_Q[4], 0, 1, u, False)
    for q in _ERF_Q[3::-1]:                                          # Q(x^2), in x's buffer as the library does
        _mbin("Mul", x, t1, t3, 0, 1, b, False)
        _mscalar("Adds", t3, x, q, 0, 1, u, False)
    _mbin("Div", out, t2, t3, 0, 1, b, False)


def _erf32(x: np.ndarray) -> np.ndarray:
    """The same rational function in float32 registers (the 950's loop), every step rounded in float32."""
    f = FLOAT.type
    x = np.maximum(np.minimum(x, f(_ERF_CLIP)), f(-_ERF_CLIP))
    x2 = x * x
    p = x2 * f(_ERF_P[5])
    for c in _ERF_P[4:0:-1]:
        p = x2 * (p + f(c))
    p = x * (p + f(_ERF_P[0]))
    q = x2 + f(_ERF_Q[4])
    for c in _ERF_Q[3::-1]:
        q = x2 * q + f(c)
    return _DIV32(p, q)


def Erf(dst: LocalTensor, src: LocalTensor, *args: Any) -> None:
    """``Erf(dst, src[, sharedTmpBuffer][, calCount])`` (adv_api/math/erf.h): erf(x) ~ x P(x^2) / Q(x^2) with x
    clipped to [-3.92, 3.92], in float (half through a float copy).

    A2/A3, 310P (erf_common_impl.h): Counter mode over chunks of ``calSize`` elements -- the temporary buffer's
    elements of T / 3 (float) or / 8 (half: four float buffers), rounded down to a multiple of 32 -- each chunk
    ``[Cast half->float,] Mins, Maxs, Mul, Muls, (Adds, Mul) x4, Adds, Mul, Adds, (Mul, Adds) x4, Div [, Cast
    float->half, CAST_ROUND on A2/A3, CAST_NONE on 310P]``, every instruction a mask-form call with isSetMask=false
    (:mod:`.mask`). The mask register ends Normal, all ones. Ascend950 (erf_3510_impl.h, default PADE config --
    UNCONFIRMED that it is this P/Q): one float32 loop, no temporary buffer. Not on Atlas training (910A)."""
    tmp, count = _tmp_and_count(src, args)
    ctx = dst.ctx
    if ctx.soc.npu_arch == NpuArch.DAV_1001:
        sanitizer.check_api_dtype(ctx, "Erf", ctx.current_tile, dst.dtype, dtype_set(),
                                  "Erf exists on A2/A3, 310P, 950")
    if ctx.soc.npu_arch == NpuArch.DAV_3510:
        _vf_once("Erf", _erf32, dst, src, count)
        return
    _check_local("Erf", dst, src)
    dt = same_dtype("Erf", dst, src)
    check_dtype(ctx, "Erf", _tile_of(dst, src), dt)
    buf = (tmp if tmp is not None else _stack_buffer(ctx)).ReinterpretCast(dt)
    half = dt.itemsize == 2
    cal = buf.size // (8 if half else 3) // 32 * 32
    if cal == 0:
        raise ValueError(f"Erf: the temporary buffer ({buf.size * dt.itemsize} bytes) is too small: calSize == 0 "
                         f"(at least {(8 if half else 3) * 32 * dt.itemsize} bytes; the library asserts)")
    f = buf.ReinterpretCast(FLOAT)
    t1, t2, t3, t4 = f, f[cal], f[2 * cal], f[3 * cal]
    round_mode = RoundMode.CAST_ROUND if ctx.soc.npu_arch == NpuArch.DAV_2201 else RoundMode.CAST_NONE
    SetMaskCount()
    for off, n in _chunks(int(count), cal):
        SetVectorMask(0, n, dtype=dt, mode=MaskMode.COUNTER)
        if half:
            _mcast(t4, src[off], RoundMode.CAST_NONE, 0, 1, _URP(1, 1, 8, 4), False)
            _erf_steps(t1, t4, t4, t1, t2, t3)
            _mcast(dst[off], t1, round_mode, 0, 1, _URP(1, 1, 4, 8), False)
        else:
            _erf_steps(dst[off], src[off], dst[off], t1, t2, t3)
    SetMaskNorm()
    ResetMask()


NAMESPACE: dict[str, Any] = {"Erf": Erf, "Log": Log, "Sigmoid": Sigmoid, "Tanh": Tanh}
