"""The differences list: a difference chosen selects its node (or value, or function) on the side the canvas
shows, switching sides when only the other has it; the dock's both sides of it, and the Node panel's "Compared
with B" section; the quantized weights' pairs."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from onnxviz.model.graph.index import function_scope
from onnxviz.model.matching.diff import function_label
from onnxviz.ui.diff.opening import FUNCTION_KINDS
from onnxviz.ui.diff.sides import SidesTable, changed_fields, node_rows

if TYPE_CHECKING:
    from PySide6.QtWidgets import QWidget

    from onnxviz.model.document import Document
    from onnxviz.model.matching import Difference
    from onnxviz.ui.canvas.canvas import GraphCanvas
    from onnxviz.ui.diff.dock import DiffDock
    from onnxviz.ui.diff.state import DiffState
    from onnxviz.ui.ports import PanelsApi, ShownDocument, Status


class DifferenceList:
    """What choosing a difference (or a weight pair) in the dock shows."""

    def __init__(self, state: DiffState, document: ShownDocument, canvas: GraphCanvas, dock: DiffDock, status: Status,
                 panels: Callable[[], PanelsApi], show_b: Callable[[bool], None]) -> None:
        self.state, self.document, self.canvas, self.dock, self.status = state, document, canvas, dock, status
        self.panels, self.show_b = panels, show_b
        dock.difference_chosen.connect(self.show_difference)
        dock.step_requested.connect(self.step)
        dock.weight_chosen.connect(self.show_weight)

    def current_difference(self) -> int:
        """The row of the difference chosen in the list (-1: none)."""
        return self.dock.list.currentRow()

    def choose_difference(self, row: int) -> None:
        self.dock.list.setCurrentRow(row)  # selects it, as the diff's own stepping does

    def step(self, direction: int) -> None:
        if self.state.active:
            self.dock.step(direction)  # the list's row change selects

    def show_difference(self, row: int) -> None:
        """Select the difference's node (entering its graph and opening groups) on the side the canvas
        shows, switching sides when only the other has it (a node only B has: B's graph), or its value (a
        weight, an input...) for the Value and Weights panels; a difference with no part to select selects nothing."""
        if self.state.diff is None or self.document.doc is None or not 0 <= row < len(self.state.diff.differences):
            return
        d = self.state.diff.differences[row]
        ghost = self.state.ghost_of.get(row)
        if ghost is not None and not self.state.showing_b:   # drawn in A's graph: its ghost box
            near = next((e for e in ghost.sources + ghost.targets if isinstance(e, int)), -1)
            self.canvas.reveal_ghost(ghost.scope, row, near, missing=lambda: self._select_in_b(d))
        elif d.node_b >= 0 and (self.state.showing_b or d.node_a < 0) and self.state.doc_b is not None:
            self.show_b(True)
            self.canvas.reveal_node(d.scope_b, d.node_b)
        elif d.kind in FUNCTION_KINDS:
            self._show_function(d)
        elif d.node_a < 0 and (self.state.showing_b or d.a is None) and d.b is not None and self._b_value(d):
            pass   # a weight or input only B has (or B's graph shown): on B's graph
        else:
            if d.node_a >= 0:
                self.show_b(False)
            self._select_in_a(d)
        self.dock.show_sides(self._sides(d))
        self.status.show_message(f"Difference {row + 1} of {len(self.state.diff.differences)}: {_short(d, self.state.wording.kind)}", 8000)

    def _select_in_b(self, d: Difference) -> None:
        """B's graph on the canvas, ``d``'s B node selected (a ghost too many to draw in A's)."""
        if self.state.diff is not None and d in self.state.diff.differences and self.state.doc_b is not None:
            self.show_b(True)
            self.canvas.reveal_node(d.scope_b, d.node_b)

    def _b_value(self, d: Difference) -> bool:
        """B's graph on the canvas with ``d``'s B value (a weight, an input...) shown: the node reading it
        selected (a weight is drawn in its reader's box), else the value; False when B's graph
        ``d.scope_b`` does not define it."""
        g = self.state.doc_b.index.graphs.get(d.scope_b) if self.state.doc_b is not None else None
        if g is None or d.b is None or not g.defines(d.b):
            return False
        self.show_b(True)
        readers = g.consumers_of(d.b)
        if readers:
            self.canvas.reveal_node(d.scope_b, readers[0])
            return True
        return select_value(self.state.doc_b, d.scope_b, d.b)

    def _show_function(self, d: Difference) -> None:
        """A model-local function's difference: its graph, A's (B's when only B has it)."""
        on_b = d.a is None
        doc = self.state.doc_b if on_b else self.document.doc
        label = d.b if on_b else d.a
        scope = next((function_scope(*key) for key in doc.index.functions
                      if function_label(key) == label), None) if doc is not None else None
        if scope is None:
            return
        self.show_b(on_b)
        self.canvas.enter_scope(scope)

    def _select_in_a(self, d: Difference) -> None:
        doc = self.document.doc
        assert doc is not None
        if d.node_a >= 0:
            self.canvas.reveal_node(d.scope_a, d.node_a)
        elif d.a is not None and not self.state.showing_b and select_value(doc, d.scope_a, d.a):
            pass  # a weight, input, output or value_info of A
        else:  # B's only, or the model's fields: nothing of A to select
            doc.selection.clear()
            if d.kind == "model_changed":
                self.panels().raise_panel("Model")   # A's fields (B's in the list's detail)

    def show_weight(self, row: int) -> None:
        """A quantized weight pair chosen: its A weight selected (the Weights panel shows it), on A's graph."""
        doc = self.document.doc
        if doc is None or not 0 <= row < len(self.dock.weights):
            return
        w = self.dock.weights[row]
        self.show_b(False)
        if not select_value(doc, w.scope_a, w.a):
            doc.selection.clear()
        said = w.note or f"max |B-A| {w.max_abs:.4g}, max rel {w.max_rel:.4g}, cosine {w.cosine:.6f}, SQNR {w.sqnr_db:.2f} dB"
        self.status.show_message(f"Weight {w.a} vs {w.b}: {said}", 10000)

    def node_section(self, doc: Document, scope: str, node: int) -> tuple[str, QWidget] | None:
        """The Node panel's "Compared with B" section: both sides field by field, changes highlighted."""
        if self.state.diff is None or doc is not self.document.doc:
            return None
        ga = self.state.diff.alignment.graphs.get(scope)
        if ga is None or not 0 <= node < len(ga.index_a.nodes):
            return None
        a, j = ga.index_a.nodes[node], ga.node_b(node)
        if j is None:
            return "Compared with B: not in B (removed)", SidesTable(node_rows(a, None))
        b = ga.index_b.nodes[j]
        found = next((d for d in self.state.diff.differences if d.kind == "node_changed" and d.scope_a == scope
                      and d.node_a == node), None)
        changed = changed_fields(found.details, a, b) if found is not None else set()
        title = "Compared with B" + ("" if changed else ": the same")
        return title, SidesTable(node_rows(a, b, changed))

    def _sides(self, d: Difference) -> QWidget | None:
        """The node's fields under the difference in the dock: both sides of a changed node, the one side
        of a removed or added one."""
        doc = self.document.doc
        if d.node_a >= 0 and doc is not None:
            section = self.node_section(doc, d.scope_a, d.node_a)
            return section[1] if section is not None else None
        ga = self.state.diff.alignment.graphs_b.get(d.scope_b) if self.state.diff is not None and d.kind == "node_added" else None
        if ga is None or not 0 <= d.node_b < len(ga.index_b.nodes):
            return None
        return SidesTable(node_rows(None, ga.index_b.nodes[d.node_b]))


def select_value(doc: Document | None, scope: str, name: str) -> bool:
    """Select the value ``name`` of graph ``scope`` of ``doc``; False when that graph does not define it."""
    g = doc.index.graphs.get(scope) if doc is not None else None
    if doc is None or g is None or not g.defines(name):
        return False
    doc.selection.select_value(scope, name)
    return True


def _short(d: Difference, words: Callable[[str], str]) -> str:
    text = d.text(words)
    return text if len(text) <= 160 else text[:157] + "..."
