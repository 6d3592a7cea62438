"""Quantized operators seen as the float operators they compute, so the matcher pairs them with a float
model's (or another format's) nodes, and the comparison reads their integer values as floats.

onnxruntime's quantizer and optimizer write the same float network in several formats:

* QOperator: ``QLinearConv``, ``QLinearMatMul``, com.microsoft ``QLinearAdd``/``QLinearMul``/``QGemm``/
  ``QLinearGlobalAveragePool``/``QLinearAveragePool``/``QLinearSoftmax``/``QLinearSigmoid``/
  ``QLinearLeakyRelu``/``QLinearConcat``/``QLinearReduceMean``, reading and writing integer tensors, each
  with its scale and zero point as inputs;
* dynamic: ``DynamicQuantizeLinear`` of an activation, then ``ConvInteger`` or ``MatMulInteger``, a
  ``Cast`` to float, a ``Mul`` by the product of the scales and (Conv) an ``Add`` of the bias; once
  optimized, com.microsoft ``DynamicQuantizeMatMul`` and ``MatMulIntegerToFloat``; ``DynamicQuantizeLSTM``;
* weight-only: com.microsoft ``MatMulNBits`` and ``GatherBlockQuantized`` (blocked ``DequantizeLinear`` of
  a weight is QDQ's business, in :mod:`.align`);
* float16/bfloat16: a ``Cast`` between float types where the precision changes;
* onnxruntime's optimizer: com.microsoft ``FusedMatMul`` (a MatMul with its transposes and scaling).

:func:`float_ops` finds each such pattern in a graph as a :class:`FloatOp`: the node that computes it
(its head), the float operator, the values it reads in that operator's input order, the value holding
its float result (the last node of the pattern: the ``Add`` of a dynamic Conv), the pattern's other nodes,
and the float shapes of its quantized weights. :func:`aliases` lists values that only re-encode another
(a quantized copy of an activation, a float16 copy of a float32 input), and :func:`scales` says how each
integer value maps back to floats: ``(q - zero_point) * scale``, from the node that made it, or from a
node that reads it with its scale and zero point.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import onnx
from onnx import AttributeProto, NodeProto, TensorProto

FLOAT_TYPES = frozenset({TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16, TensorProto.DOUBLE})
INT4_TYPES = frozenset({TensorProto.INT4, TensorProto.UINT4})
QUANTIZE_OPS = frozenset({"QuantizeLinear", "DynamicQuantizeLinear"})
DROPPED_ATTRIBUTES = frozenset({"channels_last", "opset"})  # the quantized op's, not the float op's
QUANTIZER_SUFFIXES = ("_quantized", "_QuantizeLinear_Output", "_DequantizeLinear_Output")
"""What onnxruntime's quantizer appends to a float value's name for its quantized copy (a tie-break only)."""


@dataclass(frozen=True)
class Scale:
    """How integer values map to the floats they stand for: ``(q - zero) * scale``; ``scale`` and ``zero``
    name values or initializers of the same graph (``zero`` empty: 0); a scale of more than one element
    runs along ``axis`` (``block``: that many elements share one)."""

    scale: str
    zero: str = ""
    axis: int = 1
    block: int = 0


@dataclass(frozen=True)
class QuantizedWeight:
    """A weight a quantized op reads as integers: its initializer, how to dequantize it and the float
    weight's shape (``packed``: MatMulNBits' or GatherBlockQuantized's 4-bit blocks, laid out as the op says)."""

    name: str
    scale: Scale
    shape: tuple[int, ...] | None
    packed: str = ""  # "", "matmulnbits" or "gatherblock"
    bits: int = 8
    transposed: bool = False  # stored as the float weight's last two axes swapped (DynamicQuantizeLSTM)


@dataclass(frozen=True)
class FloatOp:
    """A node (``head``) and the nodes after it (``members``) that together compute float ``op_type``."""

    head: int
    op_type: str
    inputs: tuple[str, ...]          # in the float op's input order ("" for one it does not have)
    outputs: tuple[str, ...]         # the values holding its float results
    members: tuple[int, ...] = ()
    attributes: tuple[AttributeProto, ...] = ()
    weights: tuple[QuantizedWeight, ...] = ()
    fused: str = ""                  # an op the float op is followed by in the same node ("Add": a bias)


@dataclass(frozen=True)
class _QLinear:
    op_type: str
    inputs: tuple[int, ...]                       # positions of the float op's inputs, in its order
    scales: tuple[tuple[int, int, int], ...]      # (value, scale, zero point) positions
    output: tuple[int, int] | None                # (scale, zero point) of the output; None: float output
    weight_axis: int = 1                          # of a per-channel weight's scale (the second input)


