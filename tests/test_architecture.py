"""The model layer must work headless: it never imports Qt or the UI package."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

MODEL_DIR = Path(__file__).resolve().parents[1] / "onnxviz" / "model"
FORBIDDEN = ("PySide6", "shiboken6", "pyqtgraph", "onnxviz.ui", "PyQt5", "PyQt6")


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
    return names


def test_model_sources_never_import_qt() -> None:
    offenders = [f"{p.name}: {name}" for p in MODEL_DIR.rglob("*.py") for name in _imports(p)
                 if name.startswith(FORBIDDEN)]
    assert offenders == []


def test_model_layer_imports_without_qt_loaded() -> None:
    code = (
        "import sys, pkgutil, importlib, onnxviz.model as m\n"
        "for info in pkgutil.walk_packages(m.__path__, 'onnxviz.model.'):\n"
        "    importlib.import_module(info.name)\n"
        "import onnxviz\n"
        "bad = [k for k in sys.modules if k.startswith(('PySide6', 'pyqtgraph'))]\n"
        "print(bad); raise SystemExit(1 if bad else 0)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
