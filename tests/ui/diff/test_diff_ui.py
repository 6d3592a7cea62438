"""Issue 19 in the window: File > Compare With..., the marked graph, the Differences dock, the Node
panel's two sides, Run Both (issue 17 item 2: A, B and B - A side by side) and closing the diff."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import TEST_DATA
from onnx import numpy_helper
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMenu
from pytestqt.qtbot import QtBot
from window_fixtures import diff_window, doc_of, open_and_wait, settle

from onnxviz.model.errors import EditError
from onnxviz.model.layout.scene import BoxKind
from onnxviz.ui.diff.controller import RENAMED_RGBA
from onnxviz.ui.diff.dock import COLOURS
from onnxviz.ui.diff.sides import SidesTable
from onnxviz.ui.docks import WEIGHTS, find_dock
from onnxviz.ui.edit.extract import extract_selection
from onnxviz.ui.main_window import MainWindow

EXPORTS = TEST_DATA / "exports"
TIMEOUT = 60000
Make = Callable[[], MainWindow]


def _edited_copy(tmp_path: Path) -> Path:
    """resnet_float with four known edits: a renamed node, a changed attribute, a deleted node and a
    replaced weight."""
    m = onnx.load(EXPORTS / "resnet_float.onnx")
    g = m.graph
    g.node[2].name = "/layer1/conv1/Conv_renamed"
    next(a for a in g.node[14].attribute if a.name == "axis").i = 2   # Flatten
    g.node[9].input[0] = g.node[7].output[0]                          # /layer2/Relu deleted
    del g.node[8]
    k = next(k for k, t in enumerate(g.initializer) if t.name == "fc.bias")
    g.initializer[k].CopyFrom(numpy_helper.from_array(numpy_helper.to_array(g.initializer[k]) + 1, "fc.bias"))
    path = tmp_path / "resnet_edited.onnx"
    onnx.save(m, path)
    return path



def _press(qtbot: QtBot, w: MainWindow, key: Qt.Key, modifier: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier) -> None:
    w.activateWindow()
    qtbot.waitUntil(w.isActiveWindow)
    qtbot.keyClick(w.canvas, key, modifier)
    settle()


def _box_colour(w: MainWindow, node: int) -> tuple[int, ...]:
    shown = w.canvas.shown_overlay
    assert shown is not None and w.canvas.drawable is not None
    return tuple(int(v) for v in shown.rgba[w.canvas.drawable.node_box[node]])


def _node_panel_sides(w: MainWindow) -> SidesTable | None:
    return w.panels.node_panel.findChild(SidesTable)


def test_edited_copy_lists_exactly_its_edits_and_the_keys_step_through_them(
        qtbot: QtBot, make_window: Make, tmp_path: Path) -> None:
    w = diff_window(qtbot, make_window, EXPORTS / "resnet_float.onnx", _edited_copy(tmp_path))
    dock = w.diff.dock
    assert not dock.isHidden()
    kinds = [(d.kind, d.a, d.b) for d in dock.differences]
    assert kinds == [("weight_changed", "fc.bias", "fc.bias"),
                     ("node_changed", "/layer1/conv1/Conv", "/layer1/conv1/Conv_renamed"),
                     ("node_removed", "/layer2/Relu", None),
                     ("node_changed", "/Flatten", "/Flatten")]
    assert dock.list.count() == 4 and "4 differences" in dock.summary.text()
    listed = [str(dock.list.rows.data(dock.list.rows.index(r, 0))) for r in range(4)]  # the kinds in words
    assert listed[0].startswith("weight changed: fc.bias") and listed[2].startswith("node removed in B: /layer2/Relu")
    assert "node removed in B (1), node changed (2)" in dock.summary.text()
    # the legend and the colours on A's graph
    legend = w.canvas.legend
    assert legend is not None and [s[0] for s in legend.swatches] == ["renamed only", "changed", "removed in B",
                                                                      "added in B (dashed)"]
    assert _box_colour(w, 8) == COLOURS["node_removed"]
    assert _box_colour(w, 2) == RENAMED_RGBA
    assert _box_colour(w, 14) == COLOURS["node_changed"]
    assert _box_colour(w, 0)[3] == 0  # unchanged: not coloured
    selection = doc_of(w).selection
    _press(qtbot, w, Qt.Key.Key_F8)   # the weight: no node, the value is selected
    assert dock.list.currentRow() == 0 and selection.state.node == -1 and selection.state.value == "fc.bias"
    assert "max_abs 1" in dock.detail.text()
    _press(qtbot, w, Qt.Key.Key_F8)   # the renamed Conv
    qtbot.waitUntil(lambda: selection.state.node == 2, timeout=TIMEOUT)
    sides = _node_panel_sides(w)
    assert sides is not None and sides.changed_fields() == ["name"]
    _press(qtbot, w, Qt.Key.Key_F8)   # the deleted Relu
    qtbot.waitUntil(lambda: selection.state.node == 8, timeout=TIMEOUT)
    _press(qtbot, w, Qt.Key.Key_F8)   # the Flatten's axis
    qtbot.waitUntil(lambda: selection.state.node == 14, timeout=TIMEOUT)
    sides = _node_panel_sides(w)
    assert sides is not None and sides.changed_fields() == ["attribute axis"]
    _press(qtbot, w, Qt.Key.Key_F8, Qt.KeyboardModifier.ShiftModifier)  # back to the Relu
    qtbot.waitUntil(lambda: selection.state.node == 8, timeout=TIMEOUT)
    # closing the diff restores the plain view
    with qtbot.waitSignal(w.diff.diff_closed):
        dock.close_button.click()
    settle()
    assert dock.isHidden() and w.canvas.shown_overlay is None and w.canvas.legend is None
    assert _node_panel_sides(w) is None and not w.diff.actions["next"].isEnabled()


def test_a_change_in_an_if_branch_selects_its_node_in_the_body_and_an_added_node_shows_its_fields(
        qtbot: QtBot, make_window: Make, tmp_path: Path) -> None:
    m = onnx.load(EXPORTS / "vad_if.onnx")
    then = next(a for a in m.graph.node[8].attribute if a.name == "then_branch").g
    next(a for a in then.node[4].attribute if a.name == "axes").ints[:] = [1]   # the then branch's ReduceMean
    sig = m.graph.node[12]                                                       # a Neg inserted before Sigmoid
    m.graph.node.insert(12, onnx.helper.make_node("Neg", [sig.input[0]], ["negated"], name="inserted_neg"))
    m.graph.node[13].input[0] = "negated"
    b = tmp_path / "vad_edited.onnx"
    onnx.save(m, b)
    w = diff_window(qtbot, make_window, EXPORTS / "vad_if.onnx", b)
    dock = w.diff.dock
    kinds = [(d.kind, d.a, d.b) for d in dock.differences]
    assert ("node_changed", "/ReduceMean", "/ReduceMean") in kinds and ("node_added", None, "inserted_neg") in kinds
    body = next(k for k, d in enumerate(dock.differences) if d.kind == "node_changed")
    dock.list.setCurrentRow(body)
    scope = dock.differences[body].scope_a
    assert scope  # a body's scope
    qtbot.waitUntil(lambda: doc_of(w).selection.state.scope == scope and doc_of(w).selection.state.node == 4,
                    timeout=TIMEOUT)
    assert w.canvas.scope == scope
    sides = _node_panel_sides(w)
    assert sides is not None and sides.changed_fields() == ["attribute axes"]
    added = next(d for d in dock.differences if d.kind == "node_added")
    with qtbot.waitSignal(w.canvas.scene_ready, timeout=TIMEOUT):
        dock.show_b_button.click()
    dock.list.setCurrentRow(dock.differences.index(added))  # on B's graph: the node selected there
    assert w.diff.showing_b and w.canvas.doc is w.diff.doc_b
    qtbot.waitUntil(lambda: w.diff.doc_b.selection.state.node == added.node_b, timeout=TIMEOUT)
    assert isinstance(dock.sides, SidesTable) and dock.sides.cell_text(1, 2) == "Neg"


def test_a_model_against_itself_lists_nothing(qtbot: QtBot, make_window: Make) -> None:
    path = EXPORTS / "resnet_float.onnx"
    w = diff_window(qtbot, make_window, path, path)
    assert w.diff.dock.list.count() == 0 and "identical" in w.diff.dock.summary.text()
    assert w.canvas.shown_overlay is not None and not w.canvas.shown_overlay.rgba[:, 3].any()


def test_run_both_colours_values_and_shows_a_b_and_their_difference(qtbot: QtBot, make_window: Make) -> None:
    w = diff_window(qtbot, make_window, EXPORTS / "resnet_float.onnx", EXPORTS / "resnet_int8_qdq.onnx")
    c = w.diff
    removed = {d.a for d in c.dock.differences if d.kind == "node_removed"}
    assert "/layer2/Relu_1" in removed  # the quantizer fused the Relus away
    w.canvas.reveal_node("", 0)  # the stem's Conv: reads the image through a DequantizeLinear, int8 weights
    qtbot.waitUntil(lambda: doc_of(w).selection.state.node == 0, timeout=TIMEOUT)
    sides = _node_panel_sides(w)
    assert sides is not None and sides.changed_fields() == ["input 1", "input 2"]  # not input 0: the same image
    with qtbot.waitSignal(c.runs_compared, timeout=TIMEOUT):
        c.dock.run_button.click()
    settle()
    assert c.cross is not None and len(c.cross.diffs) >= 10
    assert max(d.rel_error for d in c.cross.diffs) < 0.2  # the per-layer errors of int8, not a misaligned pair
    shown = w.canvas.shown_overlay
    assert shown is not None and "SQNR" in shown.legend.title  # the lowest SQNR the hottest
    assert int((shown.rgba[:, 3] > 0).sum()) >= 10
    relu = next(i for i, n in enumerate(doc_of(w).index.main.nodes) if n.name == "/layer2/Relu_1")
    w.canvas.reveal_node("", relu)
    qtbot.waitUntil(lambda: doc_of(w).selection.state.node == relu, timeout=TIMEOUT)
    values = c.dock.values
    assert "DequantizeLinear" in values.title.text()  # B's value is read through its DequantizeLinear
    for measure in ("max |B\u2212A|", "max rel", "cosine", "SQNR"):
        assert measure in values.figures.text()
    assert all(m.values is not None for m in values.maps)
    assert values.maps[0].values.shape == values.maps[2].values.shape
    c.dock.colouring.setCurrentIndex(0)  # back to the diff's own colours
    assert w.canvas.shown_overlay is not None and w.canvas.shown_overlay.legend.swatches
    run_dir = Path(c.cross.result_a.directory)
    c.close_diff()
    assert c.cross is None and not run_dir.exists() and w.canvas.shown_overlay is None


def test_bert_exports_align_and_collapsed_groups_show_their_changes(qtbot: QtBot, make_window: Make) -> None:
    w = diff_window(qtbot, make_window, EXPORTS / "bert_legacy.onnx", EXPORTS / "bert_dynamo.onnx")
    c = w.diff
    assert c.diff is not None
    pairs, _, n_dynamo = c.diff.alignment.counts()
    assert pairs / n_dynamo >= 0.95  # dynamo's graph is smaller (no Constant, Shape chains): almost all of it aligns
    w.canvas.expand_all(False)  # every group collapsed
    settle()
    qtbot.waitUntil(lambda: not w.canvas.busy, timeout=TIMEOUT)
    d = w.canvas.drawable
    shown = w.canvas.shown_overlay
    assert d is not None and shown is not None
    groups = np.flatnonzero(d.scene.box_kind == BoxKind.GROUP)
    marked_nodes = {n for n, _ in c.diff.node_kinds_a("").items()}
    assert groups.size and marked_nodes
    assert any(shown.rgba[g, 3] > 0 for g in groups)  # a collapsed group holding a change is coloured
    first_node = next(k for k, x in enumerate(c.dock.differences) if x.node_a >= 0)
    c.dock.list.setCurrentRow(first_node)
    want = c.dock.differences[first_node].node_a
    qtbot.waitUntil(lambda: doc_of(w).selection.state.node == want, timeout=TIMEOUT)


def test_compare_with_a_file_that_is_no_model_says_one_sentence(qtbot: QtBot, make_window: Make,
                                                                tmp_path: Path) -> None:
    bad = tmp_path / "notes.onnx"
    bad.write_text("not a model")
    w = make_window()
    open_and_wait(qtbot, w, EXPORTS / "resnet_float.onnx")
    with qtbot.waitSignal(w.diff.failed, timeout=TIMEOUT) as said:
        w.diff.compare_with(bad)
    message = said.args[0]
    assert "notes.onnx" in message and "Traceback" not in message and message.count(". ") == 0
    assert not w.diff.active and w.diff.dock.isHidden()


def test_cancelled_compare_shows_nothing(qtbot: QtBot, make_window: Make) -> None:
    w = make_window()
    open_and_wait(qtbot, w, EXPORTS / "bert_legacy.onnx")
    task = w.diff.compare_with(EXPORTS / "bert_dynamo.onnx")
    assert task is not None
    with qtbot.waitSignal(task.cancelled, timeout=TIMEOUT):
        task.cancel()
    settle()
    assert not w.diff.active and w.diff.dock.isHidden()


def test_run_compare_with_model_pairs_values_with_the_diffs_matcher(qtbot: QtBot, make_window: Make) -> None:
    """Issue 17 item 2: Run > Compare with Model... on a float ResNet and its int8 QDQ version compared
    relu/Relu_output_0 with the same-named pre-ReLU value of B (rel 1.99); the matcher pairs it with the
    DequantizeLinear output after it."""
    w = make_window()
    open_and_wait(qtbot, w, EXPORTS / "resnet_float.onnx")
    c = w.run_controller
    with qtbot.waitSignal(c.run_finished, timeout=TIMEOUT):
        c.run(compare="file", other_path=EXPORTS / "resnet_int8_qdq.onnx")
    assert c.diffs is not None and c.pairs is not None and len(c.diffs) >= 10
    assert c.overlay_key == "sqnr_loss"  # coloured by SQNR, as compare sorts: every value of a QDQ copy differs
    qtbot.waitUntil(lambda: w.canvas.shown_overlay is not None and "SQNR" in w.canvas.shown_overlay.legend.title,
                    timeout=TIMEOUT)
    by_name = {d.name: d for d in c.diffs}
    relu = by_name["/layer2/Relu_1_output_0"]
    assert relu.other.endswith("DequantizeLinear_Output") and relu.rel_error < 0.2
    assert max(d.rel_error for d in c.diffs) < 0.2
    # the Activations dock shows the selected value in both runs and their difference
    node = next(i for i, n in enumerate(doc_of(w).index.main.nodes) if n.name == "/layer2/Relu_1")
    doc_of(w).selection.select_node("", node)
    dock = c.dock
    assert dock.tabs.tabBar().isVisible()
    dock.tabs.setCurrentWidget(dock.pair_page)
    assert "DequantizeLinear" in dock.pair.title.text() and "SQNR" in dock.pair.figures.text()
    assert all(m.values is not None for m in dock.pair.maps)


def test_an_edit_of_a_closes_the_diff(qtbot: QtBot, make_window: Make,
                                       tmp_path: Path) -> None:
    w = diff_window(qtbot, make_window, EXPORTS / "resnet_float.onnx", _edited_copy(tmp_path))
    with qtbot.waitSignal(w.diff.diff_closed):
        doc_of(w).edit.rename_node(("", 0), "renamed_here")
    settle()
    assert not w.diff.active and w.diff.dock.isHidden() and w.canvas.shown_overlay is None
    assert "edited" in w.statusBar().currentMessage()


def test_a_window_saved_with_a_diff_open_starts_without_the_empty_dock(qtbot: QtBot, make_window: Make,
                                                                         tmp_path: Path) -> None:
    w = diff_window(qtbot, make_window, EXPORTS / "resnet_float.onnx", _edited_copy(tmp_path))
    w._save_window_state()  # as a close does, before the diff closes
    again = make_window()
    assert again.property("stateRestored")
    qtbot.waitUntil(lambda: again.diff.dock.isHidden())
    assert not again.diff.active


def test_show_bs_graph_marks_the_added_nodes_and_selecting_one_selects_its_box(qtbot: QtBot, make_window: Make) -> None:
    w = diff_window(qtbot, make_window, EXPORTS / "resnet_float.onnx", EXPORTS / "resnet_int8_qdq.onnx")
    c, dock, doc_a = w.diff, w.diff.dock, doc_of(w)
    assert "only in B: dashed" in w.canvas.shown_overlay.legend.title
    added = next(k for k, d in enumerate(dock.differences)  # a weight's DequantizeLinear is drawn in its reader's box
                 if d.kind == "node_added" and d.details["op_type"] == "QuantizeLinear")
    d = dock.differences[added]
    with qtbot.waitSignal(w.canvas.scene_ready, timeout=TIMEOUT):
        dock.show_b_button.click()   # B's graph: the added node selected there, not its ghost in A's
    dock.list.setCurrentRow(added)
    settle()
    doc_b = c.doc_b
    assert c.showing_b and w.canvas.doc is doc_b and w.doc is doc_a and dock.show_b_button.isChecked()
    assert c.actions["show_b"].isChecked()
    qtbot.waitUntil(lambda: doc_b.selection.state.node == d.node_b, timeout=TIMEOUT)
    assert w.canvas.selected_box() == w.canvas.drawable.node_box[d.node_b]
    shown = w.canvas.shown_overlay
    assert shown is not None and "B's graph" in shown.legend.title and "5 nodes only in A" in shown.legend.title
    assert [s[0] for s in shown.legend.swatches][:3] == ["renamed only", "changed", "added in B"]
    assert _box_colour(w, d.node_b) == COLOURS["node_added"]
    assert isinstance(dock.sides, SidesTable) and dock.sides.cell_text(1, 1) == "\u2014"  # A has no such node
    # A's edits are not offered on B's graph: a right-click there would edit A's node of the same position
    assert not w.editing.on_canvas()
    menu = QMenu()
    w.editing.add_context_actions(menu)
    assert menu.actions() == []
    with pytest.raises(EditError, match="Show B's Graph"):
        extract_selection(w.editing)
    # a node of B clicked on the canvas: both sides in the dock
    conv_b = next(j for j, n in enumerate(doc_b.index.main.nodes) if n.op_type == "Conv")
    doc_b.selection.select_node("", conv_b)
    assert isinstance(dock.sides, SidesTable) and dock.sides.cell_text(1, 1) == "Conv"
    assert dock.sides.changed_fields() == ["input 1", "input 2"]
    # a node only A has: back to A's graph, its box selected
    removed = next(k for k, d in enumerate(dock.differences) if d.kind == "node_removed")
    with qtbot.waitSignal(w.canvas.scene_ready, timeout=TIMEOUT):
        dock.list.setCurrentRow(removed)
    settle()
    assert not c.showing_b and w.canvas.doc is doc_a and not dock.show_b_button.isChecked()
    qtbot.waitUntil(lambda: doc_a.selection.state.node == dock.differences[removed].node_a, timeout=TIMEOUT)
    assert _box_colour(w, dock.differences[removed].node_a) == COLOURS["node_removed"]
    # the toggle, and closing the diff while B's graph is shown, bring A back
    with qtbot.waitSignal(w.canvas.scene_ready, timeout=TIMEOUT):
        dock.show_b_button.click()
    assert w.canvas.doc is doc_b
    with qtbot.waitSignal(w.canvas.scene_ready, timeout=TIMEOUT):
        c.close_diff()
    assert w.canvas.doc is doc_a and w.canvas.shown_overlay is None and not c.actions["show_b"].isChecked()
    # opening another model while B's graph is shown: the canvas shows the new model
    with qtbot.waitSignal(c.diff_shown, timeout=TIMEOUT):
        c.compare_with(EXPORTS / "resnet_int8_qdq.onnx")
    with qtbot.waitSignal(w.canvas.scene_ready, timeout=TIMEOUT):
        dock.show_b_button.click()
    open_and_wait(qtbot, w, EXPORTS / "vad_if.onnx")
    settle()
    assert w.canvas.doc is w.doc and w.doc is not doc_a and not c.active and not c.showing_b


def test_the_diff_menus_run_both_runs_both_models(qtbot: QtBot, make_window: Make) -> None:
    """Diff > Run Both, the menu's action (the dock's button is the other way): both models run on generated inputs,
    the action's ``triggered(checked)`` not taken for the inputs."""
    w = diff_window(qtbot, make_window, EXPORTS / "resnet_float.onnx", EXPORTS / "resnet_int8_qdq.onnx")
    c = w.diff
    failures: list[str] = []
    c.failed.connect(failures.append)
    with qtbot.waitSignal(c.runs_compared, timeout=TIMEOUT):
        c.actions["run_both"].trigger()
    settle()
    assert failures == [] and c.cross is not None and len(c.cross.diffs) >= 10


