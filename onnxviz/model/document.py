"""The document: the ModelProto as loaded, changed only through undoable commands."""

from __future__ import annotations

import os
import threading
import warnings
import weakref
from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

import onnx

from onnxviz.model.background.contained import validated
from onnxviz.model.background.early import EarlyAnalysis
from onnxviz.model.editing.commands import Command, UndoStack
from onnxviz.model.editing.names import NameLookup
from onnxviz.model.editing.target import REBUILD, EditTarget, IndexEffect
from onnxviz.model.errors import EditError, SaveError
from onnxviz.model.events import Signal
from onnxviz.model.graph.checks import invalid_utf8_problems, renamed_escapes
from onnxviz.model.graph.index import ModelIndex, index_escaping_text
from onnxviz.model.graph.tensors import RawLengths
from onnxviz.model.graph.validation import InferenceResult, ValidationResult, has_error, without_weight_data
from onnxviz.model.io.commit import recover
from onnxviz.model.io.digest import digest_of
from onnxviz.model.io.disk import FileStamp
from onnxviz.model.io.external import external_data_problems, is_external, iter_all_tensors
from onnxviz.model.io.file_copy import STREAM_ABOVE, DiskCopy, ModelBytes, WrittenFiles, model_bytes
from onnxviz.model.io.held import DataFiles
from onnxviz.model.io.loading import read_model_file, read_text_model_file
from onnxviz.model.io.slices import serialize_in_slices
from onnxviz.model.problems import Problem, Severity
from onnxviz.model.selection import Selection

if TYPE_CHECKING:
    from onnxviz.model.editing.editor import Editor
    from onnxviz.model.io.saving import External, SaveOptions, SavePlan, SaveSource


class ChangeKind(str, Enum):
    """What a :class:`Change` reports (a str, so ``kind == "saved"`` reads as before)."""

    EDIT = "edit"
    UNDO = "undo"
    REDO = "redo"
    SAVED = "saved"
    VALIDATED = "validated"

    @property
    def changes_model(self) -> bool:
        """An edit, undo or redo: the model itself changed (a save or a validation does not)."""
        return self in (ChangeKind.EDIT, ChangeKind.UNDO, ChangeKind.REDO)


@dataclass(frozen=True)
class Change:
    """Sent once per command, undo or redo (never per node): views refresh from the document."""

    label: str
    kind: ChangeKind
    # of an edit, undo or redo that left the graph's structure alone (the index was updated in place):
    # the main-graph nodes whose names, doc strings or non-graph attributes changed (empty: none, e.g.
    # metadata); None when anything may have changed
    nodes: frozenset[int] | None = None


