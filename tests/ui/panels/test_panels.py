"""The inspector panels follow the selection, set it when a link is clicked, and show real facts."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot
from window_fixtures import settle

from onnxviz.model.document import Document
from onnxviz.model.graph.tensors import load_tensor, tensor_array
from onnxviz.model.graph.validation import InferenceResult, ValidationResult
from onnxviz.ui.main_window import MainWindow
from onnxviz.ui.panels.feature import Panels
from onnxviz.ui.panels.tables import RowsModel, source_row
from onnxviz.ui.screenshot import settle_layouts
from onnxviz.ui.widgets import tensor_view


@pytest.fixture
def window(make_window: Callable[..., MainWindow]) -> MainWindow:
    return make_window(shown=False)  # hidden: every panel refreshes, seen or not


def open_model(qtbot: QtBot, window: MainWindow, path: Path) -> Panels:
    with qtbot.waitSignal(window.loading_finished, timeout=30000):
        window.open_path(path)
    assert window.doc is not None
    # panels refresh again when background validation reports: wait for that to settle
    qtbot.waitUntil(lambda: not window.validation.busy, timeout=60000)
    return window.panels  # type: ignore[attr-defined,no-any-return]


def labels_text(widget: object) -> str:
    return "\n".join(label.text() for label in widget.findChildren(QLabel))  # type: ignore[attr-defined]


def click_link(panel: object, href_part: str) -> None:
    """Activate the first link in ``panel`` whose href contains ``href_part`` (as a user click does)."""
    for label in panel.findChildren(QLabel):  # type: ignore[attr-defined]
        text = label.text()
        start = text.find('href="')
        while start >= 0:
            end = text.find('"', start + 6)
            href = text[start + 6:end]
            if href_part in href:
                label.linkActivated.emit(href)
                return
            start = text.find('href="', end)
    raise AssertionError(f"no link containing {href_part!r}")


def test_selecting_a_node_fills_the_node_panel_and_links_select_values(qtbot: QtBot, window: MainWindow,
                                                                        example_path: Path) -> None:
    panels = open_model(qtbot, window, example_path)
    doc = window.doc
    assert doc is not None
    doc.selection.select_node("", 0)
    text = labels_text(panels.node_panel)
    assert "Conv" in text and "/stem/conv/Conv" in text
    assert "ai.onnx v11" in text and "opset 18" in text          # the schema version that applies
    assert "[1, 1, 1, 1]" in text                                # pads, set in the file
    assert "default 1" in text                                   # group, from the schema (greyed)
    assert "stem.conv.weight" in text and "float32" in text
    click_link(panels.node_panel, "value::image")
    assert doc.selection.state.value == "image" and doc.selection.state.node == -1
    value_text = labels_text(panels.value_panel)
    assert "graph input" in value_text and "<i>batch</i>" in value_text
    click_link(panels.value_panel, "node::0")                   # the consumer link goes back to the node
    assert doc.selection.state.node == 0


def test_weights_panel_statistics_match_numpy(qtbot: QtBot, window: MainWindow, example_path: Path,
                                              tmp_path: Path) -> None:
    panels = open_model(qtbot, window, example_path)
    doc = window.doc
    assert doc is not None
    view = panels.weights_panel.view
    with qtbot.waitSignal(view.loaded, timeout=20000):
        doc.selection.select_value("", "stem.conv.weight")
    tensor = next(t for t in doc.model.graph.initializer if t.name == "stem.conv.weight")
    values = numpy_helper.to_array(tensor).astype(np.float64)
    stats = view.prepared.stats
    assert stats.minimum == pytest.approx(values.min()) and stats.maximum == pytest.approx(values.max())
    assert stats.mean == pytest.approx(values.mean()) and stats.std == pytest.approx(values.std())
    assert stats.hist_counts.sum() == values.size
    assert view.fact_labels["shape"].text() == "[16, 3, 3, 3]"
    assert view.fact_labels["mean"].text() == f"{values.mean():.6g}"
    assert view.tabs.tabText(view.image_index) == "Kernels"      # a 4-D conv weight as a kernel grid
    table = view.table.values
    assert table.rowCount() == 16 * 3 * 3 and table.columnCount() == 3
    assert table.data(table.index(1, 2)) == f"{values.reshape(-1)[5]:.6g}"
    out = tmp_path / "w.npy"
    task = view.save_npy(out)
    assert task is not None
    qtbot.waitUntil(lambda: out.exists() and task.done, timeout=10000)
    np.testing.assert_array_equal(np.load(out), numpy_helper.to_array(tensor))


def _big_model(path: Path, elements: int) -> None:
    big = numpy_helper.from_array(np.arange(elements, dtype=np.float32), "big")
    graph = helper.make_graph([helper.make_node("Identity", ["big"], ["y"])], "g", [],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [elements])], [big])
    onnx.save(helper.make_model(graph), path)


def test_fifty_million_element_initializer_is_read_off_the_gui_thread(qtbot: QtBot, window: MainWindow,
                                                                      tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The weight is read and summed by a worker while the panel says it is busy (the GUI thread's
    longest pause meanwhile is a figure of bench/bench_panels.py, not a timed test)."""
    path = tmp_path / "big.onnx"
    _big_model(path, 50_000_000)
    panels = open_model(qtbot, window, path)
    assert window.doc is not None
    readers: list[threading.Thread] = []

    def recorded_load(*args: Any, **kwargs: Any) -> Any:
        readers.append(threading.current_thread())
        return load_tensor(*args, **kwargs)

    monkeypatch.setattr(tensor_view, "load_tensor", recorded_load)
    view = panels.weights_panel.view
    with qtbot.waitSignal(view.loaded, timeout=120000):
        window.doc.selection.select_value("", "big")
        assert view.is_busy and view.prepared is None  # the panel shows its progress, the window goes on
    assert readers and threading.main_thread() not in readers
    assert view.prepared is not None
    assert view.prepared.stats.maximum == float(np.float32(49_999_999)) and view.prepared.stats.numel == 50_000_000


