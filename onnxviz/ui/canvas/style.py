"""Colours, fonts and level-of-detail thresholds of the graph drawing."""

from __future__ import annotations

from PySide6.QtGui import QColor, QFont

from onnxviz.model.scene import Category

# Header colour of an operator box per category (white text on top).
CATEGORY_COLOURS: dict[int, str] = {
    Category.OTHER: "#4f5761",
    Category.CONV: "#2f5f8f",           # convolution / linear: blue
    Category.ACTIVATION: "#b4462c",     # red-orange
    Category.NORMALIZATION: "#3b7d4c",  # green
    Category.POOLING: "#23807e",        # teal
    Category.TENSOR: "#7b6356",         # grey-brown
    Category.ELEMENTWISE: "#5d6873",    # slate
    Category.REDUCTION: "#47698c",      # steel
    Category.CONTROL: "#6d43a3",        # purple
    Category.QUANTIZATION: "#a27a17",   # amber
    Category.CUSTOM: "#a83c78",         # magenta
    Category.ATTENTION: "#3c4ea3",      # indigo
    Category.CONSTANT: "#8d949b",       # light grey
    Category.TERMINAL: "#e6ebf1",
    Category.GROUP: "#e9e2d2",
}
CATEGORY_NAMES: dict[int, str] = {c.value: c.name.lower() for c in Category}

BACKGROUND = QColor("#fbfbfc")
BOX_BODY = QColor("#ffffff")
BOX_BORDER = QColor("#b9c0c8")
TEXT = QColor("#1f2328")
TEXT_DIM = QColor("#59636e")
HEADER_TEXT = QColor("#ffffff")
TERMINAL_FILL = QColor("#e6ebf1")
TERMINAL_BORDER = QColor("#6a7b8f")
GROUP_FILL = QColor("#f1ece0")
GROUP_BORDER = QColor("#a8977a")
FRAME_FILL = QColor(120, 110, 90, 18)
FRAME_BORDER = QColor("#c9bfa9")
FRAME_TEXT = QColor("#7c6d52")
EDGE = QColor("#8d959e")
EDGE_LABEL = QColor("#4d5560")
EDGE_LABEL_INFERRED = QColor("#8a929b")
SELECTION = QColor("#1a73e8")
NEIGHBOUR = QColor("#7baaf0")
FLAG = QColor("#e0118a")
SEVERITY_COLOURS = {"error": QColor("#d93025"), "warning": QColor("#f29900"), "info": QColor("#1a73e8")}

FONT_FAMILY = "DejaVu Sans"
TITLE_PT = 11.0     # font sizes in scene units (pixels at 1:1)
BODY_PT = 10.0
LABEL_PT = 9.0
FRAME_PT = 11.0
HEADER_H = 20.0     # the layout's box header and line heights
LINE_H = 16.0

# Level of detail by zoom factor: below TEXT_SCALE boxes are plain filled rectangles;
# below EDGE_SCALE edges are no longer drawn when there are many.
TEXT_SCALE = 0.45
BODY_SCALE = 0.6
LABEL_SCALE = 0.75
ARROW_SCALE = 0.3
FRAME_LABEL_SCALE = 0.3
MAX_EDGE_SEGMENTS_FAR = 150_000


def font(size: float, bold: bool = False, italic: bool = False) -> QFont:
    f = QFont(FONT_FAMILY)
    f.setPixelSize(max(1, round(size)))
    f.setBold(bold)
    f.setItalic(italic)
    f.setHintingPreference(QFont.HintingPreference.PreferNoHinting)
    return f


# Far away, terminals and collapsed groups need darker fills than their close-up ones to stay visible.
FAR_COLOURS: dict[int, str] = {**CATEGORY_COLOURS, Category.TERMINAL: "#6a7b8f", Category.GROUP: "#b3a27f"}


def category_colour(category: int, far: bool = False) -> QColor:
    table = FAR_COLOURS if far else CATEGORY_COLOURS
    return QColor(table.get(category, CATEGORY_COLOURS[Category.OTHER]))
