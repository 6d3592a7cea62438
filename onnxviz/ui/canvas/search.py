"""Find nodes, op types, values and initializers (Ctrl+F); jump to a result."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
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

from onnxviz.model.graph.index import INITIALIZER, ModelIndex
from onnxviz.model.text import display_name
from onnxviz.ui.tasks import Task
from onnxviz.ui.widgets.names import name_tooltip

MAX_RESULTS = 500
NAME_CHARS = 120  # of a name in a result (elided to the list's width; its tooltip has more)
SYNC_BUILD_NODES = 20_000   # bigger models index their names for search in the background


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
        """One line: the name escaped and cut (invisible characters shown, like everywhere else)."""
        where = f", in {display_name(self.scope, NAME_CHARS)}" if self.scope else ""
        if self.what == "op":
            return f"{display_name(self.text, NAME_CHARS)}    ({display_name(self.detail, NAME_CHARS)}{where})"
        return f"{display_name(self.text, NAME_CHARS)}    ({self.what}{where})"


class SearchIndex:
    """Every searchable text of a model joined into one string, so a search is one regex scan in C.

    Rows are ordered main graph first: node names, op types, then value and initializer names.
    """

    def __init__(self, index: ModelIndex) -> None:
        texts: list[str] = []
        self._rows: list[tuple[str, int, str, str]] = []   # scope, node, value, what
        for scope, g in index.graphs.items():
            for i, node in enumerate(g.nodes):
                if node.name:
                    texts.append(node.name)
                    self._rows.append((scope, i, "", "node"))
            for i, node in enumerate(g.nodes):
                texts.append(node.op_type)
                self._rows.append((scope, i, "", "op"))
            for name, producer in g.producer.items():
                texts.append(name)
                self._rows.append((scope, -1, name, "initializer" if producer == INITIALIZER else "value"))
        self._index = index
        self._names = texts  # as written, for the results; searched with newlines as spaces (one name a line)
        self._texts = [t.replace("\n", " ") for t in texts]
        self._joined = "\n".join(self._texts)
        self._starts = np.cumsum([0] + [len(t) + 1 for t in self._texts[:-1]]) if texts else np.zeros(0, np.int64)

    def search(self, pattern: str, regex: bool = False, limit: int = MAX_RESULTS) -> list[SearchHit]:
        """Case-insensitive substring (or regex, ^ and $ per name) search."""
        if not pattern or not self._texts:
            return []
        try:
            rx = re.compile(pattern if regex else re.escape(pattern), re.IGNORECASE | re.MULTILINE)
        except re.error as exc:
            raise ValueError(f"invalid regular expression: {exc}") from exc
        hits: list[SearchHit] = []
        seen: set[tuple[str, int]] = set()
        last = -1
        for match in rx.finditer(self._joined):
            row = int(np.searchsorted(self._starts, match.start(), side="right")) - 1
            if row == last:
                continue
            last = row
            hit = self._hit(row)
            if hit.node >= 0:   # a node matching by name and by op type is listed once
                if (hit.scope, hit.node) in seen:
                    continue
                seen.add((hit.scope, hit.node))
            hits.append(hit)
            if len(hits) >= limit:
                break
        return hits

    def _hit(self, row: int) -> SearchHit:
        scope, node, value, what = self._rows[row]
        detail = self._index.graphs[scope].node_label(node) if what == "op" else ""
        return SearchHit(scope, node, value, what, self._names[row], detail)


def search(index: ModelIndex, pattern: str, regex: bool = False, limit: int = MAX_RESULTS) -> list[SearchHit]:
    """One-off search (builds a :class:`SearchIndex`)."""
    return SearchIndex(index).search(pattern, regex, limit)


class SearchPanel(QFrame):
    """A floating find box with a result list; ``activated`` carries the chosen :class:`SearchHit`."""

    activated = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.index: ModelIndex | None = None
        self._searcher: SearchIndex | None = None
        self._build_task: Task | None = None
        self.hits: list[SearchHit] = []
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        self.setStyleSheet("SearchPanel { background: palette(window); border: 1px solid palette(mid); "
                           "border-radius: 6px; }")
        self.field = QLineEdit(placeholderText="Find node, op type, value or initializer")
        self.field.setClearButtonEnabled(True)
        self.regex = QCheckBox("Regex")
        close = QToolButton()
        close.setText("✕")
        close.setAutoRaise(True)
        close.setToolTip("Close (Esc)")
        close.clicked.connect(self.hide)
        self.status = QLabel("")
        self.results = QListWidget()
        self.results.setUniformItemSizes(True)
        # a long name is elided in the middle to the list's width, never scrolled to sideways
        self.results.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.results.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
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
        self.field.returnPressed.connect(self._activate_current)
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
        self._searcher = None
        if self._build_task is not None:
            self._build_task.cancel()
            self._build_task = None
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
            if self._searcher is None and self.index.node_count() <= SYNC_BUILD_NODES:
                self._searcher = SearchIndex(self.index)
            if self._searcher is None:
                self._build_in_background(self.index)
                return
            self.hits = self._searcher.search(self.field.text(), self.regex.isChecked())
        except ValueError as exc:
            self.status.setText(str(exc).capitalize() + ".")
            return
        for hit in self.hits:
            item = QListWidgetItem(hit.display())
            item.setToolTip(name_tooltip(hit.detail if hit.what == "op" else hit.text))
            self.results.addItem(item)
        more = "+" if len(self.hits) >= MAX_RESULTS else ""
        self.status.setText(f"{len(self.hits)}{more} result{'s' if len(self.hits) != 1 else ''}")

    def _build_in_background(self, index: ModelIndex) -> None:
        self.status.setText("Indexing names...")
        if self._build_task is not None:
            return
        task = Task(lambda progress, token: SearchIndex(index), "Indexing names for search", parent=self)

        def built(searcher: SearchIndex) -> None:
            self._build_task = None
            if index is self.index:
                self._searcher = searcher
                self.run()

        task.finished.connect(built)
        self._build_task = task
        task.start()

    def _activate(self, item: QListWidgetItem) -> None:
        row = self.results.row(item)
        if 0 <= row < len(self.hits):
            self.activated.emit(self.hits[row])

    def _activate_current(self) -> None:
        """Enter in the field: the result chosen with the arrow keys, else the first."""
        if self._timer.isActive() or not self.hits:
            self.run()
        if self.hits:
            row = max(self.results.currentRow(), 0)
            self.results.setCurrentRow(row)
            self.activated.emit(self.hits[row])

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        if event.key() == Qt.Key.Key_Escape:
            self.hide()
        elif event.key() in (Qt.Key.Key_Down, Qt.Key.Key_Up) and self.results.count():
            # the field ignores these keys: they move through the results while typing stays in the field
            if self._timer.isActive():
                self.run()
            step = 1 if event.key() == Qt.Key.Key_Down else -1
            self.results.setCurrentRow(min(max(self.results.currentRow() + step, 0), self.results.count() - 1))
        else:
            super().keyPressEvent(event)
