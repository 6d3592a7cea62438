"""Short rich-text descriptions of boxes and edges for tooltips."""

from __future__ import annotations

from html import escape

from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.layout.scene import BoxKind, Scene
from onnxviz.model.text import dtype_text, join_dims, shape_text, tensor_dtype_name

MAX_PORTS = 8


def value_text(index: ModelIndex, scope: str, name: str) -> str:
    t, inferred = index.type_of(scope, name)
    if t is None:
        return escape(name) + _initializer_text(index, scope, name)
    kind = " <i>(inferred)</i>" if inferred else ""
    return f"{escape(name)}: {escape(dtype_text(t))} [{escape(shape_text(t, names=True))}]{kind}"


def _initializer_text(index: ModelIndex, scope: str, name: str) -> str:
    g = index.graphs.get(scope)
    while g is not None:
        if g.graph is not None and name in g.initializer_names:
            for tensor in g.graph.initializer:
                if tensor.name == name:
                    dims = join_dims([str(d) for d in tensor.dims]) or "scalar"
                    return f": {escape(tensor_dtype_name(tensor.data_type))} [{dims}] (initializer)"
        g = g.parent
    return ""


def box_tooltip(index: ModelIndex, scene: Scene, box: int) -> str:
    ref = scene.box_ref[box]
    if ref.kind == BoxKind.GROUP:
        lines = "<br>".join(escape(x) for x in scene.box_lines[box])
        return f"<b>{escape(ref.group)}</b><br>{lines}<br><i>Double-click to expand</i>"
    if ref.kind in (BoxKind.INPUT, BoxKind.OUTPUT):
        what = "graph input" if ref.kind == BoxKind.INPUT else "graph output"
        if box in outer_boxes(index, scene):
            what = "read from the outer graph (not an input of this body)"
        return f"<b>{what}</b><br>{value_text(index, scene.scope, ref.value)}"
    g = index.graphs.get(scene.scope)
    if g is None or not 0 <= ref.node < len(g.nodes):
        return escape(scene.box_title[box])
    node = g.nodes[ref.node]
    domain = f" ({escape(node.domain)})" if node.domain and node.domain != "ai.onnx" else ""
    parts = [f"<b>{escape(node.op_type)}</b>{domain} {escape(node.name)}"]
    for label, names in (("in", node.input), ("out", node.output)):
        shown = [value_text(index, scene.scope, n) for n in list(names)[:MAX_PORTS] if n]
        more = f" ... {len(names) - MAX_PORTS} more" if len(names) > MAX_PORTS else ""
        parts += [f"{label}: {s}" for s in shown] + ([more] if more else [])
    if any(i == ref.node for i, _, _ in g.children) or index.function_for(node) is not None:
        parts.append("<i>Double-click to open its graph</i>")
    return "<br>".join(parts)


def enterable_boxes(index: ModelIndex, scene: Scene) -> frozenset[int]:
    """Boxes of nodes that hold subgraphs (If/Loop/Scan bodies) or call a model-local function."""
    g = index.graphs.get(scene.scope)
    if g is None:
        return frozenset()
    holders = {i for i, _, _ in g.children}
    if index.functions:
        holders |= {i for i, node in enumerate(g.nodes) if index.function_for(node) is not None}
    if not holders:  # most graphs: no look at each box (123k of them took ~0.9 s of the GUI thread)
        return frozenset()
    return frozenset(b for b, ref in enumerate(scene.box_ref) if ref.kind == BoxKind.OP and ref.node in holders)


def outer_boxes(index: ModelIndex, scene: Scene) -> frozenset[int]:
    """Input boxes of a subgraph that stand for values it reads from an enclosing graph (captures)."""
    g = index.graphs.get(scene.scope)
    if g is None or g.parent is None:
        return frozenset()
    return frozenset(b for b, ref in enumerate(scene.box_ref)
                     if ref.kind == BoxKind.INPUT and ref.value not in g.producer and g.parent.defines(ref.value))


def edge_tooltip(index: ModelIndex, scene: Scene, edge: int) -> str:
    return value_text(index, scene.scope, scene.edge_value[edge])
