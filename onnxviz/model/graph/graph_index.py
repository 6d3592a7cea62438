"""The index of one graph (or function body): its nodes, who produces and who reads each value, its bodies
and its problems (:class:`~onnxviz.model.graph.index.ModelIndex` builds one per graph). Apart from the model's
index so that the checks (:mod:`~onnxviz.model.graph.checks`), which the model's index runs, can read it
without importing the module that imports them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import attrgetter

from onnx import FunctionProto, GraphProto, NodeProto, TypeProto

from onnxviz.model.io.slices import map_in_slices
from onnxviz.model.problems import Problem

GRAPH_INPUT = -1
INITIALIZER = -2
OUTER_SCOPE = -3
_NAME = attrgetter("name")


@dataclass
class GraphIndex:
    """The index of one graph (or function body)."""

    scope: str
    nodes: Sequence[NodeProto]
    input_names: list[str]
    output_names: list[str]
    initializer_names: list[str]
    parent: GraphIndex | None = None
    graph: GraphProto | None = None
    function: FunctionProto | None = None
    producer: dict[str, int] = field(default_factory=dict)
    consumers: dict[str, list[int]] = field(default_factory=dict)
    declared: dict[str, TypeProto] = field(default_factory=dict)
    outer_reads: set[str] = field(default_factory=set)
    children: list[tuple[int, str, str]] = field(default_factory=list)  # (node, attr label, scope)
    problems: list[Problem] = field(default_factory=list)
    unsorted: bool = False
    cyclic_nodes: list[int] = field(default_factory=list)
    attribute_holders: list[int] = field(default_factory=list)  # nodes with at least one attribute
    undecodable_ops: bool = False  # an op_type or domain is not valid UTF-8 (see model_checks)
    undecodable_nodes: bool = False  # a node's name or output is not (structure_only: read with the rest)
    read_names: list[str] | None = None  # see node_names

    def node_names(self) -> list[str]:
        """The nodes' names by position, read once (the text check and the editing API's name table both
        want them) and kept through renames (:meth:`ModelIndex.refresh_nodes`). Not to be changed."""
        if self.read_names is None:
            self.read_names = map_in_slices(_NAME, self.nodes)
        return self.read_names

    def defines(self, name: str) -> bool:
        """True if ``name`` is defined in this graph or an enclosing one."""
        scope: GraphIndex | None = self
        while scope is not None:
            if name in scope.producer:
                return True
            scope = scope.parent
        return False

    def producer_of(self, name: str) -> int:
        """Node position producing ``name``; GRAPH_INPUT, INITIALIZER, OUTER_SCOPE, or -4 if undefined."""
        return self.producer.get(name, OUTER_SCOPE if self.parent and self.parent.defines(name) else -4)

    def roles_of(self, name: str) -> list[str]:
        """What ``name`` is in this graph, in words: an initializer that is also a graph input is an
        overridable default (IR spec); values no node, input or initializer defines say so."""
        kind = self.producer_of(name)
        initializer, graph_input = kind == INITIALIZER or name in self.initializer_names, name in self.input_names
        roles = ["overridable default (graph input with an initializer)"] if initializer and graph_input else \
            ["initializer"] if initializer else ["graph input"] if graph_input else []
        if name in self.output_names:
            roles.append("graph output")
        if kind >= 0 and not roles:
            roles.append("intermediate value")
        elif kind == OUTER_SCOPE:
            roles.append("from an enclosing graph")
        elif kind == -4:
            roles.append("not defined anywhere")
        return roles

    def consumers_of(self, name: str) -> list[int]:
        return self.consumers.get(name, [])

    def node_label(self, i: int) -> str:
        node = self.nodes[i]
        return node.name or f"{node.op_type}#{i}"
