"""The window does what the API does, where the user already is, and leaves no problem it could have resolved:
numbers as inputs, new constants and initializers, dimensions made dynamic or static, element types and enum
values chosen from lists, deletions that reconnect or take their orphaned outputs along, a QDQ group extracted
whole from its expanded frame, and the small frictions (refused entries that stayed, weight items on a
non-weight, values typed again, long weights). Each edit is one step that Ctrl+Z takes back to the exact bytes."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import TEST_DATA
from edit_models import classifier
from onnx import TensorProto, helper, numpy_helper
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtWidgets import QApplication, QComboBox, QLineEdit, QMessageBox, QPlainTextEdit, QWidget
from pytestqt.qtbot import QtBot
from window_fixtures import doc_of, press_undo, settle

from onnxviz.model.background.procpool import shared_worker
from onnxviz.model.document import Document
from onnxviz.ui.canvas.painting import frame_title_rect
from onnxviz.ui.edit.attributes import AttributesDialog
from onnxviz.ui.edit.model_dialogs import GraphIODialog
from onnxviz.ui.edit.node_needs import InputField
from onnxviz.ui.edit.palette_dialog import PaletteDialog
from onnxviz.ui.main_window import MainWindow
from onnxviz.ui.widgets.forms import FormDialog

SHOTS = os.environ.get("ONNXVIZ_SHOTS", "")  # a folder to keep pictures of the dialogs in, for a human to look at


@pytest.fixture
def window(open_window: Callable[[Path], MainWindow], example_copy: Path) -> MainWindow:
    return open_window(example_copy)


@pytest.fixture
def doc(window: MainWindow) -> Document:
    return doc_of(window)


def shot(widget: QWidget, name: str) -> None:
    QApplication.processEvents()
    picture = widget.grab()
    assert not picture.isNull()
    if SHOTS:
        Path(SHOTS).mkdir(exist_ok=True)
        picture.save(str(Path(SHOTS) / f"{name}.png"))


def form_of(window: MainWindow, action: str) -> FormDialog:
    window.editing.actions[action].trigger()
    dialog = window.editing.dialog
    assert isinstance(dialog, FormDialog) and dialog.isVisible()
    return dialog


def typed(qtbot: QtBot, widget: QWidget, text: str) -> None:
    edit = widget.edit if isinstance(widget, InputField) else widget
    assert isinstance(edit, QLineEdit)
    edit.selectAll()
    qtbot.keyClicks(edit, text)


def node(doc: Document, name: str) -> onnx.NodeProto:
    return next(n for n in doc.model.graph.node if n.name == name)


def declared(doc: Document, name: str) -> onnx.TypeProto:
    g = doc.model.graph
    return next(v.type for v in [*g.input, *g.output, *g.value_info] if v.name == name)


def dims(t: onnx.TypeProto) -> list[int | str]:
    return [d.dim_value if d.HasField("dim_value") else d.dim_param for d in t.tensor_type.shape.dim]


def undone(qtbot: QtBot, window: MainWindow, doc: Document, before: bytes) -> None:
    """Ctrl+Z once gives back ``before`` exactly."""
    press_undo(qtbot, window)
    assert doc.model.SerializeToString() == before


# -- numbers where an input is expected ----------------------------------------------------------------------------
def palette(qtbot: QtBot, window: MainWindow, search: str) -> PaletteDialog:
    window.editing.actions["insert"].trigger()
    dialog = window.editing.dialog
    assert isinstance(dialog, PaletteDialog)
    qtbot.keyClicks(dialog.search_edit, search)
    return dialog


def test_insert_mul_by_a_typed_number(qtbot: QtBot, window: MainWindow, doc: Document) -> None:
    before = doc.model.SerializeToString()
    doc.selection.select_node("", 2)  # /stem/relu/Relu
    dialog = palette(qtbot, window, "mul")
    field = dialog.needs.input_fields[0][1]
    typed(qtbot, field, "2.0")  # was: "Input '2.0' is not defined in this graph"
    shot(dialog, "insert_mul_number")
    dialog.ok_button.click()
    assert not dialog.isVisible()
    mul = doc.model.graph.node[3]
    weight = doc.edit.initializer_proto(mul.input[1])
    assert weight.data_type == TensorProto.FLOAT and numpy_helper.to_array(weight).tolist() == 2.0
    assert doc.check() == [] and len(doc.undo_stack.commands) == 1
    undone(qtbot, window, doc, before)


def test_insert_add_of_numbers_from_a_npy_file_as_a_constant(qtbot: QtBot, window: MainWindow, doc: Document,
                                                               tmp_path: Path) -> None:
    before = doc.model.SerializeToString()
    np.save(tmp_path / "bias.npy", np.full((1, 16, 1, 1), 0.5))
    doc.selection.select_node("", 2)
    dialog = palette(qtbot, window, "add")
    field = dialog.needs.input_fields[0][1]
    assert isinstance(field, InputField)
    field.load(tmp_path / "bias.npy")
    assert field.edit.text() == "bias.npy: float64[1, 16, 1, 1]"
    dialog.needs.literals.setCurrentText("a Constant node")
    dialog.ok_button.click()
    assert [n.op_type for n in doc.model.graph.node[3:5]] == ["Constant", "Add"]
    constant = numpy_helper.to_array(doc.model.graph.node[3].attribute[0].t)
    assert constant.dtype == np.float32 and constant.shape == (1, 16, 1, 1)  # the type the Add's A has
    assert doc.check() == []
    undone(qtbot, window, doc, before)


def test_a_value_neither_named_nor_numbers_is_one_sentence(qtbot: QtBot, window: MainWindow, doc: Document) -> None:
    doc.selection.select_node("", 2)
    dialog = palette(qtbot, window, "add")
    typed(qtbot, dialog.needs.input_fields[0][1], "stem.bnn")
    dialog.ok_button.click()
    assert dialog.isVisible() and dialog.error.text() == (
        "'stem.bnn' is neither a value of this graph nor numbers such as 2.0 or [1, 2, 3].")
    assert not doc.undo_stack.commands


def test_rewire_an_input_to_numbers(qtbot: QtBot, window: MainWindow, doc: Document) -> None:
    before = doc.model.SerializeToString()
    doc.selection.select_node("", 16)  # /attn/Mul: attn.scores * attn.scale
    form = form_of(window, "rewire")
    port = form.fields["port"]
    assert isinstance(port, QComboBox) and port.itemText(1) == "1: B = attn.scale"
    port.setCurrentIndex(1)
    typed(qtbot, form.fields["value"], "[0.125]")
    shot(form, "rewire_numbers")
    qtbot.keyClick(form.fields["value"].edit, Qt.Key.Key_Return)  # type: ignore[attr-defined]
    assert not form.isVisible()
    mul = node(doc, "/attn/Mul")
    assert numpy_helper.to_array(doc.edit.initializer_proto(mul.input[1])).tolist() == [0.125]
    assert doc.undo_stack.undo_label() == "Connect /attn/Mul input 1 to new initializer /attn/Mul_B"
    undone(qtbot, window, doc, before)


# -- Insert Constant and New Initializer ---------------------------------------------------------------------------
def test_insert_constant_feeding_the_selected_node(qtbot: QtBot, window: MainWindow, doc: Document) -> None:
    before = doc.model.SerializeToString()
    doc.selection.select_node("", 16)  # /attn/Mul
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    qtbot.keyClick(window, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    form = window.editing.dialog
    assert isinstance(form, FormDialog) and form.windowTitle() == "Insert Constant"
    feeds = form.fields["feeds"]
    assert isinstance(feeds, QComboBox)
    assert [feeds.itemText(k) for k in range(feeds.count())] == [
        "(nothing yet)", "input 0 A (now attn.scores) of /attn/Mul", "input 1 B (now attn.scale) of /attn/Mul"]
    feeds.setCurrentIndex(2)
    assert form.text("dtype") == "float32"  # the type B takes (A's)
    form.fields["name"].setText("scale_c")  # type: ignore[attr-defined]
    typed(qtbot, form.fields["value"], "0.125")
    shot(form, "insert_constant")
    form.accept()
    assert not form.isVisible()
    names = [n.name for n in doc.model.graph.node]
    assert names.index("scale_c_Constant") == names.index("/attn/Mul") - 1
    assert node(doc, "/attn/Mul").input[1] == "scale_c" and doc.check() == []
    undone(qtbot, window, doc, before)


def test_new_initializer_of_a_chosen_type(qtbot: QtBot, window: MainWindow, doc: Document) -> None:
    before = doc.model.SerializeToString()
    doc.selection.clear("")
    form = form_of(window, "new_initializer")
    dtype = form.fields["dtype"]
    assert isinstance(dtype, QComboBox) and not dtype.isEditable()
    dtype.setCurrentText("int32")
    typed(qtbot, form.fields["value"], "[[1, 2], [3, 4]]")
    form.accept()
    weight = doc.model.graph.initializer[-1]
    assert weight.name == "weight" and weight.data_type == TensorProto.INT32 and list(weight.dims) == [2, 2]
    undone(qtbot, window, doc, before)
    form = form_of(window, "new_initializer")
    form.fields["dtype"].setCurrentText("uint8")  # type: ignore[attr-defined]
    typed(qtbot, form.fields["value"], "[1, 300]")
    form.accept()
    assert form.isVisible() and form.error.text() == (
        "1 value does not fit in uint8 (fractions, NaN or numbers out of its range): 300 at index 1.")


def test_constant_from_insert_node_asks_for_its_value(qtbot: QtBot, window: MainWindow, doc: Document) -> None:
    doc.selection.select_node("", 2)
    dialog = palette(qtbot, window, "constant")
    assert dialog.chosen().name == "Constant" and dialog.ok_button.text() == "Next..."  # type: ignore[union-attr]
    dialog.ok_button.click()  # was: "Constant takes no input, so it cannot go on an edge with 1"
    form = window.editing.dialog
    assert isinstance(form, FormDialog) and form.windowTitle() == "Insert Constant" and form.isVisible()


# -- dimensions made dynamic or static -------------------------------------------------------------------------------
def test_make_the_batch_dynamic_everywhere(qtbot: QtBot, open_window: Callable[[Path], MainWindow],
                                           tmp_path: Path) -> None:
    window = open_window(classifier(tmp_path / "c.onnx"))
    doc = doc_of(window)
    before = doc.model.SerializeToString()
    doc.selection.select_value("", "x")
    form = form_of(window, "dimension")
    assert form.text("input") == "x" and form.text("axis") == "0: 1" and form.text("value") == "batch"
    shot(form, "make_dimension")
    qtbot.keyClick(form.fields["value"], Qt.Key.Key_Return)
    assert not form.isVisible()
    assert dims(declared(doc, "probs")) == ["batch", 5]
    assert {dims(v.type)[0] for v in doc.model.graph.value_info} == {"batch"}  # stale value_info: none left
    assert window.statusBar().currentMessage() == (
        "Make dimension 0 of x dynamic (batch): 1 output and 4 value_info followed.")
    assert doc.check() == []
    undone(qtbot, window, doc, before)


def test_a_refused_entry_in_graph_inputs_and_outputs_goes_back(qtbot: QtBot, window: MainWindow,
                                                              doc: Document) -> None:
    window.editing.actions["graph_io"].trigger()
    dialog = window.editing.dialog
    assert isinstance(dialog, GraphIODialog)
    name = dialog.cell(0, 1)
    assert isinstance(name, QLineEdit)
    name.setText("probabilities")  # taken: refused
    name.editingFinished.emit()
    assert "already exists" in dialog.error.text()
    qtbot.waitUntil(lambda: isinstance(dialog.cell(0, 1), QLineEdit) and dialog.cell(0, 1).text() == "image")  # type: ignore[attr-defined]
    shape = dialog.cell(0, 3)
    assert isinstance(shape, QLineEdit)
    shape.setText("batch, 3, 1.5, 32")
    shape.editingFinished.emit()
    assert "'1.5' is not a dimension" in dialog.error.text()
    qtbot.waitUntil(lambda: dialog.cell(0, 3).text() == "batch, 3, 32, 32")  # type: ignore[attr-defined]
    dialog.cell(0, 3).editingFinished.emit()  # type: ignore[attr-defined]  # the same shape again: no edit
    assert not doc.undo_stack.commands


# -- types and enums chosen, never typed --------------------------------------------------------------------------------
def attributes(window: MainWindow, i: int) -> AttributesDialog:
    doc_of(window).selection.select_node("", i)
    window.editing.actions["attributes"].trigger()
    dialog = window.editing.dialog
    assert isinstance(dialog, AttributesDialog)
    return dialog


def test_cast_to_is_picked_by_name_and_the_output_follows(qtbot: QtBot, window: MainWindow, doc: Document) -> None:
    doc.edit.insert_on_value("probabilities", "Cast", {"to": TensorProto.FLOAT}, name="cast")
    before = doc.model.SerializeToString()
    dialog = attributes(window, 24)
    combo = dialog.editor.value_choices["to"]
    assert not combo.isEditable() and combo.currentText() == "float32"  # was: the bare integer 1
    k = combo.findText("float16")
    combo.setCurrentIndex(k)
    combo.activated.emit(k)
    shot(dialog, "attributes_cast_to")
    assert node(doc, "cast").attribute[0].i == TensorProto.FLOAT16
    assert declared(doc, "probabilities").tensor_type.elem_type == TensorProto.FLOAT16  # in the same step
    assert doc.check() == []
    dialog.close()
    undone(qtbot, window, doc, before)


def test_a_type_change_is_restated_while_the_checks_worker_is_busy(qtbot: QtBot, window: MainWindow, doc: Document,
                                                                  tmp_path: Path) -> None:
    """The inference that restates an edit's types runs in a worker of its own: with the checks' worker held busy
    (as by the validation of a big model's previous state: the GUI thread waited 1.6-4.5 s for it at 12k nodes),
    Cast's new type is picked and its output restated while that job still runs."""
    doc.edit.insert_on_value("probabilities", "Cast", {"to": TensorProto.FLOAT}, name="cast")
    settle()
    release = tmp_path / "release"
    held = shared_worker().submit(os.system, f"for i in $(seq 6000); do [ -e '{release}' ] && exit 0; sleep 0.01; "
                                             "done; exit 1")  # busy until the test lets it go (at most a minute)
    try:
        qtbot.waitUntil(lambda: held.running(), timeout=20000)
        dialog = attributes(window, 24)
        combo = dialog.editor.value_choices["to"]
        k = combo.findText("float16")
        combo.setCurrentIndex(k)
        combo.activated.emit(k)
        assert declared(doc, "probabilities").tensor_type.elem_type == TensorProto.FLOAT16
        assert not held.done()  # the edit did not wait for it
        dialog.close()
    finally:
        release.touch()
    assert held.result(timeout=60) == 0


def test_an_enum_attribute_added_is_picked_from_its_values(qtbot: QtBot, window: MainWindow, doc: Document) -> None:
    dialog = attributes(window, 0)  # /stem/conv/Conv, without auto_pad
    editor = dialog.editor
    editor.add_combo.setCurrentText("auto_pad")
    assert editor.add_choice.isVisibleTo(editor) and not editor.add_value.isVisibleTo(editor)
    assert [editor.add_choice.itemText(k) for k in range(editor.add_choice.count())] == [
        "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"]
    assert editor.add_choice.currentText() == "NOTSET"  # the default first
    editor.add_choice.setCurrentText("VALID")
    shot(dialog, "attributes_add_enum")
    editor.add_button.click()
    assert helper.get_attribute_value(node(doc, "/stem/conv/Conv").attribute[-1]) == b"VALID"
    editor.add_combo.setCurrentText("group")  # a number again: typed
    assert editor.add_value.isVisibleTo(editor) and not editor.add_choice.isVisibleTo(editor)


# -- deletions that leave nothing to fix --------------------------------------------------------------------------------
def test_delete_asks_to_reconnect_a_node_with_one_input_and_output_of_one_type(
        qtbot: QtBot, window: MainWindow, doc: Document) -> None:
    before = doc.model.SerializeToString()
    doc.selection.select_node("", 2)  # /stem/relu/Relu: stem.bn -> stem.relu, the same type
    window.editing.actions["delete"].trigger()
    box = window.editing.dialog
    assert isinstance(box, QMessageBox) and box.text() == "Reconnect what /stem/relu/Relu feeds to its input?"
    assert box.defaultButton().text() == "Delete and Reconnect"
    shot(box, "delete_reconnect")
    qtbot.keyClick(box, Qt.Key.Key_Return)
    assert node(doc, "/stem/pool/MaxPool").input[0] == "stem.bn" and doc.check() == []
    undone(qtbot, window, doc, before)
    doc.selection.select_node("", 2)
    window.editing.actions["delete"].trigger()
    box = window.editing.dialog
    assert isinstance(box, QMessageBox)
    next(b for b in box.buttons() if b.text() == "Delete Only").click()
    assert node(doc, "/stem/pool/MaxPool").input[0] == "stem.relu"  # left dangling, as asked
    undone(qtbot, window, doc, before)
    doc.selection.select_node("", 0)  # a Conv: three inputs, no question
    window.editing.actions["delete"].trigger()
    assert len(doc.model.graph.node) == 23


def test_delete_with_children_makes_the_value_before_it_the_output(qtbot: QtBot, window: MainWindow,
                                                                   doc: Document) -> None:
    before = doc.model.SerializeToString()
    doc.selection.select_node("", 22)  # /head/fc/Gemm -> /head/Softmax -> probabilities
    window.editing.actions["delete_outputs"].trigger()
    box = window.editing.dialog
    assert isinstance(box, QMessageBox)
    qtbot.keyClick(box, Qt.Key.Key_Return)  # the default: the model keeps an output
    assert [o.name for o in doc.model.graph.output] == ["head.pool"] and doc.check() == []
    undone(qtbot, window, doc, before)


# -- a group extracted whole, picked by its expanded frame --------------------------------------------------------------
def test_extract_an_expanded_qdq_group_with_its_weights(qtbot: QtBot, open_window: Callable[[Path], MainWindow],
                                                       tmp_path: Path) -> None:
    path = TEST_DATA / "exports" / "resnet_int8_qdq.onnx"
    window = open_window(path)
    canvas = window.canvas
    qtbot.waitUntil(lambda: canvas.drawable is not None and not canvas.busy)
    canvas.expand_group("layer1")
    qtbot.waitUntil(lambda: canvas.drawable is not None and "layer1" in canvas.drawable.scene.group_path
                    and not canvas.busy)
    d = canvas.drawable
    assert d is not None
    frame = d.scene.group_path.index("layer1")
    title = frame_title_rect(d, frame)
    canvas.view.set_scale(1.0)
    canvas.view.center_on(QPointF(title.center().x(), title.center().y()))
    at = canvas.view.map_from_scene(QPointF(title.left() + 40, title.center().y()))
    qtbot.mouseClick(canvas.view, Qt.MouseButton.LeftButton, pos=QPoint(int(at.x()), int(at.y())))
    doc = doc_of(window)
    layer = [i for i, n in enumerate(doc.model.graph.node) if n.name.startswith("/layer1/")]
    assert canvas.selected_nodes() == layer and canvas.view.options.selected_frame == frame
    shot(canvas.view, "expanded_group_selected")
    window.editing.actions["extract_selection"].trigger()
    box = window.editing.dialog
    assert isinstance(box, QMessageBox)
    said = box.informativeText().replace("\u200b", "")
    assert f"{len(layer) + 4} nodes" in box.text()  # its 4 weights' DequantizeLinear came along
    assert "Inputs: /stem/stem.2/Relu_output_0_DequantizeLinear_Output." in said
    box.reject()
    canvas.view.empty_clicked.emit()
    assert canvas.selected_nodes() == [] and canvas.view.options.selected_frame == -1


# -- the small items ------------------------------------------------------------------------------------------------------
def test_weight_items_only_on_a_weight(window: MainWindow, doc: Document) -> None:
    actions = window.editing.actions
    keys = ("replace_weights", "weights_text", "to_constant")
    doc.selection.select_value("", "stem.relu")  # an activation
    assert not any(actions[k].isEnabled() for k in keys)
    assert not set(keys) & {a.text() for a in window.editing.context_menu().actions()}
    doc.selection.select_node("", 2)
    assert not any(actions[k].isEnabled() for k in keys)
    doc.selection.select_value("", "stem.conv.bias")
    assert all(actions[k].isEnabled() for k in keys)


def test_a_description_or_weights_typed_again_unchanged_are_no_edit(qtbot: QtBot, window: MainWindow,
                                                                    doc: Document) -> None:
    doc.selection.select_node("", 9)
    form = form_of(window, "describe")
    form.accept()  # the description as it was
    doc.selection.select_value("", "attn.flat_shape")
    form = form_of(window, "weights_text")
    qtbot.keyClick(form.fields["values"], Qt.Key.Key_Return)
    assert not form.isVisible() and not doc.undo_stack.commands and not doc.is_dirty


def test_weights_of_more_than_64_numbers_and_two_dimensions_as_text(qtbot: QtBot, window: MainWindow,
                                                                     doc: Document) -> None:
    before = doc.model.SerializeToString()
    doc.selection.select_value("", "attn.q.weight")  # float32[16x16]: refused before (at most 64, one dimension)
    form = form_of(window, "weights_text")
    box = form.fields["values"]
    assert isinstance(box, QPlainTextEdit) and box.toPlainText().count("\n") == 15  # a row per line
    shot(form, "weights_text_matrix")
    box.setPlainText(str(np.eye(16, dtype=int).tolist()))
    qtbot.keyClick(box, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert not form.isVisible()
    weight = numpy_helper.to_array(doc.edit.initializer_proto("attn.q.weight"))
    assert weight.dtype == np.float32 and np.array_equal(weight, np.eye(16))
    undone(qtbot, window, doc, before)


# -- issue 29: cycles, lossy casts, stale value_info, in the window ------------------------------------------------------
def test_insert_reading_its_own_output_is_refused_in_the_dialog(qtbot: QtBot, window: MainWindow,
                                                               doc: Document) -> None:
    doc.selection.select_value("", "probabilities")
    dialog = palette(qtbot, window, "mul")
    typed(qtbot, dialog.needs.input_fields[0][1], "probabilities")
    dialog.ok_button.click()
    assert dialog.isVisible() and "that would be a cycle" in dialog.error.text()
    assert not doc.undo_stack.commands


def test_a_cast_of_weights_that_overflows_is_refused(qtbot: QtBot, window: MainWindow, doc: Document,
                                                     tmp_path: Path) -> None:
    before = doc.model.SerializeToString()
    bias = numpy_helper.to_array(doc.edit.initializer_proto("stem.conv.bias")).astype(np.float64)
    bias[5] = 1e300
    np.save(tmp_path / "bias.npy", bias)
    window.editing.replace_weights_from("stem.conv.bias", tmp_path / "bias.npy")
    box = window.editing.dialog
    assert isinstance(box, QMessageBox)
    next(b for b in box.buttons() if b.text() == "Cast to float32 and Replace").click()
    refusal = next(b for b in window.findChildren(QMessageBox) if b.isVisible() and b is not box)
    assert refusal.text() == ("1 value does not fit in float32 (finite numbers that would become inf or NaN): "
                              "1e+300 at index 5.")
    refusal.close()
    assert doc.model.SerializeToString() == before


def test_deleting_a_node_in_the_window_takes_its_value_info(qtbot: QtBot, open_window: Callable[[Path], MainWindow],
                                                            tmp_path: Path) -> None:
    window = open_window(classifier(tmp_path / "c.onnx"))
    doc = doc_of(window)
    before = doc.model.SerializeToString()
    doc.selection.select_node("", 1)  # relu
    window.editing.actions["delete_reconnect"].trigger()  # Shift+Del: no question
    assert "r" not in {v.name for v in doc.model.graph.value_info}
    settle()
    undone(qtbot, window, doc, before)