def _external_model(folder: Path) -> Path:
    values = (np.arange(64 * 32, dtype=np.float32).reshape(64, 32) - 1000) / 7
    tensor = numpy_helper.from_array(values, "w_ext")
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w_ext"], ["y"], name="mm")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 32])], [tensor])
    model = helper.make_model(graph)
    path = folder / "ext.onnx"
    onnx.save(model, path, save_as_external_data=True, all_tensors_to_one_file=True, location="ext.bin",
              size_threshold=0)
    return path


def test_external_data_tensor_statistics(qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    panels = open_model(qtbot, window, _external_model(tmp_path))
    doc = window.doc
    assert doc is not None
    view = panels.weights_panel.view
    with qtbot.waitSignal(view.loaded, timeout=20000):
        doc.selection.select_value("", "w_ext")
    expected = tensor_array(doc.model.graph.initializer[0], doc.base_dir).astype(np.float64)
    stats = view.prepared.stats
    assert stats.storage.startswith("external: ext.bin @ 0")
    assert stats.mean == pytest.approx(expected.mean()) and stats.minimum == pytest.approx(expected.min())
    assert view.fact_labels["storage"].text() == stats.storage
    assert view.tabs.tabText(view.image_index) == "Heatmap" and view.tabs.isTabVisible(view.image_index)


def test_problems_panel_click_selects_the_node(qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["a"], name="ok"),
                               helper.make_node("Add", ["a", "missing"], ["y"], name="broken")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    path = tmp_path / "broken.onnx"
    onnx.save(helper.make_model(graph), path)
    panels = open_model(qtbot, window, path)
    problems = panels.problems_panel
    qtbot.waitUntil(lambda: any("missing" in p.message for p in problems.problems), timeout=20000)
    row = next(i for i, p in enumerate(problems.problems) if p.node == 1 and "missing" in p.message)
    view = problems.view
    proxy_row = next(r for r in range(view.model().rowCount())
                     if source_row(view, view.model().index(r, 0)) == row)
    rect = view.visualRect(view.model().index(proxy_row, 1))
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert window.doc is not None and window.doc.selection.state.node == 1
    assert "not defined" in labels_text(panels.node_panel)      # the node panel lists the node's problem


def test_model_panel_costs_after_undo_to_a_validated_state(qtbot: QtBot, window: MainWindow,
                                                           example_copy: Path) -> None:
    panels = open_model(qtbot, window, example_copy)
    model_panel = panels.model_panel
    window.show()
    qtbot.waitUntil(lambda: model_panel.settled and "602.27 K" in model_panel.cost_form.values["MACs"].text(),
                    timeout=20000)
    doc = window.doc
    assert doc is not None
    doc.edit.remove_node(0)  # shapes after it can no longer be inferred
    qtbot.waitUntil(lambda: not window.validation.busy and model_panel.settled, timeout=20000)
    assert "without known shapes" in model_panel.cost_form.values["MACs"].text()
    window.activateWindow()
    qtbot.keyClick(window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)  # back to the opened state
    qtbot.waitUntil(lambda: not window.validation.busy and model_panel.settled, timeout=20000)
    assert "602.27 K" in model_panel.cost_form.values["MACs"].text()


def test_model_panel_shows_metadata_and_flops(qtbot: QtBot, window: MainWindow, example_path: Path) -> None:
    panels = open_model(qtbot, window, example_path)
    model_panel = panels.model_panel
    qtbot.waitUntil(lambda: bool(model_panel.costs), timeout=20000)
    meta = model_panel.metadata_forms["Metadata"]
    assert [(key, label.text()) for key, label in meta.values.items()] == \
        [("author", '<span style="white-space:pre-wrap">onnxviz</span>'),
         ("license", '<span style="white-space:pre-wrap">Apache-2.0</span>')]
    text = labels_text(model_panel)
    assert "ai.onnx <b>18</b>" in text and "onnxviz-examples" in text
    assert "602.27 K" in model_panel.cost_form.values["MACs"].text()
    conv = next(c for c in model_panel.costs if c.op_type == "Conv")
    assert conv.macs == 16 * 16 * 16 * 3 * 9                      # batch counted as 1
    view = model_panel.cost_view
    view.sortByColumn(2, Qt.SortOrder.DescendingOrder)             # sort by MACs, click the largest
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.visualRect(view.model().index(0, 0)).center())
    doc = window.doc
    assert doc is not None and doc.selection.state.node >= 0
    assert doc.model.graph.node[doc.selection.state.node].op_type == "Conv"


