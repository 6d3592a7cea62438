"""Graph inputs: what a model expects, and arrays to feed it (generated or read from files)."""

from __future__ import annotations

import math
import os
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import onnx

from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.graph.summary import human_bytes
from onnxviz.model.io.disk import atomic_write_with, write_npz
from onnxviz.model.runner.errors import RunError
from onnxviz.model.runner.ranges import integer_limits
from onnxviz.model.text import dims_text, display_name

SOURCES = ("random", "uniform", "zeros", "ones")
"""Generated inputs: ``random`` is N(0, 1) for floats, ``uniform`` is [0, 1) for floats;
integers get small non-negative values (valid indices and masks where the model reads them so:
see :attr:`InputSpec.random_high`) and booleans a fair coin for both."""

DEFAULT_DIM = 1
GENERATED_STRING = "a"  # every element of a generated string input ("" for zeros)
RANDOM_INTEGERS = 10  # random integers are 0-9 where nothing in the model needs them smaller


@dataclass(frozen=True)
class InputSpec:
    """One graph input that is not an initializer. ``shape`` holds ints, the
    names of symbolic dimensions, or None (unknown); None when the rank is unknown."""

    name: str
    elem_type: int
    shape: tuple[int | str | None, ...] | None
    dynamic_axes: tuple[int, ...] = ()  # axes declared -1: each is a symbolic dim of its own (see dynamic_dim)
    limit: int = 0  # integers: what reads the values needs them below this (see ranges.py); 0: no limit known
    unnamed_axes: tuple[int, ...] = ()  # axes with neither a size nor a name: each named as dynamic_dim says

    @property
    def random_high(self) -> int:
        """Generated random integers are below this: 10, or less where the model needs less."""
        return min(RANDOM_INTEGERS, self.limit) if self.limit else RANDOM_INTEGERS

    @property
    def dtype(self) -> np.dtype:
        return np_dtype(self.elem_type)

    @property
    def type_text(self) -> str:
        """The element type as users know it: 'string' rather than numpy's 'object'."""
        return "string" if self.dtype == object else str(self.dtype)

    @property
    def symbols(self) -> list[str]:
        return [d for d in self.shape or () if isinstance(d, str)]

    def concrete_shape(self, dims: Mapping[str, int]) -> tuple[int, ...]:
        """The shape with declared sizes as declared (0 included), symbolic dims from ``dims`` and the
        others set to 1."""
        out = []
        for d in self.shape or ():
            if isinstance(d, int) and d >= 0:
                out.append(d)
            elif isinstance(d, str):
                out.append(int(dims.get(d, DEFAULT_DIM)))
            else:
                out.append(DEFAULT_DIM)
        return tuple(out)

    def dim_texts(self) -> list[str]:
        """Each dimension as declared: a size, a name, -1, or '?' when it has neither size nor name."""
        return ["-1" if k in self.dynamic_axes else "?" if d is None or k in self.unnamed_axes else str(d)
                for k, d in enumerate(self.shape or ())]

    @property
    def shape_text(self) -> str:
        if self.shape is None:
            return "?"
        return dims_text(self.dim_texts()) or "scalar"

    @property
    def looks_like_image(self) -> bool:
        """4-D with 1 or 3 channels first (NCHW) or last (NHWC)."""
        s = self.shape
        return s is not None and len(s) == 4 and (s[1] in (1, 3) or s[3] in (1, 3))


def np_dtype(elem_type: int) -> np.dtype:
    try:
        return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(elem_type))
    except (KeyError, ValueError, TypeError) as exc:
        raise RunError(f"inputs of element type {elem_type} cannot be generated.") from exc


def input_specs(model: onnx.ModelProto, index: ModelIndex | None = None, limits: bool = True) -> list[InputSpec]:
    """The graph inputs a user must provide (initializers with defaults excluded). With ``limits``,
    integer inputs know what values the model can read (see ranges.py): ``index``, the model's
    index when there is one, saves a walk over every node (a second on 150k nodes)."""
    initializers = {t.name for t in model.graph.initializer}
    specs = []
    for v in model.graph.input:
        if v.name in initializers:
            continue
        tt = _fed_tensor_type(v)
        shape: tuple[int | str | None, ...] | None = None
        dynamic: tuple[int, ...] = ()
        unnamed: tuple[int, ...] = ()
        if tt.HasField("shape"):
            shape = tuple(_declared_dim(v.name, k, d) for k, d in enumerate(tt.shape.dim))
            dynamic = tuple(k for k, d in enumerate(tt.shape.dim) if d.HasField("dim_value") and d.dim_value < 0)
            unnamed = tuple(k for k, d in enumerate(tt.shape.dim) if not d.HasField("dim_value") and not d.dim_param)
        specs.append(InputSpec(v.name, tt.elem_type, shape, dynamic, unnamed_axes=unnamed))
    integers = [s.name for s in specs if s.elem_type in _INTEGER_TYPES] if limits else []
    found = integer_limits(model, integers, index.main if index is not None else None) if integers else {}
    return [replace(s, limit=found[s.name]) if s.name in found else s for s in specs]


