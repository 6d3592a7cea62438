"""The window's questions and notices: unsaved edits, a reload over edits, an error, About. None of them blocks: each
opens window-modal and calls back with the answer."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QWidget

from onnxviz.model.document import Document
from onnxviz.ui.widgets.names import message_text

Button = QMessageBox.StandardButton


def ask_save_changes(parent: QWidget, doc: Document | None, answer: Callable[[QMessageBox.StandardButton], None]) -> None:
    """Ask Save / Discard / Cancel about unsaved edits of ``doc``; ``answer`` gets the button."""
    name = doc.name if doc is not None else "the model"
    note = doc.problem_summary() if doc is not None else ""
    info = "Your edits will be lost if you don't save them."
    if note:
        info += f" The model currently has {note}; it can be saved anyway."
    box = question(parent, f"Save the changes to {name}?", info, Button.Save | Button.Discard | Button.Cancel,
                   Button.Save)
    box.finished.connect(lambda _r: answer(box.standardButton(box.clickedButton()) or Button.Cancel))
    box.open()


def confirm_reload_over_edits(parent: QWidget, text: str, answer: Callable[[bool], None]) -> None:
    """Ask whether to reload from disk over unsaved edits; ``answer`` gets True for Reload."""
    box = question(parent, text, "Choose Keep Edits to continue with what you have.", Button.Yes | Button.No,
                   Button.No)
    box.button(Button.Yes).setText("Reload")
    box.button(Button.No).setText("Keep Edits")
    box.finished.connect(lambda _r: answer(box.clickedButton() is box.button(Button.Yes)))
    box.open()


def question(parent: QWidget, text: str, info: str, buttons: QMessageBox.StandardButton,
             default: QMessageBox.StandardButton) -> QMessageBox:
    box = QMessageBox(QMessageBox.Icon.Question, "onnxviz", message_text(text), buttons, parent)
    box.setTextFormat(Qt.TextFormat.PlainText)  # the question names the file: never markup
    box.setInformativeText(info)
    box.setDefaultButton(default)
    box.setWindowModality(Qt.WindowModality.WindowModal)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    return box


def show_error(parent: QWidget, title: str, message: str, details: str = "") -> QMessageBox:
    """A one-sentence message with the details folded away; does not block. A name the message quotes
    is shown escaped and cut, never as markup (:func:`~onnxviz.ui.widgets.names.message_text`)."""
    box = QMessageBox(QMessageBox.Icon.Warning, title, message_text(message), Button.Ok, parent)
    box.setTextFormat(Qt.TextFormat.PlainText)
    if details:
        box.setDetailedText(details)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.open()
    return box


def show_about(parent: QWidget) -> QMessageBox:
    """Name, purpose, and the versions a bug report needs; does not block."""
    from importlib.metadata import version

    from PySide6 import __version__ as pyside_version

    from onnxviz.version import VERSION

    libraries = ", ".join(f"{name} {version(name)}" for name in ("onnx", "onnxruntime", "numpy"))
    box = QMessageBox(QMessageBox.Icon.NoIcon, "About onnxviz",
                      f"<h3>onnxviz {VERSION}</h3><p>View, edit, validate and run ONNX models.</p>"
                      f"<p style='color: palette(placeholder-text)'>{libraries}, PySide6 {pyside_version}</p>",
                      Button.Ok, parent)
    box.setIconPixmap(parent.windowIcon().pixmap(64, 64))
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.open()
    return box
