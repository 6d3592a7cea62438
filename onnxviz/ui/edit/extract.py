"""Extract: part of the main graph as a new model, opened in a new window or saved where the user chooses.

The part is chosen on the canvas (the selected node, or every node of the selected name-scope group: its
boundary is worked out) or by typing the values it lies between. The model shown is never changed, and a
file is written only where a save dialog was answered (which asks before replacing one).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import onnx
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QMessageBox, QPushButton

from onnxviz.model.document import Document
from onnxviz.model.errors import EditError, OnnxvizError
from onnxviz.model.text import first_names
from onnxviz.ui.widgets.forms import FormDialog
from onnxviz.ui.widgets.names import message_text

if TYPE_CHECKING:
    from PySide6.QtWidgets import QMainWindow

    from onnxviz.ui.edit.host import EditHost
    from onnxviz.ui.ports import Files

MODEL_FILTER = "ONNX models (*.onnx);;All files (*)"
NAMES_SHOWN = 6


def extract_selection(controller: EditHost) -> None:
    """The selected node or group of the main graph, as a new model."""
    doc, canvas = controller.doc, controller.canvas
    if doc is None:
        raise EditError("open a model first.")
    if not controller.on_canvas():
        raise EditError("the graph shown is the compared model's (Diff > Show B's Graph): show this model's graph "
                        "to extract from it.")
    if canvas.scope != "":
        raise EditError("only nodes of the main graph can be extracted: go back to it and select them there.")
    nodes = canvas.selected_nodes()
    if not nodes:
        raise EditError("select a node or a group of nodes on the graph first.")
    offer(controller, doc.edit.extract_nodes(nodes), doc)


def extract_between(controller: EditHost) -> None:
    """A form for the values the part lies between (names separated by commas, completed one at a time)."""
    doc = controller.doc
    if doc is None:
        raise EditError("open a model first.")
    inputs, outputs = _suggested_boundary(controller, doc)

    def apply(f: FormDialog) -> None:
        ins = [s.strip() for s in f.text("inputs").split(",") if s.strip()]
        outs = [s.strip() for s in f.text("outputs").split(",") if s.strip()]
        part = doc.edit.extract(ins, outs)
        controller.status.show_message("")
        offer(controller, part, doc)

    form = FormDialog(controller.window, "Extract Subgraph", "A new model of what lies between these values "
                      "(this model is not changed). Separate names with commas. To extract nodes, select them "
                      "on the graph and use Extract Selection instead.", apply, "Extract...")
    values = sorted(v for v in doc.index.main.producer if v)
    form.add_line("inputs", "Inputs:", ", ".join(inputs), values, separated=True, popup_above=True)
    form.add_line("outputs", "Outputs:", ", ".join(outputs), values, separated=True)
    controller.open_dialog(form)


def _suggested_boundary(controller: EditHost, doc: Document) -> tuple[list[str], list[str]]:
    """The selected node's boundary, else the graph's inputs and outputs."""
    nodes = controller.canvas.selected_nodes() if controller.canvas.scope == "" and \
        controller.on_canvas() else []
    if nodes:
        try:
            part = doc.edit.extract_nodes(nodes)
        except OnnxvizError:
            pass
        else:
            return [v.name for v in part.graph.input], [v.name for v in part.graph.output]
    return [v.name for v in doc.model.graph.input], [v.name for v in doc.model.graph.output]


def offer(controller: EditHost, part: onnx.ModelProto, doc: Document) -> QMessageBox:
    """Ask what becomes of ``part``: a new window, or a file chosen in a save dialog."""
    window = controller.window
    box = QMessageBox(QMessageBox.Icon.Question, "Extracted Model",
                      f"The extracted model has {_count(len(part.graph.node), 'node')}.", parent=window)
    box.setInformativeText("\n".join(message_text(line) for line in (
        f"Inputs: {first_names([v.name for v in part.graph.input], NAMES_SHOWN) or 'none'}.",
        f"Outputs: {first_names([v.name for v in part.graph.output], NAMES_SHOWN)}.",
        "This model is not changed.")))
    box.setTextFormat(Qt.TextFormat.PlainText)
    opened = box.addButton("Open in New Window", QMessageBox.ButtonRole.AcceptRole)
    saved = box.addButton("Save As...", QMessageBox.ButtonRole.ActionRole)
    box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(opened)
    stem = f"{doc.path.stem if doc.path else 'model'}_extract"
    choices: dict[QPushButton, Callable[[], object]] = {
        opened: lambda: controller.keep_window(open_in_window(controller.files, part, doc)),
        saved: lambda: save_part(controller, part, stem, doc),
    }

    def answered(_result: int) -> None:
        action = choices.get(box.clickedButton())  # type: ignore[call-overload]
        if action is not None:
            controller.guarded(action)

    box.finished.connect(answered)
    controller.open_dialog(box)
    return box


def open_in_window(files: Files, part: onnx.ModelProto, source: Document) -> QMainWindow:
    """A new main window showing ``part`` of ``source`` as an unsaved model: saving it asks for a file name,
    closing it asks first, and its external weights are read from ``source``'s folder until it is saved."""
    return files.open_in_new_window(Document.part_of(part, source))


def save_part(controller: EditHost, part: onnx.ModelProto, stem: str, doc: Document) -> Path | None:
    """Save ``part`` where the user chooses (the dialog asks before replacing a file); None if cancelled."""
    window = controller.window
    start = (doc.path.parent if doc.path else Path.cwd()) / f"{stem}.onnx"
    chosen, _ = QFileDialog.getSaveFileName(window, "Save Extracted Model", str(start), MODEL_FILTER)
    if not chosen:
        return None
    target = Path(chosen).absolute()  # as the dialog confirmed it: no suffix added to a name it did not ask about
    if doc.path is not None and target == doc.path:
        raise EditError("that is the file of the model shown; save the extracted model under another name.")
    # a document for the save only: at the source's path, so external data it shares is found and copied
    written = Document(part, doc.path).save(target)
    controller.status.show_message(f"Saved the extracted model ({_count(len(part.graph.node), 'node')}) to "
                                   f"{written}", 8000)
    return written


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"
