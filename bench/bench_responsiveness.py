"""How long the GUI thread freezes while a big model opens and validates, and while an edit validates.

    python bench/bench_responsiveness.py [--runs 3] [--with-run] [FILE ...]

Defaults to the 12k-, 61k- and 123k-node models of bench/synth.py (300, 1500 and 3000 layers,
made on first use into .cache/onnxviz-tests/). Each run is a fresh process, offscreen, with the
real MainWindow. A 10 ms QTimer on the GUI thread measures the longest gap between its ticks
("block" = the longest time the window could not react) from ``open_path`` until the canvas's
``scene_ready``, the validation result and the Model panel's figures have all arrived; then the
same from an edit until its validation result and the new figures arrived: "edit" renames a node within
its name-scope group (its box text changes in place), "move" renames it out of its group (the graph is
laid out again; also until that is drawn); with
``--with-run``, also from Run (every value captured, in the worker process) until the result is
shown and half a second after.

Culprits: a sampler thread records the GUI thread's Python stack every 2 ms; the longest block is
charged to what the GUI thread was running then (innermost onnxviz frames), or, when the sampler
itself could not run, to whoever held the GIL. Prints medians over the runs and the top 3 culprits
of the longest block of the slowest run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

from gui_probe import GuiStallProbe, fresh_app, fresh_window, print_and_exit, run_child, wait_until
from synth import synth_file

DEFAULT_LAYERS = (300, 1500, 3000)
THIS_FILE = __file__  # the module's globals are cleared at exit, while the sampler may still look

def where(frame: FrameType | None) -> str | None:
    """The innermost onnxviz frame and its onnxviz caller; None when the thread is idle in this script."""
    found: list[str] = []
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename == THIS_FILE:
            break
        if "/onnxviz/" in filename and len(found) < 2:
            found.append(f"{filename.split('/onnxviz/')[-1]}:{frame.f_lineno} {frame.f_code.co_name}")
        frame = frame.f_back
    return " < ".join(found) or None


Sample = tuple[float, float, str | None, list[str]]


class Sampler(threading.Thread):
    """Every 2 ms: what the GUI thread runs (when the sampler cannot run, something holds the GIL)."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.samples: list[Sample] = []
        self.running = True

    def run(self) -> None:
        main, last = threading.main_thread().ident, time.perf_counter()
        while self.running:
            time.sleep(0.002)
            now = time.perf_counter()
            frames = sys._current_frames()
            others = [w for i, f in frames.items() if i not in (main, self.ident) for w in [where(f)] if w]
            self.samples.append((last, now, where(frames.get(main or 0)), others))
            # no frame kept while asleep: a frame whose function returned meanwhile would be freed here, with its
            # locals (the end of a 123k-node layout: 30-70 ms of deallocation in this thread, the GIL held)
            del frames
            last = now

    def blame(self, span: tuple[float, float]) -> list[tuple[str, float]]:
        """Time inside the GUI block charged to what the GUI thread ran; GIL gaps to the others."""
        charge: dict[str, float] = {}
        for t0, t1, gui, others in self.samples:
            lo, hi = max(t0, span[0]), min(t1, span[1])
            if hi <= lo:
                continue
            if t1 - t0 > 0.02:  # the sampler itself was locked out: someone held the GIL
                who = f"GIL held; gui at {gui}" if gui else "GIL held by: " + " | ".join(others[:2])
            else:
                who = f"gui: {gui}" if gui else "gui idle/in Qt C++"
            charge[who] = charge.get(who, 0.0) + hi - lo
        self.samples.clear()
        return sorted(charge.items(), key=lambda item: -item[1])[:3]


