"""Peak memory and time of onnxviz on big single-file models (issue 20, item 1), next to ``onnx.load``.

    python bench/bench_big_models.py [--sizes 0.5 1.0 1.99] [--only load,info,check,window,save]

Generates single-file models of the given sizes in GiB (float32 MatMul weights, a few nodes) in a
temporary folder, deleted afterwards, and runs each command in a fresh process, one at a time:
``onnx.load``, ``onnxviz info``, ``onnxviz check``, the window until its analysis is done
(``onnxviz FILE --screenshot OUT``) and an API edit + save. For each it prints the wall time, the peak
RSS of the process (``wait4``; a reaped worker process's own peak counts too) and the peak of the summed
RSS of the process and its children (sampled every 20 ms). The goal: peak memory at most 1.5x that of
``onnx.load``; open time at most 1.5x ``onnx.load`` plus a small model's.
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

total, side, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
full = side * side * 4
count, rest_rows = total // full, (total % full) // (side * 4)
graph = helper.make_graph([], "big", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, side])], [])
value = "x"
for i in range(count):
    w = onnx.TensorProto(name=f"w{i}", data_type=TensorProto.FLOAT, dims=[side, side])
    w.raw_data = np.full((side, side), 1.0 / (i + 2), np.float32).tobytes()
    graph.initializer.append(w)
    graph.node.append(helper.make_node("MatMul", [value, f"w{i}"], [f"h{i}"], name=f"matmul{i}"))
    value = f"h{i}"
rows = max(rest_rows, 1)
b = onnx.TensorProto(name="bias", data_type=TensorProto.FLOAT, dims=[rows, side])
b.raw_data = np.full((rows, side), 0.5, np.float32).tobytes()
graph.initializer.append(b)
graph.node.append(helper.make_node("Add", [value, "bias"], ["y"], name="add"))
graph.output.append(helper.make_tensor_value_info("y", TensorProto.FLOAT, [rows, side]))
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
with open(out, "wb") as f:
    f.write(model.SerializeToString())
"""

LOAD = "import onnx, sys; onnx.load(sys.argv[1])"
EDIT_SAVE = r"""
import sys
from onnxviz.model.document import Document
doc = Document.open(sys.argv[1])
doc.set_metadata("bench", "edited")
doc.save(sys.argv[2])
"""


@dataclass
class Run:
    seconds: float
    max_rss_mb: float  # wait4: the peak of the process (or of a reaped child, if higher)
    tree_mb: float  # the sampled peak of the summed RSS of the process and its children
    code: int


def _tree_rss_kb(pid: int) -> int:
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/status") as f:
                total += next((int(line.split()[1]) for line in f if line.startswith("VmRSS:")), 0)
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo += [int(c) for c in f.read().split()]
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


def generate(total: int, path: Path) -> None:
    subprocess.run([sys.executable, "-c", GENERATE, str(total), str(SIDE), str(path)], check=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="*", default=[0.5, 1.0, 1.99], help="model sizes in GiB")
    parser.add_argument("--only", default="", help="comma-separated commands to run (default: all)")
    args = parser.parse_args()
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(REPO))
    only = [c for c in args.only.split(",") if c]
    print(f"{'model':>9} {'command':<10} {'time s':>7} {'max RSS MB':>11} {'tree MB':>8} {'x load':>7}")
    with tempfile.TemporaryDirectory(prefix="onnxviz-small-") as tmp:  # the time goal's "small model"
        generate(2**20, Path(tmp) / "small.onnx")
        r = run(commands(Path(tmp) / "small.onnx", Path(tmp))["window"], env)
        print(f"{'1 MiB':>9} {'window':<10} {r.seconds:>7.2f} {r.max_rss_mb:>11.0f} {r.tree_mb:>8.0f}", flush=True)
    for size in args.sizes:
        with tempfile.TemporaryDirectory(prefix="onnxviz-big-") as tmp:
            folder = Path(tmp)
            model = folder / "big.onnx"
            generate(int(size * 2**30), model)
            load_mb = 0.0
            for name, argv in commands(model, folder).items():
                if only and name not in only and name != "onnx.load":
                    continue
                r = run(argv, env)
                load_mb = load_mb or r.max_rss_mb
                print(f"{size:>5.2f} GiB {name:<10} {r.seconds:>7.2f} {r.max_rss_mb:>11.0f} {r.tree_mb:>8.0f} "
                      f"{max(r.max_rss_mb, r.tree_mb) / load_mb:>7.2f}" + ("" if r.code in (0, 1) else "  FAILED"),
                      flush=True)
                (folder / "saved.onnx").unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
