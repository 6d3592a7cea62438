"""How soon a cancel ends a run: the time from ``CancelToken.cancel()`` (what Run > Cancel Run calls) to the
end of the worker process, while onnxruntime is busy inside ``run()`` on 40 MatMuls of 1024x1024.

    .venv/bin/python bench/bench_cancel.py [--repeat 5]

Prints each cancel's latency in ms and their median (the goal: under a second). The tests check that a
cancel ends the process (tests/model/runner/test_runner.py, tests/ui/run/test_run_ui.py); the figure is
this script's, so a loaded machine never fails a test.
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time

import numpy as np
from onnx import ModelProto, TensorProto, helper

from onnxviz.model.errors import Cancelled
from onnxviz.model.progress import CancelToken
from onnxviz.model.runner import RunOptions, WorkerRun

SIZE = 1024


def slow_model(n: int = 40) -> ModelProto:
    nodes = [helper.make_node("MatMul", [f"h{i}", "w"], [f"h{i + 1}"]) for i in range(n)]
    values = [helper.make_tensor_value_info(name, TensorProto.FLOAT, [SIZE, SIZE]) for name in ("h0", "w")]
    graph = helper.make_graph(nodes, "slow", values,
                              [helper.make_tensor_value_info(f"h{n}", TensorProto.FLOAT, [SIZE, SIZE])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def one_cancel(model: ModelProto) -> float:
    """Seconds from the cancel to the worker's end, cancelled 0.1 s after the worker says it runs."""
    feeds = {"h0": np.ones((SIZE, SIZE), np.float32), "w": np.full((SIZE, SIZE), 1e-3, np.float32)}
    run = WorkerRun(model, feeds, RunOptions()).start()
    token, running, cancelled_at = CancelToken(), threading.Event(), []

    def cancel_when_running() -> None:
        running.wait(60)
        time.sleep(0.1)  # onnxruntime busy inside run()
        cancelled_at.append(time.perf_counter())
        token.cancel()

    threading.Thread(target=cancel_when_running, daemon=True).start()
    try:
        run.wait(lambda _fraction, text: running.set() if "Running" in text else None, token)
    except Cancelled:
        pass
    else:
        raise SystemExit("the run ended before the cancel: make the model slower")
    ended = time.perf_counter()
    assert run._process is None or not run._process.is_alive()
    return ended - cancelled_at[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    model = slow_model()
    times = [one_cancel(model) for _ in range(args.repeat)]
    print("cancel to worker end, ms:", " ".join(f"{t * 1000:.0f}" for t in times))
    print(f"median {statistics.median(times) * 1000:.0f} ms over {len(times)} cancels")


if __name__ == "__main__":
    main()
