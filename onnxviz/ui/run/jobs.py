"""What a run does in its thread: the jobs of one run or comparison, each sample run in the worker process, the
two runs compared. No widget here: the GUI side is :mod:`onnxviz.ui.run.runs`."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from onnxviz.model.document import Document
from onnxviz.model.progress import CancelToken, ProgressFn
from onnxviz.model.runner import (
    ENGINE_ORT,
    ENGINE_REFERENCE,
    RunError,
    RunOptions,
    RunResult,
    WorkerRun,
    run_model,
    warm_up,
)
from onnxviz.model.runner.compare import PairSpec, Tolerance, ValueDiff, compare_pairs, compare_results
from onnxviz.model.runner.store import MEASURES
from onnxviz.ui.run.input_sources import PendingFeeds
from onnxviz.ui.validation import handed_model

if TYPE_CHECKING:
    import numpy as np

    from onnxviz.model.graph.index import ModelIndex
    from onnxviz.model.matching import Alignment, ValuePairing
    from onnxviz.model.matching.samples import PairOverSamples
    from onnxviz.model.runner.sizes import GeneratedInputs

# the matcher (onnxviz.model.matching) is imported by a comparison with another model, not by the window's start
Feeds = Mapping[str, "np.ndarray"] | PendingFeeds
Matched = tuple["Alignment", "ValuePairing", "ModelIndex"]


@dataclass(frozen=True)
class Job:
    """One run of a comparison: what model (None: the document's current state, made in the run's thread), with
    which options, and what to call it."""

    model: bytes | Path | None
    options: RunOptions
    base_dir: Path | None
    label: str


@dataclass
class Outcome:
    results: list[RunResult]
    diffs: list[ValueDiff] | None
    pairs: list[PairSpec] | None = None  # another model's values paired by the matcher (None: by name)
    over: list[PairOverSamples] | None = None  # a comparison over several samples: each pair's mean and worst
    samples: list[str] = field(default_factory=list)  # their names (the results are the last one's runs)


def jobs_for(doc: Document, options: RunOptions, compare: str, other_path: Path | None) -> list[Job]:
    """The document's run, and the other of a comparison ("engines", "saved" or "file")."""
    # the file itself while the model equals it (read by the worker: no copy of 1 GiB to hand over), or the
    # bytes validation took of this state; else made in the run's thread (a 1 GiB model serialized here held
    # the GUI thread 1.7 s)
    unchanged = doc.path if doc.path is not None and doc.file_matches() else None
    jobs = [Job(unchanged or doc.known_bytes(), options, doc.base_dir, doc.name)]
    if compare == "engines":
        other_engine = ENGINE_ORT if options.engine == ENGINE_REFERENCE else ENGINE_REFERENCE
        jobs.append(Job(jobs[0].model, replace(options, engine=other_engine, profile=False), doc.base_dir,
                        other_engine))
    elif compare == "saved" and doc.path is not None:
        jobs.append(Job(doc.path, options, doc.path.parent, f"{doc.name} on disk"))
    elif compare == "file" and other_path is not None:
        jobs.append(Job(other_path, options, other_path.parent, other_path.name))
    return jobs


