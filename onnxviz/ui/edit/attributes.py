"""The attribute editor of one node: an editor per value that fits its type; each change is one undoable edit.

The panel engineer can embed :class:`AttributeEditor` (a plain QWidget) in the
node panel; :class:`AttributesDialog` wraps it for the Edit menu.
"""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np
import shiboken6
from onnx import AttributeProto
from PySide6.QtCore import QRegularExpression, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QRegularExpressionValidator
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from onnxviz.model.document import Change, Document
from onnxviz.model.editing.editor import NodeRef
from onnxviz.model.editing.palette import attribute_choices, element_type_name
from onnxviz.model.editing.values import (
    array_edit_text,
    attribute_text,
    attribute_type_name,
    parse_attribute_text,
    parse_dtype,
    parse_tensor_text,
    small_array,
)
from onnxviz.model.errors import EditError, OnnxvizError
from onnxviz.model.graph.opschema import attribute_type_code
from onnxviz.model.text import display_name
from onnxviz.ui.widgets.forms import ERROR_COLOURS, ErrorLabel
from onnxviz.ui.widgets.markdown import MarkdownBlock
from onnxviz.ui.widgets.names import (
    RichLabel,
    breakable,
    hidden_tooltip,
    plain_tooltip,
    short_name,
    whole_field,
)

A = AttributeProto
_NUMBER = r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?|[-+]?inf|nan"
_PATTERNS = {
    A.INT: r"\s*-?\d+\s*",
    A.FLOAT: rf"\s*({_NUMBER})\s*",
    A.INTS: r"\s*\[?\s*(-?\d+\s*(,\s*-?\d+\s*)*)?,?\s*\]?\s*",
    A.FLOATS: rf"\s*\[?\s*(({_NUMBER})\s*(,\s*({_NUMBER})\s*)*)?,?\s*\]?\s*",
}
TEXT_TYPES = (A.INT, A.FLOAT, A.STRING, A.INTS, A.FLOATS, A.STRINGS)
HEADER_CHARS = 120  # of the node's name in the header (elided in the middle; the tooltip has it whole)


def node_ref(doc: Document, scope: str, i: int) -> NodeRef:
    """A reference that keeps naming the node while other nodes come and go."""
    return doc.node_ids[i] if scope == "" else (scope, i)


