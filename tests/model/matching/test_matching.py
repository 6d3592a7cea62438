"""The matcher: node alignment, structural diff and value pairing of two different models."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import TEST_DATA
from onnx import helper, numpy_helper
from onnx_data import corpus_models
from synth import build

from onnxviz.model.errors import Cancelled
from onnxviz.model.graph.index import ModelIndex, subgraphs_of
from onnxviz.model.matching import (
    HOW_DEQUANTIZED,
    HOW_FOLLOWED,
    align_models,
    compare_models,
    diff_models,
    pair_values,
)
from onnxviz.model.matching.weights import dequantize
from onnxviz.model.progress import CancelToken
from onnxviz.model.runner.compare import Tolerance, measure_arrays

EXPORTS = TEST_DATA / "exports"


def _copy(model: onnx.ModelProto) -> onnx.ModelProto:
    out = onnx.ModelProto()
    out.CopyFrom(model)
    return out


def _node(model: onnx.ModelProto, name: str) -> onnx.NodeProto:
    return next(n for n in model.graph.node if n.name == name)


def _kinds(a: onnx.ModelProto, b: onnx.ModelProto) -> set[tuple[str, str | None, str | None, str]]:
    result = diff_models(ModelIndex(a), ModelIndex(b))
    return {(d.kind, d.a, d.b, d.scope_a) for d in result.differences}


@pytest.mark.parametrize("path", sorted(EXPORTS.glob("*.onnx")), ids=lambda p: p.stem)
def test_a_model_diffed_with_itself_reports_nothing(path: Path) -> None:
    a, b = onnx.load(path), onnx.load(path)
    result = diff_models(ModelIndex(a), ModelIndex(b))
    assert result.identical and result.differences == []
    assert result.alignment.fraction() == 1.0
    assert pair_values(result.alignment).unmatched_a == []


def test_known_edits_are_reported_and_nothing_else() -> None:
    a = build(3)
    b = _copy(a)
    _node(b, "layers.0/attn/q/MatMul").name = "renamed_q"
    softmax = _node(b, "layers.1/attn/Softmax")
    softmax.ClearField("attribute")
    softmax.attribute.append(helper.make_attribute("axis", 2))
    sigmoid = _node(b, "layers.2/mlp/Sigmoid")  # deleted: its consumer reads its input instead
    _node(b, "layers.2/mlp/Mul").input[1] = sigmoid.input[0]
    b.graph.node.remove(sigmoid)
    at = list(b.graph.node).index(_node(b, "layers.1/attn/MatMul"))  # inserted: a Relu after the scores
    b.graph.node.insert(at + 1, helper.make_node("Relu", ["layers.1.scores"], ["inserted"], name="inserted/Relu"))
    _node(b, "layers.1/attn/Mul").input[0] = "inserted"
    weight = next(t for t in b.graph.initializer if t.name == "layers.0.mlp.up.weight")
    old = numpy_helper.to_array(weight)
    weight.CopyFrom(numpy_helper.from_array(old + np.float32(0.5), weight.name))
    b.graph.input[0].type.tensor_type.shape.dim[1].dim_param = "sequence"
    onnx.checker.check_model(b)

    result = diff_models(ModelIndex(a), ModelIndex(b))
    found = {(d.kind, d.a, d.b): d for d in result.differences}
    assert set(found) == {
        ("node_changed", "layers.0/attn/q/MatMul", "renamed_q"),
        ("node_changed", "layers.1/attn/Softmax", "layers.1/attn/Softmax"),
        ("node_removed", "layers.2/mlp/Sigmoid", None),
        ("node_added", None, "inserted/Relu"),
        ("weight_changed", "layers.0.mlp.up.weight", "layers.0.mlp.up.weight"),
        ("input_changed", "input_ids_embed", "input_ids_embed"),
    }
    assert found["node_changed", "layers.0/attn/q/MatMul", "renamed_q"].details["changes"] == ["name"]
    softmax_change = found["node_changed", "layers.1/attn/Softmax", "layers.1/attn/Softmax"].details
    assert softmax_change["changes"] == ["attributes"] and softmax_change["attributes"] == ["axis"]
    weight_change = found["weight_changed", "layers.0.mlp.up.weight", "layers.0.mlp.up.weight"].details
    assert weight_change["changes"] == ["values"] and weight_change["max_abs"] == pytest.approx(0.5)
    assert weight_change["max_rel"] == pytest.approx(0.5 / np.abs(old).max(), rel=1e-5)
    assert 0 < weight_change["cosine"] < 1
    changed_input = found["input_changed", "input_ids_embed", "input_ids_embed"].details
    assert changed_input == {"changes": ["type"], "type_a": "float32[1×4×16]", "type_b": "float32[1 × sequence × 16]"}
    assert not result.identical and result.counts()["node_changed"] == 2
    positions_a = {n.name: k for k, n in enumerate(a.graph.node)}
    positions_b = {n.name: k for k, n in enumerate(b.graph.node)}
    assert result.node_kinds_a() == {positions_a["layers.0/attn/q/MatMul"]: "node_changed",
                                     positions_a["layers.1/attn/Softmax"]: "node_changed",
                                     positions_a["layers.2/mlp/Sigmoid"]: "node_removed"}
    assert result.node_kinds_b() == {positions_b["renamed_q"]: "node_changed",
                                     positions_b["layers.1/attn/Softmax"]: "node_changed",
                                     positions_b["inserted/Relu"]: "node_added"}
    assert [d.kind for d in result.differences] == [d.kind for d in diff_models(ModelIndex(a),
                                                                                  ModelIndex(b)).differences]


def test_an_edited_if_branch_is_reported_in_its_body() -> None:
    a = onnx.load(EXPORTS / "vad_if.onnx")
    b = _copy(a)
    if_node = next(n for n in b.graph.node if n.op_type == "If")
    then = next(attr.g for attr in if_node.attribute if attr.name == "then_branch")
    gemm = next(n for n in then.node if n.op_type == "Gemm")
    next(attr for attr in gemm.attribute if attr.name == "alpha").f = 0.5
    position = list(b.graph.node).index(if_node)
    result = diff_models(ModelIndex(a), ModelIndex(b))
    assert [(d.kind, d.a, d.scope_a, d.details["attributes"]) for d in result.differences] == [
        ("node_changed", "/Gemm", f"{position}.then_branch", ["alpha"])]


def test_the_same_network_with_every_name_changed_aligns_node_for_node() -> None:
    a = build(4)
    b = _copy(a)
    renamed: dict[str, str] = {}

    def rename(name: str) -> str:
        keep = {"input_ids_embed", "logits", ""}
        return name if name in keep else renamed.setdefault(name, f"v{len(renamed)}")

    for k, node in enumerate(b.graph.node):
        node.name = f"node_{k}"
        node.input[:] = [rename(x) for x in node.input]
        node.output[:] = [rename(x) for x in node.output]
    for t in b.graph.initializer:
        t.name = rename(t.name)
    b.graph.node.reverse()  # a different file order too (not topological: the index sorts it)
    alignment = align_models(ModelIndex(a), ModelIndex(b))
    n = len(a.graph.node)
    assert alignment.fraction() == 1.0
    assert all(j == n - 1 - i for i, j in alignment.main.nodes.items())
    diffs = diff_models(ModelIndex(a), ModelIndex(b), alignment=alignment).differences
    assert {d.kind for d in diffs} == {"node_changed", "weight_changed"}
    assert all(d.details["changes"] == ["name"] for d in diffs)


def test_legacy_and_dynamo_exports_of_one_bert_align() -> None:
    """Dynamo's graph is smaller: no Constant nodes (initializers instead), no Shape/Gather/Concat chains
    computing Reshape targets (static shapes), no Identity copies of equal initializers. 84 of its 87 nodes
    align: the other 3 compute the position ids from token_type_ids' shape where legacy reads input_ids'."""
    legacy, dynamo = onnx.load(EXPORTS / "bert_legacy.onnx"), onnx.load(EXPORTS / "bert_dynamo.onnx")
    alignment = align_models(ModelIndex(legacy), ModelIndex(dynamo))
    pairs, n_legacy, n_dynamo = alignment.counts()
    assert (n_legacy, n_dynamo) == (212, 87)
    assert pairs / n_dynamo >= 0.95
    names = {legacy.graph.node[i].name: dynamo.graph.node[j].name for i, j in alignment.main.nodes.items()}
    assert names["/token_type_embeddings/Gather"] == "node_embedding_2"
    assert names["/position_embeddings/Gather"] == "node_embedding_1"
    assert names["/layers.1/Erf"] == "n0_2"
    unmatched = {dynamo.graph.node[j].op_type for j in alignment.main.unmatched_b()}
    assert unmatched <= {"Shape", "Squeeze"}


def test_float_relu_output_pairs_with_the_quantized_convs_dequantized_output() -> None:
    """onnxruntime's quantizer removed every Relu after a Conv: the QDQ Conv's output (named like the
    float Relu's) is the pre-ReLU value; the float Relu's output pairs with the DequantizeLinear after it."""
    float_model = onnx.load(EXPORTS / "resnet_float.onnx")
    qdq = onnx.load(EXPORTS / "resnet_int8_qdq.onnx")
    alignment = align_models(ModelIndex(float_model), ModelIndex(qdq))
    pairing = pair_values(alignment)
    by_a = {p.a: p for p in pairing.pairs}
    made_by_b = {o: n for n in qdq.graph.node for o in n.output}
    relus = [n for n in float_model.graph.node if n.op_type == "Relu"]
    assert relus
    for relu in relus:
        pair = by_a[relu.output[0]]
        assert made_by_b[pair.b].op_type == "DequantizeLinear"
        assert pair.how in (HOW_FOLLOWED, HOW_DEQUANTIZED)
    conv = next(n for n in float_model.graph.node if n.name == "/stem/stem.0/Conv")
    conv_pair = by_a[conv.output[0]]
    assert made_by_b[conv_pair.b].op_type == "Conv"  # the pre-ReLU value, before quantization
    assert by_a["logits"].b == "logits" and made_by_b["logits"].op_type == "DequantizeLinear"
    assert pairing.unmatched_a == [] and pairing.unmatched_b == []


def test_a_fused_activation_pairs_only_the_end_of_the_chain() -> None:
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 4])
    w = numpy_helper.from_array(np.eye(4, dtype=np.float32), "w")
    two = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["mm"], name="mm"),
                             helper.make_node("Relu", ["mm"], ["y"], name="relu")], "g", [x], [y], [w])
    one = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"], name="fused")], "g", [x], [y], [w])
    alignment = align_models(ModelIndex(helper.make_model(two)), ModelIndex(helper.make_model(one)))
    pairing = pair_values(alignment)
    assert [(p.a, p.b, p.how) for p in pairing.pairs] == [("y", "y", HOW_FOLLOWED)]
    assert pairing.unmatched_a == ["mm"] and pairing.unmatched_b == []


def test_sqnr_follows_onnxruntimes_convention() -> None:
    a = np.array([1.0, -2.0, 3.0, 0.5], np.float32)
    b = a + np.array([0.01, -0.02, 0.0, 0.03], np.float32)
    d = measure_arrays(a, b)
    expected = 20 * math.log10(np.linalg.norm(a.astype(np.float64)) /
                               np.linalg.norm(a.astype(np.float64) - b.astype(np.float64)))
    assert d.sqnr_db == pytest.approx(expected, rel=1e-6)
    assert d.max_abs == pytest.approx(0.03, rel=1e-5) and d.max_rel == pytest.approx(0.01, rel=1e-5)
    assert measure_arrays(a, a, Tolerance(0.0, 0.0)).outside == 0
    assert measure_arrays(a, a).sqnr_db > 300  # both norms floored at float64's epsilon: large, finite


def test_diff_can_be_cancelled_and_reports_progress() -> None:
    a, b = build(3), build(3)
    seen: list[float] = []
    diff_models(ModelIndex(a), ModelIndex(b), progress=lambda f, _t: seen.append(f))
    assert seen[-1] == 1.0 and seen == sorted(seen)
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        diff_models(ModelIndex(a), ModelIndex(b), token=token)


FUNCTION_MODEL = """
<ir_version: 8, opset_import: ["" : 18, "local" : 1], producer_name: "test">
agraph (float[2, 3] x) => (float[2, 3] y) {
    t = local.scaled_relu <alpha: float = 2.0> (x)
    y = Identity (t)
}
<domain: "local", opset_import: ["" : 18]>
scaled_relu <alpha> (a) => (b) {
    r = Relu (a)
    s = Constant <value_float: float = @alpha> ()
    b = Mul (r, s)
}
"""


def test_model_fields_value_info_and_functions_are_compared() -> None:
    a = onnx.parser.parse_model(FUNCTION_MODEL)
    b = _copy(a)
    b.producer_name = "other"
    helper.set_model_props(b, {"author": "someone"})
    b.graph.value_info.append(helper.make_tensor_value_info("t", onnx.TensorProto.FLOAT, [2, 3]))
    body = b.functions[0]
    next(n for n in body.node if n.op_type == "Relu").op_type = "Sigmoid"
    body.output.append("r")
    result = diff_models(ModelIndex(a), ModelIndex(b))
    found = [(d.kind, d.a, d.b, d.scope_a) for d in result.differences]
    assert found == [
        ("model_changed", "producer_name", "producer_name", ""),
        ("model_changed", "metadata author", "metadata author", ""),
        ("function_changed", "local:scaled_relu", "local:scaled_relu", ""),
        ("value_info_changed", "t", "t", ""),
        ("node_changed", "Relu#0", "Sigmoid#0", "fn:local:scaled_relu:"),
    ]
    assert result.differences[2].details == {"changes": ["outputs"]}
    assert result.differences[3].details == {"type_a": None, "type_b": "float32[2×3]"}
    assert result.differences[4].details["changes"] == ["op_type"]


def _graphs(graph: onnx.GraphProto) -> list[onnx.GraphProto]:
    return [graph] + [g for node in graph.node for _, _, body in subgraphs_of(node) for g in _graphs(body)]


def _renamed_everywhere(model: onnx.ModelProto) -> onnx.ModelProto:
    """Every node and value renamed (graph inputs and outputs kept), in every body too, with names of
    the form the light models of the onnx test data already use (``n3``, ``r12``): names collide."""
    out = _copy(model)
    keep = {v.name for v in out.graph.input} | {v.name for v in out.graph.output} | {""}
    renamed: dict[str, str] = {}

    def rename(name: str) -> str:
        return name if name in keep else renamed.setdefault(name, f"r{len(renamed)}")

    for g in _graphs(out.graph):
        for k, node in enumerate(g.node):
            node.name = f"n{k}"
            node.input[:] = [rename(x) for x in node.input]
            node.output[:] = [rename(x) for x in node.output]
        for t in g.initializer:
            t.name = rename(t.name)
        for v in list(g.value_info) + ([] if g is out.graph else list(g.input) + list(g.output)):
            v.name = rename(v.name)
    return out


def test_every_conformance_model_renamed_everywhere_aligns_node_for_node() -> None:
    """The onnx wheel's operator cases and model suites (If, Loop and Scan bodies included)."""
    models = corpus_models()
    assert len(models) > 1500
    wrong = []
    for path in models:
        model = onnx.load(path, load_external_data=False)
        alignment = align_models(ModelIndex(model), ModelIndex(_renamed_everywhere(model)))
        wrong += [f"{path.parent.name}/{path.name} {scope!r} not aligned" for scope in alignment.unmatched_scopes_a()]
        for ga in alignment.graphs.values():
            if any(i != j for i, j in ga.nodes.items()) or len(ga.nodes) != len(ga.index_a.nodes):
                wrong.append(f"{path.parent.name}/{path.name} {ga.scope_a!r}")
    assert wrong == []


def test_compare_models_measures_every_pair_and_colours_both_sides() -> None:
    float_index = ModelIndex(onnx.load(EXPORTS / "resnet_float.onnx"))
    qdq_index = ModelIndex(onnx.load(EXPORTS / "resnet_int8_qdq.onnx"))
    feeds = dict(np.load(EXPORTS / "inputs" / "resnet_float.npz"))
    cross = compare_models(float_index, qdq_index, feeds)
    try:
        assert len(cross.diffs) == len(cross.pairing.pairs)
        by_a = {d.name: d for d in cross.diffs}
        relu = by_a["/stem/stem.2/Relu_output_0"]
        assert relu.other == cross.pairing.by_a()[relu.name].b
        a = cross.result_a.array(relu.name).astype(np.float64)
        b = cross.result_b.array(relu.other).astype(np.float64)
        assert relu.max_abs_error == pytest.approx(np.abs(a - b).max())
        assert relu.sqnr_db == pytest.approx(20 * math.log10(np.linalg.norm(a) / np.linalg.norm(a - b)))
        assert relu.cosine == pytest.approx(float(a.ravel() @ b.ravel() / np.linalg.norm(a) / np.linalg.norm(b)))
        worst = cross.worst_first("max_rel")
        assert [d.rel_error for d in worst] == sorted((d.rel_error for d in worst), reverse=True)
        by_sqnr = cross.worst_first()  # SQNR by default, the lowest first
        assert [d.sqnr_db for d in by_sqnr] == sorted(d.sqnr_db for d in by_sqnr)
        assert [d.cosine for d in cross.worst_first("cosine")] == sorted(d.cosine for d in cross.diffs)
        errors_b = cross.node_errors_b("rel_error")
        dq = cross.result_b.values[relu.other].node
        assert qdq_index.main.nodes[dq].op_type == "DequantizeLinear" and errors_b["", dq] >= relu.rel_error
        assert cross.node_errors_a("rel_error")["", relu.node] >= relu.rel_error
    finally:
        cross.cleanup()


def _ort_optimized(path: Path, out: Path, level: str) -> onnx.ModelProto:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level)
    options.optimized_model_filepath = str(out)
    ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    return onnx.load(out)


