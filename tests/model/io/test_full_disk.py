"""The writes of onnxviz on a real full disk: a 5 MiB tmpfs mounted for the test (root only; skipped where
mounting is not permitted). The disk is filled to leave less room than the write needs, so it fills in the
middle of it: a model saved in place, saved with its weights in a data file, saved as a copy beside its
data, a run dumped with --dump, a picture of the graph, an exported tensor and the settings. Each is one
sentence, the old files keep their bytes, no temporary file is left, and nothing says it was saved."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

import onnxviz
from onnxviz.model.errors import OnnxvizError
from onnxviz.model.io.disk import TEMP_MARK

SIZE = 5 << 20


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    """A fresh 5 MiB tmpfs, unmounted after the test."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={SIZE}", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"mounting a tmpfs is not permitted here ({made.stderr.strip()})")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _model(weights: int = 600, rows: int = 1) -> onnx.ModelProto:
    """A MatMul of a (rows x weights) input with a (weights x 1000) float32 weight: 2.4 MB at 600."""
    w = numpy_helper.from_array(np.random.default_rng(0).random((weights, 1000), dtype=np.float32), "w")
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "g",
                              [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [rows, weights])],
                              [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [rows, 1000])], [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def _fill(disk: Path, leave: int) -> None:
    """Take the disk's free room down to about ``leave`` bytes."""
    free = shutil.disk_usage(disk).free
    if free > leave:
        with open(disk / "filler", "ab") as f:
            f.write(b"\0" * (free - leave))


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file() and p.name != "filler"}


def _no_temporary(folder: Path) -> None:
    assert not [p for p in folder.rglob("*") if TEMP_MARK in p.name]


