"""Plugs editing into the main window: Edit menu, undo/redo, history dock, canvas right-click, badges."""

from __future__ import annotations

from typing import TYPE_CHECKING

from onnxviz.ui.edit.controller import EditController

if TYPE_CHECKING:
    from onnxviz.ui.main_window import MainWindow


def install(window: MainWindow) -> None:
    """Called once by the main window after its menus exist; sets ``window.editing``."""
    controller = EditController(window)
    window.editing = controller  # type: ignore[attr-defined]
    view = getattr(getattr(window, "canvas", None), "view", None)
    if view is not None:
        controller.attach_canvas(view)
