"""Edits of nodes and their attributes: each function checks its arguments and returns the command (or
answers a question) without changing anything; :class:`~onnxviz.model.editing.editor.Editor` runs them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from onnx import AttributeProto, NodeProto, helper

from onnxviz.model.editing.finder import Finder, NodeRef
from onnxviz.model.editing.graph_edits import rename_ops
from onnxviz.model.editing.ops import Command, Insert, Op, Remove, ReplaceMessage, SetField, SetItem, resolve
from onnxviz.model.editing.restate import restated_output_ops
from onnxviz.model.editing.values import make_attribute
from onnxviz.model.errors import EditError
from onnxviz.model.graph.opschema import normalize_domain, opset_version, schema_for
from onnxviz.model.text import quoted_name, shape_text


# -- attributes ----------------------------------------------------------------
def set_attribute(find: Finder, node: NodeRef, name: str, value: Any) -> Command:
    """Set (or add) attribute ``name``; the value is checked against the schema's type first."""
    scope, i = find.locate(node)
    return Command(f"Set {find.node_label(scope, i)}.{name}", _set_attribute_ops(find, scope, i, name, value))


def add_attribute(find: Finder, node: NodeRef, name: str, value: Any = None) -> Command:
    """Add an attribute the schema allows, with ``value`` or else the schema's default."""
    scope, i = find.locate(node)
    n = find.node_proto(scope, i)
    if any(a.name == name for a in n.attribute):
        raise EditError(f"{quoted_name(find.node_label(scope, i))} already has attribute '{quoted_name(name)}'.")
    if value is None:
        spec = _attribute_spec(find, scope, i, name)
        if spec is None or not spec.default_value.type:
            raise EditError(f"'{quoted_name(name)}' has no default value; give one.")
        attr = AttributeProto()
        attr.CopyFrom(spec.default_value)
        attr.name = name
        insert = Insert(find.node_path(scope, i) + ("attribute",), len(n.attribute), attr)
        ops: list[Op] = _restated(find, scope, [insert], _with_attribute(n, None, attr))
    else:
        ops = _set_attribute_ops(find, scope, i, name, value)
    return Command(f"Add {find.node_label(scope, i)}.{name}", ops)


def remove_attribute(find: Finder, node: NodeRef, name: str) -> Command:
    scope, i = find.locate(node)
    n = find.node_proto(scope, i)
    k = next((k for k, a in enumerate(n.attribute) if a.name == name), None)
    if k is None:
        raise EditError(f"{quoted_name(find.node_label(scope, i))} has no attribute '{quoted_name(name)}'.")
    schema = find.schema_of(scope, i)  # one the operator does not have is a problem; removing it is the fix
    spec = schema.attributes.get(name) if schema is not None else None
    if spec is not None and spec.required:
        raise EditError(f"'{quoted_name(name)}' is required by {n.op_type} and cannot be removed.")
    return Command(f"Remove {find.node_label(scope, i)}.{name}",
                   _restated(find, scope, [Remove(find.node_path(scope, i) + ("attribute",), k)],
                             _with_attribute(n, k, None)))


def attribute_type(find: Finder, node: NodeRef, name: str) -> int | None:
    """The AttributeProto type the schema (or the existing attribute) gives ``name``; None if free."""
    scope, i = find.locate(node)
    spec = _attribute_spec(find, scope, i, name)
    if spec is not None:
        return int(spec.type)
    existing = next((a for a in find.node_proto(scope, i).attribute if a.name == name), None)
    return int(existing.type) if existing is not None else None


def _set_attribute_ops(find: Finder, scope: str, i: int, name: str, value: Any) -> list[Op]:
    n = find.node_proto(scope, i)
    spec = _attribute_spec(find, scope, i, name)
    k = next((k for k, a in enumerate(n.attribute) if a.name == name), None)
    attr_type = int(spec.type) if spec is not None else (n.attribute[k].type if k is not None else None)
    attr = make_attribute(name, value, attr_type)
    path = find.node_path(scope, i) + ("attribute",)
    if k is None:
        return _restated(find, scope, [Insert(path, len(n.attribute), attr)], _with_attribute(n, None, attr))
    if n.attribute[k].HasField("doc_string"):  # an empty one would be written out, and differ
        attr.doc_string = n.attribute[k].doc_string
    if attr.SerializeToString() == n.attribute[k].SerializeToString():
        return []
    return _restated(find, scope, [ReplaceMessage(path + (k,), attr)], _with_attribute(n, k, attr))


