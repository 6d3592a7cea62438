"""onnxviz: open, see, inspect, edit and run ONNX models in one desktop window.

The package is split in two layers:

* :mod:`onnxviz.model` - documents, indexes, validation, layout, statistics and
  the runner; plain Python, usable headless and from scripts.
* :mod:`onnxviz.ui` - the PySide6 widgets that show and edit a document.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

# onnxruntime 1.29+ sends usage events to Microsoft from Linux too (1DS telemetry: DNS lookups of
# mobile.events.data.microsoft.com during runs, model file and graph names among the data). Its one switch is this
# variable, read as onnxruntime is imported: set before any of onnxviz's processes imports it (the worker processes
# inherit it). A user who set it otherwise keeps their choice.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

if TYPE_CHECKING:
    from onnxviz.model.document import Document
    from onnxviz.model.errors import OnnxvizError

__all__ = ["Document", "OnnxvizError", "open", "__version__"]
__version__ = "0.1.0"


def open(path: str) -> Document:  # noqa: A001 - mirrors builtins.open on purpose
    """Open an ONNX model file and return its :class:`Document`."""
    from onnxviz.model.document import Document

    return Document.open(path)


def __getattr__(name: str) -> Any:
    """``Document`` and ``OnnxvizError``, imported when first asked for: the command (and each worker
    process, which imports this package first) starts without importing onnx and numpy here."""
    if name == "Document":
        from onnxviz.model.document import Document

        return Document
    if name == "OnnxvizError":
        from onnxviz.model.errors import OnnxvizError

        return OnnxvizError
    raise AttributeError(f"module 'onnxviz' has no attribute {name!r}")
