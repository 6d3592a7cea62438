"""The diff of a real model and a copy with random nodes inserted, deleted and renamed reports exactly
those edits: one node_added per inserted node, one node_removed per deleted node, one node_changed
(name) per renamed node, and nothing else (issue 30: an inserted node shifted the alignment of the
nodes after it)."""

from __future__ import annotations

from dataclasses import dataclass

import onnx
import pytest
from conftest import TEST_DATA
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import helper

from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.matching import diff_models

EXPORTS = TEST_DATA / "exports"
MODELS = ("resnet_float", "bert_legacy", "bert_dynamo", "gpt2_legacy", "lstm_tagger")
INSERTED = ("Relu", "Neg", "Identity", "Sigmoid", "Tanh")
UNARY = frozenset({"Relu", "Erf", "Sigmoid", "Tanh", "Softmax", "Sqrt", "Neg", "Identity", "Cast", "Transpose",
                   "GlobalAveragePool", "Flatten", "LayerNormalization", "Not"})


@dataclass(frozen=True)
class Edit:
    kind: str      # "insert", "delete" or "rename"
    node: int      # the position the edit is made at (of the original model)
    op: str = ""   # an inserted node's op type


def _load(name: str) -> onnx.ModelProto:
    return onnx.load(EXPORTS / f"{name}.onnx")


def _consumers(model: onnx.ModelProto) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for k, n in enumerate(model.graph.node):
        for x in n.input:
            out.setdefault(x, []).append(k)
    return out


def _neighbours(model: onnx.ModelProto, k: int, consumers: dict[str, list[int]]) -> set[int]:
    made = {o: i for i, n in enumerate(model.graph.node) for o in n.output}
    node = model.graph.node[k]
    return {made[x] for x in node.input if x in made} | {c for o in node.output for c in consumers.get(o, [])}


def _deletable(model: onnx.ModelProto, k: int, outputs: set[str]) -> bool:
    """A node with one computed input and one output that is not a graph output (readers can read its input)."""
    n = model.graph.node[k]
    inits = {t.name for t in model.graph.initializer}
    return n.op_type in UNARY and len([x for x in n.input if x]) == 1 and n.input[0] not in inits \
        and len(n.output) == 1 and n.output[0] not in outputs and n.input[0] not in outputs


def _insertable(model: onnx.ModelProto, k: int, outputs: set[str], consumers: dict[str, list[int]]) -> bool:
    n = model.graph.node[k]
    return n.op_type != "Constant" and len(n.output) >= 1 and n.output[0] not in outputs \
        and bool(consumers.get(n.output[0]))


@st.composite
def edits(draw: st.DrawFn, name: str) -> list[Edit]:
    """Up to three edits on nodes that are neither the same nor neighbours (each edit then has one answer)."""
    model = _load(name)
    consumers = _consumers(model)
    outputs = {o.name for o in model.graph.output}
    count = len(model.graph.node)
    chosen: list[Edit] = []
    taken: set[int] = set()
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["insert", "delete", "rename"]))
        ok = {"insert": lambda k: _insertable(model, k, outputs, consumers),
              "delete": lambda k: _deletable(model, k, outputs),
              "rename": lambda k: model.graph.node[k].op_type != "Constant"}[kind]
        free = [k for k in range(count) if k not in taken and ok(k)]
        if not free:
            continue
        k = draw(st.sampled_from(free))
        taken |= {k} | _neighbours(model, k, consumers)
        chosen.append(Edit(kind, k, draw(st.sampled_from(INSERTED)) if kind == "insert" else ""))
    return chosen


def _apply(model: onnx.ModelProto, edits: list[Edit]) -> tuple[onnx.ModelProto, set[tuple[str, str | None, str | None]]]:
    """The edited copy and the differences the diff must report: (kind, A's node name, B's)."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    nodes = list(out.graph.node)
    expected: set[tuple[str, str | None, str | None]] = set()
    removed: list[onnx.NodeProto] = []
    inserted: list[tuple[onnx.NodeProto, onnx.NodeProto]] = []
    for k, e in enumerate(edits):
        node = nodes[e.node]
        label = node.name or f"{node.op_type}#{e.node}"
        if e.kind == "rename":
            node.name = f"renamed_{k}"
            expected.add(("node_changed", label, node.name))
        elif e.kind == "delete":
            for other in out.graph.node:
                other.input[:] = [node.input[0] if x == node.output[0] else x for x in other.input]
            removed.append(node)
            expected.add(("node_removed", label, None))
        else:
            made = f"inserted_{k}_out"
            for other in out.graph.node:
                other.input[:] = [made if x == node.output[0] else x for x in other.input]
            new = helper.make_node(e.op, [node.output[0]], [made], name=f"inserted_{k}")
            inserted.append((node, new))
    for node in removed:
        out.graph.node.remove(node)
    for after, new in inserted:
        out.graph.node.insert(list(out.graph.node).index(after) + 1, new)
        expected.add(("node_added", None, new.name))
    return out, expected


def _found(a: onnx.ModelProto, b: onnx.ModelProto) -> set[tuple[str, str | None, str | None]]:
    result = diff_models(ModelIndex(a), ModelIndex(b))
    return {(d.kind, d.a, d.b) for d in result.differences}


@pytest.mark.parametrize("name", MODELS)
def test_random_insertions_deletions_and_renames_are_reported_exactly(name: str) -> None:
    model = _load(name)

    @settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(edits(name))
    def check(chosen: list[Edit]) -> None:
        edited, expected = _apply(model, chosen)
        assert _found(model, edited) == expected

    check()


def test_a_relu_inserted_after_every_node_of_resnet_is_one_node_added() -> None:
    """Issue 30's case, every place: consumers rewired, no other name changed."""
    model = _load("resnet_float")
    consumers = _consumers(model)
    outputs = {o.name for o in model.graph.output}
    places = [k for k in range(len(model.graph.node)) if _insertable(model, k, outputs, consumers)]
    assert len(places) >= 12
    for k in places:
        edited, expected = _apply(model, [Edit("insert", k, "Relu")])
        assert _found(model, edited) == expected, model.graph.node[k].name


def test_a_model_with_a_dangling_input_does_not_differ_from_itself() -> None:
    model = _load("resnet_float")
    relu = next(n for n in model.graph.node if n.op_type == "Relu")
    relu.input.append("nowhere")  # read, but nothing defines it
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    result = diff_models(ModelIndex(model), ModelIndex(copy))
    assert result.identical and result.differences == []
