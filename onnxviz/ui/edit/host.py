"""What the Edit menu's edits (node_edits, value_edits) and dialog modules (extract, value_dialogs) need of the
controller that opens them: the :class:`~onnxviz.ui.edit.controller.EditController` is one, and they name this
protocol instead of it (the controller imports them: naming it back made an import cycle)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from PySide6.QtWidgets import QDialog, QMainWindow

    from onnxviz.model.document import Document
    from onnxviz.ui.canvas.canvas import GraphCanvas
    from onnxviz.ui.ports import Files, Status
    from onnxviz.ui.widgets.forms import FormDialog


class EditHost(Protocol):
    window: QMainWindow  # the parent of the dialogs
    dialog: QDialog | None  # the dialog opened last
    canvas: GraphCanvas
    status: Status
    files: Files

    @property
    def doc(self) -> Document | None: ...

    def on_canvas(self) -> bool:
        """The canvas shows the document edited here."""

    def selected_node(self) -> tuple[str, int] | None: ...

    def guarded(self, slot: Callable[[], object]) -> None:
        """Run ``slot``; an edit it makes that is refused is reported, not raised."""

    def open_dialog(self, dialog: QDialog, modal: bool = True) -> QDialog: ...

    def keep_window(self, window: QMainWindow) -> None: ...

    def form(self, title: str, intro: str, on_accept: Callable[[FormDialog], None],
             ok_text: str = "OK") -> FormDialog: ...
