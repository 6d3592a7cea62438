"""onnx-modifier's list of edits, done in the window with its own controls only, counting what the user does.

Each task is a user's goal on a transformer-shaped export (``bench/synth.py``, 2 layers, value_info for every
value as exporters write it). Its function drives a shown :class:`MainWindow` as a user would (clicks on the
canvas, shortcuts, menus, typing into dialogs) through a :class:`Steps` recorder, which counts:

- ``dialogs``: windows that open (an edit dialog, a question, a file dialog);
- ``keys``: keys pressed (each character typed, Return, Escape, a shortcut; an Edit menu item without a shortcut
  counts as two: Alt+E and its letter);
- ``clicks``: mouse clicks (on the canvas, a link, a field, a button, a combo box and its item: two).

:data:`MODIFIER` holds the same counts for onnx-modifier's web page, counted from its own controls (its README
and ``static/view-sidebar.js``: the node sidebar's text fields, which edit on every keystroke, and its buttons
Delete With Children / Delete Single Node / Enter / Add Output / Add Input; the model sidebar's name fields, Dynamic
batch size, Fixed batch size, "Use new shape" + Reshape Input, Delete the output; the top bar's operator selector
and Add node; an initializer's "+" expander, its text area and Open *.npy), along its cheapest path to the same
model. Replacing a field's text there is a click in it, Ctrl+A and the new text. ``bench/bench_modifier_steps.py``
prints both side by side; ``tests/ui/edit/test_modifier_walkthrough.py`` runs each task and checks the saved model.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import shiboken6
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QContextMenuEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QComboBox, QFileDialog, QLabel, QLineEdit, QWidget

from onnxviz.model.document import Document
from onnxviz.ui.main_window import MainWindow
from onnxviz.ui.panels.common import value_href


@dataclass
class Count:
    dialogs: int = 0
    keys: int = 0
    clicks: int = 0

    @property
    def total(self) -> int:
        return self.dialogs + self.keys + self.clicks


@dataclass
class Steps:
    """Drives ``window`` as a user does and counts what that takes (see the module's description)."""

    window: MainWindow
    wait: Callable[[Callable[[], bool]], None]   # until a condition holds (qtbot.waitUntil, or a loop)
    count: Count = field(default_factory=Count)
    _seen: Any = None

    @property
    def doc(self) -> Document:
        assert self.window.doc is not None
        return self.window.doc

    def open_dialog(self) -> Any:
        """The dialog shown now (it must be)."""
        dialog = self.window.editing.dialog
        assert dialog is not None and shiboken6.isValid(dialog) and dialog.isVisible()
        return dialog

    def idle(self) -> bool:
        """No edit dialog is open."""
        dialog = self.window.editing.dialog
        return dialog is None or not shiboken6.isValid(dialog) or not dialog.isVisible()

    def _opened(self) -> None:
        """Count the edit dialog or question the last action opened."""
        QApplication.processEvents()
        dialog = self.window.editing.dialog
        if dialog is not None and shiboken6.isValid(dialog) and dialog is not self._seen and dialog.isVisible():
            self._seen = dialog
            self.count.dialogs += 1

    # -- the canvas ------------------------------------------------------------------------------------
    def _box_point(self, box: int) -> QPoint:
        canvas = self.window.canvas
        d = canvas.drawable
        assert d is not None
        x, y = float(d.x0[box] + d.scene.box_w[box] / 2), float(d.y0[box] + d.scene.box_h[box] / 2)
        canvas.view.center_on(QPointF(x, y))
        at = canvas.view.map_from_scene(QPointF(x, y))
        return QPoint(int(at.x()), int(at.y()))

    def _box_of_node(self, name: str) -> int:
        doc, canvas = self.doc, self.window.canvas
        i = next(k for k, n in enumerate(doc.model.graph.node) if n.name == name)
        self.wait(lambda: canvas.drawable is not None and not canvas.busy)
        assert canvas.drawable is not None
        if i not in canvas.drawable.node_box:  # inside a collapsed group: its + is one more click
            canvas.reveal_node("", i)
            self.count.clicks += 1
            self.wait(lambda: canvas.drawable is not None and not canvas.busy and i in canvas.drawable.node_box)
        assert canvas.drawable is not None
        return canvas.drawable.node_box[i]

    def click_node(self, name: str) -> None:
        """Click the node's box on the canvas (it is selected)."""
        box = self._box_of_node(name)
        QTest.mouseClick(self.window.canvas.view, Qt.MouseButton.LeftButton, pos=self._box_point(box))
        self.count.clicks += 1
        assert self.doc.selection.state.node >= 0 and self.doc.model.graph.node[self.doc.selection.state.node].name == name

    def click_terminal(self, value: str) -> None:
        """Click the box of a graph input or output."""
        canvas = self.window.canvas
        self.wait(lambda: canvas.drawable is not None and not canvas.busy and value in canvas.drawable.value_box)
        assert canvas.drawable is not None
        QTest.mouseClick(canvas.view, Qt.MouseButton.LeftButton, pos=self._box_point(canvas.drawable.value_box[value]))
        self.count.clicks += 1
        assert self.doc.selection.state.value == value

    def right_click_menu(self, text: str) -> None:
        """Right-click the selected box and pick ``text`` in the menu: two clicks."""
        canvas = self.window.canvas
        self.wait(lambda: canvas.drawable is not None and not canvas.busy)
        state = self.doc.selection.state
        d = canvas.drawable
        assert d is not None
        box = d.node_box[state.node] if state.node >= 0 else d.value_box[state.value]
        at = self._box_point(box)
        event = QContextMenuEvent(QContextMenuEvent.Reason.Mouse, at, canvas.view.mapToGlobal(at))
        QApplication.sendEvent(canvas.view, event)
        menu = canvas.last_menu
        assert menu is not None
        action = next(a for a in menu.actions() if a.text().replace("&", "") == text)
        menu.close()
        action.trigger()
        self.count.clicks += 2
        self._opened()

    def click_link(self, value: str) -> None:
        """Click a value's link in the Node panel (it is selected)."""
        panel = self.window.panels.node_panel  # type: ignore[attr-defined]
        href = value_href("", value)
        label = next(lb for lb in panel.findChildren(QLabel) if href in lb.text())
        label.linkActivated.emit(href)
        self.count.clicks += 1
        assert self.doc.selection.state.value == value

    # -- keys, menus, fields ----------------------------------------------------------------------------
    def shortcut(self, key: Qt.Key, modifiers: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier) -> None:
        self.window.activateWindow()
        self.wait(self.window.isActiveWindow)
        QTest.keyClick(self.window, key, modifiers)
        self.count.keys += 1
        self._opened()

    def menu(self, action: str) -> None:
        """An Edit menu item without a shortcut: Alt+E, then its letter."""
        self.window.editing.actions[action].trigger()
        self.count.keys += 2
        self._opened()

    def type(self, widget: QWidget, text: str) -> None:
        QTest.keyClicks(widget, text)
        self.count.keys += len(text)

    def key(self, widget: QWidget, key: Qt.Key, modifiers: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier) -> None:
        QTest.keyClick(widget, key, modifiers)
        self.count.keys += 1
        self._opened()

    def click(self, widget: QWidget) -> None:
        QTest.mouseClick(widget, Qt.MouseButton.LeftButton)
        self.count.clicks += 1
        self._opened()

    def replace(self, edit: QLineEdit, text: str) -> None:
        """Click into a field, Ctrl+A, type ``text``."""
        self.click(edit)
        self.key(edit, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
        self.type(edit, text)

    def choose(self, combo: QComboBox, text: str) -> None:
        """Open a combo box and click one of its items."""
        k = combo.findText(text)
        assert k >= 0, text
        combo.window().activateWindow()
        self.wait(combo.window().isActiveWindow)
        combo.setFocus(Qt.FocusReason.MouseFocusReason)  # the click on it
        combo.setCurrentIndex(k)
        combo.activated.emit(k)
        self.count.clicks += 2

    def pick_file(self, path: Path, monkeypatch: Any) -> None:
        """The next file dialog answers ``path``: the dialog, a click on the file, a click on Open."""
        def answered(*_args: object, **_kwargs: object) -> tuple[str, str]:
            self.count.dialogs += 1
            self.count.clicks += 2
            return str(path), ""

        monkeypatch.setattr(QFileDialog, "getOpenFileName", answered)


# -- the tasks: each leaves the model the goal describes ----------------------------------------------------------------
def delete_node(s: Steps) -> None:
    """Delete the Identity ``embed``; what read its output reads the graph input."""
    s.click_node("embed")
    s.shortcut(Qt.Key.Key_Delete, Qt.KeyboardModifier.ShiftModifier)  # Delete and Reconnect


def delete_with_children(s: Steps) -> None:
    """Delete the second layer's MLP and the norm feeding only it; the residual Add reads the residual twice."""
    s.click_node("layers.1/mlp/down/MatMul")
    s.shortcut(Qt.Key.Key_Delete, Qt.KeyboardModifier.ControlModifier)  # with the branch feeding only it
    s.key(s.open_dialog(), Qt.Key.Key_Return)  # type: ignore[arg-type]
    s.click_node("layers.1/Add_1")
    s.right_click_menu("Rewire Input...")
    form = s.open_dialog()
    s.key(form.fields["port"], Qt.Key.Key_Down)  # type: ignore[union-attr]  # input 1
    edit = form.fields["value"].edit  # type: ignore[union-attr]
    s.type(edit, "layers.1.res1")
    s.key(edit, Qt.Key.Key_Return)


def insert_on_edge(s: Steps) -> None:
    """A LeakyRelu (alpha 0.2) on ``layers.0.res1``, before everything that reads it."""
    s.click_node("layers.0/Add")
    s.shortcut(Qt.Key.Key_I, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    palette = s.open_dialog()
    s.type(palette.search_edit, "leaky")  # type: ignore[union-attr]
    s.key(palette.search_edit, Qt.Key.Key_Return)  # type: ignore[union-attr]
    s.shortcut(Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    editor = s.open_dialog().editor  # type: ignore[union-attr]  # its one attribute is offered first
    s.click(editor.add_value)
    s.type(editor.add_value, "0.2")
    s.key(editor.add_value, Qt.Key.Key_Return)
    s.key(editor.add_value, Qt.Key.Key_Escape)


def new_output_node(s: Steps) -> None:
    """A Transpose (perm 0, 1, 3, 2) of ``layers.0.q.t``, read by nothing, given as a graph output."""
    s.click_node("layers.0/attn/q/Transpose")
    s.shortcut(Qt.Key.Key_I, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    palette = s.open_dialog()
    s.type(palette.search_edit, "transpose")  # type: ignore[union-attr]
    s.choose(palette.placement, palette.placement.itemText(1))  # type: ignore[union-attr]  # beside: feeds nothing
    s.click(palette.ok_button)  # type: ignore[union-attr]
    s.shortcut(Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    editor = s.open_dialog().editor  # type: ignore[union-attr]
    s.click(editor.add_value)
    s.type(editor.add_value, "0,1,3,2")
    s.key(editor.add_value, Qt.Key.Key_Return)
    s.key(editor.add_value, Qt.Key.Key_Escape)
    s.right_click_menu("Mark as Graph Output")


def rename_inputs_and_outputs(s: Steps) -> None:
    """The graph input becomes ``embeddings`` and the graph output ``hidden_out``."""
    for old, new in (("input_ids_embed", "embeddings"), ("logits", "hidden_out")):
        s.click_terminal(old)
        s.shortcut(Qt.Key.Key_F2, Qt.KeyboardModifier.ShiftModifier)  # Rename Value: the name starts selected
        edit = s.open_dialog().fields["name"]  # type: ignore[union-attr]
        s.type(edit, new)
        s.key(edit, Qt.Key.Key_Return)


def dynamic_input_shape(s: Steps) -> None:
    """The input's batch and sequence dimensions become dynamic (``batch``, ``seq``), everywhere they go."""
    s.click_terminal("input_ids_embed")
    s.menu("dimension")  # dimension 0, "batch" offered: Return takes it
    s.key(s.open_dialog().fields["value"], Qt.Key.Key_Return)  # type: ignore[union-attr]
    s.menu("dimension")
    form = s.open_dialog()
    s.choose(form.fields["axis"], "1: 4")  # type: ignore[union-attr]
    s.key(form.fields["axis"], Qt.Key.Key_Tab)  # type: ignore[union-attr]  # to the value, selected
    value = form.fields["value"]  # type: ignore[union-attr]
    s.type(value, "seq")
    s.key(value, Qt.Key.Key_Return)


def static_input_shape(s: Steps) -> None:
    """Both dimensions fixed again: 1 and 4, everywhere they are named."""
    s.click_terminal("input_ids_embed")
    s.menu("dimension")  # dimension 0, "1" offered for a named one: Return takes it
    s.key(s.open_dialog().fields["value"], Qt.Key.Key_Return)  # type: ignore[union-attr]
    s.menu("dimension")
    form = s.open_dialog()
    s.choose(form.fields["axis"], "1: seq")  # type: ignore[union-attr]
    s.key(form.fields["axis"], Qt.Key.Key_Tab)  # type: ignore[union-attr]
    value = form.fields["value"]  # type: ignore[union-attr]
    s.type(value, "4")
    s.key(value, Qt.Key.Key_Return)


def edit_attributes(s: Steps) -> None:
    """LeakyRelu's alpha 0.05, Softmax's axis 3 (the last, written as a position), the Transpose's perm 0, 2, 1, 3."""
    for node, name, text in (("leaky", "alpha", "0.05"), ("layers.0/attn/Softmax", "axis", "3"),
                             ("swap", "perm", "0,2,1,3")):
        s.click_node(node)
        s.shortcut(Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
        edit = s.open_dialog().editor.value_edits[name]  # its one attribute's value, selected
        s.type(edit, text)
        s.key(edit, Qt.Key.Key_Return)
        s.key(edit, Qt.Key.Key_Escape)


def initializer_from_text(s: Steps) -> None:
    """The first norm's epsilon becomes 0.001."""
    s.click_node("layers.0.ln1/Add")
    s.click_link("layers.0.ln1.eps")
    s.menu("weights_text")  # its values, selected
    edit = s.open_dialog().fields["values"]  # type: ignore[union-attr]
    s.type(edit, "[0.001]")
    s.key(edit, Qt.Key.Key_Return)


def initializer_from_npy(s: Steps, npy: Path, monkeypatch: Any) -> None:
    """The first layer's query weight becomes the .npy file's values."""
    s.click_node("layers.0/attn/q/MatMul")
    s.click_link("layers.0.attn.q.weight")
    s.pick_file(npy, monkeypatch)
    s.menu("replace_weights")


def outputs_added_and_removed(s: Steps) -> None:
    """``layers.0.res2`` becomes a graph output; ``q_swapped`` no longer is."""
    s.click_node("layers.0/Add_1")
    s.right_click_menu("Mark as Graph Output")
    s.click_terminal("q_swapped")
    s.right_click_menu("Remove from Graph Outputs")


# -- onnx-modifier, counted from its controls along its cheapest path ------------------------------------------------------
def _retyped(name: str) -> Count:
    """Replacing a sidebar field's text: click in it, Ctrl+A, type."""
    return Count(0, 1 + len(name), 1)


def _sum(*counts: Count) -> Count:
    return Count(sum(c.dialogs for c in counts), sum(c.keys for c in counts), sum(c.clicks for c in counts))


CLICK = Count(0, 0, 1)
MODIFIER: dict[str, tuple[Count, str]] = {
    "delete_node": (_sum(*[_sum(CLICK, _retyped("input_ids_embed"))] * 3, CLICK, CLICK, CLICK),
                    "its 3 readers' input fields retyped to the graph input, then the node, Delete Single Node, "
                    "Enter"),
    "delete_with_children": (_sum(CLICK, _retyped("layers.1.res1"), CLICK),
                             "the residual Add's input field retyped, then 'clean up' ticked at Download "
                             "(Delete With Children deletes what the node feeds, not what feeds it)"),
    "insert_on_edge": (_sum(CLICK, Count(0, 2, 0), CLICK, CLICK, _retyped("0.2"), _retyped("layers.0.res1"),
                            _retyped("leaky_out"), *[_sum(CLICK, _retyped("leaky_out"))] * 3),
                       "operator selector and 'Le', Add node, the new node, its alpha, input and output fields, "
                       "then each of the value's 3 readers retyped to the new output"),
    "new_output_node": (_sum(CLICK, Count(0, 2, 0), CLICK, CLICK, _retyped("0,1,3,2"), _retyped("layers.0.q.t"),
                             _retyped("q_swapped"), CLICK),
                        "selector and 'Tr', Add node, the node, perm, input and output fields, Add Output"),
    "rename_inputs_and_outputs": (_sum(CLICK, _retyped("embeddings"), CLICK, _retyped("hidden_out")),
                                  "each model input/output node clicked, its name field retyped"),
    "dynamic_input_shape": (_sum(CLICK, _retyped("batch,seq,16"), CLICK),
                            "the input node, 'Use new shape' retyped, Reshape Input (Dynamic batch size makes only "
                            "the first dimension dynamic)"),
    "static_input_shape": (_sum(CLICK, _retyped("1,4,16"), CLICK),
                           "the input node, 'Use new shape' retyped, Reshape Input"),
    "edit_attributes": (_sum(CLICK, _retyped("0.05"), CLICK, _retyped("3"), CLICK, _retyped("0,2,1,3")),
                        "each node clicked, its attribute field retyped"),
    "initializer_from_text": (_sum(CLICK, CLICK, CLICK, Count(0, 7, 0)),
                              "the node, the initializer's +, its text area, the values typed"),
    "initializer_from_npy": (_sum(CLICK, CLICK, CLICK, Count(1, 0, 2)),
                             "the node, the initializer's +, Open *.npy, the file dialog"),
    "outputs_added_and_removed": (_sum(CLICK, CLICK, CLICK, CLICK),
                                  "the node, Add Output; the output node, Delete the output"),
}
TASKS: dict[str, Callable[..., None]] = {
    "delete_node": delete_node, "delete_with_children": delete_with_children, "insert_on_edge": insert_on_edge,
    "new_output_node": new_output_node, "rename_inputs_and_outputs": rename_inputs_and_outputs,
    "dynamic_input_shape": dynamic_input_shape, "static_input_shape": static_input_shape,
    "edit_attributes": edit_attributes, "initializer_from_text": initializer_from_text,
    "initializer_from_npy": initializer_from_npy, "outputs_added_and_removed": outputs_added_and_removed,
}


def synth2(folder: Path) -> Path:
    """The model the tasks start from: bench/synth.py's 2 layers, value_info for every value."""
    from synth import build

    model = onnx.shape_inference.infer_shapes(build(2))  # value_info for every value, as exporters write
    model.ir_version = 10  # onnxruntime 1.31 runs up to this
    path = folder / "synth2.onnx"
    onnx.save(model, path)
    return path


def with_leaky_and_swap(doc: Document) -> None:
    """What the attribute and output tasks start from: a LeakyRelu named leaky and a Transpose named swap
    making the graph output q_swapped."""
    doc.edit.insert_on_value("layers.0.res1", "LeakyRelu", {"alpha": 0.2}, name="leaky")
    doc.edit.insert_node("Transpose", ["layers.0.q.t"], ["q_swapped"], {"perm": [0, 1, 3, 2]}, name="swap")
    doc.edit.add_output("q_swapped")


def with_dynamic_input(doc: Document) -> None:
    doc.edit.set_dimension("input_ids_embed", 0, "batch")
    doc.edit.set_dimension("input_ids_embed", 1, "seq")


SETUP: dict[str, Callable[[Document], None]] = {  # what a task starts from, made through the API (not counted)
    "static_input_shape": with_dynamic_input, "edit_attributes": with_leaky_and_swap,
    "outputs_added_and_removed": with_leaky_and_swap,
}


def npy_for(folder: Path) -> Path:
    """The .npy file the .npy task loads: a 16x16 identity."""
    path = folder / "q.npy"
    np.save(path, np.eye(16, dtype=np.float32))
    return path
