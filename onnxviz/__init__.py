"""onnxviz: open, see, inspect, edit and run ONNX models in one desktop window.

The package is split in two layers:

* :mod:`onnxviz.model` - documents, indexes, validation, layout, statistics and
  the runner; plain Python, usable headless and from scripts.
* :mod:`onnxviz.ui` - the PySide6 widgets that show and edit a document.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

    import onnx

    from onnxviz.model.document import Document
    from onnxviz.model.errors import OnnxvizError
    from onnxviz.model.runner.api import RunValues

__all__ = ["Document", "OnnxvizError", "RunValues", "open", "run", "__version__"]
__version__ = "0.1.0"


def open(path: str) -> Document:  # noqa: A001 - mirrors builtins.open on purpose
    """Open an ONNX model file and return its :class:`Document`."""
    from onnxviz.model.document import Document

    return Document.open(path)


def run(model: str | Path | onnx.ModelProto | bytes, inputs: Any = None, **options: Any) -> RunValues:
    """Run a model on CPU in a worker process and return its values as numpy arrays (see
    :func:`onnxviz.model.runner.api.run`: ``dims``, ``capture``, ``engine``, ``optimized``, ``seed``). A
    script calling it needs no ``if __name__ == "__main__":`` guard."""
    from onnxviz.model.runner.api import run as run_values

    return run_values(model, inputs, **options)


def __getattr__(name: str) -> Any:
    """``Document`` and ``OnnxvizError``, imported when first asked for: the command (and each worker
    process, which imports this package first) starts without importing onnx and numpy here."""
    if name == "Document":
        from onnxviz.model.document import Document

        return Document
    if name == "OnnxvizError":
        from onnxviz.model.errors import OnnxvizError

        return OnnxvizError
    if name == "RunValues":
        from onnxviz.model.runner.api import RunValues

        return RunValues
    raise AttributeError(f"module 'onnxviz' has no attribute {name!r}")
