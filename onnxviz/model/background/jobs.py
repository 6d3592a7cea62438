"""What the GUI sends to the worker process (:mod:`onnxviz.model.background.procpool`): bytes in, plain data out.

The worker remembers what it found of each model state, by the digest of its bytes: its first problems
(checker, schema checks), shape inference's types and problems, its figures; each is computed once, from
one parse, whichever job asks first (the model summary needs the types; a validation after an undo, only
what is known). The early jobs name the file being opened, before the GUI has its bytes.
"""

from __future__ import annotations

import os
import tempfile
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import astuple, dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import onnx
from onnx import TypeProto

from onnxviz.model.background.procpool import WorkerProcess
from onnxviz.model.columns import pack_column
from onnxviz.model.errors import OnnxvizError
from onnxviz.model.graph.flops import CostColumns
from onnxviz.model.graph.index import ModelIndex, index_escaping_text
from onnxviz.model.graph.session_check import runtime_problems
from onnxviz.model.graph.summary import (
    ModelFigures,
    ModelStructure,
    ScopeParameters,
    figures_with_costs,
    model_structure,
)
from onnxviz.model.graph.validation import (
    PackedScopeTypes,
    PackedValidation,
    ValidationResult,
    first_problems,
    pack,
    slimmed,
    unpack,
    validate,
)
from onnxviz.model.io.digest import digest_of
from onnxviz.model.io.disk import reason, write_whole
from onnxviz.model.problems import Problem
from onnxviz.model.process_tuning import building
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


def hand_over(data: bytes, digest: bytes, source: Path | None = None) -> ModelData:
    """What to send for ``data`` (in a background thread): the bytes, the file they came from, or a temp file."""
    if len(data) <= INLINE_BYTES:
        return data
    if source is not None:
        return ModelFile(str(source), digest, temporary=False)
    fd, path = tempfile.mkstemp(prefix="onnxviz-", suffix=".onnx")
    try:
        write_whole(fd, data)  # a full disk is an error here, never a truncated model for the worker
    except OSError as exc:
        Path(path).unlink(missing_ok=True)
        raise OnnxvizError(f"the model could not be handed to the background worker ({reason(exc)} in the "
                           "temporary folder).", str(exc)) from exc
    finally:
        os.close(fd)
    return ModelFile(path, digest, temporary=True)


def discard(data: ModelData) -> None:
    """Remove the temporary file of a hand-over whose job never ran (it was cancelled)."""
    if isinstance(data, ModelFile) and data.temporary:
        Path(data.path).unlink(missing_ok=True)


def received(data: ModelData) -> bytes | None:
    """In the worker: the bytes; None when a source file no longer holds them (send them instead). A file
    sent without a digest is taken as it is (the early jobs name the file being opened); one without a path
    names a state handed over before (:func:`run_on_model`), whose bytes are not sent again."""
    if isinstance(data, bytes):
        return data
    if not data.path:
        return None
    try:
        raw = Path(data.path).read_bytes()
    except OSError:
        return None
    finally:
        discard(data)
    return raw if not data.digest or digest_of(raw) == data.digest else None


class SourceChanged(Exception):
    """The worker found the source file changed: hand the bytes over again without it."""


@dataclass
class PackedFigures:
    """:class:`ModelFigures` as plain data; the per-node costs are columns (:class:`CostColumns`, the node names
    packed by :mod:`.columns`): they unpickle in a few steps, and make no Python object per node (a tuple per
    node did, for 123k nodes)."""

    parameters: int
    parameter_bytes: int
    bytes_by_dtype: dict[str, int]
    op_counts: dict[str, int]
    costs: CostColumns
    by_scope: list[tuple[str, int, int]]  # (scope, count, bytes) of each graph holding parameters
    bodies: list[tuple[str, int, int]]  # (scope, MACs, FLOPs) of one run of each body


FREE_AFTER_S = 0.1  # after onnxruntime's check, before its session is freed (see _freed_after_answer)
REMEMBERED_STATES = 2  # the current state and the one before (the GUI remembers validations for undo itself)


@dataclass
class _Structure:
    """The index of a state and the figures found from it alone (see :func:`_structure`)."""

    index: ModelIndex
    figures: ModelStructure


@dataclass
class _State:
    """In the worker: what was found of one model state (named by the digest of its bytes), each part once."""

    first: list[Problem] | None = None  # the checker's and the schema checks' problems
    inferred: ValidationResult | None = None  # shape inference's types and problems (the rest of a validation)
    figures: PackedFigures | None = None
    structure: _Structure | None = None  # what the figures need besides the types, when found before them


