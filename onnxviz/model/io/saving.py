"""What a save writes, and the questions it must not answer on the user's behalf.

The one place that decides which files go to disk. A save writes the model file and, when the model
keeps weights in external data files and goes to another folder, copies of those files. It never
replaces a file the user did not name:

* the model file itself, when another program changed it since this document read or wrote it
  (:class:`FileChangedError`; ``SaveOptions.overwrite`` answers yes);
* a data file of the same name that another model in the target folder uses
  (:class:`DataConflictError`; ``SaveOptions.replace_data`` answers yes, or ``external="file"`` writes
  the weights under a name derived from the new model file instead).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Literal

import onnx

from onnxviz.model.errors import OnnxvizError, SaveError
from onnxviz.model.io.disk import (
    FileStamp,
    Write,
    Written,
    atomic_copy,
    atomic_write,
    atomic_write_with,
    same_content,
    same_files,
)
from onnxviz.model.io.external import (
    external_ref,
    is_external,
    iter_all_tensors,
    read_external_bytes,
    resolve_location,
)
from onnxviz.model.io.loading import MAX_PROTO_BYTES
from onnxviz.model.io.slices import serialize_in_slices
from onnxviz.model.io.streaming import SizeGuessWrong, StreamedModel, stream_model
from onnxviz.model.progress import ProgressFn

External = Literal["keep", "embed", "file"]
EXTERNAL_CHOICES: tuple[External, ...] = ("keep", "embed", "file")
STREAM_ABOVE = 64 << 20  # bytes; an edited model this big is written a piece at a time (see io.streaming)
DATA_THRESHOLD = 1024  # tensors of at least this many bytes go to the data file of external="file"
_ALIGN = 4096  # offsets in a data file we write: page-aligned, so every tensor can be memory-mapped


@dataclass(frozen=True)
class SaveOptions:
    """``external``: "keep" the data files the model references (copied beside a model saved to
    another folder), "embed" every tensor in the model file, or write them to one "file" named after
    the model (``model.onnx.data``). ``overwrite``: replace the target even though it changed on disk
    since it was read or written. ``replace_data``: replace data files of the same name in the target
    folder that this document did not write. ``escaped_text``: write text that the file held as invalid
    UTF-8 as the escaped text onnxviz shows (``a\\xff``) once the model is edited."""

    external: External = "keep"
    overwrite: bool = False
    replace_data: bool = False
    escaped_text: bool = False


class SaveQuestion(SaveError):
    """A save that would replace or change something the user did not name. ``choices`` are the
    labelled options that answer it: the window offers them as buttons; a script passes one to
    ``Document.save``. The message names no option, so it reads the same in both."""

    def __init__(self, message: str, choices: list[tuple[str, SaveOptions]]) -> None:
        keywords = "; ".join(f"{label}: {_as_arguments(o)}" for label, o in choices)
        super().__init__(message, f"To save anyway: {keywords}.")
        self.choices = choices


class FileChangedError(SaveQuestion):
    """The target changed on disk since this document read or wrote it."""


class DataConflictError(SaveQuestion):
    """Saving would replace data files in the target folder that this document did not write."""


class TooLargeError(SaveQuestion):
    """The model does not fit in one protobuf file (2 GiB)."""


class EscapedTextError(SaveQuestion):
    """The file's text that is not valid UTF-8 would be written as the escaped text shown."""


def _as_arguments(options: SaveOptions) -> str:
    """The keyword arguments of ``Document.save`` that give ``options`` (those not at their default)."""
    default = SaveOptions()
    changed = [f"{f.name}={getattr(options, f.name)!r}" for f in fields(SaveOptions)
               if getattr(options, f.name) != getattr(default, f.name)]
    return "save(..., " + ", ".join(changed) + ")"


ModelBytes = bytes | StreamedModel  # what a save writes to the model file


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
        return cls(path, FileStamp.of(path), data if isinstance(data, bytes) else None, _length(data))

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


def _length(data: ModelBytes) -> int:
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


@dataclass(frozen=True)
class DataFile:
    """A data file a save writes anew: each piece's bytes at its offset."""

    path: Path
    pieces: list[tuple[int, Callable[[], bytes | memoryview]]]  # (offset, the bytes' source)
    size: int

    def write(self, written: Written | None) -> None:
        def produce(write: Write) -> None:
            at = 0
            for offset, source in self.pieces:
                chunk = source()
                write(b"\0" * (offset - at))
                write(chunk)
                if written is not None:
                    written(offset + len(chunk) - at)
                at = offset + len(chunk)

        atomic_write_with(self.path, produce)


