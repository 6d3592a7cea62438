"""What the ``info`` and ``check`` subcommands share: the file arguments, opening, safe printing."""

from __future__ import annotations

import argparse
import json
from typing import Any

from onnxviz.model.document import Document
from onnxviz.model.errors import LoadError
from onnxviz.model.index import display_name
from onnxviz.model.loading import TextFormatError

MAX_LINE = 2000  # a 100,000-character name must not flood the terminal


def add_file_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="an .onnx model file")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument("--text", action="store_true",
                        help="the file is a text-format model (onnx.parser syntax or protobuf text format)")


def open_document(args: argparse.Namespace) -> Document:
    try:
        return Document.open(args.file, text_format=args.text)
    except TextFormatError as exc:
        raise LoadError(f"{exc.message.rstrip('.')} with --text.", exc.details) from None


def jsonable(value: Any) -> Any:
    """``value`` with every bytes object (a string protobuf could not decode) made text, keys included."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "backslashreplace")
    if isinstance(value, dict):
        return {jsonable(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value


def print_json(value: Any) -> None:
    print(json.dumps(jsonable(value), indent=2, ensure_ascii=False))


def terminal_text(text: str) -> str:
    """``text`` with control and bidi-override characters escaped, each line at most MAX_LINE long."""
    return "\n".join(display_name(line, MAX_LINE) for line in text.split("\n"))
