"""MAC/FLOP estimates for the common ops, from declared, inferred and initializer shapes."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import TEST_DATA
from onnx import TensorProto, helper, numpy_helper
from onnx_data import LIGHT_MODELS

from onnxviz.model.graph.flops import (
    ELEMENTWISE,
    POOLING,
    _Shapes,
    graph_costs,
    human_count,
    node_cost,
    summarize,
)
from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.graph.summary import model_figures
from onnxviz.model.graph.validation import (
    InferenceResult,
    PackedTypes,
    ValidationResult,
    infer_types,
    pack,
    unpack,
    validate,
)


def _index(nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto], inits: list[onnx.TensorProto],
           outputs: list[onnx.ValueInfoProto]) -> ModelIndex:
    model = helper.make_model(helper.make_graph(nodes, "g", inputs, outputs, inits),
                              opset_imports=[helper.make_opsetid("", 23)])
    index = ModelIndex(model)
    index.set_inferred(infer_types(model).types)
    return index


def test_conv_gemm_matmul_and_elementwise() -> None:
    w = numpy_helper.from_array(np.zeros((8, 3, 3, 3), np.float32), "w")
    b = numpy_helper.from_array(np.zeros(8, np.float32), "b")
    fc = numpy_helper.from_array(np.zeros((8 * 30 * 30, 10), np.float32), "fc")
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv"),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("Flatten", ["r"], ["f"], name="flat"),
        helper.make_node("MatMul", ["f", "fc"], ["y"], name="mm"),
        helper.make_node("Gemm", ["f", "fc"], ["z"], name="gemm", transB=0),
    ]
    index = _index(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 32, 32])], [w, b, fc],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                    helper.make_tensor_value_info("z", TensorProto.FLOAT, None)])
    conv, relu, flat, mm, gemm = graph_costs(index)
    out = 2 * 8 * 30 * 30
    assert conv.macs == out * 3 * 9 and conv.flops == 2 * conv.macs + out
    assert (relu.macs, relu.flops) == (0, out)
    assert (flat.macs, flat.flops) == (0, 0)
    assert mm.macs == 2 * 10 * 8 * 30 * 30 and gemm.macs == mm.macs
    total = summarize(graph_costs(index))
    assert total.unknown_nodes == 0 and total.macs == conv.macs + mm.macs + gemm.macs


def test_attention_and_unknown_shapes() -> None:
    q = helper.make_tensor_value_info("q", TensorProto.FLOAT, [1, 4, 16, 8])
    k = helper.make_tensor_value_info("k", TensorProto.FLOAT, [1, 4, 32, 8])
    v = helper.make_tensor_value_info("v", TensorProto.FLOAT, [1, 4, 32, 8])
    u = helper.make_tensor_value_info("u", TensorProto.FLOAT, None)
    nodes = [helper.make_node("Attention", ["q", "k", "v"], ["o"], name="attn"),
             helper.make_node("Relu", ["u"], ["ru"], name="unknown")]
    index = _index(nodes, [q, k, v, u], [], [helper.make_tensor_value_info("o", TensorProto.FLOAT, None),
                                             helper.make_tensor_value_info("ru", TensorProto.FLOAT, None)])
    attn, unknown = graph_costs(index)
    assert attn.macs == 4 * 16 * 32 * (8 + 8)
    assert unknown.flops is None and summarize([attn, unknown]).unknown_nodes == 1


def test_resnet50_is_about_four_giga_macs() -> None:
    model = onnx.load(LIGHT_MODELS / "light_resnet50.onnx")
    index = ModelIndex(model)
    index.set_inferred(infer_types(model).types)
    total = summarize(graph_costs(index))
    assert 4.0e9 < total.macs < 4.2e9
    assert human_count(total.macs).endswith("G") and human_count(None) == "?"


EXPORTS = sorted((TEST_DATA / "exports").glob("*.onnx"))


def _reference_costs(index: ModelIndex, scope: str) -> list[tuple[str, int | None, int | None, str, bool]]:
    """(op, MACs, FLOPs, output shape text, symbolic) of each node found the plain way: every value's type read
    on its own (the rules for MatMul-like ops apart, which read the shapes the same way either path)."""
    g = index.graphs[scope]
    found = []
    for i, node in enumerate(g.nodes):
        shapes = _Shapes(index, g)  # a fresh reading per node: nothing shared between values
        first = node.output[0] if node.output else ""
        text = shapes.text(first) if first else ""
        op = node.op_type if node.domain in ("", "ai.onnx") else ""
        if op in ELEMENTWISE and op not in POOLING:
            out = shapes.of(first)
            flops = None if out is None else math.prod(out)
            found.append((node.op_type, None if flops is None else 0, flops, text, shapes.symbolic_used))
        else:
            cost = node_cost(index, scope, i, shapes)
            found.append((node.op_type, cost.macs, cost.flops, text, cost.symbolic))
    return found


@pytest.mark.parametrize("path", [*EXPORTS, None], ids=[*(p.stem for p in EXPORTS), "synth"])
def test_costs_are_the_same_from_packed_types_as_read_one_by_one(path: Path | None, synth_small: Path) -> None:
    """The costs read from a worker's packed types (each distinct type read once for all its values) are those
    of every value's type read on its own, in every graph of the real exports and a transformer-shaped model."""
    data = (path or synth_small).read_bytes()
    model = onnx.ModelProto.FromString(data)
    result = validate(data, None, 0, runtime=False, first=[], parsed=model)
    plain, packed = ModelIndex(model), ModelIndex(model)
    plain.set_inferred(result.inference.types)
    packed.set_inferred(unpack(pack(result)).inference.types)  # type: ignore[arg-type]
    assert isinstance(packed.inferred[""], PackedTypes)
    read = 0
    for scope in plain.graphs:
        costs = graph_costs(packed, scope)
        assert costs == graph_costs(plain, scope)
        assert [(c.op_type, c.macs, c.flops, c.output_shape, c.symbolic) for c in costs] \
            == _reference_costs(plain, scope)
        read += sum(bool(c.output_shape) for c in costs)
    assert read > 0


