"""The layout's numpy helpers give what numpy's own functions give, on the short arrays of one level (where they
take Python's sets) as on long ones."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from conftest import TEST_DATA
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.layout.engine import GraphLayout
from onnxviz.model.layout.groups import MAX_DEPTH
from onnxviz.model.layout.util import SMALL_ROWS, distinct_ids, float32_points, tolist_in_slices, unique_rows
from onnxviz.model.layout.wiring import Wiring

EXPORTS = TEST_DATA / "exports"
SIZES = st.sampled_from([0, 1, 2, 5, SMALL_ROWS, SMALL_ROWS + 1, 300])


@given(SIZES.flatmap(lambda n: hnp.arrays(np.int64, (n, 3), elements=st.integers(0, 9))))
def test_unique_rows_are_numpys_distinct_sorted_rows(rows: np.ndarray) -> None:
    found = unique_rows(rows)
    assert found.dtype == rows.dtype and found.shape[1] == 3
    np.testing.assert_array_equal(found, np.unique(rows, axis=0).reshape(-1, 3))


@given(SIZES.flatmap(lambda n: hnp.arrays(np.float64, n, elements=st.sampled_from([-1.5, -0.0, 0.0, 2.0, np.inf]))))
def test_distinct_ids_are_numpys_unique_index_and_inverse(values: np.ndarray) -> None:
    ids, first = distinct_ids(values)
    _, expected_first, expected_ids = np.unique(values, return_index=True, return_inverse=True)
    np.testing.assert_array_equal(ids, expected_ids.reshape(-1))
    np.testing.assert_array_equal(first, expected_first)


@given(st.sampled_from([0, 1, 6, 7, 13, 40]).flatmap(
    lambda n: hnp.arrays(np.float64, (n, 2), elements=st.floats(-1e6, 1e6, width=64))))
def test_passes_in_slices_give_what_one_pass_gives(points: np.ndarray) -> None:
    """Slices of 6 rows here (20,000 in the layout): the same lists and float32 points as one call."""
    assert tolist_in_slices(points, rows=6) == points.tolist()
    assert tolist_in_slices(points[:, 0], rows=6) == points[:, 0].tolist()
    pairs = [tuple(p) for p in points.tolist()]
    expected = np.array(pairs, np.float32).reshape(-1, 2)
    found = float32_points(pairs, rows=6)
    assert found.dtype == np.float32 and found.shape == expected.shape
    np.testing.assert_array_equal(found, expected)


def _plain_wiring(layout: GraphLayout, g: int) -> Wiring:
    """Level ``g``'s wiring by its definition, one level in Python: its units are the codes of the items inside it
    (an item, or the child group holding it) in the order of their first item; an entry (exit) port per value that
    comes in from (goes out to) an item outside; an edge per distinct (source row, target row, value), sorted."""
    sg, tree = layout.graph, layout.tree
    members = set(tree.members(g).tolist())
    col = int(tree.depth[g]) + 1 if g >= 0 else 0

    def code(item: int) -> int:
        child = int(tree.ancestors[tree.item_group[item], col]) if col < MAX_DEPTH else -1
        return sg.n_items + child if child >= 0 else item
    units = list(dict.fromkeys(code(m) for m in sorted(members)))
    edges = [(a, b, v) for a, b, v in zip(sg.e_src.tolist(), sg.e_dst.tolist(), sg.e_val.tolist(), strict=True)
             if a in members or b in members]
    in_vals = sorted({v for a, _b, v in edges if a not in members})
    out_vals = sorted({v for _a, b, v in edges if b not in members})
    row_of = {c: len(in_vals) + k for k, c in enumerate(units)}
    in_port = {v: k for k, v in enumerate(in_vals)}
    out_port = {v: len(in_vals) + len(units) + k for k, v in enumerate(out_vals)}
    rows = {(row_of[code(a)] if a in members else in_port[v], row_of[code(b)] if b in members else out_port[v], v)
            for a, b, v in edges}
    triples = sorted(r for r in rows if r[0] != r[1])
    return Wiring(np.array(units, np.int64), np.array(in_vals, np.int64), np.array(out_vals, np.int64), in_port,
                  out_port, np.array(triples, np.int64).reshape(-1, 3))


@pytest.mark.parametrize("name", ["bert_legacy.onnx", "gpt2_legacy.onnx", "resnet_int8_qdq.onnx", "vad_if.onnx",
                                  "whisper_legacy.onnx", "lstm_tagger.onnx"])
def test_every_levels_wiring_in_one_pass_is_each_levels_by_its_definition(name: str) -> None:
    """Every level of the exports, all groups open, wired in one pass over arrays (and, in another layout, one
    level at a time): the units, ports and edges of each level by their definition, in the same order."""
    index = ModelIndex(onnx.load(str(EXPORTS / name), load_external_data=False))
    full = GraphLayout(index, expanded=GraphLayout(index).tree.paths)
    levels = [-1, *sorted(full.expansion.opened)]
    full.wiring.wire_all(levels)
    alone = GraphLayout(index, expanded=full.tree.paths)
    for g in levels:
        expected = _plain_wiring(full, g)
        for ours in (full.wiring.of(g), alone.wiring.of(g)):
            for a, b in ((ours.units, expected.units), (ours.in_vals, expected.in_vals),
                         (ours.out_vals, expected.out_vals), (ours.triples, expected.triples)):
                assert a.dtype == b.dtype
                np.testing.assert_array_equal(a, b)
            for ports, plain in ((ours.in_port, expected.in_port), (ours.out_port, expected.out_port)):
                assert list(ports.items()) == list(plain.items())
