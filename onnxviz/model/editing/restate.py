"""Declared types an edit made wrong, restated in the same undo step.

An edit that changes what a node makes (``perm`` of a Transpose, Cast's ``to``) or the type of a graph input (a
batch size made dynamic, float32 made float16) leaves the graph outputs and ``value_info`` entries declaring the
old types: the saved model then fails onnx's full check, and runtimes warn ("Expected shape {1,1000} does not
match {2,1000}") or refuse. Here onnx's shape inference runs on the part of the graph the edit reaches, alone
(its inputs typed as they are known, small initializers given with their values), and every declared entry there
that disagrees with what inference finds takes the inferred type (:func:`agree`, :func:`merged`). An entry that
inference cannot type stays as it is; names inference made up (``unk__3``) never replace a declared dimension.

An attribute edit first infers its node alone (a fraction of a millisecond): only when the node's outputs change
type does the part after it run through inference too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

import onnx
from onnx import GraphProto, NodeProto, OperatorSetIdProto, TensorProto, TypeProto

from onnxviz.model.editing.ops import Op, Path, ReplaceMessage
from onnxviz.model.graph.index import GraphIndex

SMALL_INITIALIZER = 4096  # elements: initializers read as values (shapes, axes) go into the inference
TypeOf = Callable[[str], TypeProto | None]
MADE_UP = "unk__"  # onnx's prefix for the names of dimensions it invents


def restated_output_ops(path: Path, graph: GraphProto, g: GraphIndex, i: int, node: NodeProto, type_of: TypeOf,
                        opsets: Sequence[OperatorSetIdProto]) -> list[Op]:
    """Ops restating the declared types that node ``i`` made ``node`` (its attributes edited) changes: those
    of its outputs, and when their types changed, those of the values downstream."""
    inferred = node_output_types(graph, node, type_of, opsets)
    moved = [x for x, t in inferred.items() if not _same(type_of(x), t)]
    if moved and _declares_after(graph, g, [i]):
        return retyped_ops(path, graph, g, {}, type_of, opsets, {i: node})
    return restated_entries(path, graph, inferred, set(inferred))


def retyped_ops(path: Path, graph: GraphProto, g: GraphIndex, changed: Mapping[str, TypeProto], type_of: TypeOf,
                opsets: Sequence[OperatorSetIdProto], replaced: Mapping[int, NodeProto] | None = None) -> list[Op]:
    """Ops making the declared types downstream of an edit agree with shape inference: the edit gives values
    new types (``changed``, e.g. a graph input's) and/or replaces nodes (``replaced``, by position). The entries
    of the ``changed`` values themselves are the caller's."""
    replaced = dict(replaced or {})
    region = downstream(g, [c for x in changed for c in g.consumers_of(x)] + list(replaced))
    if not region:
        return []
    made = {x for k in region for x in (replaced.get(k) or g.nodes[k]).output if x}
    if not _declared_names(graph) & made:
        return []
    nodes = [replaced.get(k) or g.nodes[k] for k in sorted(region)]
    inferred = _infer_alone(graph, nodes, changed, type_of, opsets)
    return restated_entries(path, graph, inferred, made)


def downstream(g: GraphIndex, starts: Iterable[int]) -> set[int]:
    """``starts`` and every node that reads, directly or not, what they make."""
    seen = set(starts)
    stack = list(seen)
    while stack:
        for out in g.nodes[stack.pop()].output:
            for c in g.consumers_of(out):
                if c not in seen:
                    seen.add(c)
                    stack.append(c)
    return seen


def node_output_types(graph: GraphProto, node: NodeProto, type_of: TypeOf,
                      opsets: Sequence[OperatorSetIdProto]) -> dict[str, TypeProto]:
    """The types onnx's shape inference gives ``node``'s outputs from its inputs' types (and the values of
    small initializers it reads); {} when an input's type is unknown or inference refuses."""
    if any(x and _input_type(graph, x, type_of, {}) is None for x in node.input):
        return {}
    return _infer_alone(graph, [node], {}, type_of, opsets)


def _infer_alone(graph: GraphProto, nodes: Sequence[NodeProto], given: Mapping[str, TypeProto], type_of: TypeOf,
                 opsets: Sequence[OperatorSetIdProto]) -> dict[str, TypeProto]:
    """Shape inference over ``nodes`` alone: what they read from elsewhere is typed by ``given``, else as an
    initializer (with its values when small) or as known (``type_of``). The types of what they make."""
    made = {x for n in nodes for x in n.output if x}
    weights = {t.name: t for t in graph.initializer}
    inputs, inits = [], []
    for name in dict.fromkeys(x for n in nodes for x in n.input if x and x not in made):
        weight = weights.get(name)
        if weight is not None and name not in given and _small(weight):
            inits.append(weight)
            continue
        t = _input_type(graph, name, type_of, given)
        if t is not None:
            inputs.append(onnx.helper.make_value_info(name, t))
    alone = onnx.helper.make_graph(list(nodes), "part", inputs, [], inits)
    try:
        model = onnx.helper.make_model(alone, opset_imports=list(opsets))
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False, data_prop=True)
    except Exception:  # noqa: BLE001 - inference refuses some nodes; nothing is restated then
        return {}
    values = [*inferred.graph.output, *inferred.graph.value_info]
    return {v.name: v.type for v in values if v.name in made and v.type.HasField("tensor_type")}


