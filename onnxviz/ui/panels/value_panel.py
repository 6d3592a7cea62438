"""The Value panel: a value's type and shape, producer, consumers and role in its graph."""

from __future__ import annotations

import html
from collections.abc import Callable

from onnx import TypeProto

from onnxviz.model.document import Document
from onnxviz.model.graph.index import GRAPH_INPUT, INITIALIZER, OUTER_SCOPE, GraphIndex
from onnxviz.model.problems import Problem
from onnxviz.model.text import dtype_text, shape_list
from onnxviz.ui.panels.common import Form, Page, code, text_html, type_html, value_type
from onnxviz.ui.panels.node_panel import GREY, VALUE_CHARS, node_link
from onnxviz.ui.panels.problems_panel import severity_html

MAX_CONSUMERS = 200


def dims_html(t: TypeProto | None) -> str:
    """Each dimension with symbolic ones in italics: ``[<i>batch</i>, 3, 224, 224]``."""
    dims = shape_list(t)
    if dims is None:
        return f'<span style="{GREY}">unknown rank</span>' if t is not None else ""
    parts = [f"<i>{text_html(d)}</i>" if isinstance(d, str) else ("?" if d is None else str(d)) for d in dims]
    return f"<code>[{', '.join(parts)}]</code>" + (f' <span style="{GREY}">(scalar)</span>' if not dims else "")


class ValuePanel(Page):
    def __init__(self, on_link: Callable[[str], None]) -> None:
        super().__init__(on_link)

    def show_value(self, doc: Document, scope: str, name: str) -> None:
        self.begin((id(doc), scope, name))
        g = doc.index.graphs.get(scope)
        if g is None:
            self.add_title(name, "its graph no longer exists")
            self.end()
            return
        self.add_title(name, self._role(g, name))
        self._add_types(doc, g, name)
        self._add_links(g, name)
        problems = [p for p in doc.problems if p.scope == scope and p.value == name]
        if problems:
            self.add_form(f"Problems ({len(problems)})",
                          [(severity_html(p), text_html(p.message, VALUE_CHARS)) for p in problems])
        self.end()

    @staticmethod
    def _role(g: GraphIndex, name: str) -> str:
        where = f" in {code(g.scope)}" if g.scope else ""
        return html.escape(", ".join(g.roles_of(name))) + where

    def _add_types(self, doc: Document, g: GraphIndex, name: str) -> None:
        declared = _declared(g, name)
        inferred = doc.index.inferred.get(g.scope, {}).get(name)
        t, source = value_type(doc.index, g.scope, name)
        rows = [("Type", type_html(t, source)), ("Dims", dims_html(t))]
        rows.append(("Declared", type_html(declared) if declared is not None else
                     f'<span style="{GREY}">{"the initializer tensor" if source == "initializer" else "not declared in the file"}</span>'))
        inference_failed = inference_problem(doc)
        if inferred is not None:
            agrees = declared is None or dtype_text(declared) == dtype_text(inferred)
            rows.append(("Inferred", type_html(inferred) + ("" if agrees else
                         ' <b style="color:#c01c28">differs from the declared type</b>')))
        elif inference_failed is not None:
            rows.append(("Inferred", f'<span style="{GREY}">{html.escape(inference_failed.message)}</span>'))
        elif source == "initializer":
            pass
        elif not doc.index.inferred:
            rows.append(("Inferred", f'<span style="{GREY}">shape inference has not finished yet</span>'))
        else:
            rows.append(("Inferred", f'<span style="{GREY}">nothing inferred</span>'))
        form = Form(self.on_link)
        form.add_name("Name", name)
        for key, value in rows:
            form.add(key, value)
        self.add_section("Type", form)

    def _add_links(self, g: GraphIndex, name: str) -> None:
        form = Form(self.on_link)
        p = g.producer_of(name)
        producer = {GRAPH_INPUT: "graph input", INITIALIZER: "initializer (see the Weights panel)",
                    OUTER_SCOPE: "a node of an enclosing graph"}.get(p, "nothing")
        form.add("Producer", node_link(g, p) if p >= 0 else f'<span style="{GREY}">{producer}</span>')
        consumers = g.consumers_of(name)
        shown = "<br>".join(node_link(g, c) for c in consumers[:MAX_CONSUMERS])
        if len(consumers) > MAX_CONSUMERS:
            shown += f"<br>... and {len(consumers) - MAX_CONSUMERS:,} more"
        form.add(f"Consumers ({len(consumers)})", shown or f'<span style="{GREY}">none</span>')
        self.add_section("Connections", form)


def inference_problem(doc: Document) -> Problem | None:
    """Why shape inference failed, if it did (the panels then show declared types only)."""
    return next((p for p in doc.validation_problems if p.source == "shape_inference"), None)


def _declared(g: GraphIndex, name: str) -> TypeProto | None:
    scope: GraphIndex | None = g
    while scope is not None:
        if name in scope.declared:
            return scope.declared[name]
        if name in scope.producer:
            return None
        scope = scope.parent
    return None
