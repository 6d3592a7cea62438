"""The models a transform takes and gives, made in a background thread: the document's state, a result parsed
and indexed, a result prepared as a document of its own."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import onnx

from onnxviz.model.document import ANALYSE_WHOLE_BELOW, Document
from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.graph.tensors import RawLengths
from onnxviz.model.io.slices import parse_in_slices

MODEL_FILTER = "ONNX models (*.onnx);;All files (*)"


def parsed(data: bytes, pause: Callable[[], None]) -> tuple[onnx.ModelProto, ModelIndex]:
    """A model's bytes parsed and indexed in a background thread (parsed in slices, ``pause`` between them: a
    whole parse held the GIL, and so the window, 0.5 s for 300 MB): what the document takes in one step."""
    model = parse_in_slices(data, pause)
    return model, ModelIndex(model, RawLengths(data) if len(data) < ANALYSE_WHOLE_BELOW else None)


def prepared_part(model: onnx.ModelProto, source: Document, name: str) -> Document:
    """``model``, made from ``source``'s, as an unsaved document titled ``name``, prepared (in a background thread)."""
    part = Document.part_of(model, source)
    part.untitled_name = name
    part.prepare()
    return part


def variant_stem(doc: Document) -> str:
    """The name the variants of ``doc`` start with."""
    return doc.path.stem if doc.path is not None else Path(doc.name).stem
