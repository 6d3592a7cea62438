"""Generated inputs that run: declared sizes kept (zero included), every dimension settable by name or by input
and axis, sizes chosen from the graph and tried in the worker, and a refusal by onnxruntime never passed off as
a success of the reference evaluator. Each run is checked against a plain onnxruntime session fed the arrays
the run says it used."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from conftest import TEST_DATA, dumped, run_cli
from onnx import TensorProto, helper, numpy_helper
from size_models import kv_cache_decoder, reflect_pad_audio, upsampling_cnn

from onnxviz.model.runner import RunError, RunOptions, run_model
from onnxviz.model.runner.inputs import input_specs, parse_dims
from onnxviz.model.runner.sizes import (
    evaluate,
    expression_names,
    inputs_to_run,
    plan_sizes,
    resolve_dims,
    settable,
)

EXPORTS = TEST_DATA / "exports"
OUTPUTS_ONLY = RunOptions(capture=False)


def _save(model: onnx.ModelProto, path: Path) -> Path:
    onnx.save(model, path)
    return path


def _plain_outputs(model: onnx.ModelProto | Path, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """An independent run: onnxruntime's own session, no capture, on ``feeds``."""
    data = model.read_bytes() if isinstance(model, Path) else model.SerializeToString()
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 4
    session = ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])
    wanted = {i.name for i in session.get_inputs()}
    return session.run(None, {k: v for k, v in feeds.items() if k in wanted})


def _generated_run(model: onnx.ModelProto | Path, dims: dict[str, int] | None = None):  # noqa: ANN202
    proto = onnx.load(str(model)) if isinstance(model, Path) else model
    feeds, generated = inputs_to_run(input_specs(proto), {}, dims or {})
    return run_model(model, feeds, OUTPUTS_ONLY, generated=generated)


def _zero_and_unnamed() -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu"), helper.make_node("Gather", ["table", "idx"], ["z"])],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [0, 3]),
              helper.make_tensor_value_info("idx", TensorProto.INT64, [None, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [0, 3]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.arange(20, dtype=np.float32).reshape(4, 5), "table")])
    return helper.make_model(graph, ir_version=8, opset_imports=[helper.make_opsetid("", 17)])


def test_a_declared_zero_is_generated_as_zero_and_onnxruntime_runs_it() -> None:
    """An input declared [0, 3] was generated [1, 3]: onnxruntime refused it, the reference evaluator ran
    and the output came back [1, 3] against a declared [0, 3], exit 0."""
    result = _generated_run(_zero_and_unnamed())
    try:
        assert result.engine == "onnxruntime" and not result.notes
        assert result.values["x"].shape == (0, 3) and result.values["y"].shape == (0, 3)
        assert result.values["idx"].shape == (1, 2) and result.dims == {"idx[0]": 1}
        assert "x float32 [0, 3] (generated)" in result.inputs_text()
    finally:
        result.cleanup()


def test_an_axis_without_size_or_name_is_settable_as_input_and_axis(capsys: pytest.CaptureFixture[str],
                                                                     tmp_path: Path) -> None:
    path = _save(_zero_and_unnamed(), tmp_path / "m.onnx")
    code, out, err = run_cli(capsys, "run", str(path), "--dim", "idx[0]=3", "--json", "--values")
    assert code == 0, err
    printed = json.loads(out)
    assert [(i["name"], i["shape"], i["generated"]) for i in printed["inputs"]] == [("x", [0, 3], True),
                                                                                   ("idx", [3, 2], True)]
    z = next(o for o in printed["outputs"] if o["name"] == "z")
    assert z["shape"] == [3, 2, 5] and printed["dims"] == {}  # set by the user: nothing chosen
    code, out, err = run_cli(capsys, "run", str(path))
    assert code == 0 and "the generated inputs ran with --dim 'idx[0]'=1" in err


@pytest.mark.parametrize(("dim", "message"), [
    ("foo=3", "--dim foo: no input of the model has a dimension named 'foo'; its dimensions are: idx[0]"),
    ("x[0]=3", "--dim x[0]: axis 0 of input 'x' is declared 0, a fixed size"),
    ("nope[1]=2", "--dim nope[1]: the model has no input named 'nope'; its inputs are: idx, x"),
    ("idx[5]=2", "--dim idx[5]: input 'idx' has 2 dimensions, so it has no axis 5"),
    ("idx[0]=-1", "'idx[0]=-1' is not NAME=SIZE with a size of 0 or more"),
])
def test_a_dim_that_matches_nothing_is_an_error(capsys: pytest.CaptureFixture[str], tmp_path: Path, dim: str,
                                               message: str) -> None:
    path = _save(_zero_and_unnamed(), tmp_path / "m.onnx")
    code, out, err = run_cli(capsys, "run", str(path), "--dim", dim)
    assert code == 2 and not out
    assert err.startswith("onnxviz: error: ") and message in err and err.count("\n") == 1


