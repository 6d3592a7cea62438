"""Transformer-shaped ONNX models of any size, for the benchmarks and the tests.

    python bench/synth.py LAYERS OUT.onnx [--hidden H]

A model is an ``embed`` Identity, LAYERS decoder layers of 41 nodes each, a final LayerNorm and a
``head`` Identity: 300 layers make 12,311 nodes, 1500 make 61,511 and 3000 make 123,011. A layer is
a LayerNorm spelled out in 9 nodes, attention (q/k/v MatMul, Reshape and Transpose into 2 heads,
scores, Softmax, context, output projection), a residual Add, a second LayerNorm and a SiLU MLP
with its residual Add. Node names are scoped like an exporter's (``layers.7/attn/q/MatMul``), so
the viewer groups them. Weights are tiny (hidden size H, default 16), so a 123k-node file is ~50 MB;
onnx.checker accepts the model and onnxruntime runs it.

``synth_file(LAYERS)`` gives the path of such a model in the repository's cache folder, made on
first use; the benchmarks use it for their default models.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / ".cache" / "onnxviz-tests"
OPSET = 18


class _Graph:
    """Nodes and initializers as they are added; random weights from one seeded generator."""

    def __init__(self, hidden: int, seed: int) -> None:
        self.hidden = hidden
        self.nodes: list[onnx.NodeProto] = []
        self.weights: list[onnx.TensorProto] = []
        self.rng = np.random.default_rng(seed)

    def op(self, op_type: str, inputs: list[str], output: str, name: str, **attrs: Any) -> str:
        self.nodes.append(helper.make_node(op_type, inputs, [output], name=name, **attrs))
        return output

    def weight(self, name: str, shape: list[int]) -> str:
        values = (0.1 * self.rng.standard_normal(shape)).astype(np.float32)
        self.weights.append(numpy_helper.from_array(values, name))
        return name

    def ints(self, name: str, values: list[int]) -> str:
        self.weights.append(numpy_helper.from_array(np.array(values, dtype=np.int64), name))
        return name


def _layer_norm(g: _Graph, x: str, scope: str) -> str:
    """(x - mean) / sqrt(var + eps) * weight + bias over the last axis, one node per step."""
    axes = g.ints(f"{scope}.axes", [-1])
    mean = g.op("ReduceMean", [x, axes], f"{scope}.mean", f"{scope}/ReduceMean")
    centred = g.op("Sub", [x, mean], f"{scope}.d", f"{scope}/Sub")
    square = g.op("Mul", [centred, centred], f"{scope}.sq", f"{scope}/Mul")
    var = g.op("ReduceMean", [square, axes], f"{scope}.var", f"{scope}/ReduceMean_1")
    shifted = g.op("Add", [var, g.weight(f"{scope}.eps", [1])], f"{scope}.ve", f"{scope}/Add")
    std = g.op("Sqrt", [shifted], f"{scope}.sd", f"{scope}/Sqrt")
    normed = g.op("Div", [centred, std], f"{scope}.nm", f"{scope}/Div")
    scaled = g.op("Mul", [normed, g.weight(f"{scope}.weight", [g.hidden])], f"{scope}.sc", f"{scope}/Mul_1")
    return g.op("Add", [scaled, g.weight(f"{scope}.bias", [g.hidden])], f"{scope}.out", f"{scope}/Add_1")


def _heads(g: _Graph, x: str, p: str, which: str) -> str:
    """One of q, k, v: projected, split into heads, k transposed for the scores' MatMul."""
    w = g.weight(f"{p}.attn.{which}.weight", [g.hidden, g.hidden])
    projected = g.op("MatMul", [x, w], f"{p}.{which}.mm", f"{p}/attn/{which}/MatMul")
    split = g.op("Reshape", [projected, "shape_split"], f"{p}.{which}.r", f"{p}/attn/{which}/Reshape")
    perm = [0, 2, 3, 1] if which == "k" else [0, 2, 1, 3]
    return g.op("Transpose", [split], f"{p}.{which}.t", f"{p}/attn/{which}/Transpose", perm=perm)


