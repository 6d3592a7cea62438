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
from onnxviz.model.text import array_values_text

SMALL_ELEMENTS = 6


def small_tensor_array(tensor: TensorProto) -> np.ndarray | None:
    """The values of ``tensor`` if it has at most :data:`SMALL_ELEMENTS` elements held inline; else None
    (also for a tensor whose data is broken: it is only not shown)."""
    dims = tensor.dims
    if tensor.data_location == TensorProto.EXTERNAL or any(d < 0 for d in dims) or math.prod(dims) > SMALL_ELEMENTS:
        return None
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
    enclosing graphs'); the initializers' positions are indexed on first use."""

    def __init__(self, g: GraphIndex) -> None:
        self.g = g
        self._positions: dict[str, int] | None = None
        self._parent: SmallValues | None = None

    def array(self, name: str) -> np.ndarray | None:
        g = self.g
        kind = g.producer.get(name)
        if kind is None:
            if g.parent is None:
                return None
            self._parent = self._parent or SmallValues(g.parent)
            return self._parent.array(name)
        if kind >= 0:
            return constant_node_array(g.nodes[kind])
        if kind != INITIALIZER or g.graph is None:
            return None
        if self._positions is None:
            self._positions = {n: k for k, n in enumerate(g.initializer_names)}
        k = self._positions.get(name)
        return small_tensor_array(g.graph.initializer[k]) if k is not None else None

    def text(self, name: str, short: bool = True) -> str | None:
        """``16000``, ``[1, 3, 224]``, ``'tag'`` (``short``: floats cut to a few digits, for a box); None
        if ``name`` is no small constant."""
        array = self.array(name)
        return None if array is None else array_values_text(array, short)
