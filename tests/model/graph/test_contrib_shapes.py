"""Types after onnxruntime's contrib operators: the rules of contrib_shapes.py and onnxruntime's symbolic shape
inference (issues 16 and 31)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import TEST_DATA
from content_models import info
from onnx import TensorProto, helper, numpy_helper

from onnxviz.model.graph.flops import graph_costs
from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.graph.validation import infer_types, unpack, validate_packed
from onnxviz.model.problems import Severity
from onnxviz.model.text import shape_list, shape_text

EXPORTS = TEST_DATA / "exports"
MS = "com.microsoft"


def _shapes(model: onnx.ModelProto) -> dict[str, str]:
    return {name: shape_text(t) for name, t in infer_types(model).types[""].items()}


def test_int4_export_gets_shapes_after_matmulnbits_and_every_node_a_cost() -> None:
    data = (EXPORTS / "mlp_int4_matmulnbits.onnx").read_bytes()
    result = unpack(validate_packed(data, 1))  # what the background worker computes
    model = onnx.ModelProto.FromString(data)
    index = ModelIndex(model)
    index.set_inferred(result.inference.types)
    assert not [p for p in result.problems if p.severity == Severity.ERROR]
    shapes = {name: shape_text(index.type_of("", name)[0]) for n in model.graph.node for name in n.output}
    assert shapes["/up/MatMul_output_0"] == "batch × sequence × 256"
    assert shapes["/down/MatMul_output_0"] == shapes["/Add_1_output_0"] == "batch × sequence × 128"
    assert shapes["/head/MatMul_output_0"] == "batch × sequence × 64"
    assert all(text and "?" not in text and "unknown" not in text for text in shapes.values()), shapes
    costs = graph_costs(index)
    assert [c.name for c in costs if c.flops is None] == []
    assert [c.macs for c in costs if c.op_type == "MatMulNBits"] == [128 * 256, 256 * 128, 128 * 64]


def test_rules_of_common_contrib_operators() -> None:
    nodes = [helper.make_node("FusedMatMul", ["a", "b"], ["fmm"], domain=MS, transA=1),
             helper.make_node("SkipLayerNormalization", ["h", "h", "g", "g"], ["sln", "", "", "sum"], domain=MS),
             helper.make_node("Attention", ["h", "qkv", "qkv_b"], ["att"], domain=MS, num_heads=2),
             helper.make_node("MultiHeadAttention", ["h", "k", "v"], ["mha"], domain=MS, num_heads=2),
             helper.make_node("GroupQueryAttention", ["packed", "", "", "", "", "sl", "tl"], ["gqa", "pk", "pv"],
                              domain=MS, num_heads=4, kv_num_heads=2),
             helper.make_node("QLinearAdd", ["q8", "s", "z", "q8row", "s", "z", "s", "z"], ["qadd"], domain=MS),
             helper.make_node("FastGelu", ["att"], ["gelu"], domain=MS),
             helper.make_node("Relu", ["gelu"], ["after"]),
             helper.make_node("BiasSplitGelu", ["h", "bias"], ["split"], domain=MS)]
    inits = [numpy_helper.from_array(np.zeros((8, 24), np.float32), "qkv"),
             numpy_helper.from_array(np.zeros(24, np.float32), "qkv_b"),
             numpy_helper.from_array(np.ones(8, np.float32), "g"),
             numpy_helper.from_array(np.zeros(8, np.float32), "bias"),
             numpy_helper.from_array(np.array(0.1, np.float32), "s"),
             numpy_helper.from_array(np.array(0, np.uint8), "z")]
    inputs = [info("a", [3, 2]), info("b", [3, 5]), info("h", ["batch", 6, 8]), info("k", ["batch", 7, 8]),
              info("v", ["batch", 7, 12]), info("packed", [1, 6, 64]), info("sl", [1], TensorProto.INT32),
              info("tl", [1], TensorProto.INT32), info("q8", [2, 4], TensorProto.UINT8),
              info("q8row", [4], TensorProto.UINT8)]
    graph = helper.make_graph(nodes, "g", inputs, [info("after", None), info("split", None)], inits)
    shapes = _shapes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21),
                                                             helper.make_opsetid(MS, 1)]))
    assert shapes["fmm"] == "2×5"                                  # A transposed: [2, 3] x [3, 5]
    assert shapes["sln"] == shapes["sum"] == "batch × 6 × 8"
    assert shapes["att"] == shapes["gelu"] == shapes["after"] == "batch × 6 × 8"   # weights 8 x (3 x 8)
    assert shapes["mha"] == "batch × 6 × 12"                          # as wide as V
    assert shapes["gqa"] == "1×6×32"                              # 64 x 4 heads / (4 + 2 x 2)
    assert shapes["qadd"] == "2×4"
    assert shapes["split"] == "batch × 6 × 4"                         # onnxruntime's symbolic inference: half of 8


def test_a_model_with_an_unknown_contrib_operator_still_validates() -> None:
    nodes = [helper.make_node("NoSuchOperator", ["x"], ["y"], domain=MS),
             helper.make_node("MatMulNBits", ["y", "B", "scales"], ["m"], domain=MS, K=16, N=8, bits=4, block_size=16),
             helper.make_node("Relu", ["m"], ["r"])]
    inits = [numpy_helper.from_array(np.zeros((8, 1, 8), np.uint8), "B"),
             numpy_helper.from_array(np.ones(8, np.float32), "scales")]
    graph = helper.make_graph(nodes, "g", [info("x", [1, 4, 16])], [info("r", [1, 4, 8])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)])
    result = unpack(validate_packed(model.SerializeToString(), 3))
    assert result.generation == 3 and not [p for p in result.problems if p.severity == Severity.ERROR]
    shapes = {name: shape_text(t) for name, t in result.inference.types[""].items()}
    assert "y" not in shapes and shapes["m"] == "unknown rank"  # its element type, as the schema says


@pytest.mark.parametrize("name", ["resnet_int8_qdq", "gpt2_legacy", "mlp_int4_matmulnbits"])
def test_onnxruntime_optimized_exports_get_the_shapes_the_runtime_computes(name: str, tmp_path: Path) -> None:
    """onnxruntime's own fusions (channels-last QLinearConv, QLinearAdd, QGemm; FusedMatMul; BiasGelu), saved
    by it: every value gets a shape, and each equals what a run gives (symbolic dims aside)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.optimized_model_filepath = str(tmp_path / "optimized.onnx")
    ort.InferenceSession(str(EXPORTS / f"{name}.onnx"), options, providers=["CPUExecutionProvider"])
    model = onnx.load(options.optimized_model_filepath)
    assert {n.domain for n in model.graph.node} >= {"com.microsoft"}
    types = infer_types(model).types[""]
    values = [o for n in model.graph.node for o in n.output if o]
    assert [v for v in values if shape_list(types[v]) is None] == []
    del model.graph.value_info[:]
    model.graph.output.extend(onnx.ValueInfoProto(name=v) for v in values if v not in {o.name for o in model.graph.output})
    plain = ort.SessionOptions()
    plain.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), plain, providers=["CPUExecutionProvider"])
    with np.load(EXPORTS / "inputs" / f"{name}.npz") as data:
        results = session.run(None, {k: data[k] for k in data.files})
    for output, array in zip(model.graph.output, results, strict=True):
        dims = shape_list(types[output.name]) if output.name in types else None
        assert dims is not None and len(dims) == array.ndim, output.name
        assert all(d == n for d, n in zip(dims, array.shape, strict=True) if isinstance(d, int)), output.name
