"""One matched value of the two runs side by side: A, B and B - A as heatmaps, their histograms and the errors."""

from __future__ import annotations

import html
import math
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QGridLayout, QLabel, QVBoxLayout, QWidget

from onnxviz.model.text import display_name
from onnxviz.ui.widgets.plotlib import StepBuild, import_plots, when_plots_imported

if TYPE_CHECKING:
    import pyqtgraph as pg

    from onnxviz.model.runner.compare import ValueDiff
    from onnxviz.ui.widgets.heatmap import HeatmapPlot

CELL_HEIGHT = 300   # pixels of a picture with its caption at most (a tall narrow column made them strips)
PLANE_CELLS = 256    # rows and columns of a heatmap at most (the first ones of a larger value)
BINS = 64
HISTOGRAM_PENS = (("A", "#1f77b4"), ("B", "#ff7f0e"), ("B \u2212 A", "#2ca02c"))
NAME_CHARS = 80


def plane_of(array: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """A 2-D float picture of ``array`` and its gaps (None: no gaps). Values of 3 or more axes show their
    last two axes as tiles (an NCHW activation: one tile per channel) in a near-square grid; others
    fold every axis but the last into rows. Cut to :data:`PLANE_CELLS` each way."""
    a = np.asarray(array, dtype=np.float64)
    if a.ndim >= 3 and a.shape[-1] > 1 and a.shape[-2] > 1:
        return _tiled(a.reshape(-1, a.shape[-2], a.shape[-1]))
    a = a.reshape(1, -1) if a.ndim <= 1 else a.reshape(-1, a.shape[-1])
    return a[:PLANE_CELLS, :PLANE_CELLS], None


def _tiled(planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    k, h, w = planes.shape
    h, w = min(h, PLANE_CELLS), min(w, PLANE_CELLS)
    cols = max(1, min(math.ceil(math.sqrt(k)), (PLANE_CELLS + 1) // (w + 1)))
    rows = max(1, min(math.ceil(k / cols), (PLANE_CELLS + 1) // (h + 1)))
    out = np.full((rows * (h + 1) - 1, cols * (w + 1) - 1), np.nan)
    gaps = np.ones(out.shape, bool)
    for t in range(min(k, rows * cols)):
        r, c = divmod(t, cols)
        out[r * (h + 1):r * (h + 1) + h, c * (w + 1):c * (w + 1) + w] = planes[t, :h, :w]
        gaps[r * (h + 1):r * (h + 1) + h, c * (w + 1):c * (w + 1) + w] = False
    return out, gaps


def figures_html(d: ValueDiff) -> str:
    """max_abs, max_rel, cosine and SQNR of the pair, as quantization engineers read them."""
    def g(x: float) -> str:
        return "n/a" if math.isnan(x) else ("\u221e" if math.isinf(x) else f"{x:.4g}")
    parts = [f"max |B\u2212A| <b>{g(d.max_abs_error)}</b>", f"max rel <b>{g(d.rel_error)}</b>",
             f"cosine <b>{g(d.cosine)}</b>", f"SQNR <b>{g(d.sqnr_db)} dB</b>"]
    if d.note:
        parts.append(html.escape(d.note))
    return " &middot; ".join(parts)


class ValuesView(QWidget):
    """Call :meth:`show_pair` with both arrays and their ValueDiff, or :meth:`show_message`."""

    def __init__(self, columns: int = 4, parent: QWidget | None = None) -> None:
        """``columns``: 4 puts the pictures in one row (a wide bottom panel), 1 one under another (a side column)."""
        super().__init__(parent)
        self.title = QLabel()
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.title.setWordWrap(True)
        self.figures = QLabel()
        self.figures.setTextFormat(Qt.TextFormat.RichText)
        self.figures.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.figures.setWordWrap(True)
        self.columns = columns
        # the pictures: made after the first show, one per turn, or at once for the first pair if sooner
        self.maps: list[HeatmapPlot] = []
        self.captions: list[QLabel] = []
        self.cells: list[QWidget] = []
        self.histogram: pg.PlotWidget | None = None
        self.error_histogram: pg.PlotWidget | None = None
        self._preparing = False
        self._build: StepBuild | None = None
        self.grid = QGridLayout()
        for k in range(columns):
            self.grid.setColumnStretch(k, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.title)
        layout.addWidget(self.figures)
        layout.addLayout(self.grid, 1)
        self.show_message("Run Both, then select a node to see its value in A and B.")

    def showEvent(self, event: QShowEvent) -> None:
        if not self._preparing:  # pyqtgraph imported in a worker, then the plots made one per turn
            self._preparing = True
            when_plots_imported(self, self._plot_build)
        super().showEvent(event)

    def _plot_build(self) -> None:
        if self._build is None:
            self._build = StepBuild(self, [self._add_map] * len(HISTOGRAM_PENS) + [self._add_histograms])

    def _add_cell(self, cell: QWidget) -> None:
        k = len(self.cells)
        self.cells.append(cell)
        self.grid.addWidget(cell, k // self.columns, k % self.columns)

    def _add_map(self) -> None:
        from onnxviz.ui.widgets.heatmap import HeatmapPlot

        self.maps.append(HeatmapPlot())
        self.captions.append(QLabel(HISTOGRAM_PENS[len(self.captions)][0]))
        self._add_cell(_cell(self.captions[-1], self.maps[-1]))

    def _add_histograms(self) -> None:
        self.histogram = _histogram_plot("A and B", legend=True)
        self.error_histogram = _histogram_plot("B \u2212 A", legend=False)
        self._add_cell(_cell(QLabel("Histograms"), self.histogram, self.error_histogram))

    def _plots(self) -> tuple[pg.PlotWidget, pg.PlotWidget]:
        """The histograms of A and B and of B - A; the pictures not made yet are made now."""
        import_plots()  # at once if a worker imported it already
        self._plot_build()
        assert self._build is not None
        self._build.finish()
        assert self.histogram is not None and self.error_histogram is not None
        return self.histogram, self.error_histogram

    def show_message(self, text: str) -> None:
        self.title.setText(html.escape(text))
        self.figures.clear()
        for plot in self.maps:
            plot.clear()
        for histogram in (self.histogram, self.error_histogram):
            if histogram is not None:
                histogram.clear()

    def show_pair(self, a: np.ndarray, b: np.ndarray, d: ValueDiff) -> None:
        if not all(np.issubdtype(np.asarray(x).dtype, np.number) or np.asarray(x).dtype == bool for x in (a, b)):
            self.show_message("These values are not numbers: they are compared as they are, not drawn.")
            return
        names = html.escape(display_name(d.name, NAME_CHARS))
        if d.other != d.name:
            names += f" &harr; {html.escape(display_name(d.other, NAME_CHARS))}"
        shapes = f"A {tuple(np.shape(a))}, B {tuple(np.shape(b))}"
        self.title.setText(f"<b>{names}</b> &middot; {shapes}")
        self.figures.setText(figures_html(d))
        histogram, error_histogram = self._plots()
        (pa, gaps), (pb, _) = plane_of(a), plane_of(b)
        both = np.concatenate([pa[np.isfinite(pa)], pb[np.isfinite(pb)]])  # A and B on one colour scale
        self.maps[0].show_image(pa, gaps, span=both)
        self.maps[1].show_image(pb, gaps, span=both)
        same = np.shape(a) == np.shape(b)
        error = np.asarray(b, np.float64) - np.asarray(a, np.float64) if same else None
        if error is not None:
            self.maps[2].show_image(plane_of(error)[0], gaps)
        else:
            self.maps[2].clear()
        self.captions[2].setText("B \u2212 A" if same else "B \u2212 A: the shapes differ")
        histogram.clear()
        error_histogram.clear()
        _add_histogram(histogram, np.asarray(a), *HISTOGRAM_PENS[0])
        _add_histogram(histogram, np.asarray(b), *HISTOGRAM_PENS[1])
        if error is not None:
            _add_histogram(error_histogram, error, *HISTOGRAM_PENS[2])


def _cell(caption: QLabel, *plots: QWidget) -> QWidget:
    cell = QWidget()
    cell.setMaximumHeight(CELL_HEIGHT)
    layout = QVBoxLayout(cell)
    layout.setContentsMargins(0, 0, 0, 0)
    caption.setAlignment(Qt.AlignmentFlag.AlignHCenter)
    layout.addWidget(caption)
    for plot in plots:
        layout.addWidget(plot, 1)
    return cell


def _histogram_plot(title: str, legend: bool) -> pg.PlotWidget:
    """A and B share one plot (their legend says which is which); B - A has its own, titled."""
    import pyqtgraph as pg  # with the first pictures, not at startup

    plot = pg.PlotWidget()
    plot.setBackground(None)
    plot.setMenuEnabled(False)
    plot.setMinimumHeight(60)
    if legend:
        plot.addLegend(offset=(-6, 6))
    else:
        plot.setTitle(title, size="9pt")
    plot.setLabel("left", "count")
    plot.setToolTip(f"Histogram of {title}")
    return plot


def _add_histogram(plot: pg.PlotWidget, arr: np.ndarray, name: str, colour: str) -> None:
    import pyqtgraph as pg  # imported already: the plot is pyqtgraph's

    finite = arr[np.isfinite(arr)].astype(np.float64, copy=False) if arr.size else arr
    if finite.size and np.issubdtype(finite.dtype, np.number):
        counts, edges = np.histogram(finite, bins=BINS)
        plot.plot(edges, counts, stepMode="center", pen=pg.mkPen(colour, width=2), name=name)
