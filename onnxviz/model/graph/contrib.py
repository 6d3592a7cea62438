"""Schemas of onnxruntime's contrib operators (``com.microsoft`` and its internal domains), as onnx schemas.

onnx knows only the standard domains; onnxruntime ships the schemas of the operators it adds
(MatMulNBits, SkipLayerNormalization, QAttention...). They are read once, when a node of such a domain
first asks, and only if onnxruntime imports: without it these operators stay schema-less, as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import onnx
from onnx.defs import OpSchema

ONNX_DOMAINS = frozenset({"", "ai.onnx", "ai.onnx.ml", "ai.onnx.preview.training", "ai.onnx.preview"})
_OPTIONS = {0: OpSchema.FormalParameterOption.Single, 1: OpSchema.FormalParameterOption.Optional,
            2: OpSchema.FormalParameterOption.Variadic}


@lru_cache(maxsize=1)
def _raw_schemas() -> dict[tuple[str, str], list[Any]]:
    """onnxruntime's schemas of the domains onnx does not know, by (domain, op type), oldest first."""
    try:
        from onnxruntime.capi.onnxruntime_pybind11_state import get_all_operator_schema
        schemas = get_all_operator_schema()
    except Exception:  # noqa: BLE001 - onnxruntime missing or broken: contrib operators stay unknown
        return {}
    table: dict[tuple[str, str], list[Any]] = {}
    for s in schemas:
        if s.domain not in ONNX_DOMAINS:
            table.setdefault((s.domain, s.name), []).append(s)
    for versions in table.values():
        versions.sort(key=lambda s: s.since_version)
    return table


def contrib_domains() -> frozenset[str]:
    """The domains onnxruntime adds operators to (empty without onnxruntime)."""
    return frozenset(d for d, _ in _raw_schemas())


@lru_cache(maxsize=1024)
def contrib_schema(op_type: str, domain: str, version: int | None) -> OpSchema | None:
    """The onnxruntime schema of ``op_type`` that applies at ``version`` (the newest if None); None if
    onnxruntime knows none (or is not installed)."""
    if domain in ONNX_DOMAINS:
        return None
    versions = _raw_schemas().get((domain, op_type), [])
    applicable = [s for s in versions if version is None or s.since_version <= version]
    if not applicable:
        return None
    try:
        return _as_onnx_schema(applicable[-1])
    except Exception:  # noqa: BLE001 - a schema onnx cannot represent is treated as unknown
        return None


def all_contrib_schemas() -> list[OpSchema]:
    """The newest schema of every contrib operator, sorted by domain and name."""
    found = (contrib_schema(name, domain, None) for domain, name in sorted(_raw_schemas()))
    return [s for s in found if s is not None and not s.deprecated]


def _as_onnx_schema(s: Any) -> OpSchema:
    return OpSchema(s.name, s.domain, int(s.since_version), s.doc or "", inputs=_formals(s.inputs),
                    outputs=_formals(s.outputs),
                    type_constraints=[(c.type_param_str, list(c.allowed_type_strs), c.description)
                                      for c in s.type_constraints],
                    attributes=[_attribute(name, a) for name, a in s.attributes.items()])


def _formals(formals: Sequence[Any]) -> list[OpSchema.FormalParameter]:
    return [OpSchema.FormalParameter(f.name, f.typeStr, f.description, param_option=_OPTIONS[int(f.option)],
                                     is_homogeneous=bool(f.isHomogeneous)) for f in formals]


def _attribute(name: str, a: Any) -> OpSchema.Attribute:
    default = bytes(getattr(a, "_default_value", b"") or b"")
    if default:
        value = onnx.AttributeProto()
        value.ParseFromString(default)
        return OpSchema.Attribute(name, value, a.description)
    kind = getattr(OpSchema.AttrType, a.type.name)  # the same names in onnx and onnxruntime
    return OpSchema.Attribute(name, kind, a.description, required=bool(a.required))
