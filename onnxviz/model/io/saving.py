"""What a save writes, and the questions it must not answer on the user's behalf.

The one place that decides which files go to disk. A save writes the model file and, when the model
keeps weights in external data files and goes to another folder, copies of those files. It never
replaces a file the user did not name:

* the model file itself, when another program changed it since this document read or wrote it
  (:class:`FileChangedError`; ``SaveOptions.overwrite`` answers yes);
* a data file of the same name that another model in the target folder uses
  (:class:`DataConflictError`; ``SaveOptions.replace_data`` answers yes, or ``external="file"`` writes
  the weights under a name derived from the new model file instead).

Nor does it write a model the window never showed: a model pointing at a data file another program
changed since it was read (:class:`DataChangedError`: the weights read can go to a new data file while the
file that held them is still held), or, over a file that had no errors, a model that has some
(:class:`InvalidModelError`; ``SaveOptions.allow_errors`` answers yes). A save that writes data files
commits in one step (:mod:`onnxviz.model.io.commit`): its data files never take the place of one the model
being replaced reads.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Literal

import onnx

from onnxviz.model.errors import OnnxvizError, SaveError
from onnxviz.model.io.commit import Journal, family, mentions, recover
from onnxviz.model.io.disk import (
    CheckedFile,
    Written,
    atomic_copy,
    atomic_write,
    atomic_write_with,
    same_files,
)
from onnxviz.model.io.external import (
    external_ref,
    is_external,
    iter_all_tensors,
    read_external_bytes,
    resolve_location,
)
from onnxviz.model.io.file_copy import (
    STREAM_ABOVE,
    DiskCopy,
    ModelBytes,
    ModelTooLarge,
    WrittenFiles,
    model_bytes,
    output_size,
    serialize,
)
from onnxviz.model.io.held import DataFiles, DataState, same_bytes
from onnxviz.model.io.loading import MAX_PROTO_BYTES
from onnxviz.model.io.streaming import SizeGuessWrong, StreamedModel, stream_model
from onnxviz.model.progress import ProgressFn

External = Literal["keep", "embed", "file"]
EXTERNAL_CHOICES: tuple[External, ...] = ("keep", "embed", "file")
DATA_THRESHOLD = 1024  # tensors of at least this many bytes go to the data file of external="file"
_ALIGN = 4096  # offsets in a data file we write: page-aligned, so every tensor can be memory-mapped


@dataclass(frozen=True)
class SaveOptions:
    """``external``: "keep" the data files the model references (copied beside a model saved to
    another folder), "embed" every tensor in the model file, or write them to one "file" named after
    the model (``model.onnx.data``). ``overwrite``: replace the target even though it changed on disk
    since it was read or written. ``replace_data``: replace data files of the same name in the target
    folder that this document did not write. ``escaped_text``: write text that the file held as invalid
    UTF-8 as the escaped text onnxviz shows (``a\\xff``) once the model is edited. ``allow_errors``: replace
    a file that had no errors with a model that has some."""

    external: External = "keep"
    overwrite: bool = False
    replace_data: bool = False
    escaped_text: bool = False
    allow_errors: bool = False


class SaveNotice(UserWarning):
    """What a user should know of a save that succeeded (``Document.save`` warns with it; the window says it)."""


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


class InvalidModelError(SaveQuestion):
    """The model has errors and would replace its file, which had none (the window also offers Save As)."""


class DataChangedError(SaveQuestion):
    """A data file the model reads changed on disk since it was read: the saved model would read weights the
    window never showed. ``lost``: the weights read are gone (rewritten in place); only reloading helps (the
    window offers Reload), else they can go to a new data file (``external="file"``)."""

    def __init__(self, message: str, choices: list[tuple[str, SaveOptions]], lost: bool) -> None:
        super().__init__(message, choices)
        self.lost = lost
        if not choices:
            self.details = "Reload the model (onnxviz.open) to save it with the data now on disk."


def external_choice(external: str) -> External:
    """``external`` as one of :data:`EXTERNAL_CHOICES`; a SaveError naming them when it is none."""
    for choice in EXTERNAL_CHOICES:
        if external == choice:
            return choice
    raise SaveError(f"external must be one of {', '.join(map(repr, EXTERNAL_CHOICES))}, not {external!r}.")


def _as_arguments(options: SaveOptions) -> str:
    """The keyword arguments of ``Document.save`` that give ``options`` (those not at their default)."""
    default = SaveOptions()
    changed = [f"{f.name}={getattr(options, f.name)!r}" for f in fields(SaveOptions)
               if getattr(options, f.name) != getattr(default, f.name)]
    return "save(..., " + ", ".join(changed) + ")"


@dataclass(frozen=True)
class DataFile:
    """A data file a save writes anew: each piece's bytes at its offset."""

    path: Path
    pieces: list[tuple[int, Callable[[], bytes | memoryview]]]  # (offset, the bytes' source)
    size: int

    def write(self, written: Written | None) -> None:
        def produce(file: CheckedFile) -> None:
            at = 0
            for offset, source in self.pieces:
                chunk = source()
                file.write(b"\0" * (offset - at))
                file.write(chunk)
                if written is not None:
                    written(offset + len(chunk) - at)
                at = offset + len(chunk)

        atomic_write_with(self.path, produce, self.size, follow_link=False)