def _input_type(graph: GraphProto, name: str, type_of: TypeOf, given: Mapping[str, TypeProto]) -> TypeProto | None:
    if name in given:
        return given[name]
    t = type_of(name)
    if t is not None and t.WhichOneof("value") is not None:
        return t
    weight = next((w for w in graph.initializer if w.name == name), None)
    if weight is not None:
        return onnx.helper.make_tensor_type_proto(weight.data_type, list(weight.dims))
    return None


def restated_entries(path: Path, graph: GraphProto, inferred: Mapping[str, TypeProto], names: set[str]) -> list[Op]:
    """Ops giving the declared entries (graph outputs, value_info) of ``names`` the ``inferred`` types where
    they disagree."""
    ops: list[Op] = []
    for field in ("output", "value_info"):
        for k, info in enumerate(getattr(graph, field)):
            new = inferred.get(info.name) if info.name in names else None
            if new is not None and not agree(info.type, new):
                ops.append(ReplaceMessage(path + (field, k, "type"), merged(info.type, new)))
    return ops


def _declared_names(graph: GraphProto) -> set[str]:
    return {v.name for v in graph.value_info} | {v.name for v in graph.output}


def _declares_after(graph: GraphProto, g: GraphIndex, starts: list[int]) -> bool:
    """Some value made after ``starts`` (not by them: their own are restated alone) has a declared type."""
    declared = _declared_names(graph)
    return any(x in declared for k in downstream(g, starts) - set(starts) for x in g.nodes[k].output)


# -- comparing a declared type with an inferred one ------------------------------------------------------
def _dims(t: TypeProto) -> list[onnx.TensorShapeProto.Dimension] | None:
    if not t.HasField("tensor_type") or not t.tensor_type.HasField("shape"):
        return None
    return list(t.tensor_type.shape.dim)


def _named(d: onnx.TensorShapeProto.Dimension) -> bool:
    return d.HasField("dim_param") and bool(d.dim_param) and not d.dim_param.startswith(MADE_UP)


def _dim_agrees(old: onnx.TensorShapeProto.Dimension, new: onnx.TensorShapeProto.Dimension) -> bool:
    """A declared dimension agrees with an inferred one unless one is a size and the other another size or a
    name (two names agree: exporters name the same dimension differently)."""
    if old.HasField("dim_value"):
        return not (new.HasField("dim_value") and new.dim_value != old.dim_value) and not _named(new)
    if _named(old):
        return not new.HasField("dim_value")
    return True


def agree(declared: TypeProto, inferred: TypeProto) -> bool:
    """Whether a declared tensor type says nothing inference contradicts: element type, rank, sizes."""
    if not (declared.HasField("tensor_type") and inferred.HasField("tensor_type")):
        return True
    a, b = declared.tensor_type.elem_type, inferred.tensor_type.elem_type
    if a and b and a != b:
        return False
    old, new = _dims(declared), _dims(inferred)
    if old is None or new is None:
        return True
    return len(old) == len(new) and all(_dim_agrees(x, y) for x, y in zip(old, new, strict=True))


def merged(declared: TypeProto, inferred: TypeProto) -> TypeProto:
    """``declared`` restated: inference's element type, and its dimensions where it knows them (a size or a
    name of its own); a declared dimension inference leaves unknown stays, unless the rank changed."""
    out = TypeProto()
    out.CopyFrom(declared)
    if inferred.tensor_type.elem_type:
        out.tensor_type.elem_type = inferred.tensor_type.elem_type
    old, new = _dims(declared), _dims(inferred)
    if new is None:
        return out
    shape = onnx.TensorShapeProto()
    for k, d in enumerate(new):
        dim = shape.dim.add()
        if d.HasField("dim_value"):
            dim.dim_value = d.dim_value
        elif _named(d):
            dim.dim_param = d.dim_param
        elif old is not None and len(old) == len(new):
            dim.CopyFrom(old[k])
    out.tensor_type.shape.CopyFrom(shape)
    return out


def _same(old: TypeProto | None, new: TypeProto) -> bool:
    """The node-local inference gives an output the type it had (unknown before counts as a change)."""
    return old is not None and agree(old, new) and agree(new, old)


def _small(t: TensorProto) -> bool:
    size = 1
    for d in t.dims:
        size *= d
    return size <= SMALL_INITIALIZER and t.data_location != TensorProto.EXTERNAL
