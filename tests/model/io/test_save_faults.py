"""Every save path with a faulty disk under it (tests/faulty_disk.py): a fault at every chunk boundary (a short
count, a count of 0, ENOSPC, EDQUOT, EIO, EFBIG), and at every fsync and rename. After each, either the save
failed with one sentence and every file is as it was (no temporary file, no partial data file, the document
still unsaved), or it succeeded (a short count is followed by a write of the rest) and the files hold the
model with its weights, nothing else left behind. Saves that write data files are also killed at each call
(in a child process): the folder then holds the old model with its old data or the new with its new, and the
next open leaves no orphan data file (issue 38, point 3)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import faulty_disk
import numpy as np
import onnx
import pytest
import save_models

import onnxviz
from onnxviz.model.document import Document
from onnxviz.model.errors import SaveError
from onnxviz.model.io import saving, streaming
from onnxviz.model.io.disk import TEMP_MARK

CHUNK = 1024  # bytes a write or copy hands over at once in these tests: many boundaries in a small model


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@dataclass
class Case:
    """One save path: ``setup`` makes the files under a root and returns the document, edited; ``save`` saves it."""

    setup: Callable[[Path], Document]
    save: Callable[[Document, Path], object]


def _edited(doc: Document) -> Document:
    doc.edit.rename_node(0, "renamed_by_the_test")
    return doc


def _plain(root: Path) -> Document:
    return _edited(onnxviz.open(save_models.plain(root)))


def _external(root: Path) -> Document:
    (root / "a").mkdir()
    return _edited(onnxviz.open(save_models.with_external_data(root / "a")))


def _external_to_b(root: Path) -> Document:
    """A model in a/ with its weights in a data file, to be saved in b/."""
    doc = _external(root)
    (root / "b").mkdir()
    return doc


def _over_another_model(root: Path) -> Document:
    """A model in a/ to be saved over b/model.onnx, another model that reads b/model.onnx.data."""
    doc = _external_to_b(root)
    save_models.with_external_data(root / "b", scale=3.0)
    return doc


def _saved_separately(root: Path) -> Document:
    """A model saved once with its weights in a data file of its own, then edited again."""
    doc = _external(root)
    doc.save(external="file")
    doc.edit.rename_node(0, "renamed_again")
    return doc


CASES = {
    "in place": Case(_plain, lambda doc, root: doc.save()),
    "streamed": Case(_plain, lambda doc, root: doc.save()),
    "copies, kernel": Case(_external_to_b, lambda doc, root: doc.save(root / "b" / "m.onnx")),
    "copies, through memory": Case(_external_to_b, lambda doc, root: doc.save(root / "b" / "m.onnx")),
    "data file in place": Case(_external, lambda doc, root: doc.save(external="file")),
    "embed": Case(_external, lambda doc, root: doc.save(root / "a" / "e.onnx", external="embed")),
    "embed in place": Case(_external, lambda doc, root: doc.save(external="embed")),
    "over another model, replace": Case(_over_another_model,
                                        lambda doc, root: doc.save(root / "b" / "model.onnx", replace_data=True)),
    "data file again": Case(_saved_separately, lambda doc, root: doc.save(external="file")),
}


class _NoKernelCopy(faulty_disk.FaultyDisk):
    """A system where copy_file_range cannot copy between these files: copies go through memory."""

    def copy_file_range(self, src: int, dst: int, count: int, offset_src: int) -> int:
        raise OSError(18, "Invalid cross-device link")


@pytest.fixture
def chunked(monkeypatch: pytest.MonkeyPatch) -> None:
    faulty_disk.small_chunks(monkeypatch, CHUNK)


def _prepare(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if name == "streamed":  # an edited "big" model: written a piece at a time, its weights as pieces of their own
        monkeypatch.setattr(saving, "STREAM_ABOVE", 0)
        monkeypatch.setattr(streaming, "STREAM_ELEMENTS", 16)


def _with_fault(monkeypatch: pytest.MonkeyPatch, name: str, **kwargs: object) -> faulty_disk.FaultyDisk:
    kind = _NoKernelCopy if name == "copies, through memory" else faulty_disk.FaultyDisk
    double = kind(**kwargs)  # type: ignore[arg-type]
    monkeypatch.setattr("onnxviz.model.io.disk.SYSTEM", double)
    return double


def _check_saved(doc: Document, root: Path, target: Path) -> None:
    """The save went through: the file holds the document's model, its weights readable and right."""
    assert faulty_disk.temporary_files(root) == []
    saved = onnx.load(str(target), load_external_data=False)
    assert saved.SerializeToString() == doc.model.SerializeToString()
    mine = save_models.arrays(doc.model, doc.base_dir or root)
    theirs = save_models.arrays(saved, target.parent)
    assert mine.keys() == theirs.keys()
    for key, array in mine.items():
        np.testing.assert_array_equal(array, theirs[key])
    _no_orphans(target.parent)


def _no_orphans(folder: Path) -> None:
    """Every data file in ``folder`` is read by a model there."""
    read: set[str] = set()
    for model_file in folder.glob("*.onnx"):
        model = onnx.load(str(model_file), load_external_data=False)
        read |= {e.value for t in _tensors(model) for e in t.external_data if e.key == "location"}
    data = {p.name for p in folder.iterdir() if p.is_file() and not p.name.endswith(".onnx")}
    assert data <= read, sorted(data - read)


