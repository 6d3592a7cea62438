"""Editing as complete as onnx-modifier, through the window: deleting branches, inserting valid nodes,
float and tensor values, edge cases and the keyboard."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QComboBox, QLabel, QLineEdit, QMessageBox, QWidget
from pytestqt.qtbot import QtBot
from window_fixtures import doc_of, press_undo

import onnxviz
from onnxviz.model.document import Document
from onnxviz.ui.edit.attributes import AttributesDialog
from onnxviz.ui.edit.node_edits import branch_details, branch_question
from onnxviz.ui.edit.palette_dialog import PaletteDialog
from onnxviz.ui.main_window import MainWindow
from onnxviz.ui.widgets.forms import FormDialog
from onnxviz.ui.widgets.names import unbreak

SHOTS = os.environ.get("ONNXVIZ_SHOTS", "")  # a folder to keep pictures of the dialogs in, for a human to look at


@pytest.fixture
def window(open_window: Callable[[Path], MainWindow], example_copy: Path) -> MainWindow:
    """A shown window with a copy of the example open."""
    return open_window(example_copy)


@pytest.fixture
def doc(window: MainWindow) -> Document:
    """The example's document in ``window``."""
    return doc_of(window)


def shot(widget: object, name: str) -> None:
    """Draw a dialog (it must paint); keep the picture in $ONNXVIZ_SHOTS when set."""
    QApplication.processEvents()  # fields added to a shown form appear on the next turn of the event loop
    picture = widget.grab()  # type: ignore[attr-defined]
    assert not picture.isNull()
    if SHOTS:
        Path(SHOTS).mkdir(exist_ok=True)
        picture.save(str(Path(SHOTS) / f"{name}.png"))


# -- deleting a branch ------------------------------------------------------------------------------
def test_delete_with_inputs_lists_the_branch_then_deletes_it_in_one_undo(
        qtbot: QtBot, window: MainWindow, doc: Document) -> None:
    before = doc.model.SerializeToString()
    doc.selection.select_node("", 6)  # /res/conv2/Conv, fed by conv1 -> relu1
    assert "Delete Node and Branch &Feeding Only It..." in [a.text() for a in window.editing.context_menu().actions()]
    window.editing.actions["delete_inputs"].trigger()
    box = window.editing.dialog
    assert isinstance(box, QMessageBox) and box.isVisible()
    assert box.text() == "Delete /res/conv2/Conv and the 2 nodes feeding only it?"
    details = unbreak(box.informativeText()).splitlines()
    assert details[0] == "Nodes: /res/conv1/Conv, /res/relu1/Relu, /res/conv2/Conv."
    assert details[1].startswith("Weights only they read (4): res.conv1.weight, res.conv1.bias")
    shot(box, "delete_with_inputs")
    box.button(QMessageBox.StandardButton.Cancel).click()
    assert doc.model.SerializeToString() == before
    window.editing.actions["delete_inputs"].trigger()
    box = window.editing.dialog
    assert isinstance(box, QMessageBox)
    qtbot.keyClick(box, Qt.Key.Key_Return)  # Delete is the default answer
    assert [n.name for n in doc.model.graph.node][4:6] == ["/res/Add", "/res/relu_out/Relu"]
    press_undo(qtbot, window)
    assert doc.model.SerializeToString() == before


def test_delete_with_outputs_from_the_edit_menu(qtbot: QtBot, window: MainWindow, doc: Document) -> None:
    before = doc.model.SerializeToString()
    doc.selection.select_node("", 22)  # /head/fc/Gemm -> /head/Softmax
    action = window.editing.actions["delete_outputs"]
    assert action in window.edit_menu.actions()
    action.trigger()
    box = window.editing.dialog
    assert isinstance(box, QMessageBox)
    assert box.text() == "Delete /head/fc/Gemm and the node that only it feeds?"
    assert ("Graph outputs it would leave without a maker: probabilities (they go too, or make 'head.pool' the "
            "output instead).") in unbreak(box.informativeText()).splitlines()
    buttons = [b.text() for b in box.buttons()]
    assert "Delete 2 Nodes and Their Outputs" in buttons and "Delete 2 Nodes, Output head.pool" in buttons
    assert box.defaultButton().text() == "Delete 2 Nodes, Output head.pool"  # the model keeps an output
    shot(box, "delete_with_outputs")
    box.button(QMessageBox.StandardButton.Yes).click()
    assert len(doc.model.graph.node) == 22 and list(doc.model.graph.output) == [] and doc.is_dirty
    assert doc.undo_stack.undo_label() == "Delete /head/fc/Gemm and 1 node only it feeds"
    doc.undo()
    assert doc.model.SerializeToString() == before


