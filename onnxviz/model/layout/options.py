"""How a scope is laid out: what the View menu chooses (box widths for node names, tensor names on
edges, the direction data flows in)."""

from __future__ import annotations

from dataclasses import dataclass

TOP_TO_BOTTOM = "TB"
LEFT_TO_RIGHT = "LR"
DIRECTIONS = (TOP_TO_BOTTOM, LEFT_TO_RIGHT)


@dataclass(frozen=True)
class LayoutOptions:
    names: bool = False              # boxes as wide as their node's name (up to a cap): names are shown
    edge_names: bool = False         # edge labels give the tensor's name before its shape
    direction: str = TOP_TO_BOTTOM   # LEFT_TO_RIGHT: inputs on the left, edges leave boxes on the right

    @property
    def across(self) -> bool:
        return self.direction == LEFT_TO_RIGHT
