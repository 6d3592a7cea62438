"""Find nodes, op types, values and initializers (Ctrl+F); jump to a result."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice
from typing import Any

import numpy as np
from PySide6.QtCore import QAbstractListModel, QModelIndex, QObject, QPersistentModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from onnxviz.model.graph.index import INITIALIZER, ModelIndex
from onnxviz.model.text import display_name
from onnxviz.ui.tasks import Task
from onnxviz.ui.widgets.names import name_tooltip

MAX_RESULTS = 500   # of search(), the one-off list
BATCH = 256   # hits the result list fetches at a time
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
        """One line: the name escaped and cut (invisible characters shown, like everywhere else); a long
        node path keeps its numbered parts (``/model/encoder/layer.3/…/query/MatMul_Q4``: what tells one
        layer's node from another's), the tooltip has it whole."""
        where = f", in {display_name(self.scope, NAME_CHARS)}" if self.scope else ""
        if self.what == "op":
            return f"{display_name(self.text, NAME_CHARS)}    ({short_path(display_name(self.detail, None))}{where})"
        return f"{short_path(display_name(self.text, None))}    ({self.what}{where})"


SHORT_PATH = 48  # characters of a name path beyond which its unnumbered middle parts give way


def short_path(name: str, limit: int = SHORT_PATH) -> str:
    """``name`` if short; else, for a ``/``-separated path, its first and last two parts and every numbered
    one (a layer's index), each run of the others as ``…``; cut at :data:`NAME_CHARS` in any case."""
    parts = name.split("/")
    if len(name) <= limit or len(parts) < 5:
        return name[:NAME_CHARS]
    keep = [k < 2 or k >= len(parts) - 2 or any(c.isdigit() for c in part) for k, part in enumerate(parts)]
    out: list[str] = []
    for part, kept in zip(parts, keep, strict=True):
        if kept:
            out.append(part)
        elif not out or out[-1] != "\u2026":
            out.append("\u2026")
    return "/".join(out)[:NAME_CHARS]


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
        self._start_list = np.cumsum([0] + [len(t) + 1 for t in self._texts[:-1]]).tolist() if texts else []
        # one number per (scope, node) for node rows (a name row and an op row of a node share it), -1 for values
        scope_base = {scope: k << 32 for k, scope in enumerate(index.graphs)}
        self._keys = [scope_base[scope] + node if node >= 0 else -1 for scope, node, _v, _w in self._rows]

    def scan(self, pattern: str, regex: bool = False) -> Iterator[int]:
        """Rows matching a case-insensitive substring (or regex, ^ and $ per name), in order, found as they
        are asked for; a node matching by name and by op type once. One regex search per matching row:
        the scan jumps to the next name. A bad regex raises ValueError here, not on the first row."""
        if not pattern or not self._texts:
            return iter(())
        try:
            rx = re.compile(pattern if regex else re.escape(pattern), re.IGNORECASE | re.MULTILINE)
        except re.error as exc:
            raise ValueError(f"invalid regular expression: {exc}") from exc
        return self._scan(rx)

    def _scan(self, rx: re.Pattern[str]) -> Iterator[int]:
        starts, joined, keys = self._start_list, self._joined, self._keys
        seen: set[int] = set()
        pos, end = 0, len(joined)
        while pos <= end:
            match = rx.search(joined, pos)
            if match is None:
                return
            row = bisect_right(starts, match.start()) - 1
            pos = starts[row + 1] if row + 1 < len(starts) else end + 1
            key = keys[row]
            if key >= 0:
                if key in seen:
                    continue
                seen.add(key)
            yield row

    def search(self, pattern: str, regex: bool = False, limit: int = MAX_RESULTS) -> list[SearchHit]:
        """The first ``limit`` hits of :meth:`scan`."""
        return [self.hit(row) for row in islice(self.scan(pattern, regex), limit)]

    def hit(self, row: int) -> SearchHit:
        scope, node, value, what = self._rows[row]
        detail = self._index.graphs[scope].node_label(node) if what == "op" else ""
        return SearchHit(scope, node, value, what, self._names[row], detail)


def search(index: ModelIndex, pattern: str, regex: bool = False, limit: int = MAX_RESULTS) -> list[SearchHit]:
    """One-off search (builds a :class:`SearchIndex`)."""
    return SearchIndex(index).search(pattern, regex, limit)


class SearchResults(QAbstractListModel):
    """The hits of one search, fetched from the scan :data:`BATCH` at a time as the list scrolls to its end
    (Qt's canFetchMore/fetchMore): every hit can be reached, and only the ones scrolled past are made."""

    fetched = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.hits: list[SearchHit] = []
        self._searcher: SearchIndex | None = None
        self._rows: Iterator[int] = iter(())
        self.complete = True   # the scan has ended: ``hits`` is every hit

    def reset(self, searcher: SearchIndex | None, rows: Iterator[int]) -> None:
        self.beginResetModel()
        self._searcher, self._rows, self.hits, self.complete = searcher, rows, [], searcher is None
        self.endResetModel()
        self.fetchMore(QModelIndex())

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(self.hits)

    def canFetchMore(self, parent: QModelIndex | QPersistentModelIndex) -> bool:  # noqa: N802
        return not parent.isValid() and not self.complete

    def fetchMore(self, parent: QModelIndex | QPersistentModelIndex) -> None:  # noqa: N802
        if parent.isValid() or self.complete or self._searcher is None:
            return
        rows = list(islice(self._rows, BATCH))
        self.complete = len(rows) < BATCH
        if rows:
            self.beginInsertRows(QModelIndex(), len(self.hits), len(self.hits) + len(rows) - 1)
            self.hits.extend(self._searcher.hit(row) for row in rows)
            self.endInsertRows()
        self.fetched.emit()

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.hits):
            return None
        hit = self.hits[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return hit.display()
        if role == Qt.ItemDataRole.ToolTipRole:
            return name_tooltip(hit.detail if hit.what == "op" else hit.text)
        return None


class SearchPanel(QFrame):
    """A floating find box with a result list; ``activated`` carries the chosen :class:`SearchHit`."""

    activated = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.index: ModelIndex | None = None
        self._searcher: SearchIndex | None = None
        self._build_task: Task | None = None
        self.model = SearchResults(self)
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
        self.results = QListView()
        self.results.setModel(self.model)
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
        self.results.activated.connect(self._activate)
        self.results.clicked.connect(self._activate)
        self.model.fetched.connect(self._count)
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

    @property
    def hits(self) -> list[SearchHit]:
        """The hits fetched so far (the list fetches more as it scrolls)."""
        return self.model.hits

    def run(self) -> None:
        self._timer.stop()
        self.model.reset(None, iter(()))
        if self.index is None or not self.field.text():
            self.status.setText("")
            return
        try:
            if self._searcher is None and self.index.node_count() <= SYNC_BUILD_NODES:
                self._searcher = SearchIndex(self.index)
            if self._searcher is None:
                self._build_in_background(self.index)
                return
            rows = self._searcher.scan(self.field.text(), self.regex.isChecked())
        except ValueError as exc:
            self.status.setText(str(exc).capitalize() + ".")
            return
        self.model.reset(self._searcher, rows)

    def _count(self) -> None:
        n = len(self.model.hits)
        more = "" if self.model.complete else "+ (scroll for more)"
        self.status.setText(f"{n:,}{more} result{'s' if n != 1 or more else ''}")

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

    def _activate(self, index: QModelIndex) -> None:
        if 0 <= index.row() < len(self.hits):
            self.activated.emit(self.hits[index.row()])

    def _set_row(self, row: int) -> None:
        self.results.setCurrentIndex(self.model.index(row, 0))

    def _activate_current(self) -> None:
        """Enter in the field: the result chosen with the arrow keys, else the first."""
        if self._timer.isActive() or not self.hits:
            self.run()
        if self.hits:
            row = max(self.results.currentIndex().row(), 0)
            self._set_row(row)
            self.activated.emit(self.hits[row])

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        if event.key() == Qt.Key.Key_Escape:
            self.hide()
        elif event.key() in (Qt.Key.Key_Down, Qt.Key.Key_Up) and self.hits:
            # the field ignores these keys: they move through the results while typing stays in the field
            if self._timer.isActive():
                self.run()
            step = 1 if event.key() == Qt.Key.Key_Down else -1
            row = max(self.results.currentIndex().row() + step, 0)
            if row >= len(self.hits) and self.model.canFetchMore(QModelIndex()):
                self.model.fetchMore(QModelIndex())
            self._set_row(min(row, len(self.hits) - 1))
        else:
            super().keyPressEvent(event)
