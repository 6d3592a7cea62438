"""Issue 34 in the window: the Transform menu's dialog, the result as one undo step or a new window, the diff and
the summary after it, See What It Cost, nodes kept in float and quantized again, the variants; and a transform
that fails or is beyond the tolerance changes nothing. The walk-through goes round the whole loop on a small model."""

from __future__ import annotations

import contextlib
import math
import os
import signal
from collections.abc import Callable
from pathlib import Path

import onnx
import pytest
from conftest import TEST_DATA
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QMenu
from pytestqt.qtbot import QtBot
from window_fixtures import doc_of, open_and_wait, press_undo, settle

from onnxviz.model.transform import Outcome
from onnxviz.ui.main_window import MainWindow
from onnxviz.ui.transform.dialog import TransformDialog

EXPORTS = TEST_DATA / "exports"
RESNET = EXPORTS / "resnet_float.onnx"
TIMEOUT = 120000
Make = Callable[[], MainWindow]


def _transform(qtbot: QtBot, w: MainWindow, tool: str, setup: Callable[[TransformDialog], None] | None = None,
               ) -> Outcome:
    """Transform > TOOL..., the dialog filled by ``setup``, Transform clicked; waits for the result and its diff."""
    c = w.transforms
    action = c.actions[f"tool:{tool}"]
    action.trigger()
    dialog = _open_dialog(w)
    assert dialog.tool.currentData() == tool
    if setup is not None:
        setup(dialog)
    with qtbot.waitSignal(c.transformed, timeout=TIMEOUT) as done, qtbot.waitSignal(w.diff.diff_shown,
                                                                                     timeout=TIMEOUT):
        dialog.ok.click()
    qtbot.waitUntil(lambda: not w.canvas.busy, timeout=TIMEOUT)
    settle()
    outcome: Outcome = done.args[0]
    return outcome


def _open_dialog(w: MainWindow) -> TransformDialog:
    """The Transform dialog the window shows."""
    [dialog] = [d for d in w.findChildren(TransformDialog) if d.isVisible()]
    return dialog


def _see_cost(qtbot: QtBot, w: MainWindow) -> None:
    w.transforms.dock.runs.setValue(5)
    with qtbot.waitSignal(w.transforms.cost_shown, timeout=TIMEOUT):
        w.transforms.dock.cost_button.click()
    settle()


def _calibrated_on_the_sample(d: TransformDialog) -> None:
    d.files.addItem(str(EXPORTS / "inputs" / "resnet_float.npz"))


