"""Editing as complete as onnx-modifier, through the window: deleting branches, inserting valid nodes,
float and tensor values, edge cases and the keyboard."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot
from window_fixtures import open_and_wait

from onnxviz.model.document import Document
from onnxviz.ui.edit.controller import EditController
from onnxviz.ui.main_window import MainWindow
from onnxviz.ui.widgets.names import unbreak

SHOTS = Path("/tmp/onnxviz-shots")


def editing(w: MainWindow) -> EditController:
    return w.editing  # type: ignore[attr-defined]


def doc_of(w: MainWindow) -> Document:
    assert w.doc is not None
    return w.doc


def press_undo(qtbot: QtBot, w: MainWindow) -> None:
    w.activateWindow()
    qtbot.keyClick(w, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)


def shot(widget: object, name: str) -> None:
    """Keep a picture of a dialog for a human to look at (outside the repository)."""
    SHOTS.mkdir(exist_ok=True)
    widget.grab().save(str(SHOTS / f"{name}.png"))  # type: ignore[attr-defined]


# -- deleting a branch ------------------------------------------------------------------------------
def test_delete_with_inputs_lists_the_branch_then_deletes_it_in_one_undo(
        qtbot: QtBot, make_window, example_copy: Path) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    open_and_wait(qtbot, window, example_copy)
    doc = doc_of(window)
    before = doc.model.SerializeToString()
    doc.selection.select_node("", 6)  # /res/conv2/Conv, fed by conv1 -> relu1
    assert "Delete Node with What Only &Feeds It..." in [a.text() for a in editing(window).context_menu().actions()]
    editing(window).actions["delete_inputs"].trigger()
    box = editing(window).dialog
    assert isinstance(box, QMessageBox) and box.isVisible()
    assert box.text() == "Delete /res/conv2/Conv and the 2 nodes feeding only it?"
    details = unbreak(box.informativeText()).splitlines()
    assert details[0] == "Nodes: /res/conv1/Conv, /res/relu1/Relu, /res/conv2/Conv."
    assert details[1].startswith("Weights only they read (4): res.conv1.weight, res.conv1.bias")
    shot(box, "delete_with_inputs")
    box.button(QMessageBox.StandardButton.Cancel).click()
    assert doc.model.SerializeToString() == before
    editing(window).actions["delete_inputs"].trigger()
    box = editing(window).dialog
    assert isinstance(box, QMessageBox)
    qtbot.keyClick(box, Qt.Key.Key_Return)  # Delete is the default answer
    assert [n.name for n in doc.model.graph.node][4:6] == ["/res/Add", "/res/relu_out/Relu"]
    press_undo(qtbot, window)
    assert doc.model.SerializeToString() == before


def test_delete_with_outputs_from_the_edit_menu(qtbot: QtBot, make_window, example_copy: Path) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    open_and_wait(qtbot, window, example_copy)
    doc = doc_of(window)
    before = doc.model.SerializeToString()
    doc.selection.select_node("", 22)  # /head/fc/Gemm -> /head/Softmax
    action = editing(window).actions["delete_outputs"]
    assert action in window.edit_menu.actions()
    action.trigger()
    box = editing(window).dialog
    assert isinstance(box, QMessageBox)
    assert box.text() == "Delete /head/fc/Gemm and the 1 node that only it feeds?"
    box.button(QMessageBox.StandardButton.Yes).click()
    assert len(doc.model.graph.node) == 22
    assert doc.undo_stack.undo_label() == "Delete /head/fc/Gemm and 1 node only it feeds"
    doc.undo()
    assert doc.model.SerializeToString() == before
