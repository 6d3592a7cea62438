"""Model-level facts: opsets, I/O signatures, op histograms, parameter counts."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import chain, compress, repeat
from operator import not_
from typing import Any

import onnx
from onnx import NodeProto, TensorProto, ValueInfoProto

from onnxviz.model.dtypes import item_bits
from onnxviz.model.graph.flops import CostColumns, CostPlan, body_costs, cost_plan, model_costs, plan_costs
from onnxviz.model.graph.index import GraphIndex, ModelIndex, scope_label
from onnxviz.model.text import dtype_text, shape_list, tensor_dtype_name


def tensor_numel(t: TensorProto) -> int:
    """Element count from dims (0 for a dims product that is negative)."""
    n = 1
    for d in t.dims:
        n *= int(d)
    return max(n, 0)


def value_signature(v: ValueInfoProto) -> dict[str, Any]:
    return {"name": v.name, "dtype": dtype_text(v.type) if v.HasField("type") else "",
            "shape": shape_list(v.type) if v.HasField("type") else None}


def opsets(model: onnx.ModelProto) -> dict[str, int]:
    return {(o.domain or "ai.onnx"): int(o.version) for o in model.opset_import}


@dataclass(frozen=True)
class ScopeParameters:
    """The parameters one graph holds: its initializers and the values of its Constant nodes."""

    scope: str
    count: int
    nbytes: int
    missing: int = 0  # tensors left out as their data is missing, short or refused
    missing_elements: int = 0  # the elements those declare


class _ParameterTally:
    """Element counts and bytes of tensors, totalled and by data type (itemsize looked up once per type)."""

    def __init__(self) -> None:
        self.by_dtype: Counter[str] = Counter()
        self._per_type: dict[int, tuple[int, str]] = {}

    def _of(self, data_type: int) -> tuple[int, str]:
        if data_type not in self._per_type:
            self._per_type[data_type] = (item_bits(data_type), tensor_dtype_name(data_type))
        return self._per_type[data_type]

    def scope(self, g: GraphIndex, without: Collection[str] = ()) -> ScopeParameters:
        """The graph's parameters, added to the totals by data type: each tensor's bytes rounded down on their
        own, in whole numbers (dims whose product passes 1e308 overflowed a float). The tensors named in
        ``without`` (whose data is missing or refused) are counted apart: no size is given for bytes not there."""
        types, counts, names = _held_tensors(g)
        missing = [name in without for name in names] if without else []
        left_out = list(compress(counts, missing))
        if left_out:
            kept = list(map(not_, missing))
            types, counts = list(compress(types, kept)), list(compress(counts, kept))
        bits = {t: self._of(t)[0] for t in dict.fromkeys(types)}
        sizes = [count * bits[t] // 8 for t, count in zip(types, counts, strict=True)]
        for data_type in bits:
            self.by_dtype[self._of(data_type)[1]] += sum(compress(sizes, map(data_type.__eq__, types)))
        return ScopeParameters(g.scope, sum(counts), sum(sizes), len(left_out), sum(left_out))


_CONSTANT_LISTS = {"value_floats": TensorProto.FLOAT, "value_ints": TensorProto.INT64,
                   "value_strings": TensorProto.STRING}
_CONSTANT_SCALARS = {"value_float": TensorProto.FLOAT, "value_int": TensorProto.INT64,
                     "value_string": TensorProto.STRING}


def _held_tensors(g: GraphIndex) -> tuple[list[int], list[int], list[str]]:
    """(data types, element counts, names) of the initializers and the Constant nodes' values in ``g``, in this
    order: only the nodes with attributes looked at. A Constant's value is named as its tensor is."""
    types: list[int] = []
    dims: list[list[int]] = []
    names: list[str] = []
    if g.graph is not None:
        for t in chain(g.graph.initializer, (st.values for st in g.graph.sparse_initializer)):
            types.append(t.data_type)  # each tensor's message made once, its fields read from it
            dims.append(t.dims[:])
            names.append(t.name)
    counts = list(map(max, map(math.prod, dims), repeat(0)))
    for i in g.attribute_holders:  # a Constant without attributes holds nothing
        node = g.nodes[i]
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
            for data_type, n, name in _constant_value(node):
                types.append(data_type)
                counts.append(n)
                names.append(name)
    return types, counts, names


def _constant_value(node: NodeProto) -> Iterator[tuple[int, int, str]]:
    for a in node.attribute:
        if a.name == "value":
            yield a.t.data_type, max(math.prod(a.t.dims), 0), a.t.name
        elif a.name == "sparse_value":
            values = a.sparse_tensor.values
            yield values.data_type, max(math.prod(values.dims), 0), values.name
        elif a.name in _CONSTANT_LISTS:
            yield _CONSTANT_LISTS[a.name], len(a.floats) or len(a.ints) or len(a.strings), ""
        elif a.name in _CONSTANT_SCALARS:
            yield _CONSTANT_SCALARS[a.name], 1, ""


def parameters(index: ModelIndex, without: Collection[str] = ()) -> tuple[list[ScopeParameters], dict[str, int]]:
    """The parameters of every graph that holds some (the main graph always first): its initializers
    and Constant nodes, in subgraphs (If branches, Loop bodies) and function bodies too; and the bytes
    of all of them by data type. The tensors named in ``without`` are counted apart (see
    :meth:`_ParameterTally.scope`)."""
    tally = _ParameterTally()
    scopes = [tally.scope(g, without) for g in index.graphs.values()]
    return [s for s in scopes if s.count or s.missing or not s.scope], dict(tally.by_dtype)


