"""The matcher on every format onnxruntime's quantizers and float16 converter write (issue 30), and on two
exports of one model (issue 37 point 3): B is made from a float export of the repository by the field's
own tools (tests/quantized_models.py), both run on the export's sample input, and every pair is checked
against an independent rule: B's value carries A's value's name (quantizers keep names, adding
``_quantized`` or ``_DequantizeLinear_Output``), the shapes agree and an integer value is read through its
scale; SQNR equals onnxruntime's ``qdq_loss_debug``; weights dequantize as onnxruntime's kernels read them;
each layer's added error is B's layer on A's inputs."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from conftest import REPO
from onnx import helper, numpy_helper
from quantized_models import EXPORTS, FORMATS, quantized, reference, right_pair, sample

from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.matching import CrossRun, compare_models, diff_models
from onnxviz.model.matching.crossrun import compare_paired
from onnxviz.model.matching.values import ValuePair, ValuePairing
from onnxviz.model.matching.weights import matmul_nbits_weight

LAYERS = frozenset({"Conv", "MatMul", "Gemm"})
FUSING = {"resnet_qoperator", "bert_dynamic_optimized"}  # formats whose B computes an op and what follows in one node


def _cross(name: str) -> CrossRun:
    return compare_models(ModelIndex(onnx.load(reference(name))), ModelIndex(onnx.load(quantized(name))),
                          sample(FORMATS[name][0]))


@pytest.mark.parametrize("name", list(FORMATS))
def test_every_layer_pairs_with_the_right_value_of_each_format(name: str) -> None:
    a, b = onnx.load(reference(name)), onnx.load(quantized(name))
    cross = _cross(name)
    try:
        pairing = cross.pairing
        by_pair = {(p.a, p.b): p for p in pairing.pairs}
        wrong = []
        for d in cross.diffs:
            ra, rb = cross.result_a.values[d.name], cross.result_b.values[d.other]
            p = by_pair[d.name, d.other]
            kind_a = "f" if "float" in ra.numpy_dtype or p.scale_a else ra.numpy_dtype
            kind_b = "f" if "float" in rb.numpy_dtype or p.scale_b else rb.numpy_dtype
            if ra.shape != rb.shape or kind_a != kind_b or not right_pair(a, b, d.name, d.other):
                wrong.append((d.name, d.other))
        assert wrong == []
        assert len(cross.diffs) == len(pairing.pairs)  # every pair measured: none of another shape left in
        paired = {d.name for d in cross.diffs}
        layers = [n.output[0] for n in a.graph.node if n.op_type in LAYERS]
        missing = [x for x in layers if x not in paired and "fused" not in pairing.reasons_a.get(x, "")]
        assert missing == []
        fused = [x for x in layers if x not in paired]
        assert not fused or name in FUSING
        assert all(pairing.reasons_a.get(x) for x in pairing.unmatched_a)
        assert all(pairing.reasons_b.get(y) for y in pairing.unmatched_b)
        if name not in FUSING and name != "resnet_dynamic":
            assert pairing.unmatched_a == [] and pairing.unmatched_b == []
        assert pairing.fraction() >= (0.5 if name in FUSING else 0.9)
        # quantization is a small error: a misaligned pair is not (int4's last layers lose the most)
        assert min(d.cosine for d in cross.diffs) > (0.9 if "int4" in name else 0.95)
    finally:
        cross.cleanup()


def test_sqnr_equals_onnxruntimes_qdq_loss_debug(tmp_path: Path) -> None:
    from onnxruntime.quantization import qdq_loss_debug

    name = "resnet_qdq"
    feeds = sample("resnet_float")

    def activations(path: Path) -> dict[str, list[np.ndarray]]:
        augmented = tmp_path / f"augmented_{path.name}"
        qdq_loss_debug.modify_model_output_intermediate_tensors(str(path), str(augmented))
        return qdq_loss_debug.collect_activations(str(augmented), iter([feeds]))

    matched = qdq_loss_debug.create_activation_matching(activations(quantized(name)), activations(reference(name)))
    expected = {x: e["xmodel_err"] for x, e in qdq_loss_debug.compute_activation_error(matched).items()
                if "xmodel_err" in e}
    cross = _cross(name)
    try:
        by_a = {d.name: d for d in cross.diffs if d.other.endswith("_DequantizeLinear_Output")}
        common = set(expected) & set(by_a)
        assert len(common) >= 10
        for x in common:
            assert by_a[x].sqnr_db == pytest.approx(expected[x], abs=1e-3), x
    finally:
        cross.cleanup()


def test_two_exports_of_one_bert_pair_only_the_same_computation() -> None:
    """Legacy and dynamo exports hold the same weights: every pair is the same value (no pair a step
    apart, none of another shape); the Reshape targets legacy computes with a -1 are not paired with
    dynamo's static ones."""
    legacy, dynamo = EXPORTS / "bert_legacy.onnx", EXPORTS / "bert_dynamo.onnx"
    cross = compare_models(ModelIndex(onnx.load(legacy)), ModelIndex(onnx.load(dynamo)), sample("bert_legacy"))
    try:
        assert len(cross.diffs) >= 80
        for d in cross.diffs:
            xa, xb = cross.arrays(d)
            assert xa.shape == xb.shape, d.name
            np.testing.assert_allclose(np.asarray(xb, np.float64), np.asarray(xa, np.float64), rtol=1e-4, atol=1e-5,
                                       err_msg=f"{d.name} vs {d.other}")
        reasons = cross.pairing.reasons_a
        assert any("integer constants" in reasons.get(x, "") for x in cross.pairing.unmatched_a)
    finally:
        cross.cleanup()


