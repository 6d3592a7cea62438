"""In the window: a comparison or diff that is replaced updates every panel that showed the old one, Run Both
and comparisons over several samples, sizes chosen for generated inputs and offered for the next run, what
an optimized run ran, and the Differences list's filter."""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
from conftest import TEST_DATA
from pytestqt.qtbot import QtBot
from size_models import baked_reshape
from window_fixtures import diff_window, doc_of, open_and_wait, settle

from onnxviz.ui.main_window import MainWindow
from onnxviz.ui.widgets.names import unbreak

EXPORTS = TEST_DATA / "exports"
FLOAT, QDQ = EXPORTS / "resnet_float.onnx", EXPORTS / "resnet_int8_qdq.onnx"
TIMEOUT = 60000
Make = Callable[[], MainWindow]


def _summary(run: object) -> str:
    return html.unescape(unbreak(run.dock.summary.text()))  # type: ignore[attr-defined]


def _renamed(path: Path, tmp_path: Path, name: str) -> Path:
    model = onnx.load(str(path))
    for i, node in enumerate(model.graph.node):
        node.name = f"{name}_{i}"
    out = tmp_path / f"{name}.onnx"
    onnx.save(model, out)
    return out


def test_a_second_compare_with_replaces_the_activations_panels_comparison(qtbot: QtBot, make_window: Make,
                                                                           tmp_path: Path) -> None:
    """After File > Compare With another model, the Activations panel still showed the previous comparison."""
    w = diff_window(qtbot, make_window, FLOAT, QDQ)
    run, diff = w.run_controller, w.diff
    with qtbot.waitSignal(diff.runs_compared, timeout=TIMEOUT):
        diff.dock.run_button.click()
    settle()
    assert run.result is diff.cross.result_a and run.other is diff.cross.result_b  # A vs B in the panel too
    assert "Compared with resnet_int8_qdq.onnx (B)" in _summary(run)
    low = min(diff.cross.diffs, key=lambda d: d.sqnr_db)  # the headline is the worst layer by SQNR, as compare's
    assert f"lowest SQNR {low.sqnr_db:.2f} dB (<b>{low.name}</b>)" in _summary(run)
    first_run = Path(diff.cross.result_a.directory)
    node = next(i for i, n in enumerate(doc_of(w).index.main.nodes) if n.name == "/layer2/Relu_1")
    doc_of(w).selection.select_node("", node)
    assert run.dock.records and not run.dock.tabs.tabBar().isHidden()  # "Both runs: A, B, B - A" offered
    other = _renamed(FLOAT, tmp_path, "copy")
    with qtbot.waitSignal(diff.diff_shown, timeout=TIMEOUT):
        diff.compare_with(other)
    settle()
    assert run.result is None and run.other is None and run.diffs is None and not run.dock.records
    assert not first_run.exists()  # the old comparison's runs are gone, and no panel reads them
    said = _summary(run)
    assert "resnet_int8_qdq" not in said and "File > Compare With... opened copy.onnx" in said
    with qtbot.waitSignal(diff.runs_compared, timeout=TIMEOUT):
        diff.dock.run_button.click()
    settle()
    assert "Compared with copy.onnx (B)" in _summary(run) and run.other is diff.cross.result_b
    assert all(d.max_abs_error == 0 for d in run.diffs or [])  # a renamed copy computes the same values
    diff.close_diff()
    assert run.result is None and "The diff was closed" in _summary(run)


def test_compare_with_model_then_a_diff_of_another_model_keeps_only_this_models_run(qtbot: QtBot,
                                                                                   make_window: Make,
                                                                                   tmp_path: Path) -> None:
    w = make_window()
    open_and_wait(qtbot, w, FLOAT)
    run = w.run_controller
    with qtbot.waitSignal(run.run_finished, timeout=TIMEOUT):
        run.run(compare="file", other_path=QDQ)
    own, other = run.result, run.other
    assert own is not None and other is not None and "Compared with resnet_int8_qdq.onnx" in _summary(run)
    with qtbot.waitSignal(w.diff.diff_shown, timeout=TIMEOUT):
        w.diff.compare_with(_renamed(FLOAT, tmp_path, "copy"))
    settle()
    assert run.result is own and run.other is None and run.diffs is None
    assert not Path(other.directory).exists() and Path(own.directory).exists()
    summary = _summary(run)
    assert "Compared with resnet_int8_qdq" not in summary and "File > Compare With... opened copy.onnx" in summary
    assert run.dock.tabs.tabBar().isHidden()  # no "Both runs" page left to show the old pair


