"""Estimated multiply-accumulates (MACs) and floating-point operations per node.

Estimates use declared or inferred shapes (and initializer dims); symbolic
dimensions (batch, sequence) count as 1. A node whose shapes are unknown gets
``None``: the total then counts only the
nodes that could be estimated and says how many could not. Conventions: one
MAC is two FLOPs; elementwise, normalisation and activation ops cost one FLOP
per output element; pooling costs one per window element; data movement is free.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import onnx
from onnx import NodeProto, TensorProto, TypeProto

from onnxviz.model.graph.index import GraphIndex, ModelIndex
from onnxviz.model.graph.validation import PackedTypes
from onnxviz.model.text import shape_list, shape_text

Shape = list[int]

ELEMENTWISE = frozenset({
    "Add", "Sub", "Mul", "Div", "Pow", "Sqrt", "Exp", "Log", "Neg", "Abs", "Reciprocal", "Relu",
    "LeakyRelu", "PRelu", "Elu", "Selu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Erf", "Gelu",
    "Softplus", "Softsign", "Clip", "Min", "Max", "Mean", "Sum", "Where", "Softmax", "LogSoftmax",
    "BatchNormalization", "LayerNormalization", "InstanceNormalization", "GroupNormalization",
    "RMSNormalization", "SkipLayerNormalization", "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin",
    "ReduceProd", "ReduceL2", "ReduceSumSquare", "Mish", "Swish", "FastGelu", "BiasGelu", "QuickGelu",
    "Floor", "Ceil", "Round", "Sin", "Cos", "Equal", "Less", "Greater", "And", "Or", "Not", "Sign",
    "DequantizeLinear", "QuantizeLinear",
})
BIAS_OPS = frozenset({"Conv", "ConvTranspose", "Gemm"})
POOLING = frozenset({"MaxPool", "AveragePool", "LpPool"})


class NodeCost(NamedTuple):
    """Estimated cost of one node; ``macs``/``flops`` are None when shapes are unknown. A tuple: 123k of
    them are made in a fraction of the time dataclasses take, and rebuilt from columns in one step."""

    scope: str
    node: int
    name: str
    op_type: str
    macs: int | None
    flops: int | None
    output_shape: str = ""
    symbolic: bool = False  # symbolic dimensions (e.g. batch) were counted as 1


@dataclass(frozen=True)
class CostSummary:
    macs: int
    flops: int
    estimated_nodes: int
    unknown_nodes: int
    symbolic: bool  # some symbolic dimension was counted as 1


_Read = tuple[list[int | str | None] | None, str, "Shape | None", bool]  # shape_list, shape_text, concrete, symbolic
_NOTHING: _Read = (None, "", None, False)  # the reading of no type


class _Shapes:
    """Concrete shapes of values in one scope: declared, inferred, or initializer dims. Values of equal
    types (most, in a model of repeated layers) share one reading of their dims and shape text."""

    def __init__(self, index: ModelIndex, g: GraphIndex) -> None:
        self.index, self.g = index, g
        self.symbolic_used = False  # a dim_param was counted as 1 since the last reset
        self.init_dims: dict[str, Shape] = {}
        self._reads: dict[bytes, _Read] = {}  # serialized type -> its reading
        self._by_id: dict[int, tuple[TypeProto, _Read]] = {}  # id of a type read -> (it, kept alive; its reading)
        self._named: dict[str, _Read] = {}  # value name -> the reading of its type (read once per value)
        self._initializers: dict[str, TensorProto] = {}  # name -> initializer, its dims read when first asked
        if g.graph is not None:
            self._initializers = {t.name: t for t in g.graph.initializer}
        # a graph with no enclosing one: a value's type is the declared one, else the inferred one (ModelIndex.type_of)
        self._top = (g.declared, index.inferred.get(g.scope, {})) if g.parent is None else None
        if self._top is not None and isinstance(self._top[1], PackedTypes):
            self._read_all(*self._top[1].grouped())

    def _read_all(self, at: Mapping[str, int], distinct: list[TypeProto]) -> None:
        """Read each distinct inferred type once and give every name its reading (the declared type first,
        as :meth:`_of_name` does): a Python step per distinct type, not per value."""
        reads = [self._read(t) for t in distinct]
        self._named = dict(zip(at.keys(), map(reads.__getitem__, at.values()), strict=True))
        declared = self._top[0] if self._top is not None else {}
        for name, t in declared.items():
            self._named[name] = self._read(t)

    def _read(self, t: TypeProto | None) -> _Read:
        if t is None:
            return _NOTHING
        seen = self._by_id.get(id(t))  # the types of a packed scope are shared objects: one per distinct type
        if seen is not None and seen[0] is t:
            return seen[1]
        found = self._read_new(t)
        self._by_id[id(t)] = (t, found)
        return found

    def _read_new(self, t: TypeProto) -> _Read:
        key = t.SerializeToString()
        found = self._reads.get(key)
        if found is None:
            dims = shape_list(t)
            concrete = None if dims is None or any(d is None or (isinstance(d, int) and d < 0) for d in dims) \
                else [d if isinstance(d, int) else 1 for d in dims]
            symbolic = concrete is not None and any(isinstance(d, str) for d in dims or [])
            found = self._reads[key] = (dims, shape_text(t), concrete, symbolic)
        return found

    def _of_name(self, name: str) -> _Read:
        """The reading of ``name``'s type as the index says (declared, else inferred)."""
        found = self._named.get(name)
        if found is None:
            if self._top is not None:
                declared, inferred = self._top
                t = declared.get(name)
                found = self._read(t if t is not None else inferred.get(name))
            else:
                found = self._read(self.index.type_of(self.g.scope, name)[0])
            self._named[name] = found
        return found

    def text(self, name: str) -> str:
        """The shape text of ``name``'s type as the index says (declared, else inferred)."""
        return self._of_name(name)[1]

    def reading(self, name: str) -> _Read:
        """What is read of ``name``'s type as the index says (declared, else inferred); nothing for ""."""
        return self._of_name(name) if name else _NOTHING

    def plain(self, name: str) -> bool:
        """No initializer has the name ``name``: :meth:`of` gives its :meth:`reading`'s shape, when it has one."""
        return name not in self.init_dims and name not in self._initializers

    def of(self, name: str) -> Shape | None:
        """The shape with symbolic dims as 1 (shared between values: not to be changed), or None."""
        if not name:
            return None
        dims = self.init_dims.get(name)
        if dims is not None:
            return dims
        tensor = self._initializers.get(name)
        if tensor is not None:
            dims = self.init_dims[name] = [int(d) for d in tensor.dims]
            return dims
        read = self._of_name(name)
        if read[0] is None:  # a declared type without shape: inference may know more
            read = self._read(self.index.inferred.get(self.g.scope, {}).get(name))
        if read[3]:
            self.symbolic_used = True
        return read[2]


