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

SLICE_ITEMS = 2_000  # repeated elements serialized per slice: a few milliseconds of GIL each
_LENGTH_DELIMITED = 2


def serialize_in_slices(message: Message, pause: Callable[[], None], items: int = SLICE_ITEMS) -> bytes:
    """The bytes ``message.SerializeToString()`` gives (fields in number order, as it writes them),
    with ``pause()`` called between slices. A message with unknown fields of its own is serialized
    whole, which keeps them."""
    if len(unknown_fields.UnknownFieldSet(message)):
        return message.SerializeToString()
    pieces: list[bytes] = []
    for field, value in message.ListFields():
        if field.type == FieldDescriptor.TYPE_MESSAGE and _repeated(field):
            for start in range(0, len(value), items):
                pieces.append(_field_bytes(message, field, value[start:start + items]))
                pause()
        elif field.type == FieldDescriptor.TYPE_MESSAGE:  # e.g. the model's graph: its parts in slices too
            inner = serialize_in_slices(value, pause, items)
            pieces.append(_varint(field.number << 3 | _LENGTH_DELIMITED) + _varint(len(inner)) + inner)
        else:
            pieces.append(_field_bytes(message, field, value))
    return b"".join(pieces)


def _field_bytes(message: Message, field: FieldDescriptor, value: Any) -> bytes:
    """How ``message`` writes ``field`` holding ``value``: a message of its type with that field alone."""
    holder = type(message)()
    if _repeated(field):
        getattr(holder, field.name).extend(value)
    else:  # a scalar: singular messages are serialized by parts in serialize_in_slices
        setattr(holder, field.name, value)
    return holder.SerializeToString()


def _repeated(field: FieldDescriptor) -> bool:
    is_repeated = getattr(field, "is_repeated", None)  # protobuf >= 5.28; `label` is gone in 7
    if is_repeated is not None:
        return bool(is_repeated)
    return bool(field.label == FieldDescriptor.LABEL_REPEATED)  # type: ignore[attr-defined]


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        if n:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)
