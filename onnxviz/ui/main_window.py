"""The main window: owns the open document, the canvas, the docks and the menus.

Features plug in through ``install(window)`` functions in their own modules
(canvas, panels, editing, running) so this file stays a thin shell.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from PySide6.QtCore import QSize, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFileDialog, QLabel, QMainWindow, QMessageBox, QWidget

from onnxviz.model.document import Change, Document
from onnxviz.model.errors import OnnxvizError
from onnxviz.model.loading import TextFormatError
from onnxviz.ui.tasks import Task
from onnxviz.ui.validation import ValidationService

# Each feature module has ``install(window)``; they run in this order.
FEATURES = ("canvas", "panels", "edit", "run")


class MainWindow(QMainWindow):
    """One window, one document."""

    document_changed = Signal(object)   # the new Document (or None) after open/close
    model_changed = Signal(object)      # a model.document.Change after each edit/undo/redo/save
    loading_finished = Signal()         # a document was opened and the view is ready (or the open failed)

    def __init__(self) -> None:
        super().__init__()
        self.doc: Document | None = None
        self._load_task: Task | None = None
        self.setWindowTitle("onnxviz")
        self.resize(1400, 900)
        self.placeholder = QLabel("Open an ONNX model with File > Open (Ctrl+O).")
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setCentralWidget(self.placeholder)
        self._build_menus()
        self.validation = ValidationService(parent=self)
        for name in FEATURES:
            importlib.import_module(f"onnxviz.ui.{name}.feature").install(self)
        self.statusBar().showMessage("Ready")

    # -- menus ---------------------------------------------------------------------
    def _build_menus(self) -> None:
        self.file_menu = self.menuBar().addMenu("&File")
        self.edit_menu = self.menuBar().addMenu("&Edit")
        self.view_menu = self.menuBar().addMenu("&View")
        self.run_menu = self.menuBar().addMenu("&Run")
        self.help_menu = self.menuBar().addMenu("&Help")
        open_action = QAction("&Open...", self, shortcut=QKeySequence.StandardKey.Open)
        open_action.triggered.connect(self.open_dialog)
        self.file_menu.addAction(open_action)
        quit_action = QAction("&Quit", self, shortcut=QKeySequence.StandardKey.Quit)
        quit_action.triggered.connect(self.close)
        self.file_menu.addAction(quit_action)

    # -- opening -------------------------------------------------------------------
    def open_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open ONNX model", "", "ONNX models (*.onnx);;All files (*)")
        if path:
            self.open_path(path)

    def open_path(self, path: str | Path) -> None:
        """Load in the background; the current document stays until the new one is ready."""
        if self._load_task is not None:
            self._load_task.cancel()
        task = Task(lambda progress, token: _load(Path(path)), f"Opening {Path(path).name}")
        task.finished.connect(self._on_loaded)
        task.failed.connect(lambda exc, tb: self._on_load_failed(Path(path), exc, tb))
        self._load_task = task
        self.statusBar().showMessage(f"Opening {Path(path).name}...")
        task.start()

    def _on_loaded(self, doc: Document) -> None:
        self._load_task = None
        self.set_document(doc)
        self.loading_finished.emit()

    def _on_load_failed(self, path: Path, exc: object, tb: str) -> None:
        self._load_task = None
        message = exc.message if isinstance(exc, OnnxvizError) else f"{path.name} could not be opened: {exc}."
        details = (exc.details if isinstance(exc, OnnxvizError) else "") or tb
        self.statusBar().showMessage(message)
        self.loading_finished.emit()
        if isinstance(exc, TextFormatError):  # a model written as text: offer to parse it as such
            from onnxviz.ui.text_format import offer_text_format

            offer_text_format(self, path, exc)
            return
        box = QMessageBox(QMessageBox.Icon.Warning, "Cannot open model", message, parent=self)
        box.setDetailedText(details)
        box.open()

    def set_document(self, doc: Document | None) -> None:
        if self.doc is not None:
            self.doc.changed.disconnect(self._on_model_changed)
        self.doc = doc
        if doc is not None:
            doc.changed.connect(self._on_model_changed)
            self.placeholder.setText(f"{doc.name}: {len(doc.model.graph.node)} nodes")
        self._update_title()
        self.validation.set_document(doc)
        self.document_changed.emit(doc)

    def _on_model_changed(self, change: Change) -> None:
        self._update_title()
        self.model_changed.emit(change)

    def _update_title(self) -> None:
        if self.doc is None:
            self.setWindowTitle("onnxviz")
            return
        self.setWindowTitle(f"{self.doc.name}[*] - onnxviz")
        self.setWindowModified(self.doc.is_dirty)

    # -- screenshots ---------------------------------------------------------------
    def screenshot_and_quit(self, path: str | None, out: str, size: str = "1400x900") -> int:
        """Open ``path``, wait until it is drawn, grab the window to ``out``, return the exit code."""
        from onnxviz.ui.app import ensure_app

        app = ensure_app()
        w, h = (int(x) for x in size.lower().split("x"))
        self.resize(QSize(w, h))
        self.show()
        result = {"code": 0}

        def grab() -> None:
            app.processEvents()
            if not self.grab().save(out):
                result["code"] = 2
            app.quit()

        def when_ready() -> None:
            QTimer.singleShot(0, grab)

        if path:
            canvas = getattr(self, "canvas", None)
            if canvas is not None:  # the graph has been laid out and painted (or could not be)
                canvas.scene_ready.connect(when_ready)
                canvas.layout_failed.connect(lambda *_: when_ready())
                self.loading_finished.connect(lambda: self.doc is None and when_ready())
            else:
                self.loading_finished.connect(when_ready)
            self.open_path(path)
        else:
            when_ready()
        app.exec()
        return result["code"]

    def central_placeholder(self) -> QWidget:
        return self.placeholder


def _load(path: Path) -> Document:
    doc = Document.open(path)
    _ = doc.index  # build the index off the GUI thread
    return doc
