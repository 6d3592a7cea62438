"""No wrong number inside bodies: a Constant whose value is a function's attribute (``value_float`` by reference
to ``alpha``) reads as the reference, with the caller's value when the body is entered from a call; a body's
reads of small outer-graph constants show their values, as Netron shows them."""

from __future__ import annotations

from pathlib import Path

import onnx
from onnx import TensorProto, helper
from pytestqt.qtbot import QtBot
from window_fixtures import TIMEOUT, open_canvas

from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.layout.engine import GraphLayout
from onnxviz.model.layout.scene import Scene

FUNCTION = "fn:local:Scale:"


def function_model() -> onnx.ModelProto:
    """``Scale(x, alpha=0.5)``: a local function whose Constant takes ``alpha`` by reference, then CastLike."""
    const = helper.make_node("Constant", [], ["c"], name="alpha_const")
    const.attribute.append(onnx.AttributeProto(name="value_float", ref_attr_name="alpha",
                                               type=onnx.AttributeProto.FLOAT))
    body = [const, helper.make_node("CastLike", ["c", "x"], ["cl"]), helper.make_node("Mul", ["x", "cl"], ["y"])]
    fn = helper.make_function("local", "Scale", ["x"], ["y"], body, [helper.make_opsetid("", 18)], attributes=["alpha"])
    call = helper.make_node("Scale", ["x"], ["y"], name="call", domain="local", alpha=0.5)
    graph = helper.make_graph([call], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("local", 1)],
                             functions=[fn], ir_version=9)


def lines_of(scene: Scene, title: str) -> list[str]:
    return next(list(lines) for t, lines in zip(scene.box_title, scene.box_lines, strict=True) if t == title)


def test_a_value_given_by_reference_reads_as_the_reference() -> None:
    scene = GraphLayout(ModelIndex(function_model()), FUNCTION).build()
    assert lines_of(scene, "CastLike") == ["input = alpha (ref)"]    # not "input = 0.0"


def test_a_body_entered_from_its_call_shows_the_callers_value(qtbot: QtBot, tmp_path: Path) -> None:
    path = tmp_path / "scale.onnx"
    onnx.save(function_model(), path)
    window, canvas = open_canvas(qtbot, path)
    window.doc.selection.select_node("", 0)
    with qtbot.waitSignal(canvas.scene_ready, timeout=TIMEOUT):
        canvas.enter_scope(FUNCTION)
    assert canvas.drawable is not None
    assert lines_of(canvas.drawable.scene, "CastLike") == ["input = alpha (ref) = 0.5"]


def test_a_body_shows_the_values_of_the_outer_constants_it_reads() -> None:
    three = helper.make_node("Constant", [], ["three"], value=helper.make_tensor("t", TensorProto.INT64, [], [3]))
    then = helper.make_graph([helper.make_node("Add", ["x", "three"], ["a"])], "then", [],
                             [helper.make_tensor_value_info("a", TensorProto.INT64, [1])])
    other = helper.make_graph([helper.make_node("Identity", ["x"], ["b"])], "else", [],
                              [helper.make_tensor_value_info("b", TensorProto.INT64, [1])])
    branch = helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)
    graph = helper.make_graph([three, branch], "g", [helper.make_tensor_value_info("x", TensorProto.INT64, [1]),
                                                     helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
                              [helper.make_tensor_value_info("y", TensorProto.INT64, [1])])
    index = ModelIndex(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]))
    scene = GraphLayout(index, "1.then_branch").build()
    assert any(line.endswith("= 3") for line in lines_of(scene, "three")), lines_of(scene, "three")
