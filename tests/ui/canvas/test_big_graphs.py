"""Big graphs on the canvas: the minimap of a very tall graph, where it sits, and a result list that
reaches every hit of a search."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QModelIndex, QPoint, QPointF, QRect, Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot
from window_fixtures import TIMEOUT, open_canvas

from onnxviz.ui.canvas import minimap as mm
from onnxviz.ui.canvas.canvas import GraphCanvas
from onnxviz.ui.canvas.search import BATCH, SearchIndex
from onnxviz.ui.main_window import MainWindow


def expand_all(qtbot: QtBot, canvas: GraphCanvas) -> None:
    with qtbot.waitSignal(canvas.scene_ready, timeout=TIMEOUT):
        canvas.expand_all(True)
    QApplication.processEvents()


def view_rect(canvas: GraphCanvas) -> QRect:
    """The view's rectangle in the coordinates the minimap is placed in."""
    return QRect(canvas.view.mapTo(canvas.view_host, QPoint(0, 0)), canvas.view.size())


def test_minimap_of_a_tall_graph_is_a_readable_strip_beside_the_view(qtbot: QtBot, synth_small: Path) -> None:
    _, canvas = open_canvas(qtbot, synth_small)
    expand_all(qtbot, canvas)
    minimap, d = canvas.minimap, canvas.drawable
    assert d is not None and minimap.isVisible() and minimap.frame is not None
    x, y, w, h = d.bounds
    assert h > 25 * w   # the whole graph at the minimap's height would be a few pixels wide
    assert minimap.frame.strip and minimap.frame.tall
    inner_width = minimap.width() - 2 * mm.PAD - mm.TRACK
    assert w * minimap.frame.scale >= mm.READABLE * inner_width - 1
    # docked: beside the view, covering none of it
    assert not minimap.geometry().intersects(view_rect(canvas)) and minimap.covers_view().isEmpty()
    assert minimap.geometry().left() >= view_rect(canvas).right()

    track = minimap.track_rect()
    qtbot.mouseClick(minimap, Qt.MouseButton.LeftButton, pos=QPoint(int(track.center().x()), int(track.bottom()) - 1))
    assert canvas.view.center.y() > y + 0.95 * h   # the track spans the whole graph: its end is the graph's end
    strip = minimap.frame
    assert strip.origin.y() > y + 0.5 * h          # and the strip followed the view there
    point = QPoint(minimap.width() // 3, minimap.height() // 4)
    qtbot.mouseClick(minimap, Qt.MouseButton.LeftButton, pos=point)
    wanted = QPointF(strip.origin.x() + (point.x() - mm.PAD) / strip.scale,
                     strip.origin.y() + (point.y() - mm.PAD) / strip.scale)
    assert abs(canvas.view.center.y() - wanted.y()) < 1 and abs(canvas.view.center.x() - wanted.x()) < 1


def test_minimap_whole_graph_when_it_fits(qtbot: QtBot, example_path: Path) -> None:
    _, canvas = open_canvas(qtbot, example_path)
    assert canvas.minimap.frame is not None and not canvas.minimap.frame.strip


def test_minimap_corner_and_visibility_are_remembered(qtbot: QtBot, example_path: Path) -> None:
    window, canvas = open_canvas(qtbot, example_path)
    minimap = canvas.minimap
    canvas.actions_by_name["minimap:top-left"].trigger()
    QApplication.processEvents()
    view = view_rect(canvas)
    assert minimap.isVisible() and view.contains(minimap.geometry())
    assert minimap.x() - view.left() == mm.MARGIN and minimap.y() - view.top() == mm.MARGIN
    canvas.actions_by_name["minimap:bottom-right"].trigger()
    QApplication.processEvents()
    assert view.right() - minimap.geometry().right() == mm.MARGIN
    assert view.bottom() - minimap.geometry().bottom() == mm.MARGIN
    canvas.actions_by_name["minimap"].trigger()
    assert not minimap.isVisible()
    window.close()

    again = MainWindow()
    qtbot.addWidget(again)
    again.show()
    other: GraphCanvas = again.canvas  # type: ignore[attr-defined]
    assert other.actions_by_name["minimap:bottom-right"].isChecked() and other.minimap.place == "bottom-right"
    assert not other.actions_by_name["minimap"].isChecked()
    with qtbot.waitSignal(other.scene_ready, timeout=TIMEOUT):
        again.open_path(example_path)
    assert not other.minimap.isVisible()
    other.actions_by_name["minimap"].trigger()
    assert other.minimap.isVisible()


def test_search_results_scroll_through_every_hit(qtbot: QtBot, synth_small: Path) -> None:
    window, canvas = open_canvas(qtbot, synth_small)
    panel = canvas.search_panel
    canvas.open_search()
    panel.field.setText("layers")
    panel.run()
    assert window.doc is not None
    searcher = SearchIndex(window.doc.index)   # a search of its own: every hit, in order
    expected = [searcher.hit(row) for row in searcher.scan("layers")]
    assert len(expected) > 2 * BATCH
    assert len(panel.hits) == BATCH and panel.status.text().startswith(f"{BATCH}+")
    bar = panel.results.verticalScrollBar()
    for _ in range(len(expected) // BATCH + 2):   # each scroll to the end fetches the next batch
        bar.setValue(bar.maximum())
        QApplication.processEvents()
    assert panel.hits == expected and panel.model.complete
    assert panel.status.text() == f"{len(expected):,} results"
    assert any(h.text.startswith("layers.9/") for h in panel.hits)

    panel.run()   # the arrow keys go past the fetched hits too
    panel.results.setCurrentIndex(panel.model.index(BATCH - 1, 0))
    qtbot.keyClick(panel.field, Qt.Key.Key_Down)
    assert panel.results.currentIndex().row() == BATCH and len(panel.hits) > BATCH
    with qtbot.waitSignal(panel.activated, timeout=TIMEOUT) as got:
        qtbot.keyClick(panel.field, Qt.Key.Key_Return)
    assert got.args[0] == expected[BATCH]
    assert not panel.model.canFetchMore(panel.model.index(0, 0)) and panel.model.canFetchMore(QModelIndex())


def test_a_wide_graph_gets_a_strip_that_scrolls_sideways() -> None:
    from PySide6.QtCore import QRectF, QSize

    area = QRectF(0, 0, 200_000, 400)   # a left-to-right graph
    inner = QSize(900, 138)
    frame = mm.fit_frame(area, inner, QPointF(150_000, 200))
    assert frame.strip and not frame.tall
    assert 400 * frame.scale >= mm.READABLE * inner.height() - 1e-6
    shown = inner.width() / frame.scale
    assert frame.origin.x() < 150_000 < frame.origin.x() + shown   # around the view's centre
    end = mm.fit_frame(area, inner, QPointF(199_999, 200))
    assert end.origin.x() + shown == pytest.approx(200_000)          # never past the graph's end
    whole = mm.fit_frame(QRectF(0, 0, 1200, 300), inner, QPointF(0, 0))
    assert not whole.strip and 1200 * whole.scale <= inner.width() + 1e-6


def test_a_strip_is_never_magnified_beyond_what_the_view_shows() -> None:
    # a left-to-right BERT after Fit: the minimap showed a magnified fifth of the graph, the view's
    # rectangle covering all of it
    from PySide6.QtCore import QRectF, QSize

    area, inner = QRectF(0, 0, 17_400, 715), QSize(1040, 138)
    fitted = mm.fit_frame(area, inner, area.center(), seen=QRectF(-100, -5_000, 18_000, 10_600))
    assert not fitted.strip and 17_400 * fitted.scale <= inner.width() + 1e-6       # the whole graph
    half = QRectF(4_000, 0, 8_000, 715)
    zoomed_out = mm.fit_frame(area, inner, half.center(), seen=half)
    assert zoomed_out.strip and 8_000 * zoomed_out.scale <= mm.HOLDS * inner.width() + 1e-6
    near = QRectF(4_000, 0, 1_000, 600)                                                 # at 1:1: as before
    assert mm.fit_frame(area, inner, near.center(), seen=near) == mm.fit_frame(area, inner, near.center())
