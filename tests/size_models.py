"""Models whose generated inputs need more than every free dimension at 1: transformer-shaped ones fed a KV
cache (an attention mask as long as the past and the current tokens), ones whose Reshape baked in a
sequence length (as torch's legacy exporter writes when a traced size became a constant), a reflect Pad
and strided Conv over audio samples, and an upsampling CNN (as YOLO's neck: a feature map resized x2 joins
the one of the next finer stride). Built here with onnx.helper, as exporters lay them out."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HEADS, HEAD_DIM = 2, 4
WIDTH = HEADS * HEAD_DIM
VOCAB = 50
OPSETS = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]


def _weight(name: str, *shape: int, seed: int = 0) -> onnx.TensorProto:
    rng = np.random.default_rng(abs(hash(name)) % 2**32 + seed)
    return numpy_helper.from_array((rng.standard_normal(shape) * 0.2).astype(np.float32), name)


def _model(nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto], outputs: list[onnx.ValueInfoProto],
           weights: list[onnx.TensorProto], name: str, **kwargs: object) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, name, inputs, outputs, weights, **kwargs)  # type: ignore[arg-type]
    model = helper.make_model(graph, opset_imports=OPSETS, ir_version=8)
    return model


def kv_cache_decoder(mask_dim: str = "total_sequence_length", past: str = "past_sequence_length",
                     sequence: str = "sequence_length", layers: int = 2) -> onnx.ModelProto:
    """A decoder step as onnxruntime's transformer tools export it: token ids, an attention mask over the
    past and current tokens, and per layer a past key and value; com.microsoft.MultiHeadAttention checks the
    mask is exactly past + current long (a mask of 1 is refused, not broadcast)."""
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch_size", sequence]),
              helper.make_tensor_value_info("attention_mask", TensorProto.INT32, ["batch_size", mask_dim])]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch_size", sequence, VOCAB])]
    weights = [_weight("wte", VOCAB, WIDTH), _weight("lm_head", WIDTH, VOCAB)]
    nodes = [helper.make_node("Gather", ["wte", "input_ids"], ["h0"], name="/embed/Gather")]
    for k in range(layers):
        for part in ("key", "value"):
            name = f"past_key_values.{k}.{part}"
            inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT,
                                                        ["batch_size", HEADS, past, HEAD_DIM]))
            outputs.append(helper.make_tensor_value_info(f"present.{k}.{part}", TensorProto.FLOAT, None))
        for w in ("q", "k", "v", "o"):
            weights.append(_weight(f"l{k}.{w}", WIDTH, WIDTH))
            if w != "o":
                nodes.append(helper.make_node("MatMul", [f"h{k}", f"l{k}.{w}"], [f"l{k}_{w}"], name=f"/l{k}/{w}/MatMul"))
        nodes += [
            helper.make_node("MultiHeadAttention", [f"l{k}_q", f"l{k}_k", f"l{k}_v", "", "attention_mask", "",
                                                    f"past_key_values.{k}.key", f"past_key_values.{k}.value"],
                             [f"l{k}_att", f"present.{k}.key", f"present.{k}.value"], name=f"/l{k}/attn",
                             domain="com.microsoft", num_heads=HEADS),
            helper.make_node("MatMul", [f"l{k}_att", f"l{k}.o"], [f"l{k}_o"], name=f"/l{k}/o/MatMul"),
            helper.make_node("Add", [f"h{k}", f"l{k}_o"], [f"h{k + 1}"], name=f"/l{k}/Add")]
    nodes.append(helper.make_node("MatMul", [f"h{layers}", "lm_head"], ["logits"], name="/lm_head/MatMul"))
    return _model(nodes, inputs, outputs, weights, "kv_cache_decoder")


def baked_reshape(length: int = 50) -> onnx.ModelProto:
    """A self-attention block whose head split reshapes to a constant [1, length, heads, head_dim], as
    torch's legacy exporter writes when a traced sequence length became a Python int."""
    x = helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["batch", "sequence", WIDTH])
    y = helper.make_tensor_value_info("out", TensorProto.FLOAT, ["batch", "sequence", WIDTH])
    shape = numpy_helper.from_array(np.array([1, length, HEADS, HEAD_DIM], np.int64), "/attn/Constant_output_0")
    back = numpy_helper.from_array(np.array([1, length, WIDTH], np.int64), "/attn/Constant_1_output_0")
    nodes = [helper.make_node("MatMul", ["hidden", "wq"], ["q"], name="/attn/q/MatMul"),
             helper.make_node("Reshape", ["q", shape.name], ["q4"], name="/attn/Reshape"),
             helper.make_node("Transpose", ["q4"], ["qt"], name="/attn/Transpose", perm=[0, 2, 1, 3]),
             helper.make_node("Softmax", ["qt"], ["p"], name="/attn/Softmax", axis=-1),
             helper.make_node("Transpose", ["p"], ["pt"], name="/attn/Transpose_1", perm=[0, 2, 1, 3]),
             helper.make_node("Reshape", ["pt", back.name], ["out"], name="/attn/Reshape_1")]
    return _model(nodes, [x], [y], [_weight("wq", WIDTH, WIDTH), shape, back], "baked_reshape")


