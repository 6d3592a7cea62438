"""Whole-graph export to PNG (or any raster format Qt writes) and SVG, with the canvas's painter."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QRectF, QSize
from PySide6.QtGui import QImage, QImageWriter, QPainter
from PySide6.QtSvg import QSvgGenerator

from onnxviz.model.errors import OnnxvizError
from onnxviz.ui.canvas import style
from onnxviz.ui.canvas.drawable import Drawable
from onnxviz.ui.canvas.painting import PaintOptions, ScenePainter

MARGIN = 20.0
MAX_SIDE = 32000            # QImage's limit is 32767 pixels a side
MAX_PIXELS = 120_000_000    # about 480 MB of ARGB


def image_scale(d: Drawable, scale: float = 1.0) -> float:
    """The requested scale, reduced so that the image stays within QImage's and memory limits."""
    _, _, w, h = d.bounds
    w, h = w + 2 * MARGIN, h + 2 * MARGIN
    scale = min(scale, MAX_SIDE / max(w, 1.0), MAX_SIDE / max(h, 1.0))
    if w * h * scale * scale > MAX_PIXELS:
        scale = (MAX_PIXELS / (w * h)) ** 0.5
    return max(scale, 1e-4)


def export_image(d: Drawable, path: str | Path, scale: float = 1.0, options: PaintOptions | None = None) -> Path:
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
        _export_svg(d, out, options)
    elif suffix.encode() in {bytes(f.data()) for f in QImageWriter.supportedImageFormats()}:
        _export_raster(d, out, image_scale(d, scale), options)
    else:
        raise OnnxvizError(f"cannot write .{suffix} images; use .png or .svg.")
    return out


def _area(d: Drawable) -> QRectF:
    x, y, w, h = d.bounds
    return QRectF(x - MARGIN, y - MARGIN, w + 2 * MARGIN, h + 2 * MARGIN)


def _paint(p: QPainter, d: Drawable, scale: float, options: PaintOptions) -> None:
    area = _area(d)
    p.fillRect(QRectF(0, 0, area.width() * scale, area.height() * scale), style.BACKGROUND)
    p.scale(scale, scale)
    p.translate(-area.x(), -area.y())
    ScenePainter().paint(p, d, area, scale, options)


def _export_raster(d: Drawable, out: Path, scale: float, options: PaintOptions) -> None:
    area = _area(d)
    size = QSize(max(1, round(area.width() * scale)), max(1, round(area.height() * scale)))
    image = QImage(size, QImage.Format.Format_ARGB32_Premultiplied)
    if image.isNull():
        raise OnnxvizError(f"not enough memory for a {size.width()}x{size.height()} image.")
    p = QPainter(image)
    try:
        _paint(p, d, scale, options)
    finally:
        p.end()
    if not image.save(str(out)):
        raise OnnxvizError(f"could not write {out}.")


def _export_svg(d: Drawable, out: Path, options: PaintOptions) -> None:
    area = _area(d)
    generator = QSvgGenerator()
    generator.setFileName(str(out))
    generator.setSize(QSize(round(area.width()), round(area.height())))
    generator.setViewBox(QRectF(0, 0, area.width(), area.height()))
    generator.setTitle(d.scene.scope or "graph")
    generator.setDescription("Drawn by onnxviz")
    p = QPainter()
    if not p.begin(generator):
        raise OnnxvizError(f"could not write {out}.")
    try:
        _paint(p, d, 1.0, options)
    finally:
        p.end()
    if not out.is_file() or out.stat().st_size == 0:
        raise OnnxvizError(f"could not write {out}.")
