"""Runs and memory: external weights mapped by onnxruntime, the capture's size estimated before it
starts (and a part captured when it will not fit), values kept when a run fails part-way."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from conftest import dumped, run_cli
from onnx import TensorProto, helper, numpy_helper

from onnxviz.model.runner import RunError, RunOptions, run_model
from onnxviz.model.runner.budget import CaptureTooBig, capture_size, check_fits, upstream_values
from onnxviz.model.runner.capture import capture
from onnxviz.model.runner.packing import static_shapes
from onnxviz.model.runner.protocol import RunRequest
from onnxviz.model.runner.worker import _data_dir, _load_model


def external_model(folder: Path) -> Path:
    """x [2, 4] @ w [4, 4] + b: w and b stored in weights.bin next to the model."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((4, 4)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "b")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["xw"], name="mm"), helper.make_node("Add", ["xw", "b"], ["y"], name="add"),
         helper.make_node("Relu", ["y"], ["out"], name="relu")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [2, 4])], [w, b])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=9)
    onnx.save(model, folder / "model.onnx", save_as_external_data=True, all_tensors_to_one_file=True,
              location="weights.bin", size_threshold=0)
    return folder / "model.onnx"


def _expected(path: Path, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Every value from plain onnxruntime (the file, with its data), as the reference."""
    model = onnx.load(str(path))
    model.graph.output.extend(onnx.ValueInfoProto(name=n) for n in ("xw", "y"))
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds), strict=True))


FEEDS = {"x": np.arange(8, dtype=np.float32).reshape(2, 4) - 3}


def test_worker_leaves_external_weights_on_disk_for_onnxruntime_to_map(tmp_path: Path) -> None:
    path = external_model(tmp_path)
    request = RunRequest(path, tmp_path / "inputs.npz", tmp_path / "out", tmp_path)
    model = _load_model(request)
    weights = {t.name: t for t in model.graph.initializer}
    assert all(t.data_location == TensorProto.EXTERNAL and not t.raw_data for t in weights.values())
    assert _data_dir(request, model) == tmp_path.resolve()  # onnxruntime reads the weights from there


def test_capture_with_weights_left_on_disk_matches_onnxruntime(tmp_path: Path) -> None:
    path = external_model(tmp_path)
    expected = _expected(path, FEEDS)
    for engine in ("onnxruntime", "reference"):
        model = onnx.load(str(path), load_external_data=False)
        got = capture(model, FEEDS, RunOptions(engine=engine), data_dir=tmp_path)
        for name in ("xw", "y", "out"):
            np.testing.assert_allclose(got.values[name], expected[name], rtol=1e-5, err_msg=f"{engine}: {name}")


def test_run_of_an_edited_external_model_runs_what_the_document_holds(tmp_path: Path) -> None:
    """The window hands the worker its document's bytes (external references kept) and the folder."""
    path = external_model(tmp_path)
    model = onnx.load(str(path), load_external_data=False)
    model.graph.node[2].op_type = "Sigmoid"  # an edit: the weights stay in weights.bin
    result = run_model(model.SerializeToString(), FEEDS, base_dir=tmp_path)
    try:
        y = _expected(path, FEEDS)["y"]
        np.testing.assert_allclose(result.array("out"), 1 / (1 + np.exp(-y)), rtol=1e-5, atol=1e-6)
    finally:
        result.cleanup()


def chain_model(width: int = 1000) -> onnx.ModelProto:
    """x [1, width] through Relu, Neg, Abs, Exp (each 4 * width bytes), and a side branch Sigmoid off x."""
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="relu"), helper.make_node("Neg", ["a"], ["b"], name="neg"),
             helper.make_node("Abs", ["b"], ["c"], name="abs"), helper.make_node("Sigmoid", ["x"], ["s"], name="side"),
             helper.make_node("Add", ["c", "s"], ["out"], name="add")]
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", width])],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["n", width])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=9)