def test_onnxruntimes_optimized_models_align_with_their_originals(tmp_path: Path) -> None:
    """The optimizer folds constants, drops Identity nodes and fuses Conv+Relu into FusedConv."""
    bert = onnx.load(EXPORTS / "bert_legacy.onnx")
    basic = _ort_optimized(EXPORTS / "bert_legacy.onnx", tmp_path / "bert.onnx", "ORT_ENABLE_BASIC")
    alignment = align_models(ModelIndex(bert), ModelIndex(basic))
    assert alignment.main.unmatched_b() == []  # every node the optimizer kept is found in the original
    removed = {bert.graph.node[i].op_type for i in alignment.main.unmatched_a()}
    assert removed <= {"Constant", "Identity", "Shape", "Gather", "Unsqueeze", "Concat", "Cast", "Range"}

    resnet = onnx.load(EXPORTS / "resnet_float.onnx")
    fused = _ort_optimized(EXPORTS / "resnet_float.onnx", tmp_path / "resnet.onnx", "ORT_ENABLE_EXTENDED")
    result = diff_models(ModelIndex(resnet), ModelIndex(fused))
    nodes = [(d.kind, d.details.get("op_type"), d.details.get("op_type_b")) for d in result.differences
             if d.kind.startswith("node_")]
    relus = sum(1 for n in resnet.graph.node if n.op_type == "Relu" and
                any(p.op_type == "Conv" and n.input[0] in p.output for p in resnet.graph.node))
    assert relus == 3
    expected = [("node_changed", "Conv", "FusedConv")] * relus + [("node_removed", "Relu", None)] * relus
    assert sorted(nodes, key=str) == sorted(expected, key=str)
    pairing = pair_values(result.alignment)
    fused_outputs = {o for n in fused.graph.node if n.op_type == "FusedConv" for o in n.output}
    relu_outputs = [n.output[0] for n in resnet.graph.node if n.op_type == "Relu"]
    assert sum(1 for p in pairing.pairs if p.b in fused_outputs and p.a in relu_outputs) == relus


