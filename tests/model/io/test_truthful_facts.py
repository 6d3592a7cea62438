"""What onnxviz says of a file is true: sizes never stated for bytes that are not there, special files named
as such, limits shown with the exact sizes that passed them, dims whose product passes a float, a graph of
parts that share nothing, versions newer than onnx and onnxruntime know, escapes that would make two names
one, run inputs whose type would lose what they hold, a TensorProto input's real fault, settings values that
nest without end, ``--json`` errors as JSON, and no telemetry from onnxruntime. Through the API and the
command line, and in the window where the window is concerned."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import hostile
import numpy as np
import onnx
import pytest
from conftest import REPO, TEST_DATA
from onnx import TensorProto, helper, numpy_helper
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot
from window_fixtures import open_and_wait, settle

import onnxviz
from onnxviz.model.errors import OnnxvizError
from onnxviz.model.io.loading import read_model_file
from onnxviz.model.runner.inputs import build_feeds, input_specs
from onnxviz.ui.main_window import MainWindow


def cli(*args: str, cwd: Path | None = None) -> tuple[int, str, str]:
    proc = subprocess.run([sys.executable, "-m", "onnxviz", *args], capture_output=True, text=True, timeout=120,
                          cwd=cwd, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    return proc.returncode, proc.stdout, proc.stderr


def relu(path: Path, ir: int = 10, opset: int = 18, shape: list[int | str] | None = None) -> Path:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, shape or ["n", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, shape or ["n", 4])
    model = helper.make_model(helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y]),
                              opset_imports=[helper.make_opsetid("", opset)], ir_version=ir)
    path.write_bytes(model.SerializeToString())
    return path


# -- info: no size for bytes that are not there -------------------------------------------------------------
@pytest.mark.parametrize(("case", "declared", "why"), [
    ("dims_2_40", "1,099,511,627,776", "has 4,096 bytes of raw_data, but its shape [1048576, 1048576] needs"),
    ("raw_data_short", "1,024", "has 100 bytes of raw_data, but its shape [1024] needs 4,096"),
    ("external_dotdot", "1,024", "points outside the model's folder ('../secret.bin'); refused"),
    ("external_missing", "1,024", "which does not exist next to the model"),
])
def test_info_leaves_out_and_names_tensors_whose_data_is_not_there(tmp_path: Path, case: str, declared: str,
                                                                   why: str) -> None:
    path = hostile.build_all(tmp_path)[case][1]
    code, out, err = cli("info", str(path))
    assert code == 0 and err == ""
    assert (f"parameters:  0 (0 B), not counting 1 tensor whose data is missing or refused ({declared} elements "
            "declared)") in out
    assert "4.0 TB" not in out and "4.0 KB" not in out
    assert "  no data: tensor 'w' " in out and why in out
    code, out, _ = cli("info", "--json", str(path))
    info = json.loads(out)
    assert info["parameter_bytes"] == 0 and info["parameters"] == 0
    assert [t["name"] for t in info["tensors_without_data"]] == ["w"] and why in info["tensors_without_data"][0]["problem"]


def test_the_model_panel_states_no_size_for_missing_data(tmp_path: Path, qtbot: QtBot,
                                                         make_window: Callable[[], MainWindow]) -> None:
    w = make_window()
    open_and_wait(qtbot, w, hostile.build_all(tmp_path)["dims_2_40"][1])
    panel = w.panels.model_panel
    qtbot.waitUntil(lambda: panel.cost_form is not None and "not counting" in
                    panel.cost_form.values["Parameters"].text(), timeout=30000)
    shown = panel.cost_form.values["Parameters"].text()
    assert shown.startswith("0 (0 B)") and "not counting 1 tensor whose data is missing or refused" in shown
    assert "TB" not in shown + panel.cost_form.values["By dtype"].text()  # was "1,099,511,627,776 (4.0 TB)"


def _overflowing(path: Path) -> Path:
    """Dims whose product (2^1240) passes a float's range, on an input and on a weight without data."""
    dims = [2**62] * 20
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)
    w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=dims)
    graph = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], "g", [x],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, dims)], [w])
    path.write_bytes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]).SerializeToString())
    return path


def test_dims_whose_product_passes_a_float_are_counted_exactly(tmp_path: Path, qtbot: QtBot,
                                                               make_window: Callable[[], MainWindow]) -> None:
    path = _overflowing(tmp_path / "overflow.onnx")
    code, out, err = cli("info", str(path))
    assert code == 0 and err == ""  # was "unexpected internal error (OverflowError: int too large to convert to float)"
    assert "(over 10^373 elements declared)" in out
    w = make_window()
    open_and_wait(qtbot, w, path)
    panel = w.panels.model_panel
    qtbot.waitUntil(lambda: panel.cost_form is not None and "10^" in panel.cost_form.values["FLOPs"].text(),
                    timeout=30000)
    assert w.doc is not None and w.doc.path == path


