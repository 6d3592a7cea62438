"""The Transform dock: what the last transform did (operators before and after, sizes, the outputs against the
original's, its notes), what it cost (both models run on the same inputs: each layer's error, worst first, and
each model's onnxruntime timing), and the session's variants to pick from."""

from __future__ import annotations

import math
from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDockWidget,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from onnxviz.model.graph.summary import human_bytes
from onnxviz.model.text import display_name
from onnxviz.model.transform import Outcome, Timing, Variant
from onnxviz.model.transform.cost import LayerError
from onnxviz.model.transform.timing import DEFAULT_RUNS
from onnxviz.ui.widgets.forms import error_style
from onnxviz.ui.widgets.names import message_text, plain_tooltip

OP_COLUMNS = ("Operator", "Before", "After", "Change")
LAYER_COLUMNS = ("SQNR (dB)", "Cosine", "Max abs", "Max rel", "Op", "Layer (in the model before)")
VARIANT_COLUMNS = ("Variant", "Size", "Speed (ms)", "Worst layer (SQNR)", "Outputs (against its source)", "Settings")
LAYER_ROWS = 2000  # the worst layers listed; the rest are counted
NAME_CHARS = 120
TEXT_CHARS = 1000  # a variant's settings, shown elided, whole in the tooltip
COLUMN_MAX = 260  # pixels; a long name is elided in the middle, whole in its tooltip
CHANGED = QColor(230, 159, 0, 60)