def test_a_declared_type_comes_before_the_packed_inferred_one() -> None:
    """A value both declared and inferred (differently) costs as its declared type says, from packed types too."""
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="relu")]
    model = helper.make_model(helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
                                                [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 4])]),
                              opset_imports=[helper.make_opsetid("", 23)])
    inferred = {"y": helper.make_tensor_type_proto(TensorProto.FLOAT, [3, 4])}
    index = ModelIndex(model)
    index.set_inferred(unpack(pack(ValidationResult(0, InferenceResult({"": inferred}, None), []))).inference.types)  # type: ignore[arg-type]
    relu, = graph_costs(index)
    assert (relu.flops, relu.output_shape, relu.symbolic) == (4, "n × 4", True)


def _mixed_model() -> onnx.ModelProto:
    """Nodes alike and nodes that differ only in what a cost depends on: attributes, an empty bias input,
    initializer dims, symbolic dims, unknown shapes, an output named like an initializer, If and Loop bodies
    reading outer values, a local function."""
    def weight(name: str, shape: list[int]) -> onnx.TensorProto:
        return numpy_helper.from_array(np.ones(shape, np.float32), name)

    then_branch = helper.make_graph([helper.make_node("MatMul", ["x2", "W"], ["t"]), helper.make_node("Relu", ["t"], ["to"])],
                                    "then", [], [helper.make_tensor_value_info("to", TensorProto.FLOAT, None)])
    else_branch = helper.make_graph([helper.make_node("Neg", ["x2"], ["eo"])], "else", [],
                                    [helper.make_tensor_value_info("eo", TensorProto.FLOAT, None)])
    body = helper.make_graph(
        [helper.make_node("MatMul", ["carry", "W"], ["c2"]), helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Add", ["c2", "c2"], ["carry_out"])], "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []), helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("carry", TensorProto.FLOAT, ["N", 8])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("carry_out", TensorProto.FLOAT, ["N", 8])])
    nodes = [
        helper.make_node("Conv", ["img", "cw", "cb"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["img", "cw", ""], ["c_nb"], name="conv_nobias", pads=[1, 1, 1, 1]),
        helper.make_node("MaxPool", ["c"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("MaxPool", ["c"], ["p1"], name="pool1", kernel_shape=[1, 1], strides=[2, 2]),
        helper.make_node("GlobalAveragePool", ["p"], ["gp"], name="gpool"),
        helper.make_node("Flatten", ["gp"], ["f"], name="flat"),
        helper.make_node("Gemm", ["f", "gw", "gb"], ["x2"], name="gemm", transB=1),
        helper.make_node("Transpose", ["f"], ["ft"], name="t"),
        helper.make_node("Gemm", ["ft", "gw", "gb"], ["x2t"], name="gemm_ta", transA=1, transB=1),
        helper.make_node("MatMul", ["x2", "W"], ["m1"], name="mm_w"),
        helper.make_node("MatMul", ["x2", "W8x4"], ["m2"], name="mm_w8x4"),
        helper.make_node("MatMul", ["x2", "W"], ["m3"], name="mm_w_again"),
        helper.make_node("Einsum", ["x2", "W"], ["es"], name="einsum", equation="bi,ij->bj"),
        helper.make_node("If", ["cond"], ["ifo"], name="if", then_branch=then_branch, else_branch=else_branch),
        helper.make_node("Loop", ["", "cond", "x2"], ["lo"], name="loop", body=body),
        helper.make_node("Unknownish", ["m1"], ["u"], name="custom", domain="my.domain"),
        helper.make_node("Sigmoid", ["u"], ["s"], name="after_unknown"),
        helper.make_node("MatMul", ["u", "W"], ["um"], name="mm_unknown"),
        helper.make_node("Relu", ["x2"], ["W2"], name="shadow"),
        helper.make_node("fmm", ["m1", "W"], ["fo"], domain="local", name="call"),
        helper.make_node("Relu", ["m1"], ["declared_unshaped"], name="relu_declared"),
        *(helper.make_node("Einsum", ["x2"] * (2 + k), [f"many{k}"], name=f"many{k}",  # past MAX_SLOTS inputs
                           equation=",".join(["bi"] * (2 + k)) + "->bi") for k in (14, 15, 16, 17)),
        helper.make_node("Softmax", ["declared_unshaped"], ["sm"], name="softmax"),
    ]
    function = helper.make_function("local", "fmm", ["a", "b"], ["c"], [helper.make_node("MatMul", ["a", "b"], ["m"]),
                                                                         helper.make_node("Relu", ["m"], ["c"])],
                                    [helper.make_opsetid("", 18)])
    outputs = ["es", "ifo", "s", "um", "W2", "m2", "m3", "x2t", "fo", "sm", "lo", "c_nb", "p", "p1",
               *(f"many{k}" for k in (14, 15, 16, 17))]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("img", TensorProto.FLOAT, ["N", 3, 8, 8]),
                     helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, None) for name in outputs],
        [weight("cw", [4, 3, 3, 3]), weight("cb", [4]), weight("gw", [8, 4]), weight("gb", [8]), weight("W", [8, 8]),
         weight("W8x4", [8, 4]), weight("W2", [2, 2])],
        value_info=[helper.make_tensor_value_info("declared_unshaped", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("my.domain", 1),
                                                   helper.make_opsetid("local", 1)], functions=[function])


@pytest.mark.parametrize("packed", [False, True], ids=["plain", "packed"])
def test_the_columns_hold_the_cost_of_each_node_found_alone(packed: bool) -> None:
    """Costs found once per kind of node (operator, attributes, what is read of each input and output) and
    given to every node alike are those each node gets when costed alone, in every graph and body."""
    model = _mixed_model()
    result = validate(model.SerializeToString(), None, 0, runtime=False, first=[], parsed=model)
    index = ModelIndex(model)
    index.set_inferred(unpack(pack(result)).inference.types if packed else result.inference.types)  # type: ignore[arg-type]
    for scope, g in index.graphs.items():
        costs = graph_costs(index, scope)
        alone = [node_cost(index, scope, i) for i in range(len(g.nodes))]
        assert list(costs) == alone and len(costs) == len(g.nodes)
        assert summarize(costs) == summarize(alone)
    main = {c.name: c for c in graph_costs(index)}
    assert main["conv"].flops == main["conv_nobias"].flops + 4 * 8 * 8  # the bias, an empty input apart
    assert main["pool"].flops == 4 * main["pool1"].flops               # the same but for their kernel_shape
    assert main["mm_w"].macs != main["mm_w8x4"].macs                   # the initializers' dims
    assert (main["mm_w"].macs, main["mm_w"].flops) == (main["mm_w_again"].macs, main["mm_w_again"].flops) == (64, 128)
    assert main["mm_unknown"].macs is None and main["after_unknown"].flops is None
    assert main["conv"].symbolic and main["conv"].output_shape == "N × 4 × 8 × 8"
    assert main["shadow"].flops == 4                                   # named like the 2x2 initializer W2
    assert [main[f"many{k}"].macs for k in (14, 15, 16, 17)] == [(1 + k) * 8 for k in (14, 15, 16, 17)]
    declared = main["relu_declared"]                                   # declared without shape: the inferred one counts
    assert (declared.flops, declared.output_shape, declared.symbolic) == (8, "unknown rank", True)


def test_cost_columns_are_a_sequence_of_node_costs(tmp_path: Path) -> None:
    import pickle

    from onnxviz.model.columns import pack_column

    model = _mixed_model()
    index = ModelIndex(model)
    index.set_inferred(infer_types(model).types)
    costs = graph_costs(index)
    every = list(costs)
    assert [c.node for c in every] == list(range(len(model.graph.node)))
    assert costs[-1] == every[-1] and costs[1:3] == every[1:3] and costs == every
    with pytest.raises(IndexError):
        costs[len(every)]
    packed_names = replace(costs, names=pack_column([c.name for c in every]))
    assert pickle.loads(pickle.dumps(packed_names)) == every


def test_operator_counts_list_the_operators_in_the_order_they_first_occur() -> None:
    model = _mixed_model()
    index = ModelIndex(model)
    labels = [n.op_type if n.domain in ("", "ai.onnx") else f"{n.domain}:{n.op_type}"
              for g in index.graphs.values() for n in g.nodes]
    counts = model_figures(model, index).op_counts
    assert list(counts.items()) == [(label, labels.count(label)) for label in dict.fromkeys(labels)]
