"""The error each layer of B adds on its own: B's layer run on A's values of that layer's inputs.

For every value pair (``a`` of A, ``b`` of B) of the main graphs, B's *layer* is the nodes of B between
``b`` and the nearest values above it that pair with A's (or are B's graph inputs, or constants): a QDQ
Conv with its DequantizeLinear pair, a dynamic Conv's DynamicQuantizeLinear, ConvInteger, Cast, Mul and
Add, a QOperator op with the QuantizeLinear of a float input. :func:`isolated_model` copies every such
layer into one model (values renamed ``iso<k>/...``, the weights shared), whose inputs are the layers'
boundary values: each is fed with A's partner value as the run captured it (cast to B's type, quantized
with B's scale where B reads integers). One run of that model gives each layer's output computed from
exact inputs, so measuring it against A's value gives the error the layer adds (per-layer isolation:
for a quantized layer, the quantization error of that layer alone), while the pair's own measures give
the error it inherits too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import helper

from onnxviz.model.matching.align import GraphSide
from onnxviz.model.matching.formats import Scale
from onnxviz.model.matching.values import ValuePair
from onnxviz.model.runner.store import RunResult

ArrayOf = Callable[[str], np.ndarray]  # a scale's or zero point's values, by name
InputOf = Callable[[str], "str | None"]  # B's graph input -> A's aligned with it
MAX_LAYER_NODES = 64        # a layer bigger than this is not isolated (its pair has no added error)
MAX_COPIED_NODES = 200_000  # nodes of all copies together
PREFIX = "iso"


@dataclass
class Isolation:
    """The model of isolated layers, what to feed it, and which of its outputs is which pair's."""

    model: onnx.ModelProto | None
    feeds: dict[str, np.ndarray] = field(default_factory=dict)
    outputs: dict[tuple[str, str], str] = field(default_factory=dict)  # (a, b) -> the output of b's copy
    skipped: dict[tuple[str, str], str] = field(default_factory=dict)  # (a, b) -> why it has none


def isolated_model(b_model: onnx.ModelProto, side_b: GraphSide, pairs: list[ValuePair], result_a: RunResult,
                   result_b: RunResult, constant_array: ArrayOf, input_a: InputOf) -> Isolation:
    """One model holding B's layer of every main-graph pair (see the module's description)."""
    paired_b = {p.b: p for p in pairs if not p.scope_b}
    out = Isolation(None)
    nodes: list[onnx.NodeProto] = []
    inputs: dict[str, onnx.ValueInfoProto] = {}
    for k, p in enumerate(pairs):
        key = (p.a, p.b)
        if p.scope_a or p.scope_b or p.b not in result_b.values or p.a not in result_a.values:
            out.skipped[key] = "not in the main graph, or not captured"
            continue
        layer = _layer(side_b, p.b, paired_b)
        if isinstance(layer, str):
            out.skipped[key] = layer
            continue
        if len(nodes) + len(layer.nodes) > MAX_COPIED_NODES:
            out.skipped[key] = "too many layers to isolate at once"
            continue
        fed = _feeds(layer.boundary, paired_b, result_a, result_b, constant_array, input_a)
        if isinstance(fed, str):
            out.skipped[key] = fed
            continue
        for name, array in fed.items():
            out.feeds.setdefault(_input_name(name), array)
            inputs.setdefault(name, helper.make_tensor_value_info(_input_name(name),
                                                                  helper.np_dtype_to_tensor_dtype(array.dtype),
                                                                  list(array.shape)))
        renamed = {name: _input_name(name) for name in layer.boundary}
        for i in layer.nodes:
            copy = onnx.NodeProto()
            copy.CopyFrom(side_b.nodes[i])
            copy.name = f"{PREFIX}{k}/{copy.name}"
            copy.input[:] = [renamed.get(x, x) if x in renamed or x in side_b.constant or not x
                             else f"{PREFIX}{k}/{x}" for x in copy.input]
            copy.output[:] = [f"{PREFIX}{k}/{y}" if y else y for y in copy.output]
            nodes.append(copy)
        out.outputs[key] = f"{PREFIX}{k}/{p.b}"
    if not out.outputs:
        return out
    graph = b_model.graph
    nodes = _constant_nodes(side_b, {x for n in nodes for x in n.input}) + nodes
    used = {x for n in nodes for x in n.input}
    outputs = [helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(_dtype(result_b, b)), None)
               for (_, b), name in out.outputs.items()]
    made = helper.make_graph(nodes, "isolated_layers", list(inputs.values()), outputs,
                             [t for t in graph.initializer if t.name in used])
    model = helper.make_model(made, opset_imports=list(b_model.opset_import), ir_version=b_model.ir_version)
    model.functions.extend(b_model.functions)
    out.model = model
    return out


