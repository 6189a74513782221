"""Which element types the first vector instructions take on each architecture: ``Add``/``Mul``/``Max``/``Min``,
``Adds``/``Muls``/``Maxs``/``Mins`` and ``Duplicate`` (the lists of :mod:`.instructions_math` cover the rest).

Each list is the ``SupportType<T, ...>`` static_assert / ASCENDC_ASSERT of the instruction's count form in asc-devkit
``impl/basic_api/dav_{c220,m200,3510}/kernel_operator_vec_{binary,binary_continuous,binary_scalar,duplicate}_impl.h``
@ 82b89a15; complex, 8-bit float and 4-bit types of the 950 are left out (the simulator has no such dtypes). Atlas
training (910A, ``dav_c100``) asserts no type in these files: the 310P lists stand for it, as in
:mod:`.instructions_math`. A type outside the list is an ``unsupported-on-soc`` finding naming the instruction, the
core and the tile, with the list (:func:`.sanitizer.check_api_dtype`); kernels that are not AscendC (TBE, atvoss's
``cce``) are not checked.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..base.platform import NpuArch
from ..dtypes import bfloat16
from . import sanitizer

__all__ = ["ARITH_DTYPES", "check_arith"]

_H, _F, _BF = np.dtype(np.float16), np.dtype(np.float32), np.dtype(bfloat16)
_I8, _U8, _I16, _U16, _I32, _U32, _I64, _U64 = (np.dtype(t) for t in (
    np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64))
_BOOL = np.dtype(np.bool_)

_FOUR = frozenset({_H, _F, _I16, _I32})
#: A2/A3 (dav_c220): binary and binary-scalar {half, float, int16, int32}; Duplicate adds bfloat16 and the unsigned.
_A2 = {**dict.fromkeys(("Add", "Mul", "Max", "Min", "Adds", "Muls", "Maxs", "Mins"), _FOUR),
       "Duplicate": frozenset({_H, _BF, _I16, _U16, _I32, _U32, _F})}
#: 310P (dav_m200): as A2/A3, Duplicate without bfloat16.
_310P = {**_A2, "Duplicate": frozenset({_H, _I16, _U16, _I32, _U32, _F})}
_MAXMIN_950 = frozenset({_U8, _I8, _H, _U16, _I16, _BF, _U32, _I32, _F, _I64, _U64})
_SCALAR_950 = frozenset({_U8, _I8, _H, _BF, _F, _I16, _I32, _I64, _U64})
#: Ascend950 (dav_3510, the count forms: kernel_operator_vec_binary_continuous_impl.h and binary_scalar_impl.h).
_950 = {"Add": _MAXMIN_950, "Max": _MAXMIN_950, "Min": _MAXMIN_950,
        "Mul": frozenset({_H, _U16, _I16, _BF, _U32, _I32, _F, _I64, _U64}),
        "Adds": _SCALAR_950, "Maxs": _SCALAR_950, "Mins": _SCALAR_950,
        "Muls": frozenset({_H, _BF, _F, _I16, _I32, _I64, _U64}),
        "Duplicate": frozenset({_BOOL, _I8, _U8, _H, _BF, _I16, _U16, _I32, _U32, _F, _I64, _U64})}

#: Element types each instruction's count form takes, by architecture.
ARITH_DTYPES: dict[NpuArch, dict[str, frozenset[Any]]] = {
    NpuArch.DAV_1001: _310P, NpuArch.DAV_2002: _310P, NpuArch.DAV_2201: _A2, NpuArch.DAV_3002: _A2,
    NpuArch.DAV_3510: _950,
}


def check_arith(ctx: Any, api: str, tile: int | None, dtype: np.dtype) -> None:
    """Refuse ``dtype`` if ``api`` does not take it on this core's architecture (once per core, API and type)."""
    key = ("arith", api, dtype)
    if key in ctx.api_checked:
        return
    table = ARITH_DTYPES.get(ctx.soc.npu_arch, _A2)
    sanitizer.check_api_dtype(ctx, api, ctx.current_tile if tile is None else tile, dtype, table[api])
    ctx.api_checked.add(key)
