"""Values to and from onnxruntime's OrtValue for the types its numpy conversion refuses.

onnxruntime's Python binding turns neither bfloat16, float8 e8m0 nor the 4- and 2-bit types into numpy (and
hands the other float8 types back as uint8), and takes none of ml_dtypes' arrays as input. Their bytes are copied as they are:
bfloat16 and float8 one byte pattern per element; the 4-bit types two elements a byte and the 2-bit
types four, the first in the lowest bits.
"""

from __future__ import annotations

import ctypes
import functools
from typing import Any

import numpy as np
from onnx import TensorProto

# ONNX element type -> bits per element, for the types stored several to a byte
_PACKED: dict[int, int] = {TensorProto.INT4: 4, TensorProto.UINT4: 4, TensorProto.FLOAT4E2M1: 4}
_PACKED.update({getattr(TensorProto, name): 2 for name in ("INT2", "UINT2") if hasattr(TensorProto, name)})
_SIGNED = frozenset({TensorProto.INT4, getattr(TensorProto, "INT2", TensorProto.INT4)})


@functools.cache
def _ml_types() -> dict[int, Any]:
    """ONNX element type -> its ml_dtypes numpy dtype, for the types onnxruntime's numpy does not have."""
    import ml_dtypes

    names = {TensorProto.BFLOAT16: "bfloat16", TensorProto.FLOAT8E4M3FN: "float8_e4m3fn",
             TensorProto.FLOAT8E4M3FNUZ: "float8_e4m3fnuz", TensorProto.FLOAT8E5M2: "float8_e5m2",
             TensorProto.FLOAT8E5M2FNUZ: "float8_e5m2fnuz", TensorProto.INT4: "int4", TensorProto.UINT4: "uint4",
             TensorProto.FLOAT4E2M1: "float4_e2m1fn", getattr(TensorProto, "FLOAT8E8M0", -1): "float8_e8m0fnu",
             getattr(TensorProto, "INT2", -1): "int2",
             getattr(TensorProto, "UINT2", -1): "uint2"}
    return {t: np.dtype(getattr(ml_dtypes, name)) for t, name in names.items() if t >= 0 and hasattr(ml_dtypes, name)}


def onnx_type_of(array: np.ndarray) -> int | None:
    """The ONNX element type of an ml_dtypes array onnxruntime cannot take from numpy (None for others)."""
    return next((t for t, dtype in _ml_types().items() if array.dtype == dtype), None)


def can_feed_as_ortvalue(value: Any) -> bool:
    """Whether ``value`` can become an OrtValue (a numeric or ml_dtypes array; not strings, sequences, maps)."""
    return isinstance(value, np.ndarray) and (value.dtype.kind in "biufc" or onnx_type_of(value) is not None)


def to_ortvalue(array: np.ndarray) -> Any:
    """``array`` as an OrtValue; ml_dtypes arrays keep their bytes and get their ONNX type. ValueError
    when this onnxruntime cannot make one of a packed type."""
    import onnxruntime as ort

    array = np.asarray(array, order="C")  # not ascontiguousarray: it makes a scalar 1-d
    elem = onnx_type_of(array)
    if elem is None:
        return ort.OrtValue.ortvalue_from_numpy(array)
    if elem in _PACKED:
        return _packed_ortvalue(array, elem)
    return ort.OrtValue.ortvalue_from_numpy_with_onnx_type(array.view(np.uint8 if array.itemsize == 1 else np.uint16),
                                                           elem)


def _packed_ortvalue(array: np.ndarray, elem: int) -> Any:
    """A 4- or 2-bit array as an OrtValue: one of its shape and type, its bytes written in place."""
    import onnxruntime as ort

    bits = _PACKED[elem]
    per_byte = 8 // bits
    codes = array.view(np.uint8).ravel() & ((1 << bits) - 1)
    codes = np.concatenate([codes, np.zeros(-codes.size % per_byte, np.uint8)]).reshape(-1, per_byte)
    packed = np.bitwise_or.reduce(codes << (np.arange(per_byte, dtype=np.uint8) * bits), axis=1).astype(np.uint8)
    try:
        c = ort.capi._pybind_state  # noqa: SLF001 - the typed constructor is not in the public wrapper
        device = c.OrtDevice(c.OrtDevice.cpu(), c.OrtDevice.default_memory(), 0)
        value = c.OrtValue.ortvalue_from_shape_and_onnx_type(list(array.shape), elem, device)
    except (AttributeError, TypeError, RuntimeError) as exc:
        raise ValueError(f"this onnxruntime cannot take {array.dtype} inputs") from exc
    if value.tensor_size_in_bytes() != packed.nbytes:
        raise ValueError(f"this onnxruntime stores {array.dtype} differently")
    ctypes.memmove(value.data_ptr(), packed.ctypes.data, packed.nbytes)
    return ort.OrtValue(value)


def ortvalue_array(value: Any) -> np.ndarray:
    """An OrtValue tensor as numpy: its own conversion, or its bytes viewed as the ml_dtypes type."""
    elem = value.element_type()
    target = _ml_types().get(elem)
    if target is None:
        return value.numpy()
    shape = tuple(int(d) for d in value.shape())
    raw = np.frombuffer(ctypes.string_at(value.data_ptr(), value.tensor_size_in_bytes()), np.uint8)
    if elem not in _PACKED:
        return raw.view(target).reshape(shape).copy()
    bits = _PACKED[elem]
    shifts = np.arange(8 // bits, dtype=np.uint8) * bits
    codes = ((raw[:, None] >> shifts) & ((1 << bits) - 1)).ravel()[: int(np.prod(shape, dtype=np.int64))]
    if elem in _SIGNED:  # two's complement in ``bits`` bits
        return (codes.astype(np.int8) - ((codes & (1 << (bits - 1))) << 1).astype(np.int8)).astype(target).reshape(shape)
    return codes.view(target).reshape(shape)
