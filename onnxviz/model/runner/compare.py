"""Compare two runs value by value: two engines or two versions of one model (matched by name), or two
different graphs (the value pairs :mod:`onnxviz.model.matching` makes). Every per-value error measure
(max |diff|, relative error, cosine, SQNR) is computed here, and only here."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from onnxviz.model.progress import CancelToken, ProgressFn, no_progress
from onnxviz.model.runner.store import RunResult

CHUNK = 1 << 20
COMPARE_MEASURES = {"rel_error": "relative error", "max_abs_error": "max abs error",
                    "cosine_distance": "1 - cosine similarity", "sqnr_loss": "\u2212SQNR (dB): the lower the SQNR, the hotter"}


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
    sqnr_db: float = math.inf  # 20 log10(||A|| / ||A - B||), as onnxruntime's qdq_loss_debug reports it
    b_name: str = ""   # the value of run B compared with ``name`` ("" when it is ``name`` itself)

    @property
    def other(self) -> str:
        """The name of the value of run B this one was compared with."""
        return self.b_name or self.name

    def measure(self, key: str) -> float:
        """A COMPARE_MEASURES value: the larger, the worse."""
        if key == "cosine_distance":
            return 1.0 - self.cosine
        if key == "sqnr_loss":
            return -self.sqnr_db
        return float(getattr(self, key))


@dataclass
class _Sums:
    tolerance: Tolerance = DEFAULT_TOLERANCE
    outside: int = 0
    max_abs: float = 0.0
    scale: float = 0.0
    dot: float = 0.0
    na: float = 0.0
    nb: float = 0.0
    noise: float = 0.0  # sum of (a - b)^2 over elements finite on both sides

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
        gap = fa - fb
        self.noise += float(gap @ gap)

    def cosine(self) -> float:
        if self.na == 0.0 and self.nb == 0.0:
            return 1.0
        if self.na == 0.0 or self.nb == 0.0:
            return 0.0
        return self.dot / math.sqrt(self.na * self.nb)

    def sqnr_db(self) -> float:
        """Signal to quantization noise ratio in dB, A the signal: both norms are at least float64's
        epsilon (qdq_loss_debug's convention), so identical values give a large finite figure."""
        eps = float(np.finfo(np.float64).eps)
        return 20.0 * math.log10(max(math.sqrt(self.na), eps) / max(math.sqrt(self.noise), eps))


@dataclass(frozen=True)
class ArrayDiff:
    """How array B differs from array A (the reference)."""

    max_abs: float
    max_rel: float     # max |A - B| / max |A|
    cosine: float
    sqnr_db: float
    outside: int       # elements outside the comparison's Tolerance


def measure_arrays(a: np.ndarray, b: np.ndarray, tolerance: Tolerance = DEFAULT_TOLERANCE) -> ArrayDiff:
    """Every error measure of B against A, in chunks so large values stay on disk (same sizes required)."""
    fa, fb = a.reshape(-1), b.reshape(-1)
    sums = _Sums(tolerance)
    for start in range(0, fa.size, CHUNK):
        sums.add(np.asarray(fa[start:start + CHUNK], np.float64), np.asarray(fb[start:start + CHUNK], np.float64))
    rel = sums.max_abs / sums.scale if sums.scale > 0 else (0.0 if sums.max_abs == 0 else math.inf)
    return ArrayDiff(sums.max_abs, rel, sums.cosine(), sums.sqnr_db(), sums.outside)


def diff_arrays(a: np.ndarray, b: np.ndarray,
                tolerance: Tolerance = DEFAULT_TOLERANCE) -> tuple[float, float, float, int]:
    """(max abs error, relative error, cosine similarity, elements outside ``tolerance``)."""
    d = measure_arrays(a, b, tolerance)
    return d.max_abs, d.max_rel, d.cosine, d.outside


def compare_results(a: RunResult, b: RunResult, tolerance: Tolerance = DEFAULT_TOLERANCE,
                    progress: ProgressFn = no_progress, token: CancelToken | None = None) -> list[ValueDiff]:
    """One ValueDiff per value present in both runs (graph inputs excluded), in A's topological order;
    each counts its elements outside ``tolerance``."""
    names = [n for n, r in a.values.items() if n in b.values and r.node >= 0 and not r.scope]
    return compare_pairs(a, b, [(n, n) for n in names], tolerance, progress, token)


View = Callable[[np.ndarray], np.ndarray]
"""What a captured array is compared as (an integer value dequantized to the floats it stands for)."""


@dataclass(frozen=True)
class PairSpec:
    """Value ``a`` of run A compared with value ``b`` of run B, each through its view when it has one."""

    a: str
    b: str
    view_a: View | None = None
    view_b: View | None = None


def compare_pairs(a: RunResult, b: RunResult, pairs: Sequence[tuple[str, str] | PairSpec],
                  tolerance: Tolerance = DEFAULT_TOLERANCE, progress: ProgressFn = no_progress,
                  token: CancelToken | None = None) -> list[ValueDiff]:
    """One ValueDiff per (value of A, value of B) pair captured in both runs, in A's topological order;
    pairs of non-numeric values are left out. Two models' values pair as
    :func:`onnxviz.model.matching.pair_values` says."""
    specs = [p if isinstance(p, PairSpec) else PairSpec(*p) for p in pairs]
    present = [p for p in specs if p.a in a.values and p.b in b.values]
    present.sort(key=lambda p: a.values[p.a].order)
    diffs = []
    for k, spec in enumerate(present):
        if token is not None:
            token.check()
        diff = _pair_diff(a, b, spec, tolerance)
        if diff is not None:
            diffs.append(diff)
        if k % 32 == 0:
            progress(k / max(1, len(present)), f"Comparing {k}/{len(present)}")
    return diffs


def _pair_diff(a: RunResult, b: RunResult, spec: PairSpec, tolerance: Tolerance) -> ValueDiff | None:
    name, other = spec.a, spec.b
    ra, rb = a.values[name], b.values[other]
    b_name = "" if other == name else other
    if ra.shape != rb.shape:
        return ValueDiff(name, ra.node, ra.order, math.inf, math.inf, 0.0,
                         f"shapes differ: {list(ra.shape)} vs {list(rb.shape)}",
                         max(math.prod(ra.shape), math.prod(rb.shape), 1), -math.inf, b_name)
    if not (ra.stats.numeric and rb.stats.numeric):
        return None
    xa, xb = a.array(name), b.array(other)
    xa = spec.view_a(xa) if spec.view_a is not None else xa
    xb = spec.view_b(xb) if spec.view_b is not None else xb
    d = measure_arrays(xa, xb, tolerance)
    return ValueDiff(name, ra.node, ra.order, d.max_abs, d.max_rel, d.cosine, outside=d.outside,
                     sqnr_db=d.sqnr_db, b_name=b_name)


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
        out[d.node] = max(out.get(d.node, -math.inf), d.measure(key))
    return out
