"""Names from a hostile file in the edit dialogs: shown escaped and cut like in the panels, never obeyed and
never making a dialog wider than the screen, while the fields the user edits hold the name as written."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from PySide6.QtCore import QLocale, Qt
from PySide6.QtWidgets import QApplication, QComboBox, QDialog, QLabel, QLineEdit, QMessageBox, QWidget
from pytestqt.qtbot import QtBot
from window_fixtures import open_and_wait, settle

from onnxviz.model.document import Document
from onnxviz.ui.edit.attributes import AttributesDialog
from onnxviz.ui.edit.controller import EditController
from onnxviz.ui.edit.model_dialogs import GraphIODialog, ModelPropertiesDialog
from onnxviz.ui.edit.palette_dialog import PaletteDialog
from onnxviz.ui.main_window import MainWindow
from onnxviz.ui.widgets.forms import FormDialog
from onnxviz.ui.widgets.names import unbreak

LONG = 100_000
NODE, VALUE, INPUT, OUTPUT, WEIGHT = ("n" * LONG, "v" * LONG, "i" * LONG, "o" * LONG, "w" * LONG)
# a right-to-left override makes 'exe.txt' read 'txt.exe'; a newline splits a one-line label in two
EVIL_NODE = "run \u202etxt.exe\nline <b>two</b> & co"
EVIL_VALUE = "val\u202eeulav\nsecond"
EVIL_INPUT = "in\u2067put\u2069\n<i>x</i>"
EVIL_KEY, EVIL_META = "key\u202eyek\nk", "meta\u202eatem\nm"
EVIL_ATTR = "attr\u202erta\n"
# the characters that act on the text around them, and line breaks, none of which may reach a label raw
RAW = set("\u202e\u2067\u2069\n")
WIDEST = 900  # no dialog is wider than this because of a name
SHOTS = os.environ.get("ONNXVIZ_DIALOG_SHOTS", "")  # a folder: each dialog is saved there as a PNG


def _model(node: str, value: str, input_: str, output: str, weight: str,
           metadata: dict[str, str]) -> onnx.ModelProto:
    """input + weight -> Add ``node`` -> ``value`` -> Relu 'relu' -> ``output``; a second graph input 'x2'."""
    init = onnx.numpy_helper.from_array(np.arange(4, dtype=np.float32), weight)
    nodes = [helper.make_node("Add", [input_, weight], [value], name=node, doc_string="adds"),
             helper.make_node("Relu", [value], [output], name="relu")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(input_, TensorProto.FLOAT, [1, 4]),
                                           helper.make_tensor_value_info("x2", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info(output, TensorProto.FLOAT, [1, 4])], initializer=[init])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    helper.set_model_props(model, metadata)
    return model


@pytest.fixture
def long_names(tmp_path: Path) -> Path:
    path = tmp_path / "long.onnx"
    onnx.save(_model(NODE, VALUE, INPUT, OUTPUT, WEIGHT, {"k" * LONG: "m" * LONG}), path)
    return path


@pytest.fixture
def evil_names(tmp_path: Path) -> Path:
    path = tmp_path / "evil.onnx"
    model = _model(EVIL_NODE, EVIL_VALUE, EVIL_INPUT, "out\u202e", "weight\n", {EVIL_KEY: EVIL_META})
    model.graph.node[0].attribute.append(helper.make_attribute(EVIL_ATTR, 1))  # Add has none: a problem
    onnx.save(model, path)
    return path


def _open(qtbot: QtBot, make_window: Callable[[], MainWindow],
          path: Path) -> tuple[MainWindow, EditController, Document]:
    w = make_window()
    w.resize(1000, 700)
    open_and_wait(qtbot, w, path)
    settle()
    assert w.doc is not None
    return w, w.editing, w.doc  # type: ignore[attr-defined]


def _dialog(editing: EditController, action: str, kind: type[QDialog] = FormDialog) -> QDialog:
    editing.actions[action].trigger()
    dialog = editing.dialog
    assert isinstance(dialog, kind) and dialog.isVisible(), (action, dialog)
    settle()
    return dialog


def _shot(widget: QWidget, name: str) -> None:
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        widget.grab().save(str(Path(SHOTS) / f"dialogs-{name}.png"))


def _texts(dialog: QWidget) -> list[str]:
    """What the dialog shows as text: its title, labels, combo items, list and table cells (not the fields
    the user edits)."""
    out = [dialog.windowTitle()]
    out += [label.text() for label in dialog.findChildren(QLabel) if label.isVisibleTo(dialog)]
    for combo in dialog.findChildren(QComboBox):
        if not combo.isEditable():
            out += [combo.itemText(k) for k in range(combo.count())]
    return [unbreak(text) for text in out]  # without the places to wrap long runs


def _assert_fits(dialog: QWidget, where: str) -> None:
    """Not wider than :data:`WIDEST`, and not asking to be (the window manager would give it the width)."""
    assert dialog.width() <= WIDEST, (where, dialog.width())
    assert dialog.minimumSizeHint().width() <= WIDEST, (where, dialog.minimumSizeHint())
    assert dialog.sizeHint().width() <= WIDEST, (where, dialog.sizeHint())
    assert dialog.height() <= 1000, (where, dialog.height())


def _assert_nothing_raw(texts: list[str], where: str) -> None:
    for text in texts:
        assert not RAW & set(text), (where, repr(text[:300]))
        assert len(text) < 2000, (where, len(text))


def _select_node(w: MainWindow, name: str) -> None:
    assert w.doc is not None
    [i] = [k for k, n in enumerate(w.doc.model.graph.node) if n.name == name]
    w.doc.selection.select_node("", i)
    settle()


# -- node dialogs -----------------------------------------------------------------------------------------
def test_attributes_dialog_names_the_node_escaped_and_elided(
        qtbot: QtBot, make_window: Callable[[], MainWindow], long_names: Path, evil_names: Path) -> None:
    """The header and title quoted the whole name: a 100,000-character name made the dialog as wide as the
    name, and a right-to-left override reversed the title."""
    w, editing, _doc = _open(qtbot, make_window, long_names)
    _select_node(w, NODE)
    dialog = _dialog(editing, "attributes", AttributesDialog)
    assert isinstance(dialog, AttributesDialog)
    _shot(dialog, "attributes-long")
    _assert_fits(dialog, "attributes")
    assert len(dialog.windowTitle()) < 120 and "…" in dialog.windowTitle()
    header = dialog.editor.header
    assert header.width() <= dialog.width() and "…" in header.text()
    assert header.copy_name == NODE  # type: ignore[attr-defined]
    dialog.close()

    w, editing, _doc = _open(qtbot, make_window, evil_names)
    _select_node(w, EVIL_NODE)
    dialog = _dialog(editing, "attributes", AttributesDialog)
    _shot(dialog, "attributes-evil")
    _assert_nothing_raw(_texts(dialog), "attributes")
    assert "run \\u202etxt.exe\\x0aline" in dialog.windowTitle()
    assert "run \\u202etxt.exe\\x0aline &lt;b&gt;two&lt;/b&gt; &amp; co" in unbreak(dialog.editor.header.text())
    table = dialog.editor.table
    assert table.rowCount() == 1 and table.item(0, 0).text() == "attr\\u202erta\\x0a"  # type: ignore[union-attr]
    table.selectRow(0)
    dialog.editor.remove_selected()  # removes the attribute named exactly so
    assert w.doc is not None and not w.doc.model.graph.node[0].attribute and not dialog.editor.error.isVisible()


def test_rename_node_shows_the_name_escaped_and_cut_and_renames_it_exactly(
        qtbot: QtBot, make_window: Callable[[], MainWindow], long_names: Path, evil_names: Path) -> None:
    """The intro quoted the whole name (the dialog was as wide as a 100,000-character name); the field
    holds the name exactly, so editing it keeps every character."""
    w, editing, doc = _open(qtbot, make_window, long_names)
    _select_node(w, NODE)
    dialog = _dialog(editing, "rename_node")
    assert isinstance(dialog, FormDialog)
    _shot(dialog, "rename-node-long")
    _assert_fits(dialog, "rename node")
    _assert_nothing_raw(_texts(dialog), "rename node")
    assert any("(+99,920 characters)" in t for t in _texts(dialog))
    edit = dialog.fields["name"]
    assert isinstance(edit, QLineEdit) and edit.text() == NODE
    edit.end(False)
    qtbot.keyClicks(edit, "_2")
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    assert not dialog.isVisible() and doc.model.graph.node[0].name == NODE + "_2"

    w, editing, doc = _open(qtbot, make_window, evil_names)
    _select_node(w, EVIL_NODE)
    dialog = _dialog(editing, "rename_node")
    assert isinstance(dialog, FormDialog)
    _shot(dialog, "rename-node-evil")
    _assert_nothing_raw(_texts(dialog), "rename node")
    assert any("run \\u202etxt.exe\\x0aline <b>two</b> & co" in t for t in _texts(dialog))
    edit = dialog.fields["name"]
    assert isinstance(edit, QLineEdit) and edit.text() == EVIL_NODE
    [mark] = edit.actions()  # the field cannot show all it holds: a mark says so
    assert "run \\u202etxt.exe\\x0aline" in mark.toolTip()
    qtbot.keyClick(edit, Qt.Key.Key_Return)  # unchanged: no edit
    assert not dialog.isVisible() and not doc.undo_stack.can_undo
    dialog = _dialog(editing, "rename_node")
    assert isinstance(dialog, FormDialog)
    new = "new\u202ename\n" + "z" * 5000
    dialog.fields["name"].setText(new)  # type: ignore[attr-defined]
    qtbot.keyClick(dialog.fields["name"], Qt.Key.Key_Return)
    assert doc.model.graph.node[0].name == new
    undo = editing.actions["undo"].text()  # the Edit menu names the edit: escaped and short
    assert undo.startswith("&Undo Rename node run \\u202etxt.exe\\x0a") and len(undo) < 200 and not RAW & set(undo)
    doc.edit.rename_node("relu", "a&b")
    assert editing.actions["undo"].text() == "&Undo Rename node relu -> a&&b"  # '&' shown, not a mnemonic


def test_node_description_change_operator_and_rename_value_quote_names_escaped(
        qtbot: QtBot, make_window: Callable[[], MainWindow], long_names: Path, evil_names: Path) -> None:
    for path in (long_names, evil_names):
        w, editing, doc = _open(qtbot, make_window, path)
        node = doc.model.graph.node[0]
        doc.selection.select_node("", 0)
        settle()
        for action in ("describe", "op_type"):
            dialog = _dialog(editing, action)
            _shot(dialog, f"{action}-{path.stem}")
            _assert_fits(dialog, action)
            _assert_nothing_raw(_texts(dialog), action)
            dialog.close()
        value = node.output[0]
        doc.selection.select_value("", value)
        settle()
        dialog = _dialog(editing, "rename_value")
        assert isinstance(dialog, FormDialog)
        _shot(dialog, f"rename-value-{path.stem}")
        _assert_fits(dialog, "rename value")
        _assert_nothing_raw(_texts(dialog), "rename value")
        edit = dialog.fields["name"]
        assert isinstance(edit, QLineEdit) and edit.text() == value
        edit.setText(value + "\u202e!")
        qtbot.keyClick(edit, Qt.Key.Key_Return)
        assert not dialog.isVisible() and doc.model.graph.node[1].input[0] == value + "\u202e!"
        assert doc.selection.state.value == value + "\u202e!"


def test_rewire_lists_inputs_and_values_escaped_and_connects_the_exact_value(
        qtbot: QtBot, make_window: Callable[[], MainWindow], long_names: Path, evil_names: Path) -> None:
    """The Input list showed '1: name' whole (a combo as wide as the name) and the completer's list showed
    the values' names raw."""
    for path, node, other in ((long_names, NODE, "x2"), (evil_names, EVIL_NODE, EVIL_INPUT)):
        w, editing, doc = _open(qtbot, make_window, path)
        _select_node(w, node)
        dialog = _dialog(editing, "rewire")
        assert isinstance(dialog, FormDialog)
        _shot(dialog, f"rewire-{path.stem}")
        _assert_fits(dialog, "rewire")
        texts = _texts(dialog)
        _assert_nothing_raw(texts, "rewire")
        port = dialog.fields["port"]
        assert isinstance(port, QComboBox) and port.count() == 2 and port.sizeHint().width() < 600  # Add's 2
        assert all(len(port.itemText(k)) < 100 for k in range(port.count()))
        edit = dialog.fields["value"].edit  # type: ignore[attr-defined]  # a value, or numbers
        assert isinstance(edit, QLineEdit)
        completer = edit.completer()
        model, popup = completer.model(), completer.popup()
        names = [model.index(r, 0).data() for r in range(model.rowCount())]
        assert other in names  # what a completion puts in the field: the name as written
        shown = [popup.itemDelegate().displayText(name, QLocale()) for name in names]  # type: ignore[attr-defined]
        _assert_nothing_raw(shown, "rewire completions")
        port.setCurrentIndex(1)
        edit.setText(other)
        qtbot.keyClick(edit, Qt.Key.Key_Return)
        assert not dialog.isVisible() and list(doc.model.graph.node[0].input)[1] == other