def _attr_int(node: NodeProto, name: str, default: int) -> int:
    for a in node.attribute:
        if a.name == name:
            return int(a.i)
    return default


def _attr_ints(node: NodeProto, name: str) -> list[int] | None:
    for a in node.attribute:
        if a.name == name:
            return [int(x) for x in a.ints]
    return None


def _conv(node: NodeProto, s: Sequence[Shape | None]) -> int | None:
    w, y = s[1], s[-1]
    if w is None or y is None or len(y) < 2:
        return None
    # weight [M, C/group, *k]; every output element needs C/group * prod(k) MACs
    return math.prod(y) * math.prod(w[1:])


def _conv_transpose(node: NodeProto, s: Sequence[Shape | None]) -> int | None:
    x, w = s[0], s[1]
    if x is None or w is None or len(x) < 2:
        return None
    # every input element is scattered into (M/group) * prod(k) outputs
    return math.prod(x) * math.prod(w[1:])


def _matmul(node: NodeProto, s: Sequence[Shape | None]) -> int | None:
    a, y = s[0], s[-1]
    if a is None or y is None or not a:
        return None
    return math.prod(y) * a[-1]


def _gemm(node: NodeProto, s: Sequence[Shape | None]) -> int | None:
    a, y = s[0], s[-1]
    if a is None or y is None or len(a) != 2:
        return None
    k = a[0] if _attr_int(node, "transA", 0) else a[1]
    return math.prod(y) * k


