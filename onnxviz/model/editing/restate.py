"""Declared types an edit made wrong, restated in the same undo step.

An edit that changes what a node makes (``perm`` of a Transpose, Cast's ``to``) or the type of a graph input (a
batch size made dynamic, float32 made float16) leaves the graph outputs and ``value_info`` entries declaring the
old types: the saved model then fails onnx's full check, and runtimes warn ("Expected shape {1,1000} does not
match {2,1000}") or refuse. Here onnx's shape inference follows the change: node after node in graph order, each
inferred alone from its inputs' types before and after the edit, going on only where what a node makes changed
(a wavefront: an epsilon edited costs two one-node inferences, a Cast's new type goes as far as it changes
types). When the change reaches more than :data:`WAVE_BUDGET` nodes (a batch size: everything), the part of the
graph it reaches is inferred in one pass instead. Every declared entry that disagrees with what inference finds
takes the inferred type (:func:`restated_type`); an entry inference cannot type stays as it is, and names
inference made up (``unk__3``) never replace a declared dimension.

Types are read as they are known (declared, else the index's inferred ones); a value known neither way is typed by
inferring its maker alone, a few makers up (:class:`Types`), never by inferring the whole model.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Iterable, Mapping, Sequence

import onnx
from onnx import GraphProto, NodeProto, OperatorSetIdProto, TensorProto, TypeProto

from onnxviz.model.background.contained import INFERENCE, NativeCrash, run_checks
from onnxviz.model.background.procpool import EDITS
from onnxviz.model.editing.ops import Op, Path, ReplaceMessage
from onnxviz.model.graph.index import GraphIndex
from onnxviz.model.graph.validation import InferenceResult, infer_types

SMALL_INITIALIZER = 4096  # elements: integer initializers read as values (shapes, axes) go into the inference
WAVE_BUDGET = 40  # nodes inferred one by one; a change reaching more is inferred in one pass over its region
LOOK_UP = 4  # makers inferred alone, upwards, to type a value the index does not know
TypeOf = Callable[[str], TypeProto | None]
MADE_UP = "unk__"  # onnx's prefix for the names of dimensions it invents


class Types:
    """The types of a graph's values as known before an edit: declared, else inferred by the index, else by
    inferring the value's maker alone (up to :data:`LOOK_UP` makers up); remembered while the edit is built."""

    def __init__(self, graph: GraphProto, g: GraphIndex, known: TypeOf, opsets: Sequence[OperatorSetIdProto]) -> None:
        self.graph, self.g, self.known, self.opsets = graph, g, known, opsets
        self.weight = Weights(graph, g)
        self._found: dict[str, TypeProto | None] = {}

    def __call__(self, name: str, depth: int = 0) -> TypeProto | None:
        if name in self._found:
            return self._found[name]
        t = self.known(name)
        w = self.weight(name) if t is None or t.WhichOneof("value") is None else None
        if w is not None:
            t = onnx.helper.make_tensor_type_proto(w.data_type, list(w.dims))
        if (t is None or t.WhichOneof("value") is None) and depth < LOOK_UP:
            maker = self.g.producer.get(name, -1)
            if maker >= 0:
                t = self.infer(self.g.nodes[maker], lambda x: self(x, depth + 1)).get(name)
        self._found[name] = t
        return t

    def infer(self, node: NodeProto, type_of: TypeOf) -> dict[str, TypeProto]:
        """What ``node`` makes, inferred alone from its inputs' types as ``type_of`` gives them."""
        return infer_alone([node], {}, type_of, self.opsets, self.weight)


def restated_output_ops(path: Path, graph: GraphProto, g: GraphIndex, i: int, node: NodeProto, known: TypeOf,
                        opsets: Sequence[OperatorSetIdProto]) -> list[Op]:
    """Ops restating the declared types that node ``i`` made ``node`` (its attributes edited) changes: those
    of its outputs, and of the values after them whose types change with them."""
    return retyped_ops(path, graph, g, {}, known, opsets, {i: node})


def retyped_ops(path: Path, graph: GraphProto, g: GraphIndex, changed: Mapping[str, TypeProto], known: TypeOf,
                opsets: Sequence[OperatorSetIdProto], replaced: Mapping[int, NodeProto] | None = None) -> list[Op]:
    """Ops making the declared types downstream of an edit agree with shape inference: the edit gives values
    new types (``changed``, e.g. a graph input's) and/or replaces nodes (``replaced``, by position). The entries
    of the ``changed`` values themselves are the caller's."""
    replaced = dict(replaced or {})
    types = Types(graph, g, known, opsets)
    starts = [c for x in changed for c in g.consumers_of(x)] + list(replaced)
    if not starts:
        return []
    moved = None if g.unsorted else _wave(types, changed, replaced, starts)
    if moved is not None:
        return restated_entries(path, graph, moved, set(moved) - set(changed))
    region = downstream(g, starts)  # too far for one node at a time: the region it reaches, in one pass
    made = {x for k in region for x in (replaced.get(k) or g.nodes[k]).output if x}
    names = {v.name for v in graph.value_info if v.name in made} | {v.name for v in graph.output if v.name in made}
    if not names:
        return []
    nodes = [replaced.get(k) or g.nodes[k] for k in sorted(region)]
    return restated_entries(path, graph, _infer_region(nodes, changed, types, opsets), names)


