"""``onnxviz run MODEL --dump DIR`` against a plain onnxruntime run of every value, as whole processes, and what
the command leaves running after it exits.

    python bench/bench_dump.py [--runs 5] [--against CHECKOUT] [FILE ...]

Defaults to bench/synth.py's 300-layer model (12k nodes, 12,312 values) and light_resnet50 of onnx's test data.
"plain" is a fresh Python process that reads the model, marks every node output as a graph output, creates an
onnxruntime session (graph optimizations off, as the capture runs) and runs it once on the inputs onnxviz would
generate; "dump" is the command, which also computes every value's statistics and writes them all with index.json.
The two run one after the other, ``--runs`` times; prints the medians, their ratio and the load average. "left"
counts the processes the command left behind (this bench is their subreaper: an orphan becomes its child). "cpu"
is each command's CPU time, its runner process included (the figure to compare on a shared machine).

``--against CHECKOUT``: the command also from another checkout of onnxviz (its folder first on PYTHONPATH), in the
same rounds (this checkout, the other, the plain run), so that both see the same load.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import resource
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


def timed(command: list[str], folder: Path, checkout: Path | None = None) -> tuple[float, float]:
    """(seconds, CPU seconds of the process and the children it waited for) of ``command`` run in ``folder``,
    with ``checkout`` first on PYTHONPATH when given."""
    env = dict(os.environ)
    if checkout is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(checkout), env.get("PYTHONPATH", "")])
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=folder)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return seconds, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def dumped(path: Path, checkout: Path | None) -> tuple[float, float, int]:
    """(seconds, CPU seconds, processes left behind) of one ``run --dump`` into a new folder."""
    folder = Path(tempfile.mkdtemp(prefix="onnxviz-bench-dump-"))
    try:
        seconds, cpu = timed([sys.executable, "-m", "onnxviz", "run", str(path.resolve()), "--dump", "d"], folder,
                             checkout)
        time.sleep(0.2)  # what is still running 0.2 s after the command exited is left behind
        return seconds, cpu, left_behind()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


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
    parser.add_argument("--against", type=Path, help="another checkout of onnxviz, run alternately with this one")
    args = parser.parse_args()
    if sys.platform.startswith("linux"):
        ctypes.CDLL("libc.so.6").prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    checkouts: list[Path | None] = [None] + ([args.against.resolve()] if args.against else [])
    print(f"{'file':<24} {'checkout':<24} {'dump s':>7} {'cpu s':>6} {'plain s':>7} {'cpu s':>6} {'ratio':>5} "
          f"{'left':>4}  load")
    for path in args.files or default_files():
        load = os.getloadavg()[0]
        dumps: dict[Path | None, list[tuple[float, float]]] = {c: [] for c in checkouts}
        plains: list[tuple[float, float]] = []
        left = dict.fromkeys(checkouts, 0)
        for _round in range(args.runs):
            for checkout in checkouts:
                seconds, cpu, count = dumped(path, checkout)
                dumps[checkout].append((seconds, cpu))
                left[checkout] += count
            with tempfile.TemporaryDirectory(prefix="onnxviz-bench-plain-") as folder:
                plains.append(timed([sys.executable, "-c", PLAIN, str(path.resolve())], Path(folder)))
        plain, plain_cpu = (statistics.median(p[k] for p in plains) for k in (0, 1))
        for checkout in checkouts:
            dump, cpu = (statistics.median(d[k] for d in dumps[checkout]) for k in (0, 1))
            print(f"{path.name:<24} {str(checkout or 'this'):<24.24} {dump:>7.2f} {cpu:>6.2f} {plain:>7.2f} "
                  f"{plain_cpu:>6.2f} {dump / plain:>5.2f} {left[checkout]:>4}  {load:.1f}-{os.getloadavg()[0]:.1f}")
    print(f"medians of {args.runs} rounds, each round the command (of each checkout) then the plain run")


if __name__ == "__main__":
    main()
