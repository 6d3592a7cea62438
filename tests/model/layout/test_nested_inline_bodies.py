"""Bodies inside bodies (an If inside a Loop's body) open inside their node too, on the canvas and in the
layout; left to right, bodies are laid out left to right and stacked across the flow."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto
from onnx import helper as h
from PySide6.QtCore import QPointF, Qt
from pytestqt.qtbot import QtBot
from window_fixtures import TIMEOUT, open_canvas

from onnxviz.model.document import Document
from onnxviz.model.layout.inline import Embedded, InlineLayout
from onnxviz.model.layout.options import LEFT_TO_RIGHT, LayoutOptions
from onnxviz.model.layout.scene import BoxKind, Scene
from onnxviz.ui.canvas.canvas import GraphCanvas
from onnxviz.ui.canvas.painting import toggle_rect

LOOP, IF = 0, 1            # the Loop in the main graph, the If in the Loop's body
BODY = "0.body"
THEN, ELSE = "0.body/1.then_branch", "0.body/1.else_branch"


def nested_model() -> onnx.ModelProto:
    """A Loop whose body picks, with an If, between adding and subtracting a weight of the main graph."""
    f = TensorProto.FLOAT
    then = h.make_graph([h.make_node("Add", ["x_in", "one"], ["t_out"], name="then_add")], "then_body", [],
                        [h.make_tensor_value_info("t_out", f, [2])])
    other = h.make_graph([h.make_node("Sub", ["x_in", "one"], ["e_out"], name="else_sub"),
                          h.make_node("Relu", ["e_out"], ["e_relu"], name="else_relu")], "else_body", [],
                         [h.make_tensor_value_info("e_relu", f, [2])])
    body = h.make_graph(
        [h.make_node("Identity", ["cond_in"], ["cond_out"], name="keep_going"),
         h.make_node("If", ["cond_in"], ["x_out"], name="pick", then_branch=then, else_branch=other)],
        "loop_body",
        [h.make_tensor_value_info("i", TensorProto.INT64, []), h.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         h.make_tensor_value_info("x_in", f, [2])],
        [h.make_tensor_value_info("cond_out", TensorProto.BOOL, []), h.make_tensor_value_info("x_out", f, [2])])
    graph = h.make_graph(
        [h.make_node("Loop", ["trips", "cond", "x0"], ["x_final"], name="loop", body=body),
         h.make_node("Relu", ["x_final"], ["y"], name="after")],
        "nested",
        [h.make_tensor_value_info("trips", TensorProto.INT64, []), h.make_tensor_value_info("cond", TensorProto.BOOL, []),
         h.make_tensor_value_info("x0", f, [2])],
        [h.make_tensor_value_info("y", f, [2])],
        [h.make_tensor("one", f, [1], [1.0])])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    onnx.checker.check_model(model, full_check=True)
    return model


@pytest.fixture
def nested_path(tmp_path: Path) -> Path:
    path = tmp_path / "nested.onnx"
    onnx.save(nested_model(), str(path))
    return path


def _layout(path: Path, inline: list[int | tuple[str, int]], direction: str = "TB") -> tuple[InlineLayout, Scene]:
    layout = InlineLayout(Document.open(path).index, "", inline=inline, options=LayoutOptions(direction=direction))
    return layout, layout.build()


def _rect(scene: Scene, box: int) -> tuple[float, float, float, float]:
    x, y = float(scene.box_x[box]), float(scene.box_y[box])
    return x, y, x + float(scene.box_w[box]), y + float(scene.box_h[box])


def _inside(inner: tuple[float, ...], outer: tuple[float, ...]) -> bool:
    return outer[0] <= inner[0] and outer[1] <= inner[1] and inner[2] <= outer[2] and inner[3] <= outer[3]


def _frame(scene: Scene, row: int) -> tuple[float, float, float, float]:
    x, y, w, hh = (float(v) for v in scene.group_rect[row])
    return x, y, x + w, y + hh


def _check_bodies(layout: InlineLayout, scene: Scene) -> dict[str, Embedded]:
    """Every body's boxes lie in its frame, its edges join its own boxes, no two boxes overlap."""
    by_scope = {e.scope: e for e in layout.embedded}
    for emb in layout.embedded:
        frame = _frame(scene, emb.frame)
        assert all(_inside(_rect(scene, b), frame) for b in range(emb.box_start, emb.box_end))
        edges = np.arange(emb.edge_start, emb.edge_end)
        assert np.all((scene.edge_src[edges] >= emb.box_start) & (scene.edge_src[edges] < emb.box_end))
        first = scene.edge_polyline(emb.edge_start)[0] - emb.scene.edge_polyline(0)[0]
        assert first == pytest.approx(emb.offset, abs=1e-3)
    rects = [_rect(scene, b) for b in range(scene.n_boxes)]   # a holder's box is its header only
    overlaps = [(a, b) for a in range(scene.n_boxes) for b in range(a + 1, scene.n_boxes)
                if rects[a][0] < rects[b][2] and rects[b][0] < rects[a][2] and rects[a][1] < rects[b][3]
                and rects[b][1] < rects[a][3]]
    assert overlaps == []
    return by_scope


