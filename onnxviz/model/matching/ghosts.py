"""The nodes only B has, as ghosts of A's graphs: what each reads from and feeds on A's side.

A ``node_added`` difference names a B node; through the alignment its producers and consumers that
have an A partner become the A nodes its ghost box sits between (:mod:`onnxviz.model.layout.ghosts`),
a B graph input or output the A one it pairs with, and a producer that is itself added the ghost
before it in a chain. An added node that only reads weights (a quantized weight's DequantizeLinear,
the Constants and chains before it) gets no ghost: B's own layout folds it into its reader's box, and
the Differences list shows it on B's graph.
"""

from __future__ import annotations

from onnxviz.model.graph.index import INITIALIZER, GraphIndex
from onnxviz.model.layout.ghosts import Endpoint, Ghost
from onnxviz.model.matching.align import GraphAlignment
from onnxviz.model.matching.diff import ModelDiff


def added_ghosts(diff: ModelDiff) -> dict[str, list[Ghost]]:
    """Every added node of every graph B shares with A, keyed by A's scope; a ghost's key is its
    difference's row in ``diff.differences``."""
    keys = {(d.scope_b, d.node_b): row for row, d in enumerate(diff.differences)
            if d.kind == "node_added" and d.node_b >= 0}
    by_scope: dict[str, dict[int, int]] = {}
    for (scope_b, j), row in keys.items():
        by_scope.setdefault(scope_b, {})[j] = row
    out: dict[str, list[Ghost]] = {}
    for scope_b, added in by_scope.items():
        ga = diff.alignment.graphs_b.get(scope_b)
        if ga is None:
            continue   # a body only B has: no graph of A to draw it in
        weights = _weight_only(ga.index_b)
        out[ga.scope_a] = [_ghost(ga, j, row, added) for j, row in added.items()
                           if 0 <= j < len(ga.index_b.nodes) and j not in weights]
    return out


def _weight_only(g: GraphIndex) -> set[int]:
    """The nodes of ``g`` that read nothing but initializers, Constants and such nodes' outputs
    (nodes are in topological order)."""
    out: set[int] = set()
    for j, n in enumerate(g.nodes):
        if all(not x or (p := g.producer.get(x, -1)) == INITIALIZER or p in out for x in n.input):
            out.add(j)
    return out


def _ghost(ga: GraphAlignment, j: int, key: int, added: dict[int, int]) -> Ghost:
    gb, node = ga.index_b, ga.index_b.nodes[j]
    sources: list[Endpoint] = []
    after: list[int] = []
    for x in filter(None, node.input):
        p = gb.producer.get(x, -1)
        if p >= 0 and p in added:
            after.append(added[p])
        elif p >= 0 and (i := ga.node_a(p)) is not None:
            sources.append(i)
        elif x in gb.input_names and (a := _terminal(ga, x, gb.input_names, ga.index_a.input_names)) is not None:
            sources.append(a)
    targets: list[Endpoint] = []
    for y in filter(None, node.output):
        targets += [i for c in gb.consumers_of(y) if c not in added and (i := ga.node_a(c)) is not None]
        if y in gb.output_names and (a := _terminal(ga, y, gb.output_names, ga.index_a.output_names)) is not None:
            targets.append(a)
    return Ghost(ga.scope_a, key, node.op_type, node.domain, node.name, tuple(dict.fromkeys(sources)),
                 tuple(dict.fromkeys(targets)), tuple(dict.fromkeys(after)))


def _terminal(ga: GraphAlignment, name: str, names_b: list[str], names_a: list[str]) -> str | None:
    """A's graph input/output paired with B's ``name``: through the alignment, else at the same position."""
    a = ga.value_a(name)
    if a in names_a:
        return a
    k = names_b.index(name)
    return names_a[k] if len(names_a) == len(names_b) else None

