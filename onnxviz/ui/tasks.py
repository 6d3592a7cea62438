"""Run long work off the GUI thread with progress, cancel and stale-result dropping."""

from __future__ import annotations

import itertools
import traceback
from collections.abc import Callable
from typing import Any

import shiboken6
from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from onnxviz.model.errors import Cancelled
from onnxviz.model.progress import CancelToken, ProgressFn

Work = Callable[[ProgressFn, CancelToken], Any]
_ids = itertools.count(1)
_foreground: QThreadPool | None = None


def foreground_pool() -> QThreadPool:
    """Threads of their own for work the user waits to see (the canvas's layouts).

    The global pool has one thread per core, and background tasks such as validation and the
    Model panel's figures hold theirs while they wait for the worker process (a second at 12k
    nodes, five at 123k): a task queued behind them waited that long before it even started.
    Two threads: one layout runs while a cancelled one finishes its current step."""
    global _foreground
    if _foreground is None:
        _foreground = QThreadPool()
        _foreground.setMaxThreadCount(2)
    return _foreground


class _Relay(QObject):
    """Lives in the GUI thread; worker threads emit, Qt queues to the GUI thread."""

    progress = Signal(float, str)
    finished = Signal(object)
    failed = Signal(object, str)   # exception, formatted traceback
    cancelled = Signal()


class Task(QObject):
    """A unit of background work. Connect to its signals, then call :meth:`start`.

    Signals are always delivered on the GUI thread. After :meth:`cancel`,
    neither ``finished`` nor ``failed`` is emitted (the result is stale). A task
    whose Qt parent was deleted is dropped silently when its work ends. A task with
    a parent is deleted once its last signal was handled: otherwise every finished
    task, and whatever its slots hold (a whole document), would live as long as the parent.
    """

    progress = Signal(float, str)
    finished = Signal(object)
    failed = Signal(object, str)
    cancelled = Signal()

    def __init__(self, work: Work, label: str = "", parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.id = next(_ids)
        self.label = label
        self.token = CancelToken()
        self._work = work
        self._relay = _Relay()
        # slots, not signal-to-signal links: each checks that this task still exists
        self._relay.progress.connect(self._on_progress)
        self._relay.finished.connect(self._on_finished)
        self._relay.failed.connect(self._on_failed)
        self._relay.cancelled.connect(self._on_cancelled)
        self.done = False

    def start(self, pool: QThreadPool | None = None) -> Task:
        (pool or QThreadPool.globalInstance()).start(_Runner(self))
        return self

    def cancel(self) -> None:
        self.token.cancel()

    def _alive(self) -> bool:
        return shiboken6.isValid(self)

    def _on_progress(self, fraction: float, text: str) -> None:
        if self._alive() and not self.token.cancelled:
            self.progress.emit(fraction, text)

    def _on_finished(self, result: object) -> None:
        self.done = True
        if self._alive() and not self.token.cancelled:
            self.finished.emit(result)
        self._retire()

    def _on_failed(self, exc: object, tb: str) -> None:
        self.done = True
        if self._alive() and not self.token.cancelled:
            self.failed.emit(exc, tb)
        self._retire()

    def _on_cancelled(self) -> None:
        self.done = True
        if self._alive():
            self.cancelled.emit()
        self._retire()

    def _retire(self) -> None:
        if self._alive() and self.parent() is not None:
            self.deleteLater()


class _Runner(QRunnable):
    def __init__(self, task: Task) -> None:
        super().__init__()
        self.task = task

    def run(self) -> None:
        relay = self.task._relay
        token = self.task.token

        def report(fraction: float, text: str) -> None:
            token.check()
            relay.progress.emit(float(fraction), text)

        work, self.task._work = self.task._work, _spent  # whatever the work holds (a document) goes with it
        try:
            result = work(report, token)
        except Cancelled:
            _emit(relay.cancelled)
        except BaseException as exc:  # noqa: BLE001 - reported to the GUI, never lost
            _emit(relay.failed, exc, traceback.format_exc())
        else:
            _emit(relay.finished, result)


def _spent(_progress: ProgressFn, _token: CancelToken) -> None:
    raise RuntimeError("a task runs once")


def _emit(signal: Any, *args: object) -> None:
    """Emit from the worker; when the application is already gone (quitting), the result has no reader."""
    try:
        signal.emit(*args)
    except RuntimeError:
        pass