class AttributeEditor(QWidget):
    """Table of a node's attributes plus add/remove; edits apply at once (Ctrl+Z undoes them)."""

    edited = Signal(str)  # the label of the edit just made

    def __init__(self, doc: Document, scope: str, node: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.doc = doc
        self.ref = node_ref(doc, scope, node)
        self._refreshing = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.header = RichLabel()  # "Copy Name" copies the node's name as written
        self.header.setWordWrap(True)
        layout.addWidget(self.header)
        self.summary = MarkdownBlock("", max_height=90)  # the operator's first paragraph, links clickable
        layout.addWidget(self.summary)
        self.table = QTableWidget(0, 3)
        self.table.setHorizontalHeaderLabels(["Attribute", "Type", "Value"])
        self.table.verticalHeader().hide()
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.table.itemSelectionChanged.connect(self._update_remove)
        layout.addWidget(self.table, 1)
        self.empty = QLabel()  # instead of an empty table: why there is nothing to show
        self.empty.setTextFormat(Qt.TextFormat.PlainText)  # it names the operator, the file's text
        self.empty.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.empty.setStyleSheet("color: gray; padding: 6px 2px;")
        self.empty.hide()
        layout.addWidget(self.empty, 1)
        layout.addLayout(self._build_add_row())
        self.error = ErrorLabel(self)
        layout.addWidget(self.error)
        self.value_edits: dict[str, QLineEdit] = {}
        self.value_choices: dict[str, QComboBox] = {}  # string attributes that name one of a few values
        doc.changed.connect(self._on_changed)
        self.refresh()

    def _build_add_row(self) -> QHBoxLayout:
        row = QHBoxLayout()
        self.add_combo = QComboBox()
        self.add_combo.setMinimumContentsLength(14)
        self.add_combo.currentTextChanged.connect(self._show_default)
        self.add_value = QLineEdit()
        self.add_value.setPlaceholderText("value (empty: the default)")
        self.add_value.returnPressed.connect(self.add_attribute)  # Enter adds, as the Add button does
        self.add_choice = QComboBox()  # instead of add_value for a value chosen among a few (a type, a mode)
        self.add_choice.setMinimumContentsLength(12)
        self.add_choice.hide()
        self.add_button = QPushButton("Add")
        self.add_button.clicked.connect(self.add_attribute)
        self.remove_button = QPushButton("Remove")
        self.remove_button.clicked.connect(self.remove_selected)
        for w in (QLabel("New:"), self.add_combo, self.add_value, self.add_choice, self.add_button):
            row.addWidget(w)
        row.addStretch(0)
        row.addWidget(self.remove_button)
        row.setStretch(2, 1)
        row.setStretch(3, 1)
        return row

    # -- showing -------------------------------------------------------------------
    def _located(self) -> tuple[str, int] | None:
        try:
            return self.doc.edit.locate(self.ref)
        except EditError:
            return None

    def refresh(self) -> None:
        self._refreshing = True
        try:
            self._fill()
        finally:
            self._refreshing = False

    def _fill(self) -> None:
        where = self._located()
        self.table.setRowCount(0)
        self.value_edits.clear()
        self.value_choices.clear()
        self.add_combo.clear()
        if where is None:
            self.header.setText("This node no longer exists.")
            self.setEnabled(False)
            return
        self.setEnabled(True)
        scope, i = where
        node = self.doc.edit.node_proto(scope, i)
        schema = self.doc.edit.schema_of(scope, i)
        self._show_header(self.doc.edit.node_label(scope, i), node.name, node.op_type, node.domain)
        self.summary.set_markdown(schema.doc.strip().split("\n\n")[0] if schema is not None and schema.doc else "")
        specs = schema.attributes if schema is not None else {}
        for attr in node.attribute:
            spec = specs.get(attr.name)
            choices = attribute_choices(schema, attr.name) if schema is not None else ()
            self._add_row(attr, spec.description if spec is not None else "", choices)
        present = {a.name for a in node.attribute}
        if schema is not None:
            self.add_combo.addItems(sorted(n for n in schema.attributes if n not in present))
        self.add_combo.setEditable(schema is None)
        self.add_button.setEnabled(schema is None or self.add_combo.count() > 0)
        self._show_empty(node.op_type, schema is not None and not schema.attributes)
        self._update_remove()

    def _show_header(self, label: str, name: str, op_type: str, domain: str) -> None:
        """The node's name escaped and elided in the middle (it wraps within the dialog), its operator."""
        operator = short_name(op_type) + (f" ({short_name(domain)})" if domain else "")
        self.header.setText(f"<b>{html.escape(breakable(short_name(label, HEADER_CHARS)))}</b> &nbsp; "
                            f"{html.escape(operator)}")
        self.header.copy_name = name
        self.header.setToolTip(hidden_tooltip(label, HEADER_CHARS))

    def _show_empty(self, op_type: str, has_none: bool) -> None:
        """Say why the table is empty: the operator has no attributes, or the node sets none."""
        empty = self.table.rowCount() == 0
        self.table.setVisible(not empty)
        self.empty.setVisible(empty)
        if has_none:
            self.empty.setText(f"{short_name(op_type)} has no attributes.")
        else:
            self.empty.setText("No attributes set: the defaults apply. Add one below.")

    def _selected_row(self) -> int:
        rows = self.table.selectionModel().selectedRows()
        return rows[0].row() if rows else -1

    def _update_remove(self) -> None:
        self.remove_button.setEnabled(self._selected_row() >= 0)

    def _add_row(self, attr: AttributeProto, description: str, choices: tuple[str, ...] = ()) -> None:
        r = self.table.rowCount()
        self.table.insertRow(r)
        name_item = QTableWidgetItem(display_name(attr.name, 60))  # a key: escaped, cut like the panels' keys
        name_item.setData(Qt.ItemDataRole.UserRole, attr.name)
        name_item.setToolTip(plain_tooltip(description))
        self.table.setItem(r, 0, name_item)
        self.table.setItem(r, 1, QTableWidgetItem(attribute_type_name(attr.type)))
        if attr.type in (A.STRING, A.INT) and choices:
            self.table.setCellWidget(r, 2, self._choice_cell(attr, choices, description))
        elif attr.type in TEXT_TYPES:
            edit = whole_field(QLineEdit(attribute_text(attr)))
            edit.setFrame(False)
            if attr.type in _PATTERNS:
                edit.setValidator(QRegularExpressionValidator(QRegularExpression(_PATTERNS[attr.type]), edit))
            edit.setToolTip(plain_tooltip(description))
            edit.editingFinished.connect(lambda n=attr.name, t=attr.type, e=edit: self._commit(n, t, e))
            self.table.setCellWidget(r, 2, edit)
            self.value_edits[attr.name] = edit
        elif attr.type == A.TENSOR:
            self.table.setCellWidget(r, 2, self._tensor_cell(attr))
        else:
            item = QTableWidgetItem(attribute_text(attr))
            item.setForeground(Qt.GlobalColor.gray)
            self.table.setItem(r, 2, item)

    def _choice_cell(self, attr: AttributeProto, choices: tuple[str, ...], description: str) -> QComboBox:
        """The values the operator version accepts (element types by name), to pick from; a value from the
        file that it does not accept is shown first, as it is, until another is picked."""
        combo = choice_box(choices, choice_text(attr))
        combo.setFrame(False)
        combo.setToolTip(plain_tooltip(description))
        combo.activated.connect(lambda k, n=attr.name, t=attr.type, c=combo: self._commit_choice(n, t, c.itemText(k)))
        self.value_choices[attr.name] = combo
        return combo

    def _commit_choice(self, name: str, attr_type: int, text: str) -> None:
        if self._refreshing:
            return
        value = parse_dtype(text) if attr_type == A.INT else text
        self._apply(lambda: self.doc.edit.set_attribute(self.ref, name, value))

    def _tensor_cell(self, attr: AttributeProto) -> QWidget:
        """A small numeric tensor as editable text (``[1, 2, 3]``, kept at its dtype); any as a .npy file."""
        cell = QWidget()
        row = QHBoxLayout(cell)
        row.setContentsMargins(4, 0, 2, 0)
        array = small_array(attr.t)
        if array is not None:
            edit = whole_field(QLineEdit(array_edit_text(array).replace("\n", "")))
            edit.setFrame(False)
            edit.setToolTip(plain_tooltip(f"{attribute_text(attr)}: type numbers, e.g. [1, 2, 3]"))
            edit.editingFinished.connect(lambda n=attr.name, d=array.dtype, e=edit: self._commit_tensor(n, d, e))
            self.value_edits[attr.name] = edit
            row.addWidget(edit, 1)
        else:
            row.addWidget(QLabel(attribute_text(attr)), 1)
        button = QPushButton("Load .npy...")
        button.setAutoDefault(False)
        button.clicked.connect(lambda _=False, n=attr.name: self._choose_npy(n))
        row.addWidget(button)
        return cell

    def _show_default(self, name: str) -> None:
        where = self._located()
        schema = self.doc.edit.schema_of(*where) if where else None
        spec = schema.attributes.get(name) if schema is not None else None
        choices = attribute_choices(schema, name) if schema is not None and spec is not None else ()
        self.add_choice.setVisible(bool(choices))
        self.add_value.setVisible(not choices)
        if choices:  # picked, never typed: the default first
            self.add_choice.clear()
            self.add_choice.addItems(list(choices))
            if spec is not None and spec.default_value.type:
                self.add_choice.setCurrentText(choice_text(spec.default_value))
            return
        if spec is not None and spec.default_value.type:
            self.add_value.setPlaceholderText(f"default: {attribute_text(spec.default_value)}")
        else:
            kind = attribute_type_name(attribute_type_code(spec)) if spec is not None else "value"
            self.add_value.setPlaceholderText(f"{kind} (required)" if spec is not None else "value")

    # -- editing -------------------------------------------------------------------
    def _apply(self, label_action: object) -> bool:
        try:
            label_action()  # type: ignore[operator]
        except OnnxvizError as exc:
            self.error.show_message(exc.message)
            return False
        self.error.show_message("")
        self.edited.emit(self.doc.undo_stack.undo_label())
        return True

    def _commit(self, name: str, attr_type: int, edit: QLineEdit) -> None:
        if self._refreshing:
            return
        text = edit.text()

        def do() -> None:
            self.doc.edit.set_attribute(self.ref, name, parse_attribute_text(text, attr_type))

        if not self._apply(do):
            edit.setFocus()

    def _commit_tensor(self, name: str, dtype: np.dtype, edit: QLineEdit) -> None:
        if self._refreshing:
            return
        text = edit.text()
        if not self._apply(lambda: self.doc.edit.set_attribute(self.ref, name, parse_tensor_text(text, dtype))):
            edit.setFocus()

    def set_value_text(self, name: str, text: str) -> None:
        """Type ``text`` into the value of ``name`` and commit it (as pressing Enter does); for a value chosen
        from a list, pick the item ``text`` names (as a user does)."""
        combo = self.value_choices.get(name)
        if combo is not None:
            k = combo.findText(text, Qt.MatchFlag.MatchFixedString)
            if k < 0:
                raise KeyError(text)
            combo.setCurrentIndex(k)
            combo.activated.emit(k)
            return
        edit = self.value_edits[name]
        edit.setText(text)
        edit.editingFinished.emit()

    def add_attribute(self) -> None:
        name = self.add_combo.currentText().strip()
        text = self.add_value.text()
        if not name:
            return
        chosen = self.add_choice.currentText() if self.add_choice.isVisibleTo(self) else ""

        def do() -> None:
            if chosen:
                attr_type = self.doc.edit.attribute_type(self.ref, name)
                self.doc.edit.add_attribute(self.ref, name, parse_dtype(chosen) if attr_type == A.INT else chosen)
                return
            attr_type = self.doc.edit.attribute_type(self.ref, name) if text else None
            value = parse_attribute_text(text, attr_type) if text and attr_type else (text or None)
            self.doc.edit.add_attribute(self.ref, name, value)

        if self._apply(do):
            self.add_value.clear()

    def remove_selected(self) -> None:
        row = self._selected_row()
        if row < 0:
            self.error.show_message("select an attribute to remove.")
            return
        item = self.table.item(row, 0)
        name = item.data(Qt.ItemDataRole.UserRole) if item is not None else ""
        self._apply(lambda: self.doc.edit.remove_attribute(self.ref, name))

    def _choose_npy(self, name: str) -> None:
        path, _ = QFileDialog.getOpenFileName(self, f"Load {short_name(name)} from", "", "NumPy arrays (*.npy)")
        if path:
            self.load_tensor(name, Path(path))

    def load_tensor(self, name: str, path: Path) -> None:
        def do() -> None:
            self.doc.edit.set_attribute(self.ref, name, load_npy(path))

        self._apply(do)

    def _on_changed(self, change: Change) -> None:
        if change.kind.changes_model:
            # later: the change may come from a signal of one of the editors rebuilt here
            if shiboken6.isValid(self):
                QTimer.singleShot(0, self, self.refresh)  # dropped if this widget is gone by then


def choice_text(attr: AttributeProto) -> str:
    """An attribute's value as its list of choices names it: an element type by name, a word as written."""
    if attr.type == A.INT:
        return element_type_name(attr.i)
    return attr.s.decode("utf-8", "replace")


def choice_box(choices: tuple[str, ...], current: str = "") -> QComboBox:
    """A list of ``choices`` to pick one from (never typed into); a ``current`` value not among them is shown
    first, as it is, marked as not accepted."""
    combo = QComboBox()
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    combo.setMinimumContentsLength(12)
    if current and current not in choices:
        combo.addItem(current)
        combo.setItemData(0, "not a value this operator version accepts: pick another", Qt.ItemDataRole.ToolTipRole)
        combo.setItemData(0, QColor(ERROR_COLOURS[0]), Qt.ItemDataRole.ForegroundRole)
    combo.addItems(list(choices))
    if current:
        combo.setCurrentText(current)
    return combo


def load_npy(path: Path) -> np.ndarray:
    """Read a .npy file (no pickles); EditError with one sentence if it cannot be read."""
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise EditError(f"{path.name} is not a readable .npy array: {exc}.") from exc


class AttributesDialog(QDialog):
    """The attribute editor in a window of its own."""

    def __init__(self, doc: Document, scope: str, node: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Attributes - {short_name(doc.edit.node_label(scope, node))}")
        self.resize(640, 380)
        layout = QVBoxLayout(self)
        self.editor = AttributeEditor(doc, scope, node, self)
        layout.addWidget(self.editor)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        for button in self.findChildren(QPushButton):
            button.setAutoDefault(False)  # Enter commits a value; it must not press a button
        fields = [*self.editor.value_edits.values(), *self.editor.value_choices.values()]
        if len(fields) == 1:  # one attribute: its value, selected, so typing replaces it
            fields[0].setFocus()
            if isinstance(fields[0], QLineEdit):
                fields[0].selectAll()
        else:
            self.editor.table.setFocus()  # not the operator's description above it
