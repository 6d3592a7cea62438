"""Checks the index runs beyond graph structure: versions, opset imports, operator
schemas, attribute types and values (see :mod:`onnxviz.model.graph.enum_attributes`), tensors
and names. Each finding is a Problem that names its node or value; nothing here raises
on a broken model.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from functools import lru_cache
from itertools import chain, repeat
from operator import attrgetter
from typing import Protocol

import numpy as np
import onnx
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from onnx import AttributeProto, NodeProto, TensorProto

from onnxviz.model.dtypes import WHOLE_ITEM_BYTES
from onnxviz.model.graph.contrib import contrib_domains
from onnxviz.model.graph.enum_attributes import enum_problem
from onnxviz.model.graph.graph_index import GraphIndex
from onnxviz.model.graph.opschema import attribute_type_code, normalize_domain, schema_for
from onnxviz.model.graph.tensors import RAW_MEASURE_ABOVE, TYPED_FIELDS, packed_nbytes
from onnxviz.model.io.partial import is_repeated
from onnxviz.model.io.slices import map_in_slices
from onnxviz.model.problems import DATA, Problem, Severity
from onnxviz.model.text import all_text, display_name


class IndexedModel(Protocol):
    """What the checks read of a model's index (:class:`~onnxviz.model.graph.index.ModelIndex`, which runs
    them: named here by what is read, so this module does not import the one that imports it)."""

    @property
    def model(self) -> onnx.ModelProto: ...
    @property
    def graphs(self) -> Mapping[str, GraphIndex]: ...
    @property
    def main(self) -> GraphIndex: ...
    @property
    def raw_lengths(self) -> Mapping[str, int] | None: ...
    @property
    def functions(self) -> Mapping[tuple[str, str, str], onnx.FunctionProto]: ...


# Domains whose every operator onnx knows; ops in other domains (com.microsoft...) cannot be checked.
KNOWN_DOMAINS = ("", "ai.onnx.ml", "ai.onnx.preview.training", "ai.onnx.preview")


@lru_cache(maxsize=32)
def newest_opset(domain: str) -> int:
    """The newest opset version of ``domain`` this onnx knows (0 if it knows no such domain)."""
    d = normalize_domain(domain)
    table = onnx.helper.VERSION_TABLE  # (release, IR, ai.onnx, ai.onnx.ml, training): no schema scan needed
    if d == "":
        return max(onnx.defs.onnx_opset_version(), max(row[2] for row in table))
    if d == "ai.onnx.ml":
        return max(row[3] for row in table)
    return max((s.since_version for s in onnx.defs.get_all_schemas_with_history()
                if normalize_domain(s.domain) == d), default=0)


def model_problems(index: IndexedModel) -> list[Problem]:
    """Every problem of this module for the whole model."""
    model = index.model
    problems = version_problems(model)
    imports = _opsets(model.opset_import)
    local = _local_domains(index)
    for g in index.graphs.values():
        scope_imports = imports
        if g.function is not None:
            scope_imports = _opsets(g.function.opset_import) or imports
        problems += node_problems(g, scope_imports, local, index)
        problems += tensor_problems(g, index.raw_lengths if g.scope == "" else None)
    return problems + output_problems(model.graph) + declared_type_problems(model.graph) + parts_problems(index)


def parts_problems(index: IndexedModel) -> list[Problem]:
    """The signs of two models written into one file, which protobuf reads as one model: its opset imports
    listed twice, and a main graph of parts that share no value (no input, weight or intermediate value), each
    making graph outputs. A graph of such parts alone is a model's own choice (two heads on two inputs): said
    only with the doubled imports."""
    counts = Counter(normalize_domain(o.domain) for o in index.model.opset_import)
    doubled = [d or "ai.onnx" for d, n in counts.items() if n > 1]
    if not doubled:
        return []
    g = index.main
    made = _output_parts(g)
    imports = f"imports opset {', '.join(doubled)} {'twice' if len(doubled) == 1 else 'each twice'}"
    if len(made) < 2:
        return [Problem(Severity.WARNING, f"the model {imports}: two models written into one file?")]
    parts = connected_parts(g)
    assert parts is not None
    sizes = np.bincount(parts)
    listed = ", ".join(f"{sizes[k]:,} node{'s' if sizes[k] != 1 else ''} from node {int(np.argmax(parts == k))}"
                       for k in made[:4])
    more = f" and {len(made) - 4} more" if len(made) > 4 else ""
    return [Problem(Severity.WARNING, f"the model {imports} and its graph is {len(made)} parts that share no value "
                                      f"and each make graph outputs ({listed}{more}): two models written into one file?")]


def _output_parts(g: GraphIndex) -> list[int]:
    """The parts (see :func:`connected_parts`) that make graph outputs."""
    if len(set(g.output_names)) < 2:  # one part at most makes outputs
        return []
    parts = connected_parts(g)
    if parts is None:
        return []
    return sorted({int(parts[p]) for x in g.output_names if (p := g.producer.get(x, -1)) >= 0})


def connected_parts(g: GraphIndex) -> np.ndarray | None:
    """The part of each node: nodes are in one part when a value joins them (one makes what another reads, or
    both read it), numbered by their lowest node. None for a graph of fewer than two nodes. Union-find in numpy
    (hooking then pointer jumping): about 20 ms at 123k nodes."""
    n = len(g.nodes)
    if n < 2:
        return None
    consumers = g.consumers
    counts = np.fromiter(map(len, consumers.values()), np.int64, len(consumers))
    readers = np.fromiter(chain.from_iterable(consumers.values()), np.int64, int(counts.sum()))
    makers = np.fromiter(map(g.producer.get, consumers, repeat(-1)), np.int64, len(consumers))
    firsts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    anchors = np.where(makers >= 0, makers, readers[np.minimum(firsts, max(len(readers) - 1, 0))] if len(readers) else 0)
    a, b = np.repeat(anchors, counts), readers
    parent = np.arange(n)
    while True:
        pa, pb = parent[a], parent[b]
        low, high = np.minimum(pa, pb), np.maximum(pa, pb)
        joining = low != high
        if not joining.any():
            break
        np.minimum.at(parent, high[joining], low[joining])
        while True:  # pointer jumping: every node points at its part's lowest node
            jumped = parent[parent]
            if np.array_equal(jumped, parent):
                break
            parent = jumped
    return np.unique(parent, return_inverse=True)[1]


def output_problems(graph: onnx.GraphProto) -> list[Problem]:
    """A main graph without outputs computes nothing a caller can read."""
    if graph.output:
        return []
    return [Problem(Severity.WARNING, "the model has no graph outputs, so running it gives nothing; "
                    "mark a value as a graph output")]


def declared_type_problems(graph: onnx.GraphProto) -> list[Problem]:
    """Declared tensor types of the graph's inputs, outputs and value infos that cannot be right:
    a negative size, or no element type (neither the checker nor inference says so)."""

    out: list[Problem] = []
    for role, values in (("input", graph.input), ("output", graph.output), ("value", graph.value_info)):
        for v in values:
            if not v.type.HasField("tensor_type"):
                continue
            tensor = v.type.tensor_type
            name = display_name(v.name, 80)
            if tensor.elem_type == 0:
                out.append(Problem(Severity.WARNING, f"{role} '{name}' declares no element type", value=v.name))
            out += _negative_size_problems(role, name, v.name, tensor.shape.dim)
    return out


DYNAMIC_SIZE = -1  # PaddlePaddle's exports declare a dynamic size so; the checker and onnxruntime accept it


def _negative_size_problems(role: str, shown: str, value: str,
                            dims: Iterable[onnx.TensorShapeProto.Dimension]) -> list[Problem]:
    """-1 sizes are taken as dynamic (a warning); any other negative size is an error."""
    sizes = [(k, d.dim_value) for k, d in enumerate(dims) if d.HasField("dim_value") and d.dim_value < 0]
    wrong = [(k, size) for k, size in sizes if size != DYNAMIC_SIZE]
    if wrong:
        axis, size = wrong[0]
        return [Problem(Severity.ERROR, f"{role} '{shown}' declares size {size} on axis {axis}; "
                                        "sizes cannot be negative", value=value)]
    if sizes:
        axes = ", ".join(str(k) for k, _ in sizes)
        word = "axes" if len(sizes) > 1 else "axis"
        return [Problem(Severity.WARNING, f"{role} '{shown}' declares size -1 on {word} {axes}, taken as a "
                                          "dynamic size (a named dimension says so in standard ONNX)", value=value)]
    return []


def node_local_problems(index: IndexedModel, i: int) -> list[Problem]:
    """The problems :func:`model_problems` gives main-graph node ``i`` itself (operator,
    attributes, tensor attributes), for an index brought up to date after an edit of that node."""
    g = index.main
    node = g.nodes[i]
    imports = _opsets(index.model.opset_import)
    out: list[Problem] = []
    message = _op_problem(node.domain, node.op_type, imports, _local_domains(index), index)
    if message:
        out.append(_at(g, i, message))
    out += _attribute_problems(g, i, imports, in_function=False)
    out += [p for t in _attribute_tensors(node) if (p := _tensor_problem_at(g, t, i)) is not None]
    return out


def _opsets(opset_import: Iterable[onnx.OperatorSetIdProto]) -> dict[str, int]:
    return {normalize_domain(o.domain): int(o.version) for o in opset_import}


def _local_domains(index: IndexedModel) -> set[str]:
    return {normalize_domain(d) for d, _, _ in index.functions}


def unknown_versions(model: onnx.ModelProto) -> list[str]:
    """The versions the model declares that the installed onnx does not know ('IR version 99', 'opset ai.onnx 99'):
    what its checker, shape inference and reference evaluator go by (onnxruntime knows no newer ones)."""
    found = [f"IR version {model.ir_version}"] if model.ir_version > onnx.IR_VERSION else []
    for o in model.opset_import:
        d = normalize_domain(o.domain)
        if d in KNOWN_DOMAINS and o.version > newest_opset(d):
            found.append(f"opset {o.domain or 'ai.onnx'} {o.version}")
    return found


def version_problems(model: onnx.ModelProto) -> list[Problem]:
    out: list[Problem] = []
    if model.ir_version > onnx.IR_VERSION:
        out.append(Problem(Severity.WARNING, f"IR version {model.ir_version} is newer than this onnx "
                           f"({onnx.__version__}) understands (up to {onnx.IR_VERSION}); checks may be wrong"))
    if model.ir_version <= 0:
        out.append(Problem(Severity.ERROR, "the model has no IR version"))
    for o in model.opset_import:
        d = normalize_domain(o.domain)
        if d in KNOWN_DOMAINS and o.version > newest_opset(d):
            out.append(Problem(Severity.WARNING, f"opset {o.domain or 'ai.onnx'} {o.version} is newer than this "
                               f"onnx knows (up to {newest_opset(d)}); its operators cannot be checked"))
    return out


def node_problems(g: GraphIndex, imports: dict[str, int], local_domains: set[str],
                  index: IndexedModel) -> list[Problem]:
    out: list[Problem] = []
    bad: dict[tuple[str, str], str] = {}
    keys = set(map_in_slices(_OP_KEY, g.nodes))
    g.undecodable_ops = any(isinstance(d, bytes) or isinstance(op, bytes) for d, op in keys)
    for domain, op_type in keys:
        message = _op_problem(domain, op_type, imports, local_domains, index)
        if message:
            bad[(domain, op_type)] = message
    if bad:
        out += [_at(g, i, bad[k]) for i, n in enumerate(g.nodes) if (k := (n.domain, n.op_type)) in bad]
    in_function = g.scope.startswith("fn:")
    for i in g.attribute_holders:
        out += _attribute_problems(g, i, imports, in_function)
    return out


def _op_problem(domain: str, op_type: str, imports: dict[str, int], local_domains: set[str],
                index: IndexedModel) -> str:
    d = normalize_domain(domain)
    if any(k[0] == domain and k[1] == op_type for k in index.functions):
        return ""  # a model-local function
    if d not in imports:
        if d in local_domains:
            return ""
        return f"uses domain '{domain or 'ai.onnx'}', which the model does not import (no opset_import)"
    if d not in KNOWN_DOMAINS or imports[d] > newest_opset(d):
        return ""  # a custom domain, or an opset too new to check: nothing to compare against
    if schema_for(op_type, d, imports[d]) is not None:
        return ""
    if schema_for(op_type, d, None) is not None:
        return f"operator {op_type} does not exist in opset {domain or 'ai.onnx'} {imports[d]}"
    return f"unknown operator '{op_type}' in domain {domain or 'ai.onnx'}"


def _attribute_problems(g: GraphIndex, i: int, imports: dict[str, int], in_function: bool) -> list[Problem]:
    node: NodeProto = g.nodes[i]
    d = normalize_domain(node.domain)
    checked = d in imports and (d in KNOWN_DOMAINS or d in contrib_domains())
    schema = schema_for(node.op_type, d, imports[d]) if checked else None
    out: list[Problem] = []
    for attr in node.attribute:
        if attr.ref_attr_name:
            if not in_function:
                out.append(_at(g, i, f"attribute '{attr.name}' refers to a function attribute "
                                     f"('{attr.ref_attr_name}') outside a function"))
            continue
        if attr.type == AttributeProto.UNDEFINED:
            out.append(_at(g, i, f"attribute '{attr.name}' has no type"))
            continue
        if schema is None:
            continue
        spec = schema.attributes.get(attr.name)
        if spec is None:
            out.append(_at(g, i, f"{node.op_type} has no attribute '{attr.name}'", Severity.WARNING))
        elif attribute_type_code(spec) != attr.type:
            out.append(_at(g, i, f"attribute '{attr.name}' is {_attr_type_name(attr.type)}, "
                                 f"but {node.op_type} expects {_attr_type_name(attribute_type_code(spec))}"))
        elif attr.type in _TEXT_TYPES and (message := enum_problem(node, attr, d, schema.since_version)):
            out.append(_at(g, i, message))
    return out


_TEXT_TYPES = (AttributeProto.STRING, AttributeProto.STRINGS)


def _attr_type_name(t: int) -> str:
    try:
        return AttributeProto.AttributeType.Name(t)
    except ValueError:
        return f"type {t}"


def _at(g: GraphIndex, i: int, message: str, severity: Severity = Severity.ERROR) -> Problem:
    return Problem(severity, f"{g.node_label(i)}: {message}", scope=g.scope, node=i, node_name=g.nodes[i].name)


# -- tensors ------------------------------------------------------------------------------

def _graph_tensors(g: GraphIndex) -> Iterator[tuple[TensorProto, int]]:
    """(tensor, holding node or -1) for sparse initializers and tensor attributes of this graph."""
    if g.graph is not None:
        for st in g.graph.sparse_initializer:
            yield st.values, -1
    for i in g.attribute_holders:
        for t in _attribute_tensors(g.nodes[i]):
            yield t, i


def _attribute_tensors(node: NodeProto) -> Iterator[TensorProto]:
    for attr in node.attribute:
        if attr.type == AttributeProto.TENSOR:
            yield attr.t
        elif attr.type == AttributeProto.TENSORS:
            yield from attr.tensors


def tensor_problems(g: GraphIndex, raw_lengths: Mapping[str, int] | None = None) -> list[Problem]:
    """The malformed tensors of this graph. ``raw_lengths``: len(raw_data) of its initializers by name, read
    from the model's bytes (:class:`~onnxviz.model.graph.tensors.RawLengths`), so that a big one is not
    copied out of protobuf to be measured."""
    initializers = g.graph.initializer if g.graph is not None else []
    found = [_unsound_problem(g, t, -1, raw_lengths) for t in initializers if not _looks_sound(t, raw_lengths)]
    found += [_tensor_problem_at(g, t, holder) for t, holder in _graph_tensors(g)]
    return [p for p in found if p is not None]


def _tensor_problem_at(g: GraphIndex, t: TensorProto, holder: int,
                       raw_lengths: Mapping[str, int] | None = None) -> Problem | None:
    """The problem of tensor ``t`` held by node ``holder`` (-1: an initializer), if it is malformed."""
    return None if _looks_sound(t, raw_lengths) else _unsound_problem(g, t, holder, raw_lengths)


def _unsound_problem(g: GraphIndex, t: TensorProto, holder: int,
                     raw_lengths: Mapping[str, int] | None = None) -> Problem | None:
    """:func:`_tensor_problem_at` of a tensor that is not sound at first sight (:func:`_looks_sound`)."""
    message = tensor_problem(t, raw_lengths)
    if not message:
        return None
    node_name = g.nodes[holder].name if holder >= 0 else ""
    return Problem(Severity.ERROR, message, DATA, scope=g.scope, node=holder, node_name=node_name, value=t.name)


def _looks_sound(t: TensorProto, raw_lengths: Mapping[str, int] | None) -> bool:
    """The fast path for the common case: dense raw_data of exactly the right size and nothing else. Each field
    is read once (dims copied by a slice), and whether raw_data is set only for an empty tensor (a length that
    fits another says so): protobuf's field reads are most of what a check costs."""
    itemsize = WHOLE_ITEM_BYTES.get(t.data_type)  # sub-byte and string types take the slow path
    if not itemsize:
        return False
    dims = t.dims[:]
    numel = math.prod(dims)
    if numel < 0 or (dims and min(dims) < 0):
        return False
    need = numel * itemsize
    return (_raw_length(t, need, raw_lengths) == need and (need > 0 or t.HasField("raw_data"))
            and not any(map(len, _TYPED(t))))


