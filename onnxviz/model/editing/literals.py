"""Numbers given where a node input is expected (``2.0``, ``[1, 2, 3]``, an array): each becomes a named
initializer or a Constant node, in the same undo step as the edit that reads it.

Its element type is the one the input's port takes: the only type its schema allows (Reshape's ``shape`` is
int64), else the type of another input sharing its type parameter (Mul's ``B`` is ``A``'s type, so ``2`` beside
a float16 value is float16), else the array's own (whole numbers int64, others float32, as typed). A value that
the type cannot hold exactly is refused (:func:`~onnxviz.model.editing.values.cast_array`).
"""

from __future__ import annotations

from collections.abc import Sequence, Set
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from onnx import NodeProto, TensorProto, TypeProto, helper, numpy_helper
from onnx.defs import OpSchema

from onnxviz.model.editing.finder import Finder
from onnxviz.model.editing.ops import Insert, Op
from onnxviz.model.editing.values import cast_array
from onnxviz.model.errors import EditError
from onnxviz.model.text import quoted_name

LiteralKind = Literal["initializer", "constant"]
LITERAL_KINDS: tuple[LiteralKind, ...] = ("initializer", "constant")


def is_literal(value: Any) -> bool:
    """A value given for an input that is no value name: a number, a list of numbers or an array."""
    return not isinstance(value, str)


def as_array(value: Any) -> np.ndarray:
    """The numbers of a literal as an array: arrays as they are, Python numbers as numpy makes them (int64,
    float64: :func:`stored_default` narrows them when nothing else gives a type)."""
    if isinstance(value, np.ndarray | np.generic):
        return np.asarray(value)
    try:
        array = np.asarray(value)
    except (TypeError, ValueError):
        raise EditError(f"{quoted_name(repr(value))} is neither a value name nor numbers.") from None
    if array.dtype.kind not in "biuf":
        raise EditError(f"{quoted_name(repr(value))} is neither a value name nor numbers.")
    return array


def stored_default(array: np.ndarray, typed: bool) -> np.ndarray:
    """``array`` as it is stored when no port gives its type: Python numbers (not ``typed``: no dtype of their
    own) as int64 or float32, checked (1e300 is no float32); an array of a dtype keeps it."""
    if typed:
        return array
    return cast_array(array, np.dtype(np.int64 if array.dtype.kind in "iu" else np.float32)) \
        if array.dtype.kind in "iuf" else array


@dataclass(frozen=True)
class Port:
    """An input of an operator, as a literal given to it needs: its name and the element type it takes."""

    name: str
    dtype: np.dtype | None


def port(schema: OpSchema | None, k: int, known: Sequence[int]) -> Port:
    """Input ``k`` of ``schema``'s operator; ``known``: the element types of the node's inputs, by position
    (0 where unknown or not given)."""
    last = len(schema.inputs) - 1 if schema is not None else -1
    if schema is None or last < 0 or (k > last and schema.inputs[last].option != OpSchema.FormalParameterOption.Variadic):
        return Port(f"input{k}", None)
    param = schema.inputs[min(k, last)]
    allowed = {c.type_param_str: list(c.allowed_type_strs) for c in schema.type_constraints}
    types = allowed.get(param.type_str, [param.type_str])
    if len(types) == 1:
        return Port(param.name, _np_dtype(types[0]))
    for j, elem in enumerate(known):
        other = schema.inputs[min(j, last)]
        if j != k and elem and other.type_str == param.type_str:
            return Port(param.name, _np_elem(elem))
    return Port(param.name, None)


def literal_tensor(value: Any, where: Port) -> TensorProto:
    """The tensor a literal given to ``where`` stores (unnamed)."""
    array = as_array(value)
    if where.dtype is not None:
        array = cast_array(array, where.dtype)
    else:
        array = stored_default(array, isinstance(value, np.ndarray | np.generic))
    try:
        return numpy_helper.from_array(array)
    except Exception as exc:  # noqa: BLE001 - dtypes ONNX cannot store
        raise EditError(f"a {array.dtype} array cannot be stored in ONNX.", str(exc)) from exc


