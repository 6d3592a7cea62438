"""MAC/FLOP estimates for the common ops, from declared, inferred and initializer shapes."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import onnx
import pytest
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


EXPORTS = sorted((Path(__file__).resolve().parent / "data" / "exports").glob("*.onnx"))


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
