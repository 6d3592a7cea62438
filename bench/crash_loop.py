"""Run bench_canvas.py's child on one model N times and count the runs that did not exit cleanly.

    python bench/crash_loop.py MODEL.onnx [--runs 20] [--jobs 2] [--log DIR]

Each run is ``python -X faulthandler bench_canvas.py MODEL --child --repeat 1`` offscreen; ``--jobs``
runs that many at once (load makes timing races likelier). A run that dies (signal, exit code, no
JSON line, or 300 s) has its stderr kept in ``--log`` and counted; the last line is the count.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent


def one(model: Path, log: Path, k: int) -> str:
    """One child run; '' when it ended cleanly, else a short description (its stderr kept in ``log``)."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(HERE.parent)}
    cmd = [sys.executable, "-X", "faulthandler", str(HERE / "bench_canvas.py"), str(model), "--child",
           "--repeat", "1"]
    start = time.monotonic()
    try:
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired as exc:
        (log / f"run{k}.err").write_text(str(exc.stderr or ""))
        return "HUNG"
    code = done.returncode
    ok = code == 0 and done.stdout.strip().endswith("}")
    if ok:
        return ""
    (log / f"run{k}.err").write_text(done.stderr)
    name = signal.Signals(-code).name if code < 0 else f"exit {code}"
    return f"{name} after {time.monotonic() - start:.1f} s"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=Path)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--log", type=Path, default=Path("/tmp/onnxviz-crash-loop"))
    args = parser.parse_args()
    args.log.mkdir(parents=True, exist_ok=True)
    bad = 0
    with ThreadPoolExecutor(args.jobs) as pool:
        for k, what in enumerate(pool.map(lambda k: one(args.model, args.log, k), range(args.runs))):
            bad += bool(what)
            print(f"run {k}: {what or 'ok'}", flush=True)
    print(f"{bad} of {args.runs} runs crashed, hung or failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