def _fed_tensor_type(v: onnx.ValueInfoProto) -> onnx.TypeProto.Tensor:
    """The tensor type fed to input ``v``: its own, or an optional tensor's (fed with a tensor)."""
    kind = v.type.WhichOneof("value")
    if kind == "tensor_type":
        return v.type.tensor_type
    if kind == "optional_type" and v.type.optional_type.elem_type.WhichOneof("value") == "tensor_type":
        return v.type.optional_type.elem_type.tensor_type
    what = {"sequence_type": "a sequence", "map_type": "a map", "optional_type": "an optional sequence",
            "sparse_tensor_type": "a sparse tensor"}.get(kind or "", "of no type")
    raise RunError(f"input '{display_name(v.name, 60)}' is {what}; only tensor and optional tensor inputs "
                   "can be fed.")


_INTEGER_TYPES = {onnx.TensorProto.INT8, onnx.TensorProto.INT16, onnx.TensorProto.INT32, onnx.TensorProto.INT64,
                  onnx.TensorProto.UINT8, onnx.TensorProto.UINT16, onnx.TensorProto.UINT32, onnx.TensorProto.UINT64}


def dynamic_dim(input_name: str, axis: int) -> str:
    """The name a size declared -1, or declared with neither a size nor a name, goes by (for --dim and the
    Run dialog): 'ids[1]' is axis 1 of 'ids'."""
    return f"{input_name}[{axis}]"


def _declared_dim(input_name: str, axis: int, d: onnx.TensorShapeProto.Dimension) -> int | str:
    if d.HasField("dim_value"):
        return dynamic_dim(input_name, axis) if d.dim_value < 0 else d.dim_value
    return d.dim_param or dynamic_dim(input_name, axis)


def symbolic_dims(specs: list[InputSpec]) -> list[str]:
    """Every symbolic dimension name, in first-seen order."""
    seen: dict[str, None] = {}
    for s in specs:
        for d in s.symbols:
            seen.setdefault(d)
    return list(seen)


