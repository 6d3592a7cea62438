"""How much capturing every intermediate value costs, and where the end-to-end time goes.

For each model: a plain onnxruntime run vs the same session with every node output added as a
graph output (same optimization level), as medians over repeated runs; then the whole path the
window and CLI take (worker process start, model and inputs written, session, run, values
saved with statistics, index read back).

    .venv/bin/python bench/bench_run.py [--repeat 7] [--optimized] [MODEL.onnx ...]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort

from onnxviz.model.runner import RunOptions, run_model
from onnxviz.model.runner.capture import prepare_model
from onnxviz.model.runner.inputs import build_feeds, input_specs

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
DEFAULT_MODELS = [Path("/tmp/synth300.onnx"), *sorted(LIGHT.glob("light_*.onnx"))]


def _session(model: onnx.ModelProto, optimized: bool) -> ort.InferenceSession:
    so = ort.SessionOptions()
    so.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_ENABLE_ALL if optimized
                                   else ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    so.log_severity_level = 4
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])


def _median_run(session: ort.InferenceSession, feeds: dict[str, np.ndarray], repeat: int) -> float:
    session.run(None, feeds)  # warm-up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        session.run(None, feeds)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def bench(path: Path, repeat: int, optimized: bool) -> None:
    model = onnx.load(str(path))
    feeds = build_feeds(input_specs(model), {}, {}, seed=0)
    captured_model, _ = prepare_model(model, capture_all=True)
    plain = _median_run(_session(model, optimized), feeds, repeat)
    captured = _median_run(_session(captured_model, optimized), feeds, repeat)
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
    print(f"{path.name:<26} nodes {len(model.graph.node):>6}  values {outputs:>6}  "
          f"plain {1000 * plain:8.1f} ms  captured {1000 * captured:8.1f} ms  ratio {captured / plain:5.2f}x  |  "
          f"end-to-end {1000 * e2e:8.1f} ms (session {1000 * session_s:.0f}, run {1000 * worker_run:.0f}, "
          f"process+files+stats {1000 * (e2e - session_s - worker_run):.0f})")


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
