"""Saving never loses data: when writing fails the file on disk is intact, no temporary file is
left behind, the edits are still in the document, and SaveError says why in one sentence."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import faulty_disk
import hostile
import pytest

from onnxviz.model.document import Document
from onnxviz.model.errors import SaveError


@pytest.fixture
def edited(tmp_path: Path) -> tuple[Document, Path, bytes]:
    path = tmp_path / "model.onnx"
    path.write_bytes(hostile.valid_model().SerializeToString())
    original = path.read_bytes()
    doc = Document.open(path)
    doc.edit.rename_node(0, "renamed")
    return doc, path, original


def _assert_nothing_lost(doc: Document, path: Path, original: bytes, error: SaveError) -> None:
    assert path.read_bytes() == original
    assert sorted(p.name for p in path.parent.iterdir()) == ["model.onnx"]  # no temporary file left
    assert doc.is_dirty and doc.model.graph.node[0].name == "renamed"
    assert "\n" not in error.message and error.message.endswith(".")


def test_disk_full_keeps_the_original(edited: tuple[Document, Path, bytes], monkeypatch: pytest.MonkeyPatch) -> None:
    doc, path, original = edited
    with faulty_disk.faulty(monkeypatch, at=0, fault="short", then_full=True), pytest.raises(SaveError) as info:
        doc.save()
    assert info.value.message == "could not save model.onnx: the disk is full."
    _assert_nothing_lost(doc, path, original, info.value)
    doc.save()  # once there is space again, the same document saves
    assert Document.open(path).model.graph.node[0].name == "renamed"


def test_permission_denied_keeps_the_original(edited: tuple[Document, Path, bytes],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    doc, path, original = edited
    if os.geteuid() != 0:  # a real read-only folder (root ignores permissions, so it is simulated below)
        path.parent.chmod(0o555)
        try:
            with pytest.raises(SaveError, match="^could not save model.onnx: permission denied.$") as info:
                doc.save()
        finally:
            path.parent.chmod(0o755)
        _assert_nothing_lost(doc, path, original, info.value)

    real_open = os.open

    def denied(file: str | os.PathLike[str], *args: Any, **kwargs: Any) -> int:
        if ".onnxviz-saving-" in os.fspath(file):  # the temporary file a save writes first
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(os, "open", denied)
    with pytest.raises(SaveError, match="^could not save model.onnx: permission denied.$") as info:
        doc.save()
    _assert_nothing_lost(doc, path, original, info.value)


def test_failed_rename_keeps_the_original(edited: tuple[Document, Path, bytes], monkeypatch: pytest.MonkeyPatch) -> None:
    doc, path, original = edited

    def busy(*args: object) -> None:
        raise OSError(errno.EBUSY, os.strerror(errno.EBUSY))

    monkeypatch.setattr(os, "replace", busy)
    with pytest.raises(SaveError) as info:
        doc.save()
    _assert_nothing_lost(doc, path, original, info.value)


def test_saving_onto_a_folder_or_into_a_missing_folder_is_refused(edited: tuple[Document, Path, bytes]) -> None:
    doc, path, original = edited
    folder = path.parent / "sub"
    folder.mkdir()
    with pytest.raises(SaveError, match="folder"):
        doc.save(folder)
    folder.rmdir()
    with pytest.raises(SaveError, match="^could not save out.onnx: its folder does not exist.$"):
        doc.save(path.parent / "missing" / "out.onnx")
    assert path.read_bytes() == original and doc.is_dirty
