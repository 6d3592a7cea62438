"""Node and value names of a model, for the editing API: which node a name refers to and which names are
taken, built once per model state and kept through renames (123k nodes: a walk costs ~60 ms)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass
from operator import attrgetter

from onnx import FunctionProto, GraphProto

from onnxviz.model.editing.target import EditTarget
from onnxviz.model.graph.index import ModelIndex, child_scope, function_scope, subgraphs_of

Body = GraphProto | FunctionProto
_NAME = attrgetter("name")


@dataclass
class _NodeTable:
    """Node names -> (scope, position) for one model state, and the main graph's names by position."""

    generation: int
    table: dict[str, tuple[str, int]]
    main_names: list[str]
    unique: bool  # no two nodes share a name: the table can follow renames exactly


class NameLookup:
    """The names of ``target``'s model, by model state (the document's ``generation``).

    Walks the model itself rather than the index, so an edit right after another does not wait for an
    index rebuild."""

    def __init__(self, target: EditTarget) -> None:
        self.target = target
        self._nodes: _NodeTable | None = None
        self._values: tuple[int, set[str]] | None = None

    def nodes(self, generation: int, index: ModelIndex | None = None) -> dict[str, tuple[str, int]]:
        """Node names to (scope, position), main graph first. ``index``: the model's, when current (it
        knows which nodes hold subgraphs)."""
        cached = self._nodes
        if cached is not None and cached.generation == generation:
            return cached.table
        model = self.target.model
        table: dict[str, tuple[str, int]] = {}
        holders = sorted({i for i, _, _ in index.main.children}) if index is not None else None
        known = list(index.main.node_names()) if index is not None else None  # a copy: renames change ours
        main_names, named = _add_names(table, "", model.graph, holders, known)
        for fn in model.functions:
            named += _add_names(table, function_scope(fn.domain, fn.name, getattr(fn, "overload", "")), fn)[1]
        self._nodes = _NodeTable(generation, table, main_names, unique=named == len(table))
        return table

    def follow_renames(self, nodes: Iterable[int], generation: int) -> None:
        """After an edit that changed at most the names (doc strings, attributes) of these main-graph
        nodes, bring the node table to the model state ``generation`` (one after the table's) instead
        of building it again."""
        cached = self._nodes
        if cached is None or cached.generation != generation - 1:
            return
        graph_nodes = self.target.model.graph.node
        for i in nodes:
            old, new = cached.main_names[i], graph_nodes[i].name
            if old == new:
                continue
            if not cached.unique or (new and new in cached.table):
                self._nodes = None  # a shared name: which node comes first needs the full walk
                return
            cached.table.pop(old, None)
            if new:
                cached.table[new] = ("", i)
            cached.main_names[i] = new
        cached.generation = generation

    def values(self, generation: int) -> set[str]:
        """Every value name defined or used anywhere in the model (one walk per model state)."""
        if self._values is not None and self._values[0] == generation:
            return self._values[1]
        model = self.target.model
        names: set[str] = set()
        _collect_value_names(model.graph, names)
        for fn in model.functions:
            names.update(fn.input)
            names.update(fn.output)
            for n in fn.node:
                names.update(n.input)
                names.update(n.output)
        names.discard("")
        self._values = (generation, names)
        return names


def _add_names(table: dict[str, tuple[str, int]], scope: str, body: Body, holders: list[int] | None = None,
               names: list[str] | None = None) -> tuple[list[str], int]:
    """Names of ``body``'s nodes, and of the bodies they hold, in walk order; the first of a name wins.
    ``holders``, ``names``: the nodes holding subgraphs and the names of ``body``'s nodes, when already known
    (the index knows them). Returns the names of ``body``'s own nodes by position, and how many named nodes
    it holds in all."""
    nodes = body.node
    if names is None:
        names = list(map(_NAME, nodes))
    named = len(names) - names.count("")
    if holders is None:
        holders = [i for i, n in enumerate(nodes) if n.attribute and any(True for _ in subgraphs_of(n))]
    if not holders and not table:  # the common big graph: one C-speed pass, the first of a name kept
        rows = zip(itertools.repeat(scope), reversed(range(len(names))))
        table.update(zip(reversed(names), rows, strict=True))
        table.pop("", None)
        return names, named
    start = 0
    for holder in [*holders, len(nodes)]:
        for i in range(start, min(holder + 1, len(nodes))):
            if names[i] and names[i] not in table:
                table[names[i]] = (scope, i)
        if holder < len(nodes):
            for attr, k, graph in subgraphs_of(nodes[holder]):
                named += _add_names(table, child_scope(scope, holder, attr, k), graph)[1]
        start = holder + 1
    return names, named


def _collect_value_names(graph: GraphProto, names: set[str]) -> None:
    for field in (graph.input, graph.output, graph.value_info, graph.initializer):
        names.update(v.name for v in field)
    names.update(t.values.name for t in graph.sparse_initializer)
    for n in graph.node:
        names.update(n.input)
        names.update(n.output)
        if n.attribute:
            for _, _, body in subgraphs_of(n):
                _collect_value_names(body, names)
