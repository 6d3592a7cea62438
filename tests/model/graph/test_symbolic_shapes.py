"""Shapes from the field's inference: onnx's, then onnxruntime's symbolic shape inference for the dimensions
onnx leaves unknown and for onnxruntime's contrib operators. Counted over the real exports and the conformance
models (values without a full shape, before and after), and checked against the shapes of a real onnxruntime
run of the repository's exports and of a 4-bit BERT that onnxruntime's own quantizer makes from one of them."""

from __future__ import annotations

import json
import os
import signal
import threading
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from conftest import TEST_DATA, run_cli
from onnx import TensorProto, helper
from onnx_data import corpus_models, model_id

from onnxviz.model.graph import symbolic_shapes
from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.graph.symbolic_shapes import dim_size, merged
from onnxviz.model.graph.validation import infer_types
from onnxviz.model.text import PLACEHOLDER, shape_list, shape_text

EXPORTS = TEST_DATA / "exports"
INPUTS = EXPORTS / "inputs"


def int4_bert() -> onnx.ModelProto:
    """tests/data/exports/bert_legacy.onnx with its MatMuls (MatMulNBits) and embedding Gathers
    (GatherBlockQuantized) quantized to 4 bits by onnxruntime's MatMulNBitsQuantizer."""
    from onnxruntime.quantization.matmul_nbits_quantizer import (
        DefaultWeightOnlyQuantConfig,
        MatMulNBitsQuantizer,
    )

    config = DefaultWeightOnlyQuantConfig(block_size=32, is_symmetric=True, op_types_to_quantize=("MatMul", "Gather"),
                                          quant_axes=(("MatMul", 0), ("Gather", 1)))
    quantizer = MatMulNBitsQuantizer(onnx.load(EXPORTS / "bert_legacy.onnx"), algo_config=config)
    quantizer.process()
    return quantizer.model.model  # type: ignore[no-any-return]


def unshaped(model: onnx.ModelProto, symbolic: bool = True) -> tuple[int, int]:
    """(values made by nodes, those without a full shape: a tensor of unknown rank or with a dimension no
    name or size gives, or none at all) with the types the window infers (``symbolic``: with onnxruntime's)."""
    index = ModelIndex(model)
    index.set_inferred(infer_types(model, symbolic=symbolic).types)
    total = missing = 0
    for scope, g in index.graphs.items():
        for node in g.nodes:
            for name in filter(None, node.output):
                total += 1
                t = index.type_of(scope, name)[0]
                if t is None:
                    missing += 1
                elif t.WhichOneof("value") in ("tensor_type", "sparse_tensor_type"):
                    dims = shape_list(t)
                    missing += dims is None or any(d is None or PLACEHOLDER.fullmatch(str(d)) for d in dims)
    return total, missing


EXPECTED_AFTER = {"bert_legacy": 0, "gpt2_legacy": 0, "vad_if": 0, "mlp_int4_matmulnbits": 0, "bert_dynamo": 0,
                  "lstm_tagger": 0, "resnet_float": 0, "resnet_int8_qdq": 0}


@pytest.mark.parametrize("name", sorted(EXPECTED_AFTER))
def test_every_value_of_the_exports_has_a_full_shape(name: str) -> None:
    model = onnx.load(EXPORTS / f"{name}.onnx")
    total, before = unshaped(model, symbolic=False)
    after = unshaped(model)[1]
    assert after == EXPECTED_AFTER[name], (name, total, before, after)


def test_the_legacy_exports_had_unknown_dimensions_before() -> None:
    # onnx's inference alone: the Reshapes of a torch legacy export lose batch and sequence
    assert unshaped(onnx.load(EXPORTS / "bert_legacy.onnx"), symbolic=False)[1] >= 50
    assert unshaped(onnx.load(EXPORTS / "gpt2_legacy.onnx"), symbolic=False)[1] >= 50


def test_the_4_bit_bert_has_every_shape() -> None:
    model = int4_bert()
    ops = {n.op_type for n in model.graph.node if n.domain == "com.microsoft"}
    assert ops == {"MatMulNBits", "GatherBlockQuantized"}
    total, before = unshaped(model, symbolic=False)
    assert before > 40                                     # GatherBlockQuantized untyped, and all after it
    assert unshaped(model) == (total, 0)


CORPUS = corpus_models()


def test_the_conformance_models_lose_no_shape_and_gain_some() -> None:
    """Over every conformance model: no value has a full shape before and not after, and the count falls."""
    before = after = 0
    for path in CORPUS:
        model = onnx.load(str(path), load_external_data=False)
        b, a = unshaped(model, symbolic=False)[1], unshaped(model)[1]
        assert a <= b, model_id(path)
        before, after = before + b, after + a
    print(f"conformance models: {before} values without a full shape before, {after} after")
    assert after < before