def _attention(node: NodeProto, s: Sequence[Shape | None]) -> int | None:
    q, k, v = (list(s) + [None, None, None])[:3]
    if q is None or k is None or v is None:
        return None
    if len(q) == 4 and len(k) == 4 and len(v) == 4:
        b, h, sq, d = q
        return b * h * sq * k[2] * (d + v[3])
    if len(q) == 3 and len(k) == 3 and len(v) == 3:
        heads_q = _attr_int(node, "q_num_heads", 1)
        heads_kv = _attr_int(node, "kv_num_heads", heads_q)
        dv = v[2] // max(heads_kv, 1)
        return q[0] * q[1] * k[1] * (q[2] + heads_q * dv)
    return None


MacRule = Callable[[NodeProto, Sequence[Shape | None]], int | None]


def _recurrent(node: NodeProto, s: Sequence[Shape | None]) -> int | None:
    """LSTM, GRU, RNN: every step multiplies the input by W and the hidden state by R, in each direction
    (W ``[directions, gates x hidden, input]``, R ``[directions, gates x hidden, hidden]``)."""
    x, w, r = (list(s) + [None, None, None])[:3]
    if x is None or w is None or r is None or len(x) != 3:
        return None
    seq, batch = (x[1], x[0]) if _attr_int(node, "layout", 0) else (x[0], x[1])
    return seq * batch * (math.prod(w) + math.prod(r))


def _einsum(node: NodeProto, s: Sequence[Shape | None]) -> int | None:
    """One multiply per combination of every index of the equation, for each operand after the first."""
    equation = next((a.s.decode("utf-8", "replace") for a in node.attribute if a.name == "equation"), "")
    terms = equation.replace(" ", "").split("->")[0].split(",")
    inputs = list(s[:-1])
    if len(terms) != len(inputs) or len(inputs) < 2 or any(x is None for x in inputs):
        return None if len(inputs) >= 2 else 0
    sizes: dict[str, int] = {}
    ellipsis = 1
    for term, shape in zip(terms, inputs, strict=True):
        assert shape is not None
        letters = term.replace("...", "")
        extra = len(shape) - len(letters)
        if extra < 0 or (extra and "..." not in term):
            return None
        before = term.index("...") if "..." in term else len(letters)
        ellipsis = max(ellipsis, math.prod(shape[before:before + extra]))
        for letter, size in zip(letters, shape[:before] + shape[before + extra:], strict=True):
            sizes[letter] = max(sizes.get(letter, 1), size)
    return (len(inputs) - 1) * math.prod(sizes.values()) * ellipsis


def _fused_matmul(node: NodeProto, s: Sequence[Shape | None]) -> int | None:
    a, y = s[0], s[-1]
    if a is None or y is None or len(a) < 2:
        return None
    return math.prod(y) * (a[-2] if _attr_int(node, "transA", 0) else a[-1])


def _matmul_nbits(node: NodeProto, s: Sequence[Shape | None]) -> int | None:
    a = s[0]
    n = _attr_int(node, "N", 0)
    return None if a is None or not a or n <= 0 else math.prod(a) * n


def _packed_attention(node: NodeProto, s: Sequence[Shape | None]) -> int | None:
    """com.microsoft Attention and QAttention: the Q, K, V projection of input ``[batch, sequence, in]``
    by weight ``[in, 3 x hidden]``, then Q.K^T and the weighted sum of V over the sequence."""
    x, w = s[0], s[1]
    if x is None or w is None or len(x) != 3 or len(w) != 2:
        return None
    batch, seq, _ = x
    hidden = w[1] // 3
    return math.prod(x) * w[1] + 2 * batch * seq * seq * hidden


