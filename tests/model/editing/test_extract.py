"""Extracting part of a model: the boundary of chosen nodes, the model's header kept, the part checked and run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from conftest import TEST_DATA
from onnx import TensorProto, helper, numpy_helper

from onnxviz.model.document import Document
from onnxviz.model.errors import EditError

IR_VERSION = 10  # onnxruntime 1.31 refuses onnx's newest


def branch_model() -> onnx.ModelProto:
    """x -> a=Relu -> b=Mul(a, w) -> {c=Sigmoid(b), d=Tanh(b)} -> y=Add(c, d) -> z=Neg(y); y and z are outputs.

    Also a Constant feeding ``c2 = Add(c, k)`` read by the Add, so the part pulls a Constant in."""
    f = TensorProto.FLOAT
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="relu"),
        helper.make_node("Mul", ["a", "w"], ["b"], name="mul"),
        helper.make_node("Sigmoid", ["b"], ["c"], name="sig"),
        helper.make_node("Tanh", ["b"], ["d"], name="tanh"),
        helper.make_node("Constant", [], ["k"], name="k", value=numpy_helper.from_array(np.float32([0.5]), "k")),
        helper.make_node("Add", ["c", "k"], ["c2"], name="shift"),
        helper.make_node("Add", ["c2", "d"], ["y"], name="add"),
        helper.make_node("Neg", ["y"], ["z"], name="neg"),
    ]
    graph = helper.make_graph(nodes, "branch", [helper.make_tensor_value_info("x", f, [2, 3])],
                              [helper.make_tensor_value_info("y", f, [2, 3]), helper.make_tensor_value_info("z", f, [2, 3])],
                              [numpy_helper.from_array(np.full((2, 3), 1.5, np.float32), "w")])
    model = helper.make_model(graph, producer_name="branch-maker", producer_version="3.1",
                              opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("custom.dom", 1)])
    model.ir_version = IR_VERSION
    model.domain, model.model_version, model.doc_string = "org.example", 7, "a model with a branch"
    helper.set_model_props(model, {"author": "tests", "licence": "none"})
    fn = helper.make_function("custom.dom", "Twice", ["t"], ["u"], [helper.make_node("Add", ["t", "t"], ["u"])],
                              [helper.make_opsetid("", 17)])
    model.functions.append(fn)
    return model


def intermediates(model: onnx.ModelProto, feeds: dict[str, np.ndarray], names: list[str]) -> dict[str, np.ndarray]:
    """The values ``names`` take when the whole ``model`` runs on ``feeds``."""
    probe = onnx.ModelProto()
    probe.CopyFrom(onnx.shape_inference.infer_shapes(model))
    known = {v.name: v for v in probe.graph.value_info}
    del probe.graph.output[:]
    probe.graph.output.extend(known[n] if n in known else helper.make_empty_tensor_value_info(n) for n in names)
    session = ort.InferenceSession(probe.SerializeToString(), providers=["CPUExecutionProvider"])
    return dict(zip(names, session.run(names, feeds), strict=True))


def check_and_run(part: onnx.ModelProto, tmp_path: Path, values: dict[str, np.ndarray]) -> None:
    """The part passes the full checker, and onnxruntime gives from its inputs' original values the
    original values of its outputs."""
    path = tmp_path / "part.onnx"
    onnx.save(part, path)
    onnx.checker.check_model(str(path), full_check=True)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    outs = session.run(None, {i.name: values[i.name] for i in part.graph.input})
    for info, got in zip(part.graph.output, outs, strict=True):
        np.testing.assert_allclose(got, values[info.name], rtol=1e-6)


@pytest.fixture
def doc() -> Document:
    return Document(branch_model())


def test_the_branch_between_the_fork_and_the_join_is_extracted_with_its_boundary(doc: Document,
                                                                               tmp_path: Path) -> None:
    part = doc.edit.extract_nodes(["sig", "tanh", "shift", "add"])
    assert [v.name for v in part.graph.input] == ["b"]
    assert [v.name for v in part.graph.output] == ["y"]  # a graph output, and Neg reads it
    assert [n.name for n in part.graph.node] == ["sig", "tanh", "k", "shift", "add"]  # the Constant came along
    feeds = {"x": np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)}
    check_and_run(part, tmp_path, intermediates(doc.model, feeds, ["b", "y"]))
    assert not doc.is_dirty


def test_a_constant_brought_along_is_no_output_even_when_read_outside(tmp_path: Path) -> None:
    model = branch_model()
    model.graph.node[-1].input.append("k")  # z = Neg(y) -> Sum(y, k)
    model.graph.node[-1].op_type = "Sum"
    part = Document(model).edit.extract_nodes(["shift"])
    assert [n.name for n in part.graph.node] == ["k", "shift"]
    assert ([v.name for v in part.graph.input], [v.name for v in part.graph.output]) == (["c"], ["c2"])


def test_a_part_with_an_initializer_and_an_output_read_outside(doc: Document, tmp_path: Path) -> None:
    part = doc.edit.extract_nodes(["relu", "mul", "tanh"])
    assert [v.name for v in part.graph.input] == ["x"]
    assert [v.name for v in part.graph.output] == ["b", "d"]  # b: Sigmoid outside reads it; d: the Add
    assert [t.name for t in part.graph.initializer] == ["w"]
    assert part.graph.input[0].type.tensor_type.elem_type == TensorProto.FLOAT
    feeds = {"x": np.random.default_rng(1).standard_normal((2, 3)).astype(np.float32)}
    check_and_run(part, tmp_path, {**feeds, **intermediates(doc.model, feeds, ["b", "d"])})


def test_the_extracted_model_keeps_the_model_header(doc: Document) -> None:
    original = doc.model
    for part in (doc.edit.extract_nodes([2, 3]), doc.edit.extract(["b"], ["y"])):
        assert part.ir_version == IR_VERSION
        assert (part.producer_name, part.producer_version) == ("branch-maker", "3.1")
        assert (part.domain, part.model_version, part.doc_string) == ("org.example", 7, "a model with a branch")
        assert {p.key: p.value for p in part.metadata_props} == {"author": "tests", "licence": "none"}
        assert list(part.opset_import) == list(original.opset_import)
        assert [f.name for f in part.functions] == ["Twice"]


def test_boundaries_that_cannot_be_extracted_are_refused_in_one_sentence(doc: Document) -> None:
    with pytest.raises(EditError, match="select the nodes"):
        doc.edit.extract_nodes([])
    with pytest.raises(EditError, match="no node"):
        doc.edit.extract_nodes(["missing"])
    dead = branch_model()
    dead.graph.node.append(helper.make_node("Abs", ["z"], ["unused"], name="abs"))
    with pytest.raises(EditError, match="nothing outside the selected nodes reads"):
        Document(dead).edit.extract_nodes(["abs"])


def test_a_whole_transformer_layer_runs_alone(tmp_path: Path) -> None:
    from synth import build

    model = build(2)
    model.ir_version = IR_VERSION
    doc = Document(model)
    layer = [i for i, n in enumerate(model.graph.node) if n.name.startswith(("layers.1/", "layers.1."))]
    part = doc.edit.extract_nodes(layer)
    assert [v.name for v in part.graph.input] == ["layers.0.res2"]
    assert [v.name for v in part.graph.output] == ["layers.1.res2"]
    feeds = {"input_ids_embed": np.random.default_rng(2).standard_normal((1, 4, 16)).astype(np.float32)}
    check_and_run(part, tmp_path, intermediates(model, feeds, ["layers.0.res2", "layers.1.res2"]))


def test_a_part_reads_weights_only_inside_its_source_folder(tmp_path: Path) -> None:
    """An unsaved part reads external weights from its source's folder, by the same rules as any model:
    a location leading out of that folder is refused there too, and nothing outside is read."""
    folder = tmp_path / "model"
    folder.mkdir()
    (tmp_path / "outside.bin").write_bytes(np.ones(4, np.float32).tobytes())
    (folder / "inside.bin").write_bytes(np.ones(4, np.float32).tobytes())
    inside, outside = TensorProto(name="inside", data_type=TensorProto.FLOAT, dims=[4]), \
        TensorProto(name="outside", data_type=TensorProto.FLOAT, dims=[4])
    for tensor, location in ((inside, "inside.bin"), (outside, "../outside.bin")):
        tensor.data_location = TensorProto.EXTERNAL
        tensor.external_data.add(key="location", value=location)
    graph = helper.make_graph([helper.make_node("Add", ["x", "inside"], ["a"], name="add_in"),
                               helper.make_node("Add", ["a", "outside"], ["y"], name="add_out")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], [inside, outside])
    path = folder / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=IR_VERSION), path)
    source = Document.open(path)
    refused = [p.message for p in source.load_problems]
    assert refused == ["tensor 'outside' points outside the model's folder ('../outside.bin'); refused."]
    good = Document.part_of(source.edit.extract_nodes(["add_in"]), source)
    assert good.path is None and good.base_dir == folder.absolute() and good.load_problems == []
    bad = Document.part_of(source.edit.extract_nodes(["add_out"]), source)
    assert [p.message for p in bad.load_problems] == refused


def test_a_qdq_layer_takes_its_dequantized_weights_along(tmp_path: Path) -> None:
    """A QDQ export's layer: its weights' DequantizeLinear nodes come into the part (before, its 4 dequantized
    weights became graph inputs), so the part runs from its activation alone."""
    path = TEST_DATA / "exports" / "resnet_int8_qdq.onnx"
    doc = Document.open(path)
    layer = [i for i, n in enumerate(doc.model.graph.node) if n.name.startswith("/layer1/")]
    part = doc.edit.extract_nodes(layer)
    assert [v.name for v in part.graph.input] == ["/stem/stem.2/Relu_output_0_DequantizeLinear_Output"]
    weights = [n.name for n in part.graph.node if n.op_type == "DequantizeLinear" and n.input[0] in
               {t.name for t in part.graph.initializer}]
    assert len(weights) == 4 and len(part.graph.node) == len(layer) + 4
    model = onnx.load(path)
    feeds = {"image": np.random.default_rng(3).standard_normal((1, 3, 32, 32)).astype(np.float32)}
    names = [v.name for v in part.graph.input] + [v.name for v in part.graph.output]
    check_and_run(part, tmp_path, intermediates(model, feeds, names))
