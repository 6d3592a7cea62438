"""The Edit History dock: every command of the undo stack, the current state marked; click to jump there."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QFont, QPalette
from PySide6.QtWidgets import QAbstractItemView, QDockWidget, QListWidget, QListWidgetItem, QWidget

from onnxviz.model.document import Change, ChangeKind, Document
from onnxviz.model.text import display_name
from onnxviz.ui.widgets.names import name_tooltip

LABEL_CHARS = 200  # of an edit's label (it quotes names from the file); elided to the list's width


class HistoryDock(QDockWidget):
    """Row 0 is the file as opened; row k the state after the k-th edit. Rows after the current one are
    the edits that Redo would bring back (shown greyed)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Edit History", parent)
        self.setObjectName("EditHistoryDock")
        self.doc: Document | None = None
        self.list = QListWidget()
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list.setUniformItemSizes(True)
        self.list.setTextElideMode(Qt.TextElideMode.ElideMiddle)  # a renamed 100,000-character name
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)  # is never scrolled to
        self.list.itemClicked.connect(self._on_clicked)
        self.list.itemActivated.connect(self._on_clicked)
        self.setWidget(self.list)

    def set_document(self, doc: Document | None) -> None:
        self.doc = doc
        self.refresh()

    def on_model_changed(self, change: Change) -> None:
        if change.kind != ChangeKind.VALIDATED:
            self.refresh()

    def refresh(self) -> None:
        self.list.clear()
        doc = self.doc
        if doc is None:
            return
        stack = doc.undo_stack
        grey = QBrush(self.palette().color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text))
        labels = [f"Opened {doc.name}", *(c.label for c in stack.commands)]
        for k, label in enumerate(labels):
            saved = " (saved)" if stack.clean_index == k and k else ""
            item = QListWidgetItem(display_name(label, LABEL_CHARS) + saved)
            if len(label) > 60:
                item.setToolTip(name_tooltip(label))
            item.setData(Qt.ItemDataRole.UserRole, k)
            if k > stack.index:
                item.setForeground(grey)
                font = QFont(item.font())
                font.setItalic(True)
                item.setFont(font)
            if k == stack.index:
                font = QFont(item.font())
                font.setBold(True)
                item.setFont(font)
                item.setBackground(QBrush(QColor(64, 128, 255, 40)))
            self.list.addItem(item)
        self.list.setCurrentRow(stack.index)
        self.list.scrollToItem(self.list.currentItem())

    def jump_to(self, k: int) -> None:
        """Undo or redo until the document is in the state after edit ``k`` (0: as opened)."""
        doc = self.doc
        if doc is None:
            return
        while doc.undo_stack.index > k and doc.undo_stack.can_undo:
            doc.undo()
        while doc.undo_stack.index < k and doc.undo_stack.can_redo:
            doc.redo()

    def _on_clicked(self, item: QListWidgetItem) -> None:
        self.jump_to(int(item.data(Qt.ItemDataRole.UserRole)))
