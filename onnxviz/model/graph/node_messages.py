"""Which node a checker's, shape inference's or onnxruntime's message names: the messages name nodes in a
few ways of their own (:data:`_NODE_PATTERNS`); a problem is attached to the node found."""

from __future__ import annotations

import re
from collections.abc import Iterator

import onnx
from onnx import GraphProto, NodeProto

from onnxviz.model.graph.index import ModelIndex, child_scope, function_scope, subgraphs_of
from onnxviz.model.problems import Problem


def walk_nodes(model: onnx.ModelProto) -> Iterator[tuple[str, int, NodeProto]]:
    """(scope, position, node) of every node in every graph, subgraph and local function."""
    def graph_nodes(scope: str, graph: GraphProto) -> Iterator[tuple[str, int, NodeProto]]:
        for i, node in enumerate(graph.node):
            yield scope, i, node
            if node.attribute:
                for attr, k, body in subgraphs_of(node):
                    yield from graph_nodes(child_scope(scope, i, attr, k), body)

    yield from graph_nodes("", model.graph)
    for fn in model.functions:
        scope = function_scope(fn.domain, fn.name, getattr(fn, "overload", ""))
        for i, node in enumerate(fn.node):
            yield scope, i, node


_NODE_PATTERNS = (  # onnx's and onnxruntime's ways of naming a node
    re.compile(r"node name:\s*([^)]*?)\s*\)", re.IGNORECASE),
    re.compile(r"\bname:\s*(\S.*?)\s+OpType:", re.IGNORECASE),
    re.compile(r"[Nn]ode \(([^)]*)\)"),
    re.compile(r"node name \(([^)]*)\)"),
    re.compile(r"In Node, \(\"([^\"]*)\""),
    re.compile(r"node with name '([^']*)'"),
    re.compile(r"node with name[: ]+'?([^'\s,]+)"),
)


def node_table(model: onnx.ModelProto | bytes, index: ModelIndex | None) -> dict[str, tuple[str, int]]:
    table: dict[str, tuple[str, int]] = {}
    if index is not None:
        for scope, g in index.graphs.items():
            for i, n in enumerate(g.nodes):
                if n.name:
                    table.setdefault(n.name, (scope, i))
        return table
    proto = onnx.ModelProto.FromString(model) if isinstance(model, bytes) else model
    for scope, i, n in walk_nodes(proto):
        if n.name:
            table.setdefault(n.name, (scope, i))
    return table


def attach(problem: Problem, nodes: dict[str, tuple[str, int]]) -> Problem:
    """Point a checker or inference message at the node it names, when it names one we can find."""
    found = named_node(problem.message, nodes)
    if found is None:
        return problem
    (scope, i), name = found
    return Problem(problem.severity, problem.message, problem.source, scope, i, name, problem.value)


def named_node(text: str, nodes: dict[str, tuple[str, int]]) -> tuple[tuple[str, int], str] | None:
    """((scope, position), name) of the first node of ``nodes`` (by name) that ``text`` names."""
    for pattern in _NODE_PATTERNS:
        m = pattern.search(text)
        if m and m.group(1) in nodes:
            return nodes[m.group(1)], m.group(1)
    return None
