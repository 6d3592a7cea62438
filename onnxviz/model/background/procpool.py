"""One persistent worker process for C++ work that holds the GIL (onnx checker, shape inference).

Running such work in a thread freezes every other Python thread, the GUI's
included, for its whole duration; in a separate process it costs the caller
only the transfer of its (bytes) arguments and of the result. The process is
started on first use (``spawn``: no copy of the caller's threads or Qt state),
reused, and replaced when it died.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import multiprocessing
import os
import signal
import sys
import threading
import time
import types
import weakref
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from typing import Any, TypeVar

from onnxviz.model.errors import Cancelled, OnnxvizError
from onnxviz.model.forking import start_method
from onnxviz.model.process_tuning import building
from onnxviz.model.progress import CancelToken

T = TypeVar("T")
POLL_S = 0.05  # how often a waiting caller looks at its cancel token
JOIN_S = 10.0  # for the executor's thread once its process was killed
# A worker runs at a lower priority than the window: on a busy CPU the GUI process's threads are not
# descheduled for it (a loading thread holding the GIL in C while descheduled pauses the GUI thread too).
WORKER_NICENESS = 4


class WorkerDied(OnnxvizError):
    """The worker process ended (crash or out of memory) before it answered. ``signal``: the signal that
    ended it, when one did (SIGSEGV, SIGABRT: a native crash; SIGKILL: most often the kernel's
    out-of-memory killer)."""

    def __init__(self, message: str, details: str = "", signal: int | None = None) -> None:
        super().__init__(message, details)
        self.signal = signal

    @property
    def crashed(self) -> bool:
        """Ended by a native crash (a fault or an abort in C or C++ code), not killed."""
        return self.signal in CRASH_SIGNALS


CRASH_SIGNALS = frozenset(getattr(signal, name) for name in ("SIGSEGV", "SIGABRT", "SIGBUS", "SIGILL", "SIGFPE")
                          if hasattr(signal, name))


class WorkerProcess:
    """A single worker process: :meth:`run` blocks the calling (background) thread, not the process."""

    def __init__(self) -> None:
        self._executor: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()
        self._submitted: list[Future[Any]] = []
        self._ran_in: weakref.WeakKeyDictionary[Future[Any], ProcessPoolExecutor] = weakref.WeakKeyDictionary()
        self._ended: weakref.WeakKeyDictionary[ProcessPoolExecutor, int | None] = weakref.WeakKeyDictionary()
        self._closed = False

    def submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        """``fn(*args)`` queued for the worker (started if needed); Cancelled once :meth:`close` was called."""
        with self._lock:
            if self._closed:
                raise Cancelled()
            for _attempt in range(2):  # a process that died while idle is replaced silently
                if self._executor is None:
                    self._executor = _executor("spawn")
                try:
                    with _main_module_hidden():  # the first submit spawns the process
                        future = self._executor.submit(fn, *args)
                    self._submitted = [f for f in self._submitted if not f.done()] + [future]
                    self._ran_in[future] = self._executor
                    return future
                except BrokenProcessPool:
                    self._discard_locked()
            raise WorkerDied("the background worker process could not be started.")

    def fork(self) -> None:
        """Start the process now as a fork of this one (see :func:`fork_workers`), unless it runs already."""
        with self._lock:
            if self._executor is None and not self._closed:
                executor = self._executor = _executor("fork")
                executor._launch_processes()  # type: ignore[attr-defined]  # forks now; its threads start with a job

    def run(self, fn: Callable[..., T], *args: Any, token: CancelToken | None = None) -> T:
        """``fn(*args)`` in the worker process; raises Cancelled (result dropped) or WorkerDied."""
        return self.wait(self.submit(fn, *args), token)

    def wait(self, future: Future[T], token: CancelToken | None = None) -> T:
        """The result of a job :meth:`submit` queued (call from a background thread); raises Cancelled
        (result dropped) or WorkerDied."""
        while True:
            try:
                return future.result(timeout=POLL_S)
            except FutureTimeout:
                if token is not None and token.cancelled:
                    future.cancel()  # still queued: never runs; already running: its result is dropped
                    raise Cancelled() from None
            except BrokenProcessPool as exc:
                ended_by = self._ended_by(future)
                self._discard(future)
                raise WorkerDied(_died_text(ended_by), str(exc), ended_by) from None

    def _ended_by(self, future: Future[Any]) -> int | None:
        """The signal that ended the process that was to run ``future``, if one did (several jobs may wait on a
        process that died: the first to notice discards it, the others learn the signal from :attr:`_ended`)."""
        with self._lock:
            executor = self._ran_in.get(future)
            if executor is None:
                return None
            if executor in self._ended:
                return self._ended[executor]
            return _signal_of(executor)

    @property
    def unfinished(self) -> int:
        """How many submitted jobs are queued or running."""
        return sum(not f.done() for f in list(self._submitted))

    @property
    def pids(self) -> list[int]:
        """Process ids of the live worker (empty before first use)."""
        executor = self._executor
        processes = getattr(executor, "_processes", None) or {}
        return [p.pid for p in list(processes.values()) if p.is_alive()]

    def shutdown(self) -> None:
        """Stop the worker now, abandoning any running work (for quitting: nothing waits for it)."""
        with self._lock:
            self._discard_locked()

    def close(self) -> None:
        """:meth:`shutdown` for good, as the interpreter ends: a background thread that submits again
        afterwards gets Cancelled instead of a new process, which would be spawned during the
        interpreter's teardown and joined by it (a hang at exit)."""
        with self._lock:
            self._closed = True
            self._discard_locked()

    def begin_close(self) -> None:
        """The first half of :meth:`close`: no new process from now on, and the running one killed without
        waiting for it (``close`` then reaps it). The application's workers die together as it quits."""
        with self._lock:
            self._closed = True
            executor = self._executor
            processes = list((getattr(executor, "_processes", None) or {}).values())
        for process in processes:
            if process.is_alive():
                process.kill()

    def _discard(self, _failed: Future[Any]) -> None:
        with self._lock:
            executor = self._executor
            if executor is not None and getattr(executor, "_broken", False):
                self._discard_locked()

    def _discard_locked(self) -> None:
        executor, self._executor = self._executor, None
        if executor is None:
            return
        if getattr(executor, "_broken", False):
            self._ended[executor] = _signal_of(executor)
        # taken first: shutdown() forgets the processes, the results pipe and the executor's thread
        processes = list((getattr(executor, "_processes", None) or {}).values())
        results = getattr(executor, "_result_queue", None)
        thread = getattr(executor, "_executor_manager_thread", None)
        executor.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            if process.is_alive():
                process.kill()
        _close_writer(results)
        if thread is not None:  # the process is gone: its thread only reaps it and closes the queues
            thread.join(JOIN_S)


