"""Runs the open document in the worker process and keeps the last result for the views.

The model is serialized on the GUI thread (a snapshot: edits made while it runs
do not race with it), everything else happens in a Task on a private one-thread
pool, so validation and layout keep their own threads. A crash of the runtime
ends only the worker process; the document is never touched.
"""

from __future__ import annotations

import html
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, QThreadPool, QTimer, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication, QFileDialog, QMessageBox, QToolBar

from onnxviz.model.document import Change, Document
from onnxviz.model.errors import Cancelled, OnnxvizError, sentence
from onnxviz.model.graph.index import ModelIndex, scope_label
from onnxviz.model.matching import Alignment, ValuePairing, align_models, pair_values
from onnxviz.model.matching.crossrun import badness, inputs_for_b, paired_specs
from onnxviz.model.matching.samples import PairOverSamples, aggregate
from onnxviz.model.progress import CancelToken, ProgressFn
from onnxviz.model.runner import (
    ENGINE_ORT,
    ENGINE_REFERENCE,
    RunError,
    RunOptions,
    RunResult,
    WorkerRun,
    refusal,
    run_model,
    too_new,
    warm_up,
)
from onnxviz.model.runner.budget import CaptureTooBig, node_values, upstream_values
from onnxviz.model.runner.compare import (
    COMPARE_MEASURES,
    DEFAULT_TOLERANCE,
    PairSpec,
    Tolerance,
    ValueDiff,
    compare_pairs,
    compare_results,
    first_exceeding,
    per_node,
    worst,
)
from onnxviz.model.runner.inputs import input_specs, unknown_input
from onnxviz.model.runner.sizes import expression_names, settable
from onnxviz.model.runner.store import (
    FLAG_STATES,
    MEASURE_KINDS,
    MEASURES,
    ValueRecord,
    duration_text,
    export_run,
    value_key,
)
from onnxviz.model.selection import SelectionState
from onnxviz.ui.canvas.marks import Scheme
from onnxviz.ui.docks import RIGHT_TABS, find_dock
from onnxviz.ui.run.activations_dock import ActivationsDock, node_label
from onnxviz.ui.run.input_sources import (
    InputChoice,
    InputPlan,
    PendingFeeds,
    default_choice,
    remember_dims,
    remembered_dims,
    sizes_in_file,
)
from onnxviz.ui.tasks import Task
from onnxviz.ui.validation import document_model_in_thread
from onnxviz.ui.widgets.names import message_text, wrappable
from onnxviz.ui.widgets.plotlib import with_plots

if TYPE_CHECKING:
    import numpy as np
    from PySide6.QtCore import QSettings

    from onnxviz.ui.canvas.canvas import GraphCanvas
    from onnxviz.ui.ports import Frame, ShownDocument, Status, Tasks
    from onnxviz.ui.run.capture_offer import CaptureOfferDialog, CapturePart
    from onnxviz.ui.run.inputs_dialog import InputsDialog


DOCK_SHARE = (20, 80)  # of the right column's height when the dock first shows: the inspector's and the dock's


@dataclass(frozen=True)
class Job:
    """One run of a comparison: what model (None: the document's current state, made in the run's thread), with
    which options, and what to call it."""

    model: bytes | Path | None
    options: RunOptions
    base_dir: Path | None
    label: str


@dataclass
class Outcome:
    results: list[RunResult]
    diffs: list[ValueDiff] | None
    pairs: list[PairSpec] | None = None  # another model's values paired by the matcher (None: by name)
    over: list[PairOverSamples] | None = None  # a comparison over several samples: each pair's mean and worst
    samples: list[str] = field(default_factory=list)  # their names (the results are the last one's runs)


