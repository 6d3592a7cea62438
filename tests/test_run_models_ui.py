"""Issue 17 in the window: the Run dialog and the run's failures for models of every kind."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from onnxviz.model.problems import Severity
from tests.test_run_models import paddle_model
from tests.test_run_ui import TIMEOUT, _save, _window


def test_minus_one_size_is_a_warning_and_the_run_dialog_asks_it(qtbot: QtBot, tmp_path: Path) -> None:
    window, c = _window(qtbot, _save(paddle_model(), tmp_path / "paddle.onnx"))
    problems = window.panels.problems_panel  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: any("size -1" in p.message for p in problems.problems), timeout=TIMEOUT)
    assert {p.severity for p in problems.problems if "size -1" in p.message} == {Severity.WARNING}
    c.run()  # F9
    dialog = c.inputs_dialog
    assert dialog is not None and not dialog.isHidden()
    assert list(dialog.dim_boxes) == ["x[0]"]
    assert "float32 [-1, 3]" in dialog.rows[0].name.text()
    dialog.dim_boxes["x[0]"].setValue(3)
    with qtbot.waitSignal(c.run_finished, timeout=TIMEOUT):
        dialog.run_button.click()
    assert c.result is not None and c.result.values["y"].shape == (3, 3)
