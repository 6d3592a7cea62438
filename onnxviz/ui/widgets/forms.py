"""Dialog building blocks: a form whose OK applies an edit, and a refused edit keeps it open with the reason.

Names from the file reach a form in its intro (quoted cut, :func:`~onnxviz.model.graph.index.quoted_name`), its
lists and a completer's suggestions (shown escaped, :mod:`onnxviz.ui.widgets.names`) and its fields, which
hold them exactly: the user edits what is written in the file.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPersistentModelIndex, QPoint, Qt
from PySide6.QtGui import QKeyEvent, QKeySequence, QPalette, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QCheckBox,
    QComboBox,
    QCompleter,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from onnxviz.model.errors import OnnxvizError
from onnxviz.ui.widgets.names import (
    NameDelegate,
    RichLabel,
    breakable,
    message_text,
    name_field,
    plain_tooltip,
    whole_field,
)

W = TypeVar("W", bound=QWidget)
ERROR_COLOURS = ("#c0392b", "#ff7b72")  # on a light and on a dark window: both readable


def error_style() -> str:
    """The red of a refusal, readable in the current theme."""
    dark = QApplication.palette().color(QPalette.ColorRole.Window).lightness() < 128
    return f"color: {ERROR_COLOURS[dark]}; font-weight: 500;"


class ErrorLabel(RichLabel):
    """One sentence in red under a form; hidden while there is nothing to say. The names it quotes are
    shown escaped and cut, and wrap (:func:`~onnxviz.ui.widgets.names.message_text`)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("", parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setWordWrap(True)
        self.setStyleSheet(error_style())
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.hide()

    def show_message(self, text: str) -> None:
        self.setText(message_text(text[:1].upper() + text[1:]) if text else "")
        self.setVisible(bool(text))
        if text:
            self._fit_window()

    def _fit_window(self) -> None:
        """Make the dialog tall enough for the message's lines (a window's layout only grows it to its
        minimum size, which counts a wrapping label as one line: a sentence quoting a long name was cut)."""
        window = self.window()
        layout = window.layout()
        if not isinstance(window, QDialog) or layout is None:  # e.g. an editor embedded in a panel
            return
        layout.activate()
        needed = window.heightForWidth(window.width())
        if needed > window.height():
            window.resize(window.width(), needed)


def complete(edit: QLineEdit, completions: Sequence[str], separated: bool = False, popup_above: bool = False) -> None:
    """Offer ``completions`` (names, matched anywhere, shown escaped) as ``edit`` is typed into.

    ``separated``: the field holds names separated by commas, and the name being typed is completed;
    ``popup_above``: the list opens above the field, so it does not cover the fields below."""
    if not completions:
        return
    completer = ListCompleter(list(completions), edit) if separated else QCompleter(list(completions), edit)
    completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
    completer.setFilterMode(Qt.MatchFlag.MatchContains)
    popup = completer.popup()
    if popup is not None:  # its list shows the names escaped; a completion is the exact name
        popup.setItemDelegate(NameDelegate(popup))
        popup.installEventFilter(ReturnGoesOn(edit, popup))  # after the completer's own: it runs first
        if popup_above:
            popup.installEventFilter(OpensAbove(edit, popup))
    edit.setCompleter(completer)


class ListCompleter(QCompleter):
    """Completes the last of the comma-separated names in a field, keeping those before it."""

    def __init__(self, completions: list[str], edit: QLineEdit) -> None:
        super().__init__(completions, edit)
        self.edit = edit

    def splitPath(self, path: str) -> list[str]:  # noqa: N802 - Qt override
        return [path.rpartition(",")[2].lstrip()]

    def pathFromIndex(self, index: QModelIndex | QPersistentModelIndex) -> str:  # noqa: N802 - Qt override
        done = self.edit.text().rpartition(",")[0]
        name = str(super().pathFromIndex(index))
        return f"{done}, {name}" if done else name


class OpensAbove(QObject):
    """Keeps a completer's list above its field (below, it would cover the next field)."""

    def __init__(self, edit: QLineEdit, popup: QAbstractItemView) -> None:
        super().__init__(edit)
        self.edit, self.popup = edit, popup

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if obj is self.popup and event.type() in (QEvent.Type.Show, QEvent.Type.Move, QEvent.Type.Resize):
            top = self.edit.mapToGlobal(QPoint(0, 0))  # the completer places it again as the list changes
            above = QPoint(top.x(), max(0, top.y() - self.popup.height()))
            if self.popup.pos() != above:
                self.popup.move(above)
        return super().eventFilter(obj, event)


class ReturnGoesOn(QObject):
    """Return in a completer's list with no row chosen closes the list and reaches the field (so the
    dialog's default button is pressed), instead of only closing the list: typing a whole name then Return
    applies the edit. With a row chosen (arrow keys), Return takes that completion, as usual."""

    def __init__(self, edit: QLineEdit, popup: QAbstractItemView) -> None:
        super().__init__(edit)
        self.edit, self.popup = edit, popup

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if (obj is self.popup and event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent)
                and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not self.popup.currentIndex().isValid()):
            self.popup.hide()
            QApplication.sendEvent(self.edit, QKeyEvent(QEvent.Type.KeyPress, event.key(), event.modifiers()))
            return True
        return super().eventFilter(obj, event)


