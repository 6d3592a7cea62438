"""What commands change (:class:`EditTarget`: the model and its main graph's node ids) and what a change did to
the index (:class:`IndexEffect`): the bottom of the editing package, below the ops and the commands."""

from __future__ import annotations

from dataclasses import dataclass

import onnx


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
