"""Far away, the expanded groups' frames are filled a depth at a time in the opaque colour their translucent fill
composes to (see ``painting._fill_nested``): the pixels are those of every frame blended over the ones around it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QImage, QPainter, QPen

from onnxviz.cli.render import ensure_gui_app, lay_out
from onnxviz.model.document import Document
from onnxviz.model.layout.drawable import Drawable
from onnxviz.ui.canvas import style
from onnxviz.ui.canvas.batch import draw_rects
from onnxviz.ui.canvas.painting import ScenePainter


def _painted(d: Drawable, scale: float, blended: bool, background: QColor, fmt: QImage.Format) -> QImage:
    x, y, w, h = d.bounds
    image = QImage(int(w * scale) + 2, int(h * scale) + 2, fmt)
    image.fill(background)
    p = QPainter(image)
    p.scale(scale, scale)
    p.translate(-x, -y)
    if blended:  # every frame translucent over the ones around it, as one batch
        g = d.scene.group_rect
        rows = np.argsort(d.scene.group_depth, kind="stable")
        rows = rows[(g[rows, 2] * scale >= 3) & (g[rows, 3] * scale >= 3)]
        p.setBrush(style.FRAME_FILL)
        p.setPen(QPen(style.FRAME_BORDER, 0))
        draw_rects(p, g[rows])
    else:
        ScenePainter()._paint_frames(p, d, QRectF(x, y, w, h), scale, background)
    p.end()
    return image


@pytest.mark.parametrize(("canvas", "fmt"), [("BACKGROUND", QImage.Format.Format_RGB32),  # a render
                                           ("BACKGROUND", QImage.Format.Format_ARGB32_Premultiplied),  # the window
                                           ("PANEL", QImage.Format.Format_ARGB32_Premultiplied)])  # the minimap
def test_far_frames_are_the_blended_frames(example_path: Path, canvas: str, fmt: QImage.Format) -> None:
    ensure_gui_app()
    background = getattr(style, canvas)
    d = Drawable(lay_out(Document.open(example_path).index, "", expand_all=True), labels_now=False)
    assert d.scene.group_depth.max() >= 1  # frames inside frames
    for scale in (0.05, 0.12, 0.25):
        assert scale < min(style.TEXT_SCALE, style.FRAME_LABEL_SCALE)  # plain frames: no titles, no toggles
        layered = _painted(d, scale, False, background, fmt)
        assert layered == _painted(d, scale, True, background, fmt)
        pixels = {layered.pixel(x, y) for x in range(0, layered.width(), 3) for y in range(0, layered.height(), 3)}
        assert len(pixels) >= 3  # the background and at least two depths of frames
