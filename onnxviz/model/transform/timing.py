"""How fast models run as deployed: onnxruntime's CPU provider with every graph optimization on, the median of
N timed runs after warm-up runs, the models taking turns run by run so a busy machine slows them alike.

Runs in a worker process (it imports onnxruntime); :func:`~onnxviz.model.transform.pipeline.time_models` is the
caller's side.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from onnxviz.model.transform.calibration import Sample

DEFAULT_RUNS = 20
WARMUP_RUNS = 3


@dataclass(frozen=True)
class Timing:
    """One model's run times in milliseconds."""

    median_ms: float
    best_ms: float
    worst_ms: float
    runs: int

    def text(self) -> str:
        return f"{self.median_ms:.3g} ms (median of {self.runs}; {self.best_ms:.3g} to {self.worst_ms:.3g} ms)"


def time_paths(paths: list[Path], samples: list[Sample], runs: int = DEFAULT_RUNS,
               warmup: int = WARMUP_RUNS) -> list[Timing]:
    """The timing of each model of ``paths`` on the first sample (each model fed the inputs it has)."""
    import onnxruntime as ort

    sessions = []
    for path in paths:
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        sessions.append(ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"]))
    feeds = [_feeds_of(s, samples[0]) for s in sessions]
    for _ in range(warmup):
        for session, feed in zip(sessions, feeds, strict=True):
            session.run(None, feed)
    times: list[list[float]] = [[] for _ in sessions]
    for _ in range(runs):
        for k, (session, feed) in enumerate(zip(sessions, feeds, strict=True)):
            start = time.perf_counter()
            session.run(None, feed)
            times[k].append(1000.0 * (time.perf_counter() - start))
    return [Timing(statistics.median(t), min(t), max(t), len(t)) for t in times]


def _feeds_of(session: Any, sample: Sample) -> Sample:
    names = {i.name for i in session.get_inputs()}
    return {k: v for k, v in sample.items() if k in names}
