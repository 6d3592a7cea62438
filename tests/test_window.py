"""The main window opens a model in the background and validates it afterwards."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from onnxviz.ui.main_window import MainWindow


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