def _restated(find: Finder, scope: str, ops: list[Op], after: NodeProto) -> list[Op]:
    """``ops`` changing a node's attributes to make it ``after``, then those restating the declared shapes
    of its outputs that no longer hold (:mod:`~onnxviz.model.editing.restate`)."""
    path = find.scope_path(scope)
    if path[0] == "functions":
        return ops
    graph = resolve(find.model, path)
    return ops + restated_output_ops(path, graph, after, lambda x: find.index.type_of(scope, x)[0],
                                     find.model.opset_import)


def _attribute_spec(find: Finder, scope: str, i: int, name: str) -> Any:
    """The schema's description of attribute ``name``; None for ops without a schema.

    EditError if the operator has a schema that does not allow ``name``.
    """
    schema = find.schema_of(scope, i)
    if schema is None:
        return None
    if name not in schema.attributes:
        allowed = ", ".join(sorted(schema.attributes)) or "none"
        raise EditError(f"{schema.name} has no attribute '{quoted_name(name)}' (allowed: {allowed}).")
    return schema.attributes[name]


# -- nodes ---------------------------------------------------------------------
def rename_node(find: Finder, node: NodeRef, new: str) -> Command:
    scope, i = find.locate(node)
    old_label = find.node_label(scope, i)
    if find.node_proto(scope, i).name == new:
        return Command("", [])
    if new and new in find.node_table():
        raise EditError(f"a node named '{quoted_name(new)}' already exists; choose another name.")
    return Command(f"Rename node {old_label} -> {new or '(unnamed)'}",
                   [SetField(find.node_path(scope, i), "name", new)])


def set_op_type(find: Finder, node: NodeRef, op_type: str, domain: str | None = None) -> Command:
    """Change the operator; attributes the new schema does not allow show up as problems."""
    scope, i = find.locate(node)
    n = find.node_proto(scope, i)
    dom = n.domain if domain is None else domain
    _require_operator(find, op_type, dom)
    path = find.node_path(scope, i)
    ops: list[Op] = [SetField(path, "op_type", op_type)]
    if dom != n.domain:
        ops.append(SetField(path, "domain", dom))
    ops += _import_ops(find, dom, op_type)
    return Command(f"Change {find.node_label(scope, i)} to {(dom + '.') if dom else ''}{op_type}", ops)


def remove_node(find: Finder, node: NodeRef, reconnect: bool = False) -> Command:
    """Delete a node; with ``reconnect`` its consumers read its single input instead of its output."""
    scope, i = find.locate(node)
    label = find.node_label(scope, i)
    ops = _reconnect_ops(find, scope, i) if reconnect else []
    ops.append(Remove(find.node_path(scope, i)[:-1], i))
    return Command(f"Delete {label}" + (" (reconnected)" if reconnect else ""), ops)


def _reconnect_ops(find: Finder, scope: str, i: int) -> list[Op]:
    n = find.node_proto(scope, i)
    inputs = [x for x in n.input if x]
    outputs = [x for x in n.output if x]
    label = quoted_name(find.node_label(scope, i))
    if len(inputs) < 1 or len(outputs) != 1:
        raise EditError(f"{label} cannot be bypassed: it needs one data input and one output.")
    src, out = inputs[0], outputs[0]
    g = find.index.graphs[scope]
    if out in g.output_names:
        raise EditError(f"{label} cannot be bypassed: its output '{quoted_name(out)}' is a graph output.")
    a, b = (shape_text(find.index.type_of(scope, v)[0]) for v in (src, out))
    if a and b and "?" not in a + b and a != b:
        raise EditError(f"{label} cannot be bypassed: its input is {a} but its output is {b}.")
    return rename_ops(find.scope_path(scope), find.graph_of(scope), out, src, reads_only=True, skip=i)


