"""Background validation after load and after every edit: debounced, stale results dropped.

The checker and shape inference are C++ that holds the GIL for its whole run (over a second on
a 100k-node model), so they run in a worker process (:mod:`onnxviz.model.procpool`); a thread here
takes the model's bytes, hashes them, waits for the answer and unpacks it. The bytes are free while
the document is unedited (the file's own); after an edit they are serialized in slices in that
thread, so the GUI thread keeps running. Results are remembered by the bytes' digest, so undo and
redo back to a state already validated get their problems and shapes at once.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections import OrderedDict
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal

from onnxviz.model.document import Change, Document
from onnxviz.model.errors import Cancelled, OnnxvizError
from onnxviz.model.problems import Problem, Severity
from onnxviz.model.procpool import WorkerProcess, shared_worker
from onnxviz.model.progress import CancelToken, ProgressFn
from onnxviz.model.validation import InferenceResult, ValidationResult, unpack
from onnxviz.model.worker_jobs import digest_of, run_on_model, validate_job
from onnxviz.ui.tasks import Task, waiting_pool

KNOWN_STATES = 16  # validated model states remembered for undo/redo
PASS_STARTED = "checking"  # progress text the task reports when a real pass (not a remembered one) begins


@dataclasses.dataclass
class _Outcome:
    digest: bytes
    result: ValidationResult
    fresh: bool  # computed now, not remembered


State = int  # the document's generation: its bytes change with it and nothing else
_serializing = threading.Lock()  # validation and the model summary ask for the same state: one serialization


def document_state(doc: Document) -> State:
    """What the bytes of ``doc`` depend on."""
    return doc.generation


def document_bytes(doc: Document) -> bytes:
    """The document's bytes, on the GUI thread (see ``Document.serialize``). Raises OnnxvizError over 2 GiB."""
    return doc.serialize()


def document_bytes_in_thread(doc: Document, state: State, token: CancelToken) -> bytes:
    """The bytes of ``doc`` in ``state``, for background readers (validation, the model summary):
    serialized a slice at a time, so the GUI thread keeps running (123k nodes: ~110 ms of held GIL
    otherwise). Raises Cancelled if the document leaves ``state`` meanwhile: its next state gets its
    own pass. Raises OnnxvizError over 2 GiB."""

    def pause() -> None:
        token.check()
        if document_state(doc) != state:
            raise Cancelled()
        time.sleep(0)  # lets the GUI thread take the GIL

    with _serializing:
        pause()
        data = doc.serialize(pause)
        pause()
        return data


def document_source(doc: Document) -> Path | None:
    """The file that holds the document's bytes (unedited since opened or saved), if any."""
    return doc.path if doc.path is not None and doc.file_matches() else None


def document_key(doc: Document) -> str:
    """Names the document to the worker process, which remembers its latest inferred types."""
    return f"{os.getpid()}:{id(doc)}"


class ValidationService(QObject):
    """Runs :func:`onnxviz.model.validation.validate` in the worker process for the current document.

    At most one pass runs and one waits: a newer request cancels the waiting one, and the
    result of a pass overtaken by edits is dropped (by generation).
    """

    started = Signal()
    finished = Signal(object)  # ValidationResult that was applied

    def __init__(self, debounce_ms: int = 30, parent: QObject | None = None,
                 worker: WorkerProcess | None = None) -> None:
        super().__init__(parent)
        self.doc: Document | None = None
        self.worker = worker if worker is not None else shared_worker()
        self._task: Task | None = None
        self._known: OrderedDict[bytes, ValidationResult] = OrderedDict()  # model digest -> result
        self._debounce_ms = debounce_ms
        self._timer = QTimer(self, singleShot=True, interval=debounce_ms)
        self._timer.timeout.connect(self._start)

    def set_document(self, doc: Document | None) -> None:
        if self.doc is not None:
            self.doc.changed.disconnect(self._on_changed)
        self.doc = doc
        self._known.clear()
        if self._task is not None:
            self._task.cancel()
        if doc is not None:
            doc.changed.connect(self._on_changed)
            self._timer.start()

    def _on_changed(self, change: Change) -> None:
        if change.kind.changes_model:
            # idle: start on the next event-loop turn (a burst such as a jump in the history is one
            # pass); while a pass runs, wait a little so a stream of edits does not queue stale work
            running = self._task is not None and not self._task.done
            self._timer.start(self._debounce_ms if running or self._timer.isActive() else 0)

    def _start(self) -> None:
        doc = self.doc
        if doc is None:
            return
        if self._task is not None:
            self._task.cancel()
        generation, state = doc.generation, document_state(doc)
        known = dict(self._known)
        worker, source, key = self.worker, document_source(doc), document_key(doc)

        def work(progress: ProgressFn, token: CancelToken) -> _Outcome:
            try:  # the worker gets bytes of its own: the GUI thread may edit the document meanwhile
                data = document_bytes_in_thread(doc, state, token)
            except OnnxvizError:  # over 2 GiB: protobuf cannot serialize it; the checker could not either
                raise Cancelled() from None
            digest = digest_of(data)
            if digest in known:
                return _Outcome(digest, dataclasses.replace(known[digest], generation=generation), False)
            progress(0.0, PASS_STARTED)
            packed = run_on_model(worker, validate_job, data, digest, source, generation, key, token=token)
            token.check()
            return _Outcome(digest, unpack(packed), True)

        task = Task(work, "Validating", parent=self)
        task.progress.connect(lambda _f, text: self._on_progress(task, text))
        task.finished.connect(self._on_outcome)
        task.failed.connect(lambda exc, _tb: self._on_failed(generation, exc))
        self._task = task
        task.start(waiting_pool())

    def _on_progress(self, task: Task, text: str) -> None:
        if text == PASS_STARTED and task is self._task:
            self.started.emit()

    def _on_outcome(self, outcome: _Outcome) -> None:
        if outcome.fresh:
            self._known[outcome.digest] = outcome.result
            while len(self._known) > KNOWN_STATES:
                self._known.popitem(last=False)
        else:
            self._known.move_to_end(outcome.digest)
        self._apply(outcome.result)

    def _on_failed(self, generation: int, exc: object) -> None:
        """The pass could not run (e.g. the worker process died): say so where problems are listed."""
        doc = self.doc
        if doc is None:
            return
        text = exc.message if isinstance(exc, OnnxvizError) else f"validation failed: {exc}."
        problem = Problem(Severity.WARNING, f"The model could not be checked: {text}", source="validation")
        self._apply(ValidationResult(generation, InferenceResult(dict(doc.index.inferred)), [problem]))

    def _apply(self, result: ValidationResult) -> None:
        if self.doc is not None and self.doc.apply_validation(result):
            self.finished.emit(result)

    @property
    def task(self) -> Task | None:
        """The running (or last) validation task, e.g. to show its progress."""
        return self._task

    @property
    def busy(self) -> bool:
        return self._task is not None and not self._task.done or self._timer.isActive()
