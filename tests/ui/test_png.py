"""PNG pictures written without Qt's writer (see onnxviz/ui/png.py): Qt reads back every pixel as it was."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtGui import QColor, QImage

from onnxviz.ui.png import png_bytes


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
