"""``onnxviz transform IN OUT --with NAME``, run as a user runs it (a separate process): the result written and
valid, its summary and checks printed (text and --json), exit 1 and nothing written when the outputs changed
beyond the tolerance, exit 2 and one line for what cannot be done."""

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
from conftest import REPO

EXPORTS = REPO / "tests" / "data" / "exports"
RESNET, BERT = EXPORTS / "resnet_float.onnx", EXPORTS / "bert_legacy.onnx"


def onnxviz(*args: str | Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "onnxviz", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=300, cwd=REPO)


def test_slim_writes_a_valid_model_and_prints_what_changed(tmp_path: Path) -> None:
    out = tmp_path / "slim.onnx"
    proc = onnxviz("transform", BERT, out, "--with", "onnxslim")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "bert_legacy.onnx: Slim with onnxslim"
    assert lines[1].startswith("nodes 212 -> 132 (-80), size ")
    assert "  Constant       62      0" in lines  # the operators whose count changed, as onnxslim counts them
    assert any(line.startswith("outputs on 2 input samples (limits: rtol 0.001, atol 1e-05):") for line in lines)
    assert lines[-1] == f"wrote {out}"
    model = onnx.load(out)
    onnx.checker.check_model(model, full_check=True)
    assert len(model.graph.node) == 132


def test_json_says_everything_and_the_inputs_given_are_the_ones_compared(tmp_path: Path) -> None:
    out = tmp_path / "q.onnx"
    proc = onnxviz("transform", RESNET, out, "--with", "quantize-static", "--format", "qoperator", "--per-channel",
                   "--inputs", EXPORTS / "inputs" / "resnet_float.npz", "--json")
    assert proc.returncode == 0, proc.stderr
    printed = json.loads(proc.stdout)
    assert printed["written"] is True and printed["output"] == str(out) and printed["refused"] == ""
    assert printed["transform"] == "quantize-static" and printed["settings"]["quant_format"] == "qoperator"
    assert printed["settings"]["per_channel"] is True and printed["notes"] == []  # calibrated on a file: no warning
    v = printed["verification"]
    assert v["checked"] and v["samples"] == 1 and v["beyond_tolerance"] == 0
    rows = {r["op"]: (r["before"], r["after"]) for r in printed["summary"]["op_counts"]}
    assert rows["QLinearConv"] == (0, 6) and rows["Conv"] == (6, 0)
    # the output error printed is the one onnxruntime gives on that sample
    with np.load(EXPORTS / "inputs" / "resnet_float.npz") as data:
        feeds = {k: data[k] for k in data.files}
    a = ort.InferenceSession(str(RESNET)).run(None, feeds)[0]
    b = ort.InferenceSession(str(out)).run(None, feeds)[0]
    assert v["outputs"][0]["max_abs"] == pytest.approx(float(np.abs(a.astype(np.float64) - b).max()), rel=1e-6)


def test_generated_calibration_warns(tmp_path: Path) -> None:
    proc = onnxviz("transform", RESNET, tmp_path / "q.onnx", "--with", "quantize-static", "--samples", "2")
    assert proc.returncode == 0, proc.stderr
    assert "onnxviz: note: calibrated on generated random inputs" in proc.stderr


def test_beyond_the_tolerance_exits_1_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "q.onnx"
    proc = onnxviz("transform", RESNET, out, "--with", "quantize-dynamic", "--tolerance", "sqnr_db=90", "--json")
    assert proc.returncode == 1, proc.stderr
    printed = json.loads(proc.stdout)
    assert printed["written"] is False and printed["output"] is None
    assert "beyond the tolerance (sqnr_db " in printed["refused"]
    assert not out.exists()


@pytest.mark.parametrize(("args", "said"), [
    (["--with", "quantize-static", "--exclude", "nope"], "onnxviz: error: the model has no node named 'nope' to "
                                                        "keep in float"),
    (["--with", "opset"], "onnxviz: error: say which opset to convert to (a version from 1)"),
    (["--with", "quantize-int4", "--block-size", "24"], "onnxviz: error: the block size must be a power of 2 from 16"),
    (["--with", "shrink"], "onnxviz: error: argument --with: invalid choice: 'shrink'"),
    (["--with", "onnxslim", "--tolerance", "speed=1"], "onnxviz: error: 'speed=1' is not MEASURE=VALUE"),
])
def test_what_cannot_be_done_is_one_line_and_exit_2(tmp_path: Path, args: list[str], said: str) -> None:
    out = tmp_path / "o.onnx"
    proc = onnxviz("transform", RESNET, out, *args)
    assert proc.returncode == 2
    assert said in proc.stderr and "Traceback" not in proc.stderr
    assert not out.exists()


def test_an_unreadable_model_is_said_before_any_process_starts(tmp_path: Path) -> None:
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    proc = onnxviz("transform", bad, tmp_path / "o.onnx", "--with", "onnxslim")
    assert proc.returncode == 2 and proc.stderr.startswith("onnxviz: error: ") and proc.stderr.count("\n") == 1


def test_a_missing_library_says_how_to_install_it(tmp_path: Path) -> None:
    blocker = tmp_path / "block"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text("import sys\nsys.modules['onnxslim'] = None  # as if not installed\n")
    env = dict(os.environ, PYTHONPATH=f"{blocker}{os.pathsep}{REPO}")
    proc = subprocess.run([sys.executable, "-m", "onnxviz", "transform", str(RESNET), str(tmp_path / "o.onnx"),
                           "--with", "onnxslim"], capture_output=True, text=True, env=env, timeout=300, cwd=REPO)
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("onnxviz: error: Slim with onnxslim needs onnxslim, which is not installed: pip "
                                   "install 'onnxviz[transform]' (or pip install onnxslim), then restart onnxviz")
