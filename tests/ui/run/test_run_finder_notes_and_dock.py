"""Issue 17's small things: NaN only and Next in the NaN/Inf finder, the note on a quantized model run
unfused, and room for the heatmap in the default dock layout."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import TEST_DATA
from onnx import TensorProto, helper, numpy_helper
from pytestqt.qtbot import QtBot
from test_run_memory_ui import TIMEOUT, _window

EXPORTS = TEST_DATA / "exports"


def inf_then_nan_model() -> onnx.ModelProto:
    """relu, log (-Inf where x <= 0), times 0 (NaN there), plus 1 (NaN), exp of x (finite)."""
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="relu"), helper.make_node("Log", ["a"], ["b"], name="log"),
             helper.make_node("Mul", ["b", "zero"], ["c"], name="times_zero"),
             helper.make_node("Add", ["c", "one"], ["d"], name="plus_one"),
             helper.make_node("Exp", ["x"], ["e"], name="exp"), helper.make_node("Add", ["d", "e"], ["y"], name="sum")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
                              [numpy_helper.from_array(np.array(0, np.float32), "zero"),
                               numpy_helper.from_array(np.array(1, np.float32), "one")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=9)


def test_first_and_next_nan_inf_step_through_the_nodes_in_order(qtbot: QtBot, tmp_path: Path) -> None:
    onnx.save(inf_then_nan_model(), tmp_path / "m.onnx")
    window, c = _window(qtbot, tmp_path / "m.onnx")
    with qtbot.waitSignal(c.run_finished, timeout=TIMEOUT):
        c.run()
    dock, selection = c.dock, window.doc.selection
    assert dock.nan_button.text() == "First NaN/Inf" and dock.next_button.isEnabled()
    dock.nan_button.click()
    assert selection.state.node == 1  # log: -Inf
    visited = []
    for _ in range(3):
        dock.next_button.click()
        visited.append(selection.state.node)
    assert visited == [2, 3, 5]  # times_zero, plus_one, sum (exp, node 4, is finite)
    dock.next_button.click()
    assert selection.state.node == 5 and "after the selected node has NaN/Inf" in window.statusBar().currentMessage()
    dock.nan_only.setChecked(True)
    assert dock.nan_button.text() == "First NaN"
    dock.nan_button.click()
    assert selection.state.node == 2  # the Inf of log is passed over
    selection.select_node("", 0)
    dock.next_button.click()
    assert selection.state.node == 2


def test_the_first_run_gives_the_activations_dock_most_of_the_column(qtbot: QtBot, example_path: Path) -> None:
    """The heatmap is as tall as the room under the statistics: with a third of the column for the inspector
    it was 160 px high in a 1400 x 860 window, now 270."""
    from onnxviz.ui.widgets.heatmap import HeatmapPlot

    window, c = _window(qtbot, example_path)
    window.resize(1400, 860)
    with qtbot.waitSignal(c.run_finished, timeout=TIMEOUT):
        c.run()
    with qtbot.waitSignal(c.dock.view.loaded, timeout=TIMEOUT):
        window.doc.selection.select_node("", 2)
    tabs = c.dock.view.tabs
    tabs.setCurrentIndex(next(i for i in range(tabs.count()) if tabs.tabText(i) == "Slices"))
    qtbot.waitUntil(lambda: any(p.isVisible() and p.height() >= 240 for p in c.dock.findChildren(HeatmapPlot)),
                    timeout=TIMEOUT)


def _exported(name: str) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    with np.load(EXPORTS / "inputs" / f"{name}.npz") as saved:
        return onnx.load(str(EXPORTS / f"{name}.onnx")), dict(saved)


def test_a_quantized_model_run_unfused_notes_how_far_an_optimized_session_is() -> None:
    from onnxviz.model.runner import RunOptions
    from onnxviz.model.runner.capture import capture

    model, feeds = _exported("mlp_int4_matmulnbits")
    note = next(n for n in capture(model, feeds).notes if n.startswith("this quantized model ran without graph "))
    assert "into integer kernels; here its outputs differ from these by up to " in note and "(max abs, 'y')" in note
    model, feeds = _exported("resnet_int8_qdq")
    assert any(n.endswith("here its outputs are the same as these.") for n in capture(model, feeds).notes)
    assert not any("quantized" in n for n in capture(model, feeds, RunOptions(optimized=True)).notes)
    model, feeds = _exported("resnet_float")
    assert not any("quantized" in n for n in capture(model, feeds).notes)


def test_a_big_quantized_model_is_only_told_its_outputs_may_differ(monkeypatch: pytest.MonkeyPatch) -> None:
    from onnxviz.model.runner import capture as capture_module

    monkeypatch.setattr(capture_module, "FUSED_CHECK_BYTES", 1000)  # the int4 MLP's weights are bigger
    model, feeds = _exported("mlp_int4_matmulnbits")
    notes = capture_module.capture(model, feeds).notes
    assert any(n.endswith("so its outputs may differ from these (Run > Optimized Session shows the fused values).")
               for n in notes)
