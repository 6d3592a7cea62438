"""Fetch many small values as a few big ones.

onnxruntime spends a few microseconds on every graph output it hands back, whatever its
size; on a transformer with 12k tiny intermediates that is most of the run. So values whose
shape is known before the run are grouped by dtype and shape, each group is joined by one
``Concat`` node added to the captured copy of the model, and only the joined tensor is
fetched. After the run each member is a view into it. Shapes come from ONNX shape
inference with the actual input shapes; the joined result is checked against them, and a
packed run that fails in one of the added nodes is run again without packing.
"""

from __future__ import annotations

import math
from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np
import onnx

PACK_PREFIX = "onnxviz_pack"
MEMBER_LIMIT = 64 << 10  # bytes; bigger values cost little per byte when fetched alone
GROUP_LIMIT = 16 << 20  # bytes joined by one Concat, so no single fetched array grows without bound

_PACKABLE = {onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE, onnx.TensorProto.FLOAT16, onnx.TensorProto.BOOL,
             onnx.TensorProto.INT8, onnx.TensorProto.INT16, onnx.TensorProto.INT32, onnx.TensorProto.INT64,
             onnx.TensorProto.UINT8, onnx.TensorProto.UINT16, onnx.TensorProto.UINT32, onnx.TensorProto.UINT64}


class PackMismatch(Exception):
    """A joined value does not have the size its members' inferred shapes say."""


@dataclass
class Pack:
    """Values of one dtype and shape, joined along axis 0 into ``output``."""

    output: str
    shape: tuple[int, ...]
    members: list[str] = field(default_factory=list)


def static_shapes(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray]) -> dict[str, tuple[int, tuple[int, ...]]]:
    """Value name -> (elem_type, shape) for every value whose shape inference makes fully known
    and not empty, given the actual shapes of ``feeds``. Empty when inference fails."""
    copy = _without_weights(model)
    for value in copy.graph.input:
        array = feeds.get(value.name)
        if array is None or not value.type.HasField("tensor_type"):
            continue
        dims = value.type.tensor_type.shape.dim
        del dims[:]
        for size in np.shape(array):
            dims.add().dim_value = int(size)
    try:
        inferred = onnx.shape_inference.infer_shapes(copy, data_prop=True)
    except Exception:  # noqa: BLE001 - inference raises many types on odd models; then nothing is packed
        return {}
    shapes: dict[str, tuple[int, tuple[int, ...]]] = {}
    for value in (*inferred.graph.value_info, *inferred.graph.output):
        tensor = value.type.tensor_type  # an empty one for other types: no shape
        if tensor.HasField("shape"):
            dims = tuple([d.dim_value for d in tensor.shape.dim])
            if all(dims):  # an unknown dimension reads 0; so does a real 0, and an empty value needs no packing
                shapes[value.name] = (tensor.elem_type, dims)
    return shapes


def _without_weights(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model with its big initializers reduced to name, dtype and dims: shape inference
    reads the values of small ones only (shapes, axes), and copying weights costs time."""
    graph = model.graph
    copy = onnx.ModelProto(ir_version=model.ir_version, opset_import=model.opset_import, functions=model.functions)
    copy.graph.name = graph.name
    copy.graph.node.extend(graph.node)
    copy.graph.input.extend(graph.input)
    copy.graph.output.extend(graph.output)
    copy.graph.sparse_initializer.extend(graph.sparse_initializer)
    for tensor in graph.initializer:
        if math.prod(tensor.dims) <= _SMALL_INITIALIZER:
            copy.graph.initializer.append(tensor)
        else:
            copy.graph.initializer.add(name=tensor.name, data_type=tensor.data_type, dims=tensor.dims)
    return copy


_SMALL_INITIALIZER = 4096  # elements


def plan_packs(candidates: Iterable[str], shapes: Mapping[str, tuple[int, tuple[int, ...]]],
               taken: Container[str]) -> list[Pack]:
    """Group the candidates (in production order) that are worth packing; groups of one are dropped.
    Packs are named apart from every name in ``taken``."""
    open_packs: dict[tuple[int, tuple[int, ...]], Pack] = {}
    packs: list[Pack] = []
    sizes: dict[tuple[int, tuple[int, ...]], int] = {}  # bytes of one member; 0: not packable
    for name in candidates:
        known = shapes.get(name)
        if known is None:
            continue
        size = sizes.get(known)
        if size is None:
            size = sizes[known] = _member_size(*known)
        if not size:
            continue
        pack = open_packs.get(known)
        if pack is None or (len(pack.members) + 1) * size > GROUP_LIMIT:
            pack = open_packs[known] = Pack(_fresh_name(len(packs), taken), known[1])
            packs.append(pack)
        pack.members.append(name)
    return [p for p in packs if len(p.members) > 1]


def _member_size(elem_type: int, shape: tuple[int, ...]) -> int:
    """Bytes of a value that may be packed, else 0 (a scalar cannot be joined along axis 0)."""
    if elem_type not in _PACKABLE or not shape:
        return 0
    size = math.prod(shape) * onnx.helper.tensor_dtype_to_np_dtype(elem_type).itemsize
    return size if size <= MEMBER_LIMIT else 0


def _fresh_name(k: int, taken: Container[str]) -> str:
    name = f"{PACK_PREFIX}{k}"
    while name in taken:
        name += "_"
    return name


def add_packs(graph: onnx.GraphProto, packs: list[Pack]) -> None:
    """Append one Concat per pack (after every node, so the order stays topological) and make
    its result a graph output. Members stay alive until their Concat has run, as graph
    outputs would."""
    for pack in packs:
        graph.node.append(onnx.helper.make_node("Concat", pack.members, [pack.output], name=pack.output, axis=0))
        graph.output.append(onnx.ValueInfoProto(name=pack.output))


def unpack(packs: list[Pack], fetched: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Member name -> a view into its pack's fetched array."""
    values: dict[str, np.ndarray] = {}
    for pack in packs:
        joined = fetched[pack.output]
        expected = (len(pack.members) * pack.shape[0], *pack.shape[1:])
        if joined.shape != expected:
            raise PackMismatch(f"{pack.output}: {joined.shape} instead of {expected}")
        values.update(zip(pack.members, joined.reshape((len(pack.members), *pack.shape)), strict=True))
    return values
