"""The Raw panel: protobuf text of the selected node or value, or of the whole model, built off the GUI thread."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from onnxviz.model.document import Document
from onnxviz.model.graph.rawtext import (
    MAX_TENSOR_BYTES,
    RawText,
    capped_copy,
    excerpt_text,
    model_excerpt,
    node_text,
    value_text,
)
from onnxviz.model.selection import SelectionState
from onnxviz.model.text import display_name
from onnxviz.ui.tasks import Task
from onnxviz.ui.widgets import mono_font
from onnxviz.ui.widgets.names import wrappable

NAME_CHARS = 60  # of the selected node's or value's name in the note above the text


class RawPanel(QWidget):
    shown = Signal()  # the text for the latest request is displayed

    def __init__(self) -> None:
        super().__init__()
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.note.setTextFormat(Qt.TextFormat.PlainText)  # it names the selection: '<b>x</b>' as written
        self.note.setStyleSheet("color: palette(placeholder-text);")
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setFont(mono_font())
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(4)
        layout.addWidget(self.note)
        layout.addWidget(self.text, 1)
        self._task: Task | None = None
        self.show_selection(None, SelectionState())

    def show_selection(self, doc: Document | None, state: SelectionState) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None
        if doc is None:
            self._display(RawText("", False), "No model open.")
            return
        index = doc.index
        if state.node >= 0:
            g = index.graphs.get(state.scope)
            if g is None or state.node >= len(g.nodes):
                self._display(RawText("", False), "The selected node no longer exists.")
                return
            # workers never read the live model: edits change it on this thread meanwhile (a copy with its tensors
            # capped: a Constant's 256 MiB value is not copied)
            node, _ = capped_copy(g.nodes[state.node], MAX_TENSOR_BYTES)
            what = f"NodeProto of {display_name(g.node_label(state.node), NAME_CHARS)}"
            work = lambda progress, token: node_text(node)  # noqa: E731
        elif state.value:
            what = f"Protos describing value '{display_name(state.value, NAME_CHARS)}'"
            raw = value_text(index, state.scope, state.value)  # small: data is capped without a full read
            work = lambda progress, token: raw  # noqa: E731
        else:
            what = "ModelProto"
            excerpt = model_excerpt(doc.model)  # what the text shows, copied: bounded, whatever the model's size
            work = lambda progress, token: excerpt_text(excerpt, cancel=token)  # noqa: E731
        self.note.setText(wrappable(f"Building the text of the {what}...", 1000))
        self.text.setPlainText("")
        task = Task(work, "Raw text", parent=self)  # dies with the panel: no late delivery to deleted widgets
        task.finished.connect(lambda raw, t=task, w=what: self._on_built(t, raw, w))
        task.failed.connect(lambda exc, tb, t=task: self._on_failed(t, exc))
        self._task = task
        task.start()

    def _on_built(self, task: Task, raw: RawText, what: str) -> None:
        if task is self._task:
            self._task = None
            self._display(raw, what + (" (shortened, see the # lines at the top)" if raw.truncated else ""))

    def _on_failed(self, task: Task, exc: object) -> None:
        if task is self._task:
            self._task = None
            self._display(RawText("", False), f"The text could not be built: {exc}.")

    def _display(self, raw: RawText, note: str) -> None:
        self.note.setText(wrappable(note, 1000))  # a long name wraps within the panel
        self.text.setPlainText(raw.text)
        self.shown.emit()
