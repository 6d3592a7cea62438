"""Colours, fonts and level-of-detail thresholds of the graph drawing."""

from __future__ import annotations

from PySide6.QtGui import QColor, QFont

from onnxviz.model.layout.labels import LABEL_SIZE
from onnxviz.model.layout.scene import Category

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

# Colours that differ between the light and the dark theme; use_dark() swaps them.
_LIGHT = {
    "BACKGROUND": "#fbfbfc", "BOX_BODY": "#ffffff", "BOX_BORDER": "#b9c0c8", "TEXT": "#1f2328",
    "TEXT_DIM": "#59636e", "TERMINAL_FILL": "#e6ebf1", "TERMINAL_BORDER": "#6a7b8f", "GROUP_FILL": "#f1ece0",
    "GROUP_BORDER": "#a8977a", "FRAME_FILL": "#12786e5a", "FRAME_BORDER": "#c9bfa9", "FRAME_TEXT": "#7c6d52",
    "EDGE": "#8d959e", "EDGE_LABEL": "#4d5560", "EDGE_LABEL_INFERRED": "#59636e", "PANEL": "#f0ffffff",
    "PANEL_BORDER": "#c3c9d0",
}
_DARK = {
    "BACKGROUND": "#1e2024", "BOX_BODY": "#2a2e35", "BOX_BORDER": "#4a515b", "TEXT": "#e4e7eb",
    "TEXT_DIM": "#a3abb5", "TERMINAL_FILL": "#34404d", "TERMINAL_BORDER": "#8497ad", "GROUP_FILL": "#3a352b",
    "GROUP_BORDER": "#9c8c6e", "FRAME_FILL": "#16d2c8b4", "FRAME_BORDER": "#5c5546", "FRAME_TEXT": "#bfb091",
    "EDGE": "#7d8793", "EDGE_LABEL": "#b3bac3", "EDGE_LABEL_INFERRED": "#848d98", "PANEL": "#f0262a30",
    "PANEL_BORDER": "#4a515b",
}
BACKGROUND = BOX_BODY = BOX_BORDER = TEXT = TEXT_DIM = TERMINAL_FILL = TERMINAL_BORDER = QColor()
GROUP_FILL = GROUP_BORDER = FRAME_FILL = FRAME_BORDER = FRAME_TEXT = QColor()
EDGE = EDGE_LABEL = EDGE_LABEL_INFERRED = PANEL = PANEL_BORDER = QColor()
HEADER_TEXT = QColor("#ffffff")
HEADER_TEXT_ON_LIGHT = QColor("#1f2328")
dark = False


def text_on(background: QColor) -> QColor:
    """Title text readable on a header of this colour, in either theme (perceived brightness)."""
    brightness = 0.299 * background.red() + 0.587 * background.green() + 0.114 * background.blue()
    return HEADER_TEXT_ON_LIGHT if brightness > 150 else HEADER_TEXT


def use_dark(on: bool) -> None:
    """Switch the drawing colours to the dark (or light) theme."""
    global dark
    dark = on
    for name, value in (_DARK if on else _LIGHT).items():
        globals()[name] = QColor(value)
    FAR_COLOURS[Category.TERMINAL] = "#8497ad" if on else "#6a7b8f"
    FAR_COLOURS[Category.GROUP] = "#8c7d5f" if on else "#b3a27f"


SELECTION = QColor("#1a73e8")
GHOST = QColor(0, 158, 115)   # a node only the other model of a diff has: the diff's "added" green
NEIGHBOUR = QColor("#7baaf0")
FLAG = QColor("#e0118a")
NO_OVERLAY_VALUE = QColor("#d5d9de")  # an op box the overlay has no (finite) value for, near or far
FLAG_NO = QColor("#9dc3b0")    # a yes/no overlay's "no" (e.g. no NaN/Inf): a quiet green, apart from the grey above
FLAG_YES = QColor("#d93025")   # and its "yes", a warning
SEVERITY_COLOURS = {"error": QColor("#d93025"), "warning": QColor("#f29900"), "info": QColor("#1a73e8")}

FONT_FAMILY = "DejaVu Sans"
TITLE_PT = 11.0     # font sizes in scene units (pixels at 1:1)
BODY_PT = 10.0
LABEL_PT = LABEL_SIZE   # edge labels: the size the layout makes room for
FRAME_PT = 11.0
HEADER_H = 20.0     # the layout's box header and line heights
LINE_H = 14.0

# Level of detail by zoom factor: below TEXT_SCALE boxes are plain filled rectangles (their 11 px titles
# would be under 4 px); below EDGE_SCALE edges are no longer drawn when there are many.
TEXT_SCALE = 0.35
READ_SCALE = 0.45   # the least zoom that brings something into view for reading (search hits, selection)
BODY_SCALE = 0.5
LABEL_SCALE = 0.6
ARROW_SCALE = 0.3
FRAME_LABEL_SCALE = 0.3
MAX_EDGE_SEGMENTS_FAR = 150_000
EDGE_MIN_SCALE = 0.02   # further out, boxes are specks and edges are left out


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


use_dark(False)
