"""Transforms in the window: the Transform menu's dialog, the transform run in its worker process (progress and
Cancel in the status bar), its result replacing the model as ONE undoable command or opened in a new window,
the diff of the model before and after, what it cost (both run on the same inputs, each layer's error and
each model's timing), nodes kept in float and quantized again, and the session's variants.

The diff is the window's own (:mod:`onnxviz.ui.diff`): its A is the window's model. After a replacement A is the
result and B the model before (a file of the session's variants); after a new window, A is the model before
(this window's) and B the result. The Transform dock's figures always read before -> after.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import onnx
from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

from onnxviz.model.document import Change, ChangeKind, Document
from onnxviz.model.errors import OnnxvizError, sentence
from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.io.disk import reason
from onnxviz.model.io.slices import parse_in_slices
from onnxviz.model.progress import CancelToken, ProgressFn
from onnxviz.model.transform import (
    Outcome,
    OutputsChanged,
    Settings,
    Transformer,
    TransformError,
    Variant,
    Variants,
    replacement,
)
from onnxviz.model.transform.inline import inlined
from onnxviz.model.transform.variants import Staged
from onnxviz.ui.ports import DiffApi, Files, Frame, Registry, ShownDocument, Status, Tasks
from onnxviz.ui.tasks import Task, waiting_pool
from onnxviz.ui.transform.actions import add_context_actions, enable_actions
from onnxviz.ui.transform.cost import CostReport
from onnxviz.ui.transform.dialog import Request, TransformDialog
from onnxviz.ui.transform.dock import TransformDock
from onnxviz.ui.transform.floats import KeptInFloat
from onnxviz.ui.transform.models import parsed, prepared_part, variant_stem
from onnxviz.ui.transform.variant_actions import VariantActions
from onnxviz.ui.validation import handed_model

if TYPE_CHECKING:
    from PySide6.QtWidgets import QMainWindow

    from onnxviz.ui.canvas.canvas import GraphCanvas

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


class TransformController(QObject):
    """Owns the transforms of one window (``window.transforms``): starts them and applies their results, and
    composes the parts of the Transform dock: :class:`CostReport` (See What It Cost), :class:`KeptInFloat` (nodes
    kept in float, Quantize Again) and :class:`VariantActions` (the session's variants). It is their
    :class:`~onnxviz.ui.transform.host.TransformHost`."""

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
        self.cost = CostReport(self, self)
        self.floats = KeptInFloat(self)
        self.variant_actions = VariantActions(self, self)
        self.dock.op_chosen.connect(self.show_op)
        self.dock.cost_requested.connect(self.cost.see_cost)
        self.dock.layer_chosen.connect(self.cost.show_layer)
        self.dock.keep_in_float_requested.connect(self.floats.keep_layers_in_float)
        self.dock.requantize_requested.connect(self.floats.quantize_again)
        self.dock.variant_action.connect(self.variant_actions.variant_action)
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
            self.show_variants()

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
        stem, external = variant_stem(doc), doc.has_external_data
        made = sum(1 for v in variants.items if v.settings is not None and v.settings.tool == settings.tool)
        result_file = f"{stem} ({settings.tool}{f' {made + 1}' if made else ''})"

        def work(progress: ProgressFn, token: CancelToken) -> Done:
            with tempfile.TemporaryDirectory(prefix="onnxviz-model-") as scratch:
                if variant is not None:
                    model: bytes | Path = variant.path
                    before = None
                else:
                    model = handed_model(doc, generation, token, Path(scratch), _edited_meanwhile)
                    data = model if isinstance(model, bytes) else model.read_bytes()
                    if external:  # the variant's file must hold its weights (it lies in another folder)
                        data = inlined(parse_in_slices(data, token.pause), doc.base_dir)
                    before = variants.stage(data, f"{stem} (before {settings.tool})")
                outcome = transformer.run(model, settings, base_dir=doc.base_dir, limits=request.limits,
                                          progress=progress, token=token)
            progress(1.0, "Keeping the result")
            model, index = parsed(outcome.data, token.pause)
            part = prepared_part(model, doc, f"{result_file}.onnx") if request.new_window else None
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
            self.windows.append(self.open_window(done.part, doc, after))
            self.diff().compare_with(after.path)  # A: this model (before), B: the result
            where = "opened in a new window; this model is unchanged"
            sides = "Diff: A is this model (before the transform), B its result."
        else:
            self.replace(doc, done.model, done.index, settings.label(), before.key, after.key)
            self.diff().compare_with(before.path, transformed=True)  # A: the result shown, B: the model before
            where = "this model was replaced (Edit > Undo gives it back)"
            sides = ("Diff: A is this model (the result), B the model before; the canvas marks what the transform "
                     "added, and draws what it removed dashed.")
        self.dock.show_outcome(outcome, where, sides)
        self.dock.set_quantized(settings.spec.quantizes)
        self.show_dock()
        self.show_variants()
        self.status.show_message(f"{settings.label()}: {outcome.summary.headline()}.", 15000)
        self.update_actions()
        self.transformed.emit(outcome)

    def _original(self, doc: Document, staged: Staged | None) -> Variant:
        assert staged is not None
        name = f"{variant_stem(doc)} ({'original' if not self.variants.items else 'edited'})"
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

    def replace(self, doc: Document, model: onnx.ModelProto, index: ModelIndex, label: str, before: int | None,
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

    def diff(self) -> DiffApi:
        return self.registry.get(DiffApi)  # type: ignore[type-abstract]

    def open_window(self, part: Document, source: Document, variant: Variant) -> QMainWindow:
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

    def show_dock(self) -> None:
        """The dock at the bottom, a tab beside the Differences (both want the window's width: side by side, the
        Differences' buttons left the tables 500 pixels), raised."""
        w, diff = self.window, self.diff().dock
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
            self.show_dock()  # a tab beside the Differences, now shown

    # -- the summary's operators ------------------------------------------------------------------------------
    def show_op(self, op: str) -> None:
        """Select the next difference of the diff whose node has operator ``op`` (each click the next one)."""
        diff = self.diff()
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

    # -- the parts' public API ---------------------------------------------------------------------------------
    def see_cost(self, runs: int = 20, variant: int | None = None) -> Task | None:
        """See What It Cost (:meth:`CostReport.see_cost`)."""
        return self.cost.see_cost(runs, variant)

    def show_layer(self, row: int) -> None:
        self.cost.show_layer(row)

    def keep_in_float(self, nodes: list[int] | None = None) -> list[str]:
        """Keep in Float (:meth:`KeptInFloat.keep_in_float`)."""
        return self.floats.keep_in_float(nodes)

    def keep_layers_in_float(self, rows: list[int]) -> list[str]:
        return self.floats.keep_layers_in_float(rows)

    def clear_float(self) -> None:
        self.floats.clear_float()

    def quantize_again(self) -> Task | None:
        return self.floats.quantize_again()

    def variant_action(self, action: str, key: int) -> None:
        """What the dock's variants list asks (:meth:`VariantActions.variant_action`)."""
        self.variant_actions.variant_action(action, key)

    def show_variants(self) -> None:
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

    def say(self, text: str) -> None:
        self.status.show_message(text, 10000)



def _edited_meanwhile() -> TransformError:
    return TransformError("the model was edited while it was being handed to the transform; run it again.")


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

