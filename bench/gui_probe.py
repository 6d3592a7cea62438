"""What the window benches share: a probe for GUI-thread stalls, waiting on the event loop,
and running a measurement in a fresh offscreen process.

A stall is the longest gap between ticks of a short QTimer on the GUI thread: while the GUI
thread is busy (or cannot get the GIL) the timer cannot tick, and the window cannot react.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEventLoop, QTimer, SignalInstance


class GuiStallProbe:
    """The longest gap between ticks of an ``interval_ms`` timer on the GUI thread, and when.

    With ``cpu=True`` (Linux) also what each thread of the process ran on a CPU during the longest gap
    (:attr:`worst_cpu`, native thread id -> seconds, from the kernel's ``schedstat``): a gap much longer than any
    thread's CPU in it is time the process waited for a CPU (the machine's load), not work that held the GIL."""

    def __init__(self, interval_ms: int = 10, cpu: bool = False) -> None:
        self.worst = 0.0
        self.span = (0.0, 0.0)
        self.worst_cpu: dict[int, float] = {}
        self._cpu = threads_cpu() if cpu else None
        self._last = time.perf_counter()
        self._timer = QTimer(interval=interval_ms)
        self._timer.timeout.connect(self.tick)
        self._timer.start()

    def tick(self) -> None:
        """Also call it after synchronous work that never let the timer run, to count it."""
        now = time.perf_counter()
        cpu = threads_cpu() if self._cpu is not None else None
        if now - self._last > self.worst:
            self.worst, self.span = now - self._last, (self._last, now)
            if cpu is not None and self._cpu is not None:
                self.worst_cpu = {t: c - self._cpu.get(t, 0.0) for t, c in cpu.items()}
        self._last, self._cpu = now, cpu

    def reset(self) -> None:
        self._last = time.perf_counter()
        self.worst = 0.0
        self.span = (0.0, 0.0)
        self.worst_cpu = {}
        self._cpu = threads_cpu() if self._cpu is not None else None


def threads_cpu() -> dict[int, float]:
    """Seconds each thread of this process has run on a CPU, by native thread id (Linux; empty elsewhere)."""
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return {}
    return {int(tid): thread_cpu(int(tid)) for tid in tids}


def thread_cpu(tid: int, waited: bool = False) -> float:
    """Seconds thread ``tid`` (a native id) of this process has run on a CPU (``waited``: has waited for one, ready to
    run); 0 when unknown (ended, not Linux)."""
    try:
        with open(f"/proc/self/task/{tid}/schedstat") as f:
            return int(f.read().split()[1 if waited else 0]) / 1e9
    except (OSError, ValueError, IndexError):
        return 0.0


def wait_until(condition: Callable[[], bool], timeout_s: float = 300.0) -> float:
    """Run the event loop until ``condition()`` holds (checked every 10 ms) or the time is up;
    the seconds waited."""
    t0 = time.perf_counter()
    if condition():
        return 0.0
    loop = QEventLoop()

    def check() -> None:
        if condition() or time.perf_counter() - t0 >= timeout_s:
            loop.quit()

    poll = QTimer(interval=10)
    poll.timeout.connect(check)
    poll.start()
    loop.exec()
    poll.stop()
    return time.perf_counter() - t0


def wait_for(signal: SignalInstance, timeout_s: float = 300.0) -> None:
    """Run the event loop until ``signal`` is emitted or the time is up."""
    loop = QEventLoop()
    signal.connect(loop.quit)
    QTimer.singleShot(int(timeout_s * 1000), loop.quit)
    loop.exec()


_SCRATCH: list[Path] = []


def scratch_folder(prefix: str = "onnxviz-bench-") -> Path:
    """A new temporary folder, removed with everything in it when this process exits (also through
    :func:`print_and_exit`, which skips the exit handlers)."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    _SCRATCH.append(folder)
    return folder


@atexit.register
def _remove_scratch() -> None:
    while _SCRATCH:
        shutil.rmtree(_SCRATCH.pop(), ignore_errors=True)


def fresh_app() -> None:
    """The application, with settings of its own: nobody's saved layout or theme leaks in."""
    from onnxviz.ui.settings import use_settings_dir

    use_settings_dir(scratch_folder("onnxviz-bench-settings-"))
    from onnxviz.ui.app import ensure_app

    ensure_app()


def fresh_window(width: int = 1400, height: int = 900) -> Any:
    """A shown MainWindow (after :func:`fresh_app`). Typed Any: its docks and panels are attributes
    set while it is built."""
    from PySide6.QtCore import QCoreApplication

    from onnxviz.ui.main_window import MainWindow

    window = MainWindow()
    window.resize(width, height)
    window.show()
    QCoreApplication.processEvents()
    return window


def run_child(script: str, args: list[str], extra_env: dict[str, str] | None = None,
              timeout_s: float = 900.0) -> dict[str, Any]:
    """Run ``script --child ARGS`` offscreen in a fresh process; the JSON line it printed."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", **(extra_env or {})}
    out = subprocess.run([sys.executable, script, "--child", *args], capture_output=True, text=True, env=env,
                         timeout=timeout_s)
    line = next((x for x in out.stdout.splitlines() if x.startswith("{")), None)
    if line is None:
        raise SystemExit(f"{Path(args[0]).name if args else script}: the child failed:\n{out.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(line)
    return result


def print_and_exit(result: dict[str, Any]) -> None:
    """Hand the child's result to :func:`run_child` and leave without tearing Qt down."""
    print(json.dumps(result))
    sys.stdout.flush()
    _remove_scratch()
    os._exit(0)


def files_bench_args(description: str | None, measure: Callable[[Path], dict[str, Any]]) -> argparse.Namespace:
    """The arguments of a bench over model files, each measured in fresh processes (``files``, ``--runs``).
    In the child that :func:`run_child` starts, measure ``files[0]``, hand the result over and exit."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print_and_exit(measure(args.files[0]))
    return args
