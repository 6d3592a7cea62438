"""How much capturing every intermediate value costs, and where the end-to-end time goes.

For each model, a plain onnxruntime run against a captured run (what the worker does: on graphs
of 10k+ values, small values of a known shape packed into a few Concat outputs; everything else
fetched as its own graph output; then each value viewed as a numpy array), same optimization
level, measured three ways:

- one run: a fresh session per run, as the window and CLI run a model (session creation, and for
  capture the shape inference that plans the packs, included); medians of interleaved pairs;
- first run: the same, session creation excluded;
- warm: one session, repeated runs (how earlier versions of this bench compared);

then the whole path the window takes (worker process, files, statistics). ``unpacked`` is the
warm time when every value is its own graph output (no packing), for comparison.

    .venv/bin/python bench/bench_run.py [--repeat 7] [--optimized] [MODEL.onnx ...]

The in-process rows ("one run", "first run", "warm") fault in every captured value's fresh pages (4 KiB each; resnet50
holds 253 MB of values: about 2.8x a plain run). The run worker used to start with glibc's huge pages for that
(1.3x); it no longer does: in a fresh worker the kernel compacted memory for them, which made the window path slower
(resnet50's run 0.22-0.31 s against 0.11 s), doubled the run of a 1 GiB model and paused the window 150-180 ms.

What limits the ratio: onnxruntime spends a few microseconds per graph output it returns
(12k tiny values on synth300: 4.5-6x a plain run); packing brings that to one Concat input per
value (~0.6 us each, about what a plain run spends per node). Models with big activations
(shufflenet, 63 MB of values) are bound by memory traffic instead: a plain run reuses a few
cache-warm buffers, a captured one writes every value to memory of its own.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from synth import synth_file

from onnxviz.model.runner import RunOptions, run_model, warm_up
from onnxviz.model.runner.capture import Prepared, packing_shapes, prepare_model
from onnxviz.model.runner.inputs import build_feeds, input_specs
from onnxviz.model.runner.packing import unpack

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"


def _session(data: bytes, optimized: bool, packed: bool = False, capture: bool = False) -> ort.InferenceSession:
    so = ort.SessionOptions()
    so.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_ENABLE_ALL if optimized
                                   else ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    so.enable_mem_pattern = not packed  # as capture sets them
    so.enable_cpu_mem_arena = not capture
    so.log_severity_level = 4
    return ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])


def _interleaved(runs: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """Median time of each run; runs alternate so background load hits all alike."""
    times: dict[str, list[float]] = {k: [] for k in runs}
    for run in runs.values():
        run()  # warm-up
    for _ in range(repeat):
        for k, run in runs.items():
            t0 = time.perf_counter()
            run()
            times[k].append(time.perf_counter() - t0)
    return {k: statistics.median(t) for k, t in times.items()}


def _captured_run(session: ort.InferenceSession, prepared: Prepared,
                  feeds: dict[str, np.ndarray]) -> Callable[[], dict[str, np.ndarray]]:
    """What capture does after the session exists: fetch as OrtValues, view them as numpy, unpack."""
    names = [o.name for o in session.get_outputs()]
    ort_feeds = {k: ort.OrtValue.ortvalue_from_numpy(v) for k, v in feeds.items()}

    def run() -> dict[str, np.ndarray]:
        arrays = {n: v.numpy() for n, v in zip(names, session.run_with_ort_values(names, ort_feeds), strict=True)}
        return {**arrays, **unpack(prepared.packs, arrays)}
    return run


class _OneRun:
    """A fresh session and one run, plain or captured; records the first run's own time."""

    def __init__(self, model: onnx.ModelProto, feeds: dict[str, np.ndarray], optimized: bool, capture: bool) -> None:
        self.model, self.feeds, self.optimized, self.capture = model, feeds, optimized, capture
        self.options = RunOptions(optimized=optimized)
        self.data = model.SerializeToString()
        self.run_times: list[float] = []

    def __call__(self) -> object:
        if not self.capture:
            session = _session(self.data, self.optimized)
            t0 = time.perf_counter()
            result = session.run(None, self.feeds)
        else:
            prepared = prepare_model(self.model, True, packing_shapes(self.model, self.feeds, self.options))
            session = _session(prepared.model.SerializeToString(), self.optimized, bool(prepared.packs), capture=True)
            run = _captured_run(session, prepared, self.feeds)
            t0 = time.perf_counter()
            result = run()
        self.run_times.append(time.perf_counter() - t0)
        return result