def input_budget() -> int:
    """Bytes one generated input may take: a quarter of this machine's memory, since the run
    needs several times its inputs (8 GiB where the memory size is unknown)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 4
    except (AttributeError, ValueError, OSError):
        return 8 << 30


def check_size(spec: InputSpec, dims: Mapping[str, int], budget: int | None = None) -> tuple[int, ...]:
    """The concrete shape of a generated ``spec``; RunError when it would not fit in memory."""
    shape = spec.concrete_shape(dims)
    nbytes = math.prod(shape) * spec.dtype.itemsize
    limit = input_budget() if budget is None else budget
    if nbytes > limit:
        sized = _shape(shape)
        symbols = ", ".join(dict.fromkeys(spec.symbols))
        advice = f"choose smaller sizes for {symbols}" if symbols else "give it from a file instead"
        raise RunError(f"input '{display_name(spec.name, 60)}' would take {human_bytes(nbytes)} ({sized} "
                       f"{spec.dtype}), more than the {human_bytes(limit)} a run may give one input on this "
                       f"machine; {advice}.")
    return shape


def generate(spec: InputSpec, source: str, dims: Mapping[str, int], seed: int = 0) -> np.ndarray:
    """A generated array for ``spec``: see :data:`SOURCES`. RunError when it would not fit in memory."""
    if source not in SOURCES:
        raise RunError(f"unknown input source '{source}'; use one of {', '.join(SOURCES)}.")
    shape = check_size(spec, dims)
    dtype = spec.dtype
    if dtype.kind in "OSU":
        return np.full(shape, "" if source == "zeros" else GENERATED_STRING, dtype=object)
    if source == "zeros":
        return np.zeros(shape, dtype)
    if source == "ones":
        return np.ones(shape, dtype)
    rng = np.random.default_rng([seed, _stable_hash(spec.name)])
    if dtype == np.bool_:
        return np.asarray(rng.random(shape) < 0.5)  # a comparison of a 0-d array gives a numpy scalar
    if dtype.kind in "iu":
        return rng.integers(0, spec.random_high, size=shape, dtype=dtype)
    # drawn in float32 where that is the input's precision (or less): no float64 array twice the size
    drawn = np.float64 if dtype in (np.float64, np.complex128) else np.float32
    values = rng.standard_normal(shape, drawn) if source == "random" else rng.random(shape, drawn)
    if dtype.kind == "c":
        values = values + 1j * rng.standard_normal(shape, drawn)
    return values.astype(dtype, copy=False)


def strings_from_text(spec: InputSpec, text: str, dims: Mapping[str, int]) -> np.ndarray:
    """The strings typed for a string input: one per line when there are several lines, else
    separated by commas (spaces around them dropped); shaped to fit the input (see :func:`fitted_shape`)."""
    if "\n" in text.strip("\r\n"):
        items = [line.rstrip("\r") for line in text.strip("\r\n").split("\n")]
    else:
        items = [part.strip() for part in text.strip("\r\n").split(",")] if text.strip() else []
    if not items:
        raise RunError(f"type the strings of input '{display_name(spec.name, 60)}', separated by commas "
                       "or one per line.")
    return np.array(items, dtype=object).reshape(fitted_shape(spec, len(items), dims))


def fitted_shape(spec: InputSpec, count: int, dims: Mapping[str, int]) -> tuple[int, ...]:
    """A shape of ``count`` elements for the input: its declared sizes kept, the first symbolic or
    unknown axis taking the rest (others 1); RunError when ``count`` cannot fill it."""
    if spec.shape is None:
        return (count,)
    shape = list(spec.concrete_shape(dims))
    free = [k for k, d in enumerate(spec.shape) if not (isinstance(d, int) and d >= 0)]
    fixed = math.prod(shape[k] for k in range(len(shape)) if k not in free)
    if math.prod(shape) == count:
        return tuple(shape)
    if free and fixed and count % fixed == 0:
        for k in free:
            shape[k] = 1
        shape[free[0]] = count // fixed
        return tuple(shape)
    need = "no" if not fixed else f"a multiple of {fixed}" if free else f"{fixed}"
    raise RunError(f"input '{display_name(spec.name, 60)}' ({spec.shape_text}) takes {need} strings, "
                   f"not {count}.")


def _stable_hash(name: str) -> int:
    return sum((i + 1) * b for i, b in enumerate(name.encode())) % (2**31)


def save_inputs_file(path: str | Path, feeds: Mapping[str, np.ndarray]) -> None:
    too_long = next((name for name in feeds if len(name.encode("utf-8")) > _NPZ_NAME_LIMIT), None)
    if too_long is not None:  # an .npz entry is named after its input, and zip names stop at 64 KiB
        raise RunError(f"the input name '{display_name(too_long, 40)}' is too long to be saved in an .npz file "
                       f"(at most {_NPZ_NAME_LIMIT:,} bytes).")
    arrays: dict[str, object] = {name: savable(np.asarray(a)) for name, a in feeds.items()}
    atomic_write_with(Path(path), lambda f: write_npz(f, arrays))  # checked; a DiskError is one sentence


_NPZ_NAME_LIMIT = 65535 - len(".npy")


def savable(array: np.ndarray) -> np.ndarray:
    """``array`` as a .npy/.npz can give it back without pickles: strings as unicode (:func:`as_strings`
    makes them objects again), raw bytes when numpy cannot read its dtype's descriptor (ml_dtypes'
    float8_e5m2 is written as '<f1', which np.load refuses); readers view the bytes back."""
    if array.dtype == object:  # strings: a '<U' array, never a pickle
        return unicode_array(array)
    try:
        if np.dtype(array.dtype.str) == array.dtype:
            return array
    except TypeError:
        pass
    return array.view(f"V{array.dtype.itemsize}")


def restored(array: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Raw bytes written by :func:`savable` (a bfloat16/float8 array) viewed back as ``dtype``;
    any other array as it is."""
    if array.dtype.kind == "V" and array.dtype.fields is None and is_ml_dtype(dtype) and array.dtype != dtype \
            and array.dtype.itemsize == dtype.itemsize:  # only into an ml_dtypes type: other raw bytes are refused
        return array.view(dtype)
    return array


