"""A comparison over several samples (a calibration set): a layer over the one-sample comparison.

:func:`compare_samples` runs :func:`~.crossrun.compare_models` once per sample on one alignment and
:func:`aggregate` gathers each pair's figures: per sample, their mean and their worst (the largest errors,
the smallest cosine and SQNR). The runs of the last sample are kept (the window shows their values); the
others' are removed as soon as they are measured.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.matching.align import Alignment, align_models
from onnxviz.model.matching.crossrun import CrossRun, badness, compare_models, deployed_models
from onnxviz.model.progress import CancelToken, ProgressFn, no_progress
from onnxviz.model.runner.compare import DEFAULT_TOLERANCE, ArrayDiff, Tolerance, ValueDiff
from onnxviz.model.runner.sizes import GeneratedInputs

FIGURES = ("max_abs_error", "rel_error", "cosine", "sqnr_db", "outside")
ADDED_FIGURES = ("max_abs", "max_rel", "cosine", "sqnr_db", "outside")  # an ArrayDiff's
LOWER_IS_WORSE = frozenset({"cosine", "sqnr_db"})  # the others: higher is worse
Added = Mapping[tuple[str, str], ArrayDiff]  # a sample's (a, b) -> the error B's layer adds on its own


@dataclass(frozen=True)
class PairOverSamples:
    """One value pair's figures over the samples: ``samples`` has one ValueDiff per sample (None where the
    pair was not measured: a branch not taken, a value not produced); ``worst`` and ``mean`` gather them."""

    worst: ValueDiff
    mean: ValueDiff
    samples: tuple[ValueDiff | None, ...]
    added_worst: ArrayDiff | None = None  # the error B's layer adds on its own, over the samples where isolated
    added_mean: ArrayDiff | None = None
    added_samples: tuple[ArrayDiff | None, ...] = ()

    @property
    def measured(self) -> int:
        return sum(1 for d in self.samples if d is not None)

    @property
    def mean_outside(self) -> float:
        """Elements beyond tolerance per sample, on average (``mean.outside`` holds the worst, as a count)."""
        return _mean([float(d.outside) for d in self.samples if d is not None])


@dataclass
class SamplesRun:
    """A comparison over several samples: each pair's figures (A's topological order), the sample labels,
    and the last sample's runs (``last``: its values stay on disk until :meth:`cleanup`)."""

    labels: list[str]
    pairs: list[PairOverSamples]
    last: CrossRun
    dims: list[dict[str, int]] = field(default_factory=list)  # each sample's generated sizes, as run

    @property
    def alignment(self) -> Alignment:
        return self.last.alignment

    def worst(self) -> list[ValueDiff]:
        """Every pair's worst figures: what tolerances are checked against and the canvas colours by."""
        return [p.worst for p in self.pairs]

    def as_cross(self) -> CrossRun:
        """The last sample's runs with every pair's worst figures and worst added error over the samples
        (what the window's table and canvas show)."""
        added = {(p.worst.name, p.worst.other): p.added_worst for p in self.pairs if p.added_worst is not None}
        return replace(self.last, diffs=self.worst(), added=added)

    def worst_first(self, measure: str = "sqnr") -> list[PairOverSamples]:
        """The pairs, the worst by ``measure`` (a SORT_MEASURES key) over the samples first, as
        :meth:`CrossRun.worst_first` orders one sample's."""
        return sorted(self.pairs, key=lambda p: (badness(p.worst, measure), p.worst.order))

    def cleanup(self) -> None:
        self.last.cleanup()


def aggregate(per_sample: Sequence[Sequence[ValueDiff]], added: Sequence[Added] = ()) -> list[PairOverSamples]:
    """Each (A value, B value) pair's figures over the samples, in A's order of the first sample that has it;
    ``added``: each sample's added errors (:attr:`CrossRun.added`), gathered the same way."""
    keys: dict[tuple[str, str], list[ValueDiff | None]] = {}
    for k, diffs in enumerate(per_sample):
        for d in diffs:
            keys.setdefault((d.name, d.other), [None] * len(per_sample))[k] = d
    out = [_over(tuple(found), tuple(a.get(key) for a in added)) for key, found in keys.items()]
    return sorted(out, key=lambda p: p.worst.order)


