"""The Layers tab after Run Both (issue 30): every pair in a sortable table with its measures and the
error B's layer adds on its own, SQNR and cosine coloured, Worst Layer and Previous/Next along the chosen
measure, unpaired values with their reasons; a QOperator model's integer values read as floats."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from pytestqt.qtbot import QtBot
from quantized_models import quantized, reference, sample
from window_fixtures import diff_window, doc_of, settle

from onnxviz.ui.main_window import MainWindow

TIMEOUT = 60000
Make = Callable[[], MainWindow]


def test_the_layers_table_finds_the_worst_layer_and_steps_along_the_measure(qtbot: QtBot, make_window: Make) -> None:
    w = diff_window(qtbot, make_window, reference("resnet_qoperator"), quantized("resnet_qoperator"))
    c = w.diff
    layers = c.dock.layers
    assert not layers.worst_button.isEnabled() and "Run Both" in layers.summary.text()
    with qtbot.waitSignal(c.runs_compared, timeout=TIMEOUT):
        c.run_both(sample("resnet_float"))
    settle()
    cross = c.cross
    assert cross is not None and len(layers.rows) == len(cross.diffs) >= 10
    assert c.dock.tabs.tabText(c.dock.tabs.indexOf(layers)) == f"Layers ({len(cross.diffs)})"
    assert "SQNR" in (w.canvas.shown_overlay.legend.title if w.canvas.shown_overlay else "")

    # sorted by SQNR, the lowest first; Worst Layer selects it, on A's graph too
    model, proxy = layers.model, layers.proxy
    shown = [model.rows[proxy.mapToSource(proxy.index(r, 0)).row()].diff.sqnr_db for r in range(proxy.rowCount())]
    assert shown == sorted(shown)
    row = layers.select_worst()
    worst = layers.rows[row].diff
    assert worst.sqnr_db == min(d.sqnr_db for d in cross.diffs)
    record = cross.result_a.values[worst.name]
    qtbot.waitUntil(lambda: doc_of(w).selection.state.node == record.node, timeout=TIMEOUT)
    assert worst.name in c.dock.values.title.text() and "SQNR" in c.dock.values.figures.text()
    # B's value is uint8 (a QLinear op's output): the Values tab shows the floats it stands for
    a, b = cross.arrays(worst)
    assert np.asarray(b).dtype.kind == "f" and np.abs(np.asarray(a) - np.asarray(b)).max() == worst.max_abs_error

    # Next and Previous follow the table's order; another measure reorders it
    following = layers.step(1)
    assert layers.rows[following].diff.sqnr_db >= worst.sqnr_db
    assert layers.step(-1) == row
    layers.measure.setCurrentIndex(layers.measure.findData("max_abs"))
    row = layers.select_worst()
    assert layers.rows[row].diff.max_abs_error == max(d.max_abs_error for d in cross.diffs)

    # the added error: B's layer on A's inputs, at most the whole error's SQNR below
    added = [r for r in layers.rows if not math.isnan(r.added_sqnr)]
    assert len(added) == len(layers.rows)
    assert all(r.added_sqnr >= r.diff.sqnr_db - 0.5 for r in added)
    sqnr_column = 6
    index = model.index(row, sqnr_column)
    assert model.data(index, 8) is not None  # BackgroundRole: the SQNR colouring

    # the Relus B fused into its QLinearConv: unpaired, saying so
    reasons = [layers.unmatched.item(r, 2).text() for r in range(layers.unmatched.rowCount())]
    assert reasons and all("fused" in r and "QLinear" in r for r in reasons)

    c.close_diff()
    assert layers.rows == []
