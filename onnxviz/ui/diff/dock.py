"""The Differences dock: the summary, the list of differences with Previous/Next, Run Both, the colouring
and, after Run Both, every value pair in the Layers table and the selected value in A, B and B - A."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDockWidget,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from onnxviz.model.matching import CrossRun, Difference, ModelDiff, WeightPair
from onnxviz.model.matching.diff import hidden_text, shown
from onnxviz.model.runner.compare import COMPARE_MEASURES
from onnxviz.model.text import display_name
from onnxviz.ui.diff.layers import LayersView
from onnxviz.ui.diff.sides import SidesTable
from onnxviz.ui.widgets.names import name_tooltip, plain_tooltip
from onnxviz.ui.widgets.pair_view import ValuesView

COLOURS = {  # the kinds' colours on the canvas, the legend and the list (Okabe-Ito: told apart by most eyes)
    "node_changed": (230, 159, 0, 255),
    "node_removed": (213, 94, 0, 255),
    "node_added": (0, 158, 115, 255),
}
OTHER_RGBA = (86, 180, 233, 255)   # differences that are not nodes (weights, inputs, the model's fields...)
DIFFERENCES = ""                   # the colouring combo's entry for the diff's own colours
WEIGHT_COLUMNS = ("A", "B", "max |B\u2212A|", "max rel", "cosine", "SQNR (dB)")
LINE_CHARS = 200


def kind_colour(kind: str) -> QColor:
    return QColor(*COLOURS.get(kind, OTHER_RGBA))


class _Rows(QAbstractListModel):
    """The differences the filter leaves as list rows, each made when it is drawn (a renamed 123k-node copy
    has 123k). ``shown`` maps a row to its difference's position in ``differences``."""

    def __init__(self) -> None:
        super().__init__()
        self.differences: list[Difference] = []
        self.shown: list[int] = []
        self.row_of: dict[int, int] = {}
        self.words: Callable[[str], str] | None = None  # a kind in words for people (None: the kind's name)

    def set(self, differences: list[Difference], shown: list[int] | None = None) -> None:
        self.beginResetModel()
        self.differences = differences
        self.shown = list(range(len(differences))) if shown is None else shown
        self.row_of = {k: row for row, k in enumerate(self.shown)}
        self.endResetModel()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(self.shown)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.shown):
            return None
        d = self.differences[self.shown[index.row()]]
        if role == Qt.ItemDataRole.DisplayRole:
            return display_name(d.text(self.words), LINE_CHARS)
        if role == Qt.ItemDataRole.ToolTipRole:
            return plain_tooltip(d.text(self.words))
        if role == Qt.ItemDataRole.ForegroundRole:
            return QBrush(kind_colour(d.kind).darker(130))
        if role == Qt.ItemDataRole.DecorationRole:
            return kind_colour(d.kind)
        return None


class DiffList(QTreeView):
    """A list of differences with QListWidget's row API, in positions of the whole list of differences (a
    difference the filter hides has no row: making it current clears the selection); a flat tree view of
    uniform rows lays out only the rows it shows (a QListView laid out all 123k, half a second)."""

    currentRowChanged = Signal(int)  # noqa: N815 - QListWidget's name

    def __init__(self) -> None:
        super().__init__()
        self.rows = _Rows()
        self.setModel(self.rows)
        self.setUniformRowHeights(True)
        self.setRootIsDecorated(False)
        self.setHeaderHidden(True)
        self.selectionModel().currentRowChanged.connect(lambda now, _before: self.currentRowChanged.emit(
            self.rows.shown[now.row()] if 0 <= now.row() < len(self.rows.shown) else -1))

    def count(self) -> int:
        return self.rows.rowCount()

    def currentRow(self) -> int:  # noqa: N802
        row = self.currentIndex().row()
        return self.rows.shown[row] if 0 <= row < len(self.rows.shown) else -1

    def setCurrentRow(self, row: int) -> None:  # noqa: N802
        self.setCurrentIndex(self.rows.index(self.rows.row_of.get(row, -1), 0))


