"""Property: after any sequence of edits, undoing all of them gives back the loaded bytes exactly."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import AttributeProto, numpy_helper

import onnxviz
from onnxviz.model.document import Document
from onnxviz.model.errors import EditError
from onnxviz.model.graph.index import topological_order

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


def _run_sequence(doc: Document, steps: list[tuple[int, list[int]]]) -> None:
    for kind, numbers in steps:
        it = iter(numbers)

        def pick(n: int, it: object = it) -> int:
            return next(it) % n if n > 0 else 0  # type: ignore[call-overload]

        if kind >= len(EDITS):  # undo or redo in the middle: later edits drop the redo tail
            doc.undo() if kind == len(EDITS) else doc.redo()
            continue
        try:
            EDITS[kind](doc, pick)
        except (EditError, IndexError, ZeroDivisionError):
            pass  # a refused or impossible edit changes nothing; the property still has to hold
        assert not _cyclic(doc), f"edit kind {kind} made a cycle"  # whatever edit: none makes one


def _cyclic(doc: Document) -> list[int]:
    g = doc.model.graph
    producer = {x: i for i, n in enumerate(g.node) for x in n.output if x}
    return topological_order(list(g.node), producer)[1]


STEPS = st.lists(st.tuples(st.integers(0, len(EDITS) + 1), st.lists(st.integers(0, 10**6), min_size=8,
                                                                     max_size=8)), min_size=1, max_size=12)


def _check_undo_all(path: Path, steps: list[tuple[int, list[int]]]) -> None:
    doc = onnxviz.open(path)
    loaded = path.read_bytes()
    assert doc.model.SerializeToString() == loaded
    _run_sequence(doc, steps)
    while doc.undo_stack.can_redo:
        doc.redo()
    edited = doc.model.SerializeToString()
    n = doc.undo_stack.index
    for _ in range(n):
        doc.undo()
    assert doc.model.SerializeToString() == loaded
    assert not doc.is_dirty
    for _ in range(n):
        doc.redo()
    assert doc.model.SerializeToString() == edited
    for _ in range(n):
        doc.undo()
    assert doc.model.SerializeToString() == loaded
    assert doc.node_ids == [f"#{i}" for i in range(len(doc.model.graph.node))]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=STEPS)
def test_undo_all_restores_example_bytes(example_path: Path, steps: list[tuple[int, list[int]]]) -> None:
    _check_undo_all(example_path, steps)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=STEPS)
def test_undo_all_restores_synth_bytes(synth_small: Path, steps: list[tuple[int, list[int]]]) -> None:
    _check_undo_all(synth_small, steps)


def test_opset_conversion_undo_restores_bytes(example_path: Path) -> None:
    doc = onnxviz.open(example_path)
    doc.edit.set_metadata("k", "v")
    doc.edit.convert_opset(15)
    doc.edit.rename_node(0, "after_conversion")
    for _ in range(3):
        doc.undo()
    assert doc.model.SerializeToString() == example_path.read_bytes()


@pytest.mark.parametrize("kind", range(len(EDITS)))
def test_every_edit_kind_can_run(example_path: Path, kind: int) -> None:
    """Guards the property test against edit kinds that would always be refused."""
    doc = onnxviz.open(example_path)
    doc.edit.insert_node("Relu", ["stem.pool"], ["dead"], position=0)  # unused, and out of order
    for seed in range(40):
        try:
            EDITS[kind](doc, lambda n, s=seed: (s * 7919) % n if n else 0)
        except EditError:
            continue
        if doc.undo_stack.index > 1:
            return
    pytest.fail(f"edit kind {kind} never applied")
