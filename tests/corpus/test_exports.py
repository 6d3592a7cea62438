"""The real exports of tests/data/exports/ (made by scripts/make_exports.py): each opens in onnxviz without
a structural problem, has the features its README row claims, and runs with onnxruntime on its saved inputs."""

from __future__ import annotations

from collections import Counter

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from conftest import TEST_DATA
from onnx import numpy_helper

from onnxviz.model.document import Document
from onnxviz.model.graph.index import OUTER_SCOPE
from onnxviz.model.problems import Severity

EXPORTS = TEST_DATA / "exports"
MODELS = sorted(p.stem for p in EXPORTS.glob("*.onnx"))


def open_doc(name: str) -> Document:
    return Document.open(EXPORTS / f"{name}.onnx")


def inputs_of(name: str) -> dict[str, np.ndarray]:
    with np.load(EXPORTS / "inputs" / f"{name}.npz") as data:
        return {k: data[k] for k in data.files}


def run(name: str, feeds: dict[str, np.ndarray] | None = None) -> list:
    session = ort.InferenceSession(str(EXPORTS / f"{name}.onnx"), providers=["CPUExecutionProvider"])
    return session.run(None, inputs_of(name) if feeds is None else feeds)


def op_counts(doc: Document) -> Counter[str]:
    return Counter(n.op_type for n in doc.model.graph.node)


def dims(value: onnx.ValueInfoProto) -> list[str | int]:
    return [d.dim_param or d.dim_value for d in value.type.tensor_type.shape.dim]


def test_every_model_is_listed_and_has_inputs() -> None:
    readme = (EXPORTS / "README.md").read_text()
    assert len(MODELS) == 12
    for name in MODELS:
        assert f"`{name}.onnx`" in readme
        assert (EXPORTS / "inputs" / f"{name}.npz").is_file()


@pytest.mark.parametrize("name", MODELS)
def test_opens_without_problems_and_runs_on_its_inputs(name: str) -> None:
    doc = open_doc(name)
    assert [p.message for p in doc.problems if p.severity == Severity.ERROR] == []
    onnx.checker.check_model(doc.model)
    feeds = inputs_of(name)
    assert sorted(feeds) == sorted(i.name for i in doc.model.graph.input)
    outputs = run(name, feeds)
    assert len(outputs) == len(doc.model.graph.output)
    for out in outputs:
        if isinstance(out, np.ndarray) and out.dtype.kind == "f":
            assert np.isfinite(out).all()


def test_bert_legacy_has_the_torchscript_exporter_patterns() -> None:
    doc = open_doc("bert_legacy")
    graph = doc.model.graph
    assert [i.name for i in graph.input] == ["input_ids", "token_type_ids", "attention_mask"]
    assert all(i.type.tensor_type.elem_type == onnx.TensorProto.INT64 for i in graph.input)
    assert all(dims(i) == ["batch", "sequence"] for i in graph.input)
    assert all(n.name.startswith("/") for n in graph.node if n.op_type not in ("Identity", "Constant"))
    assert "/layers.0/attention/query/MatMul" in {n.name for n in graph.node}
    initializers = {t.name for t in graph.initializer}
    identities = [n for n in graph.node if n.op_type == "Identity"]
    assert len(identities) == 8 and all(n.input[0] in initializers for n in identities)
    token_types = next(t for t in graph.initializer if t.name == "token_type_embeddings.weight")
    assert list(token_types.dims) == [2, 32]
    mask_min = [n for n in graph.node if n.op_type == "Constant"
                and numpy_helper.to_array(n.attribute[0].t).size == 1
                and numpy_helper.to_array(n.attribute[0].t) == np.finfo(np.float32).min]
    assert len(mask_min) == 1 and doc.index.main.consumers_of(mask_min[0].output[0])
    counts = op_counts(doc)
    assert counts["Erf"] == 2 and counts["LayerNormalization"] == 5 and counts["Softmax"] == 2


