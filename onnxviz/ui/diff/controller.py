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

import dataclasses
import functools
import html
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import onnx
from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QWidget

from onnxviz.model.document import Change, ChangeKind, Document
from onnxviz.model.errors import OnnxvizError, sentence
from onnxviz.model.graph.index import function_scope
from onnxviz.model.layout.ghosts import Ghost
from onnxviz.model.matching import CrossRun, Difference, ModelDiff, compare_models, diff_models
from onnxviz.model.matching.diff import function_label
from onnxviz.model.matching.ghosts import added_ghosts
from onnxviz.model.matching.samples import SamplesRun, compare_samples
from onnxviz.model.progress import CancelToken, ProgressFn
from onnxviz.model.runner.compare import COMPARE_MEASURES, PairSpec, ValueDiff
from onnxviz.model.runner.errors import RunError
from onnxviz.model.runner.sizes import GeneratedInputs
from onnxviz.model.runner.store import value_key
from onnxviz.model.selection import SelectionState
from onnxviz.model.text import display_name
from onnxviz.ui.canvas.marks import Scheme
from onnxviz.ui.diff.dock import COLOURS, DIFFERENCES, DiffDock
from onnxviz.ui.diff.sides import SidesTable, changed_fields, node_rows
from onnxviz.ui.docks import PROBLEMS, find_dock
from onnxviz.ui.ports import Feeds, Frame, PanelsApi, Registry, RunApi, ShownDocument, Status, Tasks
from onnxviz.ui.tasks import Task, waiting_pool

if TYPE_CHECKING:
    from onnxviz.ui.canvas.canvas import GraphCanvas

FUNCTION_KINDS = ("function_added", "function_removed", "function_changed")
DOCK_SHARE = 0.4  # of the window's height, for the Differences dock when a diff opens
MODEL_FILTER = "ONNX models (*.onnx);;All files (*)"
RENAMED_RGBA = (222, 203, 160, 255)  # a node that changed its name only (another exporter): muted
CATEGORY = {"renamed": 0, "node_changed": 1, "node_removed": 2, "node_added": 2}  # a group box shows its highest
DIFF_SCHEME = Scheme("category", ("renamed only", "changed", "removed in B", "added in B (dashed)"),
                     (RENAMED_RGBA, COLOURS["node_changed"], COLOURS["node_removed"], COLOURS["node_added"]),
                     blank="same in B")
DIFF_SCHEME_B = Scheme("category", ("renamed only", "changed", "added in B"),
                       (RENAMED_RGBA, COLOURS["node_changed"], COLOURS["node_added"]), blank="same in A")


@dataclass(frozen=True)
class Wording:
    """How A's canvas names what differs: the overlay's title, its legend, what the dashed ghosts are (a
    transform's diff shows its result as A and the model before as B: there, what is only in A is what the
    transform added)."""

    title: str = "Differences with B"
    scheme: Scheme = DIFF_SCHEME
    dashed: str = "only in B"
    ghost_note: str = "added in B"
    none_dashed: str = "nothing added"
    ghost_tip: str = "only in B (added)"


AS_B = Wording()
AFTER_TRANSFORM = Wording(
    "What the transform changed",
    Scheme("category", ("renamed only", "changed", "added by the transform", "removed by it (dashed)"),
           DIFF_SCHEME.colours, blank="unchanged"),
    "removed by the transform", "removed by the transform", "nothing removed",
    "only in the model before (removed by the transform)")


@dataclass
class Opened:
    """The finished diff: B's document and every difference."""

    doc_b: Document
    diff: ModelDiff
    marks: dict[tuple[str, int], float]   # A's nodes to colour: (scope, node) -> category
    summary: str
    marks_b: dict[tuple[str, int], float] = field(default_factory=dict)  # B's nodes, for B's graph
    ghosts: dict[str, list[Ghost]] = field(default_factory=dict)  # B's added nodes drawn in A's graphs, per A scope
    wording: Wording = AS_B


