"""Message types that read only some fields of an ONNX message: parsing bytes with one skips the other
fields (kept as unknown, never made into Python objects), and a field it reads as bytes stays serialized.

Shape inference's result is read this way (the names and serialized types of 123k values, without a
TypeProto made and serialized again per value). Each field keeps the number and the label (repeated or not)
it has in onnx's message, read from onnx's own descriptors.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor

BYTES = "bytes"  # the field's bytes as they are (a message stays serialized)
SAME = "same"  # the field's own scalar type (an enum read as its number)
PACKAGE = "onnxviz_partial"

Shape = tuple[Descriptor, Mapping[str, str]]  # onnx's message, {field name: BYTES, SAME or a partial type's name}
_made: dict[tuple[str, tuple[tuple[str, str, tuple[tuple[str, str], ...]], ...]], dict[str, Any]] = {}


def partial_messages(family: str, shapes: Mapping[str, Shape]) -> dict[str, Any]:
    """The message classes of ``shapes`` (partial type name -> the onnx message it reads and how it reads each
    kept field), which may refer to each other (a graph's nodes' attributes hold graphs). A field an installed
    onnx lacks is left out. Made once per ``family`` and shapes."""
    key = (family, tuple((name, d.full_name, tuple(sorted(fields.items()))) for name, (d, fields) in shapes.items()))
    found = _made.get(key)
    if found is None:
        file = descriptor_pb2.FileDescriptorProto(name=f"{PACKAGE}_{family}.proto", package=f"{PACKAGE}.{family}",
                                                  syntax="proto2")
        for name, (described, fields) in shapes.items():
            _add_message(file, name, described, fields, f".{PACKAGE}.{family}")
        pool = descriptor_pool.DescriptorPool()
        pool.Add(file)
        found = _made[key] = {name: message_factory.GetMessageClass(
            pool.FindMessageTypeByName(f"{PACKAGE}.{family}.{name}")) for name in shapes}
    return found


def _add_message(file: descriptor_pb2.FileDescriptorProto, name: str, described: Descriptor,
                 fields: Mapping[str, str], prefix: str) -> None:
    shape = file.message_type.add(name=name)
    for field_name, kind in fields.items():
        source = described.fields_by_name.get(field_name)
        if source is None:
            continue
        label = FieldDescriptor.LABEL_REPEATED if is_repeated(source) else FieldDescriptor.LABEL_OPTIONAL
        field = shape.field.add(name=field_name, number=source.number, label=label)
        if kind == BYTES:
            field.type = FieldDescriptor.TYPE_BYTES
        elif kind == SAME:
            field.type = FieldDescriptor.TYPE_INT32 if source.type == FieldDescriptor.TYPE_ENUM else source.type
        else:
            field.type = FieldDescriptor.TYPE_MESSAGE
            field.type_name = f"{prefix}.{kind}"


def is_repeated(field: FieldDescriptor) -> bool:
    flag = getattr(field, "is_repeated", None)  # protobuf >= 5.28; `label` is gone in 7
    if flag is not None:
        return bool(flag)
    return bool(field.label == FieldDescriptor.LABEL_REPEATED)  # type: ignore[attr-defined]
