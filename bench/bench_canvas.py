"""Canvas benchmark: open-to-first-frame phases, frame times while panning/zooming, peak RSS.

    python bench/bench_canvas.py                 # bench/synth.py's 300 / 1500 / 3000 layers (made if missing)
    python bench/bench_canvas.py MODEL.onnx --repeat 5

Each model runs in its own process so the peak RSS is that model's. Frames are
rendered offscreen into a 1400x900 image through the same painter the window uses.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from synth import synth_file

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

SIZES = {"synth300": 300, "synth1500": 1500, "synth3000": 3000}
W, H = 1400, 900
TARGET_FIRST_FRAME = {"synth300": 1.0, "synth1500": 2.5, "synth3000": 5.0}


def measure(path: Path, repeat: int) -> dict[str, object]:

    from onnxviz.ui.app import ensure_app

    app = ensure_app()  # as the window runs: its GIL switch interval and settings
    from onnxviz.model.document import Document
    from onnxviz.model.layout.drawable import Drawable
    from onnxviz.model.layout.engine import GraphLayout
    from onnxviz.ui.canvas.view import GraphView

    t = time.perf_counter()
    phases: dict[str, float] = {}
    doc = Document.open(path)
    phases["load"] = time.perf_counter() - t
    t1 = time.perf_counter()
    index = doc.index
    phases["index"] = time.perf_counter() - t1
    t1 = time.perf_counter()
    layout = GraphLayout(index)
    scene = layout.build()
    phases["layout"] = time.perf_counter() - t1
    t1 = time.perf_counter()
    drawable = Drawable(scene)
    phases["drawable"] = time.perf_counter() - t1
    view = GraphView()
    view.resize(W, H)
    t1 = time.perf_counter()
    view.set_drawable(drawable)
    view.grab()
    phases["first_paint"] = time.perf_counter() - t1
    phases["open_to_first_frame"] = time.perf_counter() - t
    result: dict[str, object] = {"model": path.name, "nodes": len(doc.model.graph.node),
                                 "boxes_collapsed": scene.n_boxes, "phases_s": phases,
                                 "frames_collapsed_ms": frames(view, repeat)}
    t1 = time.perf_counter()
    full = GraphLayout(index, expanded=layout.tree.paths)
    full_scene = full.build()
    expanded = Drawable(full_scene)
    result["expand_all_layout_s"] = time.perf_counter() - t1
    result["boxes_expanded"] = full_scene.n_boxes
    view.set_drawable(expanded)
    result["frames_expanded_ms"] = frames(view, repeat)
    result["minimap_expanded_ms"] = minimap_frames(view, repeat)
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    # the window opens the file as a user would, with nothing else alive: without this, the cycle
    # collector would walk the phases' own model, layouts and scenes during the window's open
    del view, drawable, expanded, full, full_scene, layout, scene, index, doc
    gc.collect()
    result.update(window_open(path))
    del app
    return result


def window_open(path: Path) -> dict[str, float]:
    """The whole window: open_path -> canvas.scene_ready, and the longest GUI-thread stall meanwhile."""
    from gui_probe import GuiStallProbe, wait_until

    from onnxviz.ui.main_window import MainWindow

    window: Any = MainWindow()  # its docks and panels are attributes set while it is built
    window.resize(W, H)
    window.show()
    out: dict[str, float] = {}

    def ready() -> None:
        out["window_open_to_scene_ready_s"] = time.perf_counter() - start
        stalls.tick()
        out["window_worst_gui_stall_ms"] = stalls.worst * 1000

    window.canvas.scene_ready.connect(ready)
    stalls = GuiStallProbe(interval_ms=5)
    start = time.perf_counter()
    window.open_path(path)
    wait_until(lambda: bool(out))
    return out


def frames(view: object, repeat: int) -> dict[str, float]:
    """Median and worst milliseconds per frame at several zooms, panning across the graph at each."""
    from PySide6.QtCore import QPointF
    from PySide6.QtGui import QImage

    image = QImage(W, H, QImage.Format.Format_ARGB32_Premultiplied)
    d = view.drawable  # type: ignore[attr-defined]
    x, y, w, h = d.bounds
    out: dict[str, float] = {}
    view.fit()  # type: ignore[attr-defined]
    fitted = view.scale  # type: ignore[attr-defined]
    for name, scale in (("fit", fitted), ("0.05", 0.05), ("0.2", 0.2), ("0.35", 0.35), ("0.5", 0.5), ("1:1", 1.0)):
        times, cpu = [], []
        for k in range(repeat * 4):
            view.scale = max(scale, fitted) if name != "fit" else fitted  # type: ignore[attr-defined]
            view.center = QPointF(x + w / 2, y + h * (k + 0.5) / (repeat * 4))  # type: ignore[attr-defined]
            t, c = time.perf_counter(), time.thread_time()
            view.render(image)  # type: ignore[attr-defined]
            times.append((time.perf_counter() - t) * 1000)
            cpu.append((time.thread_time() - c) * 1000)
        out[f"{name} median"] = round(statistics.median(times), 2)
        out[f"{name} max"] = round(max(times), 2)
        out[f"{name} cpu-max"] = round(max(cpu), 2)   # CPU time of the GUI thread: robust to a busy machine
    return out


def minimap_frames(view: Any, repeat: int) -> dict[str, float]:
    """Milliseconds to follow the view and draw the minimap (docked beside it) while panning down the
    expanded graph at 0.8: its strip is drawn again each time the view leaves the band drawn last."""
    from PySide6.QtCore import QPointF
    from PySide6.QtWidgets import QApplication

    from onnxviz.ui.canvas.minimap import DOCK_SIDE, Minimap, make_host

    host = make_host(view)
    minimap = Minimap(view, host)
    host.resize(W + DOCK_SIDE, H)
    host.show()
    QApplication.processEvents()
    x, y, w, h = view.drawable.bounds
    view.set_scale(0.8)
    times = []
    steps = repeat * 20
    for k in range(steps):
        t = time.perf_counter()
        view.center_on(QPointF(x + w / 2, y + h * (k + 0.5) / steps))
        minimap.grab()
        times.append((time.perf_counter() - t) * 1000)
    host.hide()
    return {"median": round(statistics.median(times), 2), "max": round(max(times), 2)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("models", nargs="*")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(Path(args.models[0]), args.repeat)))
        return
    paths = [Path(m) for m in args.models] or [synth_file(layers) for layers in SIZES.values()]
    for path in paths:
        report([child(path) for _ in range(args.repeat)])


def child(path: Path) -> dict[str, Any]:
    """One measurement in a fresh process; if it fails, its stderr (a faulthandler traceback for a crash)
    is shown rather than dropped, and the run stops."""
    out = subprocess.run([sys.executable, "-X", "faulthandler", __file__, str(path), "--child", "--repeat", "2"],
                         capture_output=True, text=True)
    if out.returncode != 0 or not out.stdout.strip():
        code = out.returncode
        how = f"died of {signal.Signals(-code).name}" if code < 0 else f"exited with {code}"
        sys.exit(f"{out.stderr[-6000:]}\nthe measuring process for {path.name} {how} (its stderr is above); "
                 "bench/crash_loop.py repeats it")
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def report(runs: list[dict]) -> None:
    first = runs[0]
    print(f"\n== {first['model']}: {first['nodes']} nodes, {first['boxes_collapsed']} boxes collapsed, "
          f"{first['boxes_expanded']} expanded (median of {len(runs)} processes)")
    for phase in first["phases_s"]:
        print(f"  {phase:22s} {statistics.median(r['phases_s'][phase] for r in runs):7.3f} s")
    target = TARGET_FIRST_FRAME.get(Path(first["model"]).stem)
    if target:
        print(f"  {'(target first frame)':22s} {target:7.3f} s")
    print(f"  {'expand-all layout':22s} {statistics.median(r['expand_all_layout_s'] for r in runs):7.3f} s")
    print(f"  {'peak RSS (canvas only)':22s} {max(r['peak_rss_mb'] for r in runs):7.0f} MB")
    print(f"  {'window open->drawn':22s} {statistics.median(r['window_open_to_scene_ready_s'] for r in runs):7.3f} s"
          f"   (worst GUI stall {statistics.median(r['window_worst_gui_stall_ms'] for r in runs):.0f} ms,"
          " includes the other docks' handlers)")
    for kind in ("frames_collapsed_ms", "frames_expanded_ms", "minimap_expanded_ms"):
        row = "  ".join(f"{k}={statistics.median(r[kind][k] for r in runs):.1f}" for k in first[kind])
        print(f"  {kind:22s} {row}")


if __name__ == "__main__":
    main()