def test_insert_node_places_name_the_node_escaped_and_fit_the_dialog(
        qtbot: QtBot, make_window: Callable[[], MainWindow], long_names: Path, evil_names: Path) -> None:
    """'After <name> (on <value>)' made the Place list, and the dialog, as wide as the names."""
    for path, node in ((long_names, NODE), (evil_names, EVIL_NODE)):
        w, editing, doc = _open(qtbot, make_window, path)
        _select_node(w, node)
        dialog = _dialog(editing, "insert", PaletteDialog)
        assert isinstance(dialog, PaletteDialog)
        _shot(dialog, f"insert-{path.stem}")
        _assert_fits(dialog, "insert")
        _assert_nothing_raw(_texts(dialog), "insert")
        assert dialog.placement.count() == 3 and dialog.placement.width() < WIDEST  # after, beside, before
        tip = dialog.placement.itemData(0, Qt.ItemDataRole.ToolTipRole)
        assert tip and len(tip) < 6000 and not RAW & set(tip)
        value = doc.model.graph.node[0].output[0]
        qtbot.keyClicks(dialog.search_edit, "Relu")
        dialog.placement.setCurrentIndex(0)
        dialog.accept()
        assert not dialog.isVisible()
        inserted = [n for n in doc.model.graph.node if n.op_type == "Relu" and n.name != "relu"]
        assert len(inserted) == 1 and list(inserted[0].input) == [value]


