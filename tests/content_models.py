"""Small models whose content the panels and boxes show: small constants, contrib operators, weights in
If branches and functions, metadata with line breaks. Figures in the tests are computed by hand from these."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

STACK_TRACE = 'File "model.py", line 12, in forward\n    x = self.fc(x)\nFile "torch/nn/linear.py", line 5'


def info(name: str, shape: list[int] | None, elem: int = TensorProto.FLOAT) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def small_values_model() -> onnx.ModelProto:
    """An Equal against ``B = 16000``, a Mul by a Constant 0.5, a Reshape to a Constant ``[1, 3, 224]``,
    a QuantizeLinear with scale 0.039215688, a string Constant with a bidi override and a line break,
    and an Add of a 224-element weight (too big to show)."""
    nodes = [helper.make_node("Constant", [], ["half"], value_float=0.5),
             helper.make_node("Constant", [], ["shape"], value=numpy_helper.from_array(np.array([1, 3, 224]))),
             helper.make_node("Constant", [], ["tag"],
                              value=numpy_helper.from_array(np.array(["a\u202eb\nc"], dtype=object))),
             helper.make_node("Equal", ["rate", "B"], ["eq"], name="eq"),
             helper.make_node("Mul", ["x", "half"], ["m"], name="mul"),
             helper.make_node("Reshape", ["m", "shape"], ["r"], name="reshape"),
             helper.make_node("QuantizeLinear", ["r", "ys", "yz"], ["q"], name="quant"),
             helper.make_node("Identity", ["tag"], ["t"], name="ident"),
             helper.make_node("Add", ["r", "W"], ["a"], name="add")]
    inits = [numpy_helper.from_array(np.array(16000, np.int64), "B"),
             numpy_helper.from_array(np.array(0.039215688, np.float32), "ys"),
             numpy_helper.from_array(np.array(128, np.uint8), "yz"),
             numpy_helper.from_array(np.ones(224, np.float32), "W")]
    graph = helper.make_graph(nodes, "g", [info("rate", [], TensorProto.INT64), info("x", [3, 224])],
                              [info("eq", [], TensorProto.BOOL), info("q", [1, 3, 224], TensorProto.UINT8),
                               info("t", [1], TensorProto.STRING), info("a", [1, 3, 224])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def contrib_model() -> onnx.ModelProto:
    """MatMulNBits (A [1, 4, 16], K 16, N 8), SkipLayerNormalization and a QAttention, all com.microsoft."""
    nodes = [helper.make_node("MatMulNBits", ["x", "B", "scales"], ["y"], domain="com.microsoft", name="mm",
                              K=16, N=8, bits=4, block_size=16),
             helper.make_node("SkipLayerNormalization", ["y", "skip", "gamma", "beta"], ["z"], name="sln",
                              domain="com.microsoft", epsilon=1e-5),
             helper.make_node("QAttention", ["x8", "qw", "qb", "s1", "s2"], ["att"], domain="com.microsoft",
                              name="qatt", num_heads=2)]
    inits = [numpy_helper.from_array(np.zeros((8, 1, 8), np.uint8), "B"),
             numpy_helper.from_array(np.ones(8, np.float32), "scales"),
             numpy_helper.from_array(np.ones(8, np.float32), "gamma"),
             numpy_helper.from_array(np.zeros(8, np.float32), "beta"),
             numpy_helper.from_array(np.zeros((16, 48), np.int8), "qw"),
             numpy_helper.from_array(np.zeros(48, np.float32), "qb"),
             numpy_helper.from_array(np.array(0.5, np.float32), "s1"),
             numpy_helper.from_array(np.array(0.25, np.float32), "s2")]
    graph = helper.make_graph(nodes, "g", [info("x", [1, 4, 16]), info("skip", [1, 4, 8]),
                                           info("x8", [2, 6, 16], TensorProto.UINT8)],
                              [info("z", [1, 4, 8]), info("att", [2, 6, 16])], inits,
                              value_info=[info("y", [1, 4, 8])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])


def branches_model() -> onnx.ModelProto:
    """Weights held by Constant nodes and initializers of If branches and a local function, with graph-level and
    node-level metadata carrying a stack trace (line breaks).

    Parameters: main graph 10 (initializer ``w``); then branch 100 (Constant [10, 10]) + 10 (initializer); else
    branch 3 (Constant value_floats); function 4 (int64 Constant [2, 2]). The then branch's MatMul costs
    2 x 10 x 10 = 200 MACs."""
    then_nodes = [helper.make_node("Constant", [], ["tw"], value=numpy_helper.from_array(np.ones((10, 10), np.float32))),
                  helper.make_node("MatMul", ["x", "tw"], ["tm"], name="then_mm"),
                  helper.make_node("Add", ["tm", "tb"], ["ty"], name="then_add")]
    then_graph = helper.make_graph(then_nodes, "then", [], [info("ty", [2, 10])],
                                   [numpy_helper.from_array(np.zeros(10, np.float32), "tb")])
    else_nodes = [helper.make_node("Constant", [], ["ew"], value_floats=[1.0, 2.0, 3.0]),
                  helper.make_node("Identity", ["x"], ["ey"], name="else_id")]
    else_graph = helper.make_graph(else_nodes, "else", [], [info("ey", [2, 10])])
    fn = helper.make_function("local", "Scale", ["a"], ["b"],
                              [helper.make_node("Constant", [], ["k"],
                                                value=numpy_helper.from_array(np.ones((2, 2), np.int64))),
                               helper.make_node("Identity", ["a"], ["b"])],
                              [helper.make_opsetid("", 17)])
    gate = helper.make_node("If", ["cond"], ["y"], name="branch", then_branch=then_graph, else_branch=else_graph)
    gate.metadata_props.add(key="pkg.torch.onnx.stack_trace", value=STACK_TRACE)
    nodes = [gate, helper.make_node("Scale", ["y"], ["z"], domain="local", name="scale"),
             helper.make_node("Add", ["z", "w"], ["out"], name="bias")]
    graph = helper.make_graph(nodes, "main", [info("cond", [], TensorProto.BOOL), info("x", [2, 10])],
                              [info("out", [2, 10])], [numpy_helper.from_array(np.zeros(10, np.float32), "w")])
    graph.metadata_props.add(key="graph_signature", value="inputs:\n  x: USER_INPUT\noutputs:\n  out")
    graph.metadata_props.add(key="bell", value="ring\x07")
    model = helper.make_model(graph, functions=[fn], opset_imports=[helper.make_opsetid("", 17),
                                                                    helper.make_opsetid("local", 1)])
    model.metadata_props.add(key="pkg.torch.onnx.stack_trace", value=STACK_TRACE)
    return model
