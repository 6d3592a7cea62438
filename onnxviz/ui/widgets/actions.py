"""Menu actions the features build alike: text, a tip shown as tooltip (with the shortcut) and status tip."""

from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QKeySequence


def menu_action(parent: QObject, text: str, tip: str, shortcut: str | None = None,
                checkable: bool = False) -> QAction:
    """An action for a menu: ``tip`` as its status tip and, with the shortcut after it, its tooltip."""
    action = QAction(text, parent)
    if shortcut:
        action.setShortcut(QKeySequence(shortcut))
    action.setToolTip(tip + (f" ({shortcut})" if shortcut else ""))
    action.setStatusTip(tip)
    action.setCheckable(checkable)
    return action
