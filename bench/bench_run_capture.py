"""What a captured run costs against plain onnxruntime, and how much memory a run of big external weights takes.

    .venv/bin/python bench/bench_run_capture.py [--layers 24 300 3000] [--repeat 3] [--weights-gb 2] [--skip-time]

Time: synthetic transformers of 24, 300 and 3000 layers (995, 12,311 and 123,011 nodes, see synth.py);
"plain" is onnxruntime from the file, session creation + one run (graph optimizations off, as
capture runs); "capture" is :func:`run_model` as the window and ``onnxviz run --dump`` call it
(worker process, every value kept, statistics), and "in-process" is :func:`capture` alone (session,
run and fetch of every value, without the worker and its files). Medians of ``--repeat``.

Memory: a model whose weights (``--weights-gb``, default 2) are stored in an external file next to
it, written into a temporary folder (removed after). Embedding tables read by Gather, as in a
language model, so plain onnxruntime maps the file and touches a few rows. The peak private memory
(RssAnon) and peak resident set (VmHWM, which counts the mapped file pages read) of the process
that runs it, sampled every 5 ms: plain onnxruntime in a child process, and the run worker.
Run it with PYTHONPATH of another checkout for its figures (before/after a change).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper
from synth import synth_file

from onnxviz.model.runner import RunOptions, WorkerRun, run_model
from onnxviz.model.runner.capture import capture
from onnxviz.model.runner.inputs import build_feeds, input_specs

TABLE_ROWS, TABLE_WIDTH = 65536, 1024  # one float32 table: 256 MiB
SAMPLE_S = 0.005


def _median(run: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _plain(path: Path, feeds: dict[str, np.ndarray]) -> None:
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 4
    ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"]).run(None, feeds)


def bench_time(layers: int, repeat: int) -> None:
    path = synth_file(layers)
    model = onnx.load(str(path))
    feeds = build_feeds(input_specs(model), {}, {}, seed=0)
    count = 1 if layers >= 1000 else repeat
    plain = _median(lambda: _plain(path, feeds), count)
    in_process = _median(lambda: capture(model, feeds), count)

    def captured() -> None:
        run_model(path, feeds).cleanup()

    whole = _median(captured, count)
    print(f"{len(model.graph.node):>7} nodes | plain onnxruntime {plain:7.3f} s | capture in-process "
          f"{in_process:7.3f} s ({in_process / plain:4.1f}x) | run_model with capture {whole:7.3f} s "
          f"({whole / plain:4.1f}x)", flush=True)


def write_weights_model(folder: Path, gigabytes: float) -> Path:
    """model.onnx and weights.bin in ``folder``: Gather from each 256 MiB table, summed. Written a
    table at a time, never the whole file in memory."""
    tables = max(1, round(gigabytes * 4))
    size = TABLE_ROWS * TABLE_WIDTH * 4
    nodes, initializers, total = [], [], ""
    with open(folder / "weights.bin", "wb") as f:
        for i in range(tables):
            rng = np.random.default_rng(i)
            for _ in range(0, TABLE_ROWS, 4096):
                rng.standard_normal((4096, TABLE_WIDTH), dtype=np.float32).tofile(f)
            t = TensorProto(name=f"table{i}", data_type=TensorProto.FLOAT, dims=[TABLE_ROWS, TABLE_WIDTH],
                            data_location=TensorProto.EXTERNAL)
            for key, value in (("location", "weights.bin"), ("offset", str(i * size)), ("length", str(size))):
                entry = t.external_data.add()
                entry.key, entry.value = key, value
            initializers.append(t)
            nodes.append(helper.make_node("Gather", [f"table{i}", "ids"], [f"rows{i}"], name=f"embed{i}"))
            if total:
                nodes.append(helper.make_node("Add", [total, f"rows{i}"], [f"sum{i}"], name=f"add{i}"))
            total = f"sum{i}" if total else f"rows{i}"
    nodes.append(helper.make_node("Identity", [total], ["out"], name="out"))
    graph = helper.make_graph(nodes, "weights", [helper.make_tensor_value_info("ids", TensorProto.INT64, [1, 16])],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 16, TABLE_WIDTH])],
                              initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=9)
    onnx.save(model, folder / "model.onnx")
    return folder / "model.onnx"


class _Peak:
    """The highest RssAnon and VmHWM of a process, sampled from /proc until :meth:`stop`."""

    def __init__(self) -> None:
        self.anon = self.hwm = 0
        self.pid: int | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.wait(SAMPLE_S):
            if self.pid is None:
                continue
            try:
                status = Path(f"/proc/{self.pid}/status").read_text()
            except OSError:
                continue
            fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
            self.anon = max(self.anon, _kib(fields.get("RssAnon", "0 kB")))
            self.hwm = max(self.hwm, _kib(fields.get("VmHWM", "0 kB")))

    def stop(self) -> str:
        self._stop.set()
        self._thread.join()
        return f"peak private memory {self.anon / 2**20:7.0f} MiB, peak resident {self.hwm / 2**20:7.0f} MiB"


def _kib(text: str) -> int:
    return int(text.split()[0]) * 1024


PLAIN_CHILD = """
import sys, numpy as np, onnxruntime as ort
so = ort.SessionOptions(); so.log_severity_level = 4
so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
s = ort.InferenceSession(sys.argv[1], so, providers=["CPUExecutionProvider"])
s.run(None, {"ids": np.arange(16, dtype=np.int64).reshape(1, 16)})
print("ran", flush=True)
sys.stdin.read()
"""


def bench_memory(gigabytes: float) -> None:
    with tempfile.TemporaryDirectory(prefix="onnxviz-bench-weights-") as tmp:
        t0 = time.perf_counter()
        path = write_weights_model(Path(tmp), gigabytes)
        weights = (Path(tmp) / "weights.bin").stat().st_size
        print(f"external weights {weights / 2**30:.2f} GiB written in {time.perf_counter() - t0:.1f} s", flush=True)
        peak = _Peak()
        child = subprocess.Popen([sys.executable, "-c", PLAIN_CHILD, str(path)], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE)
        peak.pid = child.pid
        assert child.stdout is not None
        child.stdout.readline()  # session and run done; the child waits on stdin, its peak measured
        time.sleep(0.05)
        child.communicate(b"")
        print(f"plain onnxruntime (session + run):     {peak.stop()}", flush=True)
        feeds = {"ids": np.arange(16, dtype=np.int64).reshape(1, 16)}
        peak = _Peak()

        def started(run: WorkerRun) -> None:
            peak.pid = run.pid

        t0 = time.perf_counter()
        result = run_model(path, feeds, RunOptions(), on_start=started)
        took = time.perf_counter() - t0
        print(f"run_model with capture ({len(result.values)} values, {took:.1f} s): {peak.stop()}", flush=True)
        result.cleanup()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, nargs="*", default=[24, 300, 3000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--weights-gb", type=float, default=2.0)
    parser.add_argument("--skip-time", action="store_true")
    parser.add_argument("--skip-memory", action="store_true")
    args = parser.parse_args()
    if not args.skip_time:
        for layers in args.layers:
            bench_time(layers, args.repeat)
    if not args.skip_memory:
        bench_memory(args.weights_gb)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
