"""The runner: capture of every value, engine fallback, the worker process, crashes and cancel."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from corpus_runs import read_value, same_json
from onnx import TensorProto, helper, numpy_helper
from onnx_data import corpus_models, model_id

from onnxviz.model.errors import Cancelled
from onnxviz.model.progress import CancelToken
from onnxviz.model.runner import RunError, RunOptions, WorkerRun, check_runnable, run_model
from onnxviz.model.runner.capture import Captured, capture
from onnxviz.model.runner.inputs import build_feeds, input_specs
from onnxviz.model.runner.protocol import PLANNING

# Known disagreements between an engine and the conformance data: random operators, and
# onnxruntime / reference-evaluator deviations that plain (uncaptured) runs show as well.
KNOWN_DEVIATIONS = (
    "test_bernoulli", "test_training_dropout", "test_maxunpool_export_with_output_shape",
    "test_resize_downsample_scales_cubic_align_corners", "test_resize_downsample_scales_linear_align_corners",
    "test_attention_4d_with_past_and_present_qk_matmul_bias_3d_mask_causal",
    "test_attention_4d_with_past_and_present_qk_matmul_bias_4d_mask_causal",
    "test_range_bfloat16_type_positive_delta_expanded", "test_range_float16_type_positive_delta_expanded",
    "test_range_float_type_positive_delta_expanded", "test_range_int32_type_negative_delta_expanded",
)


def _numbered(folder: Path, prefix: str) -> list[Path]:
    return sorted(folder.glob(f"{prefix}_*.pb"), key=lambda f: int(f.stem.split("_")[1]))


def _matches(got: np.ndarray, expected: np.ndarray) -> bool:
    if got.shape != expected.shape:
        return False
    if expected.dtype.kind in "OSU":
        return bool(np.array_equal(got.astype(object), expected.astype(object)))
    e, g = expected.astype(np.float64), got.astype(np.float64)
    finite = np.abs(e[np.isfinite(e)])
    scale = max(1.0, float(finite.max())) if finite.size else 1.0
    return bool(np.allclose(g, e, rtol=1e-3, atol=1e-4 * scale, equal_nan=True))


def _corpus_case(model_path: Path) -> tuple[onnx.ModelProto, dict[str, Any], list[Any]] | None:
    """The model, its feeds and expected outputs (arrays, lists, dicts or None: see corpus_runs.read_value);
    None when the case feeds fewer inputs than the model declares."""
    data = model_path.parent / "test_data_set_0"
    model = onnx.load(str(model_path))
    initializers = {t.name for t in model.graph.initializer}
    infos = [v for v in model.graph.input if v.name not in initializers]
    files = _numbered(data, "input")
    if len(files) != len(infos):
        return None
    feeds = {info.name: read_value(f, info) for info, f in zip(infos, files, strict=True)}
    expected = [read_value(f, info) for f, info in zip(_numbered(data, "output"), model.graph.output, strict=False)]
    return model, feeds, expected


def _output_matches(captured: Captured, name: str, expected: Any) -> bool:
    """A tensor within tolerance; a sequence, map or optional (kept as JSON) equal to the expected one."""
    if isinstance(expected, np.ndarray) and name in captured.values:
        return _matches(captured.values[name], expected)
    return name in captured.structured and same_json(captured.structured[name], expected)


# the operator cases, and the wheel's suites' models that come with data (the light CNNs do not)
CASES = [p for p in corpus_models() if (p.parent / "test_data_set_0").is_dir()]
NO_ENGINE_OPS = {"ImageDecoder", "Gradient"}  # neither onnxruntime 1.31 nor the reference evaluator runs these


@pytest.mark.slow
@pytest.mark.parametrize("pack_all", [False, True], ids=["as-run", "all-packed"])
@pytest.mark.parametrize("model_path", CASES, ids=[model_id(p) for p in CASES])
def test_corpus_outputs_match_expected(model_path: Path, pack_all: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """A conformance model gives the expected outputs through capture(), also with small values packed
    (which the window only does on graphs of many values). Known engine deviations give each output
    with its dtype; a model no engine runs is refused with one sentence."""
    from onnxviz.model.runner import capture as capture_module

    if pack_all:
        monkeypatch.setattr(capture_module, "PACK_MIN_VALUES", 0)
    case = _corpus_case(model_path)
    if case is None:  # the only cases left out: inputs declared but not fed
        return
    model, feeds, expected = case
    try:
        captured = capture(model, feeds)
    except RunError as exc:
        assert {n.op_type for n in model.graph.node} & NO_ENGINE_OPS, exc
        assert "\n" not in str(exc) and str(exc).endswith(".")
        return
    names = [out.name for out in model.graph.output][:len(expected)]
    if model_path.parent.name.startswith(KNOWN_DEVIATIONS):
        got = [captured.values.get(name) for name in names]
        assert [g.dtype if g is not None else None for g in got] == [e.dtype for e in expected]
    else:
        assert all(_output_matches(captured, n, e) for n, e in zip(names, expected, strict=True)), captured.engine


def _nan_model() -> onnx.ModelProto:
    """abs -> neg -> sub 1 -> sqrt (first NaN) -> mul 2 (NaN too) -> output."""
    nodes = [
        helper.make_node("Abs", ["x"], ["a"], name="abs"),
        helper.make_node("Neg", ["a"], ["b"], name="neg"),
        helper.make_node("Sub", ["b", "one"], ["c"], name="sub"),
        helper.make_node("Sqrt", ["c"], ["d"], name="sqrt"),
        helper.make_node("Mul", ["d", "two"], ["y"], name="mul"),
    ]
    graph = helper.make_graph(nodes, "nan", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
                              [numpy_helper.from_array(np.array(1, np.float32), "one"),
                               numpy_helper.from_array(np.array(2, np.float32), "two")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def test_worker_run_records_every_value_and_finds_first_nan(tmp_path: Path) -> None:
    model = _nan_model()
    feeds = {"x": np.arange(6, dtype=np.float32).reshape(2, 3)}
    result = run_model(model, feeds, RunOptions(profile=True), out_dir=tmp_path / "run")
    assert set(result.values) == {"x", "a", "b", "c", "d", "y"}
    assert result.values["x"].engine == "input" and result.values["d"].engine == "onnxruntime"
    first = result.first_nonfinite()
    assert first is not None and first.name == "d" and first.node_name == "sqrt"
    assert result.measure("nonfinite") == {("", 0): 0.0, ("", 1): 0.0, ("", 2): 0.0, ("", 3): 1.0, ("", 4): 1.0}
    np.testing.assert_array_equal(result.array("c"), -np.arange(6, dtype=np.float32).reshape(2, 3) - 1)
    assert set(result.node_times_us) == {0, 1, 2, 3, 4}
    assert (tmp_path / "run" / "index.json").is_file()


def test_reference_engine_and_fallback_record_their_engine() -> None:
    model = _nan_model()
    feeds = {"x": np.ones((2, 3), np.float32)}
    reference = capture(model, feeds, RunOptions(engine="reference"))
    assert reference.engine == "reference" and reference.engines["d"] == "reference"
    model.graph.node[1].op_type = "Negative"  # not in onnxruntime, so both engines are tried
    with pytest.raises(RunError) as info:
        capture(model, feeds)
    assert "ONNX Runtime could not run" in info.value.message and "reference evaluator" in info.value.message


def test_refuses_invalid_model_before_starting() -> None:
    model = _nan_model()
    model.graph.node[2].input[0] = "missing"
    with pytest.raises(RunError, match="cannot run: input 'missing' of sub is not defined"):
        check_runnable(model)
    with pytest.raises(RunError, match="not defined"):
        run_model(model, {"x": np.ones((2, 3), np.float32)})


def test_custom_op_failure_is_one_message_not_a_crash() -> None:
    model = _nan_model()
    model.graph.node[3].domain = "my.custom"
    model.opset_import.append(helper.make_opsetid("my.custom", 1))
    with pytest.raises(RunError) as info:
        run_model(model, {"x": np.ones((2, 3), np.float32)})
    assert "Sqrt" in info.value.message and "\n" not in info.value.message


def test_killed_worker_is_reported_as_a_crash() -> None:
    model = _slow_model()
    with pytest.raises(RunError, match="crashed with SIGKILL"):
        run_model(model, _slow_feeds(), on_start=lambda run: os.kill(run.pid, signal.SIGKILL))


def test_a_worker_killed_while_planning_is_reported_not_run_again() -> None:
    """A kill while shape inference plans the capture was taken for a crash of shape inference: the
    run was made again in a new process, so a never-ending model ran on and nothing was reported."""
    runs: list[WorkerRun] = []
    token = CancelToken()
    timer = threading.Timer(20, token.cancel)  # the old code ran the endless model again: Cancelled, not a hang

    def kill_while_planning(_fraction: float, text: str) -> None:
        if text == PLANNING:
            os.kill(runs[-1].pid, signal.SIGKILL)

    timer.start()
    try:
        with pytest.raises(RunError, match="crashed with SIGKILL") as info:
            run_model(_endless_model(), {"x": np.ones(4, np.float32)}, progress=kill_while_planning, token=token,
                      on_start=runs.append)
    finally:
        timer.cancel()
    assert len(runs) == 1 and not runs[0]._process.is_alive()
    assert "\n" not in info.value.message


def _endless_model(steps: int | None = None, body_nodes: int = 200) -> onnx.ModelProto:
    """A Loop whose condition stays true, with no trip count (or ``steps`` of them): a run never ends.
    ``body_nodes`` Neg nodes per step give shape inference some work while planning the capture."""
    nodes = [helper.make_node("Identity", ["cond_in"], ["cond_out"])]
    nodes += [helper.make_node("Neg", [f"t{k}" if k else "x_in"], [f"t{k + 1}"]) for k in range(body_nodes)]
    nodes.append(helper.make_node("Add", [f"t{body_nodes}" if body_nodes else "x_in", "x_in"], ["x_out"]))
    body = helper.make_graph(
        nodes, "step", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                        helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
                        helper.make_tensor_value_info("x_in", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x_out", TensorProto.FLOAT, [4])])
    initializers = [helper.make_tensor("go", TensorProto.BOOL, [], [True])]
    if steps is not None:
        initializers.append(helper.make_tensor("steps", TensorProto.INT64, [], [steps]))
    loop = helper.make_node("Loop", ["steps" if steps is not None else "", "go", "x"], ["y"], body=body)
    graph = helper.make_graph([loop], "endless", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def _slow_model(n: int = 40, size: int = 1024) -> onnx.ModelProto:
    nodes = [helper.make_node("MatMul", [f"h{i}", "w"], [f"h{i + 1}"]) for i in range(n)]
    graph = helper.make_graph(nodes, "slow", [helper.make_tensor_value_info("h0", TensorProto.FLOAT, [size, size]),
                                              helper.make_tensor_value_info("w", TensorProto.FLOAT, [size, size])],
                              [helper.make_tensor_value_info(f"h{n}", TensorProto.FLOAT, [size, size])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def _slow_feeds(size: int = 1024) -> dict[str, np.ndarray]:
    return {"h0": np.ones((size, size), np.float32), "w": np.full((size, size), 1e-3, np.float32)}


def test_cancel_ends_the_process() -> None:
    """A cancel while onnxruntime computes ends the worker process and removes its folder (how soon:
    bench/bench_cancel.py)."""
    token = CancelToken()
    run = WorkerRun(_slow_model(), _slow_feeds(), RunOptions()).start()
    running = threading.Event()

    def progress(_fraction: float, text: str) -> None:
        if "Running" in text:
            running.set()

    def cancel_when_running() -> None:
        running.wait(30)
        time.sleep(0.1)  # let onnxruntime get busy inside run(): the cancel must stop a computation
        token.cancel()

    threading.Thread(target=cancel_when_running, daemon=True).start()
    with pytest.raises(Cancelled):
        run.wait(progress, token)
    assert run._process is not None and not run._process.is_alive()
    assert not run.work_dir.exists()


def test_compare_two_models_finds_the_first_changed_value(tmp_path: Path, example_path: Path) -> None:
    from onnxviz.model.runner.compare import compare_results, first_exceeding, per_node

    model = onnx.load(str(example_path))
    feeds = build_feeds(input_specs(model), {}, {"batch": 2}, seed=1)
    changed = onnx.ModelProto()
    changed.CopyFrom(model)
    weight = next(t for t in changed.graph.initializer if t.name == "res.conv2.weight")
    weight.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(weight) * 1.5, weight.name))
    other = tmp_path / "changed.onnx"
    other.write_bytes(changed.SerializeToString())
    a, b = run_model(model, feeds), run_model(other, feeds)
    diffs = compare_results(a, b)
    first = first_exceeding(diffs)
    assert first is not None and first.name == "res.conv2" and first.cosine < 1.0 and first.outside > 0
    assert all(d.max_abs_error == 0.0 and d.outside == 0 for d in diffs if d.order < first.order)
    assert per_node(diffs, "max_abs_error")[first.node] == first.max_abs_error
    a.cleanup()
    b.cleanup()
    assert not a.directory.exists()


def test_tolerance_is_relative_and_absolute_like_allclose() -> None:
    """float32 rounding on large values (2.8e-4 on values around 100) is no difference; a small
    error on values near zero, or a large relative one, is."""
    from onnxviz.model.runner.compare import DEFAULT_TOLERANCE, Tolerance, diff_arrays

    a = np.array([100.0, 120.0, 0.0, -50.0], np.float32)
    rounding = a + np.array([2.8e-4, -3e-4, 0.0, 0.0], np.float32)
    assert diff_arrays(a, rounding)[3] == 0
    assert diff_arrays(a, rounding, Tolerance(rtol=0.0, atol=1e-4))[3] == 2  # the absolute test alone
    near_zero = a + np.array([0.0, 0.0, 5e-5, 0.0], np.float32)
    assert diff_arrays(a, near_zero)[3] == 1
    relative = a * np.array([1.0, 1.002, 1.0, 1.0], np.float32)
    assert diff_arrays(a, relative)[3] == 1
    nan = np.array([np.nan, np.inf, 1.0], np.float32)
    assert diff_arrays(nan, nan)[3] == 0  # NaN where both are NaN, the same Inf: equal
    assert diff_arrays(nan, np.array([1.0, np.inf, np.nan], np.float32))[3] == 2
    assert (DEFAULT_TOLERANCE.rtol, DEFAULT_TOLERANCE.atol) == (1e-3, 1e-5)


def test_first_difference_skips_float32_noise_on_large_values(tmp_path: Path) -> None:
    """Squeezenet's conv with error 2.8e-4 on values around 100 was the 'first difference' at
    tolerance 1e-4; the first value outside rtol/atol is the one that really changed."""
    from onnxviz.model.runner.compare import Tolerance, compare_results, first_exceeding

    def model(scale: float) -> onnx.ModelProto:
        big = numpy_helper.from_array(np.full((4,), 1000.0, np.float32) * np.float32(1 + 3e-7), "big")
        weight = numpy_helper.from_array(np.array([scale], np.float32), "w")
        nodes = [helper.make_node("Mul", ["x", "big"], ["large"]), helper.make_node("Mul", ["large", "w"], ["out"])]
        graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                                  [helper.make_tensor_value_info("out", TensorProto.FLOAT, [4])], [big, weight])
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])

    feeds = {"x": np.array([0.1, 0.2, 0.3, 0.4], np.float32)}
    near = model(1.0)
    near.graph.initializer[0].CopyFrom(numpy_helper.from_array(np.full((4,), 1000.0, np.float32), "big"))
    a = run_model(model(1.0), feeds)
    b = run_model(_save_model(near, tmp_path / "b.onnx"), feeds)
    c = run_model(_save_model(model(1.01), tmp_path / "c.onnx"), feeds)
    try:
        noise = compare_results(a, b)
        assert noise[0].name == "large" and 0 < noise[0].max_abs_error and noise[0].outside == 0
        assert first_exceeding(noise) is None
        assert first_exceeding(compare_results(a, b, Tolerance(0.0, 1e-5))) is not None  # absolute only
        changed = first_exceeding(compare_results(a, c))
        assert changed is not None and changed.name == "out" and changed.outside == 4
    finally:
        for r in (a, b, c):
            r.cleanup()


def _save_model(model: onnx.ModelProto, path: Path) -> Path:
    path.write_bytes(model.SerializeToString())
    return path


def test_values_beyond_the_memory_budget_stay_on_disk() -> None:
    model = _nan_model()
    feeds = {"x": np.ones((2, 3), np.float32)}
    on_disk = run_model(model, feeds, RunOptions(memory_budget=0))
    assert on_disk.pack_path is not None and on_disk.pack_path.parent == on_disk.directory
    in_memory = run_model(model, feeds)
    assert in_memory.pack_path is not None
    if Path("/dev/shm").is_dir():
        assert in_memory.pack_path.parent.parent == Path("/dev/shm")
    np.testing.assert_array_equal(in_memory.array("c"), on_disk.array("c"))
    for result in (on_disk, in_memory):
        folder = result.pack_path.parent
        result.cleanup()
        assert not folder.exists() and not result.directory.exists()


@pytest.mark.parametrize("dtype_name", ["bfloat16", "float8_e4m3fn", "float8_e5m2"])
def test_saved_inputs_of_ml_dtypes_load_back_as_they_were(tmp_path: Path, dtype_name: str) -> None:
    """Run > Save Inputs then Load Inputs: numpy writes some of ml_dtypes' types with a descriptor
    np.load refuses ('<f1' for float8_e5m2), so they are saved as raw bytes and viewed back."""
    import ml_dtypes

    from onnxviz.model.runner.input_files import read_inputs_file
    from onnxviz.model.runner.inputs import InputSpec, conform, save_inputs_file

    dtype = np.dtype(getattr(ml_dtypes, dtype_name))
    array = np.array([[0.5, -1.0, 2.0]], np.float32).astype(dtype)
    spec = next(s for s in input_specs(_model_with_input(dtype_name)) if s.name == "x")
    assert isinstance(spec, InputSpec) and spec.dtype == dtype
    path = tmp_path / "inputs.npz"
    save_inputs_file(path, {"x": array})
    loaded = conform(spec, read_inputs_file(path, [spec])["x"])
    assert loaded.dtype == dtype and loaded.tobytes() == array.tobytes()


def _model_with_input(dtype_name: str) -> onnx.ModelProto:
    elem = {"bfloat16": TensorProto.BFLOAT16, "float8_e4m3fn": TensorProto.FLOAT8E4M3FN,
            "float8_e5m2": TensorProto.FLOAT8E5M2}[dtype_name]
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", elem, [1, 3])],
                              [helper.make_tensor_value_info("y", elem, [1, 3])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def test_a_long_engine_error_is_cut_at_a_word() -> None:
    from onnxviz.model.graph.ort_messages import engine_message as _message

    words = " ".join(f"word{k}" for k in range(200))
    short = _message(RuntimeError(f"[ONNXRuntimeError] : 1 : FAIL : {words}."))
    assert short.endswith("\u2026") and len(short) <= 301
    assert short[:-1].split(" ")[-1] in words.split(" ")  # the last word kept is whole
    assert _message(RuntimeError("Short message.")) == "Short message"


def test_run_folders_of_a_dead_owner_are_swept_and_live_ones_kept(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """An app killed during a session leaves its run folders (values on disk and in shared memory):
    the next run removes those whose owner process is gone, and no other."""
    import subprocess
    import sys

    from onnxviz.model.runner import worker

    temp, shm = tmp_path / "tmp", tmp_path / "shm"
    temp.mkdir()
    shm.mkdir()
    monkeypatch.setattr(worker.tempfile, "tempdir", str(temp))
    monkeypatch.setattr(worker, "SHARED_MEMORY", shm)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True).stdout.strip()
    names = {"dead": f"onnxviz-run-{dead}-abc", "live": f"onnxviz-run-{os.getpid()}-def", "old": "onnxviz-run-xyz"}
    for name in names.values():
        (temp / name).mkdir()
        (shm / name).mkdir()
    elsewhere = f"onnxviz-run-{os.getppid()}-ghi"  # a live process whose TMPDIR is another folder: kept
    leaked = f"onnxviz-run-{os.getpid()}-jkl"      # this process's, its run folder cleaned up: swept
    (shm / elsewhere).mkdir()
    (shm / leaked).mkdir()
    run = WorkerRun(_slow_model(), _slow_feeds(), RunOptions())
    try:
        left = {p.name for p in temp.iterdir()} - {run.work_dir.name}
        assert left == {names["live"], names["old"]}
        assert {p.name for p in shm.iterdir()} == {names["live"], names["old"], elsewhere}
        assert run.work_dir.name.startswith(f"onnxviz-run-{os.getpid()}-")
    finally:
        run._tidy(keep_output=False)


def test_a_live_processs_shared_memory_values_are_kept_whatever_its_temporary_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another onnxviz (another user's TMPDIR) has its run folder elsewhere: its values in shared memory are
    its own, not left over; a folder of this process whose run folder is gone is."""
    from onnxviz.model.runner import worker

    temp, shm = tmp_path / "tmp", tmp_path / "shm"
    temp.mkdir()
    shm.mkdir()
    monkeypatch.setattr(worker.tempfile, "tempdir", str(temp))
    monkeypatch.setattr(worker, "SHARED_MEMORY", shm)
    other = f"onnxviz-run-{os.getppid()}-elsewhere"  # a live process, its run folder in another temp folder
    mine = f"onnxviz-run-{os.getpid()}-gone"
    for name in (other, mine):
        (shm / name).mkdir()
    worker._sweep_orphans()
    assert {p.name for p in shm.iterdir()} == {other}