def test_run_both_with_inputs_feeds_the_picked_file_to_both_models(qtbot: QtBot, make_window: Make,
                                                                    tmp_path: Path) -> None:
    w = diff_window(qtbot, make_window, EXPORTS / "resnet_float.onnx", EXPORTS / "resnet_int8_qdq.onnx")
    c = w.diff
    image = np.linspace(-1, 1, 3 * 32 * 32, dtype=np.float32).reshape(1, 3, 32, 32)
    np.savez(tmp_path / "inputs.npz", image=image)
    c.dock.inputs_button.click()
    dialog = w.run_controller.inputs_dialog
    assert dialog is not None and not dialog.isHidden()
    dialog.load_npz(str(tmp_path / "inputs.npz"))
    with qtbot.waitSignal(c.runs_compared, timeout=TIMEOUT):
        dialog.run_button.click()
    settle()
    assert c.cross is not None
    np.testing.assert_array_equal(c.cross.result_a.array("image"), image)
    name_b = c.cross.alignment.main.value_b("image")
    assert name_b is not None
    np.testing.assert_array_equal(c.cross.result_b.array(name_b), image)  # B fed through the alignment
    assert max(d.rel_error for d in c.cross.diffs) < 0.2
    # the choice is remembered for A's next run
    assert w.run_controller.plans[str(doc_of(w).path)].choices["image"].source == "file"


