"""Edits of values: renaming, graph inputs/outputs and their types, initializers and constants (each function
returns the command, or answers a question, without changing anything)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np
from onnx import FunctionProto, GraphProto, TensorProto, TypeProto, ValueInfoProto, helper, numpy_helper

from onnxviz.model.background.contained import NativeCrash, inferred_types
from onnxviz.model.editing.commands import Command
from onnxviz.model.editing.finder import Body, Finder, NodeRef, graph_bodies
from onnxviz.model.editing.literals import LiteralKind, Port, literal_tensor, new_tensor_ops
from onnxviz.model.editing.ops import Insert, Op, Path, Remove, ReplaceMessage, SetField, SetItem
from onnxviz.model.editing.restate import retyped_ops
from onnxviz.model.editing.values import Dim, cast_array, parse_dtype, tensor_summary, tensor_type
from onnxviz.model.errors import EditError
from onnxviz.model.io.external import is_external
from onnxviz.model.text import quoted_name

KEEP: Any = object()  # "leave this part of the type as it is"


def defined_in(body: GraphProto) -> set[str]:
    """Names a (sub)graph defines itself, which hide outer values of the same name."""
    names = {v.name for v in body.input} | {t.name for t in body.initializer}
    names |= {t.values.name for t in body.sparse_initializer}
    for n in body.node:
        names.update(n.output)
    return names


def rename_ops(path: Path, body: Body, old: str, new: str, reads_only: bool = False,
               skip: int = -1) -> list[Op]:
    """Ops renaming ``old`` to ``new`` in ``body`` and in the subgraphs that read it from outside.

    ``reads_only`` renames uses (node inputs, and everything inside subgraphs
    reading ``old`` from outside) but not definitions; node ``skip`` is left alone.
    """
    ops: list[Op] = []
    for i, node in enumerate(body.node):
        if i == skip:
            continue
        npath = path + ("node", i)
        if old in node.input:
            ops += [SetItem(npath + ("input",), k, new) for k, x in enumerate(node.input) if x == old]
        if not reads_only and old in node.output:
            ops += [SetItem(npath + ("output",), k, new) for k, x in enumerate(node.output) if x == old]
        if node.attribute:
            for bpath, sub in graph_bodies(npath, node):
                if old not in defined_in(sub):
                    ops += rename_ops(bpath, sub, old, new)
    if isinstance(body, FunctionProto):
        if not reads_only:
            for field in ("input", "output"):
                ops += [SetItem(path + (field,), k, new) for k, x in enumerate(getattr(body, field)) if x == old]
        return ops
    if reads_only:
        return ops  # callers refuse to bypass a value that is one of this graph's outputs
    for field in ("input", "output", "value_info", "initializer"):
        ops += [SetField(path + (field, k), "name", new) for k, v in enumerate(getattr(body, field))
                if v.name == old]
    ops += [SetField(path + ("sparse_initializer", k, "values"), "name", new)
            for k, t in enumerate(body.sparse_initializer) if t.values.name == old]
    return ops


# -- values --------------------------------------------------------------------
def rename_value(find: Finder, old: str, new: str, scope: str = "") -> Command:
    """Rename a value everywhere it is defined and used, subgraphs reading it included."""
    if old == new:
        return Command("", [])
    find.require_new_value(new)
    ops = rename_ops(find.scope_path(scope), find.graph_of(scope), old, new)
    if not ops:
        raise EditError(f"there is no value '{quoted_name(old)}' in this graph.")
    return Command(f"Rename value {old} -> {new}", ops)


# -- graph inputs and outputs ----------------------------------------------------
def add_input(find: Finder, name: str, dtype: Any = "float32", shape: list[Dim] | None = None, scope: str = "") -> Command:
    path, g = find.graph_only(scope)
    find.require_new_value(name)
    vi = helper.make_value_info(name, tensor_type(parse_dtype(dtype), shape))
    return Command(f"Add input {name}", [Insert(path + ("input",), len(g.input), vi)])


def remove_input(find: Finder, name: str, scope: str = "") -> Command:
    path, g = find.graph_only(scope)
    k = _position(g.input, name, "graph input")
    return Command(f"Remove input {name}", [Remove(path + ("input",), k)])


def add_output(find: Finder, value: str, scope: str = "") -> Command:
    """Mark a value as a graph output, typed as declared or inferred."""
    path, g = find.graph_only(scope)
    gi = find.index.graphs[scope]
    if value in gi.output_names:
        raise EditError(f"'{quoted_name(value)}' is already a graph output.")
    if not gi.defines(value):
        raise EditError(f"there is no value '{quoted_name(value)}' in this graph.")
    t = find.current_type(scope, value)  # as the model is now: the index's inferred types may be older
    vi = ValueInfoProto(name=value)
    if t is not None:
        vi.type.CopyFrom(t)
    return Command(f"Mark {value} as output", [Insert(path + ("output",), len(g.output), vi)])


def remove_output(find: Finder, name: str, scope: str = "") -> Command:
    path, g = find.graph_only(scope)
    k = _position(g.output, name, "graph output")
    return Command(f"Remove output {name}", [Remove(path + ("output",), k)])


def set_value_type(find: Finder, name: str, dtype: Any = KEEP, shape: list[Dim] | None = KEEP, scope: str = "") -> Command:
    """Change the declared element type and/or shape (ints, dim_param strings, None = unknown); the declared
    types downstream that no longer hold are restated in the same step (:mod:`~.restate`)."""
    new_type = _new_type(find, name, dtype, shape, scope)
    return Command(f"Set type of {name}", _retype_ops(find, name, new_type, scope))


def _new_type(find: Finder, name: str, dtype: Any, shape: list[Dim] | None, scope: str) -> TypeProto:
    old = find.known_type(scope, name)
    elem = parse_dtype(dtype) if dtype is not KEEP else (old.tensor_type.elem_type if old is not None else 0)
    if shape is KEEP:
        shape = _dims(old)
    if not elem:
        raise EditError(f"the element type of '{quoted_name(name)}' is unknown; choose one.")
    return tensor_type(elem, shape)


def _retype_ops(find: Finder, name: str, new_type: TypeProto, scope: str) -> list[Op]:
    """Ops declaring ``name`` as ``new_type``, then restating what follows from it."""
    path, g = find.graph_only(scope)
    ops: list[Op] = []
    for field in ("input", "output", "value_info"):
        for k, v in enumerate(getattr(g, field)):
            if v.name == name and v.type.SerializeToString() != new_type.SerializeToString():
                ops.append(ReplaceMessage(path + (field, k, "type"), new_type))
    declared = any(v.name == name for f in ("input", "output", "value_info") for v in getattr(g, f))
    if not declared:
        if not find.index.graphs[scope].defines(name):
            raise EditError(f"there is no value '{quoted_name(name)}' in this graph.")
        ops.append(Insert(path + ("value_info",), len(g.value_info), helper.make_value_info(name, new_type)))
    if not ops:
        return []
    return ops + retyped_ops(path, g, find.index.graphs[scope], {name: new_type},
                             lambda x: find.index.type_of(scope, x)[0], find.model.opset_import)


def _known_type(find: Finder, scope: str, name: str) -> Any:
    t, _ = find.index.type_of(scope, name)
    if t is None and not find.index.inferred:
        try:  # in the worker process, where a crash of onnx's inference is contained
            find.index.set_inferred(inferred_types(find.model.SerializeToString()).types)
        except NativeCrash:
            return None
        t, _ = find.index.type_of(scope, name)
    return t


def set_dimension(find: Finder, name: str, axis: int, dim: Dim, scope: str = "") -> Command:
    """Set dimension ``axis`` of graph input ``name`` to a size (static) or a name (dynamic), and carry it to
    every graph output and value_info that shares it: those inference finds it reaches, and, when the dimension
    had a name, every declared dimension of that name (other inputs included)."""
    path, g = find.graph_only(scope)
    k = _position(g.input, name, "graph input")
    dims = _dims(g.input[k].type)
    if dims is None:
        raise EditError(f"the shape of '{quoted_name(name)}' is unknown; give it one first.")
    if not -len(dims) <= axis < len(dims):
        raise EditError(f"'{quoted_name(name)}' has {len(dims)} dimensions; there is no dimension {axis}.")
    axis %= len(dims)
    old = dims[axis]
    dims[axis] = dim
    new_type = tensor_type(g.input[k].type.tensor_type.elem_type, dims)
    ops = _retype_ops(find, name, new_type, scope)
    if isinstance(old, str) and old != dim:
        ops = _renamed_dims(path, g, ops, old, dim)
    what = f"dynamic ({dim})" if isinstance(dim, str) else f"static ({dim})" if dim is not None else "unknown"
    return Command(f"Make dimension {axis} of {name} {what}", ops)


def _renamed_dims(path: Path, g: GraphProto, ops: list[Op], old: str, dim: Dim) -> list[Op]:
    """``ops`` with every declared dimension named ``old`` (inputs, outputs, value_info) made ``dim``: one
    op per entry, on top of what ``ops`` already set it to."""
    types: dict[Path, TypeProto] = {op.path: cast(TypeProto, op.new) for op in ops if isinstance(op, ReplaceMessage)}
    rest = [op for op in ops if not isinstance(op, ReplaceMessage)]
    for field in ("input", "output", "value_info"):
        for k, v in enumerate(getattr(g, field)):
            where = path + (field, k, "type")
            t = TypeProto()
            t.CopyFrom(types.get(where, v.type))
            if _rename_dim(t, old, dim):
                types[where] = t
    return [ReplaceMessage(where, t) for where, t in types.items()] + rest


def _rename_dim(t: TypeProto, old: str, dim: Dim) -> bool:
    if not t.HasField("tensor_type") or not t.tensor_type.HasField("shape"):
        return False
    found = False
    for d in t.tensor_type.shape.dim:
        if d.HasField("dim_param") and d.dim_param == old:
            found = True
            if isinstance(dim, int):
                d.dim_value = dim
            elif dim:
                d.dim_param = dim
            else:
                d.ClearField("dim_param")
    return found


# -- weights ---------------------------------------------------------------------
def replace_initializer(find: Finder, name: str, array: np.ndarray, scope: str = "", force: bool = False,
                        cast: bool = False) -> Command:
    """Replace an initializer's data. A different dtype or shape is refused unless ``force``; ``cast``
    first converts the array to the initializer's dtype (refused when a value does not fit)."""
    path, g = find.graph_only(scope)
    k = _position(g.initializer, name, "initializer")
    old = g.initializer[k]
    array = np.asarray(array)
    if cast:
        array = cast_array(array, initializer_dtype(find, name, scope))
    try:
        new = numpy_helper.from_array(array, name=name)
    except Exception as exc:  # noqa: BLE001 - dtypes ONNX cannot store
        raise EditError(f"a {array.dtype} array cannot be stored in ONNX.", str(exc)) from exc
    if not force and (new.data_type != old.data_type or list(new.dims) != list(old.dims)):
        raise EditError(f"the new data is {tensor_summary(new)} but '{quoted_name(name)}' is {tensor_summary(old)}; "
                        "its consumers expect the old type and shape.")
    new.doc_string = old.doc_string
    if _holds(old, new, array):
        return Command("", [])  # the same values typed again: no edit
    ops: list[Op] = [ReplaceMessage(path + ("initializer", k), new)]
    if new.data_type != old.data_type or list(new.dims) != list(old.dims):  # what reads it makes other types
        retyped = helper.make_tensor_type_proto(new.data_type, list(new.dims))
        ops += retyped_ops(path, g, find.index.graphs[scope], {name: retyped},
                           lambda x: find.index.type_of(scope, x)[0], find.model.opset_import)
    return Command(f"Replace weights of {name}", ops)


