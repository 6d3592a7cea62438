"""Protobuf text (what ``protoc --decode=onnx.ModelProto`` prints) of a node, a value or the model.

Text is built from trimmed copies: tensor payloads are capped at a few bytes,
big graphs keep their first nodes only, and the text itself is cut at a
character limit, each with a ``#`` comment saying what was left out. The
document's protos are only read, never changed, so this can run off the GUI thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import TypeVar

import onnx
from google.protobuf import text_format
from google.protobuf.descriptor import Descriptor
from google.protobuf.message import Message

from onnxviz.model.errors import OnnxvizError
from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.graph.tensors import TYPED_FIELDS, element_dtype, packed_nbytes, tensor_numel
from onnxviz.model.io.partial import is_repeated
from onnxviz.model.progress import CancelToken

MAX_TENSOR_BYTES = 64
MAX_NODES = 2000
MAX_CHARS = 1_000_000
READ_RAW_BYTES = 1 << 20  # a raw_data this big is read to show its first bytes (a copy of ~0.1 ms)
M = TypeVar("M", bound=Message)
_DATA_FIELDS = frozenset({"raw_data", *TYPED_FIELDS})


@dataclass(frozen=True)
class RawText:
    text: str
    truncated: bool


def capped_copy(message: M, max_bytes: int) -> tuple[M, bool]:
    """A copy of ``message`` whose every tensor's data (nested in attributes, subgraphs, sparse tensors) is cut to
    ``max_bytes``, and whether any was; a big ``raw_data`` is never read (see :func:`_capped_tensor`). Bounded by
    what it keeps, so it can run on the GUI thread: a copy of the live model for a worker to read."""
    if isinstance(message, onnx.TensorProto):
        return _capped_tensor(message, max_bytes)  # type: ignore[return-value]  # M is TensorProto here
    copy = type(message)()
    return copy, _copy_capped(message, copy, max_bytes)


def _copy_capped(src: Message, dst: Message, max_bytes: int, skip: frozenset[str] = frozenset()) -> bool:
    """Copy ``src``'s set fields but ``skip`` into ``dst``, tensors capped (see :func:`capped_copy`)."""
    cut = False
    for fd, value in src.ListFields():
        if fd.name in skip:
            continue
        holds_tensors = fd.message_type is not None and _may_hold_tensors(fd.message_type)
        if is_repeated(fd) and not holds_tensors:
            getattr(dst, fd.name).extend(value)
        elif fd.message_type is None:
            setattr(dst, fd.name, value)
        elif not holds_tensors:
            getattr(dst, fd.name).CopyFrom(value)
        elif is_repeated(fd):
            for item in value:
                copy, was_cut = capped_copy(item, max_bytes)
                getattr(dst, fd.name).append(copy)
                cut |= was_cut
        else:
            copy, cut_here = capped_copy(value, max_bytes)
            getattr(dst, fd.name).CopyFrom(copy)
            cut |= cut_here
    return cut


