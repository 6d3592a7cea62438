"""Time to the first drawn graph with hostile doc strings and settings files (tests/hostile_side.py).

    python bench/bench_hostile_side.py [--runs 3] [--timeout 120] [CASE ...]

Each run is a fresh offscreen process with a settings folder of its own, opening a small model (4 nodes)
whose model, graph, node and function doc strings are the case's (or a short sentence for a settings
case). "window s": building the window (it reads the settings); "drawn s": from open_path to the graph
painted; "stall ms": the longest GUI-thread gap meanwhile. Prints medians; a run past --timeout counts
as never drawn.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from gui_probe import GuiStallProbe, print_and_exit, run_child, scratch_folder, wait_until

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

DEFAULT_CASES = ["doc:short", "doc:huge_048", "doc:huge", "doc:big_table", "doc:deep_lists", "doc:many_images",
                 "doc:fifo_image", "settings:none", "settings:many_recent", "settings:long_path_component",
                 "settings:huge_file", "settings:dev_zero_instead"]


def _doc_for(kind: str, name: str, folder: Path) -> str:
    import hostile_side

    if kind != "doc" or name == "short":
        return "A short description with a [link](https://onnx.ai)."
    if name == "huge_048":
        return hostile_side.huge_markdown(480_000)
    return hostile_side.DOC_CASES[name](folder)


def measure(case: str) -> dict[str, Any]:
    """In a fresh process: build the case, make the window, open the model, wait for the first drawing."""
    import hostile_side
    import onnx

    from onnxviz.ui.settings import use_settings_dir

    kind, _, name = case.partition(":")
    folder = scratch_folder()
    settings_dir = folder / "settings"
    settings_dir.mkdir()
    use_settings_dir(settings_dir)
    from onnxviz.ui.app import ensure_app

    ensure_app()
    if kind == "settings" and name != "none":
        hostile_side.SETTINGS_CASES[name](settings_dir)
    model_path = folder / "documented.onnx"
    onnx.save(hostile_side.documented_model(_doc_for(kind, name, folder)), model_path)
    from PySide6.QtCore import QCoreApplication

    from onnxviz.ui.main_window import MainWindow

    t0 = time.perf_counter()
    window = MainWindow()
    window.resize(1400, 900)
    window.show()
    QCoreApplication.processEvents()
    construct = time.perf_counter() - t0
    stalls = GuiStallProbe(interval_ms=5)
    marks: dict[str, float] = {}
    window.canvas.scene_ready.connect(lambda *_: marks.setdefault("drawn", time.perf_counter()))  # type: ignore[attr-defined]
    t0 = time.perf_counter()
    window.open_path(str(model_path))
    wait_until(lambda: "drawn" in marks, timeout_s=600)
    drawn = marks.get("drawn", time.perf_counter()) - t0
    stalls.tick()
    return dict(construct=construct, drawn=drawn, stall=stalls.worst)


def run_case(case: str, timeout_s: float) -> dict[str, Any] | str:
    """The child's figures, or why there are none."""
    try:
        return run_child(__file__, [case], timeout_s=timeout_s)
    except subprocess.TimeoutExpired:
        return f"never drawn (> {timeout_s:.0f} s)"
    except SystemExit as exc:  # the child failed: its last line says why
        return "failed: " + str(exc).strip().splitlines()[-1][:80]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cases", nargs="*", default=DEFAULT_CASES)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print_and_exit(measure(args.cases[0]))
    print(f"{'case':<32} {'window s':>8} {'drawn s':>8} {'stall ms':>8}")
    for case in args.cases:
        results = [run_case(case, args.timeout) for _ in range(args.runs)]
        runs = [r for r in results if not isinstance(r, str)]
        if not runs:
            print(f"{case:<32} {results[0]}", flush=True)
            continue
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        missed = f"  ({args.runs - len(runs)} runs without figures)" if len(runs) < args.runs else ""
        print(f"{case:<32} {med['construct']:>8.2f} {med['drawn']:>8.2f} {1000 * med['stall']:>8.0f}{missed}",
              flush=True)
    print(f"medians of {args.runs} fresh processes")


if __name__ == "__main__":
    main()