class Document:
    """An open model. ``model`` is the document of record; ``index`` is derived from it.

    Edit it through ``doc.edit`` (an :class:`~onnxviz.model.editing.editor.Editor`: each edit one undoable
    command); ``node_ids`` holds a stable id per main-graph node. The document itself keeps the model,
    its undo stack, what is derived from it (index, problems) and its file.
    """

    def __init__(self, model: onnx.ModelProto, path: Path | None = None, original: bytes | None = None,
                 stamp: FileStamp | None = None, *, data_dir: Path | None = None) -> None:
        """``original``: the bytes ``model`` was parsed from, read from ``path`` when it had ``stamp``
        (taken before reading, so a change made meanwhile is noticed at the next save). ``data_dir``: where
        external data is read from while the model has no ``path`` (see :meth:`part_of`)."""
        self.target = EditTarget(model)  # what commands change: the model and its nodes' ids
        self.names = NameLookup(self.target)  # which node a name refers to, which names are taken
        self._editor: Callable[[], Editor | None] = lambda: None  # see edit
        self.path = path
        self.untitled_name = "untitled.onnx"  # the name of a model in no file (one from Python: see open_copy)
        self._data_dir = data_dir
        self._never_saved = False  # a part made from another model, in no file yet: see part_of
        self.escaped_text: list[tuple[bytes, str]] = []  # see _first_index
        self._text_checked = False
        self._disk = DiskCopy(path, stamp or FileStamp.of(path), original, len(original)) \
            if path and original else None
        self._written = WrittenFiles()
        self._serialized: tuple[int, bytes] | None = None  # the model's bytes in one state (generation)
        self._analysed: tuple[int, bytes] | None = None  # the same for analysis_bytes, when they differ
        self._digested: tuple[bytes, bytes] | None = None  # (analysis bytes, their digest): see analysis_digest
        self._digesting = threading.Lock()
        self.undo_stack = UndoStack()
        self.selection = Selection()
        self.changed: Signal[Change] = Signal()
        self.has_external_data = False  # set with the load problems
        external = _external_tensors(self.model)
        self.load_problems: list[Problem] = self._load_problems(external)
        self.data_files = self._hold_data_files(external)
        self.validation_problems: list[Problem] = []
        self._validated = -1  # the generation validation_problems belong to
        self._index: ModelIndex | None = None
        self._swapped_out: ModelIndex | None = None  # the index of a model object a command swapped out
        self._inferred: dict[str, dict[str, onnx.TypeProto]] = {}
        self.generation = 0  # bumped by every change; background results for older ones are stale
        self._file_valid = False  # whether the file's state (the undo stack's clean one) had no errors
        self.save_notes: list[str] = []  # what the last save told (other names of a hard-linked file)
        self.early: EarlyAnalysis | None = None  # the analysis of its file started as it was opened, if any

    @property
    def edit(self) -> Editor:
        """The edits of this document, each one undoable (:class:`~onnxviz.model.editing.editor.Editor`).

        One editor as long as anything holds it (``doc.edit is doc.edit``). The editor refers to the
        document and the document keeps it by a weak reference only: both ways strong would be a cycle,
        and a replaced document must go by reference counting alone, without the cycle collector. Made at the
        first edit, with the editing package's modules (~10 ms to import), which showing a model does not need."""
        editor = self._editor()
        if editor is None:
            from onnxviz.model.editing.editor import EditContext, Editor

            editor = Editor(EditContext(self.target, self.names, index=lambda: self.index,
                                        built_index=lambda: self._index, generation=lambda: self.generation,
                                        run=self.execute))
            self._editor = weakref.ref(editor)
        return editor

    @property
    def model(self) -> onnx.ModelProto:
        """The document of record: changed only through commands."""
        return self.target.model

    @property
    def node_ids(self) -> list[str]:
        """The stable id of each main-graph node, by position (``"#17"``)."""
        return self.target.node_ids

    # -- opening -------------------------------------------------------------------
    @classmethod
    def open(cls, path: str | os.PathLike[str], text_format: bool = False,
             pause: Callable[[], None] | None = None) -> Document:
        """Read ``path``; raises :class:`~onnxviz.model.errors.LoadError` with a clear message.

        ``text_format=True`` parses a text-format model (after a ``TextFormatError``); the
        document then has no path, so saving asks for a new binary file instead of overwriting the text.
        ``pause``: see :func:`~onnxviz.model.io.loading.read_model_file` (for a background thread).
        """
        p = Path(path)
        if text_format:
            return cls(read_text_model_file(p))
        recover(p.absolute().parent)  # what killed saves left in its folder: temporary files, unfinished data files
        stamp = FileStamp.of(p)
        model, data = read_model_file(p, pause)
        return cls(model, p.absolute(), data, stamp)

    @classmethod
    def open_copy(cls, path: str | os.PathLike[str], name: str, pause: Callable[[], None] | None = None) -> Document:
        """Read ``path``, a copy onnxviz was handed of a model held elsewhere (a Python session's:
        ``onnxviz.show``): the document has no file of its own (Save asks where to write, never into the
        copy), ``name`` is its title, its external data is read from the copy's folder, and it is unsaved only
        once edited. The copy's bytes are kept as the model's (nothing is serialized again for the checks)."""
        doc = cls.open(path, pause=pause)
        assert doc.path is not None
        doc._data_dir, doc.path, doc.untitled_name = doc.path.parent, None, name
        return doc

    @classmethod
    def part_of(cls, model: onnx.ModelProto, source: Document) -> Document:
        """A model made from ``source``'s (an extracted part), in no file yet: unsaved until it is saved
        (closing asks), and its external weights are read from ``source``'s folder meanwhile (within it
        only, as any model's; a save copies the ones it uses, see :meth:`save`)."""
        part = cls(model, data_dir=source.base_dir)
        part._never_saved = True
        return part

    def _load_problems(self, external: list[onnx.TensorProto] | None = None) -> list[Problem]:
        external = _external_tensors(self.model) if external is None else external
        self.has_external_data = bool(external)  # weights in data files: a save may copy or read them
        return external_data_problems(external, self.base_dir) + invalid_utf8_problems(self.escaped_text)

    def _hold_data_files(self, external: list[onnx.TensorProto] | None = None) -> DataFiles | None:
        """The data files the model reads, as they are now (see :mod:`onnxviz.model.io.held`): a save never
        writes a model that reads data files changed since."""
        if not self.has_external_data:
            return None
        return DataFiles.of(_external_tensors(self.model) if external is None else external, self.base_dir)

    @property
    def base_dir(self) -> Path | None:
        """The folder external data is read from: the file's, or the source's for an unsaved part."""
        return self.path.parent if self.path else self._data_dir

    @property
    def name(self) -> str:
        return self.path.name if self.path else self.untitled_name

    # -- derived data --------------------------------------------------------------
    @property
    def index(self) -> ModelIndex:
        if self._index is None:
            known = self.known_bytes()
            lengths = RawLengths(known) if known is not None else None
            self._index = ModelIndex(self.model, lengths) if self._text_checked else self._first_index(lengths)
            self._index.set_inferred(self._inferred)
        return self._index

    @property
    def built_index(self) -> ModelIndex | None:
        """The index if it is built and current (edits that move the graph's structure drop it)."""
        return self._index

    @property
    def inferred_types(self) -> dict[str, dict[str, onnx.TypeProto]]:
        """The inferred types the index reads (scope -> value -> type), without building it: one mapping per
        validation result, replaced whole when the next one comes."""
        return self._inferred

    def known_bytes(self) -> bytes | None:
        """The model's bytes in this state when at hand (its file's, or serialized for this state), else None."""
        if self._serialized is not None and self._serialized[0] == self.generation:
            return self._serialized[1]
        return self._disk.data if self._disk is not None and self.undo_stack.is_clean else None

    def _first_index(self, raw_lengths: RawLengths | None) -> ModelIndex:
        """The index of the model as opened. Protobuf hands back text that is not valid UTF-8 as bytes,
        which nothing can show or edit: the document then escapes it ('a\\xff') in the model, the one
        change it makes on its own, records it, and saves it so only when the user agrees."""
        index, self.escaped_text = index_escaping_text(self.model, raw_lengths)
        self._text_checked = True
        if self.escaped_text:
            self.load_problems = self._load_problems()
        self._file_valid = not self.undo_stack.commands and not _errors(self.load_problems + index.problems)
        return index

    def prepare(self) -> None:
        """Build what browsing and the first edit need (the index, the node-name table) now, e.g. in
        the loading thread, rather than on first use on the GUI thread (123k nodes: 0.6 s and 60 ms)."""
        _ = self.index
        self.names.nodes(self.generation, self._index)

    @property
    def problems(self) -> list[Problem]:
        index = self.index  # first: building it may escape text, a load problem
        return self.load_problems + index.problems + self.validation_problems

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

    def errors(self) -> list[str]:
        """The errors of the model as it is now, as sentences: load problems, structural ones, and validation's
        when it ran on this state (an older state's are not this model's)."""
        current = self.validation_problems if self._validated == self.generation else []
        return _errors(self.load_problems + self.index.problems + current)

    def check(self) -> list[Problem]:
        """Validate now (checker, shape inference, schema checks, then onnxruntime's load) and return all problems.
        The checks run in a worker process (:mod:`~onnxviz.model.background.contained`): a crash of onnx or
        onnxruntime on the model is one problem naming the node, never this process's end."""
        runtime = not has_error(self.index.problems)
        self.apply_validation(validated(self.analysis_bytes(), self.generation, runtime))
        return self.problems

    def invalidate(self) -> None:
        """Drop derived data after the model changed."""
        if self._index is not None:
            self._inferred = self._index.inferred  # kept until the next validation replaces them
        self._index = None  # rebuilt when next asked for

    # -- editing -------------------------------------------------------------------
    def execute(self, command: Command, index: ModelIndex | None = None) -> None:
        """Apply ``command`` and record it for undo; an EditError leaves everything as it was. ``index``: the index
        of the model object ``command`` puts in place, built beforehand off the GUI thread (a transform's result,
        see :class:`~onnxviz.model.transform.SwapModel`); ignored when it indexes another object."""
        _ = self.index  # the first index escapes text that is not valid UTF-8 before anything edits it
        before = self.model.SerializeToString() if __debug__ and _PARANOID else b""
        selected = self._selected_node_id()
        try:
            command.apply(self.target)
        except EditError:
            if before:
                assert self.model.SerializeToString() == before, "failing edit changed the model"
            raise
        if self.undo_stack.can_redo:
            self._swapped_out = None  # its model may be in the redo steps that go now: not kept for nothing
        self.undo_stack.pushed(command)
        self._after_change(Change(command.label, ChangeKind.EDIT), selected, command.index_effect(), index)

    def undo(self) -> None:
        if not self.undo_stack.can_undo:
            return
        cmd = self.undo_stack.undo_command()
        selected = self._selected_node_id()
        cmd.revert(self.target)
        self.undo_stack.undone()
        self._after_change(Change(cmd.label, ChangeKind.UNDO), selected, cmd.index_effect())

    def redo(self) -> None:
        if not self.undo_stack.can_redo:
            return
        cmd = self.undo_stack.redo_command()
        selected = self._selected_node_id()
        cmd.apply(self.target)
        self.undo_stack.redone()
        self._after_change(Change(cmd.label, ChangeKind.REDO), selected, cmd.index_effect())

    @property
    def is_dirty(self) -> bool:
        return not self.undo_stack.is_clean or self._never_saved

    def _after_change(self, change: Change, selected: str | None = None, effect: IndexEffect = REBUILD,
                      index: ModelIndex | None = None) -> None:
        self.generation += 1
        self._digested = None
        self._let_go_of_file_bytes()
        # a 123k-node index takes ~0.6 s to build: edits that leave the graph's structure alone
        # (names, descriptions, attribute values, metadata) update it in place
        if effect.rebuild or (self._index is not None and not self._index.refresh_nodes(effect.nodes)):
            before = self._index
            self.invalidate()
            self._index_swapped(before, index)
        else:  # views may refresh only these nodes too
            change = replace(change, nodes=effect.nodes)
        if not effect.rebuild:
            self.names.follow_renames(effect.nodes, self.generation)
        self.changed.emit(change)
        if selected is not None:
            self._follow_selected_node(selected)

    def _index_swapped(self, before: ModelIndex | None, given: ModelIndex | None) -> None:
        """When the command put another model object in place (a whole model swapped, or swapped back by undo or
        redo): its index, ``given`` or the one it had when it was swapped out, rather than one built on the GUI
        thread when next asked for (12k nodes: ~1 s)."""
        previous = self._swapped_out
        if before is not None and before.model is not self.model:
            self._swapped_out = before  # that object may come back, unchanged (undo, redo)
        for known in (given, previous):
            if known is not None and known.model is self.model:
                self._index, self._inferred = known, known.inferred
                return

    def _let_go_of_file_bytes(self) -> None:
        """Once a big model is edited, the bytes of its file (and of an older state) are let go: a save
        writes the model a piece at a time (see :mod:`onnxviz.model.io.streaming`), and an undo back to
        the file's state reads the file again when it needs them."""
        if self.undo_stack.is_clean or self.size_hint() < STREAM_ABOVE:
            return
        if self._disk is not None and self._disk.data is not None:
            self._disk.data = None
            if self._index is not None:
                self._index.raw_lengths = None  # read from those bytes; checks now measure the tensors
        self._serialized = None

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
        self._validated = result.generation
        if self.undo_stack.is_clean and self._disk is not None:
            self._file_valid = not self.errors()
        self.changed.emit(Change("Validation", ChangeKind.VALIDATED))
        return True

    def apply_first_problems(self, generation: int, problems: list[Problem]) -> bool:
        """Show the first problems a background pass found (the checker's and the schema checks', see
        ``first_problems``) until its result comes; the inferred types stay. False if the model changed since."""
        return self.apply_validation(ValidationResult(generation, InferenceResult(self._inferred), problems))

    # -- saving (onnxviz.model.io.saving, ~6 ms to import: at the first save or run) --------------------------
    def save_source(self) -> SaveSource:
        """What a save of this document needs to know of it (see :mod:`onnxviz.model.io.saving`)."""
        from onnxviz.model.io.saving import SaveSource

        _ = self.index  # built first: the first index decides which text is escaped
        return SaveSource(self.model, self.base_dir, self._disk, self.undo_stack.is_clean, self._written,
                          len(self.escaped_text), self.size_hint(), self.data_files,
                          renamed_text=len(renamed_escapes(self.escaped_text)))

    def serialize(self, pause: Callable[[], None] | None = None) -> bytes:
        """The model's bytes as it is now: the file's own bytes while the model equals the file it was
        read from or last saved to (the undo stack's clean state), else serialized anew.

        With ``pause``, for background threads: serialized a slice at a time (see
        :mod:`onnxviz.model.io.slices`), ``pause`` running between slices, where other threads run and
        the caller may raise to give up. Serialized once per state (``generation``)."""
        generation, cached = self.generation, self._serialized
        if cached is not None and cached[0] == generation:
            return cached[1]
        _ = self.index  # built first: the first index decides which text is escaped
        data = model_bytes(self.model, self._disk if self.undo_stack.is_clean else None, pause)
        if self.generation == generation:
            self._serialized = (generation, data)
        return data

    def model_output(self, pause: Callable[[], None]) -> ModelBytes:
        """The model as a save would write it, for a background thread (a run's worker process reads it from a
        file): the file's bytes while the model equals them, else the bytes serialized in slices, or for an edited
        big model its pieces, written a weight at a time (see :mod:`onnxviz.model.io.streaming`). ``pause`` runs
        between slices: the caller checks there that the model is still in the state it asked for."""
        return self.save_source().model_output(pause)

    def analysis_bytes(self, pause: Callable[[], None] | None = None) -> bytes:
        """What background analysis (validation, the model's figures, onnxruntime's check) reads, made once
        per state: the model's bytes (:meth:`serialize`), or for a model of more than
        :data:`ANALYSE_WHOLE_BELOW` bytes, a copy without its big weights' data (dims and types kept,
        see :func:`~onnxviz.model.graph.validation.without_weight_data`). Analysis never reads weight
        values; a worker process reading the whole file would hold the model twice more."""
        if self.analyses_whole():
            return self.serialize(pause)
        generation, cached = self.generation, self._analysed
        if cached is not None and cached[0] == generation:
            return cached[1]
        hollow = without_weight_data(self.model)
        data = serialize_in_slices(hollow, pause) if pause is not None else hollow.SerializeToString()
        if self.generation == generation:
            self._analysed = (generation, data)
        return data

    def analysis_digest(self, data: bytes) -> bytes:
        """The digest of ``data``, bytes :meth:`analysis_bytes` returned (background results are remembered
        by it), hashed once for all the threads that ask (validation, the Model panel's figures): 0.1 s at
        50 MB. Thread-safe; another bytes object is hashed anew."""
        with self._digesting:
            known = self._digested
            if known is not None and known[0] is data:  # the cache holds data: its id is not reused
                return known[1]
            digest = digest_of(data)
            self._digested = (data, digest)
            return digest

    def analyses_whole(self) -> bool:
        """Whether :meth:`analysis_bytes` are the model's own bytes (the file's, while they match it)."""
        return self.size_hint() < ANALYSE_WHOLE_BELOW

    def size_hint(self) -> int:
        """About how many bytes the model serializes to, without serializing it: the bytes of this
        state or of its file when known (edits rarely change the size much), else protobuf's count."""
        if self._serialized is not None:
            return len(self._serialized[1])
        return self._disk.size if self._disk is not None else self.model.ByteSize()

    def file_matches(self) -> bool:
        """True if the model equals its file and that file is still what this document read or wrote
        (readers may then take the file itself rather than the model's bytes)."""
        return self._disk is not None and self.undo_stack.is_clean and not self._disk.changed_on_disk()

    def save(self, path: str | os.PathLike[str] | None = None, external: External = "keep", *,
             overwrite: bool = False, replace_data: bool = False, escaped_text: bool = False,
             allow_errors: bool = False) -> Path:
        """Write the model to ``path`` (default: where it came from); returns the path written.

        ``external="keep"`` keeps external data files (copied next to the new file when saving to
        another folder, so the saved model is complete); ``"embed"`` stores every tensor inside the
        .onnx file; ``"file"`` writes the weights to one data file named after the model
        (``model.onnx.data``). A save that would replace what the user did not name raises a
        :class:`~onnxviz.model.io.saving.SaveQuestion` saying which argument answers it: ``overwrite``
        (the file changed on disk since it was read or saved), ``replace_data`` (a same-named data
        file of another model in the target folder), ``escaped_text`` (text that was not valid UTF-8),
        ``allow_errors`` (the model has errors and its file had none), ``external="file"`` (a data file the
        model reads was replaced by another program: the weights read go to a new data file). On any
        failure the files on disk are unchanged. What the user should know of a save that succeeded (a
        hard-linked file's other names keep the old model) is a :class:`SaveNotice` warning."""
        from onnxviz.model.io.saving import SaveNotice, SaveOptions, external_choice

        options = SaveOptions(external_choice(external), overwrite=overwrite, replace_data=replace_data,
                              escaped_text=escaped_text, allow_errors=allow_errors)
        plan = self.plan_save(path, options)
        plan.write()
        saved = self.saved(plan)
        for note in plan.notes:
            warnings.warn(note, SaveNotice, stacklevel=2)
        return saved

    def plan_save(self, path: str | os.PathLike[str] | None, options: SaveOptions,
                  pause: Callable[[], None] | None = None) -> SavePlan:
        """Decide every file a save writes, writing none (see :meth:`save`); safe in a background thread
        while the model is not edited."""
        target = Path(path).absolute() if path is not None else self.path
        if target is None:
            raise SaveError("this model has no file name yet; use Save As.")
        from onnxviz.model.io.saving import plan_save

        source = self.save_source()
        if not source.clean:  # whether a model with errors would replace a file without any
            source = replace(source, errors=self.errors(), file_valid=self._file_valid)
        return plan_save(source, target, options, pause)

    def saved(self, plan: SavePlan) -> Path:
        """Take a written ``plan`` as the document's file; notifies once."""
        self._written.add_all(plan.files())
        if self._disk is None or plan.data is not self._disk.data:
            self.escaped_text = []  # the file now holds the text as shown
        moved = self.path is None or plan.target.parent != self.path.parent
        self.path = plan.target
        if plan.written_model is not None:
            self._take_written_model(plan.written_model)
        self._disk = DiskCopy.of(plan.target, plan.data)
        if plan.written_model is not None or (moved and self.has_external_data):
            self.load_problems = self._load_problems()  # data files elsewhere, or now none
            self.data_files = self._hold_data_files()  # the ones written are the ones read now
        elif self.data_files is not None:
            self.data_files = self.data_files.refreshed()  # checked unchanged by the save: as they are now
        self._file_valid = not self.errors()
        self.save_notes = plan.notes
        self.undo_stack.set_clean()
        self._never_saved = False
        self.changed.emit(Change("Save", ChangeKind.SAVED))
        return plan.target

    def _take_written_model(self, written: onnx.ModelProto) -> None:
        """After saving with the weights embedded or in a new data file, the model's tensors are the
        saved ones, and the undo history is gone (undoing would bring back references to data files
        the saved model does not use)."""
        for mine, theirs in zip(iter_all_tensors(self.model), iter_all_tensors(written), strict=True):
            mine.CopyFrom(theirs)
        self.undo_stack.clear()
        self.generation += 1  # what background work read of the tensors is stale


def _external_tensors(model: onnx.ModelProto) -> list[onnx.TensorProto]:
    return [t for t in iter_all_tensors(model) if is_external(t)]


def _errors(problems: list[Problem]) -> list[str]:
    return [p.message for p in problems if p.severity is Severity.ERROR]


ANALYSE_WHOLE_BELOW = 64 << 20  # bytes; bigger models reach background analysis without their weights' data
_PARANOID = False  # tests switch this on to assert failing edits leave the bytes unchanged