QLINEAR: dict[str, _QLinear] = {
    "QLinearConv": _QLinear("Conv", (0, 3, 8), ((0, 1, 2), (3, 4, 5)), (6, 7), 0),
    "QLinearConvTranspose": _QLinear("ConvTranspose", (0, 3, 8), ((0, 1, 2), (3, 4, 5)), (6, 7), 1),
    "QLinearMatMul": _QLinear("MatMul", (0, 3), ((0, 1, 2), (3, 4, 5)), (6, 7), -1),
    "QLinearAdd": _QLinear("Add", (0, 3), ((0, 1, 2), (3, 4, 5)), (6, 7)),
    "QLinearMul": _QLinear("Mul", (0, 3), ((0, 1, 2), (3, 4, 5)), (6, 7)),
    "QGemm": _QLinear("Gemm", (0, 3, 6), ((0, 1, 2), (3, 4, 5)), (7, 8), 0),
    "QLinearGlobalAveragePool": _QLinear("GlobalAveragePool", (0,), ((0, 1, 2),), (3, 4)),
    "QLinearAveragePool": _QLinear("AveragePool", (0,), ((0, 1, 2),), (3, 4)),
    "QLinearSoftmax": _QLinear("Softmax", (0,), ((0, 1, 2),), (3, 4)),
    "QLinearSigmoid": _QLinear("Sigmoid", (0,), ((0, 1, 2),), (3, 4)),
    "QLinearLeakyRelu": _QLinear("LeakyRelu", (0,), ((0, 1, 2),), (3, 4)),
    "QLinearReduceMean": _QLinear("ReduceMean", (0,), ((0, 1, 2),), (3, 4)),
}
PRESERVING = frozenset({"Reshape", "Transpose", "Flatten", "Squeeze", "Unsqueeze", "MaxPool", "Gather", "Slice",
                        "Split", "Identity", "Expand", "Tile", "Resize", "SpaceToDepth", "DepthToSpace", "Pad",
                        "GatherElements", "GatherND", "Concat"})
"""Ops that move integer elements without changing what they stand for (onnxruntime's "direct 8-bit ops"):
their output reads with their data input's scale and zero point."""


class _Graph:
    """The facts :func:`float_ops` needs: nodes, producers, consumers and the constants."""

    def __init__(self, nodes: Sequence[NodeProto], producer: Mapping[str, int], consumers: Mapping[str, list[int]],
                 initializers: Mapping[str, TensorProto], constant: set[str]) -> None:
        self.nodes, self.producer, self.consumers = nodes, producer, consumers
        self.initializers, self.constant = initializers, constant

    def op(self, i: int) -> str:
        return self.nodes[i].op_type

    def made_by(self, name: str) -> int:
        return self.producer.get(name, -4) if name else -4

    def only_reader(self, name: str) -> int:
        users = self.consumers.get(name, [])
        return users[0] if len(users) == 1 else -1

    def shape(self, name: str) -> tuple[int, ...] | None:
        t = self.initializers.get(name)
        return tuple(t.dims) if t is not None else None


HEADS = frozenset(QLINEAR) | {"QLinearConcat", "ConvInteger", "MatMulInteger", "DynamicQuantizeMatMul",
                              "MatMulIntegerToFloat", "FusedMatMul", "MatMulNBits", "GatherBlockQuantized",
                              "DynamicQuantizeLSTM"}


def float_ops(nodes: Sequence[NodeProto], ops: Sequence[str], producer: Mapping[str, int],
              consumers: Mapping[str, list[int]], initializers: Mapping[str, TensorProto],
              constant: set[str]) -> dict[int, FloatOp]:
    """Every quantized pattern of a graph by its head node (see the module's description); ``ops``: the
    nodes' op types, read once."""
    g = _Graph(nodes, producer, consumers, initializers, constant)
    out: dict[int, FloatOp] = {}
    for i, op in enumerate(ops):
        if op not in HEADS:
            continue
        node = nodes[i]
        found: FloatOp | None = None
        if op in QLINEAR:
            found = _qlinear(g, i, QLINEAR[op])
        elif op == "QLinearConcat":
            found = _qlinear_concat(g, i)
        elif op in ("ConvInteger", "MatMulInteger"):
            found = _integer(g, i)
        elif op in ("DynamicQuantizeMatMul", "MatMulIntegerToFloat"):
            found = _fused_matmul(g, i)
        elif op == "FusedMatMul" and node.domain == "com.microsoft":
            found = FloatOp(i, "MatMul", tuple(node.input[:2]), tuple(node.output[:1]), fused="Mul")
        elif op == "MatMulNBits":
            found = _nbits(g, i)
        elif op == "GatherBlockQuantized":
            found = _gather_block(g, i)
        elif op == "DynamicQuantizeLSTM":
            found = _lstm(g, i)
        if found is not None:
            out[i] = found
    return out