class DiffDock(QDockWidget):
    """Emits ``difference_chosen`` with a row of :attr:`differences` when the user picks one."""

    difference_chosen = Signal(int)
    step_requested = Signal(int)          # -1 previous, +1 next
    run_both_requested = Signal()
    run_with_inputs_requested = Signal()  # Run Both with the inputs the user picks
    show_b_toggled = Signal(bool)         # the canvas shows B's graph (True) or A's
    close_requested = Signal()
    colouring_chosen = Signal(str)        # DIFFERENCES or a COMPARE_MEASURES key
    weight_chosen = Signal(int)           # a row of :attr:`weights`

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Differences", parent)
        self.setObjectName("DiffDock")
        self.differences: list[Difference] = []
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        self.list = DiffList()
        self.list.currentRowChanged.connect(self._on_row)
        self.hide_boxes = {key: QCheckBox(f"Hide {what}") for key, what in
                           (("renames", "renames"), ("value_info", "value_info changes"))}
        self.hide_boxes["renames"].setToolTip("Leave out nodes, weights, inputs and outputs that only changed their "
                                              "name (another exporter's naming)")
        self.hide_boxes["value_info"].setToolTip("Leave out differences of value_info types only")
        for box in self.hide_boxes.values():
            box.toggled.connect(lambda _on: self._filter())
        self.hidden_label = QLabel()
        self.hidden_label.setTextFormat(Qt.TextFormat.PlainText)
        self.detail = QLabel()
        self.detail.setWordWrap(True)
        self.detail.setTextFormat(Qt.TextFormat.PlainText)
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.previous_button = QPushButton("\u25b2 Previous")
        self.next_button = QPushButton("Next \u25bc")
        self.run_button = QPushButton("Run Both")
        self.run_button.setToolTip("Run A and B on the same inputs and colour matched values by their error")
        self.inputs_button = QPushButton("Run Both with Inputs...")
        self.inputs_button.setToolTip("Pick A's inputs (files, images, values) as for Run with Inputs...; "
                                      "B reads the same arrays through the alignment")
        self.show_b_button = QPushButton("Show B's graph")
        self.show_b_button.setCheckable(True)
        self.show_b_button.setToolTip("Show B's graph on the canvas, the nodes only B has marked "
                                      "(unchecked: A's graph, the nodes B lacks marked)")
        self.close_button = QPushButton("Close Diff")
        self.colouring = QComboBox()
        self.colouring.addItem("Colour: differences", DIFFERENCES)
        self.previous_button.clicked.connect(lambda: self.step_requested.emit(-1))
        self.next_button.clicked.connect(lambda: self.step_requested.emit(1))
        self.run_button.clicked.connect(self.run_both_requested)
        self.inputs_button.clicked.connect(self.run_with_inputs_requested)
        self.show_b_button.toggled.connect(self.show_b_toggled)
        self.close_button.clicked.connect(self.close_requested)
        self.colouring.currentIndexChanged.connect(lambda _i: self.colouring_chosen.emit(self.colouring.currentData()))
        self.values = ValuesView()
        self.weights: list[WeightPair] = []
        self.weights_table = QTableWidget(0, len(WEIGHT_COLUMNS))
        self.weights_table.setHorizontalHeaderLabels(list(WEIGHT_COLUMNS))
        self.weights_table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.weights_table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.weights_table.verticalHeader().hide()
        self.weights_table.currentCellChanged.connect(lambda row, *_: self._on_weight(row))
        self.layers = LayersView()
        self.tabs = QTabWidget()
        self.tabs.addTab(self._list_page(), "Differences")
        self.tabs.addTab(self.layers, "Layers")
        self.tabs.addTab(self.values, "Values: A, B, B \u2212 A")
        self.tabs.addTab(self.weights_table, "Quantized weights")
        self.setWidget(self.tabs)

    def _list_page(self) -> QWidget:
        buttons = QHBoxLayout()
        for w in (self.previous_button, self.next_button, self.show_b_button, self.run_button, self.inputs_button,
                  self.colouring):
            buttons.addWidget(w)
        buttons.addStretch(1)
        buttons.addWidget(self.close_button)
        side = QWidget()
        side_layout = QVBoxLayout(side)
        side_layout.setContentsMargins(0, 0, 0, 0)
        side_layout.addWidget(self.detail)
        self.side_layout = side_layout
        self.sides: QWidget | None = None   # B's fields of a node only B has
        side_layout.addStretch(1)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.list)
        split.addWidget(side)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        filters = QHBoxLayout()
        for box in self.hide_boxes.values():
            filters.addWidget(box)
        filters.addWidget(self.hidden_label, 1)
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.summary)
        layout.addLayout(buttons)
        layout.addLayout(filters)
        layout.addWidget(split, 1)
        return page

    def hidden_kinds(self) -> frozenset[str]:
        return frozenset(key for key, box in self.hide_boxes.items() if box.isChecked())

    def _filter(self) -> None:
        """The list again, without what the Hide boxes leave out; the current difference stays if shown."""
        current = self.list.currentRow()
        keep, hidden = shown(self.differences, self.hidden_kinds())
        self.list.blockSignals(True)
        self.list.rows.set(self.differences, keep)
        self.list.setCurrentRow(current)
        self.list.blockSignals(False)
        said = hidden_text(hidden)
        self.hidden_label.setText(f"{len(keep):,} of {len(self.differences):,} shown; {said}" if said else "")
        for w in (self.previous_button, self.next_button):
            w.setEnabled(bool(keep))

    def show_diff(self, title: str, diff: ModelDiff, summary: str, words: Callable[[str], str] | None = None) -> None:
        """``diff`` listed, its kinds in ``words`` (see :meth:`Difference.text`)."""
        self.differences = diff.differences
        self.list.rows.words = words
        self.summary.setText(f"{title}: {summary}")
        self.list.blockSignals(True)
        self.list.rows.set(self.differences)
        self.list.setCurrentRow(-1)
        self.list.blockSignals(False)
        self._filter()
        self.show_sides(None)
        self.detail.setText("Select a difference (F8: next, Shift+F8: previous)." if self.differences
                            else "The two models are identical.")
        self.set_measures(False)
        self.show_layers(None)
        self.values.show_message("Run Both, then select a node to see its value in A and B.")
        self.show_weights(diff.weights)
        self.tabs.setCurrentIndex(0)

    def show_weights(self, weights: list[WeightPair]) -> None:
        """The quantized weights against their partners, worst SQNR first (the tab is there only when
        one side quantized its weights)."""
        self.weights = sorted(weights, key=lambda w: w.sqnr_db if w.sqnr_db == w.sqnr_db else -float("inf"))
        table = self.weights_table
        table.blockSignals(True)
        table.setRowCount(len(self.weights))
        for r, w in enumerate(self.weights):
            cells = [_weight_name(w.a, w.quantized_a), _weight_name(w.b, w.quantized_b)]
            cells += [w.note or f"{w.max_abs:.4g}", f"{w.max_rel:.4g}", f"{w.cosine:.6f}", f"{w.sqnr_db:.2f}"]
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(name_tooltip(text))
                if c >= 2:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                table.setItem(r, c, item)
        table.resizeColumnsToContents()
        table.setCurrentCell(-1, -1)
        table.blockSignals(False)
        self.tabs.setTabVisible(self.tabs.indexOf(table), bool(self.weights))
        self.tabs.setTabText(self.tabs.indexOf(table), f"Quantized weights ({len(self.weights)})")

    def show_layers(self, cross: CrossRun | None) -> None:
        """Run Both's pairs in the Layers tab (None: none yet)."""
        self.layers.show_cross(cross)
        at = self.tabs.indexOf(self.layers)
        self.tabs.setTabText(at, f"Layers ({len(cross.diffs)})" if cross is not None else "Layers")

    def _on_weight(self, row: int) -> None:
        if 0 <= row < len(self.weights):
            self.weight_chosen.emit(row)

    def set_showing_b(self, on: bool) -> None:
        """The toggle follows the canvas (a difference on the other side switches it) without emitting."""
        self.show_b_button.blockSignals(True)
        self.show_b_button.setChecked(on)
        self.show_b_button.blockSignals(False)

    def set_measures(self, available: bool) -> None:
        """After Run Both the canvas can be coloured by each error measure too."""
        self.colouring.blockSignals(True)
        while self.colouring.count() > 1:
            self.colouring.removeItem(1)
        if available:
            for key, title in COMPARE_MEASURES.items():
                self.colouring.addItem(f"Colour: {title}", key)
        self.colouring.setCurrentIndex(0)
        self.colouring.blockSignals(False)

    def step(self, direction: int) -> int:
        """Move to the next (``direction`` 1) or previous (-1) difference the filter shows, wrapping round;
        returns its position in :attr:`differences` (-1: none shown)."""
        shown_rows = self.list.rows.shown
        n = len(shown_rows)
        if not n:
            return -1
        row = self.list.rows.row_of.get(self.list.currentRow(), -1)
        row = (0 if direction > 0 else n - 1) if row < 0 else (row + direction) % n
        self.list.setCurrentRow(shown_rows[row])
        return shown_rows[row]

    def show_sides(self, table: QWidget | None) -> None:
        """Show ``table`` under the difference's text (None: nothing)."""
        if self.sides is not None:
            self.sides.hide()   # at once: deleteLater waits for the event loop
            self.sides.deleteLater()
        self.sides = table
        if isinstance(table, SidesTable):
            table.scroll_in_place()   # the dock keeps its height: the table scrolls
        if table is not None:
            self.side_layout.insertWidget(1, table, 100)   # the room under the text, up to its rows

    def _on_row(self, row: int) -> None:
        if 0 <= row < len(self.differences):
            self.detail.setText(display_name(self.differences[row].text(), 4000))
            self.difference_chosen.emit(row)


def _weight_name(name: str, quantized: bool) -> str:
    return display_name(name, 80) + (" (dequantized)" if quantized else "")