# -- a new node is valid when it appears ------------------------------------------------------------
def _palette(qtbot: QtBot, window: MainWindow, search: str) -> PaletteDialog:
    window.editing.actions["insert"].trigger()
    dialog = window.editing.dialog
    assert isinstance(dialog, PaletteDialog) and dialog.isVisible()
    qtbot.keyClicks(dialog.search_edit, search)
    return dialog


def test_insert_cast_asks_for_its_target_type(qtbot: QtBot, window: MainWindow, doc: Document) -> None:
    before = doc.model.SerializeToString()
    doc.selection.select_node("", 2)  # /stem/relu/Relu
    dialog = _palette(qtbot, window, "cast")
    assert dialog.chosen().name == "Cast"  # type: ignore[union-attr]
    assert dialog.needs.isVisible() and list(dialog.needs.attribute_fields) == ["to"]
    combo = dialog.needs.attribute_fields["to"][1]
    assert isinstance(combo, QComboBox) and combo.currentText() == "float32"
    assert "int64" in [combo.itemText(k) for k in range(combo.count())]
    combo.setCurrentText("float16")
    shot(dialog, "insert_cast")
    dialog.ok_button.click()
    assert not dialog.isVisible()
    cast = doc.model.graph.node[3]
    assert cast.op_type == "Cast" and helper.get_attribute_value(cast.attribute[0]) == TensorProto.FLOAT16
    assert not [p for p in doc.check() if p.node_name == cast.name]
    press_undo(qtbot, window)
    assert doc.model.SerializeToString() == before


def test_insert_contrib_fused_matmul_adds_its_opset_import_and_undo_removes_both(
        qtbot: QtBot, window: MainWindow, doc: Document) -> None:
    before = doc.model.SerializeToString()
    assert [o.domain for o in doc.model.opset_import] == [""]
    doc.selection.select_node("", 2)  # /stem/relu/Relu
    dialog = _palette(qtbot, window, "matmul")
    rows = [dialog.list.item(k) for k in range(dialog.list.count())]
    titles = [item.text() for item in rows if item.data(Qt.ItemDataRole.UserRole) is None]
    assert titles == ["ONNX operators", "com.microsoft (onnxruntime)"]
    assert not rows[0].flags() & Qt.ItemFlag.ItemIsSelectable and dialog.chosen().name == "MatMul"  # type: ignore[union-attr]
    dialog.search_edit.clear()
    qtbot.keyClicks(dialog.search_edit, "fusedmatmul")
    chosen = dialog.chosen()
    assert chosen is not None and (chosen.domain, chosen.name) == ("com.microsoft", "FusedMatMul")
    assert dialog.list.currentItem().text() == "FusedMatMul   (com.microsoft)"
    assert "onnxruntime contrib operator" in dialog.schema_view.toPlainText()
    qtbot.keyClicks(dialog.needs.input_fields[0][1].edit, "stem.relu")  # its B: x times itself, 16x16 matrices
    shot(dialog, "insert_contrib")
    dialog.ok_button.click()
    assert not dialog.isVisible()
    node = doc.model.graph.node[3]
    assert (node.op_type, node.domain, list(node.input)) == ("FusedMatMul", "com.microsoft", ["stem.relu", "stem.relu"])
    assert [(o.domain, o.version) for o in doc.model.opset_import] == [("", 18), ("com.microsoft", 1)]
    assert not [p for p in doc.check() if p.node_name == node.name]
    press_undo(qtbot, window)
    assert doc.model.SerializeToString() == before


