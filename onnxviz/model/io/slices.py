"""A model's bytes built, or parsed, a slice at a time, for background threads.

``SerializeToString`` holds the GIL for the whole model: at 123k nodes that is ~110 ms in which
no other Python thread, the GUI's included, can run. :func:`serialize_in_slices` gives the same
bytes, serializing a few thousand repeated elements (nodes, initializers, value infos) at a time and
calling ``pause`` between slices, where the caller lets other threads run and can give up.
:func:`parse_in_slices` does the same for ``ParseFromString`` (50 MB: ~60 ms of held GIL, several
times that when the thread holding it is descheduled on a busy CPU), parsing the graph's records where they
lie, a run at a time. :func:`map_in_slices` and :func:`filter_in_slices` do the same for a pass over a
graph's 100k+ nodes in C (``map(attrgetter(...))``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import onnx
from google.protobuf import unknown_fields
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from onnxviz.model.io.partial import is_repeated
from onnxviz.model.io.wire import LENGTH_DELIMITED, fields, length_prefix
from onnxviz.model.process_tuning import big_blocks

SLICE_ITEMS = 2_000  # repeated elements serialized (records parsed) per slice: a few milliseconds of GIL each
SLICE_BYTES = 4 << 20  # or this many bytes of records parsed per slice (a bigger record alone)
PASS_ITEMS = 10_000  # elements per slice of a pass in C (reading a field of 10k nodes: ~4 ms)
T = TypeVar("T")
U = TypeVar("U")


def map_in_slices(fn: Callable[[T], U], items: Sequence[T], size: int = PASS_ITEMS) -> list[U]:
    """``list(map(fn, items))``, a slice at a time: one pass in C over a 123k-node graph holds the GIL for
    tens of milliseconds (the GUI thread waits that long); between slices the other threads get their turn."""
    found: list[U] = []
    for start in range(0, len(items), size):
        found += map(fn, items[start:start + size])
    return found


def filter_in_slices(keep: Callable[[T], Any], items: Sequence[T], size: int = PASS_ITEMS) -> list[T]:
    """``list(filter(keep, items))``, a slice at a time (see :func:`map_in_slices`)."""
    found: list[T] = []
    for start in range(0, len(items), size):
        found += filter(keep, items[start:start + size])
    return found
GRAPH_FIELD = 7  # ModelProto.graph


def serialize_in_slices(message: Message, pause: Callable[[], None], items: int = SLICE_ITEMS) -> bytes:
    """The bytes ``message.SerializeToString()`` gives (fields in number order, as it writes them),
    with ``pause()`` called between slices. A message with unknown fields of its own is serialized
    whole, which keeps them."""
    if has_unknown_fields(message):
        return message.SerializeToString()
    return b"".join(piece for field, value in message.ListFields()
                    for piece in field_pieces(message, field, value, pause, items))


def field_pieces(message: Message, field: FieldDescriptor, value: Any, pause: Callable[[], None],
                 items: int = SLICE_ITEMS) -> list[bytes]:
    """How ``message`` writes ``field`` holding ``value``, in pieces: a slice of ``items`` repeated
    messages each (``pause()`` after each), a singular message's fields in slices too."""
    if field.type == FieldDescriptor.TYPE_MESSAGE and is_repeated(field):
        pieces = []
        for start in range(0, len(value), items):
            pieces.append(field_bytes(message, field, value[start:start + items]))
            pause()
        return pieces
    if field.type == FieldDescriptor.TYPE_MESSAGE:  # e.g. the model's graph: its parts in slices too
        inner = serialize_in_slices(value, pause, items)
        return [length_prefix(field.number, len(inner)) + inner]
    return [field_bytes(message, field, value)]


def has_unknown_fields(message: Message) -> bool:
    """Whether ``message`` itself (not its parts) holds fields its type does not know."""
    return len(unknown_fields.UnknownFieldSet(message)) > 0


def field_bytes(message: Message, field: FieldDescriptor, value: Any) -> bytes:
    """How ``message`` writes ``field`` holding ``value``: a message of its type with that field alone."""
    holder = type(message)()
    if is_repeated(field):
        getattr(holder, field.name).extend(value)
    else:  # a scalar: singular messages are serialized by parts in serialize_in_slices
        setattr(holder, field.name, value)
    return holder.SerializeToString()


def parse_in_slices(data: bytes, pause: Callable[[], None], items: int = SLICE_ITEMS) -> onnx.ModelProto:
    """The model ``onnx.ModelProto.FromString(data)`` gives, its graph's records parsed a few thousand (or a few
    megabytes) at a time, with ``pause()`` after each slice. Protobuf merges a message's fields as they come, so
    merging the graph's bytes a run of whole records at a time builds the same message; each run is parsed where
    it lies in ``data`` (no copy of the bytes: a 1 GiB model needs the file's bytes and the model, as a whole
    parse does). A big record (a 256 MiB tensor) is merged into memory made ready for it
    (:func:`~onnxviz.model.process_tuning.big_blocks`). Raises WireError or protobuf's DecodeError for bytes that are not a
    model."""
    model = onnx.ModelProto()
    view = memoryview(data)
    kept = record = 0  # where the bytes not merged yet start; where the current field's record starts
    with big_blocks() as ready:
        for number, wire, start, end in fields(data, 0, len(data)):  # the model's own fields: a handful
            if number == GRAPH_FIELD and wire == LENGTH_DELIMITED:
                model.MergeFromString(view[kept:record])  # the fields before it, in order
                _merge_in_slices(model.graph, view, (start, end), pause, ready, items)
                kept = end
            record = end
        ready(len(view) - kept)
        model.MergeFromString(view[kept:])
    return model


def _merge_in_slices(message: Message, view: memoryview, span: tuple[int, int], pause: Callable[[], None],
                     ready: Callable[[int], None], items: int) -> None:
    """Merge the message bytes ``view[start:end]`` (``span``) into ``message``, ``items`` records or
    :data:`SLICE_BYTES` at a time (the records found by :func:`~onnxviz.model.io.wire.fields`: 171k of a 123k-node
    graph in ~60 ms); ``ready(size)`` before merging ``size`` bytes."""
    start, end = span
    cut, count = start, 0
    for _number, _wire, _payload, after in fields(view, start, end):
        count += 1
        if count >= items or after - cut >= SLICE_BYTES:
            ready(after - cut)
            message.MergeFromString(view[cut:after])
            pause()
            cut, count = after, 0
    ready(end - cut)
    message.MergeFromString(view[cut:end])
    pause()
