"""What the layout draws of one scope: items (op nodes and terminals), value edges, box texts.

Initializers and ``Constant`` nodes feeding other nodes get no box and no
edge: they are listed inside their consumers' boxes (``W <64x3x7x7>``), small
ones with their values (``B = 16000``).
Graph inputs, graph outputs and values read from outside the scope (or
defined nowhere) become terminal items.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from itertools import compress, repeat
from operator import attrgetter

import numpy as np
import onnx
import onnx.numpy_helper

from onnxviz.model.graph.index import GRAPH_INPUT, INITIALIZER, GraphIndex, ModelIndex
from onnxviz.model.graph.opschema import node_schema
from onnxviz.model.graph.smallvalues import SMALL_ELEMENTS, SmallValues
from onnxviz.model.io.slices import PASS_ITEMS, map_in_slices
from onnxviz.model.layout.categories import category_of
from onnxviz.model.layout.scene import BoxKind, Category
from onnxviz.model.text import DIM_SEP, display_name, dtype_text, join_dims, shape_text, tensor_dtype_name

CHAR_W = 7.0
HEADER_H = 20.0
LINE_H = 14.0   # a line of 10 px body text (weights, values) on a box
MIN_W = 56.0
PILL_H = HEADER_H + 4  # an input or output pill: its name in bold, a little air (Netron's are 20)
MAX_W = 280.0
MAX_NAME_W = 560.0    # a box widened for its node's name (the tooltip has the whole name)
TITLE_CHAR_W = 7.5    # a character of the bold 9 pt header text at most
NAME_TEXT = 80        # characters of a node name kept for its box
MAX_LINES = 8
MAX_TEXT = 48
TERMINAL_ITEMS = (BoxKind.INPUT, BoxKind.OUTPUT)
BODY_BUTTONS_W = 30.0  # the header's body button (+/-) and nested-graph mark of an If/Loop/Scan box
CALL_MARK_W = 12.0
OUTER_CAPTION_CHARS = 20  # "from the outer graph", under the name of a value a body reads from outside     # the nested-graph mark of a call of a model-local function


@dataclass
class BoxText:
    title: str
    name: str
    lines: list[str]
    category: Category
    marks_w: float = 0.0  # the header's buttons and marks beside the title; a terminal's caption width

    def size(self, names: bool = False) -> tuple[float, float]:
        """(width, height); with ``names``, wide enough for the node's name in the header (up to
        :data:`MAX_NAME_W`). A group box also leaves room for its +/- button, a node box for its body
        button and marks (:attr:`marks_w`), so a title is never cut."""
        if self.category is Category.TERMINAL:  # a pill with the name (and the outer caption) only
            return self._terminal_size()
        longest = max([len(self.title) + 2] + [len(s) for s in self.lines])
        w = min(MAX_W, max(MIN_W, longest * CHAR_W + 16))
        if self.marks_w:
            w = max(w, min(MAX_W, len(self.title) * TITLE_CHAR_W + 16 + self.marks_w))
        if self.category is Category.GROUP:
            w = max(w, min(MAX_W, len(self.title) * TITLE_CHAR_W + 40))
        elif names and self.name:
            w = max(w, min(MAX_NAME_W, len(self.name) * TITLE_CHAR_W + 16))
        h = HEADER_H + LINE_H * len(self.lines) + (4 if self.lines else 0)
        return w, h

    def _terminal_size(self) -> tuple[float, float]:
        """The canvas draws a terminal's name, not its type line (that is in the tooltip and panels):
        as wide as the name in bold, one line high; with the outer caption under it, wide and high enough for both."""
        w = min(MAX_W, max(MIN_W, len(self.title) * TITLE_CHAR_W + 28, self.marks_w))
        return w, (HEADER_H + LINE_H * len(self.lines) + 4 if self.marks_w else PILL_H)


@dataclass
class ScopeGraph:
    """Items are ordered: input terminals, nodes (file order), output terminals."""

    index: ModelIndex
    graph: GraphIndex
    item_kind: list[BoxKind] = field(default_factory=list)
    item_node: list[int] = field(default_factory=list)       # node position, -1 for terminals
    item_value: list[str] = field(default_factory=list)      # value name of terminals
    item_note: list[str] = field(default_factory=list)       # "outer scope", "undefined"
    node_item: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    const_values: set[str] = field(default_factory=set)
    values: list[str] = field(default_factory=list)
    e_src: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    e_dst: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    e_val: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    init_dims: dict[str, list[int]] | None = None
    init_types: dict[str, int] | None = None  # each initializer's element type (onnx's TensorProto enum)
    op_info: dict[tuple[str, str, str], tuple[str, Category, list[str]]] = field(default_factory=dict)
    small: SmallValues | None = None  # values of small constants, shown on their consumers' boxes
    holders: frozenset[int] | None = None  # nodes holding subgraphs (If/Loop/Scan), found on first need
    call: dict[str, str] = field(default_factory=dict)  # a function body opened from a call: its attributes' texts

    @property
    def n_items(self) -> int:
        return len(self.item_kind)

    def drawn_readers(self, node: int) -> list[int]:
        """Items of the drawn nodes reading what hidden node ``node`` makes (through other hidden nodes)."""
        g, found, stack, seen = self.graph, [], [node], {node}
        while stack:
            for name in g.nodes[stack.pop()].output:
                for c in g.consumers.get(name, []) if name else []:
                    if self.node_item[c] >= 0:
                        found.append(int(self.node_item[c]))
                    elif c not in seen:
                        seen.add(c)
                        stack.append(c)
        return found

    def item_names(self) -> list[str]:
        """Per item: its node's name ("" for terminals), from the index's reading of the names (the open made it)."""
        names = self.graph.node_names()
        return [names[n] if n >= 0 else "" for n in self.item_node]


def build_scope_graph(index: ModelIndex, scope: str) -> ScopeGraph:
    """The items and edges of a scope."""
    g = index.graphs[scope]
    sg = ScopeGraph(index=index, graph=g)
    # initializers that are also graph inputs (IR < 4 style) are weights, not terminals
    sg.const_values = _initializers(g)
    reads = _reads(g, sg.const_values)   # the constants so far: absorbed nodes' outputs are made by hidden nodes
    ops = map_in_slices(attrgetter("op_type"), g.nodes)
    hidden = _absorbed_constants(g, sg.const_values, ops, reads.nonconst_inputs(len(ops)))
    names, prod = reads.names, reads.prod
    terminal_of: dict[str, int] = {}
    for name in dict.fromkeys(g.input_names):
        if name and g.producer.get(name) == GRAPH_INPUT and name not in sg.const_values:
            terminal_of[name] = _add_item(sg, BoxKind.INPUT, -1, name, "")
    passed_through = [n for n in g.output_names if n and g.parent is not None and g.parent.defines(n)]
    undefined = [names[k] for k in np.flatnonzero(prod == _UNDEFINED).tolist()]   # made by nothing here
    for name in [*undefined, *passed_through]:
        if name not in g.producer and name not in sg.const_values and name not in terminal_of:
            note = "outer scope" if g.parent is not None and g.parent.defines(name) else "undefined"
            terminal_of[name] = _add_item(sg, BoxKind.INPUT, -1, name, note)
    shown = np.ones(len(g.nodes), bool)
    shown[list(hidden)] = False
    node_item = np.full(len(g.nodes), -1, np.int64)
    nodes = np.flatnonzero(shown)
    node_item[nodes] = np.arange(len(nodes)) + sg.n_items
    sg.item_kind += [BoxKind.OP] * len(nodes)
    sg.item_node += nodes.tolist()
    sg.item_value += [""] * len(nodes)
    sg.item_note += [""] * len(nodes)
    sg.node_item = node_item
    outputs = [name for name in dict.fromkeys(g.output_names) if name]
    output_items = [_add_item(sg, BoxKind.OUTPUT, -1, name, "") for name in outputs]
    _collect_edges(sg, terminal_of, dict(zip(outputs, output_items, strict=True)), reads)
    return sg


@dataclass
class _Reads:
    """Every value some node reads (``g.consumers`` order), what makes it, and its readers."""

    names: list[str]
    prod: np.ndarray      # per value: :func:`_producers`
    lens: np.ndarray      # per value: how many reads
    readers: np.ndarray   # the reading nodes, value after value

    def nonconst_inputs(self, n_nodes: int) -> list[int]:
        """Per node: its reads of values that are no constants (as ``prod`` has them)."""
        slots = np.repeat(self.prod != _CONST, self.lens)
        return np.bincount(self.readers[slots], minlength=n_nodes).tolist() if n_nodes else []


def _reads(g: GraphIndex, const: set[str]) -> _Reads:
    """What the nodes of ``g`` read, the values in ``const`` marked as constants."""
    names = list(g.consumers)
    lists = list(g.consumers.values())
    lens = np.fromiter(map(len, lists), np.int64, len(names))
    readers = np.fromiter(itertools.chain.from_iterable(lists), np.int64, int(lens.sum()))
    return _Reads(names, _producers(g, names, const), lens, readers)


def _producers(g: GraphIndex, names: list[str], const: set[str]) -> np.ndarray:
    """Per value: the producer (a node position or a negative kind, see ``GraphIndex.producer``), _CONST
    for a constant and _UNDEFINED for a value nothing produces; one look-up each (there are 100k+)."""
    lookup = dict(g.producer)
    lookup.update(dict.fromkeys(const, _CONST))
    found = np.full(len(names), _UNDEFINED, np.int64)
    for start in range(0, len(names), PASS_ITEMS):  # a slice at a time: the GUI thread gets its turns between
        part = names[start:start + PASS_ITEMS]
        found[start:start + len(part)] = np.fromiter(map(lookup.get, part, repeat(_UNDEFINED)), np.int64, len(part))
    return found


def _initializers(g: GraphIndex) -> set[str]:
    """Names of the initializers (those the producers list, and those of the graph)."""
    found = set(g.initializer_names)
    producer = g.producer
    rows = np.flatnonzero(np.fromiter(producer.values(), np.int64, len(producer)) == INITIALIZER).tolist()
    if rows:
        keys = list(producer)
        found.update(keys[k] for k in rows)
    return found


def _add_item(sg: ScopeGraph, kind: BoxKind, node: int, value: str, note: str) -> int:
    sg.item_kind.append(kind)
    sg.item_node.append(node)
    sg.item_value.append(value)
    sg.item_note.append(note)
    return len(sg.item_kind) - 1


CONSTANT_OPS = frozenset({"Constant", "ConstantOfShape"})
# operators that only reshape, retype or dequantize a weight: fed by constants alone, they are drawn as a
# marked line of their reader's box (``W <64x64> · DequantizeLinear``), not as a box of their own
WEIGHT_OPS = frozenset({"Identity", "DequantizeLinear", "Cast", "CastLike", "Transpose", "Reshape",
                        "Unsqueeze", "Squeeze", "Flatten"})
_UNDEFINED = -10   # a value nothing in the scope produces
_CONST = -100      # a constant's producer, as _collect_edges looks it up
SAME_SHAPE_OPS = frozenset({"Identity", "DequantizeLinear", "Cast", "CastLike"})
CHAIN_DEPTH = 8  # weight operators listed after a weight's shape
_CANDIDATE_OPS = CONSTANT_OPS | WEIGHT_OPS


def _absorbed_constants(g: GraphIndex, const_values: set[str], ops: list[str], nonconst: list[int]) -> set[int]:
    """Constant-making nodes shown inside their consumers (adds their outputs to ``const_values``).

    A ``Constant``, or a ``ConstantOfShape`` of a constant shape, qualifies when
    every output is used by some node and none is a graph output; so does a
    weight operator (:data:`WEIGHT_OPS`) whose inputs are all constants, e.g. the
    ``Identity`` of a shared weight or the ``DequantizeLinear`` of an int8 one,
    and chains of them (nodes are visited in file order, which is topological).

    ``nonconst``: per node, its reads of values not in ``const_values`` as given. A node with such a read
    is looked at only when it reads an output of a node absorbed before it (or holds a body, whose outer
    reads count as its reads too): else that read still is no constant.
    """
    outputs = set(g.output_names)
    hidden: set[int] = set()
    nodes = g.nodes
    candidates = _CANDIDATE_OPS.__contains__
    maybe = {n for n, _, _ in g.children}   # besides the nodes with no read of a non-constant
    for i in compress(range(len(ops)), map(candidates, ops)):
        if nonconst[i] and i not in maybe:
            continue
        node = nodes[i]
        op = ops[i]
        inputs = node.input
        if not const_values.issuperset(filter(None, inputs)):   # the usual reason: first, and in C
            continue
        if node.domain not in ("", "ai.onnx") and not (op == "DequantizeLinear" and node.domain == "com.microsoft"):
            continue
        if op in WEIGHT_OPS and not any(inputs):
            continue
        outs = [o for o in node.output if o]
        if outs and all(g.consumers.get(o) and o not in outputs and g.producer.get(o) == i for o in outs):
            hidden.add(i)
            const_values.update(outs)
            for o in outs:
                maybe.update(g.consumers[o])
    return hidden


def _collect_edges(sg: ScopeGraph, terminal_of: dict[str, int], output_of: dict[str, int], reads: _Reads) -> None:
    """Value edges producer item -> consumer item, built with numpy (graphs have 100k+ values)."""
    g = sg.graph
    node_item = sg.node_item
    producer = g.producer
    names, prod, lens, consumers = reads.names, reads.prod, reads.lens, reads.readers
    source = _items_of(prod, names, node_item, terminal_of)
    valid = (source >= 0) & (prod != _CONST)
    vid = np.cumsum(valid) - 1
    values = list(compress(names, valid.tolist()))
    dst = node_item[consumers] if len(consumers) else consumers
    keep = np.repeat(valid, lens) & (dst >= 0)  # absorbed constants consume nothing drawn
    src, val, dst = np.repeat(source, lens)[keep], np.repeat(vid, lens)[keep], dst[keep]
    out_names = list(output_of)
    out_src = _source_items(out_names, producer, node_item, terminal_of)
    value_id = _consumed_outputs(g, out_names, names, valid, vid)
    out_val = []
    for name, s in zip(out_names, out_src.tolist(), strict=True):
        if s >= 0 and name not in value_id:
            value_id[name] = len(values)
            values.append(name)
        out_val.append(value_id.get(name, -1))
    has_src = out_src >= 0
    sg.values = values
    sg.e_src = np.concatenate([src, out_src[has_src]]).astype(np.int64)
    sg.e_dst = np.concatenate([dst, np.fromiter(output_of.values(), np.int64, len(out_names))[has_src]])
    sg.e_val = np.concatenate([val, np.array(out_val, np.int64)[has_src]]).astype(np.int64)


def _consumed_outputs(g: GraphIndex, out_names: list[str], names: list[str], valid: np.ndarray,
                      vid: np.ndarray) -> dict[str, int]:
    """Value id of each graph output that is also an edge's value already (``names[k]`` is value ``vid[k]``
    when ``valid[k]``): an output some node reads too."""
    consumed = {name for name in out_names if name in g.consumers}
    if not consumed:
        return {}
    found = compress(range(len(names)), map(consumed.__contains__, names))
    return {names[k]: int(vid[k]) for k in found if valid[k]}


def _source_items(names: list[str], producer: dict[str, int], node_item: np.ndarray,
                  terminal_of: dict[str, int]) -> np.ndarray:
    """Item producing each value (a node's or a terminal's), -1 if none is drawn."""
    prod = np.fromiter(map(producer.get, names, repeat(_UNDEFINED, len(names))), np.int64, len(names))
    return _items_of(prod, names, node_item, terminal_of)


def _items_of(prod: np.ndarray, names: list[str], node_item: np.ndarray, terminal_of: dict[str, int]) -> np.ndarray:
    """Item producing each value, from its producer ``prod`` (a node position, or negative: a terminal's if
    ``terminal_of`` has one), -1 if none is drawn."""
    term = np.full(len(names), -1, np.int64)
    for k in np.flatnonzero((prod < 0) & (prod != _CONST)).tolist():   # graph inputs, values from outside: few
        term[k] = terminal_of.get(names[k], -1)
    if not len(node_item):
        return term
    return np.where(prod >= 0, node_item[np.clip(prod, 0, len(node_item) - 1)], term)


# -- box texts ----------------------------------------------------------------------------
def clip(text: str, limit: int = MAX_TEXT) -> str:
    if type(text) is str and len(text) <= limit and text.isprintable():   # the common case, in a call less
        return text
    text = display_name(text, None)  # control and bidi-override characters drawn escaped
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def item_text(sg: ScopeGraph, item: int) -> BoxText:
    kind = sg.item_kind[item]
    if kind == BoxKind.OP:
        return _node_text(sg, sg.item_node[item])
    name = sg.item_value[item]
    t, _ = sg.index.type_of(sg.graph.scope, name)
    desc = " ".join(s for s in (dtype_text(t), shape_text(t)) if s)
    note = sg.item_note[item]
    if note and sg.graph.parent is not None:  # a value from outside the body: its value, when a small constant
        sg.small = sg.small or SmallValues(sg.graph)
        value = sg.small.text(name)
        desc = f"{desc} = {value}".lstrip() if value is not None else desc
    lines = [clip(x) for x in (desc, note) if x]
    return BoxText(clip(name), "", lines, Category.TERMINAL, OUTER_CAPTION_CHARS * CHAR_W + 24 if note else 0.0)


def _node_text(sg: ScopeGraph, i: int) -> BoxText:
    node = sg.graph.nodes[i]
    key = (node.domain, node.op_type, node.overload)
    info = sg.op_info.get(key)
    if info is None:
        info = sg.op_info[key] = _op_info(sg, node)
    title, cat, roles = info
    lines: list[str] = []
    consts = [(k, x) for k, x in enumerate(node.input) if x and x in sg.const_values]
    if consts:
        for k, x in consts[:MAX_LINES]:
            role = roles[min(k, len(roles) - 1)] if roles else x
            lines.append(clip(_const_line(sg, role, x)))
        if len(consts) > MAX_LINES:
            lines[-1] = f"\u2026 {len(consts) - MAX_LINES + 1} more"
    marks = _marks_w(sg, i) if sg.graph.children or sg.index.functions else 0.0  # (a call less per node)
    return BoxText(title, clip(node.name, NAME_TEXT), lines, cat, marks)


def _marks_w(sg: ScopeGraph, i: int) -> float:
    """Header room for what the canvas draws beside the title of node ``i`` (see :class:`BoxText`)."""
    if sg.holders is None:
        sg.holders = frozenset(n for n, _, _ in sg.graph.children)
    if i in sg.holders:
        return BODY_BUTTONS_W
    if sg.index.functions and sg.index.function_for(sg.graph.nodes[i]) is not None:
        return CALL_MARK_W
    return 0.0


def _const_line(sg: ScopeGraph, role: str, name: str) -> str:
    """``B = 16000`` for a small constant, ``W <64×3×7×7>`` (and the weight operators that made it) for others."""
    dims = _initializer_dims(sg).get(name)
    value = None
    if dims is None or math.prod(dims) <= SMALL_ELEMENTS:  # a weight's dims are known: most lines stop here
        sg.small = sg.small or SmallValues(sg.graph)
        value = sg.small.text(name)
    if value is not None and value.endswith(" (ref)") and sg.call:  # the caller's value of the attribute
        given = sg.call.get(_reference_of(sg, name))
        value = f"{value} = {given}" if given is not None else value
    return f"{role} = {value}" if value is not None else f"{role} {_const_text(sg, name)}"


def _reference_of(sg: ScopeGraph, name: str) -> str:
    """The function attribute the Constant making ``name`` refers to ('' if none)."""
    p = sg.graph.producer.get(name, -1)
    node = sg.graph.nodes[p] if p >= 0 else None
    return next((a.ref_attr_name for a in node.attribute if a.ref_attr_name), "") if node is not None else ""


def _op_info(sg: ScopeGraph, node: onnx.NodeProto) -> tuple[str, Category, list[str]]:
    """(box title, category, input role names from the schema) of an operator."""
    cat = category_of(node.op_type, node.domain, sg.index.function_for(node) is not None)
    title = node.op_type or "?"
    if cat == Category.CUSTOM and node.domain:
        title = f"{node.domain}.{title}"
    schema = node_schema(sg.index.model, node)
    roles = [p.name for p in schema.inputs] if schema is not None else []
    return clip(title), cat, roles


def _const_text(sg: ScopeGraph, name: str) -> str:
    """``<64x3x7x7>``, and after it the weight operators that made the value (``· DequantizeLinear``)."""
    if sg.graph.producer.get(name, -1) < 0:  # an initializer (or a value from outside); its type unless float32
        stored = _stored_type(sg, name)
        return f"{stored if stored not in ('', 'float32') else ''} <{_plain_const_shape(sg, name)}>".lstrip()
    ops: list[str] = []
    source = name
    dequantize: onnx.NodeProto | None = None
    while len(ops) < CHAIN_DEPTH:
        p = sg.graph.producer.get(source, -1)
        node = sg.graph.nodes[p] if p >= 0 else None
        if node is None or node.op_type not in WEIGHT_OPS or not node.input:
            if node is not None and node.op_type != "Constant":  # the operator that made it: ConstantOfShape...
                ops.append(node.op_type)
            break
        ops.append(node.op_type)
        dequantize = node if node.op_type == "DequantizeLinear" else dequantize
        source = node.input[0]
    shape = _plain_const_shape(sg, name)
    if shape == "?" and ops and all(op in SAME_SHAPE_OPS for op in ops):
        shape = _plain_const_shape(sg, source)
    if dequantize is None:
        return " · ".join([f"<{shape}>", *reversed(ops)])
    ops.remove("DequantizeLinear")
    stored = _stored_type(sg, dequantize.input[0])
    return " · ".join([f"{stored} <{shape}>".lstrip(), _scale_text(sg, dequantize), *reversed(ops)])


def _stored_type(sg: ScopeGraph, name: str) -> str:
    """The element type a quantized weight is stored as (``int8``), '' when unknown."""
    t, _ = sg.index.type_of(sg.graph.scope, name)
    if t is None:
        if sg.init_types is None:  # looked up by name: a search of the list for each weight was quadratic
            tensors = sg.graph.graph.initializer if sg.graph.graph is not None else []
            sg.init_types = {x.name: x.data_type for x in tensors}
        data_type = sg.init_types.get(name)
        return tensor_dtype_name(data_type) if data_type is not None else ""
    return dtype_text(t)


def _scale_text(sg: ScopeGraph, dequantize: onnx.NodeProto) -> str:
    """What a DequantizeLinear's scale says of its weight: ``per-tensor scale``, ``per-channel scale <16>``,
    ``blocked scale <16×2>``."""
    if len(dequantize.input) < 2 or not dequantize.input[1]:
        return "DequantizeLinear"
    shape = _plain_const_shape(sg, dequantize.input[1])
    if shape in ("scalar", "1"):
        return "per-tensor scale"
    if shape == "?":
        return "DequantizeLinear"
    return f"{'per-channel' if DIM_SEP not in shape else 'blocked'} scale <{shape}>"


def _plain_const_shape(sg: ScopeGraph, name: str) -> str:
    dims = _initializer_dims(sg).get(name)
    if dims is not None:
        return join_dims([str(d) for d in dims]) if dims else "scalar"
    t, _ = sg.index.type_of(sg.graph.scope, name)
    if t is not None:
        return shape_text(t)
    p = sg.graph.producer.get(name, -1)
    if p >= 0 and sg.graph.nodes[p].op_type in CONSTANT_OPS:
        return _constant_node_shape(sg, sg.graph.nodes[p])
    return "?"


def _initializer_dims(sg: ScopeGraph) -> dict[str, list[int]]:
    if sg.init_dims is None:
        sg.init_dims = {}
        if sg.graph.graph is not None:
            sg.init_dims = {t.name: list(t.dims) for t in sg.graph.graph.initializer}
            sg.init_dims.update({s.values.name: list(s.dims) for s in sg.graph.graph.sparse_initializer})
    return sg.init_dims


def _constant_node_shape(sg: ScopeGraph, node: onnx.NodeProto) -> str:
    if node.op_type == "ConstantOfShape":
        return _shape_tensor_text(sg, node.input[0]) if node.input else "scalar"
    for a in node.attribute:
        if a.name in ("value", "sparse_value"):
            dims = list(a.t.dims) if a.name == "value" else list(a.sparse_tensor.dims)
            return join_dims([str(d) for d in dims]) if dims else "scalar"
        if a.name in ("value_floats", "value_ints", "value_strings"):
            return str(len(a.floats) or len(a.ints) or len(a.strings))
        if a.name in ("value_float", "value_int", "value_string"):
            return "scalar"
    return "?"


def _shape_tensor_text(sg: ScopeGraph, name: str) -> str:
    """The values of a small constant int64 shape tensor as ``2x3``."""
    g = sg.graph.graph
    tensor = next((t for t in g.initializer if t.name == name), None) if g is not None else None
    if tensor is None or len(tensor.dims) != 1 or tensor.dims[0] > 16 or tensor.data_location == 1:
        return "?"
    try:
        dims = onnx.numpy_helper.to_array(tensor).tolist()
    except Exception:  # noqa: BLE001 - a broken tensor only costs the label
        return "?"
    return join_dims([str(d) for d in dims]) if dims else "scalar"
