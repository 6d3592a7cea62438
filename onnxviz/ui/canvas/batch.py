"""Many rectangles or lines drawn by one QPainter call, straight from a numpy array.

``QPainter.drawRects`` and ``drawLines`` take a C array of QRectF / QLineF and its length. Both types are
four doubles (x, y, width, height; x1, y1, x2, y2), so a C-ordered ``(n, 4)`` float64 array is laid out
as such an array. ``shiboken6.wrapInstance`` makes a QRectF / QLineF that refers to the array's first
row without owning it (nothing is freed when it goes), and PySide6 hands that on as the pointer: no
Python object per primitive, no copy.
"""

from __future__ import annotations

from typing import TypeVar, cast

import numpy as np
import shiboken6
from PySide6.QtCore import QLineF, QRectF
from PySide6.QtGui import QPainter

_Primitive = TypeVar("_Primitive", QRectF, QLineF)


def as_rows(values: np.ndarray) -> np.ndarray:
    """``values`` as a C-ordered ``(n, 4)`` float64 array (a copy only when it is not one already)."""
    return np.ascontiguousarray(np.asarray(values, dtype=np.float64).reshape(-1, 4))


def _first_row(rows: np.ndarray, kind: type[_Primitive]) -> _Primitive:
    """A ``kind`` that is ``rows[0]`` in place (the array must outlive the draw call)."""
    return cast(_Primitive, shiboken6.wrapInstance(rows.ctypes.data, kind))


def draw_rects(p: QPainter, rects: np.ndarray) -> None:
    """Draw ``rects`` (rows of x, y, width, height) with the painter's pen and brush."""
    rows = as_rows(rects)
    if len(rows):
        p.drawRects(_first_row(rows, QRectF), len(rows))


def draw_lines(p: QPainter, lines: np.ndarray) -> None:
    """Draw ``lines`` (rows of x1, y1, x2, y2) with the painter's pen."""
    rows = as_rows(lines)
    if len(rows):
        p.drawLines(_first_row(rows, QLineF), len(rows))