def _holds(old: TensorProto, new: TensorProto, array: np.ndarray) -> bool:
    """``old`` already holds ``array`` (its type, shape and values, NaN where NaN), however it stores them."""
    if new.data_type != old.data_type or list(new.dims) != list(old.dims) or is_external(old):
        return False
    try:
        values = numpy_helper.to_array(old)
    except Exception:  # noqa: BLE001 - data that cannot be read is no match
        return False
    return bool(values.shape == array.shape and np.array_equal(values, array, equal_nan=array.dtype.kind in "fc"))


def add_tensor(find: Finder, name: str, value: Any, dtype: Any, scope: str, feed: tuple[NodeRef, int] | None,
               kind: LiteralKind) -> Command:
    """A new initializer or Constant ``name`` holding ``value`` (cast to ``dtype`` when given, checked), read by
    input ``feed[1]`` of node ``feed[0]`` when given, as one command."""
    typed = dtype is not None and dtype != ""
    tensor = literal_tensor(value, Port(name, _numpy_dtype(parse_dtype(dtype)) if typed else None))
    connect: list[Op] = []
    position = 0
    if feed is not None:
        s, i = find.locate(feed[0])
        if s != scope:
            raise EditError("the node to feed must be in the same graph as the new value.")
        node = find.node_proto(s, i)
        k = feed[1]
        if not 0 <= k <= len(node.input):
            raise EditError(f"{quoted_name(find.node_label(s, i))} has no input {k} (it has {len(node.input)}).")
        path = find.node_path(s, i) + ("input",)
        connect = [Insert(path, k, name) if k == len(node.input) else SetItem(path, k, name)]
        position = i
    ops = new_tensor_ops(find, scope, name, tensor, kind, position)
    what = "Constant" if kind == "constant" else "initializer"
    into = f" into {find.node_label(*find.locate(feed[0]))}" if feed is not None else ""
    return Command(f"New {what} {name}{into}", connect + ops)  # a Constant moves its reader down: last