def test_the_quantized_weights_tab_lists_weight_pairs_and_selects_a_weight(qtbot: QtBot, make_window: Make) -> None:
    w = diff_window(qtbot, make_window, EXPORTS / "resnet_float.onnx", EXPORTS / "resnet_int8_qdq.onnx")
    dock = w.diff.dock
    tab = dock.tabs.indexOf(dock.weights_table)
    assert dock.tabs.isTabVisible(tab) and dock.tabs.tabText(tab) == "Quantized weights (14)"
    table = dock.weights_table
    assert table.rowCount() == 14
    sqnr = [float(table.item(r, 5).text()) for r in range(14)]
    assert sqnr == sorted(sqnr) and 40 < sqnr[0] < 50   # worst first
    assert table.item(0, 1).text() == f"{table.item(0, 0).text()}_quantized (dequantized)"
    dock.tabs.setCurrentIndex(tab)
    table.setCurrentCell(0, 0)
    assert doc_of(w).selection.state.value == table.item(0, 0).text()
    assert "SQNR" in w.statusBar().currentMessage()
    weights_panel = find_dock(w, WEIGHTS)
    qtbot.waitUntil(lambda: weights_panel is not None and not weights_panel.visibleRegion().isEmpty(), timeout=TIMEOUT)
    # a float model against itself has no quantized weights: no tab
    w.diff.close_diff()
    with qtbot.waitSignal(w.diff.diff_shown, timeout=TIMEOUT):
        w.diff.compare_with(EXPORTS / "resnet_float.onnx")
    assert not dock.tabs.isTabVisible(tab) and dock.weights == []


