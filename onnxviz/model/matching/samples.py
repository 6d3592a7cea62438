"""A comparison over several samples (a calibration set): a layer over the one-sample comparison.

:func:`compare_samples` runs :func:`~.crossrun.compare_models` once per sample on one alignment and
:func:`aggregate` gathers each pair's figures: per sample, their mean and their worst (the largest errors,
the smallest cosine and SQNR). The runs of the last sample are kept (the window shows their values); the
others' are removed as soon as they are measured.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.matching.align import Alignment, align_models
from onnxviz.model.matching.crossrun import CrossRun, compare_models
from onnxviz.model.progress import CancelToken, ProgressFn, no_progress
from onnxviz.model.runner.compare import DEFAULT_TOLERANCE, Tolerance, ValueDiff
from onnxviz.model.runner.sizes import GeneratedInputs

FIGURES = ("max_abs_error", "rel_error", "cosine", "sqnr_db", "outside")
LOWER_IS_WORSE = frozenset({"cosine", "sqnr_db"})  # the others: higher is worse


@dataclass(frozen=True)
class PairOverSamples:
    """One value pair's figures over the samples: ``samples`` has one ValueDiff per sample (None where the
    pair was not measured: a branch not taken, a value not produced); ``worst`` and ``mean`` gather them."""

    worst: ValueDiff
    mean: ValueDiff
    samples: tuple[ValueDiff | None, ...]

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

    def worst_first(self) -> list[PairOverSamples]:
        """Largest worst relative error first (NaN and differing shapes before everything)."""
        def key(p: PairOverSamples) -> tuple[float, float]:
            rel = math.inf if math.isnan(p.worst.rel_error) else p.worst.rel_error
            return (-rel, p.worst.order)
        return sorted(self.pairs, key=key)

    def cleanup(self) -> None:
        self.last.cleanup()


def aggregate(per_sample: Sequence[Sequence[ValueDiff]]) -> list[PairOverSamples]:
    """Each (A value, B value) pair's figures over the samples, in A's order of the first sample that has it."""
    keys: dict[tuple[str, str], list[ValueDiff | None]] = {}
    for k, diffs in enumerate(per_sample):
        for d in diffs:
            keys.setdefault((d.name, d.other), [None] * len(per_sample))[k] = d
    out = [_over(tuple(found)) for found in keys.values()]
    return sorted(out, key=lambda p: p.worst.order)


def _over(found: tuple[ValueDiff | None, ...]) -> PairOverSamples:
    present = [d for d in found if d is not None]
    note = next((d.note for d in present if d.note), "")
    worst = {f: _worst(f, [float(getattr(d, f)) for d in present]) for f in FIGURES}
    mean = {f: _mean([float(getattr(d, f)) for d in present]) for f in FIGURES}
    return PairOverSamples(_with(present[0], worst, note), _with(present[0], {**mean, "outside": worst["outside"]}, note),
                           found)


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
            dims.append(cross.result_a.dims)
            if last is not None:
                last.cleanup()
            last = cross
    except BaseException:
        if last is not None:
            last.cleanup()
        raise
    assert last is not None, "at least one sample"
    return SamplesRun(list(labels), aggregate(per_sample), last, dims)


def _part(progress: ProgressFn, k: int, n: int, label: str) -> ProgressFn:
    return lambda f, t: progress((k + max(0.0, min(1.0, f))) / n, f"Sample {k + 1} of {n} ({label}): {t}")
