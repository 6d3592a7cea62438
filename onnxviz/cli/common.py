"""What the ``info`` and ``check`` subcommands share: the file arguments and opening the model."""

from __future__ import annotations

import argparse

from onnxviz.model.document import Document
from onnxviz.model.errors import LoadError
from onnxviz.model.io.loading import TextFormatError


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
