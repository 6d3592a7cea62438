"""The Edit menu's edits of the selected node: attributes, name, operator, inserting, rewiring, new tensors,
description, deleting it (alone, reconnected, with a branch), a Constant made an initializer."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from onnxviz.model.errors import EditError
from onnxviz.model.text import dtype_text, first_names, quoted_name, shape_list
from onnxviz.ui.widgets.names import message_text, short_name

if TYPE_CHECKING:
    from onnxviz.model.document import Document
    from onnxviz.model.editing.branch_edits import Branch, Orphans, Side
    from onnxviz.model.editing.literals import LiteralKind
    from onnxviz.ui.edit.host import EditHost
    from onnxviz.ui.edit.selection import EditSelection


class NodeEdits:
    """The edits of the selected node, each through the document's API (one undoable step)."""

    def __init__(self, host: EditHost, selection: EditSelection) -> None:
        self.host, self.selection = host, selection

    def edit_attributes(self) -> None:
        from onnxviz.ui.edit.attributes import AttributesDialog

        doc, scope, i = self.selection.require_node()
        self.host.open_dialog(AttributesDialog(doc, scope, i, self.host.window), modal=False)

    def rename_node(self) -> None:
        from onnxviz.ui.edit.attributes import node_ref

        doc, scope, i = self.selection.require_node()
        ref = node_ref(doc, scope, i)
        form = self.host.form("Rename Node", f"New name for {quoted_name(doc.edit.node_label(scope, i))}:",
                          lambda f: doc.edit.rename_node(ref, f.text("name").strip()), "Rename")
        form.add_line("name", "Name:", doc.edit.node_proto(scope, i).name, name=True)
        self.host.open_dialog(form)

    def change_operator(self) -> None:
        from onnxviz.model.editing.palette import CONTRIB_DOMAIN, palette
        from onnxviz.ui.edit.attributes import node_ref

        doc, scope, i = self.selection.require_node()
        ref = node_ref(doc, scope, i)
        node = doc.edit.node_proto(scope, i)
        contrib = node.domain == CONTRIB_DOMAIN  # completions from the node's side: onnx's or onnxruntime's
        names = sorted({e.name for e in palette(doc.model) if (e.domain == CONTRIB_DOMAIN) == contrib})
        form = self.host.form("Change Operator",
                          f"Operator of {quoted_name(doc.edit.node_label(scope, i))}. Attributes the new operator does not "
                          "have are kept and listed as problems until you remove them.",
                          lambda f: doc.edit.set_op_type(ref, f.text("op").strip(), f.text("domain").strip()),
                          "Change")
        form.add_line("op", "Operator:", node.op_type, names)
        form.add_line("domain", "Domain:", node.domain, placeholder="ai.onnx (default)")
        self.host.open_dialog(form)

    def insert_node(self) -> None:
        from onnxviz.ui.edit.palette_dialog import PaletteDialog

        if self.host.doc is None:
            raise EditError("open a model first.")
        def constant() -> None:
            self.host.guarded(lambda: self.new_tensor("constant"))

        self.host.open_dialog(PaletteDialog(self.host.doc, self.host.window, constant))

    # the value dialogs' module is imported as one opens (the window's start does without it)
    def rewire_input(self) -> None:
        from onnxviz.ui.edit import value_dialogs

        doc, scope, i = self.selection.require_node()
        self.host.open_dialog(value_dialogs.rewire_input(self.host, doc, scope, i))

    def new_tensor(self, kind: LiteralKind) -> None:
        """Insert Constant / New Initializer, feeding an input of the selected node if the user chooses."""
        from onnxviz.ui.edit import value_dialogs

        self.host.open_dialog(value_dialogs.new_tensor(self.host, kind))

    def make_dimension(self) -> None:
        from onnxviz.ui.edit import value_dialogs

        self.host.open_dialog(value_dialogs.make_dimension(self.host))

    def describe_node(self) -> None:
        from onnxviz.ui.edit.attributes import node_ref

        doc, scope, i = self.selection.require_node()
        ref = node_ref(doc, scope, i)
        form = self.host.form("Node Description",
                          f"Description (doc_string) of {quoted_name(doc.edit.node_label(scope, i))}:",
                          lambda f: doc.edit.set_doc_string(ref, f.text("text")))
        form.add_text("text", "Description:", doc.edit.node_proto(scope, i).doc_string, "Markdown; empty: none")
        self.host.open_dialog(form)

    def delete_node(self, reconnect: bool = False) -> None:
        """Delete the selected node; when it has one input and one output of the same type (and Delete did not
        say already), ask whether its consumers should read its input instead."""
        doc, scope, i = self.selection.require_node()
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
                          QMessageBox.StandardButton.Cancel, self.host.window)
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
            if clicked in (rejoin, alone) and self.host.doc is doc:
                doc.selection.clear(scope)
                self.host.guarded(lambda: doc.edit.remove_node(ref, reconnect=clicked is rejoin))

        box.finished.connect(answered)
        self.host.open_dialog(box)

    def delete_branch(self, side: Side) -> None:
        """Show which nodes go with the selected one, and delete them all on Delete."""
        from onnxviz.ui.edit.attributes import node_ref

        doc, scope, i = self.selection.require_node()
        branch = doc.edit.node_branch((scope, i), side)
        box = QMessageBox(QMessageBox.Icon.Question, "Delete Branch", message_text(branch_question(branch)),
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel, self.host.window)
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
            if clicked not in (yes, repoint) or clicked is None or self.host.doc is not doc:
                return
            orphans: Orphans = "repoint" if clicked is repoint else "remove"
            doc.selection.clear(scope)
            self.host.guarded(lambda: doc.edit.remove_node_with_outputs(ref, orphans) if side == "outputs"
                         else doc.edit.remove_node_with_inputs(ref, orphans))

        box.finished.connect(answered)
        self.host.open_dialog(box)

    def constant_to_initializer(self) -> None:
        """The selected Constant, or the Constants shown inside the selected node's box, become initializers."""
        doc, scope, i = self.selection.require_node()
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
