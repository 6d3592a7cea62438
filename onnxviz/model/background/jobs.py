"""What the GUI sends to the worker process (:mod:`onnxviz.model.background.procpool`): bytes in, plain data out.

The worker remembers the types its latest validation of each document inferred,
so the model summary computed there next (costs need shapes) gets them without
a second inference pass and without sending them back and forth.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import astuple, dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

import onnx
from onnx import TypeProto

from onnxviz.model.background.procpool import WorkerProcess
from onnxviz.model.graph.flops import NodeCost
from onnxviz.model.graph.index import index_escaping_text
from onnxviz.model.graph.session_check import runtime_problems
from onnxviz.model.graph.summary import ModelFigures, ScopeParameters, model_figures
from onnxviz.model.graph.validation import PackedValidation, ValidationResult, pack, validate
from onnxviz.model.problems import Problem
from onnxviz.model.progress import CancelToken

T = TypeVar("T")
Types = dict[str, dict[str, TypeProto]]
INLINE_BYTES = 4 << 20  # smaller models travel in the pickle; bigger ones through a file


@dataclass(frozen=True)
class ModelFile:
    """Model bytes handed to the worker as a file: pickling them would copy them while holding the GIL
    (a 200 MB model froze the GUI for 100 ms); writing a file releases it. ``digest`` guards against
    a source file that changed on disk since it was read."""

    path: str
    digest: bytes
    temporary: bool


ModelData = bytes | ModelFile


def digest_of(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()  # releases the GIL for big inputs


def hand_over(data: bytes, digest: bytes, source: Path | None = None) -> ModelData:
    """What to send for ``data`` (in a background thread): the bytes, the file they came from, or a temp file."""
    if len(data) <= INLINE_BYTES:
        return data
    if source is not None:
        return ModelFile(str(source), digest, temporary=False)
    fd, path = tempfile.mkstemp(prefix="onnxviz-", suffix=".onnx")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    return ModelFile(path, digest, temporary=True)


def discard(data: ModelData) -> None:
    """Remove the temporary file of a hand-over whose job never ran (it was cancelled)."""
    if isinstance(data, ModelFile) and data.temporary:
        Path(data.path).unlink(missing_ok=True)


def received(data: ModelData) -> bytes | None:
    """In the worker: the bytes; None when a source file no longer holds them (send them instead)."""
    if isinstance(data, bytes):
        return data
    try:
        raw = Path(data.path).read_bytes()
    except OSError:
        return None
    finally:
        discard(data)
    return raw if digest_of(raw) == data.digest else None


class SourceChanged(Exception):
    """The worker found the source file changed: hand the bytes over again without it."""
REMEMBERED_DOCUMENTS = 8
# in the worker: document key -> (digest of the model bytes, their validation)
_latest: OrderedDict[str, tuple[bytes, ValidationResult]] = OrderedDict()


def _validated(data: bytes, document: str) -> ValidationResult:
    """The validation of ``data``, done once per model state: the figures of a state and its
    validation share it, whichever the GUI asks for first (undo and redo ask only for figures)."""
    digest = digest_of(data)
    cached = _latest.get(document)
    if cached is not None and cached[0] == digest:
        result = cached[1]
    else:
        result = validate(data, None, 0, runtime=False)  # onnxruntime's check comes later: runtime_job
        _latest[document] = (digest, result)
    _latest.move_to_end(document)
    while len(_latest) > REMEMBERED_DOCUMENTS:
        _latest.popitem(last=False)
    return result


def validate_job(handed: ModelData, generation: int, document: str) -> PackedValidation:
    """Validate the model (see :func:`onnxviz.model.graph.validation.validate`) and remember the result."""
    data = received(handed)
    if data is None:
        raise SourceChanged()
    return pack(replace(_validated(data, document), generation=generation))


def runtime_job(handed: ModelData) -> list[Problem]:
    """What onnxruntime refuses in the model (see :mod:`onnxviz.model.graph.session_check`)."""
    data = received(handed)
    if data is None:
        raise SourceChanged()
    return runtime_problems(onnx.ModelProto.FromString(data), data)


@dataclass
class PackedFigures:
    """:class:`ModelFigures` with the per-node costs as columns: lists of strings and numbers unpickle fast
    and make no garbage-collected objects (a tuple per node did, for 123k nodes)."""

    parameters: int
    parameter_bytes: int
    bytes_by_dtype: dict[str, int]
    op_counts: dict[str, int]
    cost_columns: list[list[Any]]
    by_scope: list[tuple[str, int, int]]  # (scope, count, bytes) of each graph holding parameters
    bodies: list[tuple[str, int, int]]


def figures_job(handed: ModelData, document: str) -> PackedFigures:
    """The model summary, with the shapes of the document's latest validation."""
    data = received(handed)
    if data is None:
        raise SourceChanged()
    types = _validated(data, document).inference.types
    model = onnx.ModelProto.FromString(data)
    index = index_escaping_text(model)[0]
    index.set_inferred(types)
    figures = model_figures(model, index)
    columns = [list(column) for column in zip(*map(astuple, figures.costs), strict=True)]
    return PackedFigures(figures.parameters, figures.parameter_bytes, figures.bytes_by_dtype,
                         dict(figures.op_counts), columns, [astuple(s) for s in figures.by_scope],
                         figures.bodies)


def unpack_figures(packed: PackedFigures) -> ModelFigures:
    return ModelFigures(packed.parameters, packed.parameter_bytes, packed.bytes_by_dtype, Counter(packed.op_counts),
                        [NodeCost(*row) for row in zip(*packed.cost_columns, strict=True)],
                        [ScopeParameters(*row) for row in packed.by_scope], packed.bodies)


def run_on_model(worker: WorkerProcess, job: Callable[..., T], data: bytes, digest: bytes, source: Path | None,
                 *args: Any, token: CancelToken | None = None) -> T:
    """``job(model data, *args)`` in the worker (call from a background thread); ``source`` is a file
    believed to hold ``data`` (the document's own, unedited), so the bytes need not be handed over."""
    handed = hand_over(data, digest, source)
    try:
        return worker.run(job, handed, *args, token=token)
    except SourceChanged:
        return run_on_model(worker, job, data, digest, None, *args, token=token)
    finally:
        discard(handed)
