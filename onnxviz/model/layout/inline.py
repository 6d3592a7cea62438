"""If/Loop/Scan bodies drawn inside their node, like an expanded group.

:class:`InlineLayout` is a :class:`~onnxviz.model.layout.engine.GraphLayout` whose nodes listed in
``inline`` are given a box big enough for their bodies (laid out first, each by a layout of its own),
so the graph around makes room for them; the finished scene then gets each body's boxes, edges and
frames moved into place. The node's own box keeps its header (and weight lines) at the top of that
room; a frame goes around it all and one around each body, labelled with the body's attribute name.

The bodies' boxes keep what they stand for in :attr:`InlineLayout.embedded` (the body's own scene and
the rows its boxes, edges and frames took); in the combined scene their :class:`BoxRef` is a
placeholder that names nothing of the shown graph (``node`` -1, ``value`` and ``group``
:data:`EMBEDDED`), so nothing reading the shown graph's refs mistakes them for its own nodes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.layout.engine import GraphLayout
from onnxviz.model.layout.scene import BoxRef, Scene
from onnxviz.model.layout.scope import BoxText
from onnxviz.model.progress import CancelToken, ProgressFn, no_progress

EMBEDDED = "\x00embedded"   # value and group of a body box's placeholder ref
PAD = 14.0       # inside the node's room, around the bodies
GAP = 28.0       # between two bodies side by side
LABEL_H = 22.0   # a body frame's label band


@dataclass
class SizedText(BoxText):
    """A box text whose size is given: a node with its bodies inside."""

    fixed: tuple[float, float] = (0.0, 0.0)

    def size(self, names: bool = False) -> tuple[float, float]:
        return self.fixed   # the room its bodies take, whatever the names


@dataclass
class Embedded:
    """One body drawn inside node ``node``: its scene, and the rows of the combined scene it took."""

    node: int
    scope: str
    label: str
    scene: Scene
    box_start: int
    edge_start: int
    frame: int           # the frame around this body
    frame_start: int     # the body's own group frames start here
    offset: tuple[float, float] = (0.0, 0.0)   # added to the body scene's coordinates

    @property
    def box_end(self) -> int:
        return self.box_start + self.scene.n_boxes

    @property
    def edge_end(self) -> int:
        return self.edge_start + self.scene.n_edges


@dataclass
class _Body:
    scope: str
    label: str
    layout: GraphLayout
    scene: Scene
    bounds: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)


class InlineLayout(GraphLayout):
    """A graph layout that can draw the bodies of some of its nodes inside them (``inline``: positions)."""

    def __init__(self, index: ModelIndex, scope: str = "", expanded: Iterable[str] | None = None,
                 inline: Iterable[int] = ()) -> None:
        super().__init__(index, scope, expanded)
        holders = {node for node, _, _ in self.graph.graph.children}
        self.inline: frozenset[int] = frozenset(n for n in inline if n in holders)
        self._bodies: dict[int, list[_Body]] = {}
        self.embedded: list[Embedded] = []
        self.container_frames: dict[int, int] = {}   # frame row around a node's bodies -> node
        self._shown: Scene | None = None   # the scene with the bodies in place

    @property
    def scene(self) -> Scene:
        return self._shown if self._shown is not None else super().scene

    # -- sizes -----------------------------------------------------------------------------
    def item_text(self, item: int) -> BoxText:
        text = super().item_text(item)
        if not self._bodies:
            return text
        node = self.graph.item_node[item]
        bodies = self._bodies.get(node) if node >= 0 else None
        if not bodies:
            return text
        w, h = text.size()
        inner_w = sum(b.bounds[2] for b in bodies) + GAP * (len(bodies) - 1)
        inner_h = max(b.bounds[3] for b in bodies) + LABEL_H
        return SizedText(text.title, text.name, text.lines, text.category,
                         fixed=(max(w, inner_w + 2 * PAD), h + inner_h + 2 * PAD))

    # -- building ------------------------------------------------------------------------------
    def build(self, progress: ProgressFn = no_progress, cancel: CancelToken | None = None) -> Scene:
        self._bodies = {node: self._lay_out_bodies(node) for node in sorted(self.inline)}
        return self._embed(super().build(progress, cancel))

    def _lay_out_bodies(self, node: int) -> list[_Body]:
        out = []
        for holder, label, scope in self.graph.graph.children:
            if holder != node or scope not in self.index.graphs:
                continue
            body = GraphLayout(self.index, scope)
            body = GraphLayout(self.index, scope, expanded=body.tree.paths)   # every group open: it is read here
            scene = body.build()
            out.append(_Body(scope, label.rsplit(".", 1)[-1], body, scene, scene.bounds()))
        return out

    def expand(self, group: str) -> Scene:
        return self._embed(super().expand(group))

    def collapse(self, group: str) -> Scene:
        return self._embed(super().collapse(group))

    def relabel(self) -> Scene:
        for body in (b for bodies in self._bodies.values() for b in bodies):   # inferred shapes arrived
            body.scene = body.layout.relabel()
        return self._embed(super().relabel())

    def refresh_nodes(self, nodes: Iterable[int]) -> Scene | None:
        return None if self.inline else super().refresh_nodes(nodes)   # an inline body: lay out again

    # -- composing ------------------------------------------------------------------------------
    def _embed(self, scene: Scene) -> Scene:
        """``scene`` with the bodies moved into their nodes' boxes (a new Scene; ``scene`` is left as is)."""
        embedded: list[Embedded] = []
        containers: dict[int, int] = {}
        if not self._bodies:
            self.embedded, self.container_frames, self._shown = embedded, containers, None
            return scene
        parts: list[Scene] = [scene]
        boxes, edges, frames = scene.n_boxes, scene.n_edges, len(scene.group_path)
        box_h = scene.box_h.copy()
        for node, bodies in self._bodies.items():
            row = scene.box_of_node(node)
            if row < 0 or scene.box_ref[row].node != node:   # inside a collapsed group
                continue
            head_h = super().item_text(int(self.graph.node_item[node])).size()[1]
            x, y, w, h = (float(scene.box_x[row]), float(scene.box_y[row]), float(scene.box_w[row]),
                          float(scene.box_h[row]))
            box_h[row] = head_h   # the node's own box is its header; the room below holds the bodies
            containers[frames] = node
            parts.append(_frames_only([f"{node}"], [(x, y, w, h)], [0]))
            frames += 1
            left = x + (w - sum(b.bounds[2] for b in bodies) - GAP * (len(bodies) - 1)) / 2
            top = y + head_h + PAD
            for body in bodies:
                bx, by, bw, bh = body.bounds
                frame = _frames_only([body.label], [(left - PAD / 2, top, bw + PAD, bh + LABEL_H + PAD / 2)], [1])
                parts.append(frame)
                offset = (left - bx, top + LABEL_H - by)
                moved = _moved(body.scene, offset, boxes)
                embedded.append(Embedded(node, body.scope, body.label, body.scene, boxes, edges, frames,
                                              frames + 1, offset))
                parts.append(moved)
                boxes, edges, frames = boxes + body.scene.n_boxes, edges + body.scene.n_edges, \
                    frames + 1 + len(body.scene.group_path)
                left += bw + GAP
        if len(parts) == 1:
            return scene
        shown = _concatenate([dataclasses.replace(scene, box_h=box_h), *parts[1:]], scene)
        self.embedded, self.container_frames, self._shown = embedded, containers, shown   # all at once
        return shown