def insert_node(find: Finder, op_type: str, inputs: Sequence[str], outputs: Sequence[str],
                attributes: Mapping[str, Any] | None = None, domain: str = "", name: str | None = None,
                scope: str = "", position: int | None = None) -> tuple[Command, str]:
    """Add a node; by default right after the last producer of its inputs. Also returns its name."""
    node, ops = _new_node(find, op_type, inputs, outputs, attributes, domain, name, scope, position)
    return Command(f"Insert {node.op_type} {node.name}", ops), node.name


def insert_on_value(find: Finder, value: str, op_type: str, attributes: Mapping[str, Any] | None = None,
                    domain: str = "", name: str | None = None, scope: str = "",
                    consumers: Sequence[NodeRef] | None = None, extra_inputs: Sequence[str] = ()
                    ) -> tuple[Command, str]:
    """Put a new node on the edge ``value`` -> consumers (all of them by default).

    The node reads ``value`` first, then ``extra_inputs`` ("" leaves an optional one empty). When
    ``value`` is a graph output made by a node, the new node takes over its name (the producer's
    output is renamed), so the graph's outputs keep their names and now come from the new node.
    """
    g = find.index.graphs.get(scope)
    if g is None or not g.defines(value):
        raise EditError(f"there is no value '{quoted_name(value)}' here.")
    schema = _require_operator(find, op_type, domain)
    if schema is not None and schema.max_input < 1 + len(extra_inputs):
        most = schema.max_input
        takes = "no input" if most == 0 else f"at most {most} input{'s' if most != 1 else ''}"
        raise EditError(f"{op_type} takes {takes}, so it cannot go on an edge with {1 + len(extra_inputs)}.")
    producer = g.producer_of(value)
    late = max([g.producer_of(x) for x in extra_inputs if x] + [-1])  # the last maker of another input
    at = max(producer + 1, late + 1, 0)
    if consumers is None and value in g.output_names and producer >= 0:
        return _insert_before_output(find, value, op_type, attributes, domain, name, scope, at, extra_inputs)
    targets = [find.locate(c) for c in consumers] if consumers is not None else [
        (scope, c) for c in g.consumers_of(value)]
    out = find.unique_value_name(f"{value}_{op_type.lower()}")
    node, ops = _new_node(find, op_type, [value, *extra_inputs], [out], attributes, domain, name, scope, at)
    for s, c in targets:
        if s != scope:
            raise EditError("consumers must be in the same graph as the value.")
        if c <= late:
            raise EditError(f"{quoted_name(find.node_label(scope, c))} comes before the nodes making the new "
                            "node's other inputs; choose inputs made earlier.")
        cnode = find.node_proto(scope, c)
        for k, x in enumerate(cnode.input):
            if x == value:
                ops.append(SetItem(find.node_path(scope, c + 1 if c >= at else c) + ("input",), k, out))
    return Command(f"Insert {op_type} on {value}", ops), node.name


def _insert_before_output(find: Finder, value: str, op_type: str, attributes: Mapping[str, Any] | None,
                          domain: str, name: str | None, scope: str, at: int,
                          extra_inputs: Sequence[str]) -> tuple[Command, str]:
    producer = find.index.graphs[scope].producer_of(value)
    before = find.unique_value_name(f"{value}_before_{op_type.lower()}")
    node, ops = _new_node(find, op_type, [value, *extra_inputs], [before], attributes, domain, name, scope, at)
    node.input[0], node.output[0] = before, value  # the Insert op holds this very node
    k = list(find.node_proto(scope, producer).output).index(value)
    rename = SetItem(find.node_path(scope, producer) + ("output",), k, before)
    return Command(f"Insert {op_type} on {value}", [rename, *ops]), node.name