@dataclass(frozen=True)
class SavePlan:
    """Every file one save writes: the model's bytes to ``target``, data files copied or written, and
    the model as written when it differs from the document's (``external`` "embed" or "file")."""

    target: Path
    data: ModelBytes
    copies: list[tuple[Path, Path]] = field(default_factory=list)  # (source, destination)
    data_file: DataFile | None = None
    written_model: onnx.ModelProto | None = None

    def size(self) -> int:
        """Bytes this plan writes in all."""
        copied = sum(source.stat().st_size for source, _ in self.copies)
        return _length(self.data) + copied + (self.data_file.size if self.data_file is not None else 0)

    def write(self, progress: ProgressFn | None = None) -> None:
        """Data first, each synced, then the model file renamed into place: a failure or a kill
        leaves the old model file whole and pointing at data that is still there. ``progress`` hears
        of every chunk written and may raise to give up (nothing is then left behind)."""
        written = _Meter(self.size(), self.target.name, progress) if progress is not None else None
        created: list[Path] = []  # data files that did not exist: removed again if the save fails
        try:
            for source, destination in self.copies:
                destination.parent.mkdir(parents=True, exist_ok=True)
                _note_new(destination, created)
                atomic_copy(source, destination, written)
            if self.data_file is not None:
                _note_new(self.data_file.path, created)
                self.data_file.write(written)
            if isinstance(self.data, bytes):
                atomic_write(self.target, self.data, written)
            else:
                self._write_streamed(self.data, written)
        except BaseException:
            for path in created:
                path.unlink(missing_ok=True)
            raise

    def _write_streamed(self, streamed: StreamedModel, written: _Meter | None) -> None:
        """The model file from its pieces; again with every big tensor measured when one is not the size its
        dims say (a malformed tensor: the first try wrote nothing)."""
        done = written.done if written is not None else 0
        try:
            atomic_write_with(self.target, lambda write: streamed.write(write, written))
        except SizeGuessWrong:
            measured = streamed.measured()
            if written is not None:
                written.done = done  # the bytes of the first try do not count
                written.total += measured.size - streamed.size
            atomic_write_with(self.target, lambda write: measured.write(write, written))

    def files(self) -> list[Path]:
        """Every file this plan writes."""
        data = [self.data_file.path] if self.data_file is not None else []
        return [self.target, *(d for _, d in self.copies), *data]


@dataclass
class _Meter:
    """Turns chunks written into progress: "Saving model.onnx: 120 of 4,096 MB"."""

    total: int
    name: str
    progress: ProgressFn
    done: int = 0

    def __call__(self, size: int) -> None:
        self.done += size
        self.progress(self.done / max(self.total, 1),
                      f"Saving {self.name}: {self.done / 2**20:,.0f} of {self.total / 2**20:,.0f} MB")


def _note_new(path: Path, created: list[Path]) -> None:
    if not path.exists() and not path.is_symlink():
        created.append(path)


@dataclass(frozen=True)
class SaveSource:
    """What a save needs to know of the document: its model and folder, the file it last read or wrote,
    whether the model still equals that file (``clean``), the files it wrote, how many of the file's
    strings it shows escaped because they are not valid UTF-8, and about how many bytes the model is."""

    model: onnx.ModelProto
    base_dir: Path | None
    disk: DiskCopy | None
    clean: bool
    written: WrittenFiles
    escaped_text: int = 0
    size_hint: int = 0
    renamed_text: int = 0  # of the escaped text, what was given another name (its escape was a name already)

    def original(self) -> bytes | None:
        """The file's own bytes while the model equals it and they are at hand, else None."""
        return self.disk.file_bytes() if self.disk is not None and self.clean else None

    def model_bytes(self, pause: Callable[[], None] | None = None) -> bytes:
        """The bytes of the model as it is now: the file's own while the model equals it."""
        original = self.original()
        return original if original is not None else serialize(self.model, pause)

    def model_output(self, pause: Callable[[], None] | None = None) -> ModelBytes:
        """What a save writes to the model file: :meth:`model_bytes`, or for an edited model of at least
        :data:`STREAM_ABOVE` bytes, its pieces, written without ever holding the whole file in memory."""
        original = self.original()
        if original is not None or self.size_hint < STREAM_ABOVE:
            return original if original is not None else serialize(self.model, pause)
        streamed = stream_model(self.model, pause)
        if streamed.size > MAX_PROTO_BYTES:
            raise _TooLarge("the model is too large to write as one file (over 2 GiB).")
        return streamed