def _numpy_dtype(elem: int) -> np.dtype:
    try:
        return np.dtype(helper.tensor_dtype_to_np_dtype(elem))
    except (KeyError, TypeError, ValueError):
        raise EditError(f"{TensorProto.DataType.Name(elem).lower()} values cannot be typed as numbers.") from None


def initializer_proto(find: Finder, name: str, scope: str = "") -> TensorProto:
    """The initializer named ``name`` (read it; change it through the edits)."""
    _, g = find.graph_only(scope)
    return g.initializer[_position(g.initializer, name, "initializer")]


def initializer_dtype(find: Finder, name: str, scope: str = "") -> np.dtype:
    """The numpy dtype of an initializer's data (object for strings)."""
    elem = initializer_proto(find, name, scope).data_type
    try:
        return np.dtype(helper.tensor_dtype_to_np_dtype(elem))
    except (KeyError, TypeError, ValueError):
        raise EditError(f"the element type of '{quoted_name(name)}' has no numpy equivalent.") from None


def constants_to_initializers(find: Finder, nodes: Sequence[NodeRef]) -> Command:
    """Turn Constant nodes (of one graph) into initializers of the same names, as one command."""
    found = sorted({find.locate(n) for n in nodes})
    if not found:
        return Command("", [])
    scope = found[0][0]
    if any(s != scope for s, _ in found):
        raise EditError("the Constant nodes must be in the same graph.")
    path, g = find.graph_only(scope)
    inserts: list[Op] = []
    for _, i in found:
        n = g.node[i]
        if not _is_constant(n):
            raise EditError(f"{quoted_name(find.node_label(scope, i))} is not a Constant node.")
        tensor = _constant_tensor(n)
        tensor.name = n.output[0]
        inserts.append(Insert(path + ("initializer",), len(g.initializer) + len(inserts), tensor))
    removes: list[Op] = [Remove(path + ("node",), i) for _, i in reversed(found)]
    names = [g.node[i].output[0] for _, i in found]
    label = f"Make {names[0]} an initializer" if len(names) == 1 else f"Make {len(names)} Constants initializers"
    return Command(label, inserts + removes)