@dataclass(frozen=True)
class Copy:
    """A data file copied beside a model saved to another folder: from ``source`` (read through ``fd``, the
    file the model was read from, when it is held) to ``destination``."""

    source: Path
    destination: Path
    fd: int | None = None

    def size(self) -> int:
        return os.fstat(self.fd).st_size if self.fd is not None else self.source.stat().st_size


@dataclass(frozen=True)
class SavePlan:
    """Every file one save writes: the model's bytes to ``target``, data files copied or written, and
    the model as written when it differs from the document's (``external`` "embed" or "file", or data files
    copied under new names). ``journal``: the data files the save creates and retires (see
    :mod:`onnxviz.model.io.commit`); ``notes``: what the user should know once it is written."""

    target: Path
    data: ModelBytes
    copies: list[Copy] = field(default_factory=list)
    data_file: DataFile | None = None
    written_model: onnx.ModelProto | None = None
    journal: Journal | None = None
    notes: list[str] = field(default_factory=list)

    def size(self) -> int:
        """Bytes this plan writes in all."""
        copied = sum(copy.size() for copy in self.copies)
        return output_size(self.data) + copied + (self.data_file.size if self.data_file is not None else 0)

    def write(self, progress: ProgressFn | None = None) -> None:
        """Data first, each synced, then the model file renamed into place, the one step that commits the
        save: a failure or a kill leaves the old model file whole and reading the data it read. ``progress``
        hears of every chunk written and may raise to give up (nothing is then left behind)."""
        written = _Meter(self.size(), self.target.name, progress) if progress is not None else None
        recover(self.target.parent)
        journal = self.journal or Journal(self.target)
        journal.begin()
        try:
            for copy in self.copies:
                copy.destination.parent.mkdir(parents=True, exist_ok=True)
                atomic_copy(copy.source, copy.destination, written, source_fd=copy.fd)
            if self.data_file is not None:
                self.data_file.write(written)
            if isinstance(self.data, bytes):
                atomic_write(self.target, self.data, written)
            else:
                self._write_streamed(self.data, written)
        except BaseException:
            journal.abandon()
            raise
        journal.finish()

    def _write_streamed(self, streamed: StreamedModel, written: _Meter | None) -> None:
        """The model file from its pieces; again with every big tensor measured when one is not the size its
        dims say (a malformed tensor: the first try wrote nothing)."""
        done = written.done if written is not None else 0
        try:
            atomic_write_with(self.target, lambda file: streamed.write(file.write, written), streamed.size)
        except SizeGuessWrong:
            measured = streamed.measured()
            if written is not None:
                written.done = done  # the bytes of the first try do not count
                written.total += measured.size - streamed.size
            atomic_write_with(self.target, lambda file: measured.write(file.write, written), measured.size)

    def files(self) -> list[Path]:
        """Every file this plan writes."""
        data = [self.data_file.path] if self.data_file is not None else []
        return [self.target, *(c.destination for c in self.copies), *data]


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


