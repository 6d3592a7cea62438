"""Operator schemas from ``onnx.defs`` for a node, given the model's opset imports."""

from __future__ import annotations

from functools import lru_cache

import onnx
from onnx.defs import OpSchema

from onnxviz.model.graph.contrib import contrib_schema
from onnxviz.model.text import tensor_dtype_name

STANDARD_DOMAINS = ("", "ai.onnx")


def normalize_domain(domain: str) -> str:
    return "" if domain in STANDARD_DOMAINS else domain


def opset_version(model: onnx.ModelProto, domain: str) -> int | None:
    """The version the model imports for ``domain`` (None if it imports none)."""
    d = normalize_domain(domain)
    for o in model.opset_import:
        if normalize_domain(o.domain) == d:
            return int(o.version)
    return None


@lru_cache(maxsize=4096)
def schema_for(op_type: str, domain: str, version: int | None) -> OpSchema | None:
    """The schema that applies to ``op_type`` at ``version`` (the newest if None); None if unknown. onnx
    knows the standard domains; onnxruntime, when installed, its contrib ones (``com.microsoft``)."""
    d = normalize_domain(domain)
    try:
        if version is None:
            return onnx.defs.get_schema(op_type, d)
        return onnx.defs.get_schema(op_type, version, d)
    except Exception:  # noqa: BLE001 - SchemaError for unknown ops, domains or versions
        return contrib_schema(op_type, d, version)


def node_schema(model: onnx.ModelProto, node: onnx.NodeProto) -> OpSchema | None:
    return schema_for(node.op_type, node.domain, opset_version(model, node.domain))


def all_schemas() -> list[OpSchema]:
    """The newest schema of every operator onnx knows (for palettes), sorted by domain and name."""
    latest: dict[tuple[str, str], OpSchema] = {}
    for s in onnx.defs.get_all_schemas_with_history():
        key = (s.domain, s.name)
        if key not in latest or s.since_version > latest[key].since_version:
            latest[key] = s
    return sorted((s for s in latest.values() if not s.deprecated), key=lambda s: (s.domain, s.name))


def attribute_type_code(spec: OpSchema.Attribute) -> int:
    """The AttributeProto type code a schema attribute expects (onnx's stub leaves its enum without int())."""
    return int(spec.type)  # type: ignore[call-overload]


def names_element_type(description: str) -> bool:
    """Whether an int attribute holds an element type (Cast's ``to``, RandomNormal's ``dtype``...): its
    description says so, as every such attribute of the standard operators does."""
    text = description.lower()
    return "data type" in text or "datatype" in text


def element_type_text(elem: int) -> str:
    """An element type as a user reads it where it was a bare number: ``float16 (10)``."""
    return f"{tensor_dtype_name(elem)} ({elem})" if elem else "undefined (0)"

