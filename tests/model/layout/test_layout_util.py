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
from onnxviz.model.layout import wiring
from onnxviz.model.layout.engine import GraphLayout
from onnxviz.model.layout.util import SMALL_ROWS, unique_rows
from onnxviz.model.layout.wiring import first_by_priority

EXPORTS = TEST_DATA / "exports"
SIZES = st.sampled_from([0, 1, 2, 5, SMALL_ROWS, SMALL_ROWS + 1, 300])


@given(SIZES.flatmap(lambda n: hnp.arrays(np.int64, (n, 3), elements=st.integers(0, 9))))
def test_unique_rows_are_numpys_distinct_sorted_rows(rows: np.ndarray) -> None:
    found = unique_rows(rows)
    assert found.dtype == rows.dtype and found.shape[1] == 3
    np.testing.assert_array_equal(found, np.unique(rows, axis=0).reshape(-1, 3))


@given(SIZES.flatmap(lambda n: st.tuples(st.permutations(list(range(n))),
                                         st.lists(st.integers(0, 20), min_size=n, max_size=n))))
def test_units_come_in_the_order_of_their_first_member(case: tuple[list[int], list[int]]) -> None:
    members, codes = np.array(case[0], np.int64), np.array(case[1], np.int64)
    first: dict[int, int] = {}
    for m, c in zip(members.tolist(), codes.tolist(), strict=True):
        first[c] = min(m, first.get(c, m))
    expected = sorted(first, key=first.__getitem__)
    assert first_by_priority(members, codes).tolist() == expected


@pytest.mark.parametrize("name", ["bert_legacy.onnx", "gpt2_legacy.onnx", "resnet_int8_qdq.onnx", "vad_if.onnx"])
def test_a_small_levels_wiring_in_python_is_numpys(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every level of the exports, all groups open: the units, ports and edges of the Python path for small
    levels are those of the numpy path."""
    index = ModelIndex(onnx.load(str(EXPORTS / name), load_external_data=False))
    layout = GraphLayout(index)
    full = GraphLayout(index, expanded=layout.tree.paths)
    levels = [-1, *sorted(full.expansion.opened)]
    python = [full.wiring.wire(g) for g in levels]
    monkeypatch.setattr(wiring, "SMALL_ROWS", -1)
    small = 0
    for g, ours in zip(levels, python, strict=True):
        theirs = full.wiring.wire(g)
        small += len(full.tree.members(g)) <= SMALL_ROWS
        for a, b in ((ours.units, theirs.units), (ours.in_vals, theirs.in_vals), (ours.out_vals, theirs.out_vals),
                     (ours.triples, theirs.triples)):
            np.testing.assert_array_equal(a, b)
        assert (ours.row_of, ours.in_port, ours.out_port, ours.edge_of) == \
            (theirs.row_of, theirs.in_port, theirs.out_port, theirs.edge_of)
    assert small > 0
