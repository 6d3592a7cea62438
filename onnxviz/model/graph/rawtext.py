"""Protobuf text (what ``protoc --decode=onnx.ModelProto`` prints) of a node, a value or the model.

Text is built from trimmed copies: tensor payloads are capped at a few bytes,
big graphs keep their first nodes only, and the text itself is cut at a
character limit, each with a ``#`` comment saying what was left out. The
document's protos are only read, never changed, so this can run off the GUI thread.
"""

from __future__ import annotations

from dataclasses import dataclass

import onnx
from google.protobuf import text_format
from google.protobuf.message import Message

from onnxviz.model.errors import OnnxvizError
from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.graph.tensors import TYPED_FIELDS, element_dtype, packed_nbytes, tensor_numel
from onnxviz.model.io.external import iter_all_tensors
from onnxviz.model.progress import CancelToken

MAX_TENSOR_BYTES = 64
MAX_NODES = 2000
MAX_CHARS = 1_000_000


@dataclass(frozen=True)
class RawText:
    text: str
    truncated: bool


def _copy_except(src: Message, dst: Message, skip: set[str]) -> None:
    """Copy every set field of ``src`` into ``dst`` except those named in ``skip``."""
    for fd, value in src.ListFields():
        if fd.name in skip:
            continue
        target = getattr(dst, fd.name)
        if hasattr(target, "extend"):  # repeated field, scalar or message
            target.extend(value)
        elif fd.message_type is not None:
            target.CopyFrom(value)
        else:
            setattr(dst, fd.name, value)