def test_a_model_saved_in_place_on_a_full_disk_keeps_the_original(disk: Path) -> None:
    path = disk / "r.onnx"
    onnx.save(_model(), path)
    doc = onnxviz.open(path)
    doc.edit.rename_node("mm", "renamed")
    _fill(disk, path.stat().st_size // 2)
    before = _files(disk)
    with pytest.raises(OnnxvizError) as info:
        doc.save()
    assert info.value.message == "could not save r.onnx: the disk is full."
    assert _files(disk) == before and doc.is_dirty
    _no_temporary(disk)
    (disk / "filler").unlink()
    doc.save()
    assert onnx.load(str(path)).graph.node[0].name == "renamed"


@pytest.mark.parametrize("how", ["data file in place", "copy beside its data"])
def test_a_two_file_save_on_a_full_disk_keeps_the_old_model_with_its_old_data(disk: Path, how: str) -> None:
    home = disk / "home"
    home.mkdir()
    path = home / "m.onnx"
    onnx.save_model(_model(300), str(path), save_as_external_data=True, location="m.onnx.data")
    doc = onnxviz.open(path)
    doc.edit.rename_node("mm", "renamed")
    target = path if how == "data file in place" else disk / "copy" / "m.onnx"
    target.parent.mkdir(exist_ok=True)
    _fill(disk, (home / "m.onnx.data").stat().st_size // 2)
    before = {**_files(home), **{f"copy/{k}": v for k, v in _files(target.parent).items()}}
    with pytest.raises(OnnxvizError) as info:
        doc.save(target, external="file" if how == "data file in place" else "keep")
    assert info.value.message.endswith(": the disk is full.") and TEMP_MARK not in info.value.message
    after = {**_files(home), **{f"copy/{k}": v for k, v in _files(target.parent).items()}}
    assert after == before and doc.is_dirty
    _no_temporary(disk)


def test_a_dump_into_a_full_disk_is_one_sentence_and_leaves_nothing(disk: Path, tmp_path: Path) -> None:
    model = tmp_path / "m.onnx"
    onnx.save(_model(300, rows=1000), model)  # values of 1.2 and 4 MB
    dump = disk / "values"
    dump.mkdir()
    (dump / "notes.txt").write_text("the user's own file")
    _fill(disk, 1 << 20)
    ran = subprocess.run([sys.executable, "-m", "onnxviz", "run", str(model), "--dump", str(dump)],
                         capture_output=True, text=True, timeout=300)
    assert ran.returncode == 2, ran.stdout
    assert ran.stderr == f"onnxviz: error: could not write the values to {dump}: the disk is full; none of them " \
                         "were kept\n"
    assert sorted(os.listdir(dump)) == ["notes.txt"]


def test_a_picture_and_an_exported_tensor_on_a_full_disk(disk: Path, tmp_path: Path) -> None:
    model = tmp_path / "m.onnx"
    onnx.save(_model(300), model)
    _fill(disk, 2000)
    out = disk / "graph.png"
    drawn = subprocess.run([sys.executable, "-m", "onnxviz", "render", str(model), "-o", str(out)],
                           capture_output=True, text=True, timeout=300, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert drawn.returncode == 2 and drawn.stderr == "onnxviz: error: could not write graph.png: the disk is full\n"
    from onnxviz.model.io.disk import atomic_write_with, write_npy

    with pytest.raises(OnnxvizError, match=r"^could not save w\.npy: the disk is full\.$"):
        atomic_write_with(disk / "w.npy", lambda f: write_npy(f, np.zeros(100_000, np.float32)))
    assert sorted(os.listdir(disk)) == ["filler"]


def test_settings_on_a_full_disk_keep_what_they_held_and_say_so(disk: Path) -> None:
    from PySide6.QtCore import QSettings

    from onnxviz.ui import settings as settings_module

    path = disk / "onnxviz.ini"
    first = QSettings(str(path), QSettings.Format.IniFormat)
    first.setValue("recent/files", ["a.onnx"])
    assert settings_module.sync(first)
    held = path.read_bytes()
    _fill(disk, 0)
    logged: list[str] = []
    real_warn = settings_module.warn
    settings_module.warn = logged.append  # type: ignore[assignment]
    try:
        first.setValue("window/state", "x" * 100_000)
        assert not settings_module.sync(first)
    finally:
        settings_module.warn = real_warn
    assert path.read_bytes() == held and len(logged) == 1 and logged[0].endswith("it keeps what it held.")
    assert sorted(os.listdir(disk)) == ["filler", "onnxviz.ini"]


def test_a_save_on_a_read_only_disk_is_one_sentence_and_keeps_the_files(disk: Path) -> None:
    """A read-only file system refuses even to unlink a temporary file that was never made (EROFS, not
    ENOENT): that must not replace the sentence with a raw error naming the temporary file."""
    home = disk / "home"
    home.mkdir()
    onnx.save(_model(10), home / "m.onnx")
    onnx.save(_model(10), home / "e.onnx", save_as_external_data=True, location="e.onnx.data", size_threshold=0)
    before = _files(home)
    subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
    for name, external in [("m.onnx", "keep"), ("e.onnx", "keep"), ("e.onnx", "file"), ("e.onnx", "embed")]:
        doc = onnxviz.open(str(home / name))
        doc.edit.rename_node("mm", "renamed")
        with pytest.raises(OnnxvizError) as info:
            doc.save(external=external)  # type: ignore[arg-type]
        assert info.value.message == f"could not save {name}: the disk is read-only.", external
        assert doc.is_dirty
    assert _files(home) == before


def test_a_transform_whose_working_files_fill_the_disk_is_one_sentence(disk: Path, tmp_path: Path) -> None:
    """The transform's worker writes the model and the tool's result into a folder of its own in TMPDIR; a full
    disk there was 'OSError: [Errno 28] No space left on device'."""
    model, out = tmp_path / "m.onnx", tmp_path / "out.onnx"
    onnx.save(_model(850), model)  # 3.4 MB, on a disk left with 1 MiB
    _fill(disk, 1 << 20)
    ran = subprocess.run([sys.executable, "-m", "onnxviz", "transform", str(model), str(out), "--with", "onnxslim"],
                         capture_output=True, text=True, timeout=300, env={**os.environ, "TMPDIR": str(disk)})
    assert ran.returncode == 2, ran.stdout
    assert ran.stderr == f"onnxviz: error: the transform could not write its working files in {disk}: the disk is " \
                         "full; the model is unchanged\n"
    assert not out.exists() and sorted(os.listdir(disk)) == ["filler"]
