#!/usr/bin/env python3
"""Build the bundled example models in resources/examples/.

usage: python resources/make_examples.py [OUT_DIR]

``example.onnx`` is a small image classifier: a convolution stem, a residual
block, and a small self-attention block over the spatial positions, then a
classifier head. It is valid (onnx.checker passes) and onnxruntime runs it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def _builder(seed: int = 0):  # noqa: ANN202 - local helper factory
    rng = np.random.default_rng(seed)
    nodes: list[onnx.NodeProto] = []
    inits: list[TensorProto] = []

    def weight(name: str, shape: tuple[int, ...], scale: float = 0.1) -> str:
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    def fixed(name: str, values: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(values, name))
        return name

    def const(name: str, values: list[int]) -> str:
        return fixed(name, np.array(values, dtype=np.int64))

    def node(op: str, inputs: list[str], output: str, name: str, **attrs: object) -> str:
        nodes.append(helper.make_node(op, inputs, [output], name=name, **attrs))
        return output

    return nodes, inits, weight, fixed, const, node


def build_example() -> onnx.ModelProto:
    nodes, inits, weight, fixed, const, node = _builder()
    c, hw, classes = 16, 8, 10
    x = node("Conv", ["image", weight("stem.conv.weight", (c, 3, 3, 3)), weight("stem.conv.bias", (c,))],
             "stem.conv", "/stem/conv/Conv", pads=[1, 1, 1, 1], strides=[2, 2])
    x = node("BatchNormalization", [x, weight("stem.bn.scale", (c,), 1.0), weight("stem.bn.bias", (c,)),
                                    weight("stem.bn.mean", (c,)), fixed("stem.bn.var", np.ones(c, np.float32))],
             "stem.bn", "/stem/bn/BatchNormalization")
    x = node("Relu", [x], "stem.relu", "/stem/relu/Relu")
    x = node("MaxPool", [x], "stem.pool", "/stem/pool/MaxPool", kernel_shape=[2, 2], strides=[2, 2])
    # residual block
    r = node("Conv", [x, weight("res.conv1.weight", (c, c, 3, 3)), weight("res.conv1.bias", (c,))],
             "res.conv1", "/res/conv1/Conv", pads=[1, 1, 1, 1])
    r = node("Relu", [r], "res.relu1", "/res/relu1/Relu")
    r = node("Conv", [r, weight("res.conv2.weight", (c, c, 3, 3)), weight("res.conv2.bias", (c,))],
             "res.conv2", "/res/conv2/Conv", pads=[1, 1, 1, 1])
    x = node("Add", [x, r], "res.add", "/res/Add")
    x = node("Relu", [x], "res.out", "/res/relu_out/Relu")
    # attention over the hw*hw spatial positions
    seq = hw * hw
    t = node("Reshape", [x, const("attn.flat_shape", [0, c, seq])], "attn.flat", "/attn/Reshape")
    t = node("Transpose", [t], "attn.tokens", "/attn/Transpose", perm=[0, 2, 1])
    q = node("MatMul", [t, weight("attn.q.weight", (c, c))], "attn.q", "/attn/q/MatMul")
    k = node("MatMul", [t, weight("attn.k.weight", (c, c))], "attn.k", "/attn/k/MatMul")
    v = node("MatMul", [t, weight("attn.v.weight", (c, c))], "attn.v", "/attn/v/MatMul")
    kt = node("Transpose", [k], "attn.kt", "/attn/k/Transpose", perm=[0, 2, 1])
    s = node("MatMul", [q, kt], "attn.scores", "/attn/MatMul")
    s = node("Mul", [s, fixed("attn.scale", np.array([c ** -0.5], np.float32))], "attn.scaled", "/attn/Mul")
    p = node("Softmax", [s], "attn.probs", "/attn/Softmax", axis=-1)
    o = node("MatMul", [p, v], "attn.ctx", "/attn/MatMul_1")
    o = node("MatMul", [o, weight("attn.out.weight", (c, c))], "attn.out", "/attn/out/MatMul")
    t = node("Add", [t, o], "attn.residual", "/attn/Add")
    # head
    g = node("ReduceMean", [t, const("head.axes", [1])], "head.pool", "/head/ReduceMean", keepdims=0)
    logits = node("Gemm", [g, weight("head.fc.weight", (classes, c)), weight("head.fc.bias", (classes,))],
                  "logits", "/head/fc/Gemm", transB=1)
    node("Softmax", [logits], "probabilities", "/head/Softmax", axis=-1)
    graph = helper.make_graph(
        nodes, "example_cnn_attention",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["batch", 3, 2 * 2 * hw, 2 * 2 * hw])],
        [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, ["batch", classes])],
        inits,
        doc_string="A small CNN with a residual block and a self-attention block, bundled with onnxviz.",
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)],
                              producer_name="onnxviz-examples", producer_version="1")
    model.ir_version = 8
    model.doc_string = "# Example model\n\nA **small** image classifier: conv stem, residual block, attention, head."
    helper.set_model_props(model, {"author": "onnxviz", "license": "Apache-2.0"})
    onnx.checker.check_model(model, full_check=True)
    return model


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else Path(__file__).parent / "examples"
    out.mkdir(parents=True, exist_ok=True)
    onnx.save(build_example(), out / "example.onnx")
    print(f"wrote {out / 'example.onnx'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
