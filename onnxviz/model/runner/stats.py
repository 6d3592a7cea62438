"""Statistics of every captured value, fast enough for 100k values.

Large values go through :func:`onnxviz.model.graph.tensors.stats_of_array` one by one.
Small ones (most values of a big graph) are summarized many at a time: one
concatenated float64 buffer, segment reductions (``np.add.reduceat`` and
friends) and one ``np.bincount`` for all their histograms. The result is the
same :class:`~onnxviz.model.graph.tensors.TensorStats` (tests compare the two paths).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from typing import Any

import numpy as np

from onnxviz.model.graph.tensors import DEFAULT_BINS, TensorStats, stats_of_array

SMALL = 1 << 16           # values with at most this many elements are summarized in batches
BATCH_ELEMENTS = 1 << 18  # elements per concatenated batch: 2 MiB of float64 per temporary, which the allocator
                          # reuses (32 MiB ones came fresh from the kernel each time: 7x the CPU of light_resnet50's)
CHUNK = 1 << 20           # elements per step of the large-float path
THREADS = 2


def summarize(values: dict[str, np.ndarray], bins: int = DEFAULT_BINS) -> dict[str, TensorStats]:
    """TensorStats of every value, keyed like ``values``."""
    small = [n for n, a in values.items() if 0 < a.size <= SMALL and a.dtype.kind in "biuf"]
    chosen = set(small)
    large = [n for n in values if n not in chosen]
    buffers = threading.local()  # each thread's scratch buffers (see _Scratch), gone with this call
    with ThreadPoolExecutor(THREADS) as pool:  # numpy releases the GIL in its loops
        each = pool.map(lambda n: _large_stats(n, values[n], bins, _Scratch.of(buffers)), large)
        batches = [pool.submit(_batch_stats, batch, values, bins) for batch in _batches(small, values)]
        out = dict(zip(large, each, strict=True))
        for batch in batches:
            out.update(batch.result())
    return {name: out[name] for name in values}


def _large_stats(name: str, array: np.ndarray, bins: int, scratch: _Scratch) -> TensorStats:
    """float32/float64 in their own precision (min/max/sum are SIMD loops, several times faster than
    converting every chunk to float64); everything else through stats_of_array."""
    if array.dtype not in (np.float32, np.float64) or array.size == 0:
        return stats_of_array(array, name, bins=bins)
    flat = array.reshape(-1)
    m = _Moments()
    for start in range(0, flat.size, CHUNK):
        m.add(flat[start:start + CHUNK], scratch)
    base: dict[str, Any] = dict(zero_fraction=m.zeros / flat.size, nan_count=m.nans, inf_count=m.infs)
    if m.count:
        counts, edges = _chunked_histogram(flat, m.low, m.high, bins, m.nans + m.infs > 0, scratch)
        base.update(minimum=m.low, maximum=m.high, mean=m.mean, std=float(np.sqrt(m.m2 / m.count)),
                    hist_counts=counts, hist_edges=edges)
    return TensorStats(name, _dtype_name(array.dtype), tuple(array.shape), int(array.size), int(array.nbytes),
                       "in memory", True, **base)


class _Scratch:
    """One thread's buffers of a chunk, which every step of the values it summarizes writes into: a temporary
    per step (or per value) is memory fresh from the kernel, whose zeroing cost more than the arithmetic."""

    def __init__(self) -> None:
        self.wide = np.empty(CHUNK, np.float64)  # a chunk's deviations (in any float type), then its positions
        self.slots = np.empty(CHUNK, np.intp)

    @classmethod
    def of(cls, buffers: threading.local) -> _Scratch:
        """The calling thread's scratch in ``buffers``, made on its first use."""
        if not hasattr(buffers, "scratch"):
            buffers.scratch = cls()
        scratch: _Scratch = buffers.scratch
        return scratch


class _Moments:
    """Count, mean and sum of squared deviations merged chunk by chunk (Chan et al.)."""

    def __init__(self) -> None:
        self.count, self.mean, self.m2 = 0, 0.0, 0.0
        self.low, self.high = np.inf, -np.inf
        self.zeros = self.nans = self.infs = 0

    def add(self, chunk: np.ndarray, scratch: _Scratch) -> None:
        low, high = chunk.min(), chunk.max()  # NaN and Inf show up here, so finite chunks skip the masks
        if not (np.isfinite(low) and np.isfinite(high)):
            finite = np.isfinite(chunk)
            nans = int(np.count_nonzero(np.isnan(chunk)))
            self.nans += nans
            self.infs += chunk.size - int(np.count_nonzero(finite)) - nans
            chunk = chunk[finite]
            if chunk.size == 0:
                return
            low, high = chunk.min(), chunk.max()
        k = chunk.size
        self.zeros += k - int(np.count_nonzero(chunk))
        mean = float(np.sum(chunk, dtype=np.float64)) / k
        wide = max(abs(float(low)), abs(float(high))) > 1e12  # a million squares could overflow float32
        into = scratch.wide[:k] if wide else scratch.wide.view(chunk.dtype)[:k]
        deviation = np.subtract(chunk, np.float64(mean) if wide else mean, out=into)
        m2 = float(np.add.reduce(np.square(deviation, out=deviation)))  # pairwise summation
        total = self.count + k
        delta = mean - self.mean
        self.mean += delta * k / total
        self.m2 += m2 + delta * delta * self.count * k / total
        self.count = total
        self.low, self.high = min(self.low, float(low)), max(self.high, float(high))


