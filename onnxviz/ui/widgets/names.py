"""Names from the file inside narrow panels: never wider than the panel, the whole name still at hand.

A name is shown escaped and cut (:func:`~onnxviz.model.graph.index.display_name`); what is left either wraps
(:func:`breakable` gives a 100,000-character name places to break, copies drop them again, see
:class:`RichLabel`) or is elided to one line (:class:`ElidedLabel`, :func:`short_name` for a window title,
a menu or a list item). The tooltip shows the name wrapped into lines (:func:`name_tooltip`) and "Copy
Name" in the context menu copies it as written in the file. Dialogs use the same: a sentence quoting a name
quotes it cut (:func:`~onnxviz.model.graph.index.quoted_name`), :func:`message_text` makes a message box's text
safe, and :class:`NameDelegate` shows the names an item view holds while its editors get them exactly.

Text from a file is never markup. Qt reads a label's, a tooltip's or a message box's text as rich text when its
first line holds a tag, and rich text loads the images it names (``<img src="/dev/zero">`` filled memory, a FIFO
blocked the window for good). So such text reaches a widget one way: into a tooltip through :func:`name_tooltip`
or :func:`plain_tooltip` (escaped rich text), into a label or message box set to plain text (:func:`message_text`,
:class:`ElidedLabel`), or escaped into the app's own markup (``html.escape``, :func:`~onnxviz.ui.panels.common.code`).
The documents the app makes itself (Markdown blocks, the operator palette's schema view) are
:class:`~onnxviz.ui.widgets.markdown.InertDocument`: they never load a resource, whatever their text holds.
"""

from __future__ import annotations

import html
import re
import textwrap

from PySide6.QtCore import QEvent, QModelIndex, QPersistentModelIndex, QSize, Qt
from PySide6.QtGui import (
    QClipboard,
    QContextMenuEvent,
    QGuiApplication,
    QKeyEvent,
    QKeySequence,
    QMouseEvent,
    QPainter,
    QPaintEvent,
)
from PySide6.QtWidgets import (
    QLabel,
    QLineEdit,
    QMenu,
    QSizePolicy,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolTip,
    QWidget,
)

from onnxviz.model.text import display_name

BREAK = "\u200b"  # zero-width space: a place to wrap that shows nothing (display_name escapes real ones)
TOOLTIP_CHARS = 2000  # of a name in a tooltip
TOOLTIP_WIDTH = 80    # characters per tooltip line
MESSAGE_CHARS = 1000  # of a message box's text or a form's error line
MESSAGE_RUN = 120     # characters without a space in a message (a name quoted whole, a path): kept at both ends
_MESSAGE_RUN = re.compile(rf"\S{{{MESSAGE_RUN + 1},}}")
_LONG_RUN = re.compile(r"[^\s/\-]{17,}")  # text Qt finds no place to wrap in (it wraps after spaces, / and -)
_PIECE = re.compile(r".{0,11}?[._:,;\])]|.{1,12}", re.DOTALL)  # up to a separator, else 12 characters


def breakable(text: str) -> str:
    """``text`` (already escaped and cut) with :data:`BREAK` after separators and every 12 characters of
    its runs that Qt cannot wrap: 'model.layers.11.self_attn.q_proj.weight' or a 100,000-character name
    would make its label (and the panel) as wide as the run. '/encoder/layers.11/MatMul_output_0' and
    other names Qt can wrap are left as they are."""
    if len(text) < 17:
        return text
    return _LONG_RUN.sub(lambda m: BREAK.join(_PIECE.findall(m.group())), text)


def wrappable(text: str, limit: int | None = 300) -> str:
    """``text`` from the file (or a sentence naming something from it) for a wrapping plain-text label:
    invisible characters escaped, cut at ``limit`` characters, :func:`breakable`."""
    return breakable(display_name(text, limit))


def short_name(name: str, limit: int = 60) -> str:
    """``name`` escaped for one line of limited room (a window title, a menu, a list item): a name longer
    than ``limit`` characters keeps its first and last ``limit / 2`` joined by '…', so its end (which often
    tells names apart) still shows."""
    return _middle_cut(display_name(name, None), limit)


def _middle_cut(shown: str, limit: int) -> str:
    return shown if len(shown) <= limit else f"{shown[:limit // 2]}…{shown[-(limit // 2):]}"


