"""Plugs editing into the main window: Edit menu, undo/redo, history dock, canvas right-click, badges."""

from __future__ import annotations

from typing import TYPE_CHECKING

from onnxviz.ui.edit.controller import EditController
from onnxviz.ui.ports import Files, Frame, ShownDocument, Status

if TYPE_CHECKING:
    from onnxviz.ui.canvas.canvas import GraphCanvas


def install(frame: Frame, document: ShownDocument, canvas: GraphCanvas, status: Status, files: Files) -> EditController:
    """Adds the Edit menu, the History dock and the canvas's right-click edits; returns the controller."""
    controller = EditController(frame, document, canvas, status, files)
    controller.attach_canvas(canvas.view)
    canvas.context_actions.append(controller.add_context_actions)
    return controller