def _with_input_shape(model: onnx.ModelProto, dims: list[int | str]) -> onnx.ModelProto:
    out = _copy(model)
    for d, v in zip(out.graph.input[0].type.tensor_type.shape.dim, dims, strict=True):
        if isinstance(v, str):
            d.dim_param = v
        else:
            d.dim_value = v
    return out


def test_a_changed_input_shape_is_reported_exactly() -> None:
    a = onnx.load(EXPORTS / "resnet_float.onnx")
    b = _with_input_shape(a, ["batch", 3, 64, 64])
    result = diff_models(ModelIndex(a), ModelIndex(b))
    assert [d.to_json() for d in result.differences] == [
        {"kind": "input_changed", "a": "image", "b": "image", "changes": ["type"],
         "type_a": "float32[1×3×32×32]", "type_b": "float32[batch × 3 × 64 × 64]"}]
    # with inferred shapes stored in both files, the values whose inferred shapes follow are listed too,
    # and only they: no node, weight or output changed
    b = onnx.shape_inference.infer_shapes(_with_input_shape(a, [1, 3, 64, 64]))
    a = onnx.shape_inference.infer_shapes(a)
    types_a = {v.name: v.type for v in a.graph.value_info}
    types_b = {v.name: v.type for v in b.graph.value_info}
    followed = {x for x in types_a if types_a[x] != types_b[x]}
    assert followed and len(followed) < len(types_a)  # the spatial sizes, not the pooled tail
    result = diff_models(ModelIndex(a), ModelIndex(b))
    kinds = [(d.kind, d.a) for d in result.differences]
    assert kinds[0] == ("input_changed", "image")
    assert result.differences[0].details["type_b"] == "float32[1×3×64×64]"
    assert sorted(kinds[1:]) == sorted(("value_info_changed", x) for x in followed)


