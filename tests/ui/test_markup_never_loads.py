"""Text from a file is never markup: a model whose every string field is ``<img src="FIFO">`` (a FIFO of its own
per field, tests/markup_model.py) goes through everything a user can reach in the window (every panel for
every node and value, the canvas's tooltips in every graph, every item view's tooltips, every label, the edit
dialogs, a refusal's message box, the Run inputs dialog, a run and its Activations, the diff against an edited
copy, B's graph and Run Both's values), and no FIFO is opened (Qt's own opens are seen by the watcher process;
Python's by an audit hook) and no step holds the event loop (a FIFO opened would hold it until let go)."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import onnx
import pytest
import shiboken6
from markup_model import FifoTraps, markup_model
from PySide6.QtCore import QAbstractListModel, QModelIndex, QPoint, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QDialog,
    QDockWidget,
    QLabel,
    QMessageBox,
    QToolTip,
    QTreeView,
    QWidget,
)
from pytestqt.qtbot import QtBot
from window_fixtures import open_and_wait, settle

from onnxviz.ui.main_window import MainWindow

pytestmark = pytest.mark.slow
STALL_S = 10.0  # the longest any one step may hold the event loop (a FIFO opened by Qt: until the watcher lets go;
#                 generous: the machine running the tests may be busy)
ROWS = 200  # of an item view, per level


class _Opens:
    """Python's opens of the FIFOs (an audit hook: there is no removing one, so it records only while set)."""

    def __init__(self) -> None:
        self.folder = ""
        self.seen: list[str] = []
        sys.addaudithook(self._hook)

    def _hook(self, event: str, args: tuple[object, ...]) -> None:
        if self.folder and event in ("open", "os.open") and str(args[0]).startswith(self.folder) \
                and "fifo-" in str(args[0]) and threading.current_thread() is threading.main_thread():
            self.seen.append(str(args[0]))


OPENS = _Opens()


@pytest.fixture
def traps(tmp_path: Path) -> Iterator[FifoTraps]:
    folder = tmp_path / "fifos"
    folder.mkdir()
    with FifoTraps(folder) as t:
        OPENS.folder, OPENS.seen = str(folder), []
        yield t
        OPENS.folder = ""


class Sweep:
    """Shows what the window shows, step by step, and fails at the first step that opened a FIFO or stalled."""

    def __init__(self, window: MainWindow, traps: FifoTraps) -> None:
        self.window = window
        self.traps = traps
        self.steps = 0

    def check(self, step: str) -> None:
        QApplication.processEvents()
        opened = self.traps.take()
        assert not opened and not OPENS.seen, f"{step}: opened the FIFOs of {opened} {OPENS.seen}"

    def timed(self, step: str, action: Callable[[], object]) -> None:
        start = time.monotonic()
        action()
        took = time.monotonic() - start
        assert took < STALL_S, f"{step}: held the event loop {took:.1f} s"
        self.steps += 1

    def tooltip(self, step: str, text: object, widget: QWidget) -> None:
        if isinstance(text, str) and text:
            self.timed(step, lambda: QToolTip.showText(widget.mapToGlobal(QPoint(4, 4)), text, widget))
            QToolTip.hideText()

    def widgets(self, step: str, root: QWidget) -> None:
        """Every widget's tooltip shown, every label laid out, every item view's tooltips shown, then painted."""
        for w in [root, *root.findChildren(QWidget)]:
            if not shiboken6.isValid(w):  # deleted meanwhile (a panel rebuilt by the events a tooltip let run)
                continue
            self.tooltip(f"{step}: tooltip of {type(w).__name__}", w.toolTip(), w)
            if isinstance(w, QLabel):
                self.timed(f"{step}: label {w.text()[:80]!r}", w.sizeHint)
            if isinstance(w, QAbstractItemView) and w.model() is not None:
                self._items(step, w, QModelIndex(), 0)
        self.timed(f"{step}: painted", root.grab)
        self.check(step)

    def _items(self, step: str, view: QAbstractItemView, parent: QModelIndex, depth: int) -> None:
        model = view.model()
        columns = 1 if isinstance(model, QAbstractListModel) else model.columnCount(parent)  # its columnCount is private
        for row in range(min(model.rowCount(parent), ROWS)):
            for column in range(min(columns, 20)):
                index = model.index(row, column, parent)
                self.tooltip(f"{step}: {type(model).__name__} ({row}, {column})",
                             index.data(Qt.ItemDataRole.ToolTipRole), view)
            first = model.index(row, 0, parent)
            if isinstance(view, QTreeView) and depth < 4 and model.rowCount(first):
                self._items(step, view, first, depth + 1)

    def docks(self, step: str) -> None:
        for dock in self.window.findChildren(QDockWidget):
            dock.show()
            dock.raise_()
            QApplication.processEvents()
            self.widgets(f"{step} / {dock.windowTitle()}", dock)

    def canvas(self, step: str) -> None:
        view = self.window.canvas.view
        drawable = view.drawable
        provider = view.tooltip_provider
        assert drawable is not None and provider is not None
        for box in range(drawable.scene.n_boxes):
            self.tooltip(f"{step}: box {box}", provider(box, -1), view)
        for edge in range(drawable.scene.n_edges):
            self.tooltip(f"{step}: edge {edge}", provider(-1, edge), view)
        self.widgets(step, self.window)

    def top_levels(self, step: str) -> None:
        """The dialogs and message boxes open now: shown through, then closed."""
        settle()
        for top in QApplication.topLevelWidgets():
            if top is not self.window and top.isVisible() and isinstance(top, QDialog | QMessageBox):
                self.widgets(f"{step} / {top.windowTitle()}", top)
                top.close()
        self.check(step)


