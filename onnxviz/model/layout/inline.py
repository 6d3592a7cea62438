"""If/Loop/Scan bodies drawn inside their node, like an expanded group.

:class:`InlineLayout` is a :class:`~onnxviz.model.layout.engine.GraphLayout` whose nodes listed in
``inline`` are given a box big enough for their bodies (laid out first, each by a layout of its own),
so the graph around makes room for them; the finished scene then gets each body's boxes, edges and
frames moved into place. The node's own box keeps its header (and weight lines) at the top of that
room; a frame goes around it all and one around each body, labelled with the body's attribute name.
Bodies sit side by side across the flow: in a row top to bottom, in a column left to right (each body
laid out in the same direction as the graph around it).

Bodies nest: a body is an :class:`InlineLayout` of its own, given the same ``inline`` set, which names
nodes as positions of the shown scope or as ``(scope, position)`` pairs of any body (an If inside a
Loop's body). :attr:`InlineLayout.embedded` lists every body drawn, at any depth, with its rows in the
combined scene.

The bodies' boxes keep what they stand for in :attr:`InlineLayout.embedded` (the body's own scene and
the rows its boxes, edges and frames took); in the combined scene their :class:`BoxRef` is a
placeholder that names nothing of the shown graph (``node`` -1, ``value`` and ``group``
:data:`EMBEDDED`), so nothing reading the shown graph's refs mistakes them for its own nodes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypeAlias

import numpy as np

from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.layout.engine import GraphLayout
from onnxviz.model.layout.options import LayoutOptions
from onnxviz.model.layout.scene import BoxRef, Scene
from onnxviz.model.layout.scope import BoxText
from onnxviz.model.progress import CancelToken, ProgressFn, no_progress

EMBEDDED = "\x00embedded"   # value and group of a body box's placeholder ref
PAD = 14.0       # inside the node's room, around the bodies
GAP = 28.0       # between two bodies side by side
LABEL_H = 22.0   # a body frame's label band
BODY_ORDER = {"then_branch": 0, "else_branch": 1}   # an If's bodies side by side (or one above the other)

Holder: TypeAlias = tuple[str, int]   # (scope, position of the node in it): a node whose bodies are drawn inside it


@dataclass
class SizedText(BoxText):
    """A box text whose size is given: a node with its bodies inside."""

    fixed: tuple[float, float] = (0.0, 0.0)

    def size(self, names: bool = False) -> tuple[float, float]:
        return self.fixed   # the room its bodies take, whatever the names


@dataclass
class Embedded:
    """One body drawn inside node ``node`` (of scope ``parent``): its own scene (without the bodies drawn
    inside its nodes, listed after it), and the rows of the combined scene it took."""

    node: int
    scope: str
    label: str
    scene: Scene
    box_start: int
    edge_start: int
    frame: int           # the frame around this body
    frame_start: int     # the body's own group frames start here
    offset: tuple[float, float] = (0.0, 0.0)   # added to the body scene's coordinates
    parent: str = ""     # the scope ``node`` is in

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
    layout: InlineLayout
    scene: Scene   # as drawn: with the bodies inside its nodes
    bounds: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)


class InlineLayout(GraphLayout):
    """A graph layout that can draw the bodies of some of its nodes inside them (``inline``: positions in
    this scope, or (scope, position) pairs at any depth)."""

    def __init__(self, index: ModelIndex, scope: str = "", expanded: Iterable[str] | None = None,
                 inline: Iterable[int | Holder] = (), options: LayoutOptions | None = None) -> None:
        super().__init__(index, scope, expanded, options)
        holders = {node for node, _, _ in self.graph.graph.children}
        self.inline_all: frozenset[Holder] = frozenset(
            (h[0], int(h[1])) if isinstance(h, tuple) else (scope, int(h)) for h in inline)
        self.inline: frozenset[int] = frozenset(n for s, n in self.inline_all if s == scope and n in holders)
        self._bodies: dict[int, list[_Body]] = {}
        self.embedded: list[Embedded] = []
        self.frame_holders: dict[int, Holder] = {}   # frame row around a node's bodies -> that node, any depth
        self._shown: Scene | None = None   # the scene with the bodies in place

    @property
    def scene(self) -> Scene:
        return self._shown if self._shown is not None else super().scene

    @property
    def own_scene(self) -> Scene:
        """This scope's drawing without the bodies inside its nodes."""
        return super().scene

    @property
    def container_frames(self) -> dict[int, int]:
        """Frame row around the bodies of a node of this scope -> that node."""
        return {f: node for f, (scope, node) in self.frame_holders.items() if scope == self.scope}

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
        gaps = GAP * (len(bodies) - 1)
        if self.options.across:   # a column of bodies
            inner_w = max(b.bounds[2] for b in bodies)
            inner_h = sum(b.bounds[3] + LABEL_H for b in bodies) + gaps
        else:                     # a row of bodies
            inner_w = sum(b.bounds[2] for b in bodies) + gaps
            inner_h = max(b.bounds[3] for b in bodies) + LABEL_H
        return SizedText(text.title, text.name, text.lines, text.category,
                         fixed=(max(w, inner_w + 2 * PAD), h + inner_h + 2 * PAD))

    # -- building ------------------------------------------------------------------------------
    def build(self, progress: ProgressFn = no_progress, cancel: CancelToken | None = None) -> Scene:
        self._bodies = {node: self._lay_out_bodies(node) for node in sorted(self.inline)}
        return self._embed(super().build(progress, cancel))

    def _lay_out_bodies(self, node: int) -> list[_Body]:
        """The bodies of ``node``, laid out, in reading order: an If's then branch before its else branch
        (however the file orders the attributes: onnx's helper sorts them by name, else first)."""
        out = []
        children = [c for c in self.graph.graph.children if c[0] == node and c[2] in self.index.graphs]
        for _holder, label, scope in sorted(children, key=lambda c: BODY_ORDER.get(c[1].rsplit(".", 1)[-1], 2)):
            body = InlineLayout(self.index, scope, inline=self.inline_all, options=self.options)
            body.expand_all()   # every group open: it is read here
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
            body.bounds = body.scene.bounds()   # it was laid out again
        return self._embed(super().relabel())

    def refresh_nodes(self, nodes: Iterable[int]) -> Scene | None:
        return None if self.inline else super().refresh_nodes(nodes)   # an inline body: lay out again

    # -- composing ------------------------------------------------------------------------------
    def _embed(self, scene: Scene) -> Scene:
        """``scene`` with the bodies moved into their nodes' boxes (a new Scene; ``scene`` is left as is)."""
        embedded: list[Embedded] = []
        containers: dict[int, Holder] = {}
        if not self._bodies:
            self.embedded, self.frame_holders, self._shown = embedded, containers, None
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
            containers[frames] = (self.scope, node)
            parts.append(_frames_only([f"{node}"], [(x, y, w, h)], [0]))
            frames += 1
            across = self.options.across
            left = x + PAD if across else x + (w - sum(b.bounds[2] for b in bodies) - GAP * (len(bodies) - 1)) / 2
            top = y + head_h + PAD
            for body in bodies:
                bx, by, bw, bh = body.bounds
                frame = _frames_only([body.label], [(left - PAD / 2, top, bw + PAD, bh + LABEL_H + PAD / 2)], [1])
                parts.append(frame)
                offset = (left - bx, top + LABEL_H - by)
                parts.append(_moved(body.scene, offset, boxes))
                embedded.append(Embedded(node, body.scope, body.label, body.layout.own_scene, boxes, edges, frames,
                                         frames + 1, offset, self.scope))
                embedded += _nested(body.layout, boxes, edges, frames + 1, offset)
                containers.update({f + frames + 1: h for f, h in body.layout.frame_holders.items()})
                boxes, edges, frames = boxes + body.scene.n_boxes, edges + body.scene.n_edges, \
                    frames + 1 + len(body.scene.group_path)
                if across:
                    top += bh + LABEL_H + GAP
                else:
                    left += bw + GAP
        if len(parts) == 1:
            return scene
        shown = concatenate([dataclasses.replace(scene, box_h=box_h), *parts[1:]], scene)
        self.embedded, self.frame_holders, self._shown = embedded, containers, shown   # all at once
        return shown


def _nested(body: InlineLayout, boxes: int, edges: int, frames: int, offset: tuple[float, float]) -> list[Embedded]:
    """The bodies drawn inside a body's nodes, their rows and offsets counted in the combined scene (the
    body's drawing starts at these rows and is moved by ``offset``)."""
    dx, dy = offset
    return [dataclasses.replace(e, box_start=e.box_start + boxes, edge_start=e.edge_start + edges,
                                frame=e.frame + frames, frame_start=e.frame_start + frames,
                                offset=(e.offset[0] + dx, e.offset[1] + dy)) for e in body.embedded]


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


def concatenate(parts: list[Scene], main: Scene) -> Scene:
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
