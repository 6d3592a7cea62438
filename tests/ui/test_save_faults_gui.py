"""The window's saves on a faulty disk and among files other programs change (issue 29): "Saved" only when every
file is complete, one sentence and Save As... when a save cannot write, the questions about changed data files
and about a model with errors replacing a valid file (with their window-only answers, Reload and Save As...),
links kept, a hard link's other names told, and the other files the window writes (a tensor, a picture)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import faulty_disk
import numpy as np
import onnx
import pytest
import save_models
from PySide6.QtWidgets import QFileDialog, QMessageBox, QPushButton
from pytestqt.qtbot import QtBot
from window_fixtures import open_and_wait, settle

from onnxviz.model.document import Document
from onnxviz.ui.main_window import MainWindow

SHOTS = Path(os.environ.get("ONNXVIZ_SHOTS", "")) if os.environ.get("ONNXVIZ_SHOTS") else None


def _doc(w: MainWindow) -> Document:
    assert w.doc is not None
    return w.doc


def _box(w: MainWindow, shot: str) -> QMessageBox:
    boxes = [b for b in w.findChildren(QMessageBox) if b.isVisible()]
    assert len(boxes) == 1, [b.text() for b in boxes]
    if SHOTS is not None:
        boxes[0].grab().save(str(SHOTS / f"{shot}.png"))
    return boxes[0]


def _buttons(box: QMessageBox) -> list[str]:
    return sorted(b.text().replace("&", "") for b in box.findChildren(QPushButton) if b.isVisible())


def _text(box: QMessageBox) -> str:
    return box.text().replace("\u200b", "")


def _click(box: QMessageBox, label: str) -> None:
    button = next(b for b in box.findChildren(QPushButton) if b.text().replace("&", "") == label)
    button.click()
    settle()


def _save_as_goes_to(monkeypatch: pytest.MonkeyPatch, target: Path) -> list[str]:
    """The Save As dialog answers ``target``; returns the folders it was opened in."""
    asked: list[str] = []

    def answer(parent: object, title: str, start: str, *args: object) -> tuple[str, str]:
        asked.append(start)
        return str(target), ""

    monkeypatch.setattr(QFileDialog, "getSaveFileName", answer)
    return asked


@pytest.mark.parametrize("external", [False, True], ids=["foreground", "background (external data)"])
def test_a_full_disk_never_says_saved_and_offers_save_as(
        qtbot: QtBot, make_window: Callable[[], MainWindow], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        external: bool) -> None:
    path = save_models.with_external_data(tmp_path) if external else save_models.plain(tmp_path)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    w = make_window()
    open_and_wait(qtbot, w, path)
    doc = _doc(w)
    doc.edit.rename_node(0, "renamed")
    faulty_disk.small_chunks(monkeypatch, 1024)
    with faulty_disk.faulty(monkeypatch, at=2, fault="short", then_full=True):
        w.save_action.trigger()
        qtbot.waitUntil(lambda: any(b.isVisible() for b in w.findChildren(QMessageBox)), timeout=20000)
        settle()
    box = _box(w, f"full-disk-{'external' if external else 'plain'}")
    assert _text(box) == "Could not save model.onnx: the disk is full."
    assert _buttons(box) == ["OK", "Save As...", "Show Details..."] and "Saved" not in w.statusBar().currentMessage()
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before and doc.is_dirty and w.isEnabled()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    _save_as_goes_to(monkeypatch, elsewhere / "kept.onnx")
    _click(box, "Save As...")
    qtbot.waitUntil(lambda: not doc.is_dirty, timeout=20000)
    settle()
    assert onnx.load(str(elsewhere / "kept.onnx")).graph.node[0].name == "renamed"
    assert w.statusBar().currentMessage().startswith("Saved kept.onnx.")


def test_a_read_only_place_offers_save_as(qtbot: QtBot, make_window: Callable[[], MainWindow], tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    path = save_models.plain(tmp_path)
    w = make_window()
    open_and_wait(qtbot, w, path)
    _doc(w).edit.rename_node(0, "renamed")
    real_open = os.open

    def read_only(file: str | os.PathLike[str], *args: object, **kwargs: object) -> int:
        if ".onnxviz-saving-" in os.fspath(file):
            raise OSError(30, os.strerror(30))  # EROFS, as a read-only file system answers
        return real_open(file, *args, **kwargs)  # type: ignore[arg-type]

    real_unlink = os.unlink

    def unlink(file: str | os.PathLike[str], *args: object, **kwargs: object) -> None:
        if ".onnxviz-saving-" in os.fspath(file):
            raise OSError(30, os.strerror(30))  # a read-only disk refuses even a file that is not there
        real_unlink(file, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", read_only)
    monkeypatch.setattr(os, "unlink", unlink)
    w.save_action.trigger()
    settle()
    box = _box(w, "read-only")
    assert _text(box) == "Could not save model.onnx: the disk is read-only." and "Save As..." in _buttons(box)
    assert ".onnxviz-saving-" not in box.detailedText() and "Errno" not in _text(box)


@pytest.fixture
def external_model(tmp_path: Path) -> Path:
    return save_models.with_external_data(tmp_path)


def _replace_data(path: Path, scale: float) -> None:
    """Another program writes other weights to a new file and renames it over the model's data file."""
    other = path.parent / "other"
    other.mkdir(exist_ok=True)
    save_models.with_external_data(other, scale=scale)
    os.replace(other / save_models.DATA_NAME, path.parent / save_models.DATA_NAME)