def _new_node(find: Finder, op_type: str, inputs: Sequence[str], outputs: Sequence[str],
              attributes: Mapping[str, Any] | None, domain: str, name: str | None, scope: str,
              position: int | None) -> tuple[NodeProto, list[Op]]:
    schema = _require_operator(find, op_type, domain)
    g = find.index.graphs.get(scope)
    if g is None:
        raise EditError(f"there is no graph '{quoted_name(scope)}'.")
    for x in inputs:
        if x and not g.defines(x):
            raise EditError(f"input '{quoted_name(x)}' is not defined in this graph.")
    if not outputs or len(set(outputs)) != len(outputs):
        raise EditError("a new node needs distinct output names.")
    for x in outputs:
        find.require_new_value(x)
    if name is None:
        name = find.unique_node_name(op_type)
    elif name in find.node_table():
        raise EditError(f"a node named '{quoted_name(name)}' already exists; choose another name.")
    node = helper.make_node(op_type, list(inputs), list(outputs), name=name, domain=domain)
    for key, value in (attributes or {}).items():
        spec = None
        if schema is not None:
            if key not in schema.attributes:
                raise EditError(f"{op_type} has no attribute '{quoted_name(key)}'.")
            spec = int(schema.attributes[key].type)
        node.attribute.append(make_attribute(key, value, spec))
    if position is None:
        position = max([g.producer_of(x) + 1 for x in inputs if x] + [0])
    if not 0 <= position <= len(g.nodes):
        raise EditError(f"position {position} is outside the graph (0..{len(g.nodes)}).")
    return node, _import_ops(find, domain, op_type) + [Insert(find.scope_path(scope) + ("node",), position, node)]


def set_input(find: Finder, node: NodeRef, index: int, value: str) -> Command:
    """Make input ``index`` of a node read ``value`` ("" leaves an optional input empty)."""
    scope, i = find.locate(node)
    n = find.node_proto(scope, i)
    g = find.index.graphs[scope]
    if not 0 <= index <= len(n.input):
        raise EditError(f"{quoted_name(find.node_label(scope, i))} has no input {index} (it has {len(n.input)}).")
    if value and not g.defines(value):
        raise EditError(f"there is no value '{quoted_name(value)}' in this graph.")
    if value and _downstream(find, scope, i, value):
        raise EditError(f"reading '{quoted_name(value)}' would make {quoted_name(find.node_label(scope, i))} depend on itself.")
    path = find.node_path(scope, i) + ("input",)
    op: Op = Insert(path, index, value) if index == len(n.input) else SetItem(path, index, value)
    return Command(f"Connect {find.node_label(scope, i)} input {index} to {value or '(none)'}", [op])


def _downstream(find: Finder, scope: str, i: int, value: str) -> bool:
    """True if ``value`` is made by node ``i`` or by anything that depends on it."""
    g = find.index.graphs[scope]
    seen, stack = {i}, [i]
    while stack:
        for out in g.nodes[stack.pop()].output:
            if out == value:
                return True
            for c in g.consumers_of(out):
                if c not in seen:
                    seen.add(c)
                    stack.append(c)
    return False


# -- helpers ---------------------------------------------------------------------
def _require_operator(find: Finder, op_type: str, domain: str) -> Any:
    """The schema for ``op_type`` at the model's opset (None for local functions); EditError if unknown."""
    if any(f.name == op_type and f.domain == domain for f in find.model.functions):
        return None
    version = opset_version(find.model, domain)
    schema = schema_for(op_type, domain, version)
    if schema is None:
        where = f"domain '{domain}'" if normalize_domain(domain) else "the default domain"
        at = f" at opset {version}" if version is not None else ""
        raise EditError(f"there is no operator {quoted_name(op_type)} in {where}{at}.")
    return schema


def _import_ops(find: Finder, domain: str, op_type: str) -> list[Op]:
    """Add an opset import for ``domain`` when the model has none (at the op's newest version)."""
    if opset_version(find.model, domain) is not None or any(f.domain == domain for f in find.model.functions):
        return []
    schema = schema_for(op_type, domain, None)
    version = schema.since_version if schema is not None else 1
    return [Insert(("opset_import",), len(find.model.opset_import), helper.make_opsetid(domain, version))]


def _with_attribute(node: NodeProto, k: int | None, attr: AttributeProto | None) -> NodeProto:
    """A copy of ``node`` with attribute ``k`` replaced by ``attr`` (``k`` None: ``attr`` added; ``attr``
    None: attribute ``k`` removed)."""
    after = NodeProto()
    after.CopyFrom(node)
    if k is None and attr is not None:
        after.attribute.append(attr)
    elif k is not None and attr is None:
        del after.attribute[k]
    elif k is not None and attr is not None:
        after.attribute[k].CopyFrom(attr)
    return after
