"""Issue 17: every model onnxruntime runs can be run and debugged: sizes declared -1, inputs generated
valid for what reads them, string inputs, sparse initializers, and errors that name their node."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import dumped, run_cli
from onnx import TensorProto, helper, numpy_helper

from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.problems import Severity
from onnxviz.model.runner import RunError, refusal, run_model
from onnxviz.model.runner.inputs import InputSpec, build_feeds, input_specs, strings_from_text, symbolic_dims

OPSET = [helper.make_opsetid("", 17)]


def _model(nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto], outputs: list[onnx.ValueInfoProto],
           initializers: list[onnx.TensorProto] | None = None, **kwargs: object) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializers or [], **kwargs)  # type: ignore[arg-type]
    return helper.make_model(graph, opset_imports=OPSET, ir_version=8)


def _save(model: onnx.ModelProto, path: Path) -> Path:
    path.write_bytes(model.SerializeToString())
    return path


# -- 1. sizes declared -1 --------------------------------------------------------------------------
def paddle_model() -> onnx.ModelProto:
    """A PaddlePaddle-style export: dynamic sizes declared -1 (x is -1 x 3, y follows)."""
    return _model([helper.make_node("Relu", ["x"], ["r"], name="relu"),
                   helper.make_node("Add", ["r", "w"], ["y"], name="add")],
                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [-1, 3])],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [-1, 3])],
                  [numpy_helper.from_array(np.ones(3, np.float32), "w")])


def test_a_size_declared_minus_one_is_a_dynamic_dimension_with_a_warning() -> None:
    index = ModelIndex(paddle_model())
    found = {(p.severity, p.value, p.message) for p in index.problems}
    assert (Severity.WARNING, "x", "input 'x' declares size -1 on axis 0, taken as a dynamic size "
                                   "(a named dimension says so in standard ONNX)") in found
    assert not [p for p in index.problems if p.severity == Severity.ERROR]
    assert refusal(index) == ""
    specs = input_specs(index.model)
    assert symbolic_dims(specs) == ["x[0]"] and specs[0].shape_text == "-1×3"
    assert build_feeds(specs, {}, {"x[0]": 5})["x"].shape == (5, 3)


def test_other_negative_sizes_stay_errors() -> None:
    model = paddle_model()
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_value = -2
    errors = [p.message for p in ModelIndex(model).problems if p.severity == Severity.ERROR]
    assert errors == ["input 'x' declares size -2 on axis 0; sizes cannot be negative"]


def test_check_cli_warns_and_run_cli_dumps_a_minus_one_model(capsys: pytest.CaptureFixture[str],
                                                               tmp_path: Path) -> None:
    path = _save(paddle_model(), tmp_path / "paddle.onnx")
    code, out, _ = run_cli(capsys, "check", str(path))
    assert code == 0 and "warning: input 'x' declares size -1 on axis 0" in out and "error" not in out
    dump = tmp_path / "dump"
    code, out, err = run_cli(capsys, "run", str(path), "--dim", "x[0]=4", "--dump", str(dump), "--json")
    assert code == 0, err
    assert json.loads(out)["outputs"][0]["shape"] == [4, 3]
    assert dumped(dump, "r").shape == (4, 3)
    code, _, err = run_cli(capsys, "run", str(path))
    assert code == 0 and "the generated inputs ran with --dim 'x[0]'=1" in err


# -- 2. generated inputs valid for what reads them --------------------------------------------------
def bert_model(words: int = 7, positions: int = 4, hidden: int = 4) -> onnx.ModelProto:
    """BERT's embeddings and a masked attention score: word, position and token type tables read by
    Gathers (through Cast, Unsqueeze/Squeeze and Reshape), an attention mask turned into a bias."""
    rng = np.random.default_rng(0)
    tables = [numpy_helper.from_array(rng.standard_normal((rows, hidden)).astype(np.float32), name)
              for name, rows in (("word_table", words), ("position_table", positions), ("type_table", 2))]
    consts = [numpy_helper.from_array(np.array([1], np.int64), "axis1"),
              numpy_helper.from_array(np.array(1.0, np.float32), "one"),
              numpy_helper.from_array(np.array(-10000.0, np.float32), "big")]
    n = helper.make_node
    nodes = [n("Cast", ["input_ids"], ["ids32"], to=TensorProto.INT32, name="cast_ids"),
             n("Gather", ["word_table", "ids32"], ["words"], name="word_embedding"),
             n("Unsqueeze", ["position_ids", "axis1"], ["pos_u"], name="pos_unsqueeze"),
             n("Squeeze", ["pos_u", "axis1"], ["pos"], name="pos_squeeze"),
             n("Gather", ["position_table", "pos"], ["positioned"], name="position_embedding"),
             n("Reshape", ["token_type_ids", "seq_shape"], ["types"], name="types_reshape"),
             n("Gather", ["type_table", "types"], ["typed"], name="token_type_embedding"),
             n("Add", ["words", "positioned"], ["sum1"], name="add1"),
             n("Add", ["sum1", "typed"], ["embedded"], name="add2"),
             n("Transpose", ["embedded"], ["embedded_t"], perm=[0, 2, 1], name="transpose"),
             n("MatMul", ["embedded", "embedded_t"], ["scores"], name="scores"),
             n("Unsqueeze", ["attention_mask", "axis1"], ["mask_u"], name="mask_unsqueeze"),
             n("Cast", ["mask_u"], ["mask_f"], to=TensorProto.FLOAT, name="mask_cast"),
             n("Sub", ["one", "mask_f"], ["inverted"], name="mask_invert"),
             n("Mul", ["inverted", "big"], ["bias"], name="mask_bias"),
             n("Add", ["scores", "bias"], ["masked"], name="add_bias"),
             n("Softmax", ["masked"], ["probs"], axis=-1, name="softmax")]
    ints = [helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "seq"])
            for name in ("input_ids", "position_ids", "token_type_ids", "attention_mask")]
    consts.append(numpy_helper.from_array(np.array([0, -1], np.int64), "seq_shape"))
    return _model(nodes, ints, [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["batch", "seq", "seq"])],
                  [*tables, *consts])


def test_generated_integers_are_valid_indices_and_masks() -> None:
    model = bert_model()
    limits = {s.name: s.limit for s in input_specs(model)}
    assert limits == {"input_ids": 7, "position_ids": 4, "token_type_ids": 2, "attention_mask": 2}
    assert {s.name: s.limit for s in input_specs(model, ModelIndex(model))} == limits  # the window's way
    assert {s.name: s.limit for s in input_specs(model, limits=False)} == dict.fromkeys(limits, 0)  # the worker's
    feeds = build_feeds(input_specs(model), {}, {"batch": 3, "seq": 50}, seed=5)
    assert feeds["input_ids"].max() == 6 and feeds["token_type_ids"].max() == 1
    assert feeds["position_ids"].max() == 3 and set(np.unique(feeds["attention_mask"])) == {0, 1}
    result = run_model(model, feeds)
    try:
        assert result.engine == "onnxruntime" and result.values["probs"].shape == (3, 50, 50)
    finally:
        result.cleanup()


def test_integer_limits_through_comparisons_quantized_tables_and_contrib_embeddings() -> None:
    table = numpy_helper.from_array(np.zeros((3, 2), np.int8), "q_table")
    scale = numpy_helper.from_array(np.array(0.5, np.float32), "scale")
    n = helper.make_node
    nodes = [n("DequantizeLinear", ["q_table", "scale"], ["table"]),
             n("Gather", ["table", "ids"], ["e"], axis=0),
             n("Equal", ["flags", "ids"], ["eq"]),
             n("EmbedLayerNormalization", ["w", "s", "we", "pe", "se", "", "", "m"], ["o", "mi"], domain="com.microsoft")]
    inputs = [helper.make_tensor_value_info(name, TensorProto.INT64, [2]) for name in ("ids", "flags", "count")]
    inputs += [helper.make_tensor_value_info(name, TensorProto.INT32, [1, 2]) for name in ("w", "s", "m")]
    inits = [table, scale] + [numpy_helper.from_array(np.zeros((rows, 4), np.float32), name)
                              for name, rows in (("we", 50), ("pe", 8), ("se", 2))]
    model = _model(nodes, inputs, [helper.make_tensor_value_info("e", TensorProto.FLOAT, [2, 2])], inits)
    limits = {s.name: s.limit for s in input_specs(model)}
    assert limits == {"ids": 2, "flags": 2, "count": 0, "w": 50, "s": 2, "m": 2}
    assert {s.name: s.limit for s in input_specs(model, ModelIndex(model))} == limits
    assert {s.name: s.random_high for s in input_specs(model)}["w"] == 10


def test_run_cli_dumps_bert_with_generated_inputs(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = _save(bert_model(), tmp_path / "bert.onnx")
    dump = tmp_path / "dump"
    code, out, err = run_cli(capsys, "run", str(path), "--dim", "seq=40", "--dump", str(dump), "--json")
    assert code == 0, err
    assert dumped(dump, "typed").shape == (1, 40, 4)
    assert json.loads(out)["outputs"][0]["shape"] == [1, 40, 40]


# -- 3. string inputs --------------------------------------------------------------------------------
def strings_model() -> onnx.ModelProto:
    """A scikit-learn-like text step: strings [N, 1] encoded by a LabelEncoder, and compared to 'dog'."""
    n = helper.make_node
    nodes = [n("Identity", ["text"], ["same"], name="identity"),
             n("LabelEncoder", ["same"], ["label"], domain="ai.onnx.ml", name="encoder",
               keys_strings=["cat", "dog"], values_int64s=[0, 1], default_int64=-1),
             n("Equal", ["same", "dog"], ["is_dog"], name="equal")]
    dog = helper.make_tensor("dog", TensorProto.STRING, [], [b"dog"])
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("text", TensorProto.STRING, ["N", 1])],
                              [helper.make_tensor_value_info("label", TensorProto.INT64, ["N", 1]),
                               helper.make_tensor_value_info("is_dog", TensorProto.BOOL, ["N", 1])], [dog])
    return helper.make_model(graph, ir_version=8, opset_imports=[*OPSET, helper.make_opsetid("ai.onnx.ml", 2)])


def test_unicode_arrays_feed_string_inputs(tmp_path: Path) -> None:
    from onnxviz.model.runner.input_files import read_array_file, read_inputs_file
    from onnxviz.model.runner.inputs import save_inputs_file

    np.save(tmp_path / "text.npy", np.array([["cat"], ["bird"], ["dog"]]))
    spec = input_specs(strings_model())[0]
    feeds = build_feeds([spec], {"text": read_array_file(tmp_path / "text.npy", spec)}, {})
    assert feeds["text"].dtype == object and feeds["text"].tolist() == [["cat"], ["bird"], ["dog"]]
    result = run_model(strings_model(), feeds)
    try:
        assert result.array("label").ravel().tolist() == [0, -1, 1]
        assert result.array("is_dog").ravel().tolist() == [False, False, True]
        assert result.array("same").ravel().tolist() == ["cat", "bird", "dog"]
    finally:
        result.cleanup()
    save_inputs_file(tmp_path / "saved.npz", feeds)  # written without pickles, read back as strings
    assert read_inputs_file(tmp_path / "saved.npz", [spec])["text"].tolist() == [["cat"], ["bird"], ["dog"]]


def test_typed_strings_are_split_and_shaped_to_the_input() -> None:
    spec = input_specs(strings_model())[0]
    assert strings_from_text(spec, "cat, dog ,bird", {}).tolist() == [["cat"], ["dog"], ["bird"]]
    assert strings_from_text(spec, "a, b\nc d\n", {}).tolist() == [["a, b"], ["c d"]]  # lines keep commas
    fixed = InputSpec("t", TensorProto.STRING, (2, "n"))
    assert strings_from_text(fixed, "a,b,c,d", {"n": 5}).shape == (2, 2)
    with pytest.raises(RunError, match=r"input 't' \(2 × n\) takes a multiple of 2 strings, not 3"):
        strings_from_text(fixed, "a,b,c", {})
    with pytest.raises(RunError, match="type the strings of input 'text'"):
        strings_from_text(spec, "  \n", {})
    assert build_feeds([spec], {}, {"N": 2}, "zeros")["text"].tolist() == [[""], [""]]


def test_run_cli_dumps_a_string_model_fed_from_npy(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = _save(strings_model(), tmp_path / "text.onnx")
    np.save(tmp_path / "text.npy", np.array([["dog"], ["cat"]]))
    dump = tmp_path / "dump"
    code, out, err = run_cli(capsys, "run", str(path), "--input", f"text={tmp_path / 'text.npy'}", "--dump",
                             str(dump), "--json")
    assert code == 0, err
    assert dumped(dump, "label").ravel().tolist() == [1, 0]
    assert dumped(dump, "same").ravel().tolist() == ["dog", "cat"]


# -- 4. sparse constants and initializers -------------------------------------------------------------
def sparse_model(two_d_indices: bool = False, with_strings: bool = False) -> onnx.ModelProto:
    """x [1, 2] @ w, w a Constant's sparse_value [[0, 1, 0], [0, 2, 0]]; s a sparse initializer added.
    ``with_strings`` adds a string output, which onnxruntime only hands back through run()."""
    values = numpy_helper.from_array(np.array([1.0, 2.0], np.float32), "w")
    indices = np.array([[0, 1], [1, 1]] if two_d_indices else [1, 4], np.int64)
    sparse = helper.make_sparse_tensor(values, numpy_helper.from_array(indices, "w_indices"), [2, 3])
    s_values = numpy_helper.from_array(np.array([5.0], np.float32), "s")
    s_sparse = helper.make_sparse_tensor(s_values, numpy_helper.from_array(np.array([2], np.int64), "s_i"), [3])
    n = helper.make_node
    nodes = [n("Constant", [], ["w"], sparse_value=sparse, name="sparse_constant"),
             n("MatMul", ["x", "w"], ["m"], name="mm"), n("Add", ["m", "s"], ["y"], name="add")]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])]
    inits = []
    if with_strings:
        nodes.append(n("Cast", ["y"], ["y_text"], to=TensorProto.STRING, name="as_text"))
        outputs.append(helper.make_tensor_value_info("y_text", TensorProto.STRING, [1, 3]))
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2])], outputs,
                              inits, sparse_initializer=[s_sparse])
    return helper.make_model(graph, opset_imports=OPSET, ir_version=8)


@pytest.mark.parametrize(("two_d", "strings"), [(False, False), (True, True)], ids=["coo-flat", "coo-2d-via-run"])
def test_captured_runs_densify_sparse_values(two_d: bool, strings: bool) -> None:
    model = sparse_model(two_d, strings)
    result = run_model(model, {"x": np.array([[1.0, 1.0]], np.float32)})
    try:
        assert result.array("w").tolist() == [[0.0, 1.0, 0.0], [0.0, 2.0, 0.0]]
        assert result.values["w"].op_type == "Constant" and result.engine == "onnxruntime"
        assert result.array("y").tolist() == [[0.0, 3.0, 5.0]] and not result.notes
    finally:
        result.cleanup()


def test_run_cli_dumps_a_model_with_sparse_values(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = _save(sparse_model(), tmp_path / "sparse.onnx")
    dump = tmp_path / "dump"
    code, out, err = run_cli(capsys, "run", str(path), "--dump", str(dump))
    assert code == 0 and "IsTensor" not in err + out, err
    assert dumped(dump, "w").tolist() == [[0.0, 1.0, 0.0], [0.0, 2.0, 0.0]]


# -- 5. errors name the failing node ---------------------------------------------------------------------
def failing_model(name: str = "impossible_reshape") -> onnx.ModelProto:
    """Relu, then a Reshape to the shape given as an input (fails at run time for a wrong size), then Neg."""
    n = helper.make_node
    return _model([n("Relu", ["x"], ["r"], name="relu"), n("Reshape", ["r", "shape"], ["y0"], name=name),
                   n("Neg", ["y0"], ["y"], name="neg")],
                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
                   helper.make_tensor_value_info("shape", TensorProto.INT64, [2])],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])


IMPOSSIBLE = {"x": np.ones((2, 3), np.float32), "shape": np.array([4, 5], np.int64)}


@pytest.mark.parametrize(("name", "label"), [("impossible_reshape", "node 'impossible_reshape' (Reshape)"),
                                             ("", "the Reshape node at position 1")], ids=["named", "unnamed"])
@pytest.mark.parametrize("engine", ["onnxruntime", "reference"])
def test_a_run_failing_inside_a_node_names_it(name: str, label: str, engine: str) -> None:
    from onnxviz.model.runner import RunOptions

    with pytest.raises(RunError) as failed:
        run_model(failing_model(name), IMPOSSIBLE, RunOptions(engine=engine))
    assert failed.value.node == 1
    message = failed.value.message
    if engine == "onnxruntime":
        assert message.startswith(f"ONNX Runtime could not run the model ({label} failed: ")
        assert "requested shape:{4,5}" in message and "onnxviz" not in message and "::" not in message
    assert f"the reference evaluator failed ({label}: cannot reshape array of size 6" in message


def test_onnxruntime_messages_name_their_node() -> None:
    from onnxviz.model.graph.ort_messages import ort_node_name

    assert ort_node_name("[ONNXRuntimeError] : 1 : FAIL : Type Error: Type parameter (T) of Optype (Add) bound to "
                         "different types (tensor(float) and tensor(int64) in node (bad (add)).") == "bad (add)"
    assert ort_node_name("[ShapeInferenceError] Node (my node) Op (Conv) [ShapeInferenceError] bad") == "my node"
    assert ort_node_name('This is an invalid model. In Node, ("n1", Foo, "", -1) : error') == "n1"
    assert ort_node_name("out of memory") is None


def test_run_cli_error_names_the_failing_node(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = _save(failing_model(), tmp_path / "bad.onnx")
    np.save(tmp_path / "shape.npy", IMPOSSIBLE["shape"])
    code, out, err = run_cli(capsys, "run", str(path), "--input", f"shape={tmp_path / 'shape.npy'}",
                             "--dump", str(tmp_path / "dump"))
    assert code == 2 and not out and err.count("\n") == 1
    assert "node 'impossible_reshape' (Reshape) failed: " in err


# -- 6. optional inputs, sequence and map outputs ---------------------------------------------------
def optional_model() -> onnx.ModelProto:
    """An optional tensor input x [n]: whether it has an element, and its element through a Relu."""
    n = helper.make_node
    x = helper.make_value_info("x", helper.make_optional_type_proto(
        helper.make_tensor_type_proto(TensorProto.FLOAT, ["n"])))
    graph = helper.make_graph([n("OptionalHasElement", ["x"], ["has"], name="has"),
                               n("OptionalGetElement", ["x"], ["v"], name="get"), n("Relu", ["v"], ["r"], name="relu")],
                              "g", [x], [helper.make_tensor_value_info("has", TensorProto.BOOL, []),
                                         helper.make_tensor_value_info("r", TensorProto.FLOAT, ["n"])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)


@pytest.mark.parametrize("engine", ["onnxruntime", "reference"])
def test_an_optional_tensor_input_is_fed_a_tensor(engine: str) -> None:
    from onnxviz.model.runner import RunOptions

    specs = input_specs(optional_model())
    assert [(s.name, s.type_text, s.shape) for s in specs] == [("x", "float32", ("n",))]
    result = run_model(optional_model(), build_feeds(specs, {}, {"n": 4}), RunOptions(engine=engine))
    try:
        assert result.engine == engine and bool(result.array("has")) and result.array("r").shape == (4,)
    finally:
        result.cleanup()


def test_a_sequence_input_is_refused_in_one_sentence() -> None:
    seq = helper.make_value_info("s", helper.make_sequence_type_proto(
        helper.make_tensor_type_proto(TensorProto.FLOAT, [2])))
    graph = helper.make_graph([helper.make_node("SequenceLength", ["s"], ["n"])], "g", [seq],
                              [helper.make_tensor_value_info("n", TensorProto.INT64, [])])
    with pytest.raises(RunError, match="^input 's' is a sequence; only tensor and optional tensor inputs can be fed"):
        input_specs(helper.make_model(graph, opset_imports=OPSET))


def test_run_cli_dumps_an_optional_input_model(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = _save(optional_model(), tmp_path / "optional.onnx")
    code, out, err = run_cli(capsys, "run", str(path), "--dim", "n=3", "--dump", str(tmp_path / "dump"))
    assert code == 0, err
    assert "r: float32 [3]" in out


def classifier_model() -> onnx.ModelProto:
    """A scikit-learn-style classifier: LinearClassifier, its scores through ZipMap (a sequence of maps),
    and x split into a sequence of rows."""
    n = helper.make_node
    nodes = [n("LinearClassifier", ["x"], ["label", "scores"], domain="ai.onnx.ml", name="classifier",
               classlabels_ints=[0, 1, 2], coefficients=[1.0, 0.0, 0.0, 1.0, -1.0, -1.0], intercepts=[0.0, 0.0, 0.5],
               post_transform="SOFTMAX"),
             n("ZipMap", ["scores"], ["probabilities"], domain="ai.onnx.ml", name="zipmap", classlabels_int64s=[0, 1, 2]),
             n("SplitToSequence", ["x"], ["rows"], axis=0, keepdims=0, name="split")]
    maps = helper.make_sequence_type_proto(helper.make_map_type_proto(
        TensorProto.INT64, helper.make_tensor_type_proto(TensorProto.FLOAT, [])))
    rows = helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, None))
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 2])],
                              [helper.make_tensor_value_info("label", TensorProto.INT64, ["N"]),
                               helper.make_value_info("probabilities", maps), helper.make_value_info("rows", rows)])
    return helper.make_model(graph, ir_version=8, opset_imports=[*OPSET, helper.make_opsetid("ai.onnx.ml", 3)])


CLASSIFIER_INPUT = {"x": np.array([[1.0, 2.0], [3.0, -1.0]], np.float32)}


def test_sequence_and_map_outputs_are_captured_as_json() -> None:
    result = run_model(classifier_model(), CLASSIFIER_INPUT)
    try:
        assert not result.notes and set(result.structured) == {"probabilities", "rows"}
        entry = result.structured["probabilities"]
        assert (entry["kind"], entry["op_type"], entry["node"], entry["engine"]) == \
            ("sequence of 2 maps", "ZipMap", 1, "onnxruntime")
        probabilities = result.structured_value("probabilities")
        assert [sorted(p) for p in probabilities] == [["0", "1", "2"]] * 2
        assert probabilities[0]["1"] == pytest.approx(float(np.exp(2) / (np.exp(1) + np.exp(2) + np.exp(-2.5))), 1e-5)
        assert result.structured_value("rows") == [[1.0, 2.0], [3.0, -1.0]]
        assert result.structured["rows"]["kind"] == "sequence of 2 tensors"
    finally:
        result.cleanup()


def test_structured_values_are_cut_beyond_the_limit() -> None:
    from onnxviz.model.runner.structured import TRUNCATED, describe, jsonable

    cut = jsonable([np.zeros(600_000), np.zeros(600_000), np.zeros(3)])
    assert len(cut) == 3 and len(cut[1]) == 400_001 and cut[1][-1] == cut[2] == TRUNCATED
    assert describe(cut) == "sequence of 2 tensors (cut)"
    assert describe(jsonable([{"a": 1.0}] * 3)) == "sequence of 3 maps"
    assert jsonable({b"k": float("nan"), 2: np.float32(0.5)}) == {"k": "NaN", "2": 0.5}


def test_run_cli_dumps_sequences_and_maps_with_index_entries(capsys: pytest.CaptureFixture[str],
                                                             tmp_path: Path) -> None:
    path = _save(classifier_model(), tmp_path / "classifier.onnx")
    np.save(tmp_path / "x.npy", CLASSIFIER_INPUT["x"])
    dump = tmp_path / "dump"
    code, out, err = run_cli(capsys, "run", str(path), "--input", f"x={tmp_path / 'x.npy'}", "--dump", str(dump))
    assert code == 0, err
    assert "  probabilities: sequence of 2 maps" in out and "  rows: sequence of 2 tensors" in out
    assert "not produced" not in out and "note" not in out
    index = json.loads((dump / "index.json").read_text())
    entry = index["values"]["probabilities"]
    assert entry["op_type"] == "ZipMap" and entry["file"].endswith(".json")
    assert len(json.loads((dump / entry["file"]).read_text())) == 2
    code, out, _ = run_cli(capsys, "run", str(path), "--input", f"x={tmp_path / 'x.npy'}", "--json")
    outputs = {o["name"]: o for o in json.loads(out)["outputs"]}
    assert outputs["rows"]["value"] == [[1.0, 2.0], [3.0, -1.0]]


def test_a_node_failing_inside_a_body_is_named_with_its_if() -> None:
    n = helper.make_node
    then = helper.make_graph([n("Reshape", ["x", "shape"], ["t"], name="inner_reshape")], "then", [],
                             [helper.make_tensor_value_info("t", TensorProto.FLOAT, None)])
    other = helper.make_graph([n("Identity", ["x"], ["e"], name="inner_identity")], "else", [],
                              [helper.make_tensor_value_info("e", TensorProto.FLOAT, None)])
    model = _model([n("ReduceMax", ["x"], ["m"], keepdims=0, name="max"),
                    n("Greater", ["m", "zero"], ["c"], name="positive"),
                    n("If", ["c"], ["y"], then_branch=then, else_branch=other, name="choose")],
                   [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
                    helper.make_tensor_value_info("shape", TensorProto.INT64, [2])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                   [numpy_helper.from_array(np.array(0.0, np.float32), "zero")])
    with pytest.raises(RunError) as failed:
        run_model(model, IMPOSSIBLE)
    assert failed.value.node == 2  # the If, which the canvas can select
    assert failed.value.message.startswith("ONNX Runtime could not run the model (node 'choose' (If) failed (at "
                                           "node 'inner_reshape' inside it): ")


def test_a_failing_node_the_main_graph_does_not_hold_is_named_not_placed() -> None:
    from onnxviz.model.runner.capture import _failure, prepare_model

    prepared = prepare_model(failing_model(), capture_all=False)
    error = _failure(prepared, True, RuntimeError("[ShapeInferenceError] Node (body_conv) Op (Conv) bad kernel"))
    assert error.node == -1
    assert error.message == "session creation failed at node 'body_conv': [ShapeInferenceError] Node (body_conv) Op " \
                            "(Conv) bad kernel"
