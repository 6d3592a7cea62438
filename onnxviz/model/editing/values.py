"""Turning user values (Python objects or typed text) into checked protobuf pieces."""

from __future__ import annotations

import ast
import math
import re
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from onnx import AttributeProto, TensorProto, TypeProto, helper, numpy_helper

from onnxviz.model.errors import EditError
from onnxviz.model.text import float_text, quoted_name, tensor_type_text

A = AttributeProto
Dim = int | str | None
_NUMBER_LISTS: dict[int, type] = {A.INTS: int, A.FLOATS: float}
_TYPE_WORDS: dict[int, str] = {A.INT: "an integer", A.FLOAT: "a number", A.STRING: "a string", A.INTS: "a list of integers",
               A.FLOATS: "a list of numbers", A.STRINGS: "a list of strings", A.TENSOR: "a tensor",
               A.GRAPH: "a graph", A.GRAPHS: "a list of graphs", A.TENSORS: "a list of tensors"}


def attribute_type_name(attr_type: int) -> str:
    return A.AttributeType.Name(attr_type).lower()


def make_attribute(name: str, value: Any, attr_type: int | None) -> AttributeProto:
    """An AttributeProto of ``attr_type`` (inferred from the value if None); EditError if it does not fit."""
    if attr_type in (A.GRAPH, A.GRAPHS):
        raise EditError(f"'{quoted_name(name)}' holds a graph, which cannot be edited as a value.")
    if attr_type is None:
        if isinstance(value, Sequence) and not isinstance(value, str | bytes) and len(value) == 0:
            raise EditError(f"the type of an empty list for '{quoted_name(name)}' is unknown; give at least one element.")
        try:
            return helper.make_attribute(name, _tensor_if_array(name, value))
        except (TypeError, ValueError) as exc:
            raise EditError(f"'{quoted_name(name)}' cannot hold {value!r}: {exc}.") from exc
    checked = _coerce(name, value, attr_type)
    return helper.make_attribute(name, checked, attr_type=attr_type)


def _coerce(name: str, value: Any, attr_type: int) -> Any:
    wrong = EditError(f"'{quoted_name(name)}' expects {_TYPE_WORDS.get(attr_type, attribute_type_name(attr_type))}, "
                      f"not {value!r}.")
    if attr_type == A.INT:
        return _as_int(value, wrong)
    if attr_type == A.FLOAT:
        return _as_float(value, wrong)
    if attr_type == A.STRING:
        if isinstance(value, str | bytes):
            return value
        raise wrong
    if attr_type in _NUMBER_LISTS or attr_type == A.STRINGS:
        if isinstance(value, str | bytes) or not isinstance(value, Sequence | np.ndarray):
            raise wrong
        items = list(np.asarray(value).tolist()) if isinstance(value, np.ndarray) else list(value)
        if attr_type == A.STRINGS:
            if not all(isinstance(v, str | bytes) for v in items):
                raise wrong
            return items
        return [_as_int(v, wrong) if attr_type == A.INTS else _as_float(v, wrong) for v in items]
    if attr_type == A.TENSOR:
        return _tensor_if_array(name, value, wrong)
    raise EditError(f"'{quoted_name(name)}' is of type {attribute_type_name(attr_type)}, which cannot be edited here.")


def _as_int(value: Any, wrong: EditError) -> int:
    if isinstance(value, bool | int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating) and math.isfinite(value) and float(value).is_integer():
        return int(value)
    raise wrong


def _as_float(value: Any, wrong: EditError) -> float:
    if isinstance(value, bool | int | float | np.integer | np.floating):
        return float(value)
    raise wrong


def _tensor_if_array(name: str, value: Any, wrong: EditError | None = None) -> Any:
    if isinstance(value, TensorProto):
        return value
    if isinstance(value, np.ndarray):
        try:
            return numpy_helper.from_array(value, name="")
        except Exception as exc:  # noqa: BLE001 - unsupported numpy dtypes
            raise EditError(f"a {value.dtype} array cannot be stored in ONNX.", str(exc)) from exc
    if wrong is not None:
        raise wrong
    return value


# -- typed text (the editors) ----------------------------------------------------------
def parse_attribute_text(text: str, attr_type: int) -> Any:
    """The value typed for an attribute of ``attr_type``: ``3``, ``0.5``, ``1, 2, 3``, ``a, b``."""
    raw = text.strip()
    try:
        if attr_type == A.INT:
            return int(raw)
        if attr_type == A.FLOAT:
            return float(raw)
        if attr_type == A.STRING:
            return text
        items = _list_items(raw)
        if attr_type == A.INTS:
            return [int(s) for s in items]
        if attr_type == A.FLOATS:
            return [float(s) for s in items]
        if attr_type == A.STRINGS:
            return [s for s in items if s]
    except ValueError:
        raise EditError(f"'{quoted_name(text)}' is not {_TYPE_WORDS[attr_type]}.") from None
    raise EditError(f"attributes of type {attribute_type_name(attr_type)} cannot be typed as text.")


