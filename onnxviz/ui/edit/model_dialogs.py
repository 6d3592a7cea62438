"""Dialogs for the model as a whole: its properties and metadata, and the graph's inputs and outputs."""

from __future__ import annotations

import onnx
import shiboken6
from onnx import TensorProto
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from onnxviz.model.document import Change, Document
from onnxviz.model.editing.values import parse_shape, shape_text_of
from onnxviz.model.errors import EditError, OnnxvizError
from onnxviz.model.graph.opschema import opset_version
from onnxviz.model.text import dtype_text, quoted_name, shape_list
from onnxviz.ui.widgets.forms import ErrorLabel
from onnxviz.ui.widgets.names import NameDelegate, hidden_tooltip, name_field, whole_field

DTYPES = ["float32", "float16", "bfloat16", "float64", "int8", "uint8", "int16", "uint16", "int32", "uint32",
          "int64", "uint64", "bool", "string", "complex64", "complex128", "float8e4m3fn", "float8e5m2",
          "int4", "uint4"]

NAME_CELL_CHARS = 300  # of a metadata key or value in its cell


def _text(item: QTableWidgetItem | None) -> str:
    return item.text() if item is not None else ""


def _dtype_key(name: str) -> str:
    return {"float32": "FLOAT", "float64": "DOUBLE", "float16": "FLOAT16"}.get(name, name.upper())