def test_bert_dynamo_is_the_same_network_named_differently() -> None:
    legacy, dynamo = open_doc("bert_legacy").model, open_doc("bert_dynamo").model
    assert [i.name for i in dynamo.graph.input] == [i.name for i in legacy.graph.input]
    assert {n.name for n in dynamo.graph.node}.isdisjoint(n.name for n in legacy.graph.node)
    named = Counter("node_" if n.name.startswith("node_") else n.name for n in dynamo.graph.node)
    assert named == {"node_": 85, "n0": 1, "n0_2": 1}  # the two Erf nodes keep short names
    assert all({"pkg.torch.onnx.stack_trace", "pkg.torch.onnx.name_scopes"}
               <= {p.key for p in n.metadata_props} for n in dynamo.graph.node)
    assert not any(n.op_type == "Identity" for n in dynamo.graph.node)
    assert (legacy.ir_version, dynamo.ir_version) == (8, 10)
    for a, b in zip(run("bert_legacy"), run("bert_dynamo", inputs_of("bert_legacy")), strict=True):
        np.testing.assert_allclose(a, b, atol=1e-4)


def test_gpt2_is_causal_and_dynamic() -> None:
    doc = open_doc("gpt2_legacy")
    assert dims(doc.model.graph.input[0]) == ["batch", "sequence"]
    assert {"Where", "Slice", "Split", "Tanh", "Identity"} <= set(op_counts(doc))
    ids = inputs_of("gpt2_legacy")["input_ids"]
    changed = ids.copy()
    changed[:, -1] = (changed[:, -1] + 1) % 120
    before, after = run("gpt2_legacy")[0], run("gpt2_legacy", {"input_ids": changed})[0]
    np.testing.assert_allclose(before[:, :-1], after[:, :-1], atol=1e-5)  # earlier positions never see the last
    assert not np.allclose(before[:, -1], after[:, -1])
    longer = run("gpt2_legacy", {"input_ids": np.tile(ids, (2, 2))})[0]
    assert longer.shape == (4, ids.shape[1] * 2, 120)


def test_gpt2_dynamo_is_gpt2_legacy_with_gelu_nodes() -> None:
    legacy, dynamo = open_doc("gpt2_legacy").model, open_doc("gpt2_dynamo").model
    assert dims(dynamo.graph.input[0]) == ["batch", "sequence"] and dynamo.ir_version == 10
    ops = op_counts(open_doc("gpt2_dynamo"))
    assert ops["Gelu"] == 2 and "Tanh" not in ops and "Identity" not in ops  # legacy writes GELU out with Tanh
    gelus = [n for n in dynamo.graph.node if n.op_type == "Gelu"]
    assert all(helper_attr(n, "approximate") == b"tanh" for n in gelus)
    assert inputs_of("gpt2_dynamo")["input_ids"].tolist() == inputs_of("gpt2_legacy")["input_ids"].tolist()
    np.testing.assert_allclose(run("gpt2_dynamo")[0], run("gpt2_legacy")[0], atol=1e-4)
    assert {n.name for n in dynamo.graph.node}.isdisjoint(n.name for n in legacy.graph.node)


def test_whisper_pair_is_a_conv_front_end_encoder_decoder() -> None:
    legacy, dynamo = open_doc("whisper_legacy"), open_doc("whisper_dynamo")
    assert [i.name for i in legacy.model.graph.input] == ["input_features", "decoder_input_ids"]
    assert [dims(i) for i in dynamo.model.graph.input] == [["batch", 8, 32], ["batch", "tokens"]]
    convs = [n for n in legacy.model.graph.node if n.op_type == "Conv"]
    assert [helper_attr(n, "strides") for n in convs] == [[1], [2]]  # the second halves the frames, as Whisper's
    assert op_counts(legacy)["Erf"] == 4 and "Gelu" not in op_counts(legacy)  # opset 17: GELU written out
    assert op_counts(dynamo)["Gelu"] == 4 and "Erf" not in op_counts(dynamo)
    feeds = inputs_of("whisper_legacy")
    before = run("whisper_legacy")[0]
    np.testing.assert_allclose(run("whisper_dynamo", feeds)[0], before, atol=1e-4)
    changed = dict(feeds, decoder_input_ids=feeds["decoder_input_ids"].copy())
    changed["decoder_input_ids"][:, -1] = (changed["decoder_input_ids"][:, -1] + 1) % 50
    after = run("whisper_legacy", changed)[0]
    np.testing.assert_allclose(before[:, :-1], after[:, :-1], atol=1e-5)  # causal: earlier tokens never see it
    assert not np.allclose(before[:, -1], after[:, -1])
    audio = dict(feeds, input_features=feeds["input_features"] + 1)
    assert not np.allclose(run("whisper_dynamo", audio)[0], before)  # the decoder attends to the audio