def test_insert_add_asks_for_its_second_input(qtbot: QtBot, window: MainWindow, doc: Document) -> None:
    doc.selection.select_node("", 2)  # /stem/relu/Relu
    dialog = _palette(qtbot, window, "add")
    assert dialog.chosen().name == "Add"  # type: ignore[union-attr]
    assert not dialog.needs.attribute_fields and len(dialog.needs.input_fields) == 1
    dialog.ok_button.click()
    assert dialog.isVisible() and dialog.error.text() == "Name a value for the input 'B', or give numbers."
    edit = dialog.needs.input_fields[0][1].edit
    qtbot.keyClicks(edit, "stem.bn")
    dialog.ok_button.click()
    assert not dialog.isVisible()
    add = doc.model.graph.node[3]
    assert add.op_type == "Add" and list(add.input) == ["stem.relu", "stem.bn"]
    assert doc.check() == []


def test_insert_concat_takes_more_inputs_and_relu_needs_nothing(
        qtbot: QtBot, window: MainWindow, doc: Document) -> None:
    doc.selection.select_node("", 2)
    dialog = _palette(qtbot, window, "relu")
    assert dialog.needs.isHidden()
    dialog.search_edit.clear()
    qtbot.keyClicks(dialog.search_edit, "concat")
    assert dialog.chosen().name == "Concat"  # type: ignore[union-attr]
    axis = dialog.needs.attribute_fields["axis"][1]
    assert isinstance(axis, QLineEdit)
    qtbot.keyClicks(dialog.needs.input_fields[0][1].edit, "stem.bn, stem.conv")
    dialog.ok_button.click()
    assert dialog.error.text() == "Give a value for the required attribute 'axis'."
    qtbot.keyClicks(axis, "1")
    shot(dialog, "insert_concat")
    dialog.ok_button.click()
    concat = doc.model.graph.node[3]
    assert list(concat.input) == ["stem.relu", "stem.bn", "stem.conv"] and concat.attribute[0].i == 1


# -- numbers as stored, small tensors as text -----------------------------------------------------------
def _attributes(window: MainWindow, node: int) -> AttributesDialog:
    doc_of(window).selection.select_node("", node)
    window.editing.actions["attributes"].trigger()
    dialog = window.editing.dialog
    assert isinstance(dialog, AttributesDialog)
    return dialog


def test_float_attribute_shows_its_shortest_text_and_enter_changes_nothing(
        qtbot: QtBot, window: MainWindow, doc: Document) -> None:
    doc.edit.set_attribute("/stem/bn/BatchNormalization", "epsilon", 0.12345679)  # 0.12345679104328156 stored
    edits = len(doc.undo_stack.commands)
    dialog = _attributes(window, 1)
    edit = dialog.editor.value_edits["epsilon"]
    assert edit.text() == "0.12345679"
    shot(dialog, "attributes_float")
    edit.setFocus()
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    assert len(doc.undo_stack.commands) == edits  # it reads back as the stored float32: no edit
    panel = "\n".join(label.text() for label in window.panels.node_panel.findChildren(QLabel))  # type: ignore[attr-defined]
    assert "0.12345679 <span" in panel  # the Node panel shows the same text (it showed 0.123457)


def test_small_tensor_attribute_is_edited_as_text(qtbot: QtBot, window: MainWindow, doc: Document) -> None:
    doc.edit.initializer_to_constant("head.axes")  # a Constant node holding int64[1] = [1]
    before = doc.model.SerializeToString()
    dialog = _attributes(window, 0)
    qtbot.waitUntil(lambda: "value" in dialog.editor.value_edits)
    edit = dialog.editor.value_edits["value"]
    assert edit.text() == "[1]"
    edit.selectAll()
    qtbot.keyClicks(edit, "[2, 3]")
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    t = doc.model.graph.node[0].attribute[0].t
    assert numpy_helper.to_array(t).tolist() == [2, 3] and t.data_type == TensorProto.INT64
    qtbot.waitUntil(lambda: "value" in dialog.editor.value_edits)
    edit = dialog.editor.value_edits["value"]
    edit.selectAll()
    qtbot.keyClicks(edit, "[2.5]")
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    assert dialog.editor.error.text() == "1 value does not fit in int64 (fractions, NaN or numbers out of its range): 2.5 at index 0."
    dialog.close()
    press_undo(qtbot, window)
    assert doc.model.SerializeToString() == before


