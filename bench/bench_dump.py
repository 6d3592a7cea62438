"""``onnxviz run MODEL --dump DIR`` against a plain onnxruntime run of every value, as whole processes, and what
the command leaves running after it exits.

    python bench/bench_dump.py [--runs 5] [FILE ...]

Defaults to bench/synth.py's 300-layer model (12k nodes, 12,312 values) and light_resnet50 of onnx's test data.
"plain" is a fresh Python process that reads the model, marks every node output as a graph output, creates an
onnxruntime session (graph optimizations off, as the capture runs) and runs it once on the inputs onnxviz would
generate; "dump" is the command, which also computes every value's statistics and writes them all with index.json.
The two run one after the other, ``--runs`` times; prints the medians, their ratio and the load average. "left"
counts the processes the command left behind (this bench is their subreaper: an orphan becomes its child).
"""

from __future__ import annotations

import argparse
import ctypes
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import onnx
from synth import synth_file

PR_SET_CHILD_SUBREAPER = 36
PLAIN = """
import sys
import onnx, onnxruntime as ort
from onnxviz.model.runner.inputs import build_feeds, input_specs
model = onnx.load(sys.argv[1])
feeds = build_feeds(input_specs(model), {}, {}, seed=0)
known = {o.name for o in model.graph.output}
for node in model.graph.node:
    for name in node.output:
        if name and name not in known:
            model.graph.output.add().name = name
            known.add(name)
so = ort.SessionOptions()
so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
session = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
values = session.run(None, feeds)
print(len(values))
"""


def default_files() -> list[Path]:
    light = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light" / "light_resnet50.onnx"
    return [synth_file(300), light]


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def left_behind() -> int:
    """Processes this one adopted (orphans of the command) or still has, reaped now."""
    count = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == os.getpid():
            count += 1
            if os.environ.get("BENCH_DUMP_SHOW"):
                print("left:", (entry / "stat").read_text()[:120], file=sys.stderr)
            os.kill(int(entry.name), 9)
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG) == (0, 0):
                break
        except ChildProcessError:
            break
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    if sys.platform.startswith("linux"):
        ctypes.CDLL("libc.so.6").prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    print(f"{'file':<24} {'dump s':>7} {'plain s':>7} {'ratio':>5} {'left':>4}  load")
    for path in args.files or default_files():
        load = os.getloadavg()[0]
        dumps, plains, left = [], [], 0
        for _round in range(args.runs):
            folder = Path(tempfile.mkdtemp(prefix="onnxviz-bench-dump-"))
            try:
                dumps.append(timed([sys.executable, "-m", "onnxviz", "run", str(path), "--dump", str(folder / "d")]))
                time.sleep(0.2)  # what is still running 0.2 s after the command exited is left behind
                left += left_behind()
            finally:
                shutil.rmtree(folder, ignore_errors=True)
            plains.append(timed([sys.executable, "-c", PLAIN, str(path)]))
        dump, plain = statistics.median(dumps), statistics.median(plains)
        print(f"{path.name:<24} {dump:>7.2f} {plain:>7.2f} {dump / plain:>5.2f} {left:>4}  "
              f"{load:.1f}-{os.getloadavg()[0]:.1f}")
    print(f"medians of {args.runs} runs each, one after the other")


if __name__ == "__main__":
    main()