def test_cost_table_arrives_sorted_by_macs(qtbot: QtBot, window: MainWindow, example_path: Path) -> None:
    """The rows are built and sorted off the GUI thread; each row still selects its own node."""
    model_panel = open_model(qtbot, window, example_path).model_panel
    qtbot.waitUntil(lambda: bool(model_panel.costs), timeout=20000)
    table = model_panel.cost_model
    macs = [row[2] for row in table.rows]
    assert len(macs) == len(model_panel.costs)
    assert [m for m in macs if m is not None] == sorted((m for m in macs if m is not None), reverse=True)
    by_node = {c.node: c for c in model_panel.costs}
    assert all(by_node[node].macs == row[2] for node, row in zip(table.payload, table.rows, strict=True))


def test_cost_table_fits_its_columns_in_the_panel(qtbot: QtBot, window: MainWindow, example_path: Path) -> None:
    """At the panel's default width the table does not scroll sideways and every count reads whole; a name
    cut to fit has its whole text in the tooltip."""
    window.resize(1400, 900)
    window.show()
    model_panel = open_model(qtbot, window, example_path).model_panel
    qtbot.waitUntil(lambda: bool(model_panel.costs), timeout=20000)
    view, table = model_panel.cost_view, model_panel.cost_model
    qtbot.waitUntil(lambda: view.viewport().width() > 100, timeout=20000)
    header = view.horizontalHeader()
    assert header.length() <= view.viewport().width()
    assert view.horizontalScrollBar().maximum() == 0
    metrics = view.fontMetrics()
    for row in range(table.rowCount()):
        for column in (2, 3):
            text = table.data(table.index(row, column))
            assert metrics.horizontalAdvance(text) + 6 <= view.columnWidth(column), (row, column, text)
        name = table.rows[row][0]
        assert name in table.data(table.index(row, 0), Qt.ItemDataRole.ToolTipRole)


