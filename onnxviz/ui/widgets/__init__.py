"""Reusable widgets shared by several features (e.g. :class:`~onnxviz.ui.widgets.tensor_view.TensorView`)."""

from __future__ import annotations

from PySide6.QtGui import QFont, QFontDatabase


def mono_font() -> QFont:
    """The system's fixed-width font, a little smaller than the body text."""
    font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    font.setPointSizeF(max(font.pointSizeF() - 0.5, 8.0))
    return font
