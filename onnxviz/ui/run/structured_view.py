"""A sequence or map value (a ZipMap's list of {label: probability}, a sequence of tensors) as a tree."""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem, QWidget

from onnxviz.model.text import display_name

MAX_CHILDREN = 1000  # rows under one item; the rest is counted in a last row
TEXT_CHARS = 200  # a tensor in a sequence is shown as its values' text, cut here


class StructuredView(QTreeWidget):
    """Items of a sequence as [0], [1], ...; entries of a map by key; tensors as their values' text."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setColumnCount(2)
        self.setHeaderLabels(["Item", "Value"])
        self.setUniformRowHeights(True)
        self.setAlternatingRowColors(True)

    def show_value(self, value: Any) -> None:
        self.clear()
        _add_children(self.invisibleRootItem(), value)
        if self.topLevelItemCount() <= 50:  # a ZipMap of a small batch: every probability in sight
            self.expandToDepth(0)
        self.resizeColumnToContents(0)


def _add_children(parent: QTreeWidgetItem, value: Any) -> None:
    pairs = value.items() if isinstance(value, dict) else ((f"[{k}]", v) for k, v in enumerate(value)) \
        if isinstance(value, list) and not _is_leaf(value) else [("", value)]
    for k, (key, item) in enumerate(pairs):
        if k == MAX_CHILDREN:
            total = len(value) if isinstance(value, (dict, list)) else 0
            parent.addChild(QTreeWidgetItem([f"\u2026 {total - MAX_CHILDREN:,} more", ""]))
            break
        child = QTreeWidgetItem([display_name(str(key), 80), _summary(item)])
        parent.addChild(child)
        if not _is_leaf(item):
            _add_children(child, item)


def _is_leaf(value: Any) -> bool:
    """A number, a string, or a flat list (a 1-D tensor's values); maps and nested lists have children."""
    return not isinstance(value, dict) and not (isinstance(value, list) and any(isinstance(v, (list, dict))
                                                                                for v in value))


def _summary(value: Any) -> str:
    if isinstance(value, dict):
        return f"map of {len(value)} entries"
    if isinstance(value, list) and not _is_leaf(value):
        return f"sequence of {len(value)}"
    if isinstance(value, float):
        return f"{value:.6g}"
    text = value if isinstance(value, str) else json.dumps(value)
    return display_name(text, TEXT_CHARS)
