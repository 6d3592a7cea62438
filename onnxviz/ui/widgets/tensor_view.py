"""A reusable viewer for one tensor: facts, statistics, histogram, heatmap/kernel grid, paged values.

Usage (any panel, e.g. weights or activations)::

    view = TensorView()
    view.show_tensor("conv1.weight", array)                     # stats computed in the background
    view.show_tensor("act", array, stats)                       # stats already known
    view.show_tensor("big", loader=lambda: np.load(path, mmap_mode="r"))  # loaded in the background
    view.show_tensor_proto(tensor_proto, base_dir)              # an ONNX TensorProto, read lazily

Everything that touches the elements (loading, statistics, the preview image)
runs in an :class:`onnxviz.ui.tasks.Task` with progress and a Cancel button;
the value table reads elements on demand, so a huge tensor is never turned
into text. ``loaded`` is emitted once a tensor is fully shown, ``failed``
with a one-sentence message when it cannot be read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from onnx import TensorProto
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QStackedWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from onnxviz.model.errors import OnnxvizError, sentence
from onnxviz.model.graph.summary import human_bytes
from onnxviz.model.graph.tensors import TensorStats, describe_tensor, load_tensor, stats_of_array
from onnxviz.model.io.disk import atomic_write_with, write_npy
from onnxviz.model.progress import CancelToken, ProgressFn
from onnxviz.model.text import display_name
from onnxviz.ui.tasks import Task
from onnxviz.ui.widgets.names import ElidedLabel, wrappable
from onnxviz.ui.widgets.plotlib import StepBuild, plots_imported, with_plots
from onnxviz.ui.widgets.tensor_table import TensorTable

MAX_IMAGE_SIDE = 512
MAX_KERNELS = 32
MESSAGE_CHARS = 1000  # of a message or a storage location (they quote names and paths from the file)


@dataclass(frozen=True)
class Prepared:
    """Everything the view shows, computed off the GUI thread."""

    name: str
    array: np.ndarray | None
    stats: TensorStats
    image: np.ndarray | None = None
    image_kind: str = ""   # "heatmap" or "kernels"


def preview_image(array: np.ndarray, kernels: bool = True) -> tuple[np.ndarray | None, str]:
    """A small float32 image of a 2-D tensor (strided to at most 512 per side) or, if ``kernels``, a grid
    of the kernels of a 4-D convolution weight (rows: output channels, columns: input channels)."""
    if array.dtype.kind in "OSUc" or array.size == 0:
        return None, ""
    if array.ndim == 2:
        step_r = max(1, -(-array.shape[0] // MAX_IMAGE_SIDE))
        step_c = max(1, -(-array.shape[1] // MAX_IMAGE_SIDE))
        return np.asarray(array[::step_r, ::step_c], dtype=np.float32), "heatmap"
    if kernels and array.ndim == 4 and array.shape[2] * array.shape[3] <= 64 * 64:
        o, i = min(array.shape[0], MAX_KERNELS), min(array.shape[1], MAX_KERNELS)
        kh, kw = array.shape[2], array.shape[3]
        grid = np.full((o * (kh + 1) - 1, i * (kw + 1) - 1), np.nan, np.float32)
        blocks = np.asarray(array[:o, :i], dtype=np.float32)
        for r in range(o):
            for c in range(i):
                grid[r * (kh + 1):r * (kh + 1) + kh, c * (kw + 1):c * (kw + 1) + kw] = blocks[r, c]
        return grid, "kernels"
    return None, ""


def _prepare(name: str, array: np.ndarray | None, stats: TensorStats | None, progress: ProgressFn,
             token: CancelToken, kernels: bool = True) -> Prepared:
    if array is None:
        raise OnnxvizError(f"tensor '{name}' has no values to show.")
    if stats is None:
        stats = stats_of_array(array, name, progress, token)
    image, kind = preview_image(array, kernels)
    return Prepared(name, array, stats, image, kind)


class TensorView(QWidget):
    """See the module docstring for the API."""

    loaded = Signal()
    failed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.prepared: Prepared | None = None
        self._task: Task | None = None
        self._build()
        self.clear("Select an initializer, a Constant or a tensor attribute.")

    # -- public API --------------------------------------------------------------------------------
    def show_tensor(self, name: str, array: np.ndarray | None = None, stats: TensorStats | None = None,
                    loader: Callable[[], np.ndarray] | None = None, kernels: bool = True) -> None:
        """Show ``array`` (or what ``loader`` returns, called off the GUI thread) with ``stats``
        (computed from the array in the background when not given). ``kernels=False`` for values that
        are not weights: a 4-D one is then seen in the Slices tab (feature maps), not as a kernel grid."""
        def work(progress: ProgressFn, token: CancelToken) -> Prepared:
            values = loader() if array is None and loader is not None else array
            return _prepare(name, values, stats, progress, token, kernels)

        self._run(name, stats, work)

    def show_tensor_proto(self, tensor: TensorProto, base_dir: Path | None,
                          raw: Callable[[], memoryview | None] | None = None, title: str = "") -> None:
        """Show an ONNX tensor: statistics read in chunks (memory-mapped when external). ``raw``, called
        off the GUI thread, may return the tensor's ``raw_data`` bytes without copying them (see
        :func:`onnxviz.model.graph.tensors.raw_data_spans`). ``title`` replaces the tensor's own name."""
        def work(progress: ProgressFn, token: CancelToken) -> Prepared:
            array, stats = load_tensor(tensor, base_dir, progress, token, raw=raw() if raw else None)
            image, kind = preview_image(array) if array is not None else (None, "")
            return Prepared(tensor.name, array, stats, image, kind)

        self._run(title or tensor.name or "(unnamed tensor)", describe_tensor(tensor), work)

    def clear(self, message: str = "") -> None:
        self.cancel()
        self.prepared = None
        self.title.set_name("")
        self.facts.setVisible(False)
        self.message.setText(wrappable(message, MESSAGE_CHARS))
        self.message.setVisible(bool(message))
        self.body.setVisible(False)
        self.busy.setVisible(False)

    def cancel(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None
        self.busy.setVisible(False)

    @property
    def is_busy(self) -> bool:
        return self._task is not None

    # -- building --------------------------------------------------------------------------------
    def _build(self) -> None:
        self.title = ElidedLabel()  # the tensor's name: one line, whole in its tooltip and Copy Name
        self.title.setStyleSheet("font-weight: 600; font-size: 12pt;")
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setTextFormat(Qt.TextFormat.PlainText)  # errors quote names from the file
        self.message.setStyleSheet("color: palette(placeholder-text);")
        self.busy = QWidget()
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(False)
        self.progress.setMaximumHeight(12)
        cancel = QPushButton("Cancel")
        cancel.clicked.connect(self._on_cancel_clicked)
        busy_row = QHBoxLayout(self.busy)
        busy_row.setContentsMargins(0, 0, 0, 0)
        busy_row.addWidget(self.progress, 1)
        busy_row.addWidget(cancel)
        self.facts = QWidget()
        self.fact_grid = QGridLayout(self.facts)
        self.fact_grid.setContentsMargins(0, 0, 0, 0)
        self.fact_grid.setHorizontalSpacing(10)
        self.fact_grid.setVerticalSpacing(2)
        self.fact_labels: dict[str, QLabel] = {}
        # three columns (layout, moments, counts), then the storage across the whole width
        for k, key in enumerate(("dtype", "shape", "bytes", "elements", "min", "max", "mean", "std",
                                 "zeros", "NaN", "Inf")):
            self._add_fact(key, k % 4, 2 * (k // 4))
        self._add_fact("storage", 4, 0, span=5, wrap=True)
        self.body = QWidget()  # the tabs: made when the first tensor is shown (pyqtgraph is imported then)
        QVBoxLayout(self.body).setContentsMargins(0, 0, 0, 0)
        self.tabs: QTabWidget | None = None
        self._tab_build: StepBuild | None = None
        self._waiting: tuple[Task, Prepared] | None = None  # read before the tabs were made
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.setSpacing(4)
        layout.addWidget(self.title)
        layout.addWidget(self.facts)
        layout.addWidget(self.busy)
        layout.addWidget(self.message)
        layout.addWidget(self.body, 1)

    def _add_fact(self, key: str, row: int, col: int, span: int = 1, wrap: bool = False) -> None:
        """A name and its value; only ``wrap`` values break lines (a shape or a number never does)."""
        name = QLabel(key)
        name.setStyleSheet("color: palette(placeholder-text);")
        name.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        value = QLabel()
        value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        value.setWordWrap(wrap)  # a long external-file path wraps instead of widening the dock
        self.fact_grid.addWidget(name, row, col)
        self.fact_grid.addWidget(value, row, col + 1, 1, span)
        self.fact_grid.setColumnStretch(col + 1, 1)
        self.fact_labels[key] = value

    def _tab_steps(self) -> list[Callable[[], None]]:
        """Making the histogram, heatmap, slices and values tabs and the save button, in :attr:`body`,
        in steps (pyqtgraph is imported by then: by the task that read the first tensor)."""
        tabs = QTabWidget()
        tabs.setDocumentMode(True)

        def histogram() -> None:
            import pyqtgraph as pg

            from onnxviz.ui.widgets.heatmap import ALL_NONFINITE

            self.histogram = pg.PlotWidget()
            self.histogram.setMenuEnabled(False)
            self.histogram.setBackground(None)
            self.histogram.showGrid(x=True, y=True, alpha=0.2)
            self.histogram.getAxis("left").setLabel("count")
            self.histogram_message = QLabel(ALL_NONFINITE)  # instead of empty axes
            self.histogram_message.setAlignment(Qt.AlignmentFlag.AlignCenter)
            self.histogram_message.setWordWrap(True)
            self.histogram_stack = QStackedWidget()
            self.histogram_stack.addWidget(self.histogram)
            self.histogram_stack.addWidget(self.histogram_message)
            self.histogram_index = tabs.addTab(self.histogram_stack, "Histogram")

        def heatmap() -> None:
            from onnxviz.ui.widgets.heatmap import HeatmapPlot

            self.heatmap = HeatmapPlot()
            self.image_index = tabs.addTab(self.heatmap, "Heatmap")

        def slices() -> None:
            from onnxviz.ui.widgets.slice_view import SliceView

            self.slices = SliceView()  # N-D tensors: a 2-D slice with sliders for the other axes
            self.slice_index = tabs.addTab(self.slices, "Slices")

        def values() -> None:
            self.table = TensorTable()
            tabs.addTab(self.table, "Values")
            self.save_button = QPushButton("Save as .npy...")
            self.save_button.clicked.connect(self._on_save_clicked)
            row = QHBoxLayout()
            row.addStretch(1)
            row.addWidget(self.save_button)
            layout = self.body.layout()
            assert isinstance(layout, QVBoxLayout)
            layout.addWidget(tabs, 1)
            layout.addLayout(row)
            self.tabs = tabs

        return [histogram, heatmap, slices, values]

    def _make_tabs(self) -> None:
        """Start making the tabs (once); a tensor read meanwhile is shown when they are made."""
        if self._tab_build is None:
            self._tab_build = StepBuild(self, self._tab_steps(), self._show_waiting)

    def _show_waiting(self) -> None:
        if self._waiting is not None:
            task, prepared = self._waiting
            self._waiting = None
            self._on_finished(task, prepared)

    # -- background work -------------------------------------------------------------------------
    def _run(self, name: str, facts: TensorStats | None, work: Callable[[ProgressFn, CancelToken], Prepared]) -> None:
        self.cancel()
        self.prepared = None
        self.title.set_name(name)
        self.facts.setVisible(True)
        self._show_facts(facts)
        self.message.setVisible(False)
        self.body.setVisible(False)
        self._waiting = None
        if plots_imported():  # made while the tensor is read
            self._make_tabs()
        self.progress.setValue(0)
        self.busy.setVisible(True)
        task = Task(with_plots(work), f"Reading {display_name(name, 60)}", parent=self)  # dropped if this view goes first
        task.progress.connect(self._on_progress)
        task.finished.connect(lambda result, t=task: self._on_finished(t, result))
        task.failed.connect(lambda exc, tb, t=task: self._on_failed(t, exc))
        self._task = task
        task.start()

    def _on_progress(self, fraction: float, _text: str) -> None:
        self.progress.setValue(int(fraction * 1000))

    def _on_cancel_clicked(self) -> None:
        self.cancel()
        self.message.setText("Reading was cancelled.")
        self.message.setVisible(True)

    def _on_failed(self, task: Task, exc: object) -> None:
        if task is not self._task:
            return
        self._task = None
        self.busy.setVisible(False)
        text = exc.message if isinstance(exc, OnnxvizError) else f"the tensor could not be read: {exc}."
        self.message.setText(wrappable(sentence(text), MESSAGE_CHARS))
        self.message.setVisible(True)
        self.failed.emit(text)

    def _on_finished(self, task: Task, prepared: Prepared) -> None:
        if task is not self._task:
            return
        tabs = self.tabs
        if tabs is None:  # the first tensor (its task imported pyqtgraph): shown once its tabs are made
            self._waiting = (task, prepared)
            self._make_tabs()
            return
        self._task = None
        self.busy.setVisible(False)
        self.prepared = prepared
        self.body.setVisible(True)  # before tabs are shown or hidden: a hidden tab bar leaves a gap for them
        self._show_facts(prepared.stats)
        self._show_histogram(tabs, prepared.stats)
        self._show_image(tabs, prepared)
        self.slices.set_array(prepared.array)
        tabs.setTabVisible(self.slice_index, self.slices.usable)
        self.table.set_array(prepared.array)
        self.save_button.setEnabled(prepared.array is not None)
        if prepared.array is None:
            self.message.setText("The values are too large to unpack for viewing; statistics cover all of them.")
        self.message.setVisible(prepared.array is None)
        self.body.setVisible(True)
        self.loaded.emit()

    # -- showing ---------------------------------------------------------------------------------
    def _show_facts(self, s: TensorStats | None) -> None:
        if s is None:
            for label in self.fact_labels.values():
                label.setText("")
            return
        fmt = _number
        counted = s.minimum is not None or _all_nonfinite(s)
        values = {
            "dtype": s.dtype, "shape": "[" + ", ".join(map(str, s.shape)) + "]" if s.shape else "scalar",
            "bytes": f"{human_bytes(s.nbytes)}", "storage": wrappable(s.storage, MESSAGE_CHARS),
            "elements": f"{s.numel:,}",
            "min": fmt(s.minimum), "max": fmt(s.maximum), "mean": fmt(s.mean), "std": fmt(s.std),
            "zeros": f"{s.zero_fraction:.2%}" if s.zero_fraction is not None else "",
            "NaN": f"{s.nan_count:,}" if counted or s.nan_count else "",
            "Inf": f"{s.inf_count:,}" if counted or s.inf_count else "",
        }
        if _all_nonfinite(s):  # say why there are no moments rather than leave them blank
            values.update({"min": "all NaN/Inf", "max": "\u2013", "mean": "\u2013", "std": "\u2013"})
        why = "Every value is NaN or Inf: there is no finite value to measure." if _all_nonfinite(s) else ""
        for key, label in self.fact_labels.items():
            label.setText(values.get(key, ""))
            label.setToolTip(why if key in ("min", "max", "mean", "std") else "")
        bad = "color: #c01c28; font-weight: 600;"
        self.fact_labels["NaN"].setStyleSheet(bad if s.nan_count else "")
        self.fact_labels["Inf"].setStyleSheet(bad if s.inf_count else "")

    def _show_histogram(self, tabs: QTabWidget, s: TensorStats) -> None:
        import pyqtgraph as pg  # already imported with the tabs

        self.histogram.clear()
        nonfinite_only = len(s.hist_counts) == 0 and _all_nonfinite(s)
        # strings and the like have no histogram; all NaN/Inf values have one that says so
        tabs.setTabVisible(self.histogram_index, len(s.hist_counts) > 0 or nonfinite_only)
        self.histogram_stack.setCurrentWidget(self.histogram_message if nonfinite_only else self.histogram)
        if len(s.hist_counts) == 0:
            return
        centers = (s.hist_edges[:-1] + s.hist_edges[1:]) / 2
        width = float(s.hist_edges[1] - s.hist_edges[0])
        bars = pg.BarGraphItem(x=centers, height=s.hist_counts.astype(float), width=width * 0.95,
                               brush=pg.mkBrush(47, 111, 214, 200), pen=pg.mkPen(None))
        self.histogram.addItem(bars)
        self.histogram.setXRange(float(s.hist_edges[0]), float(s.hist_edges[-1]), padding=0.02)
        self.histogram.setYRange(0, float(s.hist_counts.max()) or 1.0, padding=0.05)

    def _show_image(self, tabs: QTabWidget, prepared: Prepared) -> None:
        tabs.setTabVisible(self.image_index, prepared.image is not None)
        if prepared.image is None:
            self.heatmap.clear()
            return
        kernels = prepared.image_kind == "kernels"
        # the NaN rows and columns between kernels are gaps, not values
        gaps = _kernel_gaps(prepared.image.shape, prepared.array) if kernels else None
        extent = None if kernels or prepared.array is None else (prepared.array.shape[0], prepared.array.shape[1])
        # kernel-grid coordinates mean nothing; a strided heatmap's axes count the tensor's rows and columns
        self.heatmap.show_image(prepared.image, gaps, axes=not kernels, extent=extent)
        tabs.setTabText(self.image_index, "Kernels" if kernels else "Heatmap")
        tabs.setTabToolTip(self.image_index, "Rows: output channels, columns: input channels (first 32)"
                                if kernels else "Strided to at most 512 x 512")

    # -- saving ----------------------------------------------------------------------------------
    def _on_save_clicked(self) -> None:
        if self.prepared is None or self.prepared.array is None:
            return
        safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in self.prepared.name) or "tensor"
        path, _ = QFileDialog.getSaveFileName(self, "Save Tensor", f"{safe}.npy", "NumPy arrays (*.npy)")
        if path:
            self.save_npy(Path(path))

    def save_npy(self, path: Path) -> Task | None:
        """Write the shown values to ``path`` in the background; returns the task (None if nothing shown)."""
        if self.prepared is None or self.prepared.array is None:
            return None
        array = self.prepared.array
        # .npy has no bfloat16/float8/int4: those are written as float32 so numpy can read them back
        widened = array.dtype.kind == "V"
        task = Task(lambda progress, token: atomic_write_with(
            path, lambda file: write_npy(file, array.astype(np.float32) if widened else array)),
            f"Saving {path.name}", parent=self)
        task.failed.connect(lambda exc, tb: self._show_message(
            sentence(exc.message) if isinstance(exc, OnnxvizError) else f"Could not save {path.name}: {exc}."))
        task.finished.connect(lambda _r: self._show_message(
            f"Saved {path.name}" + (f" (as float32; numpy has no {array.dtype})." if widened else ".")))
        self._save_task = task
        task.start()
        return task

    def _show_message(self, text: str) -> None:
        self.message.setText(wrappable(text, MESSAGE_CHARS))
        self.message.setVisible(True)


def _all_nonfinite(s: TensorStats) -> bool:
    return s.numeric and s.minimum is None and s.numel > 0 and s.nan_count + s.inf_count == s.numel


def _kernel_gaps(shape: tuple[int, ...], array: np.ndarray | None) -> np.ndarray:
    """The rows and columns between the kernels of a grid from :func:`preview_image`."""
    assert array is not None
    kh, kw = array.shape[2], array.shape[3]
    gaps = np.zeros(shape, bool)
    gaps[kh::kh + 1, :] = True
    gaps[:, kw::kw + 1] = True
    return gaps


def _number(x: float | None) -> str:
    if x is None:
        return ""
    return f"{x:.6g}"
