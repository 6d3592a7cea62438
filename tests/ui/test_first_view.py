"""The window's first view of real exports: a graph that reads whole opens whole, a bigger one at 1:1 on its
inputs; the minimap and an empty Problems list take no room they do not need; the user's choices win."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import TEST_DATA
from onnx import TensorProto, helper
from PySide6.QtCore import QRectF
from pytestqt.qtbot import QtBot
from window_fixtures import open_and_wait, settle

from onnxviz.ui import docks
from onnxviz.ui.canvas.view import FIT_MARGIN, FIT_READABLE, opening_start
from onnxviz.ui.main_window import MainWindow

EXPORTS = TEST_DATA / "exports"
TIMEOUT = 30000
Make = Callable[[], MainWindow]


def opened(qtbot: QtBot, make_window: Make, path: Path) -> MainWindow:
    """A 1400x900 window (Netron's pictures' size) showing ``path`` once its analysis is done."""
    w = make_window()
    w.resize(1400, 900)
    with qtbot.waitSignal(w.canvas.scene_ready, timeout=TIMEOUT):
        open_and_wait(qtbot, w, path)
    qtbot.waitUntil(lambda: not w.validation.busy, timeout=TIMEOUT)
    settle()
    return w


def problems_dock(w: MainWindow) -> docks.QDockWidget:
    dock = docks.find_dock(w, docks.PROBLEMS)
    assert dock is not None
    return dock


def inputs_rect(w: MainWindow) -> QRectF:
    d = w.canvas.view.drawable
    assert d is not None
    rows = np.flatnonzero(d.scene.box_kind == 1)
    left, top = float(d.x0[rows].min()), float(d.y0[rows].min())
    right, bottom = float(d.x1[rows].max()), float((d.y0[rows] + d.scene.box_h[rows]).max())
    return QRectF(left, top, right - left, bottom - top)


@pytest.mark.parametrize("name", ["lstm_tagger", "resnet_float", "mlp_int4_matmulnbits", "vad_if"])
def test_a_small_export_opens_whole_with_the_room_it_needs(qtbot: QtBot, make_window: Make, name: str) -> None:
    w = opened(qtbot, make_window, EXPORTS / f"{name}.onnx")
    view = w.canvas.view
    assert view.drawable is not None
    assert view.visible_scene_rect().contains(QRectF(*view.drawable.bounds))   # the whole graph in sight
    assert view.scale >= FIT_READABLE                                          # at a zoom its titles read
    assert not w.canvas.minimap.isVisible()                                    # it would repeat the picture
    assert problems_dock(w).isHidden()                                         # "No problems" takes no room
    assert view.width() * view.height() > 0.6 * 1400 * 900                     # the graph has most of the window


def test_a_small_tall_export_opens_whole_at_a_zoom_near_netrons(qtbot: QtBot, make_window: Make) -> None:
    # Netron opens it at 1:1 with 14 of its 16 nodes in sight; a layout as tall as it was (1440 units)
    # opened whole at 0.52
    view = opened(qtbot, make_window, EXPORTS / "resnet_float.onnx").canvas.view
    assert view.drawable is not None
    assert view.visible_scene_rect().contains(QRectF(*view.drawable.bounds))
    assert view.scale >= 0.74


def test_a_big_export_opens_at_1_to_1_with_its_inputs_in_sight(qtbot: QtBot, make_window: Make) -> None:
    w = opened(qtbot, make_window, EXPORTS / "gpt2_legacy.onnx")
    view = w.canvas.view
    assert view.scale == pytest.approx(1.0)
    assert view.visible_scene_rect().contains(inputs_rect(w))
    assert w.canvas.minimap.isVisible()                       # the rest of the graph is off screen


def broken_model(folder: Path) -> Path:
    graph = helper.make_graph([helper.make_node("Relu", ["nowhere"], ["y"], name="lost")], "g", [],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    path = folder / "lost.onnx"
    onnx.save(helper.make_model(graph), path)
    return path


def test_the_problems_panel_comes_back_when_there_is_something_to_report(qtbot: QtBot, make_window: Make,
                                                                        tmp_path: Path) -> None:
    path = broken_model(tmp_path)
    w = opened(qtbot, make_window, EXPORTS / "lstm_tagger.onnx")
    assert problems_dock(w).isHidden()
    open_and_wait(qtbot, w, path)
    qtbot.waitUntil(lambda: not problems_dock(w).isHidden(), timeout=TIMEOUT)
    assert w.panels.problems_panel.problems
    open_and_wait(qtbot, w, EXPORTS / "lstm_tagger.onnx")
    qtbot.waitUntil(lambda: problems_dock(w).isHidden(), timeout=TIMEOUT)


def test_the_bottom_panels_stay_while_the_user_reads_another_of_their_tabs(qtbot: QtBot, make_window: Make,
                                                                          tmp_path: Path) -> None:
    w = opened(qtbot, make_window, broken_model(tmp_path))
    raw = docks.find_dock(w, docks.RAW)
    assert raw is not None and not problems_dock(w).isHidden()
    raw.raise_()
    qtbot.waitUntil(lambda: not raw.visibleRegion().isEmpty(), timeout=TIMEOUT)
    open_and_wait(qtbot, w, EXPORTS / "lstm_tagger.onnx")
    qtbot.waitUntil(lambda: not w.validation.busy, timeout=TIMEOUT)
    settle()
    assert not w.panels.problems_panel.problems
    assert not raw.visibleRegion().isEmpty() and not problems_dock(w).isHidden()


def test_the_users_choices_win_over_the_first_view_defaults(qtbot: QtBot, make_window: Make) -> None:
    w = opened(qtbot, make_window, EXPORTS / "gpt2_legacy.onnx")
    w.status_fields.problems.click()                            # "✓ No problems": the user wants the list
    assert not problems_dock(w).isHidden()
    w.canvas.actions_by_name["minimap"].trigger()               # and no minimap
    assert not w.canvas.minimap.isVisible()
    w.close()
    again = opened(qtbot, make_window, EXPORTS / "gpt2_legacy.onnx")
    assert not problems_dock(again).isHidden()                  # kept, though the list is empty
    assert not again.canvas.minimap.isVisible()
    assert again.canvas.view.scale == pytest.approx(1.0)


def box_rect(w: MainWindow, box: int) -> QRectF:
    d = w.canvas.view.drawable
    assert d is not None
    return QRectF(float(d.x0[box]), float(d.y0[box]), float(d.scene.box_w[box]), float(d.scene.box_h[box]))


def boxes_in_sight(w: MainWindow) -> int:
    """How many boxes have their middle in the view."""
    d, seen = w.canvas.view.drawable, w.canvas.view.visible_scene_rect()
    assert d is not None
    mid_x, mid_y = (d.x0 + d.x1) / 2, (d.y0 + d.y1) / 2
    return int(np.count_nonzero((mid_x >= seen.left()) & (mid_x <= seen.right())
                                & (mid_y >= seen.top()) & (mid_y <= seen.bottom())))


def test_1_to_1_after_fit_never_shows_an_empty_canvas(qtbot: QtBot, make_window: Make) -> None:
    # after Fit the view's centre falls where no box is (between the branches of a wide layer): 1:1 there
    # showed an empty canvas; it moves to the box nearest the centre
    w = opened(qtbot, make_window, EXPORTS / "gpt2_legacy.onnx")
    view = w.canvas.view
    d = view.drawable
    assert d is not None
    w.canvas.actions_by_name["fit"].trigger()
    x, y, width, height = d.bounds
    view.center_on(QRectF(*d.bounds).center())
    empty = next(QRectF(x + i * width / 8, y + j * height / 8, 0, 0).center()
                 for i in range(1, 8) for j in range(1, 8)
                 if d.box_at(x + i * width / 8, y + j * height / 8) < 0
                 and not len(d.visible_boxes(x + i * width / 8 - 800, y + j * height / 8 - 500,
                                             x + i * width / 8 + 800, y + j * height / 8 + 500)))
    view.center_on(empty)           # a fitted view whose centre has nothing near it at 1:1
    w.canvas.actions_by_name["actual"].trigger()
    assert view.scale == pytest.approx(1.0)
    assert boxes_in_sight(w) > 0


def test_1_to_1_centres_on_the_selected_node(qtbot: QtBot, make_window: Make) -> None:
    w = opened(qtbot, make_window, EXPORTS / "gpt2_legacy.onnx")
    view, doc = w.canvas.view, w.doc
    assert doc is not None
    node = len(doc.model.graph.node) - 5
    doc.selection.select_node("", node)
    w.canvas.actions_by_name["fit"].trigger()
    w.canvas.actions_by_name["actual"].trigger()
    box = w.canvas.selected_box()
    assert box >= 0 and view.scale == pytest.approx(1.0)
    assert view.visible_scene_rect().center() == box_rect(w, box).center()


def test_turning_the_layout_keeps_the_selected_node_in_sight(qtbot: QtBot, make_window: Make) -> None:
    w = opened(qtbot, make_window, EXPORTS / "bert_legacy.onnx")
    doc, canvas = w.doc, w.canvas
    assert doc is not None
    node = len(doc.model.graph.node) // 2          # the middle of the graph: far from the start either way
    doc.selection.select_node("", node)
    try:
        for _ in range(2):                           # to Left to Right, and back
            with qtbot.waitSignal(canvas.scene_ready, timeout=TIMEOUT):
                canvas.actions_by_name["left_to_right"].trigger()
            box = canvas.selected_box()
            assert box >= 0 and doc.selection.state.node == node
            assert canvas.view.visible_scene_rect().contains(box_rect(w, box))
    finally:
        if canvas.actions_by_name["left_to_right"].isChecked():
            canvas.actions_by_name["left_to_right"].trigger()


def cut_at_the_sides(w: MainWindow) -> list[tuple[float, float, float, float]]:
    """Boxes and edge labels the view shows only part of, across the graph's flow (left or right side of
    a top-to-bottom graph, top or bottom of a left-to-right one)."""
    view = w.canvas.view
    d = view.drawable
    assert d is not None
    seen = view.visible_scene_rect()
    x0, y0, x1, y1, _ = d.sights()
    in_sight = (x1 > seen.left()) & (x0 < seen.right()) & (y1 > seen.top()) & (y0 < seen.bottom())
    if d.scene.direction == "LR":
        cut = in_sight & ((y0 < seen.top()) | (y1 > seen.bottom()))
    else:
        cut = in_sight & ((x0 < seen.left()) | (x1 > seen.right()))
    return [(float(a), float(b), float(c), float(e)) for a, b, c, e in zip(x0[cut], y0[cut], x1[cut], y1[cut],
                                                                           strict=True)]


def int4_bert_file(folder: Path) -> Path:
    from tests.model.graph.test_symbolic_shapes import int4_bert

    path = folder / "bert_int4.onnx"
    onnx.save(int4_bert(), path)
    return path


@pytest.mark.parametrize("name", ["bert_legacy", "gpt2_legacy", "bert_dynamo", "resnet_int8_qdq", "bert_int4",
                                  "bert_legacy left to right"])
def test_the_first_view_cuts_no_box_or_label_off_at_a_side(qtbot: QtBot, make_window: Make, tmp_path: Path,
                                                           name: str) -> None:
    # the 4-bit BERT opened on the left of its first rows, a label cut by the view's side, and the right of
    # the canvas empty; every box and label in sight at the start is now whole, the inputs among them
    path = int4_bert_file(tmp_path) if name == "bert_int4" else EXPORTS / f"{name.split()[0]}.onnx"
    w = opened(qtbot, make_window, path)
    canvas = w.canvas
    try:
        if name.endswith("left to right"):
            with qtbot.waitSignal(canvas.scene_ready, timeout=TIMEOUT):
                canvas.actions_by_name["left_to_right"].trigger()
        view = canvas.view
        d = view.drawable
        assert d is not None
        assert view.scale >= FIT_READABLE and view.auto_view
        assert cut_at_the_sides(w) == []
        seen, (x, y, _, _) = view.visible_scene_rect(), d.bounds
        assert (seen.left() <= x) if d.scene.direction == "LR" else (seen.top() <= y)   # the graph's start
        inputs = np.flatnonzero(d.scene.box_kind == 1)
        assert any(seen.contains(QRectF(float(d.x0[b]), float(d.y0[b]), float(d.scene.box_w[b]),
                                        float(d.scene.box_h[b]))) for b in inputs)
    finally:
        if canvas.actions_by_name["left_to_right"].isChecked():
            canvas.actions_by_name["left_to_right"].trigger()


def test_a_wide_start_opens_on_the_inputs_between_boxes() -> None:
    # a detector's first rows: a wide fan on the left (0-1500), the input far right of them, a view 900
    # across: it opened at the left end ("atchNormalization" cut at the side) with the input out of sight
    lo = np.array([0.0, 200, 400, 600, 800, 1000, 1200, 1400, 1500, 1650, 1900])
    hi = lo + np.array([160.0, 160, 160, 160, 160, 160, 160, 60, 120, 200, 100])
    start = opening_start(lo, hi, lo[8:9], hi[8:9], (0.0, 2000.0), 900.0)
    end = start + 900.0
    assert start <= lo[8] - FIT_MARGIN / 2 and hi[8] + FIT_MARGIN / 2 <= end          # the input in sight
    assert not np.any((lo < start) & (hi > start)) and not np.any((lo < end) & (hi > end))   # nothing cut
    whole = opening_start(lo[:3], hi[:3], lo[:1], hi[:1], (0.0, 560.0), 900.0)
    assert whole == pytest.approx((560.0 - 900.0) / 2)                               # a narrow graph: centred