def test_the_whole_loop_on_a_small_model(qtbot: QtBot, make_window: Make, tmp_path: Path) -> None:
    """Quantize, see the diff and the summary, undo/redo, see what it cost, keep the worst layer in float and
    quantize again, compare the two quantized variants, use the float one again, save the second one."""
    w = make_window()
    open_and_wait(qtbot, w, RESNET)
    doc = doc_of(w)
    original = RESNET.read_bytes()
    c = w.transforms
    assert not c.dock.isVisible()

    # 1. quantize: the model replaced as one undo step, the diff and the summary open
    q1 = _transform(qtbot, w, "quantize-static", _calibrated_on_the_sample)
    assert doc.model.SerializeToString() == q1.data and doc.undo_stack.index == 1
    assert w.diff.active and w.diff.doc_b is not None and w.diff.doc_b.path.name == \
        "resnet_float (before quantize-static).onnx"
    assert c.dock.isVisible() and c.dock.tabs.currentIndex() == 0
    assert c.dock.title.text() == ("Quantize static (QDQ, uint8/int8): this model was replaced (Edit > Undo gives it "
                                   "back).")
    rows = {c.dock.ops.item(r, 0).text(): (c.dock.ops.item(r, 1).text(), c.dock.ops.item(r, 2).text())
            for r in range(c.dock.ops.rowCount())}
    assert rows["QuantizeLinear"] == ("0", str(sum(n.op_type == "QuantizeLinear" for n in doc.model.graph.node)))
    assert rows["Relu"] == ("5", "0") and rows["Conv"] == ("6", "6")
    assert "Outputs on 1 input sample" in c.dock.outputs.text() and not c.dock.notes.isVisible()
    # a click on an operator of the table selects its first difference on the canvas
    relu_row = next(r for r in range(c.dock.ops.rowCount()) if c.dock.ops.item(r, 0).text() == "Relu")
    qtbot.mouseClick(c.dock.ops.viewport(), Qt.MouseButton.LeftButton,
                     pos=c.dock.ops.visualItemRect(c.dock.ops.item(relu_row, 0)).center())
    chosen = w.diff.diff.differences[w.diff.dock.list.currentRow()]
    assert chosen.kind == "node_added" and "Relu" in chosen.text()  # a Relu only the model before has
    # the canvas says it in the transform's words (A is the result, B the model before: "removed in B" would mark
    # what the transform added): what it added is marked, what it removed dashed
    legend = w.canvas.legend
    assert legend is not None and legend.title.startswith("What the transform changed (")
    assert legend.title.endswith(" removed by the transform: dashed)")
    assert [s[0] for s in legend.swatches][:4] == ["renamed only", "changed", "added by the transform",
                                                   "removed by it (dashed)"]
    ghosts = [g for gs in w.diff.ghosts.values() for g in gs if not g.group]
    assert ghosts and {g.note for g in ghosts} == {"removed by the transform"}
    # and so do the Differences list and its summary
    listed = w.diff.dock.list.rows
    row = listed.index(listed.row_of[w.diff.dock.list.currentRow()], 0)
    assert str(listed.data(row)).startswith("node removed by the transform: ") and "Relu" in str(listed.data(row))
    added = next(k for k, d in enumerate(w.diff.diff.differences) if d.kind == "node_removed")
    assert str(listed.data(listed.index(listed.row_of[added], 0))).startswith("node added by the transform: ")
    assert "node removed by the transform (" in w.diff.dock.summary.text()
    assert "node_added" not in w.diff.dock.summary.text()

    # 2. undo gives the bytes back exactly, redo the result
    press_undo(qtbot, w)
    assert doc.serialize() == original and not doc.is_dirty
    doc.redo()
    settle()
    assert doc.model.SerializeToString() == q1.data

    # 3. what it cost: each layer against the model before, worst first, and both models timed
    _see_cost(qtbot, w)
    layers = c.dock.layers
    assert len(layers) >= 9 and c.dock.tabs.currentIndex() == 1
    assert [x.sqnr_db for x in layers] == sorted(x.sqnr_db for x in layers)
    assert "Before (resnet_float (original))" in c.dock.timing.text() and "ms (median of 5" in c.dock.timing.text()
    q1_variant = c.variants.get(c.after_key)
    assert q1_variant is not None and math.isfinite(q1_variant.speed_ms) and math.isfinite(q1_variant.worst_sqnr)
    # a row selects its node on the canvas
    worst_conv = next(k for k, x in enumerate(layers) if x.op == "Conv")
    c.dock.layer_table.selectRow(worst_conv)
    c.show_layer(worst_conv)
    qtbot.waitUntil(lambda: doc.selection.state.node == layers[worst_conv].at_after[1], timeout=TIMEOUT)
    assert doc.model.graph.node[doc.selection.state.node].name == layers[worst_conv].after_node

    # 4. keep the worst Conv in float and quantize again, from the float model
    c.keep_layers_in_float([worst_conv])
    excluded = layers[worst_conv].before_node
    assert c.excluded == (excluded,) and "1 node kept in float" in w.statusBar().currentMessage()
    with qtbot.waitSignal(c.transformed, timeout=TIMEOUT) as again, qtbot.waitSignal(w.diff.diff_shown,
                                                                                      timeout=TIMEOUT):
        c.dock.requantize_button.click()
    q2: Outcome = again.args[0]
    settle()
    assert q2.settings.exclude == (excluded,) and doc.model.SerializeToString() == q2.data
    node = next(n for n in doc.model.graph.node if n.name == excluded)
    assert node.input[1] in {t.name for t in doc.model.graph.initializer}  # its weight stayed float
    assert doc.undo_stack.index == 2  # one step per transform

    # 5. the variants: the float model and both quantizations, the second one shown
    c.dock.tabs.setCurrentIndex(2)
    names = [c.dock.variant_table.item(r, 0).text() for r in range(c.dock.variant_table.rowCount())]
    assert names == ["resnet_float (original)", "Quantize static (QDQ, uint8/int8)",
                     "Quantize static (QDQ, uint8/int8, 1 in float) #2  (shown)"]
    # compare the two quantized versions with each other
    c.dock.variant_table.selectRow(1)
    with qtbot.waitSignal(w.diff.diff_shown, timeout=TIMEOUT):
        c.dock.variant_action.emit("compare", c.dock.variant_keys[1])
    assert w.diff.doc_b is not None and w.diff.doc_b.path == c.variants.get(c.dock.variant_keys[1]).path
    # use the float model again: one more undo step, its bytes exactly
    c.variant_action("use", c.dock.variant_keys[0])
    settle()
    assert doc.model.SerializeToString() == original and doc.undo_stack.index == 3
    assert c.dock.variant_table.item(0, 0).text().endswith("(shown)")
    # measure the second one against the float model it was made from: its row gets its figures
    with qtbot.waitSignal(c.cost_shown, timeout=TIMEOUT):
        c.variant_action("measure", c.dock.variant_keys[2])
    q2_variant = c.variants.get(c.dock.variant_keys[2])
    assert q2_variant is not None and math.isfinite(q2_variant.worst_sqnr) and math.isfinite(q2_variant.speed_ms)
    assert excluded in {layer.before_node for layer in c.dock.layers}
    # and save the second quantization
    target = tmp_path / "chosen.onnx"
    qtbot_dialogs(qtbot, w, target, lambda: c.variant_action("save", c.dock.variant_keys[2]))
    assert onnx.load(target).SerializeToString() == q2.data
    # closing the model ends the session: its files and its process go
    folder, pids = c.variants.data_path(c.dock.variant_keys[0]).parent.parent, c.transformer.pids
    assert folder.is_dir() and pids
    w.set_document(None)
    assert not folder.exists() and c.variants.items == []
    qtbot.waitUntil(lambda: not any(Path(f"/proc/{pid}").exists() for pid in pids), timeout=10000)