_TYPED = attrgetter(*TYPED_FIELDS)
_OP_KEY = attrgetter("domain", "op_type")


def _raw_length(t: TensorProto, need: int, raw_lengths: Mapping[str, int] | None) -> int:
    """len(raw_data) of ``t``, whose shape needs ``need`` bytes: from ``raw_lengths`` when that is big, else
    measured (protobuf hands the field out as a copy, freed at once). Never by serializing the tensor:
    ``ByteSize()`` does, and costs twice its bytes."""
    if raw_lengths is not None and need > RAW_MEASURE_ABOVE:
        known = raw_lengths.get(t.name)
        if known is not None:
            return known
    return len(t.raw_data)


def _typed_fields(t: TensorProto) -> list[str]:
    """The typed data fields the tensor sets (their lengths are known without copying them)."""
    return [f for f, values in zip(TYPED_FIELDS, _TYPED(t), strict=True) if len(values)]


def tensor_problem(t: TensorProto, raw_lengths: Mapping[str, int] | None = None) -> str:
    """Why ``t`` is malformed, in one sentence ('' if it looks sound). Never serializes it; ``raw_lengths``:
    see :func:`tensor_problems`."""
    dims = t.dims
    if dims and min(dims) < 0:
        return f"{_who(t)} has a negative dimension {list(dims)}"
    itemsize = _itemsize(t.data_type)
    if itemsize is None:
        return f"{_who(t)} has " + ("no data type" if t.data_type == 0 else f"an unknown data type {t.data_type}")
    if t.data_location == TensorProto.EXTERNAL:
        return ""  # checked against the file by onnxviz.model.io.external
    numel = math.prod(dims)
    if t.HasField("raw_data"):
        return _raw_problem(t, numel, itemsize, raw_lengths)
    if numel == 0 or t.data_type == TensorProto.STRING or _typed_fields(t):
        return ""  # typed entry counts are checked when the tensor is read
    return f"{_who(t)} has shape {list(dims)} ({numel:,} elements) but holds no data"


