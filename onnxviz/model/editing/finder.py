"""What every edit needs of a document (:class:`EditContext`) and finding nodes, graphs and names in it (:class:`Finder`).

Node references accepted by the editing API (``NodeRef``):

* the node's name (the first node with that name, main graph first);
* a stable id ``"#17"`` of a main-graph node: ids are given at load in file
  order and new nodes get fresh ones, so an id keeps naming the same node
  while others are inserted or deleted (``doc.edit.node_id(i)``);
* an int: a position in the main graph;
* ``(scope, position)`` for any graph, scopes as in :mod:`onnxviz.model.graph.index`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import onnx
from onnx import AttributeProto, FunctionProto, GraphProto, NodeProto
from onnx.defs import OpSchema

from onnxviz.model.background.contained import NativeCrash, inferred_types
from onnxviz.model.background.procpool import EDITS
from onnxviz.model.editing.commands import Command
from onnxviz.model.editing.names import NameLookup
from onnxviz.model.editing.ops import Path, resolve
from onnxviz.model.editing.restate import Types
from onnxviz.model.editing.target import EditTarget
from onnxviz.model.errors import EditError
from onnxviz.model.graph.index import ModelIndex, function_scope
from onnxviz.model.graph.opschema import node_schema
from onnxviz.model.graph.validation import without_big_weights
from onnxviz.model.text import quoted_name

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


@dataclass(frozen=True)
class EditContext:
    """What the editing API needs of a document; :class:`~onnxviz.model.document.Document` gives it."""

    target: EditTarget                            # the model and its main-graph node ids
    names: NameLookup                             # node and value names by model state
    index: Callable[[], ModelIndex]               # the model's index (built when asked)
    built_index: Callable[[], ModelIndex | None]  # the index if it is built and current
    generation: Callable[[], int]                 # the model state, bumped by every change
    run: Callable[[Command], None]                # apply a command, record it for undo, notify


class Finder:
    """Finds graphs, nodes and names in the context's model; changes nothing."""

    def __init__(self, context: EditContext) -> None:
        self.context = context
        self._inferred: tuple[int, dict[str, dict[str, Any]]] | None = None  # (model state, types by scope)

    @property
    def model(self) -> onnx.ModelProto:
        return self.context.target.model

    @property
    def node_ids(self) -> list[str]:
        return self.context.target.node_ids

    @property
    def index(self) -> ModelIndex:
        return self.context.index()

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

    def graph_only(self, scope: str) -> tuple[Path, GraphProto]:
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
            found = found or self.node_table().get(node)
            if found is not None:
                return found
        raise EditError(f"there is no node {quoted_name(repr(node))}.")

    def node_id(self, i: int) -> str:
        """The stable id of main-graph node ``i``."""
        return self.node_ids[i]

    def node_path(self, scope: str, i: int) -> Path:
        return self.scope_path(scope) + ("node", i)

    def node_proto(self, scope: str, i: int) -> NodeProto:
        return self.graph_of(scope).node[i]

    def node_label(self, scope: str, i: int) -> str:
        """How labels name a node: its name, else op type and id."""
        n = self.node_proto(scope, i)
        if n.name:
            return n.name
        return f"{n.op_type} {self.node_ids[i]}" if scope == "" else f"{n.op_type} #{i} in {scope}"

    def current_type(self, scope: str, name: str) -> Any:
        """The TypeProto of a value as declared, else as shape inference finds it on the model as it is now (the
        index's inferred types may be those of a state before the last edits, until validation catches up)."""
        declared = self.index.graphs[scope].declared.get(name) if scope in self.index.graphs else None
        if declared is not None:
            return declared
        return self._inferred_now().get(scope, {}).get(name) or self.index.type_of(scope, name)[0]

    def _inferred_now(self) -> dict[str, dict[str, Any]]:
        """Shape inference's types for the model as it is (run once per model state), in the edits' worker: a
        crash of onnx's C++ there types nothing, and ends nothing here."""
        generation = self.context.generation()
        if self._inferred is None or self._inferred[0] != generation:
            try:
                types = inferred_types(without_big_weights(self.model), role=EDITS).types
            except NativeCrash:
                types = {}
            self._inferred = (generation, types)
        return self._inferred[1]

    def local_type(self, scope: str, name: str) -> Any:
        """The TypeProto of a value as declared or inferred by the index, else found by inferring its maker
        alone (a few makers up, :class:`~onnxviz.model.editing.restate.Types`): cheap on any model."""
        t, _ = self.index.type_of(scope, name)
        path = self.scope_path(scope)
        if t is not None or path[0] == "functions" or scope not in self.index.graphs:
            return t
        return Types(resolve(self.model, path), self.index.graphs[scope], lambda x: self.index.type_of(scope, x)[0],
                     self.model.opset_import)(name)

    def known_type(self, scope: str, name: str) -> Any:
        """The TypeProto of a value as declared, else as shape inference finds it: the index's inferred types,
        else inference run now on the model as it is (once per model state); None if neither tells."""
        t, _ = self.index.type_of(scope, name)
        if t is not None:
            return t
        return self._inferred_now().get(scope, {}).get(name)

    def schema_of(self, scope: str, i: int) -> OpSchema | None:
        return node_schema(self.model, self.node_proto(scope, i))

    def _find_by_id(self, node_id: str) -> tuple[str, int] | None:
        try:
            return "", self.node_ids.index(node_id)
        except ValueError:
            return None

    def node_table(self) -> dict[str, tuple[str, int]]:
        """Node names to (scope, position), main graph first (see :class:`NameLookup`)."""
        context = self.context
        return context.names.nodes(context.generation(), context.built_index())

    def node_names(self) -> set[str]:
        return set(self.node_table())

    def value_names(self) -> set[str]:
        """Every value name defined or used anywhere in the model."""
        return self.context.names.values(self.context.generation())

    def unique_node_name(self, base: str) -> str:
        taken = self.node_table()
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

    def require_new_value(self, name: str) -> None:
        if not name:
            raise EditError("a value needs a non-empty name.")
        if name in self.value_names():
            raise EditError(f"a value named '{quoted_name(name)}' already exists; choose another name.")