def _infer_region(nodes: Sequence[NodeProto], given: Mapping[str, TypeProto], types: Types,
                  opsets: Sequence[OperatorSetIdProto]) -> Mapping[str, TypeProto]:
    """The types inference finds for what ``nodes`` make, read from its output without parsing it whole (a
    region of 100k nodes)."""
    inputs, inits = _boundary(nodes, given, types, types.weight)
    model = onnx.helper.make_model(onnx.helper.make_graph(list(nodes), "part", inputs, [], inits),
                                   opset_imports=list(opsets))
    try:  # in the edits' worker process (never waiting behind a validation): a crash of onnx's C++ on some node
        # restates nothing, and ends nothing here
        return run_checks(_region_job, model.SerializeToString(), steps=(INFERENCE,), role=EDITS).types.get("", {})
    except NativeCrash:
        return {}


def _region_job(data: bytes) -> InferenceResult:
    """In the worker: a region's types."""
    return infer_types(data, contrib=False)


def _wave(types: Types, changed: Mapping[str, TypeProto], replaced: Mapping[int, NodeProto],
          starts: list[int]) -> dict[str, TypeProto] | None:
    """The new types of the values whose types the edit changes, found node after node in graph order (each
    node inferred alone before and after the edit); None past :data:`WAVE_BUDGET` nodes."""
    g = types.g
    after: dict[str, TypeProto | None] = dict(changed)
    heap = sorted(set(starts))
    seen: set[int] = set()
    while heap:
        k = heapq.heappop(heap)
        if k in seen:
            continue
        seen.add(k)
        if len(seen) > WAVE_BUDGET:
            return None
        old_node, new_node = g.nodes[k], replaced.get(k) or g.nodes[k]
        new = types.infer(new_node, lambda x: after[x] if x in after else types(x))
        old = types.infer(old_node, types)
        for x in new_node.output:  # where inference cannot tell what the edit makes, the declared type stays
            if x and new.get(x) is not None and _differ(old.get(x), new.get(x)):
                after[x] = new.get(x)
                for c in g.consumers_of(x):
                    heapq.heappush(heap, c)
    return {x: t for x, t in after.items() if t is not None}


def _differ(a: TypeProto | None, b: TypeProto | None) -> bool:
    if a is None or b is None:
        return (a is None) != (b is None)
    return a.SerializeToString() != b.SerializeToString()


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


def node_output_types(types: Types, node: NodeProto) -> dict[str, TypeProto]:
    """The types onnx's shape inference gives ``node``'s outputs from its inputs' types (and the values of
    small initializers it reads); {} when an input's type is unknown or inference refuses."""
    if any(x and _input_type(x, types, {}) is None for x in node.input):
        return {}
    return types.infer(node, types)


class Weights:
    """A graph's initializers by name, found through the index's list of their names (read once)."""

    def __init__(self, graph: GraphProto, g: GraphIndex) -> None:
        self.graph, self.g = graph, g
        self._at: dict[str, int] | None = None

    def __call__(self, name: str) -> TensorProto | None:
        if self._at is None:
            self._at = {n: k for k, n in enumerate(self.g.initializer_names)}
        k = self._at.get(name, -1)
        return self.graph.initializer[k] if 0 <= k < len(self.graph.initializer) else None


def infer_alone(nodes: Sequence[NodeProto], given: Mapping[str, TypeProto], type_of: TypeOf,
                opsets: Sequence[OperatorSetIdProto], weight: Callable[[str], TensorProto | None]
                ) -> dict[str, TypeProto]:
    """Shape inference over ``nodes`` alone: what they read from elsewhere is typed by ``given``, else as an
    initializer (with its values when small) or as known (``type_of``). The types of what they make."""
    made = {x for n in nodes for x in n.output if x}
    inputs, inits = _boundary(nodes, given, type_of, weight)
    alone = onnx.helper.make_graph(list(nodes), "part", inputs, [], inits)
    try:
        data = onnx.helper.make_model(alone, opset_imports=list(opsets)).SerializeToString()
        found = run_checks(_types_made, data, sorted(made), steps=(INFERENCE,), role=EDITS)  # a crash: nothing restated
    except (NativeCrash, ValueError):
        return {}
    return {name: TypeProto.FromString(t) for name, t in found.items()}