TENSOR_TEXT_CHARS = 200_000  # longer text is refused before it is parsed (a big tensor is loaded from .npy)


def parse_tensor_text(text: str, dtype: Any = None) -> np.ndarray:
    """A small tensor typed as numbers: ``3``, ``[1, 2, 3]``, ``[[1, 2], [3, 4]]``; of ``dtype`` when given,
    else int64 for whole numbers and float32 otherwise."""
    array = parse_numbers(text)
    if dtype is not None:
        return cast_array(array, np.dtype(dtype))
    return cast_array(array, np.dtype(np.int64 if array.dtype.kind in "biu" else np.float32))


def parse_numbers(text: str) -> np.ndarray:
    """Numbers typed as ``3``, ``[1, 2, 3]`` or ``[[1, 2], [3, 4]]``, as numpy reads them (whole numbers
    int64, others float64, ``True`` bool), to be cast where they go."""
    raw = text.strip()
    if len(raw) > TENSOR_TEXT_CHARS:
        raise EditError(f"the text is longer than {TENSOR_TEXT_CHARS} characters; load a big tensor from a .npy file.")
    try:
        value = ast.literal_eval(raw) if raw else None
        if not _numbers_only(value):
            raise ValueError(raw)
        array = np.array(value)
        if array.dtype == object:
            raise ValueError(raw)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        raise EditError(f"'{quoted_name(text)}' is not a number or a list of numbers such as [1, 2, 3].") from None
    return array


SMALL_TENSOR = 4096  # elements of a tensor edited as text (of any rank); a bigger one is loaded from .npy
ONE_LINE = 64  # elements of a one-dimensional tensor edited on one line; more get a box of several lines


def small_array(t: TensorProto) -> np.ndarray | None:
    """The values of a tensor small enough to edit as text: numbers (or booleans), stored in the model,
    at most :data:`SMALL_TENSOR` elements; None otherwise."""
    if t.data_location == TensorProto.EXTERNAL or math.prod(t.dims) > SMALL_TENSOR:
        return None
    try:
        array = numpy_helper.to_array(t)
    except Exception:  # noqa: BLE001 - malformed or exotic data is not offered as text
        return None
    return array if array.dtype.kind in "biuf" and array.dtype.itemsize <= 8 else None


def array_edit_text(array: np.ndarray) -> str:
    """The values of an array as they are typed back: nested lists for its dimensions (``[[1, 2], [3, 4]]``),
    floats as the shortest text of their own precision, booleans as True/False."""
    if array.ndim == 0:
        return _edit_item(array.item(), array.dtype)
    if array.ndim == 1:
        return "[" + ", ".join(_edit_item(v, array.dtype) for v in array.tolist()) + "]"
    return "[" + ",\n ".join(array_edit_text(sub) for sub in array) + "]"


def _edit_item(v: Any, dtype: np.dtype) -> str:
    if dtype.kind == "f":
        return str(dtype.type(v))
    return repr(v)


def _numbers_only(value: Any) -> bool:
    if isinstance(value, list | tuple):
        return all(_numbers_only(v) for v in value)
    return isinstance(value, bool | int | float)


