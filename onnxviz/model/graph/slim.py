"""The model without its big weights, for the checker, shape inference and onnxruntime's check (they need the
weights' types and shapes, never their values), and the model without its weights' data for background analysis."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import compress
from operator import or_

import onnx
from google.protobuf.message import Message

from onnxviz.model.graph.tensors import declared_sizes
from onnxviz.model.io.external import external_flags

BIG_WEIGHT = 4096  # bytes; shape computations read only small constants


def slimmed(model: onnx.ModelProto | bytes, parsed: onnx.ModelProto | None = None) -> tuple[onnx.ModelProto, bytes | None, bytes]:
    """(the model, its bytes if given as bytes, the bytes the checker, shape inference and onnxruntime
    get: :func:`without_big_weights`). A model given as a message is never serialized whole; ``parsed``:
    the bytes ``model`` parsed, when at hand."""
    data = model if isinstance(model, bytes) else None
    proto = parsed if parsed is not None else onnx.ModelProto.FromString(model) if isinstance(model, bytes) else model
    try:
        light = without_big_weights(proto, data)
    except Exception:  # noqa: BLE001 - a model too odd to slim down is checked as it is
        light = data if data is not None else proto.SerializeToString()
    return proto, data, light


def without_big_weights(proto: onnx.ModelProto, data: bytes | None = None, force: bool = False) -> bytes:
    """The model for the checker, shape inference and onnxruntime's check, its large main-graph
    initializers turned into typed graph inputs, and its externally stored ones too (so no file is read).

    They need their types and shapes, never their values, and would otherwise copy every weight in
    and out of C++ twice per pass. Which are large is decided by their dims and type: no tensor is
    serialized or copied to find out. ``data``: the model's bytes, when the caller has them; unless
    ``force``, they are returned when copying the graph would cost more than passing the weights through.
    """
    initializers = proto.graph.initializer
    big, external, sizes = _big_ones(initializers)
    if not any(big):
        return data if data is not None else proto.SerializeToString()
    if data is not None and not force and not any(external):
        weight_bytes = sum(compress(sizes, big))
        if weight_bytes < 8 * (len(data) - weight_bytes):
            return data
    light = onnx.ModelProto()
    keep = {t.name for t in compress(initializers, big)}
    graph = proto.graph
    light.CopyFrom(_shell(proto))
    light.graph.initializer.extend(t for t in graph.initializer if t.name not in keep)
    declared = {v.name for v in graph.input}
    light.graph.input.extend(onnx.helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
                             for t in compress(initializers, big) if t.name not in declared)
    return light.SerializeToString()


def _big_ones(tensors: Sequence[onnx.TensorProto]) -> tuple[list[bool], list[bool], list[int]]:
    """(big?, stored externally?, declared bytes) of each tensor: big if external or above :data:`BIG_WEIGHT`.
    Read in two passes over them, each tensor's message made once per pass (48k initializers: 60 -> 40 ms)."""
    sizes = declared_sizes(tensors)
    external = external_flags(tensors)
    return list(map(or_, external, map(BIG_WEIGHT.__lt__, sizes))), external, sizes


def without_weight_data(proto: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of the model whose big main-graph initializers keep their name, type and dims but hold no
    data: what background analysis needs (validation turns them into typed inputs, see
    :func:`without_big_weights`; the model's figures count their dims). The weights are never copied."""
    hollow = _shell(proto)
    initializers = list(proto.graph.initializer)
    big, external, _ = _big_ones(initializers)
    for t, is_big, outside in zip(initializers, big, external, strict=True):
        if not is_big or outside:
            hollow.graph.initializer.append(t)
        else:
            hollow.graph.initializer.add(name=t.name, data_type=t.data_type, dims=t.dims)
    return hollow


def _shell(proto: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of the model without the main graph's initializers (copied field by field, not the weights)."""
    shell = onnx.ModelProto()
    _copy_fields(proto, shell, skip="graph")
    _copy_fields(proto.graph, shell.graph, skip="initializer")
    return shell


def _copy_fields(src: Message, dst: Message, skip: str) -> None:
    for descriptor, value in src.ListFields():
        name = descriptor.name
        if name == skip:
            continue
        if isinstance(value, Message):
            getattr(dst, name).CopyFrom(value)
        elif isinstance(value, str | bytes | int | float):
            setattr(dst, name, value)
        else:
            getattr(dst, name).extend(value)
