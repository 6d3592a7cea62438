"""onnxviz: open, see, inspect, edit and run ONNX models in one desktop window.

The package is split in two layers:

* :mod:`onnxviz.model` - documents, indexes, validation, layout, statistics and
  the runner; plain Python, usable headless and from scripts.
* :mod:`onnxviz.ui` - the PySide6 widgets that show and edit a document.
"""

from __future__ import annotations

from onnxviz.model.document import Document
from onnxviz.model.errors import OnnxvizError

__all__ = ["Document", "OnnxvizError", "open", "__version__"]
__version__ = "0.1.0"


def open(path: str) -> Document:  # noqa: A001 - mirrors builtins.open on purpose
    """Open an ONNX model file and return its :class:`Document`."""
    return Document.open(path)