# legacy/dynamo export pairs: (legacy, dynamo, at least this many pairs, legacy's written-out GELU outputs
# paired with dynamo's Gelu nodes)
EXPORT_PAIRS = [
    ("gpt2_legacy", "gpt2_dynamo", 71, {"/h.0/Mul_5_output_0": "gelu", "/h.1/Mul_5_output_0": "gelu_1"}),
    ("whisper_legacy", "whisper_dynamo", 90, {"/encoder_layers.0/Mul_1_output_0": "gelu_2",
                                               "/decoder_layers.0/Mul_1_output_0": "gelu_3"}),
]


@pytest.mark.parametrize(("legacy", "dynamo", "least", "gelus"), EXPORT_PAIRS, ids=lambda v: str(v))
def test_two_exports_of_gpt2_and_whisper_pair_only_the_same_computation(legacy: str, dynamo: str, least: int,
                                                                        gelus: dict[str, str]) -> None:
    """torch's legacy exporter writes GELU out (opset 17: Div, Erf, Add, Mul, Mul; tanh's Pow, Tanh ...),
    the dynamo exporter writes one Gelu node: the Linear before it pairs with the Linear, the GELU's last
    value with the Gelu (not the Linear's output with the Gelu's, a GELU apart); every pair is the same
    value, of the same shape; every value left unpaired says why."""
    cross = compare_models(ModelIndex(onnx.load(EXPORTS / f"{legacy}.onnx")),
                           ModelIndex(onnx.load(EXPORTS / f"{dynamo}.onnx")), sample(legacy))
    try:
        assert len(cross.diffs) >= least
        assert len(cross.diffs) == len(cross.pairing.pairs)  # none dropped for a shape or kind the runs showed
        for d in cross.diffs:
            xa, xb = cross.arrays(d)
            assert xa.shape == xb.shape, d.name
            np.testing.assert_allclose(np.asarray(xb, np.float64), np.asarray(xa, np.float64), rtol=1e-4, atol=1e-5,
                                       err_msg=f"{d.name} vs {d.other}")
        assert {p.a: p.b for p in cross.pairing.pairs if p.b in gelus.values()} == gelus
        pairing = cross.pairing
        assert all(pairing.reasons_a.get(x) for x in pairing.unmatched_a)
        assert all(pairing.reasons_b.get(y) for y in pairing.unmatched_b)
    finally:
        cross.cleanup()


