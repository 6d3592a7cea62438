"""Remake the pictures in this folder (offscreen): the minimap of a tall graph, a weight heatmap and
If bodies shown inside their node.

    QT_QPA_PLATFORM=offscreen python docs/screenshots/make_screens.py

Needs bench/synth.py's 300-layer model (made on first use into .cache/, about a minute).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path[:0] = [str(REPO), str(REPO / "bench")]

from gui_probe import fresh_app, fresh_window, wait_for  # noqa: E402
from PySide6.QtCore import QPointF  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402
from synth import synth_file  # noqa: E402


def settle() -> None:
    for _ in range(5):
        QApplication.processEvents()


def minimap_pictures() -> None:
    window = fresh_window(1200, 760)
    canvas = window.canvas
    window.open_path(synth_file(300))
    wait_for(canvas.scene_ready)
    canvas.expand_all(True)
    wait_for(canvas.scene_ready)
    d = canvas.drawable
    x, y, w, h = d.bounds
    canvas.view.set_scale(0.8)
    canvas.view.center_on(QPointF(x + w / 2, y + h * 0.42))
    settle()
    canvas.grab().save(str(HERE / "minimap-strip-docked.png"))
    canvas.set_minimap_place("bottom-right")
    settle()
    canvas.grab().save(str(HERE / "minimap-strip-corner.png"))
    window.close()


def heatmap_picture() -> None:
    from onnxviz.ui.widgets.tensor_view import TensorView

    view = TensorView()
    view.resize(420, 560)
    view.show()
    view.show_tensor("proj.weight [64x192]", np.random.default_rng(0).standard_normal((64, 192)).astype(np.float32))
    wait_for(view.loaded)
    view.tabs.setCurrentIndex(view.image_index)
    settle()
    view.heatmap.fit_cells()
    settle()
    view.grab().save(str(HERE / "heatmap-64x192.png"))


def if_pictures() -> None:
    window = fresh_window(1200, 900)
    canvas = window.canvas
    window.open_path(REPO / "tests" / "data" / "exports" / "vad_if.onnx")
    wait_for(canvas.scene_ready)
    node = next(i for i, n in enumerate(window.doc.model.graph.node) if n.op_type == "If")
    canvas.show_body_inline(node)
    wait_for(canvas.scene_ready)
    canvas.fit()
    settle()
    canvas.grab().save(str(HERE / "if-bodies-inline.png"))
    then = canvas.layout_obj.embedded[0]   # a body's node selected without leaving the main graph
    conv = next(b for b in range(then.scene.n_boxes) if then.scene.box_title[b] == "Conv")
    canvas.view.box_clicked.emit(then.box_start + conv)
    canvas.view.set_scale(1.0)
    settle()
    window.grab().save(str(HERE / "if-bodies-inline-selected.png"))
    canvas.enter_scope(f"{node}.then_branch")
    wait_for(canvas.scene_ready)
    settle()
    canvas.grab().save(str(HERE / "if-body-opened.png"))
    window.close()


def main() -> None:
    fresh_app()
    minimap_pictures()
    heatmap_picture()
    if_pictures()


if __name__ == "__main__":
    main()