def reflect_pad_audio(pad: int = 64, kernel: int = 256, stride: int = 128) -> onnx.ModelProto:
    """An STFT-like front end over raw samples (as silero VAD): a reflect Pad of ``pad`` samples on each side
    (onnxruntime needs more samples than that), a strided Conv of ``kernel`` taps, a magnitude and a mean."""
    x = helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", "samples"])
    y = helper.make_tensor_value_info("output", TensorProto.FLOAT, ["batch", 1])
    consts = [numpy_helper.from_array(np.array([1], np.int64), "axes1"),
              numpy_helper.from_array(np.array([0, 0, pad, 0, 0, pad], np.int64), "pads"),
              _weight("basis", 16, 1, kernel), _weight("head", 16, 1)]
    nodes = [helper.make_node("Unsqueeze", ["input", "axes1"], ["x3"], name="/stft/Unsqueeze"),
             helper.make_node("Pad", ["x3", "pads"], ["padded"], name="/stft/Pad", mode="reflect"),
             helper.make_node("Conv", ["padded", "basis"], ["spec"], name="/stft/Conv", strides=[stride]),
             helper.make_node("Abs", ["spec"], ["mag"], name="/stft/Abs"),
             helper.make_node("ReduceMean", ["mag"], ["pooled"], name="/ReduceMean", axes=[2], keepdims=0),
             helper.make_node("MatMul", ["pooled", "head"], ["logit"], name="/head/MatMul"),
             helper.make_node("Sigmoid", ["logit"], ["output"], name="/Sigmoid")]
    return _model(nodes, [x], [y], consts, "reflect_pad_audio")


def upsampling_cnn(channels: int = 4) -> onnx.ModelProto:
    """A feature pyramid as YOLO's neck builds it: three stride-2 Convs down to 1/8, the deepest map resized
    x2 and joined (Concat) with the 1/4 map: any height or width that is not a multiple of 8 fails."""
    x = helper.make_tensor_value_info("images", TensorProto.FLOAT, ["batch", 3, "height", "width"])
    y = helper.make_tensor_value_info("output", TensorProto.FLOAT, None)
    consts = [_weight("c1", channels, 3, 3, 3), _weight("c2", channels, channels, 3, 3),
              _weight("c3", channels, channels, 3, 3),
              numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")]
    conv = {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [2, 2]}
    nodes = [helper.make_node("Conv", ["images", "c1"], ["p1"], name="/down1/Conv", **conv),
             helper.make_node("Conv", ["p1", "c2"], ["p2"], name="/down2/Conv", **conv),
             helper.make_node("Conv", ["p2", "c3"], ["p3"], name="/down3/Conv", **conv),
             helper.make_node("Resize", ["p3", "", "scales"], ["up"], name="/neck/Resize", mode="nearest"),
             helper.make_node("Concat", ["up", "p2"], ["output"], name="/neck/Concat", axis=1)]
    return _model(nodes, [x], [y], consts, "upsampling_cnn")
