"""PNG pictures written without Qt's writer (see onnxviz/ui/png.py): Qt reads back every pixel as it was."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtGui import QColor, QImage

from onnxviz.ui.png import STRIP, png_bytes


def _random_image(width: int, height: int, fmt: QImage.Format, seed: int) -> QImage:
    image = QImage(width, height, fmt)
    rng = np.random.default_rng(seed)
    colours = rng.integers(0, 256, (height, width, 4))
    for y in range(height):
        for x in range(width):
            image.setPixelColor(x, y, QColor(*(int(c) for c in colours[y, x])))
    return image


@pytest.mark.parametrize(("fmt", "alpha"), [(QImage.Format.Format_RGB32, False), (QImage.Format.Format_ARGB32, True),
                                            (QImage.Format.Format_ARGB32_Premultiplied, True)])
@pytest.mark.parametrize("width", [1, 7, 33])  # rows of any length, also ones Qt pads to 4 bytes
def test_every_pixel_reads_back(qapp: object, fmt: QImage.Format, alpha: bool, width: int) -> None:
    image = _random_image(width, 5, fmt, width)
    back = QImage.fromData(png_bytes(image), "PNG")
    assert (back.width(), back.height(), back.hasAlphaChannel()) == (width, 5, alpha)
    want = image.convertToFormat(QImage.Format.Format_ARGB32)
    got = back.convertToFormat(QImage.Format.Format_ARGB32)
    assert [want.pixel(x, y) for y in range(5) for x in range(width)] == \
        [got.pixel(x, y) for y in range(5) for x in range(width)]


@pytest.mark.parametrize(("fmt", "alpha"), [(QImage.Format.Format_RGB32, False), (QImage.Format.Format_RGB888, False),
                                            (QImage.Format.Format_ARGB32_Premultiplied, True),
                                            (QImage.Format.Format_Indexed8, False)])
def test_tall_pictures_read_back_across_strips(qapp: object, fmt: QImage.Format, alpha: bool) -> None:
    """Rows are converted, filtered and packed a strip at a time: every row reads back, those at a strip's edge
    (each strip's first row is stored against the last of the strip before) and in a last, shorter strip too."""
    height = 2 * STRIP + 7
    source = _random_image(13, height, QImage.Format.Format_ARGB32, 3)
    if fmt == QImage.Format.Format_Indexed8:  # a colour table: a few colours, rows of them in a random order
        image = QImage(13, height, fmt)
        image.setColorTable([QColor(c, 255 - c, (7 * c) % 256).rgb() for c in range(0, 256, 32)])
        rng = np.random.default_rng(5)
        for y in range(height):
            for x in range(13):
                image.setPixel(x, y, int(rng.integers(0, 8)))
    else:
        image = source.convertToFormat(fmt)
    back = QImage.fromData(png_bytes(image), "PNG")
    assert (back.width(), back.height(), back.hasAlphaChannel()) == (13, height, alpha)
    want = image.convertToFormat(QImage.Format.Format_ARGB32)
    got = back.convertToFormat(QImage.Format.Format_ARGB32)
    assert [want.pixel(x, y) for y in range(height) for x in range(13)] == \
        [got.pixel(x, y) for y in range(height) for x in range(13)]
