"""Extract through the window: a group or node picked on the canvas, the result opened or saved; the form's
completion neither covers the Outputs field nor drops the names typed before."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest
import save_models
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QFileDialog, QLineEdit, QMessageBox
from pytestqt.qtbot import QtBot
from window_fixtures import click_group, doc_of, open_and_wait, settle

from onnxviz.ui.main_window import MainWindow
from onnxviz.ui.widgets.forms import FormDialog

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


@pytest.fixture
def external_window(qtbot: QtBot, tmp_path: Path, make_window: Callable[[], MainWindow]) -> Iterator[MainWindow]:
    """The example with its weights in a data file, in a folder of its own."""
    folder = tmp_path / "source"
    folder.mkdir()
    w = make_window()
    open_and_wait(qtbot, w, save_models.with_external_data(folder))
    yield w
    for other in list(w.editing.windows):
        other.set_document(None)
        other.close()


def _extracted(qtbot: QtBot, window: MainWindow, node: int) -> MainWindow:
    doc_of(window).selection.select_node("", node)
    window.editing.actions["extract_selection"].trigger()
    press(offered(window), "Open in New Window")
    [new] = window.editing.windows
    qtbot.waitUntil(lambda: new.canvas.drawable is not None)
    return new


def test_a_part_with_external_weights_reads_them_from_the_source_folder(qtbot: QtBot,
                                                                         external_window: MainWindow) -> None:
    """The new window's model has no file: its weights were not found (no folder to read them from), so
    the Weights panel could not show them and a run failed."""
    source = doc_of(external_window)
    new = _extracted(qtbot, external_window, 0)  # stem.conv: its weights are in model.onnx.data
    doc = doc_of(new)
    assert doc.path is None and doc.base_dir == source.base_dir
    assert not [p for p in doc.problems if "external" in p.message.lower() or "data file" in p.message.lower()]
    weight = doc.model.graph.node[0].input[1]
    view = new.panels.weights_panel.view  # type: ignore[attr-defined]
    with qtbot.waitSignal(view.loaded, timeout=20000):
        doc.selection.select_value("", weight)
    assert source.base_dir is not None
    expected = save_models.arrays(source.model, source.base_dir)[weight]
    assert view.prepared is not None and view.prepared.stats.numel == expected.size
    assert view.prepared.stats.maximum == pytest.approx(float(expected.max()))
    controller = new.run_controller  # type: ignore[attr-defined]
    image = np.linspace(-1, 1, 3 * 32 * 32, dtype=np.float32).reshape(1, 3, 32, 32)
    with qtbot.waitSignal(controller.run_finished, timeout=30000):
        controller.runs.start(doc, {"image": image}, "", None)
    assert controller.result is not None
    whole = onnx.ModelProto()
    whole.CopyFrom(doc.model)
    onnx.external_data_helper.load_external_data_for_model(whole, str(source.base_dir))
    expected_out = onnxruntime.InferenceSession(whole.SerializeToString()).run(None, {"image": image})[0]
    np.testing.assert_allclose(controller.result.array("stem.conv"), expected_out, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("answer", ["Cancel", "Discard", "Save"])
def test_closing_an_unsaved_extracted_part_asks_first(qtbot: QtBot, external_window: MainWindow, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch, answer: str) -> None:
    """The part is in no file: closing its window dropped it without a question."""
    new = _extracted(qtbot, external_window, 0)
    doc = doc_of(new)
    assert doc.is_dirty and new.isWindowModified()
    target = tmp_path / "saved" / "part.onnx"
    target.parent.mkdir()
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *_args: (str(target), ""))
    new.close()
    box = QApplication.activeModalWidget()
    assert isinstance(box, QMessageBox) and box.text() == "Save the changes to untitled.onnx?"
    box.button(getattr(QMessageBox.StandardButton, answer)).click()
    if answer == "Cancel":
        assert new.isVisible() and new.doc is doc and doc.is_dirty
        return
    qtbot.waitUntil(lambda: new not in external_window.editing.windows, timeout=20000)
    if answer == "Save":  # the weights it uses were copied beside it
        saved = onnx.load(str(target))
        assert [n.name for n in saved.graph.node] == [doc.model.graph.node[0].name]
        assert (target.parent / save_models.DATA_NAME).is_file()
        values = save_models.arrays(saved, target.parent)
        source = doc_of(external_window)
        assert source.base_dir is not None
        originals = save_models.arrays(source.model, source.base_dir)
        assert all(np.array_equal(values[k], originals[k]) for k in values)
    else:
        assert not target.exists()
