"""PNG pictures written without Qt's writer (see onnxviz/ui/png.py): Qt reads back every pixel as it was."""

from __future__ import annotations

import struct
import zlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from PySide6.QtGui import QColor, QImage

from onnxviz.ui.png import LEVEL, STRIP, _adler32_combine, png_bytes


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


def _decoded(data: bytes) -> np.ndarray:
    """The RGB(A) rows of a PNG of "Up" and "None" rows, decoded here without Qt: zlib over its IDAT, each row
    the running sum of the rows above (a second decoder for the same file)."""
    pos, idat, shape = len(b"\x89PNG\r\n\x1a\n"), [], (0, 0, 0)
    while pos < len(data):
        (length,), kind = struct.unpack(">I", data[pos:pos + 4]), data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        assert struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])[0] == zlib.crc32(kind + body)
        if kind == b"IHDR":
            width, height, _, colour = struct.unpack(">IIBB", body[:10])
            shape = (height, width, 4 if colour == 6 else 3)
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + length
    raw = np.frombuffer(zlib.decompress(b"".join(idat)), np.uint8).reshape(shape[0], -1)
    assert raw[0, 0] == 0 and (raw[1:, 0] == 2).all()  # the first row as it is, then each from the row above
    return np.cumsum(raw[:, 1:], axis=0, dtype=np.uint8).reshape(shape)


@pytest.mark.parametrize("bands", [1, 2, 3, 5, 10_000])
@pytest.mark.parametrize("alpha", [False, True])
def test_bands_packed_at_once_join_into_one_stream(qapp: object, bands: int, alpha: bool) -> None:
    """A picture packed in bands (each band's stream starting from the last 32 KiB of the rows above it, as pigz
    does) is one zlib stream: Qt and a plain zlib decoder read every pixel back. Rows repeat every few rows, so
    each band's packer refers back into the band above."""
    width, height = 700, 2 * STRIP + 37  # rows of 2,101 or 2,801 bytes: the 32 KiB before a band span rows
    rng = np.random.default_rng(bands)
    pattern = rng.integers(0, 256, (5, width, 4), np.uint8)
    pattern[..., 3] = 255 if not alpha else pattern[..., 3]
    argb = pattern[np.arange(height) % 5]
    image = QImage(argb.tobytes(), width, height, width * 4, QImage.Format.Format_ARGB32 if alpha else
                   QImage.Format.Format_RGB32).copy()
    data = png_bytes(image, bands=bands)
    back = QImage.fromData(data, "PNG")
    assert back.convertToFormat(QImage.Format.Format_ARGB32) == image.convertToFormat(QImage.Format.Format_ARGB32)
    channels = [2, 1, 0, 3] if alpha else [2, 1, 0]  # ARGB32 is B, G, R, A in memory
    assert np.array_equal(_decoded(data), argb[..., channels])


def test_one_band_is_zlib_s_own_stream(qapp: object) -> None:
    """One band packs to the bytes zlib's one call makes of the filtered rows (the header and Adler-32 joined
    here around a raw stream)."""
    image = _random_image(9, STRIP + 3, QImage.Format.Format_RGB32, 8)
    data = png_bytes(image, bands=1)
    pixels = _decoded(data)
    filtered = np.concatenate([pixels[:1], pixels[1:] - pixels[:-1]]).reshape(len(pixels), -1)
    rows = np.column_stack([np.r_[0, np.full(len(pixels) - 1, 2)], filtered]).astype(np.uint8)
    assert zlib.compress(rows.tobytes(), LEVEL) in data


@given(st.lists(st.binary(max_size=70_000), min_size=1, max_size=5))
def test_adler32_of_parts_combines_to_the_whole(parts: list[bytes]) -> None:
    combined = 1
    for part in parts:
        combined = _adler32_combine(combined, zlib.adler32(part), len(part))
    assert combined == zlib.adler32(b"".join(parts))
