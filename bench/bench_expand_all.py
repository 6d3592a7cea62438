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
for a CPU on a loaded machine. ``--holds`` adds figures the load does not change: the layout job's thread's longest C
calls and the GUI thread's longest callbacks, in thread CPU (each holds the GIL throughout; the runs take ~3x as long).
"""

from __future__ import annotations

import argparse
import heapq
import os
import statistics
import sys
import threading
import time
from pathlib import Path
from types import FrameType
from typing import Any

from bench_responsiveness import Sampler, print_blame
from gui_probe import GuiStallProbe, fresh_app, fresh_window, print_and_exit, run_child, wait_until
from synth import synth_file

STAGES = ("layout", "drawing", "handover", "paint")
TOP_HOLDS = 3


class Holds:
    """What held the GIL longest, counted in thread CPU (so the machine's load does not change it): the longest
    C calls of the layout job's thread (a C call returns the GIL to no other thread until it ends), and the GUI
    thread's longest callbacks from the event loop (Python with the C++ it calls). A profile function on every
    call: the layout takes ~3x as long, so only with ``--holds``."""

    def __init__(self) -> None:
        self.worker: list[tuple[float, str]] = []
        self.gui: list[tuple[float, str]] = []

    @staticmethod
    def keep(found: list[tuple[float, str]], cpu: float, what: str) -> None:
        heapq.heappush(found, (cpu, what))
        if len(found) > TOP_HOLDS:
            heapq.heappop(found)

    def worker_profile(self) -> Any:
        """A profile function for the layout job's thread (set in that thread)."""
        started: list[float] = []

        def profile(frame: FrameType, event: str, arg: Any) -> None:
            if event == "c_call":
                started.append(time.thread_time())
            elif event in ("c_return", "c_exception") and started:
                cpu = time.thread_time() - started.pop()
                if cpu > 0.002:
                    name = getattr(arg, "__qualname__", str(arg))
                    self.keep(self.worker, cpu, f"{name} in {_place(frame)}")
        return profile

    def gui_profile(self) -> Any:
        """A profile function for the GUI thread: each callback of the event loop run by :func:`wait_until`."""
        loop_code, started = wait_until.__code__, {}

        def profile(frame: FrameType, event: str, arg: Any) -> None:
            if event == "call" and frame.f_back is not None and frame.f_back.f_code is loop_code:
                started[id(frame)] = time.thread_time()
            elif event == "return" and id(frame) in started:
                cpu = time.thread_time() - started.pop(id(frame))
                if cpu > 0.002:
                    self.keep(self.gui, cpu, _place(frame))
        return profile


def _place(frame: FrameType) -> str:
    path = frame.f_code.co_filename
    short = path.split("/onnxviz/")[-1] if "/onnxviz/" in path else Path(path).name
    return f"{short}:{frame.f_lineno} {frame.f_code.co_name}"


class Stages:
    """Wall and thread-CPU seconds of each stage of the canvas's layout jobs, from :meth:`reset` on (wraps the
    canvas's code in this process only)."""

    def __init__(self, holds: Holds | None = None) -> None:
        from onnxviz.ui.canvas import canvas as canvas_module
        from onnxviz.ui.canvas import jobs, view

        self.wall: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self.threads: dict[str, int] = {}  # stage -> native id of the thread that ran it last
        self.holds = holds
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
        self.threads[stage] = threading.get_native_id()
        profiled = self.holds is not None and stage in ("layout", "drawing")
        if profiled:
            assert self.holds is not None
            sys.setprofile(self.holds.worker_profile())
        wall, cpu = time.perf_counter(), time.thread_time()
        try:
            return fn()
        finally:
            if profiled:
                sys.setprofile(None)
            self.wall[stage] = self.wall.get(stage, 0.0) + time.perf_counter() - wall
            self.cpu[stage] = self.cpu.get(stage, 0.0) + time.thread_time() - cpu

    def reset(self) -> None:
        self.wall.clear()
        self.cpu.clear()


def measure(path: Path, holds: Holds | None = None) -> dict[str, Any]:
    """In a fresh process: open ``path``, let it settle, Expand All; the time until drawn and the pauses (with
    ``holds``, also what held the GIL longest)."""
    stages = Stages(holds)
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
    blocks, sampler = GuiStallProbe(interval_ms=10, cpu=True), Sampler()
    sampler.start()
    stages.reset()
    if holds is not None:
        sys.setprofile(holds.gui_profile())
    cpu = time.process_time()
    canvas.expand_all(True)
    took = wait_until(lambda: "drawn" in marks and not canvas.busy and
                      len(canvas.layout_obj.expanded) == groups, timeout_s=600)
    cpu = time.process_time() - cpu
    sys.setprofile(None)
    sampler.running = False
    from onnxviz.model.background.procpool import shared_worker

    shared_worker().shutdown()
    scene = canvas.layout_obj.scene
    gui, job = threading.main_thread().native_id, stages.threads.get("layout")
    in_block = dict(gui=blocks.worst_cpu.get(gui or 0, 0.0), job=blocks.worst_cpu.get(job or 0, 0.0),
                    others=sum(c for t, c in blocks.worst_cpu.items() if t not in (gui, job)))
    held = {} if holds is None else dict(held_worker=sorted(holds.worker, reverse=True),
                                         held_gui=sorted(holds.gui, reverse=True))
    return dict(drawn=took, block=blocks.worst, blame=sampler.blame(blocks.span), cpu=cpu, in_block=in_block, **held,
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
    for key, whose in (("held_worker", "the layout job's thread, longest C calls"),
                       ("held_gui", "the GUI thread, longest callbacks")):
        if key in worst:
            print(f"    GIL held (thread CPU), {whose}: "
                  + "; ".join(f"{1000 * cpu:.0f} ms {what}" for cpu, what in worst[key]))
    walls = {s: statistics.median(r[f"{s} s"] for r in runs) for s in STAGES}
    cpus = {s: statistics.median(r[f"{s} CPU"] for r in runs) for s in STAGES}
    print("    until drawn: " + ", ".join(f"{s} {walls[s]:.2f} s (CPU {cpus[s]:.2f})" for s in STAGES)
          + f", other {med['drawn'] - sum(walls.values()):.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--against", type=Path, help="another checkout of onnxviz, run alternately with this one")
    parser.add_argument("--holds", action="store_true",
                        help="also what held the GIL longest, in thread CPU (load-independent; ~3x slower)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print_and_exit(measure(args.files[0], Holds() if args.holds else None))
    print(f"load {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"{'file':<18} {'nodes':>7} {'boxes':>7} {'drawn s':>8} {'block ms':>8} {'CPU s':>6}")
    for path in args.files or [synth_file(3000)]:
        checkouts: list[Path | None] = [None] if args.against is None else [None, args.against.resolve()]
        runs: dict[Path | None, list[dict[str, Any]]] = {c: [] for c in checkouts}
        for _ in range(args.runs):
            for checkout in checkouts:
                env = None if checkout is None else {"PYTHONPATH": str(checkout)}
                runs[checkout].append(run_child(__file__, [str(path), *(["--holds"] if args.holds else [])],
                                                extra_env=env))
        for checkout, done in runs.items():
            report(path.name if checkout is None else f"{path.name} ({checkout})", done)
    print(f"medians of {args.runs} fresh processes; load {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
