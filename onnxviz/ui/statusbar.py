"""The status bar: model name, node count, problems, selection, and progress of background tasks."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QStatusBar, QToolButton, QWidget

from onnxviz.model.document import Document
from onnxviz.model.problems import Severity
from onnxviz.model.selection import SelectionState
from onnxviz.model.text import display_name
from onnxviz.ui.tasks import Task
from onnxviz.ui.widgets.names import ElidedLabel, plain_tooltip

NAME_CHARS = 80  # of a node, value or file name in the status bar
SHOW_AFTER_S = 0.25  # short tasks finish without the progress bar flickering in


@dataclass
class _Tracked:
    task: Task
    cancellable: bool
    started: float = field(default_factory=time.monotonic)
    fraction: float = -1.0  # < 0: no progress reported yet (busy indicator)
    text: str = ""

    @property
    def over(self) -> bool:
        return self.task.done or self.task.token.cancelled


class TaskProgress(QWidget):
    """Label + progress bar + cancel button for the newest running :class:`Task`."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._tracked: list[_Tracked] = []
        self.label = QLabel()
        self.label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)  # next to its bar
        self.label.setTextFormat(Qt.TextFormat.PlainText)  # task labels may name things from the file
        self.bar = QProgressBar()
        self.bar.setFixedWidth(160)
        self.bar.setMaximumHeight(14)
        self.bar.setTextVisible(False)
        self.cancel_button = QToolButton()
        self.cancel_button.setText("✕")
        self.cancel_button.setAutoRaise(True)
        self.cancel_button.setToolTip("Cancel")
        self.cancel_button.clicked.connect(self.cancel_current)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 0, 2, 0)
        layout.setSpacing(6)
        layout.addWidget(self.label)
        layout.addWidget(self.bar)
        layout.addWidget(self.cancel_button)
        self._poll = QTimer(self, interval=100)
        self._poll.timeout.connect(self.refresh)
        self.hide()

    def track(self, task: Task, cancellable: bool = True) -> None:
        tracked = _Tracked(task, cancellable, text=task.label)
        self._tracked.append(tracked)
        task.progress.connect(lambda fraction, text, t=tracked: self._on_progress(t, fraction, text))
        for signal in (task.finished, task.failed, task.cancelled):
            signal.connect(self.refresh)
        self._poll.start()
        self.refresh()

    @property
    def running(self) -> list[Task]:
        return [t.task for t in self._tracked if not t.over]

    def cancel_current(self) -> None:
        current = self._current()
        if current is not None and current.cancellable:
            current.task.cancel()
        self.refresh()

    def _current(self) -> _Tracked | None:
        return next((t for t in reversed(self._tracked) if not t.over), None)

    def _on_progress(self, tracked: _Tracked, fraction: float, text: str) -> None:
        tracked.fraction = fraction
        if text:
            tracked.text = f"{tracked.task.label}: {text}" if tracked.task.label else text
        self.refresh()

    def refresh(self, *_args: object) -> None:
        self._tracked = [t for t in self._tracked if not t.over]
        current = self._current()
        if current is None:
            self._poll.stop()
            self.hide()
            return
        if time.monotonic() - current.started < SHOW_AFTER_S and self.isHidden():
            return
        more = len(self._tracked) - 1
        self.label.setText(display_name(current.text, 2 * NAME_CHARS) + (f"  (+{more} more)" if more else ""))
        if current.fraction < 0:
            self.bar.setRange(0, 0)
        else:
            self.bar.setRange(0, 1000)
            self.bar.setValue(int(max(0.0, min(1.0, current.fraction)) * 1000))
        self.cancel_button.setEnabled(current.cancellable)
        self.show()


class StatusFields(QWidget):
    """Permanent fields on the right of the status bar."""

    problems_clicked = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.selection = ElidedLabel(hint_width=None)  # elided in a narrow window; whole in its tooltip
        self.model_name = QLabel()
        self.nodes = QLabel()
        self.problems = QToolButton(autoRaise=True)
        self.problems.setToolTip("Show the problems")
        self.problems.setCursor(Qt.CursorShape.PointingHandCursor)
        self.problems.clicked.connect(self.problems_clicked)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(12, 0, 4, 0)
        layout.setSpacing(14)
        for label in (self.selection, self.model_name):  # names from the file: '<b>x</b>' is shown as written
            label.setTextFormat(Qt.TextFormat.PlainText)
        for widget in (self.selection, self.model_name, self.nodes, self.problems):
            layout.addWidget(widget)
        self.show_document(None)

    def show_document(self, doc: Document | None) -> None:
        for widget in (self.model_name, self.nodes, self.problems):
            widget.setVisible(doc is not None)
        if doc is None:
            self.selection.set_name("", "")
            return
        self.model_name.setText(display_name(doc.name, NAME_CHARS) + (" •" if doc.is_dirty else ""))
        self.model_name.setToolTip(plain_tooltip(str(doc.path)) if doc.path else "Not saved yet")
        count = doc.index.node_count()
        self.nodes.setText(f"{count:,} node{'s' if count != 1 else ''}")
        self._show_problems(doc)
        self.show_selection(doc, doc.selection.state)

    def _show_problems(self, doc: Document) -> None:
        problems = doc.problems
        counts = Counter(p.severity for p in problems)
        errors = counts[Severity.ERROR]
        if not problems:
            self.problems.setText("✓ No problems")
        else:
            parts = [s.counted(counts[s]) for s in Severity if counts[s]]  # the Problems panel's words
            self.problems.setText(("✖ " if errors else "⚠ ") + ", ".join(parts))
        colour = "#d03a3a" if errors else ("#c98a00" if problems else "")
        self.problems.setStyleSheet(f"color: {colour};" if colour else "")

    def show_selection(self, doc: Document, state: SelectionState) -> None:
        self.selection.set_name(selection_text(doc, state), selected_name(doc) if not state.is_empty else "")


def selection_text(doc: Document, state: SelectionState) -> str:
    """'Conv_3 (Conv)' for a node, 'value x' for a value, '' for nothing; names escaped and cut, on one line."""
    if state.is_empty:
        return ""
    graph = doc.index.graphs.get(state.scope)
    where = f" in {display_name(state.scope, NAME_CHARS)}" if state.scope else ""
    if state.node >= 0 and graph is not None and state.node < len(graph.nodes):
        node = graph.nodes[state.node]
        label, op = display_name(graph.node_label(state.node), NAME_CHARS), display_name(node.op_type, NAME_CHARS)
        return f"{label} ({op}){where}"
    return f"value {display_name(state.value, NAME_CHARS)}{where}" if state.value else ""


def selected_name(doc: Document) -> str:
    """The name Edit > Copy Name copies: the node's name (or label) or the value's name."""
    state = doc.selection.state
    graph = doc.index.graphs.get(state.scope)
    if state.node >= 0 and graph is not None and state.node < len(graph.nodes):
        return graph.node_label(state.node)
    return state.value


def install_status_bar(bar: QStatusBar) -> tuple[TaskProgress, StatusFields]:
    progress = TaskProgress()
    fields = StatusFields()
    bar.addPermanentWidget(progress)
    bar.addPermanentWidget(fields)
    return progress, fields