def plan_save(source: SaveSource, target: Path, options: SaveOptions,
              pause: Callable[[], None] | None = None) -> SavePlan:
    """Every file a save of ``source`` to ``target`` writes, decided before anything is written; raises a
    :class:`SaveQuestion` where the save would replace or change what the user did not name."""
    _check_target(source, target, options)
    try:
        if options.external == "file":
            model, data_file = plan_data_file(source, target, options)
            return SavePlan(target, serialize(model, pause), data_file=data_file, written_model=model)
        if options.external == "embed" and has_external(source.model):
            model = embedded(source.model, source.base_dir)
            return SavePlan(target, serialize(model, pause), written_model=model)
        copies = plan_copies(source, target, options)
        return SavePlan(target, source.model_output(pause), copies)
    except _TooLarge as exc:
        raise TooLargeError(
            "the model is too large to write as one file (over 2 GiB); its weights can go to a data file "
            f"beside it ({data_file_for(target).name}).",
            [("Save Weights Separately", replace(options, external="file"))]) from exc


def _check_target(source: SaveSource, target: Path, options: SaveOptions) -> None:
    """Refuse a folder; ask before replacing changes another program made to the document's file, and
    before writing text that was not valid UTF-8 as its escaped form."""
    if target.is_dir():
        raise SaveError(f"{target} is a folder; choose a file name.")
    disk = source.disk
    if not options.overwrite and disk is not None and disk.path == target and disk.changed_on_disk():
        raise FileChangedError(f"{target.name} was changed on disk by another program since onnxviz "
                               "read or saved it; saving would replace those changes.",
                               [("Overwrite", replace(options, overwrite=True))])
    if source.escaped_text and not options.escaped_text and source.original() is None:
        raise EscapedTextError(
            f"{source.escaped_text} name{'s' if source.escaped_text > 1 else ''} in this model "
            f"{'are' if source.escaped_text > 1 else 'is'} not valid UTF-8 and would be saved as the escaped "
            "text onnxviz shows (e.g. '\\xff')" + _renamed_note(source.renamed_text) + ".",
            [("Save Escaped", replace(options, escaped_text=True))])


def _renamed_note(renamed: int) -> str:
    if not renamed:
        return ""
    names = "name's escape was" if renamed == 1 else "names' escapes were"
    return (f"; {renamed} {names} already another name of the model, so {'it is' if renamed == 1 else 'they are'}"
            " saved with a suffix ('a\\xff~1'), as shown")


def plan_copies(source: SaveSource, target: Path, options: SaveOptions) -> list[tuple[Path, Path]]:
    """The data files a save to ``target`` copies: those the model references, when the target's folder
    is not theirs. A destination that exists is left alone when it already holds the same bytes,
    replaced when this document wrote it, and otherwise refused (:class:`DataConflictError`)."""
    base_dir = source.base_dir
    if base_dir is None or target.parent.resolve() == base_dir.resolve():
        return []
    copies, conflicts = [], []
    for location, tensor_name in _locations(source.model).items():
        data = _resolved(base_dir, location, tensor_name)
        destination = target.parent / location
        if not destination.exists() and not destination.is_symlink():
            copies.append((data, destination))
        elif source.written.wrote(destination) or options.replace_data:
            copies.append((data, destination))
        elif not same_files(data, destination):
            conflicts.append(destination)
    if conflicts:
        names = ", ".join(f"'{p.name}'" for p in conflicts[:3]) + (" and others" if len(conflicts) > 3 else "")
        own = data_file_for(target)
        separate = [] if own.exists() or own.is_symlink() else \
            [(f"Save Weights as {own.name}", replace(options, external="file"))]
        raise DataConflictError(
            f"the folder '{target.parent.name}' already holds {names}, which saving would replace with this "
            "model's weights although "
            "another model may use it.", [*separate, ("Replace", replace(options, replace_data=True))])
    return copies


def data_file_for(target: Path) -> Path:
    """The data file of ``external="file"``: named after the model file (``model.onnx.data``)."""
    return target.with_name(target.name + ".data")