def message_text(text: str) -> str:
    """A message for a message box or a form's error line, to be shown as plain text. Messages of this
    project quote names cut (:func:`~onnxviz.model.graph.index.quoted_name`); those of onnx or onnxruntime may
    quote them whole ("... running Add node. Name:'<name>' Status Message: ..."): escaped, a run longer
    than :data:`MESSAGE_RUN` characters elided in its middle (the rest of the sentence still shows), cut
    at :data:`MESSAGE_CHARS` and :func:`breakable`."""
    shown = _MESSAGE_RUN.sub(lambda m: _middle_cut(m.group(), MESSAGE_RUN), display_name(text, None))
    return wrappable(shown, MESSAGE_CHARS)


def unbreak(text: str) -> str:
    """Text selected in a label as the clipboard should get it: without :data:`BREAK` and with Qt's
    paragraph and line separators as newlines."""
    return text.replace(BREAK, "").replace("\u2029", "\n").replace("\u2028", "\n")


def name_tooltip(name: str, limit: int = TOOLTIP_CHARS) -> str:
    """A tooltip showing ``name`` escaped, cut at ``limit`` and wrapped into lines (a tooltip with one
    100,000-character line would be wider than the screen); always rich text, so a name '<b>x</b>' is
    shown as written."""
    return _tooltip([display_name(name, limit)])


def plain_tooltip(text: str, limit: int = TOOLTIP_CHARS) -> str:
    """A tooltip showing ``text`` as written, whatever it holds: the one way text that comes from a file or
    names something of it (a path, a sentence quoting a name, a function's or schema's description) becomes
    a tooltip, a widget's or an item's. Qt reads a tooltip whose first line holds a tag (``<img src=...>``) as
    rich text, and loads what an image names: this one is rich text with every character escaped. Its line
    breaks are kept (each line wrapped like :func:`name_tooltip`'s), it is cut at ``limit`` characters."""
    cut = display_name(text, limit) if "\n" not in text else text[:limit]
    return _tooltip([display_name(line, None) for line in cut.split("\n")]) if text else ""


def _tooltip(lines: list[str]) -> str:
    wrapped = [part for line in lines for part in textwrap.wrap(
        line, TOOLTIP_WIDTH, break_on_hyphens=False, replace_whitespace=False, drop_whitespace=False) or [""]]
    return '<p style="white-space:pre">' + "<br>".join(html.escape(line) for line in wrapped) + "</p>"


def hidden_tooltip(name: str, shown_chars: int = 60) -> str:
    """:func:`name_tooltip` for a name that is not shown as written where it appears (it has characters
    shown escaped, or is longer than ``shown_chars``, the most it is shown with); '' for any other."""
    return name_tooltip(name) if len(name) > shown_chars or not name.isprintable() else ""


def whole_field(edit: QLineEdit) -> QLineEdit:
    """``edit`` made to hold text of any length: a QLineEdit cuts text set into it at 32,767 characters, so
    a 100,000-character name accepted unchanged would have been renamed to its first 32,767."""
    edit.setMaxLength(2**31 - 1)
    return edit


def name_field(name: str) -> QLineEdit:
    """A field holding ``name`` as written, for the user to edit (:func:`whole_field`). A field cannot show
    bidi controls, line breaks or zero-width characters: a name holding some gets a warning mark at the
    field's end, and the field's tooltip shows the name escaped (:func:`hidden_tooltip`)."""
    edit = whole_field(QLineEdit(name))
    edit.setToolTip(hidden_tooltip(name))
    if not name.isprintable():
        icon = edit.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning)
        mark = edit.addAction(icon, QLineEdit.ActionPosition.TrailingPosition)
        mark.setToolTip(f"<p>The name has characters this field does not show:</p>{name_tooltip(name)}")
    return edit


def copy_text(text: str) -> None:
    QGuiApplication.clipboard().setText(text)


