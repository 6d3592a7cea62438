"""The canvas follows the document's selection: a click selects what it hits, the selected box, its edges
and neighbours are highlighted and brought into view, the arrow keys step to a neighbour. A group or a
ghost can be selected too: they are no node of the document, so that selection lives here."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from PySide6.QtCore import QObject, Signal

from onnxviz.model.layout.inline import EMBEDDED
from onnxviz.model.layout.scene import BoxKind
from onnxviz.model.layout.scope import CHAIN_DEPTH, WEIGHT_OPS
from onnxviz.model.selection import SelectionState
from onnxviz.ui.canvas import style
from onnxviz.ui.canvas.shown import ShownGraph
from onnxviz.ui.canvas.view import GraphView

ShowScope = Callable[[str, Callable[[], None] | None], None]   # (scope, then) -> None


class SelectionFollower(QObject):
    """Clicks to selections, selections to highlights and view moves.

    ``show_scope(scope, then)`` shows another graph (a selection made elsewhere in the model),
    ``expand_group(path)`` opens a group (a click on the ghosts inside a collapsed one)."""

    ghost_selected = Signal(int)   # the key of the ghost box clicked or selected
    weight_row_clicked = Signal(str, str)  # (scope, value) of the weight row of a box that was clicked

    def __init__(self, shown: ShownGraph, view: GraphView, show_scope: ShowScope,
                 expand_group: Callable[[str], None], parent: QObject) -> None:
        super().__init__(parent)
        self.shown, self.view = shown, view
        self._show_scope, self._expand_group = show_scope, expand_group
        self._group_selected = -1   # a group (or ghost) box selected
        self._frame_selected = ""   # an expanded group selected by its frame's title (its path)

    def forget(self) -> None:
        """A new scene: no group, ghost or frame selected."""
        self._group_selected = -1
        self._frame_selected = ""

    # -- the document's selection ----------------------------------------------------------------------
    def on_selection(self, state: SelectionState) -> None:
        """The document's selection changed: show its scope if needed, highlight it and bring it into view."""
        doc = self.shown.doc
        if doc is None:
            return
        scope = self.shown.scope
        if state.scope != scope and state.scope not in self.shown.inline_scopes() and not state.is_empty \
                and state.scope in doc.index.graphs:
            self._show_scope(state.scope, lambda: self.follow(center=True))
            return
        self.forget()
        self.follow(center=True)

    def selected_box(self) -> int:
        """Row of the box showing the selected node (or its group box), or -1."""
        doc, d = self.shown.doc, self.shown.drawable
        if doc is None or d is None:
            return -1
        state = doc.selection.state
        if state.scope != self.shown.scope:
            return self._embedded_selection(state.scope, state.node, state.value)
        if state.node >= 0:
            return self.shown.box_of_node(state.node)
        if state.value:
            return d.value_box.get(state.value, -1)
        return self._group_selected

    def _embedded_selection(self, scope: str, node: int, value: str) -> int:
        """Row of the box showing a node or value of a body drawn inside its node, or -1."""
        for emb in self.shown.bodies_drawn:
            if emb.scope != scope:
                continue
            refs = emb.scene.box_ref
            local = emb.scene.box_of_node(node) if node >= 0 else \
                next((b for b, r in enumerate(refs) if r.kind != BoxKind.OP and r.value == value), -1)
            if 0 <= local < len(refs) and (node < 0 or refs[local].node == node):
                return emb.box_start + local
        return -1

    def selected_nodes(self) -> list[int]:
        """Positions, in the shown scope, of the selected node or of every node of the selected group."""
        doc, layout, d = self.shown.doc, self.shown.layout, self.shown.drawable
        if doc is None:
            return []
        state = doc.selection.state
        if state.node >= 0:
            return [state.node] if state.scope == self.shown.scope else []
        if self._frame_selected and layout is not None and not state.value:
            return list(layout.group_nodes(self._frame_selected))
        box = self._group_selected
        if box < 0 or layout is None or d is None or state.value \
                or d.scene.box_kind[box] != BoxKind.GROUP:   # a ghost stands for no node here
            return []
        return list(layout.group_nodes(d.scene.box_ref[box].group))

    def in_sight(self) -> bool:
        """Whether the selected box is (partly) in the view."""
        box = self.selected_box()
        return box >= 0 and self.view.visible_scene_rect().intersects(self.shown.box_rect(box))

    def follow(self, center: bool) -> None:
        """Highlight the selection (its box, edges and neighbours); ``center``: bring it into view."""
        shown, opts = self.shown, self.view.options
        d = shown.drawable
        if d is None or shown.doc is None:
            return
        box = self.selected_box()
        state = shown.doc.selection.state
        opts.selected_box = box
        frames = d.scene.group_path
        opts.selected_frame = frames.index(self._frame_selected) if self._frame_selected in frames else -1
        if state.value and state.scope == shown.scope:
            edges = np.flatnonzero(np.array([v == state.value for v in d.scene.edge_value], bool))
            opts.selected_edges, opts.neighbour_boxes = edges, self._reader_boxes(state.value)
        elif state.value and state.scope in shown.inline_scopes():
            embedded = [e for e in shown.bodies_drawn if e.scope == state.scope]
            opts.selected_edges = np.array([emb.edge_start + k for emb in embedded
                                            for k, v in enumerate(emb.scene.edge_value) if v == state.value], np.int64)
            opts.neighbour_boxes = np.zeros(0, np.int64)
        elif box >= 0:
            producers, consumers = d.neighbours(box)
            opts.selected_edges = d.edges_of_box(box)
            opts.neighbour_boxes = np.concatenate([producers, consumers])
        else:
            opts.selected_edges = opts.neighbour_boxes = np.zeros(0, np.int64)
        if center:
            target = shown.box_rect(box) if box >= 0 else shown.edges_rect(opts.selected_edges)
            if target is None and len(opts.neighbour_boxes):   # e.g. an initializer: show who reads it
                target = shown.box_rect(int(opts.neighbour_boxes[0]))
            if target is not None:
                self.view.ensure_visible(target, min_scale=min(self.view.scale, 0.6))
        self.view.update()

    def _reader_boxes(self, value: str) -> np.ndarray:
        """Boxes of the nodes reading ``value`` (weights are drawn inside their readers, not as edges)."""
        g = self.shown.doc.index.graphs.get(self.shown.scope) if self.shown.doc is not None else None
        if g is None:
            return np.zeros(0, np.int64)
        boxes = {self.shown.box_of_node(n) for n in g.consumers_of(value)}
        return np.array(sorted(b for b in boxes if b >= 0), np.int64)

    # -- clicks and keys ---------------------------------------------------------------------------------
    def box_clicked(self, box: int) -> None:
        """Select what box ``box`` of the shown drawing stands for."""
        doc, d, scope = self.shown.doc, self.shown.drawable, self.shown.scope
        if doc is None or d is None:
            return
        inside = self.shown.embedded_box(box)
        if inside is not None:   # a box of a body drawn inside its node: select it in the body's scope
            emb, local = inside
            inner = emb.scene.box_ref[local]
            if inner.kind == BoxKind.OP:
                doc.selection.select_node(emb.scope, inner.node)
            elif inner.kind != BoxKind.GROUP:
                doc.selection.select_value(emb.scope, inner.value)
            return
        ref = d.scene.box_ref[box]
        if ref.kind == BoxKind.OP:
            doc.selection.select_node(scope, ref.node)
            weight = self.weight_row_at(box)
            if weight:
                self.weight_row_clicked.emit(scope, weight)
        elif ref.kind == BoxKind.GHOST and ref.group:   # the ghosts inside a collapsed group: open it
            self._expand_group(ref.group)
        elif ref.kind == BoxKind.GHOST:
            self.select_ghost(ref.node)
        elif ref.kind == BoxKind.GROUP:
            doc.selection.clear(scope)
            self._group_selected = box
            self.follow(center=False)
        else:
            doc.selection.select_value(scope, ref.value)

    def edge_clicked(self, edge: int) -> None:
        """Select the value edge ``edge`` carries."""
        doc, d = self.shown.doc, self.shown.drawable
        if doc is not None and d is not None:
            inside = self.shown.embedded_edge(edge)
            if inside is not None:
                doc.selection.select_value(inside[0].scope, inside[0].scene.edge_value[inside[1]])
                return
            if d.scene.edge_value[edge]:   # a ghost's edges stand for no value of the document
                doc.selection.select_value(self.shown.scope, d.scene.edge_value[edge])

    def empty_clicked(self) -> None:
        """A click on no box, edge or frame: nothing selected."""
        if self.shown.doc is not None:
            self.forget()
            self.shown.doc.selection.clear(self.shown.scope)
            self.follow(center=False)

    def frame_clicked(self, frame: int) -> None:
        """The title of an expanded group's frame selects the group, as clicking it collapsed does."""
        doc, d = self.shown.doc, self.shown.drawable
        if doc is None or d is None:
            return
        path = d.scene.group_path[frame]
        if path.startswith(EMBEDDED):   # a body drawn inside its node: no group of this graph
            return
        doc.selection.clear(self.shown.scope)
        self._group_selected, self._frame_selected = -1, path
        self.follow(center=False)

    def select_ghost(self, key: int) -> bool:
        """Select ghost ``key``'s box in the shown drawing and bring it into view (the document's
        selection is cleared: a ghost is no node of it); False when no box shows it."""
        d = self.shown.drawable
        box = d.ghost_box.get(key, -1) if d is not None else -1
        if self.shown.doc is None or box < 0:
            return False
        self.shown.doc.selection.clear(self.shown.scope)
        self._group_selected = box
        self.follow(center=True)
        self.ghost_selected.emit(key)
        return True

    def weight_row_at(self, box: int) -> str:
        """The constant input whose row of ``box`` (a node's) was clicked last, '' if the click was elsewhere: the
        rows list the node's constant inputs in order (see ``scope._node_text``)."""
        doc, d, layout = self.shown.doc, self.shown.drawable, self.shown.layout
        where = getattr(self.view, "last_click", None)
        if doc is None or d is None or where is None or not d.scene.box_lines[box]:
            return ""
        row = int((where.y() - float(d.y0[box]) - style.HEADER_H - 2) // style.LINE_H)
        g = doc.index.graphs.get(self.shown.scope)
        node = d.scene.box_ref[box].node
        if g is None or row < 0 or not 0 <= node < len(g.nodes) or layout is None:
            return ""
        graph = getattr(layout, "graph", None)
        consts = [x for x in g.nodes[node].input if x and graph is not None and x in graph.const_values]
        if row >= min(len(consts), len(d.scene.box_lines[box])):
            return ""
        name = consts[row]
        for _ in range(CHAIN_DEPTH):  # through the weight operators folded into the row, to the stored weight
            maker = g.producer.get(name, -1)
            if maker < 0 or g.nodes[maker].op_type not in WEIGHT_OPS or not g.nodes[maker].input:
                break
            name = g.nodes[maker].input[0]
        return name

    def step(self, direction: str) -> None:
        """Move the selection: up = a producer, down = a consumer, left/right = neighbour in the same row
        (left to right: left = a producer, right = a consumer, up/down = neighbour in the same column)."""
        d = self.shown.drawable
        box = self.selected_box()
        if d is None or box < 0:
            return
        producers, consumers = d.neighbours(box)
        s = d.scene
        # along: the way data flows; across: the row (a column when the graph flows left to right)
        across, along, size = (d.y0, d.x0, s.box_w) if s.direction == "LR" else (d.x0, d.y0, s.box_h)
        width = s.box_h if s.direction == "LR" else s.box_w
        if s.direction == "LR":
            direction = {"left": "up", "right": "down", "up": "left", "down": "right"}[direction]
        if direction in ("up", "down"):
            candidates = producers if direction == "up" else consumers
            if not len(candidates):
                return
            centre = across[box] + width[box] / 2
            target = int(candidates[np.argmin(np.abs(across[candidates] + width[candidates] / 2 - centre))])
        else:
            same_row = np.flatnonzero(np.abs(along - along[box]) < max(float(size[box]) / 2, 1.0))
            delta = across[same_row] - across[box]
            side = same_row[delta < 0] if direction == "left" else same_row[delta > 0]
            if not len(side):
                return
            target = int(side[np.argmin(np.abs(across[side] - across[box]))])
        self.box_clicked(target)
        self.follow(center=True)

    def actual_size(self) -> None:
        """1:1 centred on the selected box; without one, on the view's centre unless nothing would be in
        sight there (after Fit the centre can fall between branches): then on the box nearest it."""
        view, d = self.view, self.shown.drawable
        box = self.selected_box()
        if d is None or d.scene.n_boxes == 0:
            view.set_scale(1.0)
            return
        if box >= 0:
            view.place(1.0, self.shown.box_rect(box).center())
            return
        view.set_scale(1.0)
        seen = view.visible_scene_rect()
        mid_x, mid_y = (d.x0 + d.x1) / 2, (d.y0 + d.y1) / 2
        if np.any((mid_x >= seen.left()) & (mid_x <= seen.right()) & (mid_y >= seen.top()) & (mid_y <= seen.bottom())):
            return   # a box (at least its middle) in sight
        c = view.center
        dx = np.maximum(np.maximum(d.x0 - c.x(), c.x() - d.x1), 0)
        dy = np.maximum(np.maximum(d.y0 - c.y(), c.y() - d.y1), 0)
        view.center_on(self.shown.box_rect(int(np.argmin(dx * dx + dy * dy))).center())