class DiffController(QObject):
    """Owns the diff of one window (``window.diff``)."""

    diff_shown = Signal()      # a diff is on the canvas and in the dock
    diff_closed = Signal()
    runs_compared = Signal()   # Run Both finished and the values are coloured
    side_changed = Signal(bool)  # True: the canvas shows B's graph
    failed = Signal(str)       # one sentence

    def __init__(self, frame: Frame, document: ShownDocument, canvas: GraphCanvas, status: Status, tasks: Tasks,
                 registry: Registry) -> None:
        super().__init__(frame.window)
        self.window = frame.window  # the parent of the dialogs and the Differences dock
        self.document, self.canvas, self.status, self.tasks = document, canvas, status, tasks
        self.registry = registry
        self.doc_b: Document | None = None
        self.diff: ModelDiff | None = None
        self.marks: dict[tuple[str, int], float] = {}
        self.marks_b: dict[tuple[str, int], float] = {}
        self.ghosts: dict[str, list[Ghost]] = {}
        self.wording = AS_B  # how A's canvas names the differences of the diff shown
        self._ghost_of: dict[int, Ghost] = {}   # a difference's row -> its ghost
        self.showing_b = False     # the canvas shows B's graph
        self.cross: CrossRun | None = None
        self.over: SamplesRun | None = None  # Run Both over several samples (cross: its last sample's runs)
        self.task: Task | None = None
        self.colouring = DIFFERENCES
        self._doc: Document | None = None
        self.actions: dict[str, QAction] = {}  # the feature's, by name
        self.dock = DiffDock(self.window)
        self.dock.difference_chosen.connect(self.show_difference)
        self.dock.step_requested.connect(self.step)
        self.dock.run_both_requested.connect(self.run_both)
        self.dock.close_requested.connect(self.close_diff)
        self.dock.colouring_chosen.connect(self.set_colouring)
        self.dock.show_b_toggled.connect(self.show_b)
        self.dock.weight_chosen.connect(self.show_weight)
        self.dock.layers.pair_chosen.connect(self.show_layer)
        self.dock.run_with_inputs_requested.connect(self.run_both_with_inputs)
        registry.when(PanelsApi, lambda panels: panels.add_node_section(self.node_section))  # type: ignore[type-abstract]
        canvas.ghost_selected.connect(self._on_ghost)
        canvas.ghost_activated.connect(self._open_ghost)
        # A's run colours A's graph
        registry.when(RunApi, lambda run: run.run_finished.connect(lambda: self.show_b(False)))  # type: ignore[type-abstract]
        frame.closing.connect(self.close_diff)
        # the window restores its docks after the features are installed: a dock saved open, with a diff
        # the last session had, would come back empty
        QTimer.singleShot(0, lambda: None if self.active else self.dock.hide())

    @property
    def active(self) -> bool:
        return self.diff is not None

    # -- the document ------------------------------------------------------------------------------
    def set_document(self, doc: Document | None) -> None:
        self.close_diff()
        if self._doc is not None:
            self._doc.selection.changed.disconnect(self._on_selection)
        self._doc = doc
        if doc is not None:
            doc.selection.changed.connect(self._on_selection)

    def on_model_changed(self, change: Change) -> None:
        """An edit of A makes the diff's positions stale: it closes, saying so."""
        if self.active and change.kind not in (ChangeKind.SAVED, ChangeKind.VALIDATED):
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
        self._cancel_task()
        wording = AFTER_TRANSFORM if transformed else AS_B

        def work(progress: ProgressFn, token: CancelToken) -> Opened:
            progress(0.0, f"Reading {path.name}")
            doc_b = Document.open(path)
            token.check()
            diff = diff_models(doc_a.index, doc_b.index, base_dir_a=doc_a.base_dir, base_dir_b=doc_b.base_dir,
                               progress=lambda f, t: progress(0.1 + 0.9 * f, t), token=token)
            ghosts = {scope: [g if g.group else dataclasses.replace(g, note=wording.ghost_note) for g in gs]
                      for scope, gs in added_ghosts(diff).items()}
            return Opened(doc_b, diff, diff_marks(diff), diff.summary(), diff_marks(diff, side_b=True), ghosts,
                          wording)

        task = Task(work, f"Comparing with {path.name}", parent=self)
        task.finished.connect(lambda opened: self._opened(task, doc_a, opened))
        task.failed.connect(lambda exc, tb: self._failed(task, exc, tb, f"{path.name} could not be compared"))
        task.cancelled.connect(lambda: self._cancelled(task, f"Comparing with {path.name} was cancelled."))
        return self._start(task, f"Comparing {doc_a.name} with {path.name}...")

    def _start(self, task: Task, message: str) -> Task:
        self.task = task
        self.status.show_message(message)
        self.tasks.track_task(task)
        task.start(waiting_pool())
        return task

    def _opened(self, task: Task, doc_a: Document, opened: Opened) -> None:
        if task is not self.task or doc_a is not self.document.doc:
            return
        self.task = None
        replaced = (f"The comparison with another model was replaced: File > Compare With... opened "
                    f"{display_name(opened.doc_b.name, 80)} (Run Both compares the two).")
        self._drop_runs(replaced)
        self._run().comparison_replaced(replaced)
        self.show_b(False)
        self.doc_b, self.diff, self.marks, self.marks_b = opened.doc_b, opened.diff, opened.marks, opened.marks_b
        self.ghosts, self.wording = opened.ghosts, opened.wording
        self._ghost_of = {g.key: g for gs in opened.ghosts.values() for g in gs}
        self._show_ghosts()
        self.colouring = DIFFERENCES
        self.dock.show_diff(f"{doc_a.name} (A) vs {opened.doc_b.name} (B)", opened.diff, opened.summary)
        self._place_dock()
        self._apply_colours()
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

    def _failed(self, task: Task, exc: object, tb: str, what: str) -> None:
        if task is not self.task:
            return
        self.task = None
        message = sentence(exc.message) if isinstance(exc, OnnxvizError) else f"{what}: {exc}."
        details = (exc.details if isinstance(exc, OnnxvizError) else "") or tb
        self.status.show_message(message, 10000)
        self.status.show_error("Compare", message, details)
        self.failed.emit(message)

    def _cancelled(self, task: Task, message: str) -> None:
        if task is self.task:
            self.task = None
            self.status.show_message(message, 5000)

    def _cancel_task(self) -> None:
        if self.task is not None:
            self.task.cancel()
            self.task = None

    # -- closing -----------------------------------------------------------------------------------
    def close_diff(self) -> None:
        """Back to the plain view of A: no marks, no dock, B and the runs' values dropped."""
        self._cancel_task()
        was_active = self.active
        self.show_b(False)
        self._drop_runs("The diff was closed, and with it the runs of its Run Both (Run, F9, runs this model).")
        self.diff, self.doc_b, self.marks, self.marks_b = None, None, {}, {}
        self.ghosts, self._ghost_of = {}, {}
        self._show_ghosts()
        self.dock.hide()
        if was_active:
            self._run().show_own_colours()  # the last plain run's colours come back, or none
            self._refresh_node_panel()
            self.diff_closed.emit()

    def _drop_runs(self, reason: str = "") -> None:
        """Remove the last Run Both's runs; the Activations panel, which shows them, says ``reason``."""
        if self.cross is not None:
            self._run().forget(self.cross, reason or "Run Both was run again.")
            self.cross.cleanup()
            self.cross = None
            self.dock.show_layers(None)
        self.over = None

    # -- stepping and selecting --------------------------------------------------------------------
    def current_difference(self) -> int:
        """The row of the difference chosen in the list (-1: none)."""
        return self.dock.list.currentRow()

    def choose_difference(self, row: int) -> None:
        self.dock.list.setCurrentRow(row)  # selects it, as the diff's own stepping does

    def step(self, direction: int) -> None:
        if self.active:
            self.dock.step(direction)  # the list's row change selects

    def show_difference(self, row: int) -> None:
        """Select the difference's node (entering its graph and opening groups) on the side the canvas
        shows, switching sides when only the other has it (a node only B has: B's graph), or its value (a
        weight, an input...) for the Value and Weights panels; a difference with no part to select selects nothing."""
        if self.diff is None or self.document.doc is None or not 0 <= row < len(self.diff.differences):
            return
        d = self.diff.differences[row]
        ghost = self._ghost_of.get(row)
        if ghost is not None and not self.showing_b:   # drawn in A's graph: its ghost box
            near = next((e for e in ghost.sources + ghost.targets if isinstance(e, int)), -1)
            self.canvas.reveal_ghost(ghost.scope, row, near, missing=lambda: self._select_in_b(d))
        elif d.node_b >= 0 and (self.showing_b or d.node_a < 0) and self.doc_b is not None:
            self.show_b(True)
            self.canvas.reveal_node(d.scope_b, d.node_b)
        elif d.kind in FUNCTION_KINDS:
            self._show_function(d)
        elif d.node_a < 0 and (self.showing_b or d.a is None) and d.b is not None and self._b_value(d):
            pass   # a weight or input only B has (or B's graph shown): on B's graph
        else:
            if d.node_a >= 0:
                self.show_b(False)
            self._select_in_a(d)
        self.dock.show_sides(self._sides(d))
        self.status.show_message(f"Difference {row + 1} of {len(self.diff.differences)}: {_short(d)}", 8000)

    def _select_in_b(self, d: Difference) -> None:
        """B's graph on the canvas, ``d``'s B node selected (a ghost too many to draw in A's)."""
        if self.diff is not None and d in self.diff.differences and self.doc_b is not None:
            self.show_b(True)
            self.canvas.reveal_node(d.scope_b, d.node_b)

    def _b_value(self, d: Difference) -> bool:
        """B's graph on the canvas with ``d``'s B value (a weight, an input...) shown: the node reading it
        selected (a weight is drawn in its reader's box), else the value; False when B's graph
        ``d.scope_b`` does not define it."""
        g = self.doc_b.index.graphs.get(d.scope_b) if self.doc_b is not None else None
        if g is None or d.b is None or not g.defines(d.b):
            return False
        self.show_b(True)
        readers = g.consumers_of(d.b)
        if readers:
            self.canvas.reveal_node(d.scope_b, readers[0])
            return True
        return self._select_value(self.doc_b, d.scope_b, d.b)

    def _show_function(self, d: Difference) -> None:
        """A model-local function's difference: its graph, A's (B's when only B has it)."""
        on_b = d.a is None
        doc = self.doc_b if on_b else self.document.doc
        label = d.b if on_b else d.a
        scope = next((function_scope(*key) for key in doc.index.functions
                      if function_label(key) == label), None) if doc is not None else None
        if scope is None:
            return
        self.show_b(on_b)
        self.canvas.enter_scope(scope)

    def _open_ghost(self, key: int) -> None:
        """A ghost double-clicked: B's graph with its node, or the one body it holds, shown."""
        found = self._b_node(key)
        if found is None or self.doc_b is None:
            return
        d = found[0]
        bodies = [scope for node, _, scope in self.doc_b.index.graphs[d.scope_b].children if node == d.node_b]
        self.show_b(True)
        if len(bodies) == 1:
            self.canvas.enter_scope(bodies[0])
        else:
            self.canvas.reveal_node(d.scope_b, d.node_b)

    def _select_in_a(self, d: Difference) -> None:
        doc = self.document.doc
        assert doc is not None
        if d.node_a >= 0:
            self.canvas.reveal_node(d.scope_a, d.node_a)
        elif d.a is not None and not self.showing_b and self._select_value(doc, d.scope_a, d.a):
            pass  # a weight, input, output or value_info of A
        else:  # B's only, or the model's fields: nothing of A to select
            doc.selection.clear()
            if d.kind == "model_changed":
                self._panels().raise_panel("Model")   # A's fields (B's in the list's detail)

    @staticmethod
    def _select_value(doc: Document | None, scope: str, name: str) -> bool:
        g = doc.index.graphs.get(scope) if doc is not None else None
        if doc is None or g is None or not g.defines(name):
            return False
        doc.selection.select_value(scope, name)
        return True

    def show_weight(self, row: int) -> None:
        """A quantized weight pair chosen: its A weight selected (the Weights panel shows it), on A's graph."""
        doc = self.document.doc
        if doc is None or not 0 <= row < len(self.dock.weights):
            return
        w = self.dock.weights[row]
        self.show_b(False)
        if not self._select_value(doc, w.scope_a, w.a):
            doc.selection.clear()
        said = w.note or f"max |B-A| {w.max_abs:.4g}, max rel {w.max_rel:.4g}, cosine {w.cosine:.6f}, SQNR {w.sqnr_db:.2f} dB"
        self.status.show_message(f"Weight {w.a} vs {w.b}: {said}", 10000)

    # -- B's graph -----------------------------------------------------------------------------------
    def show_b(self, on: bool) -> None:
        """Show B's graph on the canvas (its nodes coloured by their differences, the ones only B has as
        "added in B"; selecting one shows both sides in the dock), or A's again."""
        doc_a, doc_b = self.document.doc, self.doc_b
        on = on and doc_a is not None and doc_b is not None and self.diff is not None
        if on == self.showing_b:
            self.dock.set_showing_b(on)
            return
        self.showing_b = on
        assert doc_b is not None
        if on:
            doc_b.selection.changed.connect(self._on_selection_b)
        else:
            doc_b.selection.changed.disconnect(self._on_selection_b)
        if self.document.shown in (doc_a, doc_b):  # not when the window is changing its document
            self.document.show(doc_b if on else None)  # the canvas and the editing's badges follow
        self.dock.set_showing_b(on)
        self._show_ghosts()
        self._apply_colours()
        self.side_changed.emit(on)

    def _on_selection_b(self, state: SelectionState) -> None:
        """A node of B's graph selected: its fields and its A partner's in the dock."""
        if self.diff is None or self.doc_b is None or state.node < 0:
            return
        ga = self.diff.alignment.graphs_b.get(state.scope)
        if ga is None or not 0 <= state.node < len(ga.index_b.nodes):
            return
        b, i = ga.index_b.nodes[state.node], ga.node_a(state.node)
        a = ga.index_a.nodes[i] if i is not None else None
        found = next((d for d in self.diff.differences if d.kind == "node_changed" and d.scope_b == state.scope
                      and d.node_b == state.node), None)
        changed = changed_fields(found.details, a, b) if found is not None and a is not None else None
        self.dock.show_sides(SidesTable(node_rows(a, b, changed)))
        if self.cross is not None:
            by_b = {d.other: d for d in self.cross.diffs}
            keys = [value_key(state.scope, y) for y in b.output]
            self._show_pair(next((by_b[k] for k in keys if k in by_b), None))

    # -- ghosts: B's added nodes in A's graph --------------------------------------------------------
    def _show_ghosts(self) -> None:
        """The added nodes on A's graph while the diff is open and A's graph is shown; none otherwise."""
        canvas = self.canvas
        if canvas.doc is not None and canvas.doc is self.document.doc:
            canvas.set_ghosts(self.ghosts if self.active and not self.showing_b else {}, self._ghost_tooltip)

    def _b_node(self, key: int) -> tuple[Difference, onnx.NodeProto] | None:
        """The added difference of row ``key`` and B's node."""
        if self.diff is None or not 0 <= key < len(self.diff.differences):
            return None
        d = self.diff.differences[key]
        ga = self.diff.alignment.graphs_b.get(d.scope_b)
        if ga is None or not 0 <= d.node_b < len(ga.index_b.nodes):
            return None
        return d, ga.index_b.nodes[d.node_b]

    def _ghost_tooltip(self, key: int) -> str:
        found = self._b_node(key)
        if found is None:
            return ""
        d, n = found
        name = html.escape(display_name(n.name, 120)) if n.name else "(no name)"
        where = f" of {html.escape(display_name(d.scope_b, 80))}" if d.scope_b else ""
        return (f"<b>{html.escape(n.op_type)}</b> {name}<br><i>{self.wording.ghost_tip}: node {d.node_b}{where} of B; "
                "not part of this model, not editable; double-click: B's graph</i>")

    def _on_ghost(self, key: int) -> None:
        """A ghost selected on the canvas: B's node in the Node panel and the dock, its row current."""
        found = self._b_node(key)
        if found is None:
            return
        d, n = found
        table = SidesTable(node_rows(None, n))
        where = f" in {html.escape(display_name(d.scope_b, 80))}" if d.scope_b else ""
        self._panels().show_other_node(("ghost", key), n.op_type,
                                       f"{self.wording.ghost_tip} · node {d.node_b}{where} of B",
                                       [("B's fields (read only)", table)])
        if self.dock.list.currentRow() != key:
            self.dock.list.blockSignals(True)
            self.dock.list.setCurrentRow(key)
            self.dock.list.blockSignals(False)
            self.dock.detail.setText(display_name(d.text(), 4000))
        self.dock.show_sides(SidesTable(node_rows(None, n)))

    # -- the Node panel ----------------------------------------------------------------------------
    def node_section(self, doc: Document, scope: str, node: int) -> tuple[str, QWidget] | None:
        """The Node panel's "Compared with B" section: both sides field by field, changes highlighted."""
        if self.diff is None or doc is not self.document.doc:
            return None
        ga = self.diff.alignment.graphs.get(scope)
        if ga is None or not 0 <= node < len(ga.index_a.nodes):
            return None
        a, j = ga.index_a.nodes[node], ga.node_b(node)
        if j is None:
            return "Compared with B: not in B (removed)", SidesTable(node_rows(a, None))
        b = ga.index_b.nodes[j]
        found = next((d for d in self.diff.differences if d.kind == "node_changed" and d.scope_a == scope
                      and d.node_a == node), None)
        changed = changed_fields(found.details, a, b) if found is not None else set()
        title = "Compared with B" + ("" if changed else ": the same")
        return title, SidesTable(node_rows(a, b, changed))

    def _sides(self, d: Difference) -> QWidget | None:
        """The node's fields under the difference in the dock: both sides of a changed node, the one side
        of a removed or added one."""
        doc = self.document.doc
        if d.node_a >= 0 and doc is not None:
            section = self.node_section(doc, d.scope_a, d.node_a)
            return section[1] if section is not None else None
        ga = self.diff.alignment.graphs_b.get(d.scope_b) if self.diff is not None and d.kind == "node_added" else None
        if ga is None or not 0 <= d.node_b < len(ga.index_b.nodes):
            return None
        return SidesTable(node_rows(None, ga.index_b.nodes[d.node_b]))

    def _refresh_node_panel(self) -> None:
        self._panels().refresh_node()

    def _panels(self) -> PanelsApi:
        return self.registry.get(PanelsApi)  # type: ignore[type-abstract]

    def _run(self) -> RunApi:
        return self.registry.get(RunApi)  # type: ignore[type-abstract]

    # -- colours -----------------------------------------------------------------------------------
    def set_colouring(self, key: str) -> None:
        self.colouring = key
        self._apply_colours()

    def _apply_colours(self) -> None:
        if self.diff is None:
            return
        canvas = self.canvas
        if self.colouring in COMPARE_MEASURES and self.cross is not None:
            errors = self.cross.node_errors_b if self.showing_b else self.cross.node_errors_a
            canvas.set_overlay(errors(self.colouring), f"{'B' if self.showing_b else 'A'} vs {'A' if self.showing_b else 'B'}: "
                               f"{COMPARE_MEASURES[self.colouring]}")
        elif self.showing_b:
            canvas.set_overlay(self.marks_b, f"B's graph: differences with A ({_removed_note(self.diff)})",
                               scheme=DIFF_SCHEME_B)
        else:
            said = _added_note(self.diff, len(self._ghost_of), self.wording)
            canvas.set_overlay(self.marks, f"{self.wording.title} ({said})", scheme=self.wording.scheme)

    # -- Run Both ------------------------------------------------------------------------------------
    def run_both(self, feeds: Mapping[str, np.ndarray] | Feeds | None = None) -> Task | None:
        """Run A and B on the same inputs (``feeds`` for A's inputs, or generated) in the runner's worker
        process, B fed through the alignment, pair the values through the diff's alignment and colour the
        nodes by their error."""
        doc_a, doc_b, diff = self.document.doc, self.doc_b, self.diff
        if doc_a is None or doc_b is None or diff is None:
            return None
        self._cancel_task()

        def work(progress: ProgressFn, token: CancelToken) -> CrossRun | SamplesRun:
            if feeds is None or isinstance(feeds, Mapping):
                given, generated = feeds, None
            elif feeds.samples:
                readers = [functools.partial(_sample_inputs, feeds, path) for path in feeds.samples]
                return compare_samples(doc_a.index, doc_b.index, readers, [Path(p).name for p in feeds.samples],
                                       base_dir_a=doc_a.base_dir, base_dir_b=doc_b.base_dir,
                                       alignment=diff.alignment, progress=progress, token=token)
            else:
                given, generated = feeds.to_run()
            return compare_models(doc_a.index, doc_b.index, given, base_dir_a=doc_a.base_dir,
                                  base_dir_b=doc_b.base_dir, alignment=diff.alignment, progress=progress, token=token,
                                  generated=generated)

        task = Task(work, "Running A and B", parent=self)
        task.finished.connect(lambda cross: self._compared(task, diff, cross))
        task.failed.connect(lambda exc, tb: self._failed(task, exc, tb, "The models could not be run"))
        task.cancelled.connect(lambda: self._cancelled(task, "Run Both was cancelled."))
        return self._start(task, "Running A and B on the same inputs...")

    def run_both_with_inputs(self) -> None:
        """Run Both on the inputs picked in the Run with Inputs... dialog (files, images, values: the run
        feature's, remembered for A's next run too); B reads them through the alignment."""
        doc = self.document.doc
        if doc is None or self.diff is None:
            return
        try:
            self._run().ask_inputs(doc, self.run_both)
        except RunError as exc:
            self.status.show_message(sentence(exc.message), 10000)
            self.status.show_error("Run Both", sentence(exc.message), exc.details)

    def _compared(self, task: Task, diff: ModelDiff, ran: CrossRun | SamplesRun) -> None:
        if task is not self.task or diff is not self.diff:
            ran.cleanup()
            return
        self.task = None
        self._drop_runs()
        over = ran if isinstance(ran, SamplesRun) else None
        cross = ran if isinstance(ran, CrossRun) else ran.as_cross()  # each pair's worst, added error too
        self.cross, self.over = cross, over
        self.dock.set_measures(True)
        self.dock.colouring.setCurrentIndex(max(0, self.dock.colouring.findData("sqnr_loss")))  # emits: colours
        self.dock.show_layers(cross)
        worst = cross.worst_first()
        said = f"; the lowest SQNR {worst[0].sqnr_db:.2f} dB at {worst[0].name}" if worst else ""
        samples = f" over {len(over.labels)} samples (each pair's worst)" if over is not None else ""
        self.status.show_message(f"Ran A and B{samples}: {len(cross.diffs)} values paired{said}.", 10000)
        doc_a, doc_b = self.document.doc, self.doc_b
        if doc_a is not None and doc_b is not None:  # A's run compared with B's: the Activations panel shows it too
            main = [d for d in cross.diffs if "::" not in d.name]
            pairs = [PairSpec(d.name, d.other, *cross.views.get((d.name, d.other), (None, None))) for d in main]
            self._run().show_comparison(
                cross, doc_a, cross.result_a, cross.result_b, main, pairs, f"{doc_b.name} (B)",
                over.pairs if over is not None else None, over.labels if over is not None else None)
        self._on_selection(self.document.doc.selection.state if self.document.doc is not None else SelectionState())
        self.runs_compared.emit()

    def _on_selection(self, state: SelectionState) -> None:
        cross = self.cross
        if cross is None:
            return
        self._show_pair(self._pair_of(cross, state))

    def _show_pair(self, pair: ValueDiff | None) -> None:
        cross = self.cross
        if cross is None:
            return
        if pair is None:
            self.dock.values.show_message("This node's outputs have no partner in B's run (or were not captured).")
            return
        try:
            a, b = cross.arrays(pair)   # an integer value read as the floats it stands for
        except (OnnxvizError, KeyError, OSError, ValueError) as exc:
            self.dock.values.show_message(f"The values could not be read: {exc}")
            return
        self.dock.values.show_pair(a, b, pair)

    def show_layer(self, row: int) -> None:
        """A pair chosen in the Layers table: A's value selected on A's graph (its node shown), the pair in
        the Values tab, its figures in the status bar."""
        cross, doc = self.cross, self.document.doc
        if cross is None or doc is None or not 0 <= row < len(self.dock.layers.rows):
            return
        layer = self.dock.layers.rows[row]
        d = layer.diff
        record = cross.result_a.values.get(d.name)
        self.show_b(False)
        if record is not None and record.node >= 0:
            self.canvas.reveal_node(record.scope, record.node)
        elif record is None or not self._select_value(doc, record.scope, record.name):
            doc.selection.clear()
        self._show_pair(d)
        added = f", added SQNR {layer.added_sqnr:.2f} dB" if layer.added_sqnr == layer.added_sqnr else ""
        self.status.show_message(
            f"{d.name} vs {d.other}: SQNR {d.sqnr_db:.2f} dB, cosine {d.cosine:.6f}, max |B-A| "
            f"{d.max_abs_error:.4g}{added}.", 10000)

    @staticmethod
    def _pair_of(cross: CrossRun, state: SelectionState) -> ValueDiff | None:
        by_name = {d.name: d for d in cross.diffs}
        if state.value:
            return by_name.get(value_key(state.scope, state.value))
        g = cross.alignment.index_a.graphs.get(state.scope)
        if state.node < 0 or g is None or state.node >= len(g.nodes):
            return None
        keys = [value_key(state.scope, y) for y in g.nodes[state.node].output]
        return next((by_name[k] for k in keys if k in by_name), None)


