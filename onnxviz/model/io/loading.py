"""Reading a file into a ModelProto, with one clear sentence for every way it can fail."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from pathlib import Path

import onnx
from google.protobuf.message import DecodeError

from onnxviz.model.errors import LoadError
from onnxviz.model.io.slices import parse_in_slices
from onnxviz.model.io.sniff import (
    TEXT_ONNX,
    TEXT_PROTOBUF,
    magic_kind,
    model_unknown_fields,
    other_message_kind,
    scan_message,
    text_kind,
)
from onnxviz.model.io.wire import WireError
from onnxviz.model.text import display_name

MAX_PROTO_BYTES = 2**31 - 1  # protobuf cannot parse a single message of 2 GiB or more
MAX_TEXT_BYTES = 256 * 2**20  # text-format models this large are not worth parsing in Python
_PARSE_ERRORS = (DecodeError, RuntimeError, ValueError, RecursionError)
SLICED_PARSE_BYTES = 8 << 20  # smaller files parse whole in a few milliseconds


class TextFormatError(LoadError):
    """The file is an ONNX model in a text format; it can be opened with ``text_format=True``.

    ``syntax`` is :data:`~onnxviz.model.io.sniff.TEXT_ONNX` (the ``onnx.parser``
    syntax) or :data:`~onnxviz.model.io.sniff.TEXT_PROTOBUF` (protobuf text format).
    The GUI turns this into an "Open as text format?" question.
    """

    def __init__(self, message: str, syntax: str, details: str = "") -> None:
        super().__init__(message, details)
        self.syntax = syntax


def read_model_file(path: str | os.PathLike[str],
                    pause: Callable[[], None] | None = None) -> tuple[onnx.ModelProto, bytes]:
    """Parse ``path`` as a binary ModelProto; external data is not read.

    Returns the model and the exact bytes it was parsed from. Raises
    :class:`LoadError` (or :class:`TextFormatError`) with a one-sentence
    message on any failure. ``pause``: a big file is parsed in slices, ``pause()`` called between them
    (:func:`~onnxviz.model.io.slices.parse_in_slices`: a background thread lets the others run).
    """
    p = Path(path)
    data = _read_bytes(p, MAX_PROTO_BYTES, "a single protobuf can hold (large weights go in external data files)")
    model = _sliced(data, pause) if pause is not None and len(data) >= SLICED_PARSE_BYTES else None
    if model is None:
        model = onnx.ModelProto()
        try:
            model.ParseFromString(data)
        except _PARSE_ERRORS as exc:
            raise _explain(_shown(p), data, exc) from None
    if not model.HasField("graph") or _is_other_message(model, data):
        raise _explain(_shown(p), data, None)
    return model, data


def _sliced(data: bytes, pause: Callable[[], None]) -> onnx.ModelProto | None:
    """``data`` parsed in slices, or None when it does not parse so (parsed whole again, for the explanation)."""
    try:
        return parse_in_slices(data, pause)
    except (WireError, *_PARSE_ERRORS):
        return None


def read_text_model_file(path: str | os.PathLike[str]) -> onnx.ModelProto:
    """Parse ``path`` as an ONNX model in the ``onnx.parser`` syntax or protobuf text format."""
    p = Path(path)
    raw = _read_bytes(p, MAX_TEXT_BYTES, "onnxviz reads as text")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise LoadError(f"{_shown(p)} is not UTF-8 text (bad byte at position {exc.start}).", str(exc)) from None
    syntax = text_kind(raw)
    try:
        if syntax == TEXT_PROTOBUF:
            from google.protobuf import text_format

            model = text_format.Parse(text, onnx.ModelProto())
        else:
            model = onnx.parser.parse_model(text)
    except RecursionError:
        raise LoadError(f"{_shown(p)} nests too deeply to be parsed as text.") from None
    except Exception as exc:  # noqa: BLE001 - onnx.parser.ParseError, text_format.ParseError, ...
        raise LoadError(f"{_shown(p)} could not be parsed as a text-format model{_parse_failure(exc)}",
                        _exception_text(exc)) from None
    if not model.HasField("graph"):
        raise LoadError(f"{_shown(p)} was parsed as text, but it holds no graph.")
    return model


def _exception_text(exc: Exception) -> str:
    """The exception's text; onnx.parser's ParseError holds bytes, which str() shows as "b'...\\n...'"."""
    arg = exc.args[0] if exc.args else None
    return arg.decode("utf-8", "replace") if isinstance(arg, bytes) else str(exc)


def _parse_failure(exc: Exception) -> str:
    """': what went wrong' for a one-line message; onnx.parser's position and reason made readable
    ('[ParseError at position (line: 1 column: 6)]', 'Error context: ...', 'Expected ...')."""
    lines = [line.strip() for line in _exception_text(exc).strip().splitlines() if line.strip()]
    if not lines:
        return f": {type(exc).__name__}."
    where = re.match(r"\[ParseError at position \(line: (\d+) column: (\d+)\)\]", lines[0])
    if where is None:
        return f": {lines[0]}"
    reason = lines[-1] if len(lines) > 1 and not lines[-1].startswith("Error context:") else "a syntax error"
    return f" at line {where[1]}, column {where[2]}: {reason[:1].lower() + reason[1:]}"


def _shown(p: Path, full: bool = False) -> str:
    """The file's name (or whole path) as a message may show it: hostile characters escaped."""
    return display_name(str(p) if full else p.name, 300)


