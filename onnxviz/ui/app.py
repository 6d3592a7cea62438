"""QApplication set-up, bundled resources, and the global exception hook."""

from __future__ import annotations

import sys
import threading
import traceback
from importlib import resources
from pathlib import Path
from types import TracebackType

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QIcon
from PySide6.QtWidgets import QApplication, QMessageBox

from onnxviz.model.process_tuning import tune_window_process
from onnxviz.ui.applog import append_log, log, log_path
from onnxviz.ui.settings import APPLICATION, ORGANIZATION
from onnxviz.ui.tasks import start_task_pools
from onnxviz.ui.widgets.tooltips import guard_tooltips


def package_file(*parts: str) -> Path:
    """A file shipped inside the installed package (works from a wheel and from the repo)."""
    return Path(str(resources.files("onnxviz").joinpath(*parts)))


def example_model_path() -> Path:
    return package_file("resources", "examples", "example.onnx")


def app_icon() -> QIcon:
    return QIcon(str(package_file("ui", "icons", "onnxviz.svg")))


def ensure_app(argv: list[str] | None = None, guard: bool = True) -> QApplication:
    """The application, made once. ``guard=False`` leaves the tooltip guard to the caller, for a window that
    installs it once built, before it can be shown: the guard sees every event of the application, and building
    the window sends ~5,500 (~5% of ``onnxviz FILE --screenshot``'s window process, its instructions counted)."""
    app = QApplication.instance()
    tune_window_process()  # the GIL's switch interval and the C allocator (see process_tuning)
    if app is None:
        # fractional scale factors (150%) render crisply instead of being rounded
        QGuiApplication.setHighDpiScaleFactorRoundingPolicy(Qt.HighDpiScaleFactorRoundingPolicy.PassThrough)
        app = QApplication(argv or sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setApplicationName(APPLICATION)
    app.setOrganizationName(ORGANIZATION)
    app.setApplicationDisplayName("onnxviz")
    app.setDesktopFileName("onnxviz")  # Wayland/X11 match the window to resources/onnxviz.desktop
    app.setWindowIcon(app_icon())
    if guard:
        guard_tooltips(app)  # a tooltip that would load a file is shown as written (text from a file is never markup)
    start_task_pools(app)  # its threads for tasks, shut down as the interpreter ends
    return app


class _ExceptionHook:
    """Unhandled exceptions are logged to a file, shown without blocking, and the app keeps running.

    The dialog is non-modal (``show``, never ``exec``): a nested event loop could
    re-enter the hook or stall a test. While a dialog is up, further exceptions
    are only logged, and an error inside the hook itself falls back to stderr.
    """

    def __init__(self) -> None:
        self.box: QMessageBox | None = None
        self._in_hook = False

    def __call__(self, kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        if self._in_hook:
            sys.__excepthook__(kind, exc, tb)
            return
        self._in_hook = True
        try:
            text = "".join(traceback.format_exception(kind, exc, tb))
            self._log(text)
            if threading.current_thread() is threading.main_thread():
                self._show(exc, text)
        except Exception:  # noqa: BLE001 - the hook must never raise
            sys.__excepthook__(kind, exc, tb)
        finally:
            self._in_hook = False

    @staticmethod
    def _log(text: str) -> None:
        log.error("unhandled exception:\n%s", text)
        append_log(text, log_path())

    def _show(self, exc: BaseException, text: str) -> None:
        if QApplication.instance() is None or (self.box is not None and self.box.isVisible()):
            return
        self.box = QMessageBox(QMessageBox.Icon.Critical, "onnxviz",
                               f"Something went wrong: {exc}. onnxviz keeps running; the details were "
                               f"written to {log_path()}.")
        self.box.setTextFormat(Qt.TextFormat.PlainText)  # the error may quote a name or a path: never markup
        self.box.setDetailedText(text)
        self.box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.box.destroyed.connect(self._forget_box)
        self.box.show()

    def _forget_box(self) -> None:
        self.box = None


def install_exception_hook() -> _ExceptionHook:
    hook = _ExceptionHook()
    sys.excepthook = hook
    threading.excepthook = lambda args: hook(args.exc_type, args.exc_value, args.exc_traceback)  # type: ignore[arg-type]
    return hook