def _who(t: TensorProto) -> str:
    return f"tensor '{t.name}'" if t.name else "an unnamed tensor"


@lru_cache(maxsize=256)
def _itemsize(data_type: int) -> float | None:
    """Bytes per element in raw_data (fractions for sub-byte types); 0 if not fixed; None if unknown."""

    if data_type == TensorProto.UNDEFINED or data_type not in TensorProto.DataType.values():
        return None
    if data_type == TensorProto.STRING:
        return 0
    try:
        one = onnx.helper.tensor_dtype_to_np_dtype(data_type).itemsize
    except Exception:  # noqa: BLE001 - a type numpy cannot represent: nothing to compare
        return 0
    return packed_nbytes(data_type, 1 << 20, one) / (1 << 20)



def _raw_problem(t: TensorProto, numel: int, itemsize: float, raw_lengths: Mapping[str, int] | None) -> str:
    if t.data_type == TensorProto.STRING:
        return f"{_who(t)} is a string tensor with raw_data; strings must be in string_data"
    typed = _typed_fields(t)
    if typed:
        return f"{_who(t)} sets both raw_data and {typed[0]}"
    if not itemsize:
        return ""
    need = math.ceil(numel * itemsize)
    have = _raw_length(t, need, raw_lengths)
    if have != need:
        return f"{_who(t)} has {have:,} bytes of raw_data, but its shape {list(t.dims)} needs {need:,}"
    return ""


