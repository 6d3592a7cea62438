"""A weight's heatmap: square cells, and axes that run over the tensor's rows and columns, whatever the
shape of the panel (a 64x192 weight in a tall dock used to fill a thin band under a y-axis of -250..320)."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPointF
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from onnxviz.ui.widgets.tensor_view import TensorView


def corners(view: TensorView) -> tuple[QPointF, QPointF]:
    """Where the tensor's first and past-the-last cell corners are drawn, in pixels of the plot."""
    heatmap = view.heatmap
    heatmap.graphics.grab()   # painting brings the view's transform (and the axes) up to date
    QApplication.processEvents()
    vb, extent = heatmap.plot.vb, heatmap.extent
    return vb.mapViewToScene(QPointF(0, 0)), vb.mapViewToScene(QPointF(extent.width(), extent.height()))


@pytest.mark.parametrize(("shape", "size"), [((64, 192), (420, 640)), ((192, 64), (900, 380)),
                                             ((1500, 300), (500, 700))])
def test_cells_are_square_and_axes_span_the_tensor(qtbot: QtBot, shape: tuple[int, int],
                                                   size: tuple[int, int]) -> None:
    view = TensorView()
    qtbot.addWidget(view)
    view.resize(*size)
    view.show()
    values = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    with qtbot.waitSignal(view.loaded, timeout=10000):
        view.show_tensor("w", values)
    view.tabs.setCurrentIndex(view.image_index)
    for width, height in (size, (size[1], size[0])):   # and after the panel changes shape
        view.resize(width, height)
        qtbot.waitUntil(lambda: (abs(view.heatmap.plot.vb.viewRange()[0][1] - shape[1]) < 1e-6
                                 and abs(view.heatmap.plot.vb.viewRange()[1][1] - shape[0]) < 1e-6), timeout=3000)
        QApplication.processEvents()
        (x0, x1), (y0, y1) = view.heatmap.plot.vb.viewRange()
        assert (x0, x1, y0, y1) == pytest.approx((0, shape[1], 0, shape[0]))   # the tensor's, strided or not
        top_left, bottom_right = corners(view)
        cell_w = abs(bottom_right.x() - top_left.x()) / shape[1]
        cell_h = abs(bottom_right.y() - top_left.y()) / shape[0]
        assert cell_w == pytest.approx(cell_h, rel=0.02)
        for side, ends in (("left", shape[0]), ("bottom", shape[1])):   # what the axes draw
            assert sorted(view.heatmap.plot.getAxis(side).range) == pytest.approx([0, ends])


@pytest.mark.parametrize(("shape", "size"), [((64, 192), (420, 640)), ((3, 5), (420, 640))])
def test_ticks_sit_in_the_middle_of_their_cells(qtbot: QtBot, shape: tuple[int, int], size: tuple[int, int]) -> None:
    # a tick "20" drawn on the line between cells 19 and 20 read as either
    view = TensorView()
    qtbot.addWidget(view)
    view.resize(*size)
    view.show()
    with qtbot.waitSignal(view.loaded, timeout=10000):
        view.show_tensor("w", np.arange(np.prod(shape), dtype=np.float32).reshape(shape))
    view.tabs.setCurrentIndex(view.image_index)
    corners(view)
    for side, cells in (("left", shape[0]), ("bottom", shape[1])):
        axis = view.heatmap.plot.getAxis(side)
        levels = axis.tickValues(*axis.range, axis.height() if side == "left" else axis.width())
        ticks = [v for _spacing, values in levels for v in values]
        assert ticks and all(v % 1 == 0.5 and 0 < v < cells for v in ticks)
        assert axis.tickStrings(ticks, 1.0, 1.0) == [str(int(v)) for v in ticks]
