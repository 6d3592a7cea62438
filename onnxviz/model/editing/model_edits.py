"""Edits of the model as a whole: information fields, metadata, opset version, clean-up (each function
returns the command without changing anything), and extracting part of it as a new model."""

from __future__ import annotations

from collections.abc import Sequence

import onnx
from onnx import StringStringEntryProto

from onnxviz.model.background import contained
from onnxviz.model.editing import cleanup, extraction
from onnxviz.model.editing.commands import Command
from onnxviz.model.editing.finder import Finder, NodeRef
from onnxviz.model.editing.ops import Insert, Op, Remove, ReplaceMessage, SetField
from onnxviz.model.errors import EditError
from onnxviz.model.graph.opschema import opset_version
from onnxviz.model.text import quoted_name

MODEL_FIELDS = ("producer_name", "producer_version", "domain", "model_version", "doc_string")


def set_model_info(find: Finder, **fields: str | int) -> Command:
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
        if getattr(find.model, key) != value or not find.model.HasField(key):
            ops.append(SetField((), key, value))
    return Command("Edit model information", ops)


def set_doc_string(find: Finder, node: NodeRef | None, text: str) -> Command:
    """Set a node's doc string, or the main graph's when ``node`` is None."""
    if node is None:
        return Command("Edit graph description", [SetField(("graph",), "doc_string", text)])
    scope, i = find.locate(node)
    return Command(f"Edit description of {find.node_label(scope, i)}",
                   [SetField(find.scope_path(scope) + ("node", i), "doc_string", text)])


def set_metadata(find: Finder, key: str, value: str) -> Command:
    """Add or change a metadata_props entry."""
    if not key:
        raise EditError("a metadata entry needs a key.")
    for k, entry in enumerate(find.model.metadata_props):
        if entry.key == key:
            if entry.value != value:
                return Command(f"Set metadata {key}", [SetField(("metadata_props", k), "value", value)])
            return Command("", [])
    entry = StringStringEntryProto(key=key, value=value)
    return Command(f"Add metadata {key}", [Insert(("metadata_props",), len(find.model.metadata_props), entry)])


def remove_metadata(find: Finder, key: str) -> Command:
    for k, entry in enumerate(find.model.metadata_props):
        if entry.key == key:
            return Command(f"Remove metadata {key}", [Remove(("metadata_props",), k)])
    raise EditError(f"there is no metadata entry '{quoted_name(key)}'.")


def convert_opset(find: Finder, version: int) -> Command:
    """Convert the model to another default-domain opset with ``onnx.version_converter``."""
    current = opset_version(find.model, "")
    if current == version:
        return Command("", [])
    if not 1 <= version <= onnx.defs.onnx_opset_version():
        raise EditError(f"opset {version} does not exist (1..{onnx.defs.onnx_opset_version()}).")
    try:
        converted = contained.converted(find.model, version)  # in the worker process: a crash is an EditError
    except Exception as exc:  # noqa: BLE001 - the converter raises plain RuntimeErrors
        first = str(exc).strip().splitlines()[0].rstrip(".") if str(exc).strip() else type(exc).__name__
        raise EditError(f"the model could not be converted to opset {version}: {first}.", str(exc)) from exc
    return Command(f"Convert to opset {version}", [ReplaceMessage((), converted)])


# -- clean-up ----------------------------------------------------------------------
def remove_unused(find: Finder, scope: str = "") -> tuple[Command, int, int]:
    """Remove nodes and initializers nothing uses; also returns how many (nodes, initializers) it removes."""
    path, graph = find.graph_only(scope)
    ops, nodes, inits = cleanup.unused_ops(path, graph, find.index.graphs[scope])
    return Command(f"Remove unused ({nodes} nodes, {inits} initializers)", ops), nodes, inits


def sort_topologically(find: Finder, scope: str = "") -> Command:
    """Put the nodes in topological order (no ops if they already were)."""
    ops = cleanup.sort_ops(find.scope_path(scope), find.index.graphs[scope])
    return Command("Sort nodes topologically", ops)


def extract(find: Finder, inputs: Sequence[str], outputs: Sequence[str]) -> onnx.ModelProto:
    """A new model of what lies between ``inputs`` and ``outputs`` (this document is unchanged)."""
    return extraction.extract_model(find.model, inputs, outputs)


def extract_nodes(find: Finder, nodes: Sequence[NodeRef]) -> onnx.ModelProto:
    """A new model of these main-graph nodes (this document is unchanged): its inputs are the values they
    read from outside, its outputs those they make that are read outside or are graph outputs; Constants
    feeding them come along. It keeps this model's IR version, opsets, producer, metadata and functions."""
    positions = []
    for ref in nodes:
        scope, i = find.locate(ref)
        if scope:
            raise EditError("only nodes of the main graph can be extracted.")
        positions.append(i)
    return extraction.extract_nodes_model(find.model, find.index, positions)