_states: OrderedDict[bytes, _State] = OrderedDict()  # digest -> what is known of that state
_parsed: tuple[bytes, bytes, onnx.ModelProto] | None = None  # (digest, bytes, model) of the latest state read
_files: dict[str, bytes] = {}  # path -> digest of what the file held when an early job read it


def _state(digest: bytes) -> _State:
    state = _states.get(digest)
    if state is None:
        state = _states[digest] = _State()
    _states.move_to_end(digest)
    while len(_states) > REMEMBERED_STATES:
        _states.popitem(last=False)
    return state


def _digest(handed: ModelData) -> bytes:
    """The digest of the state ``handed`` stands for; a file sent without one is read (and parsed) now."""
    if isinstance(handed, bytes):
        return digest_of(handed)
    if handed.digest:
        return handed.digest
    data = received(handed)
    if data is None:
        raise SourceChanged()
    return _parse(digest_of(data), data)[0]


def _model(digest: bytes, handed: ModelData) -> tuple[bytes, onnx.ModelProto]:
    """(bytes, parsed model) of the state ``digest``: read and parsed once while it is the latest state."""
    if _parsed is not None and _parsed[0] == digest:
        return _parsed[1], _parsed[2]
    data = received(handed)
    if data is None or digest_of(data) != digest:
        raise SourceChanged()
    return _parse(digest, data)[1:]


def _parse(digest: bytes, data: bytes) -> tuple[bytes, bytes, onnx.ModelProto]:
    global _parsed
    _parsed = None  # the older state's model is let go before the new one is parsed
    _parsed = (digest, data, onnx.ModelProto.FromString(data))
    return _parsed


def _first(digest: bytes, handed: ModelData) -> list[Problem]:
    state = _state(digest)
    if state.first is None:
        data, model = _model(digest, handed)
        state.first = first_problems(model, slimmed(data, model)[2])
    return state.first


def _inferred(digest: bytes, handed: ModelData) -> ValidationResult:
    """Shape inference's part of the validation of the state ``digest``, done once: the figures of a state and
    its validation share it, whichever the GUI asks for first (undo and redo ask only for figures)."""
    state = _state(digest)
    if state.inferred is None:
        data, model = _model(digest, handed)
        # onnxruntime's check comes later (runtime_job); the first problems apart (_first)
        state.inferred = validate(data, None, 0, runtime=False, first=[], parsed=model)
    return state.inferred


def _validated(digest: bytes, handed: ModelData) -> ValidationResult:
    """The validation of the state ``digest``: its first problems, then shape inference's."""
    inferred = _inferred(digest, handed)
    return replace(inferred, problems=_first(digest, handed) + inferred.problems)


def _figures(digest: bytes, handed: ModelData, types: Types | None = None) -> PackedFigures:
    """The figures of the state ``digest``, with ``types`` when given (another process inferred them), else
    with the types inferred here."""
    if types is None:
        types = _inferred(digest, handed).inference.types
    state = _state(digest)
    if state.figures is None:
        structure = _structure(digest, handed)
        state.structure = None  # the index is not needed any more
        state.figures = _compute_figures(structure, types)
    return state.figures


def _structure(digest: bytes, handed: ModelData) -> _Structure:
    """The part of the figures of the state ``digest`` that needs no types, found once."""
    state = _state(digest)
    if state.structure is None:
        index = index_escaping_text(_model(digest, handed)[1], structure_only=True)[0]
        figures = model_structure(index)
        main = figures.plans[""]
        figures.plans[""] = replace(main, names=pack_column(list(main.names)))  # sent to the GUI as they are
        state.structure = _Structure(index, figures)
    return state.structure


def _compute_figures(structure: _Structure, types: Types) -> PackedFigures:
    structure.index.set_inferred(types)
    figures = figures_with_costs(structure.figures, structure.index)
    return PackedFigures(figures.parameters, figures.parameter_bytes, figures.bytes_by_dtype,
                         dict(figures.op_counts), figures.costs, [astuple(s) for s in figures.by_scope], figures.bodies)


def _on_state(step: Callable[[bytes, ModelData], T], handed: ModelData) -> tuple[bytes, T]:
    """(digest, ``step`` of the state ``handed`` stands for); a temporary hand-over file is removed after."""
    try:
        with building():  # a worker's heap holds a model state's index and types: no collection walks them
            digest = _digest(handed)
            return digest, step(digest, handed)
    finally:
        discard(handed)


def first_problems_job(handed: ModelData, generation: int, document: str = "") -> list[Problem]:
    """The checker's and the schema checks' problems of the model (see
    :func:`onnxviz.model.graph.validation.first_problems`): what a pass shows first."""
    return _on_state(_first, handed)[1]


def validate_job(handed: ModelData, generation: int, document: str = "") -> PackedValidation:
    """Validate the model (see :func:`onnxviz.model.graph.validation.validate`) and remember the result."""
    return pack(replace(_on_state(_validated, handed)[1], generation=generation))