# -- names --------------------------------------------------------------------------------

def has_undecodable_names(g: GraphIndex) -> bool:
    """True if protobuf handed back a value, node or value_info name as bytes (it is not valid UTF-8)."""
    value_infos = [v.name for v in g.graph.value_info] if g.graph is not None else []
    texts = all_text(g.producer) and all_text(g.consumers) and all_text(g.node_names()) and all_text(value_infos)
    return not texts or g.undecodable_ops


def has_undecodable_model_strings(model: onnx.ModelProto) -> bool:
    """True if a model-level string (producer, metadata, opset domains, the main graph's name
    and its inputs' and outputs' types) is not valid UTF-8. Cheap: node-level strings are
    checked by :func:`has_undecodable_names` as the index reads them."""
    small: list[Message] = [*model.metadata_props, *model.opset_import, *model.graph.input, *model.graph.output]
    return (any(_scalar_strings_undecodable(m) for m in (model, model.graph))
            or any(replace_invalid_utf8(m, dry_run=True) for m in small))


def _scalar_strings_undecodable(message: Message) -> bool:
    return any(isinstance(getattr(message, fd.name), bytes)
               for fd in message.DESCRIPTOR.fields if fd.type == fd.TYPE_STRING and not is_repeated(fd))


def replace_invalid_utf8(message: Message, dry_run: bool = False) -> list[tuple[bytes, str]]:
    """Replace every string field that is not valid UTF-8 by its escaped text; return (old, new) pairs.

    The same bytes become the same text everywhere (a value's name and its readers stay one value). An escape
    that is a string the model holds already (the file names a value ``a\\xff`` as written, and another
    ``a<0xff>``) gets a suffix instead, ``a\\xff~1``: two values never become one name (an SSA violation
    onnxruntime refuses). With ``dry_run`` nothing is changed (the pairs say what would be)."""
    escapes = _Escapes(set() if dry_run else _held_strings(message))
    escapes.walk(message, dry_run)
    return escapes.renamed


