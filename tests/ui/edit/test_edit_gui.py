"""Editing through the window: dialogs typed into and accepted, Ctrl+Z, the history dock."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from onnx import helper, numpy_helper
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QTextDocument
from PySide6.QtWidgets import QApplication, QComboBox, QDialogButtonBox, QLabel, QLineEdit, QSplitter
from pytestqt.qtbot import QtBot
from window_fixtures import doc_of, press_undo

from onnxviz.model.document import Document
from onnxviz.ui.edit.attributes import AttributesDialog
from onnxviz.ui.edit.model_dialogs import GraphIODialog, ModelPropertiesDialog
from onnxviz.ui.edit.palette_dialog import PaletteDialog
from onnxviz.ui.main_window import MainWindow
from onnxviz.ui.widgets.forms import FormDialog

CONV = "/stem/conv/Conv"


@pytest.fixture
def window(open_window: Callable[[Path], MainWindow], example_copy: Path) -> MainWindow:
    return open_window(example_copy)






def ok(dialog: FormDialog) -> None:
    dialog.buttons.button(QDialogButtonBox.StandardButton.Ok).click()


def test_undo_redo_actions_have_readable_labels_and_shortcuts(qtbot: QtBot, window: MainWindow) -> None:
    actions = window.editing.actions
    assert not actions["undo"].isEnabled()
    assert QKeySequence("Ctrl+Shift+Z") in actions["redo"].shortcuts()
    doc_of(window).edit.set_attribute(CONV, "strides", [1, 1])
    assert actions["undo"].text() == f"&Undo Set {CONV}.strides"
    assert window.isWindowModified()
    press_undo(qtbot, window)
    assert doc_of(window).model.SerializeToString() == doc_of(window).path.read_bytes()  # type: ignore[union-attr]
    assert actions["redo"].text() == f"&Redo Set {CONV}.strides"
    assert not window.isWindowModified()


def test_rename_node_dialog_then_ctrl_z(qtbot: QtBot, window: MainWindow) -> None:
    doc = doc_of(window)
    before = doc.model.SerializeToString()
    doc.selection.select_node("", 0)
    window.editing.actions["rename_node"].trigger()
    dialog = window.editing.dialog
    assert isinstance(dialog, FormDialog) and dialog.isVisible()
    edit = dialog.fields["name"]
    assert isinstance(edit, QLineEdit)
    edit.clear()
    qtbot.keyClicks(edit, "/res/Add")  # taken: refused, the dialog stays open and says why
    ok(dialog)
    assert dialog.isVisible() and "already exists" in dialog.error.text()
    edit.setText("stem_conv")
    ok(dialog)
    assert not dialog.isVisible()
    assert doc.model.graph.node[0].name == "stem_conv"
    press_undo(qtbot, window)
    assert doc.model.SerializeToString() == before


def test_attribute_editor_sets_adds_and_removes(qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    doc = doc_of(window)
    doc.selection.select_node("", 0)
    window.editing.actions["attributes"].trigger()
    dialog = window.editing.dialog
    assert isinstance(dialog, AttributesDialog)
    editor = dialog.editor
    editor.set_value_text("strides", "1, 1")
    attrs = {a.name: helper.get_attribute_value(a) for a in doc.model.graph.node[0].attribute}
    assert attrs["strides"] == [1, 1]
    editor.set_value_text("strides", "two")
    assert "is not a list of integers" in editor.error.text()
    qtbot.waitUntil(lambda: "group" in [editor.add_combo.itemText(k) for k in range(editor.add_combo.count())])
    editor.add_combo.setCurrentText("group")
    editor.add_attribute()
    assert doc.model.graph.node[0].attribute[-1].name == "group"
    qtbot.waitUntil(lambda: editor.table.rowCount() == 3)
    editor.table.selectRow(0)
    editor.remove_selected()
    assert "pads" not in [a.name for a in doc.model.graph.node[0].attribute]
    assert doc.undo_stack.index == 3
    press_undo(qtbot, window)
    qtbot.waitUntil(lambda: editor.table.rowCount() == 3)  # the editor follows undo


def test_tensor_attribute_from_npy(qtbot: QtBot, tmp_path: Path) -> None:
    graph = helper.make_graph([helper.make_node("Constant", [], ["c"], name="k",
                                                value=numpy_helper.from_array(np.zeros(2, np.float32)))],
                              "g", [], [helper.make_tensor_value_info("c", 1, [2])])
    doc = Document(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]))
    dialog = AttributesDialog(doc, "", 0)
    qtbot.addWidget(dialog)
    npy = tmp_path / "v.npy"
    np.save(npy, np.arange(4, dtype=np.float32))
    dialog.editor.load_tensor("value", npy)
    assert numpy_helper.to_array(doc.model.graph.node[0].attribute[0].t).tolist() == [0, 1, 2, 3]
    bad = tmp_path / "bad.npy"
    bad.write_bytes(b"nonsense")
    dialog.editor.load_tensor("value", bad)
    assert "not a readable .npy" in dialog.editor.error.text()


def test_palette_inserts_after_selected_node(qtbot: QtBot, window: MainWindow) -> None:
    doc = doc_of(window)
    doc.selection.select_node("", 2)  # /stem/relu/Relu
    window.editing.actions["insert"].trigger()
    dialog = window.editing.dialog
    assert isinstance(dialog, PaletteDialog)
    qtbot.keyClicks(dialog.search_edit, "sigmo")
    assert dialog.chosen() is not None and dialog.chosen().name == "Sigmoid"  # type: ignore[union-attr]
    assert "Sigmoid" in dialog.schema_view.toPlainText()
    dialog.ok_button.click()
    assert not dialog.isVisible()
    node = doc.model.graph.node[3]
    assert node.op_type == "Sigmoid" and list(node.input) == ["stem.relu"]
    assert doc.model.graph.node[4].input[0] == node.output[0]
    assert doc.check() == []


def test_history_dock_jumps(qtbot: QtBot, window: MainWindow) -> None:
    doc = doc_of(window)
    original = doc.model.SerializeToString()
    doc.edit.set_metadata("a", "1")
    doc.edit.rename_node(0, "first")
    doc.edit.set_attribute("first", "strides", [1, 1])
    history = window.editing.history
    assert history.list.count() == 4
    assert history.list.item(2).text() == "Rename node /stem/conv/Conv -> first"
    history.list.itemClicked.emit(history.list.item(0))
    assert doc.model.SerializeToString() == original
    assert history.list.currentRow() == 0
    history.list.itemClicked.emit(history.list.item(2))
    assert doc.undo_stack.index == 2 and doc.model.graph.node[0].name == "first"


def test_model_properties_dialog(qtbot: QtBot, window: MainWindow) -> None:
    doc = doc_of(window)
    window.editing.actions["model"].trigger()
    dialog = window.editing.dialog
    assert isinstance(dialog, ModelPropertiesDialog)
    dialog.fields["producer_name"].setText("me")
    dialog.fields["model_version"].setText("x")
    dialog.accept()
    assert dialog.isVisible() and "whole number" in dialog.error.text()
    dialog.fields["model_version"].setText("4")
    dialog.metadata.removeRow(0)
    dialog.accept()
    assert (doc.model.producer_name, doc.model.model_version) == ("me", 4)
    assert [p.key for p in doc.model.metadata_props] == ["license"]


def test_graph_io_dialog_fixes_batch(qtbot: QtBot, window: MainWindow) -> None:
    doc = doc_of(window)
    window.editing.actions["graph_io"].trigger()
    dialog = window.editing.dialog
    assert isinstance(dialog, GraphIODialog)
    shape = dialog.cell(0, 3)
    assert isinstance(shape, QLineEdit) and shape.text() == "batch, 3, 32, 32"
    shape.setText("1, 3, 32, 32")
    shape.editingFinished.emit()
    assert doc.model.graph.input[0].type.tensor_type.shape.dim[0].dim_value == 1
    qtbot.waitUntil(lambda: isinstance(dialog.cell(0, 2), QComboBox))
    dtype = dialog.cell(0, 2)
    assert isinstance(dtype, QComboBox)
    dtype.setCurrentText("float16")
    assert doc.model.graph.input[0].type.tensor_type.elem_type == 10
    assert doc.undo_stack.undo_label() == "Set type of image"


def test_delete_and_value_actions_follow_selection(qtbot: QtBot, window: MainWindow) -> None:
    doc = doc_of(window)
    actions = window.editing.actions
    doc.selection.clear()
    assert not actions["delete"].isEnabled()
    doc.selection.select_node("", 5)  # /res/relu1/Relu
    assert actions["delete_reconnect"].isEnabled()
    actions["delete_reconnect"].trigger()
    assert "/res/relu1/Relu" not in [n.name for n in doc.model.graph.node]
    doc.selection.select_value("", "stem.pool")
    actions["mark_output"].trigger()
    assert doc.model.graph.output[-1].name == "stem.pool"
    menu = window.editing.context_menu()
    assert "Rename &Value..." in [a.text() for a in menu.actions()]


def test_right_click_on_a_node_selects_it_and_offers_edits(qtbot: QtBot, window: MainWindow) -> None:
    from PySide6.QtCore import QPointF
    from PySide6.QtGui import QContextMenuEvent

    canvas = window.canvas  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: canvas.drawable is not None, timeout=20000)
    scene = canvas.drawable.scene
    box = scene.box_of_node(2)
    center = QPointF(float(scene.box_x[box] + scene.box_w[box] / 2), float(scene.box_y[box] + scene.box_h[box] / 2))
    canvas.view.center_on(center)
    pos = canvas.view.map_from_scene(center).toPoint()
    event = QContextMenuEvent(QContextMenuEvent.Reason.Mouse, pos, canvas.view.mapToGlobal(pos))
    QApplication.sendEvent(canvas.view, event)
    assert doc_of(window).selection.state.node == 2
    menu = window.editing.last_menu
    assert menu is not None and menu.isVisible()
    texts = [a.text() for a in menu.actions()]
    assert "&Delete Node" in texts and "Edit &Attributes..." in texts
    menu.close()


def test_replace_weights_mismatch_asks_first(qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    from PySide6.QtWidgets import QMessageBox

    doc = doc_of(window)
    name = doc.model.graph.initializer[0].name
    old = numpy_helper.to_array(doc.model.graph.initializer[0])
    npy = tmp_path / "w.npy"
    np.save(npy, old * 2)
    window.editing.replace_weights_from(name, npy)
    assert np.array_equal(numpy_helper.to_array(doc.model.graph.initializer[0]), old * 2)
    np.save(npy, np.zeros((2, 2), np.float32))
    window.editing.replace_weights_from(name, npy)
    box = window.editing.dialog
    assert isinstance(box, QMessageBox) and "consumers expect" in box.text()
    box.button(QMessageBox.StandardButton.Yes).click()
    assert list(doc.model.graph.initializer[0].dims) == [2, 2]
    assert doc.undo_stack.undo_label() == f"Replace weights of {name}"


def test_extract_dialog_writes_a_new_model(qtbot: QtBot, window: MainWindow, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    import onnx
    from PySide6.QtWidgets import QFileDialog, QMessageBox

    doc = doc_of(window)
    doc.selection.select_node("", 7)  # /res/Add
    window.editing.actions["extract"].trigger()
    dialog = window.editing.dialog
    assert isinstance(dialog, FormDialog)
    assert (dialog.text("inputs"), dialog.text("outputs")) == ("stem.pool, res.conv2", "res.add")
    ok(dialog)
    assert not dialog.isVisible()
    box = window.editing.dialog
    assert isinstance(box, QMessageBox)
    target = tmp_path / "part.onnx"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *_args: (str(target), ""))
    next(b for b in box.buttons() if b.text() == "Save As...").click()
    part = onnx.load(target)
    assert [n.op_type for n in part.graph.node] == ["Add"]
    assert not doc.is_dirty


def test_opset_conversion_from_model_dialog_is_one_undo(qtbot: QtBot, window: MainWindow) -> None:
    doc = doc_of(window)
    before = doc.model.SerializeToString()
    window.editing.actions["model"].trigger()
    dialog = window.editing.dialog
    assert isinstance(dialog, ModelPropertiesDialog)
    dialog.opset.setValue(17)
    dialog.accept()
    assert [o.version for o in doc.model.opset_import if o.domain == ""] == [17]
    assert window.editing.actions["undo"].text() == "&Undo Convert to opset 17"
    window.editing.actions["undo"].trigger()
    assert doc.model.SerializeToString() == before


def test_node_description_dialog(qtbot: QtBot, window: MainWindow) -> None:
    doc = doc_of(window)
    doc.selection.select_node("", 1)
    dialog = _form(window, "describe")
    field = dialog.fields["text"]
    qtbot.keyClicks(field, "Folded into the conv later.")
    qtbot.keyClick(field, Qt.Key.Key_Return)  # a new line of the description, not OK
    qtbot.keyClicks(field, "- see *issue 12*")
    assert dialog.isVisible()
    ok(dialog)
    assert doc.model.graph.node[1].doc_string == "Folded into the conv later.\n- see *issue 12*"
    assert doc.undo_stack.undo_label() == "Edit description of /stem/bn/BatchNormalization"
    dialog = _form(window, "describe")  # the lines come back as written
    assert dialog.text("text") == "Folded into the conv later.\n- see *issue 12*"
    dialog.reject()


def _form(w: MainWindow, action: str) -> FormDialog:
    w.editing.actions[action].trigger()
    dialog = w.editing.dialog
    assert isinstance(dialog, FormDialog) and dialog.isVisible()
    return dialog


def _typed(qtbot: QtBot, dialog: FormDialog, key: str, text: str) -> None:
    edit = dialog.fields[key]
    edit = getattr(edit, "edit", edit)  # a field of a value or numbers: its line
    assert isinstance(edit, QLineEdit)
    edit.clear()
    qtbot.keyClicks(edit, text)


def test_change_operator_rewire_and_rename_value_dialogs(qtbot: QtBot, window: MainWindow) -> None:
    doc = doc_of(window)
    original = doc.model.SerializeToString()
    doc.selection.select_node("", 2)  # /stem/relu/Relu
    dialog = _form(window, "op_type")
    _typed(qtbot, dialog, "op", "NoSuchOp")
    ok(dialog)
    assert "no operator NoSuchOp" in dialog.error.text()
    _typed(qtbot, dialog, "op", "Sigmoid")
    ok(dialog)
    assert doc.model.graph.node[2].op_type == "Sigmoid"

    doc.selection.select_node("", 7)  # /res/Add
    dialog = _form(window, "rewire")
    combo = dialog.fields["port"]
    assert isinstance(combo, QComboBox)
    combo.setCurrentIndex(1)
    _typed(qtbot, dialog, "value", "stem.pool")
    ok(dialog)
    assert doc.model.graph.node[7].input[1] == "stem.pool"

    doc.selection.select_value("", "stem.pool")
    dialog = _form(window, "rename_value")
    _typed(qtbot, dialog, "name", "image")
    ok(dialog)
    assert "already exists" in dialog.error.text()
    _typed(qtbot, dialog, "name", "pooled")
    ok(dialog)
    assert doc.model.graph.node[3].output[0] == "pooled" and doc.model.graph.node[7].input[1] == "pooled"
    for _ in range(3):
        press_undo(qtbot, window)
    assert doc.model.SerializeToString() == original


def test_weight_and_clean_up_actions(qtbot: QtBot, window: MainWindow) -> None:
    doc = doc_of(window)
    original = doc.model.SerializeToString()
    actions = window.editing.actions
    name = doc.model.graph.initializer[0].name
    doc.selection.select_value("", name)
    actions["to_constant"].trigger()
    assert doc.model.graph.node[0].op_type == "Constant"
    doc.selection.select_node("", 0)
    actions["to_initializer"].trigger()
    assert doc.model.graph.initializer[-1].name == name
    doc.edit.insert_node("Relu", ["stem.pool"], ["unused"], position=0)
    actions["sort"].trigger()
    assert doc.undo_stack.undo_label() == "Sort nodes topologically"
    actions["remove_unused"].trigger()
    assert "unused" not in [o for n in doc.model.graph.node for o in n.output]
    while doc.undo_stack.can_undo:
        actions["undo"].trigger()
    assert doc.model.SerializeToString() == original


def test_graph_io_dialog_adds_and_removes_inputs(qtbot: QtBot, window: MainWindow) -> None:
    doc = doc_of(window)
    window.editing.actions["graph_io"].trigger()
    dialog = window.editing.dialog
    assert isinstance(dialog, GraphIODialog)
    qtbot.keyClicks(dialog.new_name, "mask")
    dialog.add_input()
    assert doc.model.graph.input[-1].name == "mask"
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 3)
    dialog.table.selectRow(1)
    dialog.remove_selected()
    assert [v.name for v in doc.model.graph.input] == ["image"]
    name = dialog.cell(0, 1)
    assert isinstance(name, QLineEdit)
    name.setText("pixels")
    name.editingFinished.emit()
    assert doc.model.graph.input[0].name == "pixels" and doc.model.graph.node[0].input[0] == "pixels"


def test_dialogs_close_when_another_model_is_opened(qtbot: QtBot, window: MainWindow, example_path: Path) -> None:
    doc_of(window).selection.select_node("", 0)
    window.editing.actions["attributes"].trigger()
    dialog = window.editing.dialog
    assert dialog is not None and dialog.isVisible()
    with qtbot.waitSignal(window.loading_finished, timeout=20000):
        window.open_path(example_path)
    assert window.editing.dialog is None
    assert window.editing.history.list.count() == 1


def test_palette_without_selection_inserts_after_a_graph_input(qtbot: QtBot, window: MainWindow) -> None:
    doc = doc_of(window)
    doc.selection.clear()
    dialog = PaletteDialog(doc, window)
    qtbot.addWidget(dialog)
    assert dialog.placement.currentText() == "After graph input image"
    qtbot.keyClicks(dialog.search_edit, "Identity")
    dialog.accept()
    assert doc.model.graph.node[0].op_type == "Identity" and doc.model.graph.node[0].input[0] == "image"
    assert doc.model.graph.node[1].input[0] == doc.model.graph.node[0].output[0]


def test_palette_list_cuts_long_names_instead_of_scrolling_sideways(qtbot: QtBot, window: MainWindow) -> None:
    """'Name   (domain)' items were wider than the list: a sideways scroll bar hid the last row."""
    dialog = PaletteDialog(doc_of(window), window)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    splitter = dialog.findChild(QSplitter)
    assert splitter is not None
    splitter.setSizes([160, 660])  # the user narrowed the list
    QApplication.processEvents()
    widest = max(dialog.list.fontMetrics().horizontalAdvance(dialog.list.item(k).text())
                 for k in range(dialog.list.count()))
    assert widest > dialog.list.viewport().width()  # the case: some name is wider than the list
    assert not dialog.list.horizontalScrollBar().isVisible()
    long_item = max((dialog.list.item(k) for k in range(dialog.list.count())), key=lambda item: len(item.text()))
    assert long_item.text() in long_item.toolTip()  # the whole name is in its tooltip


def test_f2_then_typing_renames_the_node(qtbot: QtBot, window: MainWindow) -> None:
    doc = doc_of(window)
    doc.selection.select_node("", 0)
    window.activateWindow()
    qtbot.keyClick(window, Qt.Key.Key_F2)
    dialog = window.editing.dialog
    assert isinstance(dialog, FormDialog)
    qtbot.waitExposed(dialog)
    typed_into = dialog.focusWidget()
    assert typed_into is dialog.fields["name"]  # not the Rename button made before the field
    qtbot.keyClick(typed_into, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(typed_into, "stem_conv")
    qtbot.keyClick(typed_into, Qt.Key.Key_Return)
    assert not dialog.isVisible()
    assert doc.model.graph.node[0].name == "stem_conv"


def test_unchanged_entries_make_no_edit(qtbot: QtBot, window: MainWindow) -> None:
    doc = doc_of(window)
    doc.selection.select_node("", 0)
    window.editing.actions["attributes"].trigger()
    dialog = window.editing.dialog
    assert isinstance(dialog, AttributesDialog)
    qtbot.keyClick(dialog.editor.value_edits["strides"], Qt.Key.Key_Return)  # Enter on the value as loaded
    dialog.close()
    window.editing.actions["rename_node"].trigger()
    form = window.editing.dialog
    assert isinstance(form, FormDialog)
    qtbot.keyClick(form.fields["name"], Qt.Key.Key_Return)  # the name as it was
    assert not form.isVisible()
    assert not doc.undo_stack.can_undo and not window.isWindowModified()
    assert doc.model.SerializeToString() == doc.path.read_bytes()  # type: ignore[union-attr]


def test_renamed_value_stays_selected_and_described(qtbot: QtBot, window: MainWindow) -> None:
    doc = doc_of(window)
    doc.selection.select_value("", "stem.conv")
    dialog = _form(window, "rename_value")
    _typed(qtbot, dialog, "name", "stem_out")
    qtbot.keyClick(dialog.fields["name"], Qt.Key.Key_Return)
    assert not dialog.isVisible()
    assert doc.selection.state.value == "stem_out"
    panel = window.panels.value_panel  # type: ignore[attr-defined]
    texts = [label.text() for label in panel.findChildren(QLabel)]
    assert "stem_out" in texts and not any("not defined anywhere" in t for t in texts)


def _attributes_of(qtbot: QtBot, doc: Document, op_type: str) -> AttributesDialog:
    node = next(i for i, n in enumerate(doc.model.graph.node) if n.op_type == op_type)
    dialog = AttributesDialog(doc, "", node)
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def test_attribute_dialog_renders_the_operator_summary_as_markdown(qtbot: QtBot, window: MainWindow) -> None:
    dialog = _attributes_of(qtbot, doc_of(window), "MatMul")
    summary = dialog.editor.summary.toPlainText()
    assert summary.startswith("Matrix product that behaves like numpy.matmul")
    assert "](https" not in summary and "numpy.org" in dialog.editor.summary.toHtml()  # a link, not its markup


def test_attribute_dialog_shows_schema_and_names_as_text_not_html(qtbot: QtBot) -> None:
    graph = helper.make_graph([helper.make_node("Gelu", ["x"], ["y"], name="<i>g</i>")], "g",
                              [helper.make_tensor_value_info("x", 1, [2])], [helper.make_tensor_value_info("y", 1, [2])])
    doc = Document(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)]))
    dialog = AttributesDialog(doc, "", 0)
    qtbot.addWidget(dialog)
    assert "Gelu takes one input data (Tensor<T>) and produces one" in dialog.editor.summary.toPlainText()
    header = QTextDocument()
    header.setHtml(dialog.editor.header.text())
    assert header.toPlainText().startswith("<i>g</i>")


def test_attribute_dialog_of_an_operator_without_attributes_says_so(qtbot: QtBot, window: MainWindow) -> None:
    dialog = _attributes_of(qtbot, doc_of(window), "MatMul")
    editor = dialog.editor
    assert editor.empty.isVisible() and editor.empty.text() == "MatMul has no attributes."
    assert not editor.table.isVisible() and not editor.remove_button.isEnabled()


def test_remove_is_enabled_only_while_an_attribute_is_selected(qtbot: QtBot, window: MainWindow) -> None:
    dialog = _attributes_of(qtbot, doc_of(window), "Conv")
    editor = dialog.editor
    assert editor.table.rowCount() == 2 and not editor.empty.isVisible()
    assert not editor.remove_button.isEnabled()
    cell = editor.table.visualItemRect(editor.table.item(1, 0)).center()
    qtbot.mouseClick(editor.table.viewport(), Qt.MouseButton.LeftButton, pos=cell)
    assert editor.remove_button.isEnabled()
    qtbot.mouseClick(editor.remove_button, Qt.MouseButton.LeftButton)
    assert [a.name for a in doc_of(window).model.graph.node[0].attribute] == ["pads"]
    qtbot.waitUntil(lambda: editor.table.rowCount() == 1)
    assert not editor.remove_button.isEnabled()                  # the refreshed table has no selection


def test_enter_in_the_new_value_field_adds_the_attribute(qtbot: QtBot, window: MainWindow) -> None:
    dialog = _attributes_of(qtbot, doc_of(window), "Conv")
    editor = dialog.editor
    editor.add_combo.setCurrentIndex(editor.add_combo.findText("group"))
    qtbot.keyClicks(editor.add_value, "1")
    qtbot.keyClick(editor.add_value, Qt.Key.Key_Return)
    attrs = {a.name: helper.get_attribute_value(a) for a in doc_of(window).model.graph.node[0].attribute}
    assert attrs.get("group") == 1 and editor.add_value.text() == "" and dialog.isVisible()


@pytest.mark.parametrize("typed", [",", "[ , ]"])
def test_a_list_of_only_commas_is_refused_with_a_message(qtbot: QtBot, window: MainWindow, typed: str) -> None:
    dialog = _attributes_of(qtbot, doc_of(window), "Conv")
    edit = dialog.editor.value_edits["strides"]
    edit.setFocus()
    qtbot.keyClick(edit, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(edit, typed)
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    attrs = {a.name: helper.get_attribute_value(a) for a in doc_of(window).model.graph.node[0].attribute}
    assert attrs["strides"] == [2, 2] and doc_of(window).undo_stack.index == 0
    assert dialog.editor.error.text() == f"'{typed}' is not a list of integers."


def test_attribute_dialog_opens_with_the_keyboard_on_the_attributes(qtbot: QtBot, window: MainWindow) -> None:
    doc = doc_of(window)
    doc.selection.select_node("", 0)
    window.editing.actions["attributes"].trigger()
    dialog = window.editing.dialog
    assert isinstance(dialog, AttributesDialog)
    qtbot.waitUntil(lambda: dialog.focusWidget() is not None)
    assert dialog.focusWidget() is dialog.editor.table
    dialog.close()
    doc.selection.select_node("", 23)  # /head/Softmax: one attribute, its value ready to be typed over
    window.editing.actions["attributes"].trigger()
    dialog = window.editing.dialog
    assert isinstance(dialog, AttributesDialog)
    edit = dialog.editor.value_edits["axis"]
    qtbot.waitUntil(lambda: dialog.focusWidget() is edit)
    assert edit.selectedText() == edit.text() == "-1"
