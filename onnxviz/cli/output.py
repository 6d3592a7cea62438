"""Everything the command line writes, through one door.

Paths, model, node and value names, metadata and the messages quoting them come from files: each
line is escaped as the window escapes names (:func:`~onnxviz.model.graph.index.display_name`), so none of
them can move the cursor, recolour the terminal, reverse text (U+202E) or start a line of its own
(a model named ``x.onnx: valid\\nreal.onnx``). JSON keeps its data but escapes the same characters.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TextIO

from onnxviz.model.text import display_name

MAX_LINE = 2000  # a 100,000-character name must not flood the terminal
_NON_ASCII = re.compile(r"[^\x00-\x7e]")


def terminal_line(text: str) -> str:
    """``text`` as one terminal line: control, bidi and invisible characters (newlines too) escaped, cut
    at :data:`MAX_LINE`."""
    return display_name(text, MAX_LINE)


def say(*lines: str, stream: TextIO | None = None) -> None:
    """Print each of ``lines`` as one escaped line (on stdout unless ``stream``)."""
    out = sys.stdout if stream is None else stream
    print("\n".join(terminal_line(line) for line in lines), file=out)


@dataclass
class Collected:
    """What a command printed as JSON and the notes it gave, while :func:`collecting`."""

    values: list[Any] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


_collecting: ContextVar[Collected | None] = ContextVar("onnxviz_cli_collecting", default=None)


@contextmanager
def collecting() -> Iterator[Collected]:
    """Within it, :func:`print_json` hands its object to the caller instead of printing it, exactly as a reader
    of the printed JSON gets it back, and :func:`note` keeps its message: how the Python API
    (``onnxviz.compare``, ``onnxviz.diff``) returns what the command computes, through the command's own code."""
    collected = Collected()
    token = _collecting.set(collected)
    try:
        yield collected
    finally:
        _collecting.reset(token)


def note(message: str) -> None:
    """``onnxviz: note: MESSAGE`` on stderr."""
    collected = _collecting.get()
    if collected is not None:
        collected.notes.append(message.strip())
        return
    say(f"onnxviz: note: {message.strip().rstrip('.')}", stream=sys.stderr)


def error(message: str) -> None:
    """``onnxviz: error: MESSAGE`` on stderr: one line, whatever the message holds."""
    say(f"onnxviz: error: {message.strip().rstrip('.')}", stream=sys.stderr)


def json_text(value: Any) -> str:
    """``value`` as indented JSON: bytes decoded (:func:`jsonable`), and besides the control characters
    json escapes itself, every invisible, bidi or unpaired-surrogate character as a ``\\uXXXX`` escape."""
    text = json.dumps(jsonable(value), indent=2, ensure_ascii=False)
    return _NON_ASCII.sub(lambda m: m.group() if m.group().isprintable() else _json_escape(m.group()), text)


def print_json(value: Any) -> None:
    text = json_text(value)
    collected = _collecting.get()
    if collected is not None:
        collected.values.append(json.loads(text))
        return
    print(text)


def jsonable(value: Any) -> Any:
    """``value`` with every bytes object (a string protobuf could not decode) made text, keys included."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "backslashreplace")
    if isinstance(value, dict):
        return {jsonable(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value


def _json_escape(c: str) -> str:
    code = ord(c)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
