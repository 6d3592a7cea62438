"""onnx.checker, shape inference and schema checks, turned into problems attached to nodes and values.

:func:`validate` is what runs in the background after every edit. It works on
serialized bytes (both onnx passes take bytes, so nothing is serialized twice)
and makes one strict shape-inference pass that yields both the inferred types
and the first inference error; only a failing model needs a second, lenient
pass to still get types for the rest of the graph.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import accumulate, compress
from operator import attrgetter, or_
from typing import Any

import onnx
import onnx.onnx_cpp2py_export.shape_inference as onnx_shape_inference  # bytes in, bytes out
from google.protobuf.message import Message
from onnx import GraphProto, NodeProto, TypeProto

from onnxviz.model.columns import Texts, pack_column, unpack_column
from onnxviz.model.graph.contrib_shapes import complete_contrib_types, may_complete
from onnxviz.model.graph.index import ModelIndex, child_scope, function_scope, subgraphs_of
from onnxviz.model.graph.opschema import node_schema
from onnxviz.model.graph.symbolic_shapes import refine
from onnxviz.model.graph.tensors import declared_sizes
from onnxviz.model.io.external import external_flags, is_external, iter_all_tensors
from onnxviz.model.io.partial import BYTES, SAME, partial_messages
from onnxviz.model.problems import Problem, Severity

ModelLike = onnx.ModelProto | bytes


@dataclass
class InferenceResult:
    """Types found by ``onnx.shape_inference`` per scope, kept apart from declared ones."""

    types: dict[str, dict[str, TypeProto]] = field(default_factory=dict)
    problem: Problem | None = None


def infer_types(model: ModelLike, data_prop: bool = True, strict: bool = False, contrib: bool = True,
                symbolic: bool = True) -> InferenceResult:
    """Run shape inference; never raises. On failure the result carries the reason (and no types).

    onnx leaves the outputs of onnxruntime's contrib operators (and all after them) untyped: unless not
    ``contrib``, a second pass types them (:func:`~onnxviz.model.graph.contrib_shapes.complete_contrib_types`);
    then, unless every value has a size already, onnxruntime's symbolic shape inference adds the dimensions onnx
    leaves unknown (:mod:`~onnxviz.model.graph.symbolic_shapes`), unless not ``symbolic``.
    The inferred model's bytes are read with :func:`_inferred_model` (names and serialized types only): onnx's
    ``infer_shapes`` would parse them all into a ModelProto whose 123k types are then serialized again."""
    result = InferenceResult()
    data = model if isinstance(model, bytes) else model.SerializeToString()
    try:
        inferred = onnx_shape_inference.infer_shapes(data, strict, strict, data_prop)
    except Exception as exc:  # noqa: BLE001 - inference fails on countless broken models
        severity = Severity.ERROR if strict else Severity.WARNING
        result.problem = Problem(severity, _one_line(exc), source="shape_inference")
        return result
    read = _inferred_model().FromString(inferred)
    foreign = contrib and may_complete(read.graph.node)
    if foreign:
        completed = complete_contrib_types(onnx.ModelProto.FromString(inferred), data_prop)
        read = _inferred_model().FromString(completed.SerializeToString())
    _collect_types("", read.graph, result.types)
    for fn in read.functions:
        scope = function_scope(fn.domain, fn.name, getattr(fn, "overload", ""))
        result.types[scope] = _scope_types((), getattr(fn, "value_info", ()))  # type: ignore[assignment]  # a Mapping
    if contrib and symbolic and (foreign or not all_static(result.types)):
        _add_symbolic(data, result.types)
    return result


def all_static(types: Mapping[str, Mapping[str, TypeProto]]) -> bool:
    """Whether every type of ``types`` is a tensor type of known size (each distinct packed type read once)."""
    for table in types.values():
        distinct = table.grouped()[1] if isinstance(table, PackedTypes) else table.values()
        for t in distinct:
            if t.WhichOneof("value") != "tensor_type" or not t.tensor_type.HasField("shape") or \
                    not all(d.HasField("dim_value") for d in t.tensor_type.shape.dim):
                return False
    return True


def _add_symbolic(data: bytes, types: dict[str, dict[str, TypeProto]]) -> None:
    """``types`` (onnx's, per scope) with what onnxruntime's symbolic shape inference adds
    (:func:`~onnxviz.model.graph.symbolic_shapes.refine`): each scope it changed packed again."""
    try:
        model = onnx.ModelProto.FromString(data)
    except Exception:  # noqa: BLE001 - onnx's types stand
        return
    for scope, changed in refine(model, types).items():
        table = types.get(scope, {})
        serialized = {name: t.SerializeToString() for name, t in table.items()}
        serialized.update((name, t.SerializeToString()) for name, t in changed.items())
        types[scope] = PackedTypes(_packed(serialized))  # type: ignore[assignment]  # a Mapping, read only


def _inferred_model() -> Any:
    """The type that reads of an inferred model only where its types are: each graph's (and each body's)
    value infos and outputs, each function's value infos, as names and serialized types (:mod:`.partial`)."""
    return partial_messages("inferred", {
        "Model": (onnx.ModelProto.DESCRIPTOR, {"graph": "Graph", "functions": "Function"}),
        "Graph": (GraphProto.DESCRIPTOR, {"node": "Node", "output": "Value", "value_info": "Value"}),
        "Node": (NodeProto.DESCRIPTOR, {"attribute": "Attribute", "domain": SAME}),
        "Attribute": (onnx.AttributeProto.DESCRIPTOR, {"name": SAME, "type": SAME, "g": "Graph", "graphs": "Graph"}),
        "Value": (onnx.ValueInfoProto.DESCRIPTOR, {"name": SAME, "type": BYTES}),
        "Function": (onnx.FunctionProto.DESCRIPTOR, {"name": SAME, "domain": SAME, "overload": SAME,
                                                     "value_info": "Value"}),
    })["Model"]


