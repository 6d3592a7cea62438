"""The desktop shell on big models: open and save times, and the longest GUI-thread stall meanwhile (and after
one small edit: the first edit of a big model lets go of its file's bytes; then, on the edited model, while its
biggest weight is shown, its whole raw text made and it is run (with zeros; -1 when its inputs are not float
tensors of fixed shapes); and when it is closed for a small model, with the resident memory 3 s later: a closed
model's memory goes back to the system).

    python bench/bench_window.py [--runs 3] [FILE ...]

Defaults to the 12k-, 61k- and 123k-node models of bench/synth.py (300, 1500 and 3000 layers,
made on first use into .cache/onnxviz-tests/). Each run is a fresh
process with fresh settings, offscreen. "stall" is the longest gap between ticks of a 5 ms timer
on the GUI thread while the operation runs: what a user would feel as a frozen window.
Prints medians of the runs.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from gui_probe import (
    GuiStallProbe,
    files_bench_args,
    fresh_app,
    fresh_window,
    run_child,
    wait_for,
    wait_until,
)
from synth import synth_file

DEFAULT_LAYERS = (300, 1500, 3000)


def measure(path: Path) -> dict[str, Any]:
    """In a fresh process: open ``path`` in the window, make one edit, save it."""
    fresh_app()
    t0 = time.perf_counter()
    window = fresh_window()
    construct = time.perf_counter() - t0
    from onnxviz.ui.saving import save_document
    stalls = GuiStallProbe(interval_ms=5)
    marks: dict[str, float] = {}
    window.canvas.scene_ready.connect(lambda *_: marks.setdefault("drawn", time.perf_counter()))
    t0 = time.perf_counter()
    window.open_path(str(path))
    wait_for(window.loading_finished)
    loaded = time.perf_counter() - t0
    wait_until(lambda: "drawn" in marks, timeout_s=120)
    drawn = marks.get("drawn", time.perf_counter()) - t0
    open_stall = stalls.worst
    stalls.reset()
    window.doc.edit.set_model_info(doc_string=window.doc.model.doc_string + ".")  # one small edit
    wait_until(lambda: False, timeout_s=4)  # the user edits, validation settles, then they save
    edit_stall = stalls.worst
    views = _views_of_the_edited_model(window, stalls)
    with tempfile.TemporaryDirectory(prefix="onnxviz-bench-window-") as folder:  # the saved copy goes with it
        stalls.reset()
        t0 = time.perf_counter()
        save_document(window, window.doc, Path(folder) / "saved.onnx")
        wait_until(lambda: not window.doc.is_dirty)
        saved = time.perf_counter() - t0
        stalls.tick()  # a synchronous save never let the timer tick: the whole save counts as a stall
    found = dict(nodes=window.doc.index.node_count(), construct=construct, loaded=loaded, drawn=drawn,
                 open_stall=open_stall, edit_stall=edit_stall, saved=saved, save_stall=stalls.worst, **views)
    from onnxviz.ui.app import example_model_path
    stalls.reset()
    window.open_path(str(example_model_path()))  # the big model is closed: its memory freed
    wait_for(window.loading_finished)
    wait_until(lambda: False, timeout_s=3)
    return found | dict(close_stall=stalls.worst, closed_mb=_resident_mb())


def _views_of_the_edited_model(window: Any, stalls: GuiStallProbe) -> dict[str, float]:
    """The longest stall while the edited model's biggest weight is shown (Weights panel), its whole text made
    (Raw panel), and it is run with zeros as inputs (-1 when an input is not a float tensor of fixed shape)."""
    import numpy as np
    from onnx import helper

    from onnxviz.model.selection import SelectionState
    doc, panels, runs = window.doc, window.panels, window.run_controller
    biggest = max(doc.model.graph.initializer, key=lambda t: int(np.prod(t.dims)), default=None)
    found = {"weight_stall": -1.0, "raw_stall": -1.0, "run_stall": -1.0}
    if biggest is not None:
        stalls.reset()
        view = panels.weights_panel.view
        doc.selection.select_value("", biggest.name)
        wait_until(lambda: view.prepared is not None and not view.is_busy, timeout_s=120)
        found["weight_stall"] = stalls.worst
    stalls.reset()
    panels.raw_panel.show_selection(doc, SelectionState())
    wait_until(lambda: panels.raw_panel._task is None, timeout_s=120)
    found["raw_stall"] = stalls.worst
    inputs = [v for v in doc.model.graph.input if v.name not in {t.name for t in doc.model.graph.initializer}]
    shapes = [[d.dim_value for d in v.type.tensor_type.shape.dim] for v in inputs]
    if all(v.type.tensor_type.elem_type == 1 and all(shape) for v, shape in zip(inputs, shapes, strict=True)):
        feeds = {v.name: np.zeros(shape, helper.tensor_dtype_to_np_dtype(1)) for v, shape in
                 zip(inputs, shapes, strict=True)}
        done: list[object] = []
        runs.run_finished.connect(lambda: done.append(True))
        runs.run_failed.connect(done.append)
        stalls.reset()
        runs.runs.start(doc, feeds, "", None)
        wait_until(lambda: bool(done), timeout_s=600)
        found["run_stall"] = stalls.worst
    return found


def _resident_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def main() -> None:
    args = files_bench_args(__doc__, measure)
    print(f"{'file':<18} {'nodes':>7} {'window s':>8} {'loaded s':>8} {'drawn s':>8} {'stall ms':>8} "
          f"{'edit ms':>8} {'weight ms':>9} {'raw ms':>7} {'run ms':>7} {'save s':>7} {'stall ms':>8} "
          f"{'close ms':>8} {'then MB':>8}")
    for path in args.files or [synth_file(n) for n in DEFAULT_LAYERS]:
        if not path.exists():
            print(f"{path.name:<18} missing")
            continue
        runs = [run_child(__file__, [str(path)]) for _ in range(args.runs)]
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        print(f"{path.name:<18} {int(med['nodes']):>7} {med['construct']:>8.2f} {med['loaded']:>8.2f} "
              f"{med['drawn']:>8.2f} {1000 * med['open_stall']:>8.0f} {1000 * med['edit_stall']:>8.0f} "
              f"{1000 * med['weight_stall']:>9.0f} {1000 * med['raw_stall']:>7.0f} {1000 * med['run_stall']:>7.0f} "
              f"{med['saved']:>7.2f} "
              f"{1000 * med['save_stall']:>8.0f} {1000 * med['close_stall']:>8.0f} {med['closed_mb']:>8.0f}")
    print(f"medians of {args.runs} fresh processes; stall = longest GUI-thread gap during the operation")


if __name__ == "__main__":
    main()
