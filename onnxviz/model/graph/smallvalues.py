"""The values of small constants (``B = 16000``, ``y_scale = 0.03922``, ``[1, 3, 224]``), shown beside the
inputs that read them: on a node's box and in the Node panel.

Only tensors of at most :data:`SMALL_ELEMENTS` elements whose data is inline are read: an initializer or
a ``Constant`` node's value. External data and bigger tensors are never touched for this.
"""

from __future__ import annotations

import math

import numpy as np
from onnx import NodeProto, TensorProto

from onnxviz.model.graph.index import INITIALIZER, GraphIndex
from onnxviz.model.graph.tensors import tensor_array
from onnxviz.model.text import array_values_text, display_name

SMALL_ELEMENTS = 6


# raw_data of these types is read directly (a 123k-node model has 33k small constants to show)
_RAW_TYPES: dict[int, np.dtype] = {TensorProto.FLOAT: np.dtype(np.float32), TensorProto.INT64: np.dtype(np.int64),
              TensorProto.INT32: np.dtype(np.int32), TensorProto.DOUBLE: np.dtype(np.float64),
              TensorProto.FLOAT16: np.dtype(np.float16), TensorProto.UINT8: np.dtype(np.uint8),
              TensorProto.INT8: np.dtype(np.int8), TensorProto.BOOL: np.dtype(np.bool_)}


def small_tensor_array(tensor: TensorProto) -> np.ndarray | None:
    """The values of ``tensor`` if it has at most :data:`SMALL_ELEMENTS` elements held inline; else None
    (also for a tensor whose data is broken: it is only not shown)."""
    dims = list(tensor.dims)
    if tensor.data_location == TensorProto.EXTERNAL or min(dims, default=0) < 0:
        return None
    numel = math.prod(dims)
    if numel > SMALL_ELEMENTS:
        return None
    dtype = _RAW_TYPES.get(tensor.data_type)
    raw = tensor.raw_data
    if dtype is not None and len(raw) == numel * dtype.itemsize:
        return np.frombuffer(raw, dtype).reshape(dims)
    try:
        return tensor_array(tensor)
    except Exception:  # noqa: BLE001 - a malformed value is shown by its shape only
        return None


_SCALAR_FIELDS = {"value_float": ("f", np.float32), "value_int": ("i", np.int64), "value_string": ("s", object)}
_LIST_FIELDS = {"value_floats": ("floats", np.float32), "value_ints": ("ints", np.int64),
                "value_strings": ("strings", object)}


def constant_node_array(node: NodeProto) -> np.ndarray | None:
    """The value of a standard ``Constant`` node if it is small (see :func:`small_tensor_array`)."""
    if node.op_type != "Constant" or node.domain not in ("", "ai.onnx") or len(node.attribute) != 1:
        return None
    attr = node.attribute[0]
    if attr.ref_attr_name:  # a function's attribute: the value is the caller's (see SmallValues.text)
        return None
    if attr.name == "value":
        return small_tensor_array(attr.t)
    if attr.name in _SCALAR_FIELDS:
        field, dtype = _SCALAR_FIELDS[attr.name]
        return np.array(getattr(attr, field), dtype)
    if attr.name in _LIST_FIELDS:
        field, dtype = _LIST_FIELDS[attr.name]
        items = getattr(attr, field)
        return np.array(list(items), dtype) if len(items) <= SMALL_ELEMENTS else None
    return None


class SmallValues:
    """Small constant values as seen from one graph (its own initializers and Constant nodes, then its
    enclosing graphs'); the initializers' positions are indexed on first use, and the text of each
    distinct stored value is made once (exported models repeat the same few scalars thousands of times)."""

    def __init__(self, g: GraphIndex) -> None:
        self.g = g
        self._positions: dict[str, int] | None = None
        self._parent: SmallValues | None = None
        self._texts: dict[tuple[int, tuple[int, ...], bytes, bool], str | None] = {}

    def _source(self, name: str) -> TensorProto | NodeProto | None:
        """The initializer holding ``name``, the tensor of the Constant making it, or that Constant node."""
        g = self.g
        kind = g.producer.get(name)
        if kind is None:
            if g.parent is None:
                return None
            self._parent = self._parent or SmallValues(g.parent)
            return self._parent._source(name)
        if kind >= 0:
            node = g.nodes[kind]
            single = node.attribute[0] if len(node.attribute) == 1 else None
            plain = single is not None and single.name == "value" and not single.ref_attr_name
            return single.t if plain and single is not None and node.op_type == "Constant" else node
        if kind != INITIALIZER or g.graph is None:
            return None
        if self._positions is None:
            self._positions = {n: k for k, n in enumerate(g.initializer_names)}
        k = self._positions.get(name)
        return g.graph.initializer[k] if k is not None else None

    def array(self, name: str) -> np.ndarray | None:
        source = self._source(name)
        if source is None:
            return None
        return small_tensor_array(source) if isinstance(source, TensorProto) else constant_node_array(source)

    def text(self, name: str, short: bool = True) -> str | None:
        """``16000``, ``[1, 3, 224]``, ``'tag'`` (``short``: floats cut to a few digits, for a box); None
        if ``name`` is no small constant."""
        source = self._source(name)
        if source is None:
            return None
        if not isinstance(source, TensorProto):
            reference = source.attribute[0].ref_attr_name if len(source.attribute) == 1 else ""
            if reference and source.op_type == "Constant":
                return f"{display_name(reference, 40)} (ref)"
            array = constant_node_array(source)
            return None if array is None else array_values_text(array, short)
        raw = source.raw_data
        key = (source.data_type, tuple(source.dims), raw, short)
        if len(raw) > SMALL_ELEMENTS * 8 or not raw or source.data_location == TensorProto.EXTERNAL:
            array = small_tensor_array(source)
            return None if array is None else array_values_text(array, short)
        if key not in self._texts:
            array = small_tensor_array(source)
            self._texts[key] = None if array is None else array_values_text(array, short)
        return self._texts[key]
