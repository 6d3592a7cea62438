"""Background tasks: results reach the GUI thread, and no Qt object dies in a worker thread."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from onnxviz.model.background.procpool import WorkerProcess
from onnxviz.model.errors import Cancelled
from onnxviz.model.progress import CancelToken, ProgressFn
from onnxviz.ui.app import ensure_app
from onnxviz.ui.tasks import REPORT_EVERY_S, Task, foreground_pool, settle, task_pools, waiting_pool

TIMEOUT = 10_000


def test_tasks_their_caller_dropped_still_report_and_die_in_the_gui_thread(qtbot: QtBot) -> None:
    """A worker that held the last reference to its Task destroyed it (and its signals' relay) in the
    worker thread while the GUI thread delivered the queued result, and the process crashed."""
    release = threading.Event()
    results: list[object] = []
    dying_in: list[str] = []

    def work(_progress: ProgressFn, _token: CancelToken) -> str:
        release.wait(TIMEOUT / 1000)
        return "done"

    for _ in range(8):
        task = Task(work, "Waiting")
        task.finished.connect(results.append)
        weakref.finalize(task, lambda: dying_in.append(threading.current_thread().name))
        task.start()
    del task
    gc.collect()
    release.set()
    qtbot.waitUntil(lambda: len(dying_in) == 8, timeout=TIMEOUT)
    assert results == ["done"] * 8
    assert set(dying_in) == {threading.main_thread().name}


def test_progress_and_failure_reach_the_gui_thread(qtbot: QtBot) -> None:
    seen: list[tuple[float, str, str]] = []

    def work(progress: ProgressFn, _token: CancelToken) -> None:
        progress(0.25, "a quarter")
        raise ValueError("broken")

    task = Task(work, "Failing")
    task.progress.connect(lambda f, text: seen.append((f, text, threading.current_thread().name)))
    with qtbot.waitSignal(task.failed, timeout=TIMEOUT) as failed:
        task.start()
    assert seen == [(0.25, "a quarter", threading.main_thread().name)]
    exc, tb = failed.args
    assert isinstance(exc, ValueError) and "broken" in tb and task.done


def test_a_steps_many_reports_reach_the_gui_thread_spaced_out_and_each_new_step_at_once(qtbot: QtBot) -> None:
    """Each report wakes the GUI thread (a layout of 12k nodes reported ~200 times a second): within one step
    (the same text) the GUI thread hears at most one every REPORT_EVERY_S; a new step's text always arrives."""
    seen: list[tuple[float, str]] = []
    took: list[float] = []

    def work(progress: ProgressFn, _token: CancelToken) -> None:
        start = time.monotonic()
        for i in range(20_000):
            progress(i / 40_000, "Placing")
        took.append(time.monotonic() - start)
        progress(0.5, "Routing")
        progress(0.6, "")
        progress(1.0, "Done")

    task = Task(work, "Reporting")
    task.progress.connect(lambda f, text: seen.append((f, text)))
    with qtbot.waitSignal(task.finished, timeout=TIMEOUT):
        task.start()
    placing = [f for f, text in seen if text == "Placing"]
    assert placing[0] == 0.0 and placing == sorted(placing)
    assert len(placing) <= 1 + took[0] / REPORT_EVERY_S + 1
    assert seen[len(placing):] == [(0.5, "Routing"), (0.6, ""), (1.0, "Done")]


def test_a_report_left_out_still_ends_a_cancelled_task(qtbot: QtBot) -> None:
    """The cancel token is checked at every report, the ones the GUI thread does not hear of included."""
    reported = threading.Event()
    counted: list[int] = []

    def work(progress: ProgressFn, token: CancelToken) -> None:
        progress(0.0, "Waiting")
        reported.set()
        for i in range(10_000_000):
            counted.append(i)
            progress(0.0, "Waiting")   # the same step at once again: not passed on, yet it raises Cancelled

    task = Task(work, "Cancelled while reporting")
    with qtbot.waitSignal(task.progress, timeout=TIMEOUT):
        task.start()
    assert reported.wait(TIMEOUT / 1000)
    with qtbot.waitSignal(task.cancelled, timeout=TIMEOUT):
        task.cancel()
    assert 0 < len(counted) < 10_000_000


def test_a_cancelled_task_reports_cancelled_and_never_its_result(qtbot: QtBot) -> None:
    started = threading.Event()
    finished: list[object] = []

    def work(_progress: ProgressFn, token: CancelToken) -> str:
        started.set()
        while True:
            token.check()
            started.wait(0.001)

    task = Task(work, "Looping")
    task.finished.connect(finished.append)
    task.start()
    assert started.wait(TIMEOUT / 1000)
    with qtbot.waitSignal(task.cancelled, timeout=TIMEOUT):
        task.cancel()
    assert finished == [] and task.done


def test_a_task_runs_once() -> None:
    task = Task(lambda _p, _t: None)
    task.start()
    with pytest.raises(RuntimeError, match="runs once"):
        task.start()


@pytest.fixture
def worker() -> Iterator[WorkerProcess]:
    w = WorkerProcess()
    yield w
    w.shutdown()


def test_a_closed_worker_process_is_reaped_and_none_starts_again(worker: WorkerProcess) -> None:
    """At exit a background task submitted again after the worker was stopped: a process was spawned
    during the interpreter's teardown, and the executor's thread of the killed one was left reading a
    half-sent result; the interpreter joined it and hung (bench_canvas's child on the 12k model)."""
    worker.run(time.sleep, 0)
    pid = worker.pids[0]
    worker.close()
    assert not Path(f"/proc/{pid}").exists()  # killed and reaped, not a zombie its thread reaps later
    with pytest.raises(Cancelled):
        worker.submit(time.sleep, 0)
    assert worker.pids == []


def test_workers_closed_together_are_killed_before_any_is_reaped() -> None:
    """As the application quits its workers are all killed first, then reaped: a task that asks for a
    worker between the two gets Cancelled, never a new process, and none is left behind."""
    workers = [WorkerProcess(), WorkerProcess()]
    for w in workers:
        w.run(time.sleep, 0)
    pids = [w.pids[0] for w in workers]
    for w in workers:
        w.begin_close()
    with pytest.raises(Cancelled):
        workers[0].submit(time.sleep, 0)
    for w in workers:
        w.close()
    assert not any(Path(f"/proc/{pid}").exists() for pid in pids)
    assert [w.pids for w in workers] == [[], []]


def test_settle_cancels_tasks_waiting_on_the_worker_and_empties_the_pools(qtbot: QtBot,
                                                                         worker: WorkerProcess) -> None:
    """What runs as the interpreter ends: no Qt thread may still run Python while it is torn down."""
    started = threading.Event()

    def work(_progress: ProgressFn, token: CancelToken) -> None:
        started.set()
        worker.run(time.sleep, 60, token=token)

    task = Task(work, "Waiting on the worker").start(waiting_pool())
    assert started.wait(TIMEOUT / 1000)
    with qtbot.waitSignal(task.cancelled, timeout=TIMEOUT):
        settle()
        assert waiting_pool().activeThreadCount() == 0


def test_the_application_owns_its_task_pools(qtbot: QtBot) -> None:
    """The threads for tasks and the relay of their signals are one object, a child of the application, made
    with it: no module holds them."""
    app = ensure_app()
    pools = task_pools()
    assert pools is task_pools(app) and pools.parent() is app
    assert app.findChildren(type(pools)) == [pools]
    assert (foreground_pool(), waiting_pool()) == (pools.foreground, pools.waiting)
    assert (pools.foreground.maxThreadCount(), pools.waiting.maxThreadCount()) == (2, 4)


_EXIT_WHILE_BUSY = """
import threading
from onnxviz.ui.app import ensure_app
from onnxviz.ui.tasks import Task, waiting_pool

app = ensure_app()
started = threading.Event()

def work(progress, token):
    started.set()
    while True:
        token.check()
        sum(range(10000))

Task(work, "Busy in Python").start(waiting_pool())
assert started.wait(30)
print("leaving", flush=True)
"""


def test_the_application_leaves_while_a_task_runs() -> None:
    """The application's pools are shut down as the interpreter ends: a task still running is cancelled and its
    thread leaves Python before the interpreter is torn down, so the process ends cleanly (without that, it hung)."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    result = subprocess.run([sys.executable, "-c", _EXIT_WHILE_BUSY], capture_output=True, text=True, env=env,
                            timeout=50)
    assert (result.returncode, result.stdout) == (0, "leaving\n"), result.stderr


def test_a_pause_between_slices_lets_another_thread_run_and_stops_a_cancelled_task() -> None:
    """``CancelToken.pause`` (between slices of long work) yields the GIL: a thread waiting for it gets its turn
    at once, not only when the interpreter's switch interval (here made 5 s) runs out; once cancelled it raises."""
    token = CancelToken()
    turns: list[str] = []
    interval = sys.getswitchinterval()
    sys.setswitchinterval(5.0)
    try:
        gate = threading.Lock()
        gate.acquire()

        def other() -> None:
            with gate:
                turns.append("other")

        thread = threading.Thread(target=other)
        thread.start()  # it waits for the gate
        gate.release()  # now for the GIL this thread holds
        for _ in range(100):
            if turns:
                break
            token.pause()
        seen = list(turns)
    finally:
        sys.setswitchinterval(interval)
    thread.join()
    assert seen == ["other"]
    token.cancel()
    with pytest.raises(Cancelled):
        token.pause()
