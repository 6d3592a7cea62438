"""Bytes an element of an ONNX data type takes in a tensor's raw_data, for the types where that is a whole number:
what a tensor's dims and type say its raw_data holds (the checks' fast path, a streamed save's sizes)."""

from __future__ import annotations

import onnx
from onnx import TensorProto

# packed several to a byte (or to three): their size is no whole number of bytes per element
SUB_BYTE_TYPES = frozenset(getattr(TensorProto, name) for name in (
    "INT4", "UINT4", "FLOAT4E2M1", "INT2", "UINT2", "FLOAT6E2M3", "FLOAT6E3M2") if hasattr(TensorProto, name))


def _whole_item_bytes(data_type: int) -> int:
    """numpy's item size of the type; 0 for strings, sub-byte and unknown types."""
    if data_type in SUB_BYTE_TYPES or data_type in (TensorProto.UNDEFINED, TensorProto.STRING):
        return 0
    try:
        return int(onnx.helper.tensor_dtype_to_np_dtype(data_type).itemsize)
    except Exception:  # noqa: BLE001 - a type numpy cannot represent
        return 0


WHOLE_ITEM_BYTES = {t: n for t in TensorProto.DataType.values() if (n := _whole_item_bytes(t))}
