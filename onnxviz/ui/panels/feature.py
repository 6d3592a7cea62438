"""Plugs this feature into the main window (docks, actions, signal connections)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from onnxviz.ui.main_window import MainWindow


def install(window: MainWindow) -> None:
    """Called once by the main window after its menus exist."""
