"""Extracting part of the main graph as a new model: between named values, or around chosen nodes.

The new model keeps what describes the whole model: IR version, opsets, producer, domain, model version,
description, metadata and local functions.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import onnx
from onnx import AttributeProto, GraphProto, ModelProto, TypeProto

from onnxviz.model.background.contained import INFERENCE, NativeCrash, inferred_types, run_checks
from onnxviz.model.background.procpool import EDITS
from onnxviz.model.editing.cleanup import node_reads
from onnxviz.model.errors import EditError
from onnxviz.model.graph.index import GraphIndex, ModelIndex, topological_order
from onnxviz.model.layout.scope import CHAIN_DEPTH, CONSTANT_OPS, WEIGHT_OPS
from onnxviz.model.text import quoted_name

_BODIES = (AttributeProto.GRAPH, AttributeProto.GRAPHS)
HEADER_FIELDS = ("ir_version", "producer_name", "producer_version", "domain", "model_version", "doc_string")


@dataclass(frozen=True)
class Boundary:
    """What a set of nodes of one graph reads from outside (``inputs``) and gives outside (``outputs``)."""

    nodes: list[int]     # positions, in an order that runs (topological)
    inputs: list[str]
    outputs: list[str]


def extract_model(model: ModelProto, inputs: Sequence[str], outputs: Sequence[str]) -> ModelProto:
    """A new model holding what lies between ``inputs`` and ``outputs`` of the main graph (found by onnx's
    Extractor, which runs shape inference: in the worker process, where a crash of it is contained)."""
    if not outputs:
        raise EditError("choose at least one output to extract.")
    try:
        found = run_checks(_extracted, model.SerializeToString(), list(inputs), list(outputs), steps=(INFERENCE,),
                           role=EDITS)
    except NativeCrash as crash:
        raise EditError(f"the subgraph could not be extracted: {crash.message}") from None
    if isinstance(found, str):
        raise EditError(f"the subgraph could not be extracted: {found.strip().splitlines()[0]}.", found)
    return with_header_of(model, ModelProto.FromString(found))


def _extracted(data: bytes, inputs: list[str], outputs: list[str]) -> bytes | str:
    """In the worker: the part's bytes, or why onnx could not extract it."""
    try:
        inferred = onnx.shape_inference.infer_shapes(ModelProto.FromString(data), check_type=False, strict_mode=False)
        return onnx.utils.Extractor(inferred).extract_model(inputs, outputs).SerializeToString()
    except Exception as exc:  # noqa: BLE001 - unknown names, missing types
        return str(exc) or type(exc).__name__


def boundary(g: GraphIndex, nodes: Iterable[int]) -> Boundary:
    """The boundary of ``nodes`` of graph ``g``, what makes their weights pulled in (:func:`weight_makers`).

    Inputs are the values the nodes read that other nodes or the graph's inputs make (initializers go
    with the part); outputs the values they make that other nodes read or that are graph outputs.
    """
    chosen = {i for i in nodes if 0 <= i < len(g.nodes)}
    if not chosen:
        raise EditError("select the nodes to extract first (a node, or a group of nodes).")
    reads = node_reads(g)
    picked = set(chosen)
    chosen |= weight_makers(g, picked, reads)
    order, cyclic = topological_order(g.nodes, g.producer)
    if chosen & set(cyclic):
        raise EditError("the selected nodes are on a cycle, so they cannot be extracted.")
    inputs: dict[str, None] = {}
    made = {x for i in chosen for x in g.nodes[i].output if x}
    inits = set(g.initializer_names)
    for i in sorted(chosen):
        read = [x for x in g.nodes[i].input if x] + sorted(reads[i] - set(g.nodes[i].input))  # subgraphs' last
        inputs.update((x, None) for x in read if x not in made and x not in inits)
    graph_outputs = set(g.output_names)
    outputs = [x for i in sorted(picked) for x in g.nodes[i].output  # not the Constants brought along
               if x and (x in graph_outputs or any(c not in chosen for c in g.consumers_of(x)))]
    if not outputs:
        raise EditError("nothing outside the selected nodes reads what they make, so there is no output to "
                        "extract.")
    return Boundary([i for i in order if i in chosen], list(inputs), outputs)