def _odd_names_model() -> onnx.ModelProto:
    """Names that sort differently by case, empty ones (shown as op#position), an escaped one, equal costs."""
    w = numpy_helper.from_array(np.ones((4, 4), np.float32), "w")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["a"], name="b"), helper.make_node("Relu", ["a"], ["r"], name="A"),
             helper.make_node("MatMul", ["r", "w"], ["m"], name=""), helper.make_node("Relu", ["m"], ["y"], name="a"),
             helper.make_node("Identity", ["y"], ["z"], name="tab\there"), helper.make_node("Unknownish", ["z"], ["u"],
                                                                                         domain="x.y", name=""),
             helper.make_node("Sigmoid", ["u"], ["v"], name="Z")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
                              [helper.make_tensor_value_info("v", TensorProto.FLOAT, None)], [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("x.y", 1)])


@pytest.mark.parametrize("which", ["synth", "odd names"])
def test_cost_table_shows_and_sorts_what_a_table_of_all_its_cells_would(qtbot: QtBot, synth_small: Path,
                                                                        which: str) -> None:
    """The cost table makes its cells only for the rows shown, and sorts by ranks: what it shows, in every
    order the headers give (each sort starting from the last), is what a table holding every cell shows."""
    from onnxviz.model.graph.index import ModelIndex
    from onnxviz.model.graph.summary import model_figures
    from onnxviz.model.graph.validation import infer_types
    from onnxviz.model.text import display_name
    from onnxviz.ui.panels.common import NAME_CHARS
    from onnxviz.ui.panels.model_panel import COST_ORDER, ModelPanel, prepare_figures
    from onnxviz.ui.panels.tables import sorted_order

    model = onnx.load(synth_small) if which == "synth" else _odd_names_model()
    index = ModelIndex(model)
    index.set_inferred(infer_types(model).types)
    figures = model_figures(model, index)
    clicked: list[int] = []
    panel = ModelPanel(lambda href: None, lambda scope, node: clicked.append(node))
    panel.begin(0)
    panel._add_costs()
    panel.end()
    panel._show_costs(prepare_figures(figures))
    shown = panel.cost_model
    every = RowsModel(shown.headers)  # the cells made for every row, as the table made them before
    every.numeric_columns, every.formatters = shown.numeric_columns, shown.formatters
    every.tooltip_columns = shown.tooltip_columns
    rows = [(display_name(c.name or f"{c.op_type}#{c.node}", NAME_CHARS), display_name(c.op_type, NAME_CHARS), c.macs,
             c.flops, display_name(c.output_shape, NAME_CHARS)) for c in figures.costs]
    first = sorted_order(rows, *COST_ORDER)
    every.set_rows([rows[r] for r in first], payload=first)
    roles = [Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.TextAlignmentRole]

    def cells(table: RowsModel) -> list[object]:
        return [table.data(table.index(r, c), role) for r in range(table.rowCount()) for c in range(5) for role in roles]

    for column, order in [(-1, None), (0, Qt.SortOrder.AscendingOrder), (1, Qt.SortOrder.DescendingOrder),
                          (4, Qt.SortOrder.AscendingOrder), (3, Qt.SortOrder.AscendingOrder),
                          (2, Qt.SortOrder.AscendingOrder), (0, Qt.SortOrder.DescendingOrder),
                          (4, Qt.SortOrder.DescendingOrder), (2, Qt.SortOrder.DescendingOrder)]:
        if order is not None:
            panel.cost_view.sortByColumn(column, order)
            every.sort(column, order)
        assert shown.rowCount() == len(rows) and cells(shown) == cells(every)
        clicked.clear()
        for r in range(shown.rowCount()):
            panel._on_cost_clicked(shown.index(r, 0))
        assert clicked == list(every.payload)


def test_rows_model_sorts_presorted_rows_only_when_sorted_otherwise(qtbot: QtBot) -> None:
    model = RowsModel(["Name", "Size"])
    model.sort(1, Qt.SortOrder.DescendingOrder)
    model.set_rows([("a", 1), ("b", 3), ("c", 2)], payload=[0, 1, 2], sorted_by=(1, Qt.SortOrder.DescendingOrder))
    assert model.payload == [0, 1, 2]                             # trusted: already in that order
    model.sort(0, Qt.SortOrder.AscendingOrder)
    model.set_rows([("b", 3), ("c", 2), ("a", 1)], payload=[1, 2, 0], sorted_by=(1, Qt.SortOrder.DescendingOrder))
    assert model.payload == [0, 1, 2]                             # the user's sort by name wins


