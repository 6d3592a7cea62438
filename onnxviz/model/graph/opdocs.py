"""Operator documentation as plain data (from :mod:`onnxviz.model.graph.opschema`), and attribute text."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import AttributeProto, NodeProto, helper
from onnx.defs import OpSchema

from onnxviz.model.graph.opschema import attribute_type_code, node_schema, opset_version
from onnxviz.model.graph.tensors import tensor_array
from onnxviz.model.text import array_values_text, float_text, tensor_type_text

MAX_LIST_ITEMS = 16


@dataclass(frozen=True)
class FormalDoc:
    """One input or output of a schema."""

    name: str
    type_str: str
    description: str
    option: str  # "", "optional" or "variadic"


@dataclass(frozen=True)
class AttributeDoc:
    name: str
    type_name: str   # "INT", "FLOATS", ...
    required: bool
    default: str     # text of the default value ('' if none)
    description: str


@dataclass(frozen=True)
class TypeConstraintDoc:
    param: str
    allowed: tuple[str, ...]
    description: str


@dataclass(frozen=True)
class OpDoc:
    """What the node panel shows about an operator's schema."""

    name: str
    domain: str
    since_version: int
    model_opset: int | None
    description: str
    inputs: tuple[FormalDoc, ...]
    outputs: tuple[FormalDoc, ...]
    attributes: tuple[AttributeDoc, ...]
    type_constraints: tuple[TypeConstraintDoc, ...]
    deprecated: bool

    def attribute(self, name: str) -> AttributeDoc | None:
        return next((a for a in self.attributes if a.name == name), None)


def _option(formal: OpSchema.FormalParameter) -> str:
    return {OpSchema.FormalParameterOption.Optional: "optional",
            OpSchema.FormalParameterOption.Variadic: "variadic"}.get(formal.option, "")


def _formals(formals: Sequence[OpSchema.FormalParameter]) -> tuple[FormalDoc, ...]:
    return tuple(FormalDoc(f.name, f.type_str, f.description.strip(), _option(f)) for f in formals)


def _default_text(attr: OpSchema.Attribute) -> str:
    value = attr.default_value
    if value is None or not value.name and value.type == AttributeProto.UNDEFINED:
        return ""
    return attribute_text(value)


def schema_doc(schema: OpSchema, model_opset: int | None = None) -> OpDoc:
    attrs = tuple(
        AttributeDoc(name, onnx.AttributeProto.AttributeType.Name(attribute_type_code(a)), bool(a.required), _default_text(a), a.description.strip())
        for name, a in sorted(schema.attributes.items()))
    constraints = tuple(TypeConstraintDoc(c.type_param_str, tuple(c.allowed_type_strs), c.description.strip())
                        for c in schema.type_constraints)
    return OpDoc(schema.name, schema.domain or "ai.onnx", int(schema.since_version), model_opset,
                 (schema.doc or "").strip(), _formals(schema.inputs), _formals(schema.outputs), attrs,
                 constraints, bool(schema.deprecated))


def op_doc(model: onnx.ModelProto, node: NodeProto) -> OpDoc | None:
    """The documentation of the schema that applies to ``node`` under the model's opset; None if unknown."""
    schema = node_schema(model, node)
    if schema is None:
        return None
    return schema_doc(schema, opset_version(model, node.domain))


def _list_text(items: list[object], fmt: str = "{}") -> str:
    shown = ", ".join(fmt.format(x) for x in items[:MAX_LIST_ITEMS])
    more = f", ... ({len(items)} items)" if len(items) > MAX_LIST_ITEMS else ""
    return f"[{shown}{more}]"


def attribute_text(attr: AttributeProto) -> str:
    """Short readable text of an attribute's value (tensors and graphs summarised, long lists cut)."""
    t = attr.type
    if attr.ref_attr_name:
        return f"@{attr.ref_attr_name} (from the calling function)"
    if t == AttributeProto.INT:
        return str(attr.i)
    if t == AttributeProto.FLOAT:
        return float_text(attr.f)
    if t == AttributeProto.STRING:
        return repr(attr.s.decode("utf-8", "replace"))
    if t == AttributeProto.INTS:
        return _list_text(list(attr.ints))
    if t == AttributeProto.FLOATS:
        return _list_text([float_text(x) for x in attr.floats])
    if t == AttributeProto.STRINGS:
        return _list_text([s.decode("utf-8", "replace") for s in attr.strings], "{!r}")
    if t == AttributeProto.TENSOR:
        return tensor_brief(attr.t)
    if t == AttributeProto.TENSORS:
        return _list_text([tensor_brief(x) for x in attr.tensors])
    if t == AttributeProto.GRAPH:
        return f"graph '{attr.g.name}' ({len(attr.g.node)} nodes)"
    if t == AttributeProto.GRAPHS:
        return f"{len(attr.graphs)} graphs"
    if t == AttributeProto.TYPE_PROTO:
        return str(helper.printable_type(attr.tp)) if hasattr(helper, "printable_type") else "type"
    if t == AttributeProto.SPARSE_TENSOR:
        return f"sparse tensor {list(attr.sparse_tensor.dims)}"
    return "(unset)"


def tensor_brief(tensor: onnx.TensorProto) -> str:
    """``float32[3x3]`` plus the value itself when it has at most a few elements."""

    text = tensor_type_text(tensor.data_type, list(tensor.dims))
    numel = int(np.prod(tensor.dims)) if tensor.dims else 1
    if numel <= 8 and tensor.data_location != onnx.TensorProto.EXTERNAL:
        try:
            values = tensor_array(tensor)
        except Exception:  # noqa: BLE001 - a malformed value is shown as its type only
            return text
        text += " = " + array_values_text(values)
    return text
