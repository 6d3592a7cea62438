"""Align two models node to node: by structure, names settling what structure leaves open.

The matcher works graph by graph (the main graph, then the bodies of matched If/Loop/Scan nodes and
the model-local functions of the same domain and name):

1. *seeds*: graph inputs and outputs by name, then the rest in order when their types agree;
   initializers by content (dtype, shape and a hash of the bytes) when that is unique, then by name;
2. a forward sweep over B in topological order: a node matches the A node with the same
   signature (domain, op type, attributes) reading the same values (matched values by their A name,
   constants by content); ``QuantizeLinear -> DequantizeLinear`` pairs are transparent, so a QDQ
   model's nodes align with a float model's;
   among several such A nodes, the one with the same name, else the nearest in topological order;
3. looser matches: constants by kind only, chains of single-input nodes the other side lacks followed
   to what they read, then attributes ignored, among the A nodes reading the same values;
4. a backward sweep: the producers of matched values with the same op type match, and so on upwards.

Steps 2-4 repeat while they find anything; then nodes whose names agree and that read or make a matched
value match whatever their op types, and so do nodes in the same place (same matched inputs, read by
the same matched nodes). Names alone never match two nodes: exporters number their names
(``node_add_11``), so an inserted layer gives other nodes each other's names. Every step is a pass
over the nodes with dictionary look-ups, so two 123k-node models align in seconds.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass, field

import onnx
from onnx import AttributeProto, NodeProto, TensorProto

from onnxviz.model.graph.index import (
    GraphIndex,
    ModelIndex,
    function_scope,
    subgraphs_of,
    topological_order_of_inputs,
)
from onnxviz.model.io.external import is_external
from onnxviz.model.matching.formats import (
    FLOAT_TYPES,
    QUANTIZER_SUFFIXES,
    FloatOp,
    QuantizedWeight,
    Scale,
    aliases,
    float_ops,
    float_values,
    scales,
)
from onnxviz.model.process_tuning import building
from onnxviz.model.progress import CancelToken, ProgressFn, no_progress

HOW_NAME = "name"            # the nodes' names agree
HOW_STRUCTURE = "structure"  # matched by what they compute and read
QUANTIZE = frozenset({"QuantizeLinear"})
DEQUANTIZE = frozenset({"DequantizeLinear"})
MAX_ROUNDS = 4        # forward/backward rounds; each finds less than the one before
FOLLOW_DEPTH = 8      # nodes one side lacks, followed upwards through single-input chains
MAX_READERS = 256     # A nodes looked at as the partners of one B node, at most
NEAREST_SCAN = 64     # candidates looked at around the nearest position, when several share a key
COMMUTATIVE = frozenset({"Add", "Mul", "Max", "Min", "Sum", "Mean", "And", "Or", "Xor", "Equal", "BitwiseAnd",
                         "BitwiseOr", "BitwiseXor"})
LEVELS = ((True, False, False), (True, True, False), (False, False, False), (False, True, False), (False, True, True))
"""Looser keys, strictest first: (attributes compared, chains one side lacks followed, an input not matched
taken as a constant: a shape one side computes and the other has folded)."""
LAYER_OPS = frozenset({"Conv", "ConvTranspose", "MatMul", "Gemm", "LSTM", "GRU", "RNN"})
"""Ops no quantizer or optimizer removes (they become other ops, matched as themselves): never followed past
as a node one side lacks."""
CONSTANT = "c"        # a looser key's token for any constant input
UNKNOWN = "?"         # a looser key's token for an input not matched yet


@dataclass
class GraphAlignment:
    """Which node and value of graph A is which of graph B (positions in each graph's node list)."""

    scope_a: str
    scope_b: str
    index_a: GraphIndex
    index_b: GraphIndex
    nodes: dict[int, int] = field(default_factory=dict)      # A position -> B position
    nodes_b: dict[int, int] = field(default_factory=dict)    # B position -> A position
    values: dict[str, str] = field(default_factory=dict)     # A value name -> B value name
    values_b: dict[str, str] = field(default_factory=dict)   # B value name -> A value name
    how: dict[int, str] = field(default_factory=dict)        # A position -> HOW_NAME or HOW_STRUCTURE
    parent: GraphAlignment | None = None                     # the graph whose node holds this body
    sides: tuple[GraphSide, GraphSide] | None = field(default=None, repr=False)  # the matcher's facts

    def node_b(self, i: int) -> int | None:
        """The B node matched with A node ``i``, or None."""
        return self.nodes.get(i)

    def node_a(self, j: int) -> int | None:
        """The A node matched with B node ``j``, or None."""
        return self.nodes_b.get(j)

    def value_b(self, name: str) -> str | None:
        """The B value matched with A value ``name`` (looked up in enclosing graphs too), or None."""
        g: GraphAlignment | None = self
        while g is not None:
            if name in g.values:
                return g.values[name]
            g = g.parent
        return None

    def value_a(self, name: str) -> str | None:
        """The A value matched with B value ``name`` (looked up in enclosing graphs too), or None."""
        g: GraphAlignment | None = self
        while g is not None:
            if name in g.values_b:
                return g.values_b[name]
            g = g.parent
        return None

    def unmatched_a(self) -> list[int]:
        """A's nodes with no partner, in file order."""
        return [i for i in range(len(self.index_a.nodes)) if i not in self.nodes]

    def unmatched_b(self) -> list[int]:
        """B's nodes with no partner, in file order."""
        return [j for j in range(len(self.index_b.nodes)) if j not in self.nodes_b]

    def pair_nodes(self, i: int, j: int, how: str) -> None:
        self.nodes[i], self.nodes_b[j], self.how[i] = j, i, how

    def pair_values(self, a: str, b: str) -> bool:
        """Match two values unless either already has a partner; True when they were matched."""
        if not a or not b or a in self.values or b in self.values_b:
            return False
        self.values[a], self.values_b[b] = b, a
        return True


@dataclass
class Alignment:
    """Two whole models aligned: every graph pair (main graph, bodies, functions) by A's scope."""

    index_a: ModelIndex
    index_b: ModelIndex
    graphs: dict[str, GraphAlignment] = field(default_factory=dict)     # by A scope
    graphs_b: dict[str, GraphAlignment] = field(default_factory=dict)   # the same, by B scope

    @property
    def main(self) -> GraphAlignment:
        return self.graphs[""]

    def add(self, g: GraphAlignment) -> None:
        self.graphs[g.scope_a] = g
        self.graphs_b[g.scope_b] = g

    def unmatched_scopes_a(self) -> list[str]:
        """Bodies and functions of A with no counterpart in B."""
        return [s for s in self.index_a.graphs if s not in self.graphs]

    def counts(self) -> tuple[int, int, int]:
        """(matched node pairs, nodes of A, nodes of B) over every graph."""
        pairs = sum(len(g.nodes) for g in self.graphs.values())
        return pairs, self.index_a.node_count(), self.index_b.node_count()

    def fraction(self) -> float:
        """Matched pairs over the larger model's node count (1.0 for two empty models)."""
        pairs, na, nb = self.counts()
        return pairs / max(na, nb) if max(na, nb) else 1.0


# -- facts about one side ---------------------------------------------------------------------
def tensor_key(t: TensorProto) -> Hashable | None:
    """A hashable key of a tensor's type, shape and bytes; None for external data (not read here)."""
    if is_external(t):
        return None
    if t.HasField("raw_data"):
        data = t.raw_data
    else:
        copy = TensorProto()
        copy.CopyFrom(t)
        copy.ClearField("name")
        copy.ClearField("doc_string")
        data = copy.SerializeToString()
    return ("tensor", t.data_type, tuple(t.dims), hashlib.blake2b(data, digest_size=16).digest())


def _constant_key(node: NodeProto) -> Hashable | None:
    for attr in node.attribute:
        if attr.name == "value" and attr.type == AttributeProto.TENSOR:
            return tensor_key(attr.t)
        copy = AttributeProto()
        copy.CopyFrom(attr)
        return ("attr", hashlib.blake2b(copy.SerializeToString(), digest_size=16).digest())
    return None


Signature = tuple[str, str, tuple[tuple[str, bytes], ...]]
"""(domain, op type, (attribute name, serialized attribute) ...)."""


def node_signature(node: NodeProto) -> Signature:
    """(domain, op type, attributes): bodies count by their attribute name only (they align on their own)."""
    return signature(node.domain, node.op_type, node.attribute)


def signature(domain: str, op_type: str, attributes: Sequence[AttributeProto]) -> Signature:
    """:func:`node_signature` of an op with these attributes (a quantized op as the float op it computes)."""
    if not attributes:
        return domain or "ai.onnx", op_type, ()
    attrs: list[tuple[str, bytes]] = []
    defaults = _defaults(domain, op_type)
    for attr in sorted(attributes, key=lambda a: a.name):
        if attr.type in (AttributeProto.GRAPH, AttributeProto.GRAPHS):
            attrs.append((attr.name, b""))
            continue
        data = attr.SerializeToString()
        if defaults.get(attr.name) != data:  # an attribute written out with its default value counts as absent
            attrs.append((attr.name, data))
    return domain or "ai.onnx", op_type, tuple(attrs)


@functools.lru_cache(maxsize=1024)
def _defaults(domain: str, op_type: str) -> dict[str, bytes]:
    """The serialized default of each attribute of an op's newest schema that has one."""
    try:
        schema = onnx.defs.get_schema(op_type, domain)
    except onnx.defs.SchemaError:
        return {}
    out = {}
    for name, attr in schema.attributes.items():
        default = attr.default_value
        if default.type:
            copy = AttributeProto()
            copy.CopyFrom(default)
            copy.name = name
            out[name] = copy.SerializeToString()
    return out


class GraphSide:
    """What the matcher needs of one graph: order, signatures, constants and QDQ aliases; a quantized op
    (:mod:`.formats`) stands as the float op it computes: its signature, its inputs in the float op's order
    and the value holding its float result, the other nodes of its pattern (``absorbed``) left out."""

    def __init__(self, g: GraphIndex) -> None:
        self.g = g
        self.nodes = g.nodes
        self.inputs = [tuple(n.input) for n in self.nodes]    # protobuf fields are slow to read again and again
        self.outputs = [tuple(n.output) for n in self.nodes]
        self.ops = [n.op_type for n in self.nodes]
        self.names = [n.name for n in self.nodes]
        order, cyclic = topological_order_of_inputs(self.inputs, g.producer)
        self.order = order + cyclic
        self.rank = [0] * len(self.nodes)
        for r, i in enumerate(self.order):
            self.rank[i] = r
        self.sig = [node_signature(n) for n in self.nodes]
        self.unique_names = _unique_names(self.names)
        self.graph_outputs = frozenset(g.output_names)
        self.content: dict[str, Hashable | None] = {}   # constant value -> content key (None: unknown)
        self.constant: set[str] = set()                  # initializers, Constant outputs and what only they feed
        self.alias: dict[str, str] = {}                  # DequantizeLinear(QuantizeLinear(x)) output -> x
        self.initializers: dict[str, TensorProto] = {}
        self.float_ops: dict[int, FloatOp] = {}          # quantized ops by head node
        self.absorbed: set[int] = set()                  # the other nodes of their patterns
        self.made_by: dict[str, int] = {}                # a float op's result -> its head
        self._constants()
        self.alias_maker: dict[int, str] = {}            # a node whose output re-encodes its input -> that output
        self.users: dict[str, list[int]] = {}            # readers of each value, as the float ops read it
        self._float_ops()

    def _float_ops(self) -> None:
        g = self.g
        self.float_ops = float_ops(self.nodes, self.ops, g.producer, g.consumers, self.initializers, self.constant)
        for i, fo in self.float_ops.items():
            self.absorbed.update(fo.members)
            self.inputs[i], self.outputs[i], self.ops[i] = fo.inputs, fo.outputs, fo.op_type
            self.sig[i] = signature("", fo.op_type, fo.attributes)
            for out in fo.outputs:
                if out:
                    self.made_by[out] = i
        known = float_values(self.nodes, self.ops, self.inputs, self.outputs, self.order, g.declared,
                             self.initializers)
        for made, source in aliases(self.nodes, self.ops, self.inputs, self.outputs, g.consumers, known,
                                    self.float_ops).items():
            if made not in self.constant:
                self.alias.setdefault(made, source)
                self.alias_maker[self.producer(made)] = made
        for i, inputs in enumerate(self.inputs):
            if i not in self.absorbed:
                for x in inputs:
                    if x:
                        self.users.setdefault(x, []).append(i)

    def integer_constant(self, name: str) -> bool:
        """An initializer or Constant output of an integer type (an axis, a shape, indices)."""
        t = self.initializers.get(name)
        if t is None:
            p = self.g.producer.get(name, -4)
            node = self.nodes[p] if p >= 0 else None
            if node is None or node.op_type != "Constant":
                return False
            t = next((a.t for a in node.attribute if a.name == "value" and a.type == AttributeProto.TENSOR), None)
        return t is not None and t.data_type not in FLOAT_TYPES and t.data_type != TensorProto.STRING

    @functools.cached_property
    def copies(self) -> dict[str, list[str]]:
        """The values that stand for each value (its quantized or re-typed copies: :attr:`alias` reversed)."""
        out: dict[str, list[str]] = {}
        for made in self.alias:
            out.setdefault(self.canonical(made), []).append(made)
        return out

    @functools.cached_property
    def scales(self) -> dict[str, Scale]:
        """How each integer value of the graph reads as floats (:func:`.formats.scales`)."""
        return scales(self.nodes, self.order)

    @functools.cached_property
    def quantized_weights(self) -> dict[str, QuantizedWeight]:
        """The integer weights quantized ops read, with how each reads as floats."""
        return {w.name: w for fo in self.float_ops.values() for w in fo.weights}

    @functools.cached_property
    def weight_shapes(self) -> dict[str, tuple[int, ...]]:
        """The float shape of each weight a quantized op reads as integers (packed 4-bit blocks unpacked)."""
        return {w.name: w.shape for fo in self.float_ops.values() for w in fo.weights if w.shape is not None}

    def weight_shape(self, name: str) -> tuple[int, ...] | None:
        """The float shape of weight ``name`` (a constant of a float type, or a quantized weight) when the file
        says it: an initializer's (a quantized one's as its op reads it), a Constant node's, through a
        DequantizeLinear, Cast or Identity; None for other constants (axes, shapes) and unknown shapes."""
        for _ in range(8):
            if name in self.weight_shapes:
                return self.weight_shapes[name]
            if name in self.initializers:
                t = self.initializers[name]
                return tuple(t.dims) if t.data_type in FLOAT_TYPES else None
            p = self.g.producer.get(name, -4)
            if p < 0 or name not in self.constant:
                return None
            node = self.nodes[p]
            if node.op_type == "Constant":
                value = next((a.t for a in node.attribute if a.name == "value" and a.type == AttributeProto.TENSOR),
                             None)
                return tuple(value.dims) if value is not None and value.data_type in FLOAT_TYPES else None
            if node.op_type == "DequantizeLinear" and node.input and node.input[0] in self.initializers:
                return tuple(self.initializers[node.input[0]].dims)
            if node.op_type not in ("DequantizeLinear", "Cast", "Identity") or not node.input:
                return None
            name = node.input[0]
        return None

    def _constants(self) -> None:
        graph = self.g.graph
        if graph is not None:
            for t in graph.initializer:
                self.initializers[t.name] = t
                self.content[t.name] = tensor_key(t)
                self.constant.add(t.name)
            for sparse in graph.sparse_initializer:
                self.constant.add(sparse.values.name)
                self.content[sparse.values.name] = None
        constant = self.constant
        for i in self.order:
            op, inputs, outputs = self.ops[i], self.inputs[i], self.outputs[i]
            if op == "Constant" and not inputs:
                key = _constant_key(self.nodes[i])
                for out in outputs:
                    constant.add(out)
                    self.content[out] = key
            elif inputs and all((not x) or x in constant for x in inputs) and not _holds_body(self.nodes[i]):
                constant.update(o for o in outputs if o)
            if op in DEQUANTIZE and inputs and outputs:
                source = self.producer(inputs[0])
                if source >= 0 and self.ops[source] in QUANTIZE and self.inputs[source]:
                    self.alias[outputs[0]] = self.canonical(self.inputs[source][0])

    def producer(self, name: str) -> int:
        """The node computing ``name``: a quantized op's head for its float result."""
        if self.made_by:
            made = self.made_by.get(name)
            if made is not None:
                return made
        return self.g.producer.get(name, -4)

    def canonical(self, name: str) -> str:
        """The value ``name`` stands for: a Q->DQ pair's output is its Q's input, a quantized or re-typed
        copy (:func:`.formats.aliases`) the value it copies."""
        for _ in range(8):
            if name not in self.alias:
                break
            name = self.alias[name]
        return name

    def readers(self, name: str) -> list[int]:
        """The nodes reading ``name`` as their float ops read it, past the nodes that only re-encode it
        (a dynamic quantization, a QOperator QuantizeLinear, a float16 Cast)."""
        out: list[int] = []
        work = [name]
        for _ in range(8):
            if not work:
                break
            nxt = []
            for v in work:
                for c in self.users.get(v, ()):
                    if c in self.alias_maker:
                        nxt.append(self.alias_maker[c])
                    else:
                        out.append(c)
            work = nxt
        return out

    def data_inputs(self, i: int) -> list[str]:
        """The inputs of node ``i`` that are not constants (canonical names)."""
        return [self.canonical(x) for x in self.inputs[i] if x and x not in self.constant]


def _holds_body(node: NodeProto) -> bool:
    return any(True for _ in subgraphs_of(node))


_Bucket = tuple[list[int], list[int]]  # A nodes in topological order, and their ranks in it


class _Keys:
    """How a node of either side is keyed for the sweeps, from the values matched so far: the strict key (its
    signature and its inputs' contents or A's partners) and the looser ones (inputs followed up past nodes one
    side lacks, attributes left out, unmatched inputs blurred)."""

    def __init__(self, ga: GraphAlignment, a: GraphSide, b: GraphSide) -> None:
        self.ga, self.a, self.b = ga, a, b

    def strict_token_a(self, x: str) -> Hashable | None:
        if not x:
            return ""
        if x in self.a.content and self.a.content[x] is not None:
            return self.a.content[x]
        return ("v", self.a.canonical(x))

    def strict_token_b(self, y: str) -> Hashable | None:
        if not y:
            return ""
        if y in self.b.content and self.b.content[y] is not None:
            return self.b.content[y]
        x = self.partner_of(self.b, y, False)
        return None if x is None else ("v", x)

    def partner_of(self, side: GraphSide, x: str, is_a: bool) -> str | None:
        """The A value (as A's keys name it: canonical) standing for value ``x`` of ``side`` when ``x``, or
        what it stands for, is matched; None otherwise."""
        look = self.ga.value_b if is_a else self.ga.value_a
        other = look(x)
        if other is None and (x in side.alias or x in side.copies):  # what it stands for, or a copy of that
            stands = side.canonical(x)
            for v in (stands, *side.copies.get(stands, ())):
                other = look(v)
                if other is not None:
                    x = v
                    break
        if other is None:
            return None
        return self.a.canonical(x if is_a else other)

    def strict_keys_a(self) -> dict[Hashable, _Bucket]:
        keys: dict[Hashable, list[int]] = {}
        for i in self.a.order:
            if i in self.a.absorbed:
                continue
            tokens = _ordered(self.a.sig[i], tuple(self.strict_token_a(x) for x in self.a.inputs[i]))
            keys.setdefault((self.a.sig[i], tokens), []).append(i)
        rank = self.a.rank
        return {k: (v, [rank[i] for i in v]) for k, v in keys.items()}

    def loose_token(self, side: GraphSide, x: str, is_a: bool, follow: bool) -> Hashable:
        if not x:
            return ""
        if x in side.constant:
            return CONSTANT
        for _ in range(FOLLOW_DEPTH if follow else 1):
            matched = self.partner_of(side, x, is_a)
            if matched is not None:
                return ("v", matched)
            x = side.canonical(x)
            p = side.producer(x)
            if p < 0 or (p in (self.ga.nodes if is_a else self.ga.nodes_b)):
                return UNKNOWN
            data = side.data_inputs(p)
            if len(data) != 1 or side.ops[p] in LAYER_OPS:
                return UNKNOWN
            x = data[0]
        return UNKNOWN

    def loose_key(self, side: GraphSide, i: int, is_a: bool, with_attrs: bool, follow: bool,
                   blur: bool = False) -> Hashable | None:
        tokens = tuple(self.loose_token(side, x, is_a, follow) for x in side.inputs[i])
        if blur:
            tokens = tuple(CONSTANT if t == UNKNOWN else t for t in tokens)
        elif UNKNOWN in tokens:
            return None  # an input not matched yet says nothing: two such nodes are not alike for it
        tokens = _ordered(side.sig[i], tokens)
        if not any(isinstance(t, tuple) for t in tokens):
            return None  # nothing anchors it: left to the backward sweep
        sig = side.sig[i] if with_attrs else side.sig[i][:2]
        return sig, tokens


# -- matching one graph pair --------------------------------------------------------------------
class _Matcher:
    def __init__(self, ga: GraphAlignment, token: CancelToken | None) -> None:
        self.ga = ga
        self.a = GraphSide(ga.index_a)
        self.b = GraphSide(ga.index_b)
        ga.sides = (self.a, self.b)
        self.keys = _Keys(ga, self.a, self.b)
        self.token = token
        self.recent: list[tuple[int, int]] = []  # node pairs made since the last backward sweep

    def run(self) -> None:
        self._seed_terminals()
        strict = self.keys.strict_keys_a()
        self._forward(strict)
        self._backward(list(self.ga.nodes.items()), outputs=True)
        for _ in range(MAX_ROUNDS):
            before = len(self.ga.nodes)
            self._forward(strict)
            self._check()
            self._backward(self.recent)
            if len(self.ga.nodes) == before:
                break
        self._match_leftover_names()
        self._match_in_place()
        if self._match_by_value_names():
            self._forward(strict)
            self._backward(self.recent)
        self._pair_constants()

    def _match_by_value_names(self) -> bool:
        """Unmatched nodes making a value of the same name, at the same output position, from values whose
        nearest matched ancestors are partners, whatever their op types (an optimizer's fused node keeps
        the name of the value it ends with: SkipLayerNormalization, a LayerNormalization's output). True
        when any paired."""
        self.recent = []
        for j in self.b.order:
            if j in self.ga.nodes_b or j in self.b.absorbed:
                continue
            for k, y in enumerate(self.b.outputs[j]):
                i = self.a.producer(y) if y else -1
                if i < 0 or i in self.ga.nodes or i in self.a.absorbed or k >= len(self.a.outputs[i]) \
                        or self.a.outputs[i][k] != y:
                    continue
                anchors = self._anchors(self.a, i, True)
                if anchors and anchors == self._anchors(self.b, j, False):
                    self._pair(self._same_op_above(i, j), j, HOW_NAME)
                    break
        return bool(self.recent)

    def _same_op_above(self, i: int, j: int) -> int:
        """A node ``i`` names B node ``j``'s value; when ``j`` fuses ops (a MatMul with its bias Add), the
        unmatched A node above ``i`` (through single-input nodes) with ``j``'s op type is its partner."""
        k = i
        for _ in range(FOLLOW_DEPTH):
            if self.a.sig[k][:2] == self.b.sig[j][:2]:
                return k
            data = self.a.data_inputs(k)
            p = self.a.producer(data[0]) if len(data) == 1 else -1
            if p < 0 or p in self.ga.nodes or p in self.a.absorbed:
                break
            k = p
        return i

    def _anchors(self, side: GraphSide, i: int, is_a: bool) -> frozenset[str]:
        """The matched values nearest above node ``i`` (through unmatched nodes' data inputs), as A names them."""
        found: set[str] = set()
        work, seen = [i], {i}
        for _ in range(FOLLOW_DEPTH):
            nxt = []
            for n in work:
                for x in side.data_inputs(n):
                    partner = self.keys.partner_of(side, x, is_a)
                    if partner is not None:
                        found.add(partner)
                        continue
                    p = side.producer(x)
                    if p >= 0 and p not in seen and p not in (self.ga.nodes if is_a else self.ga.nodes_b):
                        seen.add(p)
                        nxt.append(p)
            work = nxt
        return frozenset(found)

    def _check(self) -> None:
        if self.token is not None:
            self.token.check()

    # seeds
    def _seed_terminals(self) -> None:
        a, b = self.a.g, self.b.g
        self._seed_list(a.input_names, b.input_names, by_order=True)
        self._seed_list(a.output_names, b.output_names, by_order=True)
        inputs_a, inputs_b = set(a.input_names), set(b.input_names)
        inits_a = [n for n in a.initializer_names if n not in inputs_a]
        inits_b = [n for n in b.initializer_names if n not in inputs_b]
        self._seed_by_content(inits_a, inits_b)
        self._seed_list(inits_a, inits_b, by_order=False)
        self._seed_list(_undefined(a), _undefined(b), by_order=False)

    def _seed_list(self, names_a: list[str], names_b: list[str], by_order: bool) -> None:
        in_b = set(names_b)
        for n in names_a:
            if n in in_b:
                self.ga.pair_values(n, n)
        if not by_order:
            return
        rest_a = [n for n in names_a if n not in self.ga.values]
        rest_b = [n for n in names_b if n not in self.ga.values_b]
        if len(rest_a) == len(rest_b):
            for x, y in zip(rest_a, rest_b, strict=True):
                if _type_key(self.a.g, x) == _type_key(self.b.g, y):
                    self.ga.pair_values(x, y)

    def _seed_by_content(self, names_a: list[str], names_b: list[str]) -> None:
        def unique(side: GraphSide, names: list[str], matched: dict[str, str]) -> dict[Hashable, str]:
            seen: dict[Hashable, list[str]] = {}
            for n in names:
                key = side.content.get(n)
                if n not in matched and key is not None:
                    seen.setdefault(key, []).append(n)
            return {k: v[0] for k, v in seen.items() if len(v) == 1}

        ua = unique(self.a, names_a, self.ga.values)
        ub = unique(self.b, names_b, self.ga.values_b)
        for key, n in ua.items():
            if key in ub:
                self.ga.pair_values(n, ub[key])

    def _same_name(self, j: int) -> int | None:
        """The unmatched A node with B node ``j``'s name (names unique on both sides), else the one making
        a value of the name of B node ``j``'s result (quantizers rename nodes but keep value names), or None."""
        name = self.b.names[j]
        if name and self.b.unique_names.get(name) == j:
            i = self.a.unique_names.get(name)
            if i is not None and i not in self.ga.nodes:
                return i
        for y in self.b.outputs[j]:
            for x in (y, *(y[:-len(s)] for s in QUANTIZER_SUFFIXES if y.endswith(s))):
                i = self.a.producer(x) if x else -1
                if i >= 0 and i not in self.ga.nodes and i not in self.a.absorbed:
                    return i
        return None

    def _named_among(self, j: int, hits: Sequence[int]) -> int | None:
        """The one of ``hits`` (A nodes) that :meth:`_same_name` names for B node ``j``, or that computes the
        value the named node reads through single-input nodes (a fused op takes the name of the value at
        the end of what it computes: a MatMul with its bias Add named after the Add's output)."""
        named = self._same_name(j)
        for _ in range(FOLLOW_DEPTH):
            if named is None or named in hits:
                return named
            data = self.a.data_inputs(named)
            named = self.a.producer(data[0]) if len(data) == 1 else None
            named = named if named is not None and named >= 0 else None
        return None

    def _match_leftover_names(self) -> None:
        """Nodes whose names agree but op types differ (an op type changed in place), when one of their
        inputs or outputs is matched to the other's."""
        by_name_b = self.b.unique_names
        for name, i in self.a.unique_names.items():
            j = by_name_b.get(name)
            if j is None or i in self.ga.nodes or j in self.ga.nodes_b or i in self.a.absorbed \
                    or j in self.b.absorbed or not self._same_weight_shapes(i, j):
                continue
            names_a = self.a.inputs[i] + self.a.outputs[i]
            names_b = self.b.inputs[j] + self.b.outputs[j]
            linked = any(self.ga.value_b(self.a.canonical(x)) == self.b.canonical(y)
                         for x, y in zip(names_a, names_b, strict=False) if x and y)
            if linked:
                self._pair(i, j, HOW_NAME)

    def _match_in_place(self) -> None:
        """Unmatched nodes in the same place - reading the same matched values, their outputs read by the
        same matched nodes - whatever their op types (an op type changed in place), when only one fits."""
        for j in self.b.order:
            if j in self.ga.nodes_b or j in self.b.absorbed:
                continue
            place = self._place(self.b, j, False)
            if place is None:
                continue
            hits = [i for i in self._readers_of_inputs(self.b, j, False) if self._place(self.a, i, True) == place
                    and self._same_weight_shapes(i, j)]
            if len(hits) == 1:
                self._pair(hits[0], j, HOW_STRUCTURE)

    def _place(self, side: GraphSide, i: int, is_a: bool) -> Hashable | None:
        """(inputs, the A positions of the nodes reading each output), or None when an input or a reader
        is not matched."""
        inputs = tuple(self.keys.loose_token(side, x, is_a, False) for x in side.inputs[i])
        if UNKNOWN in inputs:
            return None
        matched = self.ga.nodes if is_a else self.ga.nodes_b
        readers = []
        for out in side.outputs[i]:
            users = side.readers(out)
            if any(u not in matched for u in users):
                return None
            readers.append(tuple(sorted(users if is_a else (matched[u] for u in users))))
        return inputs, tuple(readers)

    # pairing
    def _pair(self, i: int, j: int, how: str) -> None:
        ga = self.ga
        ga.pair_nodes(i, j, HOW_NAME if self.a.names[i] and self.a.names[i] == self.b.names[j] else how)
        self.recent.append((i, j))
        for x, y in zip(self.a.outputs[i], self.b.outputs[j], strict=False):
            ga.pair_values(x, y)
        for x, y in input_pairs(self.a, i, self.b, j):
            if x in self.a.constant and y in self.b.constant and self.a.producer(x) < 0 and self.b.producer(y) < 0:
                ga.pair_values(x, y)

    def _pair_constants(self) -> None:
        """Constant nodes (no inputs) whose outputs matched, as matched nodes."""
        for x, y in list(self.ga.values.items()):
            i, j = self.a.producer(x), self.b.producer(y)
            if i >= 0 and j >= 0 and i not in self.ga.nodes and j not in self.ga.nodes_b \
                    and self.a.sig[i][:2] == self.b.sig[j][:2]:
                self.ga.pair_nodes(i, j, HOW_STRUCTURE)

    # sweeps
    def _forward(self, strict: dict[Hashable, _Bucket]) -> None:
        """B's nodes in topological order: the A node with the same strict key, else a looser match among
        the A nodes reading what this one reads."""
        for k, j in enumerate(self.b.order):
            if j in self.ga.nodes_b or j in self.b.absorbed:
                continue
            if k % 4096 == 0:
                self._check()
            tokens = tuple(self.keys.strict_token_b(y) for y in self.b.inputs[j])
            i = None
            if all(t is not None for t in tokens):
                bucket = strict.get((self.b.sig[j], _ordered(self.b.sig[j], tokens)))
                i = None if bucket is None else self._nearest(bucket, j)
                if i is not None and self._inserted_before(i, j):
                    continue  # j sits on the edge into A node i's partner: an inserted node, left unmatched
            if i is None:
                i = self._local_match(j)
                if i is not None and self._inserted_before(i, j):
                    continue
            if i is not None:
                self._pair(i, j, HOW_STRUCTURE)

    def _inserted_before(self, i: int, j: int) -> bool:
        """B node ``j`` matches A node ``i`` by what it reads, but under another name, and a B node of
        ``i``'s name and signature reads ``j``'s output (directly or past unmatched single-input nodes):
        ``j`` was inserted on the edge into ``i``'s partner (A node ``i``'s deletion is the mirror case:
        ``i`` reads into an A node with ``j``'s name). Names settle this, as they settle ties."""
        name_a, name_b = self.a.names[i], self.b.names[j]
        if not name_a or name_a == name_b:
            return False
        later = self.b.unique_names.get(name_a)
        if later is not None and later not in self.ga.nodes_b and self.b.sig[later] == self.a.sig[i] \
                and later in _readers(self.b, self.b.outputs[j][0] if self.b.outputs[j] else "", self.ga.nodes_b):
            return True
        earlier = self.a.unique_names.get(name_b)
        return earlier is not None and earlier not in self.ga.nodes and self.a.sig[earlier] == self.b.sig[j] \
            and earlier in _readers(self.a, self.a.outputs[i][0] if self.a.outputs[i] else "", self.ga.nodes)

    def _local_match(self, j: int) -> int | None:
        """Looser and looser keys (:data:`LEVELS`), compared with the unmatched A nodes that read (directly,
        or past nodes one side lacks) the partners of what B node ``j`` reads. A match is kept only when
        no other unmatched B node matches that A node at a stricter level (it would be the better partner)."""
        candidates = self._readers_of_inputs(self.b, j, False)
        if not candidates:
            return None
        target = self.b.rank[j] * len(self.a.order) / max(1, len(self.b.order))
        for level, (with_attrs, follow, blur) in enumerate(LEVELS):
            key = self.keys.loose_key(self.b, j, False, with_attrs, follow, blur)
            if key is None:
                continue
            hits = [i for i in candidates if self.keys.loose_key(self.a, i, True, with_attrs, follow, blur) == key
                    and self._same_weight_shapes(i, j)]
            if hits:
                named = self._named_among(j, hits)
                i = named if named is not None else min(hits, key=lambda i: (abs(self.a.rank[i] - target), i))
                return None if self._better_partner(i, j, level) else i
        return None

    def _better_partner(self, i: int, j: int, level: int) -> bool:
        """True when another unmatched B node matches A node ``i`` at a level stricter than ``level``."""
        if level == 0:
            return False
        others = [k for k in self._readers_of_inputs(self.a, i, True) if k != j]
        for with_attrs, follow, blur in LEVELS[:level]:
            key = self.keys.loose_key(self.a, i, True, with_attrs, follow, blur)
            if key is not None and any(self.keys.loose_key(self.b, k, False, with_attrs, follow, blur) == key
                                       for k in others):
                return True
        return False

    def _same_weight_shapes(self, i: int, j: int) -> bool:
        """No input position where both nodes read a constant of known float shape and the shapes differ
        (a structural position never outweighs different weights)."""
        for x, y in input_pairs(self.a, i, self.b, j):
            if x in self.a.constant and y in self.b.constant:
                sa, sb = self.a.weight_shape(x), self.b.weight_shape(y)
                if sa is not None and sb is not None and sa != sb:
                    return False
        return True

    def _readers_of_inputs(self, side: GraphSide, j: int, is_a: bool) -> list[int]:
        """The other side's unmatched nodes reading the partners of what node ``j`` of ``side`` reads."""
        other, matched = (self.b, self.ga.nodes_b) if is_a else (self.a, self.ga.nodes)
        found: set[int] = set()
        for y in side.inputs[j]:
            if y and y not in side.constant:
                token = self.keys.loose_token(side, y, is_a, True)
                if isinstance(token, tuple):
                    partner = self.ga.value_b(token[1]) if is_a else token[1]
                    if partner is not None:
                        found |= _readers(other, partner, matched)
        return sorted(i for i in found if i not in matched and i not in other.absorbed)

    def _nearest(self, bucket: _Bucket, j: int) -> int | None:
        """The unmatched candidate (A positions in topological order) nearest to B node ``j``'s relative
        place in B's order."""
        candidates, ranks = bucket
        if len(candidates) == 1:
            return candidates[0] if candidates[0] not in self.ga.nodes else None
        named = self._named_among(j, candidates)
        if named is not None and named not in self.ga.nodes:
            return named
        target = self.b.rank[j] * len(self.a.order) / max(1, len(self.b.order))
        hi = bisect.bisect_left(ranks, target)
        lo = hi - 1
        for _ in range(2 * NEAREST_SCAN):  # outwards from the target, the nearer side first
            if lo < 0 and hi >= len(ranks):
                return None
            take_hi = lo < 0 or (hi < len(ranks) and ranks[hi] - target <= target - ranks[lo])
            k = hi if take_hi else lo
            if candidates[k] not in self.ga.nodes:
                return candidates[k]
            if take_hi:
                hi += 1
            else:
                lo -= 1
        return None

    def _backward(self, work: list[tuple[int, int]], outputs: bool = False) -> None:
        """Upwards from matched node pairs (and, with ``outputs``, from the matched graph outputs)."""
        self.recent = []
        if outputs:
            for x in self.a.g.output_names:
                y = self.ga.values.get(x)
                if y is not None:
                    self._match_producers(x, y, work)
        values = self.ga.values
        while work:
            i, j = work.pop()
            if all(not x or x in values for x in self.a.inputs[i]):
                continue  # every input matched already: nothing upwards to find from here
            for x, y in input_pairs(self.a, i, self.b, j):
                self._match_producers(self.a.canonical(x), self.b.canonical(y), work)

    def _match_producers(self, x: str, y: str, work: list[tuple[int, int]]) -> None:
        if not x or not y:
            return
        known = self.ga.values.get(x)
        if known is not None and known != y:
            return
        if known is None and y in self.ga.values_b:
            return
        p, q = self.a.producer(x), self.b.producer(y)
        if p < 0 or q < 0 or p in self.ga.nodes or q in self.ga.nodes_b or p in self.a.absorbed \
                or q in self.b.absorbed:
            return
        if self.a.sig[p][:2] != self.b.sig[q][:2] or not self._same_weight_shapes(p, q):
            return
        if self.a.outputs[p].index(x) != self.b.outputs[q].index(y):
            return
        self._pair(p, q, HOW_STRUCTURE)
        work.append((p, q))


def _readers(side: GraphSide, x: str, matched: dict[int, int]) -> set[int]:
    """The nodes of ``side`` reading ``x``, directly or past unmatched single-input nodes and Q->DQ pairs."""
    found: set[int] = set()
    frontier = [x]
    for _ in range(FOLLOW_DEPTH):
        nxt = []
        for v in frontier:
            for c in side.users.get(v, ()):
                if c in found or len(found) >= MAX_READERS:
                    continue
                found.add(c)
                outputs = side.outputs[c]
                if c in side.alias_maker:
                    nxt.append(side.alias_maker[c])
                elif c not in matched and len(outputs) == 1 and side.ops[c] not in LAYER_OPS and (
                        side.ops[c] in QUANTIZE or side.ops[c] in DEQUANTIZE or len(side.data_inputs(c)) == 1):
                    nxt.append(outputs[0])
        frontier = nxt
        if not frontier:
            break
    return found


def _ordered(sig: Signature, tokens: tuple[Hashable, ...]) -> tuple[Hashable, ...]:
    """A commutative op's input tokens in a canonical order (exporters write ``Add(bias, x)`` or ``Add(x, bias)``)."""
    if sig[1] in COMMUTATIVE and len(tokens) > 1 and sig[0] == "ai.onnx":
        return tuple(sorted(tokens, key=repr))
    return tokens


def input_pairs(a: GraphSide, i: int, b: GraphSide, j: int) -> list[tuple[str, str]]:
    """The inputs of matched nodes ``i`` of A and ``j`` of B, position by position; a commutative op's two
    inputs swapped when that pairs constants with constants and computed values with computed values."""
    xs, ys = a.inputs[i], b.inputs[j]
    pairs = list(zip(xs, ys, strict=False))
    if len(xs) == len(ys) == 2 and a.ops[i] in COMMUTATIVE and b.ops[j] == a.ops[i]:
        kinds_a = [x in a.constant for x in xs]
        kinds_b = [y in b.constant for y in ys]
        if kinds_a != kinds_b and kinds_a == kinds_b[::-1]:
            pairs = [(xs[0], ys[1]), (xs[1], ys[0])]
    return pairs


def _unique_names(names: Sequence[str]) -> dict[str, int]:
    seen: dict[str, int] = {}
    dup: set[str] = set()
    for i, name in enumerate(names):
        if not name:
            continue
        if name in seen:
            dup.add(name)
        seen[name] = i
    return {k: v for k, v in seen.items() if k not in dup}


def _undefined(g: GraphIndex) -> list[str]:
    """Values nodes read that nothing defines (a dangling input): each stands for itself, by name."""
    return sorted(x for x in g.consumers if x not in g.producer and not (g.parent is not None and g.parent.defines(x)))


def _type_key(g: GraphIndex, name: str) -> bytes:
    t = g.declared.get(name)
    return b"" if t is None else t.SerializeToString()


# -- whole models -------------------------------------------------------------------------------
def align_graphs(index_a: ModelIndex, index_b: ModelIndex, scope_a: str, scope_b: str,
                 parent: GraphAlignment | None = None, token: CancelToken | None = None) -> GraphAlignment:
    """Align graph ``scope_a`` of A with graph ``scope_b`` of B (index.py's scope strings); ``parent``
    is the alignment of the graphs holding them, for the values bodies read from outside."""
    ga = GraphAlignment(scope_a, scope_b, index_a.graphs[scope_a], index_b.graphs[scope_b], parent=parent)
    _Matcher(ga, token).run()
    return ga


def _body_pairs(index_a: ModelIndex, index_b: ModelIndex, ga: GraphAlignment) -> Iterator[tuple[str, str]]:
    """(A scope, B scope) of the bodies held by matched nodes, attribute by attribute."""
    kids_b = {(node, label): scope for node, label, scope in index_b.graphs[ga.scope_b].children}
    for node, label, scope in index_a.graphs[ga.scope_a].children:
        j = ga.nodes.get(node)
        if j is not None and (j, label) in kids_b:
            yield scope, kids_b[(j, label)]


def align_models(index_a: ModelIndex, index_b: ModelIndex, progress: ProgressFn = no_progress,
                 token: CancelToken | None = None) -> Alignment:
    """Align model A with model B: the main graphs, every body of matched nodes, and the local
    functions with the same (domain, name, overload)."""
    with building():  # millions of small long-lived objects: no cycle collection walks them meanwhile
        return _align_models(index_a, index_b, progress, token)


def _align_models(index_a: ModelIndex, index_b: ModelIndex, progress: ProgressFn,
                  token: CancelToken | None) -> Alignment:
    out = Alignment(index_a, index_b)
    progress(0.0, "Aligning the main graphs")
    work = [align_graphs(index_a, index_b, "", "", None, token)]
    while work:
        ga = work.pop()
        out.add(ga)
        for sa, sb in _body_pairs(index_a, index_b, ga):
            work.append(align_graphs(index_a, index_b, sa, sb, ga, token))
    progress(0.8, "Aligning the functions")
    for key in index_a.functions:
        if key in index_b.functions:
            scope = _function_scope(key)
            fa = align_graphs(index_a, index_b, scope, scope, None, token)
            out.add(fa)
            work = [fa]
            while work:
                ga = work.pop()
                for sa, sb in _body_pairs(index_a, index_b, ga):
                    child = align_graphs(index_a, index_b, sa, sb, ga, token)
                    out.add(child)
                    work.append(child)
    progress(1.0, "Aligned")
    return out


def _function_scope(key: tuple[str, str, str]) -> str:
    return function_scope(*key)
