"""``aclTensor`` and ``aclScalar``: what aclnn APIs take instead of raw pointers.

An aclTensor is a *view* (view dims, strides in elements, storage offset in elements) over a *storage*
(storage dims) that lives in device memory at ``data``. That is why an aclnn API can accept a
non-contiguous tensor: the L0 ``Contiguous`` node reads the view, ``ViewCopy`` writes one.
``aclCreateTensor`` refuses (returns ``None``, C's nullptr) a view that reaches outside its storage or a
storage that reaches outside its allocation, and logs why.

A dtype the simulator cannot store -- an integer outside the ``aclDataType`` enum, or an enum member with no
numpy storage type (``ACL_STRING``, ``ACL_INT4``, ``ACL_UINT1``, ``ACL_COMPLEX32``, ``ACL_DT_UNDEFINED``) -- is
not a creation error: CANN's ``aclCreateTensor`` only records the ``dataType``, and it is the aclnn API that
refuses it. So ``aclCreateTensor`` returns a *descriptor-only* tensor (``storable`` is False; an integer
outside the enum is kept in ``dtype_value`` and shown as ``ACL_DT_UNDEFINED``); its bytes cannot be sized, so
no view of it is ever built (``numpy()`` raises, phase 2 refuses it). Given to an aclnn API it is refused like
any unsupported dtype: ``ACLNN_ERR_PARAM_INVALID`` (161002) from the dtype check, or -- for an ``out`` that
only has to pass ``CanCast`` (aclnnHardsigmoidBackward) -- ``ACLNN_ERR_INNER_NULLPTR`` (561103) when the L0
``Cast`` finds no kernel for it, as CANN's ``CHECK_RET(castOut != nullptr, ...)`` answers.

Memory safety: ``numpy()`` builds a view only over bytes of a live allocation, after checking the view
against its storage and the storage against the allocation *at that moment* (a tensor's attributes and its
memory can change after creation); ``memory_error()`` says what is wrong otherwise, and phase 2 uses it on
every tensor of the graph before anything runs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..base.log import OP_LOGE, OP_LOGW
from ..dtypes import as_acl_dtype, to_numpy
from .runtime import DevicePtr
from .types import aclDataType, aclFormat

__all__ = ["aclTensor", "aclScalar", "aclCreateTensor", "aclDestroyTensor", "aclCreateScalar", "aclDestroyScalar",
           "contiguous_strides"]


def _int_tuple(value: Any, what: str) -> tuple[int, ...]:
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)):
        raise TypeError(f"{what} must be a sequence of ints (e.g. (4, 2)), not {type(value).__name__}")
    out = []
    for v in value:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"{what} must contain only ints, found {v!r} ({type(v).__name__})")
        out.append(int(v))
    return tuple(out)


def contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """Row-major strides in elements, as the seed sample computes them."""
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = max(shape[i + 1], 1) * strides[i + 1]
    return tuple(strides)


class aclTensor:
    """A tensor descriptor over simulated device memory (see module docstring)."""

    def __init__(self, view_dims: tuple[int, ...], dtype: aclDataType, strides: tuple[int, ...],
                 offset: int, fmt: aclFormat, storage_dims: tuple[int, ...], data: DevicePtr | None,
                 *, name: str = ""):
        self.view_dims = view_dims
        self.dtype = dtype
        self.strides = strides
        self.offset = offset
        self.format = fmt
        self.storage_dims = storage_dims
        self.data = data
        self.name = name
        self.destroyed = False
        self.dtype_value = int(dtype)       # the dataType as given (differs from dtype outside the enum)

    # C++-style accessors (aclTensor methods used inside op_api code)
    def GetViewShape(self) -> tuple[int, ...]:
        return self.view_dims

    def GetStorageShape(self) -> tuple[int, ...]:
        return self.storage_dims

    def GetViewStrides(self) -> tuple[int, ...]:
        return self.strides

    def GetViewOffset(self) -> int:
        return self.offset

    def GetDataType(self) -> aclDataType:
        return self.dtype

    def GetStorageFormat(self) -> aclFormat:
        return self.format

    def GetViewFormat(self) -> aclFormat:
        return self.format

    def Size(self) -> int:
        return math.prod(self.view_dims)

    def IsEmpty(self) -> bool:
        return any(d == 0 for d in self.view_dims)

    def IsContiguous(self) -> bool:
        """Strides are row-major for the view dims (dims of size 1 may have any stride)."""
        expected = contiguous_strides(self.view_dims)
        return all(d == 1 or s == e for d, s, e in zip(self.view_dims, self.strides, expected, strict=True))

    @property
    def shape(self) -> tuple[int, ...]:
        return self.view_dims

    @property
    def ndim(self) -> int:
        return len(self.view_dims)

    @property
    def itemsize(self) -> int:
        return to_numpy(self.dtype).itemsize

    @property
    def storable(self) -> bool:
        """Whether the simulator has a storage type for this dtype (module docstring)."""
        return _itemsize(self.dtype) is not None

    def memory_error(self) -> str | None:
        """Why this tensor's elements cannot be accessed right now, or None when they can: the view must
        lie inside the storage and the storage inside a live allocation (checked on the current attributes
        and allocation state, not those at creation)."""
        if self.destroyed:
            return "was destroyed by aclDestroyTensor"
        item = _itemsize(self.dtype)
        if item is None:
            return f"has dtype {_dtype_text(self)}, which has no storage size"
        view, strides, storage = self.view_dims, self.strides, self.storage_dims
        if len(strides) != len(view) or self.offset < 0 or any(d < 0 for d in (*view, *storage)) \
                or any(st < 0 for st in strides):
            return (f"has an inconsistent description (view {list(view)}, strides {list(strides)}, "
                    f"offset {self.offset}, storage {list(storage)})")
        storage_elems = math.prod(storage)
        if math.prod(view) > 0:
            last = self.offset + sum((d - 1) * st for d, st in zip(view, strides, strict=True))
            if last >= storage_elems:
                return f"has a view reaching element {last}, outside its storage of {storage_elems} elements"
        if storage_elems == 0:
            return None
        data = self.data
        if not isinstance(data, DevicePtr):
            return "has no device memory (tensorData is nullptr)"
        alloc = data.allocation
        if alloc.freed or alloc.released:            # (not ``buffer``: that would take back lent bytes)
            return (f"points into device memory released by {alloc.freed_by or 'aclrtFree'} "
                    f"({data!r})")
        nbytes = storage_elems * item
        if data.offset < 0 or nbytes > data.available or data.offset + nbytes > alloc.backing_bytes:
            return (f"has a storage of {nbytes} B that does not fit in its allocation at {data!r} "
                    f"({data.available} B left)")
        return None

    def numpy(self) -> np.ndarray:
        """A numpy *view* of this tensor's elements in device memory (writes go to the device).

        Raises ``ValueError`` (saying why) instead of building a view that would reach past the bytes of a
        live allocation -- after aclrtFree, aclDestroyTensor, or an attribute changed since creation."""
        if not self.storable:
            raise ValueError(f"tensor {self.name or ''}{_dtype_text(self)} has no numpy storage type")
        np_dtype = to_numpy(self.dtype)
        if self.IsEmpty():
            return np.zeros(self.view_dims, dtype=np_dtype)
        problem = self.memory_error()
        if problem is not None:
            raise ValueError(f"tensor {self.name or repr(self)} {problem}")
        item = np_dtype.itemsize
        raw = self.data.bytes(math.prod(self.storage_dims) * item).view(np_dtype)   # exactly the storage
        view = np.lib.stride_tricks.as_strided(
            raw[self.offset:], shape=self.view_dims, strides=tuple(s * item for s in self.strides),
            writeable=True)
        return view

    def __repr__(self) -> str:
        label = f" {self.name}" if self.name else ""
        return (f"aclTensor{label}(view={list(self.view_dims)}, {_dtype_text(self)}, "
                f"strides={list(self.strides)}, offset={self.offset}, storage={list(self.storage_dims)})")


def _itemsize(dtype: aclDataType) -> int | None:
    try:
        return to_numpy(dtype).itemsize
    except ValueError:
        return None


def _dtype_text(t: aclTensor) -> str:
    if t.dtype_value != int(t.dtype):
        return f"{t.dtype.name} (dataType {t.dtype_value})"
    return t.dtype.name


def _as_tensor_dtype(data_type: Any) -> tuple[aclDataType, int]:
    """(dtype, the int the caller gave): an int outside the enum is ACL_DT_UNDEFINED (module docstring)."""
    if isinstance(data_type, (int, np.integer)) and not isinstance(data_type, (bool, aclDataType)):
        value = int(data_type)
        try:
            return aclDataType(value), value
        except ValueError:
            OP_LOGW("aclCreateTensor", f"dataType {value} is not an aclDataType value: the tensor is created "
                                       "with ACL_DT_UNDEFINED and an aclnn API will refuse it")
            return aclDataType.ACL_DT_UNDEFINED, value
    dtype = as_acl_dtype(data_type)
    return dtype, int(dtype)


def aclCreateTensor(view_dims: Sequence[int], data_type: Any, stride: Sequence[int] | None, offset: int,
                    fmt: Any, storage_dims: Sequence[int], data: DevicePtr | None) -> aclTensor | None:
    """``aclCreateTensor(viewDims, dataType, stride, offset, format, storageDims, tensorData)``.

    Returns ``None`` (nullptr) and logs the reason when the description is inconsistent or ``format`` is an int
    that is no aclFormat. A dtype the
    simulator cannot store (e.g. an int outside the enum) still gives a tensor, as in CANN: the aclnn API
    refuses it with ACLNN_ERR_PARAM_INVALID (module docstring).
    """
    api = "aclCreateTensor"
    view = _int_tuple(view_dims, "view_dims")
    storage = _int_tuple(storage_dims, "storage_dims")
    strides = contiguous_strides(view) if stride is None else _int_tuple(stride, "stride")
    if len(strides) != len(view):
        raise ValueError(f"stride has {len(strides)} entries but view_dims has {len(view)}; "
                         "give one stride per view dim")
    if isinstance(offset, bool) or not isinstance(offset, (int, np.integer)):
        raise TypeError(f"offset must be an int (elements), not {type(offset).__name__}")
    dtype, dtype_value = _as_tensor_dtype(data_type)
    if isinstance(fmt, bool) or not isinstance(fmt, (int, np.integer)):
        raise TypeError(f"format must be an aclFormat (an int such as acl.ACL_FORMAT_ND), not {type(fmt).__name__}")
    try:
        fmt = aclFormat(int(fmt))
    except ValueError:              # an int C can pass but no aclFormat: nullptr and a log line, like a bad dim
        OP_LOGE(api, f"format {fmt} is not an aclFormat; use ACL_FORMAT_ND ({int(aclFormat.ACL_FORMAT_ND)}) for "
                     "these operators")
        return None
    if data is not None and not isinstance(data, DevicePtr):
        raise TypeError(f"data must be a DevicePtr from aclrtMalloc or None, not {type(data).__name__}")
    if any(d < 0 for d in view) or any(d < 0 for d in storage):
        OP_LOGE(api, f"dims must be >= 0: view {list(view)}, storage {list(storage)}")
        return None
    if offset < 0 or any(s < 0 for s in strides):
        OP_LOGE(api, f"offset ({offset}) and strides {list(strides)} must be >= 0")
        return None
    itemsize = _itemsize(dtype)
    storage_elems = math.prod(storage)
    if math.prod(view) > 0:
        last = offset + sum((d - 1) * s for d, s in zip(view, strides, strict=True))
        if last >= storage_elems:
            OP_LOGE(api, f"the view (dims {list(view)}, strides {list(strides)}, offset {offset}) reaches "
                         f"element {last}, outside its storage of {storage_elems} elements")
            return None
    if storage_elems > 0:
        if data is None:
            OP_LOGE(api, "a non-empty storage needs device data (tensorData is nullptr)")
            return None
        if data.allocation.freed:
            OP_LOGE(api, f"tensorData {data!r} points into freed memory")
            return None
        if data.offset < 0:
            OP_LOGE(api, f"tensorData {data!r} points {-data.offset} B before the start of its allocation")
            return None
        if itemsize is not None and storage_elems * itemsize > data.available:
            OP_LOGE(api, f"storage of {storage_elems * itemsize} B does not fit in the {data.available} B "
                         f"left in its allocation at {data!r}")
            return None
    t = aclTensor(view, dtype, strides, int(offset), fmt, storage, data)
    t.dtype_value = dtype_value
    return t


def aclDestroyTensor(tensor: aclTensor | None) -> int:
    """Destroy the descriptor (not the device memory); an aclnn call given it afterwards returns 161002."""
    if tensor is None:
        return 0
    if not isinstance(tensor, aclTensor):
        raise TypeError(f"expected an aclTensor, got {type(tensor).__name__}")
    tensor.destroyed = True
    return 0


class aclScalar:
    """A host scalar with a dtype (``aclCreateScalar(&value, dtype)``)."""

    def __init__(self, value: Any, dtype: aclDataType):
        self.dtype = dtype
        self.value = to_numpy(dtype).type(value)
        self.destroyed = False

    def GetDataType(self) -> aclDataType:
        return self.dtype

    def ToFloat(self) -> np.float32:
        with np.errstate(over="ignore"):    # a double beyond FLT_MAX becomes +-inf, as the C cast does
            return np.float32(self.value)

    def ToDouble(self) -> float:
        return float(self.value)

    def ToInt64(self) -> int:
        return int(self.value)

    def __repr__(self) -> str:
        return f"aclScalar({self.value!r}, {self.dtype.name})"


def aclCreateScalar(value: Any, data_type: Any) -> aclScalar | None:
    """``aclCreateScalar(&value, dataType)``; in Python the value is passed directly."""
    dtype = as_acl_dtype(data_type)
    if isinstance(value, (np.ndarray, list, tuple)):
        raise TypeError("aclCreateScalar takes one number, not an array")
    try:
        with np.errstate(all="ignore"):
            return aclScalar(value, dtype)
    except (TypeError, ValueError, OverflowError) as exc:
        OP_LOGE("aclCreateScalar", f"cannot store {value!r} as {dtype.name}: {exc}")
        return None


def aclDestroyScalar(scalar: aclScalar | None) -> int:
    """Destroy a scalar made by aclCreateScalar."""
    if scalar is not None:
        scalar.destroyed = True
    return 0
