"""Declared shapes an edit made wrong: a node's outputs inferred again, alone, after its attributes change.

A graph output or value_info entry declaring the shape the node made before (``perm`` of a Transpose
changed, say) would make the saved model fail onnx's full check and confuse runtimes; the entries whose
declared shape now disagrees with what inference finds take the new shape (their element type kept).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import onnx
from onnx import GraphProto, NodeProto, OperatorSetIdProto, TensorProto, TypeProto

from onnxviz.model.editing.ops import Op, Path, ReplaceMessage

SMALL_INITIALIZER = 4096  # elements: initializers read as values (shapes, axes) go into the inference
TypeOf = Callable[[str], TypeProto | None]


def restated_output_ops(path: Path, graph: GraphProto, node: NodeProto, type_of: TypeOf,
                        opsets: Sequence[OperatorSetIdProto]) -> list[Op]:
    """Ops giving the declared types of ``node``'s outputs the shapes inference finds for ``node`` now."""
    inferred = node_output_types(graph, node, type_of, opsets)
    ops: list[Op] = []
    for field in ("output", "value_info"):
        for k, info in enumerate(getattr(graph, field)):
            new = inferred.get(info.name)
            if new is not None and shapes_disagree(info.type, new):
                restated = TypeProto()
                restated.CopyFrom(info.type)
                restated.tensor_type.shape.CopyFrom(new.tensor_type.shape)
                ops.append(ReplaceMessage(path + (field, k, "type"), restated))
    return ops


def node_output_types(graph: GraphProto, node: NodeProto, type_of: TypeOf,
                      opsets: Sequence[OperatorSetIdProto]) -> dict[str, TypeProto]:
    """The types onnx's shape inference gives ``node``'s outputs from its inputs' types (and the values of
    small initializers it reads); {} when an input's type is unknown or inference refuses."""
    weights = {t.name: t for t in graph.initializer}
    inputs, inits = [], []
    for name in dict.fromkeys(x for x in node.input if x):
        weight = weights.get(name)
        if weight is not None and _small(weight):
            inits.append(weight)
            continue
        if weight is not None:
            inputs.append(onnx.helper.make_tensor_value_info(name, weight.data_type, list(weight.dims)))
            continue
        t = type_of(name)
        if t is None or t.WhichOneof("value") is None:
            return {}
        inputs.append(onnx.helper.make_value_info(name, t))
    outputs = [onnx.helper.make_empty_tensor_value_info(x) for x in node.output if x]
    alone = onnx.helper.make_graph([node], "node", inputs, outputs, inits)
    try:
        model = onnx.helper.make_model(alone, opset_imports=list(opsets))
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False, data_prop=True)
    except Exception:  # noqa: BLE001 - inference refuses some nodes; nothing is restated then
        return {}
    values = [*inferred.graph.output, *inferred.graph.value_info]
    return {v.name: v.type for v in values if v.type.HasField("tensor_type") and v.type.tensor_type.HasField("shape")}


def shapes_disagree(declared: TypeProto, inferred: TypeProto) -> bool:
    """Both are tensors with shapes, and their ranks or a fixed size differ."""
    if not (declared.HasField("tensor_type") and declared.tensor_type.HasField("shape")):
        return False
    old, new = declared.tensor_type.shape.dim, inferred.tensor_type.shape.dim
    if len(old) != len(new):
        return True
    return any(a.HasField("dim_value") and b.HasField("dim_value") and a.dim_value != b.dim_value
               for a, b in zip(old, new, strict=True))


def _small(t: TensorProto) -> bool:
    size = 1
    for d in t.dims:
        size *= d
    return size <= SMALL_INITIALIZER and t.data_location != TensorProto.EXTERNAL