def run_shapes(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> dict[str, tuple[int, ...]]:
    """The shape of every tensor value of the main graph in a real onnxruntime run."""
    wide = onnx.ModelProto()
    wide.CopyFrom(model)
    declared = {o.name for o in wide.graph.output}
    names = [o for n in wide.graph.node for o in n.output if o and o not in declared]
    wide.graph.output.extend(helper.make_empty_tensor_value_info(name) for name in names)
    session = ort.InferenceSession(wide.SerializeToString(), providers=["CPUExecutionProvider"])
    outputs = [o.name for o in session.get_outputs()]
    values = session.run(outputs, feeds)
    return {name: np.shape(v) for name, v in zip(outputs, values, strict=True) if isinstance(v, np.ndarray)}


def assert_shapes_match_a_run(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> int:
    """Every inferred size equals the run's, named dimensions at the sizes the inputs give them; returns how
    many values were compared."""
    index = ModelIndex(model)
    index.set_inferred(infer_types(model).types)
    sizes: dict[str, int] = {}
    for v in model.graph.input:
        for d, n in zip(v.type.tensor_type.shape.dim, feeds[v.name].shape, strict=True):
            if d.dim_param:
                sizes[d.dim_param] = n
    compared = 0
    for name, real in run_shapes(model, feeds).items():
        dims = shape_list(index.type_of("", name)[0])
        assert dims is not None, name
        found = [d if isinstance(d, int) else dim_size(d, sizes, default=-1) for d in dims]
        assert tuple(found) == real, (name, dims, real)
        compared += 1
    return compared


@pytest.mark.parametrize("name", ["bert_legacy", "gpt2_legacy", "bert_dynamo", "mlp_int4_matmulnbits"])
def test_the_shapes_of_the_exports_are_those_of_a_run(name: str) -> None:
    feeds = dict(np.load(INPUTS / f"{name}.npz"))
    assert assert_shapes_match_a_run(onnx.load(EXPORTS / f"{name}.onnx"), feeds) > 10


def test_the_shapes_of_the_4_bit_bert_are_those_of_a_run() -> None:
    feeds = dict(np.load(INPUTS / "bert_legacy.npz"))
    assert assert_shapes_match_a_run(int4_bert(), feeds) > 100


def test_named_dimensions_flow_through() -> None:
    model = onnx.load(EXPORTS / "bert_legacy.onnx")
    index = ModelIndex(model)
    index.set_inferred(infer_types(model).types)
    out = next(n.output[0] for n in model.graph.node if n.op_type == "Reshape")
    assert "batch" in shape_text(index.type_of("", out)[0])
    texts = {shape_text(index.type_of("", o)[0]) for n in model.graph.node for o in n.output}
    assert "batch × sequence × 32" in texts


def conv_model() -> onnx.ModelProto:
    """A strided Conv on an image of named height and width: its output's are expressions."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, "height", "width"])
    w = helper.make_tensor("w", TensorProto.FLOAT, [8, 3, 3, 3], np.zeros(216, np.float32))
    conv = helper.make_node("Conv", ["x", "w"], ["y"], strides=[2, 2], pads=[1, 1, 1, 1])
    graph = helper.make_graph([conv, helper.make_node("Relu", ["y"], ["z"])], "g", [x],
                              [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)], [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def test_an_expression_dimension_is_computed_and_evaluates_as_a_run() -> None:
    model = conv_model()
    index = ModelIndex(model)
    index.set_inferred(infer_types(model).types)
    dims = shape_list(index.type_of("", "z")[0])
    assert dims is not None and dims[:2] == ["batch", 8] and isinstance(dims[2], str)
    assert "height" in dims[2]
    real = run_shapes(model, {"x": np.zeros((2, 3, 15, 20), np.float32)})["y"]
    assert [dim_size(str(d), {"batch": 2, "height": 15, "width": 20}) for d in dims] == list(real)


def test_a_made_up_symbol_stays_unknown() -> None:
    # NonZero's count is data: no library can know it
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])
    graph = helper.make_graph([helper.make_node("NonZero", ["x"], ["i"]), helper.make_node("Relu", ["x"], ["r"])],
                              "g", [x], [helper.make_tensor_value_info("i", TensorProto.INT64, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    index = ModelIndex(model)
    index.set_inferred(infer_types(model).types)
    assert shape_text(index.type_of("", "i")[0]) == "1×?"
    assert shape_text(index.type_of("", "r")[0]) == "n"


def test_onnx_wins_where_the_two_disagree() -> None:
    known = helper.make_tensor_type_proto(TensorProto.FLOAT, [2, None])
    assert merged(known, helper.make_tensor_type_proto(TensorProto.FLOAT, [3, "b"]), frozenset({"b"})) is known
    assert merged(known, helper.make_tensor_type_proto(TensorProto.FLOAT, [2, "b", 1]), frozenset({"b"})) is known
    better = merged(known, helper.make_tensor_type_proto(TensorProto.FLOAT, [2, "b"]), frozenset({"b"}))
    assert better is not None and shape_list(better) == [2, "b"]
    assert merged(known, helper.make_tensor_type_proto(TensorProto.FLOAT, [2, "x_d1"]), frozenset({"b"})) is known


def test_dimension_expressions_are_read_safely() -> None:
    assert dim_size("floor(height/2 - 1/2) + 1", {"height": 224}) == 112
    assert dim_size("2*sequence + past", {"sequence": 3}) == 7
    assert dim_size("p2o.DynamicDimension.0") == 1
    assert dim_size("__import__('os').system('x')") is None
    assert dim_size("9**99999") is None
    assert dim_size("h/2", {"h": 3}) is None


def test_a_slow_engine_is_stopped_at_its_budget_and_onnx_types_stand(monkeypatch: pytest.MonkeyPatch) -> None:
    from onnxruntime.tools import symbolic_shape_infer

    def forever(self: object, node: object) -> None:
        while True:
            pass

    monkeypatch.setattr(symbolic_shape_infer.SymbolicShapeInference, "_infer_Reshape", forever)
    monkeypatch.setattr(symbolic_shapes, "BUDGET_S", 0.3)
    model = onnx.load(EXPORTS / "bert_legacy.onnx")
    found = infer_types(model)
    assert found.problem is None and found.types[""]         # onnx's types (and what came before the stop)
    assert threading.current_thread() is threading.main_thread()
    assert signal.getsignal(signal.SIGALRM) == signal.SIG_DFL  # the alarm is put back


def test_a_failing_engine_leaves_onnx_types(monkeypatch: pytest.MonkeyPatch) -> None:
    from onnxruntime.tools import symbolic_shape_infer

    def broken(self: object) -> None:
        raise AssertionError("the engine's own assertion")

    monkeypatch.setattr(symbolic_shape_infer.SymbolicShapeInference, "_infer_impl", broken)
    model = onnx.load(EXPORTS / "bert_legacy.onnx")
    assert unshaped(model) == unshaped(model, symbolic=False)


def test_no_file_is_left_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # onnxruntime's infer_shapes writes sym_shape_infer_temp.onnx into the working folder when it stops short
    monkeypatch.chdir(tmp_path)
    unshaped(onnx.load(EXPORTS / "sklearn_text_zipmap.onnx"))
    assert os.listdir(tmp_path) == []


def info_json(path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    code, out, _ = run_cli(capsys, "info", "--json", str(path))
    assert code == 0
    return json.loads(out)  # type: ignore[no-any-return]


def test_info_counts_the_macs_of_a_quantized_export_as_its_float_sources(capsys: pytest.CaptureFixture[str],
                                                                         tmp_path: Path) -> None:
    onnx.save(int4_bert(), tmp_path / "int4.onnx")
    int4, bert = info_json(tmp_path / "int4.onnx", capsys), info_json(EXPORTS / "bert_legacy.onnx", capsys)
    assert int4["macs"] == bert["macs"] > 0
    assert int4["nodes_not_counted"] == bert["nodes_not_counted"] == 0
    assert int4["named_dimensions_as_1"] is True                       # batch and sequence at 1, and said so
    qdq, float_ = info_json(EXPORTS / "resnet_int8_qdq.onnx", capsys), info_json(EXPORTS / "resnet_float.onnx", capsys)
    assert qdq["macs"] == float_["macs"] > 0
    code, out, _ = run_cli(capsys, "info", str(tmp_path / "int4.onnx"))
    assert code == 0 and "MACs:        20.35 K (named dimensions counted as 1)" in out


def test_info_says_how_many_nodes_it_could_not_count(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    nodes = [helper.make_node("Mystery", ["x"], ["m"], domain="custom"), helper.make_node("Relu", ["m"], ["y"])]
    graph = helper.make_graph(nodes, "g", [x], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("custom", 1)],
                                ir_version=8), tmp_path / "m.onnx")
    found = info_json(tmp_path / "m.onnx", capsys)
    assert found["nodes_not_counted"] == 1 and found["flops"] == 0   # the Relu after the unknown operator
    code, out, _ = run_cli(capsys, "info", str(tmp_path / "m.onnx"))
    assert "MACs:        0 (1 node not counted: no shape known)" in out


def test_a_long_shape_label_is_cut_at_its_longest_names_and_whole_in_the_tooltip() -> None:
    # a detector's labels: `batch × 16 × (floor(height/2 - 1/2) + 1) × (floor(width/2 - 1/2) + 1)` and longer
    from onnx import TensorProto, helper

    from onnxviz.model.text import LABEL_CHARS, label_shape_text

    deep = "floor(floor(floor(height/2 - 1/2)/2 - 1/2)/2 - 1/2) + 1"
    for dims in (["batch", 16, "floor(height/2 - 1/2) + 1", "floor(width/2 - 1/2) + 1"],
                 ["batch", 64, deep, deep.replace("height", "width")]):
        t = helper.make_tensor_type_proto(TensorProto.FLOAT, dims)
        label, whole = label_shape_text(t), shape_text(t, names=True)
        assert len(label) <= LABEL_CHARS < len(whole)
        assert label.startswith(f"batch × {dims[1]} × (floor(") and label.count("×") == 3 and "…" in label
        assert deep in shape_text(helper.make_tensor_type_proto(TensorProto.FLOAT, [deep]), names=True)
    short = helper.make_tensor_type_proto(TensorProto.FLOAT, ["batch", "sequence", 32])
    assert label_shape_text(short) == shape_text(short) == "batch × sequence × 32"