def test_capture_size_follows_the_actual_inputs_and_the_chosen_part() -> None:
    model = chain_model()
    size = capture_size(model, static_shapes(model, {"x": np.zeros((3, 1000), np.float32)}))  # n = 3
    assert size.unknown == 0 and size.sizes["a"] == 3 * 1000 * 4
    assert size.total() == 5 * 12000
    assert size.total(frozenset()) == 12000  # the graph output only
    assert upstream_values(model.graph.node, 2) == {"a", "b", "c"}  # abs, and relu and neg above it
    assert size.total(upstream_values(model.graph.node, 2)) == 4 * 12000
    with pytest.raises(CaptureTooBig, match=r"capturing every value needs 117\.2 KB .* but 50\.0 KB is available"):
        check_fits(size, None, 50 * 1024)
    check_fits(size, frozenset(), 50 * 1024)  # the outputs only fit


def huge_model() -> onnx.ModelProto:
    """x [1] expanded to 200000 x 200000 floats (160 GB): shape inference tells, nothing runs."""
    huge = helper.make_graph(
        [helper.make_node("Expand", ["x", "shape"], ["big"], name="expand"),
         helper.make_node("ReduceSum", ["big"], ["out"], name="sum", keepdims=0)], "huge",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [])],
        [numpy_helper.from_array(np.array([200000, 200000], np.int64), "shape")])
    return helper.make_model(huge, opset_imports=[helper.make_opsetid("", 18)], ir_version=9)


def test_a_capture_that_would_not_fit_is_refused_before_it_runs_with_its_parts_sizes() -> None:
    model = huge_model()
    with pytest.raises(CaptureTooBig) as caught:
        run_model(model, {"x": np.ones(1, np.float32)})
    assert caught.value.size.sizes["big"] == 200000 * 200000 * 4
    assert caught.value.need == 160_000_000_000 + 4 + (1 << 30) and "is available" in caught.value.message


def test_a_run_captures_only_the_chosen_part_and_says_so() -> None:
    model = chain_model()
    feeds = {"x": np.linspace(-1, 1, 2000, dtype=np.float32).reshape(2, 1000)}
    keep = upstream_values(model.graph.node, 1)  # neg: a and b
    for engine in ("onnxruntime", "reference"):
        result = run_model(model, feeds, RunOptions(engine=engine, keep=keep))
        try:
            assert set(result.values) == {"x", "a", "b", "out"}, engine
            np.testing.assert_allclose(result.array("b"), -np.maximum(feeds["x"], 0))
            assert any("a part was captured: 3 of 5 node outputs" in n for n in result.notes)
        finally:
            result.cleanup()


def test_cli_dump_refuses_a_capture_that_would_not_fit_and_names_the_flags(capsys: pytest.CaptureFixture[str],
                                                                          tmp_path: Path) -> None:
    onnx.save(huge_model(), tmp_path / "huge.onnx")
    code, out, err = run_cli(capsys, "run", str(tmp_path / "huge.onnx"), "--dump", str(tmp_path / "dump"))
    assert code == 2 and not out and err.count("\n") == 1
    assert "capturing every value needs 150.0 GB of memory at its peak, but " in err
    assert "capture a part with --capture outputs or --capture upstream-of:NODE" in err


@pytest.mark.parametrize(("part", "kept"), [("outputs", {"x", "out"}), ("upstream-of:neg", {"x", "a", "b", "out"}),
                                            ("upstream-of:c", {"x", "a", "b", "c", "out"}),
                                            ("all", {"x", "a", "b", "c", "s", "out"})])
def test_cli_dump_captures_the_part_asked_for(capsys: pytest.CaptureFixture[str], tmp_path: Path, part: str,
                                              kept: set[str]) -> None:
    onnx.save(chain_model(), tmp_path / "chain.onnx")
    code, _, _ = run_cli(capsys, "run", str(tmp_path / "chain.onnx"), "--dump", str(tmp_path / "d"), "--capture", part)
    assert code == 0
    assert set(json.loads((tmp_path / "d" / "index.json").read_text())["values"]) == kept


