"""Opening a big model until its analysis is complete: ``onnxviz FILE --screenshot``, which waits for the
graph, the checker, shape inference, the problems and the Model panel's figures, as a whole process; and
the phases of the same in one process.

    python bench/bench_analysis.py [--runs 3] [FILE ...]

Defaults to the 12k-, 61k- and 123k-node models of bench/synth.py (300, 1500 and 3000 layers, made on
first use into .cache/onnxviz-tests/). "process s" is the wall time of the whole command, "cpu s" the
CPU time of it and its worker processes. The phases are seconds since the window was made: the file read
(loaded), the graph's first frame (drawn), the first problems shown (checker and schema checks), the
validation result, the figures; "pause ms" is the longest GUI-thread gap (5 ms timer) from the window's
first show until all of it is in; "load" is the 1-minute load average as the runs began (other work on the
machine: the wall times mean little above 2 on a 2-core machine, the CPU time more). Prints medians of the
runs and the worst run's wall time and pause (the CPU is often shared: run with --runs 5+).

The package's bytecode is compiled first, as an installed package (or any run after the first) has it: a
machine that sets PYTHONDONTWRITEBYTECODE would otherwise compile every module in all three processes on
every run (~0.2 s each), which no user's start pays.
"""

from __future__ import annotations

import compileall
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from gui_probe import GuiStallProbe, files_bench_args, fresh_app, run_child, scratch_folder
from synth import synth_file

DEFAULT_LAYERS = (300, 1500, 3000)
PHASES = ("loaded", "drawn", "first", "validated", "figures", "settled")


def whole_process(path: Path) -> tuple[float, float]:
    """(wall s, CPU s) of ``onnxviz FILE --screenshot OUT.png``, with its workers."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryDirectory(prefix="onnxviz-bench-shot-") as folder:
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "onnxviz", str(path), "--screenshot", str(Path(folder) / "shot.png")],
                       check=True, capture_output=True)
        wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def phases(path: Path) -> dict[str, Any]:
    """In a fresh process: ``--screenshot``'s own steps, with the time of each phase."""
    fresh_app()
    from onnxviz.model.background.early import analyse_early
    from onnxviz.ui.main_window import MainWindow
    from onnxviz.ui.screenshot import screenshot_and_quit

    early = analyse_early(path)  # as the command does, before its window is built
    window = MainWindow()
    if early is not None:
        window.validation.adopt(early)
    t0 = time.perf_counter()
    marks: dict[str, float] = {}

    def mark(name: str) -> None:
        marks.setdefault(name, time.perf_counter() - t0)

    window.loading_finished.connect(lambda: mark("loaded"))
    window.canvas.scene_ready.connect(lambda *_: mark("drawn"))
    first_found = getattr(window.validation, "first_found", None)  # absent before the problems were streamed
    if first_found is not None:
        first_found.connect(lambda *_: mark("first"))
    window.validation.finished.connect(lambda *_: mark("validated"))
    panel = window.panels.model_panel
    shown = panel._show_figures

    def show_figures(prepared: Any) -> None:
        shown(prepared)
        mark("figures")

    panel._show_figures = show_figures  # type: ignore[method-assign]
    probe = GuiStallProbe(interval_ms=5)
    screenshot_and_quit(window, str(path), str(scratch_folder() / "shot.png"))
    mark("settled")
    return {**{k: marks.get(k, float("nan")) for k in PHASES}, "pause": probe.worst,
            "nodes": window.doc.index.node_count() if window.doc is not None else 0}


def main() -> None:
    args = files_bench_args(__doc__, phases)
    compileall.compile_dir(Path(__file__).resolve().parents[1] / "onnxviz", quiet=1)
    print(f"{'file':<18} {'nodes':>7} {'process s':>9} {'worst s':>7} {'cpu s':>6} "
          + " ".join(f"{k:>9}" for k in PHASES) + f" {'pause ms':>8} {'worst ms':>8} {'load':>5}")
    for path in args.files or [synth_file(n) for n in DEFAULT_LAYERS]:
        load = os.getloadavg()[0]
        runs = [(whole_process(path), run_child(__file__, [str(path)])) for _ in range(args.runs)]
        wall = statistics.median(w for (w, _c), _p in runs)
        cpu = statistics.median(c for (_w, c), _p in runs)
        worst_wall = max(w for (w, _c), _p in runs)
        worst_pause = max(p["pause"] for _w, p in runs)
        med = {k: statistics.median(p[k] for _w, p in runs) for k in (*PHASES, "pause", "nodes")}
        print(f"{path.name:<18} {int(med['nodes']):>7} {wall:>9.2f} {worst_wall:>7.2f} {cpu:>6.2f} "
              + " ".join(f"{med[k]:>9.2f}" for k in PHASES)
              + f" {1000 * med['pause']:>8.0f} {1000 * worst_pause:>8.0f} {load:>5.1f}")
    print(f"medians of {args.runs} runs, and the worst run's figure (worst s, worst ms); phases in seconds from the "
          "window's first show (one process)")


if __name__ == "__main__":
    main()
