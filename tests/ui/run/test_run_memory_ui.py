"""The window's side of runs and memory: the offer to capture a part when a capture would not fit, and the
values computed before a failing node shown with the failure."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from pytestqt.qtbot import QtBot
from window_fixtures import click_group

from onnxviz.model.runner.budget import capture_size, upstream_values
from onnxviz.model.runner.packing import static_shapes
from onnxviz.ui.main_window import MainWindow
from onnxviz.ui.run.controller import RunController
from onnxviz.ui.run.input_sources import InputPlan
from tests.model.runner.test_run_memory import failing_model

TIMEOUT = 30000


def _window(qtbot: QtBot, path: Path) -> tuple[MainWindow, RunController]:
    window = MainWindow()
    qtbot.addWidget(window)
    window.show()
    with qtbot.waitSignal(window.loading_finished, timeout=TIMEOUT):
        window.open_path(path)
    qtbot.waitUntil(lambda: window.canvas.drawable is not None)
    c: RunController = window.run_controller  # type: ignore[attr-defined]
    assert window.doc is not None
    c.plans[str(window.doc.path)] = InputPlan({}, {"batch": 1})  # no inputs dialog: generated, batch 1
    return window, c


def _limit_below_everything(window: MainWindow) -> int:
    """A memory limit the whole capture exceeds (the run holds it twice: in the worker, in shared memory)
    but its parts fit."""
    doc = window.doc
    assert doc is not None
    feeds = {"image": np.zeros((1, 3, 32, 32), np.float32)}
    return capture_size(doc.model, static_shapes(doc.model, feeds)).total()


def test_a_capture_too_big_offers_the_values_above_the_selected_node(qtbot: QtBot, example_path: Path) -> None:
    window, c = _window(qtbot, example_path)
    c.memory_limit = _limit_below_everything(window)
    window.doc.selection.select_node("", 2)
    c.run()
    qtbot.waitUntil(lambda: c.offer_dialog is not None and c.offer_dialog.isVisible(), timeout=TIMEOUT)
    dialog = c.offer_dialog
    buttons = dialog.buttons
    assert list(buttons) == ["upstream", "outputs", "all"] and buttons["upstream"].isChecked()
    assert dialog.intro.text().startswith("Capturing every value needs ")
    name = window.doc.model.graph.node[2].name
    assert f"selected node '{name}'" in buttons["upstream"].text()
    with qtbot.waitSignal(c.run_finished, timeout=TIMEOUT):
        dialog.run_button.click()
    assert c.result is not None
    produced = {k for k, r in c.result.values.items() if r.node >= 0}
    outputs = {o.name for o in window.doc.model.graph.output}
    assert produced == set(upstream_values(window.doc.model.graph.node, 2)) | outputs
    assert "a part was captured" in c.dock.summary.text()


def test_a_capture_too_big_offers_the_selected_groups_values(qtbot: QtBot, example_path: Path) -> None:
    window, c = _window(qtbot, example_path)
    c.memory_limit = _limit_below_everything(window)
    click_group(qtbot, window, "res")
    c.run()
    qtbot.waitUntil(lambda: c.offer_dialog is not None and c.offer_dialog.isVisible(), timeout=TIMEOUT)
    buttons = c.offer_dialog.buttons
    assert list(buttons) == ["group", "outputs", "all"] and "selected group 'res'" in buttons["group"].text()
    with qtbot.waitSignal(c.run_finished, timeout=TIMEOUT):
        c.offer_dialog.run_button.click()
    nodes = window.doc.model.graph.node
    res = {out for n in nodes if n.name.startswith("/res/") for out in n.output}
    outputs = {o.name for o in window.doc.model.graph.output}
    assert {k for k, r in c.result.values.items() if r.node >= 0} == res | outputs


def test_everything_anyway_runs_without_the_check(qtbot: QtBot, example_path: Path) -> None:
    window, c = _window(qtbot, example_path)
    c.memory_limit = 1
    c.run()
    qtbot.waitUntil(lambda: c.offer_dialog is not None and c.offer_dialog.isVisible(), timeout=TIMEOUT)
    buttons = c.offer_dialog.buttons
    assert not buttons["outputs"].isEnabled() and "does not fit either" in buttons["outputs"].text()
    buttons["all"].setChecked(True)
    with qtbot.waitSignal(c.run_finished, timeout=TIMEOUT):
        c.offer_dialog.run_button.click()
    assert len(c.result.values) == 25


def test_a_failed_run_shows_the_values_computed_before_the_failing_node(qtbot: QtBot, tmp_path: Path) -> None:
    onnx.save(failing_model(), tmp_path / "fails.onnx")
    window, c = _window(qtbot, tmp_path / "fails.onnx")
    with qtbot.waitSignal(c.run_failed, timeout=TIMEOUT) as failed:
        c.run()
    assert "node 'bad_reshape' (Reshape)" in failed.args[0]
    assert failed.args[0].endswith("The 3 values computed before that node are shown in the Activations panel.")
    assert c.result is not None and set(c.result.values) == {"x", "a", "side"}
    assert window.doc.selection.state.node == 1  # the failing node is selected
    assert "The run failed: " in c.dock.summary.text() and "values computed before that node" in c.dock.summary.text()
    with qtbot.waitSignal(c.dock.view.loaded, timeout=TIMEOUT):
        window.doc.selection.select_node("", 3)
    assert [r.name for r in c.dock.records] == ["side"]


def test_the_window_runs_a_model_whose_weights_stay_in_their_file(qtbot: QtBot, tmp_path: Path) -> None:
    from tests.model.runner.test_run_memory import FEEDS, _expected, external_model

    path = external_model(tmp_path)
    window, c = _window(qtbot, path)
    window.doc.edit.set_metadata("note", "an unsaved edit: the window hands the worker its own bytes")
    with qtbot.waitSignal(c.run_finished, timeout=TIMEOUT):
        c.runs.start(window.doc, FEEDS, "", None)
    expected = _expected(path, FEEDS)
    for name in ("xw", "y", "out"):
        np.testing.assert_allclose(c.result.array(name), expected[name], rtol=1e-5, atol=1e-6)