def test_run_both_pairs_values_inside_the_if_branch_and_colours_its_nodes(qtbot: QtBot, make_window: Make,
                                                                          tmp_path: Path) -> None:
    m = onnx.load(EXPORTS / "vad_if.onnx")
    for node in m.graph.node:
        node.name = f"b_{node.name}"
    b = tmp_path / "vad_renamed.onnx"
    onnx.save(m, b)
    w = diff_window(qtbot, make_window, EXPORTS / "vad_if.onnx", b)
    c = w.diff
    with np.load(EXPORTS / "inputs" / "vad_if.npz") as f:
        feeds = {k: f[k] for k in f.files}
    with qtbot.waitSignal(c.runs_compared, timeout=TIMEOUT):
        c.run_both(feeds)
    settle()
    assert c.cross is not None
    body = {d.name.split("::")[0] for d in c.cross.diffs if d.name.partition("::")[0][:1].isdigit()}
    assert len(body) == 1  # the branch the runs took
    scope = body.pop()
    errors = c.cross.node_errors_a("rel_error")
    assert any(at[0] == scope for at in errors) and all(v == 0 for v in errors.values())
    # the body's node selected: its value in A and B
    gemm = next(k for k, n in enumerate(doc_of(w).index.graphs[scope].nodes) if n.op_type == "Gemm")
    w.canvas.reveal_node(scope, gemm)
    qtbot.waitUntil(lambda: doc_of(w).selection.state.node == gemm, timeout=TIMEOUT)
    assert "/Gemm_output_0" in c.dock.values.title.text() and "max |B\u2212A|" in c.dock.values.figures.text()
    assert w.canvas.shown_overlay is not None and w.canvas.shown_overlay.rgba[:, 3].any()
