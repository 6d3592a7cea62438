"""The two sides of a node pair field by field, for the Node panel's "Compared with B" section."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from onnx import NodeProto
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from onnxviz.model.graph.opdocs import attribute_text
from onnxviz.model.text import display_name

ABSENT = "\u2014"        # a field one side lacks
FIELD_CHARS = 120       # of a name or an attribute's value in a cell
CHANGED_RGBA = (230, 159, 0, 90)  # the changed rows' background: the diff's "changed" amber, light


@dataclass(frozen=True)
class Row:
    field: str
    a: str
    b: str
    changed: bool


def node_rows(a: NodeProto | None, b: NodeProto | None, changed: Collection[str] | None = None) -> list[Row]:
    """Name, op type, domain, every attribute and every input/output of both nodes (either may be absent).
    ``changed`` names the fields the matcher found changed (:func:`changed_fields`); without it a field is
    changed when its text differs (a node only one side has)."""
    fa, fb = _fields(a), _fields(b)
    keys = list(fa) + [k for k in fb if k not in fa]
    return [Row(k, fa.get(k, ABSENT), fb.get(k, ABSENT),
                fa.get(k) != fb.get(k) if changed is None else k in changed) for k in keys]


def changed_fields(details: dict[str, Any], a: NodeProto, b: NodeProto) -> set[str]:
    """The rows a ``node_changed`` difference's details point at: a value renamed on both sides, or read
    through a DequantizeLinear, is the same input; a rewired one is not."""
    names = {"name": "name", "op_type": "op type", "domain": "domain"}
    out = {names[c] for c in details.get("changes", ()) if c in names}
    out |= {f"attribute {name}" for name in details.get("attributes", ())}
    out |= {f"input {k}" for k in details.get("inputs", ())}
    if "outputs" in details.get("changes", ()):
        out |= {f"output {k}" for k in range(max(len(a.output), len(b.output)))}
    return out


def _fields(n: NodeProto | None) -> dict[str, str]:
    if n is None:
        return {}
    out = {"name": display_name(n.name, FIELD_CHARS) if n.name else "(no name)", "op type": n.op_type,
           "domain": n.domain or "ai.onnx"}
    for attr in n.attribute:
        out[f"attribute {attr.name}"] = display_name(attribute_text(attr), FIELD_CHARS)
    for k, x in enumerate(n.input):
        out[f"input {k}"] = display_name(x, FIELD_CHARS) if x else "(omitted)"
    for k, y in enumerate(n.output):
        out[f"output {k}"] = display_name(y, FIELD_CHARS) if y else "(omitted)"
    return out


class SidesTable(QTableWidget):
    """Field | A | B, the rows that differ highlighted and marked in their first column."""

    def __init__(self, rows: list[Row]) -> None:
        super().__init__(len(rows), 3)
        self.setHorizontalHeaderLabels(["Field", "A (this model)", "B"])
        self.verticalHeader().hide()
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setWordWrap(True)
        header = self.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        for col in (1, 2):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.Stretch)
        highlight = QColor(*CHANGED_RGBA)
        for r, row in enumerate(rows):
            cells = [("\u2260 " if row.changed else "") + row.field, row.a, row.b]
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                if row.changed:
                    item.setBackground(highlight)
                    if c == 0:
                        font = item.font()
                        font.setBold(True)
                        item.setFont(font)
                self.setItem(r, c, item)
        self.resizeRowsToContents()
        height = sum(self.rowHeight(r) for r in range(len(rows))) + header.sizeHint().height() + 4
        self.setFixedHeight(min(height, 420))
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)

    def changed_fields(self) -> list[str]:
        """The fields shown as changed (for tests and the status bar)."""
        firsts = [item.text() for r in range(self.rowCount()) if (item := self.item(r, 0)) is not None]
        return [text[2:] for text in firsts if text.startswith("\u2260 ")]
