"""The reversible primitive ops a :class:`~onnxviz.model.editing.commands.Command` is made of.

Every public edit (see :mod:`onnxviz.model.editing.editor`) first checks its
arguments against the current model without touching it, then builds a list
of primitive ops addressed by *paths* from the ModelProto root, e.g.
``("graph", "node", 12, "attribute", 3)``. A command's ``apply`` runs the ops in order
(rolling back the ones done if one fails) and ``revert`` undoes them in
reverse. Each op keeps what it replaced - the old scalar, a copy of the old
sub-message, the removed element and its position - so undo restores the
exact previous bytes, field order included.

The main graph's nodes also carry stable ids (``target.node_ids``, ``"#17"``)
that insert/remove/reorder ops keep parallel to ``graph.node``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from google.protobuf.message import Message
from onnx import AttributeProto

from onnxviz.model.editing.target import REBUILD, UNCHANGED, EditTarget, IndexEffect

Path = tuple[str | int, ...]
MAIN_NODES: Path = ("graph", "node")


def resolve(root: Any, path: Path) -> Any:
    """The message or repeated field that ``path`` names, starting at ``root``."""
    obj = root
    for step in path:
        obj = getattr(obj, step) if isinstance(step, str) else obj[step]
    return obj


def _copy(value: Any) -> Any:
    if isinstance(value, Message):
        dup = type(value)()
        dup.CopyFrom(value)
        return dup
    return value


# fields whose change the index does not see: model facts, descriptions, metadata
_MODEL_FIELDS = {"doc_string", "producer_name", "producer_version", "domain", "model_version"}
_NODE_FIELDS = {"name", "doc_string"}  # a node's own fields that leave the graph's structure alone


def _main_node(path: Path) -> int | None:
    """The main-graph node position ``path`` starts with, if any."""
    if len(path) >= 3 and path[:2] == MAIN_NODES and isinstance(path[2], int):
        return path[2]
    return None


def _holds_graph(attr: Any) -> bool:
    return isinstance(attr, AttributeProto) and (bool(attr.graphs) or attr.HasField("g"))


def _attribute_effect(path: Path, *attrs: Any) -> IndexEffect:
    """Effect of changing the attribute list (or one attribute) of the node ``path`` names."""
    node = _main_node(path)
    if node is None or path[3:] != ("attribute",) or any(_holds_graph(a) for a in attrs):
        return REBUILD
    return IndexEffect(nodes=frozenset({node}))


def _metadata_effect(path: Path) -> IndexEffect | None:
    """Unchanged for entries of the model's or a main-graph node's metadata_props."""
    if path[:1] == ("metadata_props",):
        return UNCHANGED
    node = _main_node(path)
    return UNCHANGED if node is not None and path[3:4] == ("metadata_props",) else None


class Op(ABC):
    """One primitive change; ``undo`` must restore exactly what ``do`` replaced."""

    @abstractmethod
    def do(self, target: EditTarget) -> None: ...

    @abstractmethod
    def undo(self, target: EditTarget) -> None: ...

    def index_effect(self) -> IndexEffect:
        return REBUILD

    def unchanged(self, target: EditTarget) -> bool:
        """True when doing this op now would change nothing (setting what is already there)."""
        return False


class SetField(Op):
    """Set a scalar field (``name``, ``doc_string``...) of the message at ``path``."""

    def __init__(self, path: Path, field: str, value: Any) -> None:
        self.path, self.field, self.value = path, field, value
        self._had = False
        self._old: Any = None

    def do(self, target: EditTarget) -> None:
        msg = resolve(target.model, self.path)
        self._had = msg.HasField(self.field)
        self._old = getattr(msg, self.field)
        setattr(msg, self.field, self.value)

    def unchanged(self, target: EditTarget) -> bool:
        """Setting the value it has (an absent field set to its empty default included: that is no change
        the user meant, only bytes)."""
        msg = resolve(target.model, self.path)
        return bool(getattr(msg, self.field) == self.value and (msg.HasField(self.field) or not self.value))

    def undo(self, target: EditTarget) -> None:
        msg = resolve(target.model, self.path)
        if self._had:
            setattr(msg, self.field, self._old)
        else:
            msg.ClearField(self.field)

    def index_effect(self) -> IndexEffect:
        if (self.path == () and self.field in _MODEL_FIELDS) or (self.path == ("graph",)
                                                               and self.field == "doc_string"):
            return UNCHANGED
        metadata = _metadata_effect(self.path)
        if metadata is not None:
            return metadata
        node = _main_node(self.path)
        if node is not None and len(self.path) == 3 and self.field in _NODE_FIELDS:
            return IndexEffect(nodes=frozenset({node}))
        return REBUILD


class SetItem(Op):
    """Replace element ``index`` of the repeated string field at ``path`` (e.g. a node input)."""

    def __init__(self, path: Path, index: int, value: str) -> None:
        self.path, self.index, self.value = path, index, value
        self._old = ""

    def do(self, target: EditTarget) -> None:
        rep = resolve(target.model, self.path)
        self._old = rep[self.index]
        rep[self.index] = self.value

    def unchanged(self, target: EditTarget) -> bool:
        rep = resolve(target.model, self.path)
        return 0 <= self.index < len(rep) and rep[self.index] == self.value

    def undo(self, target: EditTarget) -> None:
        resolve(target.model, self.path)[self.index] = self._old


class ReplaceMessage(Op):
    """CopyFrom ``new`` into the message at ``path``; undo copies the saved old one back."""

    def __init__(self, path: Path, new: Message) -> None:
        self.path, self.new = path, new
        self._old: Message | None = None
        self._had = True
        self._node_ids: list[str] | None = None

    def do(self, target: EditTarget) -> None:
        msg = resolve(target.model, self.path)
        if self.path and isinstance(self.path[-1], str):
            self._had = resolve(target.model, self.path[:-1]).HasField(self.path[-1])
        self._old = _copy(msg)
        swaps_main_graph = self.path in ((), ("graph",))
        self._node_ids = list(target.node_ids) if swaps_main_graph else None
        msg.CopyFrom(self.new)
        if swaps_main_graph and len(target.model.graph.node) != len(target.node_ids):
            target.node_ids[:] = [target.new_node_id() for _ in target.model.graph.node]

    def unchanged(self, target: EditTarget) -> bool:
        if self.path and isinstance(self.path[-1], str) and not resolve(target.model, self.path[:-1]).HasField(
                self.path[-1]):
            return False  # setting an absent sub-message makes it present
        return bool(resolve(target.model, self.path).SerializeToString() == self.new.SerializeToString())

    def undo(self, target: EditTarget) -> None:
        assert self._old is not None
        if not self._had:
            resolve(target.model, self.path[:-1]).ClearField(str(self.path[-1]))
        else:
            resolve(target.model, self.path).CopyFrom(self._old)
        if self._node_ids is not None:
            target.node_ids[:] = self._node_ids

    def index_effect(self) -> IndexEffect:
        if len(self.path) == 5 and isinstance(self.path[4], int):
            return _attribute_effect(self.path[:4], self.new, self._old)
        return _metadata_effect(self.path) or REBUILD


class Insert(Op):
    """Insert a copy of ``item`` at ``index`` of the repeated field at ``path``."""

    def __init__(self, path: Path, index: int, item: Any, node_id: str | None = None) -> None:
        self.path, self.index, self.item = path, index, item
        self.node_id = node_id

    def do(self, target: EditTarget) -> None:
        resolve(target.model, self.path).insert(self.index, self.item)
        if self.path == MAIN_NODES:
            if self.node_id is None:
                self.node_id = target.new_node_id()
            target.node_ids.insert(self.index, self.node_id)

    def undo(self, target: EditTarget) -> None:
        del resolve(target.model, self.path)[self.index]
        if self.path == MAIN_NODES:
            del target.node_ids[self.index]

    def index_effect(self) -> IndexEffect:
        return _metadata_effect(self.path) or _attribute_effect(self.path, self.item)


class Remove(Op):
    """Remove element ``index`` of the repeated field at ``path``, keeping it for undo."""

    def __init__(self, path: Path, index: int) -> None:
        self.path, self.index = path, index
        self._item: Any = None
        self._node_id = ""

    def do(self, target: EditTarget) -> None:
        rep = resolve(target.model, self.path)
        self._item = _copy(rep[self.index])
        del rep[self.index]
        if self.path == MAIN_NODES:
            self._node_id = target.node_ids.pop(self.index)

    def undo(self, target: EditTarget) -> None:
        resolve(target.model, self.path).insert(self.index, self._item)
        if self.path == MAIN_NODES:
            target.node_ids.insert(self.index, self._node_id)

    def index_effect(self) -> IndexEffect:
        return _metadata_effect(self.path) or _attribute_effect(self.path, self._item)


class Reorder(Op):
    """Rearrange the repeated field at ``path`` so that new[k] = old[order[k]]."""

    def __init__(self, path: Path, order: Sequence[int]) -> None:
        self.path, self.order = path, list(order)

    def do(self, target: EditTarget) -> None:
        self._permute(target, self.order)

    def undo(self, target: EditTarget) -> None:
        inverse = [0] * len(self.order)
        for k, j in enumerate(self.order):
            inverse[j] = k
        self._permute(target, inverse)

    def _permute(self, target: EditTarget, order: list[int]) -> None:
        rep = resolve(target.model, self.path)
        items = [_copy(rep[j]) for j in order]
        del rep[:]
        rep.extend(items)
        if self.path == MAIN_NODES:
            target.node_ids[:] = [target.node_ids[j] for j in order]
