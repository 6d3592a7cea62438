"""Reading any TensorProto as numpy, and chunked statistics that never load a huge tensor whole.

Element bytes come from one of three places: inline ``raw_data``, an external
file (memory-mapped through :mod:`onnxviz.model.io.external`), or the typed
repeated fields (``float_data``, ``int32_data``...). An :class:`ElementSource`
hides the difference and hands out flat slices of elements, so statistics walk
a multi-GB tensor chunk by chunk (Chan's parallel variance merge for the
moments, then a second pass for the histogram).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import chain
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from onnxviz.model.dtypes import SUB_BYTE_BITS
from onnxviz.model.errors import OnnxvizError
from onnxviz.model.io import wire
from onnxviz.model.io.external import external_ref, is_external, read_external_bytes
from onnxviz.model.process_tuning import big_blocks
from onnxviz.model.progress import CancelToken, ProgressFn, no_progress
from onnxviz.model.text import tensor_dtype_name

TYPED_FIELDS = ("float_data", "int32_data", "string_data", "int64_data", "double_data", "uint64_data")
MAX_ELEMENTS = 2**40
CHUNK_ELEMENTS = 1 << 20
DEFAULT_BINS = 64
DEFAULT_LIMIT_BYTES = 512 << 20

# Sub-byte types: (bits per element, elements per group, bytes per group, unpack function)
_Unpack = Callable[[np.ndarray, list[int]], np.ndarray]
# per bit width: elements per group, bytes per group, numpy_helper's unpacking function
_GROUPS = {4: (2, 1, "_unpack_4bit"), 2: (4, 1, "_unpack_2bit"), 6: (4, 3, "_unpack_6bit")}
_PACKED: dict[int, tuple[int, int, int, _Unpack]] = {
    data_type: (bits, _GROUPS[bits][0], _GROUPS[bits][1], getattr(numpy_helper, _GROUPS[bits][2]))
    for data_type, bits in SUB_BYTE_BITS.items() if hasattr(numpy_helper, _GROUPS[bits][2])}
# Elements per entry of the typed field where it is not one (packed bytes in int32_data, complex pairs)
_TYPED_ELEMENTS_PER_ENTRY = {TensorProto.COMPLEX64: 0.5, TensorProto.COMPLEX128: 0.5,
                             **{t: float(v[1]) for t, v in _PACKED.items() if v[0] in (2, 4)}}
_NON_NUMERIC = {TensorProto.STRING, TensorProto.COMPLEX64, TensorProto.COMPLEX128}


@dataclass(frozen=True)
class TensorStats:
    """What the weights panel shows about a tensor. Numeric fields are None when not applicable
    (strings, complex numbers, empty tensors, or no finite element)."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    numel: int
    nbytes: int
    storage: str
    numeric: bool
    minimum: float | None = None
    maximum: float | None = None
    mean: float | None = None
    std: float | None = None
    zero_fraction: float | None = None
    nan_count: int = 0
    inf_count: int = 0
    hist_counts: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    hist_edges: np.ndarray = field(default_factory=lambda: np.zeros(0))


# -- element sources -------------------------------------------------------------------------
class ElementSource:
    """Flat elements ``[start, stop)`` of a tensor without materialising the rest."""

    def __init__(self, numel: int, dtype: np.dtype) -> None:
        self.numel = numel
        self.dtype = dtype

    def read(self, start: int, stop: int) -> np.ndarray:
        raise NotImplementedError


class ArraySource(ElementSource):
    """Elements of a flat array (possibly a zero-copy view of a memory map)."""

    def __init__(self, flat: np.ndarray) -> None:
        super().__init__(int(flat.size), flat.dtype)
        self.flat = flat

    def read(self, start: int, stop: int) -> np.ndarray:
        return self.flat[start:stop]


