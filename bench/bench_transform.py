"""Transforms in the window: the time from Transform (the dialog's button) until the result replaces the model
and its diff is shown, the longest GUI-thread pause meanwhile, and the time of its undo (the model's bytes back). The pauses are
split: until the model is replaced (the transform's own work), then while the diff opens and the graph is laid out.

    QT_QPA_PLATFORM=offscreen python bench/bench_transform.py [--runs N] [--tool NAME] [MODEL ...]

Defaults to bench/synth.py's 300-layer model (12,311 nodes, 1.2 MB) and a 24-layer one with hidden size 512
(1,007 nodes, 151 MB of weights), with onnxruntime's basic optimizations (the transform that changes the most
of a model this shape). Each run is a fresh window in a fresh process.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from gui_probe import (
    GuiStallProbe,
    fresh_app,
    fresh_window,
    print_and_exit,
    run_child,
    scratch_folder,
    wait_for,
    wait_until,
)
from synth import CACHE, synth_file


def wide_file() -> Path:
    """24 layers of hidden size 512 (written once into the cache)."""
    path = CACHE / "bench-transform" / "synth24x512.onnx"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, str(Path(__file__).with_name("synth.py")), "24", str(path), "--hidden", "512"],
                       check=True, stdout=subprocess.DEVNULL)
    return path


def measure(path: Path, tool: str) -> dict[str, Any]:
    fresh_app()
    from onnxviz.model.matching import Limits
    from onnxviz.model.transform import Settings
    from onnxviz.ui.transform.dialog import Request

    window = fresh_window()
    window.open_path(path)
    wait_for(window.loading_finished)
    wait_until(lambda: not window.canvas.busy and not window.validation.busy)
    c = window.transforms
    probe = GuiStallProbe()
    start = time.perf_counter()
    c.start(Request(Settings(tool), Limits()))
    wait_until(lambda: c.outcome is not None or c.task is None, timeout_s=600)
    if c.outcome is None:
        raise SystemExit(f"the transform did not finish: {window.statusBar().currentMessage()}")
    replaced = time.perf_counter() - start
    probe.tick()
    stall = probe.worst  # until the model is replaced: the transform's own work
    probe.reset()
    wait_until(lambda: window.diff.active and not window.canvas.busy, timeout_s=600)
    shown = time.perf_counter() - start
    probe.tick()
    diff_stall = probe.worst  # the diff's (File > Compare With...'s) work, and the new graph's layout
    doc = window.doc
    t0 = time.perf_counter()
    doc.undo()
    undo = time.perf_counter() - t0
    same = doc.serialize() == path.read_bytes()
    return {"replaced_s": replaced, "diff_shown_s": shown, "stall_ms": 1000 * stall, "diff_stall_ms": 1000 * diff_stall,
            "undo_ms": 1000 * undo,
            "undo_gives_the_bytes": same, "seconds_tool": c.outcome.seconds if c.outcome else None,
            "nodes": len(doc.model.graph.node), "scratch": str(scratch_folder())}


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tool", default="ort-optimize")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print_and_exit(measure(args.files[0], args.tool))
    for path in args.files or [synth_file(300), wide_file()]:
        results = [run_child(__file__, [str(path), "--tool", args.tool]) for _ in range(args.runs)]
        load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else []
        print(f"{path.name} ({path.stat().st_size / 2**20:.1f} MB), {args.tool}, {args.runs} runs, load {' '.join(load)}:")
        for key in ("replaced_s", "diff_shown_s", "stall_ms", "diff_stall_ms", "undo_ms"):
            values = [r[key] for r in results]
            print(f"  {key:12} median {statistics.median(values):8.3f}  (runs: {', '.join(f'{v:.3f}' for v in values)})")
        print(f"  undo gives the file's bytes back: {all(r['undo_gives_the_bytes'] for r in results)}")


if __name__ == "__main__":
    main()
