"""TensorView, the reusable viewer: arrays, loaders, given statistics, odd dtypes, errors."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto, helper
from PySide6.QtCore import QPoint, QPointF
from PySide6.QtGui import QColor, QImage, QPainter
from pytestqt.qtbot import QtBot
from window_fixtures import settle

from onnxviz.model.graph.tensors import stats_of_array
from onnxviz.ui.widgets.heatmap import INF_COLOR, NAN_COLOR, HeatmapPlot
from onnxviz.ui.widgets.tensor_table import MAX_COLUMNS, WRAP_COLUMNS
from onnxviz.ui.widgets.tensor_view import TensorView


@pytest.fixture
def view(qtbot: QtBot) -> TensorView:
    v = TensorView()
    qtbot.addWidget(v)
    return v


def test_array_with_stats_computed_in_the_background(qtbot: QtBot, view: TensorView) -> None:
    values = np.arange(-6, 6, dtype=np.float32).reshape(3, 4)
    with qtbot.waitSignal(view.loaded, timeout=10000):
        view.show_tensor("act", values)
    assert view.prepared is not None and view.prepared.stats.mean == pytest.approx(-0.5)
    assert view.title.text() == "act" and view.fact_labels["min"].text() == "-6"
    assert view.tabs.tabText(view.image_index) == "Heatmap"
    assert view.table.values.data(view.table.values.index(2, 3)) == "5"


def test_loader_and_given_stats_are_used(qtbot: QtBot, view: TensorView) -> None:
    values = np.ones((2, 2), np.float64)
    given = stats_of_array(values, "given")
    with qtbot.waitSignal(view.loaded, timeout=10000):
        view.show_tensor("lazy", loader=lambda: values, stats=given)
    assert view.prepared is not None and view.prepared.stats is given
    np.testing.assert_array_equal(view.prepared.array, values)


def test_loader_errors_become_a_message(qtbot: QtBot, view: TensorView) -> None:
    def broken() -> np.ndarray:
        raise OSError("disk gone")

    with qtbot.waitSignal(view.failed, timeout=10000):
        view.show_tensor("gone", loader=broken)
    assert "disk gone" in view.message.text() and view.prepared is None


def test_bfloat16_strings_and_wide_vectors(qtbot: QtBot, view: TensorView) -> None:
    with qtbot.waitSignal(view.loaded, timeout=10000):
        view.show_tensor("bf", np.array([1.5, -2.25], ml_dtypes.bfloat16))
    assert view.fact_labels["max"].text() == "1.5" and view.fact_labels["dtype"].text() == "bfloat16"
    with qtbot.waitSignal(view.loaded, timeout=10000):
        view.show_tensor_proto(helper.make_tensor("s", TensorProto.STRING, [2], [b"a", b"bc"]), None)
    assert view.fact_labels["min"].text() == "" and view.table.values.data(view.table.values.index(0, 1)) == "bc"
    with qtbot.waitSignal(view.loaded, timeout=10000):
        view.show_tensor("wide", np.arange(MAX_COLUMNS * 3, dtype=np.int32))
    table = view.table.values
    assert table.columnCount() == WRAP_COLUMNS and table.rowCount() == MAX_COLUMNS * 3 // WRAP_COLUMNS
    assert table.data(table.index(2, 5)) == str(2 * WRAP_COLUMNS + 5)


def test_a_new_tensor_replaces_a_pending_one(qtbot: QtBot, view: TensorView) -> None:
    big = np.zeros(3_000_000, np.float32)
    view.show_tensor("first", big)
    with qtbot.waitSignal(view.loaded, timeout=20000):
        view.show_tensor("second", np.ones(3, np.float32))
    assert view.prepared is not None and view.prepared.name == "second"
    settle()  # the first tensor's reading has ended and anything it sends has been delivered
    assert view.title.text() == "second"


def test_save_npy_widens_types_numpy_cannot_store(qtbot: QtBot, view: TensorView, tmp_path: Path) -> None:
    values = np.array([[1.5, -2.25]], ml_dtypes.bfloat16)
    with qtbot.waitSignal(view.loaded, timeout=10000):
        view.show_tensor("bf", values)
    task = view.save_npy(tmp_path / "bf.npy")
    assert task is not None
    with qtbot.waitSignal(task.finished, timeout=10000):
        pass
    loaded = np.load(tmp_path / "bf.npy")
    assert loaded.dtype == np.float32 and loaded.tolist() == [[1.5, -2.25]]
    assert "as float32" in view.message.text()


def test_four_bit_weights(qtbot: QtBot, view: TensorView) -> None:
    tensor = helper.make_tensor("q", TensorProto.INT4, [2, 3], [-8, -1, 0, 3, 7, 2])
    with qtbot.waitSignal(view.loaded, timeout=10000):
        view.show_tensor_proto(tensor, None)
    assert view.fact_labels["dtype"].text() == "int4" and view.fact_labels["bytes"].text() == "3 B"
    assert (view.fact_labels["min"].text(), view.fact_labels["max"].text()) == ("-8", "7")
    table = view.table.values
    assert [table.data(table.index(1, c)) for c in range(3)] == ["3", "7", "2"]


def test_hidden_tabs_leave_no_gap(qtbot: QtBot, view: TensorView) -> None:
    """A 2-D value (with a Heatmap tab), then a scalar (none): Values sits right after Histogram."""
    view.show()
    for name, values in (("matrix", np.arange(10.0).reshape(2, 5)), ("scalar", np.array(3.0, np.float32))):
        with qtbot.waitSignal(view.loaded, timeout=10000):
            view.show_tensor(name, values)
    bar = view.tabs.tabBar()
    assert not bar.isTabVisible(view.image_index)
    assert [bar.tabText(i) for i in range(bar.count()) if bar.isTabVisible(i)] == ["Histogram", "Values"]
    assert bar.tabRect(bar.count() - 1).left() == bar.tabRect(0).right() + 1


def test_an_all_nan_value_says_so_everywhere(qtbot: QtBot, view: TensorView) -> None:
    """No finite value: the statistics, the histogram and the heatmap say why they are empty, and the
    colour bar shows no range (it kept the last tensor's)."""
    with qtbot.waitSignal(view.loaded, timeout=10000):
        view.show_tensor("ok", np.arange(24.0).reshape(3, 8))
    with qtbot.waitSignal(view.loaded, timeout=10000):
        view.show_tensor("nan", np.full((3, 8), np.nan, np.float32))
    tabs = view.tabs
    assert [tabs.tabText(i) for i in range(tabs.count()) if tabs.isTabVisible(i)] == ["Histogram", "Heatmap", "Values"]
    assert view.histogram_stack.currentWidget() is view.histogram_message
    assert view.histogram_message.text() == "All values are NaN or Inf"
    assert view.fact_labels["min"].text() == "all NaN/Inf" and "no finite value" in view.fact_labels["std"].toolTip()
    assert (view.fact_labels["NaN"].text(), view.fact_labels["Inf"].text()) == ("24", "0")
    assert view.heatmap.message.isVisible() and not view.heatmap.colorbar.isVisible()
    with qtbot.waitSignal(view.loaded, timeout=10000):
        view.show_tensor("ok", np.arange(4.0))
    assert view.histogram_stack.currentWidget() is view.histogram
    assert view.fact_labels["min"].text() == "0" and view.fact_labels["min"].toolTip() == ""


def _cell_point(heatmap: HeatmapPlot, row: int, col: int) -> QPoint:
    return heatmap.graphics.mapFromScene(heatmap.marks.mapToScene(QPointF(col + 0.5, row + 0.5)))


def _pixel(heatmap: HeatmapPlot, row: int, col: int) -> QColor:
    """The colour drawn at the centre of the image's cell (row, col)."""
    image = heatmap.graphics.grab().toImage()  # first: painting brings the view's transform up to date
    return image.pixelColor(_cell_point(heatmap, row, col))


def wait_laid_out(qtbot: QtBot, heatmap: HeatmapPlot) -> None:
    """Until the image is placed in the shown plot (a hidden tab's plot is ranged once it is shown)."""
    qtbot.waitUntil(lambda: heatmap.graphics.rect().contains(_cell_point(heatmap, 0, 0)), timeout=3000)


def test_nan_and_inf_cells_have_colours_the_legend_names(qtbot: QtBot, view: TensorView) -> None:
    values = np.linspace(0.0, 1.0, 36, dtype=np.float32).reshape(6, 6)
    values[1, 1], values[4, 4], values[2, 3] = np.nan, np.inf, 0.0
    view.resize(400, 600)
    view.show()
    qtbot.waitExposed(view)
    with qtbot.waitSignal(view.loaded, timeout=10000):
        view.show_tensor("holes", values)
    view.tabs.setCurrentIndex(view.image_index)
    heatmap = view.heatmap
    wait_laid_out(qtbot, heatmap)
    # a NaN was drawn blank, like the background around the image
    assert _pixel(heatmap, 1, 1) == NAN_COLOR and _pixel(heatmap, 4, 4) == INF_COLOR
    assert _pixel(heatmap, 2, 3) != _pixel(heatmap, 1, 1)
    assert heatmap.legend.isVisible() and "NaN" in heatmap.legend.text() and "Inf" in heatmap.legend.text()
    with qtbot.waitSignal(view.loaded, timeout=10000):
        view.show_tensor("clean", np.ones((3, 3), np.float32))
    assert not heatmap.legend.isVisible()


def _drawn_labels(heatmap: HeatmapPlot) -> list[str]:
    """The colour bar's tick labels that are actually drawn (pyqtgraph drops those that do not fit)."""
    image = QImage(10, 10, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        _axis, _ticks, texts = heatmap.colorbar.axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    return [text for _rect, _flags, text in texts]


@pytest.mark.parametrize(("lo", "hi", "ends"), [(3.8e18, 1.2e19, ("3.8e18", "1.2e19")),
                                                (0.2498, 0.2501, ("0.2498", "0.2501")),
                                                (-3.0, 5.0, ("-5", "5"))])
def test_the_colour_bar_labels_both_ends(qtbot: QtBot, view: TensorView, lo: float, hi: float,
                                         ends: tuple[str, str]) -> None:
    view.resize(400, 600)
    view.show()
    qtbot.waitExposed(view)
    with qtbot.waitSignal(view.loaded, timeout=10000):
        view.show_tensor("range", np.linspace(lo, hi, 64, dtype=np.float64).reshape(8, 8))
    view.tabs.setCurrentIndex(view.image_index)
    wait_laid_out(qtbot, view.heatmap)
    drawn = _drawn_labels(view.heatmap)
    assert set(ends) <= set(drawn), drawn


def test_a_shape_stays_on_one_line_in_a_narrow_view(qtbot: QtBot, view: TensorView) -> None:
    values = np.random.default_rng(0).normal(0, 0.1, (16, 3, 3, 3)).astype(np.float32)
    view.resize(300, 500)
    view.show()
    qtbot.waitExposed(view)
    with qtbot.waitSignal(view.loaded, timeout=10000):
        view.show_tensor("stem.conv.weight", values)
    label = view.fact_labels["shape"]
    assert label.text() == "[16, 3, 3, 3]"
    metrics = label.fontMetrics()
    # once laid out, the shape has its whole width (it was wrapped after '3,' in a narrow dock)
    qtbot.waitUntil(lambda: label.width() >= metrics.horizontalAdvance(label.text()), timeout=3000)
    assert label.height() < 2 * metrics.lineSpacing()
