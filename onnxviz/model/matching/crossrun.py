"""Run two different models on the same inputs and compare the values the alignment pairs.

:func:`run_pair` runs both (the runner's worker process, every value captured) and
:func:`compare_models` adds the value pairing and the errors of each pair
(:func:`onnxviz.model.runner.compare.compare_pairs`). Inputs are given for A's graph inputs; B reads
the array of the A input it is aligned with (inputs of B no A input matches are generated).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.matching.align import Alignment, align_models
from onnxviz.model.matching.values import ValuePairing, pair_values
from onnxviz.model.matching.weights import WeightPair, match_weights
from onnxviz.model.progress import CancelToken, ProgressFn, no_progress
from onnxviz.model.runner import RunOptions, RunResult, run_model
from onnxviz.model.runner.compare import DEFAULT_TOLERANCE, Tolerance, ValueDiff, compare_pairs
from onnxviz.model.runner.inputs import build_feeds, input_specs
from onnxviz.model.runner.protocol import RunError
from onnxviz.model.runner.sizes import GeneratedInputs, inputs_to_run

CAPTURE = RunOptions(capture=True)


@dataclass(frozen=True)
class Limits:
    """When a pair is beyond tolerance: any element outside ``elementwise`` (numpy.allclose's test),
    unless measure limits are given, then when any of them is crossed (None: not checked)."""

    elementwise: Tolerance | None = DEFAULT_TOLERANCE
    max_abs: float | None = None
    max_rel: float | None = None
    cosine: float | None = None     # the least cosine similarity allowed
    sqnr_db: float | None = None    # the least SQNR allowed

    def exceeded(self, d: ValueDiff) -> list[str]:
        """The measures of ``d`` beyond these limits (empty: within)."""
        out = []
        if self.elementwise is not None and d.outside > 0:
            out.append(f"{d.outside} elements outside {self.elementwise.text()}")
        checks = (("max_abs", self.max_abs, d.max_abs_error, True), ("max_rel", self.max_rel, d.rel_error, True),
                  ("cosine", self.cosine, d.cosine, False), ("sqnr_db", self.sqnr_db, d.sqnr_db, False))
        for name, limit, value, upper in checks:
            if limit is not None and (math.isnan(value) or (value > limit if upper else value < limit)):
                out.append(f"{name} {value:.6g} {'>' if upper else '<'} {limit:g}")
        if d.note:
            out.append(d.note)
        return out


@dataclass
class CrossRun:
    """Two runs, how their values pair, and the errors of every pair (A's topological order)."""

    alignment: Alignment
    pairing: ValuePairing
    result_a: RunResult
    result_b: RunResult
    diffs: list[ValueDiff] = field(default_factory=list)
    weights: list[WeightPair] = field(default_factory=list)  # quantized weights against their partners

    def worst_first(self) -> list[ValueDiff]:
        """The pairs' errors, largest relative error first (NaN and differing shapes before everything)."""
        def key(d: ValueDiff) -> tuple[float, float]:
            rel = math.inf if math.isnan(d.rel_error) else d.rel_error
            return (-rel, d.order)
        return sorted(self.diffs, key=key)

    def node_errors_a(self, key: str) -> dict[tuple[str, int], float]:
        """The worst ``key`` error (a COMPARE_MEASURES key) of each A node's outputs, keyed (scope, node)
        as the canvas colours them (nodes inside bodies under their body's scope)."""
        return _node_errors(self.diffs, self.result_a, key, lambda d: d.name)

    def node_errors_b(self, key: str) -> dict[tuple[str, int], float]:
        """The same for B's nodes: each pair counts for the B node that made its B value."""
        return _node_errors(self.diffs, self.result_b, key, lambda d: d.other)

    def cleanup(self) -> None:
        """Remove both runs' captured values from disk."""
        self.result_a.cleanup()
        self.result_b.cleanup()


def _node_errors(diffs: list[ValueDiff], result: RunResult, key: str,
                 name_of: Callable[[ValueDiff], str]) -> dict[tuple[str, int], float]:
    out: dict[tuple[str, int], float] = {}
    for d in diffs:
        record = result.values.get(name_of(d))
        if record is not None and record.node >= 0:
            at = (record.scope, record.node)
            out[at] = max(out.get(at, 0.0), d.measure(key))
    return out


def feeds_for_b(alignment: Alignment, feeds_a: Mapping[str, np.ndarray], index_b: ModelIndex,
                seed: int = 0) -> dict[str, np.ndarray]:
    """B's feeds: the array of the A input each B input is aligned with; generated for the others."""
    given = {}
    main = alignment.main
    for name, array in feeds_a.items():
        partner = main.value_b(name)
        if partner is not None:
            given[partner] = array
    specs = input_specs(index_b.model, index_b)
    return build_feeds(specs, {s.name: given[s.name] for s in specs if s.name in given}, {}, "random", seed)


def inputs_for_b(alignment: Alignment, feeds_a: Mapping[str, np.ndarray], index_b: ModelIndex,
                 seed: int = 0) -> tuple[dict[str, np.ndarray], GeneratedInputs | None]:
    """B's inputs: the array of the A input each B input is aligned with, and the others for B's worker to make
    (their sizes fixed where they share a dimension's name with the arrays given)."""
    main = alignment.main
    given = {partner: array for name, array in feeds_a.items() if (partner := main.value_b(name)) is not None}
    specs = input_specs(index_b.model, index_b)
    return inputs_to_run(specs, {s.name: given[s.name] for s in specs if s.name in given}, {}, "random", seed)


def run_a_then_b(index_a: ModelIndex, index_b: ModelIndex, alignment: Alignment, feeds_a: Mapping[str, np.ndarray],
                 generated: GeneratedInputs | None = None, *, seed: int = 0, base_dir_a: Path | None = None,
                 base_dir_b: Path | None = None, progress: ProgressFn = no_progress,
                 token: CancelToken | None = None) -> tuple[RunResult, RunResult]:
    """A run on ``feeds_a`` and the inputs its worker makes (``generated``: sizes chosen there), then B on the
    arrays A ran with, through the alignment; both capture every value."""
    result_a = run_model(index_a.model, feeds_a, CAPTURE, index=index_a, base_dir=base_dir_a, generated=generated,
                         progress=lambda f, t: progress(0.5 * f, f"A: {t}"), token=token)
    try:
        feeds_b, generated_b = inputs_for_b(alignment, result_a.input_arrays(), index_b, seed)
        result_b = run_model(index_b.model, feeds_b, CAPTURE, index=index_b, base_dir=base_dir_b,
                             generated=generated_b, progress=lambda f, t: progress(0.5 + 0.4 * f, f"B: {t}"),
                             token=token)
    except BaseException:
        result_a.cleanup()
        raise
    return result_a, result_b


def run_pair(index_a: ModelIndex, index_b: ModelIndex, feeds_a: Mapping[str, np.ndarray],
             feeds_b: Mapping[str, np.ndarray], *, base_dir_a: Path | None = None, base_dir_b: Path | None = None,
             progress: ProgressFn = no_progress, token: CancelToken | None = None) -> tuple[RunResult, RunResult]:
    """Both models run one after the other in worker processes with every value captured."""
    result_a = run_model(index_a.model, feeds_a, CAPTURE, index=index_a, base_dir=base_dir_a,
                         progress=lambda f, t: progress(0.5 * f, f"A: {t}"), token=token)
    try:
        result_b = run_model(index_b.model, feeds_b, CAPTURE, index=index_b, base_dir=base_dir_b,
                             progress=lambda f, t: progress(0.5 + 0.4 * f, f"B: {t}"), token=token)
    except BaseException:
        result_a.cleanup()
        raise
    return result_a, result_b


def compare_models(index_a: ModelIndex, index_b: ModelIndex, feeds_a: Mapping[str, np.ndarray] | None = None,
                   *, base_dir_a: Path | None = None, base_dir_b: Path | None = None,
                   alignment: Alignment | None = None, tolerance: Tolerance = DEFAULT_TOLERANCE, seed: int = 0,
                   progress: ProgressFn = no_progress, token: CancelToken | None = None,
                   generated: GeneratedInputs | None = None) -> CrossRun:
    """Align (unless ``alignment`` is given), run both on the same inputs (``feeds_a`` and the ``generated``
    ones, whose sizes A's worker chooses; all generated with ``seed`` when neither is given), pair the values
    and measure every pair, and every quantized weight against its partner. Raises RunError when a run fails."""
    if alignment is None:
        alignment = align_models(index_a, index_b, token=token)
    if feeds_a is None and generated is None:
        feeds_a, generated = inputs_to_run(input_specs(index_a.model, index_a), {}, {}, "random", seed)
    result_a, result_b = run_a_then_b(index_a, index_b, alignment, feeds_a or {}, generated, seed=seed,
                                      base_dir_a=base_dir_a, base_dir_b=base_dir_b, progress=progress, token=token)
    try:
        pairing = pair_values(alignment)
        diffs = compare_pairs(result_a, result_b, pairing.names(), tolerance,
                              lambda f, t: progress(0.9 + 0.1 * f, t), token)
        weights = match_weights(alignment, base_dir_a, base_dir_b, token)
    except BaseException:
        result_a.cleanup()
        result_b.cleanup()
        raise
    return CrossRun(alignment, pairing, result_a, result_b, diffs, weights)


__all__ = ["CAPTURE", "CrossRun", "Limits", "RunError", "compare_models", "feeds_for_b", "inputs_for_b", "run_a_then_b",
           "run_pair"]
