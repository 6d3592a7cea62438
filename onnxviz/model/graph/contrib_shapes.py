"""Types of the values after onnxruntime's contrib operators, which onnx's shape inference leaves unknown.

onnx's inference knows no ``com.microsoft`` operator: a MatMulNBits output has no type, and neither has
anything after it. :func:`complete_contrib_types` gives the outputs of such nodes their types by a rule per
common operator (shapes of MatMulNBits, FusedMatMul, SkipLayerNormalization, Attention... ; for the others
the element type their schema's type constraints imply) and lets onnx infer the rest of the graph again.
Main graph only; onnx's own registry is left alone. (onnxruntime's ``symbolic_shape_infer`` needs sympy,
which onnxviz does not depend on, and raises on operators it does not know.)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import onnx
from onnx import GraphProto, ModelProto, NodeProto, TensorProto, TypeProto

from onnxviz.model.graph.contrib import ONNX_DOMAINS, contrib_domains
from onnxviz.model.graph.opschema import normalize_domain, opset_version, schema_for

MAX_NODES = 50_000  # the extra pass is skipped above: at worst ~20 µs a node (0.6 s for 30k)
Types = Sequence[TypeProto | None]
Rule = Callable[[NodeProto, Types], list[TypeProto | None]]


class _Domained(Protocol):
    """A node as any message type reading it has it (:func:`may_complete`)."""

    domain: str


def complete_contrib_types(inferred: ModelProto, data_prop: bool = True) -> ModelProto:
    """``inferred`` (what onnx's inference returned) with the outputs of its contrib nodes typed and the
    graph inferred again from there; ``inferred`` itself when it has no contrib node lacking an output
    type, is too big, or nothing could be found. Never raises."""
    graph = inferred.graph
    if not may_complete(graph.node):
        return inferred
    domains = contrib_domains()
    if not any(n.domain in domains for n in graph.node):
        return inferred
    try:
        found = _walk(inferred, _known_types(graph), domains)
        if not found:
            return inferred
        graph.value_info.extend(onnx.helper.make_value_info(name, t) for name, t in found.items())
        return onnx.shape_inference.infer_shapes(inferred, check_type=False, strict_mode=False,
                                                 data_prop=data_prop)
    except Exception:  # noqa: BLE001 - the first pass's types are kept
        return inferred


def may_complete(nodes: Sequence[_Domained]) -> bool:
    """Whether :func:`complete_contrib_types` may type something in a graph of these ``nodes`` (any message
    with a ``domain``): not too many, and one of another domain than onnx's (onnxruntime's schemas not loaded)."""
    return len(nodes) <= MAX_NODES and not all(n.domain in ONNX_DOMAINS for n in nodes)


def _known_types(graph: GraphProto) -> dict[str, TypeProto]:
    """The types with a shape (onnx gives a value after an untyped one its element type alone)."""
    types = {t.name: onnx.helper.make_tensor_type_proto(t.data_type, list(t.dims)) for t in graph.initializer}
    for v in (*graph.input, *graph.value_info, *graph.output):
        kind = v.type.WhichOneof("value") if v.HasField("type") else None
        if kind is not None and (kind != "tensor_type" or v.type.tensor_type.HasField("shape")):
            types[v.name] = v.type
    return types


def _walk(model: ModelProto, types: dict[str, TypeProto], domains: frozenset[str]) -> dict[str, TypeProto]:
    """The types the rules give contrib outputs, found in node order; standard nodes between them are
    inferred one by one so that later contrib nodes see their inputs."""
    found: dict[str, TypeProto] = {}
    for node in model.graph.node:
        if all(not o or o in types for o in node.output):
            continue
        ins = [types.get(x) if x else None for x in node.input]
        if node.domain in domains:
            new = dict(zip(node.output, contrib_output_types(model, node, ins), strict=False))
            found.update((o, t) for o, t in new.items() if o and t is not None and o not in types)
        elif all(t is not None for x, t in zip(node.input, ins, strict=True) if x):
            new = _standard(model, node, types)
        else:
            continue
        types.update((o, t) for o, t in new.items() if o and t is not None and o not in types)
    return found


def _standard(model: ModelProto, node: NodeProto, types: dict[str, TypeProto]) -> dict[str, TypeProto | None]:
    schema = schema_for(node.op_type, node.domain, opset_version(model, node.domain))
    if schema is None or normalize_domain(node.domain) not in ("", "ai.onnx.ml"):
        return {}
    try:
        return dict(onnx.shape_inference.infer_node_outputs(
            schema, node, {x: types[x] for x in node.input if x}, opset_imports=list(model.opset_import),
            ir_version=model.ir_version or onnx.IR_VERSION))
    except Exception:  # noqa: BLE001 - onnx refuses the node: its outputs stay unknown
        return {}


def contrib_output_types(model: ModelProto, node: NodeProto, ins: Types) -> list[TypeProto | None]:
    """The output types of contrib ``node`` given its input types (None: unknown): by the operator's rule,
    else only the element type its schema implies (always in onnxruntime's internal layout domains)."""
    rule = RULES.get(node.op_type) if node.domain == "com.microsoft" else None
    out: list[TypeProto | None] = []
    if rule is not None:
        try:
            out = rule(node, ins)
        except Exception:  # noqa: BLE001 - odd attributes or shapes: fall back on the element type
            out = []
    out = out + [None] * (len(node.output) - len(out))
    return [t if t is not None else _elem_only(model, node, ins, k) for k, t in enumerate(out)]


def _elem_only(model: ModelProto, node: NodeProto, ins: Types, k: int) -> TypeProto | None:
    """Output ``k``'s element type (rank unknown) as the schema's type constraints fix it."""
    schema = schema_for(node.op_type, node.domain, opset_version(model, node.domain))
    if schema is None or not schema.outputs:
        return None
    type_str = schema.outputs[min(k, len(schema.outputs) - 1)].type_str
    allowed = {c.type_param_str: list(c.allowed_type_strs) for c in schema.type_constraints}.get(type_str, [type_str])
    if len(allowed) == 1:
        return _from_type_str(allowed[0])
    for j, formal in enumerate(schema.inputs):
        if formal.type_str == type_str and j < len(ins) and ins[j] is not None:
            return _with(ins[j], None)
    return None


def _from_type_str(text: str) -> TypeProto | None:
    if not (text.startswith("tensor(") and text.endswith(")")):
        return None
    name = text[len("tensor("):-1].upper()
    return _tensor(TensorProto.DataType.Value(name), None) if name in TensorProto.DataType.keys() else None


# -- building types --------------------------------------------------------------------------------------
DimLike = onnx.TensorShapeProto.Dimension | int | str | None


def _tensor(elem: int, dims: Sequence[DimLike] | None) -> TypeProto:
    t = TypeProto()
    t.tensor_type.elem_type = elem
    if dims is not None:
        shape = t.tensor_type.shape
        shape.SetInParent()
        for d in dims:
            new = shape.dim.add()
            if isinstance(d, onnx.TensorShapeProto.Dimension):
                new.CopyFrom(d)
            elif isinstance(d, int):
                new.dim_value = d
            elif isinstance(d, str):
                new.dim_param = d
    return t


def _dims(t: TypeProto | None) -> list[onnx.TensorShapeProto.Dimension] | None:
    if t is None or not t.HasField("tensor_type") or not t.tensor_type.HasField("shape"):
        return None
    return list(t.tensor_type.shape.dim)


def _elem(t: TypeProto | None) -> int:
    return t.tensor_type.elem_type if t is not None and t.HasField("tensor_type") else 0


def _with(t: TypeProto | None, dims: Sequence[DimLike] | None, elem: int = 0) -> TypeProto | None:
    """A tensor type of ``t``'s element type (or ``elem``) and ``dims`` (None: rank unknown)."""
    kind = elem or _elem(t)
    return _tensor(kind, dims) if kind else None


def _int(node: NodeProto, name: str, default: int) -> int:
    for a in node.attribute:
        if a.name == name:
            return int(a.i)
    return default


def _input(ins: Types, k: int) -> TypeProto | None:
    return ins[k] if k < len(ins) else None


def _value(d: onnx.TensorShapeProto.Dimension) -> int | None:
    return int(d.dim_value) if d.HasField("dim_value") else None


# -- rules -----------------------------------------------------------------------------------------------
def _delegate(op: str, node: NodeProto, ins: Types, attrs: Sequence[str] = (), elem_from: int = 0
              ) -> list[TypeProto | None]:
    """The output shape onnx's ``op`` would give inputs of the shapes of ``ins`` (with ``node``'s attributes
    ``attrs``; asked with float inputs, as quantized ones are not ``op``'s), of input ``elem_from``'s type."""
    names = [f"i{k}" if t is not None else "" for k, t in enumerate(ins)]
    standard = onnx.helper.make_node(op, names, ["o"])
    standard.attribute.extend(a for a in node.attribute if a.name in attrs)
    floats = {n: _with(t, _dims(t), TensorProto.FLOAT) for n, t in zip(names, ins, strict=True) if n and t}
    found = onnx.shape_inference.infer_node_outputs(onnx.defs.get_schema(op, ""), standard,
                                                    {n: t for n, t in floats.items() if t is not None})
    out = found.get("o")
    return [_with(_input(ins, elem_from), _dims(out)) if out is not None else None]


def _transposed(t: TypeProto | None, flag: bool) -> TypeProto | None:
    dims = _dims(t)
    if not flag or dims is None or len(dims) < 2:
        return t
    return _with(t, dims[:-2] + [dims[-1], dims[-2]])


def _same_as_input(node: NodeProto, ins: Types) -> list[TypeProto | None]:
    return [_input(ins, 0)]


def _matmul_nbits(node: NodeProto, ins: Types) -> list[TypeProto | None]:
    a, n = _input(ins, 0), _int(node, "N", 0)
    dims = _dims(a)
    return [_with(a, dims[:-1] + [n]) if dims and n > 0 else _with(a, None)]


def _fused_matmul(node: NodeProto, ins: Types) -> list[TypeProto | None]:
    a = _transposed(_input(ins, 0), bool(_int(node, "transA", 0)))
    b = _transposed(_input(ins, 1), bool(_int(node, "transB", 0)))
    return _delegate("MatMul", node, [a, b])


def _attention(node: NodeProto, ins: Types, elem_from: int = 0) -> list[TypeProto | None]:
    """Attention / QAttention: input [batch, sequence, in] by weights [in, q + k + v hidden]."""
    x, w = _dims(_input(ins, 0)), _dims(_input(ins, 1))
    elem = _elem(_input(ins, elem_from))
    sizes = next((list(a.ints) for a in node.attribute if a.name == "qkv_hidden_sizes"), [])
    v_hidden = sizes[2] if len(sizes) == 3 else (_value(w[1]) or 0) // 3 if w and len(w) == 2 else 0
    if x is None or len(x) != 3 or v_hidden <= 0:
        return [_with(_input(ins, 0), None, elem)]
    return [_with(_input(ins, 0), [x[0], x[1], v_hidden], elem)]


def _channels_first(t: TypeProto | None, last: bool) -> TypeProto | None:
    """``t`` with its channels moved from last to second (``last``), as a channels_last operator reads it."""
    dims = _dims(t)
    return _with(t, [dims[0], dims[-1], *dims[1:-1]]) if last and dims and len(dims) > 2 else t


def _channels_back(out: list[TypeProto | None], last: bool) -> list[TypeProto | None]:
    dims = _dims(out[0]) if out else None
    return [_with(out[0], [dims[0], *dims[2:], dims[1]])] if last and dims and len(dims) > 2 else out


def _quantized_conv(node: NodeProto, ins: Types) -> list[TypeProto | None]:
    """com.microsoft QLinearConv: x, its scale and zero point, w, ... y's zero point (its type), bias."""
    last = bool(_int(node, "channels_last", 0))
    out = _delegate("Conv", node, [_channels_first(_input(ins, 0), last), _input(ins, 3)], CONV_ATTRS)
    out = _channels_back(out, last)
    return [_with(out[0], _dims(out[0]), _elem(_input(ins, 7)) or _elem(_input(ins, 0)))]


def _quantized_global_pool(node: NodeProto, ins: Types) -> list[TypeProto | None]:
    last = bool(_int(node, "channels_last", 0))
    out = _delegate("GlobalAveragePool", node, [_channels_first(_input(ins, 0), last)])
    return _channels_back(out, last)


def _quantized_gemm(node: NodeProto, ins: Types) -> list[TypeProto | None]:
    """QGemm: A, its scale and zero point, B, ..., C, then y's scale and zero point (float out without)."""
    out = _delegate("Gemm", node, [_input(ins, 0), _input(ins, 3)], ("transA", "transB"))
    return [_with(out[0], _dims(out[0]), _elem(_input(ins, 8)) or TensorProto.FLOAT)]


CONV_ATTRS = ("auto_pad", "dilations", "group", "kernel_shape", "pads", "strides")
# Only the contrib operators that neither onnx nor onnxruntime's symbolic shape inference types (see
# :mod:`.symbolic_shapes`, which knows MatMulNBits, GatherBlockQuantized, SkipLayerNormalization, Attention,
# MultiHeadAttention, GroupQueryAttention, EmbedLayerNormalization, the Gelus, QLinearAdd/Mul, Q/DQ...).
RULES: dict[str, Rule] = {
    **dict.fromkeys(("BiasSoftmax", "QLinearSigmoid", "QLinearLeakyRelu", "QLinearSoftmax", "BiasDropout",
                     "Inverse"), _same_as_input),
    "MatMulBnb4": _matmul_nbits, "FusedMatMul": _fused_matmul,
    "MatMulIntegerToFloat": lambda n, i: [_with(_input(i, 2), _dims(_delegate("MatMul", n, i[:2])[0]))],
    "DynamicQuantizeMatMul": lambda n, i: _delegate("MatMul", n, i[:2]),
    "FusedGemm": lambda n, i: _delegate("Gemm", n, i[:3], ("transA", "transB", "alpha", "beta")),
    "FusedConv": lambda n, i: _delegate("Conv", n, i[:3], CONV_ATTRS),
    "QAttention": lambda n, i: _attention(n, i, elem_from=3),
    "QLinearConv": _quantized_conv, "QLinearGlobalAveragePool": _quantized_global_pool, "QGemm": _quantized_gemm,
}
