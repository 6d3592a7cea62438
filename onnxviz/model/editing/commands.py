"""Undoable commands and the undo stack, plain Python so edits are testable headless: a command is a label plus a
list of exactly reversible ops (:mod:`~onnxviz.model.editing.ops`); all of them happen or none does."""

from __future__ import annotations

from collections.abc import Sequence

from onnxviz.model.editing.ops import Op
from onnxviz.model.editing.target import UNCHANGED, EditTarget, IndexEffect
from onnxviz.model.errors import EditError


class Command:
    """One user-visible edit: a label and a list of exactly reversible ops; all of them happen or none does."""

    def __init__(self, label: str, ops: Sequence[Op]) -> None:
        self.label = label
        self.ops = list(ops)

    def apply(self, target: EditTarget) -> None:
        done: list[Op] = []
        try:
            for op in self.ops:
                op.do(target)
                done.append(op)
        except Exception as exc:  # noqa: BLE001 - any failure is rolled back and explained
            for op in reversed(done):
                op.undo(target)
            if isinstance(exc, EditError):
                raise
            raise EditError(f"{self.label} failed: {exc}.", repr(exc)) from exc

    def unchanged(self, target: EditTarget) -> bool:
        """True when applying this command now would change nothing: every op sets what is already there
        (a value typed again as it was is no edit)."""
        return all(op.unchanged(target) for op in self.ops)

    def revert(self, target: EditTarget) -> None:
        for op in reversed(self.ops):
            op.undo(target)

    def index_effect(self) -> IndexEffect:
        effect = UNCHANGED
        for op in self.ops:
            effect |= op.index_effect()
        return effect


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
        return self.undo_command().label if self.can_undo else ""

    def redo_label(self) -> str:
        return self.redo_command().label if self.can_redo else ""

    def undo_command(self) -> Command:
        """The command Undo reverts (there must be one: :attr:`can_undo`)."""
        return self.commands[self.index - 1]

    def redo_command(self) -> Command:
        """The command Redo applies again (there must be one: :attr:`can_redo`)."""
        return self.commands[self.index]

    def undone(self) -> None:
        """Record that :meth:`undo_command` was just reverted."""
        self.index -= 1

    def redone(self) -> None:
        """Record that :meth:`redo_command` was just applied again."""
        self.index += 1

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
