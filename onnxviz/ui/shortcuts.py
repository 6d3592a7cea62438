"""Help > Keyboard Shortcuts: every action that has a shortcut, found by walking the menus."""

from __future__ import annotations

from collections.abc import Iterator

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLineEdit,
    QMainWindow,
    QMenu,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

KEY_ROWS_PROPERTY = "keyRows"  # the window's rows of keys its widgets handle themselves: (where, what, keys)


def shortcut_rows(window: QMainWindow) -> list[tuple[str, str, str]]:
    """(menu path, action, shortcuts) for every action with a shortcut, in menu order, then other keys."""
    rows: list[tuple[str, str, str]] = []
    seen: set[int] = set()
    for menu_path, action in _walk(window.menuBar().actions(), ""):
        seen.add(id(action))
        if text := _shortcut_text(action):
            rows.append((menu_path, _plain(action.text()), text))
    for action in window.findChildren(QAction):  # actions bound to widgets but in no menu
        if id(action) not in seen and (text := _shortcut_text(action)) and action.text():
            rows.append(("(window)", _plain(action.text()), text))
    rows += [tuple(row) for row in window.property(KEY_ROWS_PROPERTY) or ()]  # e.g. the arrows on the graph
    return rows


def _walk(actions: list[QAction], prefix: str) -> Iterator[tuple[str, QAction]]:
    for action in actions:
        menu = action.menu()
        if isinstance(menu, QMenu):
            yield from _walk(menu.actions(), f"{prefix} > {_plain(action.text())}" if prefix
                             else _plain(action.text()))
        elif not action.isSeparator():
            yield prefix, action


def _shortcut_text(action: QAction) -> str:
    keys = [k.toString(QKeySequence.SequenceFormat.NativeText) for k in action.shortcuts() if not k.isEmpty()]
    return ", ".join(dict.fromkeys(keys))


def _plain(text: str) -> str:
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&").replace("...", "").strip()


class ShortcutsDialog(QDialog):
    """A searchable table of the window's shortcuts."""

    def __init__(self, window: QMainWindow, parent: QWidget | None = None) -> None:
        super().__init__(parent or window)
        self.setWindowTitle("Keyboard Shortcuts")
        self.resize(620, 560)
        self.filter = QLineEdit(placeholderText="Filter by action, menu or key...")
        self.filter.setClearButtonEnabled(True)
        self.table = QTableWidget(0, 3)
        self.table.setHorizontalHeaderLabels(["Action", "Shortcut", "Menu"])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.setAlternatingRowColors(True)
        self.table.setShowGrid(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        for menu_path, name, keys in shortcut_rows(window):
            row = self.table.rowCount()
            self.table.insertRow(row)
            for column, text in enumerate((name, keys, menu_path)):
                self.table.setItem(row, column, QTableWidgetItem(text))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        close = buttons.button(QDialogButtonBox.StandardButton.Close)
        close.setAutoDefault(False)  # Enter in the filter goes to the results; Escape closes
        close.setDefault(False)
        layout = QVBoxLayout(self)
        layout.addWidget(self.filter)
        layout.addWidget(self.table)
        layout.addWidget(buttons)
        self.filter.textChanged.connect(self._apply_filter)
        self.filter.returnPressed.connect(self._to_results)

    def rows(self) -> list[tuple[str, str, str]]:
        return [(self._cell(r, 0), self._cell(r, 1), self._cell(r, 2))
                for r in range(self.table.rowCount()) if not self.table.isRowHidden(r)]

    def _cell(self, row: int, column: int) -> str:
        item = self.table.item(row, column)
        return item.text() if item is not None else ""

    def _to_results(self) -> None:
        """Enter in the filter: the first shortcut it left, selected, with the keyboard focus."""
        first = next((r for r in range(self.table.rowCount()) if not self.table.isRowHidden(r)), -1)
        if first >= 0:
            self.table.selectRow(first)
            self.table.setFocus()

    def _apply_filter(self, text: str) -> None:
        needle = text.strip().lower()
        for row in range(self.table.rowCount()):
            hay = " ".join(self._cell(row, c).lower() for c in range(3))
            self.table.setRowHidden(row, bool(needle) and needle not in hay)


def show_shortcuts(window: QMainWindow) -> ShortcutsDialog:
    dialog = ShortcutsDialog(window)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.show()
    return dialog
