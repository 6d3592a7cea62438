"""The Differences dock: the summary, the list of differences with Previous/Next, Run Both, the colouring
and, after Run Both, the selected value in A, B and B - A."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QComboBox,
    QDockWidget,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from onnxviz.model.matching import Difference, ModelDiff
from onnxviz.model.runner.compare import COMPARE_MEASURES
from onnxviz.model.text import display_name
from onnxviz.ui.diff.values_view import ValuesView

COLOURS = {  # the kinds' colours on the canvas, the legend and the list (Okabe-Ito: told apart by most eyes)
    "node_changed": (230, 159, 0, 255),
    "node_removed": (213, 94, 0, 255),
    "node_added": (0, 158, 115, 255),
}
OTHER_RGBA = (86, 180, 233, 255)   # differences that are not nodes (weights, inputs, the model's fields...)
DIFFERENCES = ""                   # the colouring combo's entry for the diff's own colours
LINE_CHARS = 200


def kind_colour(kind: str) -> QColor:
    return QColor(*COLOURS.get(kind, OTHER_RGBA))


class DiffDock(QDockWidget):
    """Emits ``difference_chosen`` with a row of :attr:`differences` when the user picks one."""

    difference_chosen = Signal(int)
    step_requested = Signal(int)          # -1 previous, +1 next
    run_both_requested = Signal()
    close_requested = Signal()
    colouring_chosen = Signal(str)        # DIFFERENCES or a COMPARE_MEASURES key

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Differences", parent)
        self.setObjectName("DiffDock")
        self.differences: list[Difference] = []
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        self.list = QListWidget()
        self.list.setUniformItemSizes(True)
        self.list.currentRowChanged.connect(self._on_row)
        self.detail = QLabel()
        self.detail.setWordWrap(True)
        self.detail.setTextFormat(Qt.TextFormat.PlainText)
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.previous_button = QPushButton("\u25b2 Previous")
        self.next_button = QPushButton("Next \u25bc")
        self.run_button = QPushButton("Run Both")
        self.run_button.setToolTip("Run A and B on the same inputs and colour matched values by their error")
        self.close_button = QPushButton("Close Diff")
        self.colouring = QComboBox()
        self.colouring.addItem("Colour: differences", DIFFERENCES)
        self.previous_button.clicked.connect(lambda: self.step_requested.emit(-1))
        self.next_button.clicked.connect(lambda: self.step_requested.emit(1))
        self.run_button.clicked.connect(self.run_both_requested)
        self.close_button.clicked.connect(self.close_requested)
        self.colouring.currentIndexChanged.connect(lambda _i: self.colouring_chosen.emit(self.colouring.currentData()))
        self.values = ValuesView()
        self.tabs = QTabWidget()
        self.tabs.addTab(self._list_page(), "Differences")
        self.tabs.addTab(self.values, "Values: A, B, B \u2212 A")
        self.setWidget(self.tabs)

    def _list_page(self) -> QWidget:
        buttons = QHBoxLayout()
        for w in (self.previous_button, self.next_button, self.run_button, self.colouring):
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
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.summary)
        layout.addLayout(buttons)
        layout.addWidget(split, 1)
        return page

    def show_diff(self, title: str, diff: ModelDiff) -> None:
        self.differences = list(diff.differences)
        self.summary.setText(f"{title}: {diff.summary()}")
        self.list.blockSignals(True)
        self.list.clear()
        for d in self.differences:
            item = QListWidgetItem(display_name(d.text(), LINE_CHARS))
            item.setToolTip(display_name(d.text(), 2000))
            item.setForeground(QBrush(kind_colour(d.kind).darker(130)))
            item.setData(Qt.ItemDataRole.DecorationRole, kind_colour(d.kind))
            self.list.addItem(item)
        self.list.setCurrentRow(-1)
        self.list.blockSignals(False)
        self.show_sides(None)
        self.detail.setText("Select a difference (F8: next, Shift+F8: previous)." if self.differences
                            else "The two models are identical.")
        for w in (self.previous_button, self.next_button):
            w.setEnabled(bool(self.differences))
        self.set_measures(False)
        self.values.show_message("Run Both, then select a node to see its value in A and B.")
        self.tabs.setCurrentIndex(0)

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
        """Move the current row by ``direction`` (wrapping round); returns the new row (-1: no differences)."""
        n = len(self.differences)
        if not n:
            return -1
        row = self.list.currentRow()
        row = (0 if direction > 0 else n - 1) if row < 0 else (row + direction) % n
        self.list.setCurrentRow(row)
        return row

    def show_sides(self, table: QWidget | None) -> None:
        """Show ``table`` under the difference's text (None: nothing)."""
        if self.sides is not None:
            self.sides.deleteLater()
        self.sides = table
        if table is not None:
            self.side_layout.insertWidget(1, table)

    def _on_row(self, row: int) -> None:
        if 0 <= row < len(self.differences):
            self.detail.setText(display_name(self.differences[row].text(), 4000))
            self.difference_chosen.emit(row)
