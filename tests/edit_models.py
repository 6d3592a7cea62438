"""Small models the editing tests build: shaped as exporters write them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def classifier(path: Path) -> Path:
    """A batch-1 image classifier as an exporter writes it: every intermediate value in value_info."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "conv.w")
    fc = numpy_helper.from_array(rng.standard_normal((4 * 6 * 6, 5)).astype(np.float32), "fc.w")
    nodes = [helper.make_node("Conv", ["x", "conv.w"], ["c"], name="conv"),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("Flatten", ["r"], ["f"], name="flatten"),
             helper.make_node("MatMul", ["f", "fc.w"], ["logits"], name="fc"),
             helper.make_node("Softmax", ["logits"], ["probs"], name="softmax")]
    graph = helper.make_graph(nodes, "classifier", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                              [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [1, 5])], [w, fc])
    model = onnx.shape_inference.infer_shapes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                                                                ir_version=9))
    onnx.save(model, path)
    return path
