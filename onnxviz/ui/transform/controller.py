"""Transforms in the window: the Transform menu's dialog, the transform run in its worker process (progress and
Cancel in the status bar), its result replacing the model as ONE undoable command or opened in a new window,
the diff of the model before and after, what it cost (both run on the same inputs, each layer's error and
each model's timing), nodes kept in float and quantized again, and the session's variants.

The diff is the window's own (:mod:`onnxviz.ui.diff`): its A is the window's model. After a replacement A is the
result and B the model before (a file of the session's variants); after a new window, A is the model before
(this window's) and B the result. The Transform dock's figures always read before -> after.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import onnx
from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QMenu

from onnxviz.model.document import ANALYSE_WHOLE_BELOW, Change, ChangeKind, Document
from onnxviz.model.errors import Cancelled, OnnxvizError, sentence
from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.graph.tensors import RawLengths
from onnxviz.model.io.disk import reason
from onnxviz.model.io.slices import parse_in_slices
from onnxviz.model.progress import CancelToken, ProgressFn
from onnxviz.model.transform import (
    Outcome,
    OutputsChanged,
    Settings,
    Timing,
    Transformer,
    TransformError,
    Variant,
    Variants,
    replacement,
)
from onnxviz.model.transform.cost import LayerError, compare_files, layer_errors
from onnxviz.model.transform.inline import inlined
from onnxviz.model.transform.variants import Staged
from onnxviz.ui.ports import DiffApi, Files, Frame, Registry, ShownDocument, Status, Tasks
from onnxviz.ui.tasks import Task, waiting_pool
from onnxviz.ui.transform.actions import add_context_actions, enable_actions
from onnxviz.ui.transform.dialog import Request, TransformDialog
from onnxviz.ui.transform.dock import TransformDock
from onnxviz.ui.validation import document_model_in_thread

if TYPE_CHECKING:
    from PySide6.QtWidgets import QMainWindow

    from onnxviz.ui.canvas.canvas import GraphCanvas

MODEL_FILTER = "ONNX models (*.onnx);;All files (*)"


@dataclass
class Done:
    """A finished transform, for the GUI thread: the outcome, its model parsed, and the files of the model it
    started from (None when it started from a variant) and of its result, written in the task's thread."""

    outcome: Outcome
    model: onnx.ModelProto
    index: ModelIndex  # of ``model``, built in the task's thread (the document takes it: no pause to build it)
    before: Staged | None
    after: Staged
    part: Document | None = None  # for a new window: the result as a document, prepared in the task's thread


@dataclass
class Cost:
    """What See What It Cost found: each layer's error (before -> after), both models' timing, and how many
    values of each side have no partner."""

    layers: list[LayerError]
    timings: list[Timing]
    unpaired: tuple[int, int]