@dataclass
class Literals:
    """Literals turned into values for one edit: ``ops`` adds the initializers (any time) and ``tail`` the
    Constant nodes (last, at ``position``: the nodes from there on move one down, so they go after every op
    addressing nodes by position)."""

    find: Finder
    scope: str
    kind: LiteralKind
    position: int
    ops: list[Op]
    tail: list[Op]
    types: dict[str, TypeProto]

    @classmethod
    def make(cls, find: Finder, scope: str, kind: LiteralKind, position: int) -> Literals:
        if kind not in LITERAL_KINDS:
            raise EditError(f"literals become an 'initializer' or a 'constant', not {quoted_name(repr(kind))}.")
        if find.scope_path(scope)[0] == "functions":
            kind = "constant"  # a function body has no initializers
        return cls(find, scope, kind, position, [], [], {})

    def value(self, literal: Any, where: Port, base: str) -> str:
        """The name of a new value holding ``literal`` (an initializer or a Constant's output named after
        ``base``), made by the ops collected here."""
        tensor = literal_tensor(literal, where)
        taken = {op.item.name for op in self.ops if isinstance(op, Insert) and isinstance(op.item, TensorProto)}
        taken |= {op.item.output[0] for op in self.tail if isinstance(op, Insert) and isinstance(op.item, NodeProto)}
        name = _unique(self.find, base, taken)
        self.types[name] = helper.make_tensor_type_proto(tensor.data_type, list(tensor.dims))
        path = self.find.scope_path(self.scope)
        if self.kind == "constant":
            node = helper.make_node("Constant", [], [name], name=self._node_name(name), value=tensor)
            self.tail.append(Insert(path + ("node",), self.position, node))
        else:
            tensor.name = name
            graph: Any = self.find.graph_of(self.scope)
            self.ops.append(Insert(path + ("initializer",), len(graph.initializer) + len(self.ops), tensor))
        return name

    def _node_name(self, value: str) -> str:
        taken = {op.item.name for op in self.tail if isinstance(op, Insert) and isinstance(op.item, NodeProto)}
        return _unique_node(self.find, f"{value}_Constant", taken)


def new_tensor_ops(find: Finder, scope: str, name: str, tensor: TensorProto, kind: LiteralKind,
                   position: int) -> list[Op]:
    """Ops adding ``tensor`` as initializer or Constant ``name`` (the Constant at node ``position``)."""
    find.require_new_value(name)
    path = find.scope_path(scope)
    if kind == "constant":
        node = helper.make_node("Constant", [], [name], name=_unique_node(find, f"{name}_Constant"), value=tensor)
        return [Insert(path + ("node",), position, node)]
    if path[0] == "functions":
        raise EditError("a function body has no initializers; insert a Constant instead.")
    t = TensorProto()
    t.CopyFrom(tensor)
    t.name = name
    graph: Any = find.graph_of(scope)
    return [Insert(path + ("initializer",), len(graph.initializer), t)]


def _unique(find: Finder, base: str, taken: set[str]) -> str:
    name = find.unique_value_name(base)
    k = 1
    while name in taken:
        name = find.unique_value_name(f"{base}_{k}")
        k += 1
    return name


def _unique_node(find: Finder, base: str, taken: Set[str] = frozenset()) -> str:
    """``base`` when no node has that name yet, else ``base_0``, ``base_1``..."""
    if base not in taken and base not in find.node_table():
        return base
    name = find.unique_node_name(base)
    k = 0
    while name in taken:
        k += 1
        name = find.unique_node_name(f"{base}{k}")
    return name


def _np_dtype(type_str: str) -> np.dtype | None:
    """numpy's dtype for ``tensor(int64)``; None for other type strings."""
    if not (type_str.startswith("tensor(") and type_str.endswith(")")):
        return None
    key = type_str[len("tensor("):-1].upper()
    if key not in TensorProto.DataType.keys():
        return None
    return _np_elem(int(TensorProto.DataType.Value(key)))


def _np_elem(elem: int) -> np.dtype | None:
    try:
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(elem))
    except (KeyError, TypeError, ValueError):
        return None
    return dtype if dtype.kind in "biuf" else None


def elem_of(t: Any) -> int:
    """The element type of a TypeProto (0 when unknown)."""
    return int(t.tensor_type.elem_type) if t is not None and t.HasField("tensor_type") else 0
