"""The document: the ModelProto as loaded, changed only through undoable commands."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import onnx

from onnxviz.model.commands import REBUILD, Command, IndexEffect, UndoStack
from onnxviz.model.edit_api import EditingMixin
from onnxviz.model.errors import EditError, SaveError
from onnxviz.model.events import Signal
from onnxviz.model.external import (
    check_external_data,
    external_ref,
    is_external,
    iter_all_tensors,
    resolve_location,
)
from onnxviz.model.index import ModelIndex
from onnxviz.model.loading import MAX_PROTO_BYTES, read_model_file, read_text_model_file
from onnxviz.model.problems import Problem, Severity
from onnxviz.model.selection import Selection
from onnxviz.model.slices import serialize_in_slices
from onnxviz.model.validation import ValidationResult, validate


@dataclass(frozen=True)
class Change:
    """Sent once per command, undo or redo (never per node): views refresh from the document."""

    label: str
    kind: str  # "edit", "undo", "redo", "reload", "saved", "validated"
    # of an edit, undo or redo that left the graph's structure alone (the index was updated in place):
    # the main-graph nodes whose names, doc strings or non-graph attributes changed (empty: none, e.g.
    # metadata); None when anything may have changed
    nodes: frozenset[int] | None = None


class Document(EditingMixin):
    """An open model. ``model`` is the document of record; ``index`` is derived from it.

    Edit it through the methods of :class:`~onnxviz.model.edit_api.EditingMixin`
    (each one undoable); ``node_ids`` holds a stable id per main-graph node.
    """

    def __init__(self, model: onnx.ModelProto, path: Path | None = None, original: bytes | None = None) -> None:
        self.model = model
        self.path = path
        self._original = original
        self.undo_stack = UndoStack()
        self.selection = Selection()
        self.changed: Signal[Change] = Signal()
        self.load_problems: list[Problem] = check_external_data(model, self.base_dir)
        self.validation_problems: list[Problem] = []
        self._index: ModelIndex | None = None
        self._inferred: dict[str, dict[str, onnx.TypeProto]] = {}
        self.generation = 0  # bumped by every change; background results for older ones are stale
        self._next_node_id = len(model.graph.node)
        self.node_ids: list[str] = [f"#{i}" for i in range(self._next_node_id)]

    def new_node_id(self) -> str:
        """A node id never used before in this document."""
        self._next_node_id += 1
        return f"#{self._next_node_id - 1}"

    # -- opening -------------------------------------------------------------------
    @classmethod
    def open(cls, path: str | os.PathLike[str], text_format: bool = False) -> Document:
        """Read ``path``; raises :class:`~onnxviz.model.errors.LoadError` with a clear message.

        ``text_format=True`` parses a text-format model (after a ``TextFormatError``); the
        document then has no path, so saving asks for a new binary file instead of overwriting the text.
        """
        p = Path(path)
        if text_format:
            return cls(read_text_model_file(p))
        model, data = read_model_file(p)
        return cls(model, p.absolute(), data)

    @property
    def base_dir(self) -> Path | None:
        return self.path.parent if self.path else None

    @property
    def name(self) -> str:
        return self.path.name if self.path else "untitled.onnx"

    # -- derived data --------------------------------------------------------------
    @property
    def index(self) -> ModelIndex:
        if self._index is None:
            self._index = ModelIndex(self.model)
            self._index.set_inferred(self._inferred)
        return self._index

    def prepare(self) -> None:
        """Build what browsing and the first edit need (the index, the node-name table) now, e.g. in
        the loading thread, rather than on first use on the GUI thread (123k nodes: 0.6 s and 60 ms)."""
        _ = self.index
        self._lookup()

    @property
    def problems(self) -> list[Problem]:
        return self.load_problems + self.index.problems + self.validation_problems

    def snapshot(self) -> onnx.ModelProto:
        """A private copy of the model for background work.

        Edits change ``model`` in place on the GUI thread; a worker reading
        ``model`` meanwhile races with them. Copying is cheap next to any
        real analysis (about 2 ms for a 12k-node graph; weights are copied too).
        """
        copy = onnx.ModelProto()
        copy.CopyFrom(self.model)
        return copy

    def problem_summary(self) -> str:
        """One sentence for the status bar or a save prompt, e.g. "2 errors, 1 warning"; '' if none."""
        problems = self.problems
        parts = []
        for sev, word in ((Severity.ERROR, "error"), (Severity.WARNING, "warning")):
            n = sum(p.severity == sev for p in problems)
            if n:
                parts.append(f"{n} {word}{'s' if n > 1 else ''}")
        return ", ".join(parts)

    def check(self) -> list[Problem]:
        """Validate now (checker, shape inference, schema checks) and return all problems."""
        self.apply_validation(validate(self.model, self.index, self.generation))
        return self.problems

    def invalidate(self) -> None:
        """Drop derived data after the model changed."""
        if self._index is not None:
            self._inferred = self._index.inferred  # kept until the next validation replaces them
        self._index = None  # rebuilt when next asked for

    # -- editing -------------------------------------------------------------------
    def execute(self, command: Command) -> None:
        """Apply ``command`` and record it for undo; an EditError leaves everything as it was."""
        before = self.model.SerializeToString() if __debug__ and _PARANOID else b""
        selected = self._selected_node_id()
        try:
            command.apply(self)
        except EditError:
            if before:
                assert self.model.SerializeToString() == before, "failing edit changed the model"
            raise
        self.undo_stack.pushed(command)
        self._after_change(Change(command.label, "edit"), selected, command.index_effect())

    def undo(self) -> None:
        if not self.undo_stack.can_undo:
            return
        cmd = self.undo_stack.commands[self.undo_stack.index - 1]
        selected = self._selected_node_id()
        cmd.revert(self)
        self.undo_stack.index -= 1
        self._after_change(Change(cmd.label, "undo"), selected, cmd.index_effect())

    def redo(self) -> None:
        if not self.undo_stack.can_redo:
            return
        cmd = self.undo_stack.commands[self.undo_stack.index]
        selected = self._selected_node_id()
        cmd.apply(self)
        self.undo_stack.index += 1
        self._after_change(Change(cmd.label, "redo"), selected, cmd.index_effect())

    @property
    def is_dirty(self) -> bool:
        return not self.undo_stack.is_clean

    def _after_change(self, change: Change, selected: str | None = None, effect: IndexEffect = REBUILD) -> None:
        self.generation += 1
        # a 123k-node index takes ~0.6 s to build: edits that leave the graph's structure alone
        # (names, descriptions, attribute values, metadata) update it in place
        if effect.rebuild or (self._index is not None and not self._index.refresh_nodes(effect.nodes)):
            self.invalidate()
        else:  # views may refresh only these nodes too
            change = replace(change, nodes=effect.nodes)
        if not effect.rebuild:
            self._follow_renames(effect.nodes)
        self.changed.emit(change)
        if selected is not None:
            self._follow_selected_node(selected)

    def _selected_node_id(self) -> str | None:
        """The stable id of the selected main-graph node, so the selection can follow it through edits."""
        state = self.selection.state
        if state.scope == "" and 0 <= state.node < len(self.node_ids):
            return self.node_ids[state.node]
        return None

    def _follow_selected_node(self, node_id: str) -> None:
        state = self.selection.state
        if state.scope != "" or state.node < 0:
            return  # the selection moved meanwhile
        try:
            position = self.node_ids.index(node_id)
        except ValueError:
            self.selection.clear("")  # the node is gone
            return
        if position != state.node:
            self.selection.select_node("", position)

    def apply_validation(self, result: ValidationResult) -> bool:
        """Take a background validation result; ignored (False) if the model changed since."""
        if result.generation != self.generation:
            return False
        self._inferred = result.inference.types
        if self._index is not None:
            self._index.set_inferred(self._inferred)
        self.validation_problems = result.problems
        self.changed.emit(Change("Validation", "validated"))
        return True

    # -- saving --------------------------------------------------------------------
    def serialize(self, pause: Callable[[], None] | None = None) -> bytes:
        """The bytes a save writes: the original bytes while nothing was edited.

        With ``pause``, for background threads: serialized a slice at a time (see
        :mod:`onnxviz.model.slices`), ``pause`` running between slices, where other threads run and
        the caller may raise to give up."""
        if self._original is not None and self.undo_stack.index == 0:
            return self._original
        if pause is not None:
            data = serialize_in_slices(self.model, pause)
            if len(data) > MAX_PROTO_BYTES:
                raise SaveError(_TOO_LARGE)
            return data
        try:
            return self.model.SerializeToString()
        except ValueError as exc:  # e.g. over 2 GiB
            raise SaveError(_TOO_LARGE, str(exc)) from exc

    def save(self, path: str | os.PathLike[str] | None = None, external: str = "keep") -> Path:
        """Write atomically to ``path`` (default: where it came from); returns the path written.

        ``external="keep"`` keeps external data files (copied next to the new
        file when saving to another folder, so the saved model is complete);
        ``"embed"`` stores every tensor inside the .onnx file. Saving a model
        that has problems is allowed: check :attr:`problems` or
        :meth:`problem_summary` first to warn the user. Raises SaveError with a
        clear message; on failure the file on disk is unchanged.
        """
        if external not in ("keep", "embed"):
            raise SaveError(f"external must be 'keep' or 'embed', not {external!r}.")
        target = Path(path).absolute() if path is not None else self.path
        if target is None:
            raise SaveError("this model has no file name yet; use Save As.")
        if target.is_dir():
            raise SaveError(f"{target} is a folder; choose a file name.")
        if external == "embed" and self._has_external():
            data = self._embedded_bytes()
        else:
            data = self.serialize()
        if (external == "keep" and self.base_dir is not None
                and target.parent.resolve() != self.base_dir.resolve()):
            self._copy_external_data(target.parent)
        atomic_write(target, data)
        if external == "embed" and self._has_external():
            self._embed_in_memory()
        self.path = target
        self._original = data
        self.undo_stack.set_clean()
        self.changed.emit(Change("Save", "saved"))
        return target

    def _has_external(self) -> bool:
        return any(is_external(t) for t in iter_all_tensors(self.model))

    def _embedded_bytes(self) -> bytes:
        model = onnx.ModelProto()
        model.CopyFrom(self.model)
        _load_external_into(model, self.base_dir)
        try:
            return model.SerializeToString()
        except ValueError as exc:
            raise SaveError("the model is too large to embed its weights (over 2 GiB); keep them external.",
                            str(exc)) from exc

    def _embed_in_memory(self) -> None:
        """After an embedded save the document is the saved file: no data files, no undo history
        (undoing would bring back references to files the new model does not have)."""
        _load_external_into(self.model, self.base_dir)
        self.undo_stack.clear()
        self.load_problems = check_external_data(self.model, self.base_dir)

    def _copy_external_data(self, new_dir: Path) -> None:
        assert self.base_dir is not None
        locations = {external_ref(t).location: t.name for t in iter_all_tensors(self.model) if is_external(t)}
        for location, tensor_name in locations.items():
            src = resolve_location(self.base_dir, location, tensor_name)
            dst = new_dir / location
            try:
                dst.parent.mkdir(parents=True, exist_ok=True)
                tmp = dst.with_name(dst.name + ".onnxviz-tmp")
                shutil.copyfile(src, tmp)
                os.replace(tmp, dst)
            except OSError as exc:
                raise SaveError(f"external data '{location}' could not be copied: {exc.strerror or exc}.",
                                str(exc)) from exc


def _load_external_into(model: onnx.ModelProto, base_dir: Path | None) -> None:
    from onnxviz.model.errors import OnnxvizError
    from onnxviz.model.external import read_external_bytes

    for t in iter_all_tensors(model):
        if not is_external(t):
            continue
        if base_dir is None:
            raise SaveError(f"tensor '{t.name}' is stored externally, but the model has no folder.")
        try:
            t.raw_data = bytes(read_external_bytes(t, base_dir))
        except OnnxvizError as exc:
            raise SaveError(f"weights could not be embedded: {exc.message}", exc.details) from exc
        del t.external_data[:]
        t.data_location = onnx.TensorProto.DEFAULT


_TOO_LARGE = "the model is too large to write as one protobuf (over 2 GiB)."
_PARANOID = False  # tests switch this on to assert failing edits leave the bytes unchanged


def atomic_write(target: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``target``, fsync, then rename over it."""
    if target.exists() and target.is_dir():
        raise SaveError(f"{target} is a folder; choose a file name.")
    fd = -1
    tmp = ""
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        with os.fdopen(fd, "wb") as f:
            fd = -1
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if target.exists():
            shutil.copymode(target, tmp)
        os.replace(tmp, target)
        tmp = ""
    except OSError as exc:
        raise SaveError(f"could not save {target.name}: {exc.strerror or exc}.", str(exc)) from exc
    finally:
        if fd >= 0:
            os.close(fd)
        if tmp and os.path.exists(tmp):
            os.unlink(tmp)
