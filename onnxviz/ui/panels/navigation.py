"""What a click on a link in a panel does: select a node or value, enter a subgraph, show a tensor."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import quote

from onnxviz.ui.panels.common import parse_href

if TYPE_CHECKING:
    from onnxviz.ui.canvas.canvas import GraphCanvas
    from onnxviz.ui.ports import ShownDocument


def attribute_tensor_href(scope: str, node: int, attr: str) -> str:
    return f"tensor:{quote(scope, safe='')}:{node}/{quote(attr, safe='')}"


class Navigator:
    """Turns panel links into selection changes (and canvas moves when the canvas supports them)."""

    def __init__(self, document: ShownDocument, canvas: GraphCanvas) -> None:
        self.document, self.canvas = document, canvas
        self.show_attribute_tensor: Callable[[str, int, str], None] = lambda scope, node, attr: None

    def open(self, href: str) -> None:
        link = parse_href(href)
        doc = self.document.doc
        if link is None or doc is None:
            return
        canvas = self.canvas
        if link.kind == "node":
            node = int(link.target)
            doc.selection.select_node(link.scope, node)
            canvas.reveal_node(link.scope, node)
        elif link.kind == "value":
            doc.selection.select_value(link.scope, link.target)
        elif link.kind == "scope":
            canvas.show_scope(link.scope)
            doc.selection.clear(link.scope)
        elif link.kind == "tensor":
            position, _, attr = link.target.partition("/")
            self.show_attribute_tensor(link.scope, int(position), attr)