def _collect_types(scope: str, graph: Any, out: dict[str, dict[str, TypeProto]]) -> None:
    """The inferred types of ``graph`` (read by :func:`_inferred_model`) and of the bodies it holds, each
    scope's packed (:class:`PackedTypes`: no TypeProto made per value; a worker sends them as they are)."""
    out[scope] = _scope_types(graph.value_info, graph.output)  # type: ignore[assignment]  # a Mapping, read only
    nodes = graph.node
    for i in compress(range(len(nodes)), map(_ATTRIBUTES, nodes)):
        for attr, k, body in subgraphs_of(nodes[i]):
            _collect_types(child_scope(scope, i, attr, k), body, out)


def _scope_types(written: Sequence[Any], declared: Sequence[Any]) -> PackedTypes:
    """One scope's types: of the value infos inference ``written`` (each typed), then of the ``declared``
    ones (a graph's outputs, a function's value infos) that have one."""
    types = dict(zip(map(_NAME, written), map(_TYPE, written), strict=True))
    for v in declared:
        if v.HasField("type"):
            types.setdefault(v.name, v.type)
    return PackedTypes(_packed(types))


_NAME, _TYPE, _ATTRIBUTES = attrgetter("name"), attrgetter("type"), attrgetter("attribute")


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
        return Problem(Severity.ERROR, _one_line(exc), source="checker")
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


# -- attaching messages to nodes ----------------------------------------------------------
_NODE_PATTERNS = (  # onnx's and onnxruntime's ways of naming a node
    re.compile(r"node name:\s*([^)]*?)\s*\)", re.IGNORECASE),
    re.compile(r"\bname:\s*(\S.*?)\s+OpType:", re.IGNORECASE),
    re.compile(r"[Nn]ode \(([^)]*)\)"),
    re.compile(r"node name \(([^)]*)\)"),
    re.compile(r"In Node, \(\"([^\"]*)\""),
    re.compile(r"node with name '([^']*)'"),
    re.compile(r"node with name[: ]+'?([^'\s,]+)"),
)


