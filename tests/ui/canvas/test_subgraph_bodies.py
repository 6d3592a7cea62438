"""If/Loop/Scan bodies on the canvas: values a body reads from the enclosing graph are drawn as such
(dashed, captioned), when the body is opened and when it is shown inside its node."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from conftest import TEST_DATA
from onnx_data import node_model
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QImage
from pytestqt.qtbot import QtBot
from window_fixtures import TIMEOUT, open_canvas

from onnxviz.model.document import Document
from onnxviz.model.layout.inline import InlineLayout
from onnxviz.model.layout.scene import BoxKind, Scene
from onnxviz.ui.canvas import style
from onnxviz.ui.canvas.canvas import GraphCanvas
from onnxviz.ui.canvas.painting import toggle_rect

VAD_IF = TEST_DATA / "exports" / "vad_if.onnx"


def box_of_value(canvas: GraphCanvas, value: str) -> int:
    d = canvas.drawable
    assert d is not None
    return next(b for b, ref in enumerate(d.scene.box_ref) if ref.kind != BoxKind.OP and ref.value == value)


def border_gaps(canvas: GraphCanvas, image: QImage, box: int) -> int:
    """Breaks in the middle stretch of a box's top border, pixel by pixel (a line is drawn darker than the
    background; antialiased, it may fall on two rows)."""
    d = canvas.drawable
    assert d is not None
    left = canvas.view.map_from_scene(QPointF(float(d.x0[box]) + 25, float(d.y0[box]))).toPoint()
    right = canvas.view.map_from_scene(QPointF(float(d.x1[box]) - 25, float(d.y0[box]))).toPoint()
    dark = [min(image.pixelColor(x, left.y() + k).lightness() for k in (-1, 0, 1)) < style.BACKGROUND.lightness() - 40
            for x in range(left.x(), right.x())]
    assert sum(dark) > len(dark) / 2   # the border is there
    return sum(1 for a, b in zip(dark, dark[1:], strict=False) if a and not b)


def test_an_opened_body_draws_its_outer_scope_reads_dashed(qtbot: QtBot) -> None:
    window, canvas = open_canvas(qtbot, VAD_IF)
    assert not canvas.view.options.outer   # the main graph's inputs are its own
    if_node = next(i for i, node in enumerate(window.doc.model.graph.node) if node.op_type == "If")
    with qtbot.waitSignal(canvas.scene_ready, timeout=TIMEOUT):
        canvas.enter_scope(f"{if_node}.then_branch")
    captured = {box_of_value(canvas, "/Unsqueeze_output_0"), box_of_value(canvas, "/Constant_2_output_0")}
    assert canvas.view.options.outer == captured
    assert "from the outer graph" in canvas.tooltips.text(min(captured), -1)
    own_output = box_of_value(canvas, "/Gemm_output_0")
    canvas.view.set_scale(1.0)
    canvas.view.fit()
    image = canvas.view.grab().toImage()
    for box in captured:
        assert border_gaps(canvas, image, box) >= 5   # dashed
    assert border_gaps(canvas, image, own_output) == 0   # solid


def click_at(qtbot: QtBot, canvas: GraphCanvas, point: QPointF, double: bool = False) -> None:
    pos = canvas.view.map_from_scene(point).toPoint()
    if double:
        qtbot.mouseDClick(canvas.view, Qt.MouseButton.LeftButton, pos=pos)
    else:
        qtbot.mouseClick(canvas.view, Qt.MouseButton.LeftButton, pos=pos)


def centre(canvas: GraphCanvas, box: int) -> QPointF:
    d = canvas.drawable
    assert d is not None
    return QPointF(float(d.x0[box] + d.x1[box]) / 2, float(d.y0[box] + d.y1[box]) / 2)


def test_bodies_open_inside_their_node_and_close_again(qtbot: QtBot) -> None:
    window, canvas = open_canvas(qtbot, VAD_IF)
    doc = window.doc
    if_node = next(i for i, node in enumerate(doc.model.graph.node) if node.op_type == "If")
    d = canvas.drawable
    assert d is not None
    closed_boxes, if_box = d.scene.n_boxes, d.node_box[if_node]
    assert canvas.view.options.body_toggles == {if_box: False}
    canvas.view.set_scale(1.0)
    canvas.view.center_on(centre(canvas, if_box))
    with qtbot.waitSignal(canvas.scene_ready, timeout=TIMEOUT):
        click_at(qtbot, canvas, toggle_rect(d, box=if_box).center())   # the If box's '+'
    d = canvas.drawable
    assert d is not None and canvas.scope == "" and canvas.inline_nodes == {if_node}
    layout = canvas.layout_obj
    assert [(e.scope, e.label) for e in layout.embedded] == [(f"{if_node}.then_branch", "then_branch"),
                                                             (f"{if_node}.else_branch", "else_branch")]
    # every box of both bodies lies in the room the If node was given, below its header, none over another
    container = next(f for f, node in layout.container_frames.items() if node == if_node)
    x, y, w, h = (float(v) for v in d.scene.group_rect[container])
    body_rows = [b for e in layout.embedded for b in range(e.box_start, e.box_end)]
    assert len(body_rows) == sum(e.scene.n_boxes for e in layout.embedded) == d.scene.n_boxes - closed_boxes
    assert all(x <= d.x0[b] and d.x1[b] <= x + w and d.y1[if_box] < d.y0[b] and d.y1[b] <= y + h for b in body_rows)
    others = [b for b in range(d.scene.n_boxes) if b not in body_rows and b != if_box]
    assert not any(d.x0[a] < d.x1[b] and d.x0[b] < d.x1[a] and d.y0[a] < d.y1[b] and d.y0[b] < d.y1[a]
                   for a in body_rows for b in others + body_rows if a != b)
    # what a body reads from outside is drawn as such here too: two captures in each branch
    assert len(canvas.view.options.outer) == 4 and canvas.view.options.outer <= set(body_rows)
    assert canvas.view.options.body_toggles == {if_box: True}

    then = layout.embedded[0]
    conv_local = next(b for b, ref in enumerate(then.scene.box_ref) if ref.kind == BoxKind.OP
                      and then.scene.box_title[b] == "Conv")
    conv = then.box_start + conv_local
    canvas.view.center_on(centre(canvas, conv))
    click_at(qtbot, canvas, centre(canvas, conv))   # selects the body's node, without leaving the main graph
    state = doc.selection.state
    assert (state.scope, state.node) == (then.scope, then.scene.box_ref[conv_local].node)
    assert canvas.scope == "" and canvas.selected_box() == conv
    assert "Conv" in canvas.tooltips.text(conv, -1)

    frame_toggle = toggle_rect(d, frame=then.frame).center()   # the then_branch frame's '-'
    canvas.view.center_on(frame_toggle)
    with qtbot.waitSignal(canvas.scene_ready, timeout=TIMEOUT):
        click_at(qtbot, canvas, frame_toggle)
    assert canvas.inline_nodes == frozenset() and canvas.drawable.scene.n_boxes == closed_boxes
    assert not canvas.layout_obj.embedded


def test_double_click_in_an_inline_body_opens_it_there(qtbot: QtBot) -> None:
    window, canvas = open_canvas(qtbot, VAD_IF)
    if_node = next(i for i, node in enumerate(window.doc.model.graph.node) if node.op_type == "If")
    with qtbot.waitSignal(canvas.scene_ready, timeout=TIMEOUT):
        canvas.show_body_inline(if_node)
    other = canvas.layout_obj.embedded[1]
    relu_local = next(b for b in range(other.scene.n_boxes) if other.scene.box_title[b] == "Relu")
    relu = other.box_start + relu_local
    canvas.view.set_scale(1.0)
    canvas.view.center_on(centre(canvas, relu))
    with qtbot.waitSignal(canvas.scene_ready, timeout=TIMEOUT):
        click_at(qtbot, canvas, centre(canvas, relu), double=True)
    qtbot.waitUntil(lambda: window.doc.selection.state.scope == other.scope, timeout=TIMEOUT)
    assert canvas.scope == other.scope and window.doc.selection.state.node == other.scene.box_ref[relu_local].node
    assert canvas.inline_nodes == frozenset()


@pytest.mark.parametrize("path", [VAD_IF, node_model("test_loop11"), node_model("test_scan9_sum")])
def test_inline_layout_joins_the_bodies_into_one_consistent_scene(path: Path) -> None:
    doc = Document.open(path)
    holders = sorted({i for i, _, _ in doc.index.graphs[""].children})
    plain = InlineLayout(doc.index, "").build()
    layout = InlineLayout(doc.index, "", inline=holders)
    scene = layout.build()
    bodies = layout.embedded
    assert bodies and scene.n_boxes == plain.n_boxes + sum(e.scene.n_boxes for e in bodies)
    for f in dataclasses.fields(Scene):   # every per-box, per-edge and per-frame field has one entry each
        value = getattr(scene, f.name)
        if f.name.startswith("box_"):
            assert len(value) == scene.n_boxes, f.name
        elif f.name.startswith("edge_") and f.name not in ("edge_offsets", "edge_points"):
            assert len(value) == scene.n_edges, f.name
        elif f.name.startswith("group_"):
            assert len(value) == len(scene.group_path), f.name
    assert len(scene.edge_offsets) == scene.n_edges + 1 and scene.edge_offsets[-1] == len(scene.edge_points)
    assert np.all(np.diff(scene.edge_offsets) >= 0)
    for emb in bodies:   # a body's edges join its own boxes, moved with them
        e = np.arange(emb.edge_start, emb.edge_end)
        assert np.all((scene.edge_src[e] >= emb.box_start) & (scene.edge_src[e] < emb.box_end))
        first = scene.edge_polyline(emb.edge_start)[0] - emb.scene.edge_polyline(0)[0]
        assert first == pytest.approx(emb.offset, abs=1e-3)
    assert all(ref.node == -1 for ref in scene.box_ref[plain.n_boxes:])   # nothing of the main graph