def _attention(g: _Graph, x: str, p: str) -> str:
    q, k, v = (_heads(g, x, p, which) for which in ("q", "k", "v"))
    scores = g.op("MatMul", [q, k], f"{p}.scores", f"{p}/attn/MatMul")
    scaled = g.op("Mul", [scores, g.weight(f"{p}.scale", [1])], f"{p}.scaled", f"{p}/attn/Mul")
    probs = g.op("Softmax", [scaled], f"{p}.probs", f"{p}/attn/Softmax", axis=-1)
    context = g.op("MatMul", [probs, v], f"{p}.ctx", f"{p}/attn/MatMul_1")
    merged = g.op("Transpose", [context], f"{p}.ctx_t", f"{p}/attn/Transpose", perm=[0, 2, 1, 3])
    flat = g.op("Reshape", [merged, "shape_merge"], f"{p}.ctx_r", f"{p}/attn/Reshape")
    return g.op("MatMul", [flat, g.weight(f"{p}.attn.o.weight", [g.hidden, g.hidden])], f"{p}.o",
                f"{p}/attn/o/MatMul")


def _mlp(g: _Graph, x: str, p: str) -> str:
    wide = 4 * g.hidden
    up = g.op("MatMul", [x, g.weight(f"{p}.mlp.up.weight", [g.hidden, wide])], f"{p}.up", f"{p}/mlp/up/MatMul")
    up = g.op("Add", [up, g.weight(f"{p}.mlp.up.bias", [wide])], f"{p}.upb", f"{p}/mlp/up/Add")
    gate = g.op("Sigmoid", [up], f"{p}.sig", f"{p}/mlp/Sigmoid")
    act = g.op("Mul", [up, gate], f"{p}.act", f"{p}/mlp/Mul")
    return g.op("MatMul", [act, g.weight(f"{p}.mlp.down.weight", [wide, g.hidden])], f"{p}.down",
                f"{p}/mlp/down/MatMul")


def _decoder_layer(g: _Graph, x: str, i: int) -> str:
    p = f"layers.{i}"
    x = g.op("Add", [x, _attention(g, _layer_norm(g, x, f"{p}.ln1"), p)], f"{p}.res1", f"{p}/Add")
    return g.op("Add", [x, _mlp(g, _layer_norm(g, x, f"{p}.ln2"), p)], f"{p}.res2", f"{p}/Add_1")


def build(layers: int, hidden: int = 16, heads: int = 2, seq: int = 4) -> onnx.ModelProto:
    """The model of LAYERS decoder layers (41 nodes each, 11 more around them)."""
    g = _Graph(hidden, seed=0)
    g.ints("shape_split", [1, seq, heads, hidden // heads])
    g.ints("shape_merge", [1, seq, hidden])
    x = g.op("Identity", ["input_ids_embed"], "hidden_0", "embed")
    for i in range(layers):
        x = _decoder_layer(g, x, i)
    g.op("Identity", [_layer_norm(g, x, "final_ln")], "logits", "head")
    shape = [1, seq, hidden]
    graph = helper.make_graph(g.nodes, f"synthetic_{layers}_layers",
                              [helper.make_tensor_value_info("input_ids_embed", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, shape)], g.weights)
    model = helper.make_model(graph, producer_name="synth", opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    return model


def synth_file(layers: int) -> Path:
    """``synth{LAYERS}.onnx`` in the cache folder (keyed by this file's text), written on first use by a
    child process, so that the caller's peak memory (which its own children inherit) stays its own."""
    key = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]
    path = CACHE / f"synth-{key}" / f"synth{layers}.onnx"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, partial = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-")
        os.close(fd)
        try:
            subprocess.run([sys.executable, __file__, str(layers), partial], check=True, stdout=subprocess.DEVNULL)
            os.replace(partial, path)  # whole or absent, whichever process finishes first
        finally:
            Path(partial).unlink(missing_ok=True)  # a failed or interrupted run leaves no part-written file
    return path


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 4) or (len(argv) == 4 and argv[2] != "--hidden"):
        print(__doc__.splitlines()[2].strip(), file=sys.stderr)
        return 2
    model = build(int(argv[0]), int(argv[3]) if len(argv) == 4 else 16)
    onnx.save(model, argv[1])
    print(f"{argv[1]}: {len(model.graph.node)} nodes, {len(model.graph.initializer)} initializers")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
