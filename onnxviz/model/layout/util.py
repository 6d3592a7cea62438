"""Small numpy helpers of the layout."""

from __future__ import annotations

from typing import Any

import numpy as np


def distinct(values: np.ndarray) -> np.ndarray:
    """The sorted distinct values of a 1-D integer array, as ``np.unique(values)``, which imports numpy.ma on its
    first call (~40 ms of the window's start)."""
    ordered = np.sort(values)
    if len(ordered) < 2:
        return ordered
    keep = np.empty(len(ordered), bool)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]


PASS_ROWS = 20_000  # rows per slice of a pass in C over a whole scene (a few milliseconds of held GIL each)


def tolist_in_slices(values: np.ndarray, rows: int = PASS_ROWS) -> list[Any]:
    """``values.tolist()``, a slice of rows at a time: one call over a 123k-node scene's million route points held
    the GIL ~0.3 s, while the layout thread's GUI thread waited; between slices the other threads get their turn."""
    if len(values) <= rows:
        return values.tolist()  # type: ignore[no-any-return]
    found: list[Any] = []
    for start in range(0, len(values), rows):
        found += values[start:start + rows].tolist()
    return found


def float32_points(points: list[tuple[float, float]], rows: int = PASS_ROWS) -> np.ndarray:
    """``np.array(points, np.float32).reshape(-1, 2)``, a slice of points at a time (see :func:`tolist_in_slices`)."""
    if len(points) <= rows:
        return np.array(points, np.float32).reshape(-1, 2)
    return np.concatenate([np.array(points[start:start + rows], np.float32).reshape(-1, 2)
                           for start in range(0, len(points), rows)])


SMALL_ROWS = 64  # up to this many rows, Python's sets beat numpy's fixed cost per call (a level of a few boxes)


def unique_rows(rows: np.ndarray) -> np.ndarray:
    """Distinct rows of a small-int (k, 3) array (entries not negative), sorted."""
    if len(rows) == 0:
        return rows.reshape(0, 3)
    if len(rows) <= SMALL_ROWS:
        return np.array(sorted(set(map(tuple, rows.tolist()))), rows.dtype).reshape(-1, 3)
    hi = rows.max(axis=0) + 1
    keys = (rows[:, 0] * hi[1] + rows[:, 1]) * hi[2] + rows[:, 2]
    keys = distinct(keys)
    c = keys % hi[2]
    ab = keys // hi[2]
    return np.stack([ab // hi[1], ab % hi[1], c], 1)


def unique_pairs(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """The distinct pairs of two equally long non-negative integer arrays, as sorted (k, 2) rows: what
    ``np.unique(np.stack([first, second], 1), axis=0)`` gives."""
    if len(first) == 0:
        return np.zeros((0, 2), np.int64)
    span = int(second.max()) + 1
    keys = distinct(first.astype(np.int64) * span + second)
    return np.stack([keys // span, keys % span], 1)


def distinct_ids(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each value's place among the sorted distinct values of a 1-D array, and the first position of each distinct
    value in it: what ``np.unique(values, return_index=True, return_inverse=True)`` gives after the values."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    new = np.ones(len(values), bool)
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    ids = np.empty(len(values), np.int64)
    ids[order] = np.cumsum(new) - 1
    return ids, order[new]


def runs(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The runs ``lo[j]..hi[j]-1`` one after another: each position's run ``j``, and the position."""
    lengths = hi - lo
    run = np.repeat(np.arange(len(lo)), lengths)
    starts = np.cumsum(lengths) - lengths
    return run, np.arange(int(lengths.sum())) + (lo - starts)[run]
