"""The model layer must work headless: it never imports Qt or the UI package."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from conftest import REPO

MODEL_DIR = REPO / "onnxviz" / "model"
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


_TITLE_CALLS = ("getOpenFileName", "getSaveFileName", "getExistingDirectory", "show_error", "warning",
                "information", "question", "setWindowTitle")
_MINOR_WORDS = {"a", "an", "and", "as", "at", "by", "for", "in", "of", "on", "or", "the", "to", "with"}


def _window_titles() -> list[tuple[str, str]]:
    """(file, title) for every literal title given to a dialog or message box in the UI sources."""
    found = []
    for path in sorted((MODEL_DIR.parent / "ui").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            args = node.args
            if name == "QMessageBox" and len(args) >= 2:
                title = args[1]
            elif name in _TITLE_CALLS and args:
                title = args[0] if name in ("show_error", "setWindowTitle") else args[1] if len(args) > 1 else None
            else:
                continue
            if isinstance(title, ast.Constant) and isinstance(title.value, str) and title.value:
                found.append((path.name, title.value))
    return found


def test_window_titles_are_in_title_case_like_the_menus() -> None:
    titles = _window_titles()
    assert len(titles) >= 10
    wrong = [(f, t) for f, t in titles
             for k, word in enumerate(t.split()) if word[0].isalpha() and word[0].islower()
             and (k == 0 or word not in _MINOR_WORDS) and word != "onnxviz"]
    assert not wrong, f"dialog titles not in Title Case: {wrong}"


UI_DIR = REPO / "onnxviz" / "ui"
SHELL = ("main_window.py", "remote.py", "screenshot.py")  # the modules that make and drive a window
FEATURES = ("panels", "edit", "run", "diff", "transform")


def test_only_the_shell_names_the_main_window_even_for_types() -> None:
    """Features get narrow ports (onnxviz.ui.ports), not the window: outside the shell no module imports
    main_window, under TYPE_CHECKING included (import-linter does not count those)."""
    offenders = [str(p.relative_to(REPO)) for p in UI_DIR.rglob("*.py")
                 if p.relative_to(UI_DIR).as_posix() not in SHELL and "onnxviz.ui.main_window" in _imports(p)]
    assert offenders == []


def test_features_never_import_each_other_even_for_types() -> None:
    """A feature reaches another only through the registry's protocols (onnxviz.ui.ports) or signals."""
    offenders = [f"{p.relative_to(REPO)}: {name}" for feature in FEATURES for p in (UI_DIR / feature).rglob("*.py")
                 for name in _imports(p) for other in FEATURES
                 if other != feature and (name == f"onnxviz.ui.{other}" or name.startswith(f"onnxviz.ui.{other}."))]
    assert offenders == []
