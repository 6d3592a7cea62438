"""onnxviz: open, see, inspect, edit and run ONNX models in one desktop window.

The package is split in two layers:

* :mod:`onnxviz.model` - documents, indexes, validation, layout, statistics and
  the runner; plain Python, usable headless and from scripts.
* :mod:`onnxviz.ui` - the PySide6 widgets that show and edit a document.

The Python API (:mod:`onnxviz.api`) is exported here: ``onnxviz.open`` (a document, no window),
``onnxviz.show`` (a window in a process of its own), ``onnxviz.compare``, ``onnxviz.diff`` and ``onnxviz.run``.
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Any

from onnxviz.version import VERSION

# onnxruntime 1.29+ sends usage events to Microsoft from Linux too (1DS telemetry: DNS lookups of
# mobile.events.data.microsoft.com during runs, model file and graph names among the data). Its one switch is this
# variable, read as onnxruntime is imported: set before any of onnxviz's processes imports it (the worker processes
# inherit it). A user who set it otherwise keeps their choice.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

if TYPE_CHECKING:
    from onnxviz.api.results import (
        CompareResult,
        DiffEntry,
        DiffResult,
        PairMeasure,
        WeightMeasure,
        compare,
        diff,
    )
    from onnxviz.api.running import RunOutput, run
    from onnxviz.api.show import ModelWindow, Shown, show
    from onnxviz.model.document import Document
    from onnxviz.model.errors import OnnxvizError
    from onnxviz.model.io.saving import SaveQuestion

__all__ = ["CompareResult", "DiffEntry", "DiffResult", "Document", "ModelWindow", "OnnxvizError", "PairMeasure",
           "RunOutput", "SaveQuestion", "Shown", "WeightMeasure", "__version__", "compare", "diff", "open", "run",
           "show"]
__version__ = VERSION

# Imported when first asked for: the command (and each worker process, which imports this package first)
# starts without importing onnx and numpy here.
_LAZY = {
    "Document": "onnxviz.model.document",
    "OnnxvizError": "onnxviz.model.errors",
    "SaveQuestion": "onnxviz.model.io.saving",
    "compare": "onnxviz.api.results",
    "diff": "onnxviz.api.results",
    "CompareResult": "onnxviz.api.results",
    "DiffResult": "onnxviz.api.results",
    "DiffEntry": "onnxviz.api.results",
    "PairMeasure": "onnxviz.api.results",
    "WeightMeasure": "onnxviz.api.results",
    "run": "onnxviz.api.running",
    "RunOutput": "onnxviz.api.running",
    "show": "onnxviz.api.show",
    "ModelWindow": "onnxviz.api.show",
    "Shown": "onnxviz.api.show",
}


def open(path: str) -> Document:  # noqa: A001 - mirrors builtins.open on purpose
    """Open an ONNX model file and return its :class:`Document`."""
    from onnxviz.model.document import Document

    return Document.open(path)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'onnxviz' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
