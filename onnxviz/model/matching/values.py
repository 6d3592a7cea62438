"""Which value of model A to compare with which value of model B, from their node alignment.

* outputs of matched nodes pair position by position;
* a value quantized and dequantized (``QuantizeLinear -> DequantizeLinear``) is compared through its
  ``DequantizeLinear`` output, as onnxruntime's ``qdq_loss_debug`` does;
* chains of single-input nodes one side lacks (a Relu the quantizer folded into its Conv, a node an
  optimizer fused) are followed: the chain's last value pairs with the other side's value (through its
  DequantizeLinear, if any). The value before the chain also pairs with its partner when the other
  side only quantized it, since both are then computed the same way; when the other side has nothing
  there (a fused op computes the whole chain) it is listed unmatched;
* every other value computed by nodes (constants excepted: they are weights) is listed as unmatched.

The main graphs pair first, then the bodies of matched If/Loop/Scan nodes and matched local
functions, their values named as captured runs key them (``scope::name``, :func:`value_key`): a
captured run holds a body's values from the reference evaluator (the branch taken, a loop's last
iteration, a function's first call), so a pair is compared when both runs computed it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from onnxviz.model.matching.align import DEQUANTIZE, QUANTIZE, Alignment, GraphAlignment, GraphSide
from onnxviz.model.runner.store import value_key

HOW_SAME = "same"                # outputs of matched nodes
HOW_DEQUANTIZED = "dequantized"  # at least one side through its QuantizeLinear -> DequantizeLinear
HOW_FOLLOWED = "followed"        # through nodes one side lacks


@dataclass(frozen=True)
class ValuePair:
    """Value ``a`` of model A is compared with value ``b`` of model B."""

    a: str
    b: str
    how: str  # HOW_SAME, HOW_DEQUANTIZED or HOW_FOLLOWED


@dataclass
class ValuePairing:
    """The pairs, in A's topological order, and the values of each side left without a partner."""

    pairs: list[ValuePair] = field(default_factory=list)
    unmatched_a: list[str] = field(default_factory=list)
    unmatched_b: list[str] = field(default_factory=list)

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


@dataclass(frozen=True)
class _Chain:
    end: str           # the last value reached
    steps: int         # nodes followed that are not a Q or DQ
    quantized: bool    # a QuantizeLinear -> DequantizeLinear pair was passed
    passed: tuple[str, ...]  # the values passed on the way (end excluded)


def _follow(side: GraphSide, matched: dict[int, int], x: str) -> _Chain:
    """From value ``x``, forward through unmatched single-consumer, single-data-input nodes."""
    steps, quantized, passed = 0, False, []
    while True:
        users = side.g.consumers.get(x, [])
        if len(users) != 1 or users[0] in matched or x in side.graph_outputs:
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
        passed.append(x)
        x, steps = node.output[0], steps + 1
    return _Chain(x, steps, quantized, tuple(passed))


def _dequantizer_of(side: GraphSide, q_out: str, matched: dict[int, int]) -> str | None:
    users = side.g.consumers.get(q_out, [])
    if len(users) != 1 or users[0] in matched or side.nodes[users[0]].op_type not in DEQUANTIZE:
        return None
    out = side.nodes[users[0]].output
    return out[0] if out else None


def _pairs_of(x: str, y: str, ca: _Chain, cb: _Chain) -> list[ValuePair]:
    ends = ValuePair(ca.end, cb.end, HOW_FOLLOWED if ca.steps or cb.steps else
                     HOW_DEQUANTIZED if ca.quantized or cb.quantized else HOW_SAME)
    if not (ca.steps or cb.steps):
        return [ends]
    lacking_b = ca.steps and not cb.steps and not cb.quantized  # B computes A's whole chain in one node
    lacking_a = cb.steps and not ca.steps and not ca.quantized
    if lacking_a or lacking_b:
        return [ends]
    return [ValuePair(x, y, HOW_SAME), ends]


def pair_graph_values(ga: GraphAlignment) -> ValuePairing:
    """The value pairs of one aligned graph pair (see the module's description)."""
    assert ga.sides is not None
    a, b = ga.sides
    pairs: list[ValuePair] = []
    covered_a: set[str] = set()
    covered_b: set[str] = set()
    inputs_a = set(a.g.input_names)
    for x, y in _matched_outputs(ga, a, b):
        ca, cb = _follow(a, ga.nodes, x), _follow(b, ga.nodes_b, y)
        found = _pairs_of(x, y, ca, cb)
        if x in inputs_a:  # graph inputs are fed, not computed: only what follows them compares
            found = [p for p in found if p.a != x or p.b != y]
        pairs += found
        covered_a.update(p.a for p in found)
        covered_b.update(p.b for p in found)
        if not ca.steps:  # only quantized: the DequantizeLinear output stands for them
            covered_a.update(ca.passed)
        if not cb.steps:
            covered_b.update(cb.passed)
    return ValuePairing(pairs, _uncovered(a, covered_a), _uncovered(b, covered_b))


def _matched_outputs(ga: GraphAlignment, a: GraphSide, b: GraphSide) -> list[tuple[str, str]]:
    """Matched graph inputs (a quantized input pairs through its DequantizeLinear), then the outputs of
    matched nodes position by position, in A's topological order."""
    inputs_a, inputs_b = set(a.g.input_names), set(b.g.input_names)
    out = [(x, y) for x, y in ga.values.items() if x in inputs_a and y in inputs_b]
    for i in a.order:
        j = ga.nodes.get(i)
        if j is not None:
            out += [(x, y) for x, y in zip(a.nodes[i].output, b.nodes[j].output, strict=False) if x and y]
    return out


def _uncovered(side: GraphSide, covered: set[str]) -> list[str]:
    """Node outputs in topological order that no pair covers (constants left out)."""
    return [o for i in side.order for o in side.nodes[i].output
            if o and o not in covered and o not in side.constant]


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
        out.pairs += [ValuePair(value_key(ga.scope_a, p.a), value_key(ga.scope_b, p.b), p.how) for p in inner.pairs]
        out.unmatched_a += [value_key(ga.scope_a, x) for x in inner.unmatched_a]
        out.unmatched_b += [value_key(ga.scope_b, y) for y in inner.unmatched_b]
    return out
