"""Run two different models on the same inputs and compare the values the alignment pairs.

:func:`run_pair` runs both (the runner's worker process, every value captured) and
:func:`compare_models` adds the value pairing and the errors of each pair
(:func:`onnxviz.model.runner.compare.compare_pairs`). Inputs are given for A's graph inputs; B reads
the array of the A input it is aligned with (inputs of B no A input matches are generated).
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx

from onnxviz.model.errors import OnnxvizError
from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.graph.tensors import tensor_array
from onnxviz.model.matching.align import Alignment, GraphSide, align_models
from onnxviz.model.matching.formats import Scale
from onnxviz.model.matching.values import ValuePairing, pair_values
from onnxviz.model.matching.weights import WeightPair, dequantize, match_weights
from onnxviz.model.progress import CancelToken, ProgressFn, no_progress
from onnxviz.model.runner import RunOptions, RunResult, run_model
from onnxviz.model.runner.compare import (
    DEFAULT_TOLERANCE,
    ArrayDiff,
    PairSpec,
    Tolerance,
    ValueDiff,
    View,
    compare_pairs,
    measure_arrays,
)
from onnxviz.model.runner.errors import RunError
from onnxviz.model.runner.inputs import build_feeds, input_specs
from onnxviz.model.runner.sizes import GeneratedInputs, inputs_to_run
from onnxviz.model.runner.store import value_key

CAPTURE = RunOptions(capture=True)
SCALE_LIMIT_BYTES = 1 << 28  # a scale or zero point read from the model (they are small)


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
    added: dict[tuple[str, str], ArrayDiff] = field(default_factory=dict)  # (a, b) -> the error B's layer adds
    not_isolated: dict[tuple[str, str], str] = field(default_factory=dict)  # (a, b) -> why it has no added error
    views: dict[tuple[str, str], tuple[View | None, View | None]] = field(default_factory=dict)  # dequantized

    def arrays(self, d: ValueDiff) -> tuple[np.ndarray, np.ndarray]:
        """Both values of pair ``d`` as compared: an integer value read as the floats it stands for."""
        view_a, view_b = self.views.get((d.name, d.other), (None, None))
        a, b = self.result_a.array(d.name), self.result_b.array(d.other)
        return (view_a(a) if view_a else a), (view_b(b) if view_b else b)

    def worst_first(self, measure: str = "sqnr") -> list[ValueDiff]:
        """The pairs' errors, the worst by ``measure`` (a :data:`SORT_MEASURES` key) first; NaN before
        everything, ties in A's topological order."""
        return sorted(self.diffs, key=lambda d: (badness(d, measure), d.order))

    def added_of(self, d: ValueDiff) -> ArrayDiff | None:
        """The error B's layer of pair ``d`` adds on its own (None: not isolated, see :attr:`not_isolated`)."""
        return self.added.get((d.name, d.other))

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


SORT_MEASURES = {"sqnr": "sqnr_db", "cosine": "cosine", "max_abs": "max_abs_error", "max_rel": "rel_error"}
"""``--sort`` names -> ValueDiff fields: SQNR and cosine are worst when lowest, the errors when highest."""


def badness(d: ValueDiff, measure: str) -> float:
    """A sort key, lowest for the worst pair by ``measure`` (NaN the worst of all)."""
    value = float(getattr(d, SORT_MEASURES[measure]))
    if math.isnan(value):
        return -math.inf
    if d.max_abs_error == 0 and not d.note:
        return math.inf  # equal values (an all-zero pair has an SQNR of 0 dB by qdq_loss_debug's convention)
    return value if measure in ("sqnr", "cosine") else -value


def _node_errors(diffs: list[ValueDiff], result: RunResult, key: str,
                 name_of: Callable[[ValueDiff], str]) -> dict[tuple[str, int], float]:
    out: dict[tuple[str, int], float] = {}
    for d in diffs:
        record = result.values.get(name_of(d))
        if record is not None and record.node >= 0:
            at = (record.scope, record.node)
            out[at] = max(out.get(at, -math.inf), d.measure(key))
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
                   isolate: bool = True, progress: ProgressFn = no_progress, token: CancelToken | None = None,
                   generated: GeneratedInputs | None = None) -> CrossRun:
    """Align (unless ``alignment`` is given), run both on the same inputs (``feeds_a`` and the ``generated``
    ones, whose sizes A's worker chooses; all generated with ``seed`` when neither is given), pair the values
    and measure every pair, and every quantized weight against its partner; ``isolate``: also the error each
    layer of B adds on its own (:func:`add_isolated_errors`). Raises RunError when a run fails."""
    if alignment is None:
        alignment = align_models(index_a, index_b, token=token)
    if feeds_a is None and generated is None:
        feeds_a, generated = inputs_to_run(input_specs(index_a.model, index_a), {}, {}, "random", seed)
    result_a, result_b = run_a_then_b(index_a, index_b, alignment, feeds_a or {}, generated, seed=seed,
                                      base_dir_a=base_dir_a, base_dir_b=base_dir_b, progress=progress, token=token)
    try:
        pairing = pair_values(alignment)
        specs = paired_specs(result_a, result_b, alignment, pairing, base_dir_a=base_dir_a, base_dir_b=base_dir_b)
        diffs = compare_pairs(result_a, result_b, specs, tolerance, lambda f, t: progress(0.9 + 0.1 * f, t), token)
        weights = match_weights(alignment, base_dir_a, base_dir_b, token)
        cross = CrossRun(alignment, pairing, result_a, result_b, diffs, weights,
                         views={(p.a, p.b): (p.view_a, p.view_b) for p in specs})
        if isolate:
            add_isolated_errors(cross, index_b, base_dir_a=base_dir_a, base_dir_b=base_dir_b, token=token)
    except BaseException:
        result_a.cleanup()
        result_b.cleanup()
        raise
    return cross


