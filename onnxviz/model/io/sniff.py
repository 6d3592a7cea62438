"""Recognising what a file that is not a usable ModelProto actually is.

Protobuf happily parses many wrong inputs (a GraphProto parses as a ModelProto
whose fields land in the wrong places or among the unknown fields), so a
failed or empty parse is explained here by looking at magic numbers, at the
text, and at the protobuf wire format itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import onnx
from google.protobuf.message import DecodeError, Message

from onnxviz.model.io.wire import WireError, read_varint
from onnxviz.model.text import display_name

# Magic numbers of formats people mistake for (or rename to) .onnx, checked in order.
_MAGIC: tuple[tuple[Callable[[bytes], bool], str], ...] = (
    (lambda b: b.startswith(b"\x1f\x8b"), "a gzip-compressed file; decompress it first"),
    (lambda b: b.startswith((b"PK\x03\x04", b"PK\x05\x06")),
     "a zip archive (a PyTorch checkpoint or a zipped model?); extract the .onnx file first"),
    (lambda b: b.startswith(b"BZh"), "a bzip2-compressed file; decompress it first"),
    (lambda b: b.startswith(b"\xfd7zXZ\x00"), "an xz-compressed file; decompress it first"),
    (lambda b: b.startswith(b"\x28\xb5\x2f\xfd"), "a zstd-compressed file; decompress it first"),
    (lambda b: b.startswith(b"7z\xbc\xaf\x27\x1c"), "a 7-zip archive; extract the .onnx file first"),
    (lambda b: len(b) >= 8 and b[4:8] == b"ORTM", "an onnxruntime .ort flatbuffer, not an ONNX model"),
    (lambda b: len(b) >= 8 and b[4:8] == b"TFL3", "a TensorFlow Lite flatbuffer, not an ONNX model"),
    (lambda b: b.startswith(b"\x89HDF\r\n\x1a\n"), "an HDF5 file (a Keras model?), not an ONNX model"),
    (lambda b: b.startswith(b"\x93NUMPY"), "a NumPy array file, not an ONNX model"),
    (lambda b: b[:1] == b"\x80" and b[1:2] in (b"\x02", b"\x03", b"\x04", b"\x05"),
     "a Python pickle (a PyTorch or scikit-learn file?), not an ONNX model"),
    (lambda b: b.startswith(b"\x89PNG") or b.startswith(b"\xff\xd8\xff") or b.startswith(b"GIF8"),
     "an image, not an ONNX model"),
    (lambda b: b.startswith(b"\x7fELF") or b.startswith(b"MZ"), "an executable, not an ONNX model"),
    (lambda b: b.startswith(b"%PDF"), "a PDF document, not an ONNX model"),
    (lambda b: _is_safetensors(b), "a safetensors weights file, not an ONNX model"),
)


def _is_safetensors(b: bytes) -> bool:
    return len(b) > 9 and b[8:9] == b"{" and int.from_bytes(b[:8], "little") < 100_000_000


def magic_kind(head: bytes) -> str | None:
    """'a gzip-compressed file; ...' when the first bytes identify a known non-ONNX format."""
    for test, what in _MAGIC:
        if test(head):
            return what
    return None


# -- text ---------------------------------------------------------------------------------

TEXT_ONNX = "onnx"        # the ONNX textual syntax of onnx.parser ("<ir_version: 8 ...> g (...) => (...) {...}")
TEXT_PROTOBUF = "protobuf"  # protobuf text format ("ir_version: 8 graph { node { ... } }")


def text_kind(data: bytes) -> str | None:
    """TEXT_ONNX, TEXT_PROTOBUF, "json", "text" for other text, None for binary data."""
    head = data[:4096]
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # a multi-byte character cut at the end of the sample is fine
            return None
        text = head[:exc.start].decode("utf-8")
    if any(c < " " and c not in "\t\r\n\f" for c in text):
        return None
    stripped = text.lstrip("\ufeff \t\r\n")
    if stripped.startswith(("{", "[")):
        return "json"
    if "=>" in text and ("{" in text or stripped.startswith("<")):
        return TEXT_ONNX
    if stripped.startswith(("ir_version", "graph", "opset_import", "producer_name", "model_version", "#")) \
            and ("{" in text or ":" in text):
        return TEXT_PROTOBUF
    return "text"


# -- the protobuf wire format ------------------------------------------------------------

@dataclass(frozen=True)
class _Field:
    label: str
    message: str | None = None  # the _SCHEMA key of a nested message, None for scalars/bytes


# Just enough of onnx.proto to say where a truncated file was cut.
_SCHEMA: dict[str, dict[int, _Field]] = {
    "model": {2: _Field("producer_name"), 3: _Field("producer_version"), 4: _Field("domain"),
              6: _Field("doc_string"), 7: _Field("graph", "graph"), 8: _Field("opset_import"),
              14: _Field("metadata_props"), 20: _Field("training_info"), 25: _Field("function", "function")},
    "graph": {1: _Field("node", "node"), 5: _Field("initializer", "tensor"),
              11: _Field("input"), 12: _Field("output"), 13: _Field("value_info"),
              15: _Field("sparse initializer")},
    "function": {7: _Field("node", "node")},
    "node": {5: _Field("attribute", "attribute")},
    "attribute": {5: _Field("tensor", "tensor"), 6: _Field("subgraph", "graph"),
                  10: _Field("tensor", "tensor"), 11: _Field("subgraph", "graph")},
    "tensor": {9: _Field("raw data")},
}
# the field holding each message's name, for "initializer 'w'"
_NAME_FIELD = {"graph": 2, "node": 3, "tensor": 8, "function": 1, "attribute": 1}


def scan_message(data: bytes, kind: str = "model", pos: int = 0, end: int | None = None,
                 path: str = "") -> list[int]:
    """Walk the wire format of a ``kind`` message; return the field numbers seen at its top level.

    Raises :class:`WireError` naming the innermost known place (e.g. ``graph >
    initializer 'w' > raw data``) where the data is cut short or malformed.
    Only fields on the way to the fault are descended into, so this is fast.
    """
    claimed_end = len(data) if end is None else end
    stop = min(claimed_end, len(data))
    fields: list[int] = []
    try:
        pos = _scan_fields(data, kind, pos, stop, path, fields)
    except WireError as exc:
        if exc.where or not path:
            raise
        raise WireError(path, exc.truncated, exc.offset, exc.needed) from None
    if pos > claimed_end or pos > len(data):
        raise WireError(path, pos > len(data), pos, pos)
    return fields


def _scan_fields(data: bytes, kind: str, pos: int, stop: int, path: str, fields: list[int]) -> int:
    name = ""
    while pos < stop:
        tag, pos = read_varint(data, pos, stop)
        number, wire = tag >> 3, tag & 7
        if number == 0:
            raise WireError(path, False, pos)
        if wire == 0:
            _, pos = read_varint(data, pos, stop)
        elif wire in (1, 5):
            pos += 8 if wire == 1 else 4
        elif wire == 2:
            length, pos = read_varint(data, pos, stop)
            field = _SCHEMA.get(kind, {}).get(number)
            if number == _NAME_FIELD.get(kind) and pos + length <= stop:
                name = display_name(data[pos:pos + min(length, 200)].decode("utf-8", "replace"), 60)
            if pos + length > stop:
                here = _join(path, kind, name, field)
                if field is not None and field.message is not None:
                    scan_message(data, field.message, pos, pos + length, here)
                raise WireError(here, pos + length > len(data), pos, pos + length)
            pos += length
        else:
            raise WireError(_join(path, kind, name, None), False, pos)
        fields.append(number)
    return pos


def _join(path: str, kind: str, name: str, field: _Field | None) -> str:
    own = f"{path} '{name}'" if name and path and kind != "model" else path
    if field is None:
        return own
    return f"{own} > {field.label}" if own else field.label


# -- other message types -----------------------------------------------------------------

_OTHER_MESSAGES: tuple[tuple[str, type[Message]], ...] = (
    ("a GraphProto", onnx.GraphProto),
    ("a TensorProto", onnx.TensorProto),
    ("a NodeProto", onnx.NodeProto),
    ("a FunctionProto", onnx.FunctionProto),
    ("a ValueInfoProto", onnx.ValueInfoProto),
    ("a SparseTensorProto", onnx.SparseTensorProto),
    ("an AttributeProto", onnx.AttributeProto),
)


def other_message_kind(data: bytes) -> str | None:
    """'a GraphProto' etc. when ``data`` parses cleanly as that message and not sensibly as a model.

    A candidate must parse, leave no unknown fields, and set fields covering
    most of the bytes; the one that sets the most fields wins.
    """
    best: tuple[int, str] | None = None
    for label, cls in _OTHER_MESSAGES:
        msg = cls()
        try:
            msg.ParseFromString(data)
        except (DecodeError, RuntimeError, ValueError):
            continue
        if _has_unknown_fields(msg):
            continue
        n = len(msg.ListFields())
        if n and (best is None or n > best[0]):
            best = (n, label)
    return best[1] if best else None


def _has_unknown_fields(msg: Message) -> bool:
    from google.protobuf import unknown_fields

    try:
        return len(unknown_fields.UnknownFieldSet(msg)) > 0
    except Exception:  # noqa: BLE001 - older protobuf without the API: do not rule it out
        return False


def model_unknown_fields(model: onnx.ModelProto) -> list[int]:
    """Field numbers at the top level of ``model`` that ModelProto does not define."""
    from google.protobuf import unknown_fields

    try:
        return [f.field_number for f in unknown_fields.UnknownFieldSet(model)]
    except Exception:  # noqa: BLE001
        return []
