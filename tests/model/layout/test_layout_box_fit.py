"""Boxes sized for what the canvas draws in them, and edges that meet a box apart: the points found by
setting onnxviz's pictures of real exports beside Netron's (docs/screenshots/exports/)."""

from __future__ import annotations

import numpy as np
import onnx
from conftest import TEST_DATA
from onnx import TensorProto, helper

from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.graph.validation import infer_types
from onnxviz.model.layout.engine import GraphLayout
from onnxviz.model.layout.scene import BoxKind, Scene
from onnxviz.model.layout.scope import BODY_BUTTONS_W, CHAR_W, HEADER_H, LINE_H, MIN_W, PILL_H, TITLE_CHAR_W

EXPORTS = TEST_DATA / "exports"


def _scene(model: onnx.ModelProto) -> Scene:
    index = ModelIndex(model)
    index.set_inferred(infer_types(model).types)
    return GraphLayout(index).build()


def _loop_model() -> onnx.ModelProto:
    body = helper.make_graph(
        [helper.make_node("Add", ["y_in", "one"], ["y_out"]), helper.make_node("Identity", ["c_in"], ["c_out"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("y_in", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("y_out", TensorProto.FLOAT, [1])],
        [helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0])])
    loop = helper.make_node("Loop", ["n", "cond", "y"], ["res"], body=body)
    graph = helper.make_graph(
        [loop], "g",
        [helper.make_tensor_value_info("n", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("res", TensorProto.FLOAT, [1])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _box(scene: Scene, title: str) -> int:
    return next(b for b in range(scene.n_boxes) if scene.box_title[b] == title)


def test_a_loop_box_holds_its_title_beside_its_buttons() -> None:
    s = _scene(_loop_model())
    loop = _box(s, "Loop")
    assert s.box_w[loop] >= len("Loop") * TITLE_CHAR_W + 16 + BODY_BUTTONS_W  # it read "L..." in 56 units


def test_an_input_pill_is_as_wide_as_its_name_not_its_type() -> None:
    s = _scene(onnx.load(EXPORTS / "mlp_int4_matmulnbits.onnx", load_external_data=False))
    x = next(b for b in range(s.n_boxes) if s.box_kind[b] == BoxKind.INPUT and s.box_title[b] == "x")
    assert s.box_w[x] == MIN_W   # "float32 batch × sequence × 128" made it 170 wide, though never drawn
    assert s.box_h[x] == PILL_H   # one line high (it was two)


def test_a_value_a_body_reads_from_outside_keeps_room_for_its_caption() -> None:
    model = onnx.load(EXPORTS / "vad_if.onnx", load_external_data=False)
    index = ModelIndex(model)
    index.set_inferred(infer_types(model).types)
    scope = next(s for s in index.graphs if s.endswith("then_branch"))
    s = GraphLayout(index, scope).build()
    outer = [b for b in range(s.n_boxes) if s.box_kind[b] == BoxKind.INPUT]
    assert outer and all(s.box_w[b] >= 20 * CHAR_W and s.box_h[b] > HEADER_H + LINE_H for b in outer)


def test_edges_into_one_box_end_apart_in_the_order_they_come_from() -> None:
    s = _scene(_loop_model())
    loop = _box(s, "Loop")
    into = [e for e in range(len(s.edge_dst)) if s.edge_dst[e] == loop]
    assert len(into) == 3
    ends = [s.edge_polyline(e)[-1] for e in into]
    starts = [s.edge_polyline(e)[0] for e in into]
    xs = np.array([p[0] for p in ends])
    assert len(set(np.round(xs, 3))) == 3                      # not one point
    left, right = s.box_x[loop], s.box_x[loop] + s.box_w[loop]
    assert ((xs > left) & (xs < right)).all()                  # all on the box's top
    assert list(np.argsort(xs)) == list(np.argsort([p[0] for p in starts]))  # no crossing at the box