def _gelu_models() -> tuple[onnx.ModelProto, onnx.ModelProto]:
    """A: MatMul, GELU written out (Div, Erf, Add, Mul, Mul), MatMul; B: MatMul, Gelu, MatMul (same weights)."""
    rng = np.random.default_rng(0)
    w1 = numpy_helper.from_array(rng.standard_normal((4, 6)).astype(np.float32), "w1")
    w2 = numpy_helper.from_array(rng.standard_normal((6, 3)).astype(np.float32), "w2")
    consts = [numpy_helper.from_array(np.array(v, np.float32), n) for n, v in
              (("sqrt2", 1.4142135), ("one", 1.0), ("half", 0.5))]
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 4])
    y = helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2, 3])
    written = [helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("Div", ["h", "sqrt2"], ["d"]),
               helper.make_node("Erf", ["d"], ["e"]), helper.make_node("Add", ["e", "one"], ["a"]),
               helper.make_node("Mul", ["h", "a"], ["m"]), helper.make_node("Mul", ["m", "half"], ["g"]),
               helper.make_node("MatMul", ["g", "w2"], ["y"])]
    fused = [helper.make_node("MatMul", ["x", "w1"], ["h_b"]), helper.make_node("Gelu", ["h_b"], ["g_b"]),
             helper.make_node("MatMul", ["g_b", "w2"], ["y"])]
    a = helper.make_model(helper.make_graph(written, "a", [x], [y], [w1, w2, *consts]),
                          opset_imports=[helper.make_opsetid("", 20)])
    b = helper.make_model(helper.make_graph(fused, "b", [x], [y], [w1, w2]), opset_imports=[helper.make_opsetid("", 20)])
    return a, b


def test_a_gelu_written_out_pairs_its_end_with_the_gelu_node_and_its_start_with_the_linear() -> None:
    a, b = _gelu_models()
    feeds = {"x": np.random.default_rng(1).standard_normal((2, 4)).astype(np.float32)}
    for one, other, flip in ((a, b, False), (b, a, True)):
        cross = compare_models(ModelIndex(one), ModelIndex(other), feeds)
        try:
            pairs = {(p.b, p.a) if flip else (p.a, p.b) for p in cross.pairing.pairs}
            assert {("h", "h_b"), ("g", "g_b")} <= pairs
            assert not {p for p in pairs if p[0] in ("h", "g") and p not in {("h", "h_b"), ("g", "g_b")}}
            for d in cross.diffs:
                xa, xb = cross.arrays(d)
                np.testing.assert_allclose(xb, xa, rtol=1e-5, atol=1e-6, err_msg=f"{d.name} vs {d.other}")
            unmatched = cross.pairing.unmatched_b if flip else cross.pairing.unmatched_a
            assert set(unmatched) == {"d", "e", "a", "m"}  # the GELU's inner steps: no partner, said why
        finally:
            cross.cleanup()


def test_pairs_whose_runs_differ_in_shape_or_kind_never_reach_the_results() -> None:
    name = "resnet_qoperator"
    cross = _cross(name)
    try:
        real = next(p for p in cross.pairing.pairs if p.scale_b is not None)
        by_shape = ValuePair("image", "/layer1/conv1/Conv_output_0_quantized", "same")  # [1,3,32,32] vs [1,16,32,32]
        pairing = ValuePairing([by_shape, real])
        diffs = compare_paired(cross.result_a, cross.result_b, cross.alignment, pairing)
        assert [(d.name, d.other) for d in diffs] == [(real.a, real.b)]
        assert "shapes differ" in pairing.reasons_a["image"] and pairing.unmatched_a == ["image"]
        no_scale = ValuePairing([ValuePair(real.a, real.b, real.how)])  # uint8 against float: nothing to read it with
        assert compare_paired(cross.result_a, cross.result_b, cross.alignment, no_scale) == []
        assert no_scale.reasons_b[real.b] == ("floats in A, integers in B, and nothing says how the integers "
                                              "read as floats")
    finally:
        cross.cleanup()