def _edited_copy(traps: FifoTraps, model: onnx.ModelProto) -> onnx.ModelProto:
    """B of the diff: a node renamed, a weight changed, one more node: its new texts are FIFOs too."""
    b = onnx.ModelProto()
    b.CopyFrom(model)
    b.graph.node[0].name = traps.tag("b_node")
    b.graph.initializer[0].raw_data = np.full(3, 2, np.float32).tobytes()
    called = b.graph.output[0].name
    b.graph.node.append(onnx.helper.make_node("Relu", [called], [traps.tag("b_value")], name=traps.tag("b_added")))
    b.graph.output[0].name = traps.tag("b_value")
    return b


def test_no_text_of_the_file_loads_anything_anywhere_in_the_window(qtbot: QtBot, traps: FifoTraps, tmp_path: Path,
                                                                 make_window: Callable[[], MainWindow]) -> None:
    model = markup_model(traps)
    path, other = tmp_path / "markup.onnx", tmp_path / "markup_b.onnx"
    onnx.save(model, path)
    onnx.save(_edited_copy(traps, model), other)
    w = make_window()
    w.resize(1300, 850)
    sweep = Sweep(w, traps)
    open_and_wait(qtbot, w, path)
    settle()
    doc = w.doc
    assert doc is not None and [p.value for p in doc.problems] == [traps.tag("if_out")]  # quoted in its message
    sweep.widgets("opened", w)

    for scope, g in doc.index.graphs.items():  # every panel for every node and value of every graph
        for i in range(len(g.nodes)):
            doc.selection.select_node(scope, i)
            sweep.docks(f"node {i} of {scope!r}")
        for name in list(g.producer):
            doc.selection.select_value(scope, name)
            sweep.docks(f"value of {scope!r}")

    sweep.canvas("canvas")
    w.canvas.expand_all()
    settle()
    sweep.canvas("canvas, every group open")
    for scope in [s for s in doc.index.graphs if s]:
        with qtbot.waitSignal(w.canvas.scene_ready, timeout=20000):
            w.canvas.show_scope(scope)
        sweep.canvas(f"canvas of {scope!r}")
    with qtbot.waitSignal(w.canvas.scene_ready, timeout=20000):
        w.canvas.show_scope("")

    edits = w.editing  # the dialogs of every node's edits, then the model's
    for scope, g in doc.index.graphs.items():
        for i in range(len(g.nodes)):
            doc.selection.select_node(scope, i)
            settle()
            for key in ("attributes", "rename_node", "op_type", "insert", "rewire", "describe", "delete_inputs",
                        "delete_outputs"):
                if edits.actions[key].isEnabled():
                    edits.actions[key].trigger()
                    sweep.top_levels(f"{key} of node {i} of {scope!r}")
    doc.selection.select_value("", model.graph.initializer[0].name)
    swept: list[str] = []
    for key in ("graph_io", "model", "extract", "rename_value", "weights_text", "insert", "insert_constant",
                "new_initializer", "dimension"):
        if edits.actions[key].isEnabled():
            edits.actions[key].trigger()
            sweep.top_levels(key)
            swept.append(key)
    assert {"insert_constant", "new_initializer", "dimension"} <= set(swept)  # the dialogs that came later
    edits.guarded(lambda: doc.edit.add_output(model.graph.output[0].name))  # refused, quoting the name
    assert [b for b in QApplication.topLevelWidgets() if isinstance(b, QMessageBox) and b.isVisible()]
    sweep.top_levels("a refusal")

    runs = w.run_controller  # the Run inputs dialog, a run, its values
    runs.run()
    dialog = runs.inputs_dialog
    assert dialog is not None and dialog.isVisible()
    sweep.widgets("the Run inputs dialog", dialog)
    dialog.dim_boxes[model.graph.input[0].type.tensor_type.shape.dim[0].dim_param].setValue(2)
    with qtbot.waitSignal(runs.run_finished, timeout=60000):
        dialog.run_button.click()
    settle()
    for name in list(doc.index.main.producer):
        doc.selection.select_value("", name)
        settle()
        sweep.widgets("Activations", runs.dock)

    diff = w.diff  # the diff against an edited copy, B's graph, Run Both's values
    with qtbot.waitSignal(diff.diff_shown, timeout=60000):
        diff.compare_with(other)
    settle()
    sweep.docks("the diff")
    for _ in range(len(diff.dock.differences)):
        diff.step(1)
        settle()
        sweep.docks("a difference")
    sweep.canvas("the diff's canvas")
    diff.show_b(True)
    settle()
    sweep.canvas("B's graph")
    diff.show_b(False)
    feeds = {model.graph.input[0].name: np.ones((2, 3), np.float32),
             model.graph.input[1].name: np.array(["a", "b"], dtype=object)}
    with qtbot.waitSignal(diff.runs_compared, timeout=60000):
        diff.run_both(feeds)
    settle()
    for name in list(doc.index.main.producer):
        doc.selection.select_value("", name)
        settle()
        sweep.docks("Run Both's values")
    assert sweep.steps > 500  # it did go through the window


