"""The two sides of a node pair field by field, for the Node panel's "Compared with B" section."""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from onnx import NodeProto
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QColor, QFontMetricsF, QKeyEvent, QKeySequence, QResizeEvent
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from onnxviz.model.graph.opdocs import attribute_text
from onnxviz.model.text import display_name
from onnxviz.ui.widgets.names import BREAK, copy_text, name_tooltip, unbreak

ABSENT = "\u2014"        # a field one side lacks
FIELD_CHARS = 400       # of a name or an attribute's value in a cell (wrapped, the whole shown)
MAX_HEIGHT = 600        # of a table; more rows scroll
MIN_SCROLLED = 90        # the least height of a table that scrolls in place
FIELD_SHARE = 0.3       # of a table's width, the most its field column takes (longer field names wrap)
_PIECE = re.compile(r"[^/._:,;\-\])]*[/._:,;\-\])]?")   # a name's pieces, each up to and with its separator
CELL_PADDING = 10       # of a cell's width, not the text's
RAW = Qt.ItemDataRole.UserRole   # a cell's text as made, before the places to wrap
CHANGED_RGBA = (230, 159, 0, 90)  # the changed rows' background: the diff's "changed" amber, light


@dataclass(frozen=True)
class Row:
    field: str
    a: str
    b: str
    changed: bool


def node_rows(a: NodeProto | None, b: NodeProto | None, changed: Collection[str] | None = None) -> list[Row]:
    """Name, op type, domain, every attribute and every input/output of both nodes (either may be absent).
    ``changed`` names the fields the matcher found changed (:func:`changed_fields`); without it a field is
    changed when its text differs (a node only one side has)."""
    fa, fb = _fields(a), _fields(b)
    keys = list(fa) + [k for k in fb if k not in fa]
    return [Row(k, fa.get(k, ABSENT), fb.get(k, ABSENT),
                fa.get(k) != fb.get(k) if changed is None else k in changed) for k in keys]


def changed_fields(details: dict[str, Any], a: NodeProto, b: NodeProto) -> set[str]:
    """The rows a ``node_changed`` difference's details point at: a value renamed on both sides, or read
    through a DequantizeLinear, is the same input; a rewired one is not."""
    names = {"name": "name", "op_type": "op type", "domain": "domain"}
    out = {names[c] for c in details.get("changes", ()) if c in names}
    out |= {f"attribute {name}" for name in details.get("attributes", ())}
    out |= {f"input {k}" for k in details.get("inputs", ())}
    if "outputs" in details.get("changes", ()):
        out |= {f"output {k}" for k in range(max(len(a.output), len(b.output)))}
    return out


def _fields(n: NodeProto | None) -> dict[str, str]:
    if n is None:
        return {}
    out = {"name": display_name(n.name, FIELD_CHARS) if n.name else "(no name)", "op type": n.op_type,
           "domain": n.domain or "ai.onnx"}
    for attr in n.attribute:
        out[f"attribute {attr.name}"] = display_name(attribute_text(attr), FIELD_CHARS)
    for k, x in enumerate(n.input):
        out[f"input {k}"] = display_name(x, FIELD_CHARS) if x else "(omitted)"
    for k, y in enumerate(n.output):
        out[f"output {k}"] = display_name(y, FIELD_CHARS) if y else "(omitted)"
    return out


def wrappable_cell(text: str, metrics: QFontMetricsF, room: float) -> str:
    """``text`` (escaped, cut) with places to wrap (:data:`BREAK`) after every separator, and inside a piece
    without one only where the piece is wider than ``room``: '/layer1/Relu_output_0_QuantizeLinear' wraps
    into whole words in a narrow column, and 'QuantizeLinear' is broken only where it cannot fit."""
    return " ".join(BREAK.join(bit for piece in _PIECE.findall(word) if piece for bit in _fitted(piece, metrics, room))
                    for word in text.split(" "))


def _fitted(piece: str, metrics: QFontMetricsF, room: float) -> list[str]:
    """``piece`` in bits each at most ``room`` wide (one character at least)."""
    if metrics.horizontalAdvance(piece) <= room:
        return [piece]
    bits, bit = [], ""
    for c in piece:
        if bit and metrics.horizontalAdvance(bit + c) > room:
            bits.append(bit)
            bit = ""
        bit += c
    return [*bits, bit]


