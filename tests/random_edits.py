"""Random edits of every kind for the property tests (undo, index refresh, the save state machine): each
edit takes a document and ``pick(n)``, a number in range(n) drawn by the test, so hypothesis can shrink a
sequence of them."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from onnx import AttributeProto, numpy_helper

from onnxviz.model.document import Document

Pick = Callable[[int], int]  # pick(n) -> a number in range(n)


def _attr_edit(doc: Document, pick: Pick) -> None:
    holders = [i for i, n in enumerate(doc.model.graph.node)
               if any(a.type in (AttributeProto.INT, AttributeProto.INTS) for a in n.attribute)]
    i = holders[pick(len(holders))]
    attrs = [a for a in doc.model.graph.node[i].attribute if a.type in (AttributeProto.INT, AttributeProto.INTS)]
    a = attrs[pick(len(attrs))]
    value = pick(3) if a.type == AttributeProto.INT else [pick(3) for _ in a.ints]
    doc.edit.set_attribute(i, a.name, value)


def _remove_attr(doc: Document, pick: Pick) -> None:
    holders = [i for i, n in enumerate(doc.model.graph.node) if n.attribute]
    i = holders[pick(len(holders))]
    doc.edit.remove_attribute(i, doc.model.graph.node[i].attribute[0].name)


def _values(doc: Document) -> list[str]:
    return sorted(v for v in doc.index.main.producer if v)


def _replace_weight(doc: Document, pick: Pick) -> None:
    inits = doc.model.graph.initializer
    t = inits[pick(len(inits))]
    doc.edit.replace_initializer(t.name, numpy_helper.to_array(t) + np.ones((), numpy_helper.to_array(t).dtype))


def _constant(doc: Document, pick: Pick) -> None:
    consts = [i for i, n in enumerate(doc.model.graph.node) if n.op_type == "Constant"]
    if consts:
        doc.edit.constant_to_initializer(consts[pick(len(consts))])
    else:
        inits = doc.model.graph.initializer
        doc.edit.initializer_to_constant(inits[pick(len(inits))].name)


def _input_dims(doc: Document) -> tuple[str, int]:
    inputs = [v for v in doc.model.graph.input if v.type.tensor_type.HasField("shape")]
    return inputs[0].name, len(inputs[0].type.tensor_type.shape.dim)


def _set_dimension(doc: Document, pick: Pick) -> None:
    name, rank = _input_dims(doc)
    doc.edit.set_dimension(name, pick(rank), [1, 2, "n", "batch", None][pick(5)])


def _literal_input(doc: Document, pick: Pick) -> None:
    literal = [2.0, [1, 2], np.float32(0.5), np.zeros((2, 2), np.float64)][pick(4)]
    kind = ("initializer", "constant")[pick(2)]
    if pick(2):
        doc.edit.insert_on_value(_values(doc)[pick(len(_values(doc)))], "Mul", extra_inputs=[literal], literals=kind)
    else:
        doc.edit.set_input(pick(len(doc.model.graph.node)), 1, literal, literals=kind)


def _new_tensor(doc: Document, pick: Pick) -> None:
    feed = (pick(len(doc.model.graph.node)), pick(3)) if pick(2) else None
    add = doc.edit.insert_constant if pick(2) else doc.edit.add_initializer
    add(f"t{pick(1000)}", [[0.5, 1.0], [1, 2], 3][pick(3)], ["float32", "int64", None][pick(3)], feed=feed)


def _delete_branch(doc: Document, pick: Pick) -> None:
    orphans = ("keep", "remove", "repoint")[pick(3)]
    remove = doc.edit.remove_node_with_outputs if pick(2) else doc.edit.remove_node_with_inputs
    remove(pick(len(doc.model.graph.node)), orphans=orphans)  # type: ignore[arg-type]


def _cast_on(doc: Document, pick: Pick) -> None:
    """A Cast whose type then changes: what follows is restated."""
    value = _values(doc)[pick(len(_values(doc)))]
    name = doc.edit.insert_on_value(value, "Cast", {"to": [1, 10, 11][pick(3)]})
    doc.edit.set_attribute(name, "to", [1, 10, 11][pick(3)])


EDITS: list[Callable[[Document, Pick], object]] = [
    _set_dimension,
    _literal_input,
    _new_tensor,
    _delete_branch,
    _cast_on,
    lambda d, p: d.edit.set_op_type(p(len(d.model.graph.node)), ["Relu", "Sigmoid", "Shape"][p(3)]),
    lambda d, p: d.edit.replace_initializer(d.model.graph.initializer[p(len(d.model.graph.initializer))].name,
                                            np.zeros((p(3) + 1, 2), np.float32), force=True),
    lambda d, p: d.edit.set_value_type(d.model.graph.input[0].name, dtype=["float32", "float16"][p(2)]),
    lambda d, p: d.edit.insert_on_value(_values(d)[p(len(_values(d)))], "Add",
                                        extra_inputs=[_values(d)[p(len(_values(d)))]]),
    _attr_edit,
    _remove_attr,
    _replace_weight,
    _constant,
    lambda d, p: d.edit.rename_node(p(len(d.model.graph.node)), f"node{p(1000)}"),
    lambda d, p: d.edit.rename_value(_values(d)[p(len(_values(d)))], f"value{p(1000)}"),
    lambda d, p: d.edit.remove_node(p(len(d.model.graph.node)), reconnect=bool(p(2))),
    lambda d, p: d.edit.insert_on_value(_values(d)[p(len(_values(d)))], "Relu", name=f"ins{p(1000)}"),
    lambda d, p: d.edit.set_input(p(len(d.model.graph.node)), 0, _values(d)[p(len(_values(d)))]),
    lambda d, p: d.edit.add_output(_values(d)[p(len(_values(d)))]),
    lambda d, p: d.edit.set_metadata(f"k{p(3)}", f"v{p(3)}"),
    lambda d, p: d.edit.remove_metadata(d.model.metadata_props[p(len(d.model.metadata_props))].key),
    lambda d, p: d.edit.set_model_info(producer_name=f"p{p(5)}", model_version=p(5)),
    lambda d, p: d.edit.add_input(f"in{p(100)}", "int64", [p(4), "n"]),
    lambda d, p: d.edit.set_value_type(d.model.graph.input[0].name, shape=[p(3) or None, "c", 8, 8]),
    lambda d, p: d.edit.insert_node("Neg", [_values(d)[p(len(_values(d)))]], [f"neg{p(1000)}"], position=0),
    lambda d, p: d.edit.remove_unused(),
    lambda d, p: d.edit.sort_topologically(),
]
