"""How much capturing every intermediate value costs, and where the end-to-end time goes.

For each model: a plain onnxruntime run vs the same session with every node output added as a
graph output (same optimization level), as medians over repeated runs; then the whole path the
window and CLI take (worker process start, model and inputs written, session, run, values
saved with statistics, index read back).

    .venv/bin/python bench/bench_run.py [--repeat 7] [--optimized] [MODEL.onnx ...]

What the breakdown line showed (synth300, 12k values; shufflenet, 446): the extra time is inside
onnxruntime, per graph output. A session whose every value is a graph output is already slower
when it fetches only the model's own outputs (those values can no longer share the planned
memory), and fetching all of them adds a fixed cost per fetched value (about 5 us: names
matched, one OrtValue each). Converting to numpy is cheap (4 ms for 12k values). IOBinding is
faster only when a bound session runs again (binding 12k outputs and reading them back costs
more than it saves on one run); session.run() with numpy results, disabling the memory pattern
or arena, one intra-op thread, and packing small values into one Concat output per dtype were
all measured and none is faster than run_with_ort_values on both models.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort

from onnxviz.model.runner import RunOptions, run_model
from onnxviz.model.runner.capture import prepare_model
from onnxviz.model.runner.inputs import build_feeds, input_specs

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
DEFAULT_MODELS = [Path("/tmp/synth300.onnx"), *sorted(LIGHT.glob("light_*.onnx"))]


def _timed_session(model: onnx.ModelProto, optimized: bool) -> tuple[ort.InferenceSession, float]:
    data = model.SerializeToString()
    t0 = time.perf_counter()
    session = _session(data, optimized)
    return session, time.perf_counter() - t0


def _session(data: bytes, optimized: bool) -> ort.InferenceSession:
    so = ort.SessionOptions()
    so.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_ENABLE_ALL if optimized
                                   else ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    so.log_severity_level = 4
    return ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])


def _median_runs(runs: list[Callable[[], object]], repeat: int) -> list[float]:
    """Median time of each run; runs are interleaved so background load hits all alike."""
    times: list[list[float]] = [[] for _ in runs]
    for run in runs:
        run()  # warm-up
    for _ in range(repeat):
        for k, run in enumerate(runs):
            t0 = time.perf_counter()
            run()
            times[k].append(time.perf_counter() - t0)
    return [statistics.median(t) for t in times]


def _captured_run(session: ort.InferenceSession, feeds: dict[str, np.ndarray]) -> Callable[[], object]:
    """What capture does: every value fetched as an OrtValue, then each turned into numpy."""
    names = [o.name for o in session.get_outputs()]
    ort_feeds = {k: ort.OrtValue.ortvalue_from_numpy(v) for k, v in feeds.items()}
    return lambda: [v.numpy() for v in session.run_with_ort_values(names, ort_feeds)]


def _median(fn: Callable[[], object], repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _breakdown(session: ort.InferenceSession, model: onnx.ModelProto, feeds: dict[str, np.ndarray],
               repeat: int) -> str:
    """Where the captured run's extra time goes: the session with every value as a graph output
    but fetching only the model's own outputs; fetching all of them as OrtValues (what capture
    does); the same through IOBinding; and turning the OrtValues into numpy arrays."""
    names = [o.name for o in session.get_outputs()]
    own = [o.name for o in model.graph.output]
    ort_feeds = {k: ort.OrtValue.ortvalue_from_numpy(v) for k, v in feeds.items()}
    binding = session.io_binding()
    for k, v in feeds.items():
        binding.bind_cpu_input(k, v)
    for n in names:
        binding.bind_output(n, "cpu")
    fetched = session.run_with_ort_values(names, ort_feeds)
    parts = {
        "own outputs only": _median(lambda: session.run_with_ort_values(own, ort_feeds), repeat),
        "all as OrtValues": _median(lambda: session.run_with_ort_values(names, ort_feeds), repeat),
        "all via IOBinding": _median(lambda: session.run_with_iobinding(binding), repeat),
        "to numpy": _median(lambda: [v.numpy() for v in fetched], repeat),
    }
    return ", ".join(f"{k} {1000 * v:.1f} ms" for k, v in parts.items())


def bench(path: Path, repeat: int, optimized: bool) -> None:
    model = onnx.load(str(path))
    feeds = build_feeds(input_specs(model), {}, {}, seed=0)
    captured_model, _ = prepare_model(model, capture_all=True)
    plain_session, plain_create = _timed_session(model, optimized)
    captured_session, captured_create = _timed_session(captured_model, optimized)
    plain, captured = _median_runs([lambda: plain_session.run(None, feeds), _captured_run(captured_session, feeds)],
                                   repeat)
    breakdown = _breakdown(captured_session, model, feeds, repeat)
    outputs = len(captured_model.graph.output)
    end_to_end, parts = [], []
    for _ in range(3):
        t0 = time.perf_counter()
        result = run_model(model, feeds, RunOptions(optimized=optimized))
        end_to_end.append(time.perf_counter() - t0)
        parts.append(result.timings)
        result.cleanup()
    e2e = statistics.median(end_to_end)
    session_s = statistics.median(p["session_s"] for p in parts)
    worker_run = statistics.median(p["run_s"] for p in parts)
    stats_s = statistics.median(p["stats_s"] for p in parts)
    print(f"{path.name:<26} nodes {len(model.graph.node):>6}  values {outputs:>6}  "
          f"run: plain {1000 * plain:7.1f} ms  captured {1000 * captured:7.1f} ms  ratio {captured / plain:5.2f}x  "
          f"(session creation {plain_create:.2f} s vs {captured_create:.2f} s)  |  "
          f"end-to-end {e2e:6.2f} s: session {session_s:.2f}, run {worker_run:.2f}, stats (saving overlapped) {stats_s:.2f}, "
          f"process+files {e2e - session_s - worker_run - stats_s:.2f}")
    print(f"{'':<26} captured run breakdown: {breakdown}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--optimized", action="store_true", help="ORT_ENABLE_ALL for both runs")
    args = parser.parse_args()
    models = [m for m in (args.models or DEFAULT_MODELS) if m.exists()]
    if not models:
        print("no models found (make /tmp/synth300.onnx with ../shared/bench/synth.py)", file=sys.stderr)
        return 1
    print(f"optimization: {'ORT_ENABLE_ALL' if args.optimized else 'ORT_DISABLE_ALL'}; medians of {args.repeat}")
    for path in models:
        bench(path, args.repeat, args.optimized)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
