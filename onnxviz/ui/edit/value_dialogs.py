"""Dialogs that make new values or reshape the model's inputs: Insert Constant and New Initializer (typed or
from a .npy file, of an element type chosen by name, feeding an input of the selected node in the same step),
Rewire Input (a value of the graph, or numbers that become one) and Make Dimension Dynamic/Static (a graph
input's dimension, carried to every output and value_info that shares it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from onnx import helper
from PySide6.QtWidgets import QComboBox, QSizePolicy

from onnxviz.model.document import Document
from onnxviz.model.editing.literals import LiteralKind, elem_of, port
from onnxviz.model.editing.ops import Insert, ReplaceMessage
from onnxviz.model.editing.palette import COMMON_TYPES, element_type_name
from onnxviz.model.editing.values import Dim, parse_shape
from onnxviz.model.errors import EditError
from onnxviz.model.text import quoted_name, shape_list
from onnxviz.ui.edit.attributes import node_ref
from onnxviz.ui.edit.node_needs import LITERAL_KINDS, InputField, literal_kind_box
from onnxviz.ui.widgets.forms import FormDialog
from onnxviz.ui.widgets.names import short_name

if TYPE_CHECKING:
    from onnxviz.ui.edit.host import EditHost

NUMBER_TYPES = tuple(t for t in COMMON_TYPES if t != "string")
NOT_CONNECTED = "(nothing yet)"


@dataclass(frozen=True)
class Slot:
    """An input of the selected node that a new value can feed: ``index`` (the next one past its inputs adds
    one), its port's name and the element type the port takes ('' when not one)."""

    index: int
    name: str
    dtype: str
    current: str

    @property
    def label(self) -> str:
        now = f" (now {short_name(self.current, 30)})" if self.current else " (empty)"
        return f"input {self.index} {self.name}{now}"


def input_slots(doc: Document, scope: str, i: int) -> list[Slot]:
    """The inputs of node ``i`` a new value can feed: each it has, and one more when its operator takes more."""
    node = doc.edit.node_proto(scope, i)
    schema = doc.edit.schema_of(scope, i)
    known = [elem_of(doc.edit.find.local_type(scope, x)) if x else 0 for x in node.input]
    most = schema.max_input if schema is not None else len(node.input) + 1
    slots = []
    for k in range(min(len(node.input) + 1, most)):
        where = port(schema, k, known)
        dtype = element_type_name(helper.np_dtype_to_tensor_dtype(where.dtype)) if where.dtype is not None else ""
        slots.append(Slot(k, where.name, dtype, node.input[k] if k < len(node.input) else ""))
    return slots


def new_tensor(controller: EditHost, kind: LiteralKind) -> FormDialog:
    """Insert Constant / New Initializer: a name, an element type, the numbers, and the selected node's input
    it feeds (none: a value read by nothing yet)."""
    doc = controller.doc
    if doc is None:
        raise EditError("open a model first.")
    where = controller.selected_node()
    scope = where[0] if where is not None else doc.selection.state.scope
    if kind == "initializer" and doc.edit.find.scope_path(scope)[0] == "functions":
        raise EditError("a function body has no initializers; insert a Constant instead.")
    slots = input_slots(doc, *where) if where is not None else []
    target = short_name(doc.edit.node_label(*where), 40) if where is not None else ""
    ref = node_ref(doc, *where) if where is not None else None

    def apply(f: FormDialog) -> None:
        slot = slots[feeds.currentIndex() - 1] if feeds.currentIndex() > 0 else None
        value = field.value(required=True, what="the new value")
        make = doc.edit.insert_constant if kind == "constant" else doc.edit.add_initializer
        feed = (ref, slot.index) if slot is not None and ref is not None else None
        make(f.text("name").strip(), value, f.text("dtype"), scope, feed)

    what = "Constant node" if kind == "constant" else "initializer"
    title = "Insert Constant" if kind == "constant" else "New Initializer"
    form = controller.form(title, f"A new {what} holding numbers typed here or loaded from a .npy file; it can "
                           "feed an input of the selected node in the same step.", apply, "Insert" if
                           kind == "constant" else "Create")
    base = "constant" if kind == "constant" else "weight"
    form.add_line("name", "Name:", doc.edit.unique_value_name(base), name=True)
    dtype = form.add_combo("dtype", "Element type:", NUMBER_TYPES, "float32")
    field = InputField([], "numbers such as 2.0 or [[1, 2], [3, 4]]", names=False)
    form.add_widget("value", "Value:", field)
    feeds = form.add_combo("feeds", "Feeds:", [NOT_CONNECTED] + [f"{s.label} of {target}" for s in slots])
    feeds.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)  # the node's name in sight
    free = next((k for k, s in enumerate(slots) if not s.current), -1)
    if free >= 0:  # the selected node's first input left empty (an optional one, or one more it takes)
        feeds.setCurrentIndex(free + 1)

    def follow(k: int) -> None:  # the element type the fed input takes
        if k > 0 and slots[k - 1].dtype in NUMBER_TYPES:
            dtype.setCurrentText(slots[k - 1].dtype)

    feeds.currentIndexChanged.connect(follow)
    follow(feeds.currentIndex())
    field.edit.setFocus()
    return form