class _Escapes:
    """The escaped text chosen for each string of bytes, and the strings it must not be."""

    def __init__(self, taken: set[str]) -> None:
        self.taken = taken
        self.chosen: dict[bytes, str] = {}
        self.renamed: list[tuple[bytes, str]] = []

    def walk(self, message: Message, dry_run: bool) -> None:
        for fd in message.DESCRIPTOR.fields:
            if fd.type == fd.TYPE_STRING:
                self._fix_strings(message, fd, dry_run)
            elif fd.type == fd.TYPE_MESSAGE:
                if is_repeated(fd):
                    for child in getattr(message, fd.name):
                        self.walk(child, dry_run)
                elif message.HasField(fd.name):
                    self.walk(getattr(message, fd.name), dry_run)

    def _fix_strings(self, message: Message, fd: FieldDescriptor, dry_run: bool) -> None:
        value = getattr(message, fd.name)
        if is_repeated(fd):
            if any(isinstance(v, bytes) for v in value):
                fixed = [self.escaped(v) for v in value]
                if not dry_run:
                    del value[:]
                    value.extend(fixed)
        elif isinstance(value, bytes):
            text = self.escaped(value)
            if not dry_run:
                setattr(message, fd.name, text)

    def escaped(self, value: str | bytes) -> str:
        if isinstance(value, str):
            return value
        text = self.chosen.get(value)
        if text is None:
            shown = value.decode("utf-8", "backslashreplace")
            text, k = shown, 0
            while text in self.taken:
                k += 1
                text = f"{shown}~{k}"
            self.chosen[value] = text
            self.taken.add(text)
        self.renamed.append((value, text))
        return text