class RunController(QObject):
    """Owns runs, results and the Activations dock of one window (``window.run_controller``)."""

    run_finished = Signal()        # a result is shown
    run_failed = Signal(str)       # one-sentence reason

    def __init__(self, frame: Frame, document: ShownDocument, canvas: GraphCanvas, status: Status, tasks: Tasks,
                 settings: QSettings) -> None:
        super().__init__(frame.window)
        self.toolbar: QToolBar | None = None  # the Run toolbar, once the feature installs it
        self.window = frame.window  # the parent of the dialogs and the Activations dock
        self.document, self.canvas, self.status, self.tasks = document, canvas, status, tasks
        self.settings: QSettings | None = settings
        self.plans: dict[str, InputPlan] = {}
        self.result: RunResult | None = None
        self.other: RunResult | None = None
        self.diffs: list[ValueDiff] | None = None
        self.over: list[PairOverSamples] | None = None  # of self.diffs, when they gather several samples
        self.samples: list[str] = []
        self.owner: object | None = None  # another feature whose runs are shown (the diff's Run Both): not ours
        self.pairs: list[PairSpec] | None = None  # of self.diffs, when the other run is another model
        self.tolerance = DEFAULT_TOLERANCE   # of self.diffs, and of the next comparison
        self.other_label = ""                # what the last comparison compared with
        self.overlay_key = ""
        self.task: Task | None = None
        self.active_run: WorkerRun | None = None
        self.inputs_dialog: InputsDialog | None = None
        self.failure_box: QMessageBox | None = None
        self.newer_box: QMessageBox | None = None  # the question before running a model newer than the engines
        self._newer_allowed: tuple[Document, int] | None = None  # the state the user chose to run anyway
        self.offer_dialog: CaptureOfferDialog | None = None
        self.memory_limit: int | None = None  # bytes a capture may take (None: the memory available then)
        self._last_start: tuple[Document, Mapping[str, np.ndarray] | PendingFeeds, str, Path | None] | None = None
        self._dock_placed = False
        self.actions: dict[str, QAction] = {}
        self._doc: Document | None = None
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self.dock = ActivationsDock(self.window)
        self.dock.scope_label = lambda scope: scope_label(document.doc.index if document.doc else None, scope)
        self.dock.overlay_chosen.connect(self.set_overlay)
        self.dock.first_nonfinite_requested.connect(self.jump_to_first_nonfinite)
        self.dock.next_nonfinite_requested.connect(self.jump_to_next_nonfinite)
        self.dock.first_difference_requested.connect(self.jump_to_first_difference)
        canvas.node_notes.append(self.run_time_note)
        app = QApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self._drop_results)
        # a close the user confirmed ends a running worker; a cancelled close keeps it running
        frame.closing.connect(self.cancel)

    # -- document --------------------------------------------------------------------------------
    def set_document(self, doc: Document | None) -> None:
        if self._doc is not None:
            self._doc.selection.changed.disconnect(self._on_selection)
        self.cancel()
        self._doc = doc
        self._last_start = None  # of the document left: it would keep it, and its weights, in memory
        if doc is not None:
            doc.selection.changed.connect(self._on_selection)
        self._drop_results()
        self.dock.set_result(None)
        self._apply_overlay()
        self.update_actions()

    def on_model_changed(self, change: Change) -> None:
        if change.kind.changes_model and self.result is not None:
            self.dock.set_stale(True)
            self._clear_canvas_overlay()

    def _plan(self, doc: Document) -> InputPlan:
        key = str(doc.path or id(doc))
        if key not in self.plans:
            specs = input_specs(doc.model, doc.index)
            self.plans[key] = InputPlan({s.name: default_choice(s) for s in specs},
                                        remembered_dims(self.settings) if self.settings is not None else {})
        return self.plans[key]

    # -- running ---------------------------------------------------------------------------------
    def options(self) -> RunOptions:
        return RunOptions(engine=ENGINE_REFERENCE if self.actions["reference"].isChecked() else ENGINE_ORT,
                          optimized=self.actions["optimized"].isChecked(),
                          profile=self.actions["profile"].isChecked())

    def run(self, ask: bool = False, compare: str = "", other_path: Path | None = None) -> None:
        """Run the document; ``ask`` opens the inputs dialog first (it opens anyway when the model
        has symbolic dimensions never given). ``compare``: "", "engines", "saved" or "file"."""
        doc = self.document.doc
        if doc is None or self._busy():
            return
        newer = too_new(doc.model)
        if newer and (doc, doc.generation) != self._newer_allowed:
            self._ask_newer(doc, newer, lambda: self.run(ask, compare, other_path))
            return
        try:
            reason = refusal(doc.index)
            if reason:
                raise RunError(reason)
            specs = input_specs(doc.model, doc.index)
        except RunError as exc:
            self._report_failure(exc.message, exc.details)
            return
        warm_up()  # a worker process imports the runtime while the user picks inputs
        plan = self._plan(doc)
        if ask or (not plan.asked and any(d not in plan.dims for d in settable(specs))):
            self._ask_inputs(doc, plan, compare, other_path)
            return
        try:
            feeds = plan.prepare(specs)
        except RunError as exc:
            self._report_failure(exc.message, exc.details)
            return
        self._start(doc, feeds, compare, other_path)

    def _ask_newer(self, doc: Document, why: str, then: Callable[[], None]) -> QMessageBox:
        """Ask before running a model that declares versions newer than the engines know; Run Anyway runs it
        (and the same state of the model again without asking)."""
        box = QMessageBox(QMessageBox.Icon.Warning, "Run a Model Newer Than onnxviz Knows?",
                          message_text(sentence(why)), QMessageBox.StandardButton.Cancel, self.window)
        box.setTextFormat(Qt.TextFormat.PlainText)
        box.setInformativeText("Its values may differ from what the program that wrote it computes.")
        run = box.addButton("Run Anyway", QMessageBox.ButtonRole.AcceptRole)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)

        def answered(_result: int) -> None:
            if box.clickedButton() is run and self.document.doc is doc:
                self._newer_allowed = (doc, doc.generation)
                then()

        box.finished.connect(answered)
        box.open()
        self.newer_box = box
        return box

    def run_with_files(self, files: Mapping[str, str]) -> None:
        """Run the document with these inputs read from array files (the others as its plan says), kept in its
        plan for the next runs (what ``onnxviz.show(model, inputs=...)`` hands over); the symbolic dimensions
        of these inputs take their sizes from the files."""
        doc = self.document.doc
        if doc is None or self._busy():
            return
        specs = {s.name: s for s in input_specs(doc.model, doc.index)}
        unknown = next((name for name in files if name not in specs), None)
        if unknown is not None:
            self._report_failure(unknown_input(unknown, list(specs.values())).message)
            return
        plan = self._plan(doc)
        for name, path in files.items():
            plan.choices[name] = replace(plan.choices.get(name, InputChoice()), source="file", path=path)
            plan.dims.update(sizes_in_file(specs[name], path))
        self.run()

    def _ask_inputs(self, doc: Document, plan: InputPlan, compare: str, other_path: Path | None) -> None:
        self.ask_inputs(doc, lambda feeds: self._start(doc, feeds, compare, other_path), plan)

    def ask_inputs(self, doc: Document, then: Callable[[PendingFeeds], object], plan: InputPlan | None = None) -> None:
        """The Run with Inputs... dialog for ``doc`` (with the choices its last run remembered); ``then``
        gets the inputs it is accepted with, and the choices are remembered. Raises RunError when the
        model's inputs cannot be read."""
        from onnxviz.ui.run.inputs_dialog import InputsDialog

        dialog = InputsDialog(input_specs(doc.model, doc.index), plan or self._plan(doc), doc.name, self.window)
        self.inputs_dialog = dialog

        def accepted() -> None:
            new_plan = dialog.plan()
            self.plans[str(doc.path or id(doc))] = new_plan
            if self.settings is not None:
                remember_dims(self.settings, new_plan.dims)
            if self.document.doc is doc and dialog.feeds is not None:
                then(dialog.feeds)

        dialog.accepted.connect(accepted)
        dialog.finished.connect(dialog.deleteLater)
        dialog.open()

    def _jobs(self, doc: Document, compare: str, other_path: Path | None, part: CapturePart | None = None) -> list[Job]:
        options = replace(self.options(), memory_limit=self.memory_limit)
        if part is not None:
            options = replace(options, keep=part.keep, check_memory=part.check)
        # the file itself while the model equals it (read by the worker: no copy of 1 GiB to hand over), or the
        # bytes validation took of this state; else made in the run's thread (a 1 GiB model serialized here held
        # the GUI thread 1.7 s)
        unchanged = doc.path if doc.path is not None and doc.file_matches() else None
        jobs = [Job(unchanged or doc.known_bytes(), options, doc.base_dir, doc.name)]
        if compare == "engines":
            other_engine = ENGINE_ORT if options.engine == ENGINE_REFERENCE else ENGINE_REFERENCE
            jobs.append(Job(jobs[0].model, replace(options, engine=other_engine, profile=False), doc.base_dir,
                            other_engine))
        elif compare == "saved" and doc.path is not None:
            jobs.append(Job(doc.path, options, doc.path.parent, f"{doc.name} on disk"))
        elif compare == "file" and other_path is not None:
            jobs.append(Job(other_path, options, other_path.parent, other_path.name))
        return jobs

    def _start(self, doc: Document, feeds: Mapping[str, np.ndarray] | PendingFeeds, compare: str,
               other_path: Path | None, part: CapturePart | None = None) -> None:
        self._last_start = (doc, feeds, compare, other_path)  # to run again capturing a part
        try:
            jobs = self._jobs(doc, compare, other_path, part)
        except OnnxvizError as exc:  # protobuf refuses to serialize more than 2 GiB
            self._report_failure("the model is too large to hand to the runtime as one protobuf (over 2 GiB); "
                                 "save it with external data and run the saved file.", exc.details)
            return
        index = doc.index
        tolerance = self.tolerance
        label = f"Running {doc.name}" + (f" and {jobs[1].label}" if len(jobs) > 1 else "")
        generation = doc.generation

        def work(progress: ProgressFn, token: CancelToken) -> Outcome:
            with tempfile.TemporaryDirectory(prefix="onnxviz-model-") as scratch:
                made = _document_model(doc, generation, token, Path(scratch)) if jobs[0].model is None else None
                return run_jobs([replace(job, model=made) if job.model is None else job for job in jobs],
                                progress, token)

        def run_jobs(jobs: list[Job], progress: ProgressFn, token: CancelToken) -> Outcome:
            samples = feeds.samples if isinstance(feeds, PendingFeeds) and len(jobs) > 1 else ()
            # another model: opened and aligned once for every sample
            matched = _matched_model(index, other_path, token) if compare == "file" and other_path else None
            if not samples:
                return run_sample(jobs, feeds, matched, progress, token)
            assert isinstance(feeds, PendingFeeds)
            outcome: Outcome | None = None
            per_sample: list[list[ValueDiff]] = []
            try:
                for k, path in enumerate(samples):
                    if outcome is not None:
                        for r in outcome.results:
                            r.cleanup()
                    outcome = run_sample(jobs, feeds.with_sample(path), matched, _sample_part(progress, k, len(samples)),
                                         token)
                    per_sample.append(outcome.diffs or [])
            except BaseException:
                if outcome is not None:
                    for r in outcome.results:
                        r.cleanup()
                raise
            assert outcome is not None
            outcome.over = aggregate(per_sample)
            outcome.diffs = [p.worst for p in outcome.over]
            outcome.samples = [Path(path).name for path in samples]
            return outcome

        def run_sample(jobs: list[Job], feeds: Mapping[str, np.ndarray] | PendingFeeds,
                       matched: tuple[Alignment, ValuePairing, ModelIndex] | None, progress: ProgressFn,
                       token: CancelToken) -> Outcome:
            results: list[RunResult] = []
            given, generated = feeds.to_run() if isinstance(feeds, PendingFeeds) else (dict(feeds), None)
            try:
                for k, job in enumerate(jobs):
                    part = _scaled(progress, k, len(jobs) + (len(jobs) > 1))
                    job_feeds, job_generated = given, generated
                    if k > 0:  # the arrays the first run ran on, generated ones included
                        job_feeds, job_generated = results[0].input_arrays(), None
                        if matched is not None:
                            job_feeds, job_generated = inputs_for_b(matched[0], job_feeds, matched[2])
                    assert job.model is not None
                    try:
                        results.append(run_model(job.model, job_feeds, job.options, index=index if k == 0 else None,
                                                 base_dir=job.base_dir, progress=part, token=token,
                                                 on_start=self._on_worker_started, generated=job_generated))
                    except RunError as exc:
                        if k == 0:
                            if exc.partial is not None:  # worked out here, like a result's
                                exc.partial.first_nonfinite()
                            raise
                        if exc.partial is not None:
                            exc.partial.cleanup()
                        # another model's node: not one to select on this canvas
                        raise RunError(f"{job.label}: {exc.message}", exc.details) from exc
                    warm_up()  # for the next run, or the comparison's second one
                if isinstance(feeds, PendingFeeds):
                    results[0].notes[:0] = feeds.notes
                results[0].first_nonfinite()  # worked out here, not on the GUI thread (100k values: ~0.1 s)
                results[0].measure(self.overlay_key if self.overlay_key in MEASURES else "max_abs")
                diffs = None
                pairs = None
                if matched is not None and len(results) > 1:  # integer values read as floats, wrong shapes out
                    pairs = paired_specs(results[0], results[1], matched[0], matched[1],
                                         base_dir_a=jobs[0].base_dir, base_dir_b=jobs[1].base_dir)
                if len(results) > 1:
                    diffs = _compare(results[0], results[1], pairs, tolerance,
                                     _scaled(progress, len(jobs), len(jobs) + 1), token)
            except BaseException:
                for r in results:
                    r.cleanup()
                raise
            return Outcome(results, diffs, pairs)

        # pyqtgraph imported in this thread too: the result colours the canvas with its colour maps, and the import
        # on the GUI thread held it ~170 ms
        task = Task(with_plots(work), label, parent=self)  # retired once it ends: its slots hold the document
        task.finished.connect(lambda outcome: self._on_finished(doc, jobs, outcome))
        task.failed.connect(lambda exc, tb: self._on_failed(exc, tb, doc, jobs))
        task.cancelled.connect(self._on_cancelled)
        self.task = task
        self.update_actions()
        self.tasks.track_task(task)  # the status bar's progress bar with its cancel button
        self.status.show_message(f"{label}...")
        task.start(self._pool)

    def _on_worker_started(self, run: WorkerRun) -> None:
        self.active_run = run  # read by tests and by nobody else

    def cancel(self) -> None:
        if self.task is not None:
            self.task.cancel()

    def _busy(self) -> bool:
        if self.task is not None and not self.task.done and not self.task.token.cancelled:
            self.status.show_message("A run is already in progress (Run > Cancel Run stops it).", 5000)
            return True
        return False

    # -- results ---------------------------------------------------------------------------------
    def _on_finished(self, doc: Document, jobs: list[Job], outcome: Outcome) -> None:
        self.task = None
        self.update_actions()
        if self.document.doc is not doc:
            for r in outcome.results:
                r.cleanup()
            return
        self._drop_results()
        self.result = outcome.results[0]
        self.other = outcome.results[1] if len(outcome.results) > 1 else None
        self.diffs, self.pairs = outcome.diffs, outcome.pairs
        self.over, self.samples = outcome.over, outcome.samples
        self._remember_sizes(doc, self.result)
        self.other_label = jobs[1].label if len(jobs) > 1 else ""
        self.update_actions()
        if self.diffs is not None and self.overlay_key not in COMPARE_MEASURES:
            self.overlay_key = self._compare_colouring()
        elif self.diffs is None and self.overlay_key not in MEASURES:
            self.overlay_key = "max_abs"
        summary = self._summary(jobs[0].label)
        self.dock.set_result(self.result, self.diffs, summary, self.overlay_key,
                             jobs[1].label if len(jobs) > 1 else "", self.other)
        self._bring_dock_forward()
        self._apply_overlay()
        self._on_selection(doc.selection.state)
        headline = summary.split("<br>")[0]  # the dock has the rest; a long status line runs under its widgets
        self.status.show_message(html.unescape(headline.replace("<b>", "").replace("</b>", "")), 10000)
        self.run_finished.emit()

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

    def _remember_sizes(self, doc: Document, result: RunResult) -> None:
        """The sizes the run chose for the generated inputs' auto dimensions: tried first next time, and shown
        beside their "auto" in the Run with Inputs dialog."""
        plan = self._plan(doc)
        plan.found.update((d, size) for d, size in result.dims.items() if d not in plan.dims)

    def _summary(self, label: str) -> str:
        assert self.result is not None
        r = self.result
        ms = 1000 * r.timings.get("run_s", 0.0)
        text = f"Ran <b>{_name_html(label)}</b> on {html.escape(r.what_ran())} in {ms:.1f} ms: {len(r.values)} values"
        text += f" and {len(r.structured)} sequences or maps." if r.structured else "."
        bad = r.first_nonfinite()
        if bad is not None:
            text += f" First NaN/Inf: <b>{_name_html(bad.node_name or bad.name)}</b>."
        if r.scopes:
            text += (f"<br>Values inside {len(r.scopes)} If/Loop/Scan bodies or local functions come from the "
                     "reference evaluator (If: the chosen branch; Loop/Scan: the last iteration; a function: its "
                     "first call). Enter a body to see them.")
        if self.diffs is not None:
            text += "<br>" + self._comparison_text()
        text += f"<br>Inputs: {html.escape(wrappable(r.inputs_text(), 1000)) or 'none'}."
        chosen = ", ".join(f"{d}={size}" for d, size in r.dims.items() if expression_names(d) is None)
        if chosen:
            text += f" Sizes chosen: {html.escape(wrappable(chosen, 400))} (Run with Inputs... sets others)."
        for note in r.notes:
            text += f"<br>Note: {html.escape(wrappable(note, 1000))}"
        return text

    def _comparison_text(self) -> str:
        """Relative error first: a max abs error of 4e+04 on values of 9e+09 is float32 rounding."""
        diffs = self.diffs or []
        text = f"Compared with {_name_html(self.other_label)}: {len(diffs)} values"
        if self.over is not None:
            return text + self._samples_text()
        rel, big = worst(diffs, "rel_error"), worst(diffs, "max_abs_error")
        if rel is not None and big is not None:
            text += (f"{self._lowest_sqnr(diffs)}, worst relative error {rel.rel_error:.3g} ({_name_html(rel.name)}), "
                     f"worst max abs error {big.max_abs_error:.3g}")
        outside = [d for d in diffs if d.outside > 0]
        first = first_exceeding(diffs)
        if first is None:
            return text + f". All within {self.tolerance.text()}."
        return (text + f". {len(outside)} differ beyond {self.tolerance.text()}, "
                f"the first <b>{_name_html(first.name)}</b>.")

    def _on_failed(self, exc: object, tb: str, doc: Document | None = None, jobs: list[Job] | None = None) -> None:
        self.task = None
        self.update_actions()
        current = doc if doc is not None and self.document.doc is doc else None
        if isinstance(exc, CaptureTooBig) and current is not None:
            self._offer_a_part(current, exc)
            return
        partial = exc.partial if isinstance(exc, RunError) else None
        if isinstance(exc, RunError) and partial is not None and current is not None and jobs:
            self._show_partial(current, jobs, partial, exc)
        elif partial is not None:
            partial.cleanup()
        if isinstance(exc, RunError) and exc.node >= 0 and doc is not None and self.document.doc is doc \
                and exc.node < len(doc.index.main.nodes):
            self.reveal(exc.node)  # the node onnxruntime (or the reference evaluator) says failed
        if isinstance(exc, RunError) and partial is not None and current is not None and jobs:
            count = len(partial.values) + len(partial.structured)
            self._report_failure(f"{sentence(exc.message)} The {count} values computed before that node are shown "
                                 "in the Activations panel.", exc.details or tb)
        elif isinstance(exc, OnnxvizError):
            self._report_failure(exc.message, exc.details or tb)
        else:
            self._report_failure(f"the run failed ({type(exc).__name__}: {exc}).", tb)

    def _show_partial(self, doc: Document, jobs: list[Job], partial: RunResult, error: RunError) -> None:
        """The values computed before the run failed, shown like a result's with the failure as a note."""
        partial.notes.insert(0, f"The run failed: {sentence(error.message)} These are the values computed before "
                                "that node (the nodes that do not depend on it).")
        self._on_finished(doc, jobs[:1], Outcome([partial], None))

    def _offer_a_part(self, doc: Document, error: CaptureTooBig) -> None:
        """Ask which part to capture; Run starts the same run again capturing it."""
        from onnxviz.ui.run.capture_offer import CaptureOfferDialog

        assert self._last_start is not None and self._last_start[0] is doc
        _, feeds, compare, other_path = self._last_start
        dialog = CaptureOfferDialog(error, self._capture_parts(doc), self.window)
        self.offer_dialog = dialog
        self.status.show_message(sentence(error.message), 10000)

        def accepted() -> None:
            if self.document.doc is doc and not self._busy():
                self._start(doc, feeds, compare, other_path, dialog.chosen)

        dialog.accepted.connect(accepted)
        dialog.finished.connect(dialog.deleteLater)
        dialog.open()

    def _capture_parts(self, doc: Document) -> list[CapturePart]:
        """The parts the canvas's selection makes: the selected group, the values above the selected node."""
        from onnxviz.ui.run.capture_offer import capture_parts

        canvas = self.canvas
        state = doc.selection.state
        nodes = doc.model.graph.node
        group, group_values, node, upstream = "", frozenset[str](), "", frozenset[str]()
        if canvas.scope == "" and state.node >= 0 and state.scope == "" and state.node < len(nodes):
            upstream = upstream_values(nodes, state.node)
            node = nodes[state.node].name or f"{nodes[state.node].op_type} node {state.node}"
        elif canvas.scope == "" and state.is_empty and canvas.selected_nodes():
            box, drawable = canvas.selected_box(), canvas.drawable
            group = drawable.scene.box_ref[box].group if drawable is not None and box >= 0 else ""
            group_values = node_values(nodes, canvas.selected_nodes())
        return capture_parts(group, group_values, node, upstream)

    def _on_cancelled(self) -> None:
        self.task = None
        self.update_actions()
        self.status.show_message("Run cancelled.", 5000)

    def _report_failure(self, message: str, details: str = "") -> None:
        text = sentence(message)
        self.status.show_message(text, 10000)
        # onnxruntime's messages quote node and value names whole: escaped and cut, never markup
        box = QMessageBox(QMessageBox.Icon.Warning, "Cannot Run the Model", message_text(text), parent=self.window)
        box.setTextFormat(Qt.TextFormat.PlainText)
        if details:
            box.setDetailedText(details)
        box.open()
        self.failure_box = box
        self.run_failed.emit(message)

    def _drop_results(self) -> None:
        for r in (self.result, self.other):
            if r is not None and self.owner is None:  # another feature's runs are its to remove
                r.cleanup()
        self.result = self.other = None
        self.diffs = None
        self.over, self.samples = None, []
        self.owner = None

    # -- comparisons of other features -------------------------------------------------------------
    def show_comparison(self, owner: object, doc: Document, result_a: RunResult, result_b: RunResult,
                        diffs: list[ValueDiff], pairs: list[PairSpec], label: str,
                        over: list[PairOverSamples] | None = None, samples: list[str] | None = None) -> None:
        """Another feature's comparison of this document with another model (the diff's Run Both) shown in the
        Activations panel, replacing what it showed; the runs stay ``owner``'s, which calls :meth:`forget`
        before it removes them. The canvas's colours stay the owner's."""
        if self.document.doc is not doc:
            return
        self.cancel()
        self._drop_results()
        self.result, self.other, self.diffs, self.pairs = result_a, result_b, diffs, pairs
        self.over, self.samples = over, list(samples or [])
        self.owner, self.other_label = owner, label
        if self.overlay_key not in COMPARE_MEASURES:
            self.overlay_key = self._compare_colouring()
        self.dock.set_result(result_a, diffs, self._summary(doc.name), self.overlay_key, label, result_b)
        self._on_selection(doc.selection.state)
        self.update_actions()

    def forget(self, owner: object, reason: str) -> None:
        """``owner``'s runs are about to be removed: the panel no longer shows them (``reason`` says why)."""
        if self.owner is None or self.owner is not owner:
            return
        self._drop_results()
        self.dock.set_result(None)
        self.dock.summary.setText(reason)
        self.update_actions()

    def show_own_colours(self) -> None:
        """The colours of this model's last plain run on the canvas again (or none), e.g. once a diff closes."""
        self.set_overlay(self.overlay_key)

    def comparison_replaced(self, reason: str) -> None:
        """A new comparison with another model (File > Compare With...) replaces the one the panel shows with
        a model other than this one: the runs it showed of that model go, this model's run stays."""
        if self.owner is not None:
            self.forget(self.owner, reason)
            return
        if self.other is None or self.pairs is None or self.result is None:
            return  # no comparison, or one of this model's own runs (engines, the saved file)
        self.other.cleanup()
        self.other, self.diffs, self.pairs, self.over, self.samples = None, None, None, None, []
        if self.overlay_key in COMPARE_MEASURES:
            self.overlay_key = "max_abs"
        doc = self.document.doc
        summary = self._summary(doc.name if doc is not None else "")
        self.dock.set_result(self.result, None, f"{summary}<br><i>{html.escape(reason)}</i>", self.overlay_key)
        if doc is not None:
            self._on_selection(doc.selection.state)

    # -- selection, overlay, finders -------------------------------------------------------------
    def _on_selection(self, state: SelectionState) -> None:
        if self.result is None:
            return
        if state.value:
            record = self.result.record(state.scope, state.value)
            structured = [k for k in (value_key(state.scope, state.value),) if k in self.result.structured]
            self.dock.show_records([record] if record else [], f"'{state.value}' was not captured in this run.",
                                   structured)
        elif state.node >= 0:
            records = self._records_of(state.scope, state.node)
            self.dock.show_records(records, _not_captured(state.scope), self._structured_of(state.scope, state.node))
        else:
            self.dock.show_records([])

    def _structured_of(self, scope: str, node: int) -> list[str]:
        """Keys of the node's outputs that are sequences or maps."""
        doc = self.document.doc
        graph = doc.index.graphs.get(scope) if doc is not None else None
        if self.result is None or graph is None or node >= len(graph.nodes):
            return []
        return [k for k in (value_key(scope, n) for n in graph.nodes[node].output) if k in self.result.structured]

    def _records_of(self, scope: str, node: int) -> list[ValueRecord]:
        """The node's outputs by name (so a run from before an edit still finds its values)."""
        doc = self.document.doc
        graph = doc.index.graphs.get(scope) if doc is not None else None
        if self.result is None or graph is None or node >= len(graph.nodes):
            return []
        found = (self.result.record(scope, n) for n in graph.nodes[node].output)
        return [r for r in found if r is not None]

    def set_overlay(self, key: str) -> None:
        self.overlay_key = key
        self._apply_overlay()

    def _overlay_values(self) -> tuple[dict[tuple[str, int], float], str]:
        key = self.overlay_key
        if self.result is None or not key:
            return {}, ""
        if key in COMPARE_MEASURES:
            if not self.diffs:
                return {}, ""
            return {("", node): v for node, v in per_node(self.diffs, key).items()}, COMPARE_MEASURES[key]
        return self.result.measure(key), MEASURES.get(key, key)

    def _apply_overlay(self) -> None:
        canvas = self.canvas
        values, title = self._overlay_values()
        if not title or self.dock.stale.isVisible():
            canvas.clear_overlay()
            return
        bad = self.result.first_nonfinite() if self.result is not None else None
        flagged = ("", bad.node) if bad is not None else None
        key = self.overlay_key
        scheme = Scheme(MEASURE_KINDS.get(key, "level"), FLAG_STATES.get(key, ("no", "yes")))
        canvas.set_overlay(values, title, flagged, scheme)

    def run_time_note(self, scope: str, node: int) -> str:
        """The canvas tooltip's line with the node's profiled run time ('' without one)."""
        times = self.result.node_times_us if self.result is not None and not self.dock.stale.isVisible() else {}
        return f"run time <b>{duration_text(times[node])}</b>" if scope == "" and node in times else ""

    def _clear_canvas_overlay(self) -> None:
        self.canvas.clear_overlay()

    def jump_to_first_nonfinite(self) -> None:
        self._jump_to_nonfinite(-1, "First")

    def jump_to_next_nonfinite(self) -> None:
        """The next node after the selected one (in topological order) whose output has NaN (or Inf)."""
        doc, result = self.document.doc, self.result
        state = doc.selection.state if doc is not None else None
        order = -1
        if result is not None and state is not None and state.scope == "":
            shown = self._records_of("", state.node) if state.node >= 0 else \
                [r for r in (result.record("", state.value),) if r is not None]
            order = max((r.order for r in shown), default=-1)
        self._jump_to_nonfinite(order, "Next")

    def _jump_to_nonfinite(self, order: int, which: str) -> None:
        nan_only = self.dock.nan_only.isChecked()
        what = "NaN" if nan_only else "NaN/Inf"
        bad = self.result.nonfinite_after(order, nan_only) if self.result is not None else None
        if bad is None:
            after = " after the selected node" if order >= 0 else ""
            self.status.show_message(f"No value of the last run{after} has {what}.", 5000)
            return
        self.reveal(bad.node)
        self.status.show_message(f"{which} {what}: {bad.name} ({bad.op_type} {node_label(bad)}).", 10000)

    def _compare_colouring(self) -> str:
        """The first colouring of a comparison: by SQNR against another model (a quantized copy differs
        everywhere; its worst layer is the one of lowest SQNR, as compare and Run Both say), else by relative
        error (two engines or a saved copy: equal but for rounding)."""
        return "sqnr_loss" if self.pairs is not None else "rel_error"

    def _lowest_sqnr(self, diffs: list[ValueDiff]) -> str:
        """Against another model (a quantized copy: every value differs), the pair of lowest SQNR first, as
        compare sorts by default."""
        if self.pairs is None or not diffs:
            return ""
        low = min(diffs, key=lambda d: (badness(d, "sqnr"), d.order))
        return f", lowest SQNR {low.sqnr_db:.2f} dB (<b>{_name_html(low.name)}</b>)"

    def _samples_text(self) -> str:
        """A comparison over several samples: the worst pair's relative error (its mean beside it), the
        pairs beyond tolerance in some sample; the values shown are the last sample's."""
        over = self.over or []
        n = len(self.samples)
        text = f" over {n} samples (each figure its worst over them; the values shown are the last sample's, " \
               f"{_name_html(self.samples[-1]) if self.samples else ''})"
        text += self._lowest_sqnr([p.worst for p in over])
        worst = max(over, key=lambda p: p.worst.measure("rel_error"), default=None)
        if worst is not None:
            text += (f", worst relative error {worst.worst.rel_error:.3g} ({_name_html(worst.worst.name)}; mean over "
                     f"the samples {worst.mean.rel_error:.3g}), mean cosine of that value {worst.mean.cosine:.6f}")
        beyond = [p for p in over if p.worst.outside > 0]
        if not beyond:
            return text + f". All within {self.tolerance.text()} in every sample."
        return (text + f". {len(beyond)} differ beyond {self.tolerance.text()} in some sample, the first "
                f"<b>{_name_html(beyond[0].worst.name)}</b>.")

    def jump_to_first_difference(self, rtol: float, atol: float) -> None:
        """Select the first value outside the tolerance; a new tolerance compares the two runs again."""
        tolerance = Tolerance(rtol, atol)
        if self.diffs is None or self.result is None or self.other is None:
            return
        if tolerance != self.tolerance and self.over is not None:
            self.tolerance = tolerance
            self.status.show_message(
                f"A comparison over {len(self.samples)} samples keeps the runs of its last sample only: compare "
                f"again to use {tolerance.text()}.", 10000)
            return
        if tolerance == self.tolerance:
            self._show_first_difference()
        elif not self._busy():
            self._compare_again(tolerance)

    def _compare_again(self, tolerance: Tolerance) -> None:
        a, b, doc, pairs = self.result, self.other, self.document.doc, self.pairs
        assert a is not None and b is not None
        run_label = doc.name if doc is not None else ""

        def work(progress: ProgressFn, token: CancelToken) -> list[ValueDiff]:
            return _compare(a, b, pairs, tolerance, progress, token)

        def finished(diffs: list[ValueDiff]) -> None:
            self.task = None
            self.update_actions()
            if self.result is not a or self.document.doc is not doc:
                return  # another run or document since
            self.diffs, self.tolerance = diffs, tolerance
            self.dock.set_result(self.result, diffs, self._summary(run_label), self.overlay_key, self.other_label,
                                 self.other)
            self._apply_overlay()
            if doc is not None:
                self._on_selection(doc.selection.state)
            self._show_first_difference()

        task = Task(work, f"Comparing with {tolerance.text()}", parent=self)
        task.finished.connect(finished)
        task.failed.connect(lambda exc, tb: self._on_failed(exc, tb))
        task.cancelled.connect(self._on_cancelled)
        self.task = task
        self.update_actions()
        self.tasks.track_task(task)
        task.start(self._pool)

    def _show_first_difference(self) -> None:
        found = first_exceeding(self.diffs or [])
        if found is None:
            self.status.show_message(f"No value differs beyond {self.tolerance.text()}.", 5000)
            return
        self.reveal(found.node)
        combo = self.dock.value_combo  # the node's differing output, not its first
        combo.setCurrentIndex(max(0, combo.findData(found.name)))
        self.status.show_message(
            f"First difference beyond {self.tolerance.text()}: {found.name} ({found.outside} elements outside; "
            f"relative error {found.rel_error:.3g}, max abs error {found.max_abs_error:.3g}).", 10000)

    def reveal(self, node: int) -> None:
        self.canvas.reveal_node("", node)

    # -- actions (built by feature.install) ------------------------------------------------------
    def compare_with_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.window, "Compare with Model", "",
                                              "ONNX models (*.onnx);;All files (*)")
        if path:
            self.run(compare="file", other_path=Path(path))

    def export_all(self) -> None:
        """Write every value of the last run into a folder the user picks, as ``onnxviz run --dump`` does, in the
        background (the status bar's progress; Cancel Run stops it and leaves nothing)."""
        result = self.result
        if result is None or self._busy():
            return
        chosen = QFileDialog.getExistingDirectory(self.window, "Export All Values to Folder")
        if not chosen:
            return
        folder = Path(chosen)
        task = Task(lambda progress, token: export_run(result, folder, progress, token), "Exporting the values",
                    parent=self)
        task.finished.connect(lambda count: self._exported(f"Wrote {count} values to {folder} (index.json)."))
        task.failed.connect(lambda exc, _tb: self._exported(
            sentence(exc.message) if isinstance(exc, OnnxvizError) else f"Could not export the values: {exc}.", exc))
        task.cancelled.connect(lambda: self._exported("Export cancelled; nothing was written."))
        self.task = task
        self.update_actions()
        self.tasks.track_task(task)
        self.status.show_message(f"Exporting the values to {folder}...")
        task.start(self._pool)

    def _exported(self, text: str, error: BaseException | None = None) -> None:
        self.task = None
        self.update_actions()
        self.status.show_message(text, 10000)
        if error is not None:
            self.status.show_error("Export All Values", text, "")

    def update_actions(self) -> None:
        if not self.actions:
            return
        doc = self.document.doc
        running = self.task is not None
        for name in ("run", "run_inputs", "compare_engines", "compare_file"):
            self.actions[name].setEnabled(doc is not None and not running)
        self.actions["compare_saved"].setEnabled(doc is not None and doc.path is not None and not running)
        self.actions["cancel"].setEnabled(running)
        self.actions["first_nan"].setEnabled(self.result is not None)
        self.actions["next_nan"].setEnabled(self.result is not None)
        self.actions["export_all"].setEnabled(self.result is not None and not running)


