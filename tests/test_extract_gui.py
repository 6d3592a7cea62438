"""Extract through the window: a group or node picked on the canvas, the result opened or saved; the form's
completion neither covers the Outputs field nor drops the names typed before."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import onnx
import pytest
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QFileDialog, QLineEdit, QMessageBox
from pytestqt.qtbot import QtBot
from window_fixtures import doc_of, settle

from onnxviz.model.layout.scene import BoxKind
from onnxviz.ui.edit.forms import FormDialog
from onnxviz.ui.main_window import MainWindow

RES = ["/res/conv1/Conv", "/res/relu1/Relu", "/res/conv2/Conv", "/res/Add", "/res/relu_out/Relu"]


@pytest.fixture
def window(qtbot: QtBot, example_copy: Path) -> Iterator[MainWindow]:
    w = MainWindow()
    qtbot.addWidget(w)
    w.show()
    with qtbot.waitSignal(w.loading_finished, timeout=20000):
        w.open_path(example_copy)
    qtbot.waitUntil(lambda: w.canvas.drawable is not None)
    yield w
    for other in list(w.editing.windows):
        other.set_document(None)
        other.close()
    w.set_document(None)
    settle()


def click_group(qtbot: QtBot, w: MainWindow, group: str) -> None:
    """Click the box of the collapsed name-scope group ``group`` on the canvas."""
    def boxes() -> list[int]:
        drawable = w.canvas.drawable
        refs = drawable.scene.box_ref if drawable is not None else []
        return [b for b, ref in enumerate(refs) if ref.kind == BoxKind.GROUP and ref.group == group]

    w.canvas.collapse_group(group)
    qtbot.waitUntil(lambda: bool(boxes()) and not w.canvas.busy)
    w.canvas.view.box_clicked.emit(boxes()[0])


def offered(w: MainWindow) -> QMessageBox:
    box = w.editing.dialog
    assert isinstance(box, QMessageBox) and box.isVisible()
    return box


def press(box: QMessageBox, text: str) -> None:
    next(b for b in box.buttons() if b.text() == text).click()


def test_a_group_extracted_and_saved_where_the_dialog_says(qtbot: QtBot, window: MainWindow, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    click_group(qtbot, window, "res")
    assert window.canvas.selected_nodes() == [4, 5, 6, 7, 8]
    menu = window.editing.context_menu()  # what a right-click on the group offers
    [extract] = [a for a in menu.actions() if a.text() == "Extract Se&lection..."]
    extract.trigger()
    box = offered(window)
    said = box.informativeText().replace("\u200b", "")  # the places long names may wrap
    assert "5 nodes" in box.text() and "Inputs: stem.pool.\nOutputs: res.out.\n" in said
    target = tmp_path / "res.onnx"
    asked: list[str] = []

    def dialog(_parent: object, _title: str, start: str, _filter: str) -> tuple[str, str]:
        asked.append(start)
        return str(target), ""

    monkeypatch.setattr(QFileDialog, "getSaveFileName", dialog)
    press(box, "Save As...")
    assert asked == [str(Path(doc_of(window).path or "").parent / "example_extract.onnx")]
    part = onnx.load(target)
    onnx.checker.check_model(part, full_check=True)
    assert [n.name for n in part.graph.node] == RES
    assert ([v.name for v in part.graph.input], [v.name for v in part.graph.output]) == (["stem.pool"], ["res.out"])
    assert part.producer_name == "onnxviz-examples" and len(part.metadata_props) == 2
    assert not doc_of(window).is_dirty


def test_a_cancelled_save_dialog_writes_nothing(qtbot: QtBot, window: MainWindow, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    doc_of(window).selection.select_node("", 7)
    window.editing.actions["extract_selection"].trigger()
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *_args: ("", ""))
    press(offered(window), "Save As...")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["example.onnx"]


def test_a_node_extracted_into_a_new_window(qtbot: QtBot, window: MainWindow) -> None:
    doc_of(window).selection.select_node("", 7)  # /res/Add
    window.editing.actions["extract_selection"].trigger()
    press(offered(window), "Open in New Window")
    [new] = window.editing.windows
    assert new.isVisible() and new.doc is not None and new.doc.path is None
    assert [n.name for n in new.doc.model.graph.node] == ["/res/Add"]
    assert [v.name for v in new.doc.model.graph.input] == ["stem.pool", "res.conv2"]
    assert new.doc.model.producer_name == "onnxviz-examples"
    qtbot.waitUntil(lambda: new.canvas.drawable is not None)
    assert window.doc is not None and len(window.doc.model.graph.node) == 24


def test_nothing_selected_is_refused_in_one_sentence(qtbot: QtBot, window: MainWindow,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    said: list[str] = []
    monkeypatch.setattr(window, "show_error", lambda _title, message, _details="": said.append(message))
    doc_of(window).selection.clear()
    assert "Extract Se&lection..." not in [a.text() for a in window.editing.context_menu().actions()]
    window.editing.actions["extract_selection"].trigger()
    assert said == ["select a node or a group of nodes on the graph first."]


def test_the_form_completes_the_name_being_typed_above_the_field(qtbot: QtBot, window: MainWindow) -> None:
    window.editing.actions["extract"].trigger()
    form = window.editing.dialog
    assert isinstance(form, FormDialog)
    qtbot.waitExposed(form)
    inputs, outputs = form.fields["inputs"], form.fields["outputs"]
    assert isinstance(inputs, QLineEdit) and isinstance(outputs, QLineEdit)
    inputs.setFocus()
    inputs.setText("stem.pool, ")
    qtbot.keyClicks(inputs, "res.conv")
    completer = inputs.completer()
    popup = completer.popup()
    qtbot.waitUntil(popup.isVisible)
    assert popup.geometry().bottom() <= inputs.mapToGlobal(inputs.rect().topLeft()).y()  # Outputs stays visible
    assert completer.currentCompletion() == "stem.pool, res.conv1"  # the name typed before is kept
    popup.hide()
    inputs.setText("stem.pool, res.conv2")
    outputs.setText("res.add")
    form.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
    box = offered(window)
    assert "1 node" in box.text()
    QApplication.processEvents()
