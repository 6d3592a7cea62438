"""Saving edited models: atomic, external data kept or embedded, problems reported but not blocking."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxviz
from onnxviz.model import document as document_module
from onnxviz.model.errors import SaveError
from onnxviz.model.io.saving import InvalidModelError


def _external_model(folder: Path) -> Path:
    w = numpy_helper.from_array(np.arange(64 * 64, dtype=np.float32).reshape(64, 64), "w")
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])], [w])
    path = folder / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), path,
              save_as_external_data=True, location="w.bin", size_threshold=0)
    return path


def test_edited_save_round_trips_and_marks_clean(example_copy: Path) -> None:
    doc = onnxviz.open(example_copy)
    doc.edit.rename_node(0, "first")
    assert doc.is_dirty
    doc.save()
    assert not doc.is_dirty
    again = onnxviz.open(example_copy)
    assert again.model.graph.node[0].name == "first"
    assert again.model.SerializeToString() == doc.model.SerializeToString()
    doc.undo()
    assert doc.is_dirty  # the file on disk has the rename


def test_failing_write_leaves_old_file_intact(example_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    original = example_copy.read_bytes()
    doc = onnxviz.open(example_copy)
    doc.edit.rename_node(0, "first")

    def broken_fsync(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(document_module.os, "fsync", broken_fsync)
    with pytest.raises(SaveError) as info:
        doc.save()
    assert info.value.message == "could not save example.onnx: the disk is full."
    assert example_copy.read_bytes() == original
    assert [p.name for p in example_copy.parent.iterdir()] == [example_copy.name]  # no temp file left
    assert doc.is_dirty


def test_save_with_problems_asks_first_then_is_allowed_and_summarised(example_copy: Path) -> None:
    original = example_copy.read_bytes()
    doc = onnxviz.open(example_copy)
    doc.edit.set_op_type(0, "Relu")
    doc.check()
    summary = doc.problem_summary()
    assert "error" in summary
    with pytest.raises(InvalidModelError, match="would replace example.onnx, which had none") as info:
        doc.save()
    assert example_copy.read_bytes() == original and "allow_errors=True" in info.value.details
    doc.save(allow_errors=True)
    assert onnxviz.open(example_copy).model.graph.node[0].op_type == "Relu"
    doc.edit.rename_node(0, "still_broken")
    doc.save()  # the file has errors now: nothing valid is replaced


def test_edited_model_keeps_external_data_on_save_as(tmp_path: Path) -> None:
    src = _external_model(tmp_path)
    doc = onnxviz.open(src)
    doc.edit.rename_node("mm", "matmul")
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    doc.save(out_dir / "edited.onnx")
    assert (out_dir / "w.bin").read_bytes() == (tmp_path / "w.bin").read_bytes()
    loaded = onnx.load(out_dir / "edited.onnx")
    assert loaded.graph.node[0].name == "matmul"
    assert numpy_helper.to_array(loaded.graph.initializer[0])[1, 0] == 64


def test_embed_external_data_on_save_as(tmp_path: Path) -> None:
    src = _external_model(tmp_path)
    doc = onnxviz.open(src)
    doc.edit.rename_node("mm", "matmul")
    out_dir = tmp_path / "embedded"
    out_dir.mkdir()
    doc.save(out_dir / "m.onnx", external="embed")
    assert os.listdir(out_dir) == ["m.onnx"]
    t = onnx.load(out_dir / "m.onnx", load_external_data=False).graph.initializer[0]
    assert t.data_location == TensorProto.DEFAULT
    assert numpy_helper.to_array(t)[1, 0] == 64
    assert not doc.is_dirty and not doc.undo_stack.can_undo
    assert doc.load_problems == []
    doc.save()  # the document is now the embedded file: saving again stays complete
    assert onnx.load(out_dir / "m.onnx").graph.initializer[0].raw_data
    with pytest.raises(SaveError):
        doc.save(external="inline")


def test_snapshot_is_not_changed_by_later_edits(example_path: Path) -> None:
    doc = onnxviz.open(example_path)
    snap = doc.snapshot()
    doc.edit.rename_node(0, "changed")
    assert snap.graph.node[0].name == "/stem/conv/Conv"
    assert doc.model.graph.node[0].name == "changed"
