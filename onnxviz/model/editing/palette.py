"""The operator palette: every operator onnx knows, and onnxruntime's contrib operators (``com.microsoft``),
as the model's opsets define them, searchable by name and grouped by domain."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import onnx
from onnx.defs import OpSchema

from onnxviz.model.editing.values import attribute_text
from onnxviz.model.graph.contrib import all_contrib_schemas
from onnxviz.model.graph.enum_attributes import allowed_values
from onnxviz.model.graph.opschema import (
    all_schemas,
    attribute_type_code,
    names_element_type,
    normalize_domain,
    opset_version,
    schema_for,
)
from onnxviz.model.text import tensor_dtype_name

CONTRIB_DOMAIN = "com.microsoft"  # onnxruntime's public contrib operators (its other domains are internal)


@dataclass(frozen=True)
class Param:
    name: str
    type_str: str
    optional: bool
    variadic: bool
    description: str


@dataclass(frozen=True)
class AttributeInfo:
    name: str
    type_name: str       # "int", "floats", ...
    required: bool
    default: str         # the default as text ('' when none)
    description: str
    type_code: int = 0   # the AttributeProto type
    choices: tuple[str, ...] = ()  # the values it may take, as text (element types: 'float', 'int64'...)


@dataclass(frozen=True)
class PaletteEntry:
    """One operator as the palette lists it."""

    domain: str
    name: str
    since_version: int
    summary: str         # the first paragraph of the schema's documentation
    doc: str
    inputs: tuple[Param, ...]
    outputs: tuple[Param, ...]
    attributes: tuple[AttributeInfo, ...]
    min_inputs: int

    @property
    def qualified_name(self) -> str:
        return f"{self.domain}.{self.name}" if self.domain else self.name


def palette(model: onnx.ModelProto | None = None) -> list[PaletteEntry]:
    """Every operator, at the version the model's opset imports (the newest if it imports none), by domain:
    onnx's, then onnxruntime's ``com.microsoft`` ones (when onnxruntime is installed)."""
    out: list[PaletteEntry] = []
    contrib = [s for s in all_contrib_schemas() if s.domain == CONTRIB_DOMAIN]
    for newest in all_schemas() + contrib:
        version = opset_version(model, newest.domain) if model is not None else None
        schema = schema_for(newest.name, newest.domain, version) if version is not None else newest
        if schema is not None and not schema.deprecated:
            out.append(entry_for(schema))
    return out


def search(entries: list[PaletteEntry], text: str) -> list[PaletteEntry]:
    """Entries whose name (or domain-qualified name) contains ``text``; exact, then prefix, then others:
    onnx's operators first, then the contrib ones (each list kept together under its domain)."""
    needle = text.strip().lower()
    if not needle:
        return list(entries)

    def rank(e: PaletteEntry) -> tuple[bool, int, str]:
        name = e.name.lower()
        return (e.domain == CONTRIB_DOMAIN, 0 if name == needle else 1 if name.startswith(needle) else 2,
                e.qualified_name.lower())

    return sorted((e for e in entries if needle in e.qualified_name.lower()), key=rank)


@lru_cache(maxsize=2048)
def entry_for(schema: OpSchema) -> PaletteEntry:
    doc = (schema.doc or "").strip()
    return PaletteEntry(
        domain=schema.domain, name=schema.name, since_version=schema.since_version,
        summary=doc.split("\n\n")[0].replace("\n", " ").strip(), doc=doc,
        inputs=tuple(_param(p) for p in schema.inputs), outputs=tuple(_param(p) for p in schema.outputs),
        attributes=tuple(_attribute(a, schema) for _, a in sorted(schema.attributes.items())),
        min_inputs=schema.min_input,
    )


def _param(p: OpSchema.FormalParameter) -> Param:
    return Param(p.name, p.type_str, p.option == OpSchema.FormalParameterOption.Optional,
                 p.option == OpSchema.FormalParameterOption.Variadic, (p.description or "").strip())