def _read_bytes(p: Path, limit: int, limit_reason: str) -> bytes:
    """All bytes of a regular, non-empty file of at most ``limit`` bytes."""
    try:
        st = p.stat()
    except FileNotFoundError:
        raise LoadError(f"{_shown(p, full=True)}: no such file.") from None
    except OSError as exc:
        raise LoadError(f"{_shown(p)} cannot be read: {exc.strerror or exc}.", str(exc)) from None
    if stat.S_ISDIR(st.st_mode):
        raise LoadError(f"{_shown(p, full=True)} is a folder, not a model file.")
    special = special_file(p, st)
    if special:  # a FIFO or a device would block or never end; the kernel's files are made as they are read
        raise LoadError(f"{_shown(p, full=True)} is {special}, not a model file; refused.")
    if st.st_size == 0:
        raise LoadError(f"{_shown(p)} is an empty file.")
    if st.st_size > limit:
        raise LoadError(f"{_shown(p)} is {st.st_size:,} bytes, more than the {limit:,} bytes {limit_reason}.")
    try:
        with open(p, "rb") as f:  # asked for the file's size: asking for ``limit`` allocates that much first
            data = f.read(st.st_size + 1)
            return data + f.read(limit + 1 - len(data)) if len(data) > st.st_size else data  # it grew meanwhile
    except OSError as exc:
        raise LoadError(f"{_shown(p)} cannot be read: {exc.strerror or exc}.", str(exc)) from None
    except MemoryError:
        raise LoadError(f"{_shown(p)} is too large to read into memory.") from None


_DEVICE_KINDS = ((stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a character device"),
                 (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))
# File systems whose files the kernel makes as they are read: their sizes say nothing (/proc/self/mem is "0 bytes")
KERNEL_FILE_SYSTEMS = frozenset({"proc", "sysfs", "debugfs", "tracefs", "securityfs", "configfs", "cgroup", "cgroup2",
                                 "pstore", "bpf", "efivarfs", "fusectl", "devpts", "binfmt_misc", "autofs"})


def special_file(p: Path, st: os.stat_result) -> str:
    """What ``p`` is when it is no regular file of a disk ("a named pipe (FIFO)", "a file of the kernel's proc
    file system"...), '' for a regular one. A file of the kernel's that claims a size (/sys's 4096) is read
    as any file is, and found to be no model."""
    for test, kind in _DEVICE_KINDS:
        if test(st.st_mode):
            return kind
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    if st.st_size:  # the kernel's files say 0 bytes (or a page): only then is the mount table read
        return ""
    fs = _file_system(st.st_dev)
    return f"a file of the kernel's {fs} file system" if fs in KERNEL_FILE_SYSTEMS else ""


def _file_system(device: int) -> str:
    """The type of the file system mounted as ``device`` (Linux: /proc/self/mountinfo), '' if unknown."""
    wanted = f"{os.major(device)}:{os.minor(device)}"
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                fields = line.split()
                if len(fields) > 2 and fields[2] == wanted and "-" in fields:
                    return fields[fields.index("-") + 1]
    except OSError:  # not Linux
        pass
    return ""


def _is_other_message(model: onnx.ModelProto, data: bytes) -> bool:
    """A model with a graph but unknown top-level fields and no IR version may be another message."""
    return model.ir_version == 0 and bool(model_unknown_fields(model)) and other_message_kind(data) is not None


def _explain(name: str, data: bytes, exc: BaseException | None) -> LoadError:
    """The most specific explanation of why ``data`` is not a usable ModelProto."""
    details = f"{type(exc).__name__}: {exc}" if exc is not None else ""
    what = magic_kind(data[:64])
    if what:
        return LoadError(f"{name} is {what}.", details)
    kind = text_kind(data)
    if kind in (TEXT_ONNX, TEXT_PROTOBUF):
        label = "the ONNX text syntax" if kind == TEXT_ONNX else "protobuf text format"
        return TextFormatError(f"{name} is a model in {label}, not a binary ONNX file; it can be opened as text.",
                               kind, details)
    if kind == "json":
        return LoadError(f"{name} is a JSON file, not a binary ONNX model.", details)
    if kind == "text":
        return LoadError(f"{name} is a text file, not a binary ONNX model.", details)
    if exc is not None and "depth" in str(exc).lower():
        return LoadError(f"{name} nests subgraphs deeper than protobuf's limit of 100 levels; refused.", details)
    try:
        fields = scan_message(data)
    except WireError as wire:
        return _explain_wire_error(name, data, wire, details)
    other = other_message_kind(data)
    if other:
        return LoadError(f"{name} holds {other}, not a ModelProto: it is a piece of a model, not a model.", details)
    if exc is None and 7 not in fields:
        return LoadError(f"{name} is a ModelProto without a graph: there is nothing to show.", details)
    return LoadError(f"{name} is a damaged ONNX model: protobuf could not parse it.", details)


def _explain_wire_error(name: str, data: bytes, wire: WireError, details: str) -> LoadError:
    if not wire.where:
        return LoadError(f"{name} is not a valid ONNX model: its bytes are not protobuf data at all.", details)
    if wire.truncated:
        shown = f"{len(data):,} bytes present, at least {wire.needed:,} needed" if wire.needed else f"{len(data):,} bytes"
        return LoadError(f"{name} is truncated: the file ends inside {wire.where} ({shown}).", details)
    return LoadError(f"{name} is damaged: the protobuf data is malformed inside {wire.where} "
                     f"(at byte {wire.offset:,}).", details)
