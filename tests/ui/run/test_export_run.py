"""Run > Export All Values: a finished run's values written into a folder as ``onnxviz run --dump`` writes them
(values.bin, index.json, strings a .npy each, the run's table), copied from where the window keeps them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import dumped
from onnx import TensorProto, helper
from PySide6.QtWidgets import QFileDialog
from pytestqt.qtbot import QtBot
from test_run_ui import TIMEOUT, _menu_action, _window

from onnxviz.model.errors import Cancelled
from onnxviz.model.progress import CancelToken
from onnxviz.model.runner.capture import Captured
from onnxviz.model.runner.store import RunResult, export_run, write_result
from tests.model.runner.test_runner_store import _values


def _window_run(tmp_path: Path) -> tuple[RunResult, dict[str, np.ndarray]]:
    """A run as the window keeps it: its table in one folder, its values packed into a file elsewhere (shared
    memory), strings a .npy each beside the table."""
    values = _values()
    captured = Captured(values=values, engines={n: "onnxruntime" for n in values},
                        producers={n: -1 for n in values}, outputs=["normal"], engine="onnxruntime")
    graph = helper.make_graph([], "g", [], [helper.make_tensor_value_info("normal", TensorProto.FLOAT, None)])
    (tmp_path / "shm").mkdir()
    write_result(captured, helper.make_model(graph), tmp_path / "run", tmp_path / "shm")
    return RunResult.load(tmp_path / "run"), values


def test_every_value_is_exported_as_a_dump_holds_it(tmp_path: Path) -> None:
    result, values = _window_run(tmp_path)
    assert result.pack_path is not None and result.pack_path.parent == tmp_path / "shm"
    folder = tmp_path / "export"
    fractions: list[float] = []
    assert export_run(result, folder, lambda f, _t: fractions.append(f)) == len(values)
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    index = json.loads((folder / "index.json").read_text())
    assert set(index["values"]) == set(values) and index["pack"] == "values.bin"
    for name, array in values.items():  # read as the README says a dump is read, and as a run is loaded
        np.testing.assert_array_equal(dumped(folder, name), array)
        assert index["values"][name]["shape"] == list(array.shape)
    again = RunResult.load(folder)
    assert again.pack_path == folder / "values.bin"
    for name, array in values.items():
        np.testing.assert_array_equal(again.array(name), array)
    assert {p.name for p in (tmp_path / "shm").iterdir()} == {"values.bin"}  # the run's own files stay
    assert RunResult.load(tmp_path / "run").array("normal").shape == values["normal"].shape


def test_a_cancelled_export_leaves_nothing(tmp_path: Path) -> None:
    result, _values_ = _window_run(tmp_path)
    token = CancelToken()
    token.cancel()
    folder = tmp_path / "export"
    with pytest.raises(Cancelled):
        export_run(result, folder, token=token)
    assert list(folder.iterdir()) == []


def test_a_folder_holding_a_dump_is_refused(tmp_path: Path) -> None:
    result, _values_ = _window_run(tmp_path)
    folder = tmp_path / "export"
    folder.mkdir()
    (folder / "index.json").write_text("the user's")
    with pytest.raises(Exception, match="already holds index.json; choose an empty folder"):
        export_run(result, folder)
    assert [p.name for p in folder.iterdir()] == ["index.json"] and (folder / "index.json").read_text() == "the user's"


def test_run_menu_exports_every_value_of_the_window_run(qtbot: QtBot, example_path: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    window, c = _window(qtbot, example_path)
    export = _menu_action(window, "Export All Values...")
    assert not export.isEnabled()  # nothing ran yet
    c.plans.clear()
    with qtbot.waitSignal(c.run_finished, timeout=TIMEOUT):
        _menu_action(window, "Run").trigger()
        if c.inputs_dialog is not None and not c.inputs_dialog.isHidden():
            c.inputs_dialog.run_button.click()
    assert c.result is not None and export.isEnabled()
    folder = tmp_path / "values"
    folder.mkdir()
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *_a, **_k: str(folder))
    export.trigger()
    qtbot.waitUntil(lambda: c.task is None, timeout=TIMEOUT)
    assert window.statusBar().currentMessage() == f"Wrote {len(c.result.values)} values to {folder} (index.json)."
    index = json.loads((folder / "index.json").read_text())
    assert set(index["values"]) == set(c.result.values)
    for key in c.result.values:
        np.testing.assert_array_equal(dumped(folder, key), c.result.array(key))
