"""The tooltips of the canvas's boxes and edges: what the box or edge stands for, then the notes other
features add (``notes``: ``(scope, node) -> html line``) and the overlay's value."""

from __future__ import annotations

from collections.abc import Callable
from html import escape

from onnxviz.model.layout.describe import box_tooltip, edge_tooltip
from onnxviz.model.layout.scene import BoxKind
from onnxviz.ui.canvas.marking import CanvasMarks
from onnxviz.ui.canvas.marks import overlay_note
from onnxviz.ui.canvas.shown import ShownGraph


class Tooltips:
    """Tooltip texts (html) for the shown drawing."""

    def __init__(self, shown: ShownGraph, marks: CanvasMarks) -> None:
        self.shown, self.marks = shown, marks
        self.node_notes: list[Callable[[str, int], str]] = []   # their lines end an op box's tooltip

    def text(self, box: int, edge: int = -1) -> str:
        """The tooltip of box ``box`` (when >= 0) or else of edge ``edge`` of the shown drawing; '' with none."""
        doc, d = self.shown.doc, self.shown.drawable
        if doc is None or d is None:
            return ""
        inside = self.shown.embedded_box(box) if box >= 0 else self.shown.embedded_edge(edge)
        if inside is not None:
            emb, local = inside
            return box_tooltip(doc.index, emb.scene, local) if box >= 0 else edge_tooltip(doc.index, emb.scene, local)
        if box >= 0 and d.scene.box_kind[box] == BoxKind.GHOST:
            ref = d.scene.box_ref[box]
            if ref.group:
                return f"<b>{escape(d.scene.box_title[box])}</b> inside {escape(ref.group)}: click to open it"
            return self.marks.describe_ghost(ref.node)
        if box >= 0:
            text = box_tooltip(doc.index, d.scene, box)
            node = int(d.box_node[box])
            group = d.scene.box_kind[box] == BoxKind.GROUP
            notes = [note(self.shown.scope, node) for note in self.node_notes] if node >= 0 else []
            overlay = self.marks.shown_overlay
            if overlay is not None and (node >= 0 or group):
                notes.append(overlay_note(overlay, box, group))
            return "<br>".join([text, *filter(None, notes)])
        return edge_tooltip(doc.index, d.scene, edge)