def _held_strings(message: Message) -> set[str]:
    """Every valid text of every string field of ``message``, nested ones too."""
    found: set[str] = set()
    for fd in message.DESCRIPTOR.fields:
        if fd.type == fd.TYPE_STRING:
            value = getattr(message, fd.name)
            found.update(v for v in (value if is_repeated(fd) else [value]) if isinstance(v, str))
        elif fd.type == fd.TYPE_MESSAGE:
            for child in getattr(message, fd.name) if is_repeated(fd) else \
                    [getattr(message, fd.name)] if message.HasField(fd.name) else []:
                found |= _held_strings(child)
    return found


def renamed_escapes(renamed: list[tuple[bytes, str]]) -> dict[bytes, str]:
    """Of ``renamed`` (see :func:`replace_invalid_utf8`), the text whose escape was a name already, and what it
    became instead."""
    return {old: new for old, new in renamed if new != old.decode("utf-8", "backslashreplace")}


def invalid_utf8_problems(renamed: list[tuple[bytes, str]]) -> list[Problem]:
    return [Problem(Severity.ERROR, f"text {old!r} is not valid UTF-8; it is shown as '{new}'"
                    + (f" ('{old.decode('utf-8', 'backslashreplace')}' names something else already)"
                       if new != old.decode("utf-8", "backslashreplace") else ""), value=new)
            for old, new in dict(renamed).items()]
