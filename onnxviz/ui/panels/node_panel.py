"""The Node panel: a node's identity, schema, attributes, inputs/outputs, documentation and problems."""

from __future__ import annotations

import html
from collections.abc import Callable

from onnx import AttributeProto, NodeProto
from PySide6.QtWidgets import QWidget

from onnxviz.model.document import Document
from onnxviz.model.graph.index import GraphIndex, child_scope
from onnxviz.model.graph.opdocs import FormalDoc, OpDoc, attribute_text, op_doc
from onnxviz.model.graph.opschema import element_type_text, names_element_type
from onnxviz.model.graph.smallvalues import SmallValues
from onnxviz.model.problems import Problem
from onnxviz.model.text import display_name
from onnxviz.ui.panels.common import (
    KEY_CHARS,
    Form,
    Page,
    anchor,
    code,
    key_html,
    metadata_rows,
    node_href,
    scope_href,
    text_html,
    type_html,
    value_href,
    value_type,
)
from onnxviz.ui.panels.navigation import attribute_tensor_href
from onnxviz.ui.panels.problems_panel import severity_html
from onnxviz.ui.widgets.markdown import markdown_view
from onnxviz.ui.widgets.names import name_tooltip, plain_tooltip

GREY = "color:gray"
MAX_VALUES = 200  # inputs/outputs listed; a Sum over 100k values must not build 100k rows
VALUE_CHARS = 1000  # of an attribute's value, a metadata value or a problem's message
SECTION_CHARS = 60  # of a name from the file in a section's title


Extra = Callable[[Document, str, int], "tuple[str, QWidget] | None"]
"""A feature's own section for a node (e.g. the model diff's side-by-side view): its title and body, or None."""


