"""How long the command line takes on every hostile file (tests/hostile.py): ``info`` and ``check`` of each,
each a fresh process, one at a time. The goal: an answer within 10 s for every file.

    .venv/bin/python bench/bench_hostile_cli.py [--top 10]

Prints the slowest commands, their seconds and exit codes, and the slowest of all. The test
(tests/cli/test_hostile_cli.py) checks the answers and that no command hangs; the figure is this script's,
so a loaded machine never fails a test.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import hostile  # noqa: E402

GOAL_S = 10.0


def timed(args: list[str], cwd: Path) -> tuple[float, int]:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "onnxviz", *args], cwd=cwd, env=env, capture_output=True,
                          timeout=600)
    return time.perf_counter() - start, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=10)
    top = parser.parse_args().top
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        rows = []
        for name, (_case, path) in hostile.build_all(folder).items():
            for command in ("info", "check"):
                seconds, code = timed([command, str(path)], folder)
                rows.append((seconds, code, f"{command} {name}"))
    rows.sort(reverse=True)
    for seconds, code, what in rows[:top]:
        print(f"{seconds:6.2f} s  exit {code}  {what}")
    over = [what for seconds, _, what in rows if seconds > GOAL_S]
    print(f"{len(rows)} commands, slowest {rows[0][0]:.2f} s; over {GOAL_S:.0f} s: {over or 'none'}")


if __name__ == "__main__":
    main()