def _at(node: NodeProto, k: int) -> str:
    return node.input[k] if k < len(node.input) else ""


def _attributes(node: NodeProto) -> tuple[AttributeProto, ...]:
    return tuple(a for a in node.attribute if a.name not in DROPPED_ATTRIBUTES)


def _qlinear(g: _Graph, i: int, spec: _QLinear) -> FloatOp:
    node = g.nodes[i]
    weights = []
    for value, scale, zero in spec.scales:
        name = _at(node, value)
        if name in g.initializers:
            weights.append(QuantizedWeight(name, Scale(_at(node, scale), _at(node, zero), spec.weight_axis),
                                           g.shape(name)))
    return FloatOp(i, spec.op_type, tuple(_at(node, k) for k in spec.inputs), tuple(node.output[:1]),
                   attributes=_attributes(node), weights=tuple(weights))


def _qlinear_concat(g: _Graph, i: int) -> FloatOp:
    node = g.nodes[i]
    return FloatOp(i, "Concat", tuple(node.input[2::3]), tuple(node.output[:1]), attributes=_attributes(node))


def _integer(g: _Graph, i: int) -> FloatOp | None:
    """ConvInteger/MatMulInteger -> Cast -> Mul(scales) [-> Add(bias), a Conv's]: the float op at the end."""
    node = g.nodes[i]
    if not node.output:
        return None
    cast = g.only_reader(node.output[0])
    if cast < 0 or g.op(cast) != "Cast" or not g.nodes[cast].output:
        return None
    mul = g.only_reader(g.nodes[cast].output[0])
    if mul < 0 or g.op(mul) != "Mul" or not g.nodes[mul].output:
        return None
    members = [cast, mul]
    scales = [x for x in g.nodes[mul].input if x != g.nodes[cast].output[0]]
    weight_scale = ""
    product = g.made_by(scales[0]) if scales else -4
    if product >= 0 and g.op(product) == "Mul" and g.only_reader(g.nodes[product].output[0]) == mul:
        members.append(product)
        weight_scale = next((x for x in g.nodes[product].input if x in g.constant), "")
    end, bias = g.nodes[mul].output[0], ""
    conv = node.op_type == "ConvInteger"
    add = g.only_reader(end)
    if conv and add >= 0 and g.op(add) == "Add" and len(g.nodes[add].input) == 2:
        other = next(x for x in g.nodes[add].input if x != end)
        if other in g.constant:
            bias, end = _unreshaped(g, other, members), g.nodes[add].output[0]
            members.append(add)
    weight = _at(node, 1)
    weights: tuple[QuantizedWeight, ...] = ()
    if weight in g.initializers and weight_scale:
        weights = (QuantizedWeight(weight, Scale(weight_scale, _at(node, 3), 0 if conv else -1), g.shape(weight)),)
    inputs = (_at(node, 0), weight) + ((bias,) if bias else ())
    attributes = _attributes(node) if conv else ()
    return FloatOp(i, "Conv" if conv else "MatMul", inputs, (end,), tuple(members), attributes, weights)


def _unreshaped(g: _Graph, name: str, members: list[int]) -> str:
    """A bias the quantizer reshaped for broadcasting: the initializer it reshaped (the float op's bias)."""
    p = g.made_by(name)
    if p >= 0 and g.op(p) == "Reshape" and _at(g.nodes[p], 0) in g.initializers and g.only_reader(name) >= 0:
        members.append(p)
        return _at(g.nodes[p], 0)
    return name


def _fused_matmul(g: _Graph, i: int) -> FloatOp:
    """DynamicQuantizeMatMul (A, B, b_scale, b_zero_point, bias) and MatMulIntegerToFloat (A, B, a_scale,
    b_scale, a_zero_point, b_zero_point, bias): a MatMul, with the bias Add when it has one."""
    node = g.nodes[i]
    dynamic = node.op_type == "DynamicQuantizeMatMul"
    scale, zero, bias = (2, 3, 4) if dynamic else (3, 5, 6)
    weight = _at(node, 1)
    weights: tuple[QuantizedWeight, ...] = ()
    if weight in g.initializers:
        weights = (QuantizedWeight(weight, Scale(_at(node, scale), _at(node, zero), -1), g.shape(weight)),)
    fused = "Add" if _at(node, bias) else ""
    return FloatOp(i, "MatMul", (_at(node, 0), weight), tuple(node.output[:1]), weights=weights, fused=fused)


