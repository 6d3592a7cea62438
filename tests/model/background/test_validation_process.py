"""Validation in a worker process: results arrive, stale ones are dropped, a dead worker is reported and replaced."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import shiboken6
from PySide6.QtCore import QObject, QThreadPool
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot
from window_fixtures import open_and_wait, wait_for_tasks

import onnxviz
from onnxviz.model.background.procpool import WorkerProcess
from onnxviz.model.errors import Cancelled
from onnxviz.model.graph.validation import ValidationResult, unpack, validate, validate_packed
from onnxviz.model.progress import CancelToken
from onnxviz.ui.main_window import MainWindow
from onnxviz.ui.tasks import Task
from onnxviz.ui.validation import ValidationService


@pytest.fixture
def worker() -> Iterator[WorkerProcess]:
    w = WorkerProcess()
    yield w
    w.shutdown()


@pytest.fixture
def service(qtbot: QtBot, worker: WorkerProcess) -> Iterator[ValidationService]:
    s = ValidationService(worker=worker)
    yield s
    s.set_document(None)
    wait_for_tasks()
    QApplication.processEvents()


def test_packed_result_is_the_same_as_in_process(example_path: Path) -> None:
    data = example_path.read_bytes()
    here = validate(data, None, 3)
    there = unpack(validate_packed(data, 3))
    assert there.generation == 3 and there.problems == here.problems
    assert {s: {n: t.SerializeToString() for n, t in types.items()} for s, types in there.inference.types.items()} \
        == {s: {n: t.SerializeToString() for n, t in types.items()} for s, types in here.inference.types.items()}
    assert there.inference.types[""]  # the example's intermediate values got types


def test_results_arrive_and_stale_ones_are_dropped(qtbot: QtBot, service: ValidationService,
                                                   example_path: Path) -> None:
    doc = onnxviz.open(example_path)
    applied: list[ValidationResult] = []
    service.finished.connect(applied.append)
    with qtbot.waitSignal(service.finished, timeout=30000):
        service.set_document(doc)
    assert applied[-1].generation == 0 and doc.index.inferred[""]
    for i in range(3):  # a burst: the passes for the first states are overtaken
        doc.edit.rename_node(0, f"renamed_{i}")
    qtbot.waitUntil(lambda: applied[-1].generation == doc.generation and not service.busy, timeout=30000)
    assert all(r.generation in (0, doc.generation) for r in applied)
    old = unpack(validate_packed(example_path.read_bytes(), 0))
    assert not doc.apply_validation(old)  # a result for an older state never lands


def test_a_killed_worker_is_reported_and_replaced(qtbot: QtBot, service: ValidationService,
                                                  worker: WorkerProcess, example_path: Path) -> None:
    busy = worker.submit(time.sleep, 60)  # the validation queues behind this
    qtbot.waitUntil(lambda: bool(worker.pids), timeout=30000)
    doomed = worker.pids[0]
    doc = onnxviz.open(example_path)
    service.set_document(doc)
    qtbot.waitUntil(lambda: worker.unfinished == 2, timeout=10000)  # the validation waits behind the sleep
    os.kill(doomed, signal.SIGKILL)
    qtbot.waitUntil(lambda: bool(doc.validation_problems), timeout=30000)
    [problem] = doc.validation_problems
    assert problem.message.startswith("The model could not be checked: the background worker process stopped")
    assert busy.exception(timeout=10) is not None
    with qtbot.waitSignal(service.finished, timeout=30000):
        doc.edit.rename_node(0, "after_the_crash")
    assert doc.validation_problems == [] and doc.index.inferred[""]
    assert worker.pids and doomed not in worker.pids


def test_cancelled_wait_raises_and_drops_the_result(worker: WorkerProcess) -> None:
    token = CancelToken()
    threading.Timer(0.2, token.cancel).start()
    with pytest.raises(Cancelled):
        worker.run(time.sleep, 2, token=token)


def test_task_of_a_deleted_parent_ends_silently(qtbot: QtBot, capfd: pytest.CaptureFixture[str]) -> None:
    release = threading.Event()

    def work(progress, token):  # noqa: ANN001, ANN202 - the Task work signature
        release.wait(10)
        progress(0.5, "half way")
        return 42

    parent = QObject()
    task = Task(work, "orphan", parent=parent)
    delivered: list[object] = []
    task.finished.connect(delivered.append)
    task.progress.connect(lambda *a: delivered.append(a))
    task.start()
    shiboken6.delete(parent)
    release.set()
    QThreadPool.globalInstance().waitForDone(10000)
    for _ in range(3):
        QApplication.processEvents()
    assert delivered == []
    assert capfd.readouterr().err == ""


def test_model_summary_is_computed_in_the_worker_and_follows_edits(qtbot: QtBot, example_copy: Path,
                                                                   make_window: Callable[[], MainWindow]) -> None:
    window = make_window()
    open_and_wait(qtbot, window, example_copy, timeout_ms=30000)
    panel = window.panels.model_panel  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: bool(panel.costs) and not window.validation.busy and not panel.computing, timeout=30000)
    doc = window.doc
    assert doc is not None
    conv = next(c for c in panel.costs if c.op_type == "Conv")
    assert conv.macs == 16 * 16 * 16 * 3 * 9
    doc.edit.set_value_type("image", shape=[1, 3, 64, 64])  # four times the pixels: four times the MACs
    qtbot.waitUntil(lambda: not window.validation.busy and not panel.computing
                    and [c.macs for c in panel.costs if c.op_type == "Conv"][:1] == [4 * conv.macs], timeout=30000)


def test_big_models_go_through_files_and_a_changed_source_is_not_trusted(
        tmp_path: Path, worker: WorkerProcess, example_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    from onnxviz.model.background import jobs as worker_jobs

    monkeypatch.setattr(worker_jobs, "INLINE_BYTES", 0)  # the example counts as big: no bytes in the pickle
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    data = example_path.read_bytes()
    changed = tmp_path / "changed.onnx"
    changed.write_bytes(b"written by another program since")
    packed = worker_jobs.run_on_model(worker, worker_jobs.validate_job, data, worker_jobs.digest_of(data), changed,
                                      5, "test-doc")
    assert packed.generation == 5 and unpack(packed).inference.types[""]
    assert [p.name for p in tmp_path.iterdir()] == ["changed.onnx"]  # the temporary hand-over file is gone


def test_a_model_state_is_validated_once_for_its_figures_and_its_problems(
        example_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The figures job may run before the validation job of the same state (or alone, after undo):
    the worker validates each state once, and a changed state again."""
    import onnx

    from onnxviz.model.background import jobs as worker_jobs

    calls: list[int] = []
    real_validate = worker_jobs.validate

    def counted(data: bytes, index: object, generation: int, runtime: bool = True,
                **known: Any) -> ValidationResult:
        calls.append(generation)
        return real_validate(data, None, generation, runtime, **known)

    monkeypatch.setattr(worker_jobs, "validate", counted)
    data = example_path.read_bytes()
    figures = worker_jobs.figures_job(data, "doc-a")
    packed = worker_jobs.validate_job(data, 7, "doc-a")
    assert len(calls) == 1
    assert unpack(packed).generation == 7 and figures.op_counts
    model = onnx.load_from_string(data)
    model.graph.node[0].name = "renamed"
    worker_jobs.validate_job(model.SerializeToString(), 8, "doc-a")
    assert len(calls) == 2