def extract_nodes_model(model: ModelProto, index: ModelIndex, nodes: Iterable[int]) -> ModelProto:
    """A new model of ``nodes`` of the main graph, their boundary as its inputs and outputs."""
    g, graph = index.main, model.graph
    part = boundary(g, nodes)
    types = _boundary_types(model, index, part.inputs + part.outputs)
    reads = node_reads(g)
    needed = {x for i in part.nodes for x in reads[i]}
    out = GraphProto(name=graph.name or "extracted")
    out.node.extend(g.nodes[i] for i in part.nodes)
    out.input.extend(onnx.helper.make_value_info(x, types[x]) for x in part.inputs)
    out.output.extend(onnx.helper.make_value_info(x, types[x]) for x in part.outputs)
    out.initializer.extend(t for t in graph.initializer if t.name in needed)
    out.sparse_initializer.extend(t for t in graph.sparse_initializer if t.values.name in needed)
    inner = {x for i in part.nodes for x in g.nodes[i].output if x} - set(part.outputs)
    out.value_info.extend(v for v in graph.value_info if v.name in inner)
    return with_header_of(model, onnx.helper.make_model(out))


def with_header_of(model: ModelProto, part: ModelProto) -> ModelProto:
    """``part`` with the IR version, opsets, producer, description, metadata and functions of ``model``."""
    for key in HEADER_FIELDS:
        if model.HasField(key):
            setattr(part, key, getattr(model, key))
        else:
            part.ClearField(key)
    for key in ("opset_import", "metadata_props", "functions"):
        part.ClearField(key)
        getattr(part, key).extend(getattr(model, key))
    return part


def weight_makers(g: GraphIndex, nodes: set[int], reads: list[set[str]]) -> set[int]:
    """The nodes outside ``nodes`` that make what they read from constants alone: Constants, and the weight
    operators the canvas draws inside their reader's box (a QDQ weight's DequantizeLinear, a Cast or Identity of
    a weight, :data:`~onnxviz.model.layout.scope.WEIGHT_OPS`), chains of them included. A part that takes them
    along is self-contained: its weights are not turned into inputs."""
    inits = set(g.initializer_names)
    known: dict[int, bool] = {}

    def constant_made(p: int, depth: int = 0) -> bool:
        if p in known:
            return known[p]
        n = g.nodes[p]
        ok = n.domain in ("", "ai.onnx") and depth < CHAIN_DEPTH and not any(a.type in _BODIES for a in n.attribute) \
            and (n.op_type in CONSTANT_OPS or n.op_type in WEIGHT_OPS) and bool(n.input or n.op_type in CONSTANT_OPS) \
            and all(not x or x in inits or (q := g.producer.get(x, -1)) >= 0 and constant_made(q, depth + 1)
                    for x in n.input)
        known[p] = ok
        return ok

    found: set[int] = set()
    stack = [p for i in nodes for x in reads[i] if (p := g.producer.get(x, -1)) >= 0 and p not in nodes]
    while stack:
        p = stack.pop()
        if p in found or p in nodes or not constant_made(p):
            continue
        found.add(p)
        stack += [q for x in g.nodes[p].input if x and (q := g.producer.get(x, -1)) >= 0]
    return found


def _boundary_types(model: ModelProto, index: ModelIndex, names: Sequence[str]) -> dict[str, TypeProto]:
    """The type of each boundary value: declared, else inferred; shape inference runs when one is unknown."""
    types: dict[str, TypeProto] = {}
    for name in names:
        t, _inferred = index.type_of("", name)
        if t is not None and t.WhichOneof("value") is not None:
            types[name] = t
    missing = [x for x in names if x not in types]
    if missing:
        types.update(_inferred_types(model, missing))
    unknown = [x for x in names if x not in types]
    if unknown:
        raise EditError(f"the type of '{quoted_name(unknown[0])}' is not known (shape inference could not tell), "
                        "so it cannot be an input or output of the extracted model.")
    return types


def _inferred_types(model: ModelProto, names: Sequence[str]) -> dict[str, TypeProto]:
    """The types shape inference finds for ``names`` (in the worker process: a crash of it finds none)."""
    try:
        inferred = inferred_types(model.SerializeToString()).types.get("", {})
    except NativeCrash:  # the caller names the value whose type is not known
        return {}
    found = {name: inferred.get(name) for name in names}
    return {name: t for name, t in found.items() if t is not None and t.WhichOneof("value") is not None}
