"""Values inside If/Loop/Scan bodies: the chosen branch and the last iteration, computed by the
reference evaluator and stored under the body's scope."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx_data import node_cases

from onnxviz.model.runner import RunOptions, run_model, subgraphs
from onnxviz.model.runner.capture import capture
from onnxviz.model.runner.store import value_key

F = TensorProto.FLOAT


def _if_loop_scan_model() -> onnx.ModelProto:
    """x (2,) -> If(c): then y = (x + w) * 2 with w from the outer graph, else x - w;
    Loop 3 times: v <- v + x * iter, with an If inside (its condition: iter > 0);
    Scan over rows of m (3, 2): running sum s <- s + row * 10."""
    then_g = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["t_add"]), helper.make_node("Mul", ["t_add", "two"], ["t_out"])],
        "then", [], [helper.make_tensor_value_info("t_out", F, [2])])
    else_g = helper.make_graph([helper.make_node("Sub", ["x", "w"], ["e_out"])], "else", [],
                               [helper.make_tensor_value_info("e_out", F, [2])])
    inner_then = helper.make_graph([helper.make_node("Neg", ["step"], ["neg"])], "inner_then", [],
                                   [helper.make_tensor_value_info("neg", F, [2])])
    inner_else = helper.make_graph([helper.make_node("Identity", ["step"], ["same"])], "inner_else", [],
                                   [helper.make_tensor_value_info("same", F, [2])])
    loop_body = helper.make_graph(
        [helper.make_node("Cast", ["iter"], ["iter_f"], to=F),
         helper.make_node("Mul", ["x", "iter_f"], ["step"]),
         helper.make_node("Add", ["v_in", "step"], ["v_out"]),
         helper.make_node("Greater", ["iter_f", "zero"], ["positive"]),
         helper.make_node("If", ["positive"], ["signed"], then_branch=inner_then, else_branch=inner_else),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "loop_body",
        [helper.make_tensor_value_info("iter", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_in", F, [2])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_out", F, [2]),
         helper.make_tensor_value_info("signed", F, [2])])
    scan_body = helper.make_graph(
        [helper.make_node("Mul", ["row", "ten"], ["scaled"]), helper.make_node("Add", ["s_in", "scaled"], ["s_out"])],
        "scan_body", [helper.make_tensor_value_info("s_in", F, [2]), helper.make_tensor_value_info("row", F, [2])],
        [helper.make_tensor_value_info("s_out", F, [2]), helper.make_tensor_value_info("scaled", F, [2])])
    nodes = [
        helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g),
        helper.make_node("Loop", ["trips", "", "v0"], ["v_final", "signs"], body=loop_body),
        helper.make_node("Scan", ["s0", "m"], ["s_final", "rows10"], body=scan_body, num_scan_inputs=1),
    ]
    inits = [numpy_helper.from_array(np.array([10.0, 20.0], np.float32), "w"),
             numpy_helper.from_array(np.array(2.0, np.float32), "two"),
             numpy_helper.from_array(np.array(0.0, np.float32), "zero"),
             numpy_helper.from_array(np.array(10.0, np.float32), "ten"),
             numpy_helper.from_array(np.array(3, np.int64), "trips"),
             numpy_helper.from_array(np.zeros(2, np.float32), "v0"),
             numpy_helper.from_array(np.zeros(2, np.float32), "s0")]
    graph = helper.make_graph(
        nodes, "bodies",
        [helper.make_tensor_value_info("x", F, [2]), helper.make_tensor_value_info("c", TensorProto.BOOL, []),
         helper.make_tensor_value_info("m", F, [3, 2])],
        [helper.make_tensor_value_info(n, F, shape) for n, shape in
         (("y", [2]), ("v_final", [2]), ("signs", [3, 2]), ("s_final", [2]), ("rows10", [3, 2]))], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


FEEDS = {"x": np.array([1.0, 2.0], np.float32), "c": np.array(True),
         "m": np.arange(6, dtype=np.float32).reshape(3, 2)}


def _bodies(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> dict[str, subgraphs.BodyRun]:
    return {b.scope: b for b in capture(model, feeds).bodies}


def test_inner_values_equal_hand_computed_ones() -> None:
    bodies = _bodies(_if_loop_scan_model(), FEEDS)
    assert set(bodies) == {"0.then_branch", "1.body", "1.body/4.then_branch", "2.body"}
    then = bodies["0.then_branch"]
    np.testing.assert_array_equal(then.values["t_add"], [11.0, 22.0])
    np.testing.assert_array_equal(then.values["t_out"], [22.0, 44.0])
    assert then.producers == {"t_add": 0, "t_out": 1} and "then branch" in then.description
    loop = bodies["1.body"]  # the last iteration: iter 2, v_in = 0 + x*0 + x*1
    assert loop.description.startswith("iteration 3 of 3")
    np.testing.assert_array_equal(loop.values["iter_f"], 2.0)
    np.testing.assert_array_equal(loop.values["step"], [2.0, 4.0])
    np.testing.assert_array_equal(loop.values["v_out"], [3.0, 6.0])
    np.testing.assert_array_equal(bodies["1.body/4.then_branch"].values["neg"], [-2.0, -4.0])
    scan = bodies["2.body"]  # the last row [4, 5] on top of the sum of rows 0 and 1, times ten
    assert scan.description.startswith("iteration 3 of 3")
    np.testing.assert_array_equal(scan.values["scaled"], [40.0, 50.0])
    np.testing.assert_array_equal(scan.values["s_out"], [60.0, 90.0])


def test_if_shows_the_branch_the_condition_chose() -> None:
    bodies = _bodies(_if_loop_scan_model(), {**FEEDS, "c": np.array(False)})
    assert "0.then_branch" not in bodies
    np.testing.assert_array_equal(bodies["0.else_branch"].values["e_out"], [-9.0, -18.0])


def test_iterations_stop_at_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(subgraphs, "MAX_ITERATIONS", 2)
    loop = _bodies(_if_loop_scan_model(), FEEDS)["1.body"]
    assert loop.description == "iteration 2 (stopped there: the limit of 2 iterations)"
    np.testing.assert_array_equal(loop.values["v_out"], [1.0, 2.0])
    monkeypatch.setattr(subgraphs, "MAX_ITERATIONS", 1000)
    monkeypatch.setattr(subgraphs, "TIME_LIMIT_S", 0.0)
    scan = _bodies(_if_loop_scan_model(), FEEDS)["2.body"]
    assert scan.description == "iteration 1 (stopped there: the time limit of 0 s)"
    np.testing.assert_array_equal(scan.values["s_out"], [0.0, 10.0])


def test_bodies_stop_at_the_total_time_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(subgraphs, "TOTAL_TIME_LIMIT_S", 0.0)
    captured = capture(_if_loop_scan_model(), FEEDS)
    assert captured.bodies == []
    assert any("reached the time limit of 0 s" in n for n in captured.notes)


def test_zero_iterations_give_no_body_values() -> None:
    model = _if_loop_scan_model()
    trips = next(t for t in model.graph.initializer if t.name == "trips")
    trips.CopyFrom(numpy_helper.from_array(np.array(0, np.int64), "trips"))
    captured = capture(model, FEEDS)
    assert {b.scope for b in captured.bodies} == {"0.then_branch", "2.body"}
    np.testing.assert_array_equal(captured.values["v_final"], [0.0, 0.0])


def test_stored_with_scope_and_reference_engine(tmp_path: Path) -> None:
    result = run_model(_if_loop_scan_model(), FEEDS, RunOptions(), out_dir=tmp_path / "run")
    record = result.record("1.body", "v_out")
    assert record is not None and record.scope == "1.body" and record.engine == "reference"
    assert record.node == 2 and record.op_type == "Add" and record.key == "1.body::v_out"
    np.testing.assert_array_equal(result.array(record.key), [3.0, 6.0])
    assert result.values["y"].engine == "onnxruntime" and result.values["y"].scope == ""
    assert result.scopes["1.body"].startswith("iteration 3 of 3")
    index = json.loads((tmp_path / "run" / "index.json").read_text())
    assert index["values"]["0.then_branch::t_out"]["scope"] == "0.then_branch"
    assert ("1.body", 2) in result.measure("max_abs") and result.measure("max_abs")[("", 0)] == 44.0
    assert all(r.scope == "" for r in result.outputs_of(2))


def _corpus(name: str) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    folder = node_cases() / name
    model = onnx.load(str(folder / "model.onnx"))
    feeds = {}
    for k, value in enumerate(model.graph.input):
        tensor = onnx.TensorProto()
        tensor.ParseFromString((folder / "test_data_set_0" / f"input_{k}.pb").read_bytes())
        feeds[value.name] = numpy_helper.to_array(tensor)
    return model, feeds


def test_corpus_if_loop_scan() -> None:
    model, feeds = _corpus("test_if")
    then = _bodies(model, feeds)["0.then_branch"]
    branch = next(a.g for a in model.graph.node[0].attribute if a.name == "then_branch")
    expected = numpy_helper.to_array(branch.node[0].attribute[0].t)
    np.testing.assert_array_equal(then.values["then_out"], expected)

    model, feeds = _corpus("test_loop11")  # y <- y + x[iter] for 5 trips
    captured = capture(model, feeds)
    loop = captured.bodies[0]
    assert loop.scope == "0.body" and loop.description.startswith("iteration 5 of 5")
    np.testing.assert_array_equal(loop.values["end"], 5)
    np.testing.assert_array_equal(loop.values["y_out"], captured.values["res_y"])

    model, feeds = _corpus("test_scan9_sum")
    scan = _bodies(model, feeds)["0.body"]
    np.testing.assert_array_equal(scan.values["sum_out"], feeds["initial"] + feeds["x"].sum(axis=0))


def test_body_that_cannot_run_is_explained() -> None:
    model, feeds = _corpus("test_scan_sum")  # opset 8: batch axis and sequence_lens
    captured = capture(model, feeds)
    assert not captured.bodies
    assert any("inside Scan node" in n and "opset 8" in n for n in captured.notes)


def _function_model() -> onnx.ModelProto:
    """Two calls of local function ``Scaled`` (y = LeakyRelu(x * s, alpha) with alpha an attribute
    reference), which itself calls local function ``Square``."""
    square = helper.make_function("local", "Square", ["a"], ["b"], [helper.make_node("Mul", ["a", "a"], ["b"])],
                                  [helper.make_opsetid("", 17)])
    leaky = helper.make_node("LeakyRelu", ["scaled"], ["leaky"])
    leaky.attribute.add(name="alpha", ref_attr_name="alpha", type=onnx.AttributeProto.FLOAT)
    scaled = helper.make_function(
        "local", "Scaled", ["x", "s"], ["y"],
        [helper.make_node("Mul", ["x", "s"], ["scaled"]), leaky,
         helper.make_node("Square", ["leaky"], ["y"], domain="local")],
        [helper.make_opsetid("", 17), helper.make_opsetid("local", 1)], attributes=["alpha"])
    graph = helper.make_graph(
        [helper.make_node("Scaled", ["x", "s"], ["h"], domain="local", name="first", alpha=0.5),
         helper.make_node("Scaled", ["h", "s"], ["y"], domain="local", name="second", alpha=0.1)],
        "calls", [helper.make_tensor_value_info("x", F, [3])], [helper.make_tensor_value_info("y", F, [3])],
        [numpy_helper.from_array(np.array([2.0, 2.0, 2.0], np.float32), "s")])
    return helper.make_model(graph, functions=[scaled, square], ir_version=8,
                             opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("local", 1)])


def test_local_function_values_come_from_its_first_call() -> None:
    x = np.array([-1.0, 0.5, 2.0], np.float32)
    captured = capture(_function_model(), {"x": x})
    bodies = {b.scope: b for b in captured.bodies}
    scaled, square = bodies["fn:local:Scaled:"], bodies["fn:local:Square:"]
    assert np.allclose(scaled.values["scaled"], x * 2)
    assert np.allclose(scaled.values["leaky"], [-1.0, 1.0, 4.0])  # alpha 0.5 bound from the first call
    assert np.allclose(square.values["b"], [1.0, 1.0, 16.0])
    assert "first of 2 calls" in scaled.description and "'first'" in scaled.description
    assert scaled.producers["leaky"] == 1
    assert np.allclose(captured.values["h"], scaled.values["y"])  # the main run agrees with the body's run


def test_local_function_values_are_stored_under_the_function_scope(tmp_path: Path) -> None:
    result = run_model(_function_model(), {"x": np.ones(3, np.float32)}, RunOptions(), out_dir=tmp_path)
    record = result.record("fn:local:Scaled:", "leaky")
    assert record is not None and record.engine == "reference"
    assert np.allclose(result.array(value_key("fn:local:Scaled:", "leaky")), 2.0)
    assert "first of 2 calls" in result.scopes["fn:local:Scaled:"]
