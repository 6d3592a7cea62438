"""Issue 17: every model of the test data that onnxruntime runs is run with capture, and every value
capture keeps (tensors, sequences, maps, optionals) equals a plain onnxruntime run's: the graph outputs
those of a plain session, each intermediate value that of a session listing it as an extra output
(see corpus_runs.py). Values of unseeded random operators, and what is computed from them, are not compared."""

from __future__ import annotations

import warnings

import numpy as np
import onnx
import pytest
from corpus_runs import Case, cases, compare, plain_run, random_values
from onnx import TensorProto, helper
from onnx_data import node_model

from onnxviz.model.runner import RunOptions, run_model
from onnxviz.model.runner.capture import Captured, capture

CASES = cases()
# A sample also runs through the worker process, as the window runs a model (one in WORKER_EVERY, and
# every export); the worker takes tensors (and optional tensors) only, as the Run dialog does.
WORKER_EVERY = 40


def _load(case: Case) -> tuple[onnx.ModelProto, dict, dict] | None:
    """The model, its feeds and the plain run's values; None when onnxruntime itself refuses it (an opset
    or operator it does not have, a kernel's own check): not a model onnxruntime runs."""
    model = onnx.load(str(case.path))
    feeds = case.feeds(model)
    if feeds is None:
        return None
    try:
        return model, feeds, plain_run(model, feeds)
    except Exception as exc:  # noqa: BLE001 - onnxruntime's own exception types
        assert type(exc).__module__.startswith("onnxruntime."), exc  # not the harness failing to feed it
        return None


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_captured_values_equal_a_plain_onnxruntime_run(case: Case) -> None:
    loaded = _load(case)
    if loaded is None:
        return
    model, feeds, plain = loaded
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the cases' own overflows
        captured = capture(model, feeds)
    assert captured.engine == "onnxruntime", captured.notes
    done = compare(model, captured, plain)
    assert done.differ == [] and done.missing == []
    assert sum(done.kinds.values()) >= len(model.graph.output) - len(random_values(model) & set(plain))


WORKER_CASES = [c for k, c in enumerate(CASES) if k % WORKER_EVERY == 0 or c.id.startswith("exports/")]


@pytest.mark.parametrize("case", WORKER_CASES, ids=[c.id for c in WORKER_CASES])
def test_worker_run_values_equal_a_plain_onnxruntime_run(case: Case) -> None:
    """The same through run_model (the worker process, values written and read back as the window reads them)."""
    loaded = _load(case)
    if loaded is None or not all(isinstance(v, np.ndarray) for v in loaded[1].values()):
        return
    model, feeds, plain = loaded
    result = run_model(model, feeds)
    try:
        assert result.engine == "onnxruntime", result.notes
        read = Captured(values={name: result.array(name) for name in result.values},
                        structured={entry["name"]: result.structured_value(key) for key, entry in result.structured.items()})
        done = compare(model, read, plain)
    finally:
        result.cleanup()
    assert done.differ == [] and done.missing == []