def _int_attributes(node: NodeProto) -> dict[str, int]:
    return {a.name: int(a.i) for a in node.attribute if a.type == AttributeProto.INT}


def _nbits(g: _Graph, i: int) -> FloatOp:
    """MatMulNBits (A, B packed, scales, zero_points, g_idx, bias): MatMul(A, W) with W of [K, N]."""
    node = g.nodes[i]
    attrs = _int_attributes(node)
    k, n, bits, block = attrs.get("K", 0), attrs.get("N", 0), attrs.get("bits", 4), attrs.get("block_size", 0)
    weight = _at(node, 1)
    weights = (QuantizedWeight(weight, Scale(_at(node, 2), _at(node, 3), -1, block), (k, n) if k and n else None,
                               "matmulnbits", bits),) if weight in g.initializers else ()
    fused = "Add" if _at(node, 5) else ""
    return FloatOp(i, "MatMul", (_at(node, 0), weight), tuple(node.output[:1]), weights=weights, fused=fused)


def _gather_block(g: _Graph, i: int) -> FloatOp:
    """GatherBlockQuantized (data, indices, scales, zero_points): Gather along gather_axis."""
    node = g.nodes[i]
    attrs = _int_attributes(node)
    data = _at(node, 0)
    axis, quantize_axis = attrs.get("gather_axis", 0), attrs.get("quantize_axis", 1)
    bits, block = attrs.get("bits", 4), attrs.get("block_size", 128)
    shape = g.shape(data)
    t = g.initializers.get(data)
    if shape is not None and t is not None and t.data_type not in INT4_TYPES and bits == 4 and shape:
        at = quantize_axis % len(shape)
        shape = shape[:at] + (shape[at] * 2,) + shape[at + 1:]  # two 4-bit elements a byte
    weights = (QuantizedWeight(data, Scale(_at(node, 2), _at(node, 3), quantize_axis, block), shape, "gatherblock",
                               bits),) if t is not None else ()
    attributes = (onnx.helper.make_attribute("axis", axis),) if axis else ()
    return FloatOp(i, "Gather", (data, _at(node, 1)), tuple(node.output[:1]), attributes=attributes, weights=weights)


def _lstm(g: _Graph, i: int) -> FloatOp:
    """DynamicQuantizeLSTM: LSTM's eight inputs, then W's and R's scales and zero points; W and R are stored
    [directions, input, 4 * hidden] where LSTM has [directions, 4 * hidden, input]."""
    node = g.nodes[i]
    weights = []
    for k, scale, zero in ((1, 8, 9), (2, 10, 11)):
        name = _at(node, k)
        shape = g.shape(name)
        if name in g.initializers:
            flipped = shape[:-2] + (shape[-1], shape[-2]) if shape is not None and len(shape) >= 2 else shape
            weights.append(QuantizedWeight(name, Scale(_at(node, scale), _at(node, zero), 0), flipped,
                                           transposed=True))
    return FloatOp(i, "LSTM", tuple(_at(node, k) for k in range(8)), tuple(node.output), attributes=_attributes(node),
                   weights=tuple(weights))


# -- values that only re-encode another -------------------------------------------------------------
def aliases(nodes: Sequence[NodeProto], ops: Sequence[str], inputs: Sequence[Sequence[str]],
            outputs: Sequence[Sequence[str]], consumers: Mapping[str, list[int]], float_values: set[str],
            readers: Mapping[int, FloatOp]) -> dict[str, str]:
    """Quantized or re-typed copies of a value -> the value: ``DynamicQuantizeLinear``'s quantized output,
    a ``QuantizeLinear`` output that quantized ops read (QOperator), a ``DequantizeLinear`` of an
    activation, a ``Cast`` from one float type to another (``float_values``: the values known to be floats)."""
    heads = set(readers)
    out: dict[str, str] = {}
    for i, op in enumerate(ops):
        if op not in ALIAS_OPS or not inputs[i] or not outputs[i] or not outputs[i][0]:
            continue
        node, source, made = nodes[i], inputs[i][0], outputs[i][0]
        if op == "DynamicQuantizeLinear":
            out[made] = source
        elif op == "QuantizeLinear" and any(u in heads for u in consumers.get(made, [])):
            out[made] = source
        elif op == "Cast" and source in float_values and _cast_to(node) in FLOAT_TYPES:
            out[made] = source
        elif op == "DequantizeLinear":  # an integer activation (QOperator's) as floats
            out[made] = source
    return out


