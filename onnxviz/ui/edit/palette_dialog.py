"""Insert a node from the operator palette: search by name, read the schema, choose where it goes."""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QSplitter,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from onnxviz.model.document import Document
from onnxviz.model.editing.editor import NodeRef
from onnxviz.model.editing.palette import CONTRIB_DOMAIN, PaletteEntry, palette, search
from onnxviz.model.errors import OnnxvizError
from onnxviz.model.text import display_name
from onnxviz.ui.edit.node_needs import NodeNeeds
from onnxviz.ui.widgets.forms import ErrorLabel
from onnxviz.ui.widgets.markdown import InertDocument
from onnxviz.ui.widgets.names import name_tooltip, plain_tooltip, short_name

LIST_KEYS = (Qt.Key.Key_Up, Qt.Key.Key_Down, Qt.Key.Key_PageUp, Qt.Key.Key_PageDown)


@dataclass(frozen=True)
class Placement:
    """Where a new one-input node goes: on ``value``, feeding ``consumers`` (None: all of them). ``label``
    says so with the names escaped and elided; ``tip`` quotes them whole."""

    label: str
    scope: str
    value: str
    consumers: tuple[NodeRef, ...] | None = None
    tip: str = ""


def _place(text: str, names: tuple[str, ...], scope: str, value: str,
           consumers: tuple[NodeRef, ...] | None = None) -> Placement:
    """A placement described by ``text`` with ``{}`` for each of ``names``."""
    shown = text.format(*(short_name(n, 40) for n in names))
    tip = "" if shown == text.format(*names) else name_tooltip(text.format(*(display_name(n, 600) for n in names)))
    return Placement(shown, scope, value, consumers, tip)


def placements(doc: Document) -> list[Placement]:
    """The places the current selection offers: after/before a node, or on a selected value's edge."""
    state = doc.selection.state
    out: list[Placement] = []
    if state.node >= 0:
        try:
            node = doc.edit.node_proto(state.scope, state.node)
        except (OnnxvizError, IndexError):
            return out
        label = doc.edit.node_label(state.scope, state.node)
        ref: NodeRef = doc.node_ids[state.node] if state.scope == "" else (state.scope, state.node)
        if node.output and node.output[0]:
            out.append(_place("After {} (on {})", (label, node.output[0]), state.scope, node.output[0]))
            out.append(_place("Beside what {} feeds (reads {}, feeds nothing yet)", (label, node.output[0]),
                              state.scope, node.output[0], ()))
        data_inputs = [x for x in node.input if x]
        if data_inputs:
            out.append(_place("Before {} (on its input {})", (label, data_inputs[0]), state.scope,
                              data_inputs[0], (ref,)))
    elif state.value:
        out.append(_place("On the edge {} (before all its consumers)", (state.value,), state.scope, state.value))
        out.append(_place("Reading {} (feeds nothing yet)", (state.value,), state.scope, state.value, ()))
    else:  # nothing selected: right after one of the graph's inputs
        inits = {t.name for t in doc.model.graph.initializer}
        out += [_place("After graph input {}", (v.name,), "", v.name)
                for v in doc.model.graph.input if v.name not in inits]
    return out


def schema_html(e: PaletteEntry) -> str:
    """The schema as the palette shows it: summary, inputs, outputs, attributes."""
    def params(items: tuple) -> str:
        rows = []
        for p in items:
            tag = " <i>(optional)</i>" if p.optional else " <i>(variadic)</i>" if p.variadic else ""
            rows.append(f"<li><b>{html.escape(p.name)}</b>: {html.escape(p.type_str)}{tag}</li>")
        return "<ul>" + "".join(rows) + "</ul>" if rows else "<p><i>none</i></p>"

    attrs = "".join(
        f"<tr><td><b>{html.escape(a.name)}</b></td><td>{a.type_name}</td>"
        f"<td>{'required' if a.required else html.escape(a.default) or '-'}</td></tr>" for a in e.attributes)
    domain = f" &nbsp; <small>{html.escape(e.domain)}</small>" if e.domain else ""
    note = f"<p><i>{CONTRIB_NOTE}</i></p>" if e.domain == CONTRIB_DOMAIN else ""
    return (f"<h3>{html.escape(e.name)}{domain}</h3><p><small>since opset {e.since_version}</small></p>{note}"
            f"<p>{html.escape(e.summary)}</p><h4>Inputs</h4>{params(e.inputs)}<h4>Outputs</h4>{params(e.outputs)}"
            + (f"<h4>Attributes</h4><table cellspacing='4'><tr><th align='left'>name</th><th align='left'>type"
               f"</th><th align='left'>default</th></tr>{attrs}</table>" if e.attributes else ""))


