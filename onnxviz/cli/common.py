"""What the subcommands share: the file arguments and opening the model; the models and inputs the Python API
hands to a command in place of paths (``onnxviz.compare``, ``onnxviz.diff``)."""

from __future__ import annotations

import argparse
from collections.abc import Mapping

import numpy as np

from onnxviz.model.document import Document
from onnxviz.model.errors import LoadError
from onnxviz.model.io.loading import TextFormatError
from onnxviz.model.runner.input_files import read_inputs_file
from onnxviz.model.runner.inputs import InputSpec


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


def open_model(source: str | Document) -> Document:
    """A model named on the command line, or the document the Python API hands in its place."""
    return source if isinstance(source, Document) else Document.open(source)


def given_inputs(source: str | Mapping[str, np.ndarray] | None, specs: list[InputSpec]) -> dict[str, np.ndarray]:
    """``--inputs``: the arrays of an .npz (read as a hostile file), or the arrays the Python API hands in its
    place (checked against the inputs and cast by ``build_feeds``, as every given array)."""
    if not source:
        return {}
    if isinstance(source, Mapping):
        return {name: np.asarray(array) for name, array in source.items()}
    return read_inputs_file(source, specs)