def _cast_to(node: NodeProto) -> int:
    return next((int(a.i) for a in node.attribute if a.name == "to"), 0)


NOT_FLOAT = frozenset({"Shape", "Size", "NonZero", "ArgMax", "ArgMin", "Equal", "Less", "LessOrEqual", "Greater",
                       "GreaterOrEqual", "And", "Or", "Xor", "Not", "IsNaN", "IsInf", "QuantizeLinear",
                       "DynamicQuantizeLinear", "ConvInteger", "MatMulInteger", "Cast", "Range",
                       "ConstantOfShape", "Constant", "TopK", "Unique", "StringNormalizer"} | set(QLINEAR))


ALIAS_OPS = frozenset({"DynamicQuantizeLinear", "QuantizeLinear", "Cast", "DequantizeLinear"})


def float_values(nodes: Sequence[NodeProto], ops: Sequence[str], inputs: Sequence[Sequence[str]],
                 outputs: Sequence[Sequence[str]], order: Sequence[int], declared: Mapping[str, onnx.TypeProto],
                 initializers: Mapping[str, TensorProto]) -> set[str]:
    """Values known to hold floats: declared so (graph inputs, outputs, value_info), float initializers,
    the outputs of Casts to a float type and of DequantizeLinear, and (in topological order) those of ops
    whose first input holds floats, unless the op makes integers or booleans."""
    out = {n for n, t in declared.items() if t.HasField("tensor_type") and t.tensor_type.elem_type in FLOAT_TYPES}
    out |= {n for n, t in initializers.items() if t.data_type in FLOAT_TYPES}
    for i in order:
        op, ins = ops[i], inputs[i]
        if (op not in NOT_FLOAT and ins and ins[0] in out) or op == "DequantizeLinear" \
                or (op == "Cast" and _cast_to(nodes[i]) in FLOAT_TYPES):
            out.update(o for o in outputs[i][:1] if o)
    return out


# -- how integer values read as floats ----------------------------------------------------------------
@dataclass
class _Scales:
    found: dict[str, Scale] = field(default_factory=dict)

    def put(self, name: str, scale: Scale) -> None:
        if name and scale.scale:
            self.found.setdefault(name, scale)


def scales(nodes: Sequence[NodeProto], order: Sequence[int]) -> dict[str, Scale]:
    """Every integer value whose float meaning the graph states: outputs of QuantizeLinear,
    DynamicQuantizeLinear and QLinear ops, values a QLinear op or a DequantizeLinear reads with a scale
    (QOperator's quantized tables), and (in topological order) what ops that only move elements make of
    such a value."""
    out = _Scales()
    for node in nodes:
        op, inputs = node.op_type, node.input
        if op == "QuantizeLinear" and node.output and len(inputs) > 1:
            out.put(node.output[0], Scale(inputs[1], _at(node, 2), _axis(node)))
        elif op == "DynamicQuantizeLinear" and len(node.output) == 3:
            out.put(node.output[0], Scale(node.output[1], node.output[2]))
        elif op in QLINEAR:
            spec = QLINEAR[op]
            if spec.output is not None and node.output:
                out.put(node.output[0], Scale(_at(node, spec.output[0]), _at(node, spec.output[1])))
    for node in nodes:  # readers that say how they read a value
        op = node.op_type
        if op in QLINEAR:
            for value, scale, zero in QLINEAR[op].scales:
                out.put(_at(node, value), Scale(_at(node, scale), _at(node, zero)))
        elif op == "QLinearConcat" and node.output:
            out.put(node.output[0], Scale(_at(node, 0), _at(node, 1)))
            for k in range(2, len(node.input) - 2, 3):
                out.put(node.input[k], Scale(node.input[k + 1], node.input[k + 2]))
        elif op == "DequantizeLinear" and len(node.input) > 1:
            out.put(node.input[0], Scale(node.input[1], _at(node, 2), _axis(node), _block(node)))
    for i in order:  # elements moved: the same meaning
        node = nodes[i]
        if node.op_type in PRESERVING and node.input and node.input[0] in out.found:
            for made in node.output:
                out.put(made, out.found[node.input[0]])
    return out.found


def _axis(node: NodeProto) -> int:
    return next((int(a.i) for a in node.attribute if a.name == "axis"), 1)


def _block(node: NodeProto) -> int:
    return next((int(a.i) for a in node.attribute if a.name == "block_size"), 0)
