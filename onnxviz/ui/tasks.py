"""Run long work off the GUI thread with progress, cancel and stale-result dropping."""

from __future__ import annotations

import itertools
import time
import traceback
from collections.abc import Callable
from typing import Any

import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, QRunnable, Qt, QThreadPool, Signal

from onnxviz.model.background.procpool import before_threads_join
from onnxviz.model.errors import Cancelled
from onnxviz.model.progress import CancelToken, ProgressFn

Work = Callable[[ProgressFn, CancelToken], Any]
_ids = itertools.count(1)
FOREGROUND_THREADS = 2  # one layout runs while a cancelled one finishes its current step
WAITING_THREADS = 4
REPORT_EVERY_S = 0.05  # a step's progress reaches the GUI thread at most this often (a new step's text at once)


def foreground_pool() -> QThreadPool:
    """Threads of their own for work the user waits to see (the canvas's layouts), so it never
    queues behind other background work in the global pool's one thread per core (see :class:`TaskPools`)."""
    return task_pools().foreground


def waiting_pool() -> QThreadPool:
    """Threads for tasks that mostly wait for the worker process (validation, the Model panel's figures).

    In the global pool, one thread per core, they held every thread while the process worked
    (a second at 12k nodes, five at 123k), and quick tasks such as the search index or a
    tensor's statistics queued behind them."""
    return task_pools().waiting


class _Hub(QObject):
    """The one relay from worker threads to the GUI thread; it lives as long as the process.

    Workers name their task by id and never hold the Task itself: a QObject whose last reference
    went away in a worker thread was destroyed there while the GUI thread delivered its queued
    signals, and the process crashed."""

    progress = Signal(int, float, str)
    finished = Signal(int, object)
    failed = Signal(int, object, str)   # exception, formatted traceback
    cancelled = Signal(int)

    def __init__(self) -> None:
        super().__init__()
        self.running: dict[int, Task] = {}   # GUI thread only: started tasks whose last signal is not yet handled
        self.progress.connect(self._on_progress)
        self.finished.connect(self._on_finished)
        self.failed.connect(self._on_failed)
        self.cancelled.connect(self._on_cancelled)

    def _on_progress(self, task_id: int, fraction: float, text: str) -> None:
        task = self.running.get(task_id)
        if task is not None:
            task._on_progress(fraction, text)

    def _on_finished(self, task_id: int, result: object) -> None:
        task = self.running.pop(task_id, None)
        if task is not None:
            task._on_finished(result)

    def _on_failed(self, task_id: int, exc: object, tb: str) -> None:
        task = self.running.pop(task_id, None)
        if task is not None:
            task._on_failed(exc, tb)

    def _on_cancelled(self, task_id: int) -> None:
        task = self.running.pop(task_id, None)
        if task is not None:
            task._on_cancelled()


class TaskPools(QObject):
    """The application's threads for tasks and the relay of their signals: one object, a child of the application
    (made with it by ``ensure_app``; for an application made elsewhere, on first use: :func:`task_pools`), whose
    tasks are cancelled and threads waited for as the interpreter ends (:meth:`settle`).

    ``foreground``: work the user waits to see; ``waiting``: tasks that mostly wait for the worker process; other
    tasks run in Qt's global pool. The pools and the hub are no Qt children: a task may still report while the
    application goes away."""

    NAME = "onnxviz-task-pools"

    def __init__(self, app: QCoreApplication) -> None:
        super().__init__(app)
        self.setObjectName(self.NAME)
        self.foreground = QThreadPool()
        self.foreground.setMaxThreadCount(FOREGROUND_THREADS)
        self.waiting = QThreadPool()
        self.waiting.setMaxThreadCount(WAITING_THREADS)
        self.hub = _Hub()   # lives as long as the process: a runner holds it, never a Task
        pools = (self.foreground, self.waiting, QThreadPool.globalInstance())
        hub = self.hub
        before_threads_join(lambda: _settle(hub, pools))

    def settle(self) -> None:
        """Cancel every running task and wait (up to :data:`EXIT_WAIT_MS` per pool) for the pools' threads
        to leave Python."""
        _settle(self.hub, (self.foreground, self.waiting, QThreadPool.globalInstance()))


