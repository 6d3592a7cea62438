"""What the Edit menu's edits act on: the selection of the window's document."""

from __future__ import annotations

from typing import TYPE_CHECKING

from onnxviz.model.errors import EditError
from onnxviz.model.graph.index import INITIALIZER

if TYPE_CHECKING:
    from onnxviz.model.document import Document
    from onnxviz.ui.ports import ShownDocument


class EditSelection:
    """The selected node, value, weight, graph input or output of the window's document (what the edits take)."""

    def __init__(self, document: ShownDocument) -> None:
        self.document = document

    @property
    def doc(self) -> Document | None:
        return self.document.doc

    def node(self) -> tuple[str, int] | None:
        doc = self.doc
        if doc is None:
            return None
        state = doc.selection.state
        if state.node < 0:
            return None
        g = doc.index.graphs.get(state.scope)
        return (state.scope, state.node) if g is not None and state.node < len(g.nodes) else None

    def value(self) -> str:
        """The selected value, or the selected node's first output."""
        doc = self.doc
        if doc is None:
            return ""
        if doc.selection.state.value:
            return doc.selection.state.value
        where = self.node()
        if where is None:
            return ""
        outputs = [x for x in doc.edit.node_proto(*where).output if x]
        return outputs[0] if outputs else ""

    def weight(self) -> str:
        """The selected value when it is an initializer of its graph ('' otherwise): what the weight edits take."""
        doc = self.doc
        value = self.value()
        if doc is None or not value:
            return ""
        g = doc.index.graphs.get(doc.selection.state.scope)
        return value if g is not None and g.producer_of(value) == INITIALIZER else ""

    def input(self) -> str:
        """The selected value when it is an input of the main graph ('' otherwise)."""
        doc = self.doc
        if doc is None or doc.selection.state.scope or not doc.selection.state.value:
            return ""
        value = doc.selection.state.value
        return value if value in doc.index.main.input_names else ""

    def output(self) -> str:
        """The selected value when it is an output of its graph ('' otherwise)."""
        doc = self.doc
        value = self.value()
        if doc is None or not value:
            return ""
        g = doc.index.graphs.get(doc.selection.state.scope)
        return value if g is not None and value in g.output_names else ""

    def require_node(self) -> tuple[Document, str, int]:
        where = self.node()
        if self.doc is None or where is None:
            raise EditError("select a node on the graph first.")
        return self.doc, where[0], where[1]

    def require_value(self) -> tuple[Document, str, str]:
        value = self.value()
        if self.doc is None or not value:
            raise EditError("select a value (an edge) or a node on the graph first.")
        return self.doc, self.doc.selection.state.scope, value
