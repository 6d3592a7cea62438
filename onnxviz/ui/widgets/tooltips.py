"""The second line of defence for text from a file in tooltips.

The first line is escaping: every tooltip made from a model's text goes through
:func:`~onnxviz.ui.widgets.names.plain_tooltip` or :func:`~onnxviz.ui.widgets.names.name_tooltip`. Qt reads a
tooltip that starts with a tag as rich text and loads what an image names (``<img src="/dev/zero">`` grows
memory until the app aborts; a FIFO blocks the GUI thread for good), so one missed escape is one crash. This
guard sits on the application: before Qt shows a widget's, an item's, a header section's or a tab's tooltip, it
reads the text Qt is about to show, and when that text would load a resource it shows it itself, escaped, as
written. Tooltips that load nothing are left to Qt.
"""

from __future__ import annotations

import html
import re

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QHelpEvent
from PySide6.QtWidgets import QAbstractItemView, QApplication, QHeaderView, QTabBar, QToolTip, QWidget

# markup that makes Qt's text engine read a file or a URL: an image (or a table's background), a style's url()
LOADS = re.compile(r"<\s*img\b|<[^>]*\b(src|background)\s*=|<[^>]*url\s*\(|<\s*style\b", re.IGNORECASE)


def loads_a_resource(text: str) -> bool:
    """Whether Qt would read ``text`` as rich text that names a resource to load."""
    return bool(text) and LOADS.search(text) is not None


def as_written(text: str) -> str:
    """``text`` as a rich-text tooltip that shows every character as written and loads nothing."""
    return "<p style='white-space:pre-wrap'>" + html.escape(text).replace("\n", "<br>") + "</p>"


def tooltip_at(widget: QWidget, event: QHelpEvent) -> str:
    """The tooltip Qt would show for ``event`` on ``widget``: an item's, a header section's or a tab's where the
    widget is one's viewport or a tab bar, else the widget's own."""
    view = widget.parentWidget()
    value: object = None
    if isinstance(view, QHeaderView) and widget is view.viewport():
        section = view.logicalIndexAt(event.pos())
        model = view.model()
        if section >= 0 and model is not None:
            value = model.headerData(section, view.orientation(), Qt.ItemDataRole.ToolTipRole)
    elif isinstance(view, QAbstractItemView) and widget is view.viewport():
        index = view.indexAt(event.pos())
        value = index.data(Qt.ItemDataRole.ToolTipRole) if index.isValid() else None
    elif isinstance(widget, QTabBar):
        tab = widget.tabAt(event.pos())
        value = widget.tabToolTip(tab) if tab >= 0 else None
    else:
        value = widget.toolTip()
    return value if isinstance(value, str) else ""


class ToolTipGuard(QObject):
    """An application-wide event filter: a tooltip that would load a resource is shown as written instead."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        # every event of the application comes here: the type test first (an isinstance costs far less than
        # event.type(), whose answer PySide makes a Python enum member each call)
        if not isinstance(event, QHelpEvent) or event.type() != QEvent.Type.ToolTip \
                or not isinstance(watched, QWidget):
            return False
        text = tooltip_at(watched, event)
        if not loads_a_resource(text):
            return False
        QToolTip.showText(event.globalPos(), as_written(text), watched)
        return True


GUARD_NAME = "onnxviz-tooltip-guard"
_guards: list[ToolTipGuard] = []  # their Python side kept alive: Qt calls eventFilter on it


def guard_tooltips(app: QApplication) -> None:
    """Install the :class:`ToolTipGuard` on ``app`` (once)."""
    if app.findChild(QObject, GUARD_NAME) is not None:
        return
    guard = ToolTipGuard(app)
    guard.setObjectName(GUARD_NAME)
    app.installEventFilter(guard)
    _guards.append(guard)
