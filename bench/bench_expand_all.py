"""Expand All in the window: from the menu's action until the expanded graph is drawn, and the longest time the
GUI thread could not react meanwhile.

    python bench/bench_expand_all.py [--runs 3] [--against CHECKOUT] [FILE ...]

Defaults to the 123k-node model of bench/synth.py (3000 layers, made on first use into .cache/onnxviz-tests/).
Each run is a fresh process, offscreen, with the real MainWindow at 1400x900: the model is opened and left to
settle (drawn, validated, the Model panel's figures in), then View > Expand All Groups is triggered. "drawn" is
the canvas's ``scene_ready`` with every group open; a 10 ms QTimer on the GUI thread measures the longest gap
between its ticks ("block"), and the sampler of bench_responsiveness.py names what the GUI thread ran then.
With ``--against CHECKOUT`` each run is followed by one of that checkout of onnxviz (put first on PYTHONPATH).
Prints the medians over the runs (seconds, milliseconds, CPU seconds of the window's process) and the load average,
then where the time until drawn went (medians): the layout job's thread making the layout object and laying it out
(wall; its thread's CPU), the same thread making the drawing's arrays (``Drawable``), the GUI thread taking the result
in (``_deliver``: the canvas's state, the minimap's image) and painting the first frame; "other" is the rest (the job
waiting to start, signals waiting for the GUI thread). With the longest pause: what each thread ran on a CPU in it
(the GUI thread, the layout job's, the others; Linux): a pause far longer than that is time the whole process waited
for a CPU on a loaded machine. Last, a figure the load does not change: the longest time the GUI thread and the layout
job's thread each held the GIL, in that thread's CPU (a C call, a frame freed with big locals), and where it stood.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

from bench_responsiveness import Sampler, print_blame, where
from gui_probe import (
    GuiStallProbe,
    fresh_app,
    fresh_window,
    print_and_exit,
    run_child,
    thread_cpu,
    wait_until,
)
from synth import synth_file

STAGES = ("layout", "drawing", "handover", "paint")


class GilProbe(threading.Thread):
    """The longest time one thread held the GIL, counted in CPU time (so the machine's load does not change it): every
    millisecond this thread sleeps and takes the GIL back, and looks at how long the GUI thread and the layout job's
    thread ran on a CPU meanwhile, less the time this thread itself waited for a CPU (meanwhile the others may have
    passed the GIL between them). Python hands the GIL over every 0.5 ms, so what is left of a long run is one C call
    or a frame freed with big locals, and where the thread stands once the probe has the GIL says which (a NumPy sort
    that lets the GIL go counts too: an upper bound)."""

    def __init__(self, stages: Stages) -> None:
        super().__init__(daemon=True)
        self.stages = stages
        self.running = True
        self.worst: dict[str, tuple[float, str]] = {"gui": (0.0, ""), "job": (0.0, "")}

    def run(self) -> None:
        gui, me = threading.main_thread(), threading.get_native_id()
        before: dict[str, tuple[int, float]] = {}
        waited_before = thread_cpu(me, waited=True)
        while self.running:
            tids = {"gui": gui.native_id or 0, "job": self.stages.threads.get("layout", 0)}
            now = {who: (tid, thread_cpu(tid)) for who, tid in tids.items() if tid}
            waited = thread_cpu(me, waited=True)
            for who, (tid, cpu) in now.items():
                held = cpu - before[who][1] - (waited - waited_before) if before.get(who, (0,))[0] == tid else 0.0
                if held > self.worst[who][0]:
                    self.worst[who] = (held, self._where(who))
            before, waited_before = now, waited
            time.sleep(0.001)

    def _where(self, who: str) -> str:
        ident = threading.main_thread().ident if who == "gui" else self.stages.idents.get("layout")
        frames = sys._current_frames()
        found = where(frames.get(ident or 0)) or "idle or in C++"
        del frames  # no frame kept (see the Sampler)
        return found


class Stages:
    """Wall and thread-CPU seconds of each stage of the canvas's layout jobs, from :meth:`reset` on (wraps the
    canvas's code in this process only)."""

    def __init__(self) -> None:
        from onnxviz.ui.canvas import canvas as canvas_module
        from onnxviz.ui.canvas import jobs, view

        self.wall: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self.threads: dict[str, int] = {}  # stage -> native id of the thread that ran it last
        self.idents: dict[str, int] = {}  # and its Python ident
        start, deliver, paint = jobs.LayoutJobs._start, canvas_module.GraphCanvas._deliver, view.GraphView.paintEvent
        drawable, timed = jobs.Drawable, self.timed

        def timed_start(owner: Any, job: Any) -> None:
            make, work = job.make_layout, job.work
            job.make_layout = None if make is None else (lambda: timed("layout", make))
            job.work = lambda lay, progress, token: timed("layout", lambda: work(lay, progress, token))
            start(owner, job)

        def timed_paint(owner: Any, event: Any) -> None:
            first = "handover" in self.wall and "paint" not in self.wall
            timed("paint", lambda: paint(owner, event)) if first else paint(owner, event)

        jobs.LayoutJobs._start = timed_start  # type: ignore[method-assign, assignment]
        jobs.Drawable = lambda scene: timed("drawing", lambda: drawable(scene))  # type: ignore[misc, assignment]
        canvas_module.GraphCanvas._deliver = (  # type: ignore[method-assign]
            lambda owner, *a: timed("handover", lambda: deliver(owner, *a)))
        view.GraphView.paintEvent = timed_paint  # type: ignore[method-assign, assignment]

    def timed(self, stage: str, fn: Any) -> Any:
        self.threads[stage], self.idents[stage] = threading.get_native_id(), threading.get_ident()
        wall, cpu = time.perf_counter(), time.thread_time()
        try:
            return fn()
        finally:
            self.wall[stage] = self.wall.get(stage, 0.0) + time.perf_counter() - wall
            self.cpu[stage] = self.cpu.get(stage, 0.0) + time.thread_time() - cpu

    def reset(self) -> None:
        self.wall.clear()
        self.cpu.clear()


def measure(path: Path) -> dict[str, Any]:
    """In a fresh process: open ``path``, let it settle, Expand All; the time until drawn, the pauses, the longest
    GIL holds."""
    stages = Stages()
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
    blocks, sampler, gil = GuiStallProbe(interval_ms=10, cpu=True), Sampler(), GilProbe(stages)
    sampler.start()
    stages.reset()
    gil.start()
    cpu = time.process_time()
    canvas.expand_all(True)
    took = wait_until(lambda: "drawn" in marks and not canvas.busy and
                      len(canvas.layout_obj.expanded) == groups, timeout_s=600)
    cpu = time.process_time() - cpu
    sampler.running = gil.running = False
    from onnxviz.model.background.procpool import shared_worker

    shared_worker().shutdown()
    scene = canvas.layout_obj.scene
    gui, job = threading.main_thread().native_id, stages.threads.get("layout")
    in_block = dict(gui=blocks.worst_cpu.get(gui or 0, 0.0), job=blocks.worst_cpu.get(job or 0, 0.0),
                    others=sum(c for t, c in blocks.worst_cpu.items() if t not in (gui, job)))
    return dict(drawn=took, block=blocks.worst, blame=sampler.blame(blocks.span), cpu=cpu, in_block=in_block,
                held=gil.worst,
                boxes=scene.n_boxes, nodes=window.doc.index.node_count(),
                **{f"{s} s": stages.wall.get(s, 0.0) for s in STAGES}, **{f"{s} CPU": stages.cpu.get(s, 0.0) for s in STAGES})


def report(name: str, runs: list[dict[str, Any]]) -> None:
    med = {k: statistics.median(r[k] for r in runs) for k in ("nodes", "boxes", "drawn", "block", "cpu")}
    each = ", ".join(f"{r['drawn']:.2f}" for r in runs)
    print(f"{name:<18} {int(med['nodes']):>7} {int(med['boxes']):>7} {med['drawn']:>8.2f} "
          f"{1000 * med['block']:>8.0f} {med['cpu']:>6.2f}   (drawn: {each})")
    worst = max(runs, key=lambda r: r["block"])
    print_blame("expand", worst["blame"])
    print("    CPU in the longest pause, by thread (the rest of it the process waited for a CPU): "
          + ", ".join(f"{who} {1000 * cpu:.0f} ms" for who, cpu in worst["in_block"].items()))
    held = max(runs, key=lambda r: max(cpu for cpu, _ in r["held"].values()))["held"]
    print("    longest GIL hold in thread CPU (the load does not change it), then where the thread stood: "
          + "; ".join(f"{who} {1000 * cpu:.0f} ms at {at}" for who, (cpu, at) in held.items()))
    walls = {s: statistics.median(r[f"{s} s"] for r in runs) for s in STAGES}
    cpus = {s: statistics.median(r[f"{s} CPU"] for r in runs) for s in STAGES}
    print("    until drawn: " + ", ".join(f"{s} {walls[s]:.2f} s (CPU {cpus[s]:.2f})" for s in STAGES)
          + f", other {med['drawn'] - sum(walls.values()):.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--against", type=Path, help="another checkout of onnxviz, run alternately with this one")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print_and_exit(measure(args.files[0]))
    print(f"load {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"{'file':<18} {'nodes':>7} {'boxes':>7} {'drawn s':>8} {'block ms':>8} {'CPU s':>6}")
    for path in args.files or [synth_file(3000)]:
        checkouts: list[Path | None] = [None] if args.against is None else [None, args.against.resolve()]
        runs: dict[Path | None, list[dict[str, Any]]] = {c: [] for c in checkouts}
        for _ in range(args.runs):
            for checkout in checkouts:
                env = None if checkout is None else {"PYTHONPATH": str(checkout)}
                runs[checkout].append(run_child(__file__, [str(path)], extra_env=env))
        for checkout, done in runs.items():
            report(path.name if checkout is None else f"{path.name} ({checkout})", done)
    print(f"medians of {args.runs} fresh processes; load {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
