"""The analysis of a model file started as it is being opened, before the opening window has its bytes:
shape inference then onnxruntime's check in one worker process; the checker's problems, then the figures' part
that needs no types, then the rest of the figures in the other (:mod:`onnxviz.model.background.jobs`). The
window's validation, its onnxruntime check and its Model panel take these results when the bytes they analyse are
the ones analysed here. Each analysis has one owner at a time, handed on explicitly: the window's validation service
that started it (or was handed it by the command), then the document read from that file (``Document.early``);
two windows opening files one after the other each keep their own.

Nothing here imports onnx: the command starts the analysis as soon as its workers are forked, while it imports Qt.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from onnxviz.model.background.procpool import (
    CHECKS,
    EDITS,
    JOBS_MODULE,
    POLL_S,
    RUNTIME,
    WorkerProcess,
    fork_workers,
    run_named,
    shared_worker,
    start_workers,
)
from onnxviz.model.errors import Cancelled, OnnxvizError
from onnxviz.model.forking import start_method
from onnxviz.model.problems import Problem, Severity
from onnxviz.model.progress import CancelToken

if TYPE_CHECKING:
    from onnxviz.model.background.jobs import PackedFigures
    from onnxviz.model.graph.validation import PackedValidation


# Which files a window analyses as it opens them (see ValidationService.prefetch): smaller ones are analysed in well
# under a second after the open; bigger ones reach analysis in another form (without weights). The file the command
# opens is analysed at its start whatever its size up to the maximum (see analyse_early).
EARLY_MIN_BYTES = 16 << 20
EARLY_MAX_BYTES = 64 << 20


class EarlyAnalysis:
    """The analysis of a file started as it is being opened, in both worker processes: the runtime worker infers
    the types, then, when no check found an error, finds what onnxruntime refuses (the window's second pass, the
    longest job: 12k nodes, ~0.5 s); meanwhile the checks worker finds the first problems, then the figures' part
    that needs no types, then, once the types come, the rest of the figures. Jobs are queued from a thread of its
    own, which then relays the types; by name (:func:`~onnxviz.model.background.procpool.run_named`): their module
    imports onnx, which this process may not have imported yet."""

    Futures = tuple["Future[tuple[bytes, list[Problem]]]", "Future[tuple[bytes, PackedValidation]]"]

    def __init__(self, path: Path, checks: WorkerProcess, runtime: WorkerProcess) -> None:
        self.path = path
        self.checking, self.inferring = checks, runtime
        self.workers = (checks, runtime)
        self.unclaimed = False  # started before a window asked for it (analyse_early): see claim
        self.ready = threading.Event()  # set once the jobs are queued (or could not be)
        self.futures: EarlyAnalysis.Futures | None = None  # (first problems, inference)
        self.figures_queued = threading.Event()  # set once the figures' job is queued (or will not be)
        self.runtime_queued = threading.Event()  # the same for onnxruntime's check
        self.figures: tuple[bytes, Future[PackedFigures]] | None = None  # (digest, its figures)
        self.runtime: tuple[bytes, Future[list[Problem]]] | None = None  # (digest, onnxruntime's problems)
        self._extra: list[Future[Any]] = []  # the later jobs
        self._token = CancelToken()
        self._lock = threading.Lock()
        threading.Thread(target=self._submit, name="onnxviz-early-analysis", daemon=True).start()

    def _submit(self) -> None:
        name = str(self.path)
        try:
            inference = self.inferring.submit(run_named, JOBS_MODULE, "early_inference_job", name)  # the longer path
            first = self.checking.submit(run_named, JOBS_MODULE, "early_first_job", name)
            structure = self.checking.submit(run_named, JOBS_MODULE, "early_structure_job", name)
            futures: EarlyAnalysis.Futures | None = (first, inference)
        except (OnnxvizError, Cancelled):  # no worker, or the application is closing: no early analysis
            futures, structure = None, None
        with self._lock:
            self.futures = futures
            self._extra += [structure] if structure is not None else []
            if self._token.cancelled:
                self._cancel_locked()
        self.ready.set()
        try:
            if futures is not None:
                self._relay_types(futures[1])
        finally:
            self.figures_queued.set()
            self.runtime_queued.set()

    def _relay_types(self, inference: Future[tuple[bytes, PackedValidation]]) -> None:
        """Once the types are inferred: onnxruntime's check queued first (the open's longest job, waiting for this
        answer), then the types handed to the checks worker, for the figures."""
        try:
            digest, packed = self.inferring.wait(inference, self._token)
        except Exception:  # noqa: BLE001 - cancelled, or inference failed: the figures job works alone
            return
        self._queue_runtime(digest, packed.problems)
        try:
            figures = self.checking.submit(run_named, JOBS_MODULE, "early_figures_job", str(self.path), digest,
                                           packed.types)
        except Exception:  # noqa: BLE001 - cancelled: the figures job works alone
            return
        with self._lock:
            self.figures = (digest, figures)
            self._extra.append(figures)
            if self._token.cancelled:
                self._cancel_locked()

    def _queue_runtime(self, digest: bytes, inferred: list[Problem]) -> None:
        """After inference, in its process, onnxruntime's check of the state ``digest`` when no check found an
        error."""
        try:
            first_digest, first = self.checking.wait(self.futures[0], self._token) if self.futures else (b"", [])
            if first_digest != digest or any(p.severity is Severity.ERROR for p in first + inferred):
                return
            runtime = self.inferring.submit(run_named, JOBS_MODULE, "early_runtime_job", str(self.path), digest)
        except Exception:  # noqa: BLE001 - cancelled, or the first checks failed: the window's pass checks it
            return
        with self._lock:
            self.runtime = (digest, runtime)
            self._extra.append(runtime)
            if self._token.cancelled:
                self._cancel_locked()

    def claim(self, path: Path, checks: WorkerProcess, runtime: WorkerProcess) -> bool:
        """Take over this analysis, started before a window asked for one (:func:`analyse_early`), for the open
        of ``path`` with these workers: whether it is of that file in them and was not taken yet."""
        if not self.unclaimed or self.path != path.absolute() or self.workers != (checks, runtime):
            return False
        self.unclaimed = False
        return True

    def wait(self, token: CancelToken) -> EarlyAnalysis.Futures | None:
        """The queued jobs (in a background thread, once queued), or None."""
        while not self.ready.wait(POLL_S):
            token.check()
        return self.futures

    @property
    def done(self) -> bool:
        """Both jobs of the validation (the first problems, inference) are done (or gave up)."""
        futures = self.futures if self.ready.is_set() else None
        return futures is not None and all(f.done() for f in futures)

    def validation_done(self, digest: bytes) -> PackedValidation | None:
        """The validation of the state ``digest`` (the first problems, then inference's result) when both jobs are
        done already and read those bytes, else None; never waits (the GUI thread asks as a document is shown)."""
        futures = self.futures if self.done else None
        if futures is None or any(f.cancelled() or f.exception() is not None for f in futures):
            return None
        return validation_of(futures[0].result(), futures[1].result(), digest)

    def figures_of(self, digest: bytes, token: CancelToken) -> PackedFigures | None:
        """The figures of the state ``digest`` (in a background thread), if this analysis made them, else None."""
        while not self.figures_queued.wait(POLL_S):
            token.check()
        with self._lock:
            figures, self.figures = self.figures, None  # taken once: the panel keeps them
        if figures is None or figures[0] != digest:
            return None
        try:
            return self.checking.wait(figures[1], token)
        except Cancelled:
            token.check()  # the caller's, raised; else this analysis was cancelled
            return None
        except Exception:  # noqa: BLE001 - e.g. the file changed under the checks worker: computed afresh
            return None

    def runtime_of(self, digest: bytes, token: CancelToken) -> list[Problem] | None:
        """What onnxruntime refuses in the state ``digest`` (in a background thread: waits for it), if this
        analysis checked it, else None."""
        while not self.runtime_queued.wait(POLL_S):
            token.check()
        with self._lock:
            runtime, self.runtime = self.runtime, None  # taken once
        if runtime is None or runtime[0] != digest:
            return None
        try:
            problems: list[Problem] = self.inferring.wait(runtime[1], token)
            return problems
        except Cancelled:
            token.check()
            return None
        except Exception:  # noqa: BLE001 - e.g. the file changed under the runtime worker: checked afresh
            return None

    def cancel(self) -> None:
        with self._lock:
            self._token.cancel()
            self._cancel_locked()

    def _cancel_locked(self) -> None:
        for future in [*(self.futures or ()), *self._extra]:
            future.cancel()  # still queued: never runs


def validation_of(first: tuple[bytes, list[Problem]], inference: tuple[bytes, PackedValidation],
                  digest: bytes) -> PackedValidation | None:
    """The validation the two jobs of an analysis made, ``first`` (digest, first problems) and ``inference``
    (digest, its result), when both read the bytes ``digest`` names, else None (the file changed meanwhile)."""
    (first_digest, problems), (inference_digest, packed) = first, inference
    if first_digest != digest or inference_digest != digest:
        return None
    return replace(packed, problems=problems + packed.problems)


def early_figures(early: EarlyAnalysis | None, digest: bytes, token: CancelToken) -> PackedFigures | None:
    """The Model panel's figures of the state ``digest`` of a document, when ``early``, the analysis started as
    its file was opened (``Document.early``), made them (in a background thread: waits for them), else None."""
    return early.figures_of(digest, token) if early is not None else None


def analysed_early(path: Path) -> bool:
    """Whether the file at ``path`` is analysed as it opens (see :data:`EARLY_MIN_BYTES`)."""
    try:
        return EARLY_MIN_BYTES <= path.stat().st_size <= EARLY_MAX_BYTES
    except OSError:  # no such file: the open says so
        return False


def started_early(path: Path, checks: WorkerProcess, runtime: WorkerProcess) -> EarlyAnalysis:
    """The analysis of the file at ``path``, started now in these workers: the caller owns it."""
    return EarlyAnalysis(path.absolute(), checks, runtime)


def start_analysis_workers() -> None:
    """As the application starts, before any thread: its worker processes, as forks of it where they can be
    (see :func:`~onnxviz.model.background.procpool.fork_workers`), else spawned, importing the jobs' module. The
    forks get onnx's table of operator schemas built (see :func:`_build_schemas`)."""
    if start_method() == "fork":
        _build_schemas()
    fork_workers((CHECKS, RUNTIME, EDITS))
    start_workers((CHECKS, RUNTIME, EDITS), JOBS_MODULE)


def _build_schemas() -> None:
    """Build onnx's table of operator schemas now. onnx builds it on first use, in each process that checks,
    infers shapes or looks a schema up (~15 ms of CPU): the window's process does as it opens a file, and each
    worker did again for its first job; built once before they are forked, they have it."""
    import onnx.defs

    onnx.defs.get_schema("Identity", "")


def analyse_early(path: Path) -> EarlyAnalysis | None:
    """As the application starts with the file at ``path`` to open, before its window is built: the file's
    analysis starts in the worker processes, alongside the application's imports; the caller hands it to the
    window (``ValidationService.adopt``), whose open of that file takes it over (``ValidationService.prefetch``).
    Any file up to :data:`EARLY_MAX_BYTES`, the workers being forks of this process, ready at once (when spawned
    as it started, they slowed a 12k-node open by 0.7 s on a busy CPU). None for a bigger file or none."""
    try:
        size = path.stat().st_size
    except OSError:  # no such file: the open says so
        return None
    if size > EARLY_MAX_BYTES:
        return None
    early = started_early(path, shared_worker(), shared_worker(RUNTIME))
    early.unclaimed = True
    return early