def test_dimensions_by_name_by_input_and_axis_and_inside_expressions() -> None:
    specs = input_specs(kv_cache_decoder(mask_dim="past_sequence_length + sequence_length"))
    assert settable(specs) == ["batch_size", "sequence_length", "past_sequence_length"]
    assert resolve_dims(specs, parse_dims(["input_ids[1]=8", "past_sequence_length=0"])) == {
        "sequence_length": 8, "past_sequence_length": 0}
    with pytest.raises(RunError, match=r"is 'past_sequence_length \+ sequence_length'; set past_sequence_length, "
                                       "sequence_length instead"):
        resolve_dims(specs, {"attention_mask[1]": 4})
    assert expression_names("s0 + s1") == ["s0", "s1"] and expression_names("batch") is None
    assert evaluate("2*s0 + 1", {"s0": 3}) == 7 and evaluate("floor(s0/2)", {"s0": 5}) == 2
    assert evaluate("s0 - 4", {"s0": 3}) is None and evaluate("__import__('os')", {}) is None


@pytest.mark.parametrize("variant", ["named total", "expression", "dynamo names"])
def test_a_kv_cache_decoder_gets_a_mask_as_long_as_past_and_current(variant: str) -> None:
    mask, past, sequence = {"named total": ("total_sequence_length", "past_sequence_length", "sequence_length"),
                            "expression": ("past_sequence_length + sequence_length", "past_sequence_length",
                                           "sequence_length"),
                            "dynamo names": ("s2", "s1", "s0")}[variant]
    model = kv_cache_decoder(mask_dim=mask, past=past, sequence=sequence)
    ones = {s.name: np.zeros([1 if isinstance(d, str) else d for d in s.shape or ()], s.dtype)
            for s in input_specs(model)}
    with pytest.raises(Exception, match="key_padding_mask"):  # every free size 1: the mask is one too short
        _plain_outputs(model, ones)
    result = _generated_run(model)
    try:
        assert result.engine == "onnxruntime" and not any("reference" in n for n in result.notes)
        fed = result.input_arrays()
        total = fed["past_key_values.0.key"].shape[2] + fed["input_ids"].shape[1]
        assert fed["attention_mask"].shape == (1, total)
        expected = _plain_outputs(model, fed)[0]
        np.testing.assert_array_equal(np.asarray(result.array("logits")), expected)
    finally:
        result.cleanup()


def test_a_reshape_that_baked_a_sequence_length_gets_that_length(capsys: pytest.CaptureFixture[str],
                                                                 tmp_path: Path) -> None:
    from size_models import baked_reshape

    path = _save(baked_reshape(50), tmp_path / "baked.onnx")
    code, out, err = run_cli(capsys, "run", str(path), "--json")
    assert code == 0, err
    printed = json.loads(out)
    assert printed["engine"] == "onnxruntime" and printed["dims"] == {"batch": 1, "sequence": 50}
    assert printed["inputs"] == [{"name": "hidden", "generated": True, "dtype": "float32", "shape": [1, 50, 8]}]
    assert "sizes the graph suggests: sequence=50 (Reshape '/attn/Reshape' to [1, 50, 2, 4])." in printed["notes"]
    assert "the generated inputs ran with --dim batch=1 --dim sequence=50" in err


def test_a_reflect_pad_and_a_strided_conv_get_samples_tried_in_the_worker(capsys: pytest.CaptureFixture[str],
                                                                         tmp_path: Path) -> None:
    """One sample is refused by the reflect Pad, which suggests 65; the Conv after it needs 128 more than its
    pads give: the worker tries sizes until one runs (before: onnxruntime refused 1 sample, the reference
    evaluator made NaN, exit 0)."""
    model = reflect_pad_audio(pad=64, kernel=256, stride=128)
    dump = tmp_path / "dump"
    code, out, err = run_cli(capsys, "run", str(_save(model, tmp_path / "vad.onnx")), "--dump", str(dump))
    assert code == 0, err
    assert "ran on onnxruntime (graph optimizations off)" in out and "NaN" not in out
    assert "note: the generated inputs' first sizes (batch=1, samples=1) did not run (node '/stft/Pad' (Pad)" in out
    assert "note: sizes the graph suggests: samples>=65 (reflect Pad '/stft/Pad' of 64)." in out
    index = json.loads((dump / "index.json").read_text())
    fed = dumped(dump, "input")
    assert fed.shape[1] >= 128 and index["dims"]["samples"] == fed.shape[1] and index["generated"] == ["input"]
    np.testing.assert_array_equal(dumped(dump, "output"),
                                  _plain_outputs(model, {"input": fed})[0])


