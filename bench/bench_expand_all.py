"""Expand All in the window: from the menu's action until the expanded graph is drawn, and the longest time the
GUI thread could not react meanwhile.

    python bench/bench_expand_all.py [--runs 3] [FILE ...]

Defaults to the 123k-node model of bench/synth.py (3000 layers, made on first use into .cache/onnxviz-tests/).
Each run is a fresh process, offscreen, with the real MainWindow at 1400x900: the model is opened and left to
settle (drawn, validated, the Model panel's figures in), then View > Expand All Groups is triggered. "drawn" is
the canvas's ``scene_ready`` with every group open; a 10 ms QTimer on the GUI thread measures the longest gap
between its ticks ("block"), and the sampler of bench_responsiveness.py names what the GUI thread ran then.
Prints the medians over the runs (seconds, milliseconds, CPU seconds of the window's process) and the load average.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path
from typing import Any

from bench_responsiveness import Sampler, print_blame
from gui_probe import GuiStallProbe, fresh_app, fresh_window, print_and_exit, run_child, wait_until
from synth import synth_file


def measure(path: Path) -> dict[str, Any]:
    """In a fresh process: open ``path``, let it settle, Expand All; the time until drawn and the pauses."""
    fresh_app()
    window = fresh_window()
    marks: set[str] = set()
    window.canvas.scene_ready.connect(lambda *_: marks.add("drawn"))
    window.validation.finished.connect(lambda *_: marks.add("validated"))
    window.open_path(str(path))
    wait_until(lambda: {"drawn", "validated"} <= marks and not window.canvas.busy)
    wait_until(lambda: False, timeout_s=1.0)  # the Model panel's figures and the first paints settle
    canvas = window.canvas
    groups = len(canvas.layout_obj.tree.paths)
    marks.clear()
    blocks, sampler = GuiStallProbe(interval_ms=10), Sampler()
    sampler.start()
    cpu = time.process_time()
    canvas.expand_all(True)
    took = wait_until(lambda: "drawn" in marks and not canvas.busy and
                      len(canvas.layout_obj.expanded) == groups, timeout_s=600)
    cpu = time.process_time() - cpu
    sampler.running = False
    from onnxviz.model.background.procpool import shared_worker

    shared_worker().shutdown()
    scene = canvas.layout_obj.scene
    return dict(drawn=took, block=blocks.worst, blame=sampler.blame(blocks.span), cpu=cpu,
                boxes=scene.n_boxes, nodes=window.doc.index.node_count())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print_and_exit(measure(args.files[0]))
    print(f"load {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"{'file':<18} {'nodes':>7} {'boxes':>7} {'drawn s':>8} {'block ms':>8} {'CPU s':>6}")
    for path in args.files or [synth_file(3000)]:
        runs = [run_child(__file__, [str(path)]) for _ in range(args.runs)]
        med = {k: statistics.median(r[k] for r in runs) for k in ("nodes", "boxes", "drawn", "block", "cpu")}
        print(f"{path.name:<18} {int(med['nodes']):>7} {int(med['boxes']):>7} {med['drawn']:>8.2f} "
              f"{1000 * med['block']:>8.0f} {med['cpu']:>6.2f}")
        print_blame("expand", max(runs, key=lambda r: r["block"])["blame"])
    print(f"medians of {args.runs} fresh processes; load {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