@dataclass(frozen=True)
class _Layer:
    nodes: list[int]          # in topological order
    boundary: list[str]       # the values it reads that pair with A's (or are B's graph inputs)


def _layer(side: GraphSide, y: str, paired_b: Mapping[str, ValuePair]) -> _Layer | str:
    """B's nodes from ``y`` up to values that pair with A's, graph inputs or constants."""
    found: set[int] = set()
    boundary: set[str] = set()
    work = [y]
    while work:
        v = work.pop()
        p = side.g.producer.get(v, -4)
        if p < 0:
            if v in side.g.input_names:
                boundary.add(v)
                continue
            if v in side.constant:
                continue
            return "reads a value from outside its graph"
        if p in found:
            continue
        if any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in side.nodes[p].attribute):
            return "holds a subgraph"
        found.add(p)
        if len(found) > MAX_LAYER_NODES:
            return f"more than {MAX_LAYER_NODES} nodes between it and values that pair with A's"
        for x in side.nodes[p].input:
            if not x or x in side.constant:
                continue
            if x in paired_b and x != y:
                boundary.add(x)
            else:
                work.append(x)
    if not boundary or not found:
        return "computed from constants only" if found else "not computed by a node"
    order = [i for i in side.order if i in found]
    return _Layer(order, sorted(boundary))


def _constant_nodes(side: GraphSide, used: set[str]) -> list[onnx.NodeProto]:
    """The nodes making constants the copies read (Constant nodes, the DequantizeLinear of a weight...)."""
    needed = {x for x in used if x in side.constant and side.g.producer.get(x, -4) >= 0}
    keep: set[int] = set()
    work = list(needed)
    while work:
        x = work.pop()
        p = side.g.producer.get(x, -4)
        if p >= 0 and p not in keep:
            keep.add(p)
            work += [u for u in side.nodes[p].input if u]
    out = []
    for i in side.order:
        if i in keep:
            copy = onnx.NodeProto()
            copy.CopyFrom(side.nodes[i])
            out.append(copy)
    return out


def _input_name(name: str) -> str:
    return f"{PREFIX}_in/{name}"


def _dtype(result: RunResult, name: str) -> np.dtype:
    return np.dtype(result.array(name).dtype)  # memory-mapped: nothing read


def _feeds(boundary: list[str], paired_b: Mapping[str, ValuePair], result_a: RunResult, result_b: RunResult,
           constant_array: ArrayOf, input_a: InputOf) -> dict[str, np.ndarray] | str:
    """A's partner of each boundary value, as B holds it (B's type; quantized with B's scale when B holds
    integers there)."""
    out: dict[str, np.ndarray] = {}
    for name in boundary:
        p = paired_b.get(name)
        partner = p.a if p is not None else input_a(name)  # a graph input: A's input aligned with it
        if partner is None or partner not in result_a.values or name not in result_b.values:
            return f"its input {name} was not captured in both runs"
        value = np.asarray(result_a.array(partner))
        want = _dtype(result_b, name)
        if want.kind in "iu" and value.dtype.kind == "f":
            scale = p.scale_b if p is not None else None
            if scale is None:
                return f"its input {name} holds integers and nothing says how floats map to them"
            value = quantize(value, constant_array(scale.scale), constant_array(scale.zero) if scale.zero else None,
                             want, scale.axis)
        with np.errstate(over="ignore", invalid="ignore"):  # float32 beyond float16 becomes inf, as in B
            out[name] = value.astype(want, copy=False) if value.dtype != want else value
    return out


def quantize(x: np.ndarray, scale: np.ndarray, zero: np.ndarray | None, dtype: np.dtype, axis: int = 1) -> np.ndarray:
    """QuantizeLinear: ``saturate(round(x / scale) + zero)`` per tensor or along ``axis``."""
    s = np.asarray(scale, np.float64)
    z = np.zeros_like(s) if zero is None else np.asarray(zero, np.float64)
    if s.size > 1:
        shape = [1] * x.ndim
        shape[axis % max(x.ndim, 1)] = -1
        s, z = s.reshape(shape), z.reshape(shape)
    info = np.iinfo(dtype)
    q = np.rint(np.asarray(x, np.float64) / s) + z
    return np.clip(q, info.min, info.max).astype(dtype)


__all__ = ["Isolation", "Scale", "isolated_model", "quantize"]