@dataclass(frozen=True)
class SaveSource:
    """What a save needs to know of the document: its model and folder, the file it last read or wrote,
    whether the model still equals that file (``clean``), the files it wrote, how many of the file's
    strings it shows escaped because they are not valid UTF-8, about how many bytes the model is, the data
    files it read (``data_files``), its errors now (``errors``, first ones) and whether its file had none
    (``file_valid``)."""

    model: onnx.ModelProto
    base_dir: Path | None
    disk: DiskCopy | None
    clean: bool
    written: WrittenFiles
    escaped_text: int = 0
    size_hint: int = 0
    data_files: DataFiles | None = None
    errors: list[str] = field(default_factory=list)
    file_valid: bool = False
    renamed_text: int = 0  # of the escaped text, what was given another name (its escape was a name already)

    def original(self) -> bytes | None:
        """The file's own bytes while the model equals it and they are at hand, else None."""
        return self.disk.file_bytes() if self.disk is not None and self.clean else None

    def model_bytes(self, pause: Callable[[], None] | None = None) -> bytes:
        """The bytes of the model as it is now: the file's own while the model equals it."""
        return model_bytes(self.model, self.disk if self.clean else None, pause)

    def model_output(self, pause: Callable[[], None] | None = None) -> ModelBytes:
        """What a save writes to the model file: :meth:`model_bytes`, or for an edited model of at least
        :data:`STREAM_ABOVE` bytes, its pieces, written without ever holding the whole file in memory."""
        original = self.original()
        if original is not None or self.size_hint < STREAM_ABOVE:
            return original if original is not None else serialize(self.model, pause)
        return output_of(self.model, pause)

    def reads_unchanged(self, path: Path) -> bool:
        """Whether ``path`` is a data file this document read from its folder and nothing changed since."""
        if self.data_files is None or self.base_dir is None or path.parent != self.base_dir:
            return False
        location = path.name
        return location in self.data_files.files and location not in self.data_files.changed()

    def tensor_bytes(self, tensor: onnx.TensorProto) -> bytes | memoryview:
        """An external tensor's bytes as they were read: from the held data file when it is held."""
        held = self.data_files.tensor_bytes(tensor) if self.data_files is not None else None
        return held if held is not None else _external_bytes(tensor, self.base_dir)


def output_of(model: onnx.ModelProto, pause: Callable[[], None] | None = None) -> StreamedModel:
    """``model``'s pieces, written a piece at a time (see :mod:`onnxviz.model.io.streaming`)."""
    streamed = stream_model(model, pause)
    if streamed.size > MAX_PROTO_BYTES:
        raise ModelTooLarge("the model is too large to write as one file (over 2 GiB).")
    return streamed


def plan_save(source: SaveSource, target: Path, options: SaveOptions,
              pause: Callable[[], None] | None = None) -> SavePlan:
    """Every file a save of ``source`` to ``target`` writes, decided before anything is written; raises a
    :class:`SaveQuestion` where the save would replace or change what the user did not name."""
    _check_target(source, target, options)
    _check_data(source, target, options)
    notes = link_notes(target)
    try:
        if options.external == "file":
            model, data_file, journal = plan_data_file(source, target, options)
            return SavePlan(target, serialize(model, pause), data_file=data_file, written_model=model,
                            journal=journal, notes=notes)
        if options.external == "embed" and has_external(source.model):
            model = embedded(source)
            journal = Journal(target, old=retired(source, target, options))
            return SavePlan(target, serialize(model, pause), written_model=model, journal=journal, notes=notes)
        copies, journal, renamed = plan_copies(source, target, options)
        if renamed:
            model = relocated(source.model, renamed)
            output = serialize(model, pause) if source.size_hint < STREAM_ABOVE else output_of(model, pause)
            return SavePlan(target, output, copies, written_model=model, journal=journal, notes=notes)
        return SavePlan(target, source.model_output(pause), copies, journal=journal, notes=notes)
    except ModelTooLarge as exc:
        raise TooLargeError(
            "the model is too large to write as one file (over 2 GiB); its weights can go to a data file "
            f"beside it ({data_file_for(target).name}).",
            [("Save Weights Separately", replace(options, external="file"))]) from exc


def link_notes(target: Path) -> list[str]:
    """What a user should know of a save of ``target`` that replaces a file with other names (hard links)."""
    try:
        links = os.stat(target).st_nlink
    except OSError:
        return []
    if links <= 1:
        return []
    others = links - 1
    return [f"{target.name} had {others} other name{'s' if others > 1 else ''} (hard link{'s' if others > 1 else ''}), "
            f"which still hold{'' if others > 1 else 's'} the model as it was before this save."]


def _check_target(source: SaveSource, target: Path, options: SaveOptions) -> None:
    """Refuse a folder; ask before replacing changes another program made to the document's file, before
    writing text that was not valid UTF-8 as its escaped form, and before a model with errors replaces a
    file that had none."""
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
    if (not options.allow_errors and source.errors and source.file_valid and not source.clean
            and disk is not None and disk.path == target and target.exists()):
        count = len(source.errors)
        first = source.errors[0].split(". ", 1)[0].rstrip(".")  # its first sentence, in at most 120 characters
        first = first if len(first) <= 120 else first[:119] + "…"
        raise InvalidModelError(
            f"the model now has {count} error{'s' if count > 1 else ''} (first: {first}) and would replace "
            f"{target.name}, which had none.", [("Save Anyway", replace(options, allow_errors=True))])