class TransformController(QObject):
    """Owns the transforms of one window (``window.transforms``)."""

    transformed = Signal(object)  # the Outcome applied (replaced or opened)
    failed = Signal(str)          # one sentence
    cost_shown = Signal()

    def __init__(self, frame: Frame, document: ShownDocument, canvas: GraphCanvas, status: Status, tasks: Tasks,
                 files: Files, registry: Registry) -> None:
        super().__init__(frame.window)
        self.window = frame.window  # the parent of the dialogs and the Transform dock
        self.document, self.canvas, self.status, self.tasks = document, canvas, status, tasks
        self.files, self.registry = files, registry
        self.actions: dict[str, QAction] = {}
        self.dock = TransformDock(self.window)
        self.variants = Variants()
        self.task: Task | None = None
        self.outcome: Outcome | None = None
        self.before_key: int | None = None  # the variants of the last transform
        self.after_key: int | None = None
        self.base_key: int | None = None    # what the last quantization started from (quantized again)
        self.quantization: Request | None = None
        self.excluded: tuple[str, ...] = ()  # node names of the model a quantization starts from, kept in float
        self.new_window = False
        self.windows: list[QMainWindow] = []  # opened by a transform or a variant
        self._transformer: Transformer | None = None
        self._doc: Document | None = None
        self._shown_at: dict[int, int] = {}  # undo-stack position -> the variant the model then is
        self._replacing = False  # while a transform's own command runs
        self._placed = False  # the dock was put in a tab beside the Differences
        self._measured: tuple[int | None, int | None] = (None, None)  # the variants the cost table compares
        self.dock.op_chosen.connect(self.show_op)
        self.dock.cost_requested.connect(self.see_cost)
        self.dock.layer_chosen.connect(self.show_layer)
        self.dock.keep_in_float_requested.connect(self.keep_layers_in_float)
        self.dock.requantize_requested.connect(self.quantize_again)
        self.dock.variant_action.connect(self.variant_action)
        frame.closing.connect(self.close)
        registry.when(DiffApi, lambda diff: diff.diff_shown.connect(self._diff_shown))  # type: ignore[type-abstract]

    # -- the document ----------------------------------------------------------------------------------------
    def set_document(self, doc: Document | None) -> None:
        """Another model in the window: a new session (its variants and nodes kept in float go)."""
        if doc is self._doc:
            return
        self._cancel()
        self._doc = doc
        self._reset_session()
        if doc is None:  # back to the start page: the transform's process goes too (a transform starts another)
            self._close_transformer()

    def _reset_session(self) -> None:
        self.variants.cleanup()
        self.outcome, self.before_key, self.after_key, self.base_key = None, None, None, None
        self.quantization, self.excluded, self._shown_at = None, (), {}
        self.dock.hide()
        self.dock.set_variants([], None)
        self.update_actions()

    def on_model_changed(self, change: Change) -> None:
        """An edit the transforms did not make: the model is no longer the variant it was (nor are the states
        after it, which the edit dropped from the undo stack)."""
        doc = self.document.doc
        if doc is not None and change.kind == ChangeKind.EDIT and not self._replacing:
            position = doc.undo_stack.index
            self._shown_at = {k: v for k, v in self._shown_at.items() if k < position}
        if change.kind.changes_model:
            self._show_variants()

    @property
    def shown_key(self) -> int | None:
        """The variant the window's model is, when a transform or a variant put it there (and no edit since)."""
        doc = self.document.doc
        return self._shown_at.get(doc.undo_stack.index) if doc is not None else None

    def close(self) -> None:
        """The window closes: its work stops, its process ends, the session's files go."""
        self._cancel()
        self._close_transformer()
        self.variants.cleanup()

    def _close_transformer(self) -> None:
        if self._transformer is not None:
            self._transformer.close()
            self._transformer = None

    @property
    def transformer(self) -> Transformer:
        if self._transformer is None:
            self._transformer = Transformer()
        return self._transformer

    # -- starting --------------------------------------------------------------------------------------------
    def open_dialog(self, tool: str) -> TransformDialog | None:
        """The Transform dialog for ``tool``; accepted, it starts the transform."""
        doc = self.document.doc
        if doc is None:
            return None
        last = self.quantization.settings if self.quantization is not None else None
        opset = next((o.version for o in doc.model.opset_import if o.domain in ("", "ai.onnx")), 0)
        folder = str(doc.path.parent) if doc.path is not None else ""
        dialog = TransformDialog(self.window, tool, opset=opset, excluded=self.excluded, last=last,
                                 new_window=self.new_window, folder=folder)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.accepted.connect(lambda: self.start(dialog.request) if dialog.request is not None else None)
        dialog.open()
        return dialog

    def start(self, request: Request, source: int | None = None) -> Task | None:
        """Transform the window's model (or the variant ``source``) in the background; None when nothing starts."""
        doc = self.document.doc
        if doc is None:
            return None
        if self.task is not None and not self.task.done:
            self.status.show_message("A transform is running; wait for it or cancel it first.", 8000)
            return None
        variant = self.variants.get(source) if source is not None else None
        generation, transformer, settings, variants = doc.generation, self.transformer, request.settings, self.variants
        self.new_window = request.new_window
        stem, external = _stem(doc), doc.has_external_data
        made = sum(1 for v in variants.items if v.settings is not None and v.settings.tool == settings.tool)
        result_file = f"{stem} ({settings.tool}{f' {made + 1}' if made else ''})"

        def work(progress: ProgressFn, token: CancelToken) -> Done:
            with tempfile.TemporaryDirectory(prefix="onnxviz-model-") as scratch:
                if variant is not None:
                    model: bytes | Path = variant.path
                    before = None
                else:
                    model = _document_model(doc, generation, token, Path(scratch))
                    data = model if isinstance(model, bytes) else model.read_bytes()
                    if external:  # the variant's file must hold its weights (it lies in another folder)
                        data = inlined(parse_in_slices(data, token.pause), doc.base_dir)
                    before = variants.stage(data, f"{stem} (before {settings.tool})")
                outcome = transformer.run(model, settings, base_dir=doc.base_dir, limits=request.limits,
                                          progress=progress, token=token)
            progress(1.0, "Keeping the result")
            model, index = parsed(outcome.data, token.pause)
            part = _part(model, doc, f"{result_file}.onnx") if request.new_window else None
            return Done(outcome, model, index, before, variants.stage(outcome.data, result_file), part)

        task = Task(work, settings.label(), parent=self)
        task.finished.connect(lambda done: self._finished(task, doc, generation, request, variant, done))
        task.failed.connect(lambda exc, tb: self._failed(task, settings, exc, tb))
        task.cancelled.connect(lambda: self._cancelled(task, settings))
        self.task = task
        self.tasks.track_task(task)
        self.status.show_message(f"{settings.label()}...")
        task.start(waiting_pool())
        self.update_actions()
        return task

    def cancel(self) -> None:
        """Transform > Cancel Transform: the running transform (or timing) stops; its process ends at once."""
        if self.task is not None and not self.task.done:
            self.task.cancel()

    def _cancel(self) -> None:
        if self.task is not None:
            self.task.cancel()
            self.task = None

    # -- the result --------------------------------------------------------------------------------------------
    def _finished(self, task: Task, doc: Document, generation: int, request: Request, variant: Variant | None,
                  done: Done) -> None:
        if task is not self.task:
            return
        self.task = None
        self.update_actions()
        if doc is not self.document.doc or doc.generation != generation:
            self.status.show_message("The model changed while the transform ran; its result was not used "
                                                "(transform it again).", 10000)
            return
        outcome, settings = done.outcome, request.settings
        before = variant or self._original(doc, done.before)
        after = self._result(outcome, before, done.after)
        self.outcome, self.before_key, self.after_key = outcome, before.key, after.key
        if settings.spec.quantizes:
            self.base_key, self.quantization = before.key, request
        if request.new_window:
            if variant is None:
                self._shown_at[doc.undo_stack.index] = before.key
            assert done.part is not None
            self.windows.append(self._open_window(done.part, doc, after))
            self._diff().compare_with(after.path)  # A: this model (before), B: the result
            where = "opened in a new window; this model is unchanged"
            sides = "Diff: A is this model (before the transform), B its result."
        else:
            self._replace(doc, done.model, done.index, settings.label(), before.key, after.key)
            self._diff().compare_with(before.path, transformed=True)  # A: the result shown, B: the model before
            where = "this model was replaced (Edit > Undo gives it back)"
            sides = ("Diff: A is this model (the result), B the model before; the canvas marks what the transform "
                     "added, and draws what it removed dashed.")
        self.dock.show_outcome(outcome, where, sides)
        self.dock.set_quantized(settings.spec.quantizes)
        self._show_dock()
        self._show_variants()
        self.status.show_message(f"{settings.label()}: {outcome.summary.headline()}.", 15000)
        self.update_actions()
        self.transformed.emit(outcome)

    def _original(self, doc: Document, staged: Staged | None) -> Variant:
        assert staged is not None
        name = f"{_stem(doc)} ({'original' if not self.variants.items else 'edited'})"
        return self.variants.adopt(staged, name)

    def _result(self, outcome: Outcome, before: Variant, staged: Staged) -> Variant:
        made = sum(1 for v in self.variants.items if v.settings is not None and v.settings.tool == outcome.settings.tool)
        name = outcome.settings.label() + (f" #{made + 1}" if made else "")
        variant = self.variants.adopt(staged, name, outcome.settings, before.key)
        v = outcome.verification
        if v.checked and not v.beyond:
            variant.output_rel, variant.output_sqnr = v.worst_rel(), v.worst_sqnr()
        variant.notes = list(outcome.notes)
        return variant

    def _replace(self, doc: Document, model: onnx.ModelProto, index: ModelIndex, label: str, before: int | None,
                 after: int) -> None:
        """The model replaced as ONE command (its undo gives the exact bytes back), with its index built off the GUI
        thread; the variants it was and is remembered at their places in the undo stack."""
        position = doc.undo_stack.index
        if before is not None:
            self._shown_at[position] = before
        self._replacing = True
        try:
            doc.execute(replacement(model, label), index)
        finally:
            self._replacing = False
        self._shown_at = {k: v for k, v in self._shown_at.items() if k <= position}
        self._shown_at[doc.undo_stack.index] = after

    def _diff(self) -> DiffApi:
        return self.registry.get(DiffApi)  # type: ignore[type-abstract]

    def _open_window(self, part: Document, source: Document, variant: Variant) -> QMainWindow:
        """A new window showing ``part`` (a document prepared off the GUI thread): unsaved, titled as the variant,
        its external weights read from ``source``'s folder until it is saved."""
        new = self.files.open_in_new_window(part)
        new.statusBar().showMessage(f"{variant.name} of {source.name}: unsaved (File > Save As... writes it).", 15000)
        new.destroyed.connect(lambda *_: self.windows.remove(new) if new in self.windows else None)
        return new

    def _failed(self, task: Task, settings: Settings, exc: object, tb: str) -> None:
        if task is not self.task:
            return
        self.task = None
        self.update_actions()
        if isinstance(exc, OnnxvizError):
            message, details = sentence(exc.message), exc.details or tb
        elif isinstance(exc, OSError):  # a scratch file of the transform: in words, never errno text
            message, details = f"{settings.label()} failed: {reason(exc)}.", tb
        else:
            message, details = f"{settings.label()} failed: {exc}.", tb
        if not isinstance(exc, (TransformError, OutputsChanged)) and isinstance(exc, OnnxvizError):
            message = f"{settings.label()} failed: {exc.message}"
        if "unchanged" not in message:
            message += " The model is unchanged."
        self.status.show_message(message, 15000)
        self.status.show_error("Transform", message, details)
        self.failed.emit(message)

    def _cancelled(self, task: Task, settings: Settings) -> None:
        if task is self.task:
            self.task = None
            self.update_actions()
            self.status.show_message(f"{settings.label()} was cancelled; the model is unchanged.", 8000)

    def _show_dock(self) -> None:
        """The dock at the bottom, a tab beside the Differences (both want the window's width: side by side, the
        Differences' buttons left the tables 500 pixels), raised."""
        w, diff = self.window, self._diff().dock
        if w.dockWidgetArea(self.dock) == Qt.DockWidgetArea.NoDockWidgetArea:
            w.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.dock)
        self.dock.show()
        if not diff.isHidden() and w.dockWidgetArea(diff) == w.dockWidgetArea(self.dock) \
                and self.dock not in w.tabifiedDockWidgets(diff) and not self._placed:
            w.tabifyDockWidget(diff, self.dock)
            self._placed = True  # once: where the user puts it after that stays
        self.dock.raise_()

    def _diff_shown(self) -> None:
        if not self.dock.isHidden():
            self._show_dock()  # a tab beside the Differences, now shown

    # -- the summary's operators ------------------------------------------------------------------------------
    def show_op(self, op: str) -> None:
        """Select the next difference of the diff whose node has operator ``op`` (each click the next one)."""
        diff = self._diff()
        if diff.diff is None:
            self.status.show_message("The diff is closed: Diff > Compare With... opens it again.", 8000)
            return
        rows = [k for k, d in enumerate(diff.diff.differences) if _difference_op(diff, d) == op]
        if not rows:
            self.status.show_message(f"No node of operator {op} differs.", 8000)
            return
        current = diff.current_difference()
        row = next((k for k in rows if k > current), rows[0])
        diff.choose_difference(row)

    # -- what it cost ------------------------------------------------------------------------------------------
    def see_cost(self, runs: int = 20, variant: int | None = None) -> Task | None:
        """Run the models before and after the last transform (or ``variant`` and the model it was made from) on
        the same inputs (the runner's worker processes, every value captured, the model before as the reference),
        measure each layer, then time both in onnxruntime (its own worker process, every graph optimization on)."""
        before, after = self._pair() if variant is None else self._made_from(variant)
        if before is None or after is None or self.outcome is None or self.document.doc is None:
            self._say("Transform the model first: the cost is that of a transform (the original has none).")
            return None
        if self.task is not None and not self.task.done:
            self._say("A transform is running; wait for it or cancel it first.")
            return None
        sample, transformer, runs = self.outcome.sample, self.transformer, max(3, runs)

        def work(progress: ProgressFn, token: CancelToken) -> Cost:
            cross = compare_files(before.path, after.path, sample, progress=lambda f, t: progress(0.8 * f, t),
                                  token=token)
            try:
                layers = layer_errors(cross)
                paired = (len(cross.pairing.unmatched_a), len(cross.pairing.unmatched_b))
            finally:
                cross.cleanup()
            timings = transformer.time([before.path, after.path], sample, runs,
                                       progress=lambda f, t: progress(0.8 + 0.2 * f, t), token=token)
            return Cost(layers, timings, paired)

        task = Task(work, "Running and timing both models", parent=self)
        task.finished.connect(lambda cost: self._cost_found(task, before, after, cost))
        task.failed.connect(lambda exc, tb: self._cost_failed(task, exc, tb))
        task.cancelled.connect(lambda: self._cost_failed(task, None, ""))
        self.task = task
        self.tasks.track_task(task)
        self.status.show_message("Running both models on the same inputs, then timing them...")
        task.start(waiting_pool())
        self.update_actions()
        return task

    def _made_from(self, key: int) -> tuple[Variant | None, Variant | None]:
        after = self.variants.get(key)
        source = after.source if after is not None else None
        return (self.variants.get(source) if source is not None else None), after

    def _pair(self) -> tuple[Variant | None, Variant | None]:
        get = self.variants.get
        return (get(self.before_key) if self.before_key is not None else None,
                get(self.after_key) if self.after_key is not None else None)

    def _cost_found(self, task: Task, before: Variant, after: Variant, cost: Cost) -> None:
        if task is not self.task:
            return
        self.task = None
        before.speed_ms, after.speed_ms = cost.timings[0].median_ms, cost.timings[1].median_ms
        self._measured = (before.key, after.key)
        worst = next((r for r in cost.layers if not math.isnan(r.sqnr_db)), None)
        if worst is not None:
            after.worst_sqnr, after.worst_layer = worst.sqnr_db, worst.before_node or worst.before
        unpaired_a, unpaired_b = cost.unpaired
        self.dock.set_layers(cost.layers, f"{len(cost.layers)} layers paired by the matcher, worst SQNR first, each "
                             f"against the model before; {unpaired_a} values before and {unpaired_b} after have no "
                             "partner. Click a row to select its node.")
        self.dock.set_timing(cost.timings, [f"Before ({before.name})", f"After ({after.name})"])
        self.dock.tabs.setCurrentIndex(1)
        self._show_dock()
        self._show_variants()
        self.update_actions()
        self._say(f"{after.name}: worst layer {worst.before_node or worst.before} at {worst.sqnr_db:.1f} dB; "
                  f"{cost.timings[1].median_ms:.3g} ms against {cost.timings[0].median_ms:.3g} ms."
                  if worst is not None else f"{after.name}: no layer paired.")
        self.cost_shown.emit()

    def _cost_failed(self, task: Task, exc: object, tb: str) -> None:
        if task is not self.task:
            return
        self.task = None
        self.update_actions()
        if exc is None:
            self._say("See What It Cost was cancelled.")
            return
        message = sentence(exc.message) if isinstance(exc, OnnxvizError) else f"The models could not be run: {exc}."
        self._say(message)
        self.status.show_error("See What It Cost", message, getattr(exc, "details", "") or tb)

    def show_layer(self, row: int) -> None:
        """A layer of the cost table: its node selected on the graph shown (the model before or after)."""
        if not 0 <= row < len(self.dock.layers):
            return
        layer = self.dock.layers[row]
        shown, (before, after) = self.shown_key, self._measured
        place = layer.at_after if shown == after else layer.at_before if shown == before else None
        if place is None or place[1] < 0:
            self._say("The model shown is neither the model before the transform nor its result.")
            return
        self._diff().show_b(False)
        self.canvas.reveal_node(*place)

    # -- kept in float, quantized again ------------------------------------------------------------------------
    def keep_in_float(self, nodes: list[int] | None = None) -> list[str]:
        """Keep the canvas's selected nodes (or ``nodes``, positions in the main graph) in float at the next
        quantization; returns the names added (of the model the quantization starts from)."""
        doc = self.document.doc
        if doc is None:
            return []
        if nodes is None:
            if self.canvas.scope != "" or not self.document.shows_own:
                self._say("Select nodes of this model's main graph to keep them in float.")
                return []
            nodes = self.canvas.selected_nodes()
        if not nodes:
            self._say("Select a node or a group on the graph first, then Keep in Float.")
            return []
        names, unknown = self._base_names(doc, nodes)
        return self._exclude(names, unknown)

    def keep_layers_in_float(self, rows: list[int]) -> list[str]:
        """The cost table's rows kept in float: their nodes of the model before (what is quantized again)."""
        layers = [self.dock.layers[r] for r in rows if 0 <= r < len(self.dock.layers)]
        if not layers:
            self._say("Select the layers to keep in float in the table first.")
            return []
        return self._exclude([layer.before_node for layer in layers if layer.before_node],
                             [layer.after for layer in layers if not layer.before_node])

    def _exclude(self, names: list[str], unknown: list[str]) -> list[str]:
        added = [n for n in dict.fromkeys(names) if n not in self.excluded]
        self.excluded = tuple(dict.fromkeys([*self.excluded, *names]))
        said = f"{len(self.excluded)} node{'s' if len(self.excluded) != 1 else ''} kept in float at the next quantization"
        if unknown:
            said += f"; {len(unknown)} could not be matched with a node of the model before it"
        hint = " (Transform > Quantize Again)." if self.quantization is not None else "."
        self._say(said + hint)
        self.update_actions()
        return added

    def _base_names(self, doc: Document, nodes: list[int]) -> tuple[list[str], list[str]]:
        """Names in the model a quantization starts from of the window's main-graph ``nodes``: the same nodes
        when the window shows that model, else through the diff's pairing, or the same name (onnxruntime's
        ``_quant`` suffix dropped)."""
        graph = doc.index.main
        shown = [graph.nodes[i].name for i in nodes if 0 <= i < len(graph.nodes)]
        base = self.variants.get(self.base_key) if self.base_key is not None else None
        if base is None or self.shown_key == base.key:
            return [n for n in shown if n], [n for n in shown if not n]
        base_names = self.variants.node_names(base.key)
        paired = self._paired_in_base(nodes, base)
        names: list[str] = []
        unknown: list[str] = []
        for i, name in zip(nodes, shown, strict=False):
            found = paired.get(i) or _float_name(name, base_names)
            (names if found else unknown).append(found or name)
        return names, unknown

    def _paired_in_base(self, nodes: list[int], base: Variant) -> dict[int, str]:
        diff = self._diff()
        if diff.diff is None or diff.doc_b is None or diff.doc_b.path != base.path:
            return {}
        main = diff.diff.alignment.graphs.get("")
        if main is None:
            return {}
        out = {}
        for i in nodes:
            j = main.node_b(i)
            if j is not None and main.index_b.nodes[j].name:
                out[i] = main.index_b.nodes[j].name
        return out

    def clear_float(self) -> None:
        self.excluded = ()
        self._say("No node is kept in float at the next quantization.")
        self.update_actions()

    def quantize_again(self) -> Task | None:
        """The last quantization again, from the model it started from, with the nodes kept in float excluded."""
        if self.quantization is None or self.base_key is None:
            self._say("Quantize the model first (Transform > Quantize...), then quantize it again.")
            return None
        request = self.quantization
        settings = request.settings.excluding(self.excluded)
        return self.start(replace(request, settings=settings), source=self.base_key)

    # -- variants ----------------------------------------------------------------------------------------------
    def variant_action(self, action: str, key: int) -> None:
        variant = self.variants.get(key)
        doc = self.document.doc
        if variant is None or doc is None:
            return
        try:
            if action == "use":
                self._use(doc, variant)
            elif action == "window":
                self._in_window(doc, variant)
            elif action == "save":
                self._save(variant, doc)
            elif action == "measure":
                self.see_cost(self.dock.runs.value(), key)
            elif action == "compare":
                self._diff().compare_with(variant.path)
            elif action == "remove":
                self.variants.remove(key)
                self._show_variants()
        except (OnnxvizError, OSError) as exc:
            message = sentence(exc.message) if isinstance(exc, OnnxvizError) else f"The variant could not be read: {exc}."
            self.status.show_error("Variant", message)

    def _use(self, doc: Document, variant: Variant) -> None:
        """The variant replaces the model shown (one undo step), read and indexed in the background."""
        if self.shown_key == variant.key:
            self._say(f"The model shown is {variant.name} already.")
            return
        generation, path = doc.generation, variant.path

        def work(progress: ProgressFn, token: CancelToken) -> tuple[onnx.ModelProto, ModelIndex]:
            progress(0.0, f"Reading {variant.name}")
            return parsed(path.read_bytes(), token.pause)

        def finished(read: tuple[onnx.ModelProto, ModelIndex]) -> None:
            if doc is not self.document.doc or doc.generation != generation:
                self._say("The model changed meanwhile; the variant was not used (use it again).")
                return
            self._replace(doc, read[0], read[1], f"Use {variant.name}", None, variant.key)
            self._show_variants()
            self._say(f"The model is now {variant.name} (Edit > Undo gives the previous one back).")

        task = Task(work, f"Reading {variant.name}", parent=self)
        task.finished.connect(finished)
        task.failed.connect(lambda exc, tb: self.status.show_error("Variant", f"{variant.name} could not be read: {exc}.",
                                                                   tb))
        self.tasks.track_task(task)
        task.start(waiting_pool())

    def _in_window(self, doc: Document, variant: Variant) -> None:
        """The variant in a window of its own, read and prepared in the background."""
        path = variant.path

        def work(progress: ProgressFn, token: CancelToken) -> Document:
            progress(0.0, f"Reading {variant.name}")
            return _part(parse_in_slices(path.read_bytes(), token.pause), doc, path.name)

        task = Task(work, f"Reading {variant.name}", parent=self)
        task.finished.connect(lambda part: self.windows.append(self._open_window(part, doc, variant)))
        task.failed.connect(lambda exc, tb: self.status.show_error("Variant", f"{variant.name} could not be read: {exc}.",
                                                                   tb))
        self.tasks.track_task(task)
        task.start(waiting_pool())

    def _save(self, variant: Variant, doc: Document) -> None:
        folder = doc.path.parent if doc.path is not None else Path.cwd()
        chosen, _ = QFileDialog.getSaveFileName(self.window, "Save Variant As", str(folder / variant.path.name),
                                                MODEL_FILTER)
        if not chosen:
            return
        target = Path(chosen).absolute()
        if doc.path is not None and target == doc.path:
            raise TransformError("that is the file of the model shown; use the variant here (Use Here) and save, "
                                 "or save it under another name.")
        self.files.save_copy(Document(onnx.load_from_string(self.variants.data(variant.key))), target)

    def _show_variants(self) -> None:
        self.dock.set_variants(self.variants.items, self.shown_key)

    # -- menus ---------------------------------------------------------------------------------------------------
    def add_context_actions(self, menu: QMenu) -> None:
        """The canvas's right-click menu: the selected nodes kept in float (and quantized again)."""
        add_context_actions(self.document, self.canvas, self.actions, menu, self.quantization is not None)

    def update_actions(self) -> None:
        if not self.actions:
            return
        busy = self.task is not None and not self.task.done
        enable_actions(self.actions, self.document.doc is not None, busy, self.quantization is not None,
                       bool(self.excluded), self.outcome is not None)

    def _say(self, text: str) -> None:
        self.status.show_message(text, 10000)