def test_run_both_over_samples_gives_each_pairs_worst(qtbot: QtBot, make_window: Make, tmp_path: Path) -> None:
    from onnxviz.model.matching import compare_models

    w = diff_window(qtbot, make_window, FLOAT, QDQ)
    c = w.diff
    images = [np.random.default_rng([k, 3]).standard_normal((1, 3, 32, 32)).astype(np.float32) * (k + 1)
              for k in range(2)]
    for k, image in enumerate(images):
        np.savez(tmp_path / f"s{k}.npz", image=image)
    c.dock.inputs_button.click()
    dialog = w.run_controller.inputs_dialog
    assert dialog is not None
    dialog.choose_samples([str(tmp_path)])
    assert dialog.samples_label.text().startswith("2 samples from")
    with qtbot.waitSignal(c.runs_compared, timeout=TIMEOUT):
        dialog.run_button.click()
    settle()
    assert c.over is not None and c.over.labels == ["s0.npz", "s1.npz"]
    np.testing.assert_array_equal(c.cross.result_a.array("image"), images[1])  # the last sample's values shown
    doc_a, doc_b = doc_of(w), c.doc_b
    singles = []
    for image in images:
        cross = compare_models(doc_a.index, doc_b.index, {"image": image}, alignment=c.diff.alignment)
        singles.append({(d.name, d.other): d.rel_error for d in cross.diffs})
        cross.cleanup()
    for d in c.cross.diffs:
        assert d.rel_error == max(s[(d.name, d.other)] for s in singles)
    assert "over 2 samples" in w.statusBar().currentMessage()
    assert "over 2 samples" in _summary(w.run_controller)


def test_compare_engines_over_samples_says_so(qtbot: QtBot, make_window: Make, tmp_path: Path) -> None:
    w = make_window()
    open_and_wait(qtbot, w, FLOAT)
    run = w.run_controller
    for k in range(3):
        np.savez(tmp_path / f"{k}.npz", image=np.full((1, 3, 32, 32), k, np.float32))
    run.run(ask=True)
    dialog = run.inputs_dialog
    assert dialog is not None
    dialog.choose_samples([str(tmp_path / f"{k}.npz") for k in range(3)])
    with qtbot.waitSignal(run.run_finished, timeout=TIMEOUT):
        dialog.accept()  # a plain run: the samples are for comparisons
    assert run.over is None and "samples" not in _summary(run)
    with qtbot.waitSignal(run.run_finished, timeout=TIMEOUT):
        run.run(compare="engines")
    assert run.over is not None and run.samples == ["0.npz", "1.npz", "2.npz"]
    assert all(p.measured == 3 for p in run.over)
    assert "Compared with reference: " in _summary(run) and "over 3 samples" in _summary(run)
    np.testing.assert_array_equal(run.result.array("image"), np.full((1, 3, 32, 32), 2, np.float32))


def test_sizes_chosen_for_generated_inputs_are_offered_for_the_next_run(qtbot: QtBot, make_window: Make,
                                                                        tmp_path: Path) -> None:
    path = tmp_path / "baked.onnx"
    onnx.save(baked_reshape(50), path)
    w = make_window()
    open_and_wait(qtbot, w, path)
    run = w.run_controller
    run.run()  # F9: the dimensions were never given, the dialog asks (auto by default)
    dialog = run.inputs_dialog
    assert dialog is not None and dialog.dim_boxes["sequence"].text() == "auto"
    with qtbot.waitSignal(run.run_finished, timeout=TIMEOUT):
        dialog.run_button.click()
    assert run.result is not None and run.result.engine == "onnxruntime" and run.result.dims["sequence"] == 50
    summary = _summary(run)
    assert "on onnxruntime, graph optimizations off" in summary and "hidden float32 [1, 50, 8] (generated)" in summary
    assert "Sizes chosen: batch=1, sequence=50" in summary
    assert run.plans[str(path)].found == {"batch": 1, "sequence": 50}
    run.run(ask=True)
    dialog = run.inputs_dialog
    assert dialog is not None and dialog.dim_boxes["sequence"].text() == "auto (ran: 50)"
    dialog.reject()
    run.inputs.inputs_dialog = None
    with qtbot.waitSignal(run.run_finished, timeout=TIMEOUT):
        run.run()  # F9 again: no dialog; the sizes that ran are tried first
    assert run.inputs_dialog is None and not any("did not run" in n for n in run.result.notes)


