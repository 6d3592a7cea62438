"""A paged table of a tensor's values that reads elements only when they are drawn."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtWidgets import QHeaderView, QTableView

from onnxviz.ui.widgets import mono_font
from onnxviz.ui.widgets.names import name_tooltip

Index = QModelIndex | QPersistentModelIndex
MAX_COLUMNS = 1024      # a wider last axis is wrapped into rows of WRAP_COLUMNS
WRAP_COLUMNS = 256
MAX_ROWS = 2**31 - 1    # Qt's row count is a 32-bit int


class TensorTableModel(QAbstractTableModel):
    """Rows are the leading indices, columns the last axis (wrapped when very wide)."""

    def __init__(self) -> None:
        super().__init__()
        self.flat: np.ndarray | None = None
        self.shape: tuple[int, ...] = ()
        self.columns = 0
        self.rows = 0

    def set_array(self, array: np.ndarray | None) -> None:
        self.beginResetModel()
        self.flat, self.shape, self.rows, self.columns = None, (), 0, 0
        if array is not None and array.size:
            self.flat = array.reshape(-1)  # a view for the contiguous arrays the loaders return
            self.shape = tuple(array.shape)
            last = self.shape[-1] if self.shape else 1
            self.columns = last if last <= MAX_COLUMNS else WRAP_COLUMNS
            self.rows = min(math.ceil(array.size / self.columns), MAX_ROWS)
        self.endResetModel()

    @property
    def wrapped(self) -> bool:
        return bool(self.shape) and self.shape[-1] > MAX_COLUMNS

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else self.rows

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else self.columns

    def flat_index(self, row: int, column: int) -> int:
        return row * self.columns + column

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role not in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole) or self.flat is None:
            if role == Qt.ItemDataRole.TextAlignmentRole:
                return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            return None
        k = self.flat_index(index.row(), index.column())
        if k >= self.flat.size:
            return None
        value = self.flat[k]
        if role == Qt.ItemDataRole.ToolTipRole:  # a string element is the file's text: shown as written, never markup
            return name_tooltip(f"{self.element_index(k)} = {value!r}")
        return format_element(value)

    def element_index(self, k: int) -> str:
        return "[" + ", ".join(str(int(i)) for i in np.unravel_index(k, self.shape)) + "]" if self.shape else "[]"

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role != Qt.ItemDataRole.DisplayRole or self.flat is None:
            return None
        if orientation == Qt.Orientation.Horizontal:
            return str(section)
        if self.wrapped or len(self.shape) <= 1:
            return f"{section * self.columns:,}" if self.wrapped else str(section)
        lead = np.unravel_index(section, self.shape[:-1])
        return "[" + ", ".join(str(int(i)) for i in lead) + "]"


def format_element(value: Any) -> str:
    if isinstance(value, (bytes, bytearray)):
        return value.decode("utf-8", "replace")
    if isinstance(value, (float, np.floating)) or getattr(value, "dtype", None) is not None and \
            value.dtype.kind == "V":
        return f"{float(value):.6g}"
    return str(value)


class TensorTable(QTableView):
    def __init__(self) -> None:
        super().__init__()
        self.values = TensorTableModel()
        self.setModel(self.values)
        self.setFont(mono_font())
        self.setWordWrap(False)
        for header in (self.horizontalHeader(), self.verticalHeader()):
            header.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)  # no per-row measuring of millions
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 4)
        self.horizontalHeader().setDefaultSectionSize(88)

    def set_array(self, array: np.ndarray | None) -> None:
        self.values.set_array(array)
