"""What a new node needs to be valid when it appears: its required attributes and its other inputs,
asked for in the Insert dialog (Cast's ``to`` as a list of element types)."""

from __future__ import annotations

from typing import Any

from onnx import AttributeProto
from PySide6.QtWidgets import QComboBox, QFormLayout, QGroupBox, QLabel, QLineEdit, QWidget

from onnxviz.model.editing.palette import AttributeInfo, PaletteEntry, Param
from onnxviz.model.editing.values import parse_attribute_text, parse_dtype, parse_tensor_text
from onnxviz.model.errors import EditError
from onnxviz.model.text import quoted_name
from onnxviz.ui.edit.forms import complete
from onnxviz.ui.widgets.names import short_name, whole_field

A = AttributeProto
DEFAULT_CHOICE = "float32"


class NodeNeeds(QGroupBox):
    """A field for each required attribute and each input after the first (which the place gives);
    hidden for an operator that needs nothing more."""

    def __init__(self, values: list[str], parent: QWidget | None = None) -> None:
        super().__init__("The new node needs", parent)
        self.values = values
        self.form = QFormLayout(self)
        self.form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.ExpandingFieldsGrow)
        self.attribute_fields: dict[str, tuple[AttributeInfo, QWidget]] = {}
        self.input_fields: list[tuple[Param, QLineEdit]] = []
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
                widget.setToolTip(attr.description)
                kind = "element type" if attr.choices and attr.type_code == A.INT else attr.type_name
                self.form.addRow(f"{short_name(attr.name, 30)} ({kind}):", widget)
                self.attribute_fields[attr.name] = (attr, widget)
        params = list(entry.inputs)
        if params and params[0].variadic:  # Concat, Sum: more of the first kind
            params[0] = Param(params[0].name, params[0].type_str, True, True, params[0].description)
            self._add_input("More inputs:", params[0])
        for k, param in enumerate(params[1:], start=1):
            self._add_input(f"Input {k} ({short_name(param.name, 30)}):", param)
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
        edit = whole_field(QLineEdit())
        edit.setPlaceholderText("values, separated by commas" if param.variadic
                                else "optional: empty leaves it out" if param.optional else "a value (required)")
        edit.setToolTip(param.description)
        complete(edit, self.values)
        self.form.addRow(label, edit)
        self.input_fields.append((param, edit))

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

    def inputs(self) -> list[str]:
        """The inputs after the first, as typed; EditError naming the first required one left empty."""
        out: list[str] = []
        for param, edit in self.input_fields:
            text = edit.text().strip()
            if param.variadic:
                out += [text] if text in self.values else [x.strip() for x in text.split(",") if x.strip()]
            elif text or param.optional:
                out.append(text)
            else:
                raise EditError(f"name a value for the input '{quoted_name(param.name)}'.")
        while out and not out[-1]:
            out.pop()  # optional inputs left out at the end are not written
        return out