def figures_job(handed: ModelData, document: str = "") -> PackedFigures:
    """The model summary, with the shapes of the state's validation."""
    return _on_state(_figures, handed)[1]


def early_first_job(path: str) -> tuple[bytes, list[Problem]]:
    """:func:`first_problems_job` for the model file at ``path`` as it is being opened, before the GUI has its
    bytes (with the digest of what was read): in a second worker process, while the first infers."""
    digest, problems = _on_state(_first, ModelFile(path, b"", temporary=False))
    _files[path] = digest
    return digest, problems


def early_structure_job(path: str) -> bytes:
    """After :func:`early_first_job`, in the same process: the part of the figures that needs no types (the
    index, the parameters, the operators), while the first process infers them."""
    return _on_state(_structure, ModelFile(path, _files.get(path, b""), temporary=False))[0]


def early_figures_job(path: str, digest: bytes, packed_types: dict[str, PackedScopeTypes]) -> PackedFigures:
    """The figures of the file opened (after :func:`early_structure_job`), with the types the first process
    inferred (``packed_types`` of its validation of the state ``digest``). Raises SourceChanged when this
    process read another state of the file."""
    if _files.pop(path, None) != digest:
        raise SourceChanged()
    types = unpack(PackedValidation(0, packed_types, None, [])).inference.types
    return _on_state(partial(_figures, types=types), ModelFile(path, digest, temporary=False))[1]


def early_inference_job(path: str) -> tuple[bytes, PackedValidation]:
    """Shape inference's part of the validation of the model file at ``path`` as it is being opened
    (see :func:`early_first_job`), with the digest of what was read."""
    digest, result = _on_state(_inferred, ModelFile(path, b"", temporary=False))
    return digest, pack(result)


def early_runtime_job(path: str, digest: bytes) -> list[Problem]:
    """:func:`runtime_job` of the file opened (after :func:`early_figures_job`), when this process read the state
    ``digest`` of it (else raises SourceChanged)."""
    data, model = _model(digest, ModelFile(path, digest, temporary=False))
    return _freed_after_answer(lambda made: runtime_problems(model, data, made=made))


def runtime_job(handed: ModelData) -> list[Problem]:
    """What onnxruntime refuses in the model (see :mod:`onnxviz.model.graph.session_check`)."""
    data = received(handed)
    if data is None:
        raise SourceChanged()
    return _freed_after_answer(lambda made: runtime_problems(onnx.ModelProto.FromString(data), data, made=made))


def _freed_after_answer(check: Callable[[list[object]], T]) -> T:
    """``check(made)`` in the worker, what it put in ``made`` (onnxruntime's session) freed by a thread of its own
    :data:`FREE_AFTER_S` later, once the answer is sent: freeing a 12k-node session takes ~70 ms of CPU with the
    GIL held, which the window's answer need not wait for."""
    made: list[object] = []
    try:
        return check(made)
    finally:
        if made:
            later = threading.Timer(FREE_AFTER_S, made.clear)
            later.daemon = True
            later.start()


def unpack_figures(packed: PackedFigures) -> ModelFigures:
    return ModelFigures(packed.parameters, packed.parameter_bytes, packed.bytes_by_dtype, Counter(packed.op_counts),
                        packed.costs,
                        [ScopeParameters(*row) for row in packed.by_scope], packed.bodies)


_handed: dict[int, bytes] = {}  # in the GUI process: id(worker) -> the digest of the last state written for it


def run_on_model(worker: WorkerProcess, job: Callable[..., T], data: bytes, digest: bytes, source: Path | None,
                 *args: Any, token: CancelToken | None = None) -> T:
    """``job(model data, *args)`` in the worker (call from a background thread); ``source`` is a file
    believed to hold ``data`` (the document's own, unedited), so the bytes need not be handed over.

    An edited big model's bytes are written to a file for the worker once per state: the jobs that follow
    for the same state (validation, then the figures) name it by its digest, the worker having read and
    parsed it already; should it have let the state go, they hand the bytes over after all."""
    if source is None and len(data) > INLINE_BYTES and _handed.get(id(worker)) == digest:
        try:
            return worker.run(job, ModelFile("", digest, temporary=False), *args, token=token)
        except SourceChanged:
            pass
    handed = hand_over(data, digest, source)
    if isinstance(handed, ModelFile) and handed.temporary:
        _handed[id(worker)] = digest  # the worker runs its jobs in order: the next one finds this state parsed
    try:
        return worker.run(job, handed, *args, token=token)
    except SourceChanged:
        return run_on_model(worker, job, data, digest, None, *args, token=token)
    finally:
        discard(handed)