def test_added_error_is_the_layers_own() -> None:
    """B's first layer (the image's QuantizeLinear/DequantizeLinear) reads the graph input, so what it adds
    is all its error; the Conv after it inherits the image's quantization; in a model compared with itself
    no layer adds any."""
    cross = _cross("resnet_qdq")
    try:
        first = next(d for d in cross.diffs if d.name == "image")  # B's QuantizeLinear/DequantizeLinear of the image
        added = cross.added_of(first)
        assert added is not None and added.sqnr_db == pytest.approx(first.sqnr_db, abs=1e-6)
        conv = next(d for d in cross.diffs if d.name == "/stem/stem.0/Conv_output_0")  # reads the quantized image
        assert cross.added_of(conv).sqnr_db > conv.sqnr_db + 1
        assert len(cross.added) == len(cross.diffs)
        later = [d for d in cross.diffs if d.name.startswith("/layer2/")]
        assert any(cross.added_of(d).sqnr_db > d.sqnr_db + 1 for d in later)  # inherited error left out
    finally:
        cross.cleanup()
    same = compare_models(ModelIndex(onnx.load(EXPORTS / "bert_legacy.onnx")),
                          ModelIndex(onnx.load(EXPORTS / "bert_legacy.onnx")), sample("bert_legacy"))
    try:
        assert same.added and all(a.max_abs == 0 for a in same.added.values())
    finally:
        same.cleanup()


def _run(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)[0]


def test_int4_weights_dequantize_as_onnxruntimes_kernels_read_them() -> None:
    """MatMulNBits(I, B) is B's float weight; GatherBlockQuantized of every row is the table's."""
    model = onnx.load(quantized("bert_int4"))
    inits = {t.name: t for t in model.graph.initializer}
    node = next(n for n in model.graph.node if n.op_type == "MatMulNBits")
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    k, n = attrs["K"], attrs["N"]
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(node.input[0], onnx.TensorProto.FLOAT, [k, k])],
                              [helper.make_tensor_value_info(node.output[0], onnx.TensorProto.FLOAT, None)],
                              [inits[x] for x in node.input[1:] if x])
    kernel = _run(helper.make_model(graph, opset_imports=list(model.opset_import), ir_version=model.ir_version),
                  {node.input[0]: np.eye(k, dtype=np.float32)})
    mine = matmul_nbits_weight(numpy_helper.to_array(inits[node.input[1]]), numpy_helper.to_array(inits[node.input[2]]),
                               None, (k, n), attrs["bits"], attrs["block_size"])
    np.testing.assert_allclose(mine, kernel, rtol=1e-6, atol=1e-7)
    result = diff_models(ModelIndex(onnx.load(reference("bert_int4"))), ModelIndex(model))
    pairs = {w.b: w for w in result.weights}
    assert pairs[node.input[1]].quantized_b and 15 < pairs[node.input[1]].sqnr_db < 40
    gather = next(n for n in model.graph.node if n.op_type == "GatherBlockQuantized")
    table = pairs[gather.input[0]]
    assert table.quantized_b and table.note == "" and 15 < table.sqnr_db < 40
    assert len(result.weights) == sum(1 for n in model.graph.node if n.op_type in ("MatMulNBits", "GatherBlockQuantized"))