def deployed_models(path_a: Path, path_b: Path, folder: Path,
                    progress: ProgressFn = no_progress) -> list[tuple[ModelIndex, Path]]:
    """Each model as onnxruntime's session deploys it (the graph it runs with every graph optimization on,
    :mod:`onnxviz.model.runner.deployed`), written under ``folder``: its index and its data's folder."""
    from onnxviz.model.runner.deployed import optimized_copy  # compare --optimized only

    made: list[tuple[ModelIndex, Path]] = []
    for side, path in (("a", path_a), ("b", path_b)):
        progress(0.05 * len(made), f"Optimizing {path.name} as onnxruntime deploys it")
        where = folder / side
        where.mkdir()
        out = optimized_copy(path, where / path.name, "all", path.parent)
        made.append((ModelIndex(onnx.load(str(out), load_external_data=False)), where))
    return made


def compare_deployed(path_a: Path, path_b: Path, feeds_a: Mapping[str, np.ndarray] | None = None, *,
                     tolerance: Tolerance = DEFAULT_TOLERANCE, seed: int = 0, isolate: bool = True,
                     progress: ProgressFn = no_progress, token: CancelToken | None = None,
                     generated: GeneratedInputs | None = None) -> CrossRun:
    """:func:`compare_models` of the two models as onnxruntime's sessions deploy them: each replaced by
    the graph its session runs with every graph optimization on (:func:`deployed_models`),
    so the outputs compared are the optimized sessions' and the intermediates those that still exist.
    The returned alignment and pairs name the optimized graphs' values."""

    with tempfile.TemporaryDirectory(prefix="onnxviz-deployed-") as folder:
        (index_a, dir_a), (index_b, dir_b) = deployed_models(path_a, path_b, Path(folder), progress)
        cross = compare_models(index_a, index_b, feeds_a, base_dir_a=dir_a, base_dir_b=dir_b, tolerance=tolerance,
                               seed=seed, isolate=isolate, progress=lambda f, t: progress(0.1 + 0.9 * f, t),
                               token=token, generated=generated)
    for result in (cross.result_a, cross.result_b):  # what ran: the graphs an optimized session runs
        result.optimized = True
    return cross


def add_isolated_errors(cross: CrossRun, index_b: ModelIndex, *, base_dir_a: Path | None = None,
                        base_dir_b: Path | None = None, token: CancelToken | None = None) -> None:
    """Fill ``cross.added``: each main-graph pair's B layer run on A's values of its inputs (one run of a
    model holding every layer, :mod:`.isolation`), measured against A's value. A run that fails leaves
    every pair without an added error, saying why."""
    alignment, side_b = cross.alignment, cross.alignment.main.sides[1] if cross.alignment.main.sides else None
    measured = {(d.name, d.other) for d in cross.diffs}
    pairs = [p for p in cross.pairing.pairs if (p.a, p.b) in measured]
    if side_b is None or not pairs:
        return
    from onnxviz.model.matching.isolation import isolated_model  # an added-error run only

    iso = isolated_model(index_b.model, side_b, pairs, cross.result_a, cross.result_b,
                         lambda name: _array_of(cross.result_b, side_b, "", name, base_dir_b),
                         alignment.main.value_a)
    cross.not_isolated.update(iso.skipped)
    if iso.model is None:
        return
    try:
        run = run_model(iso.model, iso.feeds, RunOptions(capture=False), base_dir=base_dir_b, token=token)
    except RunError as exc:
        cross.not_isolated.update({key: f"its layer could not run alone: {exc.message}" for key in iso.outputs})
        return
    try:
        by_key = {(p.a, p.b): p for p in pairs}
        for key, name in iso.outputs.items():
            if name not in run.values:
                cross.not_isolated[key] = "its layer's output was not computed"
                continue
            p = by_key[key]
            view = _view(run, alignment, "", p.scale_b, base_dir_b, run.values[name].numpy_dtype, False,
                         lambda n: _array_of(cross.result_b, side_b, "", n, base_dir_b))
            xa = cross.result_a.array(p.a)
            view_a = _view(cross.result_a, alignment, p.scope_a, p.scale_a, base_dir_a,
                           cross.result_a.values[p.a].numpy_dtype, True)
            xb = run.array(name)
            if xb.shape != xa.shape:
                cross.not_isolated[key] = "its layer alone made another shape"
                continue
            cross.added[key] = measure_arrays(view_a(xa) if view_a else xa, view(xb) if view else xb)
    finally:
        run.cleanup()