class FormDialog(QDialog):
    """Fields in a form; OK calls ``on_accept(dialog)``, which applies the edit.

    An :class:`~onnxviz.model.errors.OnnxvizError` from ``on_accept`` is shown
    under the form and the dialog stays open, so the user can correct the entry.
    """

    def __init__(self, parent: QWidget | None, title: str, intro: str,
                 on_accept: Callable[[FormDialog], None], ok_text: str = "OK") -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setMinimumWidth(440)
        self._on_accept = on_accept
        self.fields: dict[str, QWidget] = {}
        layout = QVBoxLayout(self)
        if intro:  # names in it are quoted cut, escaped (quoted_name); long runs get places to wrap
            label = QLabel(breakable(intro))
            label.setTextFormat(Qt.TextFormat.PlainText)
            label.setWordWrap(True)
            layout.addWidget(label)
        self.form = QFormLayout()
        self.form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.ExpandingFieldsGrow)
        layout.addLayout(self.form)
        self.error = ErrorLabel(self)
        layout.addWidget(self.error)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText(ok_text)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        for keys in ("Ctrl+Return", "Ctrl+Enter"):  # also from a field of several lines, where Return is a newline
            QShortcut(QKeySequence(keys), self, self.accept)

    # -- fields --------------------------------------------------------------------
    def add_line(self, key: str, label: str, text: str = "", completions: Sequence[str] = (),
                 placeholder: str = "", name: bool = False, separated: bool = False,
                 popup_above: bool = False) -> QLineEdit:
        """A field holding ``text`` as written, however long; ``name``: it is a name from the file, marked
        when it holds characters a field does not show (:func:`~onnxviz.ui.widgets.names.name_field`);
        ``separated`` and ``popup_above``: how its completion works (:func:`complete`)."""
        edit = name_field(text) if name else whole_field(QLineEdit(text))
        edit.setPlaceholderText(placeholder)
        complete(edit, completions, separated, popup_above)
        edit.selectAll()
        return self._add(key, label, edit)

    def add_text(self, key: str, label: str, text: str = "", placeholder: str = "") -> QPlainTextEdit:
        """A field of several lines (a description in Markdown); Enter starts a new line, Tab leaves it."""
        edit = QPlainTextEdit(text)
        edit.setPlaceholderText(placeholder)
        edit.setTabChangesFocus(True)
        lines = edit.fontMetrics().lineSpacing()
        edit.setMinimumHeight(4 * lines)
        edit.setFixedHeight(min(max(text.count("\n") + 2, 6), 14) * lines + 12)
        edit.selectAll()
        return self._add(key, label, edit)

    def add_combo(self, key: str, label: str, items: Sequence[str], current: str = "",
                  editable: bool = False, tips: Sequence[str] = ()) -> QComboBox:
        """``items`` as shown (names in them escaped and cut); ``tips``: a tooltip for each, shown as written."""
        combo = QComboBox()
        combo.setEditable(editable)
        # as wide as the form gives it, not as its longest item (an item naming a long name is elided)
        combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        combo.setMinimumContentsLength(20)
        combo.addItems(list(items))
        for k, tip in enumerate(tips):
            combo.setItemData(k, plain_tooltip(tip), Qt.ItemDataRole.ToolTipRole)  # a name is never markup
        if current:
            combo.setCurrentText(current)
        return self._add(key, label, combo)

    def add_widget(self, key: str, label: str, widget: W) -> W:
        """A field of the form's own making (a value or numbers, a choice)."""
        return self._add(key, label, widget)

    def _add(self, key: str, label: str, widget: W) -> W:
        self.form.addRow(label, widget)
        if not self.fields:
            widget.setFocus()  # typing goes to the first field, not to the buttons made before it
        self.fields[key] = widget
        return widget

    def text(self, key: str) -> str:
        w = self.fields[key]
        w = getattr(w, "edit", w)  # a field of its own making around a line (a value or numbers)
        if isinstance(w, QLineEdit):
            return w.text()
        if isinstance(w, QPlainTextEdit):
            return w.toPlainText()
        if isinstance(w, QComboBox):
            return w.currentText()
        raise KeyError(key)

    def checked(self, key: str) -> bool:
        w = self.fields[key]
        return isinstance(w, QCheckBox) and w.isChecked()

    # -- applying --------------------------------------------------------------------
    def accept(self) -> None:
        try:
            self._on_accept(self)
        except OnnxvizError as exc:
            self.error.show_message(exc.message)
            return
        super().accept()