def test_a_replaced_data_file_asks_and_can_save_the_weights_shown(
        qtbot: QtBot, make_window: Callable[[], MainWindow], external_model: Path) -> None:
    read = save_models.arrays(onnx.load(str(external_model), load_external_data=False), external_model.parent)
    w = make_window()
    open_and_wait(qtbot, w, external_model)
    doc = _doc(w)
    doc.edit.rename_node(0, "renamed")
    _replace_data(external_model, 5.0)
    theirs = (external_model.parent / save_models.DATA_NAME).read_bytes()
    model_bytes = external_model.read_bytes()
    w.save_action.trigger()
    settle()
    box = _box(w, "data-replaced")
    assert _text(box) == (f"'{save_models.DATA_NAME}' was replaced on disk by another program since onnxviz read "
                          "it; saving would make model.onnx read weights onnxviz never showed.")
    assert _buttons(box) == ["Cancel", "Reload", "Save Weights as model.onnx.1.data"]
    _click(box, "Cancel")
    assert external_model.read_bytes() == model_bytes and doc.is_dirty
    w.save_action.trigger()
    settle()
    _click(_box(w, "data-replaced"), "Save Weights as model.onnx.1.data")
    qtbot.waitUntil(lambda: not doc.is_dirty, timeout=20000)
    saved = onnx.load(str(external_model), load_external_data=False)
    assert saved.graph.node[0].name == "renamed"
    got = save_models.arrays(saved, external_model.parent)
    for name, array in read.items():
        np.testing.assert_array_equal(got[name], array)  # the weights the window read, not the other program's
    assert (external_model.parent / save_models.DATA_NAME).read_bytes() == theirs  # their file is theirs


def test_reload_answers_a_data_file_rewritten_in_place(
        qtbot: QtBot, make_window: Callable[[], MainWindow], external_model: Path) -> None:
    w = make_window()
    open_and_wait(qtbot, w, external_model)
    doc = _doc(w)
    doc.edit.rename_node(0, "renamed")
    data = external_model.parent / save_models.DATA_NAME
    rewritten = bytes(b ^ 0x5A for b in data.read_bytes())
    with open(data, "r+b") as f:  # in place: the bytes the window read are gone
        f.write(rewritten)
    w.save_action.trigger()
    settle()
    box = _box(w, "data-lost")
    assert "the weights onnxviz showed are no longer there; reload the model to save it." in _text(box)
    assert _buttons(box) == ["Cancel", "Reload"]
    with qtbot.waitSignal(w.loading_finished, timeout=20000):
        _click(box, "Reload")
    settle()
    assert w.doc is not doc and not _doc(w).is_dirty and _doc(w).model.graph.node[0].name != "renamed"
    assert data.read_bytes() == rewritten