def constant_feeders(find: Finder, node: NodeRef) -> list[tuple[str, int]]:
    """The Constant nodes feeding ``node`` and nothing that is a graph output (those the canvas shows
    inside its box), in graph order."""
    scope, i = find.locate(node)
    g = find.index.graphs[scope]
    found = {g.producer_of(x) for x in find.node_proto(scope, i).input if x and x not in g.output_names}
    return [(scope, p) for p in sorted(found) if p >= 0 and _is_constant(g.nodes[p])
            and not set(g.nodes[p].output) & set(g.output_names)]


def initializer_to_constant(find: Finder, name: str, scope: str = "") -> tuple[Command, str]:
    """Turn an initializer into a Constant node at the top of the graph; also returns the node's name."""
    path, g = find.graph_only(scope)
    k = _position(g.initializer, name, "initializer")
    if any(v.name == name for v in g.input):
        raise EditError(f"'{quoted_name(name)}' is also a graph input (a default value); remove the input first.")
    if is_external(g.initializer[k]):
        raise EditError(f"'{quoted_name(name)}' is stored in an external file; load it into the model first.")
    tensor = TensorProto()
    tensor.CopyFrom(g.initializer[k])
    tensor.ClearField("name")
    node_name = find.unique_node_name(f"{name}_Constant")
    node = helper.make_node("Constant", [], [name], name=node_name, value=tensor)
    ops: list[Op] = [Remove(path + ("initializer",), k), Insert(path + ("node",), 0, node)]
    return Command(f"Make {name} a Constant", ops), node_name


def _position(items: Any, name: str, what: str) -> int:
    for k, v in enumerate(items):
        if v.name == name:
            return k
    raise EditError(f"there is no {what} named '{quoted_name(name)}'.")


def _dims(t: Any) -> list[Dim] | None:
    if t is None or not t.HasField("tensor_type") or not t.tensor_type.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in t.tensor_type.shape.dim]


def _is_constant(n: Any) -> bool:
    return bool(n.op_type == "Constant" and n.domain in ("", "ai.onnx") and len(n.output) == 1)


def _constant_tensor(n: Any) -> TensorProto:
    attrs = {a.name: a for a in n.attribute}
    if "value" in attrs:
        t = TensorProto()
        t.CopyFrom(attrs["value"].t)
        return t
    simple = {"value_float": np.float32, "value_floats": np.float32, "value_int": np.int64, "value_ints": np.int64}
    for key, dtype in simple.items():
        if key in attrs:
            return numpy_helper.from_array(np.array(helper.get_attribute_value(attrs[key]), dtype=dtype))
    raise EditError("only Constant nodes holding a tensor or numbers can become initializers.")