# -- special files and limits ----------------------------------------------------------------------------
def test_special_files_are_named_as_such(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.onnx"
    os.mkfifo(fifo)
    cases = {"/proc/self/mem": "/proc/self/mem is a file of the kernel's proc file system, not a model file; refused.",
             "/proc/self/status": "/proc/self/status is a file of the kernel's proc file system",
             "/dev/null": "/dev/null is a character device, not a model file; refused.",
             str(fifo): f"{fifo} is a named pipe (FIFO), not a model file; refused."}
    for path, message in cases.items():
        with pytest.raises(OnnxvizError) as refused:
            read_model_file(path)
        assert refused.value.message.startswith(message), refused.value.message
    code, _, err = cli("info", "/proc/self/mem")
    assert code == 2 and err == "onnxviz: error: /proc/self/mem is a file of the kernel's proc file system, not a " \
                                "model file; refused\n"  # was "mem is an empty file"


def test_a_size_over_the_limit_is_said_exactly(tmp_path: Path) -> None:
    path = tmp_path / "big.onnx"
    with open(path, "wb") as f:
        f.truncate(2_200_000_077)  # sparse: no disk space taken
    with pytest.raises(OnnxvizError) as refused:
        read_model_file(path)
    assert refused.value.message == ("big.onnx is 2,200,000,077 bytes, more than the 2,147,483,647 bytes a single "
                                     "protobuf can hold (large weights go in external data files).")


# -- a graph of parts that share nothing --------------------------------------------------------------------
def _concatenated(path: Path) -> Path:
    def model(x: str, y: str, op: str) -> bytes:
        graph = helper.make_graph([helper.make_node(op, [x], [y], name=op)], "g",
                                  [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1])],
                                  [helper.make_tensor_value_info(y, TensorProto.FLOAT, [1])])
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=10).SerializeToString()

    path.write_bytes(model("x", "y", "Relu") + model("a", "b", "Sigmoid"))  # protobuf reads one graph of both
    return path


WARNING = ("the model imports opset ai.onnx twice and its graph is 2 parts that share no value and each make graph "
           "outputs (1 node from node 0, 1 node from node 1): two models written into one file?")


def test_two_models_in_one_file_are_a_warning(tmp_path: Path, qtbot: QtBot,
                                              make_window: Callable[[], MainWindow]) -> None:
    path = _concatenated(tmp_path / "two.onnx")
    assert WARNING in [p.message for p in onnxviz.open(path).check()]
    code, out, _ = cli("check", str(path))
    assert code == 0 and f"warning: {WARNING}" in out  # was "valid", no warning; warnings pass check (--strict fails)
    for ok in (EXAMPLE_EXPORTS / "bert_dynamo.onnx", EXAMPLE_EXPORTS / "sklearn_text_zipmap.onnx"):
        assert "one file?" not in " ".join(p.message for p in onnxviz.open(ok).index.problems)
    twice = tmp_path / "twice.onnx"  # a model after itself: one graph of every node twice, each name twice
    twice.write_bytes(EXAMPLE.read_bytes() * 2)
    assert "the model imports opset ai.onnx twice: two models written into one file?" in \
        [p.message for p in onnxviz.open(twice).index.problems]
    w = make_window()
    open_and_wait(qtbot, w, path)
    settle()
    assert WARNING in [p.message for p in w.panels.problems_panel.problems]


EXAMPLE_EXPORTS = TEST_DATA / "exports"
EXAMPLE = REPO / "resources" / "examples" / "example.onnx"


# -- versions newer than onnx and onnxruntime know ---------------------------------------------------------
def _feed(tmp_path: Path) -> Path:
    pb = tmp_path / "x.pb"
    pb.write_bytes(numpy_helper.from_array(np.ones((3, 4), np.float32), "x").SerializeToString())
    return pb


@pytest.mark.parametrize(("ir", "opset", "declared"), [(99, 99, "IR version 99 and opset ai.onnx 99"),
                                                       (10, 99, "opset ai.onnx 99"), (99, 18, "IR version 99")])
def test_run_refuses_a_model_newer_than_onnx_and_onnxruntime_without_a_flag(tmp_path: Path, ir: int, opset: int,
                                                                             declared: str) -> None:
    path = relu(tmp_path / "new.onnx", ir, opset)
    code, out, err = cli("run", str(path), "--input", f"x={_feed(tmp_path)}")
    assert code == 2 and out == "" and f"the model declares {declared}, newer than onnx" in err
    assert err.endswith("so a run may not compute what the file means; --allow-newer runs it anyway\n")
    code, out, err = cli("run", str(path), "--input", f"x={_feed(tmp_path)}", "--allow-newer")
    assert code == 0 and "y: float32 [3, 4]" in out and "onnxviz: note: the model declares" in err