def conform(spec: InputSpec, array: np.ndarray) -> np.ndarray:
    """``array`` cast to the input's dtype; raises RunError if its shape cannot fit."""
    a = restored(np.asarray(array), spec.dtype)
    check_given(spec, a.shape, a.dtype)
    if spec.dtype == object and a.dtype.kind in "OUS":
        return as_strings(a)
    if a.dtype == spec.dtype:
        return a
    _check_values_fit(spec, a)
    with warnings.catch_warnings(), np.errstate(all="ignore"):  # what is lost was checked: no raw warnings
        warnings.simplefilter("ignore")
        return a.astype(spec.dtype)


def _check_values_fit(spec: InputSpec, a: np.ndarray) -> None:
    """RunError when a value of ``a`` has no value of the input's type near it: an integer out of its range,
    a finite float that becomes infinite, NaN or infinity for an integer type."""
    want = spec.dtype
    if a.size == 0 or want.kind not in "iufb" or a.dtype.kind not in "iufb":
        return
    where = f"input '{display_name(spec.name, 60)}' expects {spec.type_text}"
    if want.kind in "iu":
        if a.dtype.kind == "f" and not np.isfinite(a).all():
            raise RunError(f"{where} but the array holds NaN or infinity, which no integer stands for.")
        low, high = np.iinfo(want).min, np.iinfo(want).max
        smallest, largest = a.min(), a.max()
        if smallest < low or largest > high:
            bad = smallest if smallest < low else largest
            raise RunError(f"{where} but the array holds {bad}, outside its range {low}..{high}.")
    elif want.kind == "f" and a.dtype.kind == "f" and np.finfo(want).max < np.finfo(a.dtype).max:
        limit = float(np.finfo(want).max)
        big = np.abs(a[np.isfinite(a)])
        if big.size and float(big.max()) > limit:
            raise RunError(f"{where} but the array holds {float(big.max()):g}, beyond its largest value {limit:g}.")


def check_given(spec: InputSpec, shape: tuple[int, ...], dtype: np.dtype) -> None:
    """RunError unless an array of ``shape`` and ``dtype`` (read from a file's header, or made) can feed
    ``spec``: the same rank, its fixed sizes, a type it can be cast to."""
    if spec.shape is not None:
        if len(shape) != len(spec.shape):
            raise RunError(f"input '{spec.name}' expects {len(spec.shape)} dimension{'' if len(spec.shape) == 1 else 's'} "
                           f"({spec.shape_text}) but the array has shape {_shape(shape)}.")
        for axis, (want, got) in enumerate(zip(spec.shape, shape, strict=True)):
            if isinstance(want, int) and want >= 0 and want != got:
                raise RunError(f"input '{spec.name}' expects size {want} on axis {axis} "
                               f"({spec.shape_text}) but the array has shape {_shape(shape)}.")
    strings = spec.dtype == object and dtype.kind in "OUS"  # text of any kind feeds a string input
    if dtype != spec.dtype and not strings and (dtype.kind in "OSU" or spec.dtype.kind in "OSU"):
        raise RunError(f"input '{spec.name}' expects {spec.type_text} but the array holds {dtype}.")
    lost = _what_is_lost(spec.dtype, dtype)
    if lost:
        raise RunError(f"input '{display_name(spec.name, 60)}' expects {spec.type_text} but the array {lost}.")


def is_ml_dtype(dtype: np.dtype) -> bool:
    """One of ml_dtypes' types (bfloat16, the float8s, int4...): numpy's own have no name for them."""
    return dtype.type.__module__.partition(".")[0] == "ml_dtypes"


def _what_is_lost(want: np.dtype, have: np.dtype) -> str:
    """What the array of ``have`` holds that cannot become ``want`` without losing what it is ('' when it can,
    the conversion then named by :func:`conversion_note`)."""
    if have == want:
        return ""
    if have.fields is not None:
        return f"is of a structured type (fields {', '.join(have.fields)}), which has no place in one tensor"
    if have.kind == "V":  # raw bytes: only the bytes of an ml_dtypes type (bfloat16, float8) read back
        return "" if is_ml_dtype(want) and have.itemsize == want.itemsize else \
            f"holds raw bytes ({have.itemsize} bytes each) of no number type"
    if have.kind in "mM":
        return f"holds {have} values (dates or durations), not numbers"
    if have.kind == "c" and want.kind != "c":
        return f"holds {have} values, whose imaginary part would be lost"
    return ""


