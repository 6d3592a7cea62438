"""The window side of onnxviz.show(), in this process: a new version of the model keeps the view (zoom,
place, groups, selection), a model from Python is a copy with no file of its own, and unsaved edits are
asked about before a new version replaces them."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable
from pathlib import Path

import onnx
import pytest
from conftest import EXAMPLE
from PySide6.QtCore import QPointF
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot
from window_fixtures import open_and_wait

from onnxviz.api.protocol import FdLines, Link
from onnxviz.model.document import Document
from onnxviz.model.errors import SaveError
from onnxviz.ui.main_window import MainWindow
from onnxviz.ui.remote import RemoteControl


def _renamed_copy(folder: Path, name: str = "copy.onnx") -> Path:
    """The example with its first node renamed: a new version of the same model."""
    model = onnx.load(EXAMPLE)
    model.graph.node[0].name = "/stem/conv/Conv_renamed"
    folder.mkdir(parents=True, exist_ok=True)
    onnx.save(model, folder / name)
    return folder / name


def test_a_new_version_keeps_the_view(qtbot: QtBot, make_window: Callable[[], MainWindow], tmp_path: Path) -> None:
    w = make_window()
    with qtbot.waitSignal(w.canvas.scene_ready, timeout=20000):
        open_and_wait(qtbot, w, EXAMPLE)
    assert w.canvas.layout_obj is not None and "res" in w.canvas.layout_obj.expanded
    with qtbot.waitSignal(w.canvas.scene_ready, timeout=20000):
        w.canvas.collapse_group("res")
    w.canvas.view.place(1.7, QPointF(120.0, 260.0))
    assert w.doc is not None
    w.doc.selection.select_node("", 2)
    with qtbot.waitSignal(w.canvas.scene_ready, timeout=20000):
        w.show_model(_renamed_copy(tmp_path / "1"), copy_name="from_python.onnx")
    doc = w.doc
    assert doc is not None and doc.model.graph.node[0].name == "/stem/conv/Conv_renamed"
    view = w.canvas.view
    assert (view.scale, view.center) == (1.7, QPointF(120.0, 260.0)) and not view.auto_view
    assert w.canvas.layout_obj is not None and "res" not in w.canvas.layout_obj.expanded
    assert "stem" in w.canvas.layout_obj.expanded
    assert doc.selection.state.node == 2
    # a copy made for the window: its name, no file of its own, nothing unsaved until edited
    assert doc.path is None and doc.name == "from_python.onnx" and not doc.is_dirty
    assert w.windowTitle() == "from_python.onnx[*] - onnxviz" and not w.reload_action.isEnabled()
    assert doc.base_dir == tmp_path / "1"


def test_f5_keeps_the_view_too(qtbot: QtBot, make_window: Callable[[], MainWindow], tmp_path: Path) -> None:
    path = _renamed_copy(tmp_path)
    w = make_window()
    with qtbot.waitSignal(w.canvas.scene_ready, timeout=20000):
        open_and_wait(qtbot, w, path)
    w.canvas.view.place(0.8, QPointF(40.0, 90.0))
    with qtbot.waitSignal(w.canvas.scene_ready, timeout=20000):
        w.reload()
    assert (w.canvas.view.scale, w.canvas.view.center) == (0.8, QPointF(40.0, 90.0))


def test_an_unmoved_view_opens_the_new_version_at_its_opening_view(
        qtbot: QtBot, make_window: Callable[[], MainWindow], tmp_path: Path) -> None:
    w = make_window()
    with qtbot.waitSignal(w.canvas.scene_ready, timeout=20000):
        open_and_wait(qtbot, w, EXAMPLE)
    opening = (w.canvas.view.scale, QPointF(w.canvas.view.center))
    with qtbot.waitSignal(w.canvas.scene_ready, timeout=20000):
        w.show_model(_renamed_copy(tmp_path), copy_name="x.onnx")
    assert w.canvas.view.auto_view and (w.canvas.view.scale, w.canvas.view.center) == opening


def test_a_copy_is_saved_only_where_the_user_says(tmp_path: Path) -> None:
    doc = Document.open_copy(_renamed_copy(tmp_path / "handed"), "mine.onnx")
    assert doc.path is None and doc.name == "mine.onnx" and not doc.is_dirty
    with pytest.raises(SaveError, match="no file name yet"):
        doc.save()
    saved = doc.save(tmp_path / "kept.onnx")
    assert saved == tmp_path / "kept.onnx" and doc.path == saved and doc.name == "kept.onnx"
    assert onnx.load(saved).graph.node[0].name == "/stem/conv/Conv_renamed"


def _events(stream: io.BytesIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_a_new_version_over_unsaved_edits_is_asked_about(qtbot: QtBot, make_window: Callable[[], MainWindow],
                                                        tmp_path: Path) -> None:
    w = make_window()
    read, write = os.pipe()
    os.close(write)
    events = io.BytesIO()
    folder = tmp_path / "onnxviz-show-test"  # a hand-over folder: the window removes what it no longer shows
    link = Link(folder, FdLines(read), events, None)
    control = RemoteControl(w, link)
    first = {"op": "show", "id": 1, "path": str(_renamed_copy(folder / "1")), "name": "m.onnx", "inputs": {}}
    with qtbot.waitSignal(w.canvas.scene_ready, timeout=20000):
        control.handle(first)
    qtbot.waitUntil(lambda: len(_events(events)) == 1, timeout=20000)
    assert _events(events) == [{"event": "shown", "id": 1, "name": "m.onnx", "nodes": 24}]
    assert w.doc is not None
    w.doc.edit.rename_node("/stem/conv/Conv_renamed", "edited")

    def answer(choice: str) -> None:
        qtbot.waitUntil(lambda: any(b.isVisible() for b in w.findChildren(QMessageBox)), timeout=20000)
        box = next(b for b in w.findChildren(QMessageBox) if b.isVisible())
        assert "discard your unsaved edits of m.onnx" in box.text()
        next(b for b in box.buttons() if b.text() == choice).click()

    control.handle({**first, "id": 2, "path": str(_renamed_copy(folder / "2"))})
    answer("Keep Edits")
    qtbot.waitUntil(lambda: len(_events(events)) == 2, timeout=20000)
    assert _events(events)[1] == {"event": "kept", "id": 2}
    assert w.doc.is_dirty and w.doc.model.graph.node[0].name == "edited"
    control.handle({**first, "id": 3, "path": str(_renamed_copy(folder / "3"))})
    answer("Reload")
    qtbot.waitUntil(lambda: len(_events(events)) == 3, timeout=20000)
    assert _events(events)[2] == {"event": "shown", "id": 3, "name": "m.onnx", "nodes": 24}
    assert w.doc is not None and not w.doc.is_dirty
    assert sorted(p.name for p in folder.iterdir()) == ["3"]  # the files of models no longer shown are gone
    os.close(read)