@pytest.mark.parametrize("slow_figures", [False, True])
def test_figures_are_not_computed_again_when_the_same_state_is_validated(
        qtbot: QtBot, example_copy: Path, monkeypatch: pytest.MonkeyPatch, slow_figures: bool,
        make_window: Callable[[], MainWindow]) -> None:
    """The Model page is rebuilt when validation arrives; the worker computes the figures with
    that state's own types, so they are shown again, or still being computed are let finish, rather
    than computed again (3 s at 123k nodes). ``slow_figures``: validation arrives while they run."""
    from onnxviz.ui.panels import model_panel

    asked: list[str] = []
    real_run_on_model = model_panel.run_on_model

    def counted(*args: object, **kwargs: object) -> object:
        asked.append(getattr(args[1], "__name__", ""))
        result = real_run_on_model(*args, **kwargs)  # type: ignore[arg-type]
        if slow_figures:
            time.sleep(0.5)  # a big model's figures, in the panel's background thread
        return result

    monkeypatch.setattr(model_panel, "run_on_model", counted)
    window = make_window()
    open_and_wait(qtbot, window, example_copy, timeout_ms=30000)
    panel = window.panels.model_panel  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: bool(panel.costs) and not window.validation.busy and panel.settled, timeout=30000)
    doc = window.doc
    assert doc is not None
    asked.clear()
    with qtbot.waitSignal(window.validation.finished, timeout=30000):
        doc.edit.rename_node(0, "renamed")
    qtbot.waitUntil(lambda: panel.settled and not panel.computing, timeout=30000)
    QApplication.processEvents()  # a figures job the validation result starts waits behind a zero timer
    assert asked == ["figures_job"] and panel.costs


def test_validation_waiting_for_the_worker_leaves_the_global_pool_free(
        qtbot: QtBot, example_path: Path, monkeypatch: pytest.MonkeyPatch,
        make_window: Callable[[], MainWindow]) -> None:
    """While the worker process validates (seconds on a big model), quick tasks such as the
    search index or a tensor's statistics must not queue behind the thread that waits for it."""
    from onnxviz.ui import validation as validation_ui

    waiting, release = threading.Event(), threading.Event()
    real_run_on_model = validation_ui.run_on_model

    def slow(*args: object, **kwargs: object) -> object:
        waiting.set()
        release.wait(30)
        return real_run_on_model(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(validation_ui, "run_on_model", slow)
    window = make_window()
    try:
        open_and_wait(qtbot, window, example_path, timeout_ms=30000)
        qtbot.waitUntil(waiting.is_set, timeout=30000)
        threads = QThreadPool.globalInstance().maxThreadCount()
        together = threading.Barrier(threads, timeout=10)  # passes only if every global thread is free
        quick = [Task(lambda _p, _t: together.wait()) for _ in range(threads)]
        with qtbot.waitSignals([task.finished for task in quick], timeout=15000):
            for task in quick:
                task.start()
        assert window.validation.busy
    finally:
        release.set()
    qtbot.waitUntil(lambda: not window.validation.busy, timeout=30000)


@pytest.mark.parametrize("values", [["a", "", "é\x00x", "z" * 5], [1, None, 0, 2**63 - 1], [2**64, 1], [True, False],
                                    [1.5, None], []])
def test_packed_columns_unpickle_as_the_values_they_hold(values: list[Any]) -> None:
    """The figures' columns travel as a few flat objects (no GIL-holding unpickle of 100k+ objects in the
    GUI process); whatever does not fit one travels as it is."""
    import pickle

    from onnxviz.model.columns import Texts, pack_column, unpack_column

    packed = pickle.loads(pickle.dumps(pack_column(values)))
    assert unpack_column(packed) == values
    assert isinstance(packed, Texts) == (values == [] or isinstance(values[0], str))
    if isinstance(packed, Texts):  # each string is also cut out alone, when asked
        assert [packed[i] for i in range(len(packed))] == values == packed[:] and packed[-1:] == values[-1:]
