"""What the canvas shows, in one place: the document, the graph (scope) and its breadcrumb trail, the
layout object and its drawing, the bodies drawn inside their nodes; and the look-ups every part of the
canvas makes in them (the box of a node, of a body's node, a box's rectangle)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from PySide6.QtCore import QRectF

from onnxviz.model.document import Document
from onnxviz.model.layout.drawable import Drawable
from onnxviz.model.layout.inline import Embedded, Holder, InlineLayout
from onnxviz.ui.canvas.marks import group_box_of


class ShownGraph:
    """The state the canvas's parts share; each part reads it, the canvas and its layout jobs set it."""

    def __init__(self) -> None:
        self.doc: Document | None = None
        self.layout: InlineLayout | None = None
        self.drawable: Drawable | None = None
        self.scope = ""                     # "" main graph, "12.then_branch", "fn:dom:name:"
        self.trail: list[str] = [""]        # the breadcrumb: from the main graph to the shown scope
        self.inline: frozenset[Holder] = frozenset()   # nodes drawn with their bodies inside (shown scope or bodies)

    # -- bodies drawn inside their nodes ----------------------------------------------------------
    @property
    def bodies_drawn(self) -> list[Embedded]:
        """The bodies drawn inside their nodes in the shown layout (none before one is made)."""
        return self.layout.embedded if self.layout is not None else []

    def inline_scopes(self) -> set[str]:
        """The scopes of the bodies drawn inside their nodes."""
        return {emb.scope for emb in self.bodies_drawn}

    def embedded_box(self, box: int) -> tuple[Embedded, int] | None:
        """The body a box of the shown drawing belongs to (drawn inside its node) and its row in that
        body's own scene; None for the shown scope's own boxes."""
        for emb in self.bodies_drawn:
            if emb.box_start <= box < emb.box_end:
                return emb, box - emb.box_start
        return None

    def embedded_edge(self, edge: int) -> tuple[Embedded, int] | None:
        """The body an edge of the shown drawing belongs to and its row in that body's scene, or None."""
        for emb in self.bodies_drawn:
            if emb.edge_start <= edge < emb.edge_end:
                return emb, edge - emb.edge_start
        return None

    def body_rows(self) -> dict[str, Callable[[int], int]]:
        """For each body drawn inside its node: its node -> the row of the box showing it (-1: none)."""
        def row_of(emb: Embedded) -> Callable[[int], int]:
            def row(node: int) -> int:
                local = emb.scene.box_of_node(node)
                ok = 0 <= local < emb.scene.n_boxes and emb.scene.box_ref[local].node == node
                return emb.box_start + local if ok else -1
            return row

        return {emb.scope: row_of(emb) for emb in self.bodies_drawn}

    def bodies_of(self, node: int, scope: str | None = None) -> list[str]:
        """The scopes of the bodies (If branches, Loop and Scan bodies) of node ``node`` of the shown scope
        (or of ``scope``)."""
        g = self.doc.index.graphs.get(self.scope if scope is None else scope) if self.doc is not None else None
        return [body for i, _, body in g.children if i == node] if g is not None else []

    # -- boxes --------------------------------------------------------------------------------------
    def box_of_node(self, node: int) -> int:
        """Row of the box drawing node ``node`` of the shown scope, or of the collapsed group box hiding
        it; -1 when nothing drawn shows it (or nothing is drawn)."""
        d = self.drawable
        if d is None:
            return -1
        box = d.node_box.get(node, -1)
        if box < 0 and self.layout is not None:
            box = group_box_of(d, self.layout, node)
        return box

    def box_rect(self, box: int) -> QRectF:
        """Box ``box``'s rectangle in scene coordinates (a drawing must be shown)."""
        d = self.drawable
        assert d is not None
        return QRectF(float(d.x0[box]), float(d.y0[box]), float(d.scene.box_w[box]), float(d.scene.box_h[box]))

    def edges_rect(self, edges: np.ndarray) -> QRectF | None:
        """The rectangle around edges ``edges`` (their first 50), None for none."""
        d = self.drawable
        if d is None or not len(edges):
            return None
        pts = np.concatenate([d.scene.edge_polyline(int(e)) for e in edges[:50]])
        x0, y0 = pts.min(axis=0)
        x1, y1 = pts.max(axis=0)
        return QRectF(float(x0), float(y0), float(x1 - x0), float(y1 - y0))
