"""Starts the runs of one window in the worker process and says how they ended.

The model is serialized on the GUI thread (a snapshot: edits made while it runs do not race with it), everything
else happens in a Task on a private one-thread pool, so validation and layout keep their own threads. A crash of
the runtime ends only the worker process; the document is never touched."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, QThreadPool, Signal
from PySide6.QtWidgets import QMessageBox

from onnxviz.model.errors import OnnxvizError, sentence
from onnxviz.model.progress import CancelToken, ProgressFn
from onnxviz.model.runner import RunError, RunOptions, RunResult, WorkerRun, too_new
from onnxviz.model.runner.budget import CaptureTooBig, node_values, upstream_values
from onnxviz.model.runner.compare import Tolerance, ValueDiff
from onnxviz.ui.run.jobs import Feeds, Job, Outcome, RunWork, compare_runs, jobs_for
from onnxviz.ui.tasks import Task
from onnxviz.ui.widgets.names import message_text
from onnxviz.ui.widgets.plotlib import with_plots

if TYPE_CHECKING:
    from PySide6.QtWidgets import QMainWindow

    from onnxviz.model.document import Document
    from onnxviz.ui.canvas.canvas import GraphCanvas
    from onnxviz.ui.ports import ShownDocument, Status, Tasks
    from onnxviz.ui.run.capture_offer import CaptureOfferDialog, CapturePart
    from onnxviz.ui.run.shown import ShownRuns


class Runs(QObject):
    """One task at a time (a run, a comparison again, an export) on a private pool, tracked in the status bar."""

    busy_changed = Signal()               # a task started or ended
    finished = Signal(object, list, object)  # the Document, the labels of its jobs, the Outcome
    failed = Signal(str)                  # one-sentence reason

    def __init__(self, window: QMainWindow, document: ShownDocument, canvas: GraphCanvas, status: Status,
                 tasks: Tasks, shown: ShownRuns, options: Callable[[], RunOptions]) -> None:
        super().__init__(window)
        self.window, self.document, self.canvas, self.status, self.tasks = window, document, canvas, status, tasks
        self.shown = shown  # read: the tolerance of the next comparison, the measure the canvas colours by
        self.options = options
        self.task: Task | None = None
        self.active_run: WorkerRun | None = None
        self.memory_limit: int | None = None  # bytes a capture may take (None: the memory available then)
        self.failure_box: QMessageBox | None = None
        self.newer_box: QMessageBox | None = None  # the question before running a model newer than the engines
        self._newer_allowed: tuple[Document, int] | None = None  # the state the user chose to run anyway
        self.offer_dialog: CaptureOfferDialog | None = None
        self._last_start: tuple[Document, Feeds, str, Path | None] | None = None
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)

    def forget_document(self) -> None:
        self.cancel()
        self._last_start = None  # of the document left: it would keep it, and its weights, in memory

    # -- tasks -----------------------------------------------------------------------------------
    def begin(self, task: Task, message: str = "") -> None:
        """Run ``task`` on the pool, tracked in the status bar (its progress bar and cancel button)."""
        self.task = task
        self.busy_changed.emit()
        self.tasks.track_task(task)
        if message:
            self.status.show_message(message)
        task.start(self._pool)

    def end(self) -> None:
        self.task = None
        self.busy_changed.emit()

    def cancel(self) -> None:
        if self.task is not None:
            self.task.cancel()

    def busy(self) -> bool:
        if self.task is not None and not self.task.done and not self.task.token.cancelled:
            self.status.show_message("A run is already in progress (Run > Cancel Run stops it).", 5000)
            return True
        return False

    # -- starting --------------------------------------------------------------------------------
    def may_run(self, doc: Document, then: Callable[[], None]) -> bool:
        """Whether ``doc`` may run now; a model that declares versions newer than the engines know asks first
        (Run Anyway calls ``then``, and runs the same state of the model again without asking)."""
        newer = too_new(doc.model)
        if newer and (doc, doc.generation) != self._newer_allowed:
            self._ask_newer(doc, newer, then)
            return False
        return True

    def _ask_newer(self, doc: Document, why: str, then: Callable[[], None]) -> QMessageBox:
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

    def jobs(self, doc: Document, compare: str, other_path: Path | None, part: CapturePart | None = None) -> list[Job]:
        options = replace(self.options(), memory_limit=self.memory_limit)
        if part is not None:
            options = replace(options, keep=part.keep, check_memory=part.check)
        return jobs_for(doc, options, compare, other_path)

    def start(self, doc: Document, feeds: Feeds, compare: str, other_path: Path | None,
              part: CapturePart | None = None) -> None:
        """Run ``doc`` on ``feeds`` (and the other run of a comparison: "engines", "saved" or "file")."""
        self._last_start = (doc, feeds, compare, other_path)  # to run again capturing a part
        try:
            jobs = self.jobs(doc, compare, other_path, part)
        except OnnxvizError as exc:  # protobuf refuses to serialize more than 2 GiB
            self.report_failure("the model is too large to hand to the runtime as one protobuf (over 2 GiB); "
                                "save it with external data and run the saved file.", exc.details)
            return
        label = f"Running {doc.name}" + (f" and {jobs[1].label}" if len(jobs) > 1 else "")
        work = RunWork(doc, doc.generation, doc.index, jobs, feeds, other_path if compare == "file" else None,
                       self.shown.tolerance, self.shown.overlay_key, self._on_worker_started)
        # pyqtgraph imported in this thread too: the result colours the canvas with its colour maps, and the import
        # on the GUI thread held it ~170 ms
        task = Task(with_plots(work), label, parent=self)  # retired once it ends: its slots hold the document
        task.finished.connect(lambda outcome: self._on_finished(doc, jobs, outcome))
        task.failed.connect(lambda exc, tb: self._on_failed(exc, tb, doc, jobs))
        task.cancelled.connect(self._on_cancelled)
        self.begin(task, f"{label}...")

    def _on_worker_started(self, run: WorkerRun) -> None:
        self.active_run = run  # read by tests and by nobody else

    def compare_again(self, tolerance: Tolerance, then: Callable[[Document | None, list[ValueDiff]], None]) -> None:
        """The two runs shown compared with another tolerance; ``then`` gets the differences, unless another run
        or document came since."""
        s = self.shown
        a, b, doc, pairs = s.result, s.other, self.document.doc, s.pairs
        assert a is not None and b is not None

        def work(progress: ProgressFn, token: CancelToken) -> list[ValueDiff]:
            return compare_runs(a, b, pairs, tolerance, progress, token)

        def finished(diffs: list[ValueDiff]) -> None:
            self.end()
            if self.shown.result is a and self.document.doc is doc:
                then(doc, diffs)

        task = Task(work, f"Comparing with {tolerance.text()}", parent=self)
        task.finished.connect(finished)
        task.failed.connect(lambda exc, tb: self._on_failed(exc, tb))
        task.cancelled.connect(self._on_cancelled)
        self.begin(task)

    # -- how it ended ----------------------------------------------------------------------------
    def _on_finished(self, doc: Document, jobs: list[Job], outcome: Outcome) -> None:
        self.end()
        if self.document.doc is not doc:
            for r in outcome.results:
                r.cleanup()
            return
        self.finished.emit(doc, [job.label for job in jobs], outcome)

    def _on_failed(self, exc: object, tb: str, doc: Document | None = None, jobs: list[Job] | None = None) -> None:
        self.end()
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
            self.canvas.reveal_node("", exc.node)  # the node onnxruntime (or the reference evaluator) says failed
        if isinstance(exc, RunError) and partial is not None and current is not None and jobs:
            count = len(partial.values) + len(partial.structured)
            self.report_failure(f"{sentence(exc.message)} The {count} values computed before that node are shown "
                                "in the Activations panel.", exc.details or tb)
        elif isinstance(exc, OnnxvizError):
            self.report_failure(exc.message, exc.details or tb)
        else:
            self.report_failure(f"the run failed ({type(exc).__name__}: {exc}).", tb)

    def _show_partial(self, doc: Document, jobs: list[Job], partial: RunResult, error: RunError) -> None:
        """The values computed before the run failed, shown like a result's with the failure as a note."""
        partial.notes.insert(0, f"The run failed: {sentence(error.message)} These are the values computed before "
                                "that node (the nodes that do not depend on it).")
        self.finished.emit(doc, [jobs[0].label], Outcome([partial], None))

    def _offer_a_part(self, doc: Document, error: CaptureTooBig) -> None:
        """Ask which part to capture; Run starts the same run again capturing it."""
        from onnxviz.ui.run.capture_offer import CaptureOfferDialog

        assert self._last_start is not None and self._last_start[0] is doc
        _, feeds, compare, other_path = self._last_start
        dialog = CaptureOfferDialog(error, self._capture_parts(doc), self.window)
        self.offer_dialog = dialog
        self.status.show_message(sentence(error.message), 10000)

        def accepted() -> None:
            if self.document.doc is doc and not self.busy():
                self.start(doc, feeds, compare, other_path, dialog.chosen)

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
        self.end()
        self.status.show_message("Run cancelled.", 5000)

    def report_failure(self, message: str, details: str = "") -> None:
        text = sentence(message)
        self.status.show_message(text, 10000)
        # onnxruntime's messages quote node and value names whole: escaped and cut, never markup
        box = QMessageBox(QMessageBox.Icon.Warning, "Cannot Run the Model", message_text(text), parent=self.window)
        box.setTextFormat(Qt.TextFormat.PlainText)
        if details:
            box.setDetailedText(details)
        box.open()
        self.failure_box = box
        self.failed.emit(message)