def qtbot_dialogs(qtbot: QtBot, w: MainWindow, target: Path, act: Callable[[], None]) -> None:
    """Run ``act``, answering its save dialog with ``target``."""
    import unittest.mock

    with unittest.mock.patch("onnxviz.ui.transform.variant_actions.QFileDialog.getSaveFileName",
                             return_value=(str(target), "")):
        act()
    settle()
    qtbot.waitUntil(target.exists, timeout=TIMEOUT)


def test_a_new_window_keeps_this_model_and_diffs_it_with_the_result(qtbot: QtBot, make_window: Make) -> None:
    w = make_window()
    open_and_wait(qtbot, w, EXPORTS / "bert_legacy.onnx")
    doc = doc_of(w)

    def new_window(d: TransformDialog) -> None:
        d.window_choice.setChecked(True)

    outcome = _transform(qtbot, w, "onnxslim", new_window)
    assert doc.serialize() == (EXPORTS / "bert_legacy.onnx").read_bytes() and doc.undo_stack.index == 0
    [new] = w.transforms.windows
    qtbot.addWidget(new)
    assert new.isVisible() and new.doc is not None and new.doc.is_dirty and new.doc.path is None
    assert new.windowTitle() == "bert_legacy (onnxslim).onnx[*] - onnxviz"
    assert new.doc.model.SerializeToString() == outcome.data
    # this window's diff: A the model before (this one), B the result
    assert w.diff.doc_b is not None and w.diff.doc_b.path.name == "bert_legacy (onnxslim).onnx"
    assert "Diff: A is this model (before the transform), B its result." in w.transforms.dock.headline.text()
    new.set_document(None)


