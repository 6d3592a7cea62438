"""A state machine explores edit / undo / redo / save / Save As sequences on real models (plain, with
external data, with subgraphs and a local function), opened as a file, through a symbolic link or as one
name of a hard-linked file, while the world misbehaves: another program rewrites the model file, rewrites,
replaces or deletes a data file, killed saves leave their temporary files, the disk fills at a random chunk
of the next save, and edits leave errors. After every step:

* a save that went through wrote the document's model, its weights the ones the document read (data
  files included, as they were when read, whatever another program did to them since), and holds the
  original bytes whenever the model is back to its loaded state;
* a save that failed (the disk filled) changed no file and left the document unsaved;
* a save asks (raises its :class:`SaveQuestion`) exactly when it must: the model file changed on disk,
  another model's data file would be replaced, a data file it reads changed, or a model with errors would
  replace a file without any; nothing is written until it is answered;
* no file anywhere changed except the ones the save was allowed to write: its target (the file a link
  leads to), files this document wrote before, new files, data files it read that its new model no
  longer reads, and what the user confirmed; a symbolic link stays a link, the other names of a
  hard-linked file keep the old model;
* no temporary file or journal remains, but for those of killed saves into folders not saved to since.

``make test`` runs a short budget; ``python tests/model/io/test_save_state_machine.py --minutes N`` a long one,
printing how many sequences and operations ran clean.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import onnx
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from onnx import numpy_helper

TESTS = next(p for p in Path(__file__).resolve().parents if p.name == "tests")  # its helpers, also when run as a script
sys.path[:0] = [str(TESTS), str(TESTS.parent / "bench")]

import faulty_disk  # noqa: E402
import save_models  # noqa: E402
from random_edits import EDITS  # noqa: E402

import onnxviz  # noqa: E402
from onnxviz.model.errors import EditError, SaveError  # noqa: E402
from onnxviz.model.io import disk  # noqa: E402
from onnxviz.model.io.external import external_ref, is_external  # noqa: E402
from onnxviz.model.io.saving import (  # noqa: E402
    DataChangedError,
    DataConflictError,
    FileChangedError,
    InvalidModelError,
    SaveNotice,
)

TEMP_MARK = ".onnxviz-saving-"
NUMBERS = st.lists(st.integers(0, 10**6), min_size=8, max_size=8)
FAULTS = ["ENOSPC", "EDQUOT", "EIO", "EFBIG", "zero", "short+full"]


def _files(root: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and not p.is_symlink()}


def _arrays(model: onnx.ModelProto, base_dir: Path, data: dict[Path, bytes]) -> dict[str, np.ndarray]:
    """Every main-graph initializer's values, an external one's read from ``data`` (data files' bytes as read)."""
    out = {}
    for t in model.graph.initializer:
        if not is_external(t):
            out[t.name] = numpy_helper.to_array(t)
            continue
        ref = external_ref(t)
        raw = data[(base_dir / ref.location).absolute()]
        end = len(raw) if ref.length is None else ref.offset + ref.length
        inline = onnx.TensorProto()
        inline.CopyFrom(t)
        del inline.external_data[:]
        inline.data_location = onnx.TensorProto.DEFAULT
        inline.raw_data = raw[ref.offset:end]
        out[t.name] = numpy_helper.to_array(inline)
    return out


def _data_files(model: onnx.ModelProto, base_dir: Path) -> dict[Path, bytes]:
    """The bytes of every data file ``model`` reads from ``base_dir``, now."""
    out = {}
    for t in model.graph.initializer:
        if is_external(t):
            path = (base_dir / external_ref(t).location).absolute()
            out[path] = path.read_bytes()
    return out


class SaveMachine(RuleBasedStateMachine):
    sequences = 0
    operations = 0

    def __init__(self) -> None:
        super().__init__()
        self.root = Path(tempfile.mkdtemp(prefix="onnxviz-save-sm-"))
        self.written: set[Path] = set()   # files this document wrote
        self.stale: set[Path] = set()     # temporary files of killed saves, not yet cleaned
        self.outside_changed = False      # the model file, by another program
        self.held: dict[Path, bytes] = {}  # the bytes of each data file the document holds, now
        self.at_place: set[Path] = set()  # data files whose file held is still the one at its place
        self.full_at: tuple[int, str] | None = None  # the next save's disk fills at this chunk

    def teardown(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
        SaveMachine.sequences += 1

    @initialize(kind=st.sampled_from(sorted(save_models.BUILDERS)),
                through=st.sampled_from(["file", "symlink", "hardlink"]))
    def open_model(self, kind: str, through: str) -> None:
        home, other, fresh, store = (self.root / n for n in ("home", "other", "fresh", "store"))
        for folder in (home, other, fresh, store):
            folder.mkdir()
        built = save_models.BUILDERS[kind](home)
        self.through = through
        self.alias: Path | None = None  # the other name of a hard-linked model, or the file a link leads to
        if through == "symlink":  # the model lives in store/; home/model.onnx leads to it (its data stays in home/)
            self.alias = store / "model.onnx"
            built.rename(self.alias)
            built.symlink_to(Path("..") / "store" / "model.onnx")
        elif through == "hardlink":
            self.alias = store / "alias.onnx"
            os.link(built, self.alias)
        self.path = built
        self.alias_bytes = built.read_bytes()
        # another model in 'other' whose data file has the same name as this one's, with other weights
        save_models.with_external_data(other, scale=3.0).rename(other / "other.onnx")
        self._open(self.path)
        self.linked = through == "hardlink"  # the hard link not yet split by a save

    def _open(self, path: Path) -> None:
        self.doc = onnxviz.open(path)
        self.loaded_bytes = path.read_bytes()
        self.loaded_model = self.doc.model.SerializeToString()
        self.read = _data_files(self.doc.model, path.parent)  # the data files as this document read them
        self.file_valid = not self.doc.errors()
        self.outside_changed = False
        self._held_as_read()

    def _reload(self) -> None:
        """The user chose Reload; a data file another program deleted is first put back from a backup."""
        for path, data in self.read.items():
            if not path.exists():
                path.write_bytes(data)
        assert self.doc.path is not None
        self._open(self.doc.path)

    def _count(self) -> None:
        SaveMachine.operations += 1

    # -- edits -----------------------------------------------------------------------------
    @rule(kind=st.integers(0, len(EDITS) - 1), numbers=NUMBERS)
    def edit(self, kind: int, numbers: list[int]) -> None:
        self._count()
        for attempt in range(len(EDITS)):  # the first edit kind from ``kind`` on that applies
            it = iter(numbers)
            try:
                EDITS[(kind + attempt) % len(EDITS)](self.doc, lambda n, it=it: next(it) % n if n > 0 else 0)
                return
            except (EditError, IndexError, ZeroDivisionError, StopIteration, onnx.checker.ValidationError,
                    FileNotFoundError):
                continue  # refused, or impossible here (the weight edit reads no external data)

    @rule(position=st.integers(0, 100))
    def an_edit_that_leaves_an_error(self, position: int) -> None:
        """Removing a node without reconnecting its consumers leaves them reading a value nothing makes."""
        self._count()
        nodes = self.doc.model.graph.node
        consumed = [i for i, n in enumerate(nodes) if any(o and any(o in m.input for m in nodes) for o in n.output)]
        if consumed:
            self.doc.edit.remove_node(consumed[position % len(consumed)], reconnect=False)

    @rule()
    def undo(self) -> None:
        self._count()
        self.doc.undo()

    @rule()
    def redo(self) -> None:
        self._count()
        self.doc.redo()

    @rule()
    def undo_to_start(self) -> None:
        self._count()
        while self.doc.undo_stack.can_undo:
            self.doc.undo()

    # -- the world -------------------------------------------------------------------------
    @precondition(lambda self: self.doc.path is not None and self.doc.path.exists())
    @rule(producer=st.text("abcxyz", min_size=1, max_size=6))
    def another_program_rewrites_the_file(self, producer: str) -> None:
        self._count()
        assert self.doc.path is not None
        model = onnx.load(str(self.doc.path), load_external_data=False)
        model.producer_name = f"outside-{producer}-{time.monotonic_ns()}"
        self.doc.path.write_bytes(model.SerializeToString())  # in place: a hard link's other name too
        self.outside_changed = True
        if self.linked and self.doc.path == self.path and self.alias is not None:
            self.alias_bytes = self.alias.read_bytes()

    @precondition(lambda self: bool(self._own_data()))
    @rule(how=st.sampled_from(["replace", "rewrite in place", "delete", "same bytes", "touch"]),
          scale=st.sampled_from([2.0, -1.0]))
    def another_program_changes_a_data_file(self, how: str, scale: float) -> None:
        """Another program rewrites (in place or by rename) or deletes a data file the document reads."""
        self._count()
        path = self._own_data()[0]
        data = path.read_bytes()
        if how == "touch":
            os.utime(path, ns=(time.time_ns(), time.time_ns() + 10**9))
            return
        other = path.with_name(".other-program")
        if how == "same bytes":
            other.write_bytes(data)
            os.replace(other, path)
        elif how == "delete":
            path.unlink()
        else:
            changed = (np.frombuffer(data[: len(data) // 4 * 4], np.float32) * scale).tobytes() + data[len(data) // 4 * 4:]
            if how == "replace":
                other.write_bytes(changed)
                os.replace(other, path)
            else:
                with open(path, "r+b") as f:
                    f.write(changed)
                if path in self.at_place:  # the file the document holds: the bytes it read may be gone
                    self.held[path] = changed
        if how != "rewrite in place":
            self.at_place.discard(path)  # another file is at its place now (or none)

    @property
    def data_changed(self) -> str | None:
        """What became of the data files read: "lost" (the file held no longer holds what was read), "replaced"
        (another file, with other bytes, or none, is at its place), or None."""
        if any(self.held[p] != data for p, data in self.read.items()):
            return "lost"
        if any(not p.exists() or p.read_bytes() != data for p, data in self.read.items()):
            return "replaced"
        return None

    def _held_as_read(self) -> None:
        self.held = dict(self.read)
        self.at_place = set(self.read)

    def _own_data(self) -> list[Path]:
        return sorted(p for p in self.read if p.exists())

    @rule(folder=st.sampled_from(["home", "other", "fresh"]))
    def a_killed_save_left_its_temporary_file(self, folder: str) -> None:
        self._count()
        stale = self.root / folder / f".model.onnx{TEMP_MARK}{2**22 + 7}.tmp"  # no such process
        stale.write_bytes(b"half a model")
        self.stale.add(stale)

    @rule(at=st.integers(0, 40), fault=st.sampled_from(FAULTS))
    def the_disk_fills_during_the_next_save(self, at: int, fault: str) -> None:
        self._count()
        self.full_at = (at, fault)

    # -- saves -----------------------------------------------------------------------------
    @rule(answer=st.sampled_from(["refuse", "yes"]))
    def save(self, answer: str) -> None:
        self._count()
        assert self.doc.path is not None
        self._save(self.doc.path, answer)

    @rule(where=st.sampled_from(["home/copy.onnx", "other/model.onnx", "fresh/model.onnx", "other/other.onnx"]),
          answer=st.sampled_from(["refuse", "file", "replace", "yes"]))
    def save_as(self, where: str, answer: str) -> None:
        self._count()
        self._save(self.root / where, answer)

    @rule(answer=st.sampled_from(["refuse", "yes"]))
    def save_weights_separately(self, answer: str) -> None:
        self._count()
        assert self.doc.path is not None
        self._save(self.doc.path, answer, external="file")

    def _save(self, target: Path, answer: str, external: str = "keep") -> None:
        options: dict[str, object] = {"external": external}
        for _ in range(6):  # each question answered in turn, as the window would
            before = _files(self.root)
            expected = self._expected_weights()
            must_ask = self._must_ask(target, options)
            try:
                self._write(target, options)
            except FileChangedError:
                assert self.outside_changed and target == self.doc.path
                options["overwrite"] = True
            except DataChangedError as exc:
                assert self.data_changed is not None, "asked about data files that did not change"
                assert exc.lost == (self.data_changed == "lost")
                if exc.lost or answer == "refuse":
                    self._assert_unchanged(before, "a refused save")
                    if exc.lost:
                        self._reload()
                    return
                options["external"] = "file"
            except InvalidModelError:
                assert self.file_valid and self.doc.errors() and target == self.doc.path
                if answer == "refuse":
                    self._assert_unchanged(before, "a refused save")
                    return
                options["allow_errors"] = True
            except DataConflictError as exc:
                self._assert_unchanged(before, "a refused save")
                if answer in ("refuse", "yes") or not exc.choices:
                    return
                if answer == "replace":
                    options["replace_data"] = True
                else:
                    options["external"] = "file"
                    answer = "refuse"  # a question about that file is refused
            except disk.DiskError as exc:
                faulty_disk.one_sentence(exc.message)
                self._assert_unchanged(before, "a failed save")
                self._cleaned(target)  # the save cleaned what killed saves left in its folder first
                return
            except SaveError as exc:
                raise AssertionError(f"unexpected refusal: {exc.message}") from exc
            else:
                assert not must_ask, f"saved without asking: {must_ask}"
                self._after_save(target, before, expected, options)
                return
            self._assert_unchanged(before, "a question")
        raise AssertionError("a save kept asking")

    def _write(self, target: Path, options: dict[str, object]) -> None:
        """Save; the first time after the disk filled, on a faulty disk."""
        fault, self.full_at = self.full_at, None
        if fault is None:
            with warnings.catch_warnings(record=True) as notes:
                warnings.simplefilter("always")
                self.doc.save(target, **options)  # type: ignore[arg-type]
            self.notes = [str(n.message) for n in notes if issubclass(n.category, SaveNotice)]
            return
        at, kind = fault
        double = faulty_disk.FaultyDisk(at=at, fault=kind.split("+")[0], then_full=kind.endswith("full"))
        real, disk.SYSTEM = disk.SYSTEM, double
        try:
            with warnings.catch_warnings(record=True) as notes:
                warnings.simplefilter("always")
                self.doc.save(target, **options)  # type: ignore[arg-type]
            self.notes = [str(n.message) for n in notes if issubclass(n.category, SaveNotice)]
        finally:
            disk.SYSTEM = real
        assert not double.struck or kind == "zero", "saved although the disk failed"

    def _must_ask(self, target: Path, options: dict[str, object]) -> list[str]:
        """The questions a save to ``target`` with ``options`` must ask before writing anything."""
        asks = []
        if self.outside_changed and target == self.doc.path and not options.get("overwrite"):
            asks.append("the file changed on disk")
        if self.data_changed == "lost":
            asks.append("the weights read are gone")
        in_place = self.doc.base_dir is not None and target.parent == self.doc.base_dir
        if self.data_changed == "replaced" and options.get("external") == "keep" and in_place:
            asks.append("a data file was replaced")
        if (self.file_valid and self.doc.errors() and target == self.doc.path and self.doc.is_dirty
                and target.exists() and not options.get("allow_errors")):
            asks.append("a model with errors over a valid file")
        return asks

    def _expected_weights(self) -> dict[str, np.ndarray]:
        base = self.doc.base_dir or self.root
        return _arrays(self.doc.model, base, {**_data_files_known(self.doc.model, base), **self.read})

    def _assert_unchanged(self, before: dict[Path, bytes], what: str) -> None:
        after = {p: data for p, data in _files(self.root).items() if p not in self.stale}
        before = {p: data for p, data in before.items() if p not in self.stale}
        assert after.keys() == before.keys(), f"{what} added or removed {sorted(after.keys() ^ before.keys())}"
        for path, data in before.items():
            assert after[path] == data, f"{what} changed {path.name}"

    def _cleaned(self, target: Path) -> None:
        folders = {target.parent, Path(os.path.realpath(target)).parent}
        self.stale = {p for p in self.stale if p.parent not in folders}

    def _after_save(self, target: Path, before: dict[Path, bytes], expected: dict[str, np.ndarray],
                    options: dict[str, object]) -> None:
        after = _files(self.root)
        real = Path(os.path.realpath(target))
        allowed = {target, real} | self.written | set(self.read)
        if options.get("overwrite"):
            allowed.add(real)
        if options.get("replace_data"):
            allowed |= {p for p in before if p.parent == target.parent}
        for path, data in before.items():
            if path not in self.stale:
                assert after.get(path) == data or path in allowed, f"{path.name} changed without being named"
        self.written |= {p for p in after if p not in before or after[p] != before.get(p)}
        self._cleaned(target)
        self._check_links(target)
        self._check_file(target, expected)
        self.outside_changed = False if target == self.doc.path else self.outside_changed
        self.read = _data_files(self.doc.model, target.parent)
        self._held_as_read()
        self.file_valid = not self.doc.errors()

    def _check_links(self, target: Path) -> None:
        if self.through == "symlink" and target == self.path:
            assert self.path.is_symlink(), "the link was replaced by a file"
            assert self.alias is not None and self.alias.read_bytes() == self.path.read_bytes()
        if self.through == "hardlink" and target == self.path:
            assert self.alias is not None and self.alias.read_bytes() == self.alias_bytes, \
                "the other name of a hard-linked file changed"
            assert bool(self.notes) == self.linked, "a hard-linked file's other name was not told of"
            self.linked = False

    def _check_file(self, target: Path, expected: dict[str, np.ndarray]) -> None:
        saved = onnx.load(str(target), load_external_data=False)
        model = self.doc.model.SerializeToString()
        assert saved.SerializeToString() == model, "the file is not the document's model"
        if model == self.loaded_model:
            assert target.read_bytes() == self.loaded_bytes
        theirs = save_models.arrays(saved, target.parent)
        assert expected.keys() == theirs.keys()
        for name, array in expected.items():
            np.testing.assert_array_equal(array, theirs[name], err_msg="the saved weights are not the ones read")

    # -- invariants ------------------------------------------------------------------------
    @invariant()
    def no_temporary_file_remains(self) -> None:
        temps = set(self.root.rglob(f"*{TEMP_MARK}*"))
        assert temps <= self.stale, sorted(p.name for p in temps - self.stale)

    @invariant()
    def clean_means_the_file_holds_the_model(self) -> None:
        path = self.doc.path
        if path is None or self.doc.is_dirty or self.outside_changed or not path.exists():
            return
        assert onnx.load(str(path), load_external_data=False).SerializeToString() == \
            self.doc.model.SerializeToString()


def _data_files_known(model: onnx.ModelProto, base_dir: Path) -> dict[Path, bytes]:
    """The data files of ``model`` as they are now, those that exist (the ones read take precedence)."""
    out = {}
    for t in model.graph.initializer:
        if is_external(t):
            path = (base_dir / external_ref(t).location).absolute()
            if path.exists():
                out[path] = path.read_bytes()
    return out


SHORT = settings(max_examples=80, stateful_step_count=16, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])

TestSaveMachine = SaveMachine.TestCase
TestSaveMachine.settings = SHORT


def run_for(minutes: float) -> None:
    """Run sequences for ``minutes``, saying how many (and how many operations) ran clean; a failing sequence
    is shrunk and raised."""
    end = time.monotonic() + minutes * 60
    long_run = settings(SHORT, max_examples=200, stateful_step_count=30, database=None)
    while time.monotonic() < end:
        run_state_machine_as_test(SaveMachine, settings=long_run)
        print(f"{SaveMachine.sequences} sequences, {SaveMachine.operations} operations ran clean", flush=True)
    print(f"done: {SaveMachine.sequences} sequences, {SaveMachine.operations} operations ran clean in "
          f"{minutes:g} minutes, pid {os.getpid()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=5.0)
    run_for(parser.parse_args().minutes)


if __name__ == "__main__":
    main()