def test_an_if_inside_a_loop_body_opens_inside_the_if(nested_path: Path) -> None:
    closed, closed_scene = _layout(nested_path, [LOOP])
    assert [e.scope for e in closed.embedded] == [BODY]
    layout, scene = _layout(nested_path, [LOOP, (BODY, IF)])
    bodies = _check_bodies(layout, scene)
    assert sorted(bodies) == sorted([BODY, THEN, ELSE])
    body = bodies[BODY]
    assert all(bodies[s].node == IF and bodies[s].parent == BODY for s in (THEN, ELSE))
    assert body.node == LOOP and body.parent == ""
    # the If's room holds both branches, below its header, inside the Loop body's frame
    if_box = body.box_start + body.scene.box_of_node(IF)
    container = next(f for f, holder in layout.frame_holders.items() if holder == (BODY, IF))
    room = _frame(scene, container)
    for s in (THEN, ELSE):
        assert _inside(_frame(scene, bodies[s].frame), room)
        assert _frame(scene, bodies[s].frame)[1] > _rect(scene, if_box)[3]
    assert _inside(room, _frame(scene, body.frame))
    assert layout.container_frames == {f: n for f, (s, n) in layout.frame_holders.items() if s == ""}
    # every box is counted once: main graph, the body's own boxes, each branch's
    assert scene.n_boxes == len(closed_scene.box_ref) - closed.embedded[0].scene.n_boxes + \
        sum(e.scene.n_boxes for e in layout.embedded)
    titles = [bodies[ELSE].scene.box_title[k] for k in range(bodies[ELSE].scene.n_boxes)]
    assert "Relu" in titles and "Sub" in titles


def test_a_nested_body_is_shown_only_inside_its_shown_parent(nested_path: Path) -> None:
    layout, _ = _layout(nested_path, [(BODY, IF)])   # the Loop itself is closed: nothing to show it in
    assert layout.embedded == []


def test_left_to_right_bodies_flow_left_to_right_and_stack_across(nested_path: Path) -> None:
    layout, scene = _layout(nested_path, [LOOP, (BODY, IF)], LEFT_TO_RIGHT)
    bodies = _check_bodies(layout, scene)
    for emb in bodies.values():   # laid out left to right: every body edge runs rightwards
        assert emb.scene.direction == LEFT_TO_RIGHT
        for e in range(emb.edge_start, emb.edge_end):
            points = scene.edge_polyline(e)
            assert points[-1][0] > points[0][0]
    top, bottom = sorted((_frame(scene, bodies[s].frame) for s in (THEN, ELSE)), key=lambda r: r[1])
    assert bottom[1] >= top[3]   # one above the other, across the flow


def _click(qtbot: QtBot, canvas: GraphCanvas, point: QPointF) -> None:
    canvas.view.set_scale(1.0)
    canvas.view.center_on(point)
    qtbot.mouseClick(canvas.view, Qt.MouseButton.LeftButton, pos=canvas.view.map_from_scene(point).toPoint())


def test_nested_bodies_open_and_close_with_their_buttons(qtbot: QtBot, nested_path: Path) -> None:
    window, canvas = open_canvas(qtbot, nested_path)
    d = canvas.drawable
    assert d is not None
    with qtbot.waitSignal(canvas.scene_ready, timeout=TIMEOUT):
        _click(qtbot, canvas, toggle_rect(d, box=d.node_box[LOOP]).center())   # the Loop's '+'
    body = canvas.layout_obj.embedded[0]
    if_box = body.box_start + body.scene.box_of_node(IF)
    assert canvas.view.options.body_toggles == {canvas.drawable.node_box[LOOP]: True, if_box: False}
    assert canvas.box_holder(if_box) == (BODY, IF)
    with qtbot.waitSignal(canvas.scene_ready, timeout=TIMEOUT):
        _click(qtbot, canvas, toggle_rect(canvas.drawable, box=if_box).center())   # the nested If's '+'
    assert canvas.inline_holders == {("", LOOP), (BODY, IF)} and canvas.inline_nodes == {LOOP}
    bodies = {e.scope: e for e in canvas.layout_obj.embedded}
    assert sorted(bodies) == sorted([BODY, THEN, ELSE])
    assert canvas.view.options.body_toggles[if_box] is True
    # its title is drawn in the header's text colour (white on the If's purple), not in its '-' button's
    d = canvas.drawable
    title = QPointF(float(d.x0[if_box] + d.x1[if_box]) / 2, float(d.y0[if_box]) + 10)
    canvas.view.set_scale(1.0)
    canvas.view.center_on(title)
    image = canvas.view.grab().toImage()
    at = canvas.view.map_from_scene(title).toPoint()
    assert max(image.pixelColor(at.x() + dx, at.y() + dy).lightness() for dx in range(-8, 9) for dy in range(-5, 6)) > 220
    # a click on a box of the nested branch selects it in its own scope, the main graph still shown
    other = bodies[ELSE]
    relu_local = other.scene.box_title.index("Relu")
    relu = other.box_start + relu_local
    d = canvas.drawable
    _click(qtbot, canvas, QPointF(float(d.x0[relu] + d.x1[relu]) / 2, float(d.y0[relu] + d.y1[relu]) / 2))
    state = window.doc.selection.state
    assert (state.scope, state.node) == (ELSE, other.scene.box_ref[relu_local].node) and canvas.scope == ""
    assert canvas.selected_box() == relu
    assert "Relu" in canvas.tooltips.text(relu, -1)
    assert canvas.frame_holder(other.frame) == (BODY, IF)
    # the else branch's '-' puts the If's branches away; the Loop's body stays open
    with qtbot.waitSignal(canvas.scene_ready, timeout=TIMEOUT):
        _click(qtbot, canvas, toggle_rect(canvas.drawable, frame=other.frame).center())
    assert canvas.inline_holders == {("", LOOP)}
    assert [e.scope for e in canvas.layout_obj.embedded] == [BODY]
    assert canvas.drawable.scene.box_ref[canvas.drawable.node_box[LOOP]].kind == BoxKind.OP
