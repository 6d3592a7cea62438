"""How long the GUI thread freezes while a big model opens and validates, and while an edit validates.

    python bench/bench_responsiveness.py [--runs 3] [--with-run] [FILE ...]

Defaults to /tmp/synth300.onnx, /tmp/synth1500.onnx, /tmp/synth3000.onnx (make them with
``python /work/shared/bench/synth.py N out.onnx``). Each run is a fresh process, offscreen, with the
real MainWindow. A 10 ms QTimer on the GUI thread measures the longest gap between its ticks
("block" = the longest time the window could not react) from ``open_path`` until the canvas's
``scene_ready``, the validation result and the Model panel's figures have all arrived; then the
same from an edit (a node rename) until its validation result and the new figures arrived; with
``--with-run``, also from Run (every value captured, in the worker process) until the result is
shown and half a second after.

Culprits: a sampler thread records the GUI thread's Python stack every 2 ms; the longest block is
charged to what the GUI thread was running then (innermost onnxviz frames), or, when the sampler
itself could not run, to whoever held the GIL. Prints medians over the runs and the top 3 culprits
of the longest block of the slowest run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

DEFAULT_FILES = [Path(f"/tmp/synth{n}.onnx") for n in (300, 1500, 3000)]

CHILD = r"""
import json, os, sys, tempfile, threading, time, traceback
from collections import Counter
from onnxviz.ui.settings import use_settings_dir
use_settings_dir(tempfile.mkdtemp())
from PySide6.QtCore import QEventLoop, QTimer
from onnxviz.ui.app import ensure_app
app = ensure_app()
from onnxviz.ui.main_window import MainWindow

class Blocks:
    # the longest gap between ticks of a 10 ms timer on the GUI thread, and when it was
    def __init__(self):
        self.timer = QTimer(interval=10); self.timer.timeout.connect(self.tick); self.reset(); self.timer.start()
    def tick(self):
        now = time.perf_counter()
        if now - self.last > self.worst:
            self.worst, self.span = now - self.last, (self.last, now)
        self.last = now
    def reset(self):
        self.last = time.perf_counter(); self.worst = 0.0; self.span = (0.0, 0.0)

def where(frame):
    # innermost onnxviz frame and its onnxviz caller; None when the thread is idle in the bench script
    found = []
    while frame is not None:
        f = frame.f_code.co_filename
        if f == "<string>":
            break
        if "/onnxviz/" in f and len(found) < 2:
            found.append(f"{f.split('/onnxviz/')[-1]}:{frame.f_lineno} {frame.f_code.co_name}")
        frame = frame.f_back
    return " < ".join(found) or None

class Sampler(threading.Thread):
    # every 2 ms: what the GUI thread runs (when the sampler cannot run, something holds the GIL)
    def __init__(self):
        super().__init__(daemon=True); self.samples = []; self.running = True
    def run(self):
        main = threading.main_thread().ident; last = time.perf_counter()
        while self.running:
            time.sleep(0.002)
            now = time.perf_counter()
            frames = sys._current_frames()
            gui = where(frames.get(main))
            others = [w for i, f in frames.items() if i not in (main, self.ident) for w in [where(f)] if w]
            self.samples.append((last, now, gui, others))
            last = now
    def blame(self, span):
        # time inside the GUI block charged to what the GUI thread was running; GIL gaps to the others
        charge = Counter()
        for t0, t1, gui, others in self.samples:
            lo, hi = max(t0, span[0]), min(t1, span[1])
            if hi <= lo:
                continue
            if t1 - t0 > 0.02:  # the sampler itself was locked out: someone held the GIL
                who = f"GIL held; gui at {gui}" if gui else "GIL held by: " + " | ".join(others[:2])
            else:
                who = f"gui: {gui}" if gui else "gui idle/in Qt C++"
            charge[who] += hi - lo
        self.samples.clear()
        return charge.most_common(3)

def wait_until(cond, timeout_s=300):
    t0 = time.perf_counter()
    while not cond() and time.perf_counter() - t0 < timeout_s:
        app.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents, 20)
    return time.perf_counter() - t0

w = MainWindow(); w.resize(1400, 900); w.show(); app.processEvents()
marks = set()
w.canvas.scene_ready.connect(lambda *_: marks.add("drawn"))
w.validation.finished.connect(lambda *_: marks.add("validated"))
panel = w.panels.model_panel
real_on_figures = panel._on_figures
def on_figures(*args):
    real_on_figures(*args); marks.add("figures")