def start_task_pools(app: QCoreApplication) -> TaskPools:
    """The application's task pools, made now (the application starts)."""
    return task_pools(app)


def task_pools(app: QCoreApplication | None = None) -> TaskPools:
    """The task pools of ``app`` (the running application by default): its :class:`TaskPools` child, made on
    first need."""
    owner = app if app is not None else QCoreApplication.instance()
    if owner is None:
        raise RuntimeError("tasks need a running application")
    pools = _found(owner)
    return pools if pools is not None else TaskPools(owner)


def _found(app: QCoreApplication) -> TaskPools | None:
    pools = app.findChild(TaskPools, TaskPools.NAME, Qt.FindChildOption.FindDirectChildrenOnly)
    return pools if isinstance(pools, TaskPools) else None


class Task(QObject):
    """A unit of background work. Connect to its signals, then call :meth:`start`.

    Signals are always delivered on the GUI thread. After :meth:`cancel`,
    neither ``finished`` nor ``failed`` is emitted (the result is stale). A task
    whose Qt parent was deleted is dropped silently when its work ends. A task with
    a parent is deleted once its last signal was handled: otherwise every finished
    task, and whatever its slots hold (a whole document), would live as long as the parent.
    A started task is kept alive until then, so its caller need not hold it.
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
        self._work: Work | None = work
        self.done = False

    def start(self, pool: QThreadPool | None = None) -> Task:
        if self._work is None:
            raise RuntimeError("a task runs once")
        hub = task_pools().hub
        hub.running[self.id] = self
        work, self._work = self._work, None   # whatever the work holds (a document) goes with the worker
        (pool or QThreadPool.globalInstance()).start(_Runner(hub, self.id, self.token, work))
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


EXIT_WAIT_MS = 5000  # for each pool's threads as the interpreter ends


def settle() -> None:
    """Cancel every running task of the application and wait for its pools' threads to leave Python
    (:meth:`TaskPools.settle`): as the interpreter ends, a task still waiting on the worker process, or queued,
    ran Python in a Qt thread while the interpreter was torn down; the process crashed (SIGSEGV) or hung."""
    app = QCoreApplication.instance()
    pools = _found(app) if app is not None else None
    if pools is not None:
        pools.settle()


def _settle(hub: _Hub, pools: tuple[QThreadPool, ...]) -> None:
    for task in list(hub.running.values()):
        task.token.cancel()
    for pool in pools:
        pool.clear()  # queued runnables never start
        pool.waitForDone(EXIT_WAIT_MS)


class _Runner(QRunnable):
    """Holds no Qt object but the hub, which is never destroyed."""

    def __init__(self, hub: _Hub, task_id: int, token: CancelToken, work: Work) -> None:
        super().__init__()
        self.hub = hub
        self.task_id = task_id
        self.token = token
        self.work: Work | None = work

    def run(self) -> None:
        hub, task_id, token = self.hub, self.task_id, self.token
        told: tuple[float, str | None] = (-REPORT_EVERY_S, None)   # when the GUI thread was last told, and what

        def report(fraction: float, text: str) -> None:
            # each report wakes the GUI thread, which then waits for the GIL at each call back into Python (12k
            # nodes' layout reported ~200 times in a second, each ~0.5 ms of its CPU and up to ~50 ms of waiting)
            nonlocal told
            token.check()
            now = time.monotonic()
            if text == told[1] and now - told[0] < REPORT_EVERY_S:
                return
            told = now, text
            hub.progress.emit(task_id, float(fraction), text)

        work, self.work = self.work, None   # freed as soon as it ends, not when the pool drops the runner
        assert work is not None
        try:
            result = work(report, token)
        except Cancelled:
            _emit(hub.cancelled, task_id)
        except BaseException as exc:  # noqa: BLE001 - reported to the GUI, never lost
            _emit(hub.failed, task_id, exc, traceback.format_exc())
        else:
            _emit(hub.finished, task_id, result)


def _emit(signal: Any, *args: object) -> None:
    """Emit from the worker; when the application is already gone (quitting), the result has no reader."""
    try:
        signal.emit(*args)
    except RuntimeError:
        pass