def _renamed_note(renamed: int) -> str:
    if not renamed:
        return ""
    names = "name's escape was" if renamed == 1 else "names' escapes were"
    return (f"; {renamed} {names} already another name of the model, so {'it is' if renamed == 1 else 'they are'}"
            " saved with a suffix ('a\\xff~1'), as shown")


def _check_data(source: SaveSource, target: Path, options: SaveOptions) -> None:
    """Ask before the saved model would read a data file that changed since it was read (see
    :class:`DataChangedError`); a save that writes the weights read (into a new data file, the model file, or
    copies in another folder) needs no answer while they are held."""
    changed = source.data_files.changed() if source.data_files is not None else {}
    if not changed:
        return
    names = _names([target.parent / location for location in changed])
    if any(state is DataState.LOST for state in changed.values()):
        raise DataChangedError(f"{names} changed on disk (another program rewrote it) since onnxviz read it, and "
                               "the weights onnxviz showed are no longer there; reload the model to save it.", [],
                               lost=True)
    elsewhere = source.base_dir is not None and target.parent != source.base_dir
    if options.external in ("file", "embed") or elsewhere:
        return  # the weights read, from the held files, are what is written
    answer = replace(options, external="file")
    try:
        label = f"Save Weights as {_data_path(source, target, answer)[0].name}"
    except SaveQuestion:
        label = "Save Weights to a New File"
    raise DataChangedError(f"{names} was replaced on disk by another program since onnxviz read it; saving would "
                           f"make {target.name} read weights onnxviz never showed.", [(label, answer)], lost=False)


def _names(paths: list[Path]) -> str:
    return ", ".join(f"'{p.name}'" for p in paths[:3]) + (" and others" if len(paths) > 3 else "")


def plan_copies(source: SaveSource, target: Path,
                options: SaveOptions) -> tuple[list[Copy], Journal, dict[str, str]]:
    """The data files a save to ``target`` copies: those the model references, when the target's folder is not
    theirs, each read from the file it was read from (held). A destination that exists is left alone when it
    already holds the same bytes, replaced when this document wrote it, and otherwise refused
    (:class:`DataConflictError`). One the file being replaced reads is never replaced before the commit: the
    copy gets a name of its own (returned, old location to new) and the old one goes after it."""
    base_dir = source.base_dir
    journal = Journal(target)
    if base_dir is None or target.parent.resolve() == base_dir.resolve():
        return [], journal, {}
    copies, conflicts, renamed = [], [], {}
    for location, tensor_name in _locations(source.model).items():
        fd = source.data_files.fd(location) if source.data_files is not None else None
        data = base_dir / location if fd is not None else _resolved(base_dir, location, tensor_name)
        destination = target.parent / location
        exists = destination.exists() or destination.is_symlink()
        ours = source.written.wrote(destination) or options.replace_data
        read_there = mentions(target, location)
        if exists and (read_there or not ours) and _same_as_held(data, fd, destination):
            continue  # the same bytes: kept as they are
        if exists and not ours:
            conflicts.append(destination)
        elif read_there:  # the model being replaced reads it: a name of its own until the commit
            fresh = fresh_location(target, location)
            renamed[location] = fresh
            copies.append(Copy(data, target.parent / fresh, fd))
            journal.new.append(fresh)
            if exists:
                journal.old.append(location)
        else:
            copies.append(Copy(data, destination, fd))
            if not exists:
                journal.new.append(location)
    if conflicts:
        own = data_file_for(target)
        separate = [] if own.exists() or own.is_symlink() else \
            [(f"Save Weights as {own.name}", replace(options, external="file"))]
        raise DataConflictError(
            f"the folder '{target.parent.name}' already holds {_names(conflicts)}, which saving would replace with "
            "this model's weights although another model may use it.",
            [*separate, ("Replace", replace(options, replace_data=True))])
    return copies, journal, renamed


def _same_as_held(data: Path, fd: int | None, destination: Path) -> bool:
    return same_files(data, destination) if fd is None else same_bytes(fd, destination)


