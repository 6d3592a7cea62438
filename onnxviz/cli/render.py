"""``onnxviz render FILE -o OUT.png|OUT.svg`` (drawn by the canvas issue)."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from onnxviz.model.errors import OnnxvizError


def configure(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    parser.description = "Lay out and draw the whole top-level graph to PNG or SVG."
    parser.add_argument("file")
    parser.add_argument("-o", "--output", required=True)
    return run


def run(args: argparse.Namespace) -> int:
    raise OnnxvizError("render is not available yet.")