def op_histogram(plans: Mapping[str, CostPlan]) -> Counter[str]:
    """How often each operator occurs in every graph, subgraph and function body (whose cost plans are
    ``plans``), the operators in the order they first occur."""
    found: Counter[str] = Counter()
    for plan in plans.values():
        for (op_type, domain), count in zip(plan.ops, plan.counts(), strict=True):
            found[_op_label(op_type, domain)] += count
    return found


def _op_label(op_type: str, domain: str) -> str:
    return op_type if domain in ("", "ai.onnx") else f"{domain}:{op_type}"


@dataclass(frozen=True)
class ModelFigures:
    """The computed part of the model summary (slow on huge models: build it off the GUI thread)."""

    parameters: int
    parameter_bytes: int
    bytes_by_dtype: dict[str, int]
    op_counts: Counter[str]
    costs: CostColumns  # of the main graph's nodes
    by_scope: list[ScopeParameters] = field(default_factory=list)  # the graphs holding parameters
    bodies: list[tuple[str, int, int]] = field(default_factory=list)  # (scope, MACs, FLOPs) of one run of a body


@dataclass(frozen=True)
class ModelStructure:
    """The figures that need no inferred types (found while shape inference runs elsewhere)."""

    scopes: list[ScopeParameters]  # the graphs holding parameters
    bytes_by_dtype: dict[str, int]
    op_counts: Counter[str]
    plans: dict[str, CostPlan]  # what the costs of each graph's nodes need besides the types


def model_structure(index: ModelIndex) -> ModelStructure:
    plans = {scope: cost_plan(index, scope) for scope in index.graphs}
    scopes, by_dtype = parameters(index)
    return ModelStructure(scopes, by_dtype, op_histogram(plans), plans)


def figures_with_costs(structure: ModelStructure, index: ModelIndex) -> ModelFigures:
    """The figures of ``structure`` with the costs of the nodes, from the types ``index`` holds."""
    scopes = structure.scopes
    bodies = [(scope, total.macs, total.flops) for scope, total in body_costs(index, structure.plans)]
    return ModelFigures(sum(s.count for s in scopes), sum(s.nbytes for s in scopes), structure.bytes_by_dtype,
                        structure.op_counts, plan_costs(structure.plans[""], index), scopes, bodies)


def model_figures(model: onnx.ModelProto, index: ModelIndex) -> ModelFigures:
    return figures_with_costs(model_structure(index), index)


def model_info(model: onnx.ModelProto, index: ModelIndex, without_data: Mapping[str, str] | None = None) -> dict[str, Any]:
    """What ``onnxviz info --json`` prints. ``without_data``: the tensors whose data is missing, short or refused,
    each with why: the parameters leave them out (their declared elements are given apart), and no size is
    given for bytes that are not there."""
    without = without_data or {}
    scopes, by_dtype = parameters(index, without)
    initializers = set(index.main.initializer_names)  # once: per input, it made info quadratic
    op_types = Counter(
        (f"{n.domain}:{n.op_type}" if n.domain not in ("", "ai.onnx") else n.op_type) for n in model.graph.node)
    return {
        "ir_version": int(model.ir_version),
        "opsets": opsets(model),
        "producer": {"name": model.producer_name, "version": model.producer_version},
        "domain": model.domain,
        "model_version": int(model.model_version),
        "graph_name": model.graph.name,
        "inputs": [value_signature(v) for v in model.graph.input if v.name not in initializers],
        "outputs": [value_signature(v) for v in model.graph.output],
        "nodes": len(model.graph.node),
        "nodes_total": index.node_count(),
        "op_types": dict(op_types.most_common()),
        "parameters": sum(s.count for s in scopes),
        "parameter_bytes": sum(s.nbytes for s in scopes),
        "parameter_bytes_by_dtype": by_dtype,
        "parameters_by_graph": [{"graph": s.scope, "label": scope_label(index, s.scope), "parameters": s.count,
                                 "bytes": s.nbytes} for s in scopes],
        "tensors_without_data": [{"name": name, "problem": why} for name, why in without.items()],
        "elements_declared_without_data": sum(s.missing_elements for s in scopes),
        "initializers": len(model.graph.initializer),
        "functions": [f"{f.domain}:{f.name}" for f in model.functions],
        "metadata": {p.key: p.value for p in model.metadata_props},
        "graph_metadata": {p.key: p.value for p in model.graph.metadata_props},
        **cost_info(index),
    }


def cost_info(index: ModelIndex) -> dict[str, Any]:
    """The main graph's estimated MACs and FLOPs from the types ``index`` holds (set them first), how many of
    its nodes could not be counted (no shape known), and whether named dimensions were counted as 1."""
    total = model_costs(index.model, index).summary()
    return {"macs": total.macs, "flops": total.flops, "nodes_not_counted": total.unknown_nodes,
            "named_dimensions_as_1": total.symbolic}


def human_bytes(n: float) -> str:
    if n >= 1 << 70:  # a count no file holds (declared dims): its number of digits, never a float's overflow
        return f"over 10^{len(str(int(n))) - 1} B"
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1024 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"