class ModelPropertiesDialog(QDialog):
    """Producer, domain, version, description, metadata and opset; OK applies what changed."""

    def __init__(self, doc: Document, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.doc = doc
        m = doc.model
        self.setWindowTitle("Model Properties")
        self.resize(620, 600)
        self.fields = {key: whole_field(QLineEdit(str(getattr(m, key)))) for key in
                       ("producer_name", "producer_version", "domain", "model_version")}
        self.description = QPlainTextEdit(m.doc_string)
        self.description.setMinimumHeight(70)
        self.opset = QSpinBox()
        self.opset.setRange(1, onnx.defs.onnx_opset_version())
        self.opset.setValue(opset_version(m, "") or onnx.defs.onnx_opset_version())
        self.opset.setToolTip("Converting uses onnx.version_converter; it is one step in the edit history")
        form = QFormLayout()
        for key, label in (("producer_name", "Producer:"), ("producer_version", "Producer version:"),
                           ("domain", "Domain:"), ("model_version", "Model version:")):
            form.addRow(label, self.fields[key])
        form.addRow("Description:", self.description)
        form.addRow("Opset (ai.onnx):", self.opset)
        self.metadata = QTableWidget(0, 2)
        self.metadata.setHorizontalHeaderLabels(["Key", "Value"])
        self.metadata.verticalHeader().hide()
        self.metadata.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.metadata.setItemDelegate(NameDelegate(self.metadata, NAME_CELL_CHARS))  # shown escaped, edited whole
        for entry in m.metadata_props:
            self._add_metadata_row(entry.key, entry.value)
        add = QPushButton("Add Entry")
        add.clicked.connect(lambda: self._add_metadata_row("", "", edit=True))
        remove = QPushButton("Remove Entry")
        remove.clicked.connect(lambda: self.metadata.removeRow(self.metadata.currentRow()))
        box = QGroupBox("Metadata")
        box_layout = QVBoxLayout(box)
        box_layout.addWidget(self.metadata)
        row = QHBoxLayout()
        row.addWidget(add)
        row.addWidget(remove)
        row.addStretch(1)
        box_layout.addLayout(row)
        self.error = ErrorLabel(self)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(box, 1)
        layout.addWidget(self.error)
        layout.addWidget(buttons)

    def _add_metadata_row(self, key: str, value: str, edit: bool = False) -> None:
        r = self.metadata.rowCount()
        self.metadata.insertRow(r)
        for column, text in enumerate((key, value)):
            item = QTableWidgetItem(text)
            item.setToolTip(hidden_tooltip(text, NAME_CELL_CHARS))
            self.metadata.setItem(r, column, item)
        if edit:
            self.metadata.setCurrentCell(r, 0)
            self.metadata.editItem(self.metadata.item(r, 0))  # type: ignore[arg-type]

    def metadata_entries(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for r in range(self.metadata.rowCount()):
            key = _text(self.metadata.item(r, 0)).strip()
            value = _text(self.metadata.item(r, 1))
            if key in out:
                raise EditError(f"metadata key '{quoted_name(key)}' appears twice.")
            if key:
                out[key] = value
        return out

    def accept(self) -> None:
        try:
            self._apply()
        except OnnxvizError as exc:
            self.error.show_message(exc.message)
            return
        super().accept()

    def _apply(self) -> None:
        doc, m = self.doc, self.doc.model
        wanted = self.metadata_entries()
        changed: dict[str, str | int] = {k: e.text() for k, e in self.fields.items() if e.text() != str(getattr(m, k))}
        if self.description.toPlainText() != m.doc_string:
            changed["doc_string"] = self.description.toPlainText()
        if changed:
            doc.edit.set_model_info(**changed)
        old = {e.key: e.value for e in m.metadata_props}
        for key in old.keys() - wanted.keys():
            doc.edit.remove_metadata(key)
        for key, value in wanted.items():
            if old.get(key) != value:
                doc.edit.set_metadata(key, value)
        if self.opset.value() != (opset_version(m, "") or self.opset.value()):
            doc.edit.convert_opset(self.opset.value())


class GraphIODialog(QDialog):
    """The main graph's inputs and outputs: rename, change dtype and shape, add and remove; each at once."""

    def __init__(self, doc: Document, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.doc = doc
        self._refreshing = False
        self.setWindowTitle("Graph Inputs and Outputs")
        self.resize(700, 420)
        intro = QLabel("Edit a name, type or shape and press Enter; each change is one step in the edit "
                       "history. Shapes: <tt>1, 3, 224, 224</tt>, names such as <tt>batch</tt> for dynamic "
                       "sizes, <tt>?</tt> for unknown.")
        intro.setWordWrap(True)
        self.table = QTableWidget(0, 4)
        self.table.setHorizontalHeaderLabels(["Kind", "Name", "Element type", "Shape"])
        self.table.verticalHeader().hide()
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        self.new_name = QLineEdit()
        self.new_name.setPlaceholderText("new input name")
        self.new_name.returnPressed.connect(self.add_input)
        add = QPushButton("Add Input")
        add.clicked.connect(self.add_input)
        remove = QPushButton("Remove")
        remove.clicked.connect(self.remove_selected)
        row = QHBoxLayout()
        row.addWidget(self.new_name, 1)
        row.addWidget(add)
        row.addStretch(0)
        row.addWidget(remove)
        self.error = ErrorLabel(self)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        self._after_table: list[QWidget] = [self.new_name, add, remove, buttons.button(QDialogButtonBox.StandardButton.Close)]
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.table, 1)
        layout.addLayout(row)
        layout.addWidget(self.error)
        layout.addWidget(buttons)
        for button in self.findChildren(QPushButton):
            button.setAutoDefault(False)
        doc.changed.connect(self._on_changed)
        self.refresh()

    def refresh(self) -> None:
        self._refreshing = True
        self.table.setRowCount(0)
        g = self.doc.model.graph
        inits = {t.name for t in g.initializer}
        for kind, items in (("input", [v for v in g.input if v.name not in inits]), ("output", list(g.output))):
            for v in items:
                self._add_row(kind, v)
        self._refreshing = False
        self._order_tabs()

    def _order_tabs(self) -> None:
        """Tab goes through the rows' fields in reading order, then the add row and Close (the rows'
        fields, made after the buttons, came last)."""
        cells = [self.cell(r, c) for r in range(self.table.rowCount()) for c in (1, 2, 3)]
        chain = [w for w in cells if w is not None] + self._after_table
        for before, after in zip(chain, chain[1:], strict=False):
            QWidget.setTabOrder(before, after)

    def _add_row(self, kind: str, v: onnx.ValueInfoProto) -> None:
        r = self.table.rowCount()
        self.table.insertRow(r)
        self.table.setItem(r, 0, QTableWidgetItem(kind))
        name = name_field(v.name)  # as written, to be edited; a mark and its tooltip show what it hides
        name.setFrame(False)
        name.editingFinished.connect(lambda old=v.name, e=name: self._apply(
            lambda: self.doc.edit.rename_value(old, e.text().strip())))
        self.table.setCellWidget(r, 1, name)
        dtype = QComboBox()
        current = dtype_text(v.type) if v.HasField("type") else ""
        dtype.addItems(DTYPES if current in DTYPES else [current, *DTYPES])
        dtype.setCurrentText(current)
        dtype.currentTextChanged.connect(lambda text, n=v.name: self._apply(
            lambda: self.doc.edit.set_value_type(n, dtype=_dtype_key(text))))
        self.table.setCellWidget(r, 2, dtype)
        shape = whole_field(QLineEdit(shape_text_of(shape_list(v.type) if v.HasField("type") else None)))
        shape.setFrame(False)
        shape.editingFinished.connect(lambda n=v.name, e=shape: self._apply(
            lambda: self.doc.edit.set_value_type(n, shape=parse_shape(e.text()))))
        self.table.setCellWidget(r, 3, shape)

    def cell(self, row: int, column: int) -> QWidget:
        return self.table.cellWidget(row, column)

    def _apply(self, action: object) -> None:
        if self._refreshing:
            return
        try:
            action()  # type: ignore[operator]
        except OnnxvizError as exc:
            self.error.show_message(exc.message)
            QTimer.singleShot(0, self, self.refresh)  # the refused text does not stay in its cell
            return
        self.error.show_message("")

    def add_input(self) -> None:
        name = self.new_name.text().strip()
        self._apply(lambda: self.doc.edit.add_input(name, TensorProto.FLOAT, ["batch"]))
        if not self.error.isVisible():
            self.new_name.clear()

    def remove_selected(self) -> None:
        r = self.table.currentRow()
        if r < 0:
            self.error.show_message("select an input or output to remove.")
            return
        kind = _text(self.table.item(r, 0))
        name = self.cell(r, 1).text()  # type: ignore[attr-defined]
        self._apply(lambda: (self.doc.edit.remove_input if kind == "input" else self.doc.edit.remove_output)(name))

    def _on_changed(self, change: Change) -> None:
        if change.kind.changes_model:
            if shiboken6.isValid(self):
                QTimer.singleShot(0, self, self.refresh)  # dropped if this widget is gone by then