def test_raw_view_text_follows_the_selection(qtbot: QtBot, window: MainWindow, example_path: Path) -> None:
    panels = open_model(qtbot, window, example_path)
    raw = panels.raw_panel
    doc = window.doc
    assert doc is not None
    qtbot.waitUntil(lambda: "ir_version: 8" in raw.text.toPlainText(), timeout=20000)
    with qtbot.waitSignal(raw.shown, timeout=20000):
        doc.selection.select_node("", 0)
    text = raw.text.toPlainText()
    assert text.startswith('input: "image"') and 'op_type: "Conv"' in text
    with qtbot.waitSignal(raw.shown, timeout=20000):
        doc.selection.select_value("", "stem.conv.weight")
    assert "# graph.initializer (data cut to 64 bytes)" in raw.text.toPlainText()


def test_graph_attribute_link_enters_the_subgraph(qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    branch = helper.make_graph([helper.make_node("Identity", ["x"], ["t"])], "then", [],
                               [helper.make_tensor_value_info("t", TensorProto.FLOAT, [1])])
    other = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [],
                              [helper.make_tensor_value_info("e", TensorProto.FLOAT, [1])])
    graph = helper.make_graph([helper.make_node("If", ["c"], ["y"], then_branch=branch, else_branch=other)], "g",
                              [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                               helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    path = tmp_path / "if.onnx"
    onnx.save(helper.make_model(graph), path)
    panels = open_model(qtbot, window, path)
    doc = window.doc
    assert doc is not None
    doc.selection.select_node("", 0)
    click_link(panels.node_panel, "scope:0.else_branch")
    assert doc.selection.state.scope == "0.else_branch" and doc.selection.state.is_empty
    assert panels.model_panel.scope_section.isVisibleTo(panels.model_panel)
    assert "0.else_branch" in panels.model_panel.scope_label.text()
    click_link(panels.model_panel, "scope::")                      # back to the main graph
    assert doc.selection.state.scope == "" and not panels.model_panel.scope_section.isVisibleTo(panels.model_panel)


def test_constant_node_value_shows_in_weights(qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    const = helper.make_node("Constant", [], ["k"], value=numpy_helper.from_array(np.array([1.5, -2.0], np.float32)))
    graph = helper.make_graph([const, helper.make_node("Mul", ["x", "k"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    path = tmp_path / "const.onnx"
    onnx.save(helper.make_model(graph), path)
    panels = open_model(qtbot, window, path)
    doc = window.doc
    assert doc is not None
    view = panels.weights_panel.view
    with qtbot.waitSignal(view.loaded, timeout=20000):
        doc.selection.select_value("", "k")
    assert (view.prepared.stats.minimum, view.prepared.stats.maximum) == (-2.0, 1.5)
    assert "Constant" in panels.weights_panel.origin.text()


def test_malformed_initializer_gives_a_message_not_a_crash(qtbot: QtBot, window: MainWindow,
                                                          tmp_path: Path) -> None:
    bad = numpy_helper.from_array(np.ones(4, np.float32), "bad")
    bad.dims[:] = [100]
    graph = helper.make_graph([helper.make_node("Identity", ["bad"], ["y"])], "g", [],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [100])], [bad])
    path = tmp_path / "bad.onnx"
    path.write_bytes(helper.make_model(graph).SerializeToString())
    panels = open_model(qtbot, window, path)
    view = panels.weights_panel.view
    with qtbot.waitSignal(view.failed, timeout=20000) as blocker:
        window.doc.selection.select_value("", "bad")  # type: ignore[union-attr]
    assert "needs 400" in blocker.args[0]
    assert view.message.isVisibleTo(view) and "needs 400" in view.message.text()


def test_panels_without_a_document(window: MainWindow) -> None:
    panels: Panels = window.panels  # type: ignore[attr-defined]
    assert "No model" in labels_text(panels.model_panel)
    assert panels.problems_panel.summary.text() == "No model open."
    assert {d.objectName() for d in panels.docks.values()} >= {"panels.model", "panels.weights", "panels.raw"}
    titles = [a.text() for a in window.view_menu.actions()]
    assert "Weights Panel" in titles and "Problems Panel" in titles
    _ = Document  # the type used by the panels' API


def test_failed_shape_inference_is_explained(qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    graph = helper.make_graph([helper.make_node("Add", ["a", "b"], ["y"])], "g",
                              [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2]),
                               helper.make_tensor_value_info("b", TensorProto.FLOAT, [3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    path = tmp_path / "incompatible.onnx"
    onnx.save(helper.make_model(graph), path)
    panels = open_model(qtbot, window, path)
    assert "Incompatible dimensions" in panels.model_panel.sections["Model"].body.values["Shape inference"].text()
    window.doc.selection.select_value("", "a")  # type: ignore[union-attr]
    text = labels_text(panels.value_panel)
    assert "float32 <code>[2]</code>" in text and "Incompatible dimensions" in text


def test_validation_updates_the_model_panel_in_place(qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    """A validation result changes the inference row and the outputs' inferred types on the page it finds,
    without rebuilding it (a rebuild held a 123k-node model's window ~40 ms); an edit still rebuilds it."""
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5])],
                              [helper.make_value_info("y", onnx.TypeProto())])  # no declared type
    path = tmp_path / "untyped_output.onnx"
    onnx.save(helper.make_model(graph), path)
    panel = open_model(qtbot, window, path).model_panel
    doc = window.doc
    assert doc is not None and panel.facts_form is not None
    content, facts, output_row = panel.content, panel.facts_form, panel.signature[-1][0]
    inferred = doc.index.inferred
    assert "1 value types inferred" in facts.values["Shape inference"].text()
    assert "float32" in output_row.text() and "[2×5]" in output_row.text()

    doc.apply_validation(ValidationResult(doc.generation, InferenceResult({}), []))  # a result without types
    assert panel.content is content and panel.facts_form is facts                # the same page, updated
    assert "not run yet" in facts.values["Shape inference"].text()
    assert "y" in output_row.text() and "[2×5]" not in output_row.text()
    doc.apply_validation(ValidationResult(doc.generation, InferenceResult(inferred), []))
    assert "1 value types inferred" in facts.values["Shape inference"].text() and "[2×5]" in output_row.text()

    doc.edit.set_model_info(producer_name="edited")
    assert panel.content is not content and "edited" in labels_text(panel)


def test_a_page_grown_by_its_figures_is_laid_out_before_a_screenshot(qtbot: QtBot, window: MainWindow,
                                                                     example_path: Path) -> None:
    """--screenshot grabs as soon as the figures are in: the table they grew asks each enclosing layout in turn, a
    posted event per level, and one pass of the event loop left the Operators table clipped under the next
    section in about one grab in four at 123k nodes. settle_layouts lays all of it out first."""
    window.show()
    model_panel = open_model(qtbot, window, example_path).model_panel
    qtbot.waitUntil(lambda: model_panel.settled, timeout=20000)
    settle_layouts()  # everything laid out so far
    section = model_panel.op_section
    grown = model_panel.op_view.height() + 200
    model_panel.op_view.setFixedHeight(grown)  # as the figures' rows do
    assert section.height() < grown  # only asked for, not laid out yet
    settle_layouts()
    assert section.height() >= grown and section.geometry().bottom() < model_panel.sections["Per-node cost"].y()


def test_hidden_raw_tab_is_built_only_when_shown(qtbot: QtBot, window: MainWindow, example_path: Path) -> None:
    window.show()
    qtbot.waitExposed(window)
    panels = open_model(qtbot, window, example_path)
    doc = window.doc
    assert doc is not None
    panels.docks["Problems"].toggleViewAction().trigger()            # View > Problems Panel: it and its tabs
    assert not panels.docks["Raw"].isHidden()
    panels.docks["Problems"].raise_()                                # Raw is the hidden tab
    qtbot.waitUntil(lambda: panels.docks["Raw"].visibleRegion().isEmpty(), timeout=5000)
    doc.selection.select_node("", 3)
    settle()  # a build started for the hidden tab would have delivered its text by now
    assert "MaxPool" not in panels.raw_panel.text.toPlainText()
    with qtbot.waitSignal(panels.raw_panel.shown, timeout=20000):
        panels.docks["Raw"].raise_()
    assert 'op_type: "MaxPool"' in panels.raw_panel.text.toPlainText()


def test_problem_rows_can_be_copied(qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    graph = helper.make_graph([helper.make_node("Relu", ["nowhere"], ["y"], name="lost")], "g", [],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    path = tmp_path / "lost.onnx"
    onnx.save(helper.make_model(graph), path)
    panels = open_model(qtbot, window, path)
    view = panels.problems_panel.view
    row = next(i for i, p in enumerate(panels.problems_panel.problems) if "nowhere" in p.message)
    view.selectRow(row)
    qtbot.keyClick(view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QGuiApplication.clipboard().text().startswith("error\tinput 'nowhere' of lost is not defined")


def _sparse_model(path: Path, dims: list[int], indices: np.ndarray) -> Path:
    values = numpy_helper.from_array(np.array([1.5, -2.0], np.float32), "sp")
    sparse = helper.make_sparse_tensor(values, numpy_helper.from_array(indices, "sp_indices"), dims)
    graph = helper.make_graph([helper.make_node("Identity", ["sp"], ["y"])], "g", [],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, dims)],
                              sparse_initializer=[sparse])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


@pytest.mark.parametrize("indices", [np.array([1, 6], np.int64), np.array([[0, 1], [1, 2]], np.int64)],
                         ids=["flat", "coordinates"])
def test_sparse_initializer_shows_dense_in_weights(qtbot: QtBot, window: MainWindow, tmp_path: Path,
                                                   indices: np.ndarray) -> None:
    panels = open_model(qtbot, window, _sparse_model(tmp_path / "sparse.onnx", [2, 4], indices))
    view = panels.weights_panel.view
    with qtbot.waitSignal(view.loaded, timeout=20000):
        window.doc.selection.select_value("", "sp")  # type: ignore[union-attr]
    expected = np.zeros((2, 4), np.float32)
    expected.reshape(-1)[[1, 6]] = [1.5, -2.0]
    np.testing.assert_array_equal(view.prepared.array, expected)
    assert "Sparse initializer: 2 of 8 values stored" in panels.weights_panel.origin.text()
    assert "sparse" in labels_text(panels.value_panel).lower()  # its type, as a value shows it


def test_sparse_initializer_that_does_not_fit_gives_a_message(qtbot: QtBot, window: MainWindow,
                                                              tmp_path: Path) -> None:
    panels = open_model(qtbot, window, _sparse_model(tmp_path / "bad.onnx", [2, 4], np.array([1, 60], np.int64)))
    window.doc.selection.select_value("", "sp")  # type: ignore[union-attr]
    message = panels.weights_panel.view.message
    assert message.isVisibleTo(panels.weights_panel.view) and "do not fit" in message.text()


def test_problems_list_errors_first(qtbot: QtBot, window: MainWindow, example_path: Path) -> None:
    panels = open_model(qtbot, window, example_path)
    doc = window.doc
    assert doc is not None
    add = next(i for i, n in enumerate(doc.model.graph.node) if n.op_type == "Add")
    doc.edit.set_input(add, 1, "image")  # breaks shape inference: one error, then infos downstream
    qtbot.waitUntil(lambda: any(p.severity.value == "info" for p in doc.problems), timeout=30000)
    qtbot.waitUntil(lambda: not window.validation.busy, timeout=30000)
    model = panels.problems_panel.view.model()
    severities = [model.index(r, 0).data() for r in range(model.rowCount())]
    assert severities[0] == "error" and "note" in severities and "info" not in severities
    notes = f"{severities.count('note')} notes"       # one word for them in the panel and the status bar
    assert notes in panels.problems_panel.summary.text() and notes in window.status_fields.problems.text()


def test_problem_message_takes_the_spare_width_of_a_small_window(qtbot: QtBot, window: MainWindow,
                                                                 tmp_path: Path) -> None:
    graph = helper.make_graph([helper.make_node("Relu", ["nowhere"], ["y"], name="lost")], "g", [],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    path = tmp_path / "lost.onnx"
    onnx.save(helper.make_model(graph), path)
    panels = open_model(qtbot, window, path)
    window.resize(1024, 640)
    window.show()
    qtbot.waitExposed(window)
    panels.docks["Problems"].raise_()
    view = panels.problems_panel.view
    qtbot.waitUntil(lambda: view.isVisible() and view.viewport().width() > 0)
    header = view.horizontalHeader()
    message = header.sectionSize(1)
    others = [header.sectionSize(c) for c in (0, 2, 3, 4, 5)]
    assert message >= view.viewport().width() // 2 > max(others)
    severity_text = view.fontMetrics().horizontalAdvance("Severity")
    assert header.sectionSize(0) < severity_text + 60            # sized to its contents, not a fixed 80+
    assert header.sectionSize(5) < view.fontMetrics().horizontalAdvance("Graph") + 40


def test_operators_table_is_shown_whole_and_the_page_scrolls(qtbot: QtBot, window: MainWindow,
                                                             example_path: Path) -> None:
    model_panel = open_model(qtbot, window, example_path).model_panel
    window.resize(1024, 640)
    window.show()
    qtbot.waitUntil(lambda: bool(model_panel.costs), timeout=20000)
    view = model_panel.op_view
    rows = view.model().rowCount()
    assert rows == 12                                              # more than the 10 it used to show
    qtbot.waitUntil(lambda: view.height() > 0)
    assert view.verticalScrollBar().maximum() == 0                 # no scroll area inside the page's
    last = view.rowViewportPosition(rows - 1) + view.rowHeight(rows - 1)
    assert 0 < last <= view.viewport().height()                    # every row on the page


def test_the_node_panel_never_scrolls_sideways(qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    """The com.microsoft nodes of a 4-bit BERT (GatherBlockQuantized's panel scrolled sideways), their
    documentation open: the panel scrolls up and down only, its content as wide as the panel."""
    from tests.model.graph.test_symbolic_shapes import int4_bert

    path = tmp_path / "bert_int4.onnx"
    onnx.save(int4_bert(), path)
    window.resize(1400, 900)
    window.show()
    panels = open_model(qtbot, window, path)
    doc, page = window.doc, panels.node_panel
    assert doc is not None
    nodes = doc.model.graph.node
    for op in ("GatherBlockQuantized", "MatMulNBits"):
        doc.selection.select_node("", next(k for k, n in enumerate(nodes) if n.op_type == op))
        for title, section in page.sections.items():
            if title.endswith("documentation") and not section.expanded:
                qtbot.mouseClick(section.header, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: page.verticalScrollBar().maximum() > 0, timeout=5000)
        assert page.widget().width() <= page.viewport().width(), op
        assert page.horizontalScrollBar().maximum() == 0, op


def test_sections_show_their_bodies_as_asked_and_polish_them_once(qtbot: QtBot) -> None:
    """An open section's body shows with the page, in the page's style sheet only (shown at once, it was
    polished in the application's style first); a folded one stays hidden until its header is clicked; a body
    hidden by its maker is shown when its section opens."""
    from onnxviz.ui.panels.common import Page

    page = Page(lambda _href: None)
    qtbot.addWidget(page)
    page.resize(300, 400)
    page.show()
    page.begin()
    open_body, folded_body, hidden_body = QLabel("open"), QLabel("folded"), QLabel("hidden")
    hidden_body.hide()
    opened = page.add_section("Open", open_body)
    assert not open_body.testAttribute(Qt.WidgetAttribute.WA_WState_Polished)
    folded = page.add_section("Folded", folded_body, expanded=False)
    page.add_section("Hidden", hidden_body)
    page.end()
    qtbot.waitUntil(lambda: open_body.isVisible() and hidden_body.isVisible())
    assert not folded_body.isVisible() and not folded.expanded and opened.expanded
    qtbot.mouseClick(folded.header, Qt.MouseButton.LeftButton)
    assert folded_body.isVisible() and folded.header.arrowType() == Qt.ArrowType.DownArrow
    qtbot.mouseClick(opened.header, Qt.MouseButton.LeftButton)
    assert not open_body.isVisible() and opened.header.arrowType() == Qt.ArrowType.RightArrow
