"""A heatmap of one 2-D slice of an N-D tensor: pick the two axes shown, sliders pick the others.

Used by :class:`~onnxviz.ui.widgets.tensor_view.TensorView` for tensors of three or
more dimensions (activations such as NCHW feature maps or batch x sequence x hidden).
Only the shown slice is read, so a memory-mapped array stays on disk.
"""

from __future__ import annotations

import math

import numpy as np
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

from onnxviz.ui.widgets.heatmap import HeatmapPlot, format_value
from onnxviz.ui.widgets.layouts import clear_layout

MAX_SIDE = 512
MAX_TILES = 256


class SliceView(QWidget):
    """Call :meth:`set_array`; ``usable`` says whether there is anything to show."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.array: np.ndarray | None = None
        self.sliders: dict[int, QSlider] = {}
        self.slider_labels: dict[int, QLabel] = {}
        self.steps = (1, 1)  # the shown plane's stride along its rows and columns
        self.tile_start = 0  # the first map in the grid: the tiled axis's slider picks a block of MAX_TILES
        self._tile_shape = (0, 1, 1, 1)  # tiles shown, tiles per row, a tile's height and width
        self._single = 0  # the map shown before tiling, shown again after if its block was the last seen
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
                                   f"an NCHW feature map) instead of showing one; {MAX_TILES} at a time, "
                                   "the slider picks which")
        self.grid_check.toggled.connect(self._on_grid_toggled)
        layout.addWidget(self.grid_check)
        self.slider_grid = QGridLayout()
        layout.addLayout(self.slider_grid)
        self.range_label = QLabel()  # which maps the grid shows: a block of them when there are many
        self.range_label.setWordWrap(True)
        self.range_label.hide()
        layout.addWidget(self.range_label)
        self.heatmap = HeatmapPlot()
        self.heatmap.describe = self.describe_cell
        layout.addWidget(self.heatmap, 1)

    @property
    def usable(self) -> bool:
        return self.array is not None

    def set_array(self, array: np.ndarray | None) -> None:
        ok = array is not None and array.ndim >= 3 and array.size > 0 and array.dtype.kind in "biuf"
        self.array = array if ok else None
        if self.array is None:
            self.heatmap.clear()
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
        self.sliders, self.slider_labels = {}, {}
        shown = self.shown_axes()
        for row, k in enumerate(k for k in range(self.array.ndim) if k not in shown and self.array.shape[k] > 1):
            slider = QSlider(Qt.Orientation.Horizontal)
            slider.setRange(0, self.array.shape[k] - 1)
            value = QLabel()
            value.setMinimumWidth(70)
            slider.valueChanged.connect(lambda _v, axis=k: self._moved(axis))
            self.slider_grid.addWidget(QLabel(f"axis {k}"), row, 0)
            self.slider_grid.addWidget(slider, row, 1)
            self.slider_grid.addWidget(value, row, 2)
            self.sliders[k], self.slider_labels[k] = slider, value
        self._set_tiled_range(self.tiled)
        for k in self.sliders:
            self.slider_labels[k].setText(self._slider_text(k))

    @property
    def tiled(self) -> bool:
        return self.grid_check.isChecked() and bool(self.sliders)

    def _set_tiled_range(self, tiled: bool) -> None:
        """Tiled, the last slider picks a block of MAX_TILES maps; else one map (the block's first)."""
        if not self.sliders or self.array is None:
            return
        axis = max(self.sliders)
        slider, size = self.sliders[axis], self.array.shape[axis]
        blocks = -(-size // MAX_TILES)
        slider.blockSignals(True)
        if tiled and slider.maximum() != blocks - 1:
            self._single = slider.value()
            slider.setRange(0, blocks - 1)
            slider.setValue(self._single // MAX_TILES)
        elif not tiled and slider.maximum() != size - 1:
            block = slider.value()
            slider.setRange(0, size - 1)
            slider.setValue(self._single if self._single // MAX_TILES == block else block * MAX_TILES)
        slider.blockSignals(False)
        slider.setEnabled(not tiled or blocks > 1)  # with one block the grid shows every map
        self.slider_labels[axis].setText(self._slider_text(axis))

    def _slider_text(self, axis: int) -> str:
        assert self.array is not None
        value, size = self.sliders[axis].value(), self.array.shape[axis]
        if self.tiled and axis == max(self.sliders):
            return f"{value * MAX_TILES}-{min(size, (value + 1) * MAX_TILES) - 1} / {size - 1}"
        return f"{value} / {size - 1}"

    def _on_grid_toggled(self, checked: bool) -> None:
        self._set_tiled_range(checked)
        self.refresh()

    def plane(self, index: tuple[int | slice, ...] | None = None) -> np.ndarray:
        """A 2-D slice (rows axis first; default the shown one), strided to at most MAX_SIDE per side."""
        assert self.array is not None
        rows, cols = self.shown_axes()
        plane = np.asarray(self.array[self.index() if index is None else index], dtype=np.float32)
        if rows > cols:
            plane = plane.T
        step_r = max(1, -(-plane.shape[0] // MAX_SIDE))
        step_c = max(1, -(-plane.shape[1] // MAX_SIDE))
        self.steps = (step_r, step_c)
        return plane[::step_r, ::step_c]

    def tiles(self) -> tuple[np.ndarray, np.ndarray]:
        """A block of up to MAX_TILES slices along the last slider axis (from ``tile_start``, which the
        slider picks) in a near-square grid, and a mask of the cells between and after the tiles."""
        assert self.array is not None
        axis = max(self.sliders)
        self.tile_start = self.sliders[axis].value() * MAX_TILES
        index = list(self.index())
        planes = []
        for v in range(self.tile_start, min(self.array.shape[axis], self.tile_start + MAX_TILES)):
            index[axis] = v
            planes.append(self.plane(tuple(index)))
        h, w = planes[0].shape
        cols = math.ceil(math.sqrt(len(planes)))
        rows = math.ceil(len(planes) / cols)
        grid = np.full((rows * (h + 1) - 1, cols * (w + 1) - 1), np.nan, np.float32)
        gaps = np.ones(grid.shape, bool)
        for k, p in enumerate(planes):
            r, c = divmod(k, cols)
            cells = np.s_[r * (h + 1):r * (h + 1) + h, c * (w + 1):c * (w + 1) + w]
            grid[cells] = p
            gaps[cells] = False
        self._tile_shape = (len(planes), cols, h, w)
        return grid, gaps

    def describe_cell(self, row: int, col: int) -> str:
        """The hover text of a cell of the shown image: which map (when tiled), where, and its value."""
        assert self.array is not None and self.heatmap.values is not None
        value = format_value(float(self.heatmap.values[row, col]))
        rows, cols = self.shown_axes()
        step_r, step_c = self.steps
        if not self.tiled:
            return f"axis {rows} = {row * step_r}, axis {cols} = {col * step_c}: {value}"
        count, per_row, h, w = self._tile_shape
        (tile_r, y), (tile_c, x) = divmod(row, h + 1), divmod(col, w + 1)
        k = tile_r * per_row + tile_c
        if y == h or x == w or k >= count:
            return ""  # between tiles
        axis = max(self.sliders)
        return (f"map {self.tile_start + k} (axis {axis})\n"
                f"axis {rows} = {y * step_r}, axis {cols} = {x * step_c}: {value}")

    def _moved(self, axis: int) -> None:
        self.slider_labels[axis].setText(self._slider_text(axis))
        self.refresh()

    def refresh(self) -> None:
        if self.array is None:
            return
        tiled = self.tiled
        self.range_label.setVisible(tiled)
        if not tiled:
            self.heatmap.show_image(self.plane())
            return
        grid, gaps = self.tiles()
        self.heatmap.show_image(grid, gaps, axes=False)  # tile coordinates mean nothing; a slice's are indices
        axis, count = max(self.sliders), self._tile_shape[0]
        size = self.array.shape[axis]
        self.range_label.setText(f"Showing all {size} maps of axis {axis}." if count == size else
                                 f"Showing maps {self.tile_start}-{self.tile_start + count - 1} of {size} "
                                 f"(axis {axis}); the slider picks which {MAX_TILES}.")
