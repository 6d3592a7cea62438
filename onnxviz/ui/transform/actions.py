"""The Transform menu's actions enabled as the window's state says, and the canvas's right-click Keep in Float: used
by the feature before its controller exists and by the controller after."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

if TYPE_CHECKING:
    from onnxviz.ui.canvas.canvas import GraphCanvas
    from onnxviz.ui.ports import ShownDocument


def enable_actions(a: dict[str, QAction], has_doc: bool, busy: bool = False, quantized: bool = False,
                   excluded: bool = False, outcome: bool = False) -> None:
    """The actions enabled as the window's state says (``quantized``: a quantization to run again; ``excluded``:
    nodes kept in float; ``outcome``: a transform to measure)."""
    for name, action in a.items():
        if name.startswith("tool:"):
            action.setEnabled(has_doc and not busy)
    a["keep_float"].setEnabled(has_doc)
    a["quantize_again"].setEnabled(has_doc and not busy and quantized)
    a["clear_float"].setEnabled(excluded)
    a["cost"].setEnabled(has_doc and not busy and outcome)
    a["cancel"].setEnabled(busy)


def add_context_actions(document: ShownDocument, canvas: GraphCanvas, a: dict[str, QAction], menu: QMenu,
                        quantized: bool) -> None:
    """The canvas's right-click menu: the selected nodes kept in float (and quantized again)."""
    if not document.shows_own or not canvas.selected_nodes():
        return
    menu.addSeparator()
    menu.addAction(a["keep_float"])
    if quantized:
        menu.addAction(a["quantize_again"])
