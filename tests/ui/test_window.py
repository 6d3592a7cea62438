"""The main window opens a model in the background and validates it afterwards."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication, QEvent
from pytestqt.qtbot import QtBot

from onnxviz.ui.main_window import MainWindow
from onnxviz.ui.screenshot import background_settled


def test_window_opens_example_and_validates(qtbot: QtBot, example_path: Path) -> None:
    window = MainWindow()
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.loading_finished, timeout=20000):
        window.open_path(example_path)
    assert window.doc is not None and window.doc.name == "example.onnx"
    qtbot.waitUntil(lambda: bool(window.doc and window.doc.index.inferred.get("")), timeout=20000)
    assert "example.onnx" in window.windowTitle()


def test_failed_open_keeps_current_document(qtbot: QtBot, example_path: Path, tmp_path: Path) -> None:
    window = MainWindow()
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.loading_finished, timeout=20000):
        window.open_path(example_path)
    doc = window.doc
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"")
    with qtbot.waitSignal(window.loading_finished, timeout=20000):
        window.open_path(bad)
    assert window.doc is doc
    assert "empty" in window.statusBar().currentMessage()


def _open_and_settle(qtbot: QtBot, window: MainWindow, path: Path) -> None:
    """Open ``path`` and wait until its layout, validation and Model panel figures are all done."""
    with qtbot.waitSignals([window.canvas.scene_ready, window.validation.finished], timeout=30000):
        window.open_path(path)
    qtbot.waitUntil(lambda: not window.panels.model_panel.computing, timeout=30000)


def test_replaced_document_is_freed_without_the_cycle_collector(qtbot: QtBot, example_path: Path) -> None:
    """The heap is frozen once a document is built (onnxviz.ui.heap): a replaced document must go by
    reference counting alone, so no finished task or stale slot may keep it alive. A cancelled task
    of the old document (its validation) lets go of it once its thread has seen the cancel."""
    window = MainWindow()
    qtbot.addWidget(window)
    window.show()
    _open_and_settle(qtbot, window, example_path)
    first = weakref.ref(window.doc)
    gc.collect()
    gc.disable()
    try:
        _open_and_settle(qtbot, window, example_path)
        assert window.doc is not None and window.doc is not first()

        def freed() -> bool:
            QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)  # tasks retired with deleteLater
            return first() is None

        qtbot.waitUntil(freed, timeout=5000)
    finally:
        gc.enable()


def test_a_document_saved_in_the_background_is_freed_once_replaced(qtbot: QtBot, example_path: Path, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The save's task held the document in its slots and, with no parent, was never deleted: a 1 GiB model
    closed after a save stayed in memory."""
    from onnxviz.ui import saving

    monkeypatch.setattr(saving, "_is_big", lambda doc: True)  # saved as a big model is: in the background
    window = MainWindow()
    qtbot.addWidget(window)
    window.show()
    _open_and_settle(qtbot, window, example_path)
    assert window.doc is not None
    window.doc.edit.set_model_info(doc_string="saved")
    saved = weakref.ref(window.doc)
    saving.save_document(window, window.doc, tmp_path / "saved.onnx")
    qtbot.waitUntil(lambda: window.doc is not None and not window.doc.is_dirty, timeout=10000)
    _open_and_settle(qtbot, window, example_path)

    def freed() -> bool:
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        gc.collect()
        return saved() is None

    qtbot.waitUntil(freed, timeout=5000)


def test_background_settles_once_validation_and_figures_are_in(qtbot: QtBot, example_path: Path) -> None:
    """What --screenshot waits for before it grabs the window."""
    window = MainWindow()
    qtbot.addWidget(window)
    window.show()
    window.open_path(example_path)
    assert not background_settled(window)  # loading
    qtbot.waitUntil(lambda: background_settled(window), timeout=30000)
    panel = window.panels.model_panel  # type: ignore[attr-defined]
    assert window.doc is not None and window.doc.index.inferred and panel.settled
    assert "computing" not in panel.cost_form.values["Parameters"].text()
    window.doc.edit.rename_node(0, "renamed")
    assert not background_settled(window)  # validation is due again, the page will be rebuilt
    qtbot.waitUntil(lambda: background_settled(window), timeout=30000)
    assert "computing" not in panel.cost_form.values["Parameters"].text()
    window.canvas.relabel()  # edge labels in a job, as when a validation result brings new types
    assert not background_settled(window)  # a grab now would show the drawing without them
    qtbot.waitUntil(lambda: background_settled(window), timeout=30000)
    assert not window.canvas.busy
