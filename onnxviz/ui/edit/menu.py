"""The Edit menu's actions: each enabled when what it needs is selected, each refused edit reported."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtGui import QAction, QKeySequence

from onnxviz.model.editing.values import SMALL_TENSOR
from onnxviz.ui.widgets.names import short_name

if TYPE_CHECKING:
    from PySide6.QtWidgets import QWidget

    from onnxviz.ui.edit.node_edits import NodeEdits
    from onnxviz.ui.edit.selection import EditSelection
    from onnxviz.ui.edit.value_edits import ModelEdits, ValueEdits
    from onnxviz.ui.ports import Menus

NEEDS_NODE, NEEDS_VALUE, NEEDS_DOC, NEEDS_WEIGHT, NEEDS_INPUT = "node", "value", "doc", "weight", "input"
NEEDS_OUTPUT = "output"


class EditActions:
    """The actions by key (``actions``), what each needs selected, and the menu they fill."""

    def __init__(self, parent: QWidget, menus: Menus, selection: EditSelection,
                 guarded: Callable[[Callable[[], object]], None]) -> None:
        self.parent, self.menus, self.selection, self.guarded = parent, menus, selection, guarded
        self.actions: dict[str, QAction] = {}
        self._needs: dict[str, str] = {}

    def add(self, key: str, text: str, slot: Callable[[], object], needs: str = NEEDS_DOC,
             shortcut: QKeySequence | QKeySequence.StandardKey | str | list[QKeySequence] | None = None,
             tip: str = "") -> QAction:
        action = QAction(text, self.parent)
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

    def build(self, undo_redo: tuple[Callable[[], object], Callable[[], object]], node: NodeEdits, value: ValueEdits,
              model: ModelEdits, history: QAction) -> None:
        """The Edit menu (and the History dock's item in the View menu)."""
        menu = self.menus.edit
        undo = self.add("undo", "&Undo", undo_redo[0], shortcut=QKeySequence.StandardKey.Undo)
        redo = self.add("redo", "&Redo", undo_redo[1],
                         shortcut=[QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")])
        menu.addActions([undo, redo])
        menu.addSeparator()
        a = self.add
        menu.addAction(a("attributes", "Edit &Attributes...", node.edit_attributes, NEEDS_NODE, "Ctrl+Shift+A",
                         "Change, add or remove attributes of the selected node"))
        menu.addAction(a("rename_node", "Re&name Node...", node.rename_node, NEEDS_NODE, "F2"))
        menu.addAction(a("op_type", "C&hange Operator...", node.change_operator, NEEDS_NODE,
                         tip="Change the selected node's operator type or domain"))
        menu.addAction(a("insert", "&Insert Node...", node.insert_node, NEEDS_VALUE, "Ctrl+Shift+I",
                         "Insert an operator after or before the selected node, or on the selected edge"))
        menu.addAction(a("rewire", "Re&wire Input...", node.rewire_input, NEEDS_NODE,
                         tip="Make an input of the selected node read another value, or numbers"))
        menu.addAction(a("insert_constant", "Insert Constant...", lambda: node.new_tensor("constant"),
                         shortcut="Ctrl+Shift+K", tip="A new Constant node, typed or from a .npy file, feeding "
                         "an input of the selected node if you choose"))
        menu.addAction(a("new_initializer", "New Initiali&zer...", lambda: node.new_tensor("initializer"),
                         tip="A new initializer, typed or from a .npy file, feeding an input of the selected "
                         "node if you choose"))
        menu.addAction(a("describe", "Edit Node Descrip&tion...", node.describe_node, NEEDS_NODE,
                         tip="Change the selected node's doc_string"))
        menu.addAction(a("delete", "&Delete Node", node.delete_node, NEEDS_NODE, QKeySequence.StandardKey.Delete))
        menu.addAction(a("delete_reconnect", "Delete Node and Reconn&ect", lambda: node.delete_node(True),
                         NEEDS_NODE, "Shift+Del", "Delete the node; its consumers read its input instead"))
        menu.addAction(a("delete_inputs", "Delete Node and Branch &Feeding Only It...", lambda: node.delete_branch("inputs"),
                         NEEDS_NODE, "Ctrl+Del", "Delete the node and every node feeding only it (a whole "
                         "pre-processing branch), after showing which"))
        menu.addAction(a("delete_outputs", "Delete Node and Branch Only It Feeds (&Below)...",
                         lambda: node.delete_branch("outputs"), NEEDS_NODE, "Ctrl+Shift+Del",
                         "Delete the node and every node only it feeds (a whole post-processing branch), "
                         "after showing which"))
        menu.addSeparator()
        menu.addAction(a("rename_value", "Rename &Value...", value.rename_value, NEEDS_VALUE, "Shift+F2",
                         tip="Rename the selected value everywhere, subgraphs included"))
        menu.addAction(a("mark_output", "Mark as Graph &Output", value.mark_output, NEEDS_VALUE))
        menu.addAction(a("remove_output", "Remove from Graph Outputs", value.remove_output, NEEDS_OUTPUT,
                         tip="The selected value stays; the model no longer gives it"))
        menu.addAction(a("graph_io", "Graph Inputs and Out&puts...", value.graph_io))
        menu.addAction(a("dimension", "Ma&ke Dimension Dynamic or Static...", node.make_dimension,
                         tip="A graph input's dimension becomes a name or a size, with every output and "
                         "value_info that shares it"))
        menu.addSeparator()
        menu.addAction(a("replace_weights", "Replace Wei&ghts from .npy...", value.replace_weights, NEEDS_WEIGHT))
        menu.addAction(a("weights_text", "Edit Weights as Te&xt...", value.edit_weights_text, NEEDS_WEIGHT,
                         tip=f"Type the values of an initializer of at most {SMALL_TENSOR:,} elements"))
        menu.addAction(a("to_initializer", "Con&stant to Initializer", node.constant_to_initializer, NEEDS_NODE))
        menu.addAction(a("to_constant", "Initializer to &Constant", value.initializer_to_constant, NEEDS_WEIGHT))
        menu.addSeparator()
        menu.addAction(a("model", "&Model Properties...", model.model_properties,
                         tip="Producer, version, description, metadata and opset version"))
        cleanup = menu.addMenu("C&lean Up")
        cleanup.addAction(a("remove_unused", "Remove &Unused Nodes and Initializers", model.remove_unused))
        cleanup.addAction(a("sort", "&Sort Nodes Topologically", model.sort_nodes))
        cleanup.addAction(a("extract_selection", "Extract Se&lection...", model.extract_selection,
                            tip="The selected node or group as a new model: its inputs are what it reads "
                                "from outside, its outputs what is read outside"))
        cleanup.addAction(a("extract", "&Extract Subgraph...", model.extract,
                            tip="The part between chosen inputs and outputs as a new model"))
        self.menus.view.addAction(history)

    def update(self) -> None:
        """Each action enabled when what it needs is selected; Undo and Redo say what they undo and redo."""
        s = self.selection
        doc = s.doc
        has_node = doc is not None and s.node() is not None
        has_value = doc is not None and bool(s.value())
        enabled = {NEEDS_DOC: doc is not None, NEEDS_NODE: has_node, NEEDS_VALUE: has_value or has_node,
                   NEEDS_WEIGHT: s.weight() != "", NEEDS_INPUT: s.input() != "",
                   NEEDS_OUTPUT: s.output() != ""}
        for key, action in self.actions.items():
            action.setEnabled(enabled[self._needs[key]])
        stack = doc.undo_stack if doc is not None else None
        undo, redo = self.actions["undo"], self.actions["redo"]
        undo.setEnabled(bool(stack and stack.can_undo))
        redo.setEnabled(bool(stack and stack.can_redo))
        undo.setText(f"&Undo {_menu_text(stack.undo_label())}" if stack and stack.can_undo else "&Undo")
        redo.setText(f"&Redo {_menu_text(stack.redo_label())}" if stack and stack.can_redo else "&Redo")


def _menu_text(label: str) -> str:
    """An edit's label in a menu item: escaped, elided to a menu's width, '&' shown rather than marking a
    mnemonic."""
    return short_name(label, 80).replace("&", "&&")