def test_an_optimized_run_says_so_and_shows_the_optimized_values(qtbot: QtBot, make_window: Make) -> None:
    w = make_window()
    open_and_wait(qtbot, w, EXPORTS / "bert_legacy.onnx")
    run = w.run_controller
    run.actions["optimized"].setChecked(True)
    run.run(ask=True)
    dialog = run.inputs_dialog
    assert dialog is not None
    dialog.load_npz(str(EXPORTS / "inputs" / "bert_legacy.npz"))
    with qtbot.waitSignal(run.run_finished, timeout=TIMEOUT):
        dialog.run_button.click()
    assert run.result is not None and run.result.optimized
    assert "on onnxruntime, graph optimizations on" in _summary(run)
    assert any(note.startswith("graph optimizations on: onnxruntime's optimized graph has") for note in run.result.notes)
    made = {v for node in doc_of(w).model.graph.node for v in node.output}
    captured = {k for k, r in run.result.values.items() if r.node >= 0}
    assert captured and captured < made


def test_the_differences_list_hides_renames_and_counts_them(qtbot: QtBot, make_window: Make, tmp_path: Path) -> None:
    model = onnx.load(str(FLOAT))
    for i, node in enumerate(model.graph.node):
        node.name = f"n{i}"
    gemm = next(n for n in model.graph.node if n.op_type == "Gemm")
    gemm.attribute.append(onnx.helper.make_attribute("alpha", 2.0))
    onnx.save(model, tmp_path / "renamed.onnx")
    w = diff_window(qtbot, make_window, FLOAT, tmp_path / "renamed.onnx")
    dock = w.diff.dock
    total = len(dock.differences)
    assert dock.list.count() == total and dock.hidden_label.text() == ""
    dock.hide_boxes["renames"].setChecked(True)
    assert dock.list.count() == 1 and dock.hidden_label.text() == f"1 of {total} shown; {total - 1} hidden: " \
                                                                  f"{total - 1} renames"
    gemm_row = next(k for k, d in enumerate(dock.differences) if d.details.get("attributes") == ["alpha"])
    for _ in range(3):  # F8 steps through the shown rows only
        assert dock.step(1) == gemm_row
    assert "attributes alpha 1 -> 2" in dock.detail.text()
    assert doc_of(w).selection.state.node == dock.differences[gemm_row].node_a
    dock.hide_boxes["renames"].setChecked(False)
    assert dock.list.count() == total and dock.list.currentRow() == gemm_row  # the current one stays


def test_compare_with_model_over_samples_gives_each_pairs_worst_as_single_comparisons(qtbot: QtBot,
                                                                                       make_window: Make,
                                                                                       tmp_path: Path) -> None:
    """Run > Compare with Model over several samples: the other model aligned once, its integer values read
    through their scales in every sample; each pair's figure the worst of single comparisons."""
    from onnxviz.model.graph.index import ModelIndex
    from onnxviz.model.matching import compare_models

    w = make_window()
    open_and_wait(qtbot, w, FLOAT)
    run = w.run_controller
    images = [np.random.default_rng([k, 5]).standard_normal((1, 3, 32, 32)).astype(np.float32) for k in range(2)]
    for k, image in enumerate(images):
        np.savez(tmp_path / f"{k}.npz", image=image)
    run.run(ask=True)
    dialog = run.inputs_dialog
    assert dialog is not None
    dialog.choose_samples([str(tmp_path / f"{k}.npz") for k in range(2)])
    with qtbot.waitSignal(run.run_finished, timeout=TIMEOUT):
        dialog.accept()
    with qtbot.waitSignal(run.run_finished, timeout=TIMEOUT):
        run.run(compare="file", other_path=QDQ)
    assert run.over is not None and run.samples == ["0.npz", "1.npz"] and run.pairs is not None
    singles = []
    for image in images:
        cross = compare_models(doc_of(w).index, ModelIndex(onnx.load(str(QDQ))), {"image": image}, isolate=False)
        singles.append({(d.name, d.other): d.sqnr_db for d in cross.diffs})
        cross.cleanup()
    assert {(p.worst.name, p.worst.other) for p in run.over} == set(singles[0])
    for p in run.over:
        assert p.worst.sqnr_db == min(s[(p.worst.name, p.worst.other)] for s in singles)
    assert "over 2 samples" in _summary(run) and "lowest SQNR" in _summary(run)
