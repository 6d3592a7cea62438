"""A native crash of onnx or onnxruntime on a file never takes onnxviz down: whatever runs onnx's checker or
shape inference on a model (``check``, ``render``, ``doc.check()``, edits that infer, the window) runs it in a
worker process, and the answer is one sentence naming what crashed and on which node."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from onnx import TensorProto, helper
from pytestqt.qtbot import QtBot
from window_fixtures import open_and_wait

import onnxviz
from onnxviz.model.background.contained import INFERENCE, crash_cause, forked
from onnxviz.model.background.procpool import WorkerDied, WorkerProcess
from onnxviz.model.errors import OnnxvizError

REGEX = "onnx's shape inference crashed on node 0 (RegexFullMatch)"
LABEL_ENCODER = "onnx's shape inference crashed on node 0 (LabelEncoder)"


def regex_model() -> bytes:
    """36 bytes: a RegexFullMatch reading an input nothing defines (onnx 1.17-1.23 dereference its null type)."""
    graph = helper.make_graph([helper.make_node("RegexFullMatch", ["x"], ["y"])], "", [], [])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)], ir_version=10)
    model.ClearField("producer_name")
    return model.SerializeToString()


def label_encoder_model() -> bytes:
    """A LabelEncoder with keys, reading an input nothing defines."""
    node = helper.make_node("LabelEncoder", ["x"], ["y"], domain="ai.onnx.ml", keys_strings=["a"])
    graph = helper.make_graph([node], "", [], [])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("ai.onnx.ml", 4)], ir_version=10)
    model.ClearField("producer_name")
    return model.SerializeToString()


def chain_with_crash(length: int, at: int) -> bytes:
    """``length`` Identity nodes in a row, the one at ``at`` a RegexFullMatch reading an undefined value."""
    nodes = [helper.make_node("Identity", [f"v{i}"], [f"v{i + 1}"], name=f"id{i}") for i in range(length)]
    nodes[at] = helper.make_node("RegexFullMatch", ["nowhere"], [f"v{at + 1}"], name="the_culprit")
    x = helper.make_tensor_value_info("v0", TensorProto.STRING, [1])
    y = helper.make_tensor_value_info(f"v{length}", TensorProto.STRING, [1])
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y]), opset_imports=[helper.make_opsetid("", 20)])
    return model.SerializeToString()


@pytest.fixture
def models(tmp_path: Path) -> dict[str, Path]:
    out = {}
    for name, data in (("regex", regex_model()), ("label_encoder", label_encoder_model())):
        out[name] = tmp_path / f"{name}.onnx"
        out[name].write_bytes(data)
    return out


def test_the_models_crash_onnx_itself(tmp_path: Path) -> None:
    """What the tests below rely on: onnx's own shape inference ends its process with SIGSEGV on both."""
    assert len(regex_model()) == 36 and len(label_encoder_model()) < 80
    for data in (regex_model(), label_encoder_model()):
        path = tmp_path / "m.onnx"
        path.write_bytes(data)
        code = subprocess.run([sys.executable, "-c", "import onnx, sys; onnx.shape_inference.infer_shapes_path(sys.argv[1])",
                               str(path)], capture_output=True).returncode
        assert code == -signal.SIGSEGV


