"""The public editing API of a document (``doc.edit``): every edit is one undoable command.

Edits check their arguments against the current model first and raise
:class:`~onnxviz.model.errors.EditError` with a one-sentence message, leaving
the model untouched. Node references are described in :mod:`onnxviz.model.editing.finder`.

The :class:`Editor` only names the API and runs commands: the checks and the ops of each edit are
built by the module of its job (:mod:`~onnxviz.model.editing.node_edits`,
:mod:`~onnxviz.model.editing.branch_edits`, :mod:`~onnxviz.model.editing.graph_edits`,
:mod:`~onnxviz.model.editing.model_edits`), as a command, from what a :class:`Finder` finds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx import NodeProto, TensorProto
from onnx.defs import OpSchema

from onnxviz.model.editing import branch_edits, graph_edits, model_edits, node_edits
from onnxviz.model.editing.branch_edits import Branch, Orphans, Side
from onnxviz.model.editing.commands import Command
from onnxviz.model.editing.finder import Body, EditContext, Finder, NodeRef
from onnxviz.model.editing.graph_edits import KEEP
from onnxviz.model.editing.literals import LiteralKind
from onnxviz.model.editing.node_edits import Input
from onnxviz.model.editing.ops import Path
from onnxviz.model.editing.values import Dim

__all__ = ["KEEP", "Branch", "EditContext", "Editor", "NodeRef"]


class Editor:
    """The edits of one document, each one undoable, and the look-ups they take node references by."""

    def __init__(self, context: EditContext) -> None:
        self.find = Finder(context)
        self._execute = context.run

    def _run(self, command: Command) -> None:
        """Execute ``command`` as one undoable step (nothing happens when there is nothing to change, or when
        it would set only what is already there)."""
        if command.ops and not command.unchanged(self.find.context.target):
            self._execute(command)

    # -- finding -------------------------------------------------------------------
    def locate(self, node: NodeRef) -> tuple[str, int]:
        """(scope, position) of a node reference; EditError if there is no such node."""
        return self.find.locate(node)

    def scope_path(self, scope: str) -> Path:
        """Path from the ModelProto to the GraphProto/FunctionProto of ``scope``."""
        return self.find.scope_path(scope)

    def graph_of(self, scope: str) -> Body:
        return self.find.graph_of(scope)

    def node_id(self, i: int) -> str:
        """The stable id of main-graph node ``i``."""
        return self.find.node_id(i)

    def node_proto(self, scope: str, i: int) -> NodeProto:
        return self.find.node_proto(scope, i)

    def node_label(self, scope: str, i: int) -> str:
        """How labels name a node: its name, else op type and id."""
        return self.find.node_label(scope, i)

    def schema_of(self, scope: str, i: int) -> OpSchema | None:
        return self.find.schema_of(scope, i)

    def node_names(self) -> set[str]:
        return self.find.node_names()

    def value_names(self) -> set[str]:
        """Every value name defined or used anywhere in the model."""
        return self.find.value_names()

    def unique_node_name(self, base: str) -> str:
        return self.find.unique_node_name(base)

    def unique_value_name(self, base: str) -> str:
        return self.find.unique_value_name(base)

    # -- attributes ----------------------------------------------------------------
    def set_attribute(self, node: NodeRef, name: str, value: Any) -> None:
        """Set (or add) attribute ``name``; the value is checked against the schema's type first."""
        self._run(node_edits.set_attribute(self.find, node, name, value))

    def add_attribute(self, node: NodeRef, name: str, value: Any = None) -> None:
        """Add an attribute the schema allows, with ``value`` or else the schema's default."""
        self._run(node_edits.add_attribute(self.find, node, name, value))

    def remove_attribute(self, node: NodeRef, name: str) -> None:
        self._run(node_edits.remove_attribute(self.find, node, name))

    def attribute_type(self, node: NodeRef, name: str) -> int | None:
        """The AttributeProto type the schema (or the existing attribute) gives ``name``; None if free."""
        return node_edits.attribute_type(self.find, node, name)

    # -- nodes ---------------------------------------------------------------------
    def rename_node(self, node: NodeRef, new: str) -> None:
        self._run(node_edits.rename_node(self.find, node, new))

    def set_op_type(self, node: NodeRef, op_type: str, domain: str | None = None) -> None:
        """Change the operator; attributes the new schema does not allow show up as problems."""
        self._run(node_edits.set_op_type(self.find, node, op_type, domain))

    def remove_node(self, node: NodeRef, reconnect: bool = False) -> None:
        """Delete a node; with ``reconnect`` its consumers read its single input instead of its output."""
        self._run(node_edits.remove_node(self.find, node, reconnect))

    def insert_node(self, op_type: str, inputs: Sequence[Input], outputs: Sequence[str],
                    attributes: Mapping[str, Any] | None = None, domain: str = "", name: str | None = None,
                    scope: str = "", position: int | None = None, literals: LiteralKind = "initializer") -> str:
        """Add a node; by default right after the last producer of its inputs. Returns its name. An input given
        as numbers (``2.0``, ``[1, 2, 3]``, an array) becomes a new initializer, or a Constant node with
        ``literals="constant"``, in the same step, typed as the input takes it."""
        command, node_name = node_edits.insert_node(self.find, op_type, inputs, outputs, attributes, domain, name,
                                                    scope, position, literals)
        self._run(command)
        return node_name

    def insert_on_value(self, value: str, op_type: str, attributes: Mapping[str, Any] | None = None,
                        domain: str = "", name: str | None = None, scope: str = "",
                        consumers: Sequence[NodeRef] | None = None, extra_inputs: Sequence[Input] = (),
                        literals: LiteralKind = "initializer") -> str:
        """Put a new node on the edge ``value`` -> consumers (all of them by default); returns its name.

        The node reads ``value`` first, then ``extra_inputs`` ("" leaves an optional one empty; numbers become
        a new initializer, or a Constant with ``literals="constant"``, as in :meth:`insert_node`). When
        ``value`` is a graph output made by a node, the new node takes over its name (the producer's
        output is renamed), so the graph's outputs keep their names and now come from the new node.
        Reading a value made from its own output (a cycle) is refused.
        """
        command, node_name = node_edits.insert_on_value(self.find, value, op_type, attributes, domain, name, scope,
                                                        consumers, extra_inputs, literals)
        self._run(command)
        return node_name

    def set_input(self, node: NodeRef, index: int, value: Input, literals: LiteralKind = "initializer") -> None:
        """Make input ``index`` of a node read ``value`` ("" leaves an optional input empty; numbers become a new
        initializer or Constant, as in :meth:`insert_node`). A cycle is refused."""
        self._run(node_edits.set_input(self.find, node, index, value, literals))

    # -- branches --------------------------------------------------------------------
    def node_branch(self, node: NodeRef, side: Side) -> Branch:
        """The nodes :meth:`remove_node_with_inputs` (``side="inputs"``) or :meth:`remove_node_with_outputs`
        (``"outputs"``) would delete, without changing anything."""
        return branch_edits.node_branch(self.find, node, side)

    def remove_node_with_inputs(self, node: NodeRef, orphans: Orphans = "keep") -> Branch:
        """Delete a node and every node that feeds only it (a whole pre-processing branch), with the
        initializers only they read, as one command. Returns what went. ``orphans``: what becomes of the graph
        outputs they made (see :meth:`remove_node_with_outputs`)."""
        return self._remove_branch(self.node_branch(node, "inputs"), orphans)

    def remove_node_with_outputs(self, node: NodeRef, orphans: Orphans = "keep") -> Branch:
        """Delete a node and every node that only it feeds (a whole post-processing branch), with the
        initializers only they read, as one command. Returns what went. The graph outputs they made are kept
        (``orphans="keep"``: each is a problem), removed (``"remove"``) or replaced by the node's first input
        (``"repoint"``: the model then ends where the branch began)."""
        return self._remove_branch(self.node_branch(node, "outputs"), orphans)

    def _remove_branch(self, branch: Branch, orphans: Orphans) -> Branch:
        self._run(branch_edits.remove_branch(self.find, branch, orphans))
        return branch

    # -- values ----------------------------------------------------------------------
    def rename_value(self, old: str, new: str, scope: str = "") -> None:
        """Rename a value everywhere it is defined and used, subgraphs reading it included."""
        self._run(graph_edits.rename_value(self.find, old, new, scope))

    def add_input(self, name: str, dtype: Any = "float32", shape: list[Dim] | None = None, scope: str = "") -> None:
        self._run(graph_edits.add_input(self.find, name, dtype, shape, scope))

    def remove_input(self, name: str, scope: str = "") -> None:
        self._run(graph_edits.remove_input(self.find, name, scope))

    def add_output(self, value: str, scope: str = "") -> None:
        """Mark a value as a graph output, typed as declared or inferred."""
        self._run(graph_edits.add_output(self.find, value, scope))

    def remove_output(self, name: str, scope: str = "") -> None:
        self._run(graph_edits.remove_output(self.find, name, scope))

    def set_value_type(self, name: str, dtype: Any = KEEP, shape: list[Dim] | None = KEEP, scope: str = "") -> None:
        """Change the declared element type and/or shape (ints, dim_param strings, None = unknown); graph outputs
        and value_info downstream that no longer hold are restated in the same step."""
        self._run(graph_edits.set_value_type(self.find, name, dtype, shape, scope))

    def set_dimension(self, name: str, axis: int, dim: Dim, scope: str = "") -> None:
        """Make dimension ``axis`` of graph input ``name`` static (an int) or dynamic (a name such as "batch"),
        carried to every graph output and value_info that shares it, in one step."""
        self._run(graph_edits.set_dimension(self.find, name, axis, dim, scope))

    # -- weights and constants ---------------------------------------------------------
    def replace_initializer(self, name: str, array: np.ndarray, scope: str = "", force: bool = False,
                            cast: bool = False) -> None:
        """Replace an initializer's data. A different dtype or shape is refused unless ``force``; ``cast``
        first converts the array to the initializer's dtype (refused when a value does not fit)."""
        self._run(graph_edits.replace_initializer(self.find, name, array, scope, force, cast))

    def add_initializer(self, name: str, value: Any, dtype: Any = None, scope: str = "",
                        feed: tuple[NodeRef, int] | None = None) -> str:
        """A new initializer ``name`` holding ``value`` (numbers or an array), of ``dtype`` if given (a checked
        cast); with ``feed=(node, input)`` that input reads it, in the same step. Returns its name."""
        command = graph_edits.add_tensor(self.find, name, value, dtype, scope, feed, "initializer")
        self._run(command)
        return name

    def insert_constant(self, name: str, value: Any, dtype: Any = None, scope: str = "",
                        feed: tuple[NodeRef, int] | None = None) -> str:
        """A new Constant node making ``name`` (see :meth:`add_initializer`); it goes just before the node it
        feeds, else first. Returns the value's name."""
        command = graph_edits.add_tensor(self.find, name, value, dtype, scope, feed, "constant")
        self._run(command)
        return name

    def initializer_proto(self, name: str, scope: str = "") -> TensorProto:
        """The initializer named ``name`` (read it; change it through the edits)."""
        return graph_edits.initializer_proto(self.find, name, scope)

    def initializer_dtype(self, name: str, scope: str = "") -> np.dtype:
        """The numpy dtype of an initializer's data (object for strings)."""
        return graph_edits.initializer_dtype(self.find, name, scope)

    def constant_to_initializer(self, node: NodeRef) -> None:
        self.constants_to_initializers([node])

    def constants_to_initializers(self, nodes: Sequence[NodeRef]) -> None:
        """Turn Constant nodes (of one graph) into initializers of the same names, as one command."""
        self._run(graph_edits.constants_to_initializers(self.find, nodes))

    def constant_feeders(self, node: NodeRef) -> list[tuple[str, int]]:
        """The Constant nodes feeding ``node`` and nothing that is a graph output (those the canvas shows
        inside its box), in graph order."""
        return graph_edits.constant_feeders(self.find, node)

    def initializer_to_constant(self, name: str, scope: str = "") -> str:
        """Turn an initializer into a Constant node at the top of the graph; returns the node's name."""
        command, node_name = graph_edits.initializer_to_constant(self.find, name, scope)
        self._run(command)
        return node_name

    # -- the model as a whole ------------------------------------------------------------
    def set_model_info(self, **fields: str | int) -> None:
        """Set any of producer_name, producer_version, domain, model_version, doc_string in one step."""
        self._run(model_edits.set_model_info(self.find, **fields))

    def set_doc_string(self, node: NodeRef | None, text: str) -> None:
        """Set a node's doc string, or the main graph's when ``node`` is None."""
        self._run(model_edits.set_doc_string(self.find, node, text))

    def set_metadata(self, key: str, value: str) -> None:
        """Add or change a metadata_props entry."""
        self._run(model_edits.set_metadata(self.find, key, value))

    def remove_metadata(self, key: str) -> None:
        self._run(model_edits.remove_metadata(self.find, key))

    def convert_opset(self, version: int) -> None:
        """Convert the model to another default-domain opset with ``onnx.version_converter``."""
        self._run(model_edits.convert_opset(self.find, version))

    def remove_unused(self, scope: str = "") -> tuple[int, int]:
        """Remove nodes and initializers nothing uses; returns (nodes, initializers) removed."""
        command, nodes, inits = model_edits.remove_unused(self.find, scope)
        self._run(command)
        return nodes, inits

    def sort_topologically(self, scope: str = "") -> bool:
        """Put the nodes in topological order; False if they already were."""
        command = model_edits.sort_topologically(self.find, scope)
        self._run(command)
        return bool(command.ops)

    def extract(self, inputs: Sequence[str], outputs: Sequence[str]) -> onnx.ModelProto:
        """A new model of what lies between ``inputs`` and ``outputs`` (this document is unchanged)."""
        return model_edits.extract(self.find, inputs, outputs)

    def extract_nodes(self, nodes: Sequence[NodeRef]) -> onnx.ModelProto:
        """A new model of these main-graph nodes (this document is unchanged): its inputs are the values they
        read from outside, its outputs those they make that are read outside or are graph outputs; Constants
        feeding them come along. It keeps this model's IR version, opsets, producer, metadata and functions."""
        return model_edits.extract_nodes(self.find, nodes)