def measure(path: Path, with_run: bool) -> dict[str, Any]:
    """In a fresh process: open ``path``, rename a node, optionally run; the pauses meanwhile."""
    fresh_app()
    window = fresh_window()
    marks: set[str] = set()
    window.canvas.scene_ready.connect(lambda *_: marks.add("drawn"))
    window.validation.finished.connect(lambda *_: marks.add("validated"))
    panel = window.panels.model_panel
    real_on_figures = panel._on_figures

    def on_figures(*args: Any) -> None:
        real_on_figures(*args)
        marks.add("figures")

    panel._on_figures = on_figures  # type: ignore[method-assign]

    def settled(*wanted: str) -> Callable[[], bool]:
        return lambda: set(wanted) <= marks and panel._task is None  # the panel has no pending work

    blocks, sampler = GuiStallProbe(interval_ms=10), Sampler()
    sampler.start()
    window.open_path(str(path))
    result: dict[str, Any] = dict(opened=wait_until(settled("drawn", "validated", "figures")))
    result.update(open_block=blocks.worst, open_blame=sampler.blame(blocks.span))
    nodes = window.doc.model.graph.node
    scoped = [i for i, n in enumerate(nodes) if "/" in n.name]  # synth's Transpose, else any node in a group
    node = next((i for i in scoped if nodes[i].op_type == "Transpose"), scoped[0] if scoped else len(nodes) // 2)
    group = nodes[node].name.rpartition("/")[0]
    for key, took, name, wanted in (("edit", "edited", f"{group}/renamed_by_bench", ("validated", "figures")),
                                    ("move", "moved", "renamed_by_bench",  # drawn again when it left a group
                                     ("validated", "figures", "drawn") if group else ("validated", "figures"))):
        marks.clear()
        blocks.reset()
        window.doc.edit.rename_node(node, name)
        result.update({took: wait_until(settled(*wanted)), f"{key}_block": blocks.worst,
                       f"{key}_blame": sampler.blame(blocks.span)})
    result.update(ran=0.0, run_block=0.0, run_blame=[])
    if with_run:
        result.update(_run(window, marks, blocks, sampler))
    sampler.running = False
    from onnxviz.model.background.procpool import shared_worker

    shared_worker().shutdown()
    result["nodes"] = window.doc.index.node_count()
    return result


def _run(window: Any, marks: set[str], blocks: GuiStallProbe, sampler: Sampler) -> dict[str, Any]:
    from onnxviz.model.runner.inputs import build_feeds, input_specs

    controller = window.run_controller
    controller.run_finished.connect(lambda *_: marks.add("ran"))
    feeds = build_feeds(input_specs(window.doc.model), {}, {}, seed=0)
    marks.clear()
    blocks.reset()
    controller.runs.start(window.doc, feeds, "", None)
    ran = wait_until(lambda: "ran" in marks, timeout_s=900)
    wait_until(lambda: False, timeout_s=0.5)  # the dock and the overlay settle after the result
    return dict(ran=ran, run_block=blocks.worst, run_blame=sampler.blame(blocks.span))


def run_once(path: Path, with_run: bool) -> dict[str, Any]:
    return run_child(__file__, [str(path), *(["--with-run"] if with_run else [])])


def print_blame(title: str, blame: list[tuple[str, float]]) -> None:
    for where, seconds in blame:
        print(f"    {title}: {1000 * seconds:6.0f} ms  {where}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--with-run", action="store_true",
                        help="also run the model (Run menu, every value captured) and time the pause as it arrives")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print_and_exit(measure(args.files[0], args.with_run))
    print(f"{'file':<18} {'nodes':>7} {'open s':>7} {'block ms':>8} {'edit s':>7} {'block ms':>8} "
          f"{'move s':>7} {'block ms':>8}" + (f" {'run s':>7} {'block ms':>8}" if args.with_run else ""))
    for path in args.files or [synth_file(n) for n in DEFAULT_LAYERS]:
        if not path.exists():
            print(f"{path.name:<18} missing")
            continue
        runs = [run_once(path, args.with_run) for _ in range(args.runs)]
        med = {k: statistics.median(r[k] for r in runs) for k in ("nodes", "opened", "open_block", "edited",
                                                                    "edit_block", "moved", "move_block", "ran",
                                                                    "run_block")}
        print(f"{path.name:<18} {int(med['nodes']):>7} {med['opened']:>7.2f} {1000 * med['open_block']:>8.0f} "
              f"{med['edited']:>7.2f} {1000 * med['edit_block']:>8.0f} "
              f"{med['moved']:>7.2f} {1000 * med['move_block']:>8.0f}"
              + (f" {med['ran']:>7.2f} {1000 * med['run_block']:>8.0f}" if args.with_run else ""))
        worst = max(runs, key=lambda r: r["open_block"] + r["edit_block"] + r["move_block"] + r["run_block"])
        for key in ("open", "edit", "move", "run"):
            print_blame(key, worst[f"{key}_blame"])
    print(f"medians of {args.runs} fresh processes; block = longest GUI-thread gap (10 ms timer);"
          " culprits: top 3 of the longest block of the slowest run")


if __name__ == "__main__":
    main()