def helper_attr(node: onnx.NodeProto, name: str) -> object:
    return next(onnx.helper.get_attribute_value(a) for a in node.attribute if a.name == name)


def test_resnet_float_and_its_int8_qdq_quantization() -> None:
    float_ops, qdq_ops = op_counts(open_doc("resnet_float")), op_counts(open_doc("resnet_int8_qdq"))
    assert float_ops["Relu"] == 5 and float_ops["Add"] == 2
    assert {"GlobalAveragePool", "Gemm"} <= set(float_ops) and "BatchNormalization" not in float_ops
    assert qdq_ops["Relu"] == 0  # the quantizer fused every Relu after a Conv away
    assert qdq_ops["Conv"] == float_ops["Conv"] == 6
    assert qdq_ops["DequantizeLinear"] > qdq_ops["QuantizeLinear"] > 0
    np.testing.assert_allclose(run("resnet_float")[0], run("resnet_int8_qdq")[0], atol=0.02)


def test_mlp_weights_are_int4_matmulnbits() -> None:
    doc = open_doc("mlp_int4_matmulnbits")
    nbits = [n for n in doc.model.graph.node if n.op_type == "MatMulNBits"]
    assert len(nbits) == 3 and "MatMul" not in op_counts(doc)
    for node in nbits:
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        assert node.domain == "com.microsoft" and attrs["bits"] == 4 and attrs["block_size"] == 32
        assert attrs["K"] >= 64 and attrs["N"] >= 64
    assert run("mlp_int4_matmulnbits")[0].shape == (2, 4, 64)


def test_vad_if_branches_hold_constant_weights_and_read_the_outer_scope() -> None:
    doc = open_doc("vad_if")
    main = doc.index.main
    (if_pos,) = [i for i, n in enumerate(doc.model.graph.node) if n.op_type == "If"]
    condition = doc.model.graph.node[main.producer_of(doc.model.graph.node[if_pos].input[0])]
    assert condition.op_type == "Cast" and doc.model.graph.node[main.producer_of(condition.input[0])].op_type == "Equal"
    assert not doc.model.graph.initializer
    shapes = {}
    for pos, label, scope in main.children:
        assert pos == if_pos
        branch = doc.index.graphs[scope]
        weights = [n for n in branch.nodes if n.op_type == "Constant"]
        shapes[label] = sorted(tuple(n.attribute[0].t.dims) for n in weights)
        assert branch.outer_reads and all(branch.producer_of(v) == OUTER_SCOPE for v in branch.outer_reads)
        assert all(if_pos in main.consumers_of(v) for v in branch.outer_reads)
    assert shapes == {"then_branch": [(12,), (16,), (16, 1, 64)], "else_branch": [(8,), (8, 1, 32), (12,)]}
    feeds = inputs_of("vad_if")
    assert feeds["sr"] == 16000
    at_16k, at_8k = run("vad_if")[0], run("vad_if", {**feeds, "sr": np.array(8000, dtype=np.int64)})[0]
    assert at_16k.shape == at_8k.shape == (2, 1) and not np.allclose(at_16k, at_8k)


def test_lstm_tagger_has_an_lstm() -> None:
    doc = open_doc("lstm_tagger")
    assert op_counts(doc)["LSTM"] == 1 and dims(doc.model.graph.input[0]) == ["batch", "sequence"]
    assert run("lstm_tagger")[0].shape == (2, 9, 5)


def test_sklearn_output_is_a_zipmap_sequence_of_maps() -> None:
    doc = open_doc("sklearn_text_zipmap")
    graph = doc.model.graph
    assert graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.STRING
    probability = next(o for o in graph.output if o.name == "output_probability")
    assert probability.type.sequence_type.elem_type.map_type.key_type == onnx.TensorProto.STRING
    assert graph.node[-1].op_type == "ZipMap" and graph.node[-1].domain == "ai.onnx.ml"
    feeds = inputs_of("sklearn_text_zipmap")
    assert feeds["features"].dtype.kind == "U"
    labels, maps = run("sklearn_text_zipmap")
    assert len(labels) == len(maps) == 3
    assert all(set(m) == {"go", "slow", "stop"} and abs(sum(m.values()) - 1) < 1e-5 for m in maps)
    assert [max(m, key=m.get) for m in maps] == list(labels)
