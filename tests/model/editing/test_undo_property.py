"""Property: after any sequence of edits, undoing all of them gives back the loaded bytes exactly."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from random_edits import EDITS

import onnxviz
from onnxviz.model.document import Document
from onnxviz.model.errors import EditError
from onnxviz.model.graph.index import topological_order


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