# -- graph and model dialogs ------------------------------------------------------------------------------
def test_graph_inputs_and_outputs_dialog_keeps_exact_names_in_its_fields_and_fits(
        qtbot: QtBot, make_window: Callable[[], MainWindow], long_names: Path, evil_names: Path) -> None:
    for path, input_ in ((long_names, INPUT), (evil_names, EVIL_INPUT)):
        w, editing, doc = _open(qtbot, make_window, path)
        dialog = _dialog(editing, "graph_io", GraphIODialog)
        assert isinstance(dialog, GraphIODialog)
        _shot(dialog, f"graph-io-{path.stem}")
        _assert_fits(dialog, "graph io")
        _assert_nothing_raw(_texts(dialog), "graph io")
        edit = dialog.cell(0, 1)
        assert isinstance(edit, QLineEdit) and edit.text() == input_
        tip = edit.toolTip()  # what the field holds, as a label would show it
        assert tip and len(tip) < 6000 and not RAW & set(tip)
        if path == evil_names:  # a mark says the field holds characters it does not show
            [mark] = edit.actions()
            assert "does not show" in mark.toolTip() and "in\\u2067put\\u2069\\x0a&lt;i&gt;" in mark.toolTip()
        else:
            assert not edit.actions()
        dialog.table.selectRow(0)  # an input named that is removed: the row's field gives the exact name
        dialog.table.setCurrentCell(0, 0)
        dialog.remove_selected()
        assert input_ not in [v.name for v in doc.model.graph.input] and not dialog.error.isVisible()


