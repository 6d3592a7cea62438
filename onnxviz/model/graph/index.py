"""Producers, consumers, definitions and structural problems of every graph in a model.

Every graph in a model is addressed by a *scope* string:

* ``""`` - the main graph;
* ``"<parent>/<node>.<attr>"`` - the body held by attribute ``attr`` of the
  node at position ``node`` in scope ``<parent>`` (``"<node>.<attr>[k]"`` for
  the k-th graph of a GRAPHS attribute), e.g. ``"12.then_branch"`` or
  ``"12.then_branch/3.body"``;
* ``"fn:<domain>:<name>:<overload>"`` - the body of a model-local function.

Building the index never modifies the model and never raises on broken
graphs: what is wrong is recorded as :class:`~onnxviz.model.problems.Problem`.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from operator import attrgetter

import onnx
from onnx import AttributeProto, FunctionProto, GraphProto, NodeProto, TypeProto

from onnxviz.model.graph.checks import (
    has_undecodable_model_strings,
    has_undecodable_names,
    model_problems,
    node_local_problems,
    replace_invalid_utf8,
)
from onnxviz.model.graph.graph_index import GRAPH_INPUT, INITIALIZER, GraphIndex
from onnxviz.model.graph.graph_index import OUTER_SCOPE as OUTER_SCOPE  # where the readers of the index look
from onnxviz.model.problems import Problem, Severity
from onnxviz.model.text import all_text, display_name, quoted_name


def function_scope(domain: str, name: str, overload: str = "") -> str:
    return f"fn:{domain}:{name}:{overload}"


def child_scope(parent: str, node: int, attr: str, k: int | None = None) -> str:
    step = f"{node}.{attr}" if k is None else f"{node}.{attr}[{k}]"
    return f"{parent}/{step}" if parent else step


_NAME = attrgetter("name")
_NODE_FIELDS = attrgetter("input", "output", "attribute")  # read in one call per node
_STRUCTURE_FIELDS = attrgetter("attribute", "output", "name")
LABEL_CHARS = 60  # of a node's name in a scope's label (a breadcrumb button)


def parent_scope(scope: str) -> str:
    """The enclosing graph scope of a subgraph scope ('' for top-level ones and functions)."""
    return scope.rsplit("/", 1)[0] if "/" in scope else ""


def scope_label(index: ModelIndex | None, scope: str) -> str:
    """Short name of a scope: 'main graph', 'If cond (then_branch)', 'MyFunc (function)'."""
    if not scope:
        return "main graph"
    if scope.startswith("fn:"):
        _, domain, name, _ = (scope.split(":") + ["", "", "", ""])[:4]
        return f"{display_name(name, LABEL_CHARS)} (function)"
    step = scope.rsplit("/", 1)[-1]
    node_text, _, attr = step.partition(".")
    label = f"node {node_text}"
    graph = index.graphs.get(parent_scope(scope)) if index is not None else None
    if graph is not None and node_text.isdigit() and int(node_text) < len(graph.nodes):
        node = graph.nodes[int(node_text)]
        label = f"{node.op_type} {node.name}".strip() if node.name else f"{node.op_type} #{node_text}"
    return f"{display_name(label, LABEL_CHARS)} ({attr})"


def subgraphs_of(node: NodeProto) -> Iterator[tuple[str, int | None, GraphProto]]:
    """(attribute name, index in a GRAPHS list or None, graph) for each body a node holds."""
    for attr in node.attribute:
        if attr.type == AttributeProto.GRAPH or (attr.type == 0 and attr.HasField("g")):
            yield attr.name, None, attr.g
        elif attr.type == AttributeProto.GRAPHS:
            for k, g in enumerate(attr.graphs):
                yield attr.name, k, g


class ModelIndex:
    """The index of a whole model: main graph, every subgraph and every local function."""

    def __init__(self, model: onnx.ModelProto, raw_lengths: Mapping[str, int] | None = None,
                 checks: bool = True, structure_only: bool = False) -> None:
        """``raw_lengths``: len(raw_data) of main-graph initializers by name, read from the model's bytes
        (:class:`~onnxviz.model.graph.tensors.RawLengths`), so the checks of big ones copy none of them.
        ``checks=False``: without the model-wide checks' problems (:func:`model_problems`), for readers
        that want only the graph's structure and types. ``structure_only`` (implies no checks): only what
        the model's figures read, in half the time: every graph, its nodes, declared types and bodies, and
        the producers of the bodies (:meth:`type_of` reads them); no consumers, no problems."""
        self.model = model
        self.raw_lengths = raw_lengths
        self._checks = checks and not structure_only
        self._structure_only = structure_only
        self._build()

    def has_undecodable_text(self) -> bool:
        """True if protobuf handed back some of the model's text as bytes (it is not valid UTF-8): the
        document escapes such text before using the model (see ``Document.index``)."""
        names = _undecodable_structure if self._structure_only else has_undecodable_names
        return has_undecodable_model_strings(self.model) or any(names(g) for g in self.graphs.values())

    def _build(self) -> None:
        model = self.model
        self.graphs: dict[str, GraphIndex] = {}
        self.inferred: dict[str, dict[str, TypeProto]] = {}
        self.functions: dict[tuple[str, str, str], FunctionProto] = {}
        self._extra_problems: list[Problem] = []
        for fn in model.functions:
            key = (fn.domain, fn.name, getattr(fn, "overload", ""))
            if key in self.functions:
                self._extra_problems.append(Problem(
                    Severity.ERROR, f"local function {quoted_name(f'{fn.domain}:{fn.name}')} is defined twice",
                    scope=function_scope(*key)))
            self.functions[key] = fn
        self.main = self._index_graph("", model.graph, None)
        for key, fn in self.functions.items():
            self._index_function(key, fn)
        self._check_function_recursion()
        if self._checks:
            self._extra_problems += model_problems(self)

    # -- queries ---------------------------------------------------------------------
    @property
    def problems(self) -> list[Problem]:
        out = list(self._extra_problems)
        for g in self.graphs.values():
            out.extend(g.problems)
        return out

    def node_count(self) -> int:
        """Nodes in every graph, subgraph and function body."""
        return sum(len(g.nodes) for g in self.graphs.values())

    def type_of(self, scope: str, name: str) -> tuple[TypeProto | None, bool]:
        """(type, inferred?) of a value: the declared type if the file has one, else the inferred (also when the
        file declares a tensor without a shape and inference found one)."""
        g: GraphIndex | None = self.graphs.get(scope)
        while g is not None:
            t = g.declared.get(name)
            if t is not None:
                if t.HasField("tensor_type") and not t.tensor_type.HasField("shape"):
                    found = self.inferred.get(g.scope, {}).get(name)
                    if found is not None and found.HasField("tensor_type") and found.tensor_type.HasField("shape"):
                        return found, True
                return t, False
            t = self.inferred.get(g.scope, {}).get(name)
            if t is not None:
                return t, True
            if name in g.producer:
                return None, False
            g = g.parent
        return None, False

    def set_inferred(self, inferred: dict[str, dict[str, TypeProto]]) -> None:
        self.inferred = inferred

    def refresh_nodes(self, nodes: Iterable[int]) -> bool:
        """Bring the index up to date after edits that changed only the names, doc strings or
        non-graph attributes of these main-graph nodes (see ``Command.index_effect``): their
        problems are checked again and relabelled, nothing else moves. False when that cannot
        be done exactly (the caller then builds a new index)."""
        g = self.main
        changed = set(nodes)
        if not changed:
            return True
        if any(not 0 <= i < len(g.nodes) for i in changed):
            return False
        relabelled = [_relabelled(p, g) if p.node in changed and p.scope == "" else p for p in g.problems]
        if any(p is None for p in relabelled):
            return False
        g.problems = [p for p in relabelled if p is not None]
        if g.read_names is not None:
            for i in changed:
                g.read_names[i] = g.nodes[i].name
        holders = set(g.attribute_holders)
        holders |= {i for i in changed if g.nodes[i].attribute}
        holders -= {i for i in changed if not g.nodes[i].attribute}
        g.attribute_holders = sorted(holders)
        self._extra_problems = [p for p in self._extra_problems if not (p.scope == "" and p.node in changed)]
        for i in sorted(changed):
            self._extra_problems += node_local_problems(self, i)
        return True

    def function_for(self, node: NodeProto) -> FunctionProto | None:
        return self.functions.get((node.domain, node.op_type, getattr(node, "overload", "")))

    # -- building ----------------------------------------------------------------------
    def _index_graph(self, scope: str, graph: GraphProto, parent: GraphIndex | None) -> GraphIndex:
        g = GraphIndex(
            scope=scope, nodes=graph.node, graph=graph, parent=parent,
            input_names=list(map(_NAME, graph.input)),
            output_names=list(map(_NAME, graph.output)),
            initializer_names=list(map(_NAME, graph.initializer)),
        )
        for v in graph.input:
            if v.HasField("type"):
                g.declared[v.name] = v.type
        for v in graph.value_info:
            if v.HasField("type"):
                g.declared.setdefault(v.name, v.type)
        for v in graph.output:
            if v.HasField("type"):
                g.declared.setdefault(v.name, v.type)
        self._define_terminals(g, [t.values.name for t in graph.sparse_initializer])
        self._index_nodes(g)
        return g

    def _index_function(self, key: tuple[str, str, str], fn: FunctionProto) -> None:
        g = GraphIndex(
            scope=function_scope(*key), nodes=fn.node, function=fn,
            input_names=list(fn.input), output_names=list(fn.output), initializer_names=[],
        )
        self._define_terminals(g, [])
        self._index_nodes(g)

    def _define_terminals(self, g: GraphIndex, sparse_names: list[str]) -> None:
        producer = g.producer
        for name, what in self._dupes(g.input_names):
            g.problems.append(Problem(Severity.ERROR, f"graph input '{quoted_name(name)}' is declared {what}",
                                      scope=g.scope, value=name))
        for name in g.input_names:
            producer[name] = GRAPH_INPUT
        for name, what in self._dupes(g.initializer_names + sparse_names):
            g.problems.append(Problem(Severity.ERROR, f"initializer '{quoted_name(name)}' is defined {what}",
                                      scope=g.scope, value=name))
        for name in g.initializer_names + sparse_names:
            producer.setdefault(name, INITIALIZER)
        for name, what in self._dupes(g.output_names):
            g.problems.append(Problem(Severity.ERROR, f"graph output '{quoted_name(name)}' is listed {what}",
                                      scope=g.scope, value=name))

    @staticmethod
    def _dupes(names: Iterable[str]) -> list[tuple[str, str]]:
        counts = Counter(names)
        return [(n, f"{c} times") for n, c in counts.items() if c > 1 and n]

    def _index_nodes(self, g: GraphIndex) -> None:
        self.graphs[g.scope] = g
        if self._structure_only:
            self._index_structure(g)
            return
        producer, consumers = g.producer, g.consumers
        dup_outputs: list[tuple[int, str]] = []
        unresolved: list[tuple[int, str]] = []  # inputs read before anything produced them
        holders = g.attribute_holders
        for i, (inputs, outputs, attributes) in enumerate(map(_NODE_FIELDS, g.nodes)):
            for name in inputs:
                if name:
                    lst = consumers.get(name)
                    if lst is None:
                        consumers[name] = [i]
                    else:
                        lst.append(i)
                    if name not in producer:
                        unresolved.append((i, name))
            for name in outputs:
                if name:
                    if name in producer:
                        dup_outputs.append((i, name))
                    else:
                        producer[name] = i
            if attributes:
                holders.append(i)
        for i, name in dup_outputs:
            g.problems.append(Problem(
                Severity.ERROR, f"value '{quoted_name(name)}' is defined more than once (SSA violation)",
                scope=g.scope, node=i, node_name=g.nodes[i].name, value=name))
        self._check_uses(g, unresolved)
        for i in holders:
            self._index_children(g, i)

    def _index_structure(self, g: GraphIndex) -> None:
        """See ``structure_only``: the graphs in the order a full index has them, with the same producers
        where :meth:`type_of` reads them (a body's; a top graph's are not needed)."""
        producer, holders = g.producer, g.attribute_holders
        outputs: list[str] = []
        names: list[str] = []  # read along, for _undecodable_structure: one reading of each node in all
        body = g.parent is not None
        for i, (attributes, node_outputs, name) in enumerate(map(_STRUCTURE_FIELDS, g.nodes)):
            if attributes:
                holders.append(i)
            if body:
                for value in node_outputs:
                    if value and value not in producer:
                        producer[value] = i
            outputs += node_outputs
            names.append(name)
        g.undecodable_nodes = not (all_text(outputs) and all_text(names))
        for i in holders:
            for attr, k, body in subgraphs_of(g.nodes[i]):
                scope = child_scope(g.scope, i, attr, k)
                self._index_graph(scope, body, g)
                g.children.append((i, attr if k is None else f"{attr}[{k}]", scope))

    def _index_children(self, g: GraphIndex, i: int) -> None:
        for attr, k, body in subgraphs_of(g.nodes[i]):
            scope = child_scope(g.scope, i, attr, k)
            child = self._index_graph(scope, body, g)
            label = attr if k is None else f"{attr}[{k}]"
            g.children.append((i, label, scope))
            # names the body reads from outside count as uses by the holding node
            for name in child.outer_reads:
                if name in g.producer and g.producer[name] >= i and g.producer[name] >= 0:
                    g.problems.append(Problem(
                        Severity.ERROR,
                        f"subgraph {quoted_name(label)} of {quoted_name(g.node_label(i))} reads '{quoted_name(name)}', defined later",
                        scope=g.scope, node=i, node_name=g.nodes[i].name, value=name))
                g.consumers.setdefault(name, [])
                if i not in g.consumers[name]:
                    g.consumers[name].append(i)
                if name not in g.producer:
                    g.outer_reads.add(name)

    def _check_uses(self, g: GraphIndex, unresolved: list[tuple[int, str]]) -> None:
        """Resolve the inputs no earlier node produced: produced later (unsorted), outer scope, or nothing."""
        producer = g.producer
        parent = g.parent
        for i, name in unresolved:
            if name in producer:
                g.unsorted = True  # produced, but by this node or a later one
            elif parent is not None and parent.defines(name):
                g.outer_reads.add(name)
            else:
                g.problems.append(Problem(
                    Severity.ERROR, f"input '{quoted_name(name)}' of {quoted_name(g.node_label(i))} is not defined by anything",
                    scope=g.scope, node=i, node_name=g.nodes[i].name, value=name))
        for name in g.output_names:
            if name and name not in producer and not (parent and parent.defines(name)):
                g.problems.append(Problem(
                    Severity.ERROR, f"graph output '{quoted_name(name)}' is not produced by anything",
                    scope=g.scope, value=name))
        if g.unsorted:
            self._check_order(g)

    def _check_order(self, g: GraphIndex) -> None:
        order, cyclic = topological_order(g.nodes, g.producer)
        g.cyclic_nodes = cyclic
        for i in cyclic:
            g.problems.append(Problem(
                Severity.ERROR, f"{quoted_name(g.node_label(i))} is part of a cycle",
                scope=g.scope, node=i, node_name=g.nodes[i].name))
        if not cyclic:
            g.problems.append(Problem(
                Severity.WARNING, "nodes are not in topological order",
                scope=g.scope, node=order[0] if order else -1, node_name=g.nodes[order[0]].name if order else ""))

    def _check_function_recursion(self) -> None:
        calls: dict[tuple[str, str, str], set[tuple[str, str, str]]] = {}
        for key, fn in self.functions.items():
            calls[key] = {k for n in fn.node
                          if (k := (n.domain, n.op_type, getattr(n, "overload", ""))) in self.functions}
        for key in calls:
            seen: set[tuple[str, str, str]] = set()
            stack = list(calls[key])
            while stack:
                k = stack.pop()
                if k == key:
                    self._extra_problems.append(Problem(
                        Severity.ERROR, f"local function {quoted_name(f'{key[0]}:{key[1]}')} calls itself (recursion)",
                        scope=function_scope(*key)))
                    break
                if k not in seen:
                    seen.add(k)
                    stack.extend(calls.get(k, ()))


def _relabelled(problem: Problem, g: GraphIndex) -> Problem | None:
    """``problem`` of node ``problem.node`` after the node was renamed; None if its message names
    the node ambiguously (the old label appears more than once)."""
    i = problem.node
    node = g.nodes[i]
    old, new = problem.node_name or f"{node.op_type}#{i}", g.node_label(i)
    if problem.node_name == node.name:
        return problem
    # the label stands alone in a message: "... of <label> is ...", "<label>: ...", "<label> is part of ..."
    standalone = re.compile(r"(?:^|(?<=\s))" + re.escape(old) + r"(?=$|[\s:,.])")
    if len(standalone.findall(problem.message)) > 1:
        return None
    message = standalone.sub(lambda _m: new, problem.message)
    return dataclasses.replace(problem, message=message, node_name=node.name)


def topological_order(nodes: Sequence[NodeProto], producer: dict[str, int]) -> tuple[list[int], list[int]]:
    """Kahn's algorithm over node positions.

    Returns (order, cyclic): ``order`` lists every node not on a cycle in a valid
    order (ties keep file order); ``cyclic`` lists the nodes that are on or
    behind a cycle. Always terminates.
    """
    return topological_order_of_inputs([node.input for node in nodes], producer)


def topological_order_of_inputs(inputs: Sequence[Sequence[str]],
                                producer: dict[str, int]) -> tuple[list[int], list[int]]:
    """:func:`topological_order` of nodes given by their input names (already read out of the protobuf)."""
    import heapq

    n = len(inputs)
    indeg = [0] * n
    succ: list[list[int]] = [[] for _ in range(n)]
    for i, names in enumerate(inputs):
        deps = {p for p in (producer.get(x, -1) for x in names if x) if p >= 0}
        if i in deps:
            indeg[i] += 1  # a node reading its own output is a cycle of one
            deps.discard(i)
        for d in deps:
            succ[d].append(i)
        indeg[i] += len(deps)
    heap = [i for i in range(n) if indeg[i] == 0]
    heapq.heapify(heap)
    order: list[int] = []
    while heap:
        i = heapq.heappop(heap)
        order.append(i)
        for j in succ[i]:
            indeg[j] -= 1
            if indeg[j] == 0:
                heapq.heappush(heap, j)
    placed = set(order)
    return order, [i for i in range(n) if i not in placed]


def _undecodable_structure(g: GraphIndex) -> bool:
    """:func:`has_undecodable_names` for a ``structure_only`` index, for what the figures read: the names of
    the graph's inputs, initializers, node outputs, nodes and value infos. (A node input is one of these, or
    names nothing: its text never reaches the figures.) The nodes' were read with the structure."""
    value_infos = [v.name for v in g.graph.value_info] if g.graph is not None else []
    return g.undecodable_nodes or not (all_text(g.producer) and all_text(value_infos))


def index_escaping_text(model: onnx.ModelProto, raw_lengths: Mapping[str, int] | None = None,
                        checks: bool = True, structure_only: bool = False) -> tuple[ModelIndex, list[tuple[bytes, str]]]:
    """The index of a model read from a file, after escaping the text in it that is not valid UTF-8
    (protobuf hands such text back as bytes, which nothing can show or edit); returns the index and
    the (old, new) pairs of what was escaped. The only function that changes a model this way.
    ``raw_lengths``, ``checks``: see :class:`ModelIndex` (``raw_lengths`` of the model as read: not used
    once names are escaped)."""
    index = ModelIndex(model, raw_lengths, checks, structure_only)
    if not index.has_undecodable_text():
        return index, []
    renamed = replace_invalid_utf8(model)
    return ModelIndex(model, checks=checks, structure_only=structure_only), renamed
