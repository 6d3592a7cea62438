"""Edits of nodes and their attributes: each function checks its arguments and returns the command (or
answers a question) without changing anything; :class:`~onnxviz.model.editing.editor.Editor` runs them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from onnx import AttributeProto, GraphProto, NodeProto, helper

from onnxviz.model.editing.cleanup import undeclared_ops
from onnxviz.model.editing.commands import Command
from onnxviz.model.editing.finder import Finder, NodeRef
from onnxviz.model.editing.graph_edits import rename_ops
from onnxviz.model.editing.literals import LiteralKind, Literals, elem_of, port
from onnxviz.model.editing.ops import Insert, Op, Remove, ReplaceMessage, SetField, SetItem, resolve
from onnxviz.model.editing.palette import attribute_choices, element_type_name
from onnxviz.model.editing.restate import Types, node_output_types, restated_entries, restated_output_ops
from onnxviz.model.editing.values import make_attribute
from onnxviz.model.errors import EditError
from onnxviz.model.graph.enum_attributes import IGNORING_CASE
from onnxviz.model.graph.index import GraphIndex
from onnxviz.model.graph.opschema import normalize_domain, opset_version, schema_for
from onnxviz.model.text import quoted_name, shape_text

Input = str | Any  # a value name, or numbers (a literal) that become a new value


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
        ops: list[Op] = _restated(find, scope, i, [insert], _with_attribute(n, None, attr))
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
                   _restated(find, scope, i, [Remove(find.node_path(scope, i) + ("attribute",), k)],
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
    _require_choice(find.schema_of(scope, i), attr)
    path = find.node_path(scope, i) + ("attribute",)
    if k is None:
        return _restated(find, scope, i, [Insert(path, len(n.attribute), attr)], _with_attribute(n, None, attr))
    if n.attribute[k].HasField("doc_string"):  # an empty one would be written out, and differ
        attr.doc_string = n.attribute[k].doc_string
    if attr.SerializeToString() == n.attribute[k].SerializeToString():
        return []
    return _restated(find, scope, i, [ReplaceMessage(path + (k,), attr)], _with_attribute(n, k, attr))


def _require_choice(schema: Any, attr: AttributeProto) -> None:
    """EditError when ``attr`` holds a value its operator version does not accept, where it names one of a
    few (an element type, a mode): such a value is chosen, never typed into a problem."""
    choices = attribute_choices(schema, attr.name) if schema is not None else ()
    if not choices:
        return
    if attr.type == AttributeProto.INT:
        given = [element_type_name(attr.i)]
    else:
        given = [v.decode("utf-8", "replace") for v in ([attr.s] if attr.type == AttributeProto.STRING else attr.strings)]
    fold = attr.name in IGNORING_CASE
    accepted = {c.lower() for c in choices} if fold else set(choices)
    for value in given:
        if (value.lower() if fold else value) not in accepted:
            listed = ", ".join(choices[:-1]) + f" or {choices[-1]}" if len(choices) > 1 else choices[0]
            raise EditError(f"{schema.name} takes {listed} as '{quoted_name(attr.name)}', not "
                            f"{quoted_name(repr(value))}.")


def _restated(find: Finder, scope: str, i: int, ops: list[Op], after: NodeProto) -> list[Op]:
    """``ops`` changing node ``i``'s attributes to make it ``after``, then those restating the declared types
    that no longer hold: of its outputs, and of what follows when those change (:mod:`~.restate`)."""
    path = find.scope_path(scope)
    if path[0] == "functions":
        return ops
    graph = resolve(find.model, path)
    return ops + restated_output_ops(path, graph, find.index.graphs[scope], i, after,
                                     lambda x: find.index.type_of(scope, x)[0], find.model.opset_import)


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
    after = NodeProto()
    after.CopyFrom(n)
    after.op_type, after.domain = op_type, dom
    if find.model.opset_import and not _import_ops(find, dom, op_type):  # a new domain: inferred once it is imported
        ops = _restated(find, scope, i, ops, after)
    return Command(f"Change {find.node_label(scope, i)} to {(dom + '.') if dom else ''}{op_type}", ops)


def remove_node(find: Finder, node: NodeRef, reconnect: bool = False) -> Command:
    """Delete a node; with ``reconnect`` its consumers read its single input instead of its output."""
    scope, i = find.locate(node)
    label = find.node_label(scope, i)
    ops = _reconnect_ops(find, scope, i) if reconnect else []
    ops.append(Remove(find.node_path(scope, i)[:-1], i))
    body = find.graph_of(scope)
    ops += undeclared_ops(find.scope_path(scope), body if isinstance(body, GraphProto) else None,
                          find.index.graphs[scope], [i])
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


def insert_node(find: Finder, op_type: str, inputs: Sequence[Input], outputs: Sequence[str],
                attributes: Mapping[str, Any] | None = None, domain: str = "", name: str | None = None,
                scope: str = "", position: int | None = None, literals: LiteralKind = "initializer"
                ) -> tuple[Command, str]:
    """Add a node; by default right after the last producer of its inputs. An input given as numbers becomes
    an initializer (or a Constant, ``literals="constant"``) in the same step. Also returns its name."""
    new = _new_node(find, op_type, inputs, outputs, attributes, domain, name, scope, position, literals)
    return Command(f"Insert {new.node.op_type} {new.node.name}", new.ops + new.tail), new.node.name


def insert_on_value(find: Finder, value: str, op_type: str, attributes: Mapping[str, Any] | None = None,
                    domain: str = "", name: str | None = None, scope: str = "",
                    consumers: Sequence[NodeRef] | None = None, extra_inputs: Sequence[Input] = (),
                    literals: LiteralKind = "initializer") -> tuple[Command, str]:
    """Put a new node on the edge ``value`` -> consumers (all of them by default).

    The node reads ``value`` first, then ``extra_inputs`` ("" leaves an optional one empty; numbers become an
    initializer or a Constant, see :mod:`~.literals`). When ``value`` is a graph output made by a node, the new
    node takes over its name (the producer's output is renamed), so the graph's outputs keep their names and now
    come from the new node, their declared types restated from it.
    """
    g = find.index.graphs.get(scope)
    if g is None or not g.defines(value):
        raise EditError(f"there is no value '{quoted_name(value)}' here.")
    schema = _require_operator(find, op_type, domain)
    if schema is not None and schema.max_input < 1 + len(extra_inputs):
        most = schema.max_input
        takes = "no input" if most == 0 else f"at most {most} input{'s' if most != 1 else ''}"
        raise EditError(f"{op_type} takes {takes}, so it cannot go on an edge with {1 + len(extra_inputs)}.")
    names = [x for x in extra_inputs if isinstance(x, str)]
    producer = g.producer_of(value)
    late = max([g.producer_of(x) for x in names if x] + [-1])  # the last maker of another input
    at = max(producer + 1, late + 1, 0)
    takes_over = consumers is None and value in g.output_names and producer >= 0
    targets = [find.locate(c) for c in consumers] if consumers is not None else [
        (scope, c) for c in g.consumers_of(value)]
    _refuse_cycle(g, value if takes_over else "", [c for s, c in targets if s == scope], names)
    if takes_over:
        return _insert_before_output(find, value, op_type, attributes, domain, name, scope, at, extra_inputs,
                                     literals)
    out = find.unique_value_name(f"{value}_{op_type.lower()}")
    new = _new_node(find, op_type, [value, *extra_inputs], [out], attributes, domain, name, scope, at, literals)
    ops = list(new.ops)
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
    return Command(f"Insert {op_type} on {value}", ops + new.tail), new.node.name


@dataclass(frozen=True)
class NewNode:
    """A node about to be inserted: ``ops`` insert it (and the initializers of its literal inputs), ``tail``
    the Constants of its literal inputs; ``types``: the types of those literals' values."""

    node: NodeProto
    ops: list[Op]
    tail: list[Op]
    types: dict[str, Any]


def _refuse_cycle(g: GraphIndex, own: str, readers: list[int], extra_inputs: Sequence[str]) -> None:
    """EditError when the new node would read its own output: one of ``extra_inputs`` is ``own`` (the name it
    takes over) or is made downstream of the nodes that will read its output (``readers``)."""
    looped = own if own and own in extra_inputs else _made_downstream(g, readers, extra_inputs)
    if looped:
        raise EditError(f"the new node would read '{quoted_name(looped)}', which is made from its own output: "
                        "that would be a cycle; choose a value made before it.")


def _insert_before_output(find: Finder, value: str, op_type: str, attributes: Mapping[str, Any] | None,
                          domain: str, name: str | None, scope: str, at: int, extra_inputs: Sequence[Input],
                          literals: LiteralKind) -> tuple[Command, str]:
    producer = find.index.graphs[scope].producer_of(value)
    before = find.unique_value_name(f"{value}_before_{op_type.lower()}")
    new = _new_node(find, op_type, [value, *extra_inputs], [before], attributes, domain, name, scope, at, literals)
    new.node.input[0], new.node.output[0] = before, value  # the Insert op holds this very node
    k = list(find.node_proto(scope, producer).output).index(value)
    rename = SetItem(find.node_path(scope, producer) + ("output",), k, before)
    known = {**new.types, before: find.index.type_of(scope, value)[0]}
    restated = _restated_new(find, scope, new.node, value, known)
    return Command(f"Insert {op_type} on {value}", [rename, *new.ops, *restated, *new.tail]), new.node.name


def _restated_new(find: Finder, scope: str, node: NodeProto, value: str, known: Mapping[str, Any]) -> list[Op]:
    """Ops restating the declared type of the graph output ``value`` a new node took over (a Cast to float16
    put before it makes it float16), from what the node makes of its inputs (``known``: the types of those
    the graph does not declare yet)."""
    path = find.scope_path(scope)
    if path[0] == "functions":
        return []
    graph = resolve(find.model, path)
    types = Types(graph, find.index.graphs[scope], lambda x: known.get(x) or find.index.type_of(scope, x)[0],
                  find.model.opset_import)
    return restated_entries(path, graph, node_output_types(types, node), {value})


def _new_node(find: Finder, op_type: str, inputs: Sequence[Input], outputs: Sequence[str],
              attributes: Mapping[str, Any] | None, domain: str, name: str | None, scope: str,
              position: int | None, literals: LiteralKind = "initializer") -> NewNode:
    """The new node and the ops inserting it; inputs given as numbers become values (a Constant goes just
    before the node, by an op of ``tail``: after every op that addresses nodes by position)."""
    schema = _require_operator(find, op_type, domain)
    g = find.index.graphs.get(scope)
    if g is None:
        raise EditError(f"there is no graph '{quoted_name(scope)}'.")
    for x in inputs:
        if isinstance(x, str) and x and not g.defines(x):
            raise EditError(f"input '{quoted_name(x)}' is not defined in this graph.")
    if not outputs or len(set(outputs)) != len(outputs):
        raise EditError("a new node needs distinct output names.")
    for x in outputs:
        find.require_new_value(x)
    if name is None:
        name = find.unique_node_name(op_type)
    elif name in find.node_table():
        raise EditError(f"a node named '{quoted_name(name)}' already exists; choose another name.")
    if position is None:
        position = max([g.producer_of(x) + 1 for x in inputs if isinstance(x, str) and x] + [0])
    if not 0 <= position <= len(g.nodes):
        raise EditError(f"position {position} is outside the graph (0..{len(g.nodes)}).")
    made = Literals.make(find, scope, literals, position)
    names = _input_names(find, scope, schema, name, inputs, made)
    node = helper.make_node(op_type, names, list(outputs), name=name, domain=domain)
    for key, value in (attributes or {}).items():
        spec = None
        if schema is not None:
            if key not in schema.attributes:
                raise EditError(f"{op_type} has no attribute '{quoted_name(key)}'.")
            spec = int(schema.attributes[key].type)
        node.attribute.append(make_attribute(key, value, spec))
        _require_choice(schema, node.attribute[-1])
    insert = Insert(find.scope_path(scope) + ("node",), position, node)
    return NewNode(node, _import_ops(find, domain, op_type) + made.ops + [insert], made.tail, made.types)


def _input_names(find: Finder, scope: str, schema: Any, node_name: str, inputs: Sequence[Input],
                 made: Literals) -> list[str]:
    """The value names a node reads: those given, and for each literal the name of the value made for it."""
    if all(isinstance(x, str) for x in inputs):
        return list(inputs)
    known = [elem_of(find.known_type(scope, x)) if isinstance(x, str) and x else 0 for x in inputs]
    names = []
    for k, x in enumerate(inputs):
        if isinstance(x, str):
            names.append(x)
            continue
        where = port(schema, k, known)
        names.append(made.value(x, where, f"{node_name}_{where.name}"))
    return names


def set_input(find: Finder, node: NodeRef, index: int, value: Input, literals: LiteralKind = "initializer") -> Command:
    """Make input ``index`` of a node read ``value`` ("" leaves an optional input empty; numbers become an
    initializer or a Constant just before the node, see :mod:`~.literals`)."""
    scope, i = find.locate(node)
    n = find.node_proto(scope, i)
    g = find.index.graphs[scope]
    if not 0 <= index <= len(n.input):
        raise EditError(f"{quoted_name(find.node_label(scope, i))} has no input {index} (it has {len(n.input)}).")
    path = find.node_path(scope, i) + ("input",)
    if not isinstance(value, str):
        made = Literals.make(find, scope, literals, i)
        known = [elem_of(find.known_type(scope, x)) if x and k != index else 0 for k, x in enumerate(n.input)]
        where = port(find.schema_of(scope, i), index, known)
        name = made.value(value, where, f"{n.name or n.op_type}_{where.name}")
        op: Op = Insert(path, index, name) if index == len(n.input) else SetItem(path, index, name)
        return Command(f"Connect {find.node_label(scope, i)} input {index} to new {made.kind} {name}",
                       [*made.ops, op, *made.tail])
    if value and not g.defines(value):
        raise EditError(f"there is no value '{quoted_name(value)}' in this graph.")
    if value and _made_downstream(g, [i], [value]):
        raise EditError(f"reading '{quoted_name(value)}' would make {quoted_name(find.node_label(scope, i))} depend on "
                        "itself (a cycle).")
    op = Insert(path, index, value) if index == len(n.input) else SetItem(path, index, value)
    return Command(f"Connect {find.node_label(scope, i)} input {index} to {value or '(none)'}", [op])


def _made_downstream(g: GraphIndex, starts: Iterable[int], values: Iterable[str]) -> str:
    """The first of ``values`` made by a node of ``starts`` or by anything that depends on one ('' if none):
    a node reading such a value would depend on its own output. Reads of subgraphs count (the index's
    consumers include them)."""
    wanted = {x for x in values if x}
    seen = set(starts)
    stack = list(seen)
    while stack and wanted:
        for out in g.nodes[stack.pop()].output:
            if out in wanted:
                return out
            for c in g.consumers_of(out):
                if c not in seen:
                    seen.add(c)
                    stack.append(c)
    return ""


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
