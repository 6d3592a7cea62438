"""The Activations dock: the selected node's captured outputs in a TensorView, plus the run's
overlay choice, the NaN/Inf finder and, after a comparison, the error of the selected value."""

from __future__ import annotations

import html
import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QComboBox,
    QDockWidget,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QPushButton,
    QScrollArea,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from onnxviz.model.text import display_name, duration_text
from onnxviz.ui.run.structured_view import StructuredView
from onnxviz.ui.widgets.names import name_tooltip, wrappable
from onnxviz.ui.widgets.pair_view import ValuesView
from onnxviz.ui.widgets.tensor_view import TensorView

if TYPE_CHECKING:
    from onnxviz.model.runner.compare import ValueDiff
    from onnxviz.model.runner.store import RunResult, ValueRecord

NO_RUN_TEXT = "Run the model (Run > Run, F9) to see the value of every node output here."


class ActivationsDock(QDockWidget):
    """A view of the controller's result; it never runs anything itself. The window shows it (a tab of the bottom
    group) from its first frame; its content and the runner's modules (~25 ms of CPU at every start) come with
    :meth:`build`, which the Run feature calls the first time it is needed (the controller made, or the dock
    shown)."""

    overlay_chosen = Signal(str)          # a MEASURES / COMPARE_MEASURES key, or "" for none
    first_nonfinite_requested = Signal()
    next_nonfinite_requested = Signal()
    first_difference_requested = Signal(float, float)   # rtol, atol

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Activations", parent)
        self.setObjectName("ActivationsDock")
        self.result: RunResult | None = None
        self.other: RunResult | None = None  # the run compared with, when there is one
        self.diffs: dict[str, ValueDiff] = {}
        self.other_label = ""  # what the values were compared with (an engine, a file)
        self.records: list[ValueRecord] = []
        self.structured: list[str] = []  # keys of the sequences and maps offered after the records
        self.scope_label: Callable[[str], str] = str  # the controller names scopes like the breadcrumb
        self.page = QScrollArea()  # its minimum height (180) must not set the bottom docks' (the graph's room)
        self.page.setWidgetResizable(True)
        self.page.setFrameShape(QFrame.Shape.NoFrame)
        self.setWidget(self.page)

    @property
    def built(self) -> bool:
        return self.page.widget() is not None

    def build(self) -> None:
        """The dock's content, once."""
        if self.built:
            return
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(self._overlay_row())
        layout.addWidget(self._difference_row())
        self.summary = _wrapping_label()
        layout.addWidget(self.summary)
        self.stale = _wrapping_label()
        self.stale.setStyleSheet("color: #b9770e;")
        self.stale.hide()
        layout.addWidget(self.stale)
        self.value_row = QWidget()
        pick = QHBoxLayout(self.value_row)
        pick.setContentsMargins(0, 0, 0, 0)
        pick.addWidget(QLabel("Output:"))
        self.value_combo = QComboBox()
        self.value_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.value_combo.currentIndexChanged.connect(self._show_current)
        pick.addWidget(self.value_combo, 1)
        layout.addWidget(self.value_row)
        self.facts = _wrapping_label()
        layout.addWidget(self.facts)
        self.view = TensorView()
        self.pair = ValuesView(columns=1)  # after a comparison: the value in both runs and their difference
        self.tabs = QTabWidget()
        self.tabs.addTab(self.view, "This run")
        self.pair_page = QScrollArea()  # its pictures' minimum height must not raise the window's
        self.pair_page.setWidgetResizable(True)
        self.pair_page.setFrameShape(QFrame.Shape.NoFrame)
        self.pair_page.setWidget(self.pair)
        self.tabs.addTab(self.pair_page, "Both runs: A, B, B \u2212 A")
        self.tabs.tabBar().hide()
        self.tabs.currentChanged.connect(lambda _i: self._show_pair())
        layout.addWidget(self.tabs, 1)
        self.tree = StructuredView()  # in the view's place for a sequence or map
        self.tree.hide()
        layout.addWidget(self.tree, 1)
        self.page.setWidget(body)
        self.set_result(None)

    # -- building ------------------------------------------------------------------------------
    def _overlay_row(self) -> QHBoxLayout:
        row = QHBoxLayout()
        row.setSpacing(4)   # with the finder beside it, the dock stays narrower than 420 px
        row.addWidget(QLabel("Colour by:"))
        self.overlay_combo = QComboBox()
        self.overlay_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.overlay_combo.setMinimumContentsLength(6)  # more and the row widened the window past 1024
        self.overlay_combo.currentIndexChanged.connect(
            lambda _i: self.overlay_chosen.emit(self.overlay_combo.currentData() or ""))
        row.addWidget(self.overlay_combo, 1)
        self._add_finder(row)
        return row

    def _add_finder(self, row: QHBoxLayout) -> None:
        """First NaN/Inf (or NaN only) and Next: the nodes that made one, in topological order."""
        self.nan_button = QToolButton()
        self.nan_button.setText("First NaN/Inf")
        self.nan_button.setPopupMode(QToolButton.ToolButtonPopupMode.MenuButtonPopup)  # its menu: NaN only
        self.nan_button.clicked.connect(self.first_nonfinite_requested)
        self.nan_only = QAction("NaN only", self.nan_button)
        self.nan_only.setCheckable(True)
        self.nan_only.setToolTip("Look for NaN only (an Inf can be expected, e.g. an attention mask)")
        self.nan_only.toggled.connect(lambda _on: self._update_finder())
        menu = QMenu(self.nan_button)
        menu.setToolTipsVisible(True)
        menu.addAction(self.nan_only)
        self.nan_button.setMenu(menu)
        self.next_button = QToolButton()
        self.next_button.setText("Next")
        self.next_button.clicked.connect(self.next_nonfinite_requested)
        for widget in (self.nan_button, self.next_button):
            row.addWidget(widget)

    def _update_finder(self) -> None:
        """The finder's buttons for the current result and choice."""
        result, nan_only = self.result, self.nan_only.isChecked()
        what = "NaN" if nan_only else "NaN/Inf"
        found = result is not None and result.nonfinite_after(-1, nan_only) is not None
        self.nan_button.setEnabled(found)
        self.next_button.setEnabled(found)
        self.nan_button.setText(f"First {what}" if found or result is None else f"No {what}")
        self.nan_button.setToolTip(f"Select the first node (in topological order) whose output has {what}")
        self.next_button.setToolTip(f"Select the next node (in topological order) after the selected one whose "
                                    f"output has {what}")

    def _difference_row(self) -> QWidget:
        """Shown after a comparison: jump to the first value whose error passes a tolerance."""
        self.difference_row = QWidget()
        row = QHBoxLayout(self.difference_row)
        row.setContentsMargins(0, 0, 0, 0)
        from onnxviz.model.runner.compare import DEFAULT_TOLERANCE

        self.rtol, self.atol = QLineEdit(f"{DEFAULT_TOLERANCE.rtol:g}"), QLineEdit(f"{DEFAULT_TOLERANCE.atol:g}")
        for text, field in (("rtol:", self.rtol), ("atol:", self.atol)):
            row.addWidget(QLabel(text))
            field.setFixedWidth(60)
            field.setToolTip("Elements differ when |b - a| > atol + rtol * |a| (numpy.allclose; a: this run)")
            row.addWidget(field)
        self.diff_button = QPushButton("First Difference")
        self.diff_button.setToolTip("Select the first value (in topological order) with an element "
                                    "outside the tolerance")
        self.diff_button.clicked.connect(self._on_diff_clicked)
        row.addWidget(self.diff_button)
        row.addStretch(1)
        return self.difference_row

    # -- what the controller sets ----------------------------------------------------------------
    def set_result(self, result: RunResult | None, diffs: list[ValueDiff] | None = None,
                   summary: str = "", overlay: str = "", other_label: str = "",
                   other: RunResult | None = None) -> None:
        self.result = result
        self.other = other if diffs is not None else None
        self.tabs.tabBar().setVisible(self.other is not None)
        if self.other is None:
            self.tabs.setCurrentIndex(0)
        self.diffs = {d.name: d for d in diffs or []}
        self.other_label = other_label
        self.summary.setText(summary or ("" if result else NO_RUN_TEXT))
        self._update_finder()
        self.difference_row.setVisible(bool(self.diffs))
        self._fill_overlay_combo(result, overlay)
        self.set_stale(False)
        self.show_records([])

    def _fill_overlay_combo(self, result: RunResult | None, current: str) -> None:
        from onnxviz.model.runner.compare import COMPARE_MEASURES
        from onnxviz.model.runner.store import MEASURES

        combo = self.overlay_combo
        combo.blockSignals(True)
        combo.clear()
        combo.addItem("Nothing", "")
        if result is not None:
            for key, label in MEASURES.items():
                if key != "time_us" or result.node_times_us:
                    combo.addItem(label, key)
        if self.diffs:
            for key, label in COMPARE_MEASURES.items():
                combo.addItem(f"Difference: {label}", key)
        combo.setCurrentIndex(max(0, combo.findData(current)))
        combo.setEnabled(result is not None)
        combo.blockSignals(False)

    def set_stale(self, stale: bool) -> None:
        self.stale.setText("The model changed after this run; values are shown by name. Run again (F9).")
        self.stale.setVisible(stale and self.result is not None)

    def show_records(self, records: list[ValueRecord], message: str = "", structured: list[str] | None = None) -> None:
        """Offer ``records`` (a node's outputs, or one value) and the keys of ``structured`` values
        (sequences and maps) and show the first."""
        self.records = records
        self.structured = structured or []
        self.value_combo.blockSignals(True)
        self.value_combo.clear()
        names = [r.name for r in records] + [self.result.structured[k]["name"] for k in self.structured] \
            if self.result is not None else []
        for k, name in enumerate(names):  # names cut: the popup is as wide as its longest item
            self.value_combo.addItem(display_name(name, 80), name)
            self.value_combo.setItemData(k, name_tooltip(name), Qt.ItemDataRole.ToolTipRole)
        self.value_combo.blockSignals(False)
        self.value_row.setVisible(len(names) > 1)  # a node with several outputs
        if names:
            self._show_current()
        else:
            self.facts.setText("")
            self._show_tree(False)
            self.view.clear(message or ("Select a node to see its outputs." if self.result else NO_RUN_TEXT))

    def _show_tree(self, shown: bool) -> None:
        self.tree.setVisible(shown)
        self.tabs.setVisible(not shown)
        self.view.setVisible(not shown)

    def _show_current(self) -> None:
        index = self.value_combo.currentIndex()
        if self.result is None or not 0 <= index < len(self.records) + len(self.structured):
            return
        if index >= len(self.records):
            self._show_structured(self.structured[index - len(self.records)])
            return
        self._show_tree(False)
        record = self.records[index]
        self.facts.setText(self._facts_html(record))
        result = self.result
        self.view.show_tensor(record.name, stats=record.stats, loader=lambda: result.array(record.key),
                              kernels=False)  # an NCHW activation is no conv weight: its maps are in Slices
        self._show_pair()

    def _show_pair(self) -> None:
        """The shown value in both runs, read only while that tab is open (two arrays, one more made)."""
        if self.tabs.currentWidget() is not self.pair_page:
            return
        index = self.value_combo.currentIndex()
        record = self.records[index] if 0 <= index < len(self.records) else None
        d = self.diffs.get(record.name) if record is not None and record.scope == "" else None
        from onnxviz.model.runner.errors import RunError

        if self.result is None or self.other is None or record is None or d is None:
            self.pair.show_message("This value was not compared (it has no partner in the other run).")
            return
        try:
            self.pair.show_pair(self.result.array(record.key), self.other.array(d.other), d)
        except (RunError, KeyError, OSError) as exc:
            self.pair.show_message(f"The values could not be read: {exc}")

    def _show_structured(self, key: str) -> None:
        from onnxviz.model.runner.errors import RunError

        assert self.result is not None
        entry = self.result.structured[key]
        node = entry["node_name"] or f"node {entry['node']}"
        self.facts.setText(f"{_name_html(entry['op_type'])} <b>{_name_html(node)}</b> &middot; computed by "
                           f"<b>{html.escape(entry['engine'])}</b><br>{html.escape(entry['kind'])}")
        try:
            self.tree.show_value(self.result.structured_value(key))
        except RunError as exc:
            self.tree.show_value(exc.message)
        self._show_tree(True)

    def _facts_html(self, r: ValueRecord) -> str:
        if r.node >= 0:
            parts = [f"{_name_html(r.op_type)} <b>{_name_html(node_label(r))}</b> &middot; "
                     f"computed by <b>{html.escape(r.engine)}</b>"]
        else:  # its engine is "input": nothing computed it
            parts = ["given as graph input"]
        if not r.scope and self.result is not None and r.node in self.result.node_times_us:
            parts[0] += f" in <b>{duration_text(self.result.node_times_us[r.node])}</b>"
        if r.scope and self.result is not None:
            shown = self.result.scopes.get(r.scope, "")
            parts.append(f"inside <b>{html.escape(self.scope_label(r.scope))}</b>"
                         + (f": {html.escape(shown)}" if shown else ""))
        if r.nonfinite:
            parts.append(f"<span style='color:#c0392b'>{r.stats.nan_count} NaN, {r.stats.inf_count} Inf</span>")
        diff = self.diffs.get(r.name)
        if diff is not None:
            parts.append(f"vs {_name_html(self.other_label or 'the other run')}: relative error {_g(diff.rel_error)}, "
                         f"max abs error {_g(diff.max_abs_error)}, cosine {diff.cosine:.6f}, "
                         f"{diff.outside} elements outside the tolerance"
                         + (f" ({html.escape(diff.note)})" if diff.note else ""))
        return "<br>".join(parts)

    def _on_diff_clicked(self) -> None:
        from onnxviz.model.runner.compare import DEFAULT_TOLERANCE

        self.first_difference_requested.emit(_tolerance_field(self.rtol, DEFAULT_TOLERANCE.rtol),
                                             _tolerance_field(self.atol, DEFAULT_TOLERANCE.atol))


def _tolerance_field(field: QLineEdit, default: float) -> float:
    """The field's number; not a number >= 0: the default, shown in the field again."""
    try:
        value = float(field.text())
    except ValueError:
        value = -1.0
    if not math.isfinite(value) or value < 0:
        field.setText(f"{default:g}")
        return default
    return value


def node_label(r: ValueRecord) -> str:
    """The producing node's name, or its position when it has none (an empty name reads as nothing)."""
    return r.node_name or f"node {r.node}"


def _name_html(name: str) -> str:
    """A name from the file in the facts: escaped, cut short (the tensor needs the room) and free to wrap
    within the dock; the title above has the output's name, the Node panel the node's whole name."""
    return html.escape(wrappable(name, 80))


def _g(x: float) -> str:
    return "inf" if math.isinf(x) else f"{x:.3g}"


def _wrapping_label() -> QLabel:
    label = QLabel()
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label