def test_model_properties_show_metadata_escaped_and_keep_it_exact(
        qtbot: QtBot, make_window: Callable[[], MainWindow], long_names: Path, evil_names: Path) -> None:
    """Metadata cells showed keys and values raw; the cell's editor and an unchanged OK keep them exact."""
    for path, key, value in ((long_names, "k" * LONG, "m" * LONG), (evil_names, EVIL_KEY, EVIL_META)):
        w, editing, doc = _open(qtbot, make_window, path)
        dialog = _dialog(editing, "model", ModelPropertiesDialog)
        assert isinstance(dialog, ModelPropertiesDialog)
        _shot(dialog, f"model-properties-{path.stem}")
        _assert_fits(dialog, "model properties")
        table = dialog.metadata
        delegate = table.itemDelegate()
        shown = [delegate.displayText(table.item(0, c).text(), QLocale()) for c in (0, 1)]  # type: ignore[attr-defined,union-attr]
        _assert_nothing_raw(shown, "metadata")
        assert all(len(s) < 400 for s in shown)
        assert dialog.metadata_entries() == {key: value}
        table.setCurrentCell(0, 1)
        table.editItem(table.item(0, 1))
        editor = QApplication.focusWidget()
        assert isinstance(editor, QLineEdit) and editor.text() == value
        table.closePersistentEditor(table.item(0, 1))
        table.setFocus()
        dialog.accept()
        assert not dialog.isVisible() and not doc.undo_stack.can_undo
        assert {e.key: e.value for e in doc.model.metadata_props} == {key: value}


