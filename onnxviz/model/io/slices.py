"""A model's bytes built a slice at a time, for background threads.

``SerializeToString`` holds the GIL for the whole model: at 123k nodes that is ~110 ms in which
no other Python thread, the GUI's included, can run. :func:`serialize_in_slices` gives the same
bytes, serializing a few thousand repeated elements (nodes, initializers, value infos) at a time and
calling ``pause`` between slices, where the caller lets other threads run and can give up.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from google.protobuf import unknown_fields
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from onnxviz.model.io.wire import length_prefix

SLICE_ITEMS = 2_000  # repeated elements serialized per slice: a few milliseconds of GIL each


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


def is_repeated(field: FieldDescriptor) -> bool:
    flag = getattr(field, "is_repeated", None)  # protobuf >= 5.28; `label` is gone in 7
    if flag is not None:
        return bool(flag)
    return bool(field.label == FieldDescriptor.LABEL_REPEATED)  # type: ignore[attr-defined]

