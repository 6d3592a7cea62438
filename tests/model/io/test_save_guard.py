"""A model is all of its files (issue 29): through the API, a save never writes a model reading a data file another
program changed since it was read, asks before a model with errors replaces a valid file, keeps links, tells of
hard links, leaves no temporary or orphan file once a model in its folder is opened, and copies keep modes."""

from __future__ import annotations

import os
import stat
import warnings
from pathlib import Path

import numpy as np
import onnx
import pytest
import save_models

import onnxviz
from onnxviz.model.io.disk import TEMP_MARK
from onnxviz.model.io.saving import DataChangedError, FileChangedError, InvalidModelError, SaveNotice


def _weights(path: Path) -> dict[str, np.ndarray]:
    return save_models.arrays(onnx.load(str(path), load_external_data=False), path.parent)


def _other_weights(folder: Path, scale: float) -> bytes:
    """The data file of the same model with other weights (the same layout)."""
    other = folder / f"other-{scale}"
    other.mkdir()
    save_models.with_external_data(other, scale=scale)
    return (other / save_models.DATA_NAME).read_bytes()


def _replace(path: Path, data: bytes) -> None:
    """Another program writes a new file and renames it over ``path`` (how most programs save)."""
    spare = path.with_name(".spare")
    spare.write_bytes(data)
    os.replace(spare, path)


@pytest.fixture
def external(tmp_path: Path) -> Path:
    (tmp_path / "m").mkdir()
    return save_models.with_external_data(tmp_path / "m")


def test_a_data_file_replaced_by_another_program_is_asked_about(external: Path, tmp_path: Path) -> None:
    read = _weights(external)
    doc = onnxviz.open(external)
    doc.edit.rename_node(0, "renamed")
    data = external.parent / save_models.DATA_NAME
    _replace(data, _other_weights(tmp_path, 40.0))
    theirs, model = data.read_bytes(), external.read_bytes()
    with pytest.raises(DataChangedError) as info:
        doc.save()
    assert info.value.message == (f"'{save_models.DATA_NAME}' was replaced on disk by another program since "
                                  "onnxviz read it; saving would make model.onnx read weights onnxviz never showed.")
    assert "external='file'" in info.value.details and not info.value.lost
    assert external.read_bytes() == model and data.read_bytes() == theirs
    doc.save(external="file")  # the answer: the weights read, from the file held, into a new data file
    for name, array in _weights(external).items():
        np.testing.assert_array_equal(array, read[name])
    assert data.read_bytes() == theirs and (external.parent / "model.onnx.1.data").exists()
    doc.edit.rename_node(0, "again")
    doc.save()  # the new data file is the one read now: no question
    assert onnx.load(str(external), load_external_data=False).graph.node[0].name == "again"


def test_a_data_file_rewritten_in_place_can_only_be_reloaded(external: Path, tmp_path: Path) -> None:
    doc = onnxviz.open(external)
    doc.edit.rename_node(0, "renamed")
    data = external.parent / save_models.DATA_NAME
    with open(data, "r+b") as f:  # the same file, other weights: what the window read is gone
        f.write(_other_weights(tmp_path, 2.0))
    for external_choice in ("keep", "file", "embed"):
        with pytest.raises(DataChangedError, match="reload the model to save it") as info:
            doc.save(external=external_choice)  # type: ignore[arg-type]
        assert info.value.lost and not info.value.choices and "onnxviz.open" in info.value.details


def test_overwrite_of_a_changed_model_file_does_not_take_the_other_programs_weights(external: Path,
                                                                                    tmp_path: Path) -> None:
    doc = onnxviz.open(external)
    doc.edit.rename_node(0, "mine")
    theirs = onnx.load(str(external), load_external_data=False)
    theirs.producer_name = "the other program"
    _replace(external, theirs.SerializeToString())
    _replace(external.parent / save_models.DATA_NAME, _other_weights(tmp_path, 3.0))
    with pytest.raises(FileChangedError):
        doc.save()
    with pytest.raises(DataChangedError):
        doc.save(overwrite=True)  # Overwrite answers for the model file, not for its weights


def test_save_as_over_a_data_file_onnxviz_wrote_that_another_program_replaced_since(external: Path,
                                                                                    tmp_path: Path) -> None:
    read = _weights(external)
    doc = onnxviz.open(external)
    (tmp_path / "b").mkdir()
    doc.save(tmp_path / "b" / "model.onnx")  # writes b/model.onnx.data, which the document now reads
    _replace(tmp_path / "b" / save_models.DATA_NAME, _other_weights(tmp_path, 5.0))
    doc.edit.rename_node(0, "renamed")
    with pytest.raises(DataChangedError):
        doc.save(tmp_path / "b" / "copy.onnx")  # would read b/model.onnx.data, no longer what was read
    (tmp_path / "c").mkdir()
    doc.save(tmp_path / "c" / "copy.onnx")  # another folder: the weights read are copied from the file held
    for name, array in _weights(tmp_path / "c" / "copy.onnx").items():
        np.testing.assert_array_equal(array, read[name])


