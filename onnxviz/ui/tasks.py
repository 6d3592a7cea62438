"""Run long work off the GUI thread with progress, cancel and stale-result dropping."""

from __future__ import annotations

import itertools
import traceback
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from onnxviz.model.errors import Cancelled
from onnxviz.model.progress import CancelToken, ProgressFn

Work = Callable[[ProgressFn, CancelToken], Any]
_ids = itertools.count(1)


class _Relay(QObject):
    """Lives in the GUI thread; worker threads emit, Qt queues to the GUI thread."""

    progress = Signal(float, str)
    finished = Signal(object)
    failed = Signal(object, str)   # exception, formatted traceback
    cancelled = Signal()


class Task(QObject):
    """A unit of background work. Connect to its signals, then call :meth:`start`.

    Signals are always delivered on the GUI thread. After :meth:`cancel`,
    neither ``finished`` nor ``failed`` is emitted (the result is stale).
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
        self._relay.progress.connect(self.progress)
        self._relay.finished.connect(self._on_finished)
        self._relay.failed.connect(self._on_failed)
        self._relay.cancelled.connect(self.cancelled)
        self.done = False

    def start(self, pool: QThreadPool | None = None) -> Task:
        (pool or QThreadPool.globalInstance()).start(_Runner(self))
        return self

    def cancel(self) -> None:
        self.token.cancel()

    def _on_finished(self, result: object) -> None:
        self.done = True
        if not self.token.cancelled:
            self.finished.emit(result)

    def _on_failed(self, exc: object, tb: str) -> None:
        self.done = True
        if not self.token.cancelled:
            self.failed.emit(exc, tb)


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

        try:
            result = self.task._work(report, token)
        except Cancelled:
            relay.cancelled.emit()
        except BaseException as exc:  # noqa: BLE001 - reported to the GUI, never lost
            relay.failed.emit(exc, traceback.format_exc())
        else:
            relay.finished.emit(result)