def bench(path: Path, repeat: int, optimized: bool) -> None:
    model = onnx.load(str(path))
    feeds = build_feeds(input_specs(model), {}, {}, seed=0)
    options = RunOptions(optimized=optimized)
    prepared = prepare_model(model, True, packing_shapes(model, feeds, options))
    unpacked = prepare_model(model, True)
    plain_session = _session(model.SerializeToString(), optimized)
    packed_session = _session(prepared.model.SerializeToString(), optimized, bool(prepared.packs), capture=True)
    unpacked_session = _session(unpacked.model.SerializeToString(), optimized, capture=True)
    warm = _interleaved({"plain": lambda: plain_session.run(None, feeds),
                         "captured": _captured_run(packed_session, prepared, feeds),
                         "unpacked": _captured_run(unpacked_session, unpacked, feeds)}, repeat)
    one_plain, one_captured = _OneRun(model, feeds, optimized, False), _OneRun(model, feeds, optimized, True)
    one = _interleaved({"plain": one_plain, "captured": one_captured}, max(3, repeat // 2))
    first_plain = statistics.median(one_plain.run_times[1:])
    first_captured = statistics.median(one_captured.run_times[1:])
    _check_outputs(plain_session.run(None, feeds), _captured_run(packed_session, prepared, feeds)(), model)
    values = sum(len(p.members) for p in prepared.packs) + len(prepared.model.graph.output) - len(prepared.packs)
    print(f"{path.name:<24} nodes {len(model.graph.node):>6} values {values:>6} packed {values - _fetched(prepared):>6} "
          f"in {len(prepared.packs):>3} | one run: plain {1000 * one['plain']:7.1f} ms, captured "
          f"{1000 * one['captured']:7.1f} ms, {one['captured'] / one['plain']:4.2f}x | first run: "
          f"{1000 * first_plain:6.1f} / {1000 * first_captured:6.1f} ms, {first_captured / first_plain:4.2f}x | "
          f"warm: {1000 * warm['plain']:6.1f} / {1000 * warm['captured']:6.1f} ms, "
          f"{warm['captured'] / warm['plain']:4.2f}x (unpacked {warm['unpacked'] / warm['plain']:4.2f}x)")
    _end_to_end(model, feeds, optimized)


def _fetched(prepared: Prepared) -> int:
    return len(prepared.model.graph.output) - len(prepared.packs)


def _check_outputs(plain: list[np.ndarray], captured: dict[str, np.ndarray], model: onnx.ModelProto) -> None:
    for out, expected in zip(model.graph.output, plain, strict=True):
        got = captured[out.name]
        if not np.array_equal(got, expected, equal_nan=True):
            print(f"  ! graph output {out.name} differs between the plain and the captured run")


def _end_to_end(model: onnx.ModelProto, feeds: dict[str, np.ndarray], optimized: bool) -> None:
    """The window's path, from a new process (cold) and from a spare process started a second
    earlier (warm: the window starts one when the user asks to run and after every run)."""
    figures = {}
    for label in ("cold", "warm"):
        end_to_end, parts = [], []
        for _ in range(3):
            if label == "warm":
                warm_up()
                time.sleep(1.0)  # the user picks inputs, or looks at the last run, meanwhile
            t0 = time.perf_counter()
            result = run_model(model, feeds, RunOptions(optimized=optimized))
            end_to_end.append(time.perf_counter() - t0)
            parts.append(result.timings)
            result.cleanup()
        figures[label] = (statistics.median(end_to_end), parts)
    e2e, parts = figures["cold"]
    median = {k: statistics.median(p.get(k, 0.0) for p in parts) for k in ("shapes_s", "session_s", "run_s", "stats_s")}
    rest = e2e - sum(median.values())
    print(f"{'':<24} window path {e2e:5.2f} s: shapes {median['shapes_s']:.2f}, session {median['session_s']:.2f}, "
          f"run {median['run_s']:.2f}, statistics (saving overlapped) {median['stats_s']:.2f}, process+files {rest:.2f}; "
          f"with a spare process {figures['warm'][0]:5.2f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--optimized", action="store_true", help="ORT_ENABLE_ALL for both runs")
    args = parser.parse_args()
    models = args.models or [synth_file(300), *sorted(LIGHT.glob("light_*.onnx"))]
    print(f"optimization: {'ORT_ENABLE_ALL' if args.optimized else 'ORT_DISABLE_ALL'}; medians of {args.repeat}")
    for path in models:
        bench(path, args.repeat, args.optimized)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
