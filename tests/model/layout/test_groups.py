"""Name-scope grouping of node names and operator categories."""

from __future__ import annotations

import numpy as np
import pytest

from onnxviz.model.layout.categories import category_of
from onnxviz.model.layout.groups import MAX_DEPTH, GroupTree, build_groups, scope_levels
from onnxviz.model.layout.scene import Category


@pytest.mark.parametrize(("name", "levels"), [
    ("/encoder/layers.3/attn/MatMul", ["encoder", "layers.3", "attn"]),
    ("layers.3.attn.q.MatMul", ["layers.3", "attn", "q"]),
    ("layers.17.ln1/Sub", ["layers.17", "ln1"]),
    ("layers.17/attn/q/MatMul", ["layers.17", "attn", "q"]),
    ("model/block.0.1/conv/Conv", ["model", "block.0.1", "conv"]),
    ("Conv_0", []),
    ("", []),
    ("resnetv17_conv0_fwd", []),
    ("//a//b/", ["a"]),
    ("0.weight", ["0"]),
])
def test_scope_levels(name: str, levels: list[str]) -> None:
    assert scope_levels(name) == levels


def test_deep_names_are_capped() -> None:
    assert len(scope_levels("/".join(f"s{i}" for i in range(50)))) == MAX_DEPTH


def test_group_tree_nests_and_drops_single_node_groups() -> None:
    names = ["embed", "layers.0.ln1/Sub", "layers.0.ln1/Mul", "layers.0/attn/q/MatMul",
             "layers.0/attn/q/Reshape", "layers.0/attn/Softmax", "layers.0/Add", "layers.1/Add",
             "layers.1/Add_1", "head", ""]
    tree = build_groups(names)
    assert tree.paths == ["layers.0", "layers.0/ln1", "layers.0/attn", "layers.0/attn/q", "layers.1"]
    ids = tree.id_of
    assert tree.item_group.tolist() == [-1, ids["layers.0/ln1"], ids["layers.0/ln1"], ids["layers.0/attn/q"],
                                        ids["layers.0/attn/q"], ids["layers.0/attn"], ids["layers.0"],
                                        ids["layers.1"], ids["layers.1"], -1, -1]
    assert tree.count[ids["layers.0"]] == 6
    assert tree.count[ids["layers.0/attn"]] == 3
    assert sorted(tree.members(ids["layers.0/attn"]).tolist()) == [3, 4, 5]
    assert sorted(tree.members(ids["layers.1"]).tolist()) == [7, 8]
    chain = [ids["layers.0"], ids["layers.0/attn"], ids["layers.0/attn/q"]]
    assert tree.chain(ids["layers.0/attn/q"]) == chain
    assert tree.title(ids["layers.0/attn/q"]) == "q"


def test_a_group_of_one_node_is_not_a_group() -> None:
    tree = build_groups(["/a/b/Conv", "/a/c/Relu", "/d/Relu"])
    assert tree.paths == ["a"]
    assert tree.item_group.tolist() == [0, 0, -1]


def test_subtrees_are_contiguous_id_ranges() -> None:
    names = [f"l.{i % 4}/{'x' if i % 3 else 'y'}/Op_{i}" for i in range(60)]
    tree = build_groups(names)
    for g in range(tree.n_groups):
        inside = [h for h in range(tree.n_groups) if g in tree.chain(h)]
        assert inside == list(range(g, int(tree.end[g])))
        members = tree.members(g)
        assert np.all((tree.item_group[members] >= g) & (tree.item_group[members] < tree.end[g]))
        assert len(members) == tree.count[g]


@pytest.mark.parametrize(("op", "domain", "local", "expected"), [
    ("Conv", "", False, Category.CONV),
    ("MatMul", "", False, Category.CONV),
    ("Relu", "", False, Category.ACTIVATION),
    ("LayerNormalization", "", False, Category.NORMALIZATION),
    ("MaxPool", "", False, Category.POOLING),
    ("Reshape", "", False, Category.TENSOR),
    ("Add", "", False, Category.ELEMENTWISE),
    ("ReduceMean", "", False, Category.REDUCTION),
    ("If", "", False, Category.CONTROL),
    ("MyBlock", "local", True, Category.CONTROL),
    ("QuantizeLinear", "", False, Category.QUANTIZATION),
    ("Attention", "com.microsoft", False, Category.ATTENTION),
    ("Constant", "", False, Category.CONSTANT),
    ("Frobnicate", "my.company", False, Category.CUSTOM),
    ("Frobnicate", "", False, Category.OTHER),
])
def test_categories(op: str, domain: str, local: bool, expected: Category) -> None:
    assert category_of(op, domain, local) == expected


def assert_grouped_as_parsed_alone(tree: GroupTree, names: list[str]) -> None:
    """Each name sits in the group of its own parsed path, or in the deepest one kept of it."""
    for i, name in enumerate(names):
        g = int(tree.item_group[i])
        path = tree.paths[g] if g >= 0 else ""
        full = "/".join(scope_levels(name))
        assert full == path or (full.startswith(path) and full not in tree.id_of), name


def test_tree_matches_per_name_parsing() -> None:
    names = ["a/b/", "//a//b/", "/Conv", "layers.3", "block.0.1", "block.0.1.x", "a/b/c", "x.y/z.w/Op",
             "plain", "", "a/b/d", "layers.3.q", "layers.3.k"]
    assert_grouped_as_parsed_alone(build_groups(names), names)