# -- refusals and confirmations ---------------------------------------------------------------------------
def _message_boxes() -> list[QMessageBox]:
    return [b for b in QApplication.topLevelWidgets() if isinstance(b, QMessageBox) and b.isVisible()]


def test_refusals_quote_names_escaped_and_cut(
        qtbot: QtBot, make_window: Callable[[], MainWindow], long_names: Path, evil_names: Path) -> None:
    """A refused edit quoted the whole name: in the form's error line (the dialog grew 100,000 characters
    of text) and in the Edit Refused box."""
    w, editing, doc = _open(qtbot, make_window, long_names)
    doc.selection.select_node("", 1)
    settle()
    dialog = _dialog(editing, "rename_node")
    assert isinstance(dialog, FormDialog)
    dialog.fields["name"].setText(NODE)  # type: ignore[attr-defined]
    dialog.buttons.accepted.emit()
    assert dialog.isVisible() and "already exists" in dialog.error.text()
    settle()
    _shot(dialog, "refused-rename-long")
    _assert_fits(dialog, "refused rename")
    assert len(dialog.error.text()) < 400 and dialog.height() < 600
    assert dialog.error.height() >= dialog.error.heightForWidth(dialog.error.width())  # every line shows
    dialog.close()

    doc.selection.select_value("", OUTPUT)  # already a graph output: the Edit Refused box says so
    settle()
    editing.actions["mark_output"].trigger()
    settle()
    [box] = _message_boxes()
    _shot(box, "refused-mark-output-long")
    _assert_fits(box, "refused box")
    assert "is already a graph output" in box.text() and len(box.text()) < 400
    box.close()

    w, editing, doc = _open(qtbot, make_window, evil_names)
    doc.selection.select_value("", "out\u202e")
    settle()
    editing.actions["mark_output"].trigger()
    settle()
    [box] = [b for b in _message_boxes() if b.parent() is w]
    _shot(box, "refused-mark-output-evil")
    assert box.textFormat() == Qt.TextFormat.PlainText and "'out\\u202e' is already a graph output" in box.text()
    _assert_nothing_raw([box.text()], "refused box")
    box.close()


def test_a_failed_run_quoting_a_name_whole_is_shown_escaped_and_cut(
        qtbot: QtBot, make_window: Callable[[], MainWindow], evil_names: Path) -> None:
    """onnxruntime's messages quote a node's name whole (\"...running Add node. Name:'...'\"): the Cannot
    Run the Model box was as wide as the name, and obeyed its right-to-left override."""
    w, _editing, _doc = _open(qtbot, make_window, evil_names)
    c = w.run_controller  # type: ignore[attr-defined]
    c.runs.report_failure(f"the run failed: Non-zero status code returned while running Add node. Name:'{NODE}' "
                      f"Status Message: {EVIL_NODE} <b>broadcast</b>")
    settle()
    box = c.failure_box
    assert isinstance(box, QMessageBox) and box.isVisible()
    _shot(box, "run-failed-long")
    _assert_fits(box, "run failed")
    _assert_nothing_raw([box.text()], "run failed")
    text = unbreak(box.text())  # the name elided in its middle, the sentence around it kept
    assert box.textFormat() == Qt.TextFormat.PlainText and f"Name:'{'n' * 54}…{'n' * 59}' Status" in text
    assert text.endswith("Status Message: run \\u202etxt.exe\\x0aline <b>two</b> & co <b>broadcast</b>")
    box.close()


def test_replace_weights_confirmation_quotes_the_name_escaped_and_cut(
        qtbot: QtBot, make_window: Callable[[], MainWindow], long_names: Path, tmp_path: Path) -> None:
    w, editing, _doc = _open(qtbot, make_window, long_names)
    npy = tmp_path / "w.npy"
    np.save(npy, np.zeros((2, 3), np.float32))
    editing.replace_weights_from(WEIGHT, npy)
    box = editing.dialog
    assert isinstance(box, QMessageBox) and box.isVisible()
    settle()
    _shot(box, "replace-weights-long")
    _assert_fits(box, "replace weights")
    assert "consumers expect" in box.text() and len(box.text()) < 600 and "(+99,920 characters)" in box.text()
    assert box.textFormat() == Qt.TextFormat.PlainText  # a name is never read as markup
    box.button(QMessageBox.StandardButton.Yes).click()
    assert w.doc is not None and onnx.numpy_helper.to_array(w.doc.model.graph.initializer[0]).shape == (2, 3)
