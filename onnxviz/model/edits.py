"""The one edit mechanism: a command is a label plus a list of exactly reversible ops.

Every public edit (see :mod:`onnxviz.model.edit_api`) first checks its
arguments against the current model without touching it, then builds a list
of primitive ops addressed by *paths* from the ModelProto root, e.g.
``("graph", "node", 12, "attribute", 3)``. ``apply`` runs the ops in order
(rolling back the ones done if one fails) and ``revert`` undoes them in
reverse. Each op keeps what it replaced - the old scalar, a copy of the old
sub-message, the removed element and its position - so undo restores the
exact previous bytes, field order included.

The main graph's nodes also carry stable ids (``doc.node_ids``, ``"#17"``)
that insert/remove/reorder ops keep parallel to ``graph.node``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from google.protobuf.message import Message

from onnxviz.model.commands import Command
from onnxviz.model.errors import EditError

if TYPE_CHECKING:
    from onnxviz.model.document import Document

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


class Op(ABC):
    """One primitive change; ``undo`` must restore exactly what ``do`` replaced."""

    @abstractmethod
    def do(self, doc: Document) -> None: ...

    @abstractmethod
    def undo(self, doc: Document) -> None: ...


class SetField(Op):
    """Set a scalar field (``name``, ``doc_string``...) of the message at ``path``."""

    def __init__(self, path: Path, field: str, value: Any) -> None:
        self.path, self.field, self.value = path, field, value
        self._had = False
        self._old: Any = None

    def do(self, doc: Document) -> None:
        msg = resolve(doc.model, self.path)
        self._had = msg.HasField(self.field)
        self._old = getattr(msg, self.field)
        setattr(msg, self.field, self.value)

    def undo(self, doc: Document) -> None:
        msg = resolve(doc.model, self.path)
        if self._had:
            setattr(msg, self.field, self._old)
        else:
            msg.ClearField(self.field)


class SetItem(Op):
    """Replace element ``index`` of the repeated string field at ``path`` (e.g. a node input)."""

    def __init__(self, path: Path, index: int, value: str) -> None:
        self.path, self.index, self.value = path, index, value
        self._old = ""

    def do(self, doc: Document) -> None:
        rep = resolve(doc.model, self.path)
        self._old = rep[self.index]
        rep[self.index] = self.value

    def undo(self, doc: Document) -> None:
        resolve(doc.model, self.path)[self.index] = self._old


class ReplaceMessage(Op):
    """CopyFrom ``new`` into the message at ``path``; undo copies the saved old one back."""

    def __init__(self, path: Path, new: Message) -> None:
        self.path, self.new = path, new
        self._old: Message | None = None
        self._had = True
        self._node_ids: list[str] | None = None

    def do(self, doc: Document) -> None:
        msg = resolve(doc.model, self.path)
        if self.path and isinstance(self.path[-1], str):
            self._had = resolve(doc.model, self.path[:-1]).HasField(self.path[-1])
        self._old = _copy(msg)
        swaps_main_graph = self.path in ((), ("graph",))
        self._node_ids = list(doc.node_ids) if swaps_main_graph else None
        msg.CopyFrom(self.new)
        if swaps_main_graph and len(doc.model.graph.node) != len(doc.node_ids):
            doc.node_ids[:] = [doc.new_node_id() for _ in doc.model.graph.node]

    def undo(self, doc: Document) -> None:
        assert self._old is not None
        if not self._had:
            resolve(doc.model, self.path[:-1]).ClearField(str(self.path[-1]))
        else:
            resolve(doc.model, self.path).CopyFrom(self._old)
        if self._node_ids is not None:
            doc.node_ids[:] = self._node_ids


class Insert(Op):
    """Insert a copy of ``item`` at ``index`` of the repeated field at ``path``."""

    def __init__(self, path: Path, index: int, item: Any, node_id: str | None = None) -> None:
        self.path, self.index, self.item = path, index, item
        self.node_id = node_id

    def do(self, doc: Document) -> None:
        resolve(doc.model, self.path).insert(self.index, self.item)
        if self.path == MAIN_NODES:
            if self.node_id is None:
                self.node_id = doc.new_node_id()
            doc.node_ids.insert(self.index, self.node_id)

    def undo(self, doc: Document) -> None:
        del resolve(doc.model, self.path)[self.index]
        if self.path == MAIN_NODES:
            del doc.node_ids[self.index]


class Remove(Op):
    """Remove element ``index`` of the repeated field at ``path``, keeping it for undo."""

    def __init__(self, path: Path, index: int) -> None:
        self.path, self.index = path, index
        self._item: Any = None
        self._node_id = ""

    def do(self, doc: Document) -> None:
        rep = resolve(doc.model, self.path)
        self._item = _copy(rep[self.index])
        del rep[self.index]
        if self.path == MAIN_NODES:
            self._node_id = doc.node_ids.pop(self.index)

    def undo(self, doc: Document) -> None:
        resolve(doc.model, self.path).insert(self.index, self._item)
        if self.path == MAIN_NODES:
            doc.node_ids.insert(self.index, self._node_id)


class Reorder(Op):
    """Rearrange the repeated field at ``path`` so that new[k] = old[order[k]]."""

    def __init__(self, path: Path, order: Sequence[int]) -> None:
        self.path, self.order = path, list(order)

    def do(self, doc: Document) -> None:
        self._permute(doc, self.order)

    def undo(self, doc: Document) -> None:
        inverse = [0] * len(self.order)
        for k, j in enumerate(self.order):
            inverse[j] = k
        self._permute(doc, inverse)

    def _permute(self, doc: Document, order: list[int]) -> None:
        rep = resolve(doc.model, self.path)
        items = [_copy(rep[j]) for j in order]
        del rep[:]
        rep.extend(items)
        if self.path == MAIN_NODES:
            doc.node_ids[:] = [doc.node_ids[j] for j in order]


class EditCommand(Command):
    """A labelled list of ops; all of them happen or none does."""

    def __init__(self, label: str, ops: Sequence[Op]) -> None:
        self.label = label
        self.ops = list(ops)

    def apply(self, doc: Document) -> None:
        done: list[Op] = []
        try:
            for op in self.ops:
                op.do(doc)
                done.append(op)
        except Exception as exc:  # noqa: BLE001 - any failure is rolled back and explained
            for op in reversed(done):
                op.undo(doc)
            if isinstance(exc, EditError):
                raise
            raise EditError(f"{self.label} failed: {exc}.", repr(exc)) from exc

    def revert(self, doc: Document) -> None:
        for op in reversed(self.ops):
            op.undo(doc)