def test_replace_weights_of_another_dtype_can_cast(qtbot: QtBot, window: MainWindow, doc: Document,
                                                   tmp_path: Path) -> None:
    before = doc.model.SerializeToString()
    old = numpy_helper.to_array(doc.model.graph.initializer[1])  # stem.conv.bias, float32[16]
    npy = tmp_path / "bias.npy"
    np.save(npy, old.astype(np.float64) + 1)
    window.editing.replace_weights_from("stem.conv.bias", npy)
    box = window.editing.dialog
    assert isinstance(box, QMessageBox)
    cast = next(b for b in box.buttons() if b.text() == "Cast to float32 and Replace")
    assert box.defaultButton() is cast
    shot(box, "replace_weights_cast")
    cast.click()
    new = numpy_helper.to_array(doc.model.graph.initializer[1])
    assert new.dtype == np.float32 and np.array_equal(new, old + 1)
    press_undo(qtbot, window)
    assert doc.model.SerializeToString() == before


def test_small_weights_edited_as_text(qtbot: QtBot, window: MainWindow, doc: Document) -> None:
    before = doc.model.SerializeToString()
    doc.selection.select_value("", "attn.flat_shape")
    window.editing.actions["weights_text"].trigger()
    form = window.editing.dialog
    assert isinstance(form, FormDialog)
    old = numpy_helper.to_array(doc.edit.initializer_proto("attn.flat_shape"))
    assert form.text("values") == "[" + ", ".join(str(v) for v in old.tolist()) + "]"
    edit = form.fields["values"]
    assert isinstance(edit, QLineEdit)
    edit.selectAll()
    qtbot.keyClicks(edit, "[1, 2]")
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    assert form.isVisible() and "consumers expect the old type and shape" in form.error.text()
    edit.selectAll()
    qtbot.keyClicks(edit, "[1, 16, 64]")
    shot(form, "weights_text")
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    assert not form.isVisible()
    assert numpy_helper.to_array(doc.edit.initializer_proto("attn.flat_shape")).tolist() == [1, 16, 64]
    press_undo(qtbot, window)
    assert doc.model.SerializeToString() == before


# -- edge cases -----------------------------------------------------------------------------------------
def test_a_model_without_outputs_is_a_warning(qtbot: QtBot, window: MainWindow, doc: Document) -> None:
    doc.edit.remove_output("probabilities")
    assert [p.message for p in doc.problems] == [
        "the model has no graph outputs, so running it gives nothing; mark a value as a graph output"]
    fields = window.status_fields  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: "1 warning" in fields.problems.text())
    press_undo(qtbot, window)
    qtbot.waitUntil(lambda: fields.problems.text() == "✓ No problems", timeout=20000)


def _folded_constant_model(path: Path) -> Path:
    shape = helper.make_node("Constant", [], ["shape"], name="shape_const",
                             value=numpy_helper.from_array(np.array([2, 3], np.int64)))
    reshape = helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")
    graph = helper.make_graph([shape, reshape], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [6])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=10), path)
    return path


def test_constant_to_initializer_on_the_box_showing_a_folded_constant(
        qtbot: QtBot, open_window: Callable[[Path], MainWindow], tmp_path: Path) -> None:
    window = open_window(_folded_constant_model(tmp_path / "folded.onnx"))
    doc = doc_of(window)
    before = doc.model.SerializeToString()
    doc.selection.select_node("", 1)  # the Reshape box, which shows the Constant 'shape' inside it
    assert window.editing.actions["to_initializer"] in window.editing.context_menu().actions()
    window.editing.actions["to_initializer"].trigger()
    assert [n.name for n in doc.model.graph.node] == ["reshape"]
    assert numpy_helper.to_array(doc.model.graph.initializer[0]).tolist() == [2, 3]
    assert doc.selection.state.node == 0 and doc.check() == []  # the Reshape stays selected
    window.editing.actions["to_initializer"].trigger()  # nothing left to convert: one sentence, nothing changes
    refusal = next(b for b in window.findChildren(QMessageBox) if b.isVisible())
    assert unbreak(refusal.text()) == "reshape is not a Constant node, and no Constant feeds it."
    refusal.close()
    press_undo(qtbot, window)
    assert doc.model.SerializeToString() == before


