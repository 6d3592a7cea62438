"""onnx-modifier's list of edits, walked on a transformer-shaped export (bench/synth.py, 2 layers): after each
step the model is saved, the saved file passes onnx's full check and onnxruntime runs it to finite outputs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from synth import build

from onnxviz.model.document import Document
from onnxviz.model.editing.values import parse_tensor_text
from onnxviz.ui.edit.attributes import load_npy

DIMS = {"batch": 1, "seq": 4}  # what a run gives a named dimension (the model's reshapes are for seq 4)
NUMPY = {onnx.TensorProto.FLOAT: np.float32, onnx.TensorProto.INT64: np.int64}


def random_inputs(path: Path) -> dict[str, np.ndarray]:
    """Random values of each graph input's type and shape, named dimensions as in :data:`DIMS`."""
    model = onnx.load(path)
    rng = np.random.default_rng(0)
    feeds = {}
    for info in model.graph.input:
        t = info.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else DIMS[d.dim_param] for d in t.shape.dim]
        feeds[info.name] = rng.standard_normal(shape).astype(NUMPY[t.elem_type])
    return feeds


def saved_and_run(doc: Document, path: Path) -> dict[str, np.ndarray]:
    """Save ``doc``, check the file fully, run it; its outputs by name (all finite)."""
    doc.save(path)
    onnx.checker.check_model(str(path), full_check=True)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    outs = dict(zip(names, session.run(None, random_inputs(path)), strict=True))
    for name, value in outs.items():
        assert np.all(np.isfinite(value)), f"{name} is not finite"
    return outs


def consumers(doc: Document, value: str) -> list[str]:
    return [n.name for n in doc.model.graph.node if value in n.input]


@pytest.fixture
def doc(tmp_path: Path) -> Document:
    model = onnx.shape_inference.infer_shapes(build(2))  # value_info for every value, as exporters write
    model.ir_version = 10  # onnxruntime 1.31 runs up to this
    path = tmp_path / "synth2.onnx"
    onnx.save(model, path)
    return Document.open(path)


def delete_node(doc: Document) -> None:
    doc.edit.remove_node("embed", reconnect=True)  # the Identity after the input: its readers read the input
    assert consumers(doc, "input_ids_embed")[:2] == ["layers.0.ln1/ReduceMean", "layers.0.ln1/Sub"]


def delete_with_children(doc: Document) -> None:
    """The second layer's MLP goes, with the norm feeding only it and their weights; the residual Add that
    read it reads the residual twice."""
    before = len(doc.model.graph.node)
    branch = doc.edit.remove_node_with_inputs("layers.1/mlp/down/MatMul")
    assert branch.others == 13 and len(doc.model.graph.node) == before - 14  # the norm (9) and the MLP (5)
    assert "layers.1.mlp.up.weight" not in {t.name for t in doc.model.graph.initializer}
    doc.edit.set_input("layers.1/Add_1", 1, "layers.1.res1")


def add_nodes_with_attributes(doc: Document) -> None:
    doc.edit.insert_on_value("layers.0.res1", "LeakyRelu", {"alpha": 0.2}, name="leaky")
    doc.edit.insert_node("Transpose", ["layers.0.q.t"], ["q_swapped"], {"perm": [0, 1, 3, 2]}, name="swap")
    doc.edit.add_output("q_swapped")


def rename_inputs_and_outputs(doc: Document) -> None:
    doc.edit.rename_value("input_ids_embed", "embeddings")
    doc.edit.rename_value("logits", "hidden_out")


def dynamic_input_shape(doc: Document) -> None:
    doc.edit.set_value_type("embeddings", shape=["batch", "seq", 16])


def static_input_shape(doc: Document) -> None:
    doc.edit.set_value_type("embeddings", shape=[1, 4, 16])


def edit_attributes(doc: Document) -> None:
    doc.edit.set_attribute("leaky", "alpha", 0.05)
    doc.edit.set_attribute("layers.0/attn/Softmax", "axis", -1)
    doc.edit.set_attribute("swap", "perm", [0, 2, 1, 3])


