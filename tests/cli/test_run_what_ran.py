"""Runs that say what ran: an optimized dump holds the optimized session's values, --values prints small
outputs, inputs come from a folder of input_N.pb files, and onnxviz.run works from a plain script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from conftest import REPO, dumped, run_cli
from onnx import numpy_helper

import onnxviz
from onnxviz.model.runner import RunError

EXPORTS = REPO / "tests" / "data" / "exports"
BERT = EXPORTS / "bert_legacy.onnx"


def _session_outputs(path: Path, feeds: dict[str, np.ndarray], level: ort.GraphOptimizationLevel) -> list[np.ndarray]:
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    so.log_severity_level = 4
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"]).run(None, feeds)


def test_optimized_dump_holds_the_optimized_sessions_values(capsys: pytest.CaptureFixture[str],
                                                            tmp_path: Path) -> None:
    """``--optimized --dump`` said "graph optimizations on" but dumped the values of an unoptimized run: each
    value was a graph output, which keeps onnxruntime from fusing anything."""
    feeds = dict(np.load(EXPORTS / "inputs" / "bert_legacy.npz"))
    on = _session_outputs(BERT, feeds, ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
    off = _session_outputs(BERT, feeds, ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    assert np.abs(on[1] - off[1]).max() > 0  # the two sessions differ here: the test can tell them apart
    dump = tmp_path / "dump"
    code, out, err = run_cli(capsys, "run", str(BERT), "--inputs", str(EXPORTS / "inputs" / "bert_legacy.npz"),
                             "--optimized", "--dump", str(dump))
    assert code == 0, err
    assert out.startswith("bert_legacy.onnx: ran on onnxruntime (graph optimizations on)")
    index = json.loads((dump / "index.json").read_text())
    assert index["optimized"] is True and index["generated"] == []
    for k, name in enumerate(("last_hidden_state", "logits")):
        np.testing.assert_array_equal(dumped(dump, name), on[k])
    made = {v for node in onnx.load(str(BERT)).graph.node for v in node.output}
    kept = [k for k, v in index["values"].items() if v["node"] >= 0]
    assert 0 < len(kept) < len(made) and set(kept) <= made  # fused values are gone, the others keep their names
    assert f"the {len(kept)} values that still exist there under their names were captured from it" in out
    plain = tmp_path / "plain"
    code, out, _ = run_cli(capsys, "run", str(BERT), "--inputs", str(EXPORTS / "inputs" / "bert_legacy.npz"),
                           "--dump", str(plain))
    index = json.loads((plain / "index.json").read_text())
    assert code == 0 and "graph optimizations off" in out and index["optimized"] is False
    np.testing.assert_array_equal(dumped(plain, "logits"), off[1])


def test_run_json_values_has_small_outputs_and_says_why_a_big_one_is_left_out(
        capsys: pytest.CaptureFixture[str]) -> None:
    path = EXPORTS / "resnet_float.onnx"
    feeds = dict(np.load(EXPORTS / "inputs" / "resnet_float.npz"))
    expected = _session_outputs(path, feeds, ort.GraphOptimizationLevel.ORT_DISABLE_ALL)[0]
    args = ("run", str(path), "--inputs", str(EXPORTS / "inputs" / "resnet_float.npz"), "--json")
    code, out, err = run_cli(capsys, *args, "--values")
    assert code == 0, err
    logits = json.loads(out)["outputs"][0]
    np.testing.assert_allclose(np.array(logits["values"], np.float32), expected, rtol=1e-6)
    code, out, _ = run_cli(capsys, *args, "--values", "5")
    logits = json.loads(out)["outputs"][0]
    assert logits["values"] is None and logits["values_omitted"] == "10 elements, more than the limit of 5"
    code, out, _ = run_cli(capsys, *args)
    assert "values" not in json.loads(out)["outputs"][0]
    code, out, _ = run_cli(capsys, *args[:-1], "--values")
    assert "    values: [[" in out


def test_inputs_from_a_folder_of_input_n_pb_files(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The onnx backend test layout: test_data_set_0/input_0.pb ... in input order, or named after the input."""
    feeds = dict(np.load(EXPORTS / "inputs" / "bert_legacy.npz"))
    order = [i.name for i in onnx.load(str(BERT)).graph.input]
    folder = tmp_path / "model" / "test_data_set_0"
    folder.mkdir(parents=True)
    for k, name in enumerate(order):  # the first file unnamed (by position), the others by name
        tensor = numpy_helper.from_array(feeds[name], name if k else "")
        (folder / f"input_{k}.pb").write_bytes(tensor.SerializeToString())
    code, out, err = run_cli(capsys, "run", str(BERT), "--inputs", str(folder), "--json", "--values", "100000")
    assert code == 0, err
    printed = json.loads(out)
    assert all(not i["generated"] for i in printed["inputs"]) and printed["dims"] == {}
    expected = _session_outputs(BERT, feeds, ort.GraphOptimizationLevel.ORT_DISABLE_ALL)[1]
    np.testing.assert_allclose(np.array(printed["outputs"][1]["values"], np.float32), expected, rtol=1e-5, atol=1e-5)
    second = tmp_path / "model" / "test_data_set_1"
    second.mkdir()
    (second / "input_0.pb").write_bytes((folder / "input_0.pb").read_bytes())
    code, _, err = run_cli(capsys, "run", str(BERT), "--inputs", str(tmp_path / "model"))
    assert code == 2 and "holds 2 samples; give one of them (such as test_data_set_0)" in err
    (second / "input_5.pb").write_bytes(numpy_helper.from_array(feeds["input_ids"], "input_ids").SerializeToString())
    code, _, err = run_cli(capsys, "run", str(BERT), "--inputs", str(second))
    assert code == 2 and "input_5.pb gives input 'input_ids' a second time" in err
    (second / "input_5.pb").unlink()
    (second / "input_9.pb").write_bytes((folder / "input_0.pb").read_bytes())
    code, _, err = run_cli(capsys, "run", str(BERT), "--inputs", str(second))
    assert code == 2 and "input_9.pb is input number 9, but the model has 3 inputs" in err
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = run_cli(capsys, "run", str(BERT), "--inputs", str(empty))
    assert code == 2 and "holds no input_N.pb files, test_data_set_N folders or .npz files" in err