def diff_marks(diff: ModelDiff, side_b: bool = False) -> dict[tuple[str, int], float]:
    """A's changed and removed nodes of every graph (``side_b``: B's changed and added ones), as the
    canvas colours them (off the GUI thread)."""
    if side_b:
        return {(d.scope_b, d.node_b): float(CATEGORY[_category(d)]) for d in diff.differences
                if d.node_b >= 0 and d.kind in CATEGORY}
    return {(d.scope_a, d.node_a): float(CATEGORY[_category(d)]) for d in diff.differences
            if d.node_a >= 0 and d.kind in CATEGORY}


def _category(d: Difference) -> str:
    return "renamed" if d.kind == "node_changed" and d.details.get("changes") == ["name"] else d.kind


def _short(d: Difference) -> str:
    text = d.text()
    return text if len(text) <= 160 else text[:157] + "..."


def _added_note(diff: ModelDiff, drawn: int, wording: Wording = AS_B) -> str:
    """How many nodes only B has are drawn as ghosts, and how many (reading only weights) B's graph shows, in
    ``wording``'s words."""
    added = sum(1 for d in diff.differences if d.kind == "node_added")
    if not added:
        return wording.none_dashed
    said = f"{drawn} node{'s' if drawn != 1 else ''} {wording.dashed}: dashed"
    more = added - drawn
    return said if not more else f"{said}; {more} more reading only weights: see B's graph"


def _removed_note(diff: ModelDiff) -> str:
    removed = sum(1 for d in diff.differences if d.kind == "node_removed")
    return f"{removed} node{'s' if removed != 1 else ''} only in A: see the list" if removed else "nothing removed"


def _sample_inputs(feeds: Feeds, path: str) -> tuple[dict[str, np.ndarray], GeneratedInputs | None]:
    """(the run's thread) A's inputs for one sample: its arrays, the other inputs as the dialog chose them."""
    return feeds.with_sample(path).to_run()
