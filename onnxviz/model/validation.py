"""onnx.checker and shape inference, turned into problems attached to nodes and values."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import onnx
from onnx import GraphProto, TypeProto

from onnxviz.model.index import ModelIndex, child_scope, function_scope, subgraphs_of
from onnxviz.model.problems import Problem, Severity


@dataclass
class InferenceResult:
    """Types found by ``onnx.shape_inference`` per scope, kept apart from declared ones."""

    types: dict[str, dict[str, TypeProto]] = field(default_factory=dict)
    problem: Problem | None = None


def infer_types(model: onnx.ModelProto, data_prop: bool = True) -> InferenceResult:
    """Run shape inference; never raises. On failure the result carries the reason."""
    result = InferenceResult()
    try:
        inferred = onnx.shape_inference.infer_shapes(model, check_type=False, strict_mode=False,
                                                     data_prop=data_prop)
    except Exception as exc:  # noqa: BLE001 - inference fails on countless broken models
        result.problem = Problem(Severity.WARNING, f"shape inference failed: {_first_line(exc)}",
                                 source="shape_inference")
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


def check_model(model: onnx.ModelProto, index: ModelIndex | None = None) -> list[Problem]:
    """Full ``onnx.checker`` pass plus strict shape inference, as problems.

    The checker stops at its first error, so at most one problem comes from
    each of the two; the index contributes its own structural problems separately.
    """
    problems: list[Problem] = []
    try:
        onnx.checker.check_model(model, full_check=False)
    except Exception as exc:  # noqa: BLE001 - ValidationError and protobuf errors alike
        problems.append(_attach(Problem(Severity.ERROR, _first_line(exc), source="checker"), index))
    try:
        onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True, data_prop=True)
    except Exception as exc:  # noqa: BLE001
        problems.append(_attach(Problem(Severity.ERROR, _first_line(exc), source="shape_inference"), index))
    return problems


_NODE_RE = re.compile(r"[Nn]ode \(([^)]*)\)|node with name[: ]+'?([^'\s,]+)")


def _attach(problem: Problem, index: ModelIndex | None) -> Problem:
    """Point a checker message at the node it names, when it names one we can find."""
    if index is None:
        return problem
    m = _NODE_RE.search(problem.message)
    if not m:
        return problem
    name = m.group(1) or m.group(2) or ""
    for scope, g in index.graphs.items():
        for i, node in enumerate(g.nodes):
            if node.name == name and name:
                return Problem(problem.severity, problem.message, problem.source, scope, i, name, problem.value)
    return problem


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    # onnx prefixes messages with "[ShapeInferenceError]" and similar; keep the useful line
    return lines[-1] if len(lines) > 1 and len(lines[0]) < 12 else lines[0]


@dataclass
class ValidationResult:
    """Everything one background validation pass found, for one model state."""

    generation: int
    inference: InferenceResult
    problems: list[Problem]


def validate(model: onnx.ModelProto, index: ModelIndex | None, generation: int) -> ValidationResult:
    """Shape inference (kept apart from declared types) plus checker problems; never raises."""
    inference = infer_types(model)
    problems = check_model(model, index)
    if problems and index is None:
        problems = check_model(model, ModelIndex(model))  # rare: attach messages to nodes
    if inference.problem is not None and not any(p.source == "shape_inference" for p in problems):
        problems.append(inference.problem)
    return ValidationResult(generation, inference, problems)