@pytest.mark.parametrize(("part", "message"), [("some", "'some' is not all, outputs or upstream-of:NODE"),
                                               ("upstream-of:ghost", "no node or value named 'ghost'")])
def test_cli_capture_mistakes_are_one_sentence(capsys: pytest.CaptureFixture[str], tmp_path: Path, part: str,
                                               message: str) -> None:
    onnx.save(chain_model(), tmp_path / "chain.onnx")
    code, out, err = run_cli(capsys, "run", str(tmp_path / "chain.onnx"), "--dump", str(tmp_path / "d"),
                             "--capture", part)
    assert code == 2 and not out and message in err and err.count("\n") == 1


def failing_model() -> onnx.ModelProto:
    """x [2, 3] -> Relu 'a' -> Reshape to [7] (fails on both engines) -> Neg; a side branch Exp off x."""
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="relu"),
             helper.make_node("Reshape", ["a", "seven"], ["r"], name="bad_reshape"),
             helper.make_node("Neg", ["r"], ["out"], name="neg"),
             helper.make_node("Exp", ["x"], ["side"], name="exp")]
    graph = helper.make_graph(nodes, "fails", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, [7]),
                               helper.make_tensor_value_info("side", TensorProto.FLOAT, [2, 3])],
                              [numpy_helper.from_array(np.array([7], np.int64), "seven")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=9)


def test_a_failed_run_keeps_the_values_computed_before_the_failing_node() -> None:
    x = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
    with pytest.raises(RunError) as caught:
        run_model(failing_model(), {"x": x})
    error = caught.value
    assert error.node == 1 and "node 'bad_reshape' (Reshape)" in error.message
    partial = error.partial
    assert partial is not None
    try:
        assert set(partial.values) == {"x", "a", "side"}  # not r or out, which need the failed node
        np.testing.assert_array_equal(partial.array("a"), np.maximum(x, 0))
        np.testing.assert_allclose(partial.array("side"), np.exp(x), rtol=1e-6)
        assert partial.values["a"].node == 0 and partial.values["side"].node == 3  # positions in the model
        assert partial.directory.is_dir()
    finally:
        partial.cleanup()
    assert not partial.directory.exists()


def test_cli_dump_of_a_failing_run_keeps_what_was_computed(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    onnx.save(failing_model(), tmp_path / "fails.onnx")
    code, out, err = run_cli(capsys, "run", str(tmp_path / "fails.onnx"), "--dump", str(tmp_path / "d"))
    assert code == 2 and not out and err.count("\n") == 1
    assert "node 'bad_reshape' (Reshape)" in err and f"the 3 values computed before it were written to {tmp_path / 'd'}" in err
    index = json.loads((tmp_path / "d" / "index.json").read_text())
    assert set(index["values"]) == {"x", "a", "side"}
    x = dumped(tmp_path / "d", "x")
    np.testing.assert_allclose(dumped(tmp_path / "d", "side"), np.exp(x), rtol=1e-6)


def test_weights_are_read_into_memory_when_onnxruntime_cannot_map_them(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """An onnxruntime without the folder setting looks for the weights elsewhere: the run still works."""
    from onnxviz.model.runner import capture as capture_module

    monkeypatch.setattr(capture_module, "EXTERNAL_FOLDER_KEY", "session.no_such_setting")
    path = external_model(tmp_path)
    got = capture(onnx.load(str(path), load_external_data=False), FEEDS, data_dir=tmp_path)
    assert got.engine == "onnxruntime" and any("could not map the external weights" in n for n in got.notes)
    np.testing.assert_allclose(got.values["out"], _expected(path, FEEDS)["out"], rtol=1e-5)
