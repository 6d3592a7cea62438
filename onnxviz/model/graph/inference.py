"""Shape inference's types, kept apart from the declared ones: onnx's pass, then the contrib operators' and
onnxruntime's symbolic dimensions, each scope's types packed (:class:`PackedTypes`) so a worker sends them cheaply.
What :mod:`~onnxviz.model.graph.validation` and onnxruntime's check (:mod:`~onnxviz.model.graph.session_check`)
both build on."""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import accumulate, compress
from operator import attrgetter
from typing import Any

import onnx
import onnx.onnx_cpp2py_export.shape_inference as onnx_shape_inference  # bytes in, bytes out
from onnx import GraphProto, NodeProto, TypeProto

from onnxviz.model.columns import Texts, pack_column, unpack_column
from onnxviz.model.graph.contrib_shapes import complete_contrib_types, may_complete
from onnxviz.model.graph.index import child_scope, function_scope, subgraphs_of
from onnxviz.model.graph.symbolic_shapes import refine
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
        result.problem = Problem(severity, one_line(exc), source="shape_inference")
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


def one_line(exc: BaseException) -> str:
    """The onnx message as one line: context kept, '==> Context:' and blank lines folded."""
    text = str(exc).strip() or type(exc).__name__
    text = text.replace("==> Context:", "-")
    return " ".join(ln.strip() for ln in text.splitlines() if ln.strip())


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