class PackedSource(ElementSource):
    """Elements of a packed 2/4/6-bit buffer, unpacked one slice at a time."""

    def __init__(self, data: np.ndarray, numel: int, dtype: np.dtype, data_type: int) -> None:
        super().__init__(numel, dtype)
        self.data = data
        _, self.per_group, self.group_bytes, self.unpack = _PACKED[data_type]

    def read(self, start: int, stop: int) -> np.ndarray:
        stop = min(stop, self.numel)
        if stop <= start:
            return np.zeros(0, self.dtype)
        g0, g1 = start // self.per_group, -(-stop // self.per_group)
        count = min((g1 - g0) * self.per_group, self.numel - g0 * self.per_group)
        chunk = self.data[g0 * self.group_bytes:g1 * self.group_bytes]
        values = self.unpack(chunk, [count]).view(self.dtype)
        return values[start - g0 * self.per_group:stop - g0 * self.per_group]


def tensor_shape(tensor: TensorProto) -> tuple[int, ...]:
    dims = tuple(int(d) for d in tensor.dims)
    if any(d < 0 for d in dims):
        raise OnnxvizError(f"tensor '{tensor.name}' has a negative dimension {list(dims)}.")
    return dims


def tensor_numel(tensor: TensorProto) -> int:
    n = math.prod(tensor_shape(tensor))
    if n > MAX_ELEMENTS:
        raise OnnxvizError(f"tensor '{tensor.name}' claims {n:,} elements, more than onnxviz can read.")
    return n


def element_dtype(tensor: TensorProto) -> np.dtype:
    """The numpy (or ml_dtypes) type of the tensor's elements; OnnxvizError for unknown types."""
    if tensor.data_type == TensorProto.UNDEFINED:
        raise OnnxvizError(f"tensor '{tensor.name}' has no data type.")
    try:
        return np.dtype(helper.tensor_dtype_to_np_dtype(tensor.data_type))
    except (KeyError, TypeError, ValueError) as exc:
        raise OnnxvizError(f"tensor '{tensor.name}' has an unknown data type {tensor.data_type}.") from exc