@pytest.mark.parametrize(("name", "sentence"), [("regex", REGEX), ("label_encoder", LABEL_ENCODER)])
def test_check_names_the_crash_and_exits_1(models: dict[str, Path], name: str, sentence: str) -> None:
    for extra in ([], ["--json"]):
        proc = subprocess.run([sys.executable, "-m", "onnxviz", "check", *extra, str(models[name])], capture_output=True,
                              text=True, timeout=60)
        assert proc.returncode == 1, proc.stderr
        assert sentence in proc.stdout and proc.stderr == ""
    proc = subprocess.run([sys.executable, "-m", "onnxviz", "info", str(models[name])], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0 and proc.stderr == ""


def test_render_draws_without_shapes_and_says_why(models: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "r.svg"
    proc = subprocess.run([sys.executable, "-m", "onnxviz", "render", str(models["regex"]), "-o", str(out)],
                          capture_output=True, text=True, timeout=60, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == f"onnxviz: note: {REGEX}: the graph is drawn without inferred shapes\n"
    assert out.stat().st_size > 0


def test_the_api_check_and_edits_that_infer_survive(models: dict[str, Path]) -> None:
    doc = onnxviz.open(models["regex"])
    [crash] = [p for p in doc.check() if "crashed" in p.message]
    assert (crash.message, crash.severity.value, crash.node, crash.source) == (REGEX, "error", 0, "shape_inference")
    with pytest.raises(OnnxvizError, match=r"the subgraph could not be extracted: onnx's shape inference crashed on "
                                           r"node 0 \(RegexFullMatch\)\.$"):
        doc.edit.extract(["x"], ["y"])
    with pytest.raises(OnnxvizError, match=r"could not be converted to opset 21: onnx's shape inference crashed on "
                                           r"node 0 \(RegexFullMatch\)\.$"):
        doc.edit.convert_opset(21)
    with pytest.raises(OnnxvizError, match="the element type of 'y' is unknown"):  # inference found no type
        doc.edit.set_value_type("y", shape=[1])
    doc.edit.add_output("y")  # marked untyped, as inference could not type it
    assert [o.name for o in doc.model.graph.output] == ["y"]


def test_a_transform_that_crashes_names_the_crash_and_its_node(models: dict[str, Path], tmp_path: Path) -> None:
    """onnxslim runs onnx's shape inference in the transform's process: its crash is named as check names it
    (was 'ended unexpectedly ... (a crash in the library, or out of memory)'), and nothing is written."""
    out = tmp_path / "slim.onnx"
    proc = subprocess.run([sys.executable, "-m", "onnxviz", "transform", str(models["regex"]), str(out),
                           "--with", "onnxslim"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith(f"onnxviz: error: {REGEX}, which ended the transform during '"), proc.stderr
    assert proc.stderr.endswith("'; the model is unchanged\n") and not out.exists()


@pytest.mark.parametrize("at", [0, 1, 37, 99])
def test_the_node_is_found_in_a_long_graph(at: int) -> None:
    cause = crash_cause(chain_with_crash(100, at), (INFERENCE,))
    assert cause.sentence == f"onnx's shape inference crashed on node {at} 'the_culprit' (RegexFullMatch)."
    assert cause.signal == signal.SIGSEGV


def _die(how: int) -> None:
    os.kill(os.getpid(), how)


@pytest.mark.parametrize(("how", "crashed", "words"), [(signal.SIGSEGV, True, "crashed (SIGSEGV)"),
                                                        (signal.SIGABRT, True, "crashed (SIGABRT)"),
                                                        (signal.SIGKILL, False, "out of memory?")])
def test_a_dead_worker_says_how_it_ended(how: int, crashed: bool, words: str) -> None:
    worker = WorkerProcess()
    try:
        with pytest.raises(WorkerDied) as died:
            worker.run(_die, how)
        assert died.value.signal == how and died.value.crashed is crashed and words in died.value.message
        assert worker.run(abs, -3) == 3  # replaced for the next job
    finally:
        worker.shutdown()


def _refuse() -> None:
    raise OnnxvizError("refused in the child")


def test_a_forked_child_hands_back_its_answer_its_error_or_its_crash() -> None:
    """The command line's way (no worker process to start): a child forked for the job."""
    assert forked(abs, -3) == 3
    with pytest.raises(OnnxvizError, match="refused in the child"):
        forked(_refuse)
    with pytest.raises(WorkerDied) as died:
        forked(_die, signal.SIGSEGV)
    assert died.value.crashed and died.value.signal == signal.SIGSEGV
    script = ("import threading, time; from onnxviz.model.background.contained import may_fork; a = may_fork(); "
              "threading.Thread(target=time.sleep, args=(1,)).start(); print(a, may_fork())")
    assert subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60).stdout.split() \
        == ["True", "False"]  # never with threads (or a Qt application) about


def test_the_window_names_the_crash_on_its_node(qtbot: QtBot, make_window: object, models: dict[str, Path]) -> None:
    from onnxviz.ui.main_window import MainWindow

    w: MainWindow = make_window()  # type: ignore[operator]
    open_and_wait(qtbot, w, models["label_encoder"])
    qtbot.waitUntil(lambda: w.doc is not None and any("crashed" in p.message for p in w.doc.problems), timeout=60000)
    assert w.doc is not None
    [crash] = [p for p in w.doc.problems if "crashed" in p.message]
    assert (crash.message, crash.node, crash.severity.value) == (LABEL_ENCODER, 0, "error")
    assert not any("out of memory" in p.message or "stopped unexpectedly" in p.message for p in w.doc.problems)
    panel = w.panels.model_panel
    qtbot.waitUntil(lambda: panel.cost_form is not None and "crashed on node 0" in
                    panel.cost_form.values["Parameters"].text(), timeout=60000)
