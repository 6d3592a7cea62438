"""Small models shaped like two kinds of real exports whose weights reach their readers through nodes:

- :func:`bert_legacy`: a torch legacy export of BERT, where shared weights are ``Identity`` nodes named
  ``Identity_<k>`` at the top level (no name scope) feeding MatMuls inside ``/encoder/layer.<i>/...``;
- :func:`qdq_cnn`: an int8 QDQ CNN, where every Conv reads its weight (and bias) through a
  ``DequantizeLinear`` of an int8 initializer, and activations pass QuantizeLinear/DequantizeLinear pairs.

    python bench/shaped.py OUT_DIR     # writes bert_legacy.onnx and qdq_cnn.onnx
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


class _Builder:
    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.rng = np.random.default_rng(0)

    def op(self, op_type: str, inputs: list[str], name: str, **attrs: Any) -> str:
        out = f"{name}_output_0"
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=name, **attrs))
        return out

    def init(self, name: str, array: np.ndarray) -> str:
        self.inits.append(numpy_helper.from_array(array, name))
        return name

    def model(self, name: str, inputs: list[onnx.ValueInfoProto], outputs: list[onnx.ValueInfoProto]) -> onnx.ModelProto:
        graph = helper.make_graph(self.nodes, name, inputs, outputs, self.inits)
        model = helper.make_model(graph, producer_name="shaped", opset_imports=[helper.make_opsetid("", OPSET)])
        model.ir_version = 8
        return model


def bert_legacy(layers: int = 10, hidden: int = 16, seq: int = 8) -> onnx.ModelProto:
    """An encoder whose 12 weights per layer come from top-level ``Identity`` nodes (120 for 10 layers)."""
    b = _Builder()
    k = [0]

    def weight(shape: list[int]) -> str:
        k[0] += 1
        w = b.init(f"onnx::MatMul_{1000 + k[0]}", (0.1 * b.rng.standard_normal(shape)).astype(np.float32))
        return b.op("Identity", [w], f"Identity_{k[0]}")

    x = b.op("Gather", [b.init("embeddings.word", np.zeros((100, hidden), np.float32)), "input_ids"],
             "/embeddings/word_embeddings/Gather")
    for i in range(layers):
        p = f"/encoder/layer.{i}"
        q, kk, v = (b.op("Add", [b.op("MatMul", [x, weight([hidden, hidden])], f"{p}/attention/self/{n}/MatMul"),
                                 weight([hidden])], f"{p}/attention/self/{n}/Add") for n in ("query", "key", "value"))
        scores = b.op("Softmax", [b.op("MatMul", [q, b.op("Transpose", [kk], f"{p}/attention/self/Transpose",
                                                         perm=[0, 2, 1])], f"{p}/attention/self/MatMul")],
                      f"{p}/attention/self/Softmax", axis=-1)
        ctx = b.op("MatMul", [scores, v], f"{p}/attention/self/MatMul_1")
        out = b.op("Add", [b.op("MatMul", [ctx, weight([hidden, hidden])], f"{p}/attention/output/dense/MatMul"),
                           weight([hidden])], f"{p}/attention/output/dense/Add")
        x = b.op("Add", [out, x], f"{p}/attention/output/Add")
        h = b.op("Add", [b.op("MatMul", [x, weight([hidden, 4 * hidden])], f"{p}/intermediate/dense/MatMul"),
                         weight([4 * hidden])], f"{p}/intermediate/dense/Add")
        h = b.op("Relu", [h], f"{p}/intermediate/intermediate_act_fn/Relu")
        h = b.op("Add", [b.op("MatMul", [h, weight([4 * hidden, hidden])], f"{p}/output/dense/MatMul"),
                         weight([hidden])], f"{p}/output/dense/Add")
        x = b.op("Add", [h, x], f"{p}/output/Add")
    b.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="/Identity_out"))
    return b.model("bert_legacy",
                   [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"])],
                   [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT,
                                                  ["batch", "sequence", hidden])])


def qdq_cnn(stages: int = 3, blocks: int = 2, channels: int = 8) -> onnx.ModelProto:
    """A ResNet-like int8 QDQ model: each Conv's weight and bias are ``DequantizeLinear`` nodes of initializers."""
    b = _Builder()
    scale = b.init("act_scale", np.array(0.0392, np.float32))
    zero = b.init("act_zero", np.array(0, np.uint8))

    def qdq(x: str, name: str) -> str:
        return b.op("DequantizeLinear", [b.op("QuantizeLinear", [x, scale, zero], f"{name}/QuantizeLinear"),
                                         scale, zero], f"{name}/DequantizeLinear")

    def conv(x: str, cin: int, cout: int, name: str) -> str:
        w = b.init(f"{name}.weight_quantized", b.rng.integers(-127, 127, (cout, cin, 3, 3)).astype(np.int8))
        ws = b.init(f"{name}.weight_scale", np.array(0.01, np.float32))
        bias = b.init(f"{name}.bias_quantized", np.zeros(cout, np.int32))
        bs = b.init(f"{name}.bias_scale", np.array(0.0004, np.float32))
        wd = b.op("DequantizeLinear", [w, ws], f"{name}.weight_DequantizeLinear")
        bd = b.op("DequantizeLinear", [bias, bs], f"{name}.bias_DequantizeLinear")
        return qdq(b.op("Relu", [b.op("Conv", [x, wd, bd], f"{name}/Conv", pads=[1, 1, 1, 1])], f"{name}/Relu"),
                   f"{name}/out")

    x = qdq("image", "/input")
    x = conv(x, 3, channels, "/stem")
    for s in range(stages):
        for k in range(blocks):
            p = f"/layer{s + 1}/{k}"
            y = conv(conv(x, channels, channels, f"{p}/conv1"), channels, channels, f"{p}/conv2")
            x = qdq(b.op("Add", [y, x], f"{p}/Add"), f"{p}/add")
    x = b.op("GlobalAveragePool", [x], "/pool/GlobalAveragePool")
    b.nodes.append(helper.make_node("Flatten", [x], ["logits"], name="/Flatten"))
    return b.model("qdq_cnn", [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 32, 32])],
                   [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, channels])])


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.splitlines()[-1].strip(), file=sys.stderr)
        return 2
    out = Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name, model in (("bert_legacy", bert_legacy()), ("qdq_cnn", qdq_cnn())):
        onnx.save(model, out / f"{name}.onnx")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