def initializer_from_text(doc: Document) -> None:
    doc.edit.replace_initializer("layers.0.ln1.eps", parse_tensor_text("[0.001]", np.float32))


def initializer_from_npy(doc: Document, folder: Path) -> None:
    path = folder / "q.npy"
    np.save(path, np.eye(16, dtype=np.float32))
    doc.edit.replace_initializer("layers.0.attn.q.weight", load_npy(path))


def outputs_added_and_removed(doc: Document) -> None:
    doc.edit.add_output("layers.0.res2")
    doc.edit.remove_output("q_swapped")


def test_onnx_modifier_edits_each_give_a_valid_running_model(doc: Document, tmp_path: Path) -> None:
    path = doc.path
    assert path is not None
    saved_and_run(doc, path)
    steps: list[tuple[str, Callable[[], None]]] = [
        ("delete a node", lambda: delete_node(doc)),
        ("delete with children", lambda: delete_with_children(doc)),
        ("add nodes with attributes", lambda: add_nodes_with_attributes(doc)),
        ("rename inputs and outputs", lambda: rename_inputs_and_outputs(doc)),
        ("dynamic input shape", lambda: dynamic_input_shape(doc)),
        ("static input shape", lambda: static_input_shape(doc)),
        ("edit attributes", lambda: edit_attributes(doc)),
        ("initializer from text", lambda: initializer_from_text(doc)),
        ("initializer from .npy", lambda: initializer_from_npy(doc, tmp_path)),
        ("outputs added and removed", lambda: outputs_added_and_removed(doc)),
    ]
    outputs: dict[str, dict[str, np.ndarray]] = {}
    for label, step in steps:
        step()
        outputs[label] = saved_and_run(doc, path)
    assert set(outputs["add nodes with attributes"]) == {"logits", "q_swapped"}
    assert outputs["add nodes with attributes"]["q_swapped"].shape == (1, 2, 8, 4)
    assert set(outputs["rename inputs and outputs"]) == {"hidden_out", "q_swapped"}
    assert outputs["edit attributes"]["q_swapped"].shape == (1, 4, 2, 8)
    assert set(outputs["outputs added and removed"]) == {"hidden_out", "layers.0.res2"}
    saved = onnx.load(path)
    assert [i.name for i in saved.graph.input] == ["embeddings"]
    assert [d.dim_value for d in saved.graph.input[0].type.tensor_type.shape.dim] == [1, 4, 16]
    weights = {t.name: onnx.numpy_helper.to_array(t) for t in saved.graph.initializer}
    np.testing.assert_array_equal(weights["layers.0.ln1.eps"], np.float32([0.001]))
    np.testing.assert_array_equal(weights["layers.0.attn.q.weight"], np.eye(16, dtype=np.float32))
    assert len(doc.undo_stack.commands) > 10


def test_an_attribute_edit_restates_the_declared_shape_it_changed(doc: Document) -> None:
    """Transpose's perm changed: the graph output it makes declares the new shape (undo: the old one)."""
    doc.edit.insert_node("Transpose", ["layers.0.q.t"], ["q_swapped"], {"perm": [0, 1, 3, 2]}, name="swap")
    doc.edit.add_output("q_swapped")

    def declared() -> list[int]:
        out = next(o for o in doc.model.graph.output if o.name == "q_swapped")
        return [d.dim_value for d in out.type.tensor_type.shape.dim]

    assert declared() == [1, 2, 8, 4]
    doc.edit.set_attribute("swap", "perm", [0, 2, 1, 3])
    assert declared() == [1, 4, 2, 8] and doc.undo_stack.undo_label() == "Set swap.perm"
    doc.edit.remove_attribute("swap", "perm")  # the default reverses the axes
    assert declared() == [8, 4, 2, 1]
    doc.undo()
    doc.undo()
    assert declared() == [1, 2, 8, 4]
