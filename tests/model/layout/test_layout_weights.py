"""Nodes that only pass a weight on (a legacy export's Identity of a shared weight, a QDQ model's weight
DequantizeLinear) are drawn inside the box of the node reading the weight, not as a row of boxes with long
edges into every layer."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from shaped import bert_legacy, qdq_cnn

from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.graph.validation import infer_types
from onnxviz.model.layout.engine import GraphLayout
from onnxviz.model.layout.scene import BoxKind, Scene


def _scene(model: onnx.ModelProto) -> Scene:
    return GraphLayout(ModelIndex(model)).build()


def _weight_makers(model: onnx.ModelProto) -> list[int]:
    weights = {t.name for t in model.graph.initializer}
    return [i for i, n in enumerate(model.graph.node)
            if n.op_type in ("Identity", "DequantizeLinear") and all(x in weights for x in n.input if x)]


def _op_boxes(scene: Scene) -> list[int]:
    return [b for b, ref in enumerate(scene.box_ref) if ref.kind == BoxKind.OP]


@pytest.mark.parametrize(("model", "op", "count"), [(bert_legacy(10), "Identity", 120),
                                                    (qdq_cnn(), "DequantizeLinear", 26)])
def test_weight_makers_sit_in_their_readers_boxes(model: onnx.ModelProto, op: str, count: int) -> None:
    scene = _scene(model)
    makers = _weight_makers(model)
    assert len(makers) == count
    drawn = {scene.box_ref[b].node for b in _op_boxes(scene)}
    nodes = model.graph.node
    for i in makers:
        assert i not in drawn
        reader = next(k for k, n in enumerate(nodes) if nodes[i].output[0] in n.input)
        box = scene.box_of_node(i)
        assert box == scene.box_of_node(reader) >= 0  # selecting the maker selects its reader's box
        said = "scale" if op == "DequantizeLinear" else op  # a dequantized weight says its scale's shape
        assert any(line.endswith(said) for line in scene.box_lines[box]), scene.box_lines[box]


@pytest.mark.parametrize("model", [bert_legacy(10), qdq_cnn()])
def test_weight_makers_do_not_widen_the_layout(model: onnx.ModelProto) -> None:
    """The legacy BERT was 17,000 units wide (a row of 120 Identity boxes above a 700-unit model)."""
    scene = _scene(model)
    _, _, width, height = scene.bounds()
    assert width < 3 * float(scene.box_w.max()) + 400
    assert width < height / 4


def test_a_chain_of_weight_operators_is_listed_in_order() -> None:
    """int8 weight -> DequantizeLinear -> Transpose -> MatMul: one line ``B int8 <?> · per-tensor scale · Transpose``
    (no shape inference here: the Transpose's output shape is not known)."""
    w = numpy_helper.from_array(onnx.numpy_helper.to_array(helper.make_tensor("w", TensorProto.INT8, [3, 4],
                                                                              list(range(12)))), "w")
    scale = numpy_helper.from_array(onnx.numpy_helper.to_array(helper.make_tensor("s", TensorProto.FLOAT, [], [0.5])), "s")
    nodes = [helper.make_node("DequantizeLinear", ["w", "s"], ["wf"], name="dq"),
             helper.make_node("Transpose", ["wf"], ["wt"], name="t", perm=[1, 0]),
             helper.make_node("MatMul", ["x", "wt"], ["y"], name="mm")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])], [w, scale])
    scene = _scene(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]))
    assert [scene.box_title[b] for b in _op_boxes(scene)] == ["MatMul"]
    assert scene.box_lines[_op_boxes(scene)[0]] == ["B int8 <?> \u00b7 per-tensor scale \u00b7 Transpose"]
    assert scene.box_of_node(0) == scene.box_of_node(1) == scene.box_of_node(2)


def test_a_weight_operator_reading_an_activation_keeps_its_box() -> None:
    """The activation DequantizeLinear of a QDQ model reads a QuantizeLinear's output: it stays a box."""
    model = qdq_cnn(stages=1, blocks=1)
    scene = _scene(model)
    titles = [scene.box_title[b] for b in _op_boxes(scene)]
    activation_dqs = [n for n in model.graph.node if n.op_type == "DequantizeLinear" and "QuantizeLinear" in n.input[0]]
    assert titles.count("DequantizeLinear") == len(activation_dqs) > 0


def test_a_quantized_weight_says_its_stored_type_and_its_scales_shape() -> None:
    """A per-channel int8 Conv weight: ``W int8 <16×3×7×7> · per-channel scale <16>``."""
    w = numpy_helper.from_array(np.zeros((16, 3, 7, 7), np.int8), "w")
    scale = numpy_helper.from_array(np.full(16, 0.1, np.float32), "s")
    zero = numpy_helper.from_array(np.zeros(16, np.int8), "z")
    nodes = [helper.make_node("DequantizeLinear", ["w", "s", "z"], ["wf"], name="dq", axis=0),
             helper.make_node("Conv", ["x", "wf"], ["y"], name="conv")]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 32, 32])
    graph = helper.make_graph(nodes, "g", [x], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [w, scale, zero])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    index = ModelIndex(model)
    index.set_inferred(infer_types(model).types)
    scene = GraphLayout(index).build()
    lines = {scene.box_title[b]: scene.box_lines[b] for b in _op_boxes(scene)}
    assert lines["Conv"] == ["W int8 <16\u00d73\u00d77\u00d77> \u00b7 per-channel scale <16>"]
