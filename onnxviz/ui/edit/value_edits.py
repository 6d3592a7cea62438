"""The Edit menu's edits of the selected value (name, graph outputs, weights) and of the whole model
(properties, clean-ups, extracting a part)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QMessageBox

from onnxviz.model.editing.values import (
    ONE_LINE,
    SMALL_TENSOR,
    array_edit_text,
    parse_tensor_text,
    small_array,
    tensor_summary,
)
from onnxviz.model.errors import EditError
from onnxviz.model.graph.index import INITIALIZER
from onnxviz.model.text import quoted_name
from onnxviz.ui.widgets.names import message_text, short_name

if TYPE_CHECKING:
    import numpy as np

    from onnxviz.model.document import Document
    from onnxviz.ui.edit.host import EditHost
    from onnxviz.ui.edit.selection import EditSelection
    from onnxviz.ui.widgets.forms import FormDialog


class ValueEdits:
    """The edits of the selected value or weight, each through the document's API (one undoable step)."""

    def __init__(self, host: EditHost, selection: EditSelection) -> None:
        self.host, self.selection = host, selection

    def rename_value(self) -> None:
        doc, scope, value = self.selection.require_value()

        def rename(f: FormDialog) -> None:
            new = f.text("name").strip()
            doc.edit.rename_value(value, new, scope)
            doc.selection.select_value(scope, new)  # the panels show the value, not its old name

        form = self.host.form("Rename Value", f"Rename '{quoted_name(value)}' everywhere it is used, subgraphs included:",
                          rename, "Rename")
        form.add_line("name", "New name:", value, name=True)
        self.host.open_dialog(form)

    def mark_output(self) -> None:
        doc, scope, value = self.selection.require_value()
        doc.edit.add_output(value, scope)

    def remove_output(self) -> None:
        doc, scope, value = self.selection.require_value()
        doc.edit.remove_output(value, scope)

    def graph_io(self) -> None:
        from onnxviz.ui.edit.model_dialogs import GraphIODialog

        if self.host.doc is None:
            raise EditError("open a model first.")
        self.host.open_dialog(GraphIODialog(self.host.doc, self.host.window), modal=False)

    def replace_weights(self) -> None:
        doc, scope, value = self.selection.require_value()
        if doc.index.graphs[scope].producer_of(value) != INITIALIZER:
            raise EditError(f"'{quoted_name(value)}' is not an initializer; select a weight.")
        path, _ = QFileDialog.getOpenFileName(self.host.window, f"Replace {short_name(value)} with", "",
                                              "NumPy arrays (*.npy)")
        if path:
            self.replace_weights_from(value, Path(path), scope)

    def replace_weights_from(self, name: str, path: Path, scope: str = "") -> None:
        """Load ``path``; a different dtype or shape is explained and needs confirmation (a different dtype
        can be cast to the initializer's)."""
        from onnxviz.ui.edit.attributes import load_npy

        doc = self.host.doc
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
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel, self.host.window)
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
                self.host.guarded(lambda: doc.edit.replace_initializer(name, array, scope, force=True, cast=True))
            elif clicked is box.button(QMessageBox.StandardButton.Yes):
                self.host.guarded(lambda: doc.edit.replace_initializer(name, array, scope, force=True))

        box.finished.connect(answered)
        self.host.dialog = box  # type: ignore[assignment]
        box.open()

    def edit_weights_text(self) -> None:
        doc, scope, value = self.selection.require_value()
        tensor = doc.edit.initializer_proto(value, scope)
        array = small_array(tensor)
        if array is None:
            raise EditError(f"'{quoted_name(value)}' has more than {SMALL_TENSOR:,} numbers (or is not numbers) to "
                            "type; replace it from a .npy file.")

        def apply(f: FormDialog) -> None:
            typed = parse_tensor_text(f.text("values"), array.dtype)
            doc.edit.replace_initializer(value, typed.reshape(array.shape) if typed.size == array.size else typed, scope)

        lines = array.ndim > 1 or array.size > ONE_LINE
        form = self.host.form("Edit Weights", f"Values of '{quoted_name(value)}' ({tensor_summary(tensor)}), as numbers; "
                         "they keep its type." + (" Ctrl+Return replaces them." if lines else ""), apply, "Replace")
        if lines:  # a row of the tensor per line, as wide as a screen allows
            form.add_text("values", "Values:", array_edit_text(array), "e.g. [[1, 2], [3, 4]]").setFixedHeight(320)
            form.resize(900, 460)
        else:
            form.add_line("values", "Values:", array_edit_text(array), placeholder="e.g. [1, 2, 3]")
        self.host.open_dialog(form)

    def initializer_to_constant(self) -> None:
        doc, scope, value = self.selection.require_value()
        doc.edit.initializer_to_constant(value, scope)


class ModelEdits:
    """The edits of the whole model: its properties, the clean-ups, extracting a part as a new model."""

    def __init__(self, host: EditHost) -> None:
        self.host = host

    def model_properties(self) -> None:
        from onnxviz.ui.edit.model_dialogs import ModelPropertiesDialog

        if self.host.doc is None:
            raise EditError("open a model first.")
        self.host.open_dialog(ModelPropertiesDialog(self.host.doc, self.host.window))

    def remove_unused(self) -> None:
        if self.host.doc is None:
            return
        nodes, inits = self.host.doc.edit.remove_unused(self.host.doc.selection.state.scope)
        if not nodes and not inits:
            self.host.status.show_message("Nothing unused to remove.", 4000)

    def sort_nodes(self) -> None:
        if self.host.doc is not None and not self.host.doc.edit.sort_topologically(self.host.doc.selection.state.scope):
            self.host.status.show_message("The nodes are already in topological order.", 4000)

    def extract(self) -> None:
        from onnxviz.ui.edit import extract

        extract.extract_between(self.host)

    def extract_selection(self) -> None:
        from onnxviz.ui.edit import extract

        extract.extract_selection(self.host)
