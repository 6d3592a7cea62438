"""Bytes an element of an ONNX data type takes in a tensor's raw_data: what a tensor's dims and type say its raw_data
holds (the checks' fast path, a streamed save's sizes, parameter bytes), and which types are packed below a byte."""

from __future__ import annotations

import onnx
from onnx import TensorProto

# bits per element of the types packed several to a byte (or to three): no whole number of bytes per element
SUB_BYTE_BITS = {getattr(TensorProto, name): bits for name, bits in (
    ("INT4", 4), ("UINT4", 4), ("FLOAT4E2M1", 4), ("INT2", 2), ("UINT2", 2), ("FLOAT6E2M3", 6), ("FLOAT6E3M2", 6))
    if hasattr(TensorProto, name)}
SUB_BYTE_TYPES = frozenset(SUB_BYTE_BITS)


def _whole_item_bytes(data_type: int) -> int:
    """numpy's item size of the type; 0 for strings, sub-byte and unknown types."""
    if data_type in SUB_BYTE_TYPES or data_type in (TensorProto.UNDEFINED, TensorProto.STRING):
        return 0
    try:
        return int(onnx.helper.tensor_dtype_to_np_dtype(data_type).itemsize)
    except Exception:  # noqa: BLE001 - a type numpy cannot represent
        return 0


WHOLE_ITEM_BYTES = {t: n for t in TensorProto.DataType.values() if (n := _whole_item_bytes(t))}


def item_bytes(data_type: int) -> float:
    """Bytes an element takes in raw_data, packed sub-byte types as a fraction (INT4: 0.5); 0 for strings and
    unknown types."""
    bits = SUB_BYTE_BITS.get(data_type)
    return bits / 8 if bits is not None else WHOLE_ITEM_BYTES.get(data_type, 0)


def item_bits(data_type: int) -> int:
    """Bits an element takes in raw_data (INT4: 4); 0 for strings and unknown types. Whole numbers: a size
    in bytes is ``count * bits // 8``, exact for any count (a float overflows past 1e308 elements)."""
    return SUB_BYTE_BITS.get(data_type) or 8 * WHOLE_ITEM_BYTES.get(data_type, 0)
