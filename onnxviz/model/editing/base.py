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

import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import onnx
from onnx import AttributeProto, FunctionProto, GraphProto, NodeProto

from onnxviz.model.editing.ops import Command, Op, Path, resolve
from onnxviz.model.errors import EditError
from onnxviz.model.graph.index import ModelIndex, function_scope
from onnxviz.model.graph.opschema import node_schema
from onnxviz.model.text import quoted_name

if TYPE_CHECKING:
    from onnx.defs import OpSchema

    from onnxviz.model.editing.names import NameLookup



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


class EditBase:
    """Shared helpers of the editing mixins, on the Document's core (declared here for the type checker)."""

    if TYPE_CHECKING:  # the Document's core
        generation: int
        names: NameLookup

        @property
        def model(self) -> onnx.ModelProto: ...

        @property
        def node_ids(self) -> list[str]: ...

        @property
        def index(self) -> ModelIndex: ...

        @property
        def built_index(self) -> ModelIndex | None: ...

        def execute(self, command: Command) -> None: ...

        def new_node_id(self) -> str: ...

    # -- running -------------------------------------------------------------------
    def _run(self, label: str, ops: Sequence[Op]) -> None:
        """Execute ``ops`` as one undoable command (nothing happens when there is nothing to change)."""
        if ops:
            self.execute(Command(label, ops))

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
        """Node names to (scope, position), main graph first (see :class:`NameLookup`)."""
        return self.names.nodes(self.generation, self.built_index)

    def node_names(self) -> set[str]:
        return set(self._lookup())

    def value_names(self) -> set[str]:
        """Every value name defined or used anywhere in the model."""
        return self.names.values(self.generation)

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
