"""onnx.checker, shape inference and schema checks, turned into problems attached to nodes and values.

:func:`validate` is what runs in the background after every edit. It works on
serialized bytes (both onnx passes take bytes, so nothing is serialized twice)
and makes one strict shape-inference pass that yields both the inferred types
and the first inference error; only a failing model needs a second, lenient
pass to still get types for the rest of the graph.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import onnx
from onnx import NodeProto, TypeProto

from onnxviz.model.graph.index import ModelIndex, child_scope, function_scope, subgraphs_of
from onnxviz.model.graph.inference import (
    InferenceResult,
    ModelLike,
    PackedScopeTypes,
    PackedTypes,
    infer_types,
    one_line,
    pack_types,
)
from onnxviz.model.graph.node_messages import attach, node_table
from onnxviz.model.graph.node_messages import (
    named_node as named_node,  # these, for the readers that import them here
)
from onnxviz.model.graph.node_messages import walk_nodes as walk_nodes
from onnxviz.model.graph.opschema import node_schema
from onnxviz.model.graph.slim import slimmed
from onnxviz.model.graph.slim import without_big_weights as without_big_weights
from onnxviz.model.graph.slim import without_weight_data as without_weight_data
from onnxviz.model.io.external import is_external, iter_all_tensors
from onnxviz.model.problems import Problem, Severity


def check_model(model: ModelLike, index: ModelIndex | None = None) -> list[Problem]:
    """``onnx.checker`` plus strict shape inference (together the checker's full check), as problems.

    Each of the two stops at its first error, so at most one problem comes
    from each; :func:`schema_problems` finds every attribute problem. Both run on the model
    without its big weights (:func:`slimmed`).
    """
    proto, _, light = slimmed(model)
    problems = _as_problems(checker_problem(light), infer_types(light, strict=True, contrib=False).problem)
    return [attach(p, node_table(proto, index)) for p in problems]


_INFERENCE_ITEM = re.compile(r"\(op_type:([^,]*), node name: ([^)]*)\): \[(\w+)\] (.*?)(?= \(op_type:|$)")


def _as_problems(*found: Problem | None) -> list[Problem]:
    return [q for p in found if p is not None for q in split_inference_errors(p)]


def split_inference_errors(problem: Problem) -> list[Problem]:
    """onnx reports every failing node of an inference pass in one message: one problem per node.

    The first node's error is the cause; nodes that only lack an input type
    because of it are only informational, so the node to fix stands out.
    """
    items = _INFERENCE_ITEM.findall(problem.message) if problem.source == "shape_inference" else []
    if len(items) < 2:
        return [problem]
    out: list[Problem] = []
    for op_type, name, kind, text in items:
        consequence = bool(out) and "expected to have type but instead is null" in text
        severity = Severity.INFO if consequence else problem.severity
        message = f"{kind}: {text.strip()} (op_type:{op_type}, node name: {name})"
        if consequence:
            message = f"no type for an input, after an earlier error - {message}"
        out.append(Problem(severity, message, source=problem.source, scope=problem.scope))
    return out


def checker_problem(model: ModelLike) -> Problem | None:
    try:
        onnx.checker.check_model(_without_external_data(model), full_check=False)
    except Exception as exc:  # noqa: BLE001 - ValidationError and protobuf errors alike
        return Problem(Severity.ERROR, one_line(exc), source="checker")
    return None


def _without_external_data(model: ModelLike) -> ModelLike:
    """The model with each external tensor replaced by a one-element stand-in.

    The checker resolves external files against the current directory when
    given bytes; the document checks its external data itself (see
    :func:`onnxviz.model.io.external.check_external_data`), so here only the rest
    of the model is checked.
    """

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
def schema_problems(model: onnx.ModelProto) -> list[Problem]:
    """Attributes an operator's schema requires but the node lacks.

    (Attributes the schema does not know and attributes of the wrong type are
    reported by the index, see :mod:`onnxviz.model.graph.checks`, on every
    rebuild; the checker stops at the first of these, so each would otherwise
    hide the others.) In the order of :func:`walk_nodes`.
    """
    problems: list[Problem] = []
    required: dict[tuple[str, str], list[str]] = {}
    _schema_problems_in(model, "", model.graph.node, required, problems, bodies=True)
    for fn in model.functions:
        scope = function_scope(fn.domain, fn.name, getattr(fn, "overload", ""))
        _schema_problems_in(model, scope, fn.node, required, problems, bodies=False)
    return problems


def _schema_problems_in(model: onnx.ModelProto, scope: str, nodes: Sequence[NodeProto],
                        required: dict[tuple[str, str], list[str]], problems: list[Problem], bodies: bool) -> None:
    """:func:`schema_problems` of ``nodes`` (and, with ``bodies``, of the bodies they hold, after each holder),
    in one pass that reads each node's operator and attributes once."""
    for i, node in enumerate(nodes):
        key = (node.op_type, node.domain)
        names = required.get(key)
        if names is None:
            schema = node_schema(model, node)
            names = required[key] = [] if schema is None else [n for n, a in schema.attributes.items() if a.required]
        attributes = node.attribute
        if names:
            present = {a.name for a in attributes}
            for name in names:
                if name not in present:
                    where = node.name or f"{node.op_type} #{i}"
                    problems.append(Problem(Severity.ERROR, f"{where}: {node.op_type} requires attribute '{name}'",
                                            "validation", scope, i, node.name))
        if bodies and attributes:
            for attr, k, body in subgraphs_of(node):
                _schema_problems_in(model, child_scope(scope, i, attr, k), body.node, required, problems, bodies)


@dataclass
class ValidationResult:
    """Everything one background validation pass found, for one model state."""

    generation: int
    inference: InferenceResult
    problems: list[Problem]


def first_problems(proto: onnx.ModelProto, light: bytes, index: ModelIndex | None = None) -> list[Problem]:
    """The checker's and the schema checks' problems, attached to their nodes: found in a fraction of
    shape inference's time, so they can be shown first (see :func:`validate`). ``light``: the model's
    bytes for the checker, without its big weights (:func:`slimmed`)."""
    problems = _as_problems(checker_problem(light))
    if problems:
        table = node_table(proto, index)
        problems = [attach(p, table) for p in problems]
    return problems + schema_problems(proto)


def validate(model: ModelLike, index: ModelIndex | None, generation: int,
             runtime: bool = True, first: list[Problem] | None = None,
             parsed: onnx.ModelProto | None = None) -> ValidationResult:
    """Shape inference (types kept apart from declared ones), checker and schema problems, then,
    with ``runtime`` and when these found no error, what onnxruntime refuses
    (:mod:`onnxviz.model.graph.session_check`); never raises.

    ``model`` may be the serialized bytes (what the background service passes; it asks for
    onnxruntime's check in a second, later pass). ``first``: :func:`first_problems` of the same
    model, when already found (they are not looked for again); ``parsed``: ``model``'s bytes parsed, when at hand.
    """
    proto, data, light = slimmed(model, parsed)
    if first is None:
        first = first_problems(proto, light, index)
    inference = infer_types(light, strict=True)
    problems = _as_problems(inference.problem)
    if inference.problem is not None:
        inference = infer_types(light)  # lenient: types for everything that can still be inferred
        table = node_table(proto, index)
        problems = [attach(p, table) for p in problems]
    problems = first + problems
    if runtime and not has_error(problems + (index.problems if index is not None else [])):
        from onnxviz.model.graph.session_check import runtime_problems  # it builds on this module

        problems += runtime_problems(proto, data, light)
    return ValidationResult(generation, inference, problems)


def has_error(problems: list[Problem]) -> bool:
    return any(p.severity == Severity.ERROR for p in problems)


@dataclass
class PackedValidation:
    """A :class:`ValidationResult` as cheap-to-pickle data, for passing between processes.

    Pickling a TypeProto costs a Python call each; the types of a scope travel as :class:`PackedScopeTypes`.
    """

    generation: int
    types: dict[str, PackedScopeTypes]
    inference_problem: Problem | None
    problems: list[Problem]


def validate_packed(data: bytes, generation: int) -> PackedValidation:
    """:func:`validate` for a worker process (onnxruntime's check aside): serialized bytes in,
    :class:`PackedValidation` out."""
    return pack(validate(data, None, generation, runtime=False))


def pack(result: ValidationResult) -> PackedValidation:
    types = {scope: pack_types(table) for scope, table in result.inference.types.items()}
    return PackedValidation(result.generation, types, result.inference.problem, result.problems)


def unpack(packed: PackedValidation) -> ValidationResult:
    """The :class:`ValidationResult` a :class:`PackedValidation` stands for."""
    types: dict[str, Mapping[str, TypeProto]] = {scope: PackedTypes(scope_types)
                                                 for scope, scope_types in packed.types.items()}
    return ValidationResult(packed.generation, InferenceResult(types, packed.inference_problem),  # type: ignore[arg-type]
                            packed.problems)


def node_badges(problems: list[Problem]) -> dict[tuple[str, int], str]:
    """(scope, node) -> "error" or "warning" for every node a problem is attached to."""
    badges: dict[tuple[str, int], str] = {}
    words = {Severity.ERROR: Severity.ERROR.value, Severity.WARNING: Severity.WARNING.value}  # .value is slow
    for p in problems:
        word = words.get(p.severity) if p.node >= 0 else None
        if word is None:
            continue
        key = (p.scope, p.node)
        if badges.get(key) != "error":
            badges[key] = word
    return badges