class SidesTable(QTableWidget):
    """Field | A | B, the rows that differ highlighted and marked in their first column. Names wrap at
    their separators (never cut with '...'), every row as tall as its text, the table as tall as its rows
    (up to :data:`MAX_HEIGHT`); a side every row lacks (a node only one model has) takes no column."""

    def __init__(self, rows: list[Row]) -> None:
        super().__init__(len(rows), 3)
        for col, (label, tip) in enumerate([("Field", ""), ("A", "A: the model open in this window"),
                                            ("B", "B: the model it is compared with")]):
            heading = QTableWidgetItem(label)
            heading.setToolTip(tip)
            self.setHorizontalHeaderItem(col, heading)
        self.verticalHeader().hide()
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setWordWrap(True)
        self.setTextElideMode(Qt.TextElideMode.ElideNone)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        header = self.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Fixed)   # its contents' width, at most FIELD_SHARE
        for col in (1, 2):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.Stretch)
        highlight = QColor(*CHANGED_RGBA)
        for r, row in enumerate(rows):
            cells = [("\u2260 " if row.changed else "") + row.field, row.a, row.b]
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setData(RAW, text)
                item.setToolTip(name_tooltip(text))
                if row.changed:
                    item.setBackground(highlight)
                    if c == 0:
                        font = item.font()
                        font.setBold(True)
                        item.setFont(font)
                self.setItem(r, c, item)
        for col, side in ((1, [row.a for row in rows]), (2, [row.b for row in rows])):
            self.setColumnHidden(col, bool(side) and all(text == ABSENT for text in side))
        self.fit_height = True   # as tall as its rows (in a scrolling panel); False: as tall as its room
        self._refit = QTimer(self)   # the stretched columns take their width after the table's resize
        self._refit.setSingleShot(True)
        self._refit.timeout.connect(self._fit_rows)
        self._scroll = QTimer(self)
        self._scroll.setSingleShot(True)
        self._scroll.timeout.connect(self._show_change)
        self._fit_rows()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self._refit.start(0)
        elif not self.fit_height:   # its room changed: the change kept in view, once the rows are placed
            self._scroll.start(0)

    def _fit_rows(self) -> None:
        """The field column as wide as its names (at most :data:`FIELD_SHARE` of the table), each row as
        tall as its wrapped text at the columns' widths, the table as tall as its rows."""
        widest = max((self.sizeHintForColumn(0), self.horizontalHeader().sectionSizeHint(0)))
        self.setColumnWidth(0, min(widest, max(int(FIELD_SHARE * self.viewport().width()), self._widest_word())))
        for r in range(self.rowCount()):
            for c in range(self.columnCount()):
                item = self.item(r, c)
                if item is not None:
                    room = max(self.columnWidth(c) - CELL_PADDING, 20)
                    item.setText(wrappable_cell(item.data(RAW), QFontMetricsF(item.font()), room))
        self.resizeRowsToContents()
        height = sum(self.rowHeight(r) for r in range(self.rowCount())) + self.horizontalHeader().sizeHint().height()
        height += 2 * self.frameWidth() + 2
        if self.fit_height:
            self.setFixedHeight(min(height, MAX_HEIGHT))
        else:   # the room it is given, at most its rows' height; the first change in view
            self.setMinimumHeight(min(height, MIN_SCROLLED))
            self.setMaximumHeight(height)
            self._scroll.start(0)

    def _show_change(self) -> None:
        """The first changed row at the top (a table scrolling in place)."""
        changed = next((r for r in range(self.rowCount()) if self.cell_text(r, 0).startswith("\u2260 ")), -1)
        item = self.item(changed, 0) if changed > 0 else None
        if item is not None:
            self.scrollToItem(item, QAbstractItemView.ScrollHint.PositionAtTop)

    def _widest_word(self) -> int:
        """The field column's least width: its longest word ('≠ output', 'kernel_shape') on one line."""
        widths = [QFontMetricsF(item.font()).horizontalAdvance(word) for r in range(self.rowCount())
                  if (item := self.item(r, 0)) is not None
                  for word in str(item.data(RAW)).replace("\u2260 ", "\u2260\u00a0").split(" ")]
        return int(max(widths, default=0.0)) + CELL_PADDING

    def scroll_in_place(self) -> None:
        """Take the height the layout gives (scrolling through its rows), not the rows' height: in a
        dock that is not itself scrolled."""
        self.fit_height = False
        self._fit_rows()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt override
        item = self.currentItem()
        if event.matches(QKeySequence.StandardKey.Copy) and item is not None:
            copy_text(unbreak(item.text()))   # the text as shown, without the places to wrap
            event.accept()
            return
        super().keyPressEvent(event)

    def cell_text(self, row: int, col: int) -> str:
        """A cell's text as shown, without the places to wrap."""
        item = self.item(row, col)
        return unbreak(item.text()) if item is not None else ""

    def changed_fields(self) -> list[str]:
        """The fields shown as changed (for tests and the status bar)."""
        firsts = [self.cell_text(r, 0) for r in range(self.rowCount())]
        return [text[2:] for text in firsts if text.startswith("\u2260 ")]
