"""Values to and from onnxruntime's OrtValue for the types its numpy conversion refuses.

onnxruntime's Python binding turns neither bfloat16 nor the 4-bit types into numpy (and hands float8 back
as uint8), and takes none of ml_dtypes' arrays as input. Their bytes are copied as they are: bfloat16 and
float8 one byte pattern per element, the 4-bit types two elements a byte (the low nibble first).
"""

from __future__ import annotations

import ctypes
import functools
from typing import Any

import numpy as np
from onnx import TensorProto


@functools.cache
def _ml_types() -> dict[int, Any]:
    """ONNX element type -> its ml_dtypes numpy dtype, for the types onnxruntime's numpy does not have."""
    import ml_dtypes

    return {TensorProto.BFLOAT16: ml_dtypes.bfloat16, TensorProto.FLOAT8E4M3FN: ml_dtypes.float8_e4m3fn,
            TensorProto.FLOAT8E4M3FNUZ: ml_dtypes.float8_e4m3fnuz, TensorProto.FLOAT8E5M2: ml_dtypes.float8_e5m2,
            TensorProto.FLOAT8E5M2FNUZ: ml_dtypes.float8_e5m2fnuz, TensorProto.INT4: ml_dtypes.int4,
            TensorProto.UINT4: ml_dtypes.uint4, TensorProto.FLOAT4E2M1: ml_dtypes.float4_e2m1fn}


_FOUR_BITS = frozenset({TensorProto.INT4, TensorProto.UINT4, TensorProto.FLOAT4E2M1})


def onnx_type_of(array: np.ndarray) -> int | None:
    """The ONNX element type of an ml_dtypes array onnxruntime cannot take from numpy (None for others)."""
    return next((t for t, dtype in _ml_types().items() if array.dtype == dtype), None)


def can_feed_as_ortvalue(value: Any) -> bool:
    """Whether ``value`` can become an OrtValue (a numeric or ml_dtypes array; not strings, sequences, maps)."""
    return isinstance(value, np.ndarray) and (value.dtype.kind in "biufc" or onnx_type_of(value) is not None)


def to_ortvalue(array: np.ndarray) -> Any:
    """``array`` as an OrtValue; ml_dtypes arrays keep their bytes and get their ONNX type."""
    import onnxruntime as ort

    array = np.asarray(array, order="C")  # not ascontiguousarray: it makes a scalar 1-d
    elem = onnx_type_of(array)
    if elem is None:
        return ort.OrtValue.ortvalue_from_numpy(array)
    if elem in _FOUR_BITS:
        raise ValueError("4-bit inputs are fed through run()")
    return ort.OrtValue.ortvalue_from_numpy_with_onnx_type(array.view(np.uint8 if array.itemsize == 1 else np.uint16),
                                                           elem)


def ortvalue_array(value: Any) -> np.ndarray:
    """An OrtValue tensor as numpy: its own conversion, or its bytes viewed as the ml_dtypes type."""
    target = _ml_types().get(value.element_type())
    if target is None:
        return value.numpy()
    shape = tuple(int(d) for d in value.shape())
    raw = np.frombuffer(ctypes.string_at(value.data_ptr(), value.tensor_size_in_bytes()), np.uint8)
    if value.element_type() not in _FOUR_BITS:
        return raw.view(target).reshape(shape).copy()
    count = int(np.prod(shape, dtype=np.int64))
    nibbles = np.empty(raw.size * 2, np.uint8)
    nibbles[0::2], nibbles[1::2] = raw & 0x0F, raw >> 4
    nibbles = nibbles[:count]
    if value.element_type() == TensorProto.INT4:
        return (nibbles.astype(np.int8) - ((nibbles & 0x8) << 1).astype(np.int8)).astype(target).reshape(shape)
    return nibbles.view(target).reshape(shape)
