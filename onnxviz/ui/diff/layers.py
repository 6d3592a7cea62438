"""The Layers tab of the Differences dock: after Run Both, every value pair of A and B in a sortable table
(A, B, shape, max |B-A|, max rel, cosine, SQNR, and the SQNR and cosine of the error B's layer adds on
its own), SQNR and cosine cells coloured from bad to good, Worst Layer and Previous/Next along the
chosen measure, and the values left unpaired with the reason."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
    Signal,
)
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTableView,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from onnxviz.model.matching import CrossRun
from onnxviz.model.matching.crossrun import badness
from onnxviz.model.runner.compare import ValueDiff
from onnxviz.model.text import display_name
from onnxviz.ui.widgets.names import plain_tooltip

COLUMNS = ("A", "B", "shape", "max |B\u2212A|", "max rel", "cosine", "SQNR (dB)", "added SQNR", "added cosine")
SORTS = {"sqnr": ("SQNR", 6), "cosine": ("cosine", 5), "max_abs": ("max |B\u2212A|", 3), "max_rel": ("max rel", 4),
         "added_sqnr": ("added SQNR", 7)}
"""The measures Worst Layer and Previous/Next follow: name -> (label, column)."""
SQNR_STEPS = ((10.0, (213, 94, 0)), (20.0, (230, 159, 0)), (30.0, (240, 228, 66)), (40.0, (150, 200, 120)))
COSINE_STEPS = ((0.9, (213, 94, 0)), (0.99, (230, 159, 0)), (0.999, (240, 228, 66)), (0.9999, (150, 200, 120)))
GOOD_RGB = (0, 158, 115)
CELL_ALPHA = 110   # the colours under the text: light enough to read it in either theme
NAME_CHARS = 120


@dataclass(frozen=True)
class Row:
    """One pair as the table shows it."""

    diff: ValueDiff
    shape: str
    added_sqnr: float   # NaN: not isolated
    added_cosine: float
    added_note: str


def rows_of(cross: CrossRun) -> list[Row]:
    out = []
    for d in cross.diffs:
        record = cross.result_a.values.get(d.name)
        shape = "\u00d7".join(str(n) for n in record.shape) if record is not None else ""
        added = cross.added_of(d)
        out.append(Row(d, shape or "scalar", added.sqnr_db if added else math.nan, added.cosine if added else math.nan,
                       cross.not_isolated.get((d.name, d.other), "")))
    return out


def _steps_colour(value: float, steps: tuple[tuple[float, tuple[int, int, int]], ...]) -> QColor | None:
    if math.isnan(value):
        return None
    rgb = next((c for limit, c in steps if value < limit), GOOD_RGB)
    return QColor(*rgb, CELL_ALPHA)


def _number(value: float, digits: str) -> str:
    return "\u2014" if math.isnan(value) else format(value, digits)


class LayersModel(QAbstractTableModel):
    """The pairs, a row each; the sort role gives numbers (NaN as the worst)."""

    SORT_ROLE = Qt.ItemDataRole.UserRole + 1

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[Row] = []

    def set_rows(self, rows: list[Row]) -> None:
        self.beginResetModel()
        self.rows = rows
        self.endResetModel()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.ToolTipRole and section >= 7:
            return "B's layer run on A's values of its inputs: the error this layer adds on its own"
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.rows):
            return None
        row, c = self.rows[index.row()], index.column()
        d = row.diff
        numbers = (d.max_abs_error, d.rel_error, d.cosine, d.sqnr_db, row.added_sqnr, row.added_cosine)
        if role == Qt.ItemDataRole.DisplayRole:
            texts = (display_name(d.name, NAME_CHARS), display_name(d.other, NAME_CHARS), row.shape,
                     _number(d.max_abs_error, ".4g"), _number(d.rel_error, ".4g"), _number(d.cosine, ".6f"),
                     _number(d.sqnr_db, ".2f"), _number(row.added_sqnr, ".2f"), _number(row.added_cosine, ".6f"))
            return texts[c]
        if role == self.SORT_ROLE:
            if c < 3:
                return (d.name, d.other, row.shape)[c]
            value = numbers[c - 3]
            if math.isnan(value):  # a NaN in the values is the worst; a layer not isolated has no figure: last
                return math.inf if c >= 7 else (-math.inf if c >= 5 else math.inf)
            return value
        if role == Qt.ItemDataRole.ToolTipRole:
            if c < 2:
                return plain_tooltip(d.name if c == 0 else d.other)
            if c >= 7 and math.isnan(numbers[c - 3]):
                return plain_tooltip(f"No added error: {row.added_note}") if row.added_note else None
            return None
        if role == Qt.ItemDataRole.BackgroundRole:
            if c in (6, 7):
                colour = _steps_colour(numbers[c - 3], SQNR_STEPS)
            elif c in (5, 8):
                colour = _steps_colour(numbers[c - 3], COSINE_STEPS)
            else:
                colour = None
            return QBrush(colour) if colour is not None else None
        if role == Qt.ItemDataRole.TextAlignmentRole and c >= 3:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


class LayersView(QWidget):
    """Emits ``pair_chosen`` with a row of :attr:`rows` (the model's order) when the user picks a pair."""

    pair_chosen = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = LayersModel()
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(LayersModel.SORT_ROLE)
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.setWordWrap(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.selectionModel().currentRowChanged.connect(self._on_current)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        self.measure = QComboBox()
        for key, (label, _column) in SORTS.items():
            self.measure.addItem(f"Worst by: {label}", key)
        self.measure.currentIndexChanged.connect(lambda _i: self._sort_by_measure())
        self.worst_button = QPushButton("Worst Layer")
        self.worst_button.setToolTip("Select the pair with the worst value of the chosen measure")
        self.previous_button = QPushButton("\u25b2 Previous")
        self.next_button = QPushButton("Next \u25bc")
        self.worst_button.clicked.connect(self.select_worst)
        self.previous_button.clicked.connect(lambda: self.step(-1))
        self.next_button.clicked.connect(lambda: self.step(1))
        self.unmatched = QTableWidget(0, 3)
        self.unmatched.setHorizontalHeaderLabels(["side", "value", "why it has no partner"])
        self.unmatched.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.unmatched.verticalHeader().hide()
        self.unmatched.horizontalHeader().setStretchLastSection(True)
        buttons = QHBoxLayout()
        for w in (self.measure, self.worst_button, self.previous_button, self.next_button):
            buttons.addWidget(w)
        buttons.addStretch(1)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(self.unmatched)
        split.setStretchFactor(0, 4)
        split.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.summary)
        layout.addLayout(buttons)
        layout.addWidget(split, 1)
        self.show_cross(None)

    @property
    def rows(self) -> list[Row]:
        return self.model.rows

    def show_cross(self, cross: CrossRun | None) -> None:
        """The pairs of ``cross`` (None: none yet), the worst SQNR first."""
        self.table.selectionModel().blockSignals(True)
        self.model.set_rows(rows_of(cross) if cross is not None else [])
        self.table.selectionModel().blockSignals(False)
        for w in (self.worst_button, self.previous_button, self.next_button, self.measure):
            w.setEnabled(bool(self.model.rows))
        if cross is None:
            self.summary.setText("Run Both to compare every value of A with its partner in B.")
            self.unmatched.setRowCount(0)
            return
        pairing = cross.pairing
        self.summary.setText(
            f"{len(cross.diffs)} value pairs; {100 * pairing.fraction():.1f}% of A's {pairing.values_a} computed values "
            f"paired ({100 * cross.alignment.fraction():.1f}% of nodes aligned); "
            f"{len(pairing.unmatched_a)} unpaired in A, {len(pairing.unmatched_b)} in B. "
            "Added: B's layer run on A's values of its inputs (the error it adds on its own).")
        self._show_unmatched(cross)
        self._sort_by_measure()
        self.table.resizeColumnsToContents()
        for c in (0, 1):
            self.table.setColumnWidth(c, min(self.table.columnWidth(c), 320))

    def _show_unmatched(self, cross: CrossRun) -> None:
        p = cross.pairing
        items = [("A", x, p.reasons_a.get(x, "")) for x in p.unmatched_a]
        items += [("B", y, p.reasons_b.get(y, "")) for y in p.unmatched_b]
        self.unmatched.setRowCount(len(items))
        for r, cells in enumerate(items):
            for c, text in enumerate(cells):
                item = QTableWidgetItem(display_name(text, NAME_CHARS))
                item.setToolTip(plain_tooltip(text))
                self.unmatched.setItem(r, c, item)
        self.unmatched.resizeColumnToContents(0)
        self.unmatched.setColumnWidth(1, 320)
        self.unmatched.setVisible(bool(items))

    def chosen_measure(self) -> str:
        return str(self.measure.currentData())

    def _sort_by_measure(self) -> None:
        """The chosen measure's column, the worst first (SQNR and cosine ascending, errors descending)."""
        column = SORTS[self.chosen_measure()][1]
        order = Qt.SortOrder.DescendingOrder if column in (3, 4) else Qt.SortOrder.AscendingOrder
        self.table.sortByColumn(column, order)

    def worst_row(self) -> int:
        """The model row of the worst pair by the chosen measure (-1: no pairs)."""
        key = self.chosen_measure()
        if not self.model.rows:
            return -1
        if key == "added_sqnr":
            return min(range(len(self.model.rows)), key=lambda r: _added_badness(self.model.rows[r]))
        return min(range(len(self.model.rows)), key=lambda r: (badness(self.model.rows[r].diff, key), r))

    def select_worst(self) -> int:
        """Sort by the chosen measure and select its worst pair; returns its model row (-1: none)."""
        self._sort_by_measure()
        row = self.worst_row()
        if row >= 0:
            self._select(row)
        return row

    def step(self, direction: int) -> int:
        """The next (+1) or previous (-1) pair in the table's order (wrapping round); its model row."""
        n = self.proxy.rowCount()
        if not n:
            return -1
        current = self.table.currentIndex()
        at = (0 if direction > 0 else n - 1) if not current.isValid() else (current.row() + direction) % n
        row = self.proxy.mapToSource(self.proxy.index(at, 0)).row()
        self._select(row)
        return row

    def _select(self, row: int) -> None:
        index = self.proxy.mapFromSource(self.model.index(row, 0))
        self.table.setCurrentIndex(index)
        self.table.scrollTo(index)

    def _on_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid():
            self.pair_chosen.emit(self.proxy.mapToSource(current).row())


def _added_badness(row: Row) -> tuple[float, float]:
    return (math.inf if math.isnan(row.added_sqnr) else row.added_sqnr, row.diff.order)
