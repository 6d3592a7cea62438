"""A state machine explores edit / undo / redo / save / Save As sequences, with another program
rewriting the file and killed saves leaving their temporary files, on real models (plain, with
external data, with subgraphs and a local function). After every step:

* the file a save wrote reloads to the document's model (its weights too, data files included), and
  holds the original bytes whenever the model is back to its loaded state;
* no file anywhere changed except the ones the save was allowed to write: its target, files this
  document wrote before, new files, and what the user confirmed (``overwrite``, ``replace_data``);
* no temporary file remains, but for those of killed saves into folders not saved to since.

``make test`` runs a short budget; ``python tests/test_save_state_machine.py --minutes N`` a long one,
printing how many sequences ran clean.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
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

sys.path.insert(0, str(Path(__file__).parent))

import save_models  # noqa: E402
from test_undo_property import EDITS  # noqa: E402

import onnxviz  # noqa: E402
from onnxviz.model.errors import EditError, SaveError  # noqa: E402
from onnxviz.model.io.saving import DataConflictError, FileChangedError  # noqa: E402

TEMP_MARK = ".onnxviz-saving-"
NUMBERS = st.lists(st.integers(0, 10**6), min_size=8, max_size=8)


def _files(root: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}


class SaveMachine(RuleBasedStateMachine):
    clean_runs = 0

    def __init__(self) -> None:
        super().__init__()
        self.root = Path(tempfile.mkdtemp(prefix="onnxviz-save-sm-"))
        self.written: set[Path] = set()   # files this document wrote
        self.stale: set[Path] = set()     # temporary files of killed saves, not yet cleaned
        self.outside_changed = False

    def teardown(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
        SaveMachine.clean_runs += 1

    @initialize(kind=st.sampled_from(sorted(save_models.BUILDERS)))
    def open_model(self, kind: str) -> None:
        home, other, fresh = (self.root / n for n in ("home", "other", "fresh"))
        for folder in (home, other, fresh):
            folder.mkdir()
        self.path = save_models.BUILDERS[kind](home)
        # another model in 'other' whose data file has the same name as this one's, with other weights
        save_models.with_external_data(other, scale=3.0).rename(other / "other.onnx")
        self.doc = onnxviz.open(self.path)
        self.loaded_bytes = self.path.read_bytes()
        self.loaded_model = self.doc.model.SerializeToString()

    # -- edits -----------------------------------------------------------------------------
    @rule(kind=st.integers(0, len(EDITS) - 1), numbers=NUMBERS)
    def edit(self, kind: int, numbers: list[int]) -> None:
        for attempt in range(len(EDITS)):  # the first edit kind from ``kind`` on that applies
            it = iter(numbers)
            try:
                EDITS[(kind + attempt) % len(EDITS)](self.doc, lambda n, it=it: next(it) % n if n > 0 else 0)
                return
            except (EditError, IndexError, ZeroDivisionError, StopIteration, onnx.checker.ValidationError):
                continue  # refused, or impossible here (the weight edit reads no external data)

    @rule()
    def undo(self) -> None:
        self.doc.undo()

    @rule()
    def redo(self) -> None:
        self.doc.redo()

    @rule()
    def undo_to_start(self) -> None:
        while self.doc.undo_stack.can_undo:
            self.doc.undo()

    # -- the world -------------------------------------------------------------------------
    @precondition(lambda self: self.doc.path is not None and self.doc.path.exists())
    @rule(producer=st.text("abcxyz", min_size=1, max_size=6))
    def another_program_rewrites_the_file(self, producer: str) -> None:
        assert self.doc.path is not None
        model = onnx.load(str(self.doc.path), load_external_data=False)
        model.producer_name = f"outside-{producer}-{time.monotonic_ns()}"
        self.doc.path.write_bytes(model.SerializeToString())
        self.outside_changed = True

    @rule(folder=st.sampled_from(["home", "other", "fresh"]))
    def a_killed_save_left_its_temporary_file(self, folder: str) -> None:
        stale = self.root / folder / f".model.onnx{TEMP_MARK}{2**22 + 7}.tmp"  # no such process
        stale.write_bytes(b"half a model")
        self.stale.add(stale)

    # -- saves -----------------------------------------------------------------------------
    @rule()
    def save(self) -> None:
        assert self.doc.path is not None
        self._save(self.doc.path)

    @rule(where=st.sampled_from(["home/copy.onnx", "other/model.onnx", "fresh/model.onnx", "other/other.onnx"]),
          answer=st.sampled_from(["refuse", "file", "replace"]))
    def save_as(self, where: str, answer: str) -> None:
        self._save(self.root / where, answer)

    def _save(self, target: Path, answer: str = "refuse") -> None:
        before = _files(self.root)
        self.weights = save_models.arrays(self.doc.model, self.doc.base_dir or self.root)
        confirmed: set[Path] = set()
        asks = self.outside_changed and target == self.doc.path
        try:
            self.doc.save(target)
            assert not asks, "saved over another program's changes without asking"
        except FileChangedError:
            assert self.outside_changed and target == self.doc.path
            assert _files(self.root) == before, "a refused save changed a file"
            self.doc.save(target, overwrite=True)  # the user said Overwrite
            confirmed.add(target)
        except DataConflictError as exc:
            assert _files(self.root) == before, "a refused save changed a file"
            if answer == "refuse":
                return
            if answer == "replace":
                confirmed |= {target.parent / save_models.DATA_NAME}
                self.doc.save(target, replace_data=True)
            else:
                self._save_with_data_file(target, before)
                return
            assert exc.choices
        except SaveError as exc:
            raise AssertionError(f"unexpected refusal: {exc.message}") from exc
        self._after_save(target, before, confirmed)

    def _save_with_data_file(self, target: Path, before: dict[Path, bytes]) -> None:
        data = target.with_name(target.name + ".data")
        try:
            self.doc.save(target, external="file")
        except DataConflictError:
            assert data.exists() and data not in self.written
            assert _files(self.root) == before
            return
        self._after_save(target, before, set())

    def _after_save(self, target: Path, before: dict[Path, bytes], confirmed: set[Path]) -> None:
        after = _files(self.root)
        allowed = {target} | self.written | confirmed
        for path, data in before.items():
            if path not in self.stale:
                assert after.get(path) == data or path in allowed, f"{path.name} changed without being named"
        self.written |= {p for p in after if p not in before or after[p] != before.get(p)}
        self.stale = {p for p in self.stale if p.parent != target.parent}
        if target == self.doc.path:
            self.outside_changed = False
        self._check_file(target)

    def _check_file(self, target: Path) -> None:
        saved = onnx.load(str(target), load_external_data=False)
        model = self.doc.model.SerializeToString()
        assert saved.SerializeToString() == model, "the file is not the document's model"
        if model == self.loaded_model:
            assert target.read_bytes() == self.loaded_bytes
        mine = self.weights  # the document's weights before the save, read where they were
        theirs = save_models.arrays(saved, target.parent)
        assert mine.keys() == theirs.keys()
        for name, array in mine.items():
            np.testing.assert_array_equal(array, theirs[name])

    # -- invariants ------------------------------------------------------------------------
    @invariant()
    def no_temporary_file_remains(self) -> None:
        temps = {p for p in self.root.rglob(f"*{TEMP_MARK}*")}
        assert temps <= self.stale, sorted(p.name for p in temps - self.stale)

    @invariant()
    def clean_means_the_file_holds_the_model(self) -> None:
        path = self.doc.path
        if path is None or self.doc.is_dirty or self.outside_changed or not path.exists():
            return
        assert onnx.load(str(path), load_external_data=False).SerializeToString() == \
            self.doc.model.SerializeToString()


SHORT = settings(max_examples=80, stateful_step_count=16, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])

TestSaveMachine = SaveMachine.TestCase
TestSaveMachine.settings = SHORT


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=5.0)
    args = parser.parse_args()
    end = time.monotonic() + args.minutes * 60
    long_run = settings(SHORT, max_examples=200, stateful_step_count=30, database=None)
    while time.monotonic() < end:
        run_state_machine_as_test(SaveMachine, settings=long_run)
        print(f"{SaveMachine.clean_runs} sequences ran clean", flush=True)
    print(f"done: {SaveMachine.clean_runs} sequences ran clean in {args.minutes:g} minutes, pid {os.getpid()}")


if __name__ == "__main__":
    main()
