"""The window ``onnxviz.show`` opens, driven by its handle in another process (see
:mod:`onnxviz.api.protocol`): requests read on a thread of their own, handled on the GUI thread; events
sent when a model is drawn, cannot be opened, has run, or when the window closes."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QApplication

from onnxviz.api.protocol import Link, read_message
from onnxviz.model.document import Document
from onnxviz.model.errors import OnnxvizError
from onnxviz.ui.main_window import MainWindow
from onnxviz.ui.png import write_image
from onnxviz.ui.screenshot import settle_layouts


class RemoteControl(QObject):
    """Carries out a handle's requests on ``window`` and tells it what became of them."""

    received = Signal(object)  # a request, from the reading thread

    def __init__(self, window: MainWindow, link: Link) -> None:
        super().__init__(window)
        self.window, self.link = window, link
        self._loading: dict[str, Any] | None = None  # the show request being opened
        self._drawing: dict[str, Any] | None = None  # opened, waiting to be drawn
        self._running = 0  # the id of the show whose inputs run
        self.received.connect(self.handle)
        window.document_changed.connect(self._opened)
        window.load_failed.connect(self._failed)
        window.canvas.scene_ready.connect(self._drawn)
        window.canvas.layout_failed.connect(lambda _message: self._drawn())
        window.run_controller.run_finished.connect(lambda: self._ran(True, ""))
        window.run_controller.run_failed.connect(lambda message: self._ran(False, message))

    def listen(self) -> None:
        """Read requests until the handle goes away (the window then stays, as its user's)."""
        def read() -> None:
            while (message := read_message(self.link.requests)) is not None:
                self.received.emit(message)

        threading.Thread(target=read, name="onnxviz-remote", daemon=True).start()

    def handle(self, request: dict[str, Any]) -> None:
        op = request.get("op")
        if op == "show" and isinstance(request.get("path"), str):
            self._show(request)
        elif op == "screenshot" and isinstance(request.get("path"), str):
            self._screenshot(request)
        elif op == "close":
            self.window.close()

    # -- showing ------------------------------------------------------------------------------
    def _show(self, request: dict[str, Any]) -> None:
        doc = self.window.doc
        if doc is None or not doc.is_dirty:
            self._open(request)
            return

        def answered(yes: bool) -> None:
            if yes:
                self._open(request)
            else:
                self.link.send({"event": "kept", "id": request.get("id")})

        self.window.confirm_reload_over_edits(
            f"Your script sent a new version of the model. Show it and discard your unsaved edits of {doc.name}?",
            answered)

    def _open(self, request: dict[str, Any]) -> None:
        self._loading, self._drawing = request, None
        name = request.get("name")
        self.window.show_model(Path(request["path"]), name if isinstance(name, str) else None)

    def _opened(self, doc: Document | None) -> None:
        if doc is not None and self._loading is not None:
            self._loading, self._drawing = None, self._loading

    def _failed(self, message: str) -> None:
        if self._loading is not None:
            self.link.send({"event": "failed", "id": self._loading.get("id"), "message": message})
            self._loading = None

    def _drawn(self) -> None:
        request, doc = self._drawing, self.window.doc
        if request is None or doc is None:
            return
        self._drawing = None
        ident = int(request.get("id", 0))
        self.link.remove_before(ident)
        self.link.send({"event": "shown", "id": ident, "name": doc.name, "nodes": len(doc.model.graph.node)})
        inputs = request.get("inputs") or {}
        if inputs:
            self._running = ident
            self.window.run_controller.run_with_files({str(k): str(v) for k, v in inputs.items()})

    def _ran(self, ok: bool, message: str) -> None:
        if self._running:
            self.link.send({"event": "ran", "id": self._running, "ok": ok, "message": message})
            self._running = 0

    # -- pictures -----------------------------------------------------------------------------
    def _screenshot(self, request: dict[str, Any]) -> None:
        app = QApplication.instance()
        if app is not None:
            app.processEvents()
        settle_layouts()
        path = request["path"]
        try:
            write_image(self.window.grab().toImage(), Path(path))  # every byte checked, written in one step
            ok, message = True, ""
        except OnnxvizError as exc:
            ok, message = False, exc.message
        self.link.send({"event": "screenshot", "id": request.get("id"), "ok": ok, "message": message})


def serve(app: QApplication, window: MainWindow, link: Link) -> int:
    """Show ``window``, carry out ``link``'s first request and every later one until the window closes; then
    remove the hand-over folder and say so."""
    control = RemoteControl(window, link)
    window.show()
    assert link.first is not None
    control.handle(link.first)
    control.listen()
    try:
        return app.exec()
    finally:
        link.remove_folder()
        link.send({"event": "closed", "id": 0})