def _signal_of(executor: ProcessPoolExecutor) -> int | None:
    """The signal that ended the process of a broken ``executor``. The executor's thread reaps it: waited for
    first, as a second reaper racing it could find the process gone with no exit code."""
    processes = list((getattr(executor, "_processes", None) or {}).values())
    thread = getattr(executor, "_executor_manager_thread", None)
    if thread is not None and thread is not threading.current_thread():
        thread.join(JOIN_S)
    for process in processes:
        process.join(JOIN_S)
        if process.exitcode is not None and process.exitcode < 0:
            return -process.exitcode
    return None


def _died_text(ended_by: int | None) -> str:
    if ended_by is not None and ended_by in CRASH_SIGNALS:
        return (f"the background worker process crashed ({signal.Signals(ended_by).name}); it will be restarted "
                "for the next check.")
    return ("the background worker process stopped unexpectedly (out of memory?); it will be restarted for the "
            "next check.")


def _close_writer(results: object) -> None:
    """Close this process's copy of the results pipe's writing end (concurrent.futures keeps it and never
    writes to it). A worker killed halfway through sending a big result left the executor's thread
    waiting for the rest for ever, since this copy kept the pipe open, and the interpreter joins that
    thread as it ends: a hang at exit. Now the thread reads the end of the pipe and stops."""
    writer = getattr(results, "_writer", None)
    if writer is not None:
        writer.close()


@contextmanager
def _main_module_hidden() -> Iterator[None]:
    """A spawned child runs the parent's main script again (as ``__mp_main__``) before its work; a
    script without a ``__main__`` guard would open a second window there. The worker needs none of it."""
    main = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        if main is not None:
            sys.modules["__main__"] = main


def _executor(method: str) -> ProcessPoolExecutor:
    """A pool of one process started by ``method`` ("spawn": a fresh interpreter; "fork": a copy of this one)."""
    return ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context(method),
                               initializer=_exit_with_parent, initargs=(os.getpid(), method == "fork"))


def _exit_with_parent(parent_pid: int, forked: bool = False) -> None:
    """In the worker: end when the application is gone (crashed or ``os._exit``), never linger as an orphan;
    and yield the CPU to the application (see :data:`WORKER_NICENESS`). A forked worker first lets go of the
    pipes of the workers forked before it (see :func:`_close_siblings`)."""
    if forked:
        _close_siblings()
    with contextlib.suppress(OSError):
        os.nice(WORKER_NICENESS)
    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch, name="onnxviz-parent-watch", daemon=True).start()


