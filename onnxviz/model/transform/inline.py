"""A model with its external weights read in, for the tools (which read one file) and for the session's
variants (a file in a private folder, read later without the model's folder). Weights are read only from
the model's own folder, under the rules of every external read (:func:`~onnxviz.model.io.external.read_external_bytes`)."""

from __future__ import annotations

from pathlib import Path

import onnx

from onnxviz.model.io.external import is_external, iter_all_tensors, read_external_bytes
from onnxviz.model.transform.catalog import TransformError

MAX_PROTOBUF = (2 << 30) - 1


def inline_weights(model: onnx.ModelProto, base_dir: Path | None) -> int:
    """Read every external tensor of ``model`` into it (from ``base_dir``); returns how many there were."""
    external = [t for t in iter_all_tensors(model) if is_external(t)]
    if external and base_dir is None:
        raise TransformError("the model's weights are in data files but it has no folder to read them from.")
    for tensor in external:
        tensor.raw_data = bytes(read_external_bytes(tensor, Path(base_dir or ".")))
        del tensor.external_data[:]
        tensor.data_location = onnx.TensorProto.DEFAULT
    if external and model.ByteSize() > MAX_PROTOBUF:
        raise TransformError("the model with its weights is bigger than 2 GiB, which onnxviz cannot transform yet.")
    return len(external)


def inlined(model: onnx.ModelProto, base_dir: Path | None) -> bytes:
    """The bytes of ``model`` with its external weights read in (from ``base_dir``); ``model`` is changed."""
    inline_weights(model, base_dir)
    return model.SerializeToString()
