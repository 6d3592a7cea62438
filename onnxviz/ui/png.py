"""A picture as PNG bytes, quickly: the window's screenshot and rendered graphs are flat colours, which zlib packs
well once each row is stored as its difference from the row above (PNG's "Up" filter). Qt's writer (libpng) tries
its five filters on every row to choose one: 1400x900 took ~450 M instructions, 13% of a whole
``onnxviz FILE --screenshot``; this takes about a fifth of that, for a file as big (170 KB for light_resnet50's
window); a 7127x16837 render of 61k nodes: 0.9 s instead of 4.8 s, 4.4 MB instead of 2.8 MB. A big picture's bands of
rows are packed at once, one per core, and joined into one zlib stream (pigz's way): the same pixels, in a file 0.01% bigger."""

from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from PySide6.QtCore import QBuffer, QIODevice
from PySide6.QtGui import QImage

from onnxviz.model.errors import OnnxvizError
from onnxviz.model.io.disk import atomic_write

SIGNATURE = b"\x89PNG\r\n\x1a\n"
LEVEL = 3  # zlib's: 6 packs 8% smaller in 1.6x the time
STRIP = 64  # rows converted, filtered and packed at a time: in the cache, and no copy of a whole big picture
# (a 7127x16837 render: 0.75-0.89 s instead of 1.4-2.0, the same bytes: zlib packs a stream fed in parts as in one)
_RGB, _RGBA = 2, 6  # PNG colour types
_NONE, _UP = 0, 2  # PNG row filters
BAND_BYTES = 16 << 20  # rows packed apart from the band above: at least this many bytes
WINDOW = 32 << 10  # deflate's window: how far back a band's packer may look into the band above
_ADLER_BASE = 65521


def png_bytes(image: QImage, level: int = LEVEL, bands: int | None = None) -> bytes:
    """``image`` as a PNG file's bytes: 8-bit RGB, or RGBA when it has an alpha channel (not premultiplied).
    The rows are packed in ``bands`` at once (by default one per core for a big picture), as pigz does."""
    alpha = image.hasAlphaChannel()
    target = QImage.Format.Format_RGBA8888 if alpha else QImage.Format.Format_RGB888
    if image.colorCount():  # a colour table: converted whole (a strip of it alone would have none)
        image = image.convertToFormat(target)
    width, height, channels = image.width(), image.height(), 4 if alpha else 3
    header = struct.pack(">IIBBBBB", width, height, 8, _RGBA if alpha else _RGB, 0, 0, 0)
    rows = _Rows(image, target, channels)
    cuts = _cuts(height, 1 + width * channels, bands)
    spans = list(zip(cuts[:-1], cuts[1:], strict=True))
    packed = _pack_bands(rows, spans, level) if len(spans) > 1 else [_pack_band(rows, spans[0], level, True)]
    checksum = 1  # Adler-32 of nothing
    for _, adler, length in packed:
        checksum = _adler32_combine(checksum, adler, length)
    idat = b"".join((zlib.compress(b"", level)[:2], *(p[0] for p in packed), struct.pack(">I", checksum)))
    return b"".join((SIGNATURE, _chunk(b"IHDR", header), _chunk(b"IDAT", idat), _chunk(b"IEND", b"")))


def _pack_bands(rows: _Rows, spans: list[tuple[int, int]], level: int) -> list[tuple[bytes, int, int]]:
    """Every band packed at once: the first here, the others in threads (zlib and numpy let go of the GIL, Qt's
    conversion does not). Only big pictures have more than one band: the thread pool is imported for them, not
    with the window's first frame."""
    from concurrent.futures import ThreadPoolExecutor

    last = len(spans) - 1
    with ThreadPoolExecutor(last) as pool:
        later = [pool.submit(_pack_band, rows, span, level, k == last) for k, span in enumerate(spans) if k]
        return [_pack_band(rows, spans[0], level, False), *(f.result() for f in later)]


