"""The layout's numpy helpers give what numpy's own functions give, on the short arrays of one level (where they
take Python's sets) as on long ones."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from onnxviz.model.layout.engine import _first_by_priority
from onnxviz.model.layout.util import SMALL_ROWS, unique_rows

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
    assert _first_by_priority(members, codes).tolist() == expected
