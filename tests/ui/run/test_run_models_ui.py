"""Issue 17 in the window: the Run dialog and the run's failures for models of every kind."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QFormLayout
from pytestqt.qtbot import QtBot
from test_run_ui import TIMEOUT, _save, _window

from onnxviz.model.problems import Severity
from onnxviz.ui.run.input_sources import InputChoice, InputPlan
from onnxviz.ui.widgets.names import unbreak
from tests.model.runner.test_run_models import (
    bert_model,
    classifier_model,
    failing_model,
    paddle_model,
    strings_model,
)


def test_minus_one_size_is_a_warning_and_the_run_dialog_asks_it(qtbot: QtBot, tmp_path: Path) -> None:
    window, c = _window(qtbot, _save(paddle_model(), tmp_path / "paddle.onnx"))
    problems = window.panels.problems_panel  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: any("size -1" in p.message for p in problems.problems), timeout=TIMEOUT)
    assert {p.severity for p in problems.problems if "size -1" in p.message} == {Severity.WARNING}
    c.run()  # F9
    dialog = c.inputs_dialog
    assert dialog is not None and not dialog.isHidden()
    assert list(dialog.dim_boxes) == ["x[0]"]
    label = dialog.findChild(QFormLayout).labelForField(dialog.dim_boxes["x[0]"])
    assert label.text() == "x[0] (axis 0 of input 'x', declared -1):"
    assert "float32 [-1, 3]" in dialog.rows[0].name.text()
    dialog.dim_boxes["x[0]"].setValue(3)
    with qtbot.waitSignal(c.run_finished, timeout=TIMEOUT):
        dialog.run_button.click()
    assert c.result is not None and c.result.values["y"].shape == (3, 3)


def test_f9_runs_bert_on_generated_inputs(qtbot: QtBot, tmp_path: Path) -> None:
    window, c = _window(qtbot, _save(bert_model(), tmp_path / "bert.onnx"))
    c.run()  # F9: the dialog asks batch and seq once
    dialog = c.inputs_dialog
    assert dialog is not None
    labels = {row.spec.name: row.source.currentText() for row in dialog.rows}
    assert labels == {"input_ids": "Random 0 - 6", "position_ids": "Random 0 - 3", "token_type_ids": "Random 0 - 1",
                      "attention_mask": "Random 0 - 1"}
    dialog.dim_boxes["seq"].setValue(16)
    with qtbot.waitSignal(c.run_finished, timeout=TIMEOUT):
        dialog.run_button.click()
    assert c.result is not None and c.result.engine == "onnxruntime" and not c.result.notes
    assert c.result.values["probs"].shape == (1, 16, 16)


def test_strings_typed_in_the_run_dialog_feed_a_string_input(qtbot: QtBot, tmp_path: Path) -> None:
    window, c = _window(qtbot, _save(strings_model(), tmp_path / "text.onnx"))
    c.run(ask=True)
    dialog = c.inputs_dialog
    assert dialog is not None
    row = dialog.rows[0]
    assert [row.source.itemData(i) for i in range(row.source.count())] == ["text", "random", "zeros", "file"]
    assert row.text.isHidden() and not row.path.isHidden()
    row.source.setCurrentIndex(row.source.findData("text"))
    assert not row.text.isHidden() and row.path.isHidden()
    qtbot.keyClicks(row.text, "cat, dog, fish")
    with qtbot.waitSignal(c.run_finished, timeout=TIMEOUT):
        dialog.run_button.click()
    assert c.result is not None and c.result.array("label").ravel().tolist() == [0, 1, -1]
    c.run(ask=True)  # the typed strings are kept for the next run; one per line keeps commas
    row = c.inputs_dialog.rows[0]
    assert row.source.currentData() == "text" and row.text.toPlainText() == "cat, dog, fish"
    row.text.setPlainText("dog, cat\ndog")
    with qtbot.waitSignal(c.run_finished, timeout=TIMEOUT):
        c.inputs_dialog.run_button.click()
    assert c.result.array("same").ravel().tolist() == ["dog, cat", "dog"]
    assert c.result.array("is_dog").ravel().tolist() == [False, True]


def test_a_failing_run_names_and_selects_its_node(qtbot: QtBot, tmp_path: Path) -> None:
    window, c = _window(qtbot, _save(failing_model(), tmp_path / "bad.onnx"))
    c.plans[str(window.doc.path)] = InputPlan({"shape": InputChoice("ones")}, {})  # [1, 1]: 6 values cannot fit
    with qtbot.waitSignal(c.run_failed, timeout=TIMEOUT) as failed:
        c.run()
    assert "node 'impossible_reshape' (Reshape) failed" in failed.args[0]
    assert "impossible_reshape" in unbreak(c.failure_box.text())
    qtbot.waitUntil(lambda: window.doc.selection.state.node == 1, timeout=TIMEOUT)
    assert window.doc.selection.state.scope == ""


def test_dock_shows_a_zipmaps_sequence_of_maps_as_a_tree(qtbot: QtBot, tmp_path: Path) -> None:
    window, c = _window(qtbot, _save(classifier_model(), tmp_path / "classifier.onnx"))
    c.plans[str(window.doc.path)] = InputPlan({}, {"N": 2})
    with qtbot.waitSignal(c.run_finished, timeout=TIMEOUT):
        c.run()
    assert "3 values and 2 sequences or maps." in c.dock.summary.text() and "not" not in c.dock.summary.text()
    window.doc.selection.select_node("", 1)  # the ZipMap
    tree = c.dock.tree
    qtbot.waitUntil(lambda: not tree.isHidden(), timeout=TIMEOUT)
    assert c.dock.view.isHidden() and "sequence of 2 maps" in c.dock.facts.text()
    assert [tree.topLevelItem(k).text(0) for k in range(tree.topLevelItemCount())] == ["[0]", "[1]"]
    first = tree.topLevelItem(0)
    assert first.text(1) == "map of 3 entries" and [first.child(k).text(0) for k in range(3)] == ["0", "1", "2"]
    stored = c.result.structured_value("probabilities")
    assert float(first.child(1).text(1)) == pytest.approx(stored[0]["1"], rel=1e-5)
    window.doc.selection.select_node("", 2)  # SplitToSequence: a sequence of tensors
    row = c.result.structured_value("rows")[1]
    qtbot.waitUntil(lambda: tree.topLevelItemCount() == 2 and tree.topLevelItem(1).text(1) == str(row),
                    timeout=TIMEOUT)
    window.doc.selection.select_node("", 0)  # the classifier's tensors: the tensor view again
    qtbot.waitUntil(lambda: tree.isHidden() and not c.dock.view.isHidden(), timeout=TIMEOUT)
    assert [r.name for r in c.dock.records] == ["label", "scores"]