def compare_paired(result_a: RunResult, result_b: RunResult, alignment: Alignment, pairing: ValuePairing,
                   tolerance: Tolerance = DEFAULT_TOLERANCE, *, base_dir_a: Path | None = None,
                   base_dir_b: Path | None = None, progress: ProgressFn = no_progress,
                   token: CancelToken | None = None) -> list[ValueDiff]:
    """Every pair of ``pairing`` both runs captured, measured. A pair whose values cannot be the same
    tensor (their shapes differ, or an integer value meets a float one and nothing says how it reads as
    floats) is taken out of ``pairing``, its values listed unmatched with the reason: it never reaches a
    list of results. An integer value with a scale and zero point is compared as the floats it stands for."""
    specs = paired_specs(result_a, result_b, alignment, pairing, base_dir_a=base_dir_a, base_dir_b=base_dir_b)
    return compare_pairs(result_a, result_b, specs, tolerance, progress, token)


def paired_specs(result_a: RunResult, result_b: RunResult, alignment: Alignment, pairing: ValuePairing, *,
                 base_dir_a: Path | None = None, base_dir_b: Path | None = None) -> list[PairSpec]:
    """The pairs of :func:`compare_paired` as the comparison reads them (see there), the others taken out."""
    specs = []
    for p in list(pairing.pairs):
        ra, rb = result_a.values.get(p.a), result_b.values.get(p.b)
        if ra is None or rb is None:
            continue
        view_a = _view(result_a, alignment, p.scope_a, p.scale_a, base_dir_a, ra.numpy_dtype, True)
        view_b = _view(result_b, alignment, p.scope_b, p.scale_b, base_dir_b, rb.numpy_dtype, False)
        why = _cannot_pair(ra.shape, rb.shape, _kind(ra.numpy_dtype, view_a), _kind(rb.numpy_dtype, view_b))
        if why:
            pairing.unpair(p, why)
        else:
            specs.append(PairSpec(p.a, p.b, view_a, view_b))
    return specs


def _kind(numpy_dtype: str, view: View | None) -> str:
    """"f" for floats (an integer value with a view reads as floats), "i" for integers, "b" for booleans."""
    if view is not None or "float" in numpy_dtype:
        return "f"
    if "int" in numpy_dtype:
        return "i"
    return "b" if numpy_dtype == "bool" else numpy_dtype


def _cannot_pair(shape_a: tuple[int, ...], shape_b: tuple[int, ...], kind_a: str, kind_b: str) -> str:
    if shape_a != shape_b:
        return f"the shapes differ ({list(shape_a)} in A, {list(shape_b)} in B): not the same tensor"
    if kind_a != kind_b:
        names = {"f": "floats", "i": "integers", "b": "booleans"}
        return (f"{names.get(kind_a, kind_a)} in A, {names.get(kind_b, kind_b)} in B, and nothing says how the "
                "integers read as floats")
    return ""


def _view(result: RunResult, alignment: Alignment, scope: str, scale: Scale | None, base_dir: Path | None,
          numpy_dtype: str, side_a: bool, array_of: Callable[[str], np.ndarray] | None = None) -> View | None:
    """An integer value's floats: ``(q - zero) * scale`` with the scale and zero point the run computed (a
    dynamic quantization's) or the graph holds (``array_of``: where to read them instead); None for a
    float value, or when they cannot be read."""
    if scale is None or "int" not in numpy_dtype:
        return None
    ga = (alignment.graphs if side_a else alignment.graphs_b).get(scope)
    side = None if ga is None or ga.sides is None else ga.sides[0 if side_a else 1]
    read = array_of or (lambda name: _array_of(result, side, scope, name, base_dir))
    try:
        s = read(scale.scale)
        z = read(scale.zero) if scale.zero else None
    except (KeyError, OnnxvizError, ValueError):
        return None
    if s.dtype.kind != "f" or s.size == 0:
        return None
    return lambda q: dequantize(np.asarray(q), s, z, scale.axis, scale.block)


def _array_of(result: RunResult, side: GraphSide | None, scope: str, name: str, base_dir: Path | None) -> np.ndarray:
    key = value_key(scope, name)
    if key in result.values:
        return np.asarray(result.array(key))
    if side is not None and name in side.initializers:
        return tensor_array(side.initializers[name], base_dir, SCALE_LIMIT_BYTES)
    raise KeyError(name)


__all__ = ["CAPTURE", "CrossRun", "Limits", "RunError", "compare_deployed", "compare_models", "feeds_for_b",
           "inputs_for_b", "run_a_then_b", "run_pair"]