def test_quantized_weights_pair_with_float_weights_as_onnxruntimes_weight_matching() -> None:
    from onnxruntime.quantization import qdq_loss_debug

    float_path, qdq_path = EXPORTS / "resnet_float.onnx", EXPORTS / "resnet_int8_qdq.onnx"
    result = diff_models(ModelIndex(onnx.load(float_path)), ModelIndex(onnx.load(qdq_path)))
    expected = qdq_loss_debug.create_weight_matching(str(float_path), str(qdq_path))
    assert {w.a for w in result.weights} == set(expected)
    for w in result.weights:
        assert not w.quantized_a and w.quantized_b and w.b == f"{w.a}_quantized" and not w.note
        arrays = expected[w.a]
        d = measure_arrays(arrays["float"], arrays["dequantized"])
        assert w.max_abs == pytest.approx(d.max_abs, rel=1e-3, abs=1e-8)
        assert w.cosine == pytest.approx(d.cosine, abs=1e-9)
        assert w.sqnr_db == pytest.approx(qdq_loss_debug.compute_signal_to_quantization_noice_ratio(
            arrays["float"], arrays["dequantized"]), abs=0.1)
    # the other way round (B float): the same pairs, A's side dequantized; a float pair has no weights
    back = diff_models(ModelIndex(onnx.load(qdq_path)), ModelIndex(onnx.load(float_path)))
    assert {(w.a, w.b) for w in back.weights} == {(w.b, w.a) for w in result.weights}
    assert diff_models(ModelIndex(onnx.load(float_path)), ModelIndex(onnx.load(float_path))).weights == []
    assert result.to_json()["weights"][0].keys() >= {"a", "b", "max_abs", "max_rel", "cosine", "sqnr_db"}


