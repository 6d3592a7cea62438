"""The document's model file as it last read or wrote it, the files it wrote, and the model's bytes: what
opening and showing a model need of saving (the save itself, :mod:`onnxviz.model.io.saving`, is imported at the
first save)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

import onnx

from onnxviz.model.errors import SaveError
from onnxviz.model.io.disk import FileStamp, same_content
from onnxviz.model.io.loading import MAX_PROTO_BYTES
from onnxviz.model.io.slices import serialize_in_slices

if TYPE_CHECKING:
    from onnxviz.model.io.streaming import StreamedModel

ModelBytes: TypeAlias = "bytes | StreamedModel"  # what a save writes to the model file
STREAM_ABOVE = 64 << 20  # bytes; an edited model this big is written a piece at a time (see io.streaming)


@dataclass
class DiskCopy:
    """The last version of the model file this document read or wrote: where, its stamp, its size and
    its bytes, unless they were let go (a big model once edited, or saved a piece at a time)."""

    path: Path
    stamp: FileStamp | None
    data: bytes | None
    size: int

    @classmethod
    def of(cls, path: Path, data: ModelBytes) -> DiskCopy:
        return cls(path, FileStamp.of(path), data if isinstance(data, bytes) else None, output_size(data))

    def changed_on_disk(self) -> bool:
        """True if the file is no longer what this document read or wrote (compared by content when
        only its stamp moved, e.g. after a ``touch``, while the bytes are held)."""
        stamp = FileStamp.of(self.path)
        if stamp is None:
            return False  # gone: writing it again replaces nothing
        return stamp != self.stamp and (self.data is None or not same_content(self.path, self.data))

    def file_bytes(self) -> bytes | None:
        """The file's bytes: those held, else read again (and held) while its stamp is unchanged; else None."""
        if self.data is None and self.stamp is not None and FileStamp.of(self.path) == self.stamp:
            try:
                data = self.path.read_bytes()
            except OSError:
                return None
            if len(data) == self.size and FileStamp.of(self.path) == self.stamp:
                self.data = data
        return self.data


def output_size(data: ModelBytes) -> int:
    return len(data) if isinstance(data, bytes) else data.size


@dataclass
class WrittenFiles:
    """Files this document wrote, with their stamps, so that it may replace its own files again."""

    stamps: dict[Path, FileStamp | None] = field(default_factory=dict)

    def add_all(self, paths: list[Path]) -> None:
        for path in paths:
            self.stamps[path.absolute()] = FileStamp.of(path)

    def wrote(self, path: Path) -> bool:
        stamp = self.stamps.get(path.absolute())
        return stamp is not None and stamp == FileStamp.of(path)


def model_bytes(model: onnx.ModelProto, disk: DiskCopy | None, pause: Callable[[], None] | None = None) -> bytes:
    """The bytes of ``model``: those of its file ``disk`` (given while the model equals it) when at hand, else
    serialized."""
    original = disk.file_bytes() if disk is not None else None
    return original if original is not None else serialize(model, pause)


class ModelTooLarge(SaveError):
    """The model does not fit in one protobuf file; a save (:func:`~onnxviz.model.io.saving.plan_save`) says what to do about it."""


def serialize(model: onnx.ModelProto, pause: Callable[[], None] | None = None) -> bytes:
    """The model's bytes; a SaveError when they do not fit in one protobuf file (2 GiB)."""
    message = "the model is too large to write as one file (over 2 GiB)."
    try:
        data = serialize_in_slices(model, pause) if pause is not None else model.SerializeToString()
    except ValueError as exc:  # protobuf's EncodeError: over 2 GiB
        raise ModelTooLarge(message, str(exc)) from exc
    if len(data) > MAX_PROTO_BYTES:
        raise ModelTooLarge(message)
    return data
