"""Peak memory and time of onnxviz on big single-file models (issue 20, item 1), next to ``onnx.load``.

    python bench/bench_big_models.py [--sizes 0.5 1.0 1.99] [--shapes matmuls embedding] [--only info,check,window,edit+save]

Generates single-file models of the given sizes in GiB (float32 weights, a few nodes) in a
temporary folder, deleted afterwards, and runs each command in a fresh process, one at a time:
``onnx.load``, ``onnxviz info``, ``onnxviz check``, the window until its analysis is done
(``onnxviz FILE --screenshot OUT``) and an API edit + save. For each it prints the wall time, the peak
RSS of the process (``wait4``; a reaped worker process's own peak counts too), the peak of the summed
RSS of the process and its children (sampled every 20 ms: worker processes included) and the larger of
the two over ``onnx.load``'s. Two shapes: ``matmuls`` (256 MiB weights) and ``embedding`` (one table of
nearly all the bytes). The goal: peak memory at most 1.5x that of ``onnx.load``; open time at most
1.5x ``onnx.load`` plus a small model's (the first row).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SIDE = 8192  # weights are SIDE x SIDE float32 (256 MiB); the rest of the size is one bias of SIDE columns

GENERATE = r"""
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper

total, side, shape, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
graph = helper.make_graph([], "big", [], [])


def weight(name, rows, value):
    t = onnx.TensorProto(name=name, data_type=TensorProto.FLOAT, dims=[rows, side])
    t.raw_data = np.full((rows, side), value, np.float32).tobytes()
    graph.initializer.append(t)


if shape == "embedding":  # one table holds (nearly) every byte: ids -> Gather -> y
    rows = max(total // (side * 4), 1)
    weight("table", rows, 0.25)
    graph.input.append(helper.make_tensor_value_info("ids", TensorProto.INT64, [1]))
    graph.node.append(helper.make_node("Gather", ["table", "ids"], ["y"], name="gather"))
    graph.output.append(helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, side]))
else:  # x -> MatMul with square weights ... -> Add a bias of the remaining bytes -> y
    full = side * side * 4
    count, rest_rows = total // full, max((total % full) // (side * 4), 1)
    graph.input.append(helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, side]))
    value = "x"
    for i in range(count):
        weight(f"w{i}", side, 1.0 / (i + 2))
        graph.node.append(helper.make_node("MatMul", [value, f"w{i}"], [f"h{i}"], name=f"matmul{i}"))
        value = f"h{i}"
    weight("bias", rest_rows, 0.5)
    graph.node.append(helper.make_node("Add", [value, "bias"], ["y"], name="add"))
    graph.output.append(helper.make_tensor_value_info("y", TensorProto.FLOAT, [rest_rows, side]))
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
if shape == "embedding":
    model.ir_version = 8  # onnxruntime's check then runs too (the matmuls model is IR 14: it warns)
with open(out, "wb") as f:
    f.write(model.SerializeToString())