def node_table(model: ModelLike, index: ModelIndex | None) -> dict[str, tuple[str, int]]:
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
    found = named_node(problem.message, nodes)
    if found is None:
        return problem
    (scope, i), name = found
    return Problem(problem.severity, problem.message, problem.source, scope, i, name, problem.value)


def named_node(text: str, nodes: dict[str, tuple[str, int]]) -> tuple[tuple[str, int], str] | None:
    """((scope, position), name) of the first node of ``nodes`` (by name) that ``text`` names."""
    for pattern in _NODE_PATTERNS:
        m = pattern.search(text)
        if m and m.group(1) in nodes:
            return nodes[m.group(1)], m.group(1)
    return None


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


@dataclass(frozen=True)
class PackedScopeTypes:
    """One scope's inferred types as a few flat objects: the value names, each distinct type once (serialized,
    joined, with where each ends) and which of them each name has. A model of repeated layers has 100k+
    values but a few hundred distinct types: packing, pickling and reading them back costs that much. The
    names are joined too: a list of 123k strings (un)pickles in one call holding the GIL for tens of
    milliseconds (the window's thread waits), one string in a copy."""

    names: Texts | list[str]  # packed (pack_column): a list when one is bytes (invalid UTF-8)
    blob: bytes
    ends: array[int]
    picks: array[int]  # per name, its type's position among the distinct ones


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


def pack_types(table: Mapping[str, TypeProto]) -> PackedScopeTypes:
    """The types of one scope packed (:class:`PackedScopeTypes`); those inference found are packed already."""
    if isinstance(table, PackedTypes):
        return table.packed
    return _packed({name: t.SerializeToString() for name, t in table.items()})


def _packed(table: dict[str, bytes]) -> PackedScopeTypes:
    """Serialized types by value name, packed: each distinct one once, in the order they first occur."""
    distinct = {key: k for k, key in enumerate(dict.fromkeys(table.values()))}
    picks = array("q", map(distinct.__getitem__, table.values()))
    return PackedScopeTypes(pack_column(list(table)), b"".join(distinct), array("q", accumulate(map(len, distinct))),
                            picks)


class PackedTypes(Mapping[str, TypeProto]):
    """One scope's inferred types (:class:`PackedScopeTypes`), as inference found them or from a worker: a
    TypeProto is made when a type is first read, once for all the names that have it (they are read, never
    changed), and the table of names when one is first looked up (a worker only sends them on).

    Unpacking 123k of them at once made as many Python objects, and the garbage collector's
    passes over them held the GIL for a quarter of a second; names and positions are not tracked.
    """

    def __init__(self, packed: PackedScopeTypes) -> None:
        self.packed = packed
        self._blob, self._ends = packed.blob, packed.ends
        self._types: dict[int, TypeProto] = {}

    @cached_property
    def _at(self) -> dict[str, int]:
        return dict(zip(unpack_column(self.packed.names), self.packed.picks, strict=True))

    def __getitem__(self, name: str) -> TypeProto:
        return self._type(self._at[name])

    def _type(self, k: int) -> TypeProto:
        found = self._types.get(k)
        if found is None:
            found = self._types[k] = TypeProto.FromString(self._blob[self._ends[k - 1] if k else 0:self._ends[k]])
        return found

    def grouped(self) -> tuple[Mapping[str, int], list[TypeProto]]:
        """(each name's position among the distinct types, those types): what is read of each distinct type
        is then found for all the names at once."""
        return self._at, [self._type(k) for k in range(len(self._ends))]

    def get(self, name: str, default: TypeProto | None = None) -> TypeProto | None:  # type: ignore[override]
        return self[name] if name in self._at else default

    def __iter__(self) -> Iterator[str]:
        return iter(self._at)

    def __len__(self) -> int:
        return len(self.packed.names)  # the table of names is not made for it


def unpack(packed: PackedValidation) -> ValidationResult:
    """The :class:`ValidationResult` a :class:`PackedValidation` stands for."""
    types: dict[str, Mapping[str, TypeProto]] = {scope: PackedTypes(scope_types)
                                                 for scope, scope_types in packed.types.items()}
    return ValidationResult(packed.generation, InferenceResult(types, packed.inference_problem),  # type: ignore[arg-type]
                            packed.problems)


