"""Edits of the model as a whole: information fields, metadata, opset version, clean-up."""

from __future__ import annotations

from collections.abc import Sequence

import onnx
from onnx import StringStringEntryProto

from onnxviz.model.editing import cleanup, extraction
from onnxviz.model.editing.base import EditBase, NodeRef
from onnxviz.model.editing.ops import Insert, Op, Remove, ReplaceMessage, SetField
from onnxviz.model.errors import EditError
from onnxviz.model.graph.opschema import opset_version
from onnxviz.model.text import quoted_name

MODEL_FIELDS = ("producer_name", "producer_version", "domain", "model_version", "doc_string")


class ModelEditsMixin(EditBase):
    def set_model_info(self, **fields: str | int) -> None:
        """Set any of producer_name, producer_version, domain, model_version, doc_string in one step."""
        ops: list[Op] = []
        for key, value in fields.items():
            if key not in MODEL_FIELDS:
                raise EditError(f"'{quoted_name(key)}' is not a model field (use one of {', '.join(MODEL_FIELDS)}).")
            if key == "model_version":
                try:
                    value = int(value)
                except (TypeError, ValueError):
                    raise EditError(f"model_version must be a whole number, not {quoted_name(repr(value))}.") from None
            if getattr(self.model, key) != value or not self.model.HasField(key):
                ops.append(SetField((), key, value))
        self._run("Edit model information", ops)

    def set_doc_string(self, node: NodeRef | None, text: str) -> None:
        """Set a node's doc string, or the main graph's when ``node`` is None."""
        if node is None:
            self._run("Edit graph description", [SetField(("graph",), "doc_string", text)])
            return
        scope, i = self.locate(node)
        self._run(f"Edit description of {self.node_label(scope, i)}",
                  [SetField(self.scope_path(scope) + ("node", i), "doc_string", text)])

    def set_metadata(self, key: str, value: str) -> None:
        """Add or change a metadata_props entry."""
        if not key:
            raise EditError("a metadata entry needs a key.")
        for k, entry in enumerate(self.model.metadata_props):
            if entry.key == key:
                if entry.value != value:
                    self._run(f"Set metadata {key}", [SetField(("metadata_props", k), "value", value)])
                return
        entry = StringStringEntryProto(key=key, value=value)
        self._run(f"Add metadata {key}", [Insert(("metadata_props",), len(self.model.metadata_props), entry)])

    def remove_metadata(self, key: str) -> None:
        for k, entry in enumerate(self.model.metadata_props):
            if entry.key == key:
                self._run(f"Remove metadata {key}", [Remove(("metadata_props",), k)])
                return
        raise EditError(f"there is no metadata entry '{quoted_name(key)}'.")

    def convert_opset(self, version: int) -> None:
        """Convert the model to another default-domain opset with ``onnx.version_converter``."""
        current = opset_version(self.model, "")
        if current == version:
            return
        if not 1 <= version <= onnx.defs.onnx_opset_version():
            raise EditError(f"opset {version} does not exist (1..{onnx.defs.onnx_opset_version()}).")
        try:
            converted = onnx.version_converter.convert_version(self.model, version)
        except Exception as exc:  # noqa: BLE001 - the converter raises plain RuntimeErrors
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise EditError(f"the model could not be converted to opset {version}: {first}.", str(exc)) from exc
        self._run(f"Convert to opset {version}", [ReplaceMessage((), converted)])

    # -- clean-up ----------------------------------------------------------------------
    def remove_unused(self, scope: str = "") -> tuple[int, int]:
        """Remove nodes and initializers nothing uses; returns (nodes, initializers) removed."""
        path, graph = self._graph_only(scope)
        ops, nodes, inits = cleanup.unused_ops(path, graph, self.index.graphs[scope])
        self._run(f"Remove unused ({nodes} nodes, {inits} initializers)", ops)
        return nodes, inits

    def sort_topologically(self, scope: str = "") -> bool:
        """Put the nodes in topological order; False if they already were."""
        ops = cleanup.sort_ops(self.scope_path(scope), self.index.graphs[scope])
        self._run("Sort nodes topologically", ops)
        return bool(ops)

    def extract(self, inputs: Sequence[str], outputs: Sequence[str]) -> onnx.ModelProto:
        """A new model of what lies between ``inputs`` and ``outputs`` (this document is unchanged)."""
        return extraction.extract_model(self.model, inputs, outputs)

    def extract_nodes(self, nodes: Sequence[NodeRef]) -> onnx.ModelProto:
        """A new model of these main-graph nodes (this document is unchanged): its inputs are the values they
        read from outside, its outputs those they make that are read outside or are graph outputs; Constants
        feeding them come along. It keeps this model's IR version, opsets, producer, metadata and functions."""
        positions = []
        for ref in nodes:
            scope, i = self.locate(ref)
            if scope:
                raise EditError("only nodes of the main graph can be extracted.")
            positions.append(i)
        return extraction.extract_nodes_model(self.model, self.index, positions)