def _function_reference_model(path: Path) -> Path:
    const = helper.make_node("Constant", [], ["alpha"], name="alpha_const")
    ref = onnx.AttributeProto(name="value_float", type=onnx.AttributeProto.FLOAT, ref_attr_name="alpha")
    const.attribute.append(ref)
    body = [const, helper.make_node("CastLike", ["alpha", "x"], ["a"], name="castlike"),
            helper.make_node("Mul", ["x", "a"], ["y"], name="mul")]
    fn = helper.make_function("local", "Scale", ["x"], ["y"], body, [helper.make_opsetid("", 17)], ["alpha"])
    call = helper.make_node("Scale", ["X"], ["Y"], domain="local", name="call", alpha=0.5)
    graph = helper.make_graph([call], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2])])
    onnx.save(helper.make_model(graph, functions=[fn], opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid("local", 1)]), path)
    return path


def test_a_function_constant_set_by_its_caller_says_so(open_window: Callable[[Path], MainWindow],
                                                      tmp_path: Path) -> None:
    window = open_window(_function_reference_model(tmp_path / "fn.onnx"))
    doc = doc_of(window)
    scope = next(s for s in doc.index.graphs if s.startswith("fn:"))
    weights = window.panels.weights_panel  # type: ignore[attr-defined]
    for select in (lambda: doc.selection.select_value(scope, "alpha"), lambda: doc.selection.select_node(scope, 0)):
        select()  # raised 'Cannot get value of reference attribute' before
        assert weights.view.message.text() == (
            "The value of the function's attribute 'alpha': each call of the function gives its own.")


# -- the keyboard alone -----------------------------------------------------------------------------------
def _active(qtbot: QtBot, dialog: QWidget) -> None:
    dialog.activateWindow()
    qtbot.waitUntil(dialog.isActiveWindow)


def _press(qtbot: QtBot, key: Qt.Key) -> None:
    """A key where the user's keyboard sends it: the completer's list when it is shown, else the focus."""
    popup = QApplication.activePopupWidget()
    target = popup if popup is not None else QApplication.focusWidget()
    assert target is not None
    qtbot.keyClick(target, key)


def test_typing_a_whole_operator_then_return_changes_it(qtbot: QtBot, window: MainWindow, doc: Document) -> None:
    doc.selection.select_node("", 2)  # /stem/relu/Relu
    window.editing.actions["op_type"].trigger()
    dialog = window.editing.dialog
    assert isinstance(dialog, FormDialog)
    _active(qtbot, dialog)
    qtbot.keyClicks(QApplication.focusWidget(), "Sigmoid")  # the field starts selected: typing replaces it
    edit = dialog.fields["op"]
    assert isinstance(edit, QLineEdit) and edit.completer().popup().isVisible()  # Sigmoid, HardSigmoid
    _press(qtbot, Qt.Key.Key_Return)  # closed the list only, before
    assert not dialog.isVisible() and doc.model.graph.node[2].op_type == "Sigmoid"

    window.editing.actions["op_type"].trigger()  # a completion chosen with the arrows is taken, not applied
    dialog = window.editing.dialog
    assert isinstance(dialog, FormDialog)
    _active(qtbot, dialog)
    qtbot.keyClicks(QApplication.focusWidget(), "sigm")
    _press(qtbot, Qt.Key.Key_Down)
    _press(qtbot, Qt.Key.Key_Down)
    _press(qtbot, Qt.Key.Key_Return)
    assert dialog.isVisible() and dialog.text("op") == "Sigmoid"
    _press(qtbot, Qt.Key.Key_Escape)
    assert not dialog.isVisible() and doc.undo_stack.undo_label() == "Change /stem/relu/Relu to Sigmoid"