def test_touching_or_copying_the_same_bytes_over_a_data_file_is_no_change(external: Path) -> None:
    doc = onnxviz.open(external)
    doc.edit.rename_node(0, "renamed")
    data = external.parent / save_models.DATA_NAME
    os.utime(data, ns=(1, 10**18))
    _replace(data, data.read_bytes())
    doc.save()
    assert onnx.load(str(external), load_external_data=False).graph.node[0].name == "renamed"


def test_a_model_with_errors_asks_before_replacing_a_valid_file_cycles_included(tmp_path: Path) -> None:
    path = save_models.plain(tmp_path)
    valid = path.read_bytes()
    doc = onnxviz.open(path)
    out = doc.model.graph.output[0].name
    try:  # a node reading its own output (refused by the editing API once cycles are refused)
        doc.edit.insert_on_value(out, "Mul", extra_inputs=[out])
    except onnxviz.OnnxvizError:
        doc.edit.remove_node(0, reconnect=False)
    with pytest.raises(InvalidModelError, match=r"^the model now has \d+ errors? \(first: .+\) and would replace "
                                                r"model\.onnx, which had none\.$") as info:
        doc.save()
    assert path.read_bytes() == valid and info.value.choices[0][0] == "Save Anyway"
    doc.save(allow_errors=True)
    assert path.read_bytes() != valid
    doc.save(tmp_path / "elsewhere.onnx")  # Save As to a new file: nothing is replaced, no question


def test_a_model_with_errors_from_the_start_is_saved_without_a_question(tmp_path: Path) -> None:
    path = save_models.plain(tmp_path)
    doc = onnxviz.open(path)
    doc.edit.remove_node(0, reconnect=False)
    doc.save(allow_errors=True)
    reopened = onnxviz.open(path)
    reopened.edit.rename_node(0, "still_broken")
    reopened.save()  # the file had errors already


def test_a_symbolic_link_stays_a_link(tmp_path: Path) -> None:
    (tmp_path / "store").mkdir()
    real = save_models.plain(tmp_path / "store")
    link = tmp_path / "link.onnx"
    link.symlink_to(Path("store") / "model.onnx")
    doc = onnxviz.open(link)
    doc.edit.rename_node(0, "through_the_link")
    assert doc.save() == link.absolute()
    assert link.is_symlink() and os.readlink(link) == str(Path("store") / "model.onnx")
    assert onnx.load(str(real)).graph.node[0].name == "through_the_link"
    assert sorted(os.listdir(tmp_path / "store")) == ["model.onnx"] and sorted(os.listdir(tmp_path)) == [
        "link.onnx", "store"]


def test_the_other_names_of_a_hard_linked_file_keep_the_old_model_and_are_told(tmp_path: Path) -> None:
    path = save_models.plain(tmp_path)
    alias = tmp_path / "alias.onnx"
    os.link(path, alias)
    old = alias.read_bytes()
    doc = onnxviz.open(path)
    doc.edit.rename_node(0, "renamed")
    with warnings.catch_warnings(record=True) as told:
        warnings.simplefilter("always")
        doc.save()
    assert [str(w.message) for w in told if w.category is SaveNotice] == [
        "model.onnx had 1 other name (hard link), which still holds the model as it was before this save."]
    assert alias.read_bytes() == old and doc.save_notes
    doc.edit.rename_node(0, "again")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        doc.save()  # a file of its own now: nothing to tell


def test_what_a_killed_save_left_goes_when_a_model_in_its_folder_is_opened(external: Path) -> None:
    folder = external.parent
    stale = folder / f".model.onnx{TEMP_MARK}{2**22 + 7}.tmp"  # no such process
    stale.write_bytes(b"half a model")
    orphan = folder / "model.onnx.1.data"  # a killed save's new data file, never committed
    orphan.write_bytes(b"\0" * 100)
    journal = folder / f".model.onnx{TEMP_MARK}{2**22 + 7}.journal"
    journal.write_text('{"model": "model.onnx", "new": ["model.onnx.1.data"], "old": ["model.onnx.data"]}')
    onnxviz.open(external)
    assert sorted(os.listdir(folder)) == ["model.onnx", save_models.DATA_NAME]  # the model's own data stays


def test_a_copied_data_file_keeps_its_mode(external: Path, tmp_path: Path) -> None:
    data = external.parent / save_models.DATA_NAME
    data.chmod(0o640)
    (tmp_path / "b").mkdir()
    onnxviz.open(external).save(tmp_path / "b" / "model.onnx")
    assert stat.S_IMODE((tmp_path / "b" / save_models.DATA_NAME).stat().st_mode) == 0o640


def test_embedding_the_weights_in_place_leaves_no_unused_data_file(external: Path) -> None:
    read = _weights(external)
    doc = onnxviz.open(external)
    doc.save(external="embed")
    assert sorted(os.listdir(external.parent)) == ["model.onnx"]
    for name, array in _weights(external).items():
        np.testing.assert_array_equal(array, read[name])