@pytest.mark.parametrize(("axis", "block_size", "scale_shape"), [(1, 0, ()), (0, 0, (4,)), (1, 0, (6,)), (1, 2, (4, 3))])
def test_dequantize_agrees_with_the_reference_evaluator(axis: int, block_size: int, scale_shape: tuple[int, ...]) -> None:
    from onnx.reference import ReferenceEvaluator

    rng = np.random.default_rng(0)
    q = rng.integers(-128, 127, (4, 6), dtype=np.int8)
    scale = rng.uniform(0.01, 0.1, scale_shape).astype(np.float32)
    zero = rng.integers(-5, 5, scale_shape, dtype=np.int8)
    attrs = {"axis": axis} | ({"block_size": block_size} if block_size else {})
    node = helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], **attrs)
    graph = helper.make_graph([node], "g", [], [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(x, n) for x, n in ((q, "q"), (scale, "s"), (zero, "z"))])
    expected = ReferenceEvaluator(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])).run(None, {})[0]
    np.testing.assert_allclose(dequantize(q, scale, zero, axis, block_size), expected, rtol=1e-6)


def test_values_inside_if_branches_pair_and_compare() -> None:
    a = onnx.load(EXPORTS / "vad_if.onnx")
    b = _copy(a)
    for node in b.graph.node:  # every name changed, in the bodies too
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                for inner in attr.g.node:
                    inner.name = f"renamed_{inner.name}"
    index_a, index_b = ModelIndex(a), ModelIndex(b)
    pairing = pair_values(align_models(index_a, index_b))
    bodies = [p for p in pairing.pairs if "::" in p.a]
    assert {p.a.split("::")[0] for p in bodies} == {f"{k}.{branch}" for k, n in enumerate(a.graph.node)
                                                      if n.op_type == "If" for branch in ("then_branch", "else_branch")}
    assert all(p.a == p.b for p in bodies) and not pairing.unmatched_a and not pairing.unmatched_b
    with np.load(EXPORTS / "inputs" / "vad_if.npz") as f:
        feeds = {k: f[k] for k in f.files}
    cross = compare_models(index_a, index_b, feeds)
    try:
        compared = [d for d in cross.diffs if "::" in d.name]
        assert compared and all(d.max_abs_error == 0 for d in compared)   # the branch the run took
        assert {d.name.split("::")[0] for d in compared} < {p.a.split("::")[0] for p in bodies}
    finally:
        cross.cleanup()