def _close_siblings() -> None:
    """In a forked worker: close its copies of the other workers' pipes, which the fork inherited. A copy of a
    sibling's results pipe would keep it open should that sibling die while writing a result: the application's
    thread reading it would wait for the rest for ever (see :func:`_close_writer`)."""
    own = multiprocessing.current_process()._args[0]  # type: ignore[attr-defined]  # this worker's call queue
    for worker in list(_shared.values()):
        executor = worker._executor
        if executor is None or getattr(executor, "_call_queue", None) is own:
            continue
        for queue in (getattr(executor, name, None) for name in ("_call_queue", "_result_queue")):
            for end in ("_reader", "_writer"):
                connection = getattr(queue, end, None)
                if connection is not None:
                    connection.close()
        wakeup = getattr(executor, "_executor_manager_thread_wakeup", None)
        if wakeup is not None:
            wakeup.close()


_shared: dict[str, WorkerProcess] = {}
_shared_lock = threading.Lock()
CHECKS = "checks"  # validation and the model summary
RUNTIME = "runtime"  # onnxruntime's slower check of each validated state, which must not delay the others
EDITS = "edits"  # inference of the types an edit changes: the GUI thread waits for it, never behind a validation
JOBS_MODULE = "onnxviz.model.background.jobs"  # what the shared workers run (imported as they start)


def shared_worker(role: str = CHECKS) -> WorkerProcess:
    """The application's worker process for ``role`` (one for all windows), stopped at interpreter exit."""
    with _shared_lock:
        worker = _shared.get(role)
        if worker is None:
            if not _shared:
                before_threads_join(close_shared_workers)
            worker = _shared[role] = WorkerProcess()
        return worker


def close_shared_workers() -> None:
    """Close the shared workers (as the interpreter or the command ends): all killed first, then each reaped
    (~20 ms each when done one after the other)."""
    for worker in kill_shared_workers():
        worker.close()


def kill_shared_workers() -> list[WorkerProcess]:
    """Kill the shared workers now, without waiting for their end (for a command about to end: the system tears
    them down meanwhile, :func:`close_shared_workers` then reaps them); none is started afterwards."""
    with _shared_lock:
        workers = list(_shared.values())
    for worker in workers:
        worker.begin_close()
    return workers


def fork_workers(roles: tuple[str, ...]) -> bool:
    """Start the shared workers of ``roles`` as forks of this process (on Linux, while it runs no other thread and
    has not imported Qt; else nothing is done and False returned): they have the modules this process imported
    (onnx, numpy, the jobs' module) without importing them again, ~0.3 s of CPU each when spawned. Call it before
    any thread starts (no thread runs until :func:`start_workers`); workers replaced later are spawned."""
    if start_method() != "fork":
        return False
    for role in roles:
        shared_worker(role).fork()
    return True


def start_workers(roles: tuple[str, ...], preload: str) -> None:
    """Start the shared workers of ``roles`` now, each importing the module ``preload``: Python's start and
    the imports take ~0.3 s per process, done while the application imports and builds its window (call
    this before those imports: the processes start at once, the work waits for them)."""
    for role in roles:
        try:
            shared_worker(role).submit(preloaded, preload)
        except (OnnxvizError, Cancelled):  # no worker: the first job says so
            return


def preloaded(module: str) -> None:
    """In the worker: import ``module`` (and all it imports) with no cycle collection walking the new modules,
    then or later: they live as long as the process (~10 ms of a worker's start)."""
    with building():
        importlib.import_module(module)


def run_named(module: str, function: str, *args: Any) -> Any:
    """In the worker: ``function`` of ``module`` called with ``args``, the module imported there. For a caller
    that has not imported the module itself (pickling a function imports its module in the caller's process):
    the command's start queues the early analysis this way before it imports onnx."""
    return getattr(importlib.import_module(module), function)(*args)


def before_threads_join(stop: Callable[[], None]) -> None:
    """Call ``stop`` as the interpreter ends, before it joins its threads (those registered later are
    called earlier). concurrent.futures joins its worker at thread shutdown, before atexit handlers,
    waiting for the running pass to finish; registered the same way the worker is killed first."""
    register = getattr(threading, "_register_atexit", None)
    try:
        if register is None:
            raise RuntimeError
        register(stop)
    except RuntimeError:
        atexit.register(stop)