def test_a_model_only_onnx_reads_runs_as_before(tmp_path: Path) -> None:
    code, out, err = cli("run", str(relu(tmp_path / "m.onnx", ir=onnx.IR_VERSION)), "--input", f"x={_feed(tmp_path)}")
    assert code == 0 and "declares" not in err


def test_the_window_asks_before_running_a_newer_model(tmp_path: Path, qtbot: QtBot,
                                                      make_window: Callable[[], MainWindow]) -> None:
    w = make_window()
    open_and_wait(qtbot, w, relu(tmp_path / "new.onnx", 99, 99, shape=[3, 4]))
    runs = w.run_controller
    runs.run()
    box = runs.newer_box
    assert box is not None and box.isVisible() and runs.task is None  # nothing runs before the answer
    assert box.text().startswith("The model declares IR version 99 and opset ai.onnx 99, newer than onnx")
    box.button(QMessageBox.StandardButton.Cancel).click()
    settle()
    assert runs.result is None
    runs.run()
    box = runs.newer_box
    with qtbot.waitSignal(runs.run_finished, timeout=60000):
        next(b for b in box.buttons() if b.text() == "Run Anyway").click()
    assert runs.result is not None and runs.result.values["y"].shape == (3, 4)


# -- escapes that would make two names one ----------------------------------------------------------------
def _colliding(path: Path) -> Path:
    """A value named by the bytes 'a<0xff>...' and another literally named 'a\\xff...' (its escape)."""
    nodes = [helper.make_node("Relu", ["x"], ["PLACEHOLDER"], name="r1"),
             helper.make_node("Neg", ["x"], ["a\\xff_________"], name="r2"),
             helper.make_node("Add", ["PLACEHOLDER", "a\\xff_________"], ["y"], name="add")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    data = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=10).SerializeToString()
    path.write_bytes(data.replace(b"PLACEHOLDER", b"a\xff" + b"_" * 9))  # as long: the lengths stay right
    return path


def test_an_escape_that_is_a_name_already_is_renamed_and_the_save_says_so(tmp_path: Path) -> None:
    doc = onnxviz.open(_colliding(tmp_path / "collide.onnx"))
    _ = doc.index
    outputs = [n.output[0] for n in doc.model.graph.node]
    assert outputs == ["a\\xff_________~1", "a\\xff_________", "y"] and list(doc.model.graph.node[2].input) == outputs[:2]
    [problem] = [p for p in doc.problems if "UTF-8" in p.message]
    assert problem.message.endswith("it is shown as 'a\\xff_________~1' ('a\\xff_________' names something else "
                                    "already)")
    doc.edit.rename_node("r1", "edited")
    with pytest.raises(OnnxvizError, match=r"1 name's escape was already another name of the model, so it is saved "
                                           r"with a suffix \('a\\xff~1'\), as shown\.$"):
        doc.save(tmp_path / "out.onnx")
    doc.save(tmp_path / "out.onnx", escaped_text=True)
    saved = onnx.load(str(tmp_path / "out.onnx"))
    onnx.checker.check_model(saved, full_check=True)  # no SSA violation: onnxruntime runs it
    import onnxruntime as ort

    [y] = ort.InferenceSession(str(tmp_path / "out.onnx")).run(None, {"x": np.array([2.0, -1.0], np.float32)})
    assert y.tolist() == [0.0, 1.0]  # Relu(x) + Neg(x): two values, not one


# -- run inputs -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("array", "said"), [
    (np.zeros((2, 4), "V4"), "holds raw bytes (4 bytes each) of no number type"),
    (np.zeros((2, 4), [("a", "f4"), ("b", "i4")]), "is of a structured type (fields a, b), which has no place in "
                                                    "one tensor"),
    (np.ones((2, 4), np.complex64) * (1 + 2j), "holds complex64 values, whose imaginary part would be lost"),
    (np.zeros((2, 4), "datetime64[s]"), "holds datetime64[s] values (dates or durations), not numbers"),
    (np.full((2, 4), 1e300), "holds 1e+300, beyond its largest value 3.40282e+38"),
])
def test_an_input_that_would_lose_what_it_holds_is_refused_in_one_sentence(tmp_path: Path, array: np.ndarray,
                                                                          said: str) -> None:
    model = relu(tmp_path / "m.onnx")
    npy = tmp_path / "x.npy"
    np.save(npy, array)
    code, out, err = cli("run", str(model), "--input", f"x={npy}")
    assert code == 2 and out == ""
    assert err == f"onnxviz: error: input 'x' expects float32 but the array {said}\n"  # no warning, no note first
    with pytest.raises(OnnxvizError, match="input 'x' expects float32 but the array"):
        build_feeds(input_specs(onnx.load(str(model))), {"x": array}, {})