@dataclass(frozen=True)
class RunWork:
    """(the run's thread) The runs of ``jobs`` on ``feeds`` of ``doc`` in state ``generation`` (sample after
    sample when the feeds have several and the jobs compare), compared when there are two."""

    doc: Document
    generation: int
    index: ModelIndex  # of that state, taken on the GUI thread
    jobs: list[Job]
    feeds: Feeds
    other_path: Path | None  # another model compared (compare "file"), its values paired by the matcher
    tolerance: Tolerance
    overlay_key: str  # the measure the canvas will colour by, worked out here
    on_start: Callable[[WorkerRun], None]

    def __call__(self, progress: ProgressFn, token: CancelToken) -> Outcome:
        with tempfile.TemporaryDirectory(prefix="onnxviz-model-") as scratch:
            jobs = self.jobs
            if jobs[0].model is None:
                made = handed_model(self.doc, self.generation, token, Path(scratch), _edited_meanwhile)
                jobs = [replace(job, model=made) if job.model is None else job for job in jobs]
            return self._run_jobs(jobs, progress, token)

    def _run_jobs(self, jobs: list[Job], progress: ProgressFn, token: CancelToken) -> Outcome:
        feeds = self.feeds
        samples = feeds.samples if isinstance(feeds, PendingFeeds) and len(jobs) > 1 else ()
        # another model: opened and aligned once for every sample
        matched = _matched_model(self.index, self.other_path, token) if self.other_path else None
        if not samples:
            return self._run_sample(jobs, feeds, matched, progress, token)
        assert isinstance(feeds, PendingFeeds)
        outcome: Outcome | None = None
        per_sample: list[list[ValueDiff]] = []
        try:
            for k, path in enumerate(samples):
                if outcome is not None:
                    for r in outcome.results:
                        r.cleanup()
                outcome = self._run_sample(jobs, feeds.with_sample(path), matched,
                                           _sample_part(progress, k, len(samples)), token)
                per_sample.append(outcome.diffs or [])
        except BaseException:
            if outcome is not None:
                for r in outcome.results:
                    r.cleanup()
            raise
        assert outcome is not None
        from onnxviz.model.matching.samples import aggregate

        outcome.over = aggregate(per_sample)
        outcome.diffs = [p.worst for p in outcome.over]
        outcome.samples = [Path(path).name for path in samples]
        return outcome

    def _run_sample(self, jobs: list[Job], feeds: Feeds, matched: Matched | None, progress: ProgressFn,
                    token: CancelToken) -> Outcome:
        results: list[RunResult] = []
        given, generated = feeds.to_run() if isinstance(feeds, PendingFeeds) else (dict(feeds), None)
        try:
            for k, job in enumerate(jobs):
                part = _scaled(progress, k, len(jobs) + (len(jobs) > 1))
                job_feeds, job_generated = given, generated
                if k > 0:  # the arrays the first run ran on, generated ones included
                    job_feeds, job_generated = results[0].input_arrays(), None
                    if matched is not None:
                        from onnxviz.model.matching.crossrun import inputs_for_b

                        job_feeds, job_generated = inputs_for_b(matched[0], job_feeds, matched[2])
                results.append(self._run_job(k, job, job_feeds, job_generated, part, token))
                warm_up()  # for the next run, or the comparison's second one
            if isinstance(feeds, PendingFeeds):
                results[0].notes[:0] = feeds.notes
            results[0].first_nonfinite()  # worked out here, not on the GUI thread (100k values: ~0.1 s)
            results[0].measure(self.overlay_key if self.overlay_key in MEASURES else "max_abs")
            diffs = None
            pairs = None
            if matched is not None and len(results) > 1:  # integer values read as floats, wrong shapes out
                from onnxviz.model.matching.crossrun import paired_specs

                pairs = paired_specs(results[0], results[1], matched[0], matched[1],
                                     base_dir_a=jobs[0].base_dir, base_dir_b=jobs[1].base_dir)
            if len(results) > 1:
                diffs = compare_runs(results[0], results[1], pairs, self.tolerance,
                                     _scaled(progress, len(jobs), len(jobs) + 1), token)
        except BaseException:
            for r in results:
                r.cleanup()
            raise
        return Outcome(results, diffs, pairs)

    def _run_job(self, k: int, job: Job, feeds: Mapping[str, np.ndarray], generated: GeneratedInputs | None,
                 progress: ProgressFn, token: CancelToken) -> RunResult:
        assert job.model is not None
        try:
            return run_model(job.model, feeds, job.options, index=self.index if k == 0 else None,
                             base_dir=job.base_dir, progress=progress, token=token, on_start=self.on_start,
                             generated=generated)
        except RunError as exc:
            if k == 0:
                if exc.partial is not None:  # worked out here, like a result's
                    exc.partial.first_nonfinite()
                raise
            if exc.partial is not None:
                exc.partial.cleanup()
            # another model's node: not one to select on this canvas
            raise RunError(f"{job.label}: {exc.message}", exc.details) from exc


def _matched_model(index: ModelIndex, other: Path, token: CancelToken) -> Matched:
    """Another model compared with this one: the alignment (which feeds each of its inputs the array of the
    input it is aligned with), its values paired with ours by the matcher (the one the model diff uses: through
    DequantizeLinear outputs, past fused or removed nodes, quantized ops as float ones; main-graph values, as
    this panel compares runs of one model) and its index."""
    from onnxviz.model.matching import align_models, pair_values

    other_index = Document.open(other).index
    alignment = align_models(index, other_index, token=token)
    return alignment, pair_values(alignment, bodies=False), other_index


def compare_runs(a: RunResult, b: RunResult, pairs: list[PairSpec] | None, tolerance: Tolerance,
                 progress: ProgressFn, token: CancelToken) -> list[ValueDiff]:
    """The matcher's pairs when there are some, else the values of the same name."""
    if pairs is None:
        return compare_results(a, b, tolerance, progress, token)
    return compare_pairs(a, b, pairs, tolerance, progress, token)


def _edited_meanwhile() -> RunError:
    return RunError("the model was edited while it was being handed to the runtime; run it again.")


def _sample_part(progress: ProgressFn, k: int, n: int) -> ProgressFn:
    """Progress of sample ``k`` of ``n``, its text saying which."""
    part = _scaled(progress, k, n)
    return lambda fraction, text: part(fraction, f"Sample {k + 1} of {n}: {text}")


def _scaled(progress: ProgressFn, k: int, n: int) -> ProgressFn:
    """Progress of part ``k`` of ``n`` as a fraction of the whole."""
    return lambda fraction, text: progress((k + max(0.0, min(1.0, fraction))) / n, text)
