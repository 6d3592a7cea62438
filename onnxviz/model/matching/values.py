"""Which value of model A to compare with which value of model B, from their node alignment.

* outputs of matched nodes pair position by position (a quantized op's float result: the value at the
  end of its pattern, :mod:`.formats`);
* a value quantized and dequantized (``QuantizeLinear -> DequantizeLinear``) is compared through its
  ``DequantizeLinear`` output, as onnxruntime's ``qdq_loss_debug`` does; an integer value (QOperator's
  ``_quantized`` tensors, a dynamic quantization) carries the scale and zero point that make it a float
  again (:attr:`ValuePair.scale_a`/``scale_b``), and is compared as that float;
* chains of single-input nodes one side lacks (a Relu the quantizer folded into its Conv, a node an
  optimizer fused) are followed: the chain's last value pairs with the other side's value (through its
  DequantizeLinear, if any) when the two are read by matched nodes (or are both graph outputs). The value
  before the chain also pairs with its partner when the other side only quantized it, since both are then
  computed the same way; when the other side has nothing there (a fused op computes the whole chain) it
  is listed unmatched, saying so;
* values still without a partner whose names agree pair when what they are computed from agrees
  (quantizers keep the float model's names: a dynamic Gemm's MatMulInteger, Cast, Mul and Add end in a
  value named as the Gemm's output);
* a graph input never pairs with a computed value (only with the other side's input, or its quantized
  copy); every other value computed by nodes (constants excepted: they are weights; the scales and
  integer steps inside a quantized op's pattern are part of its result) is listed as unmatched, with the
  reason (:attr:`ValuePairing.reasons`).

The main graphs pair first, then the bodies of matched If/Loop/Scan nodes and matched local
functions, their values named as captured runs key them (``scope::name``, :func:`value_key`): a
captured run holds a body's values from the reference evaluator (the branch taken, a loop's last
iteration, a function's first call), so a pair is compared when both runs computed it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from onnxviz.model.matching.align import (
    DEQUANTIZE,
    QUANTIZE,
    Alignment,
    GraphAlignment,
    GraphSide,
    input_pairs,
)
from onnxviz.model.matching.formats import Scale
from onnxviz.model.runner.store import value_key

HOW_SAME = "same"                # outputs of matched nodes
HOW_DEQUANTIZED = "dequantized"  # at least one side through its QuantizeLinear -> DequantizeLinear
HOW_FOLLOWED = "followed"        # through nodes one side lacks
HOW_NAMED = "named"              # same name, computed from paired values
HOW_OUTPUT = "graph output"      # the graph outputs seeded as one another, whatever computes them
NAME_DEPTH = 12                  # nodes walked up from a value to the paired values it is computed from


@dataclass(frozen=True)
class ValuePair:
    """Value ``a`` of model A is compared with value ``b`` of model B; an integer value is read through
    its scale and zero point (``scale_a``/``scale_b``: names in that value's graph)."""

    a: str
    b: str
    how: str  # HOW_SAME, HOW_DEQUANTIZED, HOW_FOLLOWED or HOW_NAMED
    scale_a: Scale | None = None
    scale_b: Scale | None = None
    scope_a: str = ""  # the graphs the values (and their scales) are in
    scope_b: str = ""


@dataclass
class ValuePairing:
    """The pairs, in A's topological order, and the values of each side left without a partner (why, in
    ``reasons``: by A's or B's key, the same key on both sides meaning the same thing)."""

    pairs: list[ValuePair] = field(default_factory=list)
    unmatched_a: list[str] = field(default_factory=list)
    unmatched_b: list[str] = field(default_factory=list)
    reasons_a: dict[str, str] = field(default_factory=dict)
    reasons_b: dict[str, str] = field(default_factory=dict)
    values_a: int = 0  # the values of A that could pair: computed, not constants, in every graph aligned
    fed_a: set[str] = field(default_factory=set)  # A's graph inputs: paired too, but fed, not computed

    def names(self) -> list[tuple[str, str]]:
        """(A name, B name) of every pair, for :func:`onnxviz.model.runner.compare.compare_pairs`."""
        return [(p.a, p.b) for p in self.pairs]

    def by_b(self) -> dict[str, ValuePair]:
        """The pairs keyed by B's value (the first, when a value pairs twice)."""
        out: dict[str, ValuePair] = {}
        for p in self.pairs:
            out.setdefault(p.b, p)
        return out

    def by_a(self) -> dict[str, ValuePair]:
        """The pairs keyed by A's value (the first, when a value pairs twice)."""
        out: dict[str, ValuePair] = {}
        for p in self.pairs:
            out.setdefault(p.a, p)
        return out

    def fraction(self) -> float:
        """A's values that pair, over those that could (1.0 when A computes nothing)."""
        paired = len({p.a for p in self.pairs} - self.fed_a)  # computed values only, as values_a counts
        return min(1.0, paired / self.values_a) if self.values_a else 1.0

    def unpair(self, pair: ValuePair, reason: str) -> None:
        """Take ``pair`` out (the runs showed it cannot hold: shapes or kinds differ), its values listed
        as unmatched with ``reason`` unless another pair keeps them."""
        self.pairs = [p for p in self.pairs if p != pair]
        if all(p.a != pair.a for p in self.pairs) and pair.a not in self.reasons_a:
            self.unmatched_a.append(pair.a)
            self.reasons_a[pair.a] = reason
        if all(p.b != pair.b for p in self.pairs) and pair.b not in self.reasons_b:
            self.unmatched_b.append(pair.b)
            self.reasons_b[pair.b] = reason


@dataclass(frozen=True)
class _Chain:
    end: str           # the last value reached
    steps: int         # nodes followed that are not a Q or DQ
    quantized: bool    # a QuantizeLinear -> DequantizeLinear pair was passed
    passed: tuple[str, ...]  # the values passed on the way (end excluded)
    ops: tuple[str, ...] = ()  # the op types followed


def _follow(side: GraphSide, matched: dict[int, int], x: str) -> _Chain:
    """From value ``x``, forward through unmatched single-consumer, single-data-input nodes."""
    steps, quantized, passed, ops = 0, False, [], []
    while True:
        users = side.g.consumers.get(x, [])
        if len(users) != 1 or users[0] in matched or x in side.graph_outputs or users[0] in side.absorbed:
            break
        node = side.nodes[users[0]]
        if len(node.output) != 1 or side.data_inputs(users[0]) != [side.canonical(x)] and node.op_type not in QUANTIZE:
            break
        if node.op_type in QUANTIZE:
            dq = _dequantizer_of(side, node.output[0], matched)
            if dq is None:
                break
            passed += [x, node.output[0]]
            x, quantized = dq, True
            continue
        if node.op_type in DEQUANTIZE or users[0] in side.alias_maker:  # the same value, read as floats
            passed.append(x)
            x, quantized = node.output[0], True
            continue
        passed.append(x)
        ops.append(node.op_type)
        x, steps = node.output[0], steps + 1
    return _Chain(x, steps, quantized, tuple(passed), tuple(ops))


def _dequantizer_of(side: GraphSide, q_out: str, matched: dict[int, int]) -> str | None:
    users = side.g.consumers.get(q_out, [])
    if len(users) != 1 or users[0] in matched or side.nodes[users[0]].op_type not in DEQUANTIZE:
        return None
    out = side.nodes[users[0]].output
    return out[0] if out else None


class _GraphPairing:
    """The value pairs of one aligned graph pair (see the module's description)."""

    def __init__(self, ga: GraphAlignment) -> None:
        assert ga.sides is not None
        self.ga = ga
        self.a, self.b = ga.sides
        self.pairs: list[ValuePair] = []
        self.covered_a: set[str] = set()
        self.covered_b: set[str] = set()
        self.reasons_a: dict[str, str] = {}
        self.reasons_b: dict[str, str] = {}

    def run(self) -> ValuePairing:
        inputs_a = set(self.a.g.input_names)
        for x, y, i, j in _matched_outputs(self.ga, self.a, self.b):
            if x in self.a.constant and y in self.b.constant:
                continue  # weights (Identity copies, Constant nodes): the diff's and the weights' business
            if i >= 0 and not self._same_integer_constants(i, j):
                said = "its node reads other integer constants (a shape, axes or indices) on the other side"
                self.reasons_a.setdefault(x, said)
                self.reasons_b.setdefault(y, said)
                continue
            ca, cb = _follow(self.a, self.ga.nodes, x), _follow(self.b, self.ga.nodes_b, y)
            found = self._pairs_of(x, y, ca, cb)
            if x in inputs_a:  # graph inputs are fed, not computed: only what follows them compares
                found = [p for p in found if p.a != x or p.b != y]
            found = [p for p in found if self._inputs_agree(p.a, p.b)]
            self._add(found)
            if not ca.steps:  # only quantized: the DequantizeLinear output stands for them
                self.covered_a.update(ca.passed)
            if not cb.steps:
                self.covered_b.update(cb.passed)
        self._cover_internals(self.a, self.covered_a)
        self._cover_internals(self.b, self.covered_b)
        self._pair_by_name()
        self._pair_outputs()
        unmatched_a = _uncovered(self.a, self.covered_a)
        unmatched_b = _uncovered(self.b, self.covered_b)
        reasons_a = {x: self.reasons_a.get(x) or _why(self.a, self.ga.nodes, x, "B") for x in unmatched_a}
        reasons_b = {y: self.reasons_b.get(y) or _why(self.b, self.ga.nodes_b, y, "A") for y in unmatched_b}
        countable = sum(1 for i in self.a.order for o in self.a.nodes[i].output
                        if o and o not in self.a.constant and not _internal(self.a, o))
        return ValuePairing(self.pairs, unmatched_a, unmatched_b, reasons_a, reasons_b, countable,
                            set(self.a.g.input_names))

    def _add(self, found: list[ValuePair]) -> None:
        for p in found:
            b = self._output_copy(p.a, p.b)
            self.pairs.append(ValuePair(p.a, b, p.how, self.a.scales.get(p.a), self.b.scales.get(b)))
            self.covered_a.add(p.a)
            self.covered_b.update((p.b, b))

    def _output_copy(self, x: str, y: str) -> str:
        """A's graph output compares with B's graph output of that place when B's is only a re-typed or
        dequantized copy of ``y`` (a float16 model's float32 outputs); else with ``y``."""
        z = self.ga.values.get(x) if x in self.a.graph_outputs else None
        return z if z is not None and z in self.b.graph_outputs and self.b.canonical(z) == self.b.canonical(y) else y

    def _pairs_of(self, x: str, y: str, ca: _Chain, cb: _Chain) -> list[ValuePair]:
        ends = ValuePair(ca.end, cb.end, HOW_FOLLOWED if ca.steps or cb.steps else
                         HOW_DEQUANTIZED if ca.quantized or cb.quantized else HOW_SAME)
        if not (ca.steps or cb.steps):
            return [ends]
        if not self._read_alike(ca.end, cb.end):
            return []  # what follows differs past the chain: nothing here is known to be the same value
        lacking_b = ca.steps and not cb.steps and not cb.quantized  # B computes A's whole chain in one node
        lacking_a = cb.steps and not ca.steps and not ca.quantized
        written = self._written_out(x, y, ca.end, cb.end) if lacking_a or lacking_b else []
        if written:  # the side without a chain goes on through nodes of its own (a GELU written out against
            return [ValuePair(x, y, HOW_SAME), *written]  # a Gelu node): not fused, each end has its partner
        if lacking_b:
            self._fused(self.b, "B", self.reasons_a, (x, *ca.passed[1:]), ca, y)
            return [ends]
        if lacking_a:
            self._fused(self.a, "A", self.reasons_b, (y, *cb.passed[1:]), cb, x)
            return [ends]
        return [ValuePair(x, y, HOW_SAME), ends]

    def _written_out(self, x: str, y: str, end_a: str, end_b: str) -> list[ValuePair]:
        """When one side has a chain (``x`` to ``end_a`` in A, or ``y`` to ``end_b`` in B) and a matched node
        reads its end, the pair of that end with what the node's partner reads at that input, if that is
        another value, computed from the other side's start (``y`` or ``x``) alone through unmatched nodes
        (a GELU written out as Div, Erf, Add, Mul, Mul against one Gelu node); else none (fused)."""
        chain_a = end_a != x  # else B has the chain
        readers = ([(ra, self.ga.nodes[ra]) for ra in self.a.readers(end_a) if ra in self.ga.nodes] if chain_a else
                   [(self.ga.nodes_b[rb], rb) for rb in self.b.readers(end_b) if rb in self.ga.nodes_b])
        for ra, rb in readers:
            for xa, yb in input_pairs(self.a, ra, self.b, rb):
                if chain_a and xa == end_a and self._computed_from(self.b, self.ga.nodes_b, y, yb):
                    return [ValuePair(end_a, yb, HOW_FOLLOWED)]
                if not chain_a and yb == end_b and self._computed_from(self.a, self.ga.nodes, x, xa):
                    return [ValuePair(xa, end_b, HOW_FOLLOWED)]
        return []

    @staticmethod
    def _computed_from(side: GraphSide, matched: dict[int, int], start: str, value: str) -> bool:
        """``value`` is another value than ``start``, made by an unmatched node from ``start`` alone."""
        return value != start and side.producer(value) not in matched and _anchors(side, {start}, value) == {start}

    def _same_integer_constants(self, i: int, j: int) -> bool:
        """Matched nodes ``i`` and ``j`` compute the same thing as far as their integer constants say: at no
        input position do both read an integer constant (a Reshape's target, a Concat's -1) of other content."""
        for x, y in input_pairs(self.a, i, self.b, j):
            if x and y and self.a.integer_constant(x) and self.b.integer_constant(y):
                ka, kb = self.a.content.get(x), self.b.content.get(y)
                if ka is not None and kb is not None and ka != kb:
                    return False
        return True

    @staticmethod
    def _fused(other: GraphSide, label: str, reasons: dict[str, str], values: tuple[str, ...], chain: _Chain,
               partner: str) -> None:
        """Values the ``other`` side (``label``) computes in one node with what follows them: why they have no
        partner."""
        maker = other.producer(other.canonical(partner))
        node = f"{other.nodes[maker].op_type} {other.names[maker]}".rstrip() if maker >= 0 else "one node"
        said = f"{label} computes it and the {', '.join(chain.ops)} after it in one node ({node}): fused"
        for v in values:
            reasons.setdefault(v, said)

    def _read_alike(self, xa: str, yb: str) -> bool:
        """Both values are graph outputs, or a matched node reads both (as partners): the two chains end
        at the same place."""
        if xa in self.a.graph_outputs and yb in self.b.graph_outputs:
            return self.ga.value_b(xa) in (None, yb)
        readers_a = _first_matched(self.a, self.ga.nodes, xa)
        readers_b = _first_matched(self.b, self.ga.nodes_b, yb)
        return any(self.ga.nodes[r] in readers_b for r in readers_a)

    def _inputs_agree(self, x: str, y: str) -> bool:
        """Not a graph input against a computed value (a quantized or re-typed copy of an input counts as
        the input)."""
        return (self.a.canonical(x) in self.a.g.input_names) == (self.b.canonical(y) in self.b.g.input_names)

    @staticmethod
    def _cover_internals(side: GraphSide, covered: set[str]) -> None:
        """The values inside a quantized op's pattern and the re-encoded copies are part of a pair's result."""
        for i in side.order:
            for o in side.nodes[i].output:
                if o and _internal(side, o):
                    covered.add(o)

    def _pair_by_name(self) -> None:
        """Values of the same name, both unpaired and computed, whose nearest paired ancestors are partners."""
        for i in self.a.order:
            for x in self.a.nodes[i].output:
                if not x or x in self.covered_a or x in self.a.constant or x not in self.b.g.producer \
                        or x in self.covered_b or x in self.b.constant or not self._inputs_agree(x, x):
                    continue
                anchors_a, anchors_b = _anchors(self.a, self.covered_a, x), _anchors(self.b, self.covered_b, x)
                if anchors_a and {self._partner(v) for v in anchors_a} == anchors_b:
                    self._add([ValuePair(x, x, HOW_NAMED)])

    def _pair_outputs(self) -> None:
        """A graph output still unpaired against B's output seeded as its partner (of the same name, or the
        only one of each model): what the two models give is compared even where no node between aligns (the graphs
        onnxruntime's sessions run, with other layouts and fused kernels on each side)."""
        paired_b = {p.b for p in self.pairs}  # (a B output inside a quantized op's pattern is covered, unpaired)
        single = len(self.a.g.output_names) == len(self.b.g.output_names) == 1
        for x in self.a.g.output_names:
            y = self.ga.value_b(x)
            if y != x and not single:
                continue  # outputs seeded by their order alone: not evidence enough
            if x in self.covered_a or y is None or y not in self.b.graph_outputs or y in paired_b \
                    or x not in self.a.g.producer or y not in self.b.g.producer or not self._inputs_agree(x, y):
                continue
            self._add([ValuePair(x, y, HOW_OUTPUT)])

    def _partner(self, x: str) -> str | None:
        found = self.ga.value_b(x)
        if found is not None:
            return found
        return next((p.b for p in self.pairs if p.a == x), None)


def _first_matched(side: GraphSide, matched: dict[int, int], x: str, depth: int = 4) -> set[int]:
    """The matched nodes reading ``x``, directly or past unmatched nodes (an optimizer's fused node reads
    what the other side's unmatched Add read)."""
    found: set[int] = set()
    work, seen = [x], {x}
    for _ in range(depth):
        nxt = []
        for v in work:
            for r in side.readers(v):
                if r in matched:
                    found.add(r)
                    continue
                for o in side.outputs[r]:
                    if o and o not in seen:
                        seen.add(o)
                        nxt.append(o)
        work = nxt
    return found


def _anchors(side: GraphSide, covered: set[str], x: str) -> set[str]:
    """The paired values nearest above ``x`` (through unpaired nodes, their data inputs as the float ops
    read them); graph inputs count as paired."""
    found: set[str] = set()
    work, seen = [x], {x}
    for _ in range(NAME_DEPTH):
        nxt = []
        for v in work:
            p = side.producer(v)
            if p < 0:
                continue
            for u in side.data_inputs(p):
                if u in seen:
                    continue
                seen.add(u)
                if u in covered or u in side.g.input_names:
                    found.add(u)
                else:
                    nxt.append(u)
        work = nxt
        if not work:
            break
    return found


def _internal(side: GraphSide, name: str) -> bool:
    """A value inside a quantized op's pattern (not its result), or a re-encoded copy of another value."""
    if name in side.made_by:
        return False
    if name in side.alias and side.producer(name) in side.alias_maker:
        return True
    p = side.g.producer.get(name, -4)
    return p >= 0 and (p in side.absorbed or (p in side.float_ops and name not in side.made_by)
                       or side.ops[p] == "DynamicQuantizeLinear")


def _why(side: GraphSide, matched: dict[int, int], x: str, other: str) -> str:
    p = side.producer(x)
    if p < 0:
        return f"no partner in {other}"
    label = f"{side.ops[p]} {side.names[p]}".rstrip()
    if p not in matched:
        return f"its node ({label}) has no partner in {other}"
    return f"its node ({label}) has a partner in {other}, but no value there is computed the same way"


def _matched_outputs(ga: GraphAlignment, a: GraphSide, b: GraphSide) -> list[tuple[str, str, int, int]]:
    """Matched graph inputs (a quantized input pairs through its DequantizeLinear), then the outputs of
    matched nodes position by position, in A's topological order, each with the nodes (-1: an input)."""
    inputs_a, inputs_b = set(a.g.input_names), set(b.g.input_names)
    out = [(x, y, -1, -1) for x, y in ga.values.items() if x in inputs_a and y in inputs_b]
    for i in a.order:
        j = ga.nodes.get(i)
        if j is not None:
            out += [(x, y, i, j) for x, y in zip(a.outputs[i], b.outputs[j], strict=False) if x and y]
    return out


def _uncovered(side: GraphSide, covered: set[str]) -> list[str]:
    """Node outputs in topological order that no pair covers (constants left out)."""
    return [o for i in side.order for o in side.nodes[i].output
            if o and o not in covered and o not in side.constant]


def pair_graph_values(ga: GraphAlignment) -> ValuePairing:
    """The value pairs of one aligned graph pair (see the module's description)."""
    return _GraphPairing(ga).run()


def pair_values(alignment: Alignment, bodies: bool = True) -> ValuePairing:
    """The value pairs of the two models' main graphs, then (``bodies``) of every other aligned graph
    pair, named ``scope::name`` as captured runs key them."""
    out = pair_graph_values(alignment.main)
    if not bodies:
        return out
    for ga in sorted(alignment.graphs.values(), key=lambda g: (g.scope_a.startswith("fn:"), g.scope_a)):
        if ga is alignment.main or ga.sides is None:
            continue
        inner = pair_graph_values(ga)
        out.pairs += [ValuePair(value_key(ga.scope_a, p.a), value_key(ga.scope_b, p.b), p.how, p.scale_a, p.scale_b,
                                ga.scope_a, ga.scope_b) for p in inner.pairs]
        out.unmatched_a += [value_key(ga.scope_a, x) for x in inner.unmatched_a]
        out.unmatched_b += [value_key(ga.scope_b, y) for y in inner.unmatched_b]
        out.reasons_a.update({value_key(ga.scope_a, x): r for x, r in inner.reasons_a.items()})
        out.reasons_b.update({value_key(ga.scope_b, y): r for y, r in inner.reasons_b.items()})
        out.values_a += inner.values_a
        out.fed_a |= {value_key(ga.scope_a, x) for x in inner.fed_a}
    return out
