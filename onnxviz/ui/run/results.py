"""The runs shown to the user: the Activations dock (placed beside the inspector the first time), the canvas's
colours and run-time notes, the finders (NaN/Inf, the first difference) and other features' comparisons."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, QTimer

from onnxviz.model.graph.index import scope_label
from onnxviz.model.runner.compare import COMPARE_MEASURES, Tolerance, ValueDiff, first_exceeding, per_node
from onnxviz.model.runner.store import FLAG_STATES, MEASURE_KINDS, MEASURES, value_key
from onnxviz.model.selection import SelectionState
from onnxviz.model.text import duration_text
from onnxviz.ui.canvas.marks import Scheme
from onnxviz.ui.docks import RIGHT_TABS, find_dock
from onnxviz.ui.run.activations_dock import ActivationsDock, node_label
from onnxviz.ui.run.shown import ShownRuns, not_captured

if TYPE_CHECKING:
    from PySide6.QtWidgets import QMainWindow

    from onnxviz.model.document import Document
    from onnxviz.model.matching.samples import PairOverSamples
    from onnxviz.model.runner import RunResult
    from onnxviz.model.runner.compare import PairSpec
    from onnxviz.ui.canvas.canvas import GraphCanvas
    from onnxviz.ui.ports import ShownDocument, Status
    from onnxviz.ui.run.jobs import Outcome


DOCK_SHARE = (20, 80)  # of the right column's height when the dock first shows: the inspector's and the dock's


class RunResults(QObject):
    """Shows :attr:`shown` (the runs) in the dock and on the canvas, and follows the document's selection."""

    def __init__(self, window: QMainWindow, dock: ActivationsDock, document: ShownDocument, canvas: GraphCanvas,
                 status: Status) -> None:
        super().__init__(window)
        self.window, self.document, self.canvas, self.status = window, document, canvas, status
        self.shown = ShownRuns()
        self._doc: Document | None = None
        self._dock_placed = False
        self.dock = dock
        dock.build()
        self.dock.scope_label = lambda scope: scope_label(document.doc.index if document.doc else None, scope)
        self.dock.overlay_chosen.connect(self.set_overlay)
        self.dock.first_nonfinite_requested.connect(self.jump_to_first_nonfinite)
        self.dock.next_nonfinite_requested.connect(self.jump_to_next_nonfinite)
        canvas.node_notes.append(self.run_time_note)

    def follow(self, doc: Document | None) -> None:
        """The window's document is now ``doc``: the runs of the one left go."""
        self.watch(doc)
        self.shown.drop()
        self.dock.set_result(None)
        self.apply_overlay()

    def watch(self, doc: Document | None) -> None:
        """Follow the selection of ``doc`` (of no other document)."""
        if self._doc is not None:
            self._doc.selection.changed.disconnect(self.on_selection)
        self._doc = doc
        if doc is not None:
            doc.selection.changed.connect(self.on_selection)

    def set_stale(self) -> None:
        """The model changed since the run shown: its values are kept, marked stale, its colours go."""
        if self.shown.result is not None:
            self.dock.set_stale(True)
            self.canvas.clear_overlay()

    # -- a run's outcome -------------------------------------------------------------------------
    def show_outcome(self, doc: Document, labels: list[str], outcome: Outcome) -> str:
        """The runs of ``outcome`` (labelled ``labels``) in place of those shown; returns the summary's headline."""
        s = self.shown
        s.drop()
        s.result = outcome.results[0]
        s.other = outcome.results[1] if len(outcome.results) > 1 else None
        s.diffs, s.pairs = outcome.diffs, outcome.pairs
        s.over, s.samples = outcome.over, outcome.samples
        s.other_label = labels[1] if len(labels) > 1 else ""
        if s.diffs is not None and s.overlay_key not in COMPARE_MEASURES:
            s.overlay_key = s.compare_colouring()
        elif s.diffs is None and s.overlay_key not in MEASURES:
            s.overlay_key = "max_abs"
        summary = s.summary(labels[0])
        self.dock.set_result(s.result, s.diffs, summary, s.overlay_key, s.other_label, s.other)
        self._bring_dock_forward()
        self.apply_overlay()
        self.on_selection(doc.selection.state)
        return summary.split("<br>")[0]  # the dock has the rest; a long status line runs under its widgets

    def show_compared(self, doc: Document | None, diffs: list[ValueDiff], tolerance: Tolerance) -> None:
        """The two runs shown, compared again with another tolerance; selects the first difference."""
        s = self.shown
        s.diffs, s.tolerance = diffs, tolerance
        self.dock.set_result(s.result, diffs, s.summary(doc.name if doc is not None else ""), s.overlay_key,
                             s.other_label, s.other)
        self.apply_overlay()
        if doc is not None:
            self.on_selection(doc.selection.state)
        self.show_first_difference()

    def _bring_dock_forward(self) -> None:
        """Show the dock; the first time, give it most of the column's height (tensors need room)."""
        first = not self._dock_placed
        self._dock_placed = True
        if first:  # below the inspector panels (not a tab), so a node's facts and values show together
            self.window.removeDockWidget(self.dock)
            self.window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.dock, Qt.Orientation.Vertical)
        self.dock.show()
        self.dock.raise_()
        if first:  # once the dock has joined the column's layout (right away, it is half ignored)
            QTimer.singleShot(0, self, self._give_dock_room)

    def _give_dock_room(self) -> None:
        """Most of the right column: the inspector above keeps a fifth, its header and first facts (sizes
        are proportions between docks that share the column); a value's heatmap is as tall as the room
        left under the statistics and the slice controls (with a third for the inspector: 130 px of an
        860 px window, now 250 px)."""
        above = [d for d in (find_dock(self.window, name) for name in RIGHT_TABS)
                 if d is not None and d.isVisible() and not d.isFloating()]
        if above:
            self.window.resizeDocks([above[0], self.dock], [DOCK_SHARE[0], DOCK_SHARE[1]], Qt.Orientation.Vertical)

    # -- comparisons of other features -------------------------------------------------------------
    def show_comparison(self, owner: object, doc: Document, result_a: RunResult, result_b: RunResult,
                        diffs: list[ValueDiff], pairs: list[PairSpec], label: str,
                        over: list[PairOverSamples] | None = None, samples: list[str] | None = None) -> None:
        """Another feature's comparison of this document with another model, replacing what the dock showed;
        the runs stay ``owner``'s. The canvas's colours stay the owner's."""
        s = self.shown
        s.drop()
        s.result, s.other, s.diffs, s.pairs = result_a, result_b, diffs, pairs
        s.over, s.samples = over, list(samples or [])
        s.owner, s.other_label = owner, label
        if s.overlay_key not in COMPARE_MEASURES:
            s.overlay_key = s.compare_colouring()
        self.dock.set_result(result_a, diffs, s.summary(doc.name), s.overlay_key, label, result_b)
        self.on_selection(doc.selection.state)

    def forget(self, owner: object, reason: str) -> bool:
        """``owner``'s runs are about to be removed: the panel no longer shows them (``reason`` says why).
        Returns whether it showed them."""
        if self.shown.owner is None or self.shown.owner is not owner:
            return False
        self.shown.drop()
        self.dock.set_result(None)
        self.dock.summary.setText(reason)
        return True

    def comparison_replaced(self, reason: str) -> bool:
        """A new comparison with another model replaces the one shown with a model other than this one: the
        runs of that model go, this model's run stays. Returns whether another feature's runs went."""
        s = self.shown
        if s.owner is not None:
            return self.forget(s.owner, reason)
        if s.other is None or s.pairs is None or s.result is None:
            return False  # no comparison, or one of this model's own runs (engines, the saved file)
        s.drop_other()
        if s.overlay_key in COMPARE_MEASURES:
            s.overlay_key = "max_abs"
        doc = self.document.doc
        summary = s.summary(doc.name if doc is not None else "")
        self.dock.set_result(s.result, None, f"{summary}<br><i>{html.escape(reason)}</i>", s.overlay_key)
        if doc is not None:
            self.on_selection(doc.selection.state)
        return False

    # -- selection, overlay ------------------------------------------------------------------------
    def on_selection(self, state: SelectionState) -> None:
        s = self.shown
        if s.result is None:
            return
        index = self.document.doc.index if self.document.doc is not None else None
        if state.value:
            record = s.result.record(state.scope, state.value)
            structured = [k for k in (value_key(state.scope, state.value),)
                          if k in s.result.structured]
            self.dock.show_records([record] if record else [], f"'{state.value}' was not captured in this run.",
                                   structured)
        elif state.node >= 0:
            self.dock.show_records(s.records_of(index, state.scope, state.node), not_captured(state.scope),
                                   s.structured_of(index, state.scope, state.node))
        else:
            self.dock.show_records([])

    def set_overlay(self, key: str) -> None:
        self.shown.overlay_key = key
        self.apply_overlay()

    def _overlay_values(self) -> tuple[dict[tuple[str, int], float], str]:
        s = self.shown
        key = s.overlay_key
        if s.result is None or not key:
            return {}, ""
        if key in COMPARE_MEASURES:
            if not s.diffs:
                return {}, ""
            return {("", node): v for node, v in per_node(s.diffs, key).items()}, COMPARE_MEASURES[key]
        return s.result.measure(key), MEASURES.get(key, key)

    def apply_overlay(self) -> None:
        canvas = self.canvas
        values, title = self._overlay_values()
        if not title or self.dock.stale.isVisible():
            canvas.clear_overlay()
            return
        bad = self.shown.result.first_nonfinite() if self.shown.result is not None else None
        flagged = ("", bad.node) if bad is not None else None
        key = self.shown.overlay_key
        scheme = Scheme(MEASURE_KINDS.get(key, "level"), FLAG_STATES.get(key, ("no", "yes")))
        canvas.set_overlay(values, title, flagged, scheme)

    def run_time_note(self, scope: str, node: int) -> str:
        """The canvas tooltip's line with the node's profiled run time ('' without one)."""
        result = self.shown.result
        times = result.node_times_us if result is not None and not self.dock.stale.isVisible() else {}
        return f"run time <b>{duration_text(times[node])}</b>" if scope == "" and node in times else ""

    # -- finders -----------------------------------------------------------------------------------
    def jump_to_first_nonfinite(self) -> None:
        self._jump_to_nonfinite(-1, "First")

    def jump_to_next_nonfinite(self) -> None:
        """The next node after the selected one (in topological order) whose output has NaN (or Inf)."""
        doc, result = self.document.doc, self.shown.result
        state = doc.selection.state if doc is not None else None
        order = -1
        if result is not None and state is not None and state.scope == "":
            shown = self.shown.records_of(doc.index if doc else None, "", state.node) if state.node >= 0 else \
                [r for r in (result.record("", state.value),) if r is not None]
            order = max((r.order for r in shown), default=-1)
        self._jump_to_nonfinite(order, "Next")

    def _jump_to_nonfinite(self, order: int, which: str) -> None:
        nan_only = self.dock.nan_only.isChecked()
        what = "NaN" if nan_only else "NaN/Inf"
        result = self.shown.result
        bad = result.nonfinite_after(order, nan_only) if result is not None else None
        if bad is None:
            after = " after the selected node" if order >= 0 else ""
            self.status.show_message(f"No value of the last run{after} has {what}.", 5000)
            return
        self.reveal(bad.node)
        self.status.show_message(f"{which} {what}: {bad.name} ({bad.op_type} {node_label(bad)}).", 10000)

    def show_first_difference(self) -> None:
        tolerance = self.shown.tolerance
        found = first_exceeding(self.shown.diffs or [])
        if found is None:
            self.status.show_message(f"No value differs beyond {tolerance.text()}.", 5000)
            return
        self.reveal(found.node)
        combo = self.dock.value_combo  # the node's differing output, not its first
        combo.setCurrentIndex(max(0, combo.findData(found.name)))
        self.status.show_message(
            f"First difference beyond {tolerance.text()}: {found.name} ({found.outside} elements outside; "
            f"relative error {found.rel_error:.3g}, max abs error {found.max_abs_error:.3g}).", 10000)

    def reveal(self, node: int) -> None:
        self.canvas.reveal_node("", node)
