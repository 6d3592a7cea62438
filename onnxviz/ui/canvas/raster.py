"""Far-away boxes straight into pixels: when tens of thousands of boxes are a pixel or two big,
writing them into a numpy image is far cheaper than asking QPainter for as many rectangles."""

from __future__ import annotations

import numpy as np
from PySide6.QtGui import QImage, QPaintEngine, QPainter

from onnxviz.model.layout.drawable import Drawable
from onnxviz.ui.canvas import style

MIN_BOXES = 4000             # below this, batched drawRects are just as fast
MAX_DEVICE_PIXELS = 16_000_000
TINY = 2                     # boxes up to TINY x TINY device pixels are written as pixels
NO_OVERLAY = 0xFFD5D9DE


_tables: dict[tuple[bool, tuple[str, ...]], np.ndarray] = {}


def category_argb() -> np.ndarray:
    """ARGB32 colour of each category's far-away fill (cached per theme)."""
    key = (style.dark, tuple(style.FAR_COLOURS.values()))
    if key not in _tables:
        _tables[key] = _build_table()
    return _tables[key]


def _build_table() -> np.ndarray:
    table = np.zeros(max(style.FAR_COLOURS) + 1, np.uint32)
    for category in style.FAR_COLOURS:
        table[category] = style.category_colour(category, far=True).rgba()
    return table


def box_argb(d: Drawable, boxes: np.ndarray, overlay: np.ndarray | None) -> np.ndarray:
    if overlay is None:
        table = category_argb()
        cats = np.clip(d.scene.box_category[boxes].astype(np.int64), 0, len(table) - 1)
        return table[cats]
    rgba = overlay[boxes].astype(np.uint32)
    argb = (0xFF << 24) | (rgba[:, 0] << 16) | (rgba[:, 1] << 8) | rgba[:, 2]
    return np.where(rgba[:, 3] > 0, argb, NO_OVERLAY).astype(np.uint32)


def can_rasterize(p: QPainter, n_boxes: int) -> bool:
    """Only on pixel devices (never SVG), for many boxes, under a scale+translate transform."""
    engine = p.paintEngine()
    device = p.device()
    if n_boxes < MIN_BOXES or engine is None or device is None:
        return False
    if engine.type() not in (QPaintEngine.Type.Raster, QPaintEngine.Type.OpenGL2):
        return False
    t = p.worldTransform()
    return t.m12() == 0 and t.m21() == 0 and device.width() * device.height() <= MAX_DEVICE_PIXELS


def rasterize_tiny(p: QPainter, d: Drawable, boxes: np.ndarray, overlay: np.ndarray | None) -> np.ndarray:
    """Write the boxes that cover at most TINY x TINY pixels into an image drawn in one call;
    returns the remaining (bigger) boxes for the caller to draw as rectangles."""
    t = p.worldTransform()
    sx, sy, dx, dy = t.m11(), t.m22(), t.dx(), t.dy()
    device = p.device()
    w, h = device.width(), device.height()
    px = np.floor(d.x0[boxes] * sx + dx).astype(np.int64)
    py = np.floor(d.y0[boxes] * sy + dy).astype(np.int64)
    pw = np.maximum(1, np.ceil(d.scene.box_w[boxes] * sx)).astype(np.int64)
    ph = np.maximum(1, np.ceil(d.scene.box_h[boxes] * sy)).astype(np.int64)
    tiny = (pw <= TINY) & (ph <= TINY)
    colours = box_argb(d, boxes, overlay)
    buffer = np.zeros((h, w), np.uint32)
    for ox in range(TINY):
        for oy in range(TINY):
            m = tiny & (ox < pw) & (oy < ph)
            x, y = px[m] + ox, py[m] + oy
            inside = (x >= 0) & (x < w) & (y >= 0) & (y < h)
            buffer[y[inside], x[inside]] = colours[m][inside]
    image = QImage(buffer.data, w, h, w * 4, QImage.Format.Format_ARGB32_Premultiplied)
    p.save()
    p.resetTransform()
    p.drawImage(0, 0, image)
    p.restore()
    return boxes[~tiny]
