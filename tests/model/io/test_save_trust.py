"""Saves you can trust, through the Python API: one test per way a save once wrote something other
than the model shown, or replaced a file the user did not name (issue: saves you can trust)."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from pathlib import Path

import hostile
import onnx
import pytest
import save_models

import onnxviz
from onnxviz.model.document import Document
from onnxviz.model.errors import SaveError
from onnxviz.model.io import disk
from onnxviz.model.io.saving import (
    DataConflictError,
    EscapedTextError,
    FileChangedError,
    SaveOptions,
    TooLargeError,
)


def _reloaded(path: Path) -> bytes:
    return onnx.load(str(path), load_external_data=False).SerializeToString()


def _temps(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*onnxviz-saving*"))


# 1. undo after a save ---------------------------------------------------------------------------------
def test_undo_to_the_opened_state_after_a_save_writes_the_opened_model(tmp_path: Path) -> None:
    path = save_models.plain(tmp_path)
    loaded = path.read_bytes()
    doc = onnxviz.open(path)
    doc.edit.rename_node(0, "renamed")
    doc.save()
    doc.undo()
    assert doc.is_dirty  # the file holds the rename; the model does not
    assert doc.serialize() == doc.model.SerializeToString()  # what validation and runs read
    doc.save()
    assert path.read_bytes() == loaded and not doc.is_dirty


def test_redo_back_to_the_saved_state_is_clean_and_reuses_the_saved_bytes(tmp_path: Path) -> None:
    doc = onnxviz.open(save_models.plain(tmp_path))
    doc.edit.rename_node(0, "renamed")
    doc.save()
    saved = doc.serialize()
    doc.undo()
    doc.redo()
    assert not doc.is_dirty and doc.serialize() is saved


# 2. Save As next to another model's data file --------------------------------------------------------
@pytest.fixture
def two_models(tmp_path: Path) -> tuple[Document, Path, bytes]:
    """A document with external data, and a folder where another model uses a data file of the same name."""
    (tmp_path / "mine").mkdir()
    (tmp_path / "theirs").mkdir()
    doc = onnxviz.open(save_models.with_external_data(tmp_path / "mine"))
    save_models.with_external_data(tmp_path / "theirs", scale=3.0)
    theirs = tmp_path / "theirs" / save_models.DATA_NAME
    return doc, theirs, theirs.read_bytes()


def test_save_as_never_replaces_another_models_data_file(two_models: tuple[Document, Path, bytes]) -> None:
    doc, theirs, their_bytes = two_models
    target = theirs.parent / "new.onnx"
    with pytest.raises(DataConflictError, match=save_models.DATA_NAME) as info:
        doc.save(target)
    assert theirs.read_bytes() == their_bytes and not target.exists() and not _temps(theirs.parent)
    assert [label for label, _ in info.value.choices] == ["Save Weights as new.onnx.data", "Replace"]
    assert "external='file'" in info.value.details and "\n" not in info.value.message


def test_save_as_with_the_weights_under_the_new_files_name(two_models: tuple[Document, Path, bytes]) -> None:
    doc, theirs, their_bytes = two_models
    target = theirs.parent / "new.onnx"
    weights = save_models.arrays(doc.model, doc.base_dir or Path())
    doc.save(target, external="file")
    assert theirs.read_bytes() == their_bytes
    saved = onnx.load(str(target), load_external_data=False)
    assert {e.value for t in saved.graph.initializer for e in t.external_data if e.key == "location"} == \
        {"new.onnx.data"}
    assert save_models.arrays(saved, target.parent).keys() == weights.keys()
    for name, array in save_models.arrays(saved, target.parent).items():
        assert (array == weights[name]).all()
    assert doc.path == target and not doc.is_dirty and not doc.undo_stack.can_undo


def test_replacing_another_models_data_file_needs_the_users_yes(two_models: tuple[Document, Path, bytes]) -> None:
    doc, theirs, their_bytes = two_models
    doc.save(theirs.parent / "new.onnx", replace_data=True)
    assert theirs.read_bytes() != their_bytes
    assert theirs.read_bytes() == (Path(doc.path or "").parent / save_models.DATA_NAME).read_bytes()


def test_a_data_file_this_document_wrote_is_replaced_without_a_question(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    doc = onnxviz.open(save_models.with_external_data(tmp_path / "a"))
    doc.save(tmp_path / "b" / "m.onnx")
    doc.save(tmp_path / "b" / "m2.onnx")  # same folder: nothing to copy
    doc.save(tmp_path / "a" / "m3.onnx")
    doc.save(tmp_path / "b" / "m4.onnx")  # b's data file is the one this document wrote there


def test_identical_data_file_in_the_target_folder_is_kept(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    doc = onnxviz.open(save_models.with_external_data(tmp_path / "a"))
    copy = tmp_path / "b" / save_models.DATA_NAME
    copy.write_bytes((tmp_path / "a" / save_models.DATA_NAME).read_bytes())
    before = copy.stat()
    doc.save(tmp_path / "b" / "m.onnx")
    assert copy.stat().st_ino == before.st_ino and copy.stat().st_mtime_ns == before.st_mtime_ns


# 3. lost update ----------------------------------------------------------------------------------------
def test_a_file_another_program_rewrote_is_not_overwritten_without_a_yes(tmp_path: Path) -> None:
    path = save_models.plain(tmp_path)
    doc = onnxviz.open(path)
    theirs = onnx.load(str(path))
    theirs.producer_name = "the other program"
    path.write_bytes(theirs.SerializeToString())
    doc.edit.rename_node(0, "mine")
    with pytest.raises(FileChangedError, match="changed on disk by another program") as info:
        doc.save()
    assert onnx.load(str(path)).producer_name == "the other program" and doc.is_dirty
    assert info.value.choices[0][0] == "Overwrite" and "overwrite=True" in info.value.details
    doc.save(overwrite=True)
    assert _reloaded(path) == doc.model.SerializeToString()
    doc.edit.rename_node(0, "again")
    doc.save()  # the file is ours again: no question


def test_a_file_rewritten_with_the_same_bytes_or_touched_is_saved_without_a_question(tmp_path: Path) -> None:
    path = save_models.plain(tmp_path)
    doc = onnxviz.open(path)
    path.write_bytes(path.read_bytes())
    os.utime(path, ns=(1, 1))
    doc.edit.rename_node(0, "mine")
    doc.save()
    assert onnx.load(str(path)).graph.node[0].name == "mine"


def test_a_deleted_file_is_written_again(tmp_path: Path) -> None:
    path = save_models.plain(tmp_path)
    doc = onnxviz.open(path)
    path.unlink()
    doc.edit.rename_node(0, "mine")
    doc.save()
    assert onnx.load(str(path)).graph.node[0].name == "mine"


# 4. opening never changes what is saved ----------------------------------------------------------------
@pytest.fixture
def invalid_utf8(tmp_path: Path) -> Path:
    case = next(c for c in hostile.OPENS if c.name == "invalid_utf8_name")
    return case.build(tmp_path)


def test_text_that_is_not_utf8_is_saved_escaped_only_with_a_yes(invalid_utf8: Path, tmp_path: Path) -> None:
    loaded = invalid_utf8.read_bytes()
    doc = onnxviz.open(invalid_utf8)
    assert any("utf-8" in p.message.lower() for p in doc.problems) and doc.escaped_text
    doc.save(tmp_path / "unedited.onnx")  # unedited: the file's own bytes
    assert (tmp_path / "unedited.onnx").read_bytes() == loaded
    doc = onnxviz.open(invalid_utf8)
    doc.edit.set_model_info(producer_name="unrelated edit")
    with pytest.raises(EscapedTextError, match="not valid UTF-8") as info:
        doc.save()
    assert invalid_utf8.read_bytes() == loaded and "escaped_text=True" in info.value.details
    doc.save(escaped_text=True)
    assert _reloaded(invalid_utf8) == doc.model.SerializeToString() and not doc.escaped_text
    doc.edit.set_model_info(producer_name="and another")
    doc.save()  # the file holds the escaped text now: nothing left to ask


def test_the_index_never_changes_the_model(invalid_utf8: Path) -> None:
    from onnxviz.model.graph.index import ModelIndex

    model = onnx.load(str(invalid_utf8))
    before = model.SerializeToString()
    index = ModelIndex(model)
    assert index.has_undecodable_text() and model.SerializeToString() == before


# 5. temporary files, modes, size -----------------------------------------------------------------------
def test_a_failed_save_as_leaves_no_temporary_or_partial_data_file(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    doc = onnxviz.open(save_models.with_external_data(tmp_path / "a"))
    real_write = disk.atomic_write

    def full_disk(target: Path, data: bytes | memoryview, written: object = None) -> None:
        raise SaveError("could not save m.onnx: No space left on device.")

    monkeypatch.setattr("onnxviz.model.io.saving.atomic_write", full_disk)
    with pytest.raises(SaveError, match="No space"):
        doc.save(tmp_path / "b" / "m.onnx")
    assert sorted(os.listdir(tmp_path / "b")) == []  # the copied data file went again
    monkeypatch.setattr("onnxviz.model.io.saving.atomic_write", real_write)
    doc.save(tmp_path / "b" / "m.onnx")
    assert sorted(os.listdir(tmp_path / "b")) == ["m.onnx", save_models.DATA_NAME]


def test_a_save_cancelled_while_copying_data_leaves_nothing_behind(tmp_path: Path) -> None:
    from onnxviz.model.errors import Cancelled

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    path = save_models.with_external_data(tmp_path / "a")
    data = tmp_path / "a" / save_models.DATA_NAME
    data.write_bytes(data.read_bytes() + b"\0" * (20 * 2**20))  # three chunks to copy
    doc = onnxviz.open(path)
    heard: list[tuple[float, str]] = []

    def cancel_after_the_first_chunk(fraction: float, text: str) -> None:
        heard.append((fraction, text))
        raise Cancelled()

    plan = doc.plan_save(tmp_path / "b" / "m.onnx", SaveOptions())
    with pytest.raises(Cancelled):
        plan.write(cancel_after_the_first_chunk)
    assert os.listdir(tmp_path / "b") == [] and heard[0][1] == "Saving m.onnx: 8 of 20 MB"
    plan.write()
    assert sorted(os.listdir(tmp_path / "b")) == ["m.onnx", save_models.DATA_NAME]


def test_temporary_files_of_killed_saves_are_removed_at_the_next_save(tmp_path: Path) -> None:
    path = save_models.plain(tmp_path)
    dead = tmp_path / f".model.onnx.onnxviz-saving-{2**22 + 11}.tmp"
    dead.write_bytes(b"half")
    alive = tmp_path / f".model.onnx.onnxviz-saving-{os.getppid()}.tmp"  # a running process's: kept
    alive.write_bytes(b"busy")
    stranger = tmp_path / ".model.onnx.tmp"  # not ours
    stranger.write_bytes(b"theirs")
    onnxviz.open(path).save()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([path.name, alive.name, stranger.name])


def test_new_files_honour_the_umask_and_replaced_files_keep_their_mode(tmp_path: Path) -> None:
    path = save_models.plain(tmp_path)
    doc = onnxviz.open(path)
    old = os.umask(0o027)
    try:
        doc.save(tmp_path / "new.onnx")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.onnx").stat().st_mode) == 0o640
    path.chmod(0o604)
    doc.save(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o604


def test_a_model_too_large_for_one_file_is_offered_a_data_file(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    path = save_models.plain(tmp_path)
    doc = onnxviz.open(path)
    doc.edit.rename_node(0, "edited")
    small = len(doc.model.SerializeToString()) - 1  # a 2 GiB limit scaled down to this model
    for module in ("saving", "file_copy"):  # file_copy serializes, saving streams
        monkeypatch.setattr(f"onnxviz.model.io.{module}.MAX_PROTO_BYTES", small)
    with pytest.raises(TooLargeError, match="too large to write as one file") as info:
        doc.save()
    assert "model.onnx.data" in info.value.message and info.value.choices[0][1].external == "file"
    weights = save_models.arrays(doc.model, tmp_path)
    doc.save(external="file")
    saved = onnx.load(str(path), load_external_data=False)
    assert len(path.read_bytes()) <= small
    for name, array in save_models.arrays(saved, tmp_path).items():
        assert (array == weights[name]).all()
    assert (tmp_path / "model.onnx.data").exists() and not _temps(tmp_path)


def test_protobufs_own_size_error_becomes_the_same_question(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from onnxviz.model.io import saving

    doc = onnxviz.open(save_models.plain(tmp_path))
    doc.edit.rename_node(0, "edited")

    class Huge:
        def SerializeToString(self) -> bytes:  # noqa: N802 - protobuf's name
            raise ValueError("Message onnx.ModelProto exceeds maximum protobuf size of 2GB: 2400000000")

    real = saving.serialize
    monkeypatch.setattr(saving, "serialize", lambda model, pause=None: real(Huge(), None)  # type: ignore[arg-type]
                        if model is doc.model else real(model, pause))
    with pytest.raises(TooLargeError):
        doc.save()


def test_saving_with_an_unknown_external_choice_is_one_sentence(tmp_path: Path) -> None:
    doc = onnxviz.open(save_models.plain(tmp_path))
    with pytest.raises(SaveError, match="external must be one of 'keep', 'embed', 'file'"):
        doc.save(external="elsewhere")  # type: ignore[arg-type]


# copying a data file -----------------------------------------------------------------------------------------
def _copy_refused(*args: object) -> int:
    raise OSError(errno.EXDEV, "Invalid cross-device link")


def _copy_says_empty(*args: object) -> int:
    return 0  # what some kernels answered for files of special file systems that have bytes


@pytest.mark.parametrize("kernel", [None, _copy_refused, _copy_says_empty],
                         ids=["copy_file_range", "refused: through memory", "says empty: through memory"])
def test_a_copied_data_file_is_the_same_bytes_and_told_chunk_by_chunk(tmp_path: Path, kernel: Callable[..., int] | None,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    if kernel is not None:  # another file system, an old kernel, or not Linux: the copy goes through memory
        monkeypatch.setattr(os, "copy_file_range", kernel, raising=False)
    source, target = tmp_path / "w.bin", tmp_path / "out" / "w.bin"
    target.parent.mkdir()
    target.write_bytes(b"old")
    data = os.urandom(3 * 2**20) * 7  # 21 MiB: three chunks
    source.write_bytes(data)
    chunks: list[int] = []
    disk.atomic_copy(source, target, chunks.append)
    assert target.read_bytes() == data and sum(chunks) == len(data) and len(chunks) >= 3
    assert _temps(tmp_path) == []


def test_a_data_file_gone_before_its_copy_is_one_sentence_and_nothing_is_written(tmp_path: Path) -> None:
    target = tmp_path / "w.bin"
    target.write_bytes(b"old")
    with pytest.raises(SaveError, match=r"^gone\.bin could not be read: it is gone\.$"):
        disk.atomic_copy(tmp_path / "gone.bin", target)
    assert target.read_bytes() == b"old" and _temps(tmp_path) == []


def test_a_disk_that_fills_during_a_copy_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source, target = tmp_path / "w.bin", tmp_path / "out.bin"
    source.write_bytes(b"\1" * (20 * 2**20))
    target.write_bytes(b"old")
    real = getattr(os, "copy_file_range", None)
    calls: list[int] = []

    def fills_up(src: int, dst: int, count: int, *offsets: int) -> int:
        calls.append(count)
        if len(calls) > 1 or real is None:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(src, dst, count, *offsets)

    monkeypatch.setattr(os, "copy_file_range", fills_up, raising=False)
    with pytest.raises(SaveError, match=r"^could not save out\.bin: the disk is full\.$"):
        disk.atomic_copy(source, target)
    assert target.read_bytes() == b"old" and _temps(tmp_path) == []
