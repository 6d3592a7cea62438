"""The document: opening, the index, saving atomically and byte-identically."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxviz
from onnxviz.model.document import Document
from onnxviz.model.errors import LoadError, SaveError
from onnxviz.model.graph.index import GRAPH_INPUT, INITIALIZER, ModelIndex


def _model(nodes: list[onnx.NodeProto], inputs: list[str], outputs: list[str],
           inits: list[TensorProto] | None = None) -> onnx.ModelProto:
    vi = lambda n: helper.make_tensor_value_info(n, TensorProto.FLOAT, [2])  # noqa: E731
    graph = helper.make_graph(nodes, "g", [vi(n) for n in inputs], [vi(n) for n in outputs], inits or [])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_open_returns_document_with_model(example_path: Path) -> None:
    doc = onnxviz.open(str(example_path))
    assert doc.model.graph.name == "example_cnn_attention"
    assert doc.problems == []
    assert not doc.is_dirty


def test_index_producers_and_consumers(example_path: Path) -> None:
    doc = onnxviz.open(example_path)
    main = doc.index.main
    conv = next(i for i, n in enumerate(doc.model.graph.node) if n.name == "/stem/conv/Conv")
    assert main.producer["stem.conv"] == conv
    assert main.producer["image"] == GRAPH_INPUT
    assert main.producer["stem.conv.weight"] == INITIALIZER
    add = next(i for i, n in enumerate(doc.model.graph.node) if n.name == "/res/Add")
    relu = next(i for i, n in enumerate(doc.model.graph.node) if n.name == "/stem/relu/Relu")
    assert main.consumers_of("stem.pool") == [relu + 2, add]  # residual conv and the Add


def test_problems_attached_to_nodes() -> None:
    nodes = [
        helper.make_node("Relu", ["b"], ["c"], name="late"),     # reads b before it is made
        helper.make_node("Relu", ["x"], ["b"], name="first"),
        helper.make_node("Relu", ["missing"], ["d"], name="orphan"),
        helper.make_node("Relu", ["x"], ["d"], name="dup"),
    ]
    ix = ModelIndex(_model(nodes, ["x"], ["c", "nowhere"]))
    msgs = {(p.node_name, p.value): p.message for p in ix.problems}
    assert ("orphan", "missing") in msgs
    assert ("dup", "d") in msgs
    assert ("", "nowhere") in msgs
    assert ix.main.unsorted
    assert any("topological" in p.message for p in ix.problems)


def test_cycle_is_found_and_terminates() -> None:
    nodes = [helper.make_node("Add", ["x", "b"], ["a"], name="A"),
             helper.make_node("Relu", ["a"], ["b"], name="B")]
    ix = ModelIndex(_model(nodes, ["x"], ["b"]))
    assert sorted(ix.main.cyclic_nodes) == [0, 1]
    assert sum("cycle" in p.message for p in ix.problems) == 2


def test_subgraph_reads_outer_scope() -> None:
    then_g = helper.make_graph([helper.make_node("Relu", ["x"], ["t"])], "then", [],
                               [helper.make_tensor_value_info("t", TensorProto.FLOAT, [2])])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [],
                               [helper.make_tensor_value_info("e", TensorProto.FLOAT, [2])])
    cond = helper.make_tensor_value_info("cond", TensorProto.BOOL, [])
    node = helper.make_node("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g, name="if")
    graph = helper.make_graph([node], "g", [cond, helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    ix = ModelIndex(helper.make_model(graph))
    assert ix.problems == []
    assert set(ix.graphs) == {"", "0.then_branch", "0.else_branch"}
    assert ix.graphs["0.then_branch"].outer_reads == {"x"}
    assert 0 in ix.main.consumers_of("x")


def test_unedited_save_is_byte_identical(example_copy: Path, tmp_path: Path) -> None:
    original = example_copy.read_bytes()
    doc = onnxviz.open(example_copy)
    doc.save()
    assert example_copy.read_bytes() == original
    other = tmp_path / "sub" / "copy.onnx"
    other.parent.mkdir()
    doc.save(other)
    assert other.read_bytes() == original
    assert doc.path == other


def test_failed_save_leaves_original_intact(example_copy: Path, tmp_path: Path) -> None:
    original = example_copy.read_bytes()
    doc = onnxviz.open(example_copy)
    with pytest.raises(SaveError):
        doc.save(tmp_path)  # a folder
    with pytest.raises(SaveError):
        doc.save(tmp_path / "no" / "such" / "dir" / "m.onnx")
    assert example_copy.read_bytes() == original
    assert [p.name for p in tmp_path.iterdir()] == ["example.onnx"]


def test_external_data_is_lazy_and_copied_on_save_as(tmp_path: Path) -> None:
    w = numpy_helper.from_array(np.arange(4096, dtype=np.float32), "w")
    model = _model([helper.make_node("Add", ["x", "w"], ["y"])], ["x"], ["y"], [w])
    src = tmp_path / "a" / "m.onnx"
    src.parent.mkdir()
    onnx.save(model, src, save_as_external_data=True, all_tensors_to_one_file=True, location="m.data",
              size_threshold=0)
    doc = onnxviz.open(src)
    assert doc.problems == []
    t = doc.model.graph.initializer[0]
    assert t.data_location == TensorProto.EXTERNAL and not t.raw_data
    dst = tmp_path / "b" / "m.onnx"
    dst.parent.mkdir()
    doc.save(dst)
    assert (tmp_path / "b" / "m.data").read_bytes() == (tmp_path / "a" / "m.data").read_bytes()
    loaded = onnx.load(dst)
    assert np.array_equal(numpy_helper.to_array(loaded.graph.initializer[0]), np.arange(4096, dtype=np.float32))


@pytest.mark.parametrize("location", ["../secret.bin", "/etc/passwd", "link.bin", "gone.bin"])
def test_external_data_outside_folder_is_refused(tmp_path: Path, location: str) -> None:
    (tmp_path / "secret.bin").write_bytes(b"\0" * 64)
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "link.bin").symlink_to(tmp_path / "secret.bin")
    w = helper.make_tensor("w", TensorProto.FLOAT, [2], [1.0, 2.0])
    w.ClearField("float_data")
    w.data_location = TensorProto.EXTERNAL
    w.external_data.add(key="location", value=location)
    model = _model([helper.make_node("Add", ["x", "w"], ["y"])], ["x"], ["y"], [w])
    path = folder / "m.onnx"
    path.write_bytes(model.SerializeToString())
    doc = onnxviz.open(path)  # the graph still opens
    assert len(doc.model.graph.node) == 1
    [problem] = doc.problems
    assert problem.value == "w"
    assert location in problem.message or "link" in problem.message


@pytest.mark.parametrize("content, phrase", [
    (b"", "empty"),
    (b"\x1f\x8b\x08\x00garbage", "gzip"),
    (b'{"graph": {}}', "JSON"),
    (b"\xff\xff\xff\xff\xff\xff", "not a valid ONNX model"),
])
def test_unreadable_files_get_one_sentence(tmp_path: Path, content: bytes, phrase: str) -> None:
    path = tmp_path / "bad.onnx"
    path.write_bytes(content)
    with pytest.raises(LoadError) as info:
        onnxviz.open(path)
    assert phrase in info.value.message
    assert "\n" not in info.value.message


def test_the_editor_is_one_object_and_no_reference_cycle(example_path: Path) -> None:
    """doc.edit was made anew on each use (``doc.edit is doc.edit`` was False): one kept by the document
    referred back to it, a cycle only the cycle collector frees."""
    import gc
    import weakref

    doc = Document.open(example_path)
    editor = doc.edit
    assert doc.edit is editor
    editor.rename_node("/stem/conv/Conv", "stem_conv")
    assert doc.model.graph.node[0].name == "stem_conv" and doc.undo_stack.commands
    gone = weakref.ref(doc)
    gc.collect()
    gc.disable()
    try:
        del doc
        assert gone() is not None  # the editor held refers to its document
        del editor
        assert gone() is None  # then both go by reference counting alone: no cycle
    finally:
        gc.enable()
    part = Document.open(example_path).edit.extract_nodes(["/res/Add"])  # a document nobody holds
    assert [n.name for n in part.graph.node] == ["/res/Add"]
