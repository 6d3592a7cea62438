"""Edits of nodes and their attributes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from onnx import AttributeProto, NodeProto, helper

from onnxviz.model.editing.base import EditBase, NodeRef
from onnxviz.model.editing.graph_edits import rename_ops
from onnxviz.model.editing.ops import Insert, Op, Remove, ReplaceMessage, SetField, SetItem, resolve
from onnxviz.model.editing.restate import restated_output_ops
from onnxviz.model.editing.values import make_attribute
from onnxviz.model.errors import EditError
from onnxviz.model.graph.opschema import normalize_domain, opset_version, schema_for
from onnxviz.model.text import quoted_name, shape_text


class NodeEditsMixin(EditBase):
    # -- attributes ----------------------------------------------------------------
    def set_attribute(self, node: NodeRef, name: str, value: Any) -> None:
        """Set (or add) attribute ``name``; the value is checked against the schema's type first."""
        scope, i = self.locate(node)
        self._run(f"Set {self.node_label(scope, i)}.{name}", self._set_attribute_ops(scope, i, name, value))

    def add_attribute(self, node: NodeRef, name: str, value: Any = None) -> None:
        """Add an attribute the schema allows, with ``value`` or else the schema's default."""
        scope, i = self.locate(node)
        n = self.node_proto(scope, i)
        if any(a.name == name for a in n.attribute):
            raise EditError(f"{quoted_name(self.node_label(scope, i))} already has attribute '{quoted_name(name)}'.")
        if value is None:
            spec = self._attribute_spec(scope, i, name)
            if spec is None or not spec.default_value.type:
                raise EditError(f"'{quoted_name(name)}' has no default value; give one.")
            attr = AttributeProto()
            attr.CopyFrom(spec.default_value)
            attr.name = name
            ops: list[Op] = self._restated(scope, [Insert(self._node_path(scope, i) + ("attribute",),
                                                          len(n.attribute), attr)], _with_attribute(n, None, attr))
        else:
            ops = self._set_attribute_ops(scope, i, name, value)
        self._run(f"Add {self.node_label(scope, i)}.{name}", ops)

    def remove_attribute(self, node: NodeRef, name: str) -> None:
        scope, i = self.locate(node)
        n = self.node_proto(scope, i)
        k = next((k for k, a in enumerate(n.attribute) if a.name == name), None)
        if k is None:
            raise EditError(f"{quoted_name(self.node_label(scope, i))} has no attribute '{quoted_name(name)}'.")
        schema = self.schema_of(scope, i)  # one the operator does not have is a problem; removing it is the fix
        spec = schema.attributes.get(name) if schema is not None else None
        if spec is not None and spec.required:
            raise EditError(f"'{quoted_name(name)}' is required by {n.op_type} and cannot be removed.")
        self._run(f"Remove {self.node_label(scope, i)}.{name}",
                  self._restated(scope, [Remove(self._node_path(scope, i) + ("attribute",), k)],
                                 _with_attribute(n, k, None)))

    def attribute_type(self, node: NodeRef, name: str) -> int | None:
        """The AttributeProto type the schema (or the existing attribute) gives ``name``; None if free."""
        scope, i = self.locate(node)
        spec = self._attribute_spec(scope, i, name)
        if spec is not None:
            return int(spec.type)
        existing = next((a for a in self.node_proto(scope, i).attribute if a.name == name), None)
        return int(existing.type) if existing is not None else None

    def _set_attribute_ops(self, scope: str, i: int, name: str, value: Any) -> list[Op]:
        n = self.node_proto(scope, i)
        spec = self._attribute_spec(scope, i, name)
        k = next((k for k, a in enumerate(n.attribute) if a.name == name), None)
        attr_type = int(spec.type) if spec is not None else (n.attribute[k].type if k is not None else None)
        attr = make_attribute(name, value, attr_type)
        path = self._node_path(scope, i) + ("attribute",)
        if k is None:
            return self._restated(scope, [Insert(path, len(n.attribute), attr)], _with_attribute(n, None, attr))
        if n.attribute[k].HasField("doc_string"):  # an empty one would be written out, and differ
            attr.doc_string = n.attribute[k].doc_string
        if attr.SerializeToString() == n.attribute[k].SerializeToString():
            return []
        return self._restated(scope, [ReplaceMessage(path + (k,), attr)], _with_attribute(n, k, attr))

    def _restated(self, scope: str, ops: list[Op], after: NodeProto) -> list[Op]:
        """``ops`` changing a node's attributes to make it ``after``, then those restating the declared shapes
        of its outputs that no longer hold (:mod:`~onnxviz.model.editing.restate`)."""
        path = self.scope_path(scope)
        if path[0] == "functions":
            return ops
        graph = resolve(self.model, path)
        return ops + restated_output_ops(path, graph, after, lambda x: self.index.type_of(scope, x)[0],
                                         self.model.opset_import)

    def _attribute_spec(self, scope: str, i: int, name: str) -> Any:
        """The schema's description of attribute ``name``; None for ops without a schema.

        EditError if the operator has a schema that does not allow ``name``.
        """
        schema = self.schema_of(scope, i)
        if schema is None:
            return None
        if name not in schema.attributes:
            allowed = ", ".join(sorted(schema.attributes)) or "none"
            raise EditError(f"{schema.name} has no attribute '{quoted_name(name)}' (allowed: {allowed}).")
        return schema.attributes[name]

    # -- nodes ---------------------------------------------------------------------
    def rename_node(self, node: NodeRef, new: str) -> None:
        scope, i = self.locate(node)
        old_label = self.node_label(scope, i)
        if self.node_proto(scope, i).name == new:
            return
        if new and new in self._lookup():
            raise EditError(f"a node named '{quoted_name(new)}' already exists; choose another name.")
        self._run(f"Rename node {old_label} -> {new or '(unnamed)'}",
                  [SetField(self._node_path(scope, i), "name", new)])

    def set_op_type(self, node: NodeRef, op_type: str, domain: str | None = None) -> None:
        """Change the operator; attributes the new schema does not allow show up as problems."""
        scope, i = self.locate(node)
        n = self.node_proto(scope, i)
        dom = n.domain if domain is None else domain
        self._require_operator(op_type, dom)
        path = self._node_path(scope, i)
        ops: list[Op] = [SetField(path, "op_type", op_type)]
        if dom != n.domain:
            ops.append(SetField(path, "domain", dom))
        ops += self._import_ops(dom, op_type)
        self._run(f"Change {self.node_label(scope, i)} to {(dom + '.') if dom else ''}{op_type}", ops)

    def remove_node(self, node: NodeRef, reconnect: bool = False) -> None:
        """Delete a node; with ``reconnect`` its consumers read its single input instead of its output."""
        scope, i = self.locate(node)
        label = self.node_label(scope, i)
        ops = self._reconnect_ops(scope, i) if reconnect else []
        ops.append(Remove(self._node_path(scope, i)[:-1], i))
        self._run(f"Delete {label}" + (" (reconnected)" if reconnect else ""), ops)

    def _reconnect_ops(self, scope: str, i: int) -> list[Op]:
        n = self.node_proto(scope, i)
        inputs = [x for x in n.input if x]
        outputs = [x for x in n.output if x]
        label = quoted_name(self.node_label(scope, i))
        if len(inputs) < 1 or len(outputs) != 1:
            raise EditError(f"{label} cannot be bypassed: it needs one data input and one output.")
        src, out = inputs[0], outputs[0]
        g = self.index.graphs[scope]
        if out in g.output_names:
            raise EditError(f"{label} cannot be bypassed: its output '{quoted_name(out)}' is a graph output.")
        a, b = (shape_text(self.index.type_of(scope, v)[0]) for v in (src, out))
        if a and b and "?" not in a + b and a != b:
            raise EditError(f"{label} cannot be bypassed: its input is {a} but its output is {b}.")
        return rename_ops(self.scope_path(scope), self.graph_of(scope), out, src, reads_only=True, skip=i)

    def insert_node(self, op_type: str, inputs: Sequence[str], outputs: Sequence[str],
                    attributes: Mapping[str, Any] | None = None, domain: str = "", name: str | None = None,
                    scope: str = "", position: int | None = None) -> str:
        """Add a node; by default right after the last producer of its inputs. Returns its name."""
        node, ops = self._new_node(op_type, inputs, outputs, attributes, domain, name, scope, position)
        self._run(f"Insert {node.op_type} {node.name}", ops)
        return node.name

    def insert_on_value(self, value: str, op_type: str, attributes: Mapping[str, Any] | None = None,
                        domain: str = "", name: str | None = None, scope: str = "",
                        consumers: Sequence[NodeRef] | None = None, extra_inputs: Sequence[str] = ()) -> str:
        """Put a new node on the edge ``value`` -> consumers (all of them by default).

        The node reads ``value`` first, then ``extra_inputs`` ("" leaves an optional one empty). When
        ``value`` is a graph output made by a node, the new node takes over its name (the producer's
        output is renamed), so the graph's outputs keep their names and now come from the new node.
        """
        g = self.index.graphs.get(scope)
        if g is None or not g.defines(value):
            raise EditError(f"there is no value '{quoted_name(value)}' here.")
        schema = self._require_operator(op_type, domain)
        if schema is not None and schema.max_input < 1 + len(extra_inputs):
            most = schema.max_input
            takes = "no input" if most == 0 else f"at most {most} input{'s' if most != 1 else ''}"
            raise EditError(f"{op_type} takes {takes}, so it cannot go on an edge with {1 + len(extra_inputs)}.")
        producer = g.producer_of(value)
        late = max([g.producer_of(x) for x in extra_inputs if x] + [-1])  # the last maker of another input
        at = max(producer + 1, late + 1, 0)
        if consumers is None and value in g.output_names and producer >= 0:
            return self._insert_before_output(value, op_type, attributes, domain, name, scope, at, extra_inputs)
        targets = [self.locate(c) for c in consumers] if consumers is not None else [
            (scope, c) for c in g.consumers_of(value)]
        out = self.unique_value_name(f"{value}_{op_type.lower()}")
        node, ops = self._new_node(op_type, [value, *extra_inputs], [out], attributes, domain, name, scope, at)
        for s, c in targets:
            if s != scope:
                raise EditError("consumers must be in the same graph as the value.")
            if c <= late:
                raise EditError(f"{quoted_name(self.node_label(scope, c))} comes before the nodes making the new "
                                "node's other inputs; choose inputs made earlier.")
            cnode = self.node_proto(scope, c)
            for k, x in enumerate(cnode.input):
                if x == value:
                    ops.append(SetItem(self._node_path(scope, c + 1 if c >= at else c) + ("input",), k, out))
        self._run(f"Insert {op_type} on {value}", ops)
        return node.name

    def _insert_before_output(self, value: str, op_type: str, attributes: Mapping[str, Any] | None,
                              domain: str, name: str | None, scope: str, at: int,
                              extra_inputs: Sequence[str]) -> str:
        producer = self.index.graphs[scope].producer_of(value)
        before = self.unique_value_name(f"{value}_before_{op_type.lower()}")
        node, ops = self._new_node(op_type, [value, *extra_inputs], [before], attributes, domain, name, scope, at)
        node.input[0], node.output[0] = before, value  # the Insert op holds this very node
        k = list(self.node_proto(scope, producer).output).index(value)
        rename = SetItem(self._node_path(scope, producer) + ("output",), k, before)
        self._run(f"Insert {op_type} on {value}", [rename, *ops])
        return node.name

    def _new_node(self, op_type: str, inputs: Sequence[str], outputs: Sequence[str],
                  attributes: Mapping[str, Any] | None, domain: str, name: str | None, scope: str,
                  position: int | None) -> tuple[NodeProto, list[Op]]:
        schema = self._require_operator(op_type, domain)
        g = self.index.graphs.get(scope)
        if g is None:
            raise EditError(f"there is no graph '{quoted_name(scope)}'.")
        for x in inputs:
            if x and not g.defines(x):
                raise EditError(f"input '{quoted_name(x)}' is not defined in this graph.")
        if not outputs or len(set(outputs)) != len(outputs):
            raise EditError("a new node needs distinct output names.")
        for x in outputs:
            self._require_new_value(x)
        if name is None:
            name = self.unique_node_name(op_type)
        elif name in self._lookup():
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
        return node, self._import_ops(domain, op_type) + [Insert(self.scope_path(scope) + ("node",), position, node)]

    def set_input(self, node: NodeRef, index: int, value: str) -> None:
        """Make input ``index`` of a node read ``value`` ("" leaves an optional input empty)."""
        scope, i = self.locate(node)
        n = self.node_proto(scope, i)
        g = self.index.graphs[scope]
        if not 0 <= index <= len(n.input):
            raise EditError(f"{quoted_name(self.node_label(scope, i))} has no input {index} (it has {len(n.input)}).")
        if value and not g.defines(value):
            raise EditError(f"there is no value '{quoted_name(value)}' in this graph.")
        if value and self._downstream(scope, i, value):
            raise EditError(f"reading '{quoted_name(value)}' would make {quoted_name(self.node_label(scope, i))} depend on itself.")
        path = self._node_path(scope, i) + ("input",)
        op: Op = Insert(path, index, value) if index == len(n.input) else SetItem(path, index, value)
        self._run(f"Connect {self.node_label(scope, i)} input {index} to {value or '(none)'}", [op])

    def _downstream(self, scope: str, i: int, value: str) -> bool:
        """True if ``value`` is made by node ``i`` or by anything that depends on it."""
        g = self.index.graphs[scope]
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
    def _node_path(self, scope: str, i: int) -> tuple[str | int, ...]:
        return self.scope_path(scope) + ("node", i)

    def _require_operator(self, op_type: str, domain: str) -> Any:
        """The schema for ``op_type`` at the model's opset (None for local functions); EditError if unknown."""
        if any(f.name == op_type and f.domain == domain for f in self.model.functions):
            return None
        version = opset_version(self.model, domain)
        schema = schema_for(op_type, domain, version)
        if schema is None:
            where = f"domain '{domain}'" if normalize_domain(domain) else "the default domain"
            at = f" at opset {version}" if version is not None else ""
            raise EditError(f"there is no operator {quoted_name(op_type)} in {where}{at}.")
        return schema

    def _import_ops(self, domain: str, op_type: str) -> list[Op]:
        """Add an opset import for ``domain`` when the model has none (at the op's newest version)."""
        if opset_version(self.model, domain) is not None or any(f.domain == domain for f in self.model.functions):
            return []
        schema = schema_for(op_type, domain, None)
        version = schema.since_version if schema is not None else 1
        return [Insert(("opset_import",), len(self.model.opset_import), helper.make_opsetid(domain, version))]


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
