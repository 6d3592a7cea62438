"""How long an edit holds the window's GUI thread while the checks worker validates the state before it.

    python bench/bench_edit_while_checking.py [--rounds N] [--queued]

A window (offscreen) opens a copy of bench/synth.py's 12k-node model with value_info for every value, its worker
processes forked first as ``onnxviz FILE`` does. Each round changes a Softmax's ``axis`` (each time to a state not
seen before, so no validation is remembered) once with the workers idle, then again as soon as the checks worker
has taken up the validation of that edit; the milliseconds each edit took on the GUI thread are printed, then a
Transpose's ``perm`` reversed (new types reach the whole graph), with the load average. ``--queued``: the edits'
inference sent to the checks worker, as commit 31bdce3 did (for before/after runs in one go).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=4)  # at most 4: a Softmax of rank 4 has 8 axes
    parser.add_argument("--queued", action="store_true")
    args = parser.parse_args()
    rounds = min(args.rounds, 4)
    if args.queued:
        from onnxviz.model.background.procpool import CHECKS
        from onnxviz.model.editing import finder, restate

        restate.EDITS = finder.EDITS = CHECKS
    import onnx
    from synth import synth_file

    from onnxviz.model.background.early import start_analysis_workers

    start_analysis_workers()  # before Qt and any thread, as the application starts
    from PySide6.QtWidgets import QApplication

    app = QApplication([])
    from window_fixtures import settle

    from onnxviz.model.background.procpool import shared_worker
    from onnxviz.ui.main_window import MainWindow

    def idle(seconds: float = 2.0) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end or shared_worker().unfinished:
            settle()
            time.sleep(0.05)

    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "synth300_value_info.onnx"
        onnx.save(onnx.shape_inference.infer_shapes(onnx.load(str(synth_file(300)))), copy)
        w = MainWindow()
        w.show()
        loaded: list[object] = []
        w.loading_finished.connect(lambda *_: loaded.append(1))
        w.open_path(copy)
        while not loaded:
            app.processEvents()
            time.sleep(0.01)
        idle()
        doc = w.doc
        assert doc is not None
        nodes = doc.model.graph.node
        soft = doc.node_ids[next(k for k, n in enumerate(nodes) if n.op_type == "Softmax")]
        tr = doc.node_ids[next(k for k, n in enumerate(nodes) if n.op_type == "Transpose")]
        perm = list(nodes[doc.edit.locate(tr)[1]].attribute[0].ints)
        quiet, busy = [], []
        for k in range(rounds):
            idle()
            quiet.append(timed(partial(doc.edit.set_attribute, soft, "axis", k)))
            while not shared_worker().unfinished:  # the window queues the validation of that state
                app.processEvents()
                time.sleep(0.005)
            busy.append(timed(partial(doc.edit.set_attribute, soft, "axis", k - 4)))
        idle()
        reversed_perm = timed(lambda: doc.edit.set_attribute(tr, "perm", perm[::-1]))
        print(f"{copy.name}: {len(nodes)} nodes, {len(doc.model.graph.value_info)} value_info")
        print("  attribute edit, workers idle (ms):        ", " ".join(f"{x:.0f}" for x in quiet))
        print("  attribute edit, checks worker busy (ms):  ", " ".join(f"{x:.0f}" for x in busy))
        print(f"  Transpose perm reversed, types change:     {reversed_perm:.0f} ms")
        print("  load average:", open("/proc/loadavg").read().split()[:3])
        w.set_document(None)
        settle()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
