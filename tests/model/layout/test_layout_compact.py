"""A vertically compact layered layout, as Netron's: one line of edge labels between two layers unless
labels there could meet, tight group frames; every label still shown and none overlapping."""

from __future__ import annotations

import numpy as np
import onnx
from conftest import TEST_DATA
from label_checks import assert_no_label_overlaps
from onnx import TensorProto, helper

from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.graph.validation import infer_types
from onnxviz.model.layout.engine import GraphLayout
from onnxviz.model.layout.labels import label_spots
from onnxviz.model.layout.layers import LAYER_GAP
from onnxviz.model.layout.scene import Scene

EXPORTS = TEST_DATA / "exports"


def _scene(model: onnx.ModelProto) -> Scene:
    index = ModelIndex(model)
    index.set_inferred(infer_types(model).types)
    return GraphLayout(index).build()


def _tops(s: Scene, title: str) -> list[float]:
    return sorted(float(s.box_y[b]) for b in range(s.n_boxes) if s.box_title[b] == title)


def _all_labels_shown(s: Scene) -> bool:
    values = {(int(a), v) for a, v, t in zip(s.edge_src, s.edge_value, s.edge_label, strict=True) if t}
    return bool(values) and len(label_spots(s).edge) == len(values)


def _chain(n: int, names: list[str] | None = None) -> onnx.ModelProto:
    nodes = [helper.make_node("Relu", [f"t{k}"], [f"t{k + 1}"], name=(names or [f"r{k}" for k in range(n)])[k])
             for k in range(n)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("t0", TensorProto.FLOAT, [1, 64, 56, 56])],
                              [helper.make_tensor_value_info(f"t{n}", TensorProto.FLOAT, [1, 64, 56, 56])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_a_chain_of_boxes_is_spaced_like_netrons_with_every_shape_shown() -> None:
    s = _scene(_chain(8))
    tops = _tops(s, "Relu")
    pitch = np.diff(tops)
    box_h = float(s.box_h[next(b for b in range(s.n_boxes) if s.box_title[b] == "Relu")])
    assert np.allclose(pitch, box_h + LAYER_GAP) and box_h + LAYER_GAP <= 40   # 60 before (20 + 40)
    assert _all_labels_shown(s)
    assert_no_label_overlaps(s)


def test_labels_that_could_meet_get_a_line_more() -> None:
    # a Split sends two labelled values from one point: two lines of labels below it, both shown
    split = helper.make_node("Split", ["x"], ["a", "b"], axis=1, num_outputs=2)
    nodes = [split, helper.make_node("Relu", ["a"], ["ra"]), helper.make_node("Relu", ["b"], ["rb"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64, 56, 56])],
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("ra", "rb")])
    s = _scene(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]))
    split_row = next(b for b in range(s.n_boxes) if s.box_title[b] == "Split")
    gap = min(_tops(s, "Relu")) - float(s.box_y[split_row] + s.box_h[split_row])
    assert gap > LAYER_GAP
    assert _all_labels_shown(s)
    assert_no_label_overlaps(s)


def test_a_group_frame_costs_little_height() -> None:
    flat = _scene(_chain(6))
    grouped = _scene(_chain(6, [f"block/r{k}" if 1 <= k <= 4 else f"r{k}" for k in range(6)]))
    assert len(grouped.group_rect) == 1
    extra = float(grouped.bounds()[3] - flat.bounds()[3])
    assert 0 < extra <= 48   # the title and a little air: 76 before
    assert _all_labels_shown(grouped)
    assert_no_label_overlaps(grouped)


def test_resnet_float_is_about_as_tall_as_in_netron() -> None:
    s = _scene(onnx.load(EXPORTS / "resnet_float.onnx", load_external_data=False))
    height = float(s.bounds()[3])
    assert height <= 1000   # 1440 before; Netron draws the same 18 boxes (without groups and labels) in ~880
    assert _all_labels_shown(s)


def test_shapes_inferred_after_the_first_layout_get_their_room() -> None:
    # the window lays a graph out before inference ends; the labels it then gets need their room too
    split = helper.make_node("Split", ["x"], ["a", "b"], axis=1, num_outputs=2)
    nodes = [split, helper.make_node("Relu", ["a"], ["ra"]), helper.make_node("Relu", ["b"], ["rb"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64, 56, 56])],
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("ra", "rb")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    index = ModelIndex(model)
    layout = GraphLayout(index)
    before = layout.build()
    assert not any(before.edge_label[e] for e in range(before.n_edges) if before.box_title[before.edge_src[e]] == "Split")
    index.set_inferred(infer_types(model).types)
    after = layout.relabel()
    assert after.bounds()[3] > before.bounds()[3]   # a line more below the Split
    assert _all_labels_shown(after)
    assert_no_label_overlaps(after)
