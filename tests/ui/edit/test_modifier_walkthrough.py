"""onnx-modifier's list of edits, walked on a transformer-shaped export (bench/synth.py, 2 layers): through the
editing API in one sequence, and in the window with its own controls only, one test per task (the task scripts and
the counts of dialogs, keys and clicks they take are in ``modifier_tasks.py``; ``bench/bench_modifier_steps.py``
prints them next to onnx-modifier's). After each step the model is saved, the saved file passes onnx's full check
and onnxruntime runs it to finite outputs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from modifier_tasks import MODIFIER, SETUP, TASKS, Steps, npy_for, synth2
from pytestqt.qtbot import QtBot
from window_fixtures import doc_of, open_and_wait

from onnxviz.model.document import Document
from onnxviz.model.editing.values import parse_tensor_text
from onnxviz.ui.edit.attributes import load_npy
from onnxviz.ui.main_window import MainWindow

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
    return Document.open(synth2(tmp_path))


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


# -- the same tasks in the window, with its own controls only -------------------------------------------------------------
@pytest.fixture
def window(qtbot: QtBot, make_window: Callable[[], MainWindow], tmp_path: Path) -> MainWindow:
    w = make_window()
    w.resize(1400, 900)
    open_and_wait(qtbot, w, synth2(tmp_path))
    qtbot.waitUntil(lambda: w.canvas.drawable is not None and not w.canvas.busy, timeout=20000)
    return w


def walk(qtbot: QtBot, window: MainWindow, task: str, *args: object) -> Steps:
    """Run ``task`` as a user; each task is one or a few undo steps, none of them refused."""
    if task in SETUP:
        SETUP[task](doc_of(window))
    steps = Steps(window, lambda ok: qtbot.waitUntil(ok, timeout=20000))
    TASKS[task](steps, *args)
    qtbot.waitUntil(steps.idle)
    done, theirs = steps.count, MODIFIER[task][0]
    print(f"{task}: onnxviz {done.dialogs} dialogs, {done.keys} keys, {done.clicks} clicks; "
          f"onnx-modifier {theirs.dialogs}, {theirs.keys}, {theirs.clicks}")
    return steps


def run_window(window: MainWindow) -> dict[str, np.ndarray]:
    doc = doc_of(window)
    assert doc.path is not None
    return saved_and_run(doc, doc.path)


def test_window_delete_a_node(qtbot: QtBot, window: MainWindow) -> None:
    steps = walk(qtbot, window, "delete_node")
    doc = doc_of(window)
    assert "embed" not in {n.name for n in doc.model.graph.node}
    assert consumers(doc, "input_ids_embed") == ["layers.0.ln1/ReduceMean", "layers.0.ln1/Sub", "layers.0/Add"]
    assert "hidden_0" not in {v.name for v in doc.model.graph.value_info}  # no stale value_info left
    assert steps.count.total < MODIFIER["delete_node"][0].total
    run_window(window)


def test_window_delete_with_children(qtbot: QtBot, window: MainWindow) -> None:
    before = len(doc_of(window).model.graph.node)
    walk(qtbot, window, "delete_with_children")
    doc = doc_of(window)
    assert len(doc.model.graph.node) == before - 14
    assert list(next(n for n in doc.model.graph.node if n.name == "layers.1/Add_1").input) == [
        "layers.1.res1", "layers.1.res1"]
    assert "layers.1.mlp.up.weight" not in {t.name for t in doc.model.graph.initializer}
    run_window(window)


def test_window_insert_a_node_on_an_edge(qtbot: QtBot, window: MainWindow) -> None:
    steps = walk(qtbot, window, "insert_on_edge")
    doc = doc_of(window)
    leaky = next(n for n in doc.model.graph.node if n.op_type == "LeakyRelu")
    assert list(leaky.input) == ["layers.0.res1"] and onnx.helper.get_attribute_value(leaky.attribute[0]) == \
        pytest.approx(0.2)
    assert set(consumers(doc, leaky.output[0])) == {"layers.0.ln2/ReduceMean", "layers.0.ln2/Sub", "layers.0/Add_1"}
    assert steps.count.total < MODIFIER["insert_on_edge"][0].total
    run_window(window)


def test_window_a_new_node_as_a_graph_output(qtbot: QtBot, window: MainWindow) -> None:
    walk(qtbot, window, "new_output_node")
    doc = doc_of(window)
    swap = next(n for n in doc.model.graph.node if n.op_type == "Transpose" and n.input[0] == "layers.0.q.t"
                and n.name.startswith("Transpose"))
    assert [a.ints for a in swap.attribute] == [[0, 1, 3, 2]]
    assert [o.name for o in doc.model.graph.output] == ["logits", swap.output[0]]
    assert run_window(window)[swap.output[0]].shape == (1, 2, 8, 4)


def test_window_rename_inputs_and_outputs(qtbot: QtBot, window: MainWindow) -> None:
    walk(qtbot, window, "rename_inputs_and_outputs")
    doc = doc_of(window)
    assert [i.name for i in doc.model.graph.input] == ["embeddings"]
    assert set(run_window(window)) == {"hidden_out"}


def test_window_dynamic_input_shape(qtbot: QtBot, window: MainWindow) -> None:
    walk(qtbot, window, "dynamic_input_shape")
    doc = doc_of(window)
    dims = [d.dim_param or d.dim_value for d in doc.model.graph.input[0].type.tensor_type.shape.dim]
    assert dims == ["batch", "seq", 16]
    out = [d.dim_param or d.dim_value for d in doc.model.graph.output[0].type.tensor_type.shape.dim]
    assert out == ["batch", 4, 16]  # the batch is carried to the output; the attention's Reshapes fix 4 tokens
    assert doc.check() == []
    run_window(window)


def test_window_static_input_shape(qtbot: QtBot, window: MainWindow) -> None:
    doc = doc_of(window)
    walk(qtbot, window, "static_input_shape")
    assert [d.dim_value for d in doc.model.graph.input[0].type.tensor_type.shape.dim] == [1, 4, 16]
    named = [d.dim_param for v in doc.model.graph.value_info for d in v.type.tensor_type.shape.dim if d.dim_param]
    assert named == []  # batch and seq fixed wherever they were named
    run_window(window)


def test_window_edit_attributes(qtbot: QtBot, window: MainWindow) -> None:
    doc = doc_of(window)
    walk(qtbot, window, "edit_attributes")
    attrs = {n.name: {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute} for n in doc.model.graph.node}
    assert attrs["leaky"]["alpha"] == pytest.approx(0.05) and attrs["layers.0/attn/Softmax"]["axis"] == 3
    assert attrs["swap"]["perm"] == [0, 2, 1, 3]
    assert run_window(window)["q_swapped"].shape == (1, 4, 2, 8)  # its declared shape followed the perm


def test_window_initializer_from_text(qtbot: QtBot, window: MainWindow) -> None:
    walk(qtbot, window, "initializer_from_text")
    doc = doc_of(window)
    np.testing.assert_array_equal(onnx.numpy_helper.to_array(doc.edit.initializer_proto("layers.0.ln1.eps")),
                                  np.float32([0.001]))
    run_window(window)


def test_window_initializer_from_npy(qtbot: QtBot, window: MainWindow, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    walk(qtbot, window, "initializer_from_npy", npy_for(tmp_path), monkeypatch)
    doc = doc_of(window)
    np.testing.assert_array_equal(onnx.numpy_helper.to_array(doc.edit.initializer_proto("layers.0.attn.q.weight")),
                                  np.eye(16, dtype=np.float32))
    run_window(window)


def test_window_outputs_added_and_removed(qtbot: QtBot, window: MainWindow) -> None:
    walk(qtbot, window, "outputs_added_and_removed")
    assert set(run_window(window)) == {"logits", "layers.0.res2"}


def test_every_task_has_onnx_modifiers_count() -> None:
    assert set(TASKS) == set(MODIFIER)