def _frames_only(paths: list[str], rects: list[tuple[float, float, float, float]], depths: list[int]) -> Scene:
    return Scene(group_path=list(paths), group_rect=np.array(rects, np.float32).reshape(-1, 4),
                 group_depth=np.array(depths, np.int16))


def _moved(body: Scene, offset: tuple[float, float], first_box: int) -> Scene:
    """``body`` shifted by ``offset``, its edges' box rows counted from ``first_box``, its refs placeholders."""
    dx, dy = offset
    rects = body.group_rect.copy()
    rects[:, 0] += dx
    rects[:, 1] += dy
    return dataclasses.replace(
        body, box_x=body.box_x + dx, box_y=body.box_y + dy,
        box_ref=[BoxRef(ref.kind, -1, EMBEDDED, EMBEDDED) for ref in body.box_ref],
        edge_src=body.edge_src + first_box, edge_dst=body.edge_dst + first_box,
        edge_points=body.edge_points + np.array([dx, dy], np.float32),
        group_path=[f"{EMBEDDED}/{p}" for p in body.group_path], group_rect=rects,
        group_depth=body.group_depth + 2)


def _concatenate(parts: list[Scene], main: Scene) -> Scene:
    """One scene of ``parts`` (rows already numbered for their place): the main scene's node_box is kept.

    Every per-box (``box_*``), per-edge (``edge_*``) and per-frame (``group_*``) field is joined, so a
    field the layout adds later joins too."""
    joined: dict[str, object] = {}
    for f in dataclasses.fields(Scene):
        name = f.name
        values = [getattr(p, name) for p in parts]
        if name == "edge_offsets":
            ends, total = [np.asarray(main.edge_offsets[:1], np.int64)], 0
            for p in parts:
                ends.append(np.asarray(p.edge_offsets[1:], np.int64) + total)
                total += int(p.edge_offsets[-1]) if len(p.edge_offsets) else 0
            joined[name] = np.concatenate(ends)
        elif name.startswith(("box_", "edge_", "group_")):
            joined[name] = np.concatenate([np.asarray(v) for v in values]).astype(np.asarray(values[0]).dtype) \
                if isinstance(values[0], np.ndarray) else [x for v in values for x in v]
    return dataclasses.replace(main, **joined)  # type: ignore[arg-type]
