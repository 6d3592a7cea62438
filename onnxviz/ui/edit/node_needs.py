"""What a new node needs to be valid when it appears: its required attributes and its other inputs,
asked for in the Insert dialog (Cast's ``to`` as a list of element types; an input as a value of the graph or as
numbers, typed or from a .npy file, that become an initializer or a Constant in the same undo step)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from onnx import AttributeProto
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QToolButton,
    QWidget,
)

from onnxviz.model.editing.literals import LiteralKind
from onnxviz.model.editing.palette import AttributeInfo, PaletteEntry, Param
from onnxviz.model.editing.values import parse_attribute_text, parse_dtype, parse_numbers, parse_tensor_text
from onnxviz.model.errors import EditError
from onnxviz.model.text import quoted_name
from onnxviz.ui.edit.attributes import load_npy
from onnxviz.ui.widgets.forms import complete
from onnxviz.ui.widgets.names import plain_tooltip, short_name, whole_field

A = AttributeProto
DEFAULT_CHOICE = "float32"


LITERAL_KINDS: dict[str, LiteralKind] = {"a new initializer": "initializer", "a Constant node": "constant"}
NUMBERS_HINT = "a value, or numbers such as 2.0 or [1, 2, 3]"


class InputField(QWidget):
    """What an input reads: a value of the graph (completed as typed), or numbers, typed (``2.0``,
    ``[1, 2, 3]``) or loaded from a .npy file, that become a new value in the same edit."""

    def __init__(self, values: list[str], placeholder: str = NUMBERS_HINT, tip: str = "", names: bool = True,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.values = set(values)
        self.names = names  # False: numbers only (a new constant's value)
        self.array: np.ndarray | None = None
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        self.edit = whole_field(QLineEdit())
        self.edit.setPlaceholderText(placeholder)
        self.edit.setToolTip(plain_tooltip(tip))
        self.edit.textEdited.connect(self._typed)
        if names:
            complete(self.edit, values)
        self.button = QToolButton()
        self.button.setText("Load .npy...")
        self.button.setToolTip("Numbers from a NumPy file, of any size")
        self.button.setAutoRaise(False)
        self.button.clicked.connect(self._choose)
        row.addWidget(self.edit, 1)
        row.addWidget(self.button)
        self.setFocusProxy(self.edit)

    def _typed(self, _text: str) -> None:
        self.array = None  # typed over: the file's numbers are no longer what it holds

    def _choose(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Load Numbers From", "", "NumPy arrays (*.npy)")
        if path:
            self.load(Path(path))

    def load(self, path: Path) -> None:
        """Take the numbers of a .npy file (EditError if it cannot be read)."""
        array = load_npy(path)
        if array.dtype.kind not in "biuf":
            raise EditError(f"{path.name} holds {array.dtype} values, not numbers.")
        self.array = array
        self.edit.setText(f"{path.name}: {array.dtype}{list(array.shape)}")

    def value(self, required: bool = False, what: str = "this input") -> str | np.ndarray:
        """The value name typed, or the numbers given ('' when empty and not ``required``); EditError with one
        sentence for anything else."""
        if self.array is not None:
            return self.array
        text = self.edit.text().strip()
        if not text:
            if required:
                raise EditError(f"name a value for {what}, or give numbers.")
            return ""
        if self.names and text in self.values:
            return text
        try:
            return parse_numbers(text)
        except EditError:
            if not self.names:
                raise
            raise EditError(f"'{quoted_name(text)}' is neither a value of this graph nor numbers such as 2.0 or "
                            "[1, 2, 3].") from None


def literal_kind_box() -> QComboBox:
    """The choice of what numbers given for an input become."""
    box = QComboBox()
    box.addItems(list(LITERAL_KINDS))
    box.setToolTip("Numbers given for an input become a named initializer, or a Constant node just before the "
                   "node that reads them; either way in the same undo step")
    return box


class NodeNeeds(QGroupBox):
    """A field for each required attribute and each input after the first (which the place gives);
    hidden for an operator that needs nothing more."""

    def __init__(self, values: list[str], parent: QWidget | None = None) -> None:
        super().__init__("The new node needs", parent)
        self.values = values
        self.form = QFormLayout(self)
        self.form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.ExpandingFieldsGrow)
        self.attribute_fields: dict[str, tuple[AttributeInfo, QWidget]] = {}
        self.input_fields: list[tuple[Param, InputField]] = []
        self.literals = literal_kind_box()
        self.hide()

    def show_entry(self, entry: PaletteEntry) -> None:
        """Fields for ``entry``'s required attributes and its inputs after the first."""
        while self.form.rowCount():
            self.form.removeRow(0)
        self.attribute_fields.clear()
        self.input_fields.clear()
        for attr in entry.attributes:
            if attr.required:
                widget = self._attribute_widget(attr)
                widget.setToolTip(plain_tooltip(attr.description))
                kind = "element type" if attr.choices and attr.type_code == A.INT else attr.type_name
                self.form.addRow(f"{short_name(attr.name, 30)} ({kind}):", widget)
                self.attribute_fields[attr.name] = (attr, widget)
        params = list(entry.inputs)
        if params and params[0].variadic:  # Concat, Sum: more of the first kind
            params[0] = Param(params[0].name, params[0].type_str, True, True, params[0].description)
            self._add_input("More inputs:", params[0])
        for k, param in enumerate(params[1:], start=1):
            self._add_input(f"Input {k} ({short_name(param.name, 30)}):", param)
        if self.input_fields:
            self.literals = literal_kind_box()  # the form's rows own their widgets: a new one per operator
            self.form.addRow("Numbers become:", self.literals)
        self.setVisible(self.form.rowCount() > 0)

    def _attribute_widget(self, attr: AttributeInfo) -> QWidget:
        if attr.choices:
            combo = QComboBox()
            combo.addItems(list(attr.choices))
            combo.setCurrentText(DEFAULT_CHOICE if DEFAULT_CHOICE in attr.choices else attr.choices[0])
            return combo
        if attr.type_code in (A.GRAPH, A.GRAPHS):
            return QLabel("a graph: cannot be typed here; the node shows a problem until it has one")
        edit = whole_field(QLineEdit())
        edit.setPlaceholderText("numbers, e.g. [1, 2, 3]" if attr.type_code == A.TENSOR
                                else f"{attr.type_name} (required)")
        return edit

    def _add_input(self, label: str, param: Param) -> None:
        hint = ("values separated by commas, or numbers" if param.variadic
                else f"optional: {NUMBERS_HINT}" if param.optional else NUMBERS_HINT)
        field = InputField(self.values, hint, param.description)
        self.form.addRow(label, field)
        self.input_fields.append((param, field))

    def literal_kind(self) -> LiteralKind:
        return LITERAL_KINDS.get(self.literals.currentText(), "initializer")

    # -- reading -----------------------------------------------------------------------
    def attributes(self) -> dict[str, Any]:
        """The typed values of the required attributes; EditError naming the first one missing or wrong."""
        out: dict[str, Any] = {}
        for name, (attr, widget) in self.attribute_fields.items():
            if isinstance(widget, QComboBox):
                out[name] = parse_dtype(widget.currentText()) if attr.type_code == A.INT else widget.currentText()
            elif isinstance(widget, QLineEdit):
                text = widget.text()
                if not text.strip():
                    raise EditError(f"give a value for the required attribute '{quoted_name(name)}'.")
                out[name] = (parse_tensor_text(text) if attr.type_code == A.TENSOR
                             else parse_attribute_text(text, attr.type_code))
        return out

    def inputs(self) -> list[str | np.ndarray]:
        """The inputs after the first: value names, or numbers that become new values; EditError naming the
        first required one left empty or holding neither."""
        out: list[str | np.ndarray] = []
        for param, field in self.input_fields:
            text = field.edit.text().strip()
            names = [x.strip() for x in text.split(",") if x.strip()]
            if param.variadic and field.array is None and names and all(x in self.values for x in names):
                out += names
            else:
                value = field.value(not param.optional and not param.variadic, f"the input '{quoted_name(param.name)}'")
                if isinstance(value, np.ndarray) or value or not param.variadic:
                    out.append(value)
        while out and isinstance(out[-1], str) and not out[-1]:
            out.pop()  # optional inputs left out at the end are not written
        return out
