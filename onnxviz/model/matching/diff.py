"""What changed between two models, on the node alignment of :mod:`.align`.

:func:`diff_models` returns a :class:`ModelDiff`: one :class:`Difference` per change, in a stable
order (the model's fields, then graph by graph - main graph first, then bodies and functions by
scope - inputs, outputs, weights, value_info, then nodes in A's file order and added nodes in B's).
Kinds (:data:`KINDS`): model fields, graph inputs/outputs (added, removed, changed type or name),
weights (added, removed, changed name, dtype, shape or values with max |diff|, relative error and
cosine), value_info types, functions and nodes (added, removed, changed: name, op type, domain,
attributes, inputs rewired). ``weights`` pairs quantized weights with their partners (:mod:`.weights`). A consumer rewired only because a node before it was added or removed
is not reported again: the added or removed node says it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TypeProto

from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.graph.summary import opsets
from onnxviz.model.graph.tensors import tensor_array
from onnxviz.model.matching.align import (
    Alignment,
    GraphAlignment,
    GraphSide,
    Signature,
    align_models,
    input_pairs,
)
from onnxviz.model.matching.weights import WeightPair, match_weights
from onnxviz.model.process_tuning import building
from onnxviz.model.progress import CancelToken, ProgressFn, no_progress
from onnxviz.model.runner.compare import Tolerance, measure_arrays
from onnxviz.model.text import dtype_text, shape_text, tensor_type_text

KINDS = ("model_changed", "function_added", "function_removed", "function_changed",
         "input_added", "input_removed", "input_changed", "output_added", "output_removed", "output_changed",
         "weight_added", "weight_removed", "weight_changed", "value_info_changed",
         "node_added", "node_removed", "node_changed")
EXACT = Tolerance(rtol=0.0, atol=0.0)
WEIGHT_LIMIT_BYTES = 1 << 31  # a weight compared by value is read whole only below this (external data is mapped)


@dataclass(frozen=True)
class Difference:
    """One change. ``a``/``b`` name the thing on each side (None where it is absent); ``scope_a``/``scope_b``
    are the graphs (index.py's scope strings) and ``node_a``/``node_b`` node positions in them (-1: not a
    node); ``details`` the specifics, as JSON-ready values."""

    kind: str
    a: str | None
    b: str | None
    scope_a: str = ""
    scope_b: str = ""
    node_a: int = -1
    node_b: int = -1
    details: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "a": self.a, "b": self.b}
        if self.scope_a or self.scope_b:
            out.update(scope_a=self.scope_a, scope_b=self.scope_b)
        if self.node_a >= 0 or self.node_b >= 0:
            out.update(node_a=self.node_a if self.node_a >= 0 else None, node_b=self.node_b if self.node_b >= 0 else None)
        out.update(self.details)
        return out

    def text(self, words: Callable[[str], str] | None = None) -> str:
        """One line for people: kind (in ``words``, if given), names, what changed."""
        names = self.a if self.b is None or self.a == self.b else self.b if self.a is None else f"{self.a} -> {self.b}"
        where = f" (in {self.scope_a or self.scope_b})" if self.scope_a or self.scope_b else ""
        said = _details_text(self.details)
        kind = self.kind if words is None else words(self.kind)
        return f"{kind}: {names}{where}" + (f": {said}" if said else "")


def _details_text(details: dict[str, Any]) -> str:
    values = details.get("attribute_values")
    return "; ".join(f"{key} {_attributes_text(values) if key == 'attributes' and values else _value_text(value)}"
                     for key, value in details.items() if key != "attribute_values")


def _attributes_text(values: list[dict[str, Any]]) -> str:
    """``alpha 1 -> 0.5, axis (default 1) -> 0``: each changed attribute with its value in A and in B."""
    def side(v: dict[str, Any], key: str) -> str:
        if v.get(f"{key}_default"):
            return f"(default {_value_text(v[key])})"
        return "(absent)" if v[key] is None else _value_text(v[key])
    return ", ".join(f"{v['name']} {side(v, 'a')} -> {side(v, 'b')}" for v in values)


def _value_text(value: Any) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, list):
        return ", ".join(_value_text(v) for v in value)
    return str(value) if value != "" else "(empty)"


@dataclass
class ModelDiff:
    """Every difference between two models, on their alignment."""

    alignment: Alignment
    differences: list[Difference]
    weights: list[WeightPair] = field(default_factory=list)  # quantized weights against their partners

    @property
    def identical(self) -> bool:
        return not self.differences

    def node_kinds_a(self, scope: str = "") -> dict[int, str]:
        """A's nodes in graph ``scope`` that differ: position -> ``node_removed`` or ``node_changed``
        (for marking the canvas)."""
        return {d.node_a: d.kind for d in self.differences if d.node_a >= 0 and d.scope_a == scope}

    def node_kinds_b(self, scope: str = "") -> dict[int, str]:
        """B's nodes in graph ``scope`` (B's scope string) that differ: position -> ``node_added`` or
        ``node_changed``."""
        return {d.node_b: d.kind for d in self.differences if d.node_b >= 0 and d.scope_b == scope}

    def counts(self) -> dict[str, int]:
        """Differences per kind, in :data:`KINDS` order (kinds with none left out)."""
        out = {k: 0 for k in KINDS}
        for d in self.differences:
            out[d.kind] = out.get(d.kind, 0) + 1
        return {k: n for k, n in out.items() if n}

    def summary(self, words: Callable[[str], str] | None = None) -> str:
        """``3 differences: 1 node_added, 2 node_changed; 99.9% of nodes aligned`` or ``identical``; with
        ``words`` (a kind's words for people): ``3 differences: node added in B (1), node changed (2); ...``."""
        pairs, na, nb = self.alignment.counts()
        aligned = f"{pairs:,} of {na:,} / {nb:,} nodes aligned ({100 * self.alignment.fraction():.1f}%)"
        if self.identical:
            return f"identical; {aligned}"
        kinds = ", ".join(f"{n} {k}" if words is None else f"{words(k)} ({n:,})" for k, n in self.counts().items())
        return f"{len(self.differences)} difference{'s' if len(self.differences) != 1 else ''}: {kinds}; {aligned}"

    def to_json(self) -> dict[str, Any]:
        pairs, na, nb = self.alignment.counts()
        return {"identical": self.identical, "counts": self.counts(),
                "alignment": {"pairs": pairs, "nodes_a": na, "nodes_b": nb, "fraction": self.alignment.fraction()},
                "differences": [d.to_json() for d in self.differences],
                "weights": [w.to_json() for w in self.weights]}


def diff_models(index_a: ModelIndex, index_b: ModelIndex, *, base_dir_a: Path | None = None,
                base_dir_b: Path | None = None, alignment: Alignment | None = None,
                progress: ProgressFn = no_progress, token: CancelToken | None = None) -> ModelDiff:
    """Every difference between model A and model B (see the module's description). External weights
    are read from ``base_dir_a``/``base_dir_b`` through the io rules; ``alignment``, when given, is reused."""
    if alignment is None:
        alignment = align_models(index_a, index_b, lambda f, t: progress(0.6 * f, t), token)
    out = _model_fields(index_a.model, index_b.model)
    out += _functions(alignment)
    graphs = sorted(alignment.graphs.values(), key=lambda g: (g.scope_a.startswith("fn:"), g.scope_a))
    with building():
        for k, ga in enumerate(graphs):
            progress(0.6 + 0.4 * k / max(1, len(graphs)), f"Comparing graph {k + 1} of {len(graphs)}")
            out += _GraphDiff(ga, base_dir_a, base_dir_b, token).differences()
        progress(0.98, "Measuring quantized weights")
        weights = match_weights(alignment, base_dir_a, base_dir_b, token)
    progress(1.0, "Compared")
    return ModelDiff(alignment, out, weights)


# -- the model's own fields and functions --------------------------------------------------------
def _model_fields(a: onnx.ModelProto, b: onnx.ModelProto) -> list[Difference]:
    fields_a, fields_b = _fields_of(a), _fields_of(b)
    out = []
    for key in list(fields_a) + [k for k in fields_b if k not in fields_a]:
        va, vb = fields_a.get(key), fields_b.get(key)
        if va != vb:
            out.append(Difference("model_changed", key, key, details={"value_a": va, "value_b": vb}))
    return out


def _fields_of(m: onnx.ModelProto) -> dict[str, Any]:
    out: dict[str, Any] = {"ir_version": int(m.ir_version), "producer_name": m.producer_name,
                           "producer_version": m.producer_version, "domain": m.domain,
                           "model_version": int(m.model_version), "doc_string": m.doc_string,
                           "graph name": m.graph.name}
    out.update({f"opset {d}": v for d, v in opsets(m).items()})
    out.update({f"metadata {p.key}": p.value for p in m.metadata_props})
    return out


def _functions(alignment: Alignment) -> list[Difference]:
    fa, fb = alignment.index_a.functions, alignment.index_b.functions
    out = []
    for key, fn in fa.items():
        label = function_label(key)
        if key not in fb:
            out.append(Difference("function_removed", label, None))
            continue
        changes = _function_changes(fn, fb[key])
        if changes:
            out.append(Difference("function_changed", label, label, details={"changes": changes}))
    for key in fb:
        if key not in fa:
            out.append(Difference("function_added", None, function_label(key)))
    return out


def function_label(key: tuple[str, str, str]) -> str:
    """How a function's difference names it: "domain:name", with ":overload" when it has one."""
    return f"{key[0]}:{key[1]}" + (f":{key[2]}" if key[2] else "")


def _function_changes(a: onnx.FunctionProto, b: onnx.FunctionProto) -> list[str]:
    checks = {"inputs": (list(a.input), list(b.input)), "outputs": (list(a.output), list(b.output)),
              "attributes": (list(a.attribute), list(b.attribute)),
              "opsets": (sorted((o.domain, o.version) for o in a.opset_import),
                         sorted((o.domain, o.version) for o in b.opset_import))}
    return [k for k, (x, y) in checks.items() if x != y]


# -- one graph pair ----------------------------------------------------------------------------------
class _GraphDiff:
    def __init__(self, ga: GraphAlignment, base_a: Path | None, base_b: Path | None,
                 token: CancelToken | None) -> None:
        assert ga.sides is not None
        self.ga = ga
        self.a, self.b = ga.sides
        self.base_a, self.base_b = base_a, base_b
        self.token = token

    def differences(self) -> list[Difference]:
        ga = self.ga
        inputs_a = [n for n in ga.index_a.input_names if n not in self.a.initializers]
        inputs_b = [n for n in ga.index_b.input_names if n not in self.b.initializers]
        out: list[Difference] = []
        if ga.index_a.function is None:  # a function's signature is its function_changed difference
            out += self._terminals("input", inputs_a, inputs_b)
            out += self._terminals("output", ga.index_a.output_names, ga.index_b.output_names)
        out += self._weights()
        out += self._value_infos()
        out += self._nodes()
        return out

    def _diff(self, kind: str, a: str | None, b: str | None, node_a: int = -1, node_b: int = -1,
              **details: Any) -> Difference:
        return Difference(kind, a, b, self.ga.scope_a, self.ga.scope_b, node_a, node_b, details)

    def _terminals(self, what: str, names_a: list[str], names_b: list[str]) -> Iterator[Difference]:
        declared_a, declared_b = self.ga.index_a.declared, self.ga.index_b.declared
        listed_b = set(names_b)
        for x in names_a:
            y = self.ga.values.get(x)
            if y is None or y not in listed_b:
                yield self._diff(f"{what}_removed", x, None, type_a=_type_text(declared_a.get(x)))
                continue
            ta, tb = declared_a.get(x), declared_b.get(y)
            changes = (["name"] if x != y else []) + (["type"] if _type_bytes(ta) != _type_bytes(tb) else [])
            if changes:
                yield self._diff(f"{what}_changed", x, y, changes=changes, type_a=_type_text(ta),
                                 type_b=_type_text(tb))
        partners = {self.ga.values.get(x) for x in names_a}
        for y in names_b:
            if y not in partners:
                yield self._diff(f"{what}_added", None, y, type_b=_type_text(declared_b.get(y)))

    def _weights(self) -> list[Difference]:
        out = []
        for x, ta in self.a.initializers.items():
            y = self.ga.values.get(x)
            tb = self.b.initializers.get(y) if y is not None else None
            if tb is None:
                out.append(self._diff("weight_removed", x, None, type_a=tensor_type_text(ta.data_type, ta.dims)))
                continue
            if self.token is not None:
                self.token.check()
            details = self._weight_change(ta, tb)
            if details:
                out.append(self._diff("weight_changed", x, tb.name, **details))
        partners = set(self.ga.values.values())
        for y, tb in self.b.initializers.items():
            if y not in partners:
                out.append(self._diff("weight_added", None, y, type_b=tensor_type_text(tb.data_type, tb.dims)))
        return out

    def _weight_change(self, ta: onnx.TensorProto, tb: onnx.TensorProto) -> dict[str, Any]:
        changes = ["name"] if ta.name != tb.name else []
        details: dict[str, Any] = {}
        if ta.data_type != tb.data_type or list(ta.dims) != list(tb.dims):
            changes += (["dtype"] if ta.data_type != tb.data_type else []) + \
                (["shape"] if list(ta.dims) != list(tb.dims) else [])
            details.update(type_a=tensor_type_text(ta.data_type, ta.dims), type_b=tensor_type_text(tb.data_type, tb.dims))
        else:
            ka, kb = self.a.content.get(ta.name), self.b.content.get(tb.name)
            if ka is None or kb is None or ka != kb:
                measured = self._measure(ta, tb)
                if measured:
                    changes.append("values")
                    details.update(measured)
        return {"changes": changes, **details} if changes else {}

    def _measure(self, ta: onnx.TensorProto, tb: onnx.TensorProto) -> dict[str, Any]:
        """max |diff|, relative error and cosine of two same-typed weights; {} when they are equal. A weight
        that cannot be read (external data missing, ...) raises OnnxvizError: whether it changed is unknown."""
        xa = tensor_array(ta, self.base_a, WEIGHT_LIMIT_BYTES)
        xb = tensor_array(tb, self.base_b, WEIGHT_LIMIT_BYTES)
        if xa.dtype.kind not in "biuf":
            return {} if (xa == xb).all() else {"note": "the elements differ"}
        d = measure_arrays(xa, xb, EXACT)
        if d.outside == 0:
            return {}
        return {"max_abs": _finite(d.max_abs), "max_rel": _finite(d.max_rel), "cosine": _finite(d.cosine)}

    def _value_infos(self) -> list[Difference]:
        graph_a, graph_b = self.ga.index_a.graph, self.ga.index_b.graph
        if graph_a is None or graph_b is None:
            return []
        vi_a = {v.name: v.type for v in graph_a.value_info}
        vi_b = {v.name: v.type for v in graph_b.value_info}
        out = []
        for x, ta in vi_a.items():
            y = self.ga.values.get(x)
            if y is None:
                continue
            tb = vi_b.get(y)
            if _type_bytes(ta) != _type_bytes(tb):
                out.append(self._diff("value_info_changed", x, y, type_a=_type_text(ta), type_b=_type_text(tb)))
        for y, tb in vi_b.items():
            x = self.ga.values_b.get(y)
            if x is not None and x not in vi_a:
                out.append(self._diff("value_info_changed", x, y, type_a=_type_text(None), type_b=_type_text(tb)))
        return out

    def _nodes(self) -> list[Difference]:
        ga, out = self.ga, []
        for i, node in enumerate(self.a.nodes):
            if i % 1024 == 0 and self.token is not None:
                self.token.check()
            j = ga.nodes.get(i)
            if j is None:
                out.append(self._diff("node_removed", ga.index_a.node_label(i), None, i, -1, op_type=node.op_type))
                continue
            details = self._node_change(i, j)
            if details:
                out.append(self._diff("node_changed", ga.index_a.node_label(i), ga.index_b.node_label(j), i, j,
                                      **details))
        for j, node in enumerate(self.b.nodes):
            if j not in ga.nodes_b:
                out.append(self._diff("node_added", None, ga.index_b.node_label(j), -1, j, op_type=node.op_type))
        return out

    def _node_change(self, i: int, j: int) -> dict[str, Any]:
        a, b = self.a, self.b
        sig_a, sig_b = a.sig[i], b.sig[j]
        changes = [what for what, x, y in (("name", a.names[i], b.names[j]), ("op_type", sig_a[1], sig_b[1]),
                                           ("domain", sig_a[0], sig_b[0])) if x != y]
        attributes = [] if sig_a[2] == sig_b[2] else _attribute_changes(sig_a, sig_b)
        if attributes:
            changes.append("attributes")
        rewired = self._rewired(i, j)
        if rewired:
            changes.append("inputs")
        if len(a.outputs[i]) != len(b.outputs[j]):
            changes.append("outputs")
        if not changes:
            return {}
        details: dict[str, Any] = {"op_type": sig_a[1], "changes": changes}
        if "op_type" in changes:
            details["op_type_b"] = sig_b[1]
        if attributes:
            details["attributes"] = attributes
            details["attribute_values"] = attribute_values(a.nodes[i], b.nodes[j], attributes)
        if rewired:
            details["inputs"] = rewired
        return details

    def _rewired(self, i: int, j: int) -> list[int]:
        """Input positions of B's node ``j`` that do not read the partner of what A's node ``i`` reads there
        (a commutative op's two inputs in either order)."""
        xs, ys = self.a.inputs[i], self.b.inputs[j]
        if len(xs) == len(ys):
            pairs = input_pairs(self.a, i, self.b, j)
        else:
            pairs = [(xs[k] if k < len(xs) else "", ys[k] if k < len(ys) else "") for k in range(max(len(xs), len(ys)))]
        return [k for k, (x, y) in enumerate(pairs) if not self._same_input(x, y)]

    def _same_input(self, x: str, y: str) -> bool:
        if not x or not y:
            return x == y
        if self.ga.value_b(x) == y:
            return True
        x, y = _upstream(self.a, self.ga.nodes, x), _upstream(self.b, self.ga.nodes_b, y)
        if self.ga.value_b(x) == y:
            return True
        ka, kb = self.a.content.get(x), self.b.content.get(y)
        return ka is not None and ka == kb and self.ga.value_b(x) is None and self.ga.value_a(y) is None


def _upstream(side: GraphSide, matched: dict[int, int], x: str) -> str:
    """``x`` canonical (through a Q->DQ pair), then up through unmatched single-input nodes (added or
    removed ones explain the rewiring) to the first value a matched node or terminal made."""
    for _ in range(64):
        x = side.canonical(x)
        p = side.producer(x)
        if p < 0 or p in matched:
            return x
        data = side.data_inputs(p)
        if len(data) == 1:
            x = data[0]
        elif not data and len([y for y in side.inputs[p] if y]) == 1:
            x = next(y for y in side.inputs[p] if y)  # a node of one weight (exporters' Identity of equal weights)
        else:
            return x
    return x


def _attribute_changes(sig_a: Signature, sig_b: Signature) -> list[str]:
    """Names of attributes added, removed or changed, from the nodes' signatures (an attribute written
    with its default value counts as absent; bodies compare in their own graphs)."""
    aa, ab = dict(sig_a[2]), dict(sig_b[2])
    return sorted(name for name in set(aa) | set(ab) if aa.get(name) != ab.get(name))


def _type_bytes(t: TypeProto | None) -> bytes:
    return b"" if t is None else t.SerializeToString()


def _type_text(t: TypeProto | None) -> str | None:
    if t is None:
        return None
    return f"{dtype_text(t) or '?'}[{shape_text(t) or '?'}]"


def _finite(x: float) -> float | None:
    """JSON has no infinity or NaN: None stands for them."""
    return x if math.isfinite(x) else None


# -- attribute values -------------------------------------------------------------------------------------
TENSOR_VALUES = 16  # a tensor attribute of at most this many elements is given with its values


def attribute_values(a: onnx.NodeProto, b: onnx.NodeProto, names: list[str]) -> list[dict[str, Any]]:
    """Each named attribute's value in A and in B, JSON-ready (``{"name", "a", "b"}``); a side that does not
    write it has its schema's default there (``a_default``/``b_default`` true), else null."""
    attrs_a, attrs_b = {x.name: x for x in a.attribute}, {x.name: x for x in b.attribute}
    out = []
    for name in names:
        entry: dict[str, Any] = {"name": name}
        for key, node, attrs in (("a", a, attrs_a), ("b", b, attrs_b)):
            attr = attrs.get(name)
            if attr is None:
                default = _schema_default(node, name)
                entry[key] = None if default is None else attribute_json(default)
                if default is not None:
                    entry[f"{key}_default"] = True
            else:
                entry[key] = attribute_json(attr)
        out.append(entry)
    return out


def _schema_default(node: onnx.NodeProto, name: str) -> onnx.AttributeProto | None:
    try:
        schema = onnx.defs.get_schema(node.op_type, node.domain)
    except onnx.defs.SchemaError:
        return None
    attr = schema.attributes.get(name)
    return attr.default_value if attr is not None and attr.default_value.type else None


def attribute_json(attr: onnx.AttributeProto) -> Any:
    """An attribute's value as JSON: numbers, text, lists of them; a tensor as its type and shape (and its
    values when it has at most :data:`TENSOR_VALUES`); a graph as its name and size."""
    t = onnx.AttributeProto
    kind = attr.type
    if kind == t.FLOAT:
        return _float32(attr.f)
    if kind == t.INT:
        return int(attr.i)
    if kind == t.STRING:
        return attr.s.decode("utf-8", "backslashreplace")
    if kind == t.FLOATS:
        return [_float32(x) for x in attr.floats]
    if kind == t.INTS:
        return [int(x) for x in attr.ints]
    if kind == t.STRINGS:
        return [x.decode("utf-8", "backslashreplace") for x in attr.strings]
    if kind == t.TENSOR:
        return _tensor_json(attr.t)
    if kind == t.TENSORS:
        return [_tensor_json(x) for x in attr.tensors]
    if kind == t.GRAPH:
        return f"graph '{attr.g.name}' ({len(attr.g.node)} nodes)"
    if kind == t.GRAPHS:
        return [f"graph '{g.name}' ({len(g.node)} nodes)" for g in attr.graphs]
    return onnx.AttributeProto.AttributeType.Name(kind).lower()


def _float32(x: float) -> float | None:
    """A float attribute (stored as float32) as the shortest number that reads back as it: 1e-12, not
    9.999999960041972e-13 (None for NaN and infinities, which JSON lacks)."""
    return _finite(float(str(np.float32(x))))


def _tensor_json(tensor: onnx.TensorProto) -> Any:
    described = tensor_type_text(tensor.data_type, tensor.dims)
    if math.prod(tensor.dims) > TENSOR_VALUES or tensor.data_location == onnx.TensorProto.EXTERNAL:
        return described
    try:
        values = tensor_array(tensor, None, 1 << 16)
    except Exception:  # noqa: BLE001 - a tensor that cannot be read: its type says enough
        return described
    flat = [_finite(float(x)) if isinstance(x, float) else x for x in values.reshape(-1).tolist()]
    flat = [x.decode("utf-8", "backslashreplace") if isinstance(x, bytes) else x for x in flat]
    return {"tensor": described, "values": flat}


# -- hiding differences -----------------------------------------------------------------------------------
HIDEABLE = {"renames": "renames", "value_info": "value_info"}  # what --hide and the window's filter can hide


def is_rename(d: Difference) -> bool:
    """A difference that is only a name: a node, weight, input or output renamed and nothing else changed."""
    return d.kind in ("node_changed", "weight_changed", "input_changed", "output_changed") and \
        d.details.get("changes") == ["name"]


def hidden_as(d: Difference, hide: frozenset[str] | set[str]) -> str:
    """Which of ``hide`` (see :data:`HIDEABLE`) hides ``d`` ('' when none does)."""
    if "renames" in hide and is_rename(d):
        return "renames"
    if "value_info" in hide and d.kind == "value_info_changed":
        return "value_info"
    return ""


def shown(differences: list[Difference], hide: frozenset[str] | set[str]) -> tuple[list[int], dict[str, int]]:
    """The positions of the differences ``hide`` leaves, and how many it hides of each kind it names."""
    keep: list[int] = []
    hidden = dict.fromkeys(sorted(hide), 0)
    for k, d in enumerate(differences):
        why = hidden_as(d, hide) if hide else ""
        if why:
            hidden[why] += 1
        else:
            keep.append(k)
    return keep, hidden


def hidden_text(hidden: dict[str, int]) -> str:
    """``12,309 hidden: 12,300 renames, 9 value_info`` ('' when nothing is hidden)."""
    total = sum(hidden.values())
    if not total:
        return ""
    return f"{total:,} hidden: " + ", ".join(f"{n:,} {what}" for what, n in hidden.items() if n)