def _multi_head_attention(node: NodeProto, s: Sequence[Shape | None]) -> int | None:
    """com.microsoft MultiHeadAttention / GroupQueryAttention with 3-D query ``[batch, sequence, hidden]``;
    keys as long as the query's sequence when their shape is not known."""
    q, k = s[0], s[1] if len(s) > 2 else None
    if q is None or len(q) != 3:
        return None
    heads = _attr_int(node, "num_heads", 1)
    kv_heads = _attr_int(node, "kv_num_heads", 0)
    head_size = q[2] // (heads + 2 * kv_heads) if k is None and kv_heads else q[2] // max(heads, 1)
    keys = k[1] if k is not None and len(k) == 3 else q[1]
    return 2 * q[0] * q[1] * keys * heads * head_size


def _picked(rule: MacRule, picks: tuple[int, ...]) -> MacRule:
    """``rule`` applied to the inputs at ``picks`` (quantized ops put scales between the operands)."""
    def picked(node: NodeProto, s: Sequence[Shape | None]) -> int | None:
        inputs = s[:-1]
        return rule(node, [inputs[k] if k < len(inputs) else None for k in picks] + [s[-1]])
    return picked


MAC_RULES: dict[str, MacRule] = {
    "Conv": _conv, "ConvInteger": _conv, "QLinearConv": _picked(_conv, (0, 3)), "ConvTranspose": _conv_transpose,
    "MatMul": _matmul, "MatMulInteger": _matmul, "QLinearMatMul": _picked(_matmul, (0, 3)), "Gemm": _gemm,
    "Attention": _attention, "LSTM": _recurrent, "GRU": _recurrent, "RNN": _recurrent, "Einsum": _einsum,
}
CONTRIB_MAC_RULES: dict[str, MacRule] = {  # com.microsoft
    "Attention": _packed_attention, "QAttention": _packed_attention,
    "MultiHeadAttention": _multi_head_attention, "GroupQueryAttention": _multi_head_attention,
    "MatMulNBits": _matmul_nbits, "FusedMatMul": _fused_matmul, "FusedGemm": _gemm,
    "QGemm": _picked(_gemm, (0, 3)), "GemmFastGelu": _matmul, "MatMulIntegerToFloat": _matmul,
    "DynamicQuantizeMatMul": _matmul, "QLinearMatMul": _picked(_matmul, (0, 3)),
    "FusedConv": _conv, "NhwcConv": _conv, "QLinearConv": _picked(_conv, (0, 3)),
    "DynamicQuantizeLSTM": _recurrent,
}
CONTRIB_DOMAIN = "com.microsoft"


def _mac_rule(node: NodeProto) -> MacRule | None:
    if node.domain in ("", "ai.onnx"):
        return MAC_RULES.get(node.op_type)
    return CONTRIB_MAC_RULES.get(node.op_type) if node.domain == CONTRIB_DOMAIN else None


_FREE, _RULE, _ELEMENTWISE, _GLOBAL_POOL = range(4)  # how a node's cost is found, by its operator


def _kind(op: str, rule: MacRule | None) -> int:
    if rule is not None:
        return _RULE
    if op in ELEMENTWISE or op in POOLING:
        return _ELEMENTWISE
    return _GLOBAL_POOL if op.startswith("Global") and op.endswith("Pool") else _FREE


