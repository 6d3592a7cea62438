"""What the user has selected: a model-layer notion that every view follows."""

from __future__ import annotations

from dataclasses import dataclass

from onnxviz.model.events import Signal


@dataclass(frozen=True)
class SelectionState:
    """``scope`` is the graph shown; ``node`` a node position in it (-1 none);
    ``value`` a value name ('' none). Both empty means "the model"."""

    scope: str = ""
    node: int = -1
    value: str = ""

    @property
    def is_empty(self) -> bool:
        return self.node < 0 and not self.value


class Selection:
    """Holds the current :class:`SelectionState` and announces each change once."""

    def __init__(self) -> None:
        self.state = SelectionState()
        self.changed: Signal[SelectionState] = Signal()

    def select_node(self, scope: str, node: int) -> None:
        self._set(SelectionState(scope, node, ""))

    def select_value(self, scope: str, value: str) -> None:
        self._set(SelectionState(scope, -1, value))

    def clear(self, scope: str | None = None) -> None:
        self._set(SelectionState(self.state.scope if scope is None else scope))

    def _set(self, state: SelectionState) -> None:
        if state != self.state:
            self.state = state
            self.changed.emit(state)
