"""Deleting a node together with a branch: what only feeds it, or what only it feeds."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from onnx import GraphProto, ValueInfoProto

from onnxviz.model.editing import cleanup
from onnxviz.model.editing.commands import Command
from onnxviz.model.editing.finder import Finder, NodeRef
from onnxviz.model.editing.ops import Op, Path, Remove, ReplaceMessage
from onnxviz.model.errors import EditError
from onnxviz.model.text import quoted_name

Side = Literal["inputs", "outputs"]
Orphans = Literal["keep", "remove", "repoint"]
ORPHANS: tuple[Orphans, ...] = ("keep", "remove", "repoint")


@dataclass(frozen=True)
class Branch:
    """What deleting a node with its inputs or outputs takes away (shown before it happens).

    ``nodes`` are positions in ``scope``, ascending, the node itself among them; ``labels`` name them in
    the same order; ``initializers`` are the weights only these nodes read, which go too.
    """

    scope: str
    node: int
    side: Side
    nodes: tuple[int, ...]
    labels: tuple[str, ...]
    initializers: tuple[str, ...]
    outputs: tuple[str, ...] = ()  # graph outputs these nodes make, left without a maker (problems show them)
    repoint: str = ""  # the value that can take their place (the node's first input, on the "outputs" side)

    @property
    def others(self) -> int:
        """How many nodes go besides the node itself."""
        return len(self.nodes) - 1


def node_branch(find: Finder, node: NodeRef, side: Side) -> Branch:
    """The nodes deleting ``node`` with its inputs (``side="inputs"``: every node feeding only it) or its outputs
    (``"outputs"``: every node only it feeds) would delete, without changing anything."""
    scope, i = find.locate(node)
    g = find.index.graphs[scope]
    nodes = cleanup.feeders_only(g, i) if side == "inputs" else cleanup.fed_only_by(g, i)
    body = find.graph_of(scope)
    graph = body if isinstance(body, GraphProto) else None
    inits = cleanup.initializers_only_read_by(graph, g, nodes)
    names = tuple(graph.initializer[k].name for k in inits) if graph is not None else ()
    outputs = tuple(x for x in g.output_names if g.producer_of(x) in set(nodes))
    first = next((x for x in find.node_proto(scope, i).input if x), "")
    repoint = first if side == "outputs" and outputs and graph is not None and first not in g.output_names else ""
    return Branch(scope, i, side, tuple(nodes), tuple(find.node_label(scope, n) for n in nodes), names, outputs,
                  repoint)


def remove_branch(find: Finder, branch: Branch, orphans: Orphans = "keep") -> Command:
    """Delete the nodes of ``branch`` (from :func:`node_branch`) and the initializers only they read; the graph
    outputs they made are kept (``orphans="keep"``: a problem each), removed, or replaced by the value that
    fed the branch (``"repoint"``, when ``branch.repoint`` names one)."""
    if orphans not in ORPHANS:
        raise EditError(f"orphaned outputs are 'keep', 'remove' or 'repoint', not {quoted_name(repr(orphans))}.")
    if orphans == "repoint" and branch.outputs and not branch.repoint:
        raise EditError("no value can take the place of the outputs this deletion leaves; remove them instead.")
    path = find.scope_path(branch.scope)
    ops: list[Op] = [Remove(path + ("node",), n) for n in reversed(branch.nodes)]
    body = find.graph_of(branch.scope)
    if isinstance(body, GraphProto) and branch.initializers:
        gone = set(branch.initializers)
        ops += [Remove(path + ("initializer",), k) for k in reversed(range(len(body.initializer)))
                if body.initializer[k].name in gone]
    if isinstance(body, GraphProto):
        ops += cleanup.undeclared_ops(path, body, find.index.graphs[branch.scope], branch.nodes)
    if isinstance(body, GraphProto) and branch.outputs and orphans != "keep":
        ops += _orphan_ops(find, path, body, branch, orphans)
    label = find.node_label(branch.scope, branch.node)
    what = "feeding only it" if branch.side == "inputs" else "only it feeds"
    extra = f" and {branch.others} node{'s' if branch.others != 1 else ''} {what}" if branch.others else ""
    return Command(f"Delete {label}{extra}", ops)


def _orphan_ops(find: Finder, path: Path, body: GraphProto, branch: Branch, orphans: Orphans) -> list[Op]:
    """Ops removing the graph outputs ``branch`` orphans, or putting the value that fed it in the first one's
    place (typed as known) and removing the others."""
    places = [k for k, v in enumerate(body.output) if v.name in set(branch.outputs)]
    ops: list[Op] = []
    if orphans == "repoint":
        info = ValueInfoProto(name=branch.repoint)
        known = find.current_type(branch.scope, branch.repoint)
        if known is not None:
            info.type.CopyFrom(known)
        ops.append(ReplaceMessage(path + ("output", places[0]), info))
        places = places[1:]
    return ops + [Remove(path + ("output",), k) for k in reversed(places)]


