"""The Edit menu: undo/redo with readable labels, edits of the selection, dialogs, problem badges."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import shiboken6
from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QAction, QContextMenuEvent, QKeySequence
from PySide6.QtWidgets import QDialog, QDockWidget, QFileDialog, QMainWindow, QMenu, QMessageBox

from onnxviz.model.document import Change, ChangeKind, Document
from onnxviz.model.editing.branch_edits import Branch, Orphans, Side
from onnxviz.model.editing.literals import LiteralKind
from onnxviz.model.editing.palette import CONTRIB_DOMAIN, palette
from onnxviz.model.editing.values import (
    ONE_LINE,
    SMALL_TENSOR,
    array_edit_text,
    parse_tensor_text,
    small_array,
    tensor_summary,
)
from onnxviz.model.errors import EditError, OnnxvizError
from onnxviz.model.graph.index import INITIALIZER
from onnxviz.model.graph.validation import node_badges
from onnxviz.model.text import (
    display_name,
    dtype_text,
    first_names,
    quoted_name,
    shape_list,
)
from onnxviz.ui.edit.history import HistoryDock
from onnxviz.ui.ports import Files, Frame, ShownDocument, Status
from onnxviz.ui.widgets.forms import FormDialog
from onnxviz.ui.widgets.names import message_text, short_name

if TYPE_CHECKING:
    from onnxviz.ui.canvas.canvas import GraphCanvas
    from onnxviz.ui.canvas.view import GraphView

NEEDS_NODE, NEEDS_VALUE, NEEDS_DOC, NEEDS_WEIGHT, NEEDS_INPUT = "node", "value", "doc", "weight", "input"
NEEDS_OUTPUT = "output"


class EditController(QObject):
    """Owns the editing actions of one main window; every edit goes through the document's API."""

    def __init__(self, frame: Frame, document: ShownDocument, canvas: GraphCanvas, status: Status,
                 files: Files) -> None:
        super().__init__(frame.window)
        self.window = frame.window  # the parent of the dialogs and the history dock
        self.menus, self.document, self.canvas, self.status, self.files = frame.menus, document, canvas, status, files
        self.dialog: QDialog | None = None   # the dialog opened last (tests and embedding use it)
        self.actions: dict[str, QAction] = {}
        self.windows: list[QMainWindow] = []  # windows opened from this one (extracted models)
        self._needs: dict[str, str] = {}
        self.history = HistoryDock(self.window)
        self._place_history()
        self._build_menu()
        document.document_changed.connect(self._on_document)
        document.model_changed.connect(self._on_model_changed)
        document.shown_changed.connect(self.push_badges)  # the badges follow whichever graph is shown
        self._context_view: GraphView | None = None
        self.last_menu: QMenu | None = None
        self._update()

    def _place_history(self) -> None:
        """A tab beside the first bottom panel (the right side is the inspector's), else at the bottom."""
        window = self.window
        area = Qt.DockWidgetArea.BottomDockWidgetArea
        window.addDockWidget(area, self.history)
        neighbours = [d for d in window.findChildren(QDockWidget)
                      if d is not self.history and d.parent() is window and window.dockWidgetArea(d) == area]
        if neighbours:
            window.tabifyDockWidget(neighbours[-1], self.history)
            neighbours[-1].raise_()

    @property
    def doc(self) -> Document | None:
        return self.document.doc

    # -- menu ------------------------------------------------------------------------
    def _add(self, key: str, text: str, slot: Callable[[], object], needs: str = NEEDS_DOC,
             shortcut: QKeySequence | QKeySequence.StandardKey | str | list[QKeySequence] | None = None,
             tip: str = "") -> QAction:
        action = QAction(text, self.window)
        if isinstance(shortcut, list):
            action.setShortcuts(shortcut)
        elif shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        action.setStatusTip(tip)
        action.setToolTip(tip)
        action.triggered.connect(lambda _checked=False: self.guarded(slot))
        self.actions[key] = action
        self._needs[key] = needs
        return action

    def _build_menu(self) -> None:
        menu = self.menus.edit
        undo = self._add("undo", "&Undo", self.undo, shortcut=QKeySequence.StandardKey.Undo)
        redo = self._add("redo", "&Redo", self.redo,
                         shortcut=[QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")])
        menu.addActions([undo, redo])
        menu.addSeparator()
        a = self._add
        menu.addAction(a("attributes", "Edit &Attributes...", self.edit_attributes, NEEDS_NODE, "Ctrl+Shift+A",
                         "Change, add or remove attributes of the selected node"))
        menu.addAction(a("rename_node", "Re&name Node...", self.rename_node, NEEDS_NODE, "F2"))
        menu.addAction(a("op_type", "C&hange Operator...", self.change_operator, NEEDS_NODE,
                         tip="Change the selected node's operator type or domain"))
        menu.addAction(a("insert", "&Insert Node...", self.insert_node, NEEDS_VALUE, "Ctrl+Shift+I",
                         "Insert an operator after or before the selected node, or on the selected edge"))
        menu.addAction(a("rewire", "Re&wire Input...", self.rewire_input, NEEDS_NODE,
                         tip="Make an input of the selected node read another value, or numbers"))
        menu.addAction(a("insert_constant", "Insert Constant...", lambda: self.new_tensor("constant"),
                         shortcut="Ctrl+Shift+K", tip="A new Constant node, typed or from a .npy file, feeding "
                         "an input of the selected node if you choose"))
        menu.addAction(a("new_initializer", "New Initiali&zer...", lambda: self.new_tensor("initializer"),
                         tip="A new initializer, typed or from a .npy file, feeding an input of the selected "
                         "node if you choose"))
        menu.addAction(a("describe", "Edit Node Descrip&tion...", self.describe_node, NEEDS_NODE,
                         tip="Change the selected node's doc_string"))
        menu.addAction(a("delete", "&Delete Node", self.delete_node, NEEDS_NODE, QKeySequence.StandardKey.Delete))
        menu.addAction(a("delete_reconnect", "Delete Node and Reconn&ect", lambda: self.delete_node(True),
                         NEEDS_NODE, "Shift+Del", "Delete the node; its consumers read its input instead"))
        menu.addAction(a("delete_inputs", "Delete Node and Branch &Feeding Only It...", lambda: self.delete_branch("inputs"),
                         NEEDS_NODE, "Ctrl+Del", "Delete the node and every node feeding only it (a whole "
                         "pre-processing branch), after showing which"))
        menu.addAction(a("delete_outputs", "Delete Node and Branch Only It Feeds (&Below)...",
                         lambda: self.delete_branch("outputs"), NEEDS_NODE, "Ctrl+Shift+Del",
                         "Delete the node and every node only it feeds (a whole post-processing branch), "
                         "after showing which"))
        menu.addSeparator()
        menu.addAction(a("rename_value", "Rename &Value...", self.rename_value, NEEDS_VALUE, "Shift+F2",
                         tip="Rename the selected value everywhere, subgraphs included"))
        menu.addAction(a("mark_output", "Mark as Graph &Output", self.mark_output, NEEDS_VALUE))
        menu.addAction(a("remove_output", "Remove from Graph Outputs", self.remove_output, NEEDS_OUTPUT,
                         tip="The selected value stays; the model no longer gives it"))
        menu.addAction(a("graph_io", "Graph Inputs and Out&puts...", self.graph_io))
        menu.addAction(a("dimension", "Ma&ke Dimension Dynamic or Static...", self.make_dimension,
                         tip="A graph input's dimension becomes a name or a size, with every output and "
                         "value_info that shares it"))
        menu.addSeparator()
        menu.addAction(a("replace_weights", "Replace Wei&ghts from .npy...", self.replace_weights, NEEDS_WEIGHT))
        menu.addAction(a("weights_text", "Edit Weights as Te&xt...", self.edit_weights_text, NEEDS_WEIGHT,
                         tip=f"Type the values of an initializer of at most {SMALL_TENSOR:,} elements"))
        menu.addAction(a("to_initializer", "Con&stant to Initializer", self.constant_to_initializer, NEEDS_NODE))
        menu.addAction(a("to_constant", "Initializer to &Constant", self.initializer_to_constant, NEEDS_WEIGHT))
        menu.addSeparator()
        menu.addAction(a("model", "&Model Properties...", self.model_properties,
                         tip="Producer, version, description, metadata and opset version"))
        cleanup = menu.addMenu("C&lean Up")
        cleanup.addAction(a("remove_unused", "Remove &Unused Nodes and Initializers", self.remove_unused))
        cleanup.addAction(a("sort", "&Sort Nodes Topologically", self.sort_nodes))
        cleanup.addAction(a("extract_selection", "Extract Se&lection...", self.extract_selection,
                            tip="The selected node or group as a new model: its inputs are what it reads "
                                "from outside, its outputs what is read outside"))
        cleanup.addAction(a("extract", "&Extract Subgraph...", self.extract,
                            tip="The part between chosen inputs and outputs as a new model"))
        self.menus.view.addAction(self.history.toggleViewAction())

    def add_context_actions(self, menu: QMenu) -> None:
        """Add the edits of the selection to the canvas's right-click ``menu`` (then the one shown); none
        while the canvas shows another model (the diff's B)."""
        if not self.on_canvas():
            return
        edits = self.context_menu()
        actions = edits.actions()
        if any(not a.isSeparator() for a in actions):
            for action in actions:
                menu.addAction(action)
            menu.addSeparator()
        edits.deleteLater()   # its actions belong to this controller and stay in the canvas's menu
        self.last_menu = menu

    def context_menu(self) -> QMenu:
        """The right-click menu for the current selection (Extract Selection when a node or group is selected)."""
        menu = QMenu(self.window)
        for key in ("attributes", "rename_node", "op_type", "insert", "rewire", "insert_constant", "describe", None,
                    "rename_value", "mark_output", "remove_output", "replace_weights", "weights_text", "to_initializer",
                    "to_constant",
                    None, "delete", "delete_reconnect", "delete_inputs", "delete_outputs", None):
            if key is None:
                menu.addSeparator()
            elif self.actions[key].isEnabled():
                menu.addAction(self.actions[key])
        if self.doc is not None and self.canvas.selected_nodes():
            menu.addAction(self.actions["extract_selection"])
        return menu

    def attach_canvas(self, view: GraphView) -> None:
        """Right-click on the canvas selects what is under the pointer, then offers the edits."""
        view.installEventFilter(self)
        self._context_view = view

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        view = self._context_view
        if view is not None and obj is view and isinstance(event, QContextMenuEvent) and self.on_canvas():
            self._select_under(view, event)
            self.last_menu = self.context_menu()
            self.last_menu.popup(event.globalPos())
            return True
        return super().eventFilter(obj, event)

    @staticmethod
    def _select_under(view: GraphView, event: QContextMenuEvent) -> None:
        drawable = view.drawable
        if drawable is None:
            return
        pos = view.map_to_scene(event.pos().toPointF())
        box = drawable.box_at(pos.x(), pos.y())
        if box >= 0:
            view.box_clicked.emit(box)
            return
        edge = drawable.edge_at(pos.x(), pos.y(), 4.0)
        if edge >= 0:
            view.edge_clicked.emit(edge)

    # -- state -----------------------------------------------------------------------
    def _on_document(self, doc: Document | None) -> None:
        if self.dialog is not None and shiboken6.isValid(self.dialog):
            self.dialog.close()  # it edits the document that was just replaced
        self.dialog = None
        self.history.set_document(doc)
        if doc is not None:
            doc.selection.changed.connect(self._on_selection)
        self._update()  # the badges: pushed as the canvas shows it (shown_changed)

    def _on_selection(self, _state: object) -> None:
        self._update()

    def _on_model_changed(self, change: Change) -> None:
        self.history.on_model_changed(change)
        self._update()
        if change.kind.changes_model:
            verb = {"edit": "", "undo": "Undone: ", "redo": "Redone: "}[change.kind]
            self.status.show_message(f"{verb}{display_name(change.label, 200)}", 4000)
        if change.kind == ChangeKind.VALIDATED:
            self.push_badges()

    def _update(self) -> None:
        doc = self.doc
        has_node = doc is not None and self.selected_node() is not None
        has_value = doc is not None and bool(self.selected_value())
        enabled = {NEEDS_DOC: doc is not None, NEEDS_NODE: has_node, NEEDS_VALUE: has_value or has_node,
                   NEEDS_WEIGHT: self.selected_weight() != "", NEEDS_INPUT: self.selected_input() != "",
                   NEEDS_OUTPUT: self.selected_output() != ""}
        for key, action in self.actions.items():
            action.setEnabled(enabled[self._needs[key]])
        stack = doc.undo_stack if doc is not None else None
        undo, redo = self.actions["undo"], self.actions["redo"]
        undo.setEnabled(bool(stack and stack.can_undo))
        redo.setEnabled(bool(stack and stack.can_redo))
        undo.setText(f"&Undo {_menu_text(stack.undo_label())}" if stack and stack.can_undo else "&Undo")
        redo.setText(f"&Redo {_menu_text(stack.redo_label())}" if stack and stack.can_redo else "&Redo")

    def on_canvas(self) -> bool:
        """The canvas shows the document edited here (not, say, the diff's model B)."""
        return self.document.shows_own

    def push_badges(self, *_shown: object) -> None:
        """Error/warning marks on the canvas's nodes (none on another model's graph)."""
        self.canvas.set_node_badges(node_badges(self.doc.problems) if self.on_canvas() and self.doc else {})

    # -- selection -------------------------------------------------------------------
    def selected_node(self) -> tuple[str, int] | None:
        doc = self.doc
        if doc is None:
            return None
        state = doc.selection.state
        if state.node < 0:
            return None
        g = doc.index.graphs.get(state.scope)
        return (state.scope, state.node) if g is not None and state.node < len(g.nodes) else None

    def selected_value(self) -> str:
        """The selected value, or the selected node's first output."""
        doc = self.doc
        if doc is None:
            return ""
        if doc.selection.state.value:
            return doc.selection.state.value
        where = self.selected_node()
        if where is None:
            return ""
        outputs = [x for x in doc.edit.node_proto(*where).output if x]
        return outputs[0] if outputs else ""

    def selected_weight(self) -> str:
        """The selected value when it is an initializer of its graph ('' otherwise): what the weight edits take."""
        doc = self.doc
        value = self.selected_value()
        if doc is None or not value:
            return ""
        g = doc.index.graphs.get(doc.selection.state.scope)
        return value if g is not None and g.producer_of(value) == INITIALIZER else ""

    def selected_input(self) -> str:
        """The selected value when it is an input of the main graph ('' otherwise)."""
        doc = self.doc
        if doc is None or doc.selection.state.scope or not doc.selection.state.value:
            return ""
        value = doc.selection.state.value
        return value if value in doc.index.main.input_names else ""

    def selected_output(self) -> str:
        """The selected value when it is an output of its graph ('' otherwise)."""
        doc = self.doc
        value = self.selected_value()
        if doc is None or not value:
            return ""
        g = doc.index.graphs.get(doc.selection.state.scope)
        return value if g is not None and value in g.output_names else ""

    def _node(self) -> tuple[Document, str, int]:
        where = self.selected_node()
        if self.doc is None or where is None:
            raise EditError("select a node on the graph first.")
        return self.doc, where[0], where[1]

    def _value(self) -> tuple[Document, str, str]:
        value = self.selected_value()
        if self.doc is None or not value:
            raise EditError("select a value (an edge) or a node on the graph first.")
        return self.doc, self.doc.selection.state.scope, value

    # -- running -----------------------------------------------------------------------
    def guarded(self, slot: Callable[[], object]) -> None:
        try:
            slot()
        except OnnxvizError as exc:
            self.report(exc)

    def report(self, exc: OnnxvizError) -> None:
        self.status.show_message(display_name(exc.message, 300), 8000)
        self.status.show_error("Edit Refused", exc.message, exc.details)

    def open_dialog(self, dialog: QDialog, modal: bool = True) -> QDialog:
        self.dialog = dialog
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        if modal:
            dialog.open()
        else:
            dialog.show()
        return dialog

    def keep_window(self, window: QMainWindow) -> None:
        """Keep a window this one opened (an extracted model) alive until it is closed."""
        self.windows.append(window)
        window.destroyed.connect(lambda _obj=None, w=window: self.windows.remove(w) if w in self.windows else None)

    def form(self, title: str, intro: str, on_accept: Callable[[FormDialog], None],
              ok_text: str = "OK") -> FormDialog:
        return FormDialog(self.window, title, intro, on_accept, ok_text)

    # -- undo ----------------------------------------------------------------------------
    def undo(self) -> None:
        if self.doc is not None:
            self.doc.undo()

    def redo(self) -> None:
        if self.doc is not None:
            self.doc.redo()

    # -- node edits --------------------------------------------------------------------
    def edit_attributes(self) -> None:
        from onnxviz.ui.edit.attributes import AttributesDialog

        doc, scope, i = self._node()
        self.open_dialog(AttributesDialog(doc, scope, i, self.window), modal=False)

    def rename_node(self) -> None:
        from onnxviz.ui.edit.attributes import node_ref

        doc, scope, i = self._node()
        ref = node_ref(doc, scope, i)
        form = self.form("Rename Node", f"New name for {quoted_name(doc.edit.node_label(scope, i))}:",
                          lambda f: doc.edit.rename_node(ref, f.text("name").strip()), "Rename")
        form.add_line("name", "Name:", doc.edit.node_proto(scope, i).name, name=True)
        self.open_dialog(form)

    def change_operator(self) -> None:
        from onnxviz.ui.edit.attributes import node_ref

        doc, scope, i = self._node()
        ref = node_ref(doc, scope, i)
        node = doc.edit.node_proto(scope, i)
        contrib = node.domain == CONTRIB_DOMAIN  # completions from the node's side: onnx's or onnxruntime's
        names = sorted({e.name for e in palette(doc.model) if (e.domain == CONTRIB_DOMAIN) == contrib})
        form = self.form("Change Operator",
                          f"Operator of {quoted_name(doc.edit.node_label(scope, i))}. Attributes the new operator does not "
                          "have are kept and listed as problems until you remove them.",
                          lambda f: doc.edit.set_op_type(ref, f.text("op").strip(), f.text("domain").strip()),
                          "Change")
        form.add_line("op", "Operator:", node.op_type, names)
        form.add_line("domain", "Domain:", node.domain, placeholder="ai.onnx (default)")
        self.open_dialog(form)

    def insert_node(self) -> None:
        from onnxviz.ui.edit.palette_dialog import PaletteDialog

        if self.doc is None:
            raise EditError("open a model first.")
        self.open_dialog(PaletteDialog(self.doc, self.window, lambda: self.guarded(lambda: self.new_tensor("constant"))))

    # the value dialogs' module is imported as one opens (the window's start does without it)
    def rewire_input(self) -> None:
        from onnxviz.ui.edit import value_dialogs

        doc, scope, i = self._node()
        self.open_dialog(value_dialogs.rewire_input(self, doc, scope, i))

    def new_tensor(self, kind: LiteralKind) -> None:
        """Insert Constant / New Initializer, feeding an input of the selected node if the user chooses."""
        from onnxviz.ui.edit import value_dialogs

        self.open_dialog(value_dialogs.new_tensor(self, kind))

    def make_dimension(self) -> None:
        from onnxviz.ui.edit import value_dialogs

        self.open_dialog(value_dialogs.make_dimension(self))

    def describe_node(self) -> None:
        from onnxviz.ui.edit.attributes import node_ref

        doc, scope, i = self._node()
        ref = node_ref(doc, scope, i)
        form = self.form("Node Description",
                          f"Description (doc_string) of {quoted_name(doc.edit.node_label(scope, i))}:",
                          lambda f: doc.edit.set_doc_string(ref, f.text("text")))
        form.add_text("text", "Description:", doc.edit.node_proto(scope, i).doc_string, "Markdown; empty: none")
        self.open_dialog(form)

    def delete_node(self, reconnect: bool = False) -> None:
        """Delete the selected node; when it has one input and one output of the same type (and Delete did not
        say already), ask whether its consumers should read its input instead."""
        doc, scope, i = self._node()
        through = None if reconnect else bypass(doc, scope, i)
        if through is not None:
            self._ask_reconnect(doc, scope, i, *through)
            return
        doc.selection.clear(scope)
        doc.edit.remove_node((scope, i), reconnect=reconnect)

    def _ask_reconnect(self, doc: Document, scope: str, i: int, source: str, out: str) -> None:
        from onnxviz.ui.edit.attributes import node_ref

        label = doc.edit.node_label(scope, i)
        box = QMessageBox(QMessageBox.Icon.Question, "Delete Node",
                          message_text(f"Reconnect what {quoted_name(label)} feeds to its input?"),
                          QMessageBox.StandardButton.Cancel, self.window)
        box.setTextFormat(Qt.TextFormat.PlainText)
        box.setInformativeText(message_text(
            f"Its output '{quoted_name(out)}' has the type of its input '{quoted_name(source)}': the nodes reading "
            "it can read the input instead. Deleting it alone leaves them reading a value nothing makes."))
        rejoin = box.addButton("Delete and Reconnect", QMessageBox.ButtonRole.AcceptRole)
        alone = box.addButton("Delete Only", QMessageBox.ButtonRole.DestructiveRole)
        box.setDefaultButton(rejoin)
        ref = node_ref(doc, scope, i)

        def answered(_answer: int) -> None:
            clicked = box.clickedButton()
            if clicked in (rejoin, alone) and self.doc is doc:
                doc.selection.clear(scope)
                self.guarded(lambda: doc.edit.remove_node(ref, reconnect=clicked is rejoin))

        box.finished.connect(answered)
        self.open_dialog(box)

    def delete_branch(self, side: Side) -> None:
        """Show which nodes go with the selected one, and delete them all on Delete."""
        from onnxviz.ui.edit.attributes import node_ref

        doc, scope, i = self._node()
        branch = doc.edit.node_branch((scope, i), side)
        box = QMessageBox(QMessageBox.Icon.Question, "Delete Branch", message_text(branch_question(branch)),
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel, self.window)
        box.setTextFormat(Qt.TextFormat.PlainText)
        box.setInformativeText("\n".join(message_text(line) for line in branch_details(branch)))
        count = f"{len(branch.nodes)} Node{'s' if len(branch.nodes) != 1 else ''}"
        yes = box.button(QMessageBox.StandardButton.Yes)
        yes.setText(f"Delete {count}" + (" and Their Outputs" if branch.outputs else ""))
        box.setDefaultButton(QMessageBox.StandardButton.Yes)
        repoint = None
        if branch.repoint:  # the model can end where the branch began
            repoint = box.addButton(f"Delete {count}, Output {short_name(branch.repoint, 40)}",
                                    QMessageBox.ButtonRole.AcceptRole)
            box.setDefaultButton(repoint)
        ref = node_ref(doc, scope, i)

        def answered(_answer: int) -> None:
            clicked = box.clickedButton()
            if clicked not in (yes, repoint) or clicked is None or self.doc is not doc:
                return
            orphans: Orphans = "repoint" if clicked is repoint else "remove"
            doc.selection.clear(scope)
            self.guarded(lambda: doc.edit.remove_node_with_outputs(ref, orphans) if side == "outputs"
                         else doc.edit.remove_node_with_inputs(ref, orphans))

        box.finished.connect(answered)
        self.open_dialog(box)

    # -- value edits -------------------------------------------------------------------
    def rename_value(self) -> None:
        doc, scope, value = self._value()

        def rename(f: FormDialog) -> None:
            new = f.text("name").strip()
            doc.edit.rename_value(value, new, scope)
            doc.selection.select_value(scope, new)  # the panels show the value, not its old name

        form = self.form("Rename Value", f"Rename '{quoted_name(value)}' everywhere it is used, subgraphs included:",
                          rename, "Rename")
        form.add_line("name", "New name:", value, name=True)
        self.open_dialog(form)

    def mark_output(self) -> None:
        doc, scope, value = self._value()
        doc.edit.add_output(value, scope)

    def remove_output(self) -> None:
        doc, scope, value = self._value()
        doc.edit.remove_output(value, scope)

    def graph_io(self) -> None:
        from onnxviz.ui.edit.model_dialogs import GraphIODialog

        if self.doc is None:
            raise EditError("open a model first.")
        self.open_dialog(GraphIODialog(self.doc, self.window), modal=False)

    def replace_weights(self) -> None:
        doc, scope, value = self._value()
        if doc.index.graphs[scope].producer_of(value) != INITIALIZER:
            raise EditError(f"'{quoted_name(value)}' is not an initializer; select a weight.")
        path, _ = QFileDialog.getOpenFileName(self.window, f"Replace {short_name(value)} with", "",
                                              "NumPy arrays (*.npy)")
        if path:
            self.replace_weights_from(value, Path(path), scope)

    def replace_weights_from(self, name: str, path: Path, scope: str = "") -> None:
        """Load ``path``; a different dtype or shape is explained and needs confirmation (a different dtype
        can be cast to the initializer's)."""
        from onnxviz.ui.edit.attributes import load_npy

        doc = self.doc
        assert doc is not None
        array = load_npy(path)
        try:
            doc.edit.replace_initializer(name, array, scope)
        except EditError as exc:
            if "consumers expect" not in exc.message:
                raise
            self._ask_replace(doc, name, array, scope, exc.message)

    def _ask_replace(self, doc: Document, name: str, array: np.ndarray, scope: str, message: str) -> None:
        box = QMessageBox(QMessageBox.Icon.Question, "Replace Weights", message_text(message[:1].upper() + message[1:]),
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel, self.window)
        box.setTextFormat(Qt.TextFormat.PlainText)
        box.setInformativeText("Replace anyway? Problems will show where the graph no longer fits.")
        box.button(QMessageBox.StandardButton.Yes).setText("Replace Anyway")
        dtype = doc.edit.initializer_dtype(name, scope)
        cast = None
        if array.dtype != dtype:
            cast = box.addButton(f"Cast to {dtype} and Replace", QMessageBox.ButtonRole.AcceptRole)
            box.setDefaultButton(cast)

        def answered(_answer: int) -> None:
            clicked = box.clickedButton()
            if cast is not None and clicked is cast:
                self.guarded(lambda: doc.edit.replace_initializer(name, array, scope, force=True, cast=True))
            elif clicked is box.button(QMessageBox.StandardButton.Yes):
                self.guarded(lambda: doc.edit.replace_initializer(name, array, scope, force=True))

        box.finished.connect(answered)
        self.dialog = box  # type: ignore[assignment]
        box.open()

    def edit_weights_text(self) -> None:
        doc, scope, value = self._value()
        tensor = doc.edit.initializer_proto(value, scope)
        array = small_array(tensor)
        if array is None:
            raise EditError(f"'{quoted_name(value)}' has more than {SMALL_TENSOR:,} numbers (or is not numbers) to "
                            "type; replace it from a .npy file.")

        def apply(f: FormDialog) -> None:
            typed = parse_tensor_text(f.text("values"), array.dtype)
            doc.edit.replace_initializer(value, typed.reshape(array.shape) if typed.size == array.size else typed, scope)

        lines = array.ndim > 1 or array.size > ONE_LINE
        form = self.form("Edit Weights", f"Values of '{quoted_name(value)}' ({tensor_summary(tensor)}), as numbers; "
                         "they keep its type." + (" Ctrl+Return replaces them." if lines else ""), apply, "Replace")
        if lines:  # a row of the tensor per line, as wide as a screen allows
            form.add_text("values", "Values:", array_edit_text(array), "e.g. [[1, 2], [3, 4]]").setFixedHeight(320)
            form.resize(900, 460)
        else:
            form.add_line("values", "Values:", array_edit_text(array), placeholder="e.g. [1, 2, 3]")
        self.open_dialog(form)

    def constant_to_initializer(self) -> None:
        """The selected Constant, or the Constants shown inside the selected node's box, become initializers."""
        doc, scope, i = self._node()
        node = doc.edit.node_proto(scope, i)
        targets = [(scope, i)] if node.op_type == "Constant" else doc.edit.constant_feeders((scope, i))
        if not targets:
            raise EditError(f"{quoted_name(doc.edit.node_label(scope, i))} is not a Constant node, and no Constant "
                            "feeds it.")
        if targets != [(scope, i)]:
            doc.edit.constants_to_initializers(targets)  # the selected node stays, and stays selected
            return
        doc.selection.clear(scope)
        doc.edit.constant_to_initializer((scope, i))

    def initializer_to_constant(self) -> None:
        doc, scope, value = self._value()
        doc.edit.initializer_to_constant(value, scope)

    # -- model -----------------------------------------------------------------------------
    def model_properties(self) -> None:
        from onnxviz.ui.edit.model_dialogs import ModelPropertiesDialog

        if self.doc is None:
            raise EditError("open a model first.")
        self.open_dialog(ModelPropertiesDialog(self.doc, self.window))

    def remove_unused(self) -> None:
        if self.doc is None:
            return
        nodes, inits = self.doc.edit.remove_unused(self.doc.selection.state.scope)
        if not nodes and not inits:
            self.status.show_message("Nothing unused to remove.", 4000)

    def sort_nodes(self) -> None:
        if self.doc is not None and not self.doc.edit.sort_topologically(self.doc.selection.state.scope):
            self.status.show_message("The nodes are already in topological order.", 4000)

    def extract(self) -> None:
        from onnxviz.ui.edit import extract

        extract.extract_between(self)

    def extract_selection(self) -> None:
        from onnxviz.ui.edit import extract

        extract.extract_selection(self)


def branch_question(branch: Branch) -> str:
    """The question a branch deletion asks: which node, and how many go with it."""
    node = quoted_name(branch.labels[branch.nodes.index(branch.node)])
    if not branch.others:
        what = "No other node feeds only it" if branch.side == "inputs" else "No other node is fed only by it"
        return f"{what}: delete {node} alone?"
    side = "feeding only it" if branch.side == "inputs" else "that only it feeds"
    count = "the node" if branch.others == 1 else f"the {branch.others} nodes"
    return f"Delete {node} and {count} {side}?"


def branch_details(branch: Branch) -> list[str]:
    """The first names of the nodes that go, the weights that go with them and the graph outputs they leave."""
    lines = [f"Nodes: {first_names(branch.labels)}."]
    if branch.initializers:
        lines.append(f"Weights only they read ({len(branch.initializers)}): {first_names(branch.initializers)}.")
    if branch.outputs:
        instead = f", or make '{quoted_name(branch.repoint)}' the output instead" if branch.repoint else ""
        lines.append(f"Graph outputs it would leave without a maker: {first_names(branch.outputs)} (they go "
                     f"too{instead}).")
    lines.append("Undo (Ctrl+Z) brings them all back.")
    return lines


def bypass(doc: Document, scope: str, i: int) -> tuple[str, str] | None:
    """(input, output) of node ``i`` when its consumers could read its input instead: one data input and one
    output, of the same known type, the output no graph output and read by some node; None otherwise."""
    node = doc.edit.node_proto(scope, i)
    inputs, outputs = [x for x in node.input if x], [x for x in node.output if x]
    g = doc.index.graphs[scope]
    if len(inputs) != 1 or len(outputs) != 1 or outputs[0] in g.output_names or not g.consumers_of(outputs[0]):
        return None
    a, b = (doc.edit.find.local_type(scope, x) for x in (inputs[0], outputs[0]))
    if a is None or b is None or a.WhichOneof("value") is None or not same_type(a, b):
        return None
    return inputs[0], outputs[0]


def same_type(a: object, b: object) -> bool:
    """Two value types that say the same: element type and shape (a name and a size each mean one thing)."""
    return bool(dtype_text(a) == dtype_text(b) and shape_list(a) == shape_list(b))  # type: ignore[arg-type]


def _menu_text(label: str) -> str:
    """An edit's label in a menu item: escaped, elided to a menu's width, '&' shown rather than marking a
    mnemonic."""
    return short_name(label, 80).replace("&", "&&")
