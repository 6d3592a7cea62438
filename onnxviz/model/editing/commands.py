"""Undoable commands and the undo stack, plain Python so edits are testable headless."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import onnx

if TYPE_CHECKING:
    from onnxviz.model.editing.ops import Command


@dataclass(frozen=True)
class IndexEffect:
    """What an applied command changed of what the index knows: ``rebuild`` (anything may
    have moved), else only the names, doc strings or non-graph attributes of ``nodes`` (main-graph
    positions); no nodes and no rebuild means the index is untouched (metadata, descriptions)."""

    rebuild: bool = False
    nodes: frozenset[int] = frozenset()

    def __or__(self, other: IndexEffect) -> IndexEffect:
        return IndexEffect(self.rebuild or other.rebuild, self.nodes | other.nodes)


REBUILD = IndexEffect(rebuild=True)
UNCHANGED = IndexEffect()


class EditTarget:
    """What commands change: the model, and the stable ids of its main graph's nodes (``"#17"``), which
    the ops keep parallel to ``model.graph.node``. Ids are given in file order; new nodes get fresh ones."""

    def __init__(self, model: onnx.ModelProto) -> None:
        self.model = model
        self._next_id = len(model.graph.node)
        self.node_ids: list[str] = [f"#{i}" for i in range(self._next_id)]

    def new_node_id(self) -> str:
        """A node id never used before for this model."""
        self._next_id += 1
        return f"#{self._next_id - 1}"


class UndoStack:
    """Commands done so far and those undone; ``clean_index`` marks the saved state."""

    def __init__(self) -> None:
        self.commands: list[Command] = []
        self.index = 0           # commands[:index] are applied
        self.clean_index: int | None = 0

    @property
    def can_undo(self) -> bool:
        return self.index > 0

    @property
    def can_redo(self) -> bool:
        return self.index < len(self.commands)

    @property
    def is_clean(self) -> bool:
        return self.clean_index == self.index

    def undo_label(self) -> str:
        return self.commands[self.index - 1].label if self.can_undo else ""

    def redo_label(self) -> str:
        return self.commands[self.index].label if self.can_redo else ""

    def pushed(self, command: Command) -> None:
        """Record a command that was just applied; drops the redo tail."""
        if self.clean_index is not None and self.clean_index > self.index:
            self.clean_index = None  # the saved state can no longer be reached
        del self.commands[self.index:]
        self.commands.append(command)
        self.index += 1

    def set_clean(self) -> None:
        self.clean_index = self.index

    def clear(self) -> None:
        """Forget every command (the document was replaced as a whole)."""
        self.commands.clear()
        self.index = 0
        self.clean_index = 0
