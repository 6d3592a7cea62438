"""Leave the interpreter while background tasks receive big results from the worker process, N times.

    python bench/exit_race.py [--runs 12]

Each run is a fresh process that ends after a different delay; every one must exit with code 0 within
30 s. Before the fix (procpool's shutdown forgot to join the executor's thread, tasks could respawn the
worker during the interpreter's teardown, Qt threads still ran Python) about 5 runs in 12 hung at exit,
as bench_canvas.py's child once did on the 12k-node model (seen there as a SIGSEGV once in seven runs).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

CHILD = """
import sys, time
from PySide6.QtCore import QThreadPool
from onnxviz.model.background.procpool import shared_worker
from onnxviz.ui.app import ensure_app
from onnxviz.ui.tasks import Task

app = ensure_app()
worker = shared_worker()
pool = QThreadPool()
pool.setMaxThreadCount(2)

def work(progress, token):
    while True:
        worker.run(bytes, 64 << 20, token=token)

tasks = [Task(work).start(pool) for _ in range(3)]
time.sleep(float(sys.argv[1]))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=12)
    args = parser.parse_args()
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    bad = 0
    for k in range(args.runs):
        delay = 1.5 + 0.75 * k / max(args.runs - 1, 1)
        start = time.monotonic()
        try:
            code = subprocess.run([sys.executable, "-X", "faulthandler", "-c", CHILD, str(delay)], env=env,
                                  capture_output=True, timeout=30).returncode
        except subprocess.TimeoutExpired:
            code = None
        bad += code != 0
        print(f"delay {delay:.2f} s: {'HUNG' if code is None else f'exit {code}'} after "
              f"{time.monotonic() - start:.1f} s", flush=True)
    print(f"{args.runs - bad} of {args.runs} runs ended cleanly")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
