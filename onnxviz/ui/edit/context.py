"""The canvas's right-click: it selects what is under the pointer, then offers the Edit menu's edits of it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QContextMenuEvent
from PySide6.QtWidgets import QMenu

if TYPE_CHECKING:
    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import QMainWindow

    from onnxviz.ui.canvas.canvas import GraphCanvas
    from onnxviz.ui.canvas.view import GraphView
    from onnxviz.ui.ports import ShownDocument

CONTEXT_KEYS = ("attributes", "rename_node", "op_type", "insert", "rewire", "insert_constant", "describe", None,
                "rename_value", "mark_output", "remove_output", "replace_weights", "weights_text", "to_initializer",
                "to_constant", None, "delete", "delete_reconnect", "delete_inputs", "delete_outputs", None)


class EditContextMenu(QObject):
    """The right-click menu of the canvas's selection (none while the canvas shows another model)."""

    def __init__(self, window: QMainWindow, document: ShownDocument, canvas: GraphCanvas,
                 actions: dict[str, QAction], on_canvas: Callable[[], bool]) -> None:
        super().__init__(window)
        self.window, self.document, self.canvas, self.actions = window, document, canvas, actions
        self.on_canvas = on_canvas
        self._context_view: GraphView | None = None
        self.last_menu: QMenu | None = None

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
        edits.deleteLater()   # its actions belong to the Edit menu and stay in the canvas's menu
        self.last_menu = menu

    def context_menu(self) -> QMenu:
        """The right-click menu for the current selection (Extract Selection when a node or group is selected)."""
        menu = QMenu(self.window)
        for key in CONTEXT_KEYS:
            if key is None:
                menu.addSeparator()
            elif self.actions[key].isEnabled():
                menu.addAction(self.actions[key])
        if self.document.doc is not None and self.canvas.selected_nodes():
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
