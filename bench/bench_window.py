"""The desktop shell on big models: open and save times, and the longest GUI-thread stall meanwhile.

    python bench/bench_window.py [--runs 3] [FILE ...]

Defaults to /tmp/synth300.onnx, /tmp/synth1500.onnx, /tmp/synth3000.onnx. Each run is a fresh
process with fresh settings, offscreen. "stall" is the longest gap between ticks of a 5 ms timer
on the GUI thread while the operation runs: what a user would feel as a frozen window.
Prints medians of the runs.
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
import json, os, sys, tempfile, time
from pathlib import Path
from onnxviz.ui.settings import use_settings_dir
use_settings_dir(tempfile.mkdtemp())
from PySide6.QtCore import QEventLoop, QTimer
from onnxviz.ui.app import ensure_app
from onnxviz.model.commands import Command
app = ensure_app()
from onnxviz.ui.main_window import MainWindow

class Stalls:
    def __init__(self):
        self.last = time.perf_counter(); self.worst = 0.0
        self.timer = QTimer(interval=5); self.timer.timeout.connect(self.tick); self.timer.start()
    def tick(self):
        now = time.perf_counter(); self.worst = max(self.worst, now - self.last); self.last = now
    def reset(self):
        self.last = time.perf_counter(); self.worst = 0.0

def wait(signal, timeout_s=300):
    loop = QEventLoop(); signal.connect(loop.quit)
    QTimer.singleShot(int(timeout_s * 1000), loop.quit); loop.exec()

class Touch(Command):
    label = "touch"
    def apply(self, doc): doc.model.doc_string += "."
    def revert(self, doc): doc.model.doc_string = doc.model.doc_string[:-1]

t0 = time.perf_counter(); w = MainWindow(); w.resize(1400, 900); w.show(); app.processEvents()
construct = time.perf_counter() - t0
stalls = Stalls()
canvas = getattr(w, "canvas", None)
marks = {}
if canvas is not None:
    canvas.scene_ready.connect(lambda *_: marks.setdefault("drawn", time.perf_counter()))
t0 = time.perf_counter(); w.open_path(sys.argv[1]); wait(w.loading_finished)
loaded = time.perf_counter() - t0
while canvas is not None and "drawn" not in marks and time.perf_counter() - t0 < 120:
    app.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents, 50)
drawn = marks.get("drawn", time.perf_counter()) - t0
open_stall = stalls.worst
w.doc.execute(Touch())
t1 = time.perf_counter()
while time.perf_counter() - t1 < 4:  # the user edits, validation settles, then they save
    app.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents, 50)
out = Path(tempfile.mkdtemp()) / "saved.onnx"
QTimer.singleShot(50, lambda: None); app.processEvents()
stalls.reset(); t0 = time.perf_counter()
from onnxviz.ui.saving import save_document
save_document(w, w.doc, out)
while w.doc.is_dirty:
    app.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents, 50)
saved = time.perf_counter() - t0
stalls.tick()  # a synchronous save never let the timer tick: the whole save counts as a stall
save_stall = stalls.worst
print(json.dumps(dict(nodes=w.doc.index.node_count(), construct=construct, loaded=loaded, drawn=drawn,
                      open_stall=open_stall, saved=saved, save_stall=save_stall)))
os._exit(0)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", type=Path, default=DEFAULT_FILES)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    print(f"{'file':<18} {'nodes':>7} {'window s':>8} {'loaded s':>8} {'drawn s':>8} {'stall ms':>8} "
          f"{'save s':>7} {'stall ms':>8}")
    for path in args.files:
        if not path.exists():
            print(f"{path.name:<18} missing (make it with ../shared/bench/synth.py)")
            continue
        runs = []
        for _ in range(args.runs):
            out = subprocess.run([sys.executable, "-c", CHILD, str(path)], capture_output=True, text=True,
                                 env=env, timeout=900)
            line = next((x for x in out.stdout.splitlines() if x.startswith("{")), None)
            if line is None:
                raise SystemExit(f"{path.name}: the child failed:\n{out.stderr[-2000:]}")
            runs.append(json.loads(line))
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        print(f"{path.name:<18} {int(med['nodes']):>7} {med['construct']:>8.2f} {med['loaded']:>8.2f} "
              f"{med['drawn']:>8.2f} {1000 * med['open_stall']:>8.0f} {med['saved']:>7.2f} "
              f"{1000 * med['save_stall']:>8.0f}")
    print(f"medians of {args.runs} fresh processes; stall = longest GUI-thread gap during the operation")


if __name__ == "__main__":
    main()