def _cuts(height: int, row_bytes: int, bands: int | None) -> list[int]:
    """The first row of each band and the picture's height: one band per core, each of at least
    :data:`BAND_BYTES` (a window's screenshot is one)."""
    if bands is None:
        bands = min(os.cpu_count() or 1, height * row_bytes // BAND_BYTES)
    bands = max(1, min(bands, height))
    return [height * k // bands for k in range(bands + 1)]


def _pack_band(rows: _Rows, span: tuple[int, int], level: int, last: bool) -> tuple[bytes, int, int]:
    """The raw deflate stream of rows ``span`` filtered (ending on a byte with a sync flush, unless ``last``),
    their Adler-32 and length. A band after the first starts from the last 32 KiB before it, as if one stream
    had packed them all: references back into the band above stay valid when the bands are joined."""
    top, bottom = span
    window = b"".join(bytes(f) for f in rows.filtered(max(0, top - WINDOW // rows.row_bytes - 1), top))
    packer = zlib.compressobj(level, zlib.DEFLATED, -15, zdict=window[-WINDOW:]) if top else \
        zlib.compressobj(level, zlib.DEFLATED, -15)
    packed, adler, length = [], 1, 0
    for filtered in rows.filtered(top, bottom):
        packed.append(packer.compress(filtered.data))
        adler = zlib.adler32(filtered.data, adler)
        length += filtered.nbytes
    packed.append(packer.flush(zlib.Z_FINISH if last else zlib.Z_SYNC_FLUSH))
    return b"".join(packed), adler, length


def _adler32_combine(adler1: int, adler2: int, length2: int) -> int:
    """The Adler-32 of two byte strings joined, from each one's and the second's length (zlib's
    ``adler32_combine``, which Python's zlib does not offer)."""
    rem = length2 % _ADLER_BASE
    low = ((adler1 & 0xFFFF) + (adler2 & 0xFFFF) + _ADLER_BASE - 1) % _ADLER_BASE
    high = (rem * (adler1 & 0xFFFF) + (adler1 >> 16) + (adler2 >> 16) + _ADLER_BASE - rem) % _ADLER_BASE
    return high << 16 | low


class _Rows:
    """A picture's rows as PNG stores them, converted to RGB(A) and filtered a strip of :data:`STRIP` rows at a
    time (a 7127x16837 render: no second picture of 360 MB)."""

    def __init__(self, image: QImage, target: QImage.Format, channels: int) -> None:
        self.image, self.target, self.channels = image, target, channels
        self.row_bytes = 1 + image.width() * channels  # each row starts with its filter

    def filtered(self, top: int, bottom: int) -> Iterator[np.ndarray]:
        """Rows ``top`` to ``bottom``, each the difference from the row above (PNG's "Up", modulo 256) but the
        picture's first (filter None); each strip is overwritten by the next."""
        rows = np.empty((min(STRIP, max(1, bottom - top)), self.row_bytes), np.uint8)
        rows[:, 0] = _UP
        strips = self._strips(top - 1, top)  # kept: its strip's image holds the pixels
        above = next(strips)[-1].copy() if top else np.zeros(self.row_bytes - 1, np.uint8)
        for start, pixels in zip(range(top, bottom, STRIP), self._strips(top, bottom), strict=True):
            n = len(pixels)
            np.subtract(pixels[0], above, out=rows[0, 1:])
            np.subtract(pixels[1:], pixels[:-1], out=rows[1:n, 1:])
            rows[0, 0] = _NONE if start == 0 else _UP
            yield rows[:n]
            above = pixels[-1].copy()

    def _strips(self, top: int, bottom: int) -> Iterator[np.ndarray]:
        image, width = self.image, self.image.width()
        line = image.bytesPerLine()
        source = np.frombuffer(image.constBits(), np.uint8, count=image.sizeInBytes()).reshape(image.height(), line)
        for start in range(top, bottom, STRIP):
            n = min(STRIP, bottom - start)
            strip = QImage(source[start:start + n].data, width, n, line, image.format()).convertToFormat(self.target)
            data = np.frombuffer(strip.constBits(), np.uint8, count=strip.sizeInBytes())
            yield data.reshape(n, strip.bytesPerLine())[:, :width * self.channels]


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(body, zlib.crc32(kind)))


def write_image(image: QImage, out: Path) -> None:
    """``image`` in the format ``out``'s suffix names (PNG by :func:`png_bytes`, others by Qt), written to ``out``
    in one step with every byte checked (a full disk is one sentence and leaves no part of a picture)."""
    kind = out.suffix.lstrip(".").upper() or "PNG"
    if kind == "PNG":
        data = png_bytes(image)  # Qt's writer took 4.8 s for a 120-megapixel render, this 0.9 s
    else:
        buffer = QBuffer()
        buffer.open(QIODevice.OpenModeFlag.WriteOnly)
        if not image.save(buffer, kind):  # type: ignore[call-overload]  # PySide6 takes the format as str here
            raise OnnxvizError(f"could not write {out.name}: the picture could not be encoded.")
        data = bytes(buffer.data().data())
    atomic_write(out, data, verb="write")