def cast_array(array: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``array`` as ``dtype``; EditError, with the count and the first offending value, when the cast would
    change a value: a fraction, NaN or out-of-range number made an integer, an integer the new type cannot
    hold exactly, a finite number made inf or NaN, a complex number's imaginary part dropped."""
    if array.dtype == dtype:
        return array
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpy's ComplexWarning: the check below names what is lost
        try:
            cast = array.astype(dtype)
        except (TypeError, ValueError) as exc:
            raise EditError(f"{array.dtype} values cannot be made {dtype}.", str(exc)) from None
        lost, why = _lost_in_cast(array, cast)
    if lost is not None and lost.any():
        raise EditError(_lost_message(array, lost, dtype, why))
    return cast


def _lost_in_cast(array: np.ndarray, cast: np.ndarray) -> tuple[np.ndarray | None, str]:
    """Where ``cast`` (``array`` cast) no longer holds the value, and why; (None, '') for types not compared."""
    src, dst = array.dtype.kind, cast.dtype.kind
    if src not in "biufc" or dst not in "biufc":
        return None, ""
    if dst in "biu" or src in "biuc":  # integers and complex numbers must come back exactly
        lost = cast.astype(array.dtype) != array
        if dst in "biu":
            return lost, "fractions, NaN or numbers out of its range"
        if src == "c":
            return lost, "an imaginary part would be lost" if dst != "c" else "they would change"
        return lost, "integers it cannot hold exactly"
    return np.isfinite(array) & ~np.isfinite(cast), "finite numbers that would become inf or NaN"


def _lost_message(array: np.ndarray, lost: np.ndarray, dtype: np.dtype, why: str) -> str:
    count = int(np.count_nonzero(lost))
    first = int(np.flatnonzero(lost.reshape(-1))[0])
    value = array.reshape(-1)[first].item()
    where = ""
    if array.ndim == 1:
        where = f" at index {first}"
    elif array.ndim > 1:
        where = f" at {list(int(k) for k in np.unravel_index(first, array.shape))}"
    if count == 1:
        return f"1 value does not fit in {dtype} ({why}): {value!r}{where}."
    return f"{count:,} values do not fit in {dtype} ({why}); the first is {value!r}{where}."


def _list_items(raw: str) -> list[str]:
    """The comma-separated items of ``[1, 2]`` or ``1, 2,``; an empty item (``,`` alone) stays, as ''."""
    inner = raw.strip("[]()").strip()
    items = [s.strip().strip("'\"") for s in inner.split(",")] if inner else []
    return items[:-1] if len(items) > 1 and not items[-1] else items  # one trailing comma is fine


def attribute_text(attr: AttributeProto) -> str:
    """The editable text of an attribute's value (the inverse of :func:`parse_attribute_text`)."""
    value = helper.get_attribute_value(attr)
    if attr.type == A.STRING:
        return value.decode("utf-8", "replace")
    if attr.type == A.STRINGS:
        return ", ".join(v.decode("utf-8", "replace") for v in value)
    if attr.type == A.INTS:
        return ", ".join(repr(v) for v in value)
    if attr.type == A.FLOATS:
        return ", ".join(float_text(v) for v in value)
    if attr.type == A.FLOAT:
        return float_text(value)
    if attr.type == A.TENSOR:
        return f"tensor {tensor_summary(value)}"
    if attr.type in (A.GRAPH, A.GRAPHS):
        return "graph (not editable)"
    return repr(value)


def tensor_summary(t: TensorProto) -> str:
    return tensor_type_text(t.data_type, list(t.dims))


# -- types and shapes -------------------------------------------------------------------
def parse_dtype(dtype: Any) -> int:
    """A TensorProto element type from an int, a numpy dtype or a name (``float32``, ``FLOAT``, ``int64``)."""
    if isinstance(dtype, int) and not isinstance(dtype, bool):
        if dtype in TensorProto.DataType.values():
            return dtype
        raise EditError(f"{dtype} is not an ONNX element type.")
    if isinstance(dtype, str):
        key = dtype.strip().upper()
        if key in TensorProto.DataType.keys():
            return int(TensorProto.DataType.Value(key))
    try:
        return int(helper.np_dtype_to_tensor_dtype(np.dtype(dtype)))
    except (TypeError, KeyError, ValueError):
        raise EditError(f"'{quoted_name(str(dtype))}' is not an element type ONNX knows (e.g. float32, int64).") from None


def parse_shape(text: str) -> list[Dim] | None:
    """``1x3x224x224``, ``batch, 3, ?, 224``, ``[]`` (scalar) or ``?``/empty for unknown rank (None)."""
    raw = text.strip()
    if raw in ("", "?", "*"):
        return None
    if raw in ("[]", "()", "scalar"):
        return []
    parts = [p.strip() for p in re.split(r"[x×,]", raw.strip("[]()")) if p.strip()]
    dims: list[Dim] = []
    for p in parts:
        if p in ("?", "-1", "None"):
            dims.append(None)
        elif p.isdigit():
            dims.append(int(p))
        elif re.fullmatch(r"[A-Za-z_][\w.]*", p):
            dims.append(p)
        else:
            raise EditError(f"'{quoted_name(p)}' is not a dimension: use a number, a name such as 'batch', or '?'.")
    return dims


def shape_text_of(dims: list[Dim] | None) -> str:
    if dims is None:
        return "?"
    return ", ".join("?" if d is None else str(d) for d in dims) if dims else "[]"


def tensor_type(elem_type: int, shape: list[Dim] | None) -> TypeProto:
    """A tensor TypeProto; ``None`` dims are unknown, strings are dim_params, None shape is unknown rank."""
    t = TypeProto()
    t.tensor_type.elem_type = elem_type
    if shape is not None:
        t.tensor_type.shape.SetInParent()
        for d in shape:
            dim = t.tensor_type.shape.dim.add()
            if isinstance(d, int | np.integer) and not isinstance(d, bool | np.bool_):
                if d < 0:
                    raise EditError(f"dimension {d} is negative; use '?' for an unknown size.")
                dim.dim_value = int(d)
            elif isinstance(d, str):
                if d:
                    dim.dim_param = d
            elif d is not None:
                raise EditError(f"dimension {d!r} is not a whole number, a name (such as 'batch') or None (unknown).")
    return t
