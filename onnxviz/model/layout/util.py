"""Small numpy helpers of the layout."""

from __future__ import annotations

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


def unique_rows(rows: np.ndarray) -> np.ndarray:
    """Distinct rows of a small-int (k, 3) array, sorted."""
    if len(rows) == 0:
        return rows.reshape(0, 3)
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


def csr(keys: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Edge ids grouped by ``keys`` (order) and where each key's run starts (ptr)."""
    order = np.argsort(keys, kind="stable")
    ptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(keys, minlength=n), out=ptr[1:])
    return order, ptr


def gather(order: np.ndarray, ptr: np.ndarray, items: np.ndarray) -> np.ndarray:
    """Concatenated runs of ``items`` from a :func:`csr` index."""
    starts = ptr[items]
    lens = ptr[items + 1] - starts
    total = int(lens.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    offsets = np.repeat(starts - (np.cumsum(lens) - lens), lens) + np.arange(total)
    return order[offsets]


def unique_small(values: np.ndarray) -> np.ndarray:
    """``np.unique`` without its fixed overhead for the short arrays of one level."""
    if len(values) > 256:
        return distinct(values)
    return np.array(sorted(set(values.tolist())), values.dtype)
