"""Whole-graph export to PNG (or any raster format Qt writes) and SVG, with the canvas's painter.

A graph far taller than wide (deep networks) is cut into side-by-side columns
between rows of boxes, like a newspaper page, so that the image stays readable
instead of being scaled down to a thin illegible strip.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PySide6.QtCore import QBuffer, QIODevice, QLineF, QRectF, QSize
from PySide6.QtGui import QImage, QImageWriter, QPainter, QPen
from PySide6.QtSvg import QSvgGenerator

from onnxviz.model.errors import OnnxvizError
from onnxviz.model.io.disk import atomic_write
from onnxviz.model.layout.drawable import Drawable
from onnxviz.ui.canvas import style
from onnxviz.ui.canvas.painting import PaintOptions, ScenePainter
from onnxviz.ui.png import write_image

MARGIN = 20.0
COLUMN_GAP = 60.0
MAX_SIDE = 32000            # QImage's limit is 32767 pixels a side
MAX_PIXELS = 120_000_000    # about 480 MB of ARGB
COLUMN_HEIGHT = 12000.0     # scene units per column once a graph needs columns
MAX_COLUMNS = 64


@dataclass
class Page:
    """Where each slice ``(top, bottom)`` of the scene goes: column k starts at x = k * (width + gap)."""

    x: float
    width: float
    slices: list[tuple[float, float]]
    scale: float

    @property
    def size(self) -> tuple[float, float]:
        """Scene-unit size of the page (before scaling)."""
        height = max(b - t for t, b in self.slices) + 2 * MARGIN
        return len(self.slices) * (self.width + 2 * MARGIN) + (len(self.slices) - 1) * COLUMN_GAP, height


def plan_page(d: Drawable, scale: float = 1.0, columns: int | None = None) -> Page:
    """Cut the scene into columns when one column would not fit at a readable scale."""
    x, y, w, h = d.bounds
    if columns is None:
        columns = 1 if h * scale <= MAX_SIDE else int(np.ceil(h / COLUMN_HEIGHT))
        columns = min(columns, max(1, int(MAX_SIDE / scale / (w + 2 * MARGIN + COLUMN_GAP))), MAX_COLUMNS)
    page = Page(x, w, _slices(d, y, h, max(1, columns)), scale)
    pw, ph = page.size
    page.scale = max(1e-4, min(scale, MAX_SIDE / pw, MAX_SIDE / ph, (MAX_PIXELS / (pw * ph)) ** 0.5))
    return page


def _slices(d: Drawable, y: float, h: float, columns: int) -> list[tuple[float, float]]:
    cuts = [y]
    for k in range(1, columns):
        cut = _free_y(d, y + h * k / columns)
        if cut > cuts[-1]:
            cuts.append(cut)
    cuts.append(y + h)
    return list(zip(cuts[:-1], cuts[1:], strict=True))


def _free_y(d: Drawable, target: float) -> float:
    """A height at or below ``target`` that cuts through no box (a gap between rows)."""
    for _ in range(1000):
        inside = (d.y0 < target) & (d.y1 > target)
        if not inside.any():
            return target
        target = float(d.y1[inside].max()) + 1.0
    return target


def image_scale(d: Drawable, scale: float = 1.0) -> float:
    """The scale a raster export of ``d`` ends up at (reduced to stay within size and memory limits)."""
    return plan_page(d, scale).scale


def export_image(d: Drawable, path: str | Path, scale: float = 1.0, options: PaintOptions | None = None,
                 columns: int | None = None) -> Path:
    """Draw the whole of ``d`` to ``path``; the suffix picks SVG or a raster format."""
    out = Path(path)
    suffix = out.suffix.lower().lstrip(".")
    if not suffix:
        raise OnnxvizError(f"{out.name} has no file extension; use .png or .svg.")
    if out.is_dir():
        raise OnnxvizError(f"{out} is a folder; choose a file name.")
    if not out.parent.is_dir():
        raise OnnxvizError(f"folder {out.parent} does not exist.")
    options = options or PaintOptions()
    if suffix == "svg":
        _export_svg(d, out, plan_page(d, 1.0, columns), options)
    elif suffix.encode() in {bytes(f.data()) for f in QImageWriter.supportedImageFormats()}:
        _export_raster(d, out, plan_page(d, scale, columns), options)
    else:
        raise OnnxvizError(f"cannot write .{suffix} images; use .png or .svg.")
    return out


def paint_page(p: QPainter, d: Drawable, page: Page, options: PaintOptions) -> None:
    """Background, then each column's slice of the scene, then thin rules between columns."""
    pw, ph = page.size
    s = page.scale
    p.fillRect(QRectF(0, 0, pw * s, ph * s), style.BACKGROUND)
    painter = ScenePainter()
    step = page.width + 2 * MARGIN + COLUMN_GAP
    for k, (top, bottom) in enumerate(page.slices):
        p.save()
        p.scale(s, s)
        p.translate(k * step, 0)
        # between columns the cut is in the gap under a row of boxes: show nothing above or below it
        clip_top = 0.0 if k == 0 else MARGIN - 1
        clip_bottom = bottom - top + (2 * MARGIN if k == len(page.slices) - 1 else MARGIN + 1)
        p.setClipRect(QRectF(0, clip_top, page.width + 2 * MARGIN, clip_bottom - clip_top))
        p.translate(MARGIN - page.x, MARGIN - top)
        painter.paint(p, d, QRectF(page.x - MARGIN, top - MARGIN, page.width + 2 * MARGIN, bottom - top + 2 * MARGIN),
                      s, options)
        p.restore()
        if k:
            p.setPen(QPen(style.BOX_BORDER, 1))
            x = (k * step - COLUMN_GAP / 2) * s
            p.drawLine(QLineF(x, MARGIN * s, x, (ph - MARGIN) * s))


def _export_raster(d: Drawable, out: Path, page: Page, options: PaintOptions) -> None:
    pw, ph = page.size
    size = QSize(max(1, round(pw * page.scale)), max(1, round(ph * page.scale)))
    # no alpha channel: the page's background is opaque, and a PNG of three channels is a quarter less to
    # filter and pack (a 15899x7548 render: 1.4 s instead of 1.9, 17 MB instead of 19)
    image = QImage(size, QImage.Format.Format_RGB32)
    if image.isNull():
        raise OnnxvizError(f"not enough memory for a {size.width()}x{size.height()} image.")
    p = QPainter(image)
    try:
        paint_page(p, d, page, options)
    finally:
        p.end()
    write_image(image, out)


def _export_svg(d: Drawable, out: Path, page: Page, options: PaintOptions) -> None:
    page.scale = 1.0
    pw, ph = page.size
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    generator = QSvgGenerator()
    generator.setOutputDevice(buffer)
    generator.setSize(QSize(round(pw), round(ph)))
    generator.setViewBox(QRectF(0, 0, pw, ph))
    generator.setTitle(d.scene.scope or "graph")
    generator.setDescription("Drawn by onnxviz")
    p = QPainter()
    if not p.begin(generator):
        raise OnnxvizError(f"could not write {out.name}: the drawing could not be started.")
    try:
        paint_page(p, d, page, options)
    finally:
        p.end()
    drawing = bytes(buffer.data().data())
    if not drawing:
        raise OnnxvizError(f"could not write {out.name}: the drawing could not be made.")
    atomic_write(out, drawing, verb="write")