@pytest.mark.parametrize("name", ["resnet_qoperator", "resnet_dynamic", "bert_dynamic", "lstm_dynamic", "bert_int4"])
def test_quantized_ops_weights_pair_with_the_float_weights(name: str) -> None:
    result = diff_models(ModelIndex(onnx.load(reference(name))), ModelIndex(onnx.load(quantized(name))))
    assert result.weights and all(not w.note and w.quantized_b and not w.quantized_a for w in result.weights)
    assert all(w.cosine > 0.99 for w in result.weights)
    assert all(w.b.startswith(w.a) for w in result.weights)  # the quantizer's name for each float weight


def test_compare_sorts_and_says_why_values_are_unpaired() -> None:
    import subprocess
    import sys

    repo = REPO
    done = subprocess.run([sys.executable, "-m", "onnxviz", "compare", str(reference("resnet_qoperator")),
                           str(quantized("resnet_qoperator")), "--inputs", str(EXPORTS / "inputs" / "resnet_float.npz"),
                           "--sort", "cosine", "--json"], capture_output=True, text=True, cwd=repo, timeout=300)
    printed = json.loads(done.stdout)
    cosines = [p["cosine"] for p in printed["pairs"]]
    assert cosines == sorted(cosines) and len(cosines) >= 10
    assert all(p["added"]["sqnr_db"] >= p["sqnr_db"] - 0.5 for p in printed["pairs"])
    unmatched = printed["unmatched_a"]
    assert unmatched and all("QLinear" in u["reason"] and "fused" in u["reason"] for u in unmatched)
    assert printed["aligned_fraction"] == pytest.approx(1 - len(unmatched) / printed["values_a"])
    assert 0 < printed["aligned_nodes_fraction"] <= 1


def test_compare_optimized_compares_the_sessions_as_deployed() -> None:
    import subprocess
    import sys

    repo = REPO
    a, b = EXPORTS / "bert_legacy.onnx", quantized("bert_dynamic")
    feeds = sample("bert_legacy")
    done = subprocess.run([sys.executable, "-m", "onnxviz", "compare", str(a), str(b), "--inputs",
                           str(EXPORTS / "inputs" / "bert_legacy.npz"), "--optimized", "--json"],
                          capture_output=True, text=True, cwd=repo, timeout=300)
    printed = json.loads(done.stdout)
    assert printed["optimized"] is True and len(printed["pairs"]) >= 40
    logits = next(p for p in printed["pairs"] if p["a"] == "logits")
    options = ort.SessionOptions()  # what the deployed sessions give
    outputs = [ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"]).run(["logits"], feeds)[0]
               for path in (a, b)]
    assert logits["max_abs"] == pytest.approx(float(np.abs(outputs[0] - outputs[1]).max()), rel=1e-5, abs=1e-7)
    assert math.isfinite(logits["sqnr_db"])


def test_compare_optimized_pairs_the_outputs_where_no_layer_of_the_deployed_graphs_aligns(
        capsys: pytest.CaptureFixture[str]) -> None:
    """onnxruntime runs the float ResNet in its NCHWc layout and the QDQ copy as QLinearConv/QGemm: no node of
    the two deployed graphs aligns, and the sessions' outputs are still what a user compares."""
    from conftest import run_cli

    a, b = EXPORTS / "resnet_float.onnx", EXPORTS / "resnet_int8_qdq.onnx"
    npz = EXPORTS / "inputs" / "resnet_float.npz"
    code, out, err = run_cli(capsys, "compare", str(a), str(b), "--inputs", str(npz), "--optimized", "--json")
    assert code in (0, 1), err
    printed = json.loads(out)
    logits = next(p for p in printed["pairs"] if p["a"] == "logits")
    assert logits["b"] == "logits" and logits["how"] == "graph output"
    feeds = sample("resnet_float")
    outputs = [ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(["logits"], feeds)[0]
               for path in (a, b)]  # optimizations on: the sessions as deployed
    assert logits["max_abs"] == pytest.approx(float(np.abs(outputs[0] - outputs[1]).max()), rel=1e-5, abs=1e-7)
    assert all(p["how"] != "graph output" or p["a"] == p["b"] for p in printed["pairs"])
