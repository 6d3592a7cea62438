"""onnx.checker, shape inference and schema checks, turned into problems attached to nodes and values.

:func:`validate` is what runs in the background after every edit. It works on
serialized bytes (both onnx passes take bytes, so nothing is serialized twice)
and makes one strict shape-inference pass that yields both the inferred types
and the first inference error; only a failing model needs a second, lenient
pass to still get types for the rest of the graph.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

import onnx
from onnx import GraphProto, NodeProto, TypeProto

from onnxviz.model.index import ModelIndex, child_scope, function_scope, subgraphs_of
from onnxviz.model.opschema import node_schema
from onnxviz.model.problems import Problem, Severity

ModelLike = onnx.ModelProto | bytes


@dataclass
class InferenceResult:
    """Types found by ``onnx.shape_inference`` per scope, kept apart from declared ones."""

    types: dict[str, dict[str, TypeProto]] = field(default_factory=dict)
    problem: Problem | None = None


def infer_types(model: ModelLike, data_prop: bool = True, strict: bool = False) -> InferenceResult:
    """Run shape inference; never raises. On failure the result carries the reason (and no types)."""
    result = InferenceResult()
    try:
        inferred = onnx.shape_inference.infer_shapes(model, check_type=strict, strict_mode=strict,
                                                     data_prop=data_prop)
    except Exception as exc:  # noqa: BLE001 - inference fails on countless broken models
        severity = Severity.ERROR if strict else Severity.WARNING
        result.problem = Problem(severity, _one_line(exc), source="shape_inference")
        return result
    _collect_types("", inferred.graph, result.types)
    for fn in inferred.functions:
        scope = function_scope(fn.domain, fn.name, getattr(fn, "overload", ""))
        result.types[scope] = {v.name: v.type for v in getattr(fn, "value_info", []) if v.HasField("type")}
    return result


def _collect_types(scope: str, graph: GraphProto, out: dict[str, dict[str, TypeProto]]) -> None:
    types = {v.name: v.type for v in graph.value_info if v.HasField("type")}
    for v in graph.output:
        if v.HasField("type"):
            types.setdefault(v.name, v.type)
    out[scope] = types
    for i, node in enumerate(graph.node):
        for attr, k, body in subgraphs_of(node):
            _collect_types(child_scope(scope, i, attr, k), body, out)


def check_model(model: ModelLike, index: ModelIndex | None = None) -> list[Problem]:
    """``onnx.checker`` plus strict shape inference (together the checker's full check), as problems.

    Each of the two stops at its first error, so at most one problem comes
    from each; :func:`schema_problems` finds every attribute problem.
    """
    problems = [p for p in (_checker_problem(model), infer_types(model, strict=True).problem) if p]
    return [attach(p, _node_table(model, index)) for p in problems]


def _checker_problem(model: ModelLike) -> Problem | None:
    try:
        onnx.checker.check_model(_without_external_data(model), full_check=False)
    except Exception as exc:  # noqa: BLE001 - ValidationError and protobuf errors alike
        return Problem(Severity.ERROR, _one_line(exc), source="checker")
    return None


def _without_external_data(model: ModelLike) -> ModelLike:
    """The model with each external tensor replaced by a one-element stand-in.

    The checker resolves external files against the current directory when
    given bytes; the document checks its external data itself (see
    :func:`onnxviz.model.external.check_external_data`), so here only the rest
    of the model is checked.
    """
    from onnxviz.model.external import is_external, iter_all_tensors

    if isinstance(model, bytes) and b"location" not in model:
        return model
    proto = onnx.ModelProto.FromString(model) if isinstance(model, bytes) else model
    external = [t for t in iter_all_tensors(proto) if is_external(t)]
    if not external:
        return model
    if proto is model:
        proto = onnx.ModelProto()
        proto.CopyFrom(model)
        external = [t for t in iter_all_tensors(proto) if is_external(t)]
    for t in external:
        del t.external_data[:]
        t.data_location = onnx.TensorProto.DEFAULT
        t.dims[:] = [1] * len(t.dims)
        t.raw_data = b"\0" * max(1, onnx.helper.tensor_dtype_to_np_dtype(t.data_type).itemsize)
    return proto.SerializeToString()


# -- our own checks ------------------------------------------------------------------------
def walk_nodes(model: onnx.ModelProto) -> Iterator[tuple[str, int, NodeProto]]:
    """(scope, position, node) of every node in every graph, subgraph and local function."""
    def graph_nodes(scope: str, graph: GraphProto) -> Iterator[tuple[str, int, NodeProto]]:
        for i, node in enumerate(graph.node):
            yield scope, i, node
            if node.attribute:
                for attr, k, body in subgraphs_of(node):
                    yield from graph_nodes(child_scope(scope, i, attr, k), body)

    yield from graph_nodes("", model.graph)
    for fn in model.functions:
        scope = function_scope(fn.domain, fn.name, getattr(fn, "overload", ""))
        for i, node in enumerate(fn.node):
            yield scope, i, node


def schema_problems(model: onnx.ModelProto) -> list[Problem]:
    """Attributes the operator's schema does not allow, has another type for, or requires."""
    problems: list[Problem] = []
    for scope, i, node in walk_nodes(model):
        schema = node_schema(model, node)
        if schema is None:
            continue
        allowed = schema.attributes
        where = node.name or f"{node.op_type} #{i}"

        def add(message: str, scope: str = scope, i: int = i, node: NodeProto = node) -> None:
            problems.append(Problem(Severity.ERROR, message, "validation", scope, i, node.name))

        for attr in node.attribute:
            spec = allowed.get(attr.name)
            if spec is None:
                add(f"{where}: {node.op_type} has no attribute '{attr.name}'")
            elif attr.type != spec.type and not attr.ref_attr_name:
                expected = onnx.AttributeProto.AttributeType.Name(spec.type).lower()
                got = onnx.AttributeProto.AttributeType.Name(attr.type).lower()
                add(f"{where}: attribute '{attr.name}' must be {expected}, not {got}")
        present = {a.name for a in node.attribute}
        for name, spec in allowed.items():
            if spec.required and name not in present:
                add(f"{where}: {node.op_type} requires attribute '{name}'")
    return problems


# -- attaching messages to nodes ----------------------------------------------------------
_NODE_PATTERNS = (
    re.compile(r"node name:\s*([^)]*?)\s*\)", re.IGNORECASE),
    re.compile(r"\bname:\s*(\S.*?)\s+OpType:", re.IGNORECASE),
    re.compile(r"[Nn]ode \(([^)]*)\)"),
    re.compile(r"node with name[: ]+'?([^'\s,]+)"),
)


def _node_table(model: ModelLike, index: ModelIndex | None) -> dict[str, tuple[str, int]]:
    table: dict[str, tuple[str, int]] = {}
    if index is not None:
        for scope, g in index.graphs.items():
            for i, n in enumerate(g.nodes):
                if n.name:
                    table.setdefault(n.name, (scope, i))
        return table
    proto = onnx.ModelProto.FromString(model) if isinstance(model, bytes) else model
    for scope, i, n in walk_nodes(proto):
        if n.name:
            table.setdefault(n.name, (scope, i))
    return table


def attach(problem: Problem, nodes: dict[str, tuple[str, int]]) -> Problem:
    """Point a checker or inference message at the node it names, when it names one we can find."""
    for pattern in _NODE_PATTERNS:
        m = pattern.search(problem.message)
        if m and m.group(1) in nodes:
            scope, i = nodes[m.group(1)]
            return Problem(problem.severity, problem.message, problem.source, scope, i, m.group(1), problem.value)
    return problem


def _one_line(exc: BaseException) -> str:
    """The onnx message as one line: context kept, '==> Context:' and blank lines folded."""
    text = str(exc).strip() or type(exc).__name__
    text = text.replace("==> Context:", "-")
    return " ".join(ln.strip() for ln in text.splitlines() if ln.strip())


@dataclass
class ValidationResult:
    """Everything one background validation pass found, for one model state."""

    generation: int
    inference: InferenceResult
    problems: list[Problem]


def validate(model: ModelLike, index: ModelIndex | None, generation: int) -> ValidationResult:
    """Shape inference (types kept apart from declared ones), checker and schema problems; never raises.

    ``model`` may be the serialized bytes (what the background service passes).
    """
    data = model if isinstance(model, bytes) else model.SerializeToString()
    inference = infer_types(data, strict=True)
    problems = [p for p in (_checker_problem(data), inference.problem) if p]
    if inference.problem is not None:
        inference = infer_types(data)  # lenient: types for everything that can still be inferred
    proto = onnx.ModelProto.FromString(data) if isinstance(model, bytes) else model
    if problems:
        table = _node_table(proto, index)
        problems = [attach(p, table) for p in problems]
    problems += schema_problems(proto)
    return ValidationResult(generation, inference, problems)


def node_badges(problems: list[Problem]) -> dict[tuple[str, int], str]:
    """(scope, node) -> "error" or "warning" for every node a problem is attached to."""
    badges: dict[tuple[str, int], str] = {}
    for p in problems:
        if p.node < 0 or p.severity not in (Severity.ERROR, Severity.WARNING):
            continue
        key = (p.scope, p.node)
        if badges.get(key) != "error":
            badges[key] = p.severity.value
    return badges
