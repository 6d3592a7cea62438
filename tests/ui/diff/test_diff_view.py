"""Issue 19, what a user of the diff view sees: the key never covers the graph (it sits in a strip of
its own above it and folds), the two sides' tables show long names whole (wrapped, never cut), and the
ghosts' edges never run through the graph's edge labels."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
from conftest import TEST_DATA
from onnx import helper
from PySide6.QtCore import QPointF, QRect, QRectF, Qt
from PySide6.QtGui import QColor, QFontMetrics, QFontMetricsF
from PySide6.QtWidgets import QVBoxLayout, QWidget
from pytestqt.qtbot import QtBot
from window_fixtures import diff_window, settle

from onnxviz.model.layout.labels import LABEL_LINE
from onnxviz.ui.canvas import style
from onnxviz.ui.diff.sides import SidesTable, node_rows
from onnxviz.ui.main_window import MainWindow
from onnxviz.ui.widgets.names import BREAK

EXPORTS = TEST_DATA / "exports"
TIMEOUT = 60000
Make = Callable[[], MainWindow]
LONG = "/layer1/Relu_output_0_QuantizeLinear_inserted_by_the_quantizer_for_this_test"


def _with_long_names(tmp_path: Path) -> Path:
    """resnet_float with a Neg of a long name (and a long output name) after node 3."""
    m = onnx.load(EXPORTS / "resnet_float.onnx")
    g = m.graph
    source = g.node[3].output[0]
    for n in g.node[4:]:
        n.input[:] = [f"{LONG}_Output" if x == source else x for x in n.input]
    g.node.insert(4, helper.make_node("Neg", [source], [f"{LONG}_Output"], name=LONG))
    path = tmp_path / "resnet_long.onnx"
    onnx.save(m, path)
    return path



def _cut_cells(table: SidesTable) -> list[str]:
    """The cells whose text, wrapped at the column's width, is wider than the column, or whose row shows
    fewer of its lines than it has."""
    out = []
    for r in range(table.rowCount()):
        for c in range(table.columnCount()):
            item = table.item(r, c)
            if table.isColumnHidden(c) or item is None:
                continue
            metrics = QFontMetrics(item.font())
            room = QRect(0, 0, table.columnWidth(c) - 6, 100000)
            need = metrics.boundingRect(room, int(Qt.TextFlag.TextWordWrap), item.text())
            lines = round(need.height() / metrics.lineSpacing())
            if need.width() > room.width() or table.rowHeight(r) < lines * metrics.height():
                out.append(table.cell_text(r, c))
    return out


def test_the_key_sits_above_the_graph_never_over_it_and_folds(qtbot: QtBot, make_window: Make, tmp_path: Path) -> None:
    w = diff_window(qtbot, make_window, EXPORTS / "resnet_float.onnx", _with_long_names(tmp_path), ghosts=True)
    canvas, view = w.canvas, w.canvas.view
    strip = canvas.legend_strip
    assert strip.isVisible() and canvas.legend is not None and canvas.legend.title.startswith("Differences with B")
    # a row of its own between the header and the graph: nothing of it is over the view
    top = strip.mapTo(canvas, strip.rect().bottomLeft()).y()
    assert top < view.mapTo(canvas, view.rect().topLeft()).y()
    # the view paints the graph only: where the graph is not, it is the same with the key as without
    view.center_on(QPointF(-1e6, -1e6))
    settle()
    corner = QRect(0, 0, 320, 90)   # where a key drawn over the graph would be
    with_key = view.grab().toImage().copy(corner)
    w.diff.dock.colouring.setCurrentIndex(0)
    canvas.clear_overlay()
    qtbot.waitUntil(lambda: strip.isHidden(), timeout=TIMEOUT)
    view.center_on(QPointF(-1e6, -1e6))
    settle()
    assert view.grab().toImage().copy(corner) == with_key
    w.diff.set_colouring("")   # the diff's colours again
    qtbot.waitUntil(strip.isVisible, timeout=TIMEOUT)
    # folded away: the graph gets its room; the header's Key button brings it back
    height = view.height()
    assert strip.toggle.isVisible() and strip.toggle.isChecked()
    qtbot.mouseClick(strip.fold_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: view.height() > height, timeout=TIMEOUT)
    assert strip.isHidden() and strip.toggle.isVisible() and not strip.toggle.isChecked()
    qtbot.mouseClick(strip.toggle, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: strip.isVisible() and view.height() == height, timeout=TIMEOUT)
    w.diff.close_diff()
    assert strip.isHidden() and strip.toggle.isHidden()


def test_long_names_in_both_side_tables_are_shown_whole(qtbot: QtBot, make_window: Make, tmp_path: Path) -> None:
    w = diff_window(qtbot, make_window, EXPORTS / "resnet_float.onnx", _with_long_names(tmp_path), ghosts=True)
    c = w.diff
    row = next(k for k, d in enumerate(c.dock.differences) if d.kind == "node_added")
    c.dock.list.setCurrentRow(row)
    qtbot.waitUntil(lambda: w.canvas.selected_box() == w.canvas.drawable.ghost_box.get(row), timeout=TIMEOUT)
    settle()
    panel = w.panels.node_panel.findChild(SidesTable)
    dock = c.dock.sides
    assert isinstance(panel, SidesTable) and isinstance(dock, SidesTable)
    for table in (panel, dock):
        qtbot.waitUntil(lambda t=table: not _cut_cells(t), timeout=TIMEOUT)
        fields = {table.cell_text(r, 0).removeprefix("\u2260 "): table.cell_text(r, 2) for r in range(table.rowCount())}
        assert fields["name"] == LONG and fields["output 0"] == f"{LONG}_Output"
        assert table.isColumnHidden(1)   # A has no such node: no column of dashes
        assert LONG in table.item(0, 2).toolTip()
    # a narrower panel wraps more, still nothing cut
    w.panels.docks["Node"].resize(260, w.panels.docks["Node"].height())
    qtbot.waitUntil(lambda: not _cut_cells(panel), timeout=TIMEOUT)
    for table in (panel, dock):   # a field's name is broken between its words only ('\u2260 output' / '0')
        assert not [table.item(r, 0).text() for r in range(table.rowCount()) if BREAK in table.item(r, 0).text()]


def _crossed_labels(w: MainWindow) -> list[QRectF]:
    """The shown edge labels a ghost's edge runs through (scene rectangles, the text's own)."""
    d = w.canvas.drawable
    everything = np.flatnonzero(np.ones(d.scene.n_edges, bool))
    ghost_edges = everything[d.ghost_edges(everything)]
    spots = d.labels
    out = []
    for row in range(len(spots.edge)):
        e = int(spots.edge[row])
        width = QFontMetricsF(style.font(style.LABEL_PT, italic=bool(d.scene.edge_inferred[e]))).horizontalAdvance(
            d.scene.edge_label[e])
        x = float(spots.x[row]) - (width if spots.left[row] else 0.0)
        rect = QRectF(x, float(spots.y[row]), width, LABEL_LINE).adjusted(1, 2, -1, -2)
        for g in ghost_edges:
            pts = d.scene.edge_polyline(int(g))
            dense = np.concatenate([np.linspace(a, b, 50) for a, b in zip(pts[:-1], pts[1:], strict=True)])
            if any(rect.contains(QPointF(float(px), float(py))) for px, py in dense):
                out.append(rect)
                break
    return out


def test_ghost_edges_are_not_drawn_across_edge_labels(qtbot: QtBot, make_window: Make) -> None:
    w = diff_window(qtbot, make_window, EXPORTS / "resnet_float.onnx", EXPORTS / "resnet_int8_qdq.onnx", ghosts=True)
    view = w.canvas.view
    crossed = _crossed_labels(w)
    # the quantizer's ghosts run beside layer1: some of their edges crossed A's labels (drawn under them, this
    # test checked); labels now keep clear of every edge of another box, ghosts' included (issue 31)
    assert crossed == []
    green = QColor(style.GHOST)
    for rect in crossed:
        view.set_scale(1.0, None)
        view.center_on(rect.center())
        settle()
        image = view.grab().toImage()
        ratio = image.devicePixelRatio()
        top_left, bottom_right = view.map_from_scene(rect.topLeft()), view.map_from_scene(rect.bottomRight())
        hits = [(x, y) for x in range(int(top_left.x() * ratio) + 1, int(bottom_right.x() * ratio))
                for y in range(int(top_left.y() * ratio) + 1, int(bottom_right.y() * ratio))
                if _near(image.pixelColor(x, y), green)]
        assert hits == [], (rect, hits[:5])


def _near(c: QColor, target: QColor) -> bool:
    return abs(c.red() - target.red()) + abs(c.green() - target.green()) + abs(c.blue() - target.blue()) < 60


def test_a_changed_node_chosen_shows_both_sides_in_the_dock_too(qtbot: QtBot, make_window: Make) -> None:
    w = diff_window(qtbot, make_window, EXPORTS / "resnet_float.onnx", EXPORTS / "resnet_int8_qdq.onnx", ghosts=True)
    c = w.diff
    row = next(k for k, d in enumerate(c.dock.differences) if d.kind == "node_changed" and d.a == "/layer1/conv2/Conv")
    c.dock.list.setCurrentRow(row)
    qtbot.waitUntil(lambda: isinstance(c.dock.sides, SidesTable), timeout=TIMEOUT)
    table = c.dock.sides
    assert isinstance(table, SidesTable) and table.changed_fields() == ["input 1", "input 2"]
    assert not table.isColumnHidden(1) and not table.isColumnHidden(2)
    qtbot.waitUntil(lambda: not _cut_cells(table), timeout=TIMEOUT)
    removed = next(k for k, d in enumerate(c.dock.differences) if d.kind == "node_removed")
    c.dock.list.setCurrentRow(removed)
    qtbot.waitUntil(lambda: c.dock.sides is not table and isinstance(c.dock.sides, SidesTable), timeout=TIMEOUT)
    assert c.dock.sides.isColumnHidden(2) and c.dock.sides.cell_text(1, 1) == "Relu"   # B has no such node


def test_a_narrow_side_table_wraps_names_and_keeps_field_names_whole(qtbot: QtBot) -> None:
    """As narrow as the Differences dock's side can get: values wrap (nothing cut) and no field name is
    broken inside a word ('\u2260 doma' / 'in')."""
    node = helper.make_node("QuantizeLinear", ["/layer1/Relu_output_0", "/layer1/Relu_output_0_scale"],
                            [f"{LONG}_Output"], name=LONG, axis=1)
    host = QWidget()
    table = SidesTable(node_rows(None, node))
    QVBoxLayout(host).addWidget(table)
    qtbot.addWidget(host)
    host.resize(190, 400)
    host.show()
    qtbot.waitUntil(lambda: table.width() < 200 and not _cut_cells(table), timeout=TIMEOUT)
    assert table.cell_text(0, 2) == LONG and table.isColumnHidden(1)
    assert not [table.item(r, 0).text() for r in range(table.rowCount()) if BREAK in table.item(r, 0).text()]