@pytest.mark.parametrize("action", ["rename_node", "op_type", "rewire", "describe", "rename_value", "weights_text",
                                    "extract", "insert", "attributes", "model", "graph_io", "delete_inputs"])
def test_every_edit_dialog_closes_with_escape_and_changes_nothing(
        qtbot: QtBot, window: MainWindow, doc: Document, action: str) -> None:
    doc.selection.select_node("", 9) if action != "weights_text" else doc.selection.select_value("", "head.axes")
    window.editing.actions[action].trigger()
    dialog = window.editing.dialog
    assert dialog is not None and dialog.isVisible()
    _active(qtbot, dialog)
    _press(qtbot, Qt.Key.Key_Escape)
    assert not dialog.isVisible() and not doc.undo_stack.commands


@pytest.mark.parametrize(("action", "label"), [
    ("rename_node", None), ("rename_value", None), ("weights_text", None),
    ("describe", "Edit description of /attn/Reshape")])
def test_form_dialogs_apply_with_return(qtbot: QtBot, window: MainWindow, doc: Document, action: str,
                                        label: str | None) -> None:
    doc.selection.select_node("", 9) if action != "weights_text" else doc.selection.select_value("", "head.axes")
    window.editing.actions[action].trigger()
    dialog = window.editing.dialog
    assert isinstance(dialog, FormDialog)
    _active(qtbot, dialog)
    qtbot.keyClicks(QApplication.focusWidget(), "new" if action != "weights_text" else "[2]")
    if action == "describe":  # Return is a new line in a description: Ctrl+Return applies
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    else:
        _press(qtbot, Qt.Key.Key_Return)
    assert not dialog.isVisible() and len(doc.undo_stack.commands) == 1
    if label is not None:
        assert doc.undo_stack.undo_label() == label


def test_insert_dialog_from_the_keyboard(qtbot: QtBot, window: MainWindow, doc: Document) -> None:
    doc.selection.select_node("", 2)
    window.editing.actions["insert"].trigger()
    dialog = window.editing.dialog
    assert isinstance(dialog, PaletteDialog)
    _active(qtbot, dialog)
    qtbot.keyClicks(QApplication.focusWidget(), "sigmo")  # Sigmoid, HardSigmoid
    _press(qtbot, Qt.Key.Key_Down)  # moves in the list while the search field keeps the keyboard
    assert dialog.chosen().name == "HardSigmoid" and QApplication.focusWidget() is dialog.search_edit  # type: ignore[union-attr]
    _press(qtbot, Qt.Key.Key_Return)
    assert not dialog.isVisible() and doc.model.graph.node[3].op_type == "HardSigmoid"


def test_branch_question_for_a_node_alone(example_path: Path) -> None:
    doc = onnxviz.open(example_path)
    branch = doc.edit.node_branch("/stem/conv/Conv", "inputs")  # it reads only the graph input and weights
    assert branch_question(branch) == "No other node feeds only it: delete /stem/conv/Conv alone?"
    assert branch_details(branch)[1] == "Weights only they read (2): stem.conv.weight, stem.conv.bias."


def test_insert_offers_the_words_a_string_attribute_may_be(qtbot: QtBot, window: MainWindow, doc: Document) -> None:
    doc.selection.select_node("", 2)
    dialog = _palette(qtbot, window, "bitshift")
    combo = dialog.needs.attribute_fields["direction"][1]
    assert isinstance(combo, QComboBox) and [combo.itemText(k) for k in range(combo.count())] == ["RIGHT", "LEFT"]
    combo.setCurrentText("LEFT")
    qtbot.keyClicks(dialog.needs.input_fields[0][1].edit, "stem.bn")
    shot(dialog, "insert_bitshift")
    dialog.ok_button.click()
    node = doc.model.graph.node[3]
    assert node.op_type == "BitShift" and helper.get_attribute_value(node.attribute[0]) == b"LEFT"