def _tensors(model: onnx.ModelProto) -> list[onnx.TensorProto]:
    from onnxviz.model.io.external import iter_all_tensors

    return list(iter_all_tensors(model))


def _target(name: str, doc: Document, root: Path) -> Path:
    return {"copies, kernel": root / "b" / "m.onnx", "copies, through memory": root / "b" / "m.onnx",
            "embed": root / "a" / "e.onnx", "over another model, replace": root / "b" / "model.onnx"}.get(
        name, doc.path or root)


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_fault_at_any_chunk_fsync_or_rename_loses_nothing(name: str, tmp_path: Path, chunked: None,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    case = CASES[name]
    _prepare(name, monkeypatch)
    first = tmp_path / "count"
    first.mkdir()
    doc = case.setup(first)
    with monkeypatch.context() as m:
        double = _with_fault(m, name)
        case.save(doc, first)
    counts = double.seen
    assert counts["chunk"] >= 4 and counts["fsync"] >= 1 and counts["replace"] >= 1, counts
    if name == "copies, kernel":
        assert counts["kernel copies"] >= 4
    # every chunk gets an error and a short count, each error and each kind of short count in turn
    errors, shorts = list(faulty_disk.ERRNOS), ["short", "short+full", "zero"]
    faults = [("chunk", k, fault) for k in range(counts["chunk"])
              for fault in (errors[k % len(errors)], shorts[k % len(shorts)])]
    faults += [(step, k, "EIO") for step in ("fsync", "replace") for k in range(counts[step])]
    failed = 0
    for n, (on, at, fault) in enumerate(faults):
        root = tmp_path / f"r{n}"
        root.mkdir()
        doc = case.setup(root)
        before = _files(root)
        with monkeypatch.context() as m:
            double = _with_fault(m, name, on=on, at=at, fault=fault.split("+")[0], then_full=fault.endswith("full"))
            try:
                case.save(doc, root)
            except SaveError as exc:
                failed += 1
                assert double.struck
                faulty_disk.one_sentence(exc.message)
                assert _files(root) == before, f"{on} {at} {fault}: a failed save changed the files"
                assert doc.is_dirty
            else:
                assert fault in ("short", "zero") or on == "fsync", f"{on} {at} {fault}: saved though the disk failed"
                assert not doc.is_dirty
                _check_saved(doc, root, _target(name, doc, root))
        shutil.rmtree(root)
    assert failed > len(faults) // 2


# -- kills: a two-file save is one step (issue 38, point 3) ----------------------------------------------------
TWO_FILE_CASES = ["data file in place", "data file again", "over another model, replace", "copies, kernel",
                  "copies, through memory", "embed in place"]


def _weights(model_file: Path) -> dict[str, np.ndarray]:
    return save_models.arrays(onnx.load(str(model_file), load_external_data=False), model_file.parent)


def _killed_save(case: Case, name: str, root: Path, on: str, at: int) -> Document:
    """Save in a child process killed at call ``at`` of kind ``on`` (the faulty disk calls os._exit there)."""
    doc = case.setup(root)
    pid = os.fork()
    if pid == 0:  # the child saves and dies where the faulty disk says
        code = 1
        try:
            _with_fault(pytest.MonkeyPatch(), name, on=on, at=at, fault="kill")
            case.save(doc, root)
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == faulty_disk.KILLED, f"{on} {at}: the save was not killed"
    return doc


@pytest.mark.parametrize("name", TWO_FILE_CASES)
def test_a_two_file_save_killed_at_any_call_leaves_old_or_new_and_no_orphan(name: str, tmp_path: Path, chunked: None,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    case = CASES[name]
    probe = tmp_path / "probe"
    probe.mkdir()
    doc = case.setup(probe)
    target = _target(name, doc, probe)
    old = (target.read_bytes(), _weights(target)) if target.exists() else None
    with monkeypatch.context() as m:
        double = _with_fault(m, name)
        case.save(doc, probe)
    new = (target.read_bytes(), _weights(target))
    kills = [(on, k) for on in ("chunk", "fsync", "replace") for k in range(double.seen[on])]
    assert len(kills) >= 8
    for n, (on, at) in enumerate(kills):
        root = tmp_path / f"k{n}"
        root.mkdir()
        doc = _killed_save(case, name, root, on, at)
        here = root / target.relative_to(probe)
        if here.exists():
            model = here.read_bytes()
            expected = new if model == new[0] else old
            assert expected is not None and model == expected[0], f"{on} {at}: the model file is neither old nor new"
            weights = _weights(here)
            assert weights.keys() == expected[1].keys()
            for key, array in expected[1].items():
                np.testing.assert_array_equal(weights[key], array, err_msg=f"{on} {at}: a mix of old and new data")
            Document.open(here)  # the next open finishes what the killed save left
        else:  # a new file, not there yet: the next save into its folder finishes
            assert old is None
            case.save(doc, root)
        assert not [p.name for p in here.parent.iterdir() if TEMP_MARK in p.name], f"{on} {at}: temporary files left"
        _no_orphans(here.parent)
        shutil.rmtree(root)
