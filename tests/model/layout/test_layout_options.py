"""The View menu's layout choices: node names widen boxes, tensor names on edges, left to right; each
remembered in the settings and followed by everything drawn (edges, labels, groups, fit, selection)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import onnx
import pytest
from label_checks import assert_no_label_overlaps
from onnx import TensorProto, helper
from PySide6.QtCore import QRectF, Qt
from pytestqt.qtbot import QtBot
from shaped import bert_legacy
from test_layout import overlapping_pairs
from window_fixtures import open_canvas

from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.graph.validation import infer_types
from onnxviz.model.layout.engine import GraphLayout
from onnxviz.model.layout.options import LEFT_TO_RIGHT, LayoutOptions
from onnxviz.model.layout.scene import BoxKind, Scene
from onnxviz.model.layout.scope import MAX_NAME_W, TITLE_CHAR_W
from onnxviz.ui.canvas.canvas import GraphCanvas

TIMEOUT = 20000
LONG = "/model/decoder/layers.11/self_attn/q_proj/MatMul"


def _scene(model: onnx.ModelProto, **options: object) -> Scene:
    index = ModelIndex(model)
    index.set_inferred(infer_types(model).types)
    return GraphLayout(index, options=LayoutOptions(**options)).build()  # type: ignore[arg-type]


def _named(name: str) -> onnx.ModelProto:
    nodes = [helper.make_node("Relu", ["x"], ["y"], name=name), helper.make_node("Neg", ["y"], ["z"], name="n")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 4])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def _box(scene: Scene, title: str) -> int:
    return scene.box_title.index(title)


# -- names -------------------------------------------------------------------------------------
def test_shown_names_widen_their_boxes_up_to_a_cap() -> None:
    plain, named = _scene(_named(LONG)), _scene(_named(LONG), names=True)
    assert plain.box_w[_box(plain, "Relu")] < len(LONG) * TITLE_CHAR_W
    assert named.box_w[_box(named, "Relu")] >= len(LONG) * TITLE_CHAR_W
    assert named.box_name[_box(named, "Relu")] == LONG
    huge = _scene(_named("x" * 500), names=True)
    assert huge.box_w[_box(huge, "Relu")] == MAX_NAME_W


@pytest.mark.parametrize("title", ["embeddings", "query", "intermediate_act_fn"])
def test_collapsed_group_titles_fit_beside_their_button(title: str) -> None:
    """The painter gives a group box's title its width less 32 units (the +/- button)."""
    nodes = [helper.make_node("Relu", [f"v{k}"], [f"v{k + 1}"], name=f"/{title}/Relu_{k}") for k in range(3)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("v0", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("v3", TensorProto.FLOAT, [1])])
    layout = GraphLayout(ModelIndex(helper.make_model(graph)), expanded=[])
    scene = layout.build()
    box = _box(scene, title)
    assert scene.box_kind[box] == BoxKind.GROUP
    assert scene.box_w[box] - 32 >= len(title) * TITLE_CHAR_W


def test_tensor_names_go_before_shapes_on_edges() -> None:
    scene = _scene(_named("r"), edge_names=True)
    assert "y: 1\u00d74" in scene.edge_label


# -- left to right -------------------------------------------------------------------------------
def assert_flows_right(scene: Scene) -> None:
    """Every edge leaves its source's right side and enters its target's left side."""
    for e in range(scene.n_edges):
        pts = scene.edge_polyline(e)
        s, t = scene.edge_src[e], scene.edge_dst[e]
        assert pts[0][0] == pytest.approx(scene.box_x[s] + scene.box_w[s], abs=0.01)
        assert scene.box_y[s] - 0.01 <= pts[0][1] <= scene.box_y[s] + scene.box_h[s] + 0.01
        assert pts[-1][0] == pytest.approx(scene.box_x[t], abs=0.01)
        assert scene.box_y[t] - 0.01 <= pts[-1][1] <= scene.box_y[t] + scene.box_h[t] + 0.01


def test_left_to_right_turns_the_layout_but_not_the_boxes() -> None:
    model = bert_legacy(2)
    down, across = _scene(model), _scene(model, direction=LEFT_TO_RIGHT)
    assert across.direction == LEFT_TO_RIGHT and across.n_boxes == down.n_boxes
    assert sorted(zip(across.box_w.tolist(), across.box_h.tolist(), strict=True)) == \
        sorted(zip(down.box_w.tolist(), down.box_h.tolist(), strict=True))
    _, _, w, h = across.bounds()
    assert w > h  # a deep model is wide, not tall
    assert overlapping_pairs(across) == []
    assert_flows_right(across)
    assert_no_label_overlaps(across)
    assert len(across.group_rect) == len(down.group_rect) > 0
    inputs = across.box_x[across.box_kind == BoxKind.INPUT]
    outputs = across.box_x[across.box_kind == BoxKind.OUTPUT]
    assert inputs.max() < outputs.min()


def test_left_to_right_expands_and_collapses_in_place() -> None:
    index = ModelIndex(bert_legacy(3))
    layout = GraphLayout(index, expanded=[], options=LayoutOptions(direction=LEFT_TO_RIGHT))
    layout.build()
    scene = layout.expand("encoder/layer.1")
    assert "encoder/layer.1" in scene.group_path
    assert overlapping_pairs(scene) == []
    assert_flows_right(scene)
    assert_flows_right(layout.collapse("encoder/layer.1"))