class RichLabel(QLabel):
    """A selectable rich-text label whose copies leave out :data:`BREAK`; ``copy_name`` (a name as
    written in the file) adds "Copy Name" to its context menu."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.copy_name = ""

    def copy_selection(self) -> None:
        if self.hasSelectedText():
            copy_text(unbreak(self.selectedText()))

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt's name
        if event.matches(QKeySequence.StandardKey.Copy) and self.hasSelectedText():
            self.copy_selection()
            event.accept()
            return
        super().keyPressEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        super().mouseReleaseEvent(event)
        clipboard = QGuiApplication.clipboard()
        if clipboard.supportsSelection() and self.hasSelectedText():  # X11's middle-click paste
            clipboard.setText(unbreak(self.selectedText()), QClipboard.Mode.Selection)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:  # noqa: N802
        selectable = bool(self.textInteractionFlags() & Qt.TextInteractionFlag.TextSelectableByMouse)
        if not selectable and not self.copy_name:  # e.g. a form's key: nothing to copy
            event.ignore()
            return
        menu = self.context_menu()
        menu.exec(event.globalPos())
        menu.deleteLater()

    def context_menu(self) -> QMenu:
        """Copy (the selection), and Copy Name when the label shows a name (Qt's own menu would copy
        the places to wrap, and offers to copy the panel's internal link addresses)."""
        menu = QMenu(self)
        copy = menu.addAction("Copy", self.copy_selection)
        copy.setEnabled(self.hasSelectedText())
        if self.copy_name:
            menu.addAction("Copy Name", lambda: copy_text(self.copy_name))
        return menu


class ElidedLabel(QLabel):
    """One line of plain text elided with '…' in the middle to the width it gets: it never makes its
    panel wider. When part of the name is hidden, the tooltip shows it wrapped; "Copy Name" copies the
    name as written in the file."""

    def __init__(self, name: str = "", limit: int = 300, hint_width: int | None = 300,
                 parent: QWidget | None = None) -> None:
        """``hint_width``: the widest it asks to be (None: its whole text, where nothing else takes the room)."""
        super().__init__(parent)
        self.limit = limit
        self.hint_width = hint_width
        self.copy_name = ""
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self.set_name(name)

    def set_name(self, name: str, copy_name: str | None = None) -> None:
        """Show ``name`` (from the file: escaped, elided to the width; a name longer than ``limit``
        characters keeps its first and last ``limit / 2`` for that, so its end still shows). "Copy Name"
        copies ``copy_name`` (default: ``name``; "" for no such action)."""
        shown = display_name(name, None)
        self._cut = len(shown) > self.limit
        shown = _middle_cut(shown, self.limit)
        self.setText(shown)
        self.copy_name = name if copy_name is None else copy_name
        self.setToolTip(name_tooltip(name) if shown else "")

    @property
    def elided(self) -> bool:
        """Part of the name is not shown (cut, or elided to the width)."""
        return self._cut or self.elided_text() != self.text()

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        hint = super().minimumSizeHint()
        return QSize(min(hint.width(), self.fontMetrics().horizontalAdvance("M…M") + 4), hint.height())

    def sizeHint(self) -> QSize:  # noqa: N802
        hint = super().sizeHint()
        return hint if self.hint_width is None else QSize(min(hint.width(), self.hint_width), hint.height())

    def elided_text(self) -> str:
        return self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideMiddle, self.contentsRect().width())

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        painter = QPainter(self)
        try:
            self.style().drawItemText(painter, self.contentsRect(), int(self.alignment()), self.palette(),
                                      self.isEnabled(), self.elided_text(), self.foregroundRole())
        finally:  # ended even when drawing fails: Qt ending a paint with it still active is a crash
            painter.end()

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and not self.elided:  # the tooltip would say what is shown
            QToolTip.hideText()
            event.ignore()
            return True
        return super().event(event)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:  # noqa: N802
        if self.copy_name:
            menu = self.context_menu()
            menu.exec(event.globalPos())
            menu.deleteLater()

    def context_menu(self) -> QMenu:
        menu = QMenu(self)
        menu.addAction("Copy Name", lambda: copy_text(self.copy_name))
        return menu


class NameDelegate(QStyledItemDelegate):
    """An item view's cells (a table, a completer's list) holding names as written: shown escaped and cut at
    ``limit``, while an editor opened on a cell gets the name exactly (as does a completion chosen)."""

    def __init__(self, parent: QWidget | None = None, limit: int = 300) -> None:
        super().__init__(parent)
        self.limit = limit

    def displayText(self, value: object, locale: object) -> str:  # noqa: N802 - Qt's name
        if isinstance(value, str):
            return display_name(value, self.limit)
        return super().displayText(value, locale)  # type: ignore[arg-type]

    def createEditor(self, parent: QWidget, option: QStyleOptionViewItem,  # noqa: N802
                     index: QModelIndex | QPersistentModelIndex) -> QWidget:
        editor = super().createEditor(parent, option, index)
        if isinstance(editor, QLineEdit):
            whole_field(editor)
        return editor