def _document_model(doc: Document, generation: int, token: CancelToken, folder: Path) -> bytes | Path:
    try:
        return document_model_in_thread(doc, generation, token, folder)
    except Cancelled:
        if token.cancelled:
            raise
        raise TransformError("the model was edited while it was being handed to the transform; run it again.") from None


def parsed(data: bytes, pause: Callable[[], None]) -> tuple[onnx.ModelProto, ModelIndex]:
    """A model's bytes parsed and indexed in a background thread (parsed in slices, ``pause`` between them: a
    whole parse held the GIL, and so the window, 0.5 s for 300 MB): what the document takes in one step."""
    model = parse_in_slices(data, pause)
    return model, ModelIndex(model, RawLengths(data) if len(data) < ANALYSE_WHOLE_BELOW else None)


def _part(model: onnx.ModelProto, source: Document, name: str) -> Document:
    """``model``, made from ``source``'s, as an unsaved document titled ``name``, prepared (in a background thread)."""
    part = Document.part_of(model, source)
    part.untitled_name = name
    part.prepare()
    return part


def _stem(doc: Document) -> str:
    return doc.path.stem if doc.path is not None else Path(doc.name).stem


def _float_name(name: str, float_names: set[str]) -> str:
    """The float node a quantizer's node came from, by name: the longest of ``float_names`` that ``name`` is or
    starts with followed by '_' (onnxruntime names its nodes '<float node>_quant', '<float node>_quant_scales_mul',
    '<float node>_output_0_bias_add'...); '' when none is."""
    if name in float_names:
        return name
    cut = name
    while "_" in cut:
        cut = cut.rsplit("_", 1)[0]
        if cut in float_names:
            return cut
    return ""


def _difference_op(diff: object, d: object) -> str:
    """The operator of a node difference's node (A's, else B's); '' for the others."""
    from onnxviz.model.matching import Difference

    assert isinstance(d, Difference)
    alignment = diff.diff.alignment  # type: ignore[attr-defined]
    if d.node_a >= 0:
        g = alignment.graphs.get(d.scope_a)
        return g.index_a.nodes[d.node_a].op_type if g is not None and d.node_a < len(g.index_a.nodes) else ""
    if d.node_b >= 0:
        g = alignment.graphs_b.get(d.scope_b)
        return g.index_b.nodes[d.node_b].op_type if g is not None and d.node_b < len(g.index_b.nodes) else ""
    return ""

