"""What every edit needs: finding nodes, graphs and names, and running a list of ops as one command.

Node references accepted by the editing API (``NodeRef``):

* the node's name (the first node with that name, main graph first);
* a stable id ``"#17"`` of a main-graph node: ids are given at load in file
  order and new nodes get fresh ones, so an id keeps naming the same node
  while others are inserted or deleted (``doc.node_id(i)``);
* an int: a position in the main graph;
* ``(scope, position)`` for any graph, scopes as in :mod:`onnxviz.model.graph.index`.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import onnx
from onnx import AttributeProto, FunctionProto, GraphProto, NodeProto

from onnxviz.model.editing.ops import EditCommand, Op, Path, resolve
from onnxviz.model.errors import EditError
from onnxviz.model.graph.index import ModelIndex, child_scope, function_scope, subgraphs_of
from onnxviz.model.graph.opschema import node_schema
from onnxviz.model.text import quoted_name

if TYPE_CHECKING:
    from onnx.defs import OpSchema

    from onnxviz.model.editing.commands import Command

NodeRef = str | int | tuple[str, int]
Body = GraphProto | FunctionProto
_STEP = re.compile(r"^(\d+)\.([^\[\]]+)(?:\[(\d+)\])?$")


def graph_bodies(node_path: Path, node: NodeProto) -> Iterator[tuple[Path, GraphProto]]:
    """(path, graph) of every body held by the node at ``node_path``."""
    for a, attr in enumerate(node.attribute):
        if attr.type == AttributeProto.GRAPH or (attr.type == 0 and attr.HasField("g")):
            yield node_path + ("attribute", a, "g"), attr.g
        elif attr.type == AttributeProto.GRAPHS:
            for k, g in enumerate(attr.graphs):
                yield node_path + ("attribute", a, "graphs", k), g


def _add_names(table: dict[str, tuple[str, int]], scope: str, body: Body, holders: list[int] | None = None
               ) -> tuple[list[str], int]:
    """Names of ``body``'s nodes, and of the bodies they hold, in walk order; the first of a name wins.
    ``holders``: the nodes holding subgraphs, when already known (the index knows them).
    Returns the names of ``body``'s own nodes by position, and how many named nodes it holds in all."""
    nodes = body.node
    names = [n.name for n in nodes]
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


@dataclass
class _NameLookup:
    """Node names -> (scope, position) for one model state, and the main graph's names by position."""

    generation: int
    table: dict[str, tuple[str, int]]
    main_names: list[str]
    unique: bool  # no two nodes share a name: the table can follow renames exactly


