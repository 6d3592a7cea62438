"""The Edit menu: undo/redo with readable labels, edits of the selection, dialogs, problem badges; composed of
parts with one job each: :class:`~onnxviz.ui.edit.selection.EditSelection` (what the edits act on),
:class:`~onnxviz.ui.edit.menu.EditActions` (the menu's actions and when each is enabled),
:class:`~onnxviz.ui.edit.node_edits.NodeEdits`, :class:`~onnxviz.ui.edit.value_edits.ValueEdits` and
:class:`~onnxviz.ui.edit.value_edits.ModelEdits` (the edits), :class:`~onnxviz.ui.edit.context.EditContextMenu`
(the canvas's right-click)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QDialog, QDockWidget, QMainWindow, QMenu

from onnxviz.model.document import Change, ChangeKind, Document
from onnxviz.model.errors import OnnxvizError
from onnxviz.model.graph.validation import node_badges
from onnxviz.model.text import display_name
from onnxviz.ui.edit.context import EditContextMenu
from onnxviz.ui.edit.history import HistoryDock
from onnxviz.ui.edit.menu import EditActions
from onnxviz.ui.edit.node_edits import NodeEdits
from onnxviz.ui.edit.selection import EditSelection
from onnxviz.ui.edit.value_edits import ModelEdits, ValueEdits
from onnxviz.ui.ports import Files, Frame, ShownDocument, Status
from onnxviz.ui.widgets.forms import FormDialog

if TYPE_CHECKING:
    from PySide6.QtGui import QAction

    from onnxviz.ui.canvas.canvas import GraphCanvas
    from onnxviz.ui.canvas.view import GraphView


class EditController(QObject):
    """Owns the editing actions of one main window; every edit goes through the document's API. It is the
    :class:`~onnxviz.ui.edit.host.EditHost` of the edits and their dialogs."""

    def __init__(self, frame: Frame, document: ShownDocument, canvas: GraphCanvas, status: Status,
                 files: Files) -> None:
        super().__init__(frame.window)
        self.window = frame.window  # the parent of the dialogs and the history dock
        self.document, self.canvas, self.status, self.files = document, canvas, status, files
        self.dialog: QDialog | None = None   # the dialog opened last (tests and embedding use it)
        self.windows: list[QMainWindow] = []  # windows opened from this one (extracted models)
        self.selection = EditSelection(document)
        self.nodes = NodeEdits(self, self.selection)
        self.values = ValueEdits(self, self.selection)
        self.model = ModelEdits(self)
        self.history = HistoryDock(self.window)
        self._place_history()
        self.menu = EditActions(self.window, frame.menus, self.selection, self.guarded)
        self.menu.build((self.undo, self.redo), self.nodes, self.values, self.model, self.history.toggleViewAction())
        self.context = EditContextMenu(self.window, document, canvas, self.actions, self.on_canvas)
        document.document_changed.connect(self._on_document)
        document.model_changed.connect(self._on_model_changed)
        document.shown_changed.connect(self.push_badges)  # the badges follow whichever graph is shown
        self.menu.update()

    def _place_history(self) -> None:
        """A tab beside the first bottom panel (the right side is the inspector's), else at the bottom."""
        window = self.window
        area = Qt.DockWidgetArea.BottomDockWidgetArea
        window.addDockWidget(area, self.history)
        neighbours = [d for d in window.findChildren(QDockWidget)
                      if d is not self.history and d.parent() is window and window.dockWidgetArea(d) == area]
        if neighbours:
            window.tabifyDockWidget(neighbours[-1], self.history)
            neighbours[-1].raise_()

    @property
    def doc(self) -> Document | None:
        return self.document.doc

    @property
    def actions(self) -> dict[str, QAction]:
        return self.menu.actions

    # -- the canvas's right-click ------------------------------------------------------
    @property
    def last_menu(self) -> QMenu | None:
        return self.context.last_menu

    def attach_canvas(self, view: GraphView) -> None:
        """Right-click on the canvas selects what is under the pointer, then offers the edits."""
        self.context.attach_canvas(view)

    def add_context_actions(self, menu: QMenu) -> None:
        self.context.add_context_actions(menu)

    def context_menu(self) -> QMenu:
        return self.context.context_menu()

    # -- state -----------------------------------------------------------------------
    def _on_document(self, doc: Document | None) -> None:
        if self.dialog is not None and shiboken6.isValid(self.dialog):
            self.dialog.close()  # it edits the document that was just replaced
        self.dialog = None
        self.history.set_document(doc)
        if doc is not None:
            doc.selection.changed.connect(self._on_selection)
        self.menu.update()  # the badges: pushed as the canvas shows it (shown_changed)

    def _on_selection(self, _state: object) -> None:
        self.menu.update()

    def _on_model_changed(self, change: Change) -> None:
        self.history.on_model_changed(change)
        self.menu.update()
        if change.kind.changes_model:
            verb = {"edit": "", "undo": "Undone: ", "redo": "Redone: "}[change.kind]
            self.status.show_message(f"{verb}{display_name(change.label, 200)}", 4000)
        if change.kind == ChangeKind.VALIDATED:
            self.push_badges()

    def on_canvas(self) -> bool:
        """The canvas shows the document edited here (not, say, the diff's model B)."""
        return self.document.shows_own

    def push_badges(self, *_shown: object) -> None:
        """Error/warning marks on the canvas's nodes (none on another model's graph)."""
        self.canvas.set_node_badges(node_badges(self.doc.problems) if self.on_canvas() and self.doc else {})

    # -- the edits' host (EditHost) ----------------------------------------------------
    def selected_node(self) -> tuple[str, int] | None:
        return self.selection.node()

    def guarded(self, slot: Callable[[], object]) -> None:
        try:
            slot()
        except OnnxvizError as exc:
            self.report(exc)

    def report(self, exc: OnnxvizError) -> None:
        self.status.show_message(display_name(exc.message, 300), 8000)
        self.status.show_error("Edit Refused", exc.message, exc.details)

    def open_dialog(self, dialog: QDialog, modal: bool = True) -> QDialog:
        self.dialog = dialog
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        if modal:
            dialog.open()
        else:
            dialog.show()
        return dialog

    def keep_window(self, window: QMainWindow) -> None:
        """Keep a window this one opened (an extracted model) alive until it is closed."""
        self.windows.append(window)
        window.destroyed.connect(lambda _obj=None, w=window: self.windows.remove(w) if w in self.windows else None)

    def form(self, title: str, intro: str, on_accept: Callable[[FormDialog], None],
             ok_text: str = "OK") -> FormDialog:
        return FormDialog(self.window, title, intro, on_accept, ok_text)

    # -- undo ----------------------------------------------------------------------------
    def undo(self) -> None:
        if self.doc is not None:
            self.doc.undo()

    def redo(self) -> None:
        if self.doc is not None:
            self.doc.redo()

    def replace_weights_from(self, name: str, path: Path, scope: str = "") -> None:
        """Load ``path`` into the initializer ``name`` (see :meth:`ValueEdits.replace_weights_from`)."""
        self.values.replace_weights_from(name, path, scope)