def _chunked_histogram(flat: np.ndarray, low: float, high: float, bins: int, has_nonfinite: bool,
                       scratch: _Scratch) -> tuple[np.ndarray, np.ndarray]:
    """Counts of ``bins`` equal bins from ``low`` to ``high`` (the last one closed), positions in float64."""
    if low == high:
        pad = max(0.5, abs(low) * 1e-6)
        low, high = low - pad, high + pad
    scale = bins / (high - low)
    counts = np.zeros(bins + 1, np.int64)
    for start in range(0, flat.size, CHUNK):
        chunk = flat[start:start + CHUNK]
        if has_nonfinite:
            chunk = chunk[np.isfinite(chunk)]
        position = np.subtract(chunk, np.float64(low), out=scratch.wide[:chunk.size])
        # from 0 to bins (high itself, or a rounding above it, is bins), truncated: the floor of a number >= 0
        slots = np.multiply(position, scale, out=scratch.slots[:chunk.size], casting="unsafe")
        counts += np.bincount(slots, minlength=bins + 1)
    counts[bins - 1] += counts[bins]  # the last bin holds its upper edge
    return counts[:bins], np.linspace(low, high, bins + 1)


def _batches(names: list[str], values: dict[str, np.ndarray]) -> Iterator[list[str]]:
    batch: list[str] = []
    total = 0
    for name in names:
        batch.append(name)
        total += values[name].size
        if total >= BATCH_ELEMENTS:
            yield batch
            batch, total = [], 0
    if batch:
        yield batch


def _batch_stats(names: list[str], values: dict[str, np.ndarray], bins: int) -> dict[str, TensorStats]:
    arrays = [values[n] for n in names]
    sizes = np.array([a.size for a in arrays], np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    buf = np.concatenate([np.asarray(a, np.float64).reshape(-1) for a in arrays])
    finite = np.isfinite(buf)
    nans = np.add.reduceat(np.isnan(buf), starts)
    counts = np.add.reduceat(finite, starts)
    infs = sizes - counts - nans
    zeros = np.add.reduceat(buf == 0, starts)
    clean = np.where(finite, buf, 0.0)
    have = counts > 0
    means = np.add.reduceat(clean, starts) / np.maximum(counts, 1)
    deviation = np.where(finite, buf - np.repeat(means, sizes), 0.0)
    stds = np.sqrt(np.add.reduceat(deviation * deviation, starts) / np.maximum(counts, 1))
    lows = np.minimum.reduceat(np.where(finite, buf, np.inf), starts)
    highs = np.maximum.reduceat(np.where(finite, buf, -np.inf), starts)
    hists, edges = _histograms(buf, finite, sizes, lows, highs, have, bins)
    out = {}
    for k, (name, array) in enumerate(zip(names, arrays, strict=True)):
        numbers: dict[str, Any] = {}
        if have[k]:
            numbers = dict(minimum=float(lows[k]), maximum=float(highs[k]), mean=float(means[k]),
                           std=float(stds[k]), hist_counts=hists[k], hist_edges=edges[k])
        out[name] = TensorStats(name, _dtype_name(array.dtype), tuple(array.shape), int(array.size),
                                int(array.nbytes), "in memory", True, zero_fraction=float(zeros[k]) / array.size,
                                nan_count=int(nans[k]), inf_count=int(infs[k]), **numbers)
    return out


def _histograms(buf: np.ndarray, finite: np.ndarray, sizes: np.ndarray, lows: np.ndarray, highs: np.ndarray,
                have: np.ndarray, bins: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    lo = np.where(have, lows, 0.0)
    hi = np.where(have, highs, 1.0)
    pad = np.maximum(0.5, np.abs(lo) * 1e-6)
    flat = lo == hi
    lo, hi = np.where(flat, lo - pad, lo), np.where(flat, hi + pad, hi)
    width = (hi - lo) / bins
    segment = np.repeat(np.arange(len(sizes)), sizes)
    with np.errstate(invalid="ignore", over="ignore"):
        position = np.floor((buf - lo[segment]) / width[segment])
    position = np.clip(np.nan_to_num(position, nan=0.0, posinf=bins - 1, neginf=0.0), 0, bins - 1)
    slots = segment[finite] * bins + position[finite].astype(np.int64)
    table = np.bincount(slots, minlength=len(sizes) * bins).reshape(len(sizes), bins)
    empty_counts, empty_edges = np.zeros(0, np.int64), np.zeros(0)
    all_edges = lo[:, None] + (hi - lo)[:, None] * (np.arange(bins + 1) / bins)  # as linspace, for every row
    all_edges[:, -1] = hi
    counts = [row if ok else empty_counts for row, ok in zip(table, have.tolist(), strict=True)]
    edges = [row if ok else empty_edges for row, ok in zip(all_edges, have.tolist(), strict=True)]
    return counts, edges


@lru_cache(maxsize=64)
def _dtype_name(dtype: np.dtype) -> str:
    return stats_of_array(np.zeros(0, dtype)).dtype  # the name the tensor views use

