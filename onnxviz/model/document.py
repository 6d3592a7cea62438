"""The document: the ModelProto as loaded, changed only through undoable commands."""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import onnx

from onnxviz.model.commands import Command, UndoStack
from onnxviz.model.errors import EditError, SaveError
from onnxviz.model.events import Signal
from onnxviz.model.external import check_external_data, external_ref, is_external, iter_all_tensors, resolve_location
from onnxviz.model.index import ModelIndex
from onnxviz.model.loading import read_model_file
from onnxviz.model.problems import Problem
from onnxviz.model.selection import Selection
from onnxviz.model.validation import ValidationResult


@dataclass(frozen=True)
class Change:
    """Sent once per command, undo or redo (never per node): views refresh from the document."""

    label: str
    kind: str  # "edit", "undo", "redo", "reload", "saved", "validated"


class Document:
    """An open model. ``model`` is the document of record; ``index`` is derived from it."""

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
        self.generation = 0  # bumped by every change; background results for older ones are stale

    # -- opening -------------------------------------------------------------------
    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> Document:
        """Read ``path``; raises :class:`~onnxviz.model.errors.LoadError` with a clear message."""
        p = Path(path)
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
        return self._index

    @property
    def problems(self) -> list[Problem]:
        return self.load_problems + self.index.problems + self.validation_problems

    def invalidate(self) -> None:
        """Drop derived data after the model changed."""
        inferred = self._index.inferred if self._index is not None else {}
        self._index = None
        self.index.set_inferred(inferred)

    # -- editing -------------------------------------------------------------------
    def execute(self, command: Command) -> None:
        """Apply ``command`` and record it for undo; an EditError leaves everything as it was."""
        before = self.model.SerializeToString() if __debug__ and _PARANOID else b""
        try:
            command.apply(self)
        except EditError:
            if before:
                assert self.model.SerializeToString() == before, "failing edit changed the model"
            raise
        self.undo_stack.pushed(command)
        self._after_change(Change(command.label, "edit"))

    def undo(self) -> None:
        if not self.undo_stack.can_undo:
            return
        cmd = self.undo_stack.commands[self.undo_stack.index - 1]
        cmd.revert(self)
        self.undo_stack.index -= 1
        self._after_change(Change(cmd.label, "undo"))

    def redo(self) -> None:
        if not self.undo_stack.can_redo:
            return
        cmd = self.undo_stack.commands[self.undo_stack.index]
        cmd.apply(self)
        self.undo_stack.index += 1
        self._after_change(Change(cmd.label, "redo"))

    @property
    def is_dirty(self) -> bool:
        return not self.undo_stack.is_clean

    def _after_change(self, change: Change) -> None:
        self.generation += 1
        self.invalidate()
        self.changed.emit(change)

    def apply_validation(self, result: ValidationResult) -> bool:
        """Take a background validation result; ignored (False) if the model changed since."""
        if result.generation != self.generation:
            return False
        self.index.set_inferred(result.inference.types)
        self.validation_problems = result.problems
        self.changed.emit(Change("Validation", "validated"))
        return True

    # -- saving --------------------------------------------------------------------
    def serialize(self) -> bytes:
        """The bytes a save writes: the original bytes while nothing was edited."""
        if self._original is not None and self.undo_stack.index == 0:
            return self._original
        try:
            return self.model.SerializeToString()
        except ValueError as exc:  # e.g. over 2 GiB
            raise SaveError("the model is too large to write as one protobuf (over 2 GiB).", str(exc)) from exc

    def save(self, path: str | os.PathLike[str] | None = None) -> Path:
        """Write atomically to ``path`` (default: where it came from).

        External data files are copied next to the new file when saving to
        another folder, so the saved model is complete.
        """
        target = Path(path).absolute() if path is not None else self.path
        if target is None:
            raise SaveError("this model has no file name yet; use Save As.")
        if target.is_dir():
            raise SaveError(f"{target} is a folder; choose a file name.")
        data = self.serialize()
        if self.base_dir is not None and target.parent.resolve() != self.base_dir.resolve():
            self._copy_external_data(target.parent)
        atomic_write(target, data)
        self.path = target
        self._original = data
        self.undo_stack.set_clean()
        self.changed.emit(Change("Save", "saved"))
        return target

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