def test_an_upsampling_cnn_gets_sizes_that_are_multiples_of_its_downsampling(tmp_path: Path) -> None:
    model = upsampling_cnn()
    with pytest.raises(Exception, match="Concat"):
        _plain_outputs(model, {"images": np.zeros((1, 3, 1, 1), np.float32)})
    result = _generated_run(model)
    try:
        assert result.engine == "onnxruntime" and result.dims["height"] % 8 == 0 and result.dims["width"] % 8 == 0
    finally:
        result.cleanup()


@pytest.mark.parametrize("name", sorted(p.stem for p in EXPORTS.glob("*.onnx")))
def test_generated_inputs_run_on_every_export(name: str) -> None:
    path = EXPORTS / f"{name}.onnx"
    result = _generated_run(path)
    try:
        assert result.engine == "onnxruntime" and not any("reference evaluator" in n for n in result.notes)
        assert all(o in result.values or o in result.structured for o in result.outputs)
        fed = {k: np.asarray(v) for k, v in result.input_arrays().items()}
        for out, expected in zip(result.outputs, _plain_outputs(path, fed), strict=True):
            got = np.asarray(result.array(out)) if out in result.values else None
            if got is not None and got.dtype.kind in "fc":
                np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)
            elif got is not None:
                np.testing.assert_array_equal(got, np.asarray(expected, dtype=got.dtype))
    finally:
        result.cleanup()


def test_sizes_that_cannot_run_are_an_error_not_a_reference_run(capsys: pytest.CaptureFixture[str],
                                                                tmp_path: Path) -> None:
    """No size of N makes N x 3 elements into 7: every candidate fails, the run is an error (exit 2) naming
    the node and the sizes tried; the reference evaluator is not asked."""
    graph = helper.make_graph([helper.make_node("Reshape", ["x", "shape"], ["y"], name="/Reshape")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [7])],
                              [numpy_helper.from_array(np.array([7], np.int64), "shape")])
    path = _save(helper.make_model(graph, ir_version=8, opset_imports=[helper.make_opsetid("", 17)]),
                 tmp_path / "never.onnx")
    code, out, err = run_cli(capsys, "run", str(path))
    assert code == 2 and not out
    assert err.startswith("onnxviz: error: ONNX Runtime could not run the model on the generated inputs (N=1): "
                          "node '/Reshape' (Reshape) failed")
    assert "nor on 9 other sizes (N=2; N=4; N=8; N=16; ...)" in err and "reference" not in err
    assert err.rstrip().endswith("Give the inputs from files, or sizes that run")
    code, out, err = run_cli(capsys, "run", str(path), "--engine", "reference")  # asked for: the user's choice
    assert code == 2 and "the reference evaluator failed" in err


def test_sizes_of_given_arrays_fix_the_generated_inputs_of_the_same_dimension(capsys: pytest.CaptureFixture[str],
                                                                              tmp_path: Path) -> None:
    ids = np.ones((1, 7), np.int64)
    np.save(tmp_path / "ids.npy", ids)
    path = EXPORTS / "bert_legacy.onnx"
    code, out, err = run_cli(capsys, "run", str(path), "--input", f"input_ids={tmp_path / 'ids.npy'}", "--json")
    assert code == 0, err
    shapes = {i["name"]: (i["shape"], i["generated"]) for i in json.loads(out)["inputs"]}
    assert shapes == {"input_ids": ([1, 7], False), "token_type_ids": ([1, 7], True),
                      "attention_mask": ([1, 7], True)}
    assert "--dim" not in err  # every size was set by the file
    code, _, err = run_cli(capsys, "run", str(path), "--input", f"input_ids={tmp_path / 'ids.npy'}",
                           "--dim", "sequence=5")
    assert code == 2 and "--dim sequence=5, but an input given from a file has sequence=7" in err


def test_the_plan_prefers_the_sizes_that_ran_last_and_keeps_fixed_ones() -> None:
    from size_models import baked_reshape

    model = baked_reshape(50)
    specs = input_specs(model)
    plan = plan_sizes(model, specs, {}, preferred={"sequence": 12})
    assert plan.first == {"batch": 1, "sequence": 12} and plan.candidates[0]["sequence"] == 50
    fixed = plan_sizes(model, specs, {"sequence": 3})
    assert fixed.first["sequence"] == 3 and all(c["sequence"] == 3 for c in fixed.candidates)