class EditBase:
    """Shared helpers of the editing mixins; the Document provides the attributes below."""

    model: onnx.ModelProto
    node_ids: list[str]
    generation: int
    _lookup_cache: _NameLookup | None = None

    if TYPE_CHECKING:  # provided by Document
        @property
        def index(self) -> ModelIndex: ...

        def execute(self, command: Command) -> None: ...

        def new_node_id(self) -> str: ...

    # -- running -------------------------------------------------------------------
    def _run(self, label: str, ops: Sequence[Op]) -> None:
        """Execute ``ops`` as one undoable command (nothing happens when there is nothing to change)."""
        if ops:
            self.execute(EditCommand(label, ops))

    # -- graphs --------------------------------------------------------------------
    def scope_path(self, scope: str) -> Path:
        """Path from the ModelProto to the GraphProto/FunctionProto of ``scope``."""
        if scope == "":
            return ("graph",)
        if scope.startswith("fn:"):
            for k, fn in enumerate(self.model.functions):
                if function_scope(fn.domain, fn.name, getattr(fn, "overload", "")) == scope:
                    return ("functions", k)
            raise EditError(f"there is no local function {quoted_name(scope[3:])}.")
        path: Path = ("graph",)
        graph: Any = self.model.graph
        for step in scope.split("/"):
            m = _STEP.match(step)
            if not m or int(m.group(1)) >= len(graph.node):
                raise EditError(f"there is no subgraph '{quoted_name(scope)}'.")
            i, attr_name, in_list = int(m.group(1)), m.group(2), m.group(3)  # in_list: index in GRAPHS
            node = graph.node[i]
            a = next((a for a, at in enumerate(node.attribute) if at.name == attr_name), None)
            if a is None:
                raise EditError(f"there is no subgraph '{quoted_name(scope)}'.")
            path = path + ("node", i, "attribute", a) + (("g",) if in_list is None else ("graphs", int(in_list)))
            graph = node.attribute[a].g if in_list is None else node.attribute[a].graphs[int(in_list)]
        return path

    def graph_of(self, scope: str) -> Body:
        return resolve(self.model, self.scope_path(scope))

    def _graph_only(self, scope: str) -> tuple[Path, GraphProto]:
        path = self.scope_path(scope)
        if path[0] == "functions":
            raise EditError("function bodies have no typed inputs, outputs or initializers to edit.")
        return path, resolve(self.model, path)

    # -- nodes ---------------------------------------------------------------------
    def locate(self, node: NodeRef) -> tuple[str, int]:
        """(scope, position) of a node reference; EditError if there is no such node."""
        if isinstance(node, tuple):
            scope, i = node
            if 0 <= i < len(self.graph_of(scope).node):
                return scope, i
        elif isinstance(node, int):
            if 0 <= node < len(self.model.graph.node):
                return "", node
        elif isinstance(node, str):
            found = self._find_by_id(node) if node.startswith("#") else None
            found = found or self._lookup().get(node)
            if found is not None:
                return found
        raise EditError(f"there is no node {quoted_name(repr(node))}.")

    def node_id(self, i: int) -> str:
        """The stable id of main-graph node ``i``."""
        return self.node_ids[i]

    def node_proto(self, scope: str, i: int) -> NodeProto:
        return self.graph_of(scope).node[i]

    def node_label(self, scope: str, i: int) -> str:
        """How labels name a node: its name, else op type and id."""
        n = self.node_proto(scope, i)
        if n.name:
            return n.name
        return f"{n.op_type} {self.node_ids[i]}" if scope == "" else f"{n.op_type} #{i} in {scope}"

    def schema_of(self, scope: str, i: int) -> OpSchema | None:
        return node_schema(self.model, self.node_proto(scope, i))

    def _find_by_id(self, node_id: str) -> tuple[str, int] | None:
        try:
            return "", self.node_ids.index(node_id)
        except ValueError:
            return None

    def _lookup(self) -> dict[str, tuple[str, int]]:
        """Node names to (scope, position), main graph first; built once per model state and kept
        through renames (see :meth:`_follow_renames`).

        Walks the model itself rather than the index, so an edit right after
        another does not wait for an index rebuild.
        """
        cached = self._lookup_cache
        if cached is not None and cached.generation == self.generation:
            return cached.table
        table: dict[str, tuple[str, int]] = {}
        index = getattr(self, "_index", None)  # current when set: edits drop it when they change structure
        holders = sorted({i for i, _, _ in index.main.children}) if index is not None else None
        main_names, named = _add_names(table, "", self.model.graph, holders)
        for fn in self.model.functions:
            named += _add_names(table, function_scope(fn.domain, fn.name, getattr(fn, "overload", "")), fn)[1]
        self._lookup_cache = _NameLookup(self.generation, table, main_names, unique=named == len(table))
        return table

    def _follow_renames(self, nodes: Iterable[int]) -> None:
        """After an edit that changed at most the names (doc strings, attributes) of these main-graph
        nodes, bring the name table to the new model state instead of building it again (123k
        nodes: 60 ms per rename). Call with the generation already moved on by one."""
        cached = self._lookup_cache
        if cached is None or cached.generation != self.generation - 1:
            return
        graph_nodes = self.model.graph.node
        for i in nodes:
            old, new = cached.main_names[i], graph_nodes[i].name
            if old == new:
                continue
            if not cached.unique or (new and new in cached.table):
                self._lookup_cache = None  # a shared name: which node comes first needs the full walk
                return
            cached.table.pop(old, None)
            if new:
                cached.table[new] = ("", i)
            cached.main_names[i] = new
        cached.generation = self.generation

    def node_names(self) -> set[str]:
        return set(self._lookup())

    def value_names(self) -> set[str]:
        """Every value name defined or used anywhere in the model (one walk, cached per model state)."""
        cached = getattr(self, "_value_names_cache", None)
        if cached is not None and cached[0] == self.generation:
            return cached[1]
        names: set[str] = set()
        _collect_value_names(self.model.graph, names)
        for fn in self.model.functions:
            names.update(fn.input)
            names.update(fn.output)
            for n in fn.node:
                names.update(n.input)
                names.update(n.output)
        names.discard("")
        self._value_names_cache = (self.generation, names)
        return names

    def unique_node_name(self, base: str) -> str:
        taken = self._lookup()
        k = 0
        while f"{base}_{k}" in taken:
            k += 1
        return f"{base}_{k}"

    def unique_value_name(self, base: str) -> str:
        taken = self.value_names()
        if base not in taken:
            return base
        k = 1
        while f"{base}_{k}" in taken:
            k += 1
        return f"{base}_{k}"

    def _require_new_value(self, name: str) -> None:
        if not name:
            raise EditError("a value needs a non-empty name.")
        if name in self.value_names():
            raise EditError(f"a value named '{quoted_name(name)}' already exists; choose another name.")


def _collect_value_names(graph: GraphProto, names: set[str]) -> None:
    for field in (graph.input, graph.output, graph.value_info, graph.initializer):
        names.update(v.name for v in field)
    names.update(t.values.name for t in graph.sparse_initializer)
    for n in graph.node:
        names.update(n.input)
        names.update(n.output)
        if n.attribute:
            for _, body in graph_bodies((), n):
                _collect_value_names(body, names)