def test_a_model_with_errors_asks_before_replacing_a_valid_file(
        qtbot: QtBot, make_window: Callable[[], MainWindow], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = save_models.plain(tmp_path)
    valid = path.read_bytes()
    w = make_window()
    open_and_wait(qtbot, w, path)
    settle()
    doc = _doc(w)
    doc.edit.remove_node(0, reconnect=False)  # its consumers now read a value nothing makes
    w.save_action.trigger()
    settle()
    box = _box(w, "invalid-model")
    assert _text(box).startswith("The model now has 1 error (first: input ")
    assert _text(box).endswith("and would replace model.onnx, which had none.")
    assert _buttons(box) == ["Cancel", "Save Anyway", "Save As..."]
    _click(box, "Cancel")
    assert path.read_bytes() == valid and doc.is_dirty
    asked = _save_as_goes_to(monkeypatch, tmp_path / "broken.onnx")
    w.save_action.trigger()
    settle()
    _click(_box(w, "invalid-model"), "Save As...")
    qtbot.waitUntil(lambda: not doc.is_dirty, timeout=20000)
    assert asked and path.read_bytes() == valid and (tmp_path / "broken.onnx").exists()
    doc.edit.rename_node(0, "still_broken")
    w.save_action.trigger()  # broken.onnx had errors already: nothing valid is replaced
    settle()
    assert not doc.is_dirty and not [b for b in w.findChildren(QMessageBox) if b.isVisible()]
    w.open_path(path)
    qtbot.waitUntil(lambda: w.doc is not None and w.doc.path == path, timeout=20000)
    settle()
    _doc(w).edit.remove_node(0, reconnect=False)
    w.save_action.trigger()
    settle()
    _click(_box(w, "invalid-model"), "Save Anyway")
    assert not _doc(w).is_dirty and path.read_bytes() != valid


def test_a_model_opened_through_a_link_is_saved_through_it(
        qtbot: QtBot, make_window: Callable[[], MainWindow], tmp_path: Path) -> None:
    store = tmp_path / "store"
    store.mkdir()
    real = save_models.plain(store)
    link = tmp_path / "link.onnx"
    link.symlink_to(real)
    w = make_window()
    open_and_wait(qtbot, w, link)
    _doc(w).edit.rename_node(0, "through_the_link")
    w.save_action.trigger()
    settle()
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert onnx.load(str(real)).graph.node[0].name == "through_the_link"
    assert w.statusBar().currentMessage().startswith("Saved link.onnx.")
    assert sorted(p.name for p in store.iterdir()) == ["model.onnx"]


def test_the_other_names_of_a_hard_linked_file_are_told(
        qtbot: QtBot, make_window: Callable[[], MainWindow], tmp_path: Path) -> None:
    path = save_models.plain(tmp_path)
    alias = tmp_path / "alias.onnx"
    os.link(path, alias)
    old = alias.read_bytes()
    w = make_window()
    open_and_wait(qtbot, w, path)
    _doc(w).edit.rename_node(0, "renamed")
    w.save_action.trigger()
    settle()
    assert alias.read_bytes() == old and onnx.load(str(path)).graph.node[0].name == "renamed"
    assert w.statusBar().currentMessage().startswith(
        "Saved model.onnx. model.onnx had 1 other name (hard link), which still holds the model as it was before "
        "this save.")


def test_an_exported_tensor_on_a_full_disk_is_one_sentence_and_no_file(
        qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from onnxviz.ui.widgets.tensor_view import TensorView

    view = TensorView()
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.loaded, timeout=10000):
        view.show_tensor("w", np.arange(50_000, dtype=np.float32))
    faulty_disk.small_chunks(monkeypatch, 16384)
    for at in range(4):  # the header, then each chunk of the values
        with faulty_disk.faulty(monkeypatch, at=at, fault="ENOSPC"):
            task = view.save_npy(tmp_path / "w.npy")
            assert task is not None
            with qtbot.waitSignal(task.failed, timeout=10000):
                pass
        assert view.message.text().replace("\u200b", "") == "Could not save w.npy: the disk is full."
        assert list(tmp_path.iterdir()) == []
    task = view.save_npy(tmp_path / "w.npy")
    assert task is not None
    with qtbot.waitSignal(task.finished, timeout=10000):
        pass
    np.testing.assert_array_equal(np.load(tmp_path / "w.npy"), np.arange(50_000, dtype=np.float32))


def test_opening_a_model_removes_what_killed_saves_left_beside_it(
        qtbot: QtBot, make_window: Callable[[], MainWindow], tmp_path: Path) -> None:
    path = save_models.with_external_data(tmp_path)
    stale = tmp_path / f".model.onnx.onnxviz-saving-{2**22 + 7}.tmp"  # a process that is no more
    stale.write_bytes(b"half a model")
    w = make_window()
    open_and_wait(qtbot, w, path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.onnx", save_models.DATA_NAME]