CONTRIB_NOTE = ("An onnxruntime contrib operator: onnxruntime runs it, other runtimes may not. Inserting it "
                "adds the com.microsoft opset import to the model if it has none.")
GROUPS = {False: "ONNX operators", True: "com.microsoft (onnxruntime)"}


def _header(text: str) -> QListWidgetItem:
    """A group's title in the list: not selectable, bold."""
    item = QListWidgetItem(text)
    item.setFlags(Qt.ItemFlag.NoItemFlags)
    font = item.font()
    font.setBold(True)
    item.setFont(font)
    return item


class PaletteDialog(QDialog):
    """Search operators; OK inserts the chosen one at the chosen place as one undoable edit."""

    def __init__(self, doc: Document, parent: QWidget | None = None,
                 constant: Callable[[], object] | None = None) -> None:
        super().__init__(parent)
        self.doc = doc
        self.constant = constant  # opens Insert Constant, where a Constant's value and type are given
        self.setWindowTitle("Insert Node")
        self.resize(820, 560)
        self.entries = palette(doc.model)
        self.search_edit = QLineEdit()
        self.search_edit.setPlaceholderText("Search operators, e.g. relu, conv, ai.onnx.ml")
        self.search_edit.setClearButtonEnabled(True)
        self.search_edit.textChanged.connect(self._filter)
        self.search_edit.installEventFilter(self)  # Up and Down move in the list while typing
        self.list = QListWidget()
        # a long name ("TreeEnsembleClassifier (ai.onnx.ml)", a model's own function) is cut in its middle,
        # whole in its tooltip: a sideways scroll bar under a list of short names hid the last row
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.list.setUniformItemSizes(True)
        self.list.currentItemChanged.connect(self._show_schema)
        self.list.itemDoubleClicked.connect(lambda _item: self.accept())
        self.schema_view = QTextBrowser()
        self.schema_view.setOpenExternalLinks(False)
        self.schema_view.setDocument(InertDocument(self.schema_view))  # it never loads what its text names
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.list)
        splitter.addWidget(self.schema_view)
        splitter.setSizes([280, 540])
        self.placement = QComboBox()
        # as wide as the dialog gives it, not as its longest item
        self.placement.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.placement.setMinimumContentsLength(30)
        self.places = placements(doc)
        self.placement.addItems([p.label for p in self.places] or ["Select a node or an edge on the graph first"])
        for k, place in enumerate(self.places):
            if place.tip:
                self.placement.setItemData(k, place.tip, Qt.ItemDataRole.ToolTipRole)
        self.name_edit = QLineEdit()
        self.name_edit.setPlaceholderText("automatic")
        form = QFormLayout()
        form.addRow("Place:", self.placement)
        form.addRow("Node name:", self.name_edit)
        self.needs = NodeNeeds(self._values())
        self.error = ErrorLabel(self)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.ok_button = buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.ok_button.setText("Insert")
        self.ok_button.setEnabled(bool(self.places))
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.search_edit)
        layout.addWidget(splitter, 1)
        layout.addLayout(form)
        layout.addWidget(self.needs)
        layout.addWidget(self.error)
        layout.addWidget(buttons)
        self._filter("")
        self.search_edit.setFocus()

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if obj is self.search_edit and event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent) \
                and event.key() in LIST_KEYS:
            QApplication.sendEvent(self.list, QKeyEvent(QEvent.Type.KeyPress, event.key(), event.modifiers()))
            return True
        return super().eventFilter(obj, event)

    def _filter(self, text: str) -> None:
        """List the matching operators; under a title per group when both onnx's and contrib ones match."""
        self.list.clear()
        found = search(self.entries, text)
        titled = len({e.domain == CONTRIB_DOMAIN for e in found}) > 1
        group: bool | None = None
        for e in found:
            if titled and (e.domain == CONTRIB_DOMAIN) != group:
                group = e.domain == CONTRIB_DOMAIN
                self.list.addItem(_header(GROUPS[group]))
            item = QListWidgetItem(e.name if not e.domain else f"{e.name}   ({e.domain})")
            item.setData(Qt.ItemDataRole.UserRole, e)
            item.setToolTip(plain_tooltip(f"{item.text()}\n{e.summary}" if e.summary else item.text()))
            self.list.addItem(item)
        if found:
            self.list.setCurrentRow(1 if titled else 0)
        else:
            self.schema_view.setHtml("<p><i>No operator matches.</i></p>")

    def _values(self) -> list[str]:
        """The values the new node may read: those of the place's graph."""
        scope = self.places[0].scope if self.places else ""
        g = self.doc.index.graphs.get(scope)
        return sorted(v for v in g.producer if v) if g is not None else []

    def _show_schema(self, item: QListWidgetItem | None) -> None:
        entry = item.data(Qt.ItemDataRole.UserRole) if item is not None else None
        if entry is not None:
            self.schema_view.setHtml(schema_html(entry))
            self.needs.show_entry(entry)
            self.error.show_message("")
            takes_none = not entry.inputs
            self.placement.setEnabled(not takes_none)
            self.ok_button.setText("Next..." if self._is_constant(entry) and self.constant else "Insert")
            self.ok_button.setEnabled(bool(self.places) or takes_none)
            self.ok_button.setToolTip("A Constant takes no input: its value and type are given next" if
                                      self._is_constant(entry) else "")

    @staticmethod
    def _is_constant(entry: PaletteEntry) -> bool:
        return entry.name == "Constant" and entry.domain in ("", "ai.onnx")

    def chosen(self) -> PaletteEntry | None:
        item = self.list.currentItem()
        return item.data(Qt.ItemDataRole.UserRole) if item is not None else None

    def accept(self) -> None:
        entry = self.chosen()
        if entry is not None and self._is_constant(entry) and self.constant is not None:
            super().accept()
            self.constant()
            return
        if entry is not None and not entry.inputs:
            self._insert_alone(entry)
            return
        if entry is None or not self.places:
            self.error.show_message("choose an operator and a place on the graph.")
            return
        place = self.places[self.placement.currentIndex()]
        try:
            name = self.doc.edit.insert_on_value(place.value, entry.name, self.needs.attributes(), domain=entry.domain,
                                                 scope=place.scope, name=self.name_edit.text().strip() or None,
                                                 consumers=place.consumers, extra_inputs=self.needs.inputs(),
                                                 literals=self.needs.literal_kind())
        except OnnxvizError as exc:
            self.error.show_message(exc.message)
            return
        super().accept()
        self._select(name)

    def _select(self, name: str) -> None:
        """The new node is selected: its attributes, a rename or a graph output are one key away."""
        try:
            scope, i = self.doc.edit.locate(name)
        except OnnxvizError:
            return
        self.doc.selection.select_node(scope, i)

    def _insert_alone(self, entry: PaletteEntry) -> None:
        """An operator that takes no input (RandomNormal, a function of none): a node making a new value, first
        in the graph, read by nothing yet."""
        scope = self.places[0].scope if self.places else ""
        out = self.doc.edit.unique_value_name(entry.name.lower())
        try:
            name = self.doc.edit.insert_node(entry.name, [], [out], self.needs.attributes(), entry.domain,
                                             self.name_edit.text().strip() or None, scope, position=0)
        except OnnxvizError as exc:
            self.error.show_message(exc.message)
            return
        super().accept()
        self._select(name)