def fresh_location(target: Path, location: str) -> str:
    """A name for data file ``location`` beside ``target`` that no file has and the file at ``target`` does not
    mention: ``model.onnx.1.data`` for ``model.onnx.data``, ``weights.2.bin`` for ``weights.bin``."""
    head, dot, suffix = location.rpartition(".")
    stem, end = (head, dot + suffix) if head and "/" not in suffix else (location, "")
    for n in range(1, 10_000):
        candidate = f"{stem}.{n}{end}"
        path = target.parent / candidate
        if not (path.exists() or path.is_symlink() or mentions(target, candidate)):
            return candidate
    raise SaveError(f"no free name was found for a data file beside {target.name}.")


def relocated(model: onnx.ModelProto, renamed: dict[str, str]) -> onnx.ModelProto:
    """A copy of ``model`` whose external tensors read the data files ``renamed`` gives instead."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    for tensor in iter_all_tensors(copy):
        if is_external(tensor):
            for entry in tensor.external_data:
                if entry.key == "location" and entry.value in renamed:
                    entry.value = renamed[entry.value]
    return copy


def data_file_for(target: Path) -> Path:
    """The data file of ``external="file"``: named after the model file (``model.onnx.data``)."""
    return target.with_name(target.name + ".data")


def _data_path(source: SaveSource, target: Path, options: SaveOptions) -> tuple[Path, Journal]:
    """Where ``external="file"`` writes the weights, and the data files that save creates and retires:
    ``model.onnx.data``, or while the file being replaced reads that one, a name of its own
    (``model.onnx.1.data``); the files named after the model that the file being replaced reads go once the
    new one is in place (when this document read them unchanged, wrote them, or the user said Replace)."""
    path = data_file_for(target)
    journal = Journal(target)
    exists = path.exists() or path.is_symlink()
    ours = source.written.wrote(path) or options.replace_data or source.reads_unchanged(path)
    if mentions(target, path.name):
        path = target.parent / fresh_location(target, path.name)
    elif exists and not ours:
        raise DataConflictError(f"{path.name} already exists beside {target.name}; saving would replace it.",
                                [("Replace", replace(options, replace_data=True))])
    if not (path.exists() or path.is_symlink()):
        journal.new.append(path.name)
    journal.old += retired(source, target, options, keep=path.name)
    return path, journal


def retired(source: SaveSource, target: Path, options: SaveOptions, keep: str = "") -> list[str]:
    """The data files a save to ``target`` that writes the weights anew leaves unused: those named after the model
    that the file being replaced reads, when this document read them unchanged or wrote them, or the user
    said Replace (removed once the new model is in place; see :mod:`onnxviz.model.io.commit`)."""
    return [name for name in _family_files(target) if name != keep and mentions(target, name)
            and (source.written.wrote(target.parent / name) or options.replace_data
                 or source.reads_unchanged(target.parent / name))]


def _family_files(target: Path) -> list[str]:
    """The files beside ``target`` named as its data files are (``model.onnx.data``, ``model.onnx.2.data``)."""
    try:
        names = os.listdir(target.parent)
    except OSError:
        return []
    return sorted(n for n in names if family(target, n))


def plan_data_file(source: SaveSource, target: Path,
                   options: SaveOptions) -> tuple[onnx.ModelProto, DataFile, Journal]:
    """A copy of the model whose big tensors point into one data file named after ``target`` (see
    :func:`_data_path`), and that file's pieces, read from the model (or the data files it was read from)
    only when written."""
    path, journal = _data_path(source, target, options)
    copy = onnx.ModelProto()
    copy.CopyFrom(source.model)
    pieces: list[tuple[int, Callable[[], bytes | memoryview]]] = []
    offset = end = 0
    for old, new in zip(iter_all_tensors(source.model), iter_all_tensors(copy), strict=True):
        read = _source_of(old, source)
        size = len(read())  # an external tensor's bytes are memory-mapped, an inline one's copied once
        if not is_external(old) and size < DATA_THRESHOLD:
            continue
        _point_into(new, path.name, offset, size)
        pieces.append((offset, read))
        end = offset + size
        offset += -(-size // _ALIGN) * _ALIGN
    return copy, DataFile(path, pieces, end), journal


def _source_of(tensor: onnx.TensorProto, source: SaveSource) -> Callable[[], bytes | memoryview]:
    if is_external(tensor):
        return lambda: source.tensor_bytes(tensor)
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


def embedded(source: SaveSource) -> onnx.ModelProto:
    """A copy of the model with every external tensor's bytes inside it (as they were read)."""
    copy = onnx.ModelProto()
    copy.CopyFrom(source.model)
    for tensor in iter_all_tensors(copy):
        if is_external(tensor):
            tensor.raw_data = bytes(source.tensor_bytes(tensor))
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