def _over(found: tuple[ValueDiff | None, ...], added: tuple[ArrayDiff | None, ...]) -> PairOverSamples:
    present = [d for d in found if d is not None]
    note = next((d.note for d in present if d.note), "")
    worst = {f: _worst(f, [float(getattr(d, f)) for d in present]) for f in FIGURES}
    mean = {f: _mean([float(getattr(d, f)) for d in present]) for f in FIGURES}
    isolated = [a for a in added if a is not None]
    added_worst = added_mean = None
    if isolated:
        added_worst = _array_diff({f: _worst(f, [float(getattr(a, f)) for a in isolated]) for f in ADDED_FIGURES})
        added_mean = _array_diff({f: _mean([float(getattr(a, f)) for a in isolated]) for f in ADDED_FIGURES})
    return PairOverSamples(_with(present[0], worst, note), _with(present[0], {**mean, "outside": worst["outside"]}, note),
                           found, added_worst, added_mean, added)


def _array_diff(figures: Mapping[str, float]) -> ArrayDiff:
    return ArrayDiff(figures["max_abs"], figures["max_rel"], figures["cosine"], figures["sqnr_db"],
                     int(figures["outside"]))


def _with(d: ValueDiff, figures: Mapping[str, float], note: str) -> ValueDiff:
    return replace(d, max_abs_error=figures["max_abs_error"], rel_error=figures["rel_error"], cosine=figures["cosine"],
                   sqnr_db=figures["sqnr_db"], outside=int(figures["outside"]), note=note)


def _worst(figure: str, values: list[float]) -> float:
    if any(isinstance(v, float) and math.isnan(v) for v in values):
        return math.nan
    return min(values) if figure in LOWER_IS_WORSE else max(values)


def _mean(values: list[float]) -> float:
    return float(np.mean(values)) if values else math.nan


def compare_samples(index_a: ModelIndex, index_b: ModelIndex,
                    samples: Sequence[Callable[[], tuple[Mapping[str, np.ndarray], GeneratedInputs | None]]],
                    labels: Sequence[str], *, base_dir_a: Path | None = None, base_dir_b: Path | None = None,
                    alignment: Alignment | None = None, tolerance: Tolerance = DEFAULT_TOLERANCE, seed: int = 0,
                    progress: ProgressFn = no_progress, token: CancelToken | None = None) -> SamplesRun:
    """Run both models on each sample (``samples``: functions giving A's given arrays and the inputs to make,
    read when their turn comes) and gather each pair's figures (see :func:`aggregate`)."""
    if alignment is None:
        alignment = align_models(index_a, index_b, token=token)
    per_sample: list[list[ValueDiff]] = []
    added: list[Added] = []
    dims: list[dict[str, int]] = []
    last: CrossRun | None = None
    n = len(samples)
    try:
        for k, read in enumerate(samples):
            given, generated = read()
            part = _part(progress, k, n, labels[k])
            cross = compare_models(index_a, index_b, given, base_dir_a=base_dir_a, base_dir_b=base_dir_b,
                                   alignment=alignment, tolerance=tolerance, seed=seed, progress=part, token=token,
                                   generated=generated)
            per_sample.append(cross.diffs)
            added.append(cross.added)
            dims.append(cross.result_a.dims)
            if last is not None:
                last.cleanup()
            last = cross
    except BaseException:
        if last is not None:
            last.cleanup()
        raise
    assert last is not None, "at least one sample"
    return SamplesRun(list(labels), aggregate(per_sample, added), last, dims)


def compare_deployed_samples(path_a: Path, path_b: Path,
                             samples: Sequence[Callable[[], tuple[Mapping[str, np.ndarray], GeneratedInputs | None]]],
                             labels: Sequence[str], *, tolerance: Tolerance = DEFAULT_TOLERANCE, seed: int = 0,
                             progress: ProgressFn = no_progress, token: CancelToken | None = None) -> SamplesRun:
    """:func:`compare_samples` of the two models as onnxruntime's sessions deploy them (the graphs each
    session runs with every graph optimization on, made once for all the samples; see
    :func:`~.crossrun.compare_deployed`)."""
    with tempfile.TemporaryDirectory(prefix="onnxviz-deployed-") as folder:
        (index_a, dir_a), (index_b, dir_b) = deployed_models(path_a, path_b, Path(folder), progress)
        over = compare_samples(index_a, index_b, samples, labels, base_dir_a=dir_a, base_dir_b=dir_b,
                               tolerance=tolerance, seed=seed, progress=lambda f, t: progress(0.1 + 0.9 * f, t),
                               token=token)
    for result in (over.last.result_a, over.last.result_b):  # what ran: the graphs an optimized session runs
        result.optimized = True
    return over


def _part(progress: ProgressFn, k: int, n: int, label: str) -> ProgressFn:
    return lambda f, t: progress((k + max(0.0, min(1.0, f))) / n, f"Sample {k + 1} of {n} ({label}): {t}")