# -- in the window -----------------------------------------------------------------------------
def _drawn(canvas: GraphCanvas) -> Scene:
    assert canvas.drawable is not None
    return canvas.drawable.scene


def _contains(outer: QRectF, x: float, y: float, w: float, h: float) -> bool:
    return outer.adjusted(-1, -1, 1, 1).contains(QRectF(x, y, w, h))


def test_left_to_right_from_the_view_menu_is_remembered(qtbot: QtBot, example_path: Path) -> None:
    window, canvas = open_canvas(qtbot, example_path)
    assert _drawn(canvas).direction == "TB"
    with qtbot.waitSignal(canvas.scene_ready, timeout=TIMEOUT):
        canvas.actions_by_name["left_to_right"].trigger()
    scene = _drawn(canvas)
    assert scene.direction == LEFT_TO_RIGHT
    assert_flows_right(scene)
    canvas.actions_by_name["fit"].trigger()
    x, y, w, h = canvas.drawable.bounds  # type: ignore[union-attr]
    assert _contains(canvas.view.visible_scene_rect(), x, y, w, h)
    window.close()
    again, canvas2 = open_canvas(qtbot, example_path)
    assert canvas2.actions_by_name["left_to_right"].isChecked()
    assert _drawn(canvas2).direction == LEFT_TO_RIGHT
    with qtbot.waitSignal(canvas2.scene_ready, timeout=TIMEOUT):
        canvas2.actions_by_name["left_to_right"].trigger()
    assert _drawn(canvas2).direction == "TB"


def test_selection_and_arrow_keys_follow_left_to_right(qtbot: QtBot, example_path: Path) -> None:
    window, canvas = open_canvas(qtbot, example_path)
    with qtbot.waitSignal(canvas.scene_ready, timeout=TIMEOUT):
        canvas.actions_by_name["left_to_right"].trigger()
    doc = window.doc
    assert doc is not None
    names = [n.name for n in doc.model.graph.node]
    canvas.view.set_scale(1.0)
    doc.selection.select_node("", names.index("/head/fc/Gemm"))  # far to the right
    s, box = _drawn(canvas), canvas.selected_box()
    assert s.box_title[box] == "Gemm"
    assert _contains(canvas.view.visible_scene_rect(), float(s.box_x[box]), float(s.box_y[box]),
                     float(s.box_w[box]), float(s.box_h[box]))
    doc.selection.select_node("", names.index("/stem/conv/Conv"))
    canvas.view.setFocus()
    qtbot.keyClick(canvas.view, Qt.Key.Key_Right)  # a consumer: the BatchNormalization
    assert doc.selection.state.node == names.index("/stem/bn/BatchNormalization")
    qtbot.keyClick(canvas.view, Qt.Key.Key_Left)
    assert doc.selection.state.node == names.index("/stem/conv/Conv")


def test_node_and_tensor_names_from_the_view_menu(qtbot: QtBot, example_path: Path) -> None:
    window, canvas = open_canvas(qtbot, example_path)
    conv = _drawn(canvas).box_title.index("Conv")
    narrow = float(_drawn(canvas).box_w[conv])
    with qtbot.waitSignal(canvas.scene_ready, timeout=TIMEOUT):
        canvas.actions_by_name["names"].trigger()
    scene = _drawn(canvas)
    box = scene.box_name.index("/stem/conv/Conv")
    assert canvas.view.options.show_names
    assert scene.box_w[box] > narrow and scene.box_w[box] >= len("/stem/conv/Conv") * TITLE_CHAR_W
    canvas.actions_by_name["edge_names"].trigger()
    qtbot.waitUntil(lambda: any(t.startswith("image: ") for t in _drawn(canvas).edge_label), timeout=TIMEOUT)
    labels = canvas.drawable.labels  # type: ignore[union-attr]
    assert any(_drawn(canvas).edge_label[int(e)].startswith("image: ") for e in labels.edge)
    window.close()
    _, canvas2 = open_canvas(qtbot, example_path)
    assert canvas2.actions_by_name["names"].isChecked() and canvas2.actions_by_name["edge_names"].isChecked()
    assert canvas2.view.options.show_names
    scene2 = _drawn(canvas2)
    assert any(t.startswith("image: ") for t in scene2.edge_label)
    assert scene2.box_w[scene2.box_name.index("/stem/conv/Conv")] >= len("/stem/conv/Conv") * TITLE_CHAR_W


def test_cli_info_tells_an_unknown_dimension_from_an_unknown_rank(tmp_path: Path) -> None:
    inputs = [helper.make_tensor_value_info("a", TensorProto.FLOAT, [None, 4]),
              helper.make_tensor_value_info("b", TensorProto.FLOAT, None)]
    graph = helper.make_graph([helper.make_node("Add", ["a", "b"], ["c"])], "g", inputs,
                              [helper.make_tensor_value_info("c", TensorProto.FLOAT, None)])
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), path)
    out = subprocess.run([sys.executable, "-m", "onnxviz", "info", str(path)], capture_output=True, text=True,
                         check=True).stdout
    assert "a: float32 [?, 4]" in out and "b: float32 unknown rank" in out