def _attribute(a: OpSchema.Attribute, schema: OpSchema) -> AttributeInfo:
    default = ""
    if a.default_value.type:
        default = attribute_text(a.default_value)
    code = attribute_type_code(a)
    type_name = onnx.AttributeProto.AttributeType.Name(code).lower()
    description = (a.description or "").strip()
    return AttributeInfo(a.name, type_name, bool(a.required), default, description, code,
                         attribute_choices(schema, a.name))


def attribute_choices(schema: OpSchema, name: str) -> tuple[str, ...]:
    """The values attribute ``name`` of ``schema``'s operator version may take, as text; () when any value of
    its type goes. An element type (Cast's ``to``) is one of the names its output's constraint allows
    (``float``, ``int64``...); a string attribute one of the words the specification lists for that version
    (:mod:`~onnxviz.model.graph.enum_attributes`), else those its description names in one sentence."""
    spec = schema.attributes.get(name)
    if spec is None:
        return ()
    code = attribute_type_code(spec)
    description = (spec.description or "").strip()
    if code == onnx.AttributeProto.INT and names_element_type(description):
        unset = spec.default_value.type and spec.default_value.i == onnx.TensorProto.UNDEFINED  # "as its input's"
        return (("undefined",) if unset else ()) + element_type_choices(schema)
    if code in (onnx.AttributeProto.STRING, onnx.AttributeProto.STRINGS):
        listed = allowed_values(normalize_domain(schema.domain), schema.name, name, schema.since_version)
        return listed or (string_choices(description) if code == onnx.AttributeProto.STRING else ())
    return ()


def element_type_name(elem: int) -> str:
    """How element types are named where they are chosen, as everywhere in the window: ``float32``,
    ``float16``, ``int64`` (``undefined`` for 0: "as the input's", where an operator allows it)."""
    return tensor_dtype_name(elem) if elem else "undefined"


_CHOICE_SENTENCE = re.compile(r"\b(either|one of)\b", re.IGNORECASE)
_QUOTED_WORD = re.compile(r"[\"'`]([A-Za-z_]\w*)[\"'`]")


def string_choices(description: str) -> tuple[str, ...]:
    """The words a string attribute may be, when its description lists them in one sentence ('It can be
    either "RIGHT" or "LEFT".'); () when it does not."""
    for sentence in re.split(r"(?<=\.)\s", description):
        if _CHOICE_SENTENCE.search(sentence):
            words = tuple(dict.fromkeys(_QUOTED_WORD.findall(sentence)))
            if len(words) >= 2:
                return words
    return ()


def element_type_choices(schema: OpSchema) -> tuple[str, ...]:
    """The element types an operator's single output may have, as its type constraint allows, named as the
    window names them everywhere (``float32``, ``float16``, ``int64``: :func:`element_type_name`); every type
    ONNX knows when the schema does not narrow it."""
    constraints = {c.type_param_str: c.allowed_type_strs for c in schema.type_constraints}
    allowed = constraints.get(schema.outputs[0].type_str, []) if len(schema.outputs) == 1 else []
    names = [t[len("tensor("):-1].upper() for t in allowed if t.startswith("tensor(") and t.endswith(")")]
    known = [n for n, v in onnx.TensorProto.DataType.items() if v != onnx.TensorProto.UNDEFINED]
    chosen = [element_type_name(onnx.TensorProto.DataType.Value(n)) for n in ([n for n in names if n in known] or known)]
    return tuple(sorted(chosen, key=lambda n: COMMON_TYPES.index(n) if n in COMMON_TYPES else len(COMMON_TYPES)))


COMMON_TYPES = ("float32", "float16", "bfloat16", "float64", "int64", "int32", "int16", "int8", "uint8", "uint16",
                "uint32", "uint64", "bool", "string")  # first in a list of element types, in this order
