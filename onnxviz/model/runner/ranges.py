"""What values a generated integer input may take so the model can run on it.

Token ids index an embedding table (a Gather), token type ids a table of two rows, masks
are 0 or 1: random values 0-9 fail in the first Gather. :func:`integer_limits` follows each
integer graph input through shape and type changes (Cast, Unsqueeze, Reshape, ...) to what
reads its values, and gives the exclusive upper bound its values must stay below.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping

import onnx

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


def integer_limits(model: onnx.ModelProto, names: Iterable[str]) -> dict[str, int]:
    """Graph input name -> exclusive upper bound of its values, for the ``names`` that have one."""
    graph = model.graph
    readers: dict[str, list[tuple[onnx.NodeProto, int]]] = defaultdict(list)
    producers: dict[str, onnx.NodeProto] = {}
    for node in graph.node:
        for k, value in enumerate(node.input):
            if value:
                readers[value].append((node, k))
        for value in node.output:
            producers[value] = node
    shapes = _known_shapes(graph)
    limits = {}
    for name in names:
        found = _limit(name, readers, producers, shapes)
        if _MASK_WORD in name.lower():
            found = min(found or TRUTH_LIMIT, TRUTH_LIMIT)
        if found:
            limits[name] = found
    return limits


def _limit(start: str, readers: Mapping[str, list[tuple[onnx.NodeProto, int]]],
           producers: Mapping[str, onnx.NodeProto], shapes: Mapping[str, tuple[int, ...]]) -> int:
    """The smallest bound over every reader of ``start``'s values (0 when none bounds them)."""
    bounds: list[int] = []
    seen = {start}
    todo = [start]
    while todo:
        for node, k in readers.get(todo.pop(), ()):
            op = node.op_type
            if (op, k) in _TRUTHS or (op, None) in _TRUTHS:
                bounds.append(TRUTH_LIMIT)
            index = _INDEXES.get((op, k))
            if index is not None:
                bounds.append(_table_size(node, *index, producers, shapes))
            if (op, k) in _CARRIERS or (op, None) in _CARRIERS:
                fresh = [v for v in node.output if v and v not in seen]
                seen.update(fresh)
                todo += fresh
    return min((b for b in bounds if b > 0), default=0)


def _table_size(node: onnx.NodeProto, position: int, default_axis: int,
                producers: Mapping[str, onnx.NodeProto], shapes: Mapping[str, tuple[int, ...]]) -> int:
    """Size of the indexed axis of the node's table (0 when it is not known)."""
    if position >= len(node.input):
        return 0
    shape = _table_shape(node.input[position], producers, shapes)
    if not shape:
        return 0
    axis = next((a.i for a in node.attribute if a.name == "axis"), default_axis)
    return shape[axis % len(shape)] if -len(shape) <= axis < len(shape) else 0


def _table_shape(value: str, producers: Mapping[str, onnx.NodeProto],
                 shapes: Mapping[str, tuple[int, ...]]) -> tuple[int, ...]:
    for _ in range(8):  # a few dequantize/cast steps back, never a long walk
        if value in shapes:
            return shapes[value]
        node = producers.get(value)
        if node is None or node.op_type not in _SAME_TABLE or not node.input:
            return ()
        value = node.input[0]
    return ()


def _known_shapes(graph: onnx.GraphProto) -> dict[str, tuple[int, ...]]:
    """Static shapes of initializers, Constant nodes and declared values."""
    shapes: dict[str, tuple[int, ...]] = {}
    for v in (*graph.value_info, *graph.input):
        dims = v.type.tensor_type.shape.dim if v.type.HasField("tensor_type") else ()
        if dims and all(d.HasField("dim_value") and d.dim_value > 0 for d in dims):
            shapes[v.name] = tuple(d.dim_value for d in dims)
    for node in graph.node:
        if node.op_type == "Constant" and node.output:
            tensor = next((a.t for a in node.attribute if a.name == "value"), None)
            if tensor is not None:
                shapes[node.output[0]] = tuple(tensor.dims)
    for sparse in graph.sparse_initializer:
        shapes[sparse.values.name] = tuple(sparse.dims)
    for tensor in graph.initializer:
        shapes[tensor.name] = tuple(tensor.dims)
    return shapes
