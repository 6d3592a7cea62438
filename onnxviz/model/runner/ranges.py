"""What values a generated integer input may take so the model can run on it.

Token ids index an embedding table (a Gather), token type ids a table of two rows, masks
are 0 or 1: random values 0-9 fail in the first Gather. :func:`integer_limits` follows each
integer graph input through shape and type changes (Cast, Unsqueeze, Reshape, ...) to what
reads its values, and gives the exclusive upper bound its values must stay below.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from functools import cached_property
from typing import TYPE_CHECKING

import onnx

if TYPE_CHECKING:
    from onnxviz.model.graph.index import GraphIndex

# (op type, input position) whose output holds the input's values, reshaped or cast; None: any position
_CARRIERS = {("Cast", 0), ("CastLike", 0), ("Unsqueeze", 0), ("Squeeze", 0), ("Reshape", 0), ("Flatten", 0),
             ("Identity", 0), ("Expand", 0), ("Transpose", 0), ("Slice", 0), ("Tile", 0), ("Gather", 0),
             ("GatherElements", 0), ("GatherND", 0), ("Concat", None), ("Split", 0)}
# an input read as a truth value (a comparison, Where's condition, an attention mask): 0 or 1
_TRUTHS = {("Equal", None), ("Greater", None), ("Less", None), ("GreaterOrEqual", None), ("LessOrEqual", None),
           ("Not", 0), ("And", None), ("Or", None), ("Xor", None), ("Where", 0), ("Attention", 3),
           ("EmbedLayerNormalization", 7)}
# (op type, input position) -> (position of the table it indexes, axis attribute's default)
_INDEXES = {("Gather", 1): (0, 0), ("GatherElements", 1): (0, 0),
            ("EmbedLayerNormalization", 0): (2, 0),   # com.microsoft: word ids -> word embedding
            ("EmbedLayerNormalization", 1): (4, 0),   # segment (token type) ids -> segment embedding
            ("EmbedLayerNormalization", 8): (3, 0)}   # position ids -> position embedding
# a table read through these is the same table (a quantized embedding is dequantized, then gathered)
_SAME_TABLE = {"DequantizeLinear", "Cast", "Identity", "QuantizeLinear"}
TRUTH_LIMIT = 2
_MASK_WORD = "mask"


class _Reads:
    """Who reads and who makes each value of the main graph: from the model's index when there is
    one (built already), else from one walk over the nodes."""

    def __init__(self, model: onnx.ModelProto, index: GraphIndex | None) -> None:
        self.graph = model.graph
        if index is not None:
            self.nodes, self.producer, self.consumers = index.nodes, index.producer, index.consumers
            self.declared: Mapping[str, onnx.TypeProto] = index.declared
            return
        self.nodes = self.graph.node
        self.producer, self.consumers = {}, defaultdict(list)
        for i, node in enumerate(self.nodes):
            for value in node.input:
                if value:
                    self.consumers[value].append(i)
            for value in node.output:
                if value:
                    self.producer[value] = i
        self.declared = {v.name: v.type for v in (*self.graph.value_info, *self.graph.input)}

    def readers(self, value: str) -> Iterator[tuple[onnx.NodeProto, int]]:
        """(node, input position) of every read of ``value``."""
        for i in dict.fromkeys(self.consumers.get(value, ())):  # a node reading it twice is listed twice
            node = self.nodes[i]
            for k, name in enumerate(node.input):
                if name == value:
                    yield node, k

    def made_by(self, value: str) -> onnx.NodeProto | None:
        i = self.producer.get(value, -1)
        return self.nodes[i] if i >= 0 else None

    @cached_property
    def initializers(self) -> dict[str, onnx.TensorProto | onnx.SparseTensorProto]:
        found: dict[str, onnx.TensorProto | onnx.SparseTensorProto] = {
            t.values.name: t for t in self.graph.sparse_initializer}
        found.update((t.name, t) for t in self.graph.initializer)
        return found


def integer_limits(model: onnx.ModelProto, names: Iterable[str], index: GraphIndex | None = None) -> dict[str, int]:
    """Graph input name -> exclusive upper bound of its values, for the ``names`` that have one.
    ``index``: the main graph's index, when the model has one (saves a walk over every node)."""
    reads = _Reads(model, index)
    limits = {}
    for name in names:
        found = _limit(name, reads)
        if _MASK_WORD in name.lower():
            found = min(found or TRUTH_LIMIT, TRUTH_LIMIT)
        if found:
            limits[name] = found
    return limits


def _limit(start: str, reads: _Reads) -> int:
    """The smallest bound over every reader of ``start``'s values (0 when none bounds them)."""
    bounds: list[int] = []
    seen = {start}
    todo = [start]
    while todo:
        for node, k in reads.readers(todo.pop()):
            op = node.op_type
            if (op, k) in _TRUTHS or (op, None) in _TRUTHS:
                bounds.append(TRUTH_LIMIT)
            index = _INDEXES.get((op, k))
            if index is not None:
                bounds.append(_table_size(node, *index, reads))
            if (op, k) in _CARRIERS or (op, None) in _CARRIERS:
                fresh = [v for v in node.output if v and v not in seen]
                seen.update(fresh)
                todo += fresh
    return min((b for b in bounds if b > 0), default=0)


def _table_size(node: onnx.NodeProto, position: int, default_axis: int, reads: _Reads) -> int:
    """Size of the indexed axis of the node's table (0 when it is not known)."""
    if position >= len(node.input):
        return 0
    shape = _table_shape(node.input[position], reads)
    if not shape:
        return 0
    axis = next((a.i for a in node.attribute if a.name == "axis"), default_axis)
    return shape[axis % len(shape)] if -len(shape) <= axis < len(shape) else 0


def _table_shape(value: str, reads: _Reads) -> tuple[int, ...]:
    """The static shape of an initializer, a Constant, or a declared value, looking back through
    dequantization and casts a few steps (never a long walk)."""
    for _ in range(8):
        tensor = reads.initializers.get(value)
        if tensor is not None:
            return tuple(tensor.dims)
        declared = _declared_shape(reads.declared.get(value))
        if declared:
            return declared
        node = reads.made_by(value)
        if node is not None and node.op_type == "Constant":
            constant = next((a.t for a in node.attribute if a.name == "value"), None)
            return tuple(constant.dims) if constant is not None else ()
        if node is None or node.op_type not in _SAME_TABLE or not node.input:
            return ()
        value = node.input[0]
    return ()


def _declared_shape(t: onnx.TypeProto | None) -> tuple[int, ...]:
    dims = t.tensor_type.shape.dim if t is not None and t.HasField("tensor_type") else ()
    if dims and all(d.HasField("dim_value") and d.dim_value > 0 for d in dims):
        return tuple(d.dim_value for d in dims)
    return ()