def packed_nbytes(data_type: int, numel: int, itemsize: int) -> int:
    """Bytes that ``numel`` elements occupy in raw_data."""
    if data_type in _PACKED:
        return -(-numel * _PACKED[data_type][0] // 8)
    return numel * itemsize


def element_counts(dims: Sequence[list[int]]) -> list[int]:
    """The element count of each of ``dims`` (tensors' dims); -1 where one of its dims is negative."""
    counts = list(map(math.prod, dims))
    if min(chain.from_iterable(dims), default=0) < 0:  # rare: find which
        counts = [-1 if d and min(d) < 0 else n for d, n in zip(dims, counts, strict=True)]
    return counts


def declared_sizes(tensors: Iterable[TensorProto]) -> list[int]:
    """The bytes each tensor's dims and data type call for, from these alone: its data is neither read nor
    copied (0 for strings, unknown types and negative dims); the tensors read in one pass."""
    types: list[int] = []
    dims: list[list[int]] = []
    for tensor in tensors:  # each tensor's message made once (a pass per field made it once per field)
        types.append(tensor.data_type)
        dims.append(tensor.dims[:])
    counts = element_counts(dims)
    itemsize = {t: _element_size(t) for t in set(types)}
    if itemsize.keys() & _PACKED.keys():
        return [packed_nbytes(t, n, itemsize[t]) if itemsize[t] and n >= 0 else 0
                for t, n in zip(types, counts, strict=True)]
    return [n * itemsize[t] if n > 0 else 0 for t, n in zip(types, counts, strict=True)]


@lru_cache(maxsize=64)
def _element_size(data_type: int) -> int:
    """Bytes per element of a numeric type as numpy holds it (sub-byte types: 1); 0 for strings and unknown types."""
    if data_type == TensorProto.STRING:
        return 0
    try:
        return int(element_dtype(TensorProto(data_type=data_type)).itemsize)
    except OnnxvizError:
        return 0


def storage_text(tensor: TensorProto) -> str:
    if is_external(tensor):
        try:
            ref = external_ref(tensor)
        except OnnxvizError:
            return "external (unreadable reference)"
        length = f"{ref.length:,} bytes" if ref.length is not None else "to end of file"
        return f"external: {ref.location} @ {ref.offset:,}, {length}"
    if tensor.HasField("raw_data"):
        return "inline raw_data"
    if tensor.data_type in (0,) or tensor.data_type not in TensorProto.DataType.values():
        return "inline"
    try:
        return f"inline typed data ({helper.tensor_dtype_to_field(tensor.data_type)})"
    except (KeyError, TypeError):
        return "inline typed data"


def _typed_field_length(tensor: TensorProto) -> tuple[str, int]:
    field_name = helper.tensor_dtype_to_field(tensor.data_type)
    return field_name, len(getattr(tensor, field_name))


def _check_single_storage(tensor: TensorProto) -> None:
    typed = [name for name in TYPED_FIELDS if len(getattr(tensor, name))]
    has_raw = tensor.HasField("raw_data")
    if typed and (has_raw or is_external(tensor)):
        where = "external data" if is_external(tensor) else "raw_data"
        raise OnnxvizError(f"tensor '{tensor.name}' has both {where} and {typed[0]}; it is malformed.")
    if tensor.HasField("segment"):
        raise OnnxvizError(f"tensor '{tensor.name}' is split into segments, which onnxviz cannot read.")


def _raw_buffer(tensor: TensorProto, base_dir: Path | None, raw: memoryview | None, size: int) -> memoryview | bytes:
    """The tensor's data bytes (``size`` of them, if it is well formed)."""
    if is_external(tensor):
        if base_dir is None:
            raise OnnxvizError(f"tensor '{tensor.name}' is stored externally, but the model has no folder.")
        return read_external_bytes(tensor, base_dir)
    if raw is not None:
        return raw
    with big_blocks() as ready:  # protobuf copies raw_data out with the GIL held: into pages made ready
        ready(size)
        return tensor.raw_data


def element_source(tensor: TensorProto, base_dir: Path | None = None,
                   raw: memoryview | None = None) -> ElementSource:
    """An :class:`ElementSource` over any numeric or string tensor; raises OnnxvizError if malformed.

    ``raw`` may stand in for the inline ``raw_data`` (see :func:`raw_data_spans`): reading that field
    from the protobuf copies it while holding the GIL, which freezes the GUI for big tensors."""
    numel = tensor_numel(tensor)
    dtype = element_dtype(tensor)
    _check_single_storage(tensor)
    if tensor.HasField("raw_data") or is_external(tensor):
        need = packed_nbytes(tensor.data_type, numel, dtype.itemsize)
        if raw is not None and len(raw) != need:
            raw = None  # the located bytes do not fit this tensor: read the field itself
        buf = _raw_buffer(tensor, base_dir, raw, need)
        if tensor.data_type == TensorProto.STRING:
            raise OnnxvizError(f"string tensor '{tensor.name}' stores raw bytes; strings must be in string_data.")
        if len(buf) < need:
            raise OnnxvizError(f"tensor '{tensor.name}' has {len(buf):,} bytes of data, "
                               f"but its shape {list(tensor.dims)} needs {need:,}.")
        if tensor.data_type in _PACKED:
            return PackedSource(np.frombuffer(buf, np.uint8, count=need), numel, dtype, tensor.data_type)
        return ArraySource(np.frombuffer(buf, dtype, count=numel))
    return ArraySource(_typed_array(tensor, numel))


def _typed_array(tensor: TensorProto, numel: int) -> np.ndarray:
    field_name, have = _typed_field_length(tensor)
    per_entry = _TYPED_ELEMENTS_PER_ENTRY.get(tensor.data_type, 1.0)
    if have * per_entry < numel or (numel == 0 and have):
        raise OnnxvizError(f"tensor '{tensor.name}' has {have:,} entries in {field_name}, "
                           f"but its shape {list(tensor.dims)} needs {numel:,} elements.")
    try:
        return numpy_helper.to_array(tensor).reshape(-1)
    except (ValueError, TypeError) as exc:
        raise OnnxvizError(f"tensor '{tensor.name}' could not be decoded: {exc}.", str(exc)) from exc


def tensor_array(tensor: TensorProto, base_dir: Path | None = None,
                 limit_bytes: int = DEFAULT_LIMIT_BYTES) -> np.ndarray:
    """The tensor as an array of its shape. External dense data stays memory-mapped (not counted
    against ``limit_bytes``); anything that must be copied or unpacked is refused above the limit."""
    numel = tensor_numel(tensor)
    dtype = element_dtype(tensor)
    copied = not (is_external(tensor) and tensor.data_type not in _PACKED)
    if copied and numel * max(dtype.itemsize, 1) > limit_bytes:
        raise OnnxvizError(f"tensor '{tensor.name}' is too large to load whole "
                           f"({numel:,} elements, limit {limit_bytes >> 20} MB).")
    source = element_source(tensor, base_dir)
    return source.read(0, numel).reshape(tensor_shape(tensor))


# -- statistics ------------------------------------------------------------------------------
@dataclass
class _Moments:
    count: int = 0
    mean: float = 0.0
    m2: float = 0.0
    minimum: float = math.inf
    maximum: float = -math.inf
    zeros: int = 0
    nans: int = 0
    infs: int = 0

    def add(self, chunk: np.ndarray) -> np.ndarray:
        """Merge one chunk (float64); returns its finite values for reuse."""
        finite_mask = np.isfinite(chunk)
        finite = chunk
        if not finite_mask.all():  # the rare case: count NaN/Inf, keep the rest
            nan = int(np.count_nonzero(np.isnan(chunk)))
            self.nans += nan
            self.infs += int(chunk.size - np.count_nonzero(finite_mask)) - nan
            finite = chunk[finite_mask]
        self.zeros += int(chunk.size - np.count_nonzero(chunk))
        n = int(finite.size)
        if n == 0:
            return finite
        mean = float(finite.mean())
        deviation = finite - mean
        m2 = float(np.square(deviation, out=deviation).sum())  # in place; BLAS dot threads badly
        total = self.count + n
        delta = mean - self.mean
        self.mean += delta * n / total
        self.m2 += m2 + delta * delta * self.count * n / total
        self.count = total
        self.minimum = min(self.minimum, float(finite.min()))
        self.maximum = max(self.maximum, float(finite.max()))
        return finite


def _chunks(numel: int, chunk: int) -> range:
    return range(0, numel, chunk)


def source_stats(source: ElementSource, name: str, dtype_name: str, shape: tuple[int, ...], nbytes: int,
                 storage: str, numeric: bool = True, progress: ProgressFn = no_progress,
                 cancel: CancelToken | None = None, bins: int = DEFAULT_BINS,
                 chunk: int = CHUNK_ELEMENTS) -> TensorStats:
    """Statistics of every element of ``source`` in two chunked passes."""
    base = TensorStats(name, dtype_name, shape, source.numel, nbytes, storage, numeric)
    if not numeric or source.numel == 0:
        return base
    moments = _Moments()
    total = source.numel
    for start in _chunks(total, chunk):
        if cancel is not None:
            cancel.check()
        moments.add(np.asarray(source.read(start, start + chunk), dtype=np.float64))
        progress(0.5 * min(start + chunk, total) / total, f"Statistics of {name}")
    counts, edges = _histogram(source, moments, progress, cancel, bins, chunk, name)
    have = moments.count > 0
    return TensorStats(
        name, dtype_name, shape, total, nbytes, storage, numeric,
        minimum=moments.minimum if have else None, maximum=moments.maximum if have else None,
        mean=moments.mean if have else None, std=math.sqrt(moments.m2 / moments.count) if have else None,
        zero_fraction=moments.zeros / total, nan_count=moments.nans, inf_count=moments.infs,
        hist_counts=counts, hist_edges=edges)


def _histogram(source: ElementSource, moments: _Moments, progress: ProgressFn, cancel: CancelToken | None,
               bins: int, chunk: int, name: str) -> tuple[np.ndarray, np.ndarray]:
    if moments.count == 0:
        return np.zeros(0, np.int64), np.zeros(0)
    lo, hi = moments.minimum, moments.maximum
    if lo == hi:  # widen by enough to make distinct float64 edges even for huge values
        pad = max(0.5, abs(lo) * 1e-6)
        lo, hi = lo - pad, hi + pad
    counts = np.zeros(bins, np.int64)
    edges = np.linspace(lo, hi, bins + 1)
    total = source.numel
    for start in _chunks(total, chunk):
        if cancel is not None:
            cancel.check()
        values = np.asarray(source.read(start, start + chunk), dtype=np.float64)
        values = values[np.isfinite(values)]
        counts += np.histogram(values, bins=bins, range=(lo, hi))[0]
        progress(0.5 + 0.5 * min(start + chunk, total) / total, f"Histogram of {name}")
    return counts, edges


def tensor_stats(tensor: TensorProto, base_dir: Path | None = None, progress: ProgressFn = no_progress,
                 cancel: CancelToken | None = None, bins: int = DEFAULT_BINS,
                 chunk: int = CHUNK_ELEMENTS) -> TensorStats:
    """Statistics of an initializer or tensor attribute; raises OnnxvizError if it is malformed."""
    return _stats_of_source(tensor, element_source(tensor, base_dir), progress, cancel, bins, chunk)


def _stats_of_source(tensor: TensorProto, source: ElementSource, progress: ProgressFn,
                     cancel: CancelToken | None, bins: int = DEFAULT_BINS,
                     chunk: int = CHUNK_ELEMENTS) -> TensorStats:
    nbytes = packed_nbytes(tensor.data_type, source.numel, source.dtype.itemsize)
    if tensor.data_type == TensorProto.STRING:
        nbytes = sum(len(s) for s in tensor.string_data)
    return source_stats(source, tensor.name, tensor_dtype_name(tensor.data_type), tensor_shape(tensor),
                        nbytes, storage_text(tensor), tensor.data_type not in _NON_NUMERIC,
                        progress, cancel, bins, chunk)


def load_tensor(tensor: TensorProto, base_dir: Path | None = None, progress: ProgressFn = no_progress,
                cancel: CancelToken | None = None, limit_bytes: int = DEFAULT_LIMIT_BYTES,
                raw: memoryview | None = None) -> tuple[np.ndarray | None, TensorStats]:
    """Statistics plus the values for viewing, reading the data once. The array is a zero-copy view
    where possible; it is None when packed values would have to be unpacked beyond ``limit_bytes``.
    ``raw``: as for :func:`element_source`."""
    source = element_source(tensor, base_dir, raw)
    stats = _stats_of_source(tensor, source, progress, cancel)
    if isinstance(source, ArraySource):
        return source.flat.reshape(stats.shape), stats
    if source.numel * source.dtype.itemsize > limit_bytes:
        return None, stats
    return source.read(0, source.numel).reshape(stats.shape), stats


def stats_of_array(array: np.ndarray, name: str = "", progress: ProgressFn = no_progress,
                   cancel: CancelToken | None = None, bins: int = DEFAULT_BINS,
                   chunk: int = CHUNK_ELEMENTS) -> TensorStats:
    """Statistics of an in-memory array (e.g. an activation), in the same form as :func:`tensor_stats`."""
    array = np.asarray(array)
    numeric = array.dtype.kind in "biuf" or (array.dtype.kind == "V" and array.dtype.itemsize <= 8
                                             and array.dtype.names is None)
    flat = np.ascontiguousarray(array).reshape(-1)
    return source_stats(ArraySource(flat), name, _numpy_dtype_name(array.dtype), tuple(array.shape),
                        int(array.nbytes), "in memory", numeric, progress, cancel, bins, chunk)


def _numpy_dtype_name(dtype: np.dtype) -> str:
    try:
        return tensor_dtype_name(helper.np_dtype_to_tensor_dtype(dtype))
    except (KeyError, TypeError, ValueError):
        return str(dtype)


def describe_tensor(tensor: TensorProto) -> TensorStats:
    """The cheap facts (no element is read): for showing something before statistics arrive."""
    try:
        shape = tensor_shape(tensor)
        numel = math.prod(shape)
        itemsize = element_dtype(tensor).itemsize
    except OnnxvizError:
        shape, numel, itemsize = tuple(int(d) for d in tensor.dims), 0, 0
    return TensorStats(tensor.name, tensor_dtype_name(tensor.data_type), shape, numel,
                       packed_nbytes(tensor.data_type, numel, itemsize), storage_text(tensor),
                       tensor.data_type not in _NON_NUMERIC)


# -- finding raw_data in the serialized model (zero-copy) ------------------------------------------
_MODEL_GRAPH, _GRAPH_INITIALIZER, _TENSOR_NAME, _TENSOR_RAW_DATA = 7, 5, 8, 9


def _length_fields(buf: memoryview, start: int, end: int) -> Iterator[tuple[int, int, int]]:
    """(field number, start, end) of every length-delimited field of the message in ``buf[start:end]``."""
    for number, wire_type, a, b in wire.fields(buf, start, end):
        if wire_type == wire.LENGTH_DELIMITED:
            yield number, a, b


def raw_data_spans(serialized: bytes | memoryview) -> dict[str, tuple[int, int]]:
    """Where each main-graph initializer's ``raw_data`` lies in a serialized ModelProto, by name.

    Lets big inline tensors be viewed without copying them out of the protobuf. Returns {} for
    anything that does not parse as a binary model (callers then read the field normally)."""
    buf = memoryview(serialized)
    spans: dict[str, tuple[int, int]] = {}
    duplicates: set[str] = set()
    try:
        for field_no, g0, g1 in _length_fields(buf, 0, len(buf)):
            if field_no != _MODEL_GRAPH:
                continue
            for f, t0, t1 in _length_fields(buf, g0, g1):
                if f != _GRAPH_INITIALIZER:
                    continue
                name, raw = "", None
                for tf, a, b in _length_fields(buf, t0, t1):
                    if tf == _TENSOR_NAME:
                        name = bytes(buf[a:b]).decode("utf-8", "replace")
                    elif tf == _TENSOR_RAW_DATA:
                        raw = (a, b)
                if raw is not None:
                    if name in spans:
                        duplicates.add(name)
                    spans[name] = raw
    except (ValueError, IndexError):
        return {}
    return {name: span for name, span in spans.items() if name not in duplicates}


RAW_MEASURE_ABOVE = 16 << 20  # bytes; an initializer this big has its raw_data's length read from the model's bytes


class RawLengths(Mapping[str, int]):
    """len(raw_data) of the main graph's initializers by name, read in place from ``serialized`` (the model's
    bytes) when first asked: protobuf hands raw_data out only as a copy. Checks ask it for initializers of
    more than :data:`RAW_MEASURE_ABOVE` bytes only, so most models never scan their bytes."""

    def __init__(self, serialized: bytes) -> None:
        self._serialized = serialized
        self._table: dict[str, int] | None = None

    def _lengths(self) -> dict[str, int]:
        if self._table is None:
            self._table = {name: end - start for name, (start, end) in raw_data_spans(self._serialized).items()}
        return self._table

    def __getitem__(self, name: str) -> int:
        return self._lengths()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._lengths())

    def __len__(self) -> int:
        return len(self._lengths())


