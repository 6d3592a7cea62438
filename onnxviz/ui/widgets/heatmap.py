"""A heatmap of a 2-D float image with a colour bar, shared by the tensor view and the slice view.

Finite cells take the colour map; NaN and Inf cells get colours of their own (named in a legend
under the plot), and ``gaps`` (the space between tiles of a grid) a neutral grey, so neither is
mistaken for data. The colour bar always labels its two ends. Hovering a cell shows a tooltip from
:attr:`HeatmapPlot.describe` (row and column inside the image -> text).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt, QTimer
from PySide6.QtGui import QColor, QCursor, QFontMetrics, QResizeEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolTip, QVBoxLayout, QWidget

NAN_COLOR = QColor("#ff00ff")   # in neither viridis nor CET-D1
INF_COLOR = QColor("#000000")
GAP_COLOR = QColor("#9a9a9a")   # between tiles: a plain grey, not a colour of either map
ALL_NONFINITE = "All values are NaN or Inf"
MARGIN = 6   # pixels around the plot


def colour_range(finite: np.ndarray) -> tuple[float, float, str]:
    """Levels and colour map for finite values: symmetric diverging when they straddle zero."""
    lo, hi = float(finite.min()), float(finite.max())
    if lo < 0 < hi:
        bound = max(-lo, hi)
        return -bound, bound, "CET-D1"
    if lo == hi:
        return lo, lo + (abs(lo) or 1.0), "viridis"
    return lo, hi, "viridis"


def tick_label(value: float, lo: float, hi: float) -> str:
    """``value`` with enough significant digits to tell ``lo`` from ``hi``; scientific when huge or tiny."""
    if value == 0:
        return "0"
    scale = max(abs(lo), abs(hi))
    span = hi - lo
    digits = 3 if span <= 0 or scale == 0 else min(9, max(3, math.ceil(math.log10(scale / span)) + 2))
    text = f"{value:.{digits}g}"
    if "e" in text:  # 3.8e+18 -> 3.8e18, 1e-05 -> 1e-5: shorter, same meaning
        mantissa, exponent = text.split("e")
        text = f"{mantissa}e{int(exponent)}"
    return text


def format_value(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    return ("-Inf" if value < 0 else "Inf") if math.isinf(value) else f"{value:.6g}"


def rgba_marks(plane: np.ndarray, gaps: np.ndarray | None) -> np.ndarray:
    """An RGBA overlay: transparent over finite cells, the NaN / Inf / gap colours elsewhere."""
    marks = np.zeros((*plane.shape, 4), np.uint8)
    for mask, colour in ((np.isnan(plane), NAN_COLOR), (np.isinf(plane), INF_COLOR)):
        marks[mask] = colour.getRgb()
    if gaps is not None:
        marks[gaps] = GAP_COLOR.getRgb()
    return marks


def _swatch(colour: QColor, text: str) -> str:
    return f"<span style='color:{colour.name()}'>&#9632;</span>&nbsp;{text}"


class CellAxis(pg.AxisItem):
    """An axis of cells: cell ``i`` spans ``i``..``i + 1``, so its tick sits at its middle and reads ``i``
    (on the cells' boundaries, a tick read as the cell after it or the one before)."""

    def __init__(self, orientation: str) -> None:
        super().__init__(orientation)
        self.setStyle(tickLength=4)   # outward: a tick drawn into the plot would cover its cell's middle

    def tickValues(self, minVal: float, maxVal: float, size: float) -> list[tuple[float, list[float]]]:  # noqa: N802, N803
        minVal, maxVal = sorted((minVal, maxVal))   # noqa: N806 - an inverted axis gives them reversed
        levels = [(spacing, [v + 0.5 for v in values if float(v).is_integer() and minVal <= v + 0.5 <= maxVal])
                  for spacing, values in super().tickValues(minVal - 0.5, maxVal - 0.5, size) if spacing >= 1]
        if not levels:   # a few cells, wider than any tick spacing: every one
            levels = [(1.0, [i + 0.5 for i in range(math.ceil(minVal - 0.5), math.floor(maxVal - 0.5) + 1)])]
        return levels

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:  # noqa: N802
        return [str(round(v - 0.5)) for v in values]


class HeatmapPlot(QWidget):
    """Call :meth:`show_image` or :meth:`clear`; ``legend`` names the NaN/Inf colours when they appear."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.describe: Callable[[int, int], str] = self.describe_cell
        self.values: np.ndarray | None = None
        self.extent = QRectF(0, 0, 1, 1)   # the tensor's columns x rows: what the axes span
        self.bar_labels: list[str] = []  # the colour bar's tick labels, its two ends first
        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setMinimumHeight(100)  # a dock stretches it; its minimum is the window's
        self.graphics.setBackground(None)
        self.graphics.ci.layout.setContentsMargins(MARGIN, MARGIN, MARGIN, MARGIN)
        self.plot = self.graphics.addPlot(axisItems={"left": CellAxis("left"), "bottom": CellAxis("bottom")})
        self.plot.setAspectLocked(True)
        self.plot.invertY(True)
        self.plot.setMenuEnabled(False)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.marks = pg.ImageItem(axisOrder="row-major")
        self.marks.setZValue(1)
        self.plot.addItem(self.image)
        self.plot.addItem(self.marks)
        self.colorbar = pg.ColorBarItem(interactive=False, width=12)
        self.colorbar.setImageItem(self.image, insert_in=self.plot)
        self.colorbar.axis.setStyle(hideOverlappingLabels=False)  # else the end labels, half past the bar, go
        self.message = pg.TextItem(anchor=(0.5, 0.5), color=pg.mkColor("#202020"), fill=pg.mkBrush(255, 255, 255, 220))
        self.message.setZValue(2)
        self.plot.addItem(self.message)
        self.message.hide()
        self.legend = QLabel()
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self.legend.hide()
        legend_row = QHBoxLayout()
        legend_row.setContentsMargins(0, 0, 0, 0)
        legend_row.addStretch(1)
        legend_row.addWidget(self.legend)  # under the colour bar, at the right
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.graphics, 1)
        layout.addLayout(legend_row)
        self.graphics.scene().sigMouseMoved.connect(self._on_mouse_moved)

    def clear(self) -> None:
        self.values = None
        self.image.clear()
        self.marks.clear()
        self.message.hide()
        self.legend.hide()

    def show_image(self, plane: np.ndarray, gaps: np.ndarray | None = None, axes: bool = True,
                   extent: tuple[int, int] | None = None, span: np.ndarray | None = None) -> None:
        """Show ``plane`` (float, rows first); ``gaps`` marks cells between tiles; ``axes`` shows indices;
        ``extent`` is the (rows, columns) of the tensor a strided ``plane`` stands for (its axes' ends);
        ``span``, when given, are the finite values the colour range is chosen from (two pictures on one scale)."""
        self.values = plane
        rows, cols = extent if extent is not None else plane.shape
        self.extent = QRectF(0, 0, max(cols, 1), max(rows, 1))
        for axis in ("left", "bottom"):
            self.plot.showAxis(axis, axes)
        data = plane if gaps is None else np.where(gaps, np.nan, plane)
        finite = data[np.isfinite(data)]
        if finite.size:
            lo, hi, cmap = colour_range(finite if span is None or not span.size else span)
            self.colorbar.setColorMap(pg.colormap.get(cmap))
            self.image.setImage(data, levels=(lo, hi), autoLevels=False)
            self.colorbar.setLevels((lo, hi))
            self._label_bar(lo, hi)
        else:
            self.image.clear()
        self.colorbar.setVisible(bool(finite.size))  # no finite value: no range, not the last tensor's
        self.marks.setImage(rgba_marks(data, gaps), levels=None, autoLevels=False)
        self._show_legend(data, gaps)
        self.message.setText(ALL_NONFINITE)
        self.message.setPos(self.extent.center())
        self.message.setVisible(not finite.size)
        for item in (self.image, self.marks):   # after setImage: a rect maps the image's own size
            if item.image is not None:
                item.setRect(self.extent)
        self._size_left_axis(rows)
        self.plot.vb.setLimits(xMin=0, xMax=self.extent.width(), yMin=0, yMax=self.extent.height(),
                               maxXRange=self.extent.width(), maxYRange=self.extent.height())
        self.fit_cells()

    def _size_left_axis(self, rows: int) -> None:
        """Wide enough for the largest row number, fixed: cells fitted to the plot stay square as it draws."""
        axis = self.plot.getAxis("left")
        metrics = QFontMetrics(axis.style["tickFont"] or self.font())
        axis.setWidth(metrics.horizontalAdvance(f"-{rows}") + axis.style["tickTextOffset"][0]
                      + max(0, axis.style["tickLength"]) + 4)

    def fit_cells(self) -> None:
        """Shrink the plot around the tensor so its cells are square and the axes span exactly its
        rows and columns (no empty range beyond them however the panel is shaped)."""
        if self.values is None:
            return
        vb, extent = self.plot.vb, self.extent
        layout = self.graphics.ci.layout
        area = self.graphics.ci.size()   # the plot with its axes and colour bar, and the margins around it
        room_w = area.width() - (self.plot.size().width() - vb.size().width())
        room_h = area.height() - (self.plot.size().height() - vb.size().height())
        room_w, room_h = room_w - 2 * MARGIN, room_h - 2 * MARGIN
        cell = max(min(room_w / extent.width(), room_h / extent.height()), 1e-6)
        spare_w = max(room_w - cell * extent.width(), 0.0) / 2 + MARGIN
        spare_h = max(room_h - cell * extent.height(), 0.0) / 2 + MARGIN
        layout.setContentsMargins(spare_w, spare_h, spare_w, spare_h)
        layout.activate()
        vb.setRange(rect=extent, padding=0)
        for side in ("left", "bottom"):   # the box may have been resized to this range without telling them
            self.plot.getAxis(side).linkedViewChanged(vb)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        QTimer.singleShot(0, self, self.fit_cells)   # once the graphics view has its new size

    def _show_legend(self, data: np.ndarray, gaps: np.ndarray | None) -> None:
        nan = np.isnan(data) if gaps is None else np.isnan(data) & ~gaps
        parts = [_swatch(NAN_COLOR, "NaN")] if nan.any() else []
        if np.isinf(data).any():
            parts.append(_swatch(INF_COLOR, "Inf"))
        self.legend.setText("&nbsp;&nbsp;".join(parts))
        self.legend.setVisible(bool(parts))

    def _label_bar(self, lo: float, hi: float) -> None:
        """Ticks at both ends (always labelled) and round values between them, all in one format."""
        axis = self.colorbar.axis
        span = hi - lo
        coarsest = axis.tickValues(lo, hi, 200)[:1]
        inner = [v for _spacing, values in coarsest for v in values
                 if lo + 0.12 * span < v < hi - 0.12 * span]  # clear of the end labels
        ticks = [(v, tick_label(v, lo, hi)) for v in (lo, hi)]
        levels = [ticks, [(v, tick_label(v, lo, hi)) for v in sorted(set(inner))]]
        axis.setTicks(levels)
        self.bar_labels = [text for level in levels for _v, text in level]
        metrics = QFontMetrics(axis.style["tickFont"] or self.font())
        widest = max(metrics.horizontalAdvance(text) for _v, text in ticks + [(0.0, "-0.0000")])
        axis.setWidth(widest + axis.style["tickTextOffset"][0] + max(0, axis.style["tickLength"]) + 4)

    def describe_cell(self, row: int, col: int) -> str:
        """The default tooltip: the cell's position and value."""
        assert self.values is not None
        return f"row {row}, column {col}: {format_value(float(self.values[row, col]))}"

    def _on_mouse_moved(self, pos: QPointF) -> None:
        if self.values is None:
            return
        point = self.image.mapFromScene(pos) if self.image.image is not None else self.marks.mapFromScene(pos)
        row, col = math.floor(point.y()), math.floor(point.x())
        if 0 <= row < self.values.shape[0] and 0 <= col < self.values.shape[1]:
            text = self.describe(row, col)
            if text:
                QToolTip.showText(QCursor.pos(), text, self.graphics)
                return
        QToolTip.hideText()
