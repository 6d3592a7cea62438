"""A big model's bytes written to a file a piece at a time, never whole in memory.

``SerializeToString`` builds the whole file in memory twice over (protobuf's buffer, then the bytes
object): a 2 GiB model then needs 4 GiB more than its parsed self. :func:`stream_model` gives the same
bytes as a list of pieces: every field serialized as usual (a slice at a time, see
:mod:`onnxviz.model.io.slices`) except the main graph's big initializers, each written as the tensor's
fields around its ``raw_data``, which is read from the model (a copy: protobuf hands it out no other
way) only when written, one tensor at a time. Lengths come first in protobuf: a big tensor's is taken from
its dims and type (copying 256 MiB out to measure it held the GIL ~0.1 s), and checked as it is written; a
tensor whose raw_data is not that size (a malformed one) makes :class:`SizeGuessWrong`, and the save measures
each tensor and writes again (:meth:`StreamedModel.measured`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from math import prod

import onnx
from google.protobuf.descriptor import FieldDescriptor

from onnxviz.model.dtypes import WHOLE_ITEM_BYTES
from onnxviz.model.errors import SaveError
from onnxviz.model.io.disk import Write, Written, write_chunks
from onnxviz.model.io.partial import is_repeated
from onnxviz.model.io.slices import SLICE_ITEMS, field_bytes, field_pieces, has_unknown_fields
from onnxviz.model.io.wire import length_prefix
from onnxviz.model.process_tuning import big_blocks

STREAM_ELEMENTS = 1 << 18  # initializers of at least this many elements (1 MiB of float32) are streamed
_RAW_DATA = onnx.TensorProto.DESCRIPTOR.fields_by_name["raw_data"]
_GRAPH = onnx.ModelProto.DESCRIPTOR.fields_by_name["graph"]
_INITIALIZER = onnx.GraphProto.DESCRIPTOR.fields_by_name["initializer"]


class SizeGuessWrong(SaveError):
    """A big tensor's raw_data is not the size its dims and type say (or it changed since the save was planned):
    nothing was written; the save measures every big tensor and writes again."""


@dataclass(frozen=True)
class _Raw:
    """The ``raw_data`` of ``tensor``, ``size`` bytes (measured, or ``guessed`` from its dims), read when written."""

    tensor: onnx.TensorProto
    size: int
    guessed: bool = False


@dataclass(frozen=True)
class StreamedModel:
    """A model's bytes as pieces: bytes at hand, or a tensor's ``raw_data`` read when written."""

    pieces: list[bytes | _Raw]
    size: int
    model: onnx.ModelProto | None = None  # what it was made of, for measured()
    pause: Callable[[], None] | None = None

    def measured(self) -> StreamedModel:
        """The same model's pieces, each big tensor's size measured (a copy of its raw_data each)."""
        if self.model is None:
            return self
        return stream_model(self.model, self.pause, measure=True)

    def write(self, write: Write, written: Written | None = None) -> None:
        """Hand every byte to ``write`` in order, a chunk at a time; ``written`` hears of each chunk's
        size and may raise to give up."""
        with big_blocks() as ready:  # a tensor's copy goes to memory made ready for it
            for piece in self.pieces:
                if isinstance(piece, bytes):
                    data = piece
                else:
                    ready(piece.size)
                    data = _raw_bytes(piece)
                write_chunks(data, write, written)
                del data  # a tensor's copy is freed before the next one is read


def stream_model(model: onnx.ModelProto, pause: Callable[[], None] | None = None,
                 measure: bool = False) -> StreamedModel:
    """``model``'s bytes as ``SerializeToString`` writes them, in pieces; ``pause`` runs between
    pieces (see :func:`~onnxviz.model.io.slices.serialize_in_slices`). A big tensor's size is taken from its dims
    and type unless ``measure`` (see the module's text)."""
    wait = pause or (lambda: None)
    if has_unknown_fields(model) or has_unknown_fields(model.graph):
        data = model.SerializeToString()
        return StreamedModel([data], len(data))
    pieces: list[bytes | _Raw] = []
    for field, value in model.ListFields():
        if field is _GRAPH:
            inner = _graph_pieces(value, wait, measure)
            pieces += [length_prefix(field.number, _size(inner)), *inner]
        else:
            pieces += field_pieces(model, field, value, wait)
    return StreamedModel(pieces, _size(pieces), model, pause)


def _graph_pieces(graph: onnx.GraphProto, pause: Callable[[], None], measure: bool) -> list[bytes | _Raw]:
    pieces: list[bytes | _Raw] = []
    for field, value in graph.ListFields():
        if field is not _INITIALIZER:
            pieces += field_pieces(graph, field, value, pause)
            continue
        small: list[onnx.TensorProto] = []
        for tensor in value:
            big = _streamed(tensor)
            if small and (big or len(small) == SLICE_ITEMS):
                pieces.append(field_bytes(graph, field, small))
                small = []
                pause()
            if big:
                pieces += _tensor_pieces(tensor, field.number, measure)
                pause()
            else:
                small.append(tensor)
        if small:
            pieces.append(field_bytes(graph, field, small))
    return pieces


def _streamed(tensor: onnx.TensorProto) -> bool:
    return (tensor.HasField("raw_data") and prod(tensor.dims) >= STREAM_ELEMENTS
            and not has_unknown_fields(tensor))


def _tensor_pieces(tensor: onnx.TensorProto, number: int, measure: bool) -> list[bytes | _Raw]:
    """Field ``number`` holding ``tensor``: its fields before ``raw_data`` (in number order, as
    protobuf writes them), ``raw_data`` (its size from its dims and type, or measured; read when written), the
    fields after it."""
    before, after = _without_raw(tensor, below=True), _without_raw(tensor, below=False)
    item = WHOLE_ITEM_BYTES.get(tensor.data_type, 0)  # a sub-byte or string tensor: measured
    guessed = not measure and item > 0
    size = prod(tensor.dims) * item if guessed else len(tensor.raw_data)
    inner: list[bytes | _Raw] = [before, length_prefix(_RAW_DATA.number, size), _Raw(tensor, size, guessed), after]
    return [length_prefix(number, _size(inner)), *inner]


def _without_raw(tensor: onnx.TensorProto, below: bool) -> bytes:
    """The bytes of ``tensor``'s fields numbered below (or above) ``raw_data``'s, without copying it."""
    part = onnx.TensorProto()
    for field in onnx.TensorProto.DESCRIPTOR.fields:
        if field is not _RAW_DATA and (field.number < _RAW_DATA.number) == below:
            _copy_field(tensor, part, field)
    return part.SerializeToString()


def _copy_field(source: onnx.TensorProto, target: onnx.TensorProto, field: FieldDescriptor) -> None:
    name = field.name
    if is_repeated(field):
        getattr(target, name).extend(getattr(source, name))
    elif source.HasField(name):
        if field.type == FieldDescriptor.TYPE_MESSAGE:
            getattr(target, name).CopyFrom(getattr(source, name))
        else:
            setattr(target, name, getattr(source, name))


def _raw_bytes(raw: _Raw) -> bytes:
    data = raw.tensor.raw_data
    if len(data) != raw.size:
        if raw.guessed:
            raise SizeGuessWrong(f"tensor '{raw.tensor.name}' is not the size its dims say, or changed while the "
                                 "model was being saved; nothing was written.")
        raise SaveError(f"tensor '{raw.tensor.name}' changed while the model was being saved; nothing was written.")
    return data


def _size(pieces: list[bytes | _Raw]) -> int:
    return sum(len(p) if isinstance(p, bytes) else p.size for p in pieces)