def test_onnxviz_run_returns_arrays_and_says_what_ran() -> None:
    ran = onnxviz.run(EXPORTS / "resnet_float.onnx", EXPORTS / "inputs" / "resnet_float.npz")
    feeds = dict(np.load(EXPORTS / "inputs" / "resnet_float.npz"))
    expected = _session_outputs(EXPORTS / "resnet_float.onnx", feeds, ort.GraphOptimizationLevel.ORT_DISABLE_ALL)[0]
    np.testing.assert_allclose(ran["logits"], expected, rtol=1e-6)
    assert ran.engine == "onnxruntime" and ran.optimized is False and not ran.values and ran.dims == {}
    np.testing.assert_array_equal(ran.inputs["image"], feeds["image"])
    every = onnxviz.run(onnx.load(str(EXPORTS / "vad_if.onnx")), capture="all", seed=3)
    assert every.dims == {"batch": 1, "samples": 64} and every.inputs["x"].shape == (1, 64)
    assert "/Tanh_output_0" in every.values and every["speech_prob"].shape == (1, 1)
    with pytest.raises(RunError, match="capture: .some. is not .outputs., .all."):
        onnxviz.run(EXPORTS / "resnet_float.onnx", capture="some")


def test_onnxviz_run_works_from_a_script_without_a_main_guard(tmp_path: Path) -> None:
    """The worker process used to run the caller's script again (multiprocessing's spawn), which tried to start
    a worker of its own before it was ready: the script crashed, after doing its work twice."""
    script = tmp_path / "plain_script.py"
    script.write_text(
        "import onnxviz\n"
        "print('top-level code ran', flush=True)\n"
        f"ran = onnxviz.run({str(EXPORTS / 'resnet_float.onnx')!r})\n"
        "print('logits', ran['logits'].shape, ran.engine, flush=True)\n", encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["top-level code ran", "logits (1, 10) onnxruntime"]