MAX_ITEM_BYTES = 16  # complex128, the widest type a given array may be cast from (an int64 varint: 10)
FILE_OVERHEAD = 1 << 20  # headers, names and dims around the values
_SHOWN_MAX = 1 << 80  # a header may claim 10**400 bytes, which no float holds


def file_limit(spec: InputSpec) -> int:
    """Bytes a file (or .npz member) given for ``spec`` may hold: its elements in any numeric type plus
    :data:`FILE_OVERHEAD` when every size is fixed, and never more than :func:`input_budget`."""
    budget = input_budget()
    fixed = spec.shape is not None and all(isinstance(d, int) and d >= 0 for d in spec.shape)
    if not fixed or spec.dtype.kind in "OSU":  # strings have no fixed size per element
        return budget
    return min(budget, math.prod(spec.concrete_shape({})) * MAX_ITEM_BYTES + FILE_OVERHEAD)


def check_file_size(where: str, nbytes: int, spec: InputSpec) -> None:
    """RunError when ``where`` (a file, an .npz member) holds more than :func:`file_limit` allows,
    said before it is read."""
    limit, budget = file_limit(spec), input_budget()
    if nbytes <= limit:
        return
    if limit < budget:
        raise RunError(f"{where} holds {human_bytes(min(nbytes, _SHOWN_MAX))}, far more than input '{display_name(spec.name, 60)}' "
                       f"({spec.shape_text} {spec.dtype}) can take; refused before reading it.")
    raise RunError(f"{where} would take {human_bytes(min(nbytes, _SHOWN_MAX))}, more than the {human_bytes(budget)} a run may "
                   "give one input on this machine.")


def as_strings(array: np.ndarray) -> np.ndarray:
    """A unicode, bytes or object array as the object array of str onnxruntime takes for a string
    tensor (bytes read as UTF-8, anything undecodable replaced)."""
    return unicode_array(array).astype(object)


def unicode_array(array: np.ndarray) -> np.ndarray:
    """The array's strings as a '<U' array (bytes read as UTF-8; other objects as their str)."""
    if array.dtype.kind == "U":
        return array
    if array.dtype.kind == "S":
        return np.char.decode(array, "utf-8", "replace")
    texts = [x.decode("utf-8", "replace") if isinstance(x, bytes) else str(x) for x in array.ravel().tolist()]
    return np.array(texts, dtype=str).reshape(array.shape)


def conversion_note(spec: InputSpec, array: np.ndarray) -> str:
    """What :func:`conform` does to a given array's values when its type differs from the input's
    (float values cut to integers, float64 rounded to float32, ...); "" when they arrive unchanged."""
    source = restored(np.asarray(array), spec.dtype).dtype
    if source == spec.dtype or source.kind in "OSU":
        return ""
    return f"input '{display_name(spec.name, 60)}' was given as {source} and converted to {spec.dtype}."


def _shape(shape: tuple[int, ...]) -> str:
    return dims_text([str(d) for d in shape]) or "scalar"


def parse_dims(items: list[str]) -> dict[str, int]:
    """``["batch=4", "seq=128", "ids[1]=8"]`` -> {"batch": 4, "seq": 128, "ids[1]": 8}: a dimension's name, or
    an input and axis (see :func:`onnxviz.model.runner.sizes.resolve_dims`), and a size of 0 or more."""
    dims = {}
    for item in items:
        name, sep, size = item.rpartition("=")
        if not sep or not name.strip() or not re.fullmatch(r"\s*\d+\s*", size) or int(size) >= 1 << 31:
            raise RunError(f"'{item}' is not NAME=SIZE with a size of 0 or more.")
        dims[name.strip()] = int(size)
    return dims


def build_feeds(specs: list[InputSpec], given: Mapping[str, np.ndarray], dims: Mapping[str, int],
                source: str = "random", seed: int = 0) -> dict[str, np.ndarray]:
    """Given arrays (checked and cast) and generated ones for the rest."""
    extra = sorted(set(given) - {s.name for s in specs})
    if extra:
        raise unknown_input(extra[0], specs)
    feeds = {}
    for spec in specs:
        feeds[spec.name] = conform(spec, given[spec.name]) if spec.name in given else generate(
            spec, source, dims, seed)
    return feeds


def unknown_input(name: str, specs: list[InputSpec]) -> RunError:
    """The error for an array given for ``name``, which is no input of the model."""
    known = ", ".join(sorted(s.name for s in specs)) or "none"
    return RunError(f"the model has no input named '{name}'; its inputs are: {known}.")