def _cap_tensor(t: onnx.TensorProto, max_bytes: int) -> bool:
    """Shorten the payload of a tensor copy in place; True if something was cut."""
    cut = False
    if len(t.raw_data) > max_bytes:
        t.raw_data = t.raw_data[:max_bytes]
        cut = True
    for name in TYPED_FIELDS:
        field = getattr(t, name)
        if len(field) > max_bytes // 4:
            del field[max(max_bytes // 4, 1):]
            cut = True
    return cut


def _capped_tensor(t: onnx.TensorProto, max_bytes: int) -> tuple[onnx.TensorProto, bool]:
    """A copy of ``t`` whose data is cut to ``max_bytes``. A big ``raw_data`` is never read (reading the
    field copies it whole while holding the GIL): it is left out and reported as cut."""
    copy = onnx.TensorProto()
    _copy_small(t, copy)
    cut = False
    if t.HasField("raw_data"):
        expected = _expected_bytes(t)
        if expected is not None and expected <= 4 * max_bytes:
            copy.raw_data = t.raw_data[:max_bytes + 1]
        else:
            cut = True
    for name in TYPED_FIELDS:
        getattr(copy, name).extend(getattr(t, name)[:max_bytes // 4 + 1])
    return copy, _cap_tensor(copy, max_bytes) or cut


def _copy_small(t: onnx.TensorProto, copy: onnx.TensorProto) -> None:
    """Every field of ``t`` except its data."""
    copy.dims.extend(t.dims)
    copy.data_type = t.data_type
    copy.name = t.name
    if t.doc_string:
        copy.doc_string = t.doc_string
    if t.HasField("segment"):
        copy.segment.CopyFrom(t.segment)
    copy.external_data.extend(t.external_data)
    if t.HasField("data_location"):
        copy.data_location = t.data_location
    if hasattr(t, "metadata_props"):
        copy.metadata_props.extend(t.metadata_props)


def _expected_bytes(t: onnx.TensorProto) -> int | None:
    try:
        source_dtype = element_dtype(t)
        return packed_nbytes(t.data_type, tensor_numel(t), source_dtype.itemsize)
    except OnnxvizError:
        return None


def _cap_all(holder: onnx.ModelProto, max_bytes: int) -> bool:
    """Cap every tensor inside a model copy (initializers, attributes, subgraphs, functions)."""
    cut = False
    for t in iter_all_tensors(holder):
        cut |= _cap_tensor(t, max_bytes)
    return cut


def _finish(text: str, notes: list[str], max_chars: int) -> RawText:
    truncated = bool(notes)
    if len(text) > max_chars:
        text = text[:max_chars].rsplit("\n", 1)[0] + "\n"
        notes.append(f"text cut after {max_chars:,} characters")
        truncated = True
    header = "".join(f"# {n}\n" for n in notes)
    return RawText(header + text, truncated)


def model_text(model: onnx.ModelProto, max_nodes: int = MAX_NODES, max_tensor_bytes: int = MAX_TENSOR_BYTES,
               max_chars: int = MAX_CHARS, cancel: CancelToken | None = None) -> RawText:
    """The whole model as protobuf text, trimmed so it stays readable and quick to build.

    Everything but the main graph's nodes is printed first; the nodes (the bulk of a big model)
    are then printed one by one into the ``graph {`` block, stopping at ``max_nodes`` or
    ``max_chars`` and checking ``cancel`` as they go, so work is bounded by what is shown.
    """
    shell = onnx.ModelProto()
    _copy_except(model, shell, {"graph"})
    _copy_except(model.graph, shell.graph, {"initializer", "node", "value_info"})
    shell.graph.name = model.graph.name  # always present, so the text has a "graph {" to fill
    notes: list[str] = []
    cut = False
    graph = model.graph
    for t in graph.initializer[:max_nodes]:
        copy, was_cut = _capped_tensor(t, max_tensor_bytes)
        shell.graph.initializer.append(copy)
        cut |= was_cut
    shell.graph.value_info.extend(graph.value_info[:max_nodes])
    for label, field in (("initializers", graph.initializer), ("value_info entries", graph.value_info)):
        if len(field) > max_nodes:
            notes.append(f"showing the first {max_nodes:,} of {len(field):,} {label}")
    cut |= _cap_all(shell, max_tensor_bytes)
    head, opening, tail = text_format.MessageToString(shell).partition("graph {\n")
    parts, size = [head, opening], len(head) + len(tail)
    nodes = model.graph.node
    for k, node in enumerate(nodes):
        if cancel is not None and k % 64 == 0:
            cancel.check()
        if k >= max_nodes or size > max_chars:
            notes.append(f"showing the first {k:,} of {len(nodes):,} nodes")
            break
        block, node_cut = _node_block(node, max_tensor_bytes)
        cut |= node_cut
        parts.append(block)
        size += len(block)
    if cut:
        notes.append(f"tensor data is cut to {max_tensor_bytes} bytes per tensor")
    parts.append(tail)
    return _finish("".join(parts), notes, max_chars + len(tail))


def _node_block(node: onnx.NodeProto, max_tensor_bytes: int) -> tuple[str, bool]:
    """``  node { ... }`` as it appears inside the main graph's text."""
    holder = onnx.ModelProto()
    holder.graph.node.add().CopyFrom(node)
    cut = _cap_all(holder, max_tensor_bytes)
    return "  node {\n" + text_format.MessageToString(holder.graph.node[0], indent=4) + "  }\n", cut


def node_text(node: onnx.NodeProto, max_tensor_bytes: int = MAX_TENSOR_BYTES,
              max_chars: int = MAX_CHARS) -> RawText:
    holder = onnx.ModelProto()
    holder.graph.node.add().CopyFrom(node)
    notes = [f"tensor data is cut to {max_tensor_bytes} bytes per tensor"] \
        if _cap_all(holder, max_tensor_bytes) else []
    return _finish(text_format.MessageToString(holder.graph.node[0]), notes, max_chars)


def value_text(index: ModelIndex, scope: str, name: str, max_tensor_bytes: int = MAX_TENSOR_BYTES) -> RawText:
    """Every proto that describes value ``name`` in ``scope``: its ValueInfos, inferred type, initializer."""
    g = index.graphs.get(scope)
    parts: list[str] = []
    truncated = False
    graph = g.graph if g is not None else None
    if graph is not None:
        for label, infos in (("input", graph.input), ("value_info", graph.value_info), ("output", graph.output)):
            for v in infos:
                if v.name == name:
                    parts.append(f"# graph.{label}\n{text_format.MessageToString(v)}")
        for t in graph.initializer:
            if t.name == name:
                copy, cut = _capped_tensor(t, max_tensor_bytes)
                truncated |= cut
                note = f" (data cut to {max_tensor_bytes} bytes)" if cut else ""
                parts.append(f"# graph.initializer{note}\n{text_format.MessageToString(copy)}")
    inferred = index.inferred.get(scope, {}).get(name)
    if inferred is not None:
        info = onnx.helper.make_value_info(name, inferred)
        parts.append(f"# inferred by shape inference\n{text_format.MessageToString(info)}")
    if not parts:
        parts.append(f"# '{name}' has no ValueInfo in the file and no inferred type\n")
    return RawText("\n".join(parts), truncated)
