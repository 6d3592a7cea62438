"""Estimated multiply-accumulates (MACs) and floating-point operations per node.

Estimates use declared or inferred shapes (and initializer dims); symbolic
dimensions (batch, sequence) count as 1, and an expression of them (``2*sequence``,
``floor(height/2 - 1/2) + 1``) as its value with each at 1. A node whose shapes are unknown gets
``None``: the total then counts only the
nodes that could be estimated and says how many could not. Conventions: one
MAC is two FLOPs; elementwise, normalisation and activation ops cost one FLOP
per output element; pooling costs one per window element; data movement is free.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, repeat
from operator import attrgetter, itemgetter
from typing import NamedTuple, overload

import numpy as np
import onnx
from onnx import NodeProto, TensorProto, TypeProto

from onnxviz.model.graph.index import GraphIndex, ModelIndex
from onnxviz.model.graph.symbolic_shapes import dim_size
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


def initializer_positions(g: GraphIndex) -> dict[str, int]:
    """Name -> position of the scope's initializer of that name (the last, when several have it)."""
    return dict(zip(g.initializer_names, range(len(g.initializer_names)), strict=True))


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
        self._initializers: dict[str, int] | None = None  # name -> position of its initializer, when first asked
        self._numbers: dict[int, int] = {id(_NOTHING): 0}  # id of a reading -> its number (see :meth:`numbers`)
        self.readings: list[_Read] = [_NOTHING]  # the readings numbered so far, by number
        # a graph with no enclosing one: a value's type is the declared one, else the inferred one (ModelIndex.type_of)
        self._top = (g.declared, index.inferred.get(g.scope, {})) if g.parent is None else None
        self._packed: tuple[Mapping[str, int], list[_Read]] | None = None  # name -> distinct type; their readings
        if self._top is not None and isinstance(self._top[1], PackedTypes):
            at, distinct = self._top[1].grouped()
            self._packed = (at, [self._read(t) for t in distinct])

    def _initializer(self, name: str) -> TensorProto | None:
        if self._initializers is None:
            self._initializers = initializer_positions(self.g)
        k = self._initializers.get(name)
        return None if k is None else self.g.graph.initializer[k]  # type: ignore[union-attr]

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
            sizes = None if dims is None else [d if isinstance(d, int) or d is None else dim_size(d) for d in dims]
            concrete = None if sizes is None or any(d is None or d < 0 for d in sizes) \
                else [int(d or 0) for d in sizes]
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
                if t is None and self._packed is not None:
                    at, reads = self._packed
                    k = at.get(name)
                    found = _NOTHING if k is None else reads[k]
                else:
                    found = self._read(t if t is not None else inferred.get(name))
            else:
                found = self._read(self.index.type_of(self.g.scope, name)[0])
            self._named[name] = found
        return found

    def _effective(self, name: str, read: _Read) -> _Read:
        """What :meth:`of` reads of the value ``name`` (no initializer) whose type's reading is ``read``."""
        if read[0] is None and read is not _NOTHING:  # a declared type without shape: inference may know more
            return self._read(self.index.inferred.get(self.g.scope, {}).get(name))
        return read

    def _number(self, read: _Read) -> int:
        found = self._numbers.get(id(read))
        if found is None:
            found = self._numbers[id(read)] = len(self.readings)
            self.readings.append(read)
        return found

    def numbers(self, names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(the number of the reading of each name's type, as :meth:`reading`; that of what :meth:`of` reads of
        it, were it no initializer), numbering :attr:`readings`: one step in C per name when the types are packed."""
        named = self._packed_numbers(names) if self._packed is not None else \
            np.fromiter((self._number(self.reading(n)) for n in names), np.int64, len(names))
        effective = named.copy()
        unshaped = [k for k, read in enumerate(self.readings) if read[0] is None and read is not _NOTHING]
        for k in np.flatnonzero(np.isin(named, unshaped)).tolist() if unshaped else []:
            effective[k] = self._number(self._effective(names[k], self.readings[named[k]]))
        return named, effective

    def _packed_numbers(self, names: Sequence[str]) -> np.ndarray:
        """The number of the reading of each name's type (see :meth:`numbers`) from packed types."""
        assert self._packed is not None and self._top is not None
        at, reads = self._packed
        per_type = np.array([self._number(r) for r in reads] + [0], dtype=np.int64)  # -1: no type
        named = per_type[np.fromiter(map(at.get, names, repeat(-1)), np.int64, len(names))]
        declared = self._top[0]
        if declared:  # a declared type comes first
            for k in np.flatnonzero(np.fromiter(map(declared.__contains__, names), bool, len(names))).tolist():
                named[k] = self._number(self.reading(names[k]))
        if "" in at:  # no value is read for the name ""
            named[[k for k, name in enumerate(names) if not name]] = 0
        return named

    def text(self, name: str) -> str:
        """The shape text of ``name``'s type as the index says (declared, else inferred)."""
        return self._of_name(name)[1]

    def reading(self, name: str) -> _Read:
        """What is read of ``name``'s type as the index says (declared, else inferred); nothing for ""."""
        return self._of_name(name) if name else _NOTHING

    def plain(self, name: str) -> bool:
        """No initializer has the name ``name``: :meth:`of` gives its :meth:`reading`'s shape, when it has one."""
        return name not in self.init_dims and self._initializer(name) is None

    def of(self, name: str) -> Shape | None:
        """The shape with symbolic dims as 1 (shared between values: not to be changed), or None."""
        if not name:
            return None
        dims = self.init_dims.get(name)
        if dims is not None:
            return dims
        tensor = self._initializer(name)
        if tensor is not None:
            dims = self.init_dims[name] = [int(d) for d in tensor.dims]
            return dims
        read = self._effective(name, self._of_name(name))
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


def _mac_rule(op_type: str, domain: str) -> MacRule | None:
    if domain in ("", "ai.onnx"):
        return MAC_RULES.get(op_type)
    return CONTRIB_MAC_RULES.get(op_type) if domain == CONTRIB_DOMAIN else None


_FREE, _RULE, _ELEMENTWISE, _GLOBAL_POOL = range(4)  # how a node's cost is found, by its operator


def _kind(op: str, rule: MacRule | None) -> int:
    if rule is not None:
        return _RULE
    if op in ELEMENTWISE or op in POOLING:
        return _ELEMENTWISE
    return _GLOBAL_POOL if op.startswith("Global") and op.endswith("Pool") else _FREE


def _operator(op_type: str, domain: str) -> tuple[str, MacRule | None, int]:
    """(the op_type when the domain is a known one, else ""; its MAC rule; its kind)."""
    op = op_type if domain in ("", "ai.onnx", CONTRIB_DOMAIN) else ""
    rule = _mac_rule(op_type, domain)
    return op, rule, _kind(op, rule)


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
            found = self._ops[key] = _operator(*key)
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


_FREE_NODE, _PLAIN_NODE, _OTHER_NODE = range(3)  # how a node's cost is found from the types (see CostPlan)
MAX_SLOTS = 16  # inputs of a node in its CostPlan row; a node with more is costed alone
_ABSENT, _EMPTY = -1, -2  # tokens of a CostPlan's slots: no such input, the name ""; -3 - k: the k-th initializer dims


def _route(op_type: str, domain: str) -> int:
    """A node free whatever its types, elementwise (a FLOP per element of its output), or costed by :class:`_Costing`."""
    op, _, kind = _operator(op_type, domain)
    if kind == _FREE:
        return _FREE_NODE
    return _PLAIN_NODE if kind == _ELEMENTWISE and op not in POOLING else _OTHER_NODE


@dataclass(frozen=True)
class CostPlan:
    """What the costs of one scope's nodes need besides the types, found before they are known.

    A node's cost follows from its operator, attributes and what is read of the types (or initializer dims)
    of its inputs and first output: nodes alike in all of these (most, in a model of repeated layers) cost the
    same. Free and elementwise nodes need only their first output's reading; the others get a row of
    ``slots``: operator, attributes, input count, a token per input, then the first output's two tokens (its
    reading's, for the shape text, and what :meth:`_Shapes.of` reads of it). A token >= 0 names a value of
    ``slot_names``; see ``_ABSENT`` and ``_EMPTY`` for the others."""

    scope: str
    names: Sequence[str]  # of the nodes
    ops: list[tuple[str, str]]  # distinct (op_type, domain)
    op_of: np.ndarray  # each node's position in ops
    first: list[str]  # each node's first output ("" for none)
    route: np.ndarray  # _FREE_NODE, _PLAIN_NODE or _OTHER_NODE, per node
    others: np.ndarray  # positions of the _OTHER_NODE nodes
    slots: np.ndarray  # a row per node of others
    slot_names: list[str]

    def counts(self) -> list[int]:
        """How many nodes have each of :attr:`ops`."""
        return np.bincount(self.op_of, minlength=len(self.ops)).tolist()  # type: ignore[no-any-return]


class _Slots:
    """Tokens of the inputs and outputs of a scope's nodes (see :class:`CostPlan`), each name's found once."""

    def __init__(self, g: GraphIndex) -> None:
        self.g = g
        self.names: dict[str, int] = {}  # value name -> its token (>= 0)
        self.inits = initializer_positions(g)
        self._tokens: dict[str, int] = {"": _EMPTY}  # name -> the token of what _Shapes.of reads of it
        self._dims: dict[tuple[int, ...], int] = {}
        self._attributes: dict[tuple[bytes, ...], int] = {(): 0}

    def tokens(self, names: list[str]) -> np.ndarray:
        """The token of what :meth:`_Shapes.of` reads of each of ``names``."""
        tokens, inits, at = self._tokens, self.inits, self.names
        new = [name for name in dict.fromkeys(names) if name not in tokens]  # a pass in C each, not a step per name
        values = [name for name in new if name not in inits]
        fresh = [name for name in values if name not in at]
        at.update(zip(fresh, range(len(at), len(at) + len(fresh)), strict=True))
        tokens.update(zip(values, map(at.__getitem__, values), strict=True))
        tokens.update(self._init_tokens([name for name in new if name in inits]))
        return np.fromiter(map(tokens.__getitem__, names), np.int64, len(names))

    def named(self, names: list[str]) -> np.ndarray:
        """The token of the reading of the type of each of ``names``."""
        at = self.names
        return np.fromiter((at.setdefault(name, len(at)) if name else _EMPTY for name in names), np.int64, len(names))

    def _init_tokens(self, names: list[str]) -> Iterator[tuple[str, int]]:
        """(name, token) of each of ``names``, initializers: a token per distinct dims."""
        if not names:
            return iter(())
        assert self.g.graph is not None  # a function has no initializers
        tensors = map(self.g.graph.initializer.__getitem__, map(self.inits.__getitem__, names))
        dims = list(map(tuple, map(attrgetter("dims"), tensors)))
        for found in dict.fromkeys(dims):
            self._dims.setdefault(found, len(self._dims))
        return zip(names, [-3 - k for k in map(self._dims.__getitem__, dims)], strict=True)

    def attributes(self, attributes: Sequence[onnx.AttributeProto]) -> int:
        key = tuple(a.SerializeToString() for a in attributes)
        return self._attributes.setdefault(key, len(self._attributes))

    def rows(self, nodes: list[NodeProto], ops: np.ndarray, outputs: list[str]) -> np.ndarray:
        """The row of each of ``nodes`` (of the operators ``ops``, with first outputs ``outputs``). A node with
        more than ``MAX_SLOTS`` inputs gets no tokens, but a row of its own (a negative attributes number)."""
        inputs = list(map(attrgetter("input"), nodes))
        counts = np.fromiter(map(len, inputs), np.int64, len(nodes))
        wide = np.flatnonzero(counts > MAX_SLOTS)
        for k in wide.tolist():
            inputs[k] = []
        slots = np.minimum(counts, MAX_SLOTS)
        table = np.full((len(nodes), int(slots.max(initial=0)) + 5), _ABSENT, np.int64)
        table[:, 0] = ops
        table[:, 1] = [self.attributes(a) if a else 0 for a in map(attrgetter("attribute"), nodes)]
        table[wide, 1] = -1 - np.arange(len(wide))
        table[:, 2] = counts
        slots[wide] = 0
        row = np.repeat(np.arange(len(nodes)), slots)
        table[row, 3 + np.arange(len(row)) - np.repeat(np.cumsum(slots) - slots, slots)] = \
            self.tokens(list(chain.from_iterable(inputs)))
        table[:, -2] = self.named(outputs)
        table[:, -1] = self.tokens(outputs)
        return table


def cost_plan(index: ModelIndex, scope: str = "") -> CostPlan:
    """The :class:`CostPlan` of the nodes of ``scope``: a few steps per node, none needing the types."""
    g = index.graphs[scope]
    fields = list(map(attrgetter("name", "op_type", "domain", "output"), g.nodes))  # one visit of each node
    n = len(fields)
    names = list(map(itemgetter(0), fields))
    keys = list(map(itemgetter(1, 2), fields))
    first = [next(iter(outputs), "") for outputs in map(itemgetter(3), fields)]
    ops = list(dict.fromkeys(keys))
    op_at = {key: k for k, key in enumerate(ops)}
    op_of = np.fromiter(map(op_at.__getitem__, keys), np.int32, n)
    route = np.array([_route(*key) for key in ops], np.int8)[op_of] if n else np.zeros(0, np.int8)
    slots = _Slots(g)
    if slots.inits:  # an elementwise node whose output is named like an initializer: costed alone
        shadow = np.fromiter(map(slots.inits.__contains__, first), bool, n)
        route[(route == _PLAIN_NODE) & shadow] = _OTHER_NODE
    others = np.flatnonzero(route == _OTHER_NODE)
    picked = others.tolist()
    table = slots.rows([g.nodes[i] for i in picked], op_of[others], [first[i] for i in picked])
    return CostPlan(scope, names, ops, op_of, first, route, others, table, list(slots.names))


Outcome = tuple[int | None, int | None, str, bool]  # a node's MACs, FLOPs, output shape text, symbolic


@dataclass(frozen=True, eq=False)
class CostColumns(Sequence[NodeCost]):
    """The :class:`NodeCost` of each node of a scope, as columns: the distinct operators and outcomes (MACs,
    FLOPs, shape text, symbolic), and which of them each node has. A node's NodeCost is made when asked."""

    scope: str
    names: Sequence[str]
    op_types: list[str]  # of CostPlan.ops
    op_of: np.ndarray
    outcomes: list[Outcome]
    outcome_of: np.ndarray

    def __len__(self) -> int:
        return len(self.outcome_of)

    @overload
    def __getitem__(self, i: int) -> NodeCost: ...
    @overload
    def __getitem__(self, i: slice) -> list[NodeCost]: ...

    def __getitem__(self, i: int | slice) -> NodeCost | list[NodeCost]:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        i = range(len(self))[i]  # IndexError beyond the ends, like a list's
        return NodeCost(self.scope, i, self.names[i], self.op_types[self.op_of[i]], *self.outcomes[self.outcome_of[i]])

    def __iter__(self) -> Iterator[NodeCost]:
        return (self[i] for i in range(len(self)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def summary(self) -> CostSummary:
        """:func:`summarize` of these costs: a step per distinct outcome."""
        counts = np.bincount(self.outcome_of, minlength=len(self.outcomes)).tolist()
        known = [(outcome, count) for outcome, count in zip(self.outcomes, counts, strict=True)
                 if count and outcome[1] is not None]
        estimated = sum(count for _, count in known)
        return CostSummary(sum((o[0] or 0) * count for o, count in known), sum((o[1] or 0) * count for o, count in known),
                           estimated, len(self) - estimated, any(o[3] for o, _ in known))


class _Outcomes:
    """Distinct outcomes, numbered as they are first found."""

    def __init__(self) -> None:
        self.found: dict[Outcome, int] = {}

    def number(self, outcome: Outcome) -> int:
        return self.found.setdefault(outcome, len(self.found))

    def spread(self, keys: np.ndarray, outcome: Callable[[int], Outcome]) -> np.ndarray:
        """The number of ``outcome(key)`` for each of ``keys``, ``outcome`` called once per distinct key."""
        distinct, at = np.unique(keys, return_inverse=True)
        return np.array([self.number(outcome(int(key))) for key in distinct], np.int32)[at.reshape(-1)]


def plan_costs(plan: CostPlan, index: ModelIndex) -> CostColumns:
    """The costs of the nodes of ``plan``'s scope with the types ``index`` holds: each distinct case computed once,
    by :class:`_Costing` (the very code that costs one node), and given to every node alike."""
    costing = _Costing(index, plan.scope)
    shapes, outcomes = costing.shapes, _Outcomes()
    named, effective = shapes.numbers(plan.first)
    outcome_of = np.zeros(len(plan.first), np.int32)
    free = plan.route == _FREE_NODE
    if free.any():  # data movement: no shape read, no symbolic dimension counted
        outcome_of[free] = outcomes.spread(named[free], lambda k: (0, 0, shapes.readings[k][1], False))
    plain = plan.route == _PLAIN_NODE
    if plain.any():  # a FLOP per element of the output
        width = len(shapes.readings)
        outcome_of[plain] = outcomes.spread(named[plain] * width + effective[plain],
                                            lambda key: _elementwise(shapes.readings, *divmod(key, width)))
    if len(plan.others):
        rows = _signatures(plan, shapes)
        _, first, at = np.unique(rows, axis=0, return_index=True, return_inverse=True)
        nodes = costing.g.nodes
        found = [outcomes.number(_outcome(costing.cost(i, nodes[i]))) for i in plan.others[first].tolist()]
        outcome_of[plan.others] = np.array(found, np.int32)[at.reshape(-1)]
    return CostColumns(plan.scope, plan.names, [op for op, _ in plan.ops], plan.op_of, list(outcomes.found),
                       outcome_of)


def _outcome(cost: NodeCost) -> Outcome:
    return cost.macs, cost.flops, cost.output_shape, cost.symbolic


def _elementwise(readings: list[_Read], named: int, effective: int) -> Outcome:
    shape = readings[effective][2]
    flops = None if shape is None else math.prod(shape)
    return (None if flops is None else 0, flops, readings[named][1], readings[effective][3])


def _signatures(plan: CostPlan, shapes: _Shapes) -> np.ndarray:
    """The rows of ``plan.slots`` with each value's token turned into the number of its reading: what
    :meth:`_Costing.cost` reads of each node of ``plan.others``."""
    named, effective = shapes.numbers(plan.slot_names)
    rows = plan.slots.copy()
    tokens = rows[:, 3:]  # after the operator, the attributes and the input count
    tokens[:] = np.where(tokens >= 0, np.append(effective, 0)[np.maximum(tokens, 0)], tokens)
    output = plan.slots[:, -2]
    rows[:, -2] = np.where(output >= 0, np.append(named, 0)[np.maximum(output, 0)], output)
    return rows


def graph_costs(index: ModelIndex, scope: str = "") -> CostColumns:
    """The :class:`NodeCost` of each node of ``scope``, in file order."""
    return plan_costs(cost_plan(index, scope), index)


def summarize(costs: Sequence[NodeCost]) -> CostSummary:
    if isinstance(costs, CostColumns):
        return costs.summary()
    known = [c for c in costs if c.flops is not None]
    return CostSummary(sum(c.macs or 0 for c in known), sum(c.flops or 0 for c in known),
                       len(known), len(costs) - len(known), any(c.symbolic for c in known))


def human_count(n: float | None) -> str:
    """``1.2 G``-style text for large counts; '?' for unknown."""
    if n is None:
        return "?"
    if abs(n) >= 10**21:  # from dims no model holds (their product may pass a float's range): the digits
        return f"over 10^{len(str(abs(int(n)))) - 1}"
    for unit, size in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(n) >= size:
            return f"{n / size:.2f} {unit}"
    return f"{int(n)}"


def body_costs(index: ModelIndex, plans: Mapping[str, CostPlan] | None = None) -> list[tuple[str, CostSummary]]:
    """The summed cost of each subgraph and function body that has some (one run of it: a Loop body runs a
    data-dependent number of times, an If runs one of its branches); ``plans``: of the scopes, when found before."""
    found = ((scope, plan_costs(plans[scope] if plans else cost_plan(index, scope), index).summary())
             for scope in index.graphs if scope)
    return [(scope, total) for scope, total in found if total.macs or total.flops]


def model_costs(model: onnx.ModelProto, index: ModelIndex | None = None) -> CostColumns:
    """Costs of the main graph's nodes (subgraph bodies run a data-dependent number of times)."""
    return graph_costs(index or ModelIndex(model), "")