def test_a_spare_worker_serves_the_next_run_and_a_dead_one_is_replaced() -> None:
    from onnxviz.model.runner import warm_up, worker

    warm_up()
    waiting = worker._spare._waiting
    assert waiting is not None and waiting[0].is_alive()
    pids: list[int | None] = []
    result = run_model(_nan_model(), {"x": np.ones((2, 3), np.float32)}, on_start=lambda run: pids.append(run.pid))
    assert pids == [waiting[0].pid] and worker._spare._waiting is None
    assert "c" in result.values
    result.cleanup()
    warm_up()
    dead = worker._spare._waiting
    assert dead is not None
    os.kill(dead[0].pid, signal.SIGKILL)
    dead[0].join(10)
    result = run_model(_nan_model(), {"x": np.ones((2, 3), np.float32)}, on_start=lambda run: pids.append(run.pid))
    assert pids[-1] not in (None, dead[0].pid) and "c" in result.values
    result.cleanup()


def test_a_spare_worker_ends_when_its_owner_drops_it() -> None:
    """A spare waits on its pipe: when the app ends (even killed) the pipe closes and the spare exits."""
    from onnxviz.model.runner import worker

    process, conn = worker._spare.take()
    conn.close()
    process.join(30)
    assert process.exitcode == 0


def test_an_input_name_longer_than_a_zip_entry_name_runs_and_is_refused_only_for_npz(tmp_path: Path) -> None:
    from onnxviz.model.runner.inputs import save_inputs_file

    name = "x" * 70_000
    graph = helper.make_graph([helper.make_node("Relu", [name], ["y"])], "g",
                              [helper.make_tensor_value_info(name, TensorProto.FLOAT, [3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    feeds = {name: np.array([-1.0, 0.0, 2.0], np.float32)}
    result = run_model(model, feeds)
    np.testing.assert_array_equal(result.array("y"), [0.0, 0.0, 2.0])
    np.testing.assert_array_equal(result.array(name), feeds[name])
    result.cleanup()
    with pytest.raises(RunError, match=r"is too long to be saved in an \.npz file"):
        save_inputs_file(tmp_path / "inputs.npz", feeds)
