"""Runs the open document in the worker process and shows the results: the Run menu's actions, composed of
parts with one job each: :class:`~onnxviz.ui.run.planning.InputPlans` (the inputs),
:class:`~onnxviz.ui.run.runs.Runs` (starting and cancelling runs, their failures),
:class:`~onnxviz.ui.run.results.RunResults` (the Activations dock, the canvas's colours, the finders) and
:class:`~onnxviz.ui.run.exports.ValueExport` (Export All Values)."""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QApplication, QFileDialog

from onnxviz.model.runner import ENGINE_ORT, ENGINE_REFERENCE, RunError, RunOptions, refusal, warm_up
from onnxviz.model.runner.compare import Tolerance
from onnxviz.model.runner.inputs import input_specs
from onnxviz.model.runner.sizes import settable
from onnxviz.ui.run.exports import ValueExport
from onnxviz.ui.run.planning import InputPlans
from onnxviz.ui.run.results import RunResults
from onnxviz.ui.run.runs import Runs

if TYPE_CHECKING:
    from PySide6.QtCore import QSettings
    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import QMessageBox, QToolBar

    from onnxviz.model.document import Change, Document
    from onnxviz.model.matching.samples import PairOverSamples
    from onnxviz.model.runner import RunResult, WorkerRun
    from onnxviz.model.runner.compare import PairSpec, ValueDiff
    from onnxviz.ui.canvas.canvas import GraphCanvas
    from onnxviz.ui.ports import Frame, ShownDocument, Status, Tasks
    from onnxviz.ui.run.activations_dock import ActivationsDock
    from onnxviz.ui.run.capture_offer import CaptureOfferDialog
    from onnxviz.ui.run.input_sources import InputPlan, PendingFeeds
    from onnxviz.ui.run.inputs_dialog import InputsDialog
    from onnxviz.ui.run.jobs import Outcome
    from onnxviz.ui.tasks import Task