def test_integers_out_of_range_are_refused_and_each_conversion_is_named(tmp_path: Path) -> None:
    x = helper.make_tensor_value_info("x", TensorProto.INT32, [2])
    model = helper.make_model(helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g", [x],
                                                [helper.make_tensor_value_info("y", TensorProto.INT32, [2])]),
                              opset_imports=[helper.make_opsetid("", 18)], ir_version=10)
    specs = input_specs(model)
    with pytest.raises(OnnxvizError, match=r"holds 4294967296, outside its range -2147483648\.\.2147483647\.$"):
        build_feeds(specs, {"x": np.array([1, 2**32], np.int64)}, {})
    path = relu(tmp_path / "m.onnx", shape=[2, 4])
    np.save(tmp_path / "x.npy", np.ones((2, 4), np.float64))
    code, _, err = cli("run", str(path), "--input", f"x={tmp_path / 'x.npy'}")
    assert code == 0 and err == "onnxviz: note: input 'x' was given as float64 and converted to float32\n"


def test_a_tensorproto_input_says_what_is_wrong_with_it(tmp_path: Path) -> None:
    model = relu(tmp_path / "m.onnx")
    short = TensorProto(name="x", data_type=TensorProto.FLOAT, dims=[2**40, 4],
                        raw_data=np.zeros(4, np.float32).tobytes())
    (tmp_path / "short.pb").write_bytes(short.SerializeToString())
    code, _, err = cli("run", str(model), "--input", f"x={tmp_path / 'short.pb'}")
    assert code == 2 and err == ("onnxviz: error: short.pb holds a TensorProto that cannot be read: 'x' has 16 bytes of "
                                 "raw_data, but its shape [1099511627776, 4] needs 17,592,186,044,416\n")


# -- --json errors, settings, telemetry ----------------------------------------------------------------------
@pytest.mark.parametrize("args", [["info", "--json", "nothere.onnx"], ["check", "--json", "/dev/null"],
                                  ["info", "--json", "--bogus", "x.onnx"], ["diff", "--json", "a.onnx", "b.onnx"]])
def test_errors_of_a_json_command_are_json(tmp_path: Path, args: list[str]) -> None:
    code, out, err = cli(*args, cwd=tmp_path)
    answer = json.loads(out)
    assert code == 2 and answer["exit_code"] == 2 and answer["error"] and answer["error"] in err


def test_a_settings_value_nested_without_end_is_dropped_with_a_log_line(tmp_path: Path) -> None:
    from onnxviz.ui.applog import log_path
    from onnxviz.ui.run.input_sources import remember_dims, remembered_dims

    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    settings.setValue("run/dims", "[" * 100_000 + "]" * 100_000)
    assert remembered_dims(settings) == {} and settings.value("run/dims") is None  # dropped from the file
    assert "Settings: dropped run/dims = '[[[[" in log_path().read_text()
    assert "characters): over 64,000 characters." in log_path().read_text()
    settings.setValue("run/dims", "[" * 40 + "]" * 40)
    assert remembered_dims(settings) == {} and settings.value("run/dims") is None
    assert "nested over 8 levels deep" in log_path().read_text()
    settings.setValue("run/dims", '{"batch": 4, "big": 1e400, "name": "x", "deep": "[[[[[[[[[[[["}')
    assert remembered_dims(settings) == {"batch": 4}  # the usable entries; brackets in strings are text
    remember_dims(settings, {"seq": 8})
    assert remembered_dims(settings) == {"batch": 4, "seq": 8}


def test_onnxruntime_telemetry_is_off_in_every_process() -> None:
    """onnxruntime 1.29+ sends usage events (DNS lookups of mobile.events.data.microsoft.com during runs) unless
    ORT_DISABLE_TELEMETRY is set as it is imported: onnxviz sets it first, its worker processes inherit it."""
    script = ("import os, onnxviz, onnxruntime\n"
              "from onnxviz.model.background.procpool import WorkerProcess\n"
              "w = WorkerProcess()\n"
              "print(os.environ['ORT_DISABLE_TELEMETRY'], w.run(os.getenv, 'ORT_DISABLE_TELEMETRY'))\n"
              "w.shutdown()\n")
    env = {k: v for k, v in os.environ.items() if k != "ORT_DISABLE_TELEMETRY"}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60).stdout
    assert out.split() == ["1", "1"]
    env["ORT_DISABLE_TELEMETRY"] = "0"  # a user's own choice is kept
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60).stdout
    assert out.split() == ["0", "0"]
