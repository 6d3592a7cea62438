"""The diff's marks on the canvas: A's (or B's) nodes coloured by what differs, or by Run Both's errors; B's added
nodes as dashed ghosts in A's graph, their tooltips, B's node shown when one is selected or opened."""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import TYPE_CHECKING

from onnxviz.model.runner.compare import COMPARE_MEASURES
from onnxviz.model.text import display_name
from onnxviz.ui.diff.opening import AS_B, DIFF_SCHEME_B, Wording
from onnxviz.ui.diff.sides import SidesTable, node_rows

if TYPE_CHECKING:
    import onnx

    from onnxviz.model.matching import Difference, ModelDiff
    from onnxviz.ui.canvas.canvas import GraphCanvas
    from onnxviz.ui.diff.dock import DiffDock
    from onnxviz.ui.diff.state import DiffState
    from onnxviz.ui.ports import PanelsApi, ShownDocument


class DiffMarks:
    """Colours and ghosts of the diff shown (:class:`DiffState`) on the canvas."""

    def __init__(self, state: DiffState, document: ShownDocument, canvas: GraphCanvas, dock: DiffDock,
                 panels: Callable[[], PanelsApi], show_b: Callable[[bool], None]) -> None:
        self.state, self.document, self.canvas, self.dock = state, document, canvas, dock
        self.panels, self.show_b = panels, show_b
        canvas.ghost_selected.connect(self.on_ghost)
        canvas.ghost_activated.connect(self.open_ghost)

    def show_ghosts(self) -> None:
        """The added nodes on A's graph while the diff is open and A's graph is shown; none otherwise."""
        canvas = self.canvas
        if canvas.doc is not None and canvas.doc is self.document.doc:
            shown = self.state.ghosts if self.state.active and not self.state.showing_b else {}
            canvas.set_ghosts(shown, self._ghost_tooltip)

    def b_node(self, key: int) -> tuple[Difference, onnx.NodeProto] | None:
        """The added difference of row ``key`` and B's node."""
        if self.state.diff is None or not 0 <= key < len(self.state.diff.differences):
            return None
        d = self.state.diff.differences[key]
        ga = self.state.diff.alignment.graphs_b.get(d.scope_b)
        if ga is None or not 0 <= d.node_b < len(ga.index_b.nodes):
            return None
        return d, ga.index_b.nodes[d.node_b]

    def _ghost_tooltip(self, key: int) -> str:
        found = self.b_node(key)
        if found is None:
            return ""
        d, n = found
        name = html.escape(display_name(n.name, 120)) if n.name else "(no name)"
        where = f" of {html.escape(display_name(d.scope_b, 80))}" if d.scope_b else ""
        tip = self.state.wording.ghost_tip
        return (f"<b>{html.escape(n.op_type)}</b> {name}<br><i>{tip}: node {d.node_b}{where} of B; "
                "not part of this model, not editable; double-click: B's graph</i>")

    def on_ghost(self, key: int) -> None:
        """A ghost selected on the canvas: B's node in the Node panel and the dock, its row current."""
        found = self.b_node(key)
        if found is None:
            return
        d, n = found
        table = SidesTable(node_rows(None, n))
        where = f" in {html.escape(display_name(d.scope_b, 80))}" if d.scope_b else ""
        self.panels().show_other_node(("ghost", key), n.op_type,
                                       f"{self.state.wording.ghost_tip} · node {d.node_b}{where} of B",
                                       [("B's fields (read only)", table)])
        if self.dock.list.currentRow() != key:
            self.dock.list.blockSignals(True)
            self.dock.list.setCurrentRow(key)
            self.dock.list.blockSignals(False)
            self.dock.detail.setText(display_name(d.text(), 4000))
        self.dock.show_sides(SidesTable(node_rows(None, n)))

    def open_ghost(self, key: int) -> None:
        """A ghost double-clicked: B's graph with its node, or the one body it holds, shown."""
        found = self.b_node(key)
        if found is None or self.state.doc_b is None:
            return
        d = found[0]
        bodies = [scope for node, _, scope in self.state.doc_b.index.graphs[d.scope_b].children if node == d.node_b]
        self.show_b(True)
        if len(bodies) == 1:
            self.canvas.enter_scope(bodies[0])
        else:
            self.canvas.reveal_node(d.scope_b, d.node_b)

    def set_colouring(self, key: str) -> None:
        self.state.colouring = key
        self.apply_colours()

    def apply_colours(self) -> None:
        s = self.state
        if s.diff is None:
            return
        canvas = self.canvas
        if s.colouring in COMPARE_MEASURES and s.cross is not None:
            errors = s.cross.node_errors_b if s.showing_b else s.cross.node_errors_a
            canvas.set_overlay(errors(s.colouring), f"{'B' if s.showing_b else 'A'} vs {'A' if s.showing_b else 'B'}: "
                               f"{COMPARE_MEASURES[s.colouring]}")
        elif s.showing_b:
            canvas.set_overlay(s.marks_b, f"B's graph: differences with A ({_removed_note(s.diff)})",
                               scheme=DIFF_SCHEME_B)
        else:
            said = _added_note(s.diff, len(s.ghost_of), s.wording)
            canvas.set_overlay(s.marks, f"{s.wording.title} ({said})", scheme=s.wording.scheme)

def _added_note(diff: ModelDiff, drawn: int, wording: Wording = AS_B) -> str:
    """How many nodes only B has are drawn as ghosts, and how many (reading only weights) B's graph shows, in
    ``wording``'s words."""
    added = sum(1 for d in diff.differences if d.kind == "node_added")
    if not added:
        return wording.none_dashed
    said = f"{drawn} node{'s' if drawn != 1 else ''} {wording.dashed}: dashed"
    more = added - drawn
    return said if not more else f"{said}; {more} more reading only weights: see B's graph"


def _removed_note(diff: ModelDiff) -> str:
    removed = sum(1 for d in diff.differences if d.kind == "node_removed")
    return f"{removed} node{'s' if removed != 1 else ''} only in A: see the list" if removed else "nothing removed"