# -- what the corpus found: each capture that refused or changed a value a plain run gives -----------
def _cast_model(to: int, opset: int = 23) -> onnx.ModelProto:
    graph = helper.make_graph([helper.make_node("Cast", ["x"], ["y"], to=to, name="narrow"),
                               helper.make_node("Cast", ["y"], ["z"], to=TensorProto.FLOAT, name="widen")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("z", TensorProto.FLOAT, [4])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)


@pytest.mark.parametrize("to", [TensorProto.BFLOAT16, TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT8E5M2,
                                TensorProto.INT4, TensorProto.UINT4],
                         ids=["bfloat16", "float8e4m3fn", "float8e5m2", "int4", "uint4"])
def test_bfloat16_float8_and_int4_values_are_captured_on_onnxruntime(to: int) -> None:
    """onnxruntime's numpy conversion refuses bfloat16 and 4-bit values, and takes no ml_dtypes input:
    capture used to fall back to the reference evaluator for any model holding one."""
    x = np.array([1.5, -2.25, 7.0, 0.0], np.float32)
    if to in (TensorProto.INT4, TensorProto.UINT4):  # whole numbers: the engines round halves differently
        x = np.array([1.0, -2.0 if to == TensorProto.INT4 else 2.0, 7.0, 0.0], np.float32)
    model = _cast_model(to)
    captured = capture(model, {"x": x})
    reference = capture(model, {"x": x}, RunOptions(engine="reference"))
    assert captured.engine == "onnxruntime" and not captured.notes
    assert captured.values["y"].dtype == reference.values["y"].dtype
    assert captured.values["y"].tobytes() == reference.values["y"].tobytes()
    fed = capture(_widen_model(to), {"x": captured.values["y"]})  # and fed back in (packed, for 4 bits)
    assert fed.engine == "onnxruntime" and fed.values["z"].tolist() == captured.values["z"].tolist()


def _widen_model(elem: int) -> onnx.ModelProto:
    graph = helper.make_graph([helper.make_node("Cast", ["x"], ["z"], to=TensorProto.FLOAT)], "g",
                              [helper.make_tensor_value_info("x", elem, [4])],
                              [helper.make_tensor_value_info("z", TensorProto.FLOAT, [4])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)], ir_version=10)


def test_string_inputs_run_on_onnxruntime() -> None:
    """String feeds cannot become OrtValues: they used to send every string model to the reference evaluator."""
    model = onnx.load(str(node_model("test_equal_string")))
    feeds = {"x": np.array(["string1", "string2"], object), "y": np.array(["string1", "string3"], object)}
    captured = capture(model, feeds)
    assert captured.engine == "onnxruntime" and captured.values["z"].tolist() == [True, False]


def test_sequence_inputs_and_empty_optionals_are_kept() -> None:
    """A sequence input used to fail in np.asarray; an empty optional was counted as a block-sparse value."""
    model = onnx.load(str(node_model("test_sequence_insert_at_back")))
    feeds = {"sequence": [np.array([1, 2, 3], np.int64), np.array([4, 5, 6], np.int64)],
             "tensor": np.array([7, 8, 9], np.int64)}
    captured = capture(model, feeds)
    assert captured.engine == "onnxruntime"
    assert captured.structured["sequence"] == [[1, 2, 3], [4, 5, 6]] and captured.engines["sequence"] == "input"
    assert captured.structured["output_sequence"] == [[1, 2, 3], [4, 5, 6], [7, 8, 9]]
    optional = helper.make_optional_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, [2]))
    graph = helper.make_graph([helper.make_node("Optional", [], ["o"], type=optional.optional_type.elem_type),
                               helper.make_node("OptionalHasElement", ["o"], ["has"])], "g", [],
                              [helper.make_value_info("o", optional), helper.make_tensor_value_info("has", TensorProto.BOOL, [])])
    result = run_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8), {})
    try:
        assert result.engine == "onnxruntime" and not result.notes and not bool(result.array("has"))
        assert result.structured["o"]["kind"] == "empty optional" and result.structured_value("o") is None
    finally:
        result.cleanup()


def test_float16_outputs_are_a_plain_runs_with_a_note() -> None:
    """onnxruntime runs float16 operators without a CPU kernel in float32; a plain run does not round what
    passes between them, a capture (every value an output) does: the attention's output was 1 ulp off."""
    model = onnx.load(str(node_model("test_attention_4d_fp16_expanded")))
    case = next(c for c in CASES if c.id == "node/test_attention_4d_fp16_expanded")
    feeds = case.feeds(model)
    assert feeds is not None
    plain = plain_run(model, feeds)
    captured = capture(model, feeds)
    np.testing.assert_array_equal(captured.values["Y"], plain["Y"])
    assert len(captured.notes) == 1 and "the graph outputs shown are those of a plain onnxruntime run" in \
        captured.notes[0] and "by up to 0.0004883 (max abs, 'Y')" in captured.notes[0]
    kept = capture(model, feeds, RunOptions(keep=frozenset()))  # no value kept but the outputs: no rounding
    assert not [n for n in kept.notes if "float16" in n]
