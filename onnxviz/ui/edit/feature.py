"""Plugs editing into the main window: Edit menu, undo/redo, history dock, canvas right-click, badges."""

from __future__ import annotations

from typing import TYPE_CHECKING

from onnxviz.ui.edit.controller import EditController

if TYPE_CHECKING:
    from onnxviz.ui.main_window import MainWindow


def install(window: MainWindow) -> EditController:
    """Called once by the main window after its menus and the canvas exist; returns the controller
    (``window.editing``)."""
    controller = EditController(window)
    controller.attach_canvas(window.canvas.view)
    window.canvas.context_actions.append(controller.add_context_actions)
    return controller