def rewire_input(controller: EditHost, doc: Document, scope: str, i: int) -> FormDialog:
    """Make an input of node ``i`` read another value of the graph, or numbers that become a new one."""
    ref = node_ref(doc, scope, i)
    node = doc.edit.node_proto(scope, i)
    slots = input_slots(doc, scope, i)
    values = sorted(v for v in doc.index.graphs[scope].producer if v)
    tips = [slot.current for slot in slots]

    def apply(f: FormDialog) -> None:
        value = field.value()
        doc.edit.set_input(ref, ports.currentIndex(), value, kinds_of(literals))

    form = controller.form("Rewire Input", f"Make an input of {quoted_name(doc.edit.node_label(scope, i))} read "
                           "another value, or numbers (they become a new value).", apply, "Connect")
    ports = form.add_combo("port", "Input:", [f"{s.index}: {s.name}{' = ' + short_name(s.current, 40) if s.current else ' (empty)'}"
                                               for s in slots] or [f"{len(node.input)}: (new input)"], tips=tips)
    field = InputField(values, "a value name, or numbers such as 2.0 or [1, 2, 3] (empty: leave the input empty)")
    form.add_widget("value", "Read:", field)
    literals = literal_kind_box()
    form.add_widget("literals", "Numbers become:", literals)
    field.edit.setFocus()
    return form


def kinds_of(box: QComboBox) -> LiteralKind:
    return LITERAL_KINDS.get(box.currentText(), "initializer")


def make_dimension(controller: EditHost) -> FormDialog:
    """Make Dimension Dynamic/Static: a graph input's dimension becomes a name or a size, everywhere it is
    shared (graph outputs, value_info, other inputs naming it)."""
    doc = controller.doc
    if doc is None:
        raise EditError("open a model first.")
    inits = {t.name for t in doc.model.graph.initializer}
    inputs = [v for v in doc.model.graph.input if v.name not in inits and shape_list(v.type)]
    if not inputs:
        raise EditError("the model has no graph input with a known shape.")
    selected = doc.selection.state.value
    start = next((k for k, v in enumerate(inputs) if v.name == selected), 0)

    def apply(f: FormDialog) -> None:
        text = f.text("value").strip()
        dim = _dimension(text)
        name = inputs[which.currentIndex()].name
        before = doc.undo_stack.index
        doc.edit.set_dimension(name, axis.currentIndex(), dim)
        if doc.undo_stack.index > before:
            controller.window.statusBar().showMessage(followed(doc), 8000)

    form = controller.form("Make Dimension Dynamic or Static", "A dimension of a graph input becomes a name "
                           "(dynamic, e.g. batch) or a size (static, e.g. 1). Every graph output and value_info "
                           "entry that shares it follows, in one undo step.", apply, "Apply")
    which = form.add_combo("input", "Input:", [short_name(v.name, 60) for v in inputs])
    axis = form.add_combo("axis", "Dimension:", [])
    value = form.add_line("value", "New value:", "", placeholder="a name such as batch, or a size such as 1")

    def show_axes(k: int) -> None:
        dims = shape_list(inputs[k].type) or []
        axis.clear()
        axis.addItems([f"{n}: {'?' if d is None else d}" for n, d in enumerate(dims)])
        value.setText("" if not dims else ("1" if isinstance(dims[0], str) else "batch"))
        value.selectAll()

    which.currentIndexChanged.connect(show_axes)
    axis.currentIndexChanged.connect(lambda n: _suggest(value, shape_list(inputs[which.currentIndex()].type), n))
    which.setCurrentIndex(start)
    show_axes(start)
    value.setFocus()
    return form


def _suggest(edit: object, dims: list[Dim] | None, n: int) -> None:
    """The opposite of dimension ``n`` as it is: a size for a named one, a name for a sized one."""
    if dims is None or not 0 <= n < len(dims):
        return
    current = dims[n]
    edit.setText("1" if isinstance(current, str) or current is None else ("batch" if n == 0 else f"dim{n}"))  # type: ignore[attr-defined]
    edit.selectAll()  # type: ignore[attr-defined]


def _dimension(text: str) -> Dim:
    """A size, a name or '?' typed for a dimension; EditError otherwise."""
    if not text:
        raise EditError("type a name such as batch (dynamic) or a size such as 1 (static).")
    dims = parse_shape(f"[{text}]")
    if dims is None or len(dims) != 1:
        raise EditError(f"'{quoted_name(text)}' is not one dimension: use a name such as batch or a size such as 1.")
    return dims[0]


def followed(doc: Document) -> str:
    """What the last dimension change carried the dimension to, for the status bar."""
    command = doc.undo_stack.commands[doc.undo_stack.index - 1]
    counts = {"output": 0, "value_info": 0, "input": 0}
    for op in command.ops:
        if isinstance(op, ReplaceMessage | Insert) and len(op.path) >= 3 and op.path[1] in counts:
            counts[str(op.path[1])] += 1
    parts = [f"{n} {what}{'s' if n != 1 and what != 'value_info' else ''}"
             for what, n in (("input", counts["input"] - 1), ("output", counts["output"]),
                             ("value_info", counts["value_info"])) if n > 0]
    return f"{command.label}: {' and '.join(parts) if parts else 'nothing else'} followed."
