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
from onnxviz.ui.canvas.view import FIT_READABLE
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