class NodePanel(Page):
    def __init__(self, on_link: Callable[[str], None]) -> None:
        super().__init__(on_link)
        self.scope = ""
        self.node = -1
        self.extras: list[Extra] = []  # sections features add right under the header

    def show_node(self, doc: Document, scope: str, node: int) -> None:
        self.scope, self.node = scope, node
        self.begin((id(doc), scope, node))
        g = doc.index.graphs.get(scope)
        if g is None or not 0 <= node < len(g.nodes):
            self.add_title("Node not found", html.escape(f"The selection points to node {node} of '{scope}', "
                                                          "which no longer exists."))
            self.end()
            return
        n = g.nodes[node]
        doc_info = op_doc(doc.model, n)
        self._add_header(doc, g, node, n, doc_info)
        for extra in self.extras:
            section = extra(doc, scope, node)
            if section is not None:
                self.add_section(*section)
        self._add_attributes(g, node, n, doc_info)
        self._add_values("Inputs", doc, g, list(n.input), doc_info.inputs if doc_info else ())
        self._add_values("Outputs", doc, g, list(n.output), doc_info.outputs if doc_info else ())
        self._add_problems([p for p in doc.problems if p.scope == scope and p.node == node])
        if n.doc_string:
            self.add_section("Node doc_string", markdown_view(n.doc_string))
        if n.metadata_props:
            self.add_form(f"Metadata ({len(n.metadata_props)})", metadata_rows(n.metadata_props))
        fn = doc.index.function_for(n) if doc_info is None else None
        if doc_info is not None:
            self._add_schema_doc(doc_info)
        elif fn is not None and fn.doc_string:
            self.add_section(f"{display_name(fn.name, SECTION_CHARS)} documentation", markdown_view(fn.doc_string))
        self.end()

    def show_other(self, subject: object, title: str, subtitle: str, sections: list[tuple[str, QWidget]]) -> None:
        """Something that is no node of the document (a diff's node only the other model has): a title,
        a plain-text ``subtitle`` and read-only sections, nothing that links into or edits the document."""
        self.scope, self.node = "", -1
        self.begin(subject)
        self.add_title(title, html.escape(subtitle))
        for section in sections:
            self.add_section(*section)
        self.end()

    def _add_header(self, doc: Document, g: GraphIndex, i: int, n: NodeProto, info: OpDoc | None) -> None:
        domain = n.domain or "ai.onnx"
        self.add_title(n.op_type, f"{text_html(domain)} · node {i}" + (f" in {code(g.scope)}" if g.scope else ""))
        if info is not None:
            schema = f"{html.escape(info.domain)} v{info.since_version}"
            if info.model_opset is not None:
                schema += f' <span style="{GREY}">(model imports opset {info.model_opset})</span>'
            if info.deprecated:
                schema += ' <b style="color:#c01c28">deprecated</b>'
        elif doc.index.function_for(n) is not None:
            fn = doc.index.function_for(n)
            assert fn is not None
            scope = f"fn:{fn.domain}:{fn.name}:{getattr(fn, 'overload', '')}"
            schema = "model-local function " + anchor(scope_href(scope), fn.name)
        else:
            schema = f'<span style="{GREY}">no schema known for this operator</span>'
        form = Form(self.on_link)
        form.add_name("Name", n.name, f'<span style="{GREY}">(unnamed)</span>')
        for key, value in (("Op type", code(n.op_type)), ("Domain", text_html(domain)), ("Schema", schema)):
            form.add(key, value)
        self.add_section("Node", form)

    def _add_attributes(self, g: GraphIndex, i: int, n: NodeProto, info: OpDoc | None) -> None:
        form = Form(self.on_link)
        present = {a.name for a in n.attribute}
        for a in n.attribute:
            type_name = AttributeProto.AttributeType.Name(a.type) if a.type else "?"
            doc = info.attribute(a.name) if info else None
            names_type = a.type == AttributeProto.INT and doc is not None and names_element_type(doc.description)
            value = text_html(element_type_text(a.i) if names_type else attribute_text(a), VALUE_CHARS)
            if a.type == AttributeProto.GRAPH:
                value = anchor(scope_href(child_scope(g.scope, i, a.name)), f"enter {a.name}", mono=False) \
                    + f" &nbsp;{value}"
            elif a.type == AttributeProto.GRAPHS:
                value = " ".join(anchor(scope_href(child_scope(g.scope, i, a.name, k)), f"[{k}]")
                                 for k in range(len(a.graphs)))
            elif a.type == AttributeProto.TENSOR:
                value = anchor(attribute_tensor_href(g.scope, i, a.name), attribute_text(a))
            label = form.add(key_html(a.name), f'{value} <span style="{GREY}">{type_name.lower()}</span>')
            if len(a.name) > KEY_CHARS:
                form.keys[key_html(a.name)].setToolTip(name_tooltip(a.name))
            if doc is not None:
                label.setToolTip(plain_tooltip(doc.description))
        if info is not None:
            for d in info.attributes:
                if d.name in present:
                    continue
                text = f"default {html.escape(d.default)}" if d.default else (
                    "<b>required, missing</b>" if d.required else "not set")
                label = form.add(d.name, f'<span style="{GREY}">{text} · {d.type_name.lower()}</span>')
                label.setToolTip(plain_tooltip(d.description))
                form.keys[d.name].setStyleSheet(GREY)
        if not n.attribute and not (info and info.attributes):
            form.add("", f'<span style="{GREY}">none</span>')
        self.add_section(f"Attributes ({len(n.attribute)})", form)

    def _add_values(self, title: str, doc: Document, g: GraphIndex, names: list[str],
                    formals: tuple[FormalDoc, ...]) -> None:
        form = Form(self.on_link)
        small = SmallValues(g)
        for k, name in enumerate(names[:MAX_VALUES]):
            formal = _formal_for(formals, k)
            key = html.escape(formal.name) if formal else f"#{k}"
            if not name:
                form.add(key, f'<span style="{GREY}">(omitted optional input)</span>')
                continue
            t, source = value_type(doc.index, g.scope, name)
            link = anchor(value_href(g.scope, name), name)
            role = _value_role(g, name)
            value = small.text(name, short=False)
            shown = f" = <code>{text_html(value, VALUE_CHARS)}</code>" if value is not None else ""
            label = form.add(key, f"{link}{shown}{role}<br>{type_html(t, source if source != 'initializer' else '')}")
            if formal is not None:
                label.setToolTip(plain_tooltip(f"{formal.name}: {formal.type_str}\n{formal.description}"))
        if not names:
            form.add("", f'<span style="{GREY}">none</span>')
        if len(names) > MAX_VALUES:
            form.add("", f'<span style="{GREY}">... and {len(names) - MAX_VALUES:,} more (see the Raw panel)</span>')
        self.add_section(f"{title} ({len(names):,})", form)

    def _add_problems(self, problems: list[Problem]) -> None:
        if not problems:
            return
        form = Form(self.on_link)
        for p in problems:
            form.add(severity_html(p), text_html(p.message, VALUE_CHARS) + f' <span style="{GREY}">({p.source})</span>')
        self.add_section(f"Problems ({len(problems)})", form)

    def _add_schema_doc(self, info: OpDoc) -> None:
        parts = [info.description, ""]
        for title, formals in (("Inputs", info.inputs), ("Outputs", info.outputs)):
            if formals:
                parts.append(f"**{title}**\n")
                parts += [f"- `{f.name}` ({f.type_str}{', ' + f.option if f.option else ''}): {f.description}"
                          for f in formals]
                parts.append("")
        if info.attributes:
            parts.append("**Attributes**\n")
            parts += [f"- `{a.name}` ({a.type_name.lower()}"
                      f"{', default ' + a.default if a.default else ', required' if a.required else ''}): "
                      f"{a.description}" for a in info.attributes]
            parts.append("")
        if info.type_constraints:
            parts.append("**Type constraints**\n")
            parts += [f"- `{c.param}` in {', '.join(c.allowed)}: {c.description}" for c in info.type_constraints]
        view = markdown_view("\n".join(parts), max_height=360)
        self.add_section(f"{info.name} documentation", view, expanded=False)


def _formal_for(formals: tuple[FormalDoc, ...], k: int) -> FormalDoc | None:
    if k < len(formals):
        return formals[k]
    if formals and formals[-1].option == "variadic":
        return formals[-1]
    return None


def _value_role(g: GraphIndex, name: str) -> str:
    roles = [r for r in g.roles_of(name) if r != "intermediate value"]  # the usual case goes unsaid
    return f' <span style="{GREY}">· {html.escape(", ".join(roles))}</span>' if roles else ""


def node_link(g: GraphIndex, i: int) -> str:
    return anchor(node_href(g.scope, i), g.node_label(i)) + f' <span style="{GREY}">{html.escape(g.nodes[i].op_type)}</span>'