def _types_made(data: bytes, made: list[str]) -> dict[str, bytes]:
    """In the worker: the tensor types inference gives the values of ``made`` (none when it refuses the nodes)."""
    try:
        inferred = onnx.shape_inference.infer_shapes(onnx.ModelProto.FromString(data), strict_mode=False,
                                                     data_prop=True)
    except Exception:  # noqa: BLE001 - inference refuses some nodes; nothing is restated then
        return {}
    wanted = set(made)
    values = [*inferred.graph.output, *inferred.graph.value_info]
    return {v.name: v.type.SerializeToString() for v in values if v.name in wanted and v.type.HasField("tensor_type")}


def _boundary(nodes: Sequence[NodeProto], given: Mapping[str, TypeProto], type_of: TypeOf,
              weight: Callable[[str], TensorProto | None]) -> tuple[list[onnx.ValueInfoProto], list[TensorProto]]:
    """What ``nodes`` read from elsewhere: typed inputs (``given``, else as known), and small initializers with
    their values (inference reads shapes and axes from them)."""
    made = {x for n in nodes for x in n.output if x}
    inputs, inits = [], []
    for name in dict.fromkeys(x for n in nodes for x in n.input if x and x not in made):
        w = weight(name) if name not in given else None
        if w is not None and _small(w):
            inits.append(w)
            continue
        t = _input_type(name, type_of, given)
        if t is not None:
            inputs.append(onnx.helper.make_value_info(name, t))
    return inputs, inits


def _input_type(name: str, type_of: TypeOf, given: Mapping[str, TypeProto]) -> TypeProto | None:
    if name in given:
        return given[name]
    t = type_of(name)
    if t is not None and t.WhichOneof("value") is not None:
        return t
    return None


def restated_entries(path: Path, graph: GraphProto, inferred: Mapping[str, TypeProto], names: set[str]) -> list[Op]:
    """Ops giving the declared entries (graph outputs, value_info) of ``names`` the ``inferred`` types where
    they disagree."""
    if not names:
        return []
    ops: list[Op] = []
    for field in ("output", "value_info"):
        for k, info in enumerate(getattr(graph, field)):
            new = inferred.get(info.name) if info.name in names else None
            restated = restated_type(info.type, new) if new is not None else None
            if restated is not None:
                ops.append(ReplaceMessage(path + (field, k, "type"), restated))
    return ops


# -- comparing a declared type with an inferred one ------------------------------------------------------
Dims = list[int | str | None]


def _shape(t: TypeProto) -> Dims | None:
    """A tensor type's dimensions: sizes, names (inference's made-up ``unk__`` names as unknown), None for
    unknown; None for an unknown rank."""
    if not t.HasField("tensor_type") or not t.tensor_type.HasField("shape"):
        return None
    out: Dims = []
    for d in t.tensor_type.shape.dim:
        which = d.WhichOneof("value")
        out.append(d.dim_value if which == "dim_value" else
                   d.dim_param if which == "dim_param" and d.dim_param and not d.dim_param.startswith(MADE_UP)
                   else None)
    return out


def _dim_agrees(old: int | str | None, new: int | str | None) -> bool:
    """A declared dimension agrees with an inferred one unless one is a size and the other another size or a
    name (two names agree: exporters name the same dimension differently)."""
    if isinstance(old, int):
        return new is None or new == old
    if old is not None:
        return not isinstance(new, int)
    return True


def restated_type(declared: TypeProto, inferred: TypeProto) -> TypeProto | None:
    """``declared`` restated where inference contradicts its element type, rank or sizes; None where they agree.
    The restated type takes inference's element type and its dimensions where it knows them (a size or a name
    of its own); a declared dimension inference leaves unknown stays, unless the rank changed."""
    if declared.SerializeToString() == inferred.SerializeToString() or not (
            declared.HasField("tensor_type") and inferred.HasField("tensor_type")):
        return None
    a, b = declared.tensor_type.elem_type, inferred.tensor_type.elem_type
    old, new = _shape(declared), _shape(inferred)
    same_rank = old is not None and new is not None and len(old) == len(new)
    shapes_agree = old is None or new is None or (same_rank and all(
        _dim_agrees(x, y) for x, y in zip(old, new, strict=True)))  # type: ignore[arg-type]
    if not (a and b and a != b) and shapes_agree:
        return None
    out = TypeProto()
    out.CopyFrom(declared)
    if b:
        out.tensor_type.elem_type = b
    if new is not None:
        out.tensor_type.shape.Clear()
        out.tensor_type.shape.SetInParent()
        for k, d in enumerate(new):
            kept = d if d is not None else (old[k] if same_rank and old is not None else None)
            dim = out.tensor_type.shape.dim.add()
            if isinstance(kept, int):
                dim.dim_value = kept
            elif kept is not None:
                dim.dim_param = kept
    return out


def _small(t: TensorProto) -> bool:
    """An initializer whose values inference reads (shapes, axes, pads: small integers); others go in as typed
    inputs, their data left out."""
    return t.data_type in _INDEXES and t.data_location != TensorProto.EXTERNAL and math.prod(t.dims) <= SMALL_INITIALIZER


_INDEXES = frozenset({TensorProto.INT64, TensorProto.INT32})