def plan_data_file(source: SaveSource, target: Path, options: SaveOptions) -> tuple[onnx.ModelProto, DataFile]:
    """A copy of the model whose big tensors point into one data file named after ``target``, and that
    file's pieces, read from the model (or its data files) only when written."""
    model, base_dir = source.model, source.base_dir
    path = data_file_for(target)
    if (path.exists() or path.is_symlink()) and not (source.written.wrote(path) or options.replace_data):
        raise DataConflictError(f"{path.name} already exists beside {target.name}; saving would replace it.",
                                [("Replace", replace(options, replace_data=True))])
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    pieces: list[tuple[int, Callable[[], bytes | memoryview]]] = []
    offset = end = 0
    for old, new in zip(iter_all_tensors(model), iter_all_tensors(copy), strict=True):
        read = _source_of(old, base_dir)
        size = len(read())  # an external tensor's bytes are memory-mapped, an inline one's copied once
        if not is_external(old) and size < DATA_THRESHOLD:
            continue
        _point_into(new, path.name, offset, size)
        pieces.append((offset, read))
        end = offset + size
        offset += -(-size // _ALIGN) * _ALIGN
    return copy, DataFile(path, pieces, end)


def _source_of(tensor: onnx.TensorProto, base_dir: Path | None) -> Callable[[], bytes | memoryview]:
    if is_external(tensor):
        return lambda: _external_bytes(tensor, base_dir)
    return lambda: tensor.raw_data


def _external_bytes(tensor: onnx.TensorProto, base_dir: Path | None) -> memoryview:
    if base_dir is None:
        raise SaveError(f"tensor '{tensor.name}' is stored externally, but the model has no folder.")
    try:
        return read_external_bytes(tensor, base_dir)
    except OnnxvizError as exc:
        raise SaveError(f"the weights could not be read: {exc.message}", exc.details) from exc


def _point_into(tensor: onnx.TensorProto, location: str, offset: int, size: int) -> None:
    """Mark ``tensor`` as stored at ``offset`` of ``location``, its bytes no longer inline."""
    del tensor.external_data[:]
    for key, value in (("location", location), ("offset", str(offset)), ("length", str(size))):
        tensor.external_data.add(key=key, value=value)
    tensor.ClearField("raw_data")
    tensor.data_location = onnx.TensorProto.EXTERNAL


class _TooLarge(SaveError):
    """The model does not fit in one protobuf file; :func:`plan_save` says what to do about it."""


def serialize(model: onnx.ModelProto, pause: Callable[[], None] | None = None) -> bytes:
    """The model's bytes; a SaveError when they do not fit in one protobuf file (2 GiB)."""
    message = "the model is too large to write as one file (over 2 GiB)."
    try:
        data = serialize_in_slices(model, pause) if pause is not None else model.SerializeToString()
    except ValueError as exc:  # protobuf's EncodeError: over 2 GiB
        raise _TooLarge(message, str(exc)) from exc
    if len(data) > MAX_PROTO_BYTES:
        raise _TooLarge(message)
    return data


def embedded(model: onnx.ModelProto, base_dir: Path | None) -> onnx.ModelProto:
    """A copy of ``model`` with every external tensor's bytes inside it."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    for tensor in iter_all_tensors(copy):
        if is_external(tensor):
            tensor.raw_data = bytes(_external_bytes(tensor, base_dir))
            del tensor.external_data[:]
            tensor.data_location = onnx.TensorProto.DEFAULT
    return copy


def has_external(model: onnx.ModelProto) -> bool:
    return any(is_external(t) for t in iter_all_tensors(model))


def _locations(model: onnx.ModelProto) -> dict[str, str]:
    """Each data file the model references, with the name of a tensor stored in it."""
    out: dict[str, str] = {}
    for tensor in iter_all_tensors(model):
        if is_external(tensor):
            try:
                out.setdefault(external_ref(tensor).location, tensor.name)
            except OnnxvizError as exc:
                raise SaveError(exc.message, exc.details) from exc
    return out


def _resolved(base_dir: Path, location: str, tensor_name: str) -> Path:
    try:
        return resolve_location(base_dir, location, tensor_name)
    except OnnxvizError as exc:
        raise SaveError(f"external data '{location}' could not be copied: {exc.message}", exc.details) from exc