class _Costing:
    """Finds the costs of one scope's nodes; what an operator needs is looked up once per (op_type, domain)."""

    def __init__(self, index: ModelIndex, scope: str, shapes: _Shapes | None = None) -> None:
        self.scope = scope
        self.g = index.graphs[scope]
        self.shapes = shapes or _Shapes(index, self.g)
        self._ops: dict[tuple[str, str], tuple[str, MacRule | None, int]] = {}

    def _op(self, node: NodeProto) -> tuple[str, MacRule | None, int]:
        key = (node.op_type, node.domain)
        found = self._ops.get(key)
        if found is None:
            op = node.op_type if node.domain in ("", "ai.onnx", CONTRIB_DOMAIN) else ""
            rule = _mac_rule(node)
            found = self._ops[key] = (op, rule, _kind(op, rule))
        return found

    def cost(self, i: int, node: NodeProto) -> NodeCost:
        shapes = self.shapes
        outputs = node.output
        first = outputs[0] if outputs else ""
        read = shapes.reading(first)
        out_text = read[1]
        op, rule, kind = self._op(node)
        if kind == _FREE:  # data movement (Reshape, Transpose...): no shape read, no symbolic dimension counted
            return NodeCost(self.scope, i, node.name, node.op_type, 0, 0, out_text, False)
        if kind == _ELEMENTWISE and op not in POOLING and read[2] is not None and shapes.plain(first):
            # most nodes: the output's one reading gives its text and its shape
            return NodeCost(self.scope, i, node.name, node.op_type, 0, math.prod(read[2]), out_text, read[3])
        shapes.symbolic_used = False
        macs: int | None = 0
        flops: int | None = 0
        if kind == _RULE:
            assert rule is not None
            out = shapes.of(first)
            macs = rule(node, [shapes.of(n) for n in node.input] + [out])
            has_bias = op in BIAS_OPS and len(node.input) > 2 and bool(node.input[2])
            extra = math.prod(out) if out is not None and has_bias else 0
            flops = None if macs is None else 2 * macs + extra
        elif kind == _ELEMENTWISE:
            out = shapes.of(first)
            kernel = _attr_ints(node, "kernel_shape") if op in POOLING else []
            flops = None if out is None or kernel is None else math.prod(out) * math.prod(kernel)
            macs = None if flops is None else 0
        elif kind == _GLOBAL_POOL:
            x = shapes.of(node.input[0]) if node.input else None
            flops = math.prod(x) if x is not None else None
            macs = None if flops is None else 0
        return NodeCost(self.scope, i, node.name, node.op_type, macs, flops, out_text, shapes.symbolic_used)


def node_cost(index: ModelIndex, scope: str, i: int, shapes: _Shapes | None = None) -> NodeCost:
    costing = _Costing(index, scope, shapes)
    return costing.cost(i, costing.g.nodes[i])


def graph_costs(index: ModelIndex, scope: str = "") -> list[NodeCost]:
    """One :class:`NodeCost` per node of ``scope``, in file order."""
    cost = _Costing(index, scope).cost
    return [cost(i, node) for i, node in enumerate(index.graphs[scope].nodes)]


def summarize(costs: Sequence[NodeCost]) -> CostSummary:
    known = [c for c in costs if c.flops is not None]
    return CostSummary(sum(c.macs or 0 for c in known), sum(c.flops or 0 for c in known),
                       len(known), len(costs) - len(known), any(c.symbolic for c in known))


def human_count(n: float | None) -> str:
    """``1.2 G``-style text for large counts; '?' for unknown."""
    if n is None:
        return "?"
    for unit, size in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(n) >= size:
            return f"{n / size:.2f} {unit}"
    return f"{int(n)}"


def body_costs(index: ModelIndex) -> list[tuple[str, CostSummary]]:
    """The summed cost of each subgraph and function body that has some (one run of it: a Loop body runs a
    data-dependent number of times, an If runs one of its branches)."""
    found = ((scope, summarize(graph_costs(index, scope))) for scope in index.graphs if scope)
    return [(scope, total) for scope, total in found if total.macs or total.flops]


def model_costs(model: onnx.ModelProto, index: ModelIndex | None = None) -> list[NodeCost]:
    """Costs of the main graph's nodes (subgraph bodies run a data-dependent number of times)."""
    return graph_costs(index or ModelIndex(model), "")
