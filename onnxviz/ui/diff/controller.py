"""The model diff in the window: File > Compare With... diffs the open model (A) against another (B) in
the background, marks A's graph, lists every difference, and runs both models on the same inputs.

The matching is :mod:`onnxviz.model.matching`'s (one matcher for the structure and the numbers): the
canvas shows A's graph with changed and removed nodes in their colours (a collapsed group takes its
strongest) and the nodes only B has as dashed ghost boxes between their matched neighbours
(:mod:`onnxviz.model.matching.ghosts`); a ghost selected shows B's node in the Node panel and is
never edited. "Show B's graph" puts B's graph on the canvas instead, with the nodes only B has marked
(a node of a graph only B has, which A's graph cannot show, switches to it when selected). Run Both reuses
the diff's alignment, so the values compared are the ones the diff paired.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QWidget

from onnxviz.model.document import Change, ChangeKind, Document
from onnxviz.model.runner.store import value_key
from onnxviz.model.selection import SelectionState
from onnxviz.model.text import display_name
from onnxviz.ui.diff.dock import DIFFERENCES, DiffDock
from onnxviz.ui.diff.marks import DiffMarks
from onnxviz.ui.diff.navigation import DifferenceList
from onnxviz.ui.diff.opening import AFTER_TRANSFORM, AS_B, RENAMED_RGBA, Opened, open_diff
from onnxviz.ui.diff.run_both import RunBoth
from onnxviz.ui.diff.sides import SidesTable, changed_fields, node_rows
from onnxviz.ui.diff.state import DiffState
from onnxviz.ui.diff.work import DiffTasks
from onnxviz.ui.docks import PROBLEMS, find_dock
from onnxviz.ui.ports import Feeds, Frame, PanelsApi, Registry, RunApi, ShownDocument, Status, Tasks
from onnxviz.ui.tasks import Task

if TYPE_CHECKING:
    from collections.abc import Mapping

    import numpy as np

    from onnxviz.model.layout.ghosts import Ghost
    from onnxviz.model.matching import CrossRun, ModelDiff
    from onnxviz.model.matching.samples import SamplesRun
    from onnxviz.ui.canvas.canvas import GraphCanvas

__all__ = ["RENAMED_RGBA", "DiffController"]
DOCK_SHARE = 0.4  # of the window's height, for the Differences dock when a diff opens
MODEL_FILTER = "ONNX models (*.onnx);;All files (*)"


class DiffController(QObject):
    """Owns the diff of one window (``window.diff``; the other features see it as
    :class:`~onnxviz.ui.ports.DiffApi`): opens and closes it, shows B's graph, and composes the parts that share
    its :class:`DiffState`: :class:`DiffMarks` (the canvas's colours and ghosts), :class:`DifferenceList` (the
    differences list, the Node panel's section) and :class:`RunBoth` (both models run and compared)."""

    diff_shown = Signal()      # a diff is on the canvas and in the dock
    diff_closed = Signal()
    runs_compared = Signal()   # Run Both finished and the values are coloured
    side_changed = Signal(bool)  # True: the canvas shows B's graph
    failed = Signal(str)       # one sentence

    def __init__(self, frame: Frame, document: ShownDocument, canvas: GraphCanvas, status: Status, tasks: Tasks,
                 registry: Registry) -> None:
        super().__init__(frame.window)
        self.window = frame.window  # the parent of the dialogs and the Differences dock
        self.document, self.canvas, self.status = document, canvas, status
        self.registry = registry
        self.state = DiffState()
        self._doc: Document | None = None
        self.actions: dict[str, QAction] = {}  # the feature's, by name
        self.dock = DiffDock(self.window)
        self.work = DiffTasks(status, tasks, self.failed.emit)
        self.marks = DiffMarks(self.state, document, canvas, self.dock, self.panels, self.show_b)
        self.differences = DifferenceList(self.state, document, canvas, self.dock, status, self.panels, self.show_b)
        self.runs = RunBoth(self.state, document, canvas, self.dock, status, self.work, self.run, self.show_b,
                            self.runs_compared.emit, self)
        self.dock.close_requested.connect(self.close_diff)
        self.dock.colouring_chosen.connect(self.marks.set_colouring)
        self.dock.show_b_toggled.connect(self.show_b)
        registry.when(PanelsApi, lambda panels: panels.add_node_section(self.node_section))  # type: ignore[type-abstract]
        # A's run colours A's graph
        registry.when(RunApi, lambda run: run.run_finished.connect(lambda: self.show_b(False)))  # type: ignore[type-abstract]
        frame.closing.connect(self.close_diff)
        # the window restores its docks after the features are installed: a dock saved open, with a diff
        # the last session had, would come back empty
        QTimer.singleShot(0, lambda: None if self.active else self.dock.hide())

    # -- the diff shown, as the other features and the tests read it ---------------------------------
    @property
    def active(self) -> bool:
        return self.state.active

    @property
    def diff(self) -> ModelDiff | None:
        return self.state.diff

    @property
    def doc_b(self) -> Document | None:
        return self.state.doc_b

    @property
    def showing_b(self) -> bool:
        return self.state.showing_b

    @property
    def ghosts(self) -> dict[str, list[Ghost]]:
        return self.state.ghosts

    @property
    def cross(self) -> CrossRun | None:
        return self.state.cross

    @property
    def over(self) -> SamplesRun | None:
        return self.state.over

    @property
    def task(self) -> Task | None:
        return self.work.task

    def panels(self) -> PanelsApi:
        return self.registry.get(PanelsApi)  # type: ignore[type-abstract]

    def run(self) -> RunApi:
        return self.registry.get(RunApi)  # type: ignore[type-abstract]

    # -- the document ------------------------------------------------------------------------------
    def set_document(self, doc: Document | None) -> None:
        self.close_diff()
        if self._doc is not None:
            self._doc.selection.changed.disconnect(self.runs.on_selection)
        self._doc = doc
        if doc is not None:
            doc.selection.changed.connect(self.runs.on_selection)

    def on_model_changed(self, change: Change) -> None:
        """An edit of A makes the diff's positions stale: it closes, saying so."""
        if self.state.active and change.kind not in (ChangeKind.SAVED, ChangeKind.VALIDATED):
            self.close_diff()
            self.status.show_message("The model was edited: the diff was closed "
                                     "(File > Compare With... compares again).", 10000)

    # -- opening -----------------------------------------------------------------------------------
    def compare_with_dialog(self) -> None:
        if self.document.doc is None:
            return
        folder = str(self.document.doc.path.parent) if self.document.doc.path is not None else ""
        path, _ = QFileDialog.getOpenFileName(self.window, "Compare With Model", folder, MODEL_FILTER)
        if path:
            self.compare_with(Path(path))

    def compare_with(self, path: Path, transformed: bool = False) -> Task | None:
        """Diff the open document against the model at ``path`` in the background (progress and Cancel
        in the status bar); returns the task, or None without a document. ``transformed``: the open document is
        a transform's result and ``path`` the model before it (A's canvas says what the transform added and
        removed)."""
        doc_a = self.document.doc
        if doc_a is None:
            return None
        self.work.cancel()
        work = functools.partial(open_diff, doc_a, path, AFTER_TRANSFORM if transformed else AS_B)
        task = Task(work, f"Comparing with {path.name}", parent=self)
        task.finished.connect(lambda opened: self._opened(task, doc_a, opened))
        task.failed.connect(lambda exc, tb: self.work.failed(task, exc, tb, f"{path.name} could not be compared"))
        task.cancelled.connect(lambda: self.work.cancelled(task, f"Comparing with {path.name} was cancelled."))
        return self.work.start(task, f"Comparing {doc_a.name} with {path.name}...")

    def _opened(self, task: Task, doc_a: Document, opened: Opened) -> None:
        if task is not self.work.task or doc_a is not self.document.doc:
            return
        self.work.task = None
        replaced = (f"The comparison with another model was replaced: File > Compare With... opened "
                    f"{display_name(opened.doc_b.name, 80)} (Run Both compares the two).")
        self.runs.drop_runs(replaced)
        self.run().comparison_replaced(replaced)
        self.show_b(False)
        state = self.state
        state.doc_b, state.diff, state.marks, state.marks_b = opened.doc_b, opened.diff, opened.marks, opened.marks_b
        state.ghosts, state.wording = opened.ghosts, opened.wording
        state.ghost_of = {g.key: g for gs in opened.ghosts.values() for g in gs}
        self.marks.show_ghosts()
        self.state.colouring = DIFFERENCES
        self.dock.show_diff(f"{doc_a.name} (A) vs {opened.doc_b.name} (B)", opened.diff, opened.summary,
                            opened.wording.kind)
        self._place_dock()
        self.marks.apply_colours()
        self.status.show_message(f"Compared with {opened.doc_b.name}: {opened.summary}", 10000)
        self.diff_shown.emit()

    def _place_dock(self) -> None:
        """Over the bottom panels (the list and three heatmaps want the window's width), 40% of its height."""
        w = self.window
        problems = find_dock(w, PROBLEMS)
        if problems is not None and not problems.isHidden() and w.dockWidgetArea(problems) == w.dockWidgetArea(self.dock):
            w.tabifyDockWidget(problems, self.dock)
        self.dock.show()
        self.dock.raise_()
        w.resizeDocks([self.dock], [int(w.height() * DOCK_SHARE)], Qt.Orientation.Vertical)

    # -- closing -----------------------------------------------------------------------------------
    def close_diff(self) -> None:
        """Back to the plain view of A: no marks, no dock, B and the runs' values dropped."""
        self.work.cancel()
        was_active = self.state.active
        self.show_b(False)
        self.runs.drop_runs("The diff was closed, and with it the runs of its Run Both (Run, F9, runs this model).")
        self.state.diff, self.state.doc_b, self.state.marks, self.state.marks_b = None, None, {}, {}
        self.state.ghosts, self.state.ghost_of = {}, {}
        self.marks.show_ghosts()
        self.dock.hide()
        if was_active:
            self.run().show_own_colours()  # the last plain run's colours come back, or none
            self.panels().refresh_node()
            self.diff_closed.emit()

    # -- B's graph -----------------------------------------------------------------------------------
    def show_b(self, on: bool) -> None:
        """Show B's graph on the canvas (its nodes coloured by their differences, the ones only B has as
        "added in B"; selecting one shows both sides in the dock), or A's again."""
        doc_a, doc_b = self.document.doc, self.state.doc_b
        on = on and doc_a is not None and doc_b is not None and self.state.diff is not None
        if on == self.state.showing_b:
            self.dock.set_showing_b(on)
            return
        self.state.showing_b = on
        assert doc_b is not None
        if on:
            doc_b.selection.changed.connect(self._on_selection_b)
        else:
            doc_b.selection.changed.disconnect(self._on_selection_b)
        if self.document.shown in (doc_a, doc_b):  # not when the window is changing its document
            self.document.show(doc_b if on else None)  # the canvas and the editing's badges follow
        self.dock.set_showing_b(on)
        self.marks.show_ghosts()
        self.marks.apply_colours()
        self.side_changed.emit(on)

    def _on_selection_b(self, state: SelectionState) -> None:
        """A node of B's graph selected: its fields and its A partner's in the dock."""
        if self.state.diff is None or self.state.doc_b is None or state.node < 0:
            return
        ga = self.state.diff.alignment.graphs_b.get(state.scope)
        if ga is None or not 0 <= state.node < len(ga.index_b.nodes):
            return
        b, i = ga.index_b.nodes[state.node], ga.node_a(state.node)
        a = ga.index_a.nodes[i] if i is not None else None
        found = next((d for d in self.state.diff.differences if d.kind == "node_changed" and d.scope_b == state.scope
                      and d.node_b == state.node), None)
        changed = changed_fields(found.details, a, b) if found is not None and a is not None else None
        self.dock.show_sides(SidesTable(node_rows(a, b, changed)))
        if self.state.cross is not None:
            by_b = {d.other: d for d in self.state.cross.diffs}
            keys = [value_key(state.scope, y) for y in b.output]
            self.runs.show_pair(next((by_b[k] for k in keys if k in by_b), None))

    # -- the parts' public API ---------------------------------------------------------------------
    def current_difference(self) -> int:
        """The row of the difference chosen in the list (-1: none)."""
        return self.differences.current_difference()

    def choose_difference(self, row: int) -> None:
        self.differences.choose_difference(row)

    def step(self, direction: int) -> None:
        self.differences.step(direction)

    def node_section(self, doc: Document, scope: str, node: int) -> tuple[str, QWidget] | None:
        """The Node panel's "Compared with B" section (:meth:`DifferenceList.node_section`)."""
        return self.differences.node_section(doc, scope, node)

    def set_colouring(self, key: str) -> None:
        self.marks.set_colouring(key)

    def run_both(self, feeds: Mapping[str, np.ndarray] | Feeds | None = None) -> Task | None:
        """Run Both (:meth:`RunBoth.run_both`)."""
        return self.runs.run_both(feeds)

    def run_both_with_inputs(self) -> None:
        self.runs.run_both_with_inputs()
