"""What the layout reads of a scope, built with few look-ups per value: edges of values that are also graph
outputs, group trees parsed prefix by prefix (deep and freak names included) that match each name parsed
alone."""

from __future__ import annotations

import pytest
from onnx import TensorProto, helper
from test_groups import assert_grouped_as_parsed_alone

from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.layout.engine import GraphLayout
from onnxviz.model.layout.groups import MAX_DEPTH, WALK_CHARS, build_groups
from onnxviz.model.layout.scene import BoxKind
from onnxviz.model.layout.scope import build_scope_graph


def test_an_output_read_by_a_node_is_one_value_on_both_edges() -> None:
    f = TensorProto.FLOAT
    nodes = [helper.make_node("Relu", ["x"], ["mid"], name="first"),
             helper.make_node("Neg", ["mid"], ["y"], name="second")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", f, [2])],
                              [helper.make_tensor_value_info("mid", f, [2]), helper.make_tensor_value_info("y", f, [2])])
    index = ModelIndex(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]))
    sg = build_scope_graph(index, "")
    assert sorted(sg.values) == ["mid", "x", "y"]   # each value once
    mid = sg.values.index("mid")
    ends = sorted((sg.item_kind[d], sg.item_node[d]) for s, d, v in zip(sg.e_src, sg.e_dst, sg.e_val, strict=True)
                  if v == mid)
    assert ends == [(BoxKind.OP, 1), (BoxKind.OUTPUT, -1)]   # into the Neg and into the output pill
    scene = GraphLayout(index).build()
    assert scene.edge_value.count("mid") == 2


def _parts(k: int, stem: str) -> str:
    return "/".join(f"{stem}.{i}" if i % 3 else f"{stem}{i}" for i in range(k))


@pytest.mark.parametrize(("depth", "stem_chars"), [(3, 1), (MAX_DEPTH + 2, 1), (40, 1), (200, 1), (3, WALK_CHARS // 4),
                                                   (MAX_DEPTH, WALK_CHARS // 8)])
def test_deep_names_group_as_each_name_parsed_alone(depth: int, stem_chars: int) -> None:
    names = []
    for letter in ("a", "b"):
        stem = letter * stem_chars
        base = _parts(depth, stem)
        names += [f"{base}/Op{i}" for i in range(3)] + [f"{base}//x/Op", f"/{base}/y.1/Op", f"{base}/", "//" * depth]
    tree = build_groups(names)
    assert_grouped_as_parsed_alone(tree, names)
    assert all(tree.depth[g] < MAX_DEPTH for g in map(int, tree.item_group) if g >= 0)
    for g in range(tree.n_groups):   # pre-order: a group's subtree is the id range [g, end)
        inside = [h for h in range(tree.n_groups) if g in tree.chain(h)]
        assert inside == list(range(g, int(tree.end[g])))
        assert len(tree.members(g)) == tree.count[g]