class RunController(QObject):
    """Owns runs, results and the Activations dock of one window (``window.run_controller``; the other features
    see it as :class:`~onnxviz.ui.ports.RunApi`)."""

    run_finished = Signal()        # a result is shown
    run_failed = Signal(str)       # one-sentence reason

    def __init__(self, frame: Frame, dock: ActivationsDock, document: ShownDocument, canvas: GraphCanvas,
                 status: Status, tasks: Tasks, settings: QSettings) -> None:
        super().__init__(frame.window)
        self.toolbar: QToolBar | None = None  # the Run toolbar, once the feature installs it
        self.window = frame.window  # the parent of the dialogs and the Activations dock
        self.document, self.status = document, status
        self.actions: dict[str, QAction] = {}
        self.inputs = InputPlans(frame.window, document, settings)
        self.results = RunResults(frame.window, dock, document, canvas, status)
        self.runs = Runs(frame.window, document, canvas, status, tasks, self.results.shown, self.options)
        self.exports = ValueExport(frame.window, self.runs, self.results.shown, status)
        self.runs.busy_changed.connect(self.update_actions)
        self.runs.finished.connect(self._on_finished)
        self.runs.failed.connect(self.run_failed)
        self.dock.first_difference_requested.connect(self.jump_to_first_difference)
        app = QApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.results.shown.drop)
        # a close the user confirmed ends a running worker; a cancelled close keeps it running
        frame.closing.connect(self.cancel)

    # -- what the parts hold, as the tests and the window read it -------------------------------------
    @property
    def dock(self) -> ActivationsDock:
        return self.results.dock

    @property
    def result(self) -> RunResult | None:
        return self.results.shown.result

    @property
    def other(self) -> RunResult | None:
        return self.results.shown.other

    @property
    def diffs(self) -> list[ValueDiff] | None:
        return self.results.shown.diffs

    @property
    def pairs(self) -> list[PairSpec] | None:
        return self.results.shown.pairs

    @property
    def over(self) -> list[PairOverSamples] | None:
        return self.results.shown.over

    @property
    def samples(self) -> list[str]:
        return self.results.shown.samples

    @property
    def tolerance(self) -> Tolerance:
        return self.results.shown.tolerance

    @property
    def overlay_key(self) -> str:
        return self.results.shown.overlay_key

    @property
    def plans(self) -> dict[str, InputPlan]:
        return self.inputs.plans

    @property
    def inputs_dialog(self) -> InputsDialog | None:
        return self.inputs.inputs_dialog

    @property
    def task(self) -> Task | None:
        return self.runs.task

    @property
    def active_run(self) -> WorkerRun | None:
        return self.runs.active_run

    @property
    def failure_box(self) -> QMessageBox | None:
        return self.runs.failure_box

    @property
    def newer_box(self) -> QMessageBox | None:
        return self.runs.newer_box

    @property
    def offer_dialog(self) -> CaptureOfferDialog | None:
        return self.runs.offer_dialog


    @property
    def memory_limit(self) -> int | None:
        """Bytes a capture may take (None: the memory available then)."""
        return self.runs.memory_limit

    @memory_limit.setter
    def memory_limit(self, limit: int | None) -> None:
        self.runs.memory_limit = limit

    # -- document --------------------------------------------------------------------------------
    def set_document(self, doc: Document | None) -> None:
        self.runs.forget_document()
        self.results.follow(doc)
        self.update_actions()

    def adopt(self, doc: Document | None) -> None:
        """``doc``, shown before this controller was made: followed from now on (no run of it to drop, and the
        canvas's colours are another feature's if any)."""
        self.results.watch(doc)
        self.update_actions()

    def on_model_changed(self, change: Change) -> None:
        if change.kind.changes_model:
            self.results.set_stale()

    # -- running ---------------------------------------------------------------------------------
    def options(self) -> RunOptions:
        return RunOptions(engine=ENGINE_REFERENCE if self.actions["reference"].isChecked() else ENGINE_ORT,
                          optimized=self.actions["optimized"].isChecked(),
                          profile=self.actions["profile"].isChecked())

    def run(self, ask: bool = False, compare: str = "", other_path: Path | None = None) -> None:
        """Run the document; ``ask`` opens the inputs dialog first (it opens anyway when the model
        has symbolic dimensions never given). ``compare``: "", "engines", "saved" or "file"."""
        doc = self.document.doc
        if doc is None or self.runs.busy() or not self.runs.may_run(doc, lambda: self.run(ask, compare, other_path)):
            return
        try:
            reason = refusal(doc.index)
            if reason:
                raise RunError(reason)
            specs = input_specs(doc.model, doc.index)
        except RunError as exc:
            self.runs.report_failure(exc.message, exc.details)
            return
        warm_up()  # a worker process imports the runtime while the user picks inputs
        plan = self.inputs.plan(doc)
        if ask or (not plan.asked and any(d not in plan.dims for d in settable(specs))):
            self.inputs.ask(doc, lambda feeds: self.runs.start(doc, feeds, compare, other_path), plan)
            return
        try:
            feeds = plan.prepare(specs)
        except RunError as exc:
            self.runs.report_failure(exc.message, exc.details)
            return
        self.runs.start(doc, feeds, compare, other_path)

    def run_with_files(self, files: Mapping[str, str]) -> None:
        """Run the document with these inputs read from array files (the others as its plan says), kept in its
        plan for the next runs (what ``onnxviz.show(model, inputs=...)`` hands over); the symbolic dimensions
        of these inputs take their sizes from the files."""
        doc = self.document.doc
        if doc is None or self.runs.busy():
            return
        refused = self.inputs.use_files(doc, files)
        if refused:
            self.runs.report_failure(refused)
            return
        self.run()

    def ask_inputs(self, doc: Document, then: Callable[[PendingFeeds], object]) -> None:
        """The Run with Inputs... dialog for ``doc`` (with the choices its last run remembered); ``then``
        gets the inputs it is accepted with, and the choices are remembered. Raises RunError when the
        model's inputs cannot be read."""
        self.inputs.ask(doc, then)

    def cancel(self) -> None:
        self.runs.cancel()

    def _on_finished(self, doc: Document, labels: list[str], outcome: Outcome) -> None:
        self.inputs.remember_sizes(doc, outcome.results[0])
        headline = self.results.show_outcome(doc, labels, outcome)
        self.update_actions()
        self.status.show_message(_plain(headline), 10000)
        self.run_finished.emit()

    def jump_to_first_difference(self, rtol: float, atol: float) -> None:
        """Select the first value outside the tolerance; a new tolerance compares the two runs again."""
        tolerance, shown = Tolerance(rtol, atol), self.results.shown
        if shown.diffs is None or shown.result is None or shown.other is None:
            return
        if tolerance != shown.tolerance and shown.over is not None:
            shown.tolerance = tolerance
            self.status.show_message(
                f"A comparison over {len(shown.samples)} samples keeps the runs of its last sample only: compare "
                f"again to use {tolerance.text()}.", 10000)
            return
        if tolerance == shown.tolerance:
            self.results.show_first_difference()
        elif not self.runs.busy():
            self.runs.compare_again(tolerance, lambda doc, diffs: self.results.show_compared(doc, diffs, tolerance))

    # -- other features' comparisons (RunApi) ------------------------------------------------------
    def show_comparison(self, owner: object, doc: Document, result_a: RunResult, result_b: RunResult,
                        diffs: list[ValueDiff], pairs: list[PairSpec], label: str,
                        over: list[PairOverSamples] | None = None, samples: list[str] | None = None) -> None:
        """Another feature's comparison of this document with another model (the diff's Run Both) shown in the
        Activations panel, replacing what it showed; the runs stay ``owner``'s, which calls :meth:`forget`
        before it removes them. The canvas's colours stay the owner's."""
        if self.document.doc is not doc:
            return
        self.cancel()
        self.results.show_comparison(owner, doc, result_a, result_b, diffs, pairs, label, over, samples)
        self.update_actions()

    def forget(self, owner: object, reason: str) -> None:
        """``owner``'s runs are about to be removed: the panel no longer shows them (``reason`` says why)."""
        if self.results.forget(owner, reason):
            self.update_actions()

    def show_own_colours(self) -> None:
        """The colours of this model's last plain run on the canvas again (or none), e.g. once a diff closes."""
        self.results.apply_overlay()

    def comparison_replaced(self, reason: str) -> None:
        """A new comparison with another model (File > Compare With...) replaces the one the panel shows with
        a model other than this one: the runs it showed of that model go, this model's run stays."""
        if self.results.comparison_replaced(reason):
            self.update_actions()

    # -- actions (built by feature.install) ------------------------------------------------------
    def compare_with_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.window, "Compare with Model", "",
                                              "ONNX models (*.onnx);;All files (*)")
        if path:
            self.run(compare="file", other_path=Path(path))

    def update_actions(self) -> None:
        if not self.actions:
            return
        doc = self.document.doc
        running = self.runs.task is not None
        has_result = self.results.shown.result is not None
        for name in ("run", "run_inputs", "compare_engines", "compare_file"):
            self.actions[name].setEnabled(doc is not None and not running)
        self.actions["compare_saved"].setEnabled(doc is not None and doc.path is not None and not running)
        self.actions["cancel"].setEnabled(running)
        self.actions["first_nan"].setEnabled(has_result)
        self.actions["next_nan"].setEnabled(has_result)
        self.actions["export_all"].setEnabled(has_result and not running)


def _plain(headline: str) -> str:
    """The summary's first line for the status bar: no markup."""
    return html.unescape(headline.replace("<b>", "").replace("</b>", ""))