BIG_WEIGHT = 4096  # bytes; shape computations read only small constants


def slimmed(model: ModelLike, parsed: onnx.ModelProto | None = None) -> tuple[onnx.ModelProto, bytes | None, bytes]:
    """(the model, its bytes if given as bytes, the bytes the checker, shape inference and onnxruntime
    get: :func:`without_big_weights`). A model given as a message is never serialized whole; ``parsed``:
    the bytes ``model`` parsed, when at hand."""
    data = model if isinstance(model, bytes) else None
    proto = parsed if parsed is not None else onnx.ModelProto.FromString(model) if isinstance(model, bytes) else model
    try:
        light = without_big_weights(proto, data)
    except Exception:  # noqa: BLE001 - a model too odd to slim down is checked as it is
        light = data if data is not None else proto.SerializeToString()
    return proto, data, light


def without_big_weights(proto: onnx.ModelProto, data: bytes | None = None, force: bool = False) -> bytes:
    """The model for the checker, shape inference and onnxruntime's check, its large main-graph
    initializers turned into typed graph inputs, and its externally stored ones too (so no file is read).

    They need their types and shapes, never their values, and would otherwise copy every weight in
    and out of C++ twice per pass. Which are large is decided by their dims and type: no tensor is
    serialized or copied to find out. ``data``: the model's bytes, when the caller has them; unless
    ``force``, they are returned when copying the graph would cost more than passing the weights through.
    """
    initializers = proto.graph.initializer
    big, external, sizes = _big_ones(initializers)
    if not any(big):
        return data if data is not None else proto.SerializeToString()
    if data is not None and not force and not any(external):
        weight_bytes = sum(compress(sizes, big))
        if weight_bytes < 8 * (len(data) - weight_bytes):
            return data
    light = onnx.ModelProto()
    keep = {t.name for t in compress(initializers, big)}
    graph = proto.graph
    light.CopyFrom(_shell(proto))
    light.graph.initializer.extend(t for t in graph.initializer if t.name not in keep)
    declared = {v.name for v in graph.input}
    light.graph.input.extend(onnx.helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
                             for t in compress(initializers, big) if t.name not in declared)
    return light.SerializeToString()


def _big_ones(tensors: Sequence[onnx.TensorProto]) -> tuple[list[bool], list[bool], list[int]]:
    """(big?, stored externally?, declared bytes) of each tensor: big if external or above :data:`BIG_WEIGHT`.
    Read in two passes over them, each tensor's message made once per pass (48k initializers: 60 -> 40 ms)."""
    sizes = declared_sizes(tensors)
    external = external_flags(tensors)
    return list(map(or_, external, map(BIG_WEIGHT.__lt__, sizes))), external, sizes


def without_weight_data(proto: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of the model whose big main-graph initializers keep their name, type and dims but hold no
    data: what background analysis needs (validation turns them into typed inputs, see
    :func:`without_big_weights`; the model's figures count their dims). The weights are never copied."""
    hollow = _shell(proto)
    initializers = list(proto.graph.initializer)
    big, external, _ = _big_ones(initializers)
    for t, is_big, outside in zip(initializers, big, external, strict=True):
        if not is_big or outside:
            hollow.graph.initializer.append(t)
        else:
            hollow.graph.initializer.add(name=t.name, data_type=t.data_type, dims=t.dims)
    return hollow


def _shell(proto: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of the model without the main graph's initializers (copied field by field, not the weights)."""
    shell = onnx.ModelProto()
    _copy_fields(proto, shell, skip="graph")
    _copy_fields(proto.graph, shell.graph, skip="initializer")
    return shell


def _copy_fields(src: Message, dst: Message, skip: str) -> None:
    for descriptor, value in src.ListFields():
        name = descriptor.name
        if name == skip:
            continue
        if isinstance(value, Message):
            getattr(dst, name).CopyFrom(value)
        elif isinstance(value, str | bytes | int | float):
            setattr(dst, name, value)
        else:
            getattr(dst, name).extend(value)


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