def test_beyond_the_tolerance_or_a_failure_changes_nothing(qtbot: QtBot, make_window: Make,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    w = make_window()
    open_and_wait(qtbot, w, RESNET)
    doc = doc_of(w)
    shown: list[tuple[str, str]] = []
    monkeypatch.setattr(w, "show_error", lambda title, message, details="": shown.append((message, details)))
    c = w.transforms

    def strict(d: TransformDialog) -> None:
        d.min_sqnr.setText("200")

    c.actions["tool:quantize-static"].trigger()
    dialog = _open_dialog(w)
    strict(dialog)
    with qtbot.waitSignal(c.failed, timeout=TIMEOUT):
        dialog.ok.click()
    settle()
    message, details = shown[-1]
    assert message.startswith("Quantize static (QDQ, uint8/int8) changed output 'logits' beyond the tolerance")
    assert message.endswith("so its result was not used. The model is unchanged.")
    assert "logits: max abs" in details
    assert doc.undo_stack.index == 0 and doc.serialize() == RESNET.read_bytes() and not w.diff.active

    # a version the converter cannot reach: one sentence, nothing changed
    c.actions["tool:opset"].trigger()
    dialog = _open_dialog(w)
    dialog.opset.setValue(1)
    with qtbot.waitSignal(c.failed, timeout=TIMEOUT):
        dialog.ok.click()
    assert shown[-1][0].startswith("Onnx's version converter could not convert the model to opset 1") or \
        shown[-1][0].startswith("onnx's version converter could not convert the model to opset 1")
    assert doc.undo_stack.index == 0


def test_cancel_stops_the_transform_and_changes_nothing(qtbot: QtBot, make_window: Make) -> None:
    w = make_window()
    open_and_wait(qtbot, w, EXPORTS / "bert_legacy.onnx")
    doc = doc_of(w)
    c = w.transforms
    c.actions["tool:quantize-static"].trigger()
    dialog = _open_dialog(w)
    dialog.samples.setValue(1000)  # seconds of calibration; MinMax never fails on its own (entropy does, at once)
    dialog.method.setCurrentText("minmax")
    dialog.ok.click()
    task = c.task
    assert task is not None
    qtbot.waitUntil(lambda: bool(c.transformer.pids), timeout=TIMEOUT)
    pids = c.transformer.pids
    assert c.actions["cancel"].isEnabled()
    with qtbot.waitSignal(task.cancelled, timeout=TIMEOUT):
        c.actions["cancel"].trigger()
    qtbot.waitUntil(lambda: c.transformer.pids != pids, timeout=10000)
    assert doc.undo_stack.index == 0 and "cancelled; the model is unchanged" in w.statusBar().currentMessage()


def test_a_crash_or_an_edit_meanwhile_changes_nothing(qtbot: QtBot, make_window: Make,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from onnxviz.model.matching import Limits
    from onnxviz.model.transform import Settings
    from onnxviz.ui.transform.dialog import Request

    w = make_window()
    open_and_wait(qtbot, w, EXPORTS / "bert_legacy.onnx")
    doc = doc_of(w)
    shown: list[str] = []
    monkeypatch.setattr(w, "show_error", lambda title, message, details="": shown.append(message))
    c = w.transforms
    slow = Settings("quantize-static", samples=1000, calibration_method="minmax")  # seconds, and never fails alone
    task = c.start(Request(slow, Limits(elementwise=None)))
    assert task is not None
    steps: list[str] = []
    killer = QTimer(interval=50)  # from the step's start until the failure: a process killed just before the step
    killer.timeout.connect(lambda: _kill(c.transformer.pids))  # was sent is replaced silently: kill again
    task.progress.connect(lambda _fraction, text: killer.start() if text.startswith("Quantize") else None)
    with qtbot.waitSignal(c.failed, timeout=TIMEOUT):
        pass
    killer.stop()
    assert shown[-1].startswith("The transform's process ended unexpectedly during 'Quantize static")
    assert shown[-1].endswith("; the model is unchanged.") and doc.undo_stack.index == 0
    # the next transform runs; an edit made while it runs keeps its result out
    task = c.start(Request(Settings("onnxslim"), Limits()))
    assert task is not None
    task.progress.connect(lambda _fraction, text: steps.append(text))
    qtbot.waitUntil(lambda: "Slim with onnxslim" in steps, timeout=TIMEOUT)  # the model was handed over
    doc.edit.rename_node(0, "renamed meanwhile")
    with qtbot.waitSignal(task.finished, timeout=TIMEOUT):
        pass
    settle()
    assert "The model changed while the transform ran" in w.statusBar().currentMessage()
    assert doc.undo_stack.index == 1 and doc.undo_stack.undo_label().startswith("Rename")


def _kill(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def test_the_dialog_says_how_to_install_a_missing_library(qtbot: QtBot, make_window: Make,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "onnxscript" else real(name, *a))
    w = make_window()
    open_and_wait(qtbot, w, RESNET)
    dialog = w.transforms.open_dialog("onnxscript")
    assert dialog is not None
    assert dialog.missing.isVisible() and not dialog.ok.isEnabled()
    assert "pip install 'onnxviz[transform]'" in dialog.missing.text()
    dialog.tool.setCurrentIndex(dialog.tool.findData("ort-optimize"))  # onnxruntime's own: always there
    assert not dialog.missing.isVisible() and dialog.ok.isEnabled()
    dialog.reject()


def test_keep_a_group_in_float(qtbot: QtBot, make_window: Make) -> None:
    """A name-scope group selected on the canvas: every node of it is kept in float."""
    from window_fixtures import click_group

    w = make_window()
    open_and_wait(qtbot, w, RESNET)
    qtbot.waitUntil(lambda: not w.canvas.busy, timeout=TIMEOUT)
    click_group(qtbot, w, "layer1")
    nodes = w.canvas.selected_nodes()
    names = [doc_of(w).model.graph.node[i].name for i in nodes]
    assert len(nodes) == 5 and all(n.startswith("/layer1/") for n in names)
    menu = QMenu()
    w.transforms.add_context_actions(menu)
    next(a for a in menu.actions() if a.text() == "&Keep Selection in Float").trigger()
    assert w.transforms.excluded == tuple(names)
    outcome = _transform(qtbot, w, "quantize-static")
    quantized = onnx.load_from_string(outcome.data)
    weights = {t.name for t in quantized.graph.initializer if t.data_type == onnx.TensorProto.FLOAT}
    convs = [n for n in quantized.graph.node if n.op_type == "Conv"]
    assert {n.name for n in convs if n.input[1] in weights} == {"/layer1/conv1/Conv", "/layer1/conv2/Conv"}


def test_keep_in_float_from_the_canvas_menu(qtbot: QtBot, make_window: Make) -> None:
    w = make_window()
    open_and_wait(qtbot, w, RESNET)
    doc = doc_of(w)
    position = next(k for k, n in enumerate(doc.model.graph.node) if n.name == "/layer2/conv1/Conv")
    qtbot.waitUntil(lambda: not w.canvas.busy, timeout=TIMEOUT)
    w.canvas.reveal_node("", position)
    assert w.canvas.selected_nodes() == [position]
    menu = QMenu()
    w.transforms.add_context_actions(menu)
    keep = next(a for a in menu.actions() if a.text() == "&Keep Selection in Float")
    keep.trigger()
    assert w.transforms.excluded == ("/layer2/conv1/Conv",)
    outcome = _transform(qtbot, w, "quantize-dynamic")
    assert outcome.settings.exclude == ("/layer2/conv1/Conv",)
    # on the quantized graph, a quantized node maps back to its float node (through the diff's pairing)
    quantized = next(k for k, n in enumerate(doc.model.graph.node) if n.name == "/layer1/conv1/Conv_quant")
    assert doc.model.graph.node[quantized].op_type == "ConvInteger"
    assert w.transforms.keep_in_float([quantized]) == ["/layer1/conv1/Conv"]
    assert w.transforms.excluded == ("/layer2/conv1/Conv", "/layer1/conv1/Conv")
    QApplication.processEvents()


def test_names_from_the_file_are_shown_escaped(qtbot: QtBot, make_window: Make, tmp_path: Path) -> None:
    """An output and a node named with a newline and a right-to-left override: the dock shows them escaped."""
    from onnx import TensorProto, helper

    from onnxviz.model.matching import Limits
    from onnxviz.model.transform import Settings
    from onnxviz.ui.transform.dialog import Request

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("out\nput\u202e", TensorProto.FLOAT, [2, 3])
    nodes = [helper.make_node("Identity", ["x"], ["t"], name="copy"),
             helper.make_node("Relu", ["t"], ["out\nput\u202e"], name="evil\nname")]
    path = tmp_path / "names.onnx"
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y]), opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    w = make_window()
    open_and_wait(qtbot, w, path)
    c = w.transforms
    with qtbot.waitSignal(c.transformed, timeout=TIMEOUT), qtbot.waitSignal(w.diff.diff_shown, timeout=TIMEOUT):
        c.start(Request(Settings("onnxslim"), Limits()))
    settle()
    text = c.dock.outputs.text().replace("\u200b", "")  # the label's break opportunities
    assert "out\\x0aput\\u202e: max abs 0" in text and "\u202e" not in text and text.count("\n") == 1
    rows = [c.dock.ops.item(r, 0).text() for r in range(c.dock.ops.rowCount())]
    assert rows[0] == "Identity" and c.dock.ops.item(0, 3).text() == "-1"


def test_the_menu_is_there_from_the_start_and_the_transforms_load_on_first_use(qtbot: QtBot, make_window: Make) -> None:
    """The Transform menu (before Help) and its actions are the window's from its first frame; the controller, its
    dock and the transform modules come with the first action triggered, or with the menu about to show."""
    from onnxviz.model.transform import TOOLS

    w, other = make_window(), make_window()
    open_and_wait(qtbot, w, RESNET)
    f = w.transform_feature
    titles = [a.text() for a in w.menuBar().actions()]
    assert titles.index("&Transform") == titles.index("&Help") - 1
    assert f.controller.made is None and other.transform_feature.controller.made is None
    texts = [a.text() for a in f.menu.actions()]
    assert all(tool.title + "..." in texts for tool in TOOLS.values()) and "Transform" not in texts
    assert f.actions["tool:opset"].isEnabled() and not f.actions["cost"].isEnabled()
    assert not other.transform_feature.actions["tool:opset"].isEnabled()  # no model there
    f.actions["tool:opset"].trigger()
    assert f.controller.made is not None and f.actions is w.transforms.actions
    dialog = _open_dialog(w)
    assert dialog.tool.currentData() == "opset"
    dialog.reject()
    assert f.menu.actions()[-1] is w.transforms.dock.toggleViewAction()
    other.transform_feature.menu.aboutToShow.emit()
    assert other.transform_feature.controller.made is not None
    assert other.transform_feature.menu.actions()[-1] is other.transforms.dock.toggleViewAction()
