"""The offer made when a captured run would not fit in memory: capture a part instead (the selected
group's values, the values above the selected node, the graph outputs only) or everything anyway."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QButtonGroup,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from onnxviz.model.graph.summary import human_bytes
from onnxviz.model.runner.budget import CaptureTooBig, peak_need
from onnxviz.model.text import display_name


@dataclass(frozen=True)
class CapturePart:
    """One choice: ``keep`` the values captured (None: all), ``check`` whether the run checks they fit."""

    key: str
    label: str
    keep: frozenset[str] | None
    check: bool = True


class CaptureOfferDialog(QDialog):
    """One radio button per part that can be captured, with its size; Run accepts with :attr:`chosen`."""

    def __init__(self, error: CaptureTooBig, parts: list[CapturePart], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Capture a Part of the Values")
        self.parts = parts
        layout = QVBoxLayout(self)
        self.intro = intro = QLabel(f"{error.message[0].upper() + error.message[1:]}. Capture a part of the values instead "
                       "(the graph outputs are always kept; every node still runs):")
        intro.setTextFormat(Qt.TextFormat.PlainText)
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.group = QButtonGroup(self)
        self.buttons: dict[str, QRadioButton] = {}
        for k, part in enumerate(parts):
            need = peak_need(error.size.total(part.keep))
            fits = part.keep is None or need <= error.available
            size = "" if part.keep is None else f" \u2013 {human_bytes(need)}" + ("" if fits else ", does not fit either")
            button = QRadioButton(part.label + size)
            button.setEnabled(fits)
            self.group.addButton(button, k)
            self.buttons[part.key] = button
            layout.addWidget(button)
        first = next((b for b in self.buttons.values() if b.isEnabled()), None)
        if first is not None:
            first.setChecked(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.run_button = buttons.addButton("Run", QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    @property
    def chosen(self) -> CapturePart:
        return self.parts[max(0, self.group.checkedId())]


def capture_parts(group: str, group_values: frozenset[str], node: str, upstream: frozenset[str]) -> list[CapturePart]:
    """The parts to offer: the selected group's and the selected node's when there are, the outputs, all."""
    parts = []
    if group_values:
        parts.append(CapturePart("group", f"The values of the selected group '{display_name(group, 60)}'", group_values))
    if upstream:
        parts.append(CapturePart("upstream", f"The values above the selected node '{display_name(node, 60)}' (its outputs and every "
                                 "value it depends on)", upstream))
    parts.append(CapturePart("outputs", "The graph outputs only", frozenset()))
    parts.append(CapturePart("all", "Every value anyway (the run may run out of memory)", None, check=False))
    return parts