def test_the_layer_tables_and_the_transform_window_never_load_a_name(qtbot: QtBot, traps: FifoTraps,
                                                                    tmp_path: Path) -> None:
    """The views that came after the sweep above was written: the comparison's per-layer table (its pairs and the
    values without a partner), the Transform dock's layers and variants, and the Transform dialog's input files.
    Their tooltips were the names as written (display_name escapes no markup): a name '<img src=FIFO>' was
    loaded when hovered."""
    from types import SimpleNamespace

    from onnxviz.model.runner.compare import ValueDiff
    from onnxviz.model.transform.catalog import Settings
    from onnxviz.model.transform.cost import LayerError
    from onnxviz.model.transform.variants import Variant
    from onnxviz.ui.diff.layers import LayersView, Row
    from onnxviz.ui.transform.dialog import TransformDialog
    from onnxviz.ui.transform.dock import TransformDock

    t = traps.tag
    host = QWidget()
    qtbot.addWidget(host)
    sweep = Sweep(host, traps)  # type: ignore[arg-type]  # only widgets() and tooltip() are used
    layers = LayersView()
    qtbot.addWidget(layers)
    diff = ValueDiff(t("pair_a"), 0, 0, 1.0, 0.5, 0.9, b_name=t("pair_b"), sqnr_db=3.0)
    layers.model.set_rows([Row(diff, "1x3", float("nan"), float("nan"), f"not isolated: {t('added_note')}")])
    pairing = SimpleNamespace(unmatched_a=[t("alone_a")], unmatched_b=[t("alone_b")],
                              reasons_a={t("alone_a"): f"no value like {t('reason_a')}"}, reasons_b={})
    layers._show_unmatched(SimpleNamespace(pairing=pairing))  # type: ignore[arg-type]
    layers.show()
    sweep.widgets("per-layer table", layers)
    dock = TransformDock()
    qtbot.addWidget(dock)
    dock.set_layers([LayerError(t("before"), t("after"), t("before_node"), t("after_node"), "Conv", ("", 0), ("", 0),
                                20.0, 0.99, 0.1, 0.01)], "")
    variant = Variant(1, t("variant"), tmp_path / "v.onnx", 10, b"", Settings("onnxslim"), worst_sqnr=3.0,
                      worst_layer=t("worst_layer"))
    dock.set_variants([variant], 1)
    dock.show()
    sweep.widgets("Transform dock", dock)
    dialog = TransformDialog(None, "onnxslim")
    qtbot.addWidget(dialog)
    dialog._add_path(str(tmp_path / t("input_file").replace("/", "_")))
    dialog.show()
    sweep.widgets("Transform dialog", dialog)
    assert sweep.steps > 10
