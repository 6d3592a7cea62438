"""Compare two runs value by value (two engines, or two versions of a model), matched by name."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from onnxviz.model.progress import CancelToken, ProgressFn, no_progress
from onnxviz.model.runner.store import RunResult

CHUNK = 1 << 20
COMPARE_MEASURES = {"rel_error": "relative error", "max_abs_error": "max abs error",
                    "cosine_distance": "1 - cosine similarity"}


@dataclass(frozen=True)
class Tolerance:
    """numpy.allclose's test with run A as the reference: an element of B is close when
    |b - a| <= atol + rtol * |a|. An absolute tolerance alone flagged float32 rounding on large
    activations (2.8e-4 on values around 100) as the first difference."""

    rtol: float = 1e-3
    atol: float = 1e-5

    def text(self) -> str:
        return f"rtol {self.rtol:g}, atol {self.atol:g}"


DEFAULT_TOLERANCE = Tolerance()


@dataclass(frozen=True)
class ValueDiff:
    """How value ``name`` of run B differs from run A. Errors are inf when NaN/Inf positions differ."""

    name: str
    node: int          # producing node in run A's model
    order: int
    max_abs_error: float
    rel_error: float   # max abs error / max |A|
    cosine: float
    note: str = ""
    outside: int = 0   # elements not within the comparison's Tolerance (all of them when the shapes differ)

    def measure(self, key: str) -> float:
        return 1.0 - self.cosine if key == "cosine_distance" else float(getattr(self, key))


@dataclass
class _Sums:
    tolerance: Tolerance = DEFAULT_TOLERANCE
    outside: int = 0
    max_abs: float = 0.0
    scale: float = 0.0
    dot: float = 0.0
    na: float = 0.0
    nb: float = 0.0

    def add(self, a: np.ndarray, b: np.ndarray) -> None:
        both_nan = np.isnan(a) & np.isnan(b)
        same_inf = np.isinf(a) & (a == b)
        with np.errstate(invalid="ignore"):  # inf - inf is NaN: a difference, unless both are the same inf
            diff = np.abs(a - b)
        diff[both_nan | same_inf] = 0.0
        allowed = self.tolerance.atol + self.tolerance.rtol * np.abs(a)
        self.outside += int(np.count_nonzero(~(diff <= np.where(np.isfinite(allowed), allowed, 0.0))))
        self.max_abs = max(self.max_abs, float(np.nan_to_num(diff, nan=math.inf).max(initial=0.0)))
        finite = np.isfinite(a) & np.isfinite(b)
        fa, fb = a[finite], b[finite]
        self.scale = max(self.scale, float(np.abs(fa).max(initial=0.0)))
        self.dot += float(fa @ fb)
        self.na += float(fa @ fa)
        self.nb += float(fb @ fb)

    def cosine(self) -> float:
        if self.na == 0.0 and self.nb == 0.0:
            return 1.0
        if self.na == 0.0 or self.nb == 0.0:
            return 0.0
        return self.dot / math.sqrt(self.na * self.nb)


def diff_arrays(a: np.ndarray, b: np.ndarray,
                tolerance: Tolerance = DEFAULT_TOLERANCE) -> tuple[float, float, float, int]:
    """(max abs error, relative error, cosine similarity, elements outside ``tolerance``), in chunks
    so large values stay on disk."""
    fa, fb = a.reshape(-1), b.reshape(-1)
    sums = _Sums(tolerance)
    for start in range(0, fa.size, CHUNK):
        sums.add(np.asarray(fa[start:start + CHUNK], np.float64), np.asarray(fb[start:start + CHUNK], np.float64))
    rel = sums.max_abs / sums.scale if sums.scale > 0 else (0.0 if sums.max_abs == 0 else math.inf)
    return sums.max_abs, rel, sums.cosine(), sums.outside


def compare_results(a: RunResult, b: RunResult, tolerance: Tolerance = DEFAULT_TOLERANCE,
                    progress: ProgressFn = no_progress, token: CancelToken | None = None) -> list[ValueDiff]:
    """One ValueDiff per value present in both runs (graph inputs excluded), in A's topological order;
    each counts its elements outside ``tolerance``."""
    names = [n for n, r in a.values.items() if n in b.values and r.node >= 0 and not r.scope]
    names.sort(key=lambda n: a.values[n].order)
    diffs = []
    for k, name in enumerate(names):
        if token is not None:
            token.check()
        ra = a.values[name]
        if ra.shape != b.values[name].shape:
            diffs.append(ValueDiff(name, ra.node, ra.order, math.inf, math.inf, 0.0,
                                   f"shapes differ: {list(ra.shape)} vs {list(b.values[name].shape)}",
                                   max(math.prod(ra.shape), math.prod(b.values[name].shape), 1)))
            continue
        if not (ra.stats.numeric and b.values[name].stats.numeric):
            continue
        err, rel, cos, outside = diff_arrays(a.array(name), b.array(name), tolerance)
        diffs.append(ValueDiff(name, ra.node, ra.order, err, rel, cos, outside=outside))
        if k % 32 == 0:
            progress(k / max(1, len(names)), f"Comparing {k}/{len(names)}")
    return diffs


def first_exceeding(diffs: list[ValueDiff]) -> ValueDiff | None:
    """The first value (topological order) with an element outside the comparison's tolerance."""
    return next((d for d in diffs if d.outside > 0), None)


def worst(diffs: list[ValueDiff], key: str) -> ValueDiff | None:
    """The value with the largest ``key`` error (the first of equals)."""
    return max(diffs, key=lambda d: d.measure(key), default=None)


def per_node(diffs: list[ValueDiff], key: str) -> dict[int, float]:
    """The worst error of each node's outputs, for the canvas overlay."""
    out: dict[int, float] = {}
    for d in diffs:
        out[d.node] = max(out.get(d.node, 0.0), d.measure(key))
    return out
