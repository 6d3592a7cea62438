"""``onnxviz run FILE ...`` (built by the runner issue)."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from onnxviz.model.errors import OnnxvizError


def configure(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    parser.description = "Run a model on CPU and print its outputs' statistics."
    parser.add_argument("file")
    return run


def run(args: argparse.Namespace) -> int:
    raise OnnxvizError("run is not available yet.")
