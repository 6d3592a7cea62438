"""The Weights panel: an initializer, a Constant's value or a tensor attribute in a TensorView."""

from __future__ import annotations

from onnx import AttributeProto, NodeProto, SparseTensorProto, TensorProto, helper
from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from onnxviz.model.document import Document
from onnxviz.model.errors import OnnxvizError
from onnxviz.model.graph.tensors import raw_data_spans, sparse_to_dense, tensor_numel
from onnxviz.model.text import display_name
from onnxviz.ui.panels.common import find_initializer
from onnxviz.ui.widgets.names import wrappable
from onnxviz.ui.widgets.tensor_view import TensorView

_CONSTANT_SCALARS = {"value_float": TensorProto.FLOAT, "value_floats": TensorProto.FLOAT,
                     "value_int": TensorProto.INT64, "value_ints": TensorProto.INT64,
                     "value_string": TensorProto.STRING, "value_strings": TensorProto.STRING}


def constant_tensor(node: NodeProto) -> tuple[str, TensorProto] | None:
    """(attribute name, tensor) of a Constant node's value, scalars and lists turned into tensors."""
    for a in node.attribute:
        if a.name == "value" and a.type == AttributeProto.TENSOR:
            return a.name, a.t
        if a.name in _CONSTANT_SCALARS:
            value = helper.get_attribute_value(a)
            dims = [] if not isinstance(value, list) else [len(value)]
            values = value if isinstance(value, list) else [value]
            return a.name, helper.make_tensor(node.output[0] if node.output else "", _CONSTANT_SCALARS[a.name],
                                              dims, values)
    return None


def attribute_tensor(node: NodeProto, attr: str) -> TensorProto | None:
    for a in node.attribute:
        if a.name == attr and a.type == AttributeProto.TENSOR:
            return a.t
    return None


class WeightsPanel(QWidget):
    def __init__(self) -> None:
        super().__init__()
        self.origin = QLabel()
        self.origin.setWordWrap(True)
        self.origin.setTextFormat(Qt.TextFormat.PlainText)  # it names nodes and attributes from the file
        self.origin.setStyleSheet("color: palette(placeholder-text); padding: 6px 6px 0px 6px;")
        self.view = TensorView()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.origin)
        layout.addWidget(self.view, 1)
        self.shown: tuple[str, ...] = ()
        self._spans: tuple[bytes, dict[str, tuple[int, int]]] | None = None
        self.clear()

    def sizeHint(self) -> QSize:
        return QSize(430, 330)

    def clear(self, message: str = "Select an initializer, a Constant node or a tensor attribute.") -> None:
        self.shown = ()
        self.origin.setText("")
        self.origin.setVisible(False)
        self.view.clear(message)

    def show_tensor(self, doc: Document, key: tuple[str, ...], tensor: TensorProto, origin: str,
                    title: str = "") -> None:
        """Show ``tensor``; ``key`` identifies it so reselecting the same tensor does not reload it."""
        if key == self.shown and (self.view.is_busy or self.view.prepared is not None):
            return
        self.shown = key
        self.origin.setText(wrappable(origin, 600))  # a long name wraps within the panel
        self.origin.setVisible(True)
        raw = None
        if key[:2] == ("init", "") and doc.undo_stack.is_clean and tensor.HasField("raw_data"):
            data = doc.serialize()  # the file's bytes, while the model equals them
            raw = lambda: self._raw_view(data, tensor.name)  # noqa: E731
        self.view.show_tensor_proto(tensor, doc.base_dir, raw, title)

    def _raw_view(self, data: bytes, name: str) -> memoryview | None:
        """(worker thread) ``name``'s raw_data inside ``data``, without copying; spans cached per file."""
        cached = self._spans
        if cached is None or cached[0] is not data:
            cached = (data, raw_data_spans(data))
            self._spans = cached
        span = cached[1].get(name)
        return memoryview(data)[span[0]:span[1]] if span is not None else None

    def show_value(self, doc: Document, scope: str, name: str) -> bool:
        """Show ``name`` if it is an initializer or a Constant's output; False if it is neither."""
        g = doc.index.graphs.get(scope)
        if g is None:
            return False
        tensor = find_initializer(g, name)
        where = f" of {scope}" if scope else ""
        if isinstance(tensor, SparseTensorProto):
            self._show_sparse(doc, scope, tensor, where)
            return True
        if tensor is not None:
            self.show_tensor(doc, ("init", scope, name), tensor, "Initializer" + where)
            return True
        p = g.producer_of(name)
        if p >= 0 and g.nodes[p].op_type == "Constant":
            return self.show_node(doc, scope, p)
        return False

    def _show_sparse(self, doc: Document, scope: str, sparse: SparseTensorProto, where: str) -> None:
        """Shown dense (zeros where nothing is stored), up to a size."""
        try:
            dense = sparse_to_dense(sparse)
        except OnnxvizError as exc:
            self.clear(exc.message[:1].upper() + exc.message[1:])
            return
        stored = int(sparse.indices.dims[0]) if sparse.indices.dims else 0
        self.show_tensor(doc, ("sparse", scope, sparse.values.name), dense,
                         f"Sparse initializer{where}: {stored:,} of {max(1, tensor_numel(dense)):,} values stored, "
                         "shown dense")

    def show_node(self, doc: Document, scope: str, node: int) -> bool:
        """Show a Constant node's value (or the node's first tensor attribute); False if it has none."""
        g = doc.index.graphs.get(scope)
        if g is None or not 0 <= node < len(g.nodes):
            return False
        n = g.nodes[node]
        reference = next((a.ref_attr_name for a in n.attribute if a.ref_attr_name), "")
        if n.op_type == "Constant" and reference:  # a function's Constant set by the caller: no value here
            self.clear(f"The value of the function's attribute '{display_name(reference, 80)}': each call "
                       "of the function gives its own.")
            return True
        found = constant_tensor(n) if n.op_type == "Constant" else next(
            ((a.name, a.t) for a in n.attribute if a.type == AttributeProto.TENSOR), None)
        if found is None:
            return False
        attr, tensor = found
        self.show_tensor(doc, ("attr", scope, str(node), attr), tensor,
                         f"Attribute '{attr}' of {n.op_type} node {g.node_label(node)}",
                         n.output[0] if n.op_type == "Constant" and n.output else "")
        return True

    def show_attribute(self, doc: Document, scope: str, node: int, attr: str) -> bool:
        g = doc.index.graphs.get(scope)
        if g is None or not 0 <= node < len(g.nodes):
            return False
        tensor = attribute_tensor(g.nodes[node], attr)
        if tensor is None:
            return False
        self.show_tensor(doc, ("attr", scope, str(node), attr), tensor,
                         f"Attribute '{attr}' of {g.nodes[node].op_type} node {g.node_label(node)}")
        return True