@cache
def _may_hold_tensors(descriptor: Descriptor) -> bool:
    """Whether a message of this type can hold a TensorProto at any depth (ONNX's types nest in cycles: a graph's
    nodes' attributes hold graphs)."""
    seen: set[str] = set()
    todo = [descriptor]
    while todo:
        found = todo.pop()
        if found is onnx.TensorProto.DESCRIPTOR:
            return True
        if found.full_name not in seen:
            seen.add(found.full_name)
            todo += [fd.message_type for fd in found.fields if fd.message_type is not None]
    return False


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
    """A copy of ``t`` whose data is cut to ``max_bytes``. A ``raw_data`` over :data:`READ_RAW_BYTES` is never read
    (reading the field copies it whole while holding the GIL): it is left out and reported as cut."""
    copy = onnx.TensorProto()
    _copy_but_data(t, copy)
    cut = False
    if t.HasField("raw_data"):
        expected = _expected_bytes(t)
        if expected is not None and expected <= READ_RAW_BYTES:
            copy.raw_data = t.raw_data[:max_bytes + 1]
        else:
            cut = True
    for name in TYPED_FIELDS:
        getattr(copy, name).extend(getattr(t, name)[:max_bytes // 4 + 1])
    return copy, _cap_tensor(copy, max_bytes) or cut


def _copy_but_data(t: onnx.TensorProto, copy: onnx.TensorProto) -> None:
    """Every field of ``t`` but its data, as set (or not) in ``t``; field by field, as ``ListFields`` would hand out
    ``raw_data`` too (a copy of it)."""
    for fd in onnx.TensorProto.DESCRIPTOR.fields:
        if fd.name in _DATA_FIELDS:
            continue
        if is_repeated(fd):
            getattr(copy, fd.name).extend(getattr(t, fd.name))
        elif t.HasField(fd.name):
            if fd.message_type is None:
                setattr(copy, fd.name, getattr(t, fd.name))
            else:
                getattr(copy, fd.name).CopyFrom(getattr(t, fd.name))


def _expected_bytes(t: onnx.TensorProto) -> int | None:
    try:
        source_dtype = element_dtype(t)
        return packed_nbytes(t.data_type, tensor_numel(t), source_dtype.itemsize)
    except OnnxvizError:
        return None


def _finish(text: str, notes: list[str], max_chars: int) -> RawText:
    truncated = bool(notes)
    if len(text) > max_chars:
        text = text[:max_chars].rsplit("\n", 1)[0] + "\n"
        notes.append(f"text cut after {max_chars:,} characters")
        truncated = True
    header = "".join(f"# {n}\n" for n in notes)
    return RawText(header + text, truncated)


@dataclass(frozen=True)
class ModelExcerpt:
    """What :func:`model_text` shows of a model, copied: everything but the main graph's nodes (``shell``, its
    initializers and value infos up to the limit), the first nodes, and what was left out."""

    shell: onnx.ModelProto
    nodes: list[onnx.NodeProto]
    node_count: int
    notes: list[str]
    cut: bool  # a tensor of the shell was cut
    nodes_cut: list[bool]  # a tensor of each node was
    max_tensor_bytes: int


def model_excerpt(model: onnx.ModelProto, max_nodes: int = MAX_NODES,
                  max_tensor_bytes: int = MAX_TENSOR_BYTES) -> ModelExcerpt:
    """(GUI thread) The part of ``model`` its text shows, copied with every tensor's data capped: bounded by
    ``max_nodes``, whatever the model's size (a whole copy of a 1 GiB model held the GUI thread 2.4 s)."""
    shell = onnx.ModelProto()
    cut = _copy_capped(model, shell, max_tensor_bytes, skip=frozenset({"graph"}))
    graph = model.graph
    cut |= _copy_capped(graph, shell.graph, max_tensor_bytes, skip=frozenset({"initializer", "node", "value_info"}))
    shell.graph.name = graph.name  # always present, so the text has a "graph {" to fill
    for t in graph.initializer[:max_nodes]:
        copy, was_cut = _capped_tensor(t, max_tensor_bytes)
        shell.graph.initializer.append(copy)
        cut |= was_cut
    shell.graph.value_info.extend(graph.value_info[:max_nodes])
    notes = [f"showing the first {max_nodes:,} of {len(field):,} {label}"
             for label, field in (("initializers", graph.initializer), ("value_info entries", graph.value_info))
             if len(field) > max_nodes]
    copies = [capped_copy(node, max_tensor_bytes) for node in graph.node[:max_nodes]]
    return ModelExcerpt(shell, [node for node, _ in copies], len(graph.node), notes, cut,
                        [node_cut for _, node_cut in copies], max_tensor_bytes)


def excerpt_text(excerpt: ModelExcerpt, max_chars: int = MAX_CHARS, cancel: CancelToken | None = None) -> RawText:
    """The excerpt as protobuf text (a worker's job). Everything but the main graph's nodes is printed first; the
    nodes are then printed one by one into the ``graph {`` block, stopping at ``max_chars`` and checking
    ``cancel`` as they go, so work is bounded by what is shown."""
    notes = list(excerpt.notes)
    head, opening, tail = text_format.MessageToString(excerpt.shell).partition("graph {\n")
    parts, size = [head, opening], len(head) + len(tail)
    shown = len(excerpt.nodes)
    for k, node in enumerate(excerpt.nodes):
        if cancel is not None and k % 64 == 0:
            cancel.check()
        if size > max_chars:
            shown = k
            break
        block = "  node {\n" + text_format.MessageToString(node, indent=4) + "  }\n"
        parts.append(block)
        size += len(block)
    if shown < excerpt.node_count:
        notes.append(f"showing the first {shown:,} of {excerpt.node_count:,} nodes")
    if excerpt.cut or any(excerpt.nodes_cut[:shown]):
        notes.append(f"tensor data is cut to {excerpt.max_tensor_bytes} bytes per tensor")
    parts.append(tail)
    return _finish("".join(parts), notes, max_chars + len(tail))


def model_text(model: onnx.ModelProto, max_nodes: int = MAX_NODES, max_tensor_bytes: int = MAX_TENSOR_BYTES,
               max_chars: int = MAX_CHARS, cancel: CancelToken | None = None) -> RawText:
    """The whole model as protobuf text, trimmed so it stays readable and quick to build (see
    :func:`model_excerpt` and :func:`excerpt_text`)."""
    return excerpt_text(model_excerpt(model, max_nodes, max_tensor_bytes), max_chars, cancel)


def node_text(node: onnx.NodeProto, max_tensor_bytes: int = MAX_TENSOR_BYTES,
              max_chars: int = MAX_CHARS) -> RawText:
    """A node as protobuf text, its tensors capped (``node`` may be the live one, or a :func:`capped_copy`)."""
    copy, cut = capped_copy(node, max_tensor_bytes)
    notes = [f"tensor data is cut to {max_tensor_bytes} bytes per tensor"] if cut else []
    return _finish(text_format.MessageToString(copy), notes, max_chars)


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
