"""Model-level facts: opsets, I/O signatures, op histograms, parameter counts."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, ValueInfoProto

from onnxviz.model.graph.flops import NodeCost, graph_costs
from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.text import dtype_text, shape_list, tensor_dtype_name


def tensor_numel(t: TensorProto) -> int:
    """Element count from dims (0 for a dims product that is negative)."""
    n = 1
    for d in t.dims:
        n *= int(d)
    return max(n, 0)


def tensor_itemsize(elem_type: int) -> float:
    """Bytes per element; 4-bit types count 0.5; unknown types 0."""
    if elem_type in (TensorProto.INT4, TensorProto.UINT4) or elem_type == getattr(TensorProto, "FLOAT4E2M1", -1):
        return 0.5
    if elem_type == TensorProto.STRING:
        return 0
    try:
        return float(np.dtype(onnx.helper.tensor_dtype_to_np_dtype(elem_type)).itemsize)
    except Exception:  # noqa: BLE001 - unknown or future type numbers
        return 0


def value_signature(v: ValueInfoProto) -> dict[str, Any]:
    return {"name": v.name, "dtype": dtype_text(v.type) if v.HasField("type") else "",
            "shape": shape_list(v.type) if v.HasField("type") else None}


def opsets(model: onnx.ModelProto) -> dict[str, int]:
    return {(o.domain or "ai.onnx"): int(o.version) for o in model.opset_import}


def parameters(model: onnx.ModelProto) -> tuple[int, int, dict[str, int]]:
    """(element count, bytes, bytes by dtype) of the main graph's initializers."""
    count = 0
    total = 0.0
    by_dtype: Counter[str] = Counter()
    per_type: dict[int, tuple[float, str]] = {}  # itemsize and name, looked up once per data type
    tensors = [*model.graph.initializer, *(st.values for st in model.graph.sparse_initializer)]
    for t in tensors:
        data_type = t.data_type
        if data_type not in per_type:
            per_type[data_type] = (tensor_itemsize(data_type), tensor_dtype_name(data_type))
        itemsize, name = per_type[data_type]
        n = max(math.prod(t.dims), 0)
        b = n * itemsize
        count += n
        total += b
        by_dtype[name] += int(b)
    return count, int(total), dict(by_dtype)


def op_histogram(index: ModelIndex) -> Counter[str]:
    """How often each operator occurs in every graph, subgraph and function body."""
    return Counter(n.op_type if n.domain in ("", "ai.onnx") else f"{n.domain}:{n.op_type}"
                   for g in index.graphs.values() for n in g.nodes)


@dataclass(frozen=True)
class ModelFigures:
    """The computed part of the model summary (slow on huge models: build it off the GUI thread)."""

    parameters: int
    parameter_bytes: int
    bytes_by_dtype: dict[str, int]
    op_counts: Counter[str]
    costs: list[NodeCost]


def model_figures(model: onnx.ModelProto, index: ModelIndex) -> ModelFigures:
    count, nbytes, by_dtype = parameters(model)
    return ModelFigures(count, nbytes, by_dtype, op_histogram(index), graph_costs(index, ""))


def model_info(model: onnx.ModelProto, index: ModelIndex) -> dict[str, Any]:
    """What ``onnxviz info --json`` prints."""
    params, param_bytes, by_dtype = parameters(model)
    op_types = Counter(
        (f"{n.domain}:{n.op_type}" if n.domain not in ("", "ai.onnx") else n.op_type) for n in model.graph.node)
    return {
        "ir_version": int(model.ir_version),
        "opsets": opsets(model),
        "producer": {"name": model.producer_name, "version": model.producer_version},
        "domain": model.domain,
        "model_version": int(model.model_version),
        "graph_name": model.graph.name,
        "inputs": [value_signature(v) for v in model.graph.input
                   if v.name not in set(index.main.initializer_names)],
        "outputs": [value_signature(v) for v in model.graph.output],
        "nodes": len(model.graph.node),
        "nodes_total": index.node_count(),
        "op_types": dict(op_types.most_common()),
        "parameters": params,
        "parameter_bytes": param_bytes,
        "parameter_bytes_by_dtype": by_dtype,
        "initializers": len(model.graph.initializer),
        "functions": [f"{f.domain}:{f.name}" for f in model.functions],
        "metadata": {p.key: p.value for p in model.metadata_props},
    }


def human_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1024 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"
