"""QApplication set-up, the global exception hook and the entry point of the window."""

from __future__ import annotations

import logging
import sys
import traceback
from pathlib import Path
from types import TracebackType

from PySide6.QtCore import QStandardPaths
from PySide6.QtWidgets import QApplication, QMessageBox

log = logging.getLogger("onnxviz")


def log_path() -> Path:
    base = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppLocalDataLocation) or str(Path.home())
    path = Path(base) / "onnxviz.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def ensure_app(argv: list[str] | None = None) -> QApplication:
    app = QApplication.instance()
    if app is None:
        app = QApplication(argv or sys.argv[:1])
        app.setApplicationName("onnxviz")
        app.setOrganizationName("onnxviz")
        app.setApplicationDisplayName("onnxviz")
    assert isinstance(app, QApplication)
    return app


def install_exception_hook() -> None:
    """Unhandled exceptions are logged to a file, shown, and the app keeps running."""

    def hook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        text = "".join(traceback.format_exception(kind, exc, tb))
        try:
            with open(log_path(), "a", encoding="utf-8") as f:
                f.write(text + "\n")
        except OSError:
            pass
        log.error("unhandled exception:\n%s", text)
        if QApplication.instance() is not None and not getattr(hook, "showing", False):
            hook.showing = True  # type: ignore[attr-defined]
            try:
                box = QMessageBox(QMessageBox.Icon.Critical, "onnxviz",
                                  f"Something went wrong: {exc}. The app keeps running; details were logged.")
                box.setDetailedText(text)
                box.exec()
            finally:
                hook.showing = False  # type: ignore[attr-defined]

    sys.excepthook = hook
