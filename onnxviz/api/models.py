"""What the Python API accepts as a model, and how it becomes a document or a file.

A model is a path (``str`` or ``os.PathLike``), an ``onnx.ModelProto``, its serialized bytes, an ``onnx_ir``
model, or anything with a ``model_proto`` attribute (torch's ``ONNXProgram``; its ``model``, an ``onnx_ir``
model, is preferred when it has one, so its weights need not pass through one protobuf message).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Union

import onnx

from onnxviz.model.document import Document
from onnxviz.model.errors import OnnxvizError
from onnxviz.model.io.disk import atomic_write
from onnxviz.model.io.external import is_external, iter_all_tensors
from onnxviz.model.io.saving import External, SaveOptions

ModelLike = Union[str, "os.PathLike[str]", onnx.ModelProto, bytes, Any]
INLINE_MAX = 1 << 30  # bytes: a model handed over as a file puts its weights in a data file beyond this
DEFAULT_STEM = "model"


def is_ir_model(x: object) -> bool:
    """Whether ``x`` is an ``onnx_ir`` model (told without importing onnx_ir)."""
    return type(x).__module__.startswith("onnx_ir") and hasattr(x, "graph") and hasattr(x, "opset_imports")


def _ir_of(x: object) -> Any:
    """The ``onnx_ir`` model ``x`` is or holds (a torch ``ONNXProgram``'s ``model``), else None."""
    if is_ir_model(x):
        return x
    inner = getattr(x, "model", None)
    return inner if inner is not None and is_ir_model(inner) and hasattr(x, "model_proto") else None


def as_path(x: object) -> Path | None:
    """``x`` as a path when it names a file (``str`` or ``os.PathLike``), else None."""
    return Path(os.fspath(x)) if isinstance(x, str | os.PathLike) else None


def model_proto(x: ModelLike) -> onnx.ModelProto:
    """``x`` (anything but a path) as an ``onnx.ModelProto``; OnnxvizError says what ``x`` is when it is no model."""
    if isinstance(x, onnx.ModelProto):
        return x
    if isinstance(x, bytes | bytearray | memoryview):
        try:
            return onnx.ModelProto.FromString(bytes(x))
        except Exception as exc:  # noqa: BLE001 - protobuf's DecodeError and friends
            raise OnnxvizError("the bytes given are not a serialized ONNX model.", str(exc)) from None
    ir = _ir_of(x)
    if ir is not None:
        import onnx_ir

        proto: onnx.ModelProto = onnx_ir.to_proto(ir)
        return proto
    if hasattr(x, "model_proto"):
        proto = x.model_proto
        if isinstance(proto, onnx.ModelProto):
            return proto
    raise OnnxvizError(f"a {type(x).__name__} is not a model: give a path, an onnx.ModelProto, its bytes, an onnx_ir "
                       "model or an object with a model_proto (such as torch's ONNXProgram).")


def display_name(graph_name: str) -> str:
    """The name a model held in memory goes by: its graph's name as a file name (``main_graph.onnx``)."""
    stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in graph_name).strip("._")[:80]
    return f"{stem or DEFAULT_STEM}.onnx"


def open_document(x: ModelLike) -> Document:
    """``x`` as a document: a path is opened (OnnxvizError in one sentence when it cannot be), a model held in
    memory is taken as it is (not copied) under its :func:`display_name`."""
    path = as_path(x)
    if path is not None:
        return Document.open(path)
    proto = model_proto(x)
    _refuse_unread_external_data(proto)
    doc = Document(proto)
    doc.untitled_name = display_name(proto.graph.name)
    return doc


def _refuse_unread_external_data(proto: onnx.ModelProto) -> None:
    """A model loaded without its external data (``load_external_data=False``) no longer knows its folder."""
    unread = next((t for t in iter_all_tensors(proto) if is_external(t)), None)
    if unread is not None:
        raise OnnxvizError(f"the model's weight '{unread.name}' is in an external data file whose folder the "
                           "model does not know; pass the model's path instead, or load it with its data.")


def write_model(x: ModelLike, target: Path) -> None:
    """Write ``x`` (held in memory) to ``target``, a new file in a folder of onnxviz's own: one file, or its
    weights in ``target.data`` beside it when they are big. The model is not changed. An ``onnx_ir`` model
    is written by onnx_ir's own ``save``; the others by onnxviz's checked writes (a big one through its save)."""
    ir = _ir_of(x)
    if ir is not None:
        import onnx_ir

        big = sum(getattr(v.const_value, "nbytes", 0) for v in ir.graph.initializers.values()) > INLINE_MAX
        onnx_ir.save(ir, target, external_data=f"{target.name}.data" if big else None)
        return
    proto = model_proto(x)
    _refuse_unread_external_data(proto)
    if proto.ByteSize() <= INLINE_MAX:
        atomic_write(target, proto.SerializeToString())  # 123k nodes: 0.25 s, against 1.5 s through a save plan
        return
    external: External = "file"
    Document(proto).plan_save(target, SaveOptions(external)).write()  # plans write a copy: proto stays as it is
