"""Find nodes, op types, values and initializers (Ctrl+F); jump to a result."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from onnxviz.model.index import INITIALIZER, ModelIndex

MAX_RESULTS = 500


@dataclass(frozen=True)
class SearchHit:
    """A node (``node`` >= 0) or a value (``value``) in ``scope`` whose ``text`` matched."""

    scope: str
    node: int
    value: str
    what: str    # "node", "op", "value", "initializer"
    text: str
    detail: str = ""   # the node an "op" hit stands for

    def display(self) -> str:
        where = f", in {self.scope}" if self.scope else ""
        if self.what == "op":
            return f"{self.text}    ({self.detail}{where})"
        return f"{self.text}    ({self.what}{where})"


def search(index: ModelIndex, pattern: str, regex: bool = False, limit: int = MAX_RESULTS) -> list[SearchHit]:
    """Case-insensitive substring (or regex) search over every graph of the model, main graph first."""
    if not pattern:
        return []
    try:
        rx = re.compile(pattern if regex else re.escape(pattern), re.IGNORECASE)
    except re.error as exc:
        raise ValueError(f"invalid regular expression: {exc}") from exc
    hits: list[SearchHit] = []
    seen: set[tuple[str, int]] = set()
    for hit in _candidates(index):
        if rx.search(hit.text):
            if hit.node >= 0:   # a node matching by name and by op type is listed once
                if (hit.scope, hit.node) in seen:
                    continue
                seen.add((hit.scope, hit.node))
            hits.append(hit)
            if len(hits) >= limit:
                break
    return hits


def _candidates(index: ModelIndex) -> Iterator[SearchHit]:
    for scope, g in index.graphs.items():
        for i, node in enumerate(g.nodes):
            if node.name:
                yield SearchHit(scope, i, "", "node", node.name)
        for i, node in enumerate(g.nodes):
            yield SearchHit(scope, i, "", "op", node.op_type, g.node_label(i))
        for name, producer in g.producer.items():
            yield SearchHit(scope, -1, name, "initializer" if producer == INITIALIZER else "value", name)


class SearchPanel(QFrame):
    """A floating find box with a result list; ``activated`` carries the chosen :class:`SearchHit`."""

    activated = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.index: ModelIndex | None = None
        self.hits: list[SearchHit] = []
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        self.setStyleSheet("SearchPanel { background: palette(window); border: 1px solid palette(mid); "
                           "border-radius: 6px; }")
        self.field = QLineEdit(placeholderText="Find node, op type, value or initializer")
        self.field.setClearButtonEnabled(True)
        self.regex = QCheckBox("Regex")
        close = QToolButton(text="✕", autoRaise=True, toolTip="Close (Esc)")
        close.clicked.connect(self.hide)
        self.status = QLabel("")
        self.results = QListWidget()
        self.results.setUniformItemSizes(True)
        row = QHBoxLayout()
        row.addWidget(self.field, 1)
        row.addWidget(self.regex)
        row.addWidget(close)
        box = QVBoxLayout(self)
        box.setContentsMargins(8, 8, 8, 8)
        box.addLayout(row)
        box.addWidget(self.status)
        box.addWidget(self.results, 1)
        self._timer = QTimer(self, singleShot=True, interval=150)
        self._timer.timeout.connect(self.run)
        self.field.textChanged.connect(lambda _: self._timer.start())
        self.regex.toggled.connect(lambda _: self.run())
        self.field.returnPressed.connect(self._activate_first)
        self.results.itemActivated.connect(self._activate)
        self.results.itemClicked.connect(self._activate)
        self.resize(380, 320)

    def open(self) -> None:
        self.show()
        self.raise_()
        self.field.setFocus()
        self.field.selectAll()

    def set_index(self, index: ModelIndex | None) -> None:
        self.index = index
        if self.isVisible():
            self.run()

    def run(self) -> None:
        self._timer.stop()
        self.results.clear()
        self.hits = []
        if self.index is None or not self.field.text():
            self.status.setText("")
            return
        try:
            self.hits = search(self.index, self.field.text(), self.regex.isChecked())
        except ValueError as exc:
            self.status.setText(str(exc).capitalize() + ".")
            return
        for hit in self.hits:
            item = QListWidgetItem(hit.display())
            item.setToolTip(hit.display())
            self.results.addItem(item)
        more = "+" if len(self.hits) >= MAX_RESULTS else ""
        self.status.setText(f"{len(self.hits)}{more} result{'s' if len(self.hits) != 1 else ''}")

    def _activate(self, item: QListWidgetItem) -> None:
        row = self.results.row(item)
        if 0 <= row < len(self.hits):
            self.activated.emit(self.hits[row])

    def _activate_first(self) -> None:
        if self._timer.isActive() or not self.hits:
            self.run()
        if self.hits:
            self.results.setCurrentRow(0)
            self.activated.emit(self.hits[0])

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        if event.key() == Qt.Key.Key_Escape:
            self.hide()
        else:
            super().keyPressEvent(event)