panel._on_figures = on_figures
def figures_done():  # the panel has no pending background work
    return panel._task is None
blocks = Blocks(); sampler = Sampler(); sampler.start()
w.open_path(sys.argv[1])
opened = wait_until(lambda: {"drawn", "validated", "figures"} <= marks and figures_done())
open_block = blocks.worst
open_blame = sampler.blame(blocks.span)
node = next(i for i, n in enumerate(w.doc.model.graph.node) if n.op_type == "Transpose")
marks.clear(); blocks.reset()
t0 = time.perf_counter()
w.doc.rename_node(node, "renamed_by_bench")
edited = wait_until(lambda: {"validated", "figures"} <= marks and figures_done())
edit_block = blocks.worst
edit_blame = sampler.blame(blocks.span)
ran = run_block = 0.0
run_blame = []
if os.environ.get("BENCH_RUN"):
    from onnxviz.model.runner.inputs import build_feeds, input_specs
    controller = w.run_controller
    controller.run_finished.connect(lambda *_: marks.add("ran"))
    feeds = build_feeds(input_specs(w.doc.model), {}, {}, seed=0)
    marks.clear(); blocks.reset()
    controller._start(w.doc, feeds, "", None)
    ran = wait_until(lambda: "ran" in marks, timeout_s=900)
    wait_until(lambda: False, timeout_s=0.5)  # the dock and the overlay settle after the result
    run_block = blocks.worst
    run_blame = sampler.blame(blocks.span)
sampler.running = False
from onnxviz.model.procpool import shared_worker
shared_worker().shutdown()
print(json.dumps(dict(nodes=w.doc.index.node_count(), opened=opened, open_block=open_block, edited=edited,
                      edit_block=edit_block, open_blame=open_blame, edit_blame=edit_blame, ran=ran,
                      run_block=run_block, run_blame=run_blame)))
sys.stdout.flush()
os._exit(0)
"""


def run_once(path: Path, with_run: bool) -> dict:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", **({"BENCH_RUN": "1"} if with_run else {})}
    out = subprocess.run([sys.executable, "-c", CHILD, str(path)], capture_output=True, text=True, env=env,
                         timeout=900)
    line = next((x for x in out.stdout.splitlines() if x.startswith("{")), None)
    if line is None:
        raise SystemExit(f"{path.name}: the child failed:\n{out.stderr[-3000:]}")
    return json.loads(line)


def print_blame(title: str, blame: list) -> None:
    for where, seconds in blame:
        print(f"    {title}: {1000 * seconds:6.0f} ms  {where}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", type=Path, default=DEFAULT_FILES)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--with-run", action="store_true",
                        help="also run the model (Run menu, every value captured) and time the pause as it arrives")
    args = parser.parse_args()
    print(f"{'file':<18} {'nodes':>7} {'open s':>7} {'block ms':>8} {'edit s':>7} {'block ms':>8}"
          + (f" {'run s':>7} {'block ms':>8}" if args.with_run else ""))
    for path in args.files:
        if not path.exists():
            print(f"{path.name:<18} missing (make it with /work/shared/bench/synth.py)")
            continue
        runs = [run_once(path, args.with_run) for _ in range(args.runs)]
        med = {k: statistics.median(r[k] for r in runs) for k in ("nodes", "opened", "open_block", "edited",
                                                                    "edit_block", "ran", "run_block")}
        print(f"{path.name:<18} {int(med['nodes']):>7} {med['opened']:>7.2f} {1000 * med['open_block']:>8.0f} "
              f"{med['edited']:>7.2f} {1000 * med['edit_block']:>8.0f}"
              + (f" {med['ran']:>7.2f} {1000 * med['run_block']:>8.0f}" if args.with_run else ""))
        worst = max(runs, key=lambda r: r["open_block"] + r["edit_block"] + r["run_block"])
        print_blame("open", worst["open_blame"])
        print_blame("edit", worst["edit_blame"])
        print_blame("run", worst["run_blame"])
    print(f"medians of {args.runs} fresh processes; block = longest GUI-thread gap (10 ms timer);"
          " culprits: top 3 of the longest block of the slowest run")


if __name__ == "__main__":
    main()