class TransformDock(QDockWidget):
    op_chosen = Signal(str)            # an operator of the summary's table: step through its differences
    cost_requested = Signal(int)       # See What It Cost, with this many timed runs
    layer_chosen = Signal(int)         # a row of :attr:`layers`
    keep_in_float_requested = Signal(list)  # rows of :attr:`layers`
    requantize_requested = Signal()
    variant_action = Signal(str, int)  # ("measure" | "use" | "window" | "save" | "compare" | "remove", variant key)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Transform", parent)
        self.setObjectName("TransformDock")
        self.layers: list[LayerError] = []
        self.variant_keys: list[int] = []
        self.tabs = QTabWidget()
        self.tabs.addTab(self._summary_tab(), "Summary")
        self.tabs.addTab(self._cost_tab(), "Cost")
        self.tabs.addTab(self._variants_tab(), "Variants")
        self.setWidget(self.tabs)

    # -- summary ------------------------------------------------------------------------------------------------
    def _summary_tab(self) -> QWidget:
        page = QWidget()
        column = QVBoxLayout(page)
        self.title = _label(bold=True)
        self.headline = _label()
        self.outputs = _label()
        self.notes = _label()
        self.notes.setStyleSheet(error_style())
        self.ops = _table(OP_COLUMNS)
        self.ops.horizontalHeader().setStretchLastSection(False)
        self.ops.cellClicked.connect(lambda row, _c: self._op_clicked(row))
        for w in (self.title, self.headline, self.outputs, self.notes):
            column.addWidget(w)
        column.addWidget(self.ops, 1)
        return page

    def show_outcome(self, outcome: Outcome, where: str, sides: str = "") -> None:
        """The transform's summary; ``where`` says what became of the result, ``sides`` which model is the diff's
        A and which its B."""
        v = outcome.verification
        self.title.setText(message_text(f"{outcome.settings.label()}: {where}."))
        self.headline.setText(_lines([outcome.summary.headline()[:1].upper() + outcome.summary.headline()[1:] + ".",
                                      sides]))
        if v.checked:
            lines = [f"Outputs on {v.samples} input sample{'s' if v.samples != 1 else ''} (limits: {v.limits}):"]
            lines += [f"  {o.text()}" for o in v.outputs]
        else:
            lines = [f"Outputs not compared: {v.reason}."]
        self.outputs.setText(_lines(lines))
        self.notes.setText(_lines([f"Note: {n}." for n in outcome.notes]))
        self.notes.setVisible(bool(outcome.notes))
        rows = outcome.summary.op_rows()
        self.ops.setRowCount(len(rows))
        for r, (op, before, after) in enumerate(rows):
            change = after - before
            cells = (op, str(before), str(after), f"{change:+d}" if change else "")
            for c, text in enumerate(cells):
                item = _item(display_name(text, NAME_CHARS), right=c > 0)
                if change:
                    item.setBackground(CHANGED)
                self.ops.setItem(r, c, item)
        _fit_columns(self.ops)
        self.tabs.setCurrentIndex(0)
        self.set_layers([], "")

    def _op_clicked(self, row: int) -> None:
        item = self.ops.item(row, 0)
        if item is not None:
            self.op_chosen.emit(item.text())

    # -- cost -----------------------------------------------------------------------------------------------------
    def _cost_tab(self) -> QWidget:
        page = QWidget()
        column = QVBoxLayout(page)
        row = QHBoxLayout()
        self.cost_button = QPushButton("See What It Cost")
        self.cost_button.setToolTip("Run the model before and after on the same inputs: each layer's error against "
                                    "the model before, worst first, and each model's onnxruntime time")
        self.runs = QSpinBox()
        self.runs.setRange(3, 1000)
        self.runs.setValue(DEFAULT_RUNS)
        self.runs.setSuffix(" timed runs")
        self.cost_button.clicked.connect(lambda: self.cost_requested.emit(self.runs.value()))
        row.addWidget(self.cost_button)
        row.addWidget(self.runs)
        row.addStretch()
        column.addLayout(row)
        self.timing = _label()
        self.layer_note = _label()
        column.addWidget(self.timing)
        column.addWidget(self.layer_note)
        self.layer_table = _table(LAYER_COLUMNS)
        self.layer_table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.layer_table.cellClicked.connect(lambda r, _c: self.layer_chosen.emit(r))
        column.addWidget(self.layer_table, 1)
        buttons = QHBoxLayout()
        self.keep_button = QPushButton("Keep Selected in Float")
        self.keep_button.setToolTip("Exclude the selected layers' nodes from the next quantization")
        self.keep_button.clicked.connect(self._keep_selected)
        self.requantize_button = QPushButton("Quantize Again")
        self.requantize_button.setToolTip("Quantize the model before with the same settings, the nodes kept in "
                                          "float excluded")
        self.requantize_button.clicked.connect(self.requantize_requested)
        buttons.addWidget(self.keep_button)
        buttons.addWidget(self.requantize_button)
        buttons.addStretch()
        column.addLayout(buttons)
        self.set_quantized(False)
        return page

    def set_quantized(self, on: bool) -> None:
        """The buttons of the quantization loop, while the last transform quantized."""
        self.keep_button.setVisible(on)
        self.requantize_button.setVisible(on)

    def set_timing(self, timings: Sequence[Timing], names: Sequence[str]) -> None:
        lines = [f"{name}: {t.text()}" for name, t in zip(names, timings, strict=True)]
        if len(timings) == 2 and timings[1].median_ms > 0:
            ratio = timings[0].median_ms / timings[1].median_ms
            lines.append(f"{'faster' if ratio >= 1 else 'slower'}: x{ratio if ratio >= 1 else 1 / ratio:.2f} "
                         "(onnxruntime CPU, every graph optimization on)")
        self.timing.setText(_lines(lines))

    def set_layers(self, layers: list[LayerError], note: str) -> None:
        """The compared layers, worst SQNR first (at most :data:`LAYER_ROWS`)."""
        self.layers = layers[:LAYER_ROWS]
        more = f" ({len(layers) - LAYER_ROWS:,} more not listed)" if len(layers) > LAYER_ROWS else ""
        self.layer_note.setText(message_text(note + more))
        self.layer_table.setRowCount(len(self.layers))
        for r, row in enumerate(self.layers):
            value = row.after if row.after == row.before else f"{row.after} (before: {row.before})"
            cells = (_db(row.sqnr_db), f"{row.cosine:.6f}", f"{row.max_abs:.4g}", f"{row.max_rel:.4g}", row.op,
                     display_name(row.before_node or row.before, NAME_CHARS))
            for c, text in enumerate(cells):
                item = _item(text, right=c < 4)
                item.setToolTip(plain_tooltip(f"value {value}; its node after: {row.after_node or '(none)'}", 2000))
                self.layer_table.setItem(r, c, item)
        _fit_columns(self.layer_table)
        if not layers:
            self.timing.setText("")

    def _keep_selected(self) -> None:
        rows = sorted({i.row() for i in self.layer_table.selectedIndexes()})
        self.keep_in_float_requested.emit(rows)

    # -- variants -----------------------------------------------------------------------------------------------
    def _variants_tab(self) -> QWidget:
        page = QWidget()
        column = QVBoxLayout(page)
        intro = _label()
        intro.setText("Every transform of this session, and the model it started from. Select one to use it here, "
                      "open it, save it or compare it with the model shown.")
        column.addWidget(intro)
        self.variant_table = _table(VARIANT_COLUMNS)
        column.addWidget(self.variant_table, 1)
        buttons = QHBoxLayout()
        for key, text, tip in (("measure", "Measure", "Run this variant and the model it was made from on the same "
                                "inputs: each layer's error and both models' time (the Cost tab)"),
                               ("use", "Use Here", "Replace the model shown by this variant (one undo step)"),
                               ("window", "Open in New Window", "Open this variant in a window of its own"),
                               ("save", "Save As...", "Write this variant to a file"),
                               ("compare", "Compare with Shown", "Diff the model shown (A) with this variant (B)"),
                               ("remove", "Remove", "Forget this variant")):
            button = QPushButton(text)
            button.setToolTip(tip)
            button.clicked.connect(lambda _=False, k=key: self._variant_clicked(k))
            buttons.addWidget(button)
        buttons.addStretch()
        column.addLayout(buttons)
        return page

    def set_variants(self, variants: Sequence[Variant], current: int | None) -> None:
        """The session's variants; ``current``: the key of the one the window shows."""
        self.variant_keys = [v.key for v in variants]
        self.variant_table.setRowCount(len(variants))
        for r, v in enumerate(variants):
            name = v.name + ("  (shown)" if v.key == current else "")
            error = "" if math.isnan(v.output_rel) else f"max rel {v.output_rel:.3g}, SQNR {_db(v.output_sqnr)} dB"
            worst = "" if math.isnan(v.worst_sqnr) else f"{_db(v.worst_sqnr)} dB at {v.worst_layer}"
            cells = (name, human_bytes(v.size), "" if math.isnan(v.speed_ms) else f"{v.speed_ms:.3g}", worst, error,
                     v.options_text())
            for c, text in enumerate(cells):
                item = _item(display_name(text, TEXT_CHARS), right=c in (1, 2))
                item.setToolTip(plain_tooltip(text, 2000))
                self.variant_table.setItem(r, c, item)
        _fit_columns(self.variant_table)

    def _variant_clicked(self, action: str) -> None:
        row = self.variant_table.currentRow()
        if 0 <= row < len(self.variant_keys):
            self.variant_action.emit(action, self.variant_keys[row])


def _label(bold: bool = False) -> QLabel:
    label = QLabel()
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    if bold:
        font = label.font()
        font.setBold(True)
        label.setFont(font)
    return label


def _table(columns: Sequence[str]) -> QTableWidget:
    table = QTableWidget(0, len(columns))
    table.setHorizontalHeaderLabels(list(columns))
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.verticalHeader().hide()
    table.setWordWrap(False)
    table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    table.horizontalHeader().setStretchLastSection(True)
    return table


def _fit_columns(table: QTableWidget) -> None:
    """Columns as wide as their contents, none wider than :data:`COLUMN_MAX` (the last one stretches)."""
    table.resizeColumnsToContents()
    for c in range(table.columnCount() - 1):
        table.setColumnWidth(c, min(table.columnWidth(c), COLUMN_MAX))


def _item(text: str, right: bool = False) -> QTableWidgetItem:
    item = QTableWidgetItem(text)
    if right:
        item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    return item


def _lines(lines: Sequence[str]) -> str:
    """Lines for a plain-text label, each escaped (names from the file) and cut; empty ones left out."""
    return "\n".join(message_text(line) for line in lines if line)


def _db(x: float) -> str:
    return f"{x:.1f}" if math.isfinite(x) else "inf"