def test_a_custom_operator_and_a_missing_locale_get_one_sentence(capsys: pytest.CaptureFixture[str],
                                                                 tmp_path: Path) -> None:
    graph = helper.make_graph([helper.make_node("MyOp", ["x"], ["y"], domain="my.domain", name="custom")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    custom = _save(helper.make_model(graph, ir_version=8, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid("my.domain", 1)]), tmp_path / "custom.onnx")
    code, _, err = run_cli(capsys, "run", str(custom))
    assert code == 2 and err == ("onnxviz: error: node 'custom' (MyOp) is the custom operator 'my.domain:MyOp', whose "
                                 "library is not registered with onnxruntime here and which the reference evaluator "
                                 "does not know; run the model where that library is loaded\n")
    graph = helper.make_graph([helper.make_node("StringNormalizer", ["x"], ["y"], case_change_action="LOWER",
                                                locale="xx_NOWHERE.UTF-8", name="norm")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.STRING, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.STRING, None)])
    locale = _save(helper.make_model(graph, ir_version=8, opset_imports=[helper.make_opsetid("", 17)]),
                   tmp_path / "locale.onnx")
    code, out, err = run_cli(capsys, "run", str(locale))
    assert code == 0 and not err.strip().startswith("/")  # no warning of the reference evaluator leaks
    assert ("note: onnxruntime needs the system locale 'xx_NOWHERE.UTF-8' for node 'norm' (StringNormalizer), and "
            "this system does not have it (install it, e.g. with locale-gen); the reference evaluator produced every "
            "value.") in out


def _identity_model(extra: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto], consts: list[onnx.TensorProto],
                    value_info: list[onnx.ValueInfoProto] | None = None) -> onnx.ModelProto:
    graph = helper.make_graph(extra, "g", inputs, [helper.make_tensor_value_info(extra[-1].output[0],
                                                                                 TensorProto.FLOAT, None)],
                              consts, value_info=value_info or [])
    return helper.make_model(graph, ir_version=8, opset_imports=[helper.make_opsetid("", 17)])


def test_value_info_metadata_and_slice_ends_suggest_sizes() -> None:
    from onnxviz.model.runner.sizes import graph_hints

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "frames", 4])
    model = _identity_model(
        [helper.make_node("Relu", ["x"], ["r"]),
         helper.make_node("Slice", ["r", "starts", "ends", "axes"], ["s"], name="/crop")],
        [x], [numpy_helper.from_array(np.array([0], np.int64), "starts"),
              numpy_helper.from_array(np.array([30], np.int64), "ends"),
              numpy_helper.from_array(np.array([1], np.int64), "axes")],
        [helper.make_tensor_value_info("r", TensorProto.FLOAT, [1, 24, 4])])
    hints = {(h.dim, h.size, h.at_least) for h in graph_hints(model, input_specs(model), {})}
    assert hints == {("batch", 1, False), ("frames", 24, False), ("frames", 30, True)}
    plan = plan_sizes(model, input_specs(model), {})
    assert plan.first == {"batch": 1, "frames": 24}  # the exact suggestion first
    assert [c["frames"] for c in plan.candidates][:4] == [30, 32, 64, 128]  # then the ladder, at least 30
    assert {h.dim for h in graph_hints(model, input_specs(model), {"frames": 3})} == {"batch"}  # set: not suggested
    onnx.helper.set_model_props(model, {"frames": "16"})
    assert ("frames", 16, False) in {(h.dim, h.size, h.at_least) for h in graph_hints(model, input_specs(model), {})}


def test_the_search_stops_at_its_time_budget() -> None:
    from dataclasses import replace

    from onnxviz.model.runner.sizes import try_sizes

    model = reflect_pad_audio()
    feeds, generated = inputs_to_run(input_specs(model), {}, {})
    assert generated is not None
    calls: list[int] = []

    def refuse(fed: dict[str, np.ndarray]) -> None:
        calls.append(fed["input"].shape[1])
        raise RuntimeError("no")

    candidates = [{"batch": 1, "samples": n} for n in (2, 4, 8)]
    found, tried = try_sizes(refuse, generated, feeds, candidates, budget_s=60)
    assert found is None and calls == [2, 4, 8] and [t.error for t in tried] == ["no"] * 3
    calls.clear()
    found, tried = try_sizes(refuse, replace(generated), feeds, candidates, budget_s=-1)
    assert found is None and calls == [] and tried == []
    found, _ = try_sizes(lambda fed: None, generated, feeds, candidates, budget_s=60)
    assert found == candidates[0]


def test_a_generated_scalar_bool_is_an_array_onnxruntime_takes() -> None:
    """A 0-d comparison is a numpy scalar, which onnxruntime refuses ("Unable to handle object of type
    numpy.bool"): generated in the worker, it must be an array as one read from a file is."""
    graph = helper.make_graph([helper.make_node("Neg", ["x"], ["n"]), helper.make_node("Where", ["c", "x", "n"], ["y"])],
                              "g", [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                                    helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    result = _generated_run(helper.make_model(graph, ir_version=8, opset_imports=[helper.make_opsetid("", 17)]))
    try:
        assert result.engine == "onnxruntime" and result.values["c"].shape == ()
    finally:
        result.cleanup()