def _matched_model(index: ModelIndex, other: Path,
                   token: CancelToken) -> tuple[Alignment, ValuePairing, ModelIndex]:
    """Another model compared with this one: the alignment (which feeds each of its inputs the array of the
    input it is aligned with), its values paired with ours by the matcher (the one the model diff uses: through
    DequantizeLinear outputs, past fused or removed nodes, quantized ops as float ones; main-graph values, as
    this panel compares runs of one model) and its index."""
    other_index = Document.open(other).index
    alignment = align_models(index, other_index, token=token)
    return alignment, pair_values(alignment, bodies=False), other_index


def _compare(a: RunResult, b: RunResult, pairs: list[PairSpec] | None, tolerance: Tolerance,
             progress: ProgressFn, token: CancelToken) -> list[ValueDiff]:
    """The matcher's pairs when there are some, else the values of the same name."""
    if pairs is None:
        return compare_results(a, b, tolerance, progress, token)
    return compare_pairs(a, b, pairs, tolerance, progress, token)


def _name_html(name: str) -> str:
    """A node, value or file name in the dock's summary: escaped, cut and free to wrap."""
    return html.escape(wrappable(name, 120))


def _not_captured(scope: str) -> str:
    if not scope:
        return "This node's outputs were not captured in this run."
    if scope.startswith("fn:"):
        return "This function was not called in this run, or the run's notes say why its values were not captured."
    return ("This body did not run (its If branch was not chosen, or its Loop/Scan ran no iteration), "
            "or the run's notes say why its values were not captured.")


def _document_model(doc: Document, generation: int, token: CancelToken, folder: Path) -> bytes | Path:
    """(the run's thread) The document's model in state ``generation`` (see :func:`document_model_in_thread`)."""
    try:
        return document_model_in_thread(doc, generation, token, folder)
    except Cancelled:
        if token.cancelled:
            raise
        raise RunError("the model was edited while it was being handed to the runtime; run it again.") from None


def _sample_part(progress: ProgressFn, k: int, n: int) -> ProgressFn:
    """Progress of sample ``k`` of ``n``, its text saying which."""
    part = _scaled(progress, k, n)
    return lambda fraction, text: part(fraction, f"Sample {k + 1} of {n}: {text}")


def _scaled(progress: ProgressFn, k: int, n: int) -> ProgressFn:
    """Progress of part ``k`` of ``n`` as a fraction of the whole."""
    return lambda fraction, text: progress((k + max(0.0, min(1.0, fraction))) / n, text)
