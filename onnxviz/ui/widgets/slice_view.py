"""A heatmap of one 2-D slice of an N-D tensor: pick the two axes shown, sliders pick the others.

Used by :class:`~onnxviz.ui.widgets.tensor_view.TensorView` for tensors of three or
more dimensions (activations such as NCHW feature maps or batch x sequence x hidden).
Only the shown slice is read, so a memory-mapped array stays on disk.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QSlider,
    QVBoxLayout,
    QWidget,
)

from onnxviz.ui.widgets.layouts import clear_layout

MAX_SIDE = 512
MAX_TILES = 256


class SliceView(QWidget):
    """Call :meth:`set_array`; ``usable`` says whether there is anything to show."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.array: np.ndarray | None = None
        self.sliders: dict[int, QSlider] = {}
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        axes = QHBoxLayout()
        self.rows_combo, self.cols_combo = QComboBox(), QComboBox()
        for label, combo in (("Rows:", self.rows_combo), ("Columns:", self.cols_combo)):
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)  # "axis 2 (111)" in full
            axes.addWidget(QLabel(label))
            axes.addWidget(combo)
            combo.currentIndexChanged.connect(self._on_axes_changed)
        axes.addStretch(1)
        layout.addLayout(axes)
        self.grid_check = QCheckBox("All maps")  # a row of its own: beside the axes it squeezed them in a dock
        self.grid_check.setToolTip("Tile the slices along the last slider's axis (e.g. every channel of "
                                   "an NCHW feature map) instead of showing one")
        self.grid_check.toggled.connect(self.refresh)
        layout.addWidget(self.grid_check)
        self.slider_grid = QGridLayout()
        layout.addLayout(self.slider_grid)
        self.plot_widget = pg.GraphicsLayoutWidget()
        self.plot_widget.setMinimumHeight(100)  # the dock stretches it; its minimum is the window's
        self.plot_widget.setBackground(None)
        self.plot = self.plot_widget.addPlot()
        self.plot.setAspectLocked(True)
        self.plot.invertY(True)
        self.plot.setMenuEnabled(False)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.plot.addItem(self.image)
        self.colorbar = pg.ColorBarItem(interactive=False, width=12)
        self.colorbar.setImageItem(self.image, insert_in=self.plot)
        layout.addWidget(self.plot_widget, 1)

    @property
    def usable(self) -> bool:
        return self.array is not None

    def set_array(self, array: np.ndarray | None) -> None:
        ok = array is not None and array.ndim >= 3 and array.size > 0 and array.dtype.kind in "biuf"
        self.array = array if ok else None
        if self.array is None:
            self.image.clear()
            return
        names = [f"axis {k} ({n})" for k, n in enumerate(self.array.shape)]
        for combo, current in ((self.rows_combo, self.array.ndim - 2), (self.cols_combo, self.array.ndim - 1)):
            combo.blockSignals(True)
            combo.clear()
            combo.addItems(names)
            combo.setCurrentIndex(current)
            combo.blockSignals(False)
        self._on_axes_changed()

    def shown_axes(self) -> tuple[int, int]:
        return self.rows_combo.currentIndex(), self.cols_combo.currentIndex()

    def index(self) -> tuple[int | slice, ...]:
        """The slice shown: full ranges on the two shown axes, slider positions on the others."""
        assert self.array is not None
        shown = self.shown_axes()
        return tuple(slice(None) if k in shown else self.sliders[k].value() if k in self.sliders else 0
                     for k in range(self.array.ndim))

    def _on_axes_changed(self) -> None:
        if self.array is None:
            return
        rows, cols = self.shown_axes()
        if rows == cols:  # keep two different axes: move the other combo off the one just chosen
            other = self.cols_combo if self.sender() is self.rows_combo else self.rows_combo
            other.blockSignals(True)
            other.setCurrentIndex(next(k for k in range(self.array.ndim - 1, -1, -1) if k != rows))
            other.blockSignals(False)
        self._build_sliders()
        self.refresh()

    def _build_sliders(self) -> None:
        assert self.array is not None
        clear_layout(self.slider_grid)
        self.sliders = {}
        shown = self.shown_axes()
        for row, k in enumerate(k for k in range(self.array.ndim) if k not in shown and self.array.shape[k] > 1):
            slider = QSlider(Qt.Orientation.Horizontal)
            slider.setRange(0, self.array.shape[k] - 1)
            value = QLabel(f"0 / {self.array.shape[k] - 1}")
            value.setMinimumWidth(70)
            slider.valueChanged.connect(lambda v, label=value, n=self.array.shape[k]: self._moved(label, v, n))
            self.slider_grid.addWidget(QLabel(f"axis {k}"), row, 0)
            self.slider_grid.addWidget(slider, row, 1)
            self.slider_grid.addWidget(value, row, 2)
            self.sliders[k] = slider

    def plane(self, index: tuple[int | slice, ...] | None = None) -> np.ndarray:
        """A 2-D slice (rows axis first; default the shown one), strided to at most MAX_SIDE per side."""
        assert self.array is not None
        rows, cols = self.shown_axes()
        plane = np.asarray(self.array[self.index() if index is None else index], dtype=np.float32)
        if rows > cols:
            plane = plane.T
        step_r = max(1, -(-plane.shape[0] // MAX_SIDE))
        step_c = max(1, -(-plane.shape[1] // MAX_SIDE))
        return plane[::step_r, ::step_c]

    def tiles(self) -> np.ndarray:
        """The slices along the last slider axis (at most MAX_TILES) in a near-square grid, NaN between."""
        assert self.array is not None
        axis = max(self.sliders)
        index = list(self.index())
        planes = []
        for v in range(min(self.array.shape[axis], MAX_TILES)):
            index[axis] = v
            planes.append(self.plane(tuple(index)))
        h, w = planes[0].shape
        cols = math.ceil(math.sqrt(len(planes)))
        rows = math.ceil(len(planes) / cols)
        grid = np.full((rows * (h + 1) - 1, cols * (w + 1) - 1), np.nan, np.float32)
        for k, p in enumerate(planes):
            r, c = divmod(k, cols)
            grid[r * (h + 1):r * (h + 1) + h, c * (w + 1):c * (w + 1) + w] = p
        return grid

    def _moved(self, label: QLabel, value: int, size: int) -> None:
        label.setText(f"{value} / {size - 1}")
        self.refresh()

    def refresh(self) -> None:
        if self.array is None:
            return
        tiled = self.grid_check.isChecked() and bool(self.sliders)
        if self.sliders:
            self.sliders[max(self.sliders)].setEnabled(not tiled)  # the tiled axis shows every value
        plane = self.tiles() if tiled else self.plane()
        for axis in ("left", "bottom"):  # tile coordinates mean nothing; a slice's are indices
            self.plot.showAxis(axis, not tiled)
        finite = plane[np.isfinite(plane)]
        if finite.size == 0:
            self.image.clear()
            return
        lo, hi = float(finite.min()), float(finite.max())
        cmap = pg.colormap.get("viridis")
        if lo < 0 < hi:
            bound = max(-lo, hi)
            lo, hi, cmap = -bound, bound, pg.colormap.get("CET-D1")
        if lo == hi:
            hi = lo + 1.0
        self.colorbar.setColorMap(cmap)
        self.image.setImage(plane, levels=(lo, hi), autoLevels=False)
        self.colorbar.setLevels((lo, hi))
        self.plot.autoRange()
