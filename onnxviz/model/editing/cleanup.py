"""Clean-up of a graph: unused nodes and initializers, topological order, the branches around a node."""

from __future__ import annotations

from collections.abc import Sequence

from onnx import GraphProto

from onnxviz.model.editing.ops import Op, Path, Remove, Reorder
from onnxviz.model.errors import EditError
from onnxviz.model.graph.index import GraphIndex, topological_order


def unused_ops(path: Path, graph: GraphProto, g: GraphIndex) -> tuple[list[Op], int, int]:
    """Ops removing nodes whose outputs nothing uses and initializers nothing reads.

    Works backwards from the graph outputs, so chains of dead nodes go in one
    step. Nodes holding subgraphs count their bodies' outer reads as inputs
    (the index records them as consumers). Returns (ops, nodes removed, initializers removed).
    """
    needed: set[str] = set(g.output_names)
    live = [False] * len(g.nodes)
    reads = node_reads(g)
    for i in range(len(g.nodes) - 1, -1, -1):
        if any(out in needed for out in g.nodes[i].output if out):
            live[i] = True
            needed.update(reads[i])
    if g.unsorted:  # file order is not topological: repeat until nothing changes
        changed = True
        while changed:
            changed = False
            for i in range(len(g.nodes)):
                if not live[i] and any(out in needed for out in g.nodes[i].output if out):
                    live[i] = changed = True
                    needed.update(reads[i])
    dead_nodes = [i for i, alive in enumerate(live) if not alive]
    inputs = set(g.input_names)
    dead_inits = [k for k, t in enumerate(graph.initializer) if t.name not in needed and t.name not in inputs]
    ops: list[Op] = [Remove(path + ("node",), i) for i in reversed(dead_nodes)]
    ops += [Remove(path + ("initializer",), k) for k in reversed(dead_inits)]
    ops += undeclared_ops(path, graph, g, dead_nodes)
    return ops, len(dead_nodes), len(dead_inits)


def undeclared_ops(path: Path, graph: GraphProto | None, g: GraphIndex, removed: Sequence[int]) -> list[Op]:
    """Ops dropping the ``value_info`` entries of the values only the ``removed`` nodes made: an entry left for
    a value nothing makes any more is stale (and a runtime warns when the name is made again otherwise)."""
    gone = {x for i in removed for x in g.nodes[i].output if x and g.producer.get(x) == i}
    if graph is None or not gone:
        return []
    return [Remove(path + ("value_info",), k) for k in reversed(range(len(graph.value_info)))
            if graph.value_info[k].name in gone]


def feeders_only(g: GraphIndex, i: int) -> list[int]:
    """Node ``i`` and the nodes that feed nothing else: every output of each is read only by nodes of
    the set and is no graph output (a whole pre-processing branch). Positions, ascending."""
    reads = node_reads(g)
    outputs = set(g.output_names)
    chosen, stack = {i}, [i]
    while stack:
        for name in reads[stack.pop()]:
            p = g.producer.get(name, -1)
            if p < 0 or p in chosen:
                continue
            outs = [x for x in g.nodes[p].output if x]
            if all(x not in outputs and set(g.consumers_of(x)) <= chosen for x in outs):
                chosen.add(p)
                stack.append(p)
    return sorted(chosen)


def fed_only_by(g: GraphIndex, i: int) -> list[int]:
    """Node ``i`` and the nodes it alone feeds: each reads node outputs only from the set (graph inputs,
    initializers and outer values aside), a whole post-processing branch. Positions, ascending."""
    reads = node_reads(g)
    chosen, stack = {i}, [i]
    while stack:
        for out in g.nodes[stack.pop()].output:
            for c in g.consumers_of(out) if out else ():
                if c in chosen:
                    continue
                if all(g.producer.get(x, -1) < 0 or g.producer[x] in chosen for x in reads[c]):
                    chosen.add(c)
                    stack.append(c)
    return sorted(chosen)


def initializers_only_read_by(graph: GraphProto | None, g: GraphIndex, nodes: Sequence[int]) -> list[int]:
    """Positions of the initializers read by some of ``nodes`` and by nothing else (graph inputs and
    outputs kept)."""
    if graph is None:
        return []
    members, kept = set(nodes), set(g.input_names) | set(g.output_names)
    out = []
    for k, t in enumerate(graph.initializer):
        users = set(g.consumers_of(t.name))
        if users and users <= members and t.name not in kept:
            out.append(k)
    return out


def node_reads(g: GraphIndex) -> list[set[str]]:
    """The names each node reads, those its subgraphs read from outside them included."""
    reads = [{x for x in n.input if x} for n in g.nodes]
    for name, users in g.consumers.items():
        for i in users:
            reads[i].add(name)  # includes names read by the node's subgraphs
    return reads


def sort_ops(path: Path, g: GraphIndex) -> list[Op]:
    """A Reorder op putting the nodes in topological order (ties keep file order); [] if already sorted."""
    order, cyclic = topological_order(g.nodes, g.producer)
    if cyclic:
        raise EditError(f"the graph has a cycle through {len(cyclic)} nodes, so it cannot be sorted.")
    if order == list(range(len(order))):
        return []
    return [Reorder(path + ("node",), order)]

