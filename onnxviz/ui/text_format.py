"""The "Open as text format?" question for a file that is an ONNX model written as text.

:class:`~onnxviz.model.io.loading.TextFormatError` says the file is in the ``onnx.parser``
syntax or in protobuf text format. The window asks whether to parse it as text; on
yes, it is read in the background like any other open. The document then has no file
name, so Save As writes a binary ``.onnx`` instead of overwriting the text.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from onnxviz.model.document import Document
from onnxviz.model.errors import OnnxvizError
from onnxviz.model.io.loading import TextFormatError
from onnxviz.model.progress import CancelToken, ProgressFn
from onnxviz.ui.ports import Status
from onnxviz.ui.tasks import Task
from onnxviz.ui.widgets.names import message_text

if TYPE_CHECKING:
    from PySide6.QtCore import SignalInstance
    from PySide6.QtWidgets import QWidget


class Opener(Status, Protocol):
    """What opening a model as text needs of the window: its messages, the window itself (:meth:`window`: the parent
    of the questions), to show the document, and to say the open ended."""

    def window(self) -> QWidget: ...

    def set_document(self, doc: Document | None) -> None: ...

    @property
    def loading_finished(self) -> SignalInstance: ...

Button = QMessageBox.StandardButton


def offer_text_format(window: Opener, path: Path, error: TextFormatError) -> QMessageBox:
    """Ask (without blocking) whether to open ``path`` as text; opens it on "Open as Text"."""
    box = QMessageBox(QMessageBox.Icon.Question, "Open as Text Format?", message_text(error.message),
                      Button.Open | Button.Cancel, window.window())
    box.setTextFormat(Qt.TextFormat.PlainText)  # the message quotes the file's name: never markup
    box.button(Button.Open).setText("Open as Text")
    box.setInformativeText("The model opens without a file name: use Save As to write it as a binary .onnx file.")
    box.setDefaultButton(Button.Open)
    box.finished.connect(lambda _r: box.clickedButton() is box.button(Button.Open) and open_as_text(window, path))
    box.open()
    return box


def open_as_text(window: Opener, path: Path) -> Task:
    """Parse and index ``path`` as a text-format model off the GUI thread, then show it."""

    def work(_progress: ProgressFn, _token: CancelToken) -> Document:
        doc = Document.open(path, text_format=True)
        _ = doc.index
        return doc

    task = Task(work, f"Opening {path.name} as text", parent=window.window())
    task.finished.connect(lambda doc: _opened(window, path, doc))
    task.failed.connect(lambda exc, tb: _failed(window, path, exc, tb))
    window.show_message(f"Opening {path.name} as text...")
    task.start()
    return task


def _opened(window: Opener, path: Path, doc: Document) -> None:
    window.set_document(doc)
    window.show_message(f"Opened {path.name} as text; Save As writes a binary .onnx file.", 8000)
    window.loading_finished.emit()


def _failed(window: Opener, path: Path, exc: object, tb: str) -> None:
    message = exc.message if isinstance(exc, OnnxvizError) else f"{path.name} could not be opened as text: {exc}."
    details = (exc.details if isinstance(exc, OnnxvizError) else "") or tb
    window.show_message(message)
    window.loading_finished.emit()
    box = QMessageBox(QMessageBox.Icon.Warning, "Cannot Open Model", message_text(message), Button.Ok, window.window())
    box.setTextFormat(Qt.TextFormat.PlainText)  # the message names the file: never markup
    box.setDetailedText(details)
    box.open()