SPARSE_VIEW_LIMIT = 1 << 24  # elements of a sparse initializer made dense for viewing


def sparse_to_dense(sparse: onnx.SparseTensorProto, max_elements: int = SPARSE_VIEW_LIMIT) -> TensorProto:
    """A dense copy of ``sparse`` (named like it) for viewing; OnnxvizError in one sentence when the
    file's indices do not fit its dims or the dense tensor would be too big."""
    name = sparse.values.name
    dims = [int(d) for d in sparse.dims]
    if any(d < 0 for d in dims):
        raise OnnxvizError(f"sparse initializer '{name}' has a negative dimension {dims}.")
    numel = math.prod(dims)
    if numel > max_elements:
        raise OnnxvizError(f"sparse initializer '{name}' would have {numel:,} elements once dense; "
                           f"only up to {max_elements:,} are shown.")
    try:
        values = numpy_helper.to_array(sparse.values).reshape(-1)
        indices = numpy_helper.to_array(sparse.indices).astype(np.int64)
        flat = np.ravel_multi_index(tuple(indices.T), dims) if indices.ndim == 2 else indices.reshape(-1)
    except Exception as exc:  # noqa: BLE001 - malformed values or indices raise many types
        raise OnnxvizError(f"sparse initializer '{name}' cannot be read ({' '.join(str(exc).split())}).") from exc
    if len(flat) != len(values) or (len(flat) and (int(np.min(flat)) < 0 or int(np.max(flat)) >= numel)):
        raise OnnxvizError(f"sparse initializer '{name}' has {len(flat)} indices for {len(values)} values "
                           f"in {dims}; they do not fit.")
    dense = np.zeros(numel, values.dtype)
    dense[flat] = values
    return numpy_helper.from_array(dense.reshape(dims), name)