"""

LOAD = "import onnx, sys; onnx.load(sys.argv[1])"
EDIT_SAVE = r"""
import sys
from onnxviz.model.document import Document
doc = Document.open(sys.argv[1])
doc.edit.set_metadata("bench", "edited")
doc.save(sys.argv[2])
"""


@dataclass
class Run:
    seconds: float
    max_rss_mb: float  # wait4: the peak of the process (or of a reaped child, if higher)
    tree_mb: float  # the sampled peak of the summed RSS of the process and its children
    code: int


def _status(pid: int) -> tuple[int, int]:
    """(VmSize, VmRSS) in KiB of a live process."""
    with open(f"/proc/{pid}/status") as f:
        fields = dict(line.split(":", 1) for line in f if line.startswith(("VmSize:", "VmRSS:")))
    return int(fields.get("VmSize", "0 kB").split()[0]), int(fields.get("VmRSS", "0 kB").split()[0])


def _tree_rss_kb(pid: int) -> int:
    """The summed RSS of ``pid`` and its descendants. A child caught between fork and exec (spawning a
    worker process) still maps its parent's memory: with the same size and RSS as its parent it is
    not counted twice."""
    total, todo = 0, [(pid, (-1, -1))]
    while todo:
        p, parent = todo.pop()
        try:
            status = _status(p)
            total += status[1] if status != parent else 0
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo += [(int(c), status) for c in f.read().split()]
        except (OSError, ValueError):
            continue
    return total


def run(argv: list[str], env: dict[str, str]) -> Run:
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak, done = [0], threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], _tree_rss_kb(proc.pid))
            done.wait(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    done.set()
    sampler.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace").strip() if proc.stderr else ""
    if proc.returncode not in (0, 1):
        print(f"    ({argv[-1]}: exit {proc.returncode}: {err[-300:]})", file=sys.stderr)
    return Run(seconds, usage.ru_maxrss / 1024, peak[0] / 1024, proc.returncode)


def commands(model: Path, folder: Path) -> dict[str, list[str]]:
    py = sys.executable
    return {
        "onnx.load": [py, "-c", LOAD, str(model)],
        "info": [py, "-m", "onnxviz", "info", str(model)],
        "check": [py, "-m", "onnxviz", "check", str(model)],
        "window": [py, "-m", "onnxviz", str(model), "--screenshot", str(folder / "shot.png")],
        "edit+save": [py, "-c", EDIT_SAVE, str(model), str(folder / "saved.onnx")],
    }


def generate(total: int, path: Path, shape: str = "matmuls") -> None:
    subprocess.run([sys.executable, "-c", GENERATE, str(total), str(SIDE), shape, str(path)], check=True)


def measure_size(shape: str, size: float, only: list[str], env: dict[str, str]) -> None:
    with tempfile.TemporaryDirectory(prefix="onnxviz-big-") as tmp:
        folder = Path(tmp)
        model = folder / "big.onnx"
        generate(int(size * 2**30), model, shape)
        load_mb = 0.0
        for name, argv in commands(model, folder).items():
            if only and name not in only and name != "onnx.load":
                continue
            r = run(argv, env)
            load_mb = load_mb or r.max_rss_mb
            print(f"{shape:<9} {size:>5.2f} GiB {name:<10} {r.seconds:>7.2f} {r.max_rss_mb:>11.0f} {r.tree_mb:>8.0f} "
                  f"{max(r.max_rss_mb, r.tree_mb) / load_mb:>7.2f}" + ("" if r.code in (0, 1) else "  FAILED"),
                  flush=True)
            (folder / "saved.onnx").unlink(missing_ok=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="*", default=[0.5, 1.0, 1.99], help="model sizes in GiB")
    parser.add_argument("--only", default="", help="comma-separated commands to run (default: all)")
    parser.add_argument("--shapes", nargs="*", default=["matmuls", "embedding"],
                        help="matmuls: 256 MiB weights; embedding: one table of (nearly) all the bytes")
    args = parser.parse_args()
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(REPO))
    only = [c for c in args.only.split(",") if c]
    print(f"{'shape':<9} {'model':>9} {'command':<10} {'time s':>7} {'max RSS MB':>11} {'tree MB':>8} {'x load':>7}")
    with tempfile.TemporaryDirectory(prefix="onnxviz-small-") as tmp:  # the time goal's "small model"
        generate(2**20, Path(tmp) / "small.onnx")
        r = run(commands(Path(tmp) / "small.onnx", Path(tmp))["window"], env)
        print(f"{'matmuls':<9} {'1 MiB':>9} {'window':<10} {r.seconds:>7.2f} {r.max_rss_mb:>11.0f} {r.tree_mb:>8.0f}", flush=True)
    for shape in args.shapes:
        for size in args.sizes:
            measure_size(shape, size, only, env)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
