"""Reading a file into a ModelProto, with one clear sentence for every way it can fail."""

from __future__ import annotations

import os
from pathlib import Path

import onnx
from google.protobuf.message import DecodeError

from onnxviz.model.errors import LoadError

MAX_PROTO_BYTES = 2**31 - 1  # protobuf cannot parse a single message of 2 GiB or more


def read_model_file(path: str | os.PathLike[str]) -> tuple[onnx.ModelProto, bytes]:
    """Parse ``path`` as a binary ModelProto; external data is not read.

    Returns the model and the exact bytes it was parsed from. Raises
    :class:`LoadError` with a one-sentence message on any failure.
    """
    p = Path(path)
    if not p.exists():
        raise LoadError(f"{p}: no such file.")
    if p.is_dir():
        raise LoadError(f"{p} is a folder, not a model file.")
    try:
        size = p.stat().st_size
        if size == 0:
            raise LoadError(f"{p.name} is an empty file.")
        if size > MAX_PROTO_BYTES:
            raise LoadError(
                f"{p.name} is {size / 2**30:.1f} GiB, larger than the 2 GiB a single protobuf can hold; "
                "save large weights as external data.")
        data = p.read_bytes()
    except OSError as exc:
        raise LoadError(f"{p.name} cannot be read: {exc.strerror or exc}.", str(exc)) from exc
    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except (DecodeError, RuntimeError, ValueError) as exc:
        raise LoadError(describe_unparsable(p.name, data), str(exc)) from exc
    if not model.HasField("graph"):
        raise LoadError(describe_unparsable(p.name, data, parsed_without_graph=True))
    return model, data


def describe_unparsable(name: str, data: bytes, parsed_without_graph: bool = False) -> str:
    """A one-sentence explanation of why ``data`` is not a usable ModelProto."""
    head = data[:64]
    if head.startswith(b"\x1f\x8b"):
        return f"{name} is a gzip-compressed file; decompress it first."
    stripped = head.lstrip()
    if stripped.startswith(b"{") or stripped.startswith(b"["):
        return f"{name} is a JSON file, not a binary ONNX model."
    if stripped.startswith(b"<"):
        return f"{name} is an ONNX text-format (or XML/HTML) file, not a binary ONNX model."
    if len(data) >= 8 and data[4:8] == b"ORTM":
        return f"{name} is an onnxruntime .ort flatbuffer, not an ONNX model."
    if parsed_without_graph:
        return f"{name} holds no graph: it is not an ONNX model (or a model without a graph)."
    return f"{name} is not a valid ONNX model (the protobuf data is corrupt or truncated)."
