"""Background validation after load and after every edit: debounced, stale results dropped.

The checker and shape inference are C++ that holds the GIL for its whole run (over a second on
a 100k-node model), so they run in a worker process (:mod:`onnxviz.model.background.procpool`); a thread here
takes the model's bytes, hashes them, waits for the answer and unpacks it. The bytes are free while
the document is unedited (the file's own); after an edit they are serialized in slices in that
thread, so the GUI thread keeps running. Results are remembered by the bytes' digest, so undo and
redo back to a state already validated get their problems and shapes at once.

A pass shows the checker's and the schema checks' problems first (:attr:`ValidationService.first_found`),
shape inference's with its result. Opening a file starts its analysis in the worker processes at once,
alongside the open (:meth:`ValidationService.prefetch`); the opened document's first pass takes those
results when its bytes are the ones analysed.

Then, when these checks found no error, onnxruntime creates a session for the state (a second,
slower pass: ~0.5 s at 12k nodes) in a worker process of its own, so the next edit's checks never
wait for it; what it refuses is added to the problems (see :mod:`onnxviz.model.graph.session_check`).
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from PySide6.QtCore import QObject, QTimer, Signal

from onnxviz.model.background.contained import RUNTIME as RUNTIME_STEP
from onnxviz.model.background.contained import NativeCrash, crash_named
from onnxviz.model.background.early import EarlyAnalysis, analysed_early, started_early, validation_of
from onnxviz.model.background.jobs import (
    first_problems_job,
    run_on_model,
    runtime_job,
    validate_job,
)
from onnxviz.model.background.procpool import (
    RUNTIME,
    WorkerProcess,
    shared_worker,
)
from onnxviz.model.document import Change, Document
from onnxviz.model.errors import Cancelled, OnnxvizError
from onnxviz.model.graph.session_check import SOURCE as RUNTIME_SOURCE
from onnxviz.model.graph.session_check import skipped_note
from onnxviz.model.graph.validation import (
    InferenceResult,
    PackedValidation,
    ValidationResult,
    has_error,
    unpack,
)
from onnxviz.model.io.disk import atomic_write_with
from onnxviz.model.problems import Problem, Severity
from onnxviz.model.progress import CancelToken, ProgressFn
from onnxviz.ui.tasks import Task, waiting_pool

T = TypeVar("T")
KNOWN_STATES = 16  # validated model states remembered for undo/redo
PASS_STARTED = "checking"  # progress text the task reports when a real pass (not a remembered one) begins


@dataclasses.dataclass
class _Outcome:
    digest: bytes
    result: ValidationResult
    fresh: bool  # computed now, not remembered


_serializing = threading.Lock()  # validation and the model summary ask for the same state: one serialization


def document_bytes_in_thread(doc: Document, generation: int, token: CancelToken) -> bytes:
    """The bytes of ``doc`` in model state ``generation`` for background readers (validation, the model summary;
    a big model's without its weights' data, see ``Document.analysis_bytes``): serialized a slice at a time,
    so the GUI thread keeps running (123k nodes: ~110 ms of held GIL otherwise). Raises Cancelled if the document
    leaves that state meanwhile: its next state gets its own pass. Raises OnnxvizError over 2 GiB."""

    pause = _in_state(doc, generation, token)
    with _serializing:
        pause()
        data = doc.analysis_bytes(pause)
        pause()
        return data


def document_model_in_thread(doc: Document, generation: int, token: CancelToken, folder: Path) -> bytes | Path:
    """The model of ``doc`` in state ``generation`` for a run's worker process, made in a background thread: its
    bytes at hand (the file's), or serialized in slices, or for an edited big model written a weight at a time
    into ``folder``/model.onnx (its path returned: a 1 GiB model was serialized on the GUI thread, 1.7 s, and
    handed over as one 1 GiB bytes object). Raises Cancelled if the document leaves that state meanwhile."""

    pause = _in_state(doc, generation, token)
    pause()
    output = doc.model_output(pause)
    if isinstance(output, bytes):
        return output
    path = folder / "model.onnx"
    atomic_write_with(path, lambda f: output.write(f.write, lambda _size: pause()), output.size, durable=False,
                      verb="write", shown="the model for the run")
    pause()  # no edit while it was written: the file is that state's
    return path


def handed_model(doc: Document, generation: int, token: CancelToken, folder: Path,
                 edited: Callable[[], OnnxvizError]) -> bytes | Path:
    """:func:`document_model_in_thread` for a worker process that the document's edit stops: ``edited()`` raised
    when the document left state ``generation`` meanwhile (Cancelled only when ``token`` was cancelled)."""
    try:
        return document_model_in_thread(doc, generation, token, folder)
    except Cancelled:
        if token.cancelled:
            raise
        raise edited() from None


def _in_state(doc: Document, generation: int, token: CancelToken) -> Callable[[], None]:
    """A background serialization's ``pause``: raises Cancelled once ``doc`` leaves state ``generation`` (or
    ``token`` is cancelled), and lets the other threads run."""

    def pause() -> None:
        if doc.generation != generation:
            raise Cancelled()
        token.pause()

    return pause


def document_source(doc: Document) -> Path | None:
    """The file that holds the bytes background readers get (the document's own, unedited since opened or
    saved, when they are not a big model's analysis bytes without its weights), if any."""
    return doc.path if doc.path is not None and doc.analyses_whole() and doc.file_matches() else None


def document_key(doc: Document) -> str:
    """Names the document to the worker process, which remembers its latest inferred types."""
    return f"{os.getpid()}:{id(doc)}"


class ValidationService(QObject):
    """Runs :func:`onnxviz.model.graph.validation.validate` in the worker process for the current document.

    At most one pass runs and one waits: a newer request cancels the waiting one, and the
    result of a pass overtaken by edits is dropped (by generation).
    """

    started = Signal()
    first_found = Signal(int, object)  # (generation, problems): a pass's first problems, before its result
    finished = Signal(object)  # ValidationResult that was applied
    runtime_checked = Signal(object)  # onnxruntime's problems (a list) for the current state

    def __init__(self, debounce_ms: int = 30, parent: QObject | None = None,
                 worker: WorkerProcess | None = None, runtime_worker: WorkerProcess | None = None) -> None:
        super().__init__(parent)
        self.doc: Document | None = None
        self.worker = worker if worker is not None else shared_worker()
        self.runtime_worker = runtime_worker if runtime_worker is not None else shared_worker(RUNTIME)
        self._task: Task | None = None
        self._runtime_task: Task | None = None
        self._known: OrderedDict[bytes, ValidationResult] = OrderedDict()  # model digest -> result
        self._runtime: OrderedDict[bytes, list[Problem]] = OrderedDict()  # model digest -> onnxruntime's problems
        self._debounce_ms = debounce_ms
        self._timer = QTimer(self, singleShot=True, interval=debounce_ms)
        self._timer.timeout.connect(self._start)
        self._early: EarlyAnalysis | None = None
        self._checked_early: EarlyAnalysis | None = None  # the one the last pass took: its onnxruntime check too
        self._early_lock = threading.Lock()  # prefetch is called from the loading thread
        self.first_found.connect(self._on_first_found)

    def prefetch(self, path: Path) -> None:
        """Start analysing the model file at ``path`` in the worker processes now, while the window opens
        it (any thread may call this): the pass for the opened document takes these results when its bytes
        are the file's (the same digest), so the checks, shape inference and the model's figures run
        alongside the open. An analysis handed over by :meth:`adopt` for the file is taken over."""
        with self._early_lock:
            at_hand = self._early
        if at_hand is not None and at_hand.claim(path, self.worker, self.runtime_worker):
            return
        if not analysed_early(path):
            return
        self._swap_early(started_early(path, self.worker, self.runtime_worker))

    def adopt(self, early: EarlyAnalysis) -> None:
        """Own ``early``, an analysis started before this window asked for one (the command's, of the file it
        opens: :func:`~onnxviz.model.background.early.analyse_early`); the open of that file takes it over."""
        self._swap_early(early)

    @property
    def early(self) -> EarlyAnalysis | None:
        """The analysis of the file being opened, until the opened document takes it."""
        return self._early

    def _drop_early(self) -> None:
        self._swap_early(None)

    def _swap_early(self, early: EarlyAnalysis | None) -> None:
        """Put ``early`` in place of the early analysis at hand, which is cancelled."""
        with self._early_lock:
            before, self._early = self._early, early
        if before is not None:
            before.cancel()

    def _take_early(self, doc: Document) -> EarlyAnalysis | None:
        """The early analysis, if it was of the file ``doc`` holds (used once)."""
        with self._early_lock:
            early, self._early = self._early, None
        if early is not None and _is_of(early, doc):
            return early
        if early is not None:
            early.cancel()
        return None

    def _hand_early(self, doc: Document) -> None:
        """The analysis at hand becomes ``doc``'s when it is of the file ``doc`` holds: its Model panel takes the
        figures from it (``Document.early``); the document's first pass takes the rest (:meth:`_take_early`)."""
        with self._early_lock:
            early = self._early
        if early is not None and _is_of(early, doc):
            doc.early = early

    def set_document(self, doc: Document | None) -> None:
        if self.doc is not None:
            self.doc.changed.disconnect(self._on_changed)
        self.doc = doc
        self._known.clear()
        self._runtime.clear()
        if doc is None:
            self._drop_early()
        else:
            self._hand_early(doc)
        self._cancel_runtime()
        if self._task is not None:
            self._task.cancel()
        if doc is not None:
            doc.changed.connect(self._on_changed)
            analysed = self._analysed_already(doc)
            if analysed is None:
                self._timer.start()
            else:
                self._timer.stop()
                self._on_outcome(analysed)

    def _analysed_already(self, doc: Document) -> _Outcome | None:
        """The first pass of ``doc``, just opened, when the analysis started as its file opened is done with its
        bytes already (a small model's, as a rule: the worker processes are done before the window is built):
        taken at once, on the GUI thread, so that the window shows the document with its inferred types and its
        problems (its first layout labels the edges with them: no label job and no frame more). None when that
        analysis is not done (a big model's): the pass waits for it in a thread, so the layout need not."""
        with self._early_lock:
            early = self._early
        data = doc.known_bytes() if early is not None and doc.analyses_whole() and _is_of(early, doc) else None
        if early is None or data is None or not early.done:
            return None
        digest = doc.analysis_digest(data)  # the pass's, hashed once: the Model panel's figures ask for it too
        packed = early.validation_done(digest)
        if packed is None:
            return None
        self._checked_early = self._take_early(doc)
        return _Outcome(digest, unpack(dataclasses.replace(packed, generation=doc.generation)), True)

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
        self._cancel_runtime()
        generation = doc.generation
        known = dict(self._known)
        worker, source, key = self.worker, document_source(doc), document_key(doc)
        early = self._checked_early = self._take_early(doc)

        def found_first(problems: list[Problem]) -> None:
            self.first_found.emit(generation, problems)  # shown on the GUI thread, before the result

        def work(progress: ProgressFn, token: CancelToken) -> _Outcome:
            try:  # the worker gets bytes of its own: the GUI thread may edit the document meanwhile
                data = document_bytes_in_thread(doc, generation, token)
            except OnnxvizError:  # over 2 GiB: protobuf cannot serialize it; the checker could not either
                raise Cancelled() from None
            digest = doc.analysis_digest(data)  # hashed once: the Model panel asks for it too
            if digest in known:
                return _Outcome(digest, dataclasses.replace(known[digest], generation=generation), False)
            progress(0.0, PASS_STARTED)
            packed = _early_result(early, digest, found_first, token) if early is not None else None
            if packed is None:
                try:
                    packed = crash_named(lambda: _validation(worker, data, digest, source, generation, key,
                                                             found_first, token), data, token=token)
                except NativeCrash as crash:  # a problem on its node, as any other; no types then
                    return _Outcome(digest, ValidationResult(generation, InferenceResult(), [crash.cause.problem()]),
                                    True)
            token.check()
            return _Outcome(digest, unpack(dataclasses.replace(packed, generation=generation)), True)

        task = Task(work, "Validating", parent=self)
        task.progress.connect(lambda _f, text: self._on_progress(task, text))
        task.finished.connect(self._on_outcome)
        task.failed.connect(lambda exc, _tb: self._on_failed(generation, exc))
        self._task = task
        task.start(waiting_pool())

    def _on_first_found(self, generation: int, problems: list[Problem]) -> None:
        """A pass's first problems (the checker's and the schema checks'), shown until its result comes."""
        doc = self.doc
        if doc is not None and self._task is not None and not self._task.done:
            doc.apply_first_problems(generation, problems)

    def _on_progress(self, task: Task, text: str) -> None:
        if text == PASS_STARTED and task is self._task:
            self.started.emit()

    def _on_outcome(self, outcome: _Outcome) -> None:
        if outcome.fresh:
            _remember(self._known, outcome.digest, outcome.result)
        else:
            self._known.move_to_end(outcome.digest)
        runtime = self._runtime.get(outcome.digest)
        doc = self.doc
        checked = runtime is None and doc is not None and not has_error(
            doc.load_problems + doc.index.problems + outcome.result.problems)  # else onnxruntime would repeat an error
        skipped = skipped_note(doc.model) if checked and doc is not None else None
        if skipped is not None:  # too big for onnxruntime's check: said at once, no process started for it
            _remember(self._runtime, outcome.digest, [skipped])
            self._apply(_with(outcome.result, [skipped]))
            self.runtime_checked.emit([skipped])
        elif runtime is None:  # started before ``finished`` is emitted: ``busy`` says whether it is to come
            self._apply(outcome.result, then=lambda: self._start_runtime(outcome))
        else:
            self._runtime.move_to_end(outcome.digest)
            self._apply(_with(outcome.result, runtime))

    # -- onnxruntime's check, the second pass ------------------------------------------------
    def _start_runtime(self, outcome: _Outcome) -> None:
        doc = self.doc
        if doc is None or doc.generation != outcome.result.generation or has_error(doc.problems):
            return  # an edit came meanwhile, or onnxruntime would only repeat an error shown already
        generation, result, digest = doc.generation, outcome.result, outcome.digest
        worker, source, early = self.runtime_worker, document_source(doc), self._checked_early

        def work(_progress: ProgressFn, token: CancelToken) -> list[Problem]:
            checked = early.runtime_of(digest, token) if early is not None else None
            if checked is not None:  # the analysis started as the file opened checked these bytes
                return checked
            data = document_bytes_in_thread(doc, generation, token)  # the bytes the first pass had
            try:
                problems: list[Problem] = crash_named(
                    lambda: run_on_model(worker, runtime_job, data, digest, source, token=token), data, (RUNTIME_STEP,),
                    token)
            except NativeCrash as crash:
                return [crash.cause.problem()]
            return problems

        task = Task(work, "Checking with onnxruntime", parent=self)
        task.finished.connect(lambda problems: self._on_runtime(digest, result, problems))
        task.failed.connect(lambda exc, _tb: self._on_runtime_failed(result, exc))
        self._runtime_task = task
        task.start(waiting_pool())

    def _on_runtime(self, digest: bytes, result: ValidationResult, problems: list[Problem]) -> None:
        _remember(self._runtime, digest, problems)
        if problems:
            self._apply(_with(result, problems))
        self.runtime_checked.emit(problems)

    def _on_runtime_failed(self, result: ValidationResult, exc: object) -> None:
        """The session crashed or ran out of memory in its process: say so, the edits are safe."""
        text = exc.message if isinstance(exc, OnnxvizError) else f"{exc}."
        problem = Problem(Severity.WARNING, f"onnxruntime's check could not finish: {text}", RUNTIME_SOURCE)
        self._apply(_with(result, [problem]))
        self.runtime_checked.emit([problem])

    def _cancel_runtime(self) -> None:
        if self._runtime_task is not None:
            self._runtime_task.cancel()
            self._runtime_task = None

    def _on_failed(self, generation: int, exc: object) -> None:
        """The pass could not run (e.g. the worker process died): say so where problems are listed."""
        doc = self.doc
        if doc is None:
            return
        text = exc.message if isinstance(exc, OnnxvizError) else f"validation failed: {exc}."
        problem = Problem(Severity.WARNING, f"The model could not be checked: {text}", source="validation")
        self._apply(ValidationResult(generation, InferenceResult(dict(doc.index.inferred)), [problem]))

    def _apply(self, result: ValidationResult, then: Callable[[], None] | None = None) -> None:
        if self.doc is not None and self.doc.apply_validation(result):
            if then is not None:
                then()
            self.finished.emit(result)

    @property
    def task(self) -> Task | None:
        """The running (or last) validation task, e.g. to show its progress."""
        return self._task

    @property
    def busy(self) -> bool:
        """A pass, onnxruntime's included, is running or about to start."""
        return any(t is not None and not t.done for t in (self._task, self._runtime_task)) or self._timer.isActive()


def _validation(worker: WorkerProcess, data: bytes, digest: bytes, source: Path | None, generation: int, key: str,
                found_first: Callable[[list[Problem]], None], token: CancelToken) -> PackedValidation:
    """A pass in the worker: its first problems (passed on as they come), then the rest."""
    found_first(run_on_model(worker, first_problems_job, data, digest, source, generation, key, token=token))
    packed: PackedValidation = run_on_model(worker, validate_job, data, digest, source, generation, key, token=token)
    return packed


def _is_of(early: EarlyAnalysis, doc: Document) -> bool:
    """Whether ``early`` analysed the file ``doc`` was read from, as it still is."""
    return doc.path is not None and doc.path.absolute() == early.path and doc.file_matches()


def _early_result(early: EarlyAnalysis, digest: bytes, found_first: Callable[[list[Problem]], None],
                  token: CancelToken) -> PackedValidation | None:
    """The early analysis's validation (its first problems passed on as they come) if it was of the bytes
    ``digest`` names, else None (the file changed on disk meanwhile, or it could not be analysed)."""
    try:
        futures = early.wait(token)
        if futures is None:
            return None
        first = early.checking.wait(futures[0], token)
        if first[0] != digest:
            early.cancel()
            return None
        found_first(first[1])
        packed = validation_of(first, early.inferring.wait(futures[1], token), digest)
        if packed is None:  # the file changed between the two workers' reads
            early.cancel()
        return packed
    except Cancelled:
        early.cancel()
        raise
    except Exception:  # noqa: BLE001 - e.g. a file the worker could not parse: the usual pass says why
        return None


def _with(result: ValidationResult, problems: list[Problem]) -> ValidationResult:
    """``result`` with more problems (a copy: the remembered result stays as the first pass left it)."""
    return dataclasses.replace(result, problems=result.problems + problems)


def _remember(table: OrderedDict[bytes, T], digest: bytes, value: T) -> None:
    table[digest] = value
    table.move_to_end(digest)
    while len(table) > KNOWN_STATES:
        table.popitem(last=False)
