"""Edge labels are drawn at 11 units (Netron's size) and the layout's rectangle for each holds its drawn
text: the zero-overlap count of tests/corpus/test_label_overlaps.py is a count of what is painted."""

from __future__ import annotations

import onnx
import pytest
from conftest import TEST_DATA
from PySide6.QtCore import QPointF
from PySide6.QtGui import QColor, QFontMetricsF
from pytestqt.qtbot import QtBot

from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.graph.validation import infer_types
from onnxviz.model.layout.drawable import Drawable
from onnxviz.model.layout.engine import GraphLayout
from onnxviz.model.layout.labels import CHAR_WIDTHS, LABEL_LINE, LABEL_SIZE, label_spots, label_width
from onnxviz.model.layout.options import LayoutOptions
from onnxviz.ui.canvas import style
from onnxviz.ui.canvas.view import GraphView

EXPORTS = TEST_DATA / "exports"


def _labels() -> set[str]:
    found: set[str] = set()
    for path in sorted(EXPORTS.glob("*.onnx")):
        model = onnx.load(str(path), load_external_data=False)
        index = ModelIndex(model)
        index.set_inferred(infer_types(model).types)
        for names in (False, True):
            found.update(GraphLayout(index, options=LayoutOptions(edge_names=names)).build().edge_label)
    return found - {""}


def test_labels_are_netrons_size_and_contrast(qtbot: QtBot) -> None:
    assert style.LABEL_PT == LABEL_SIZE == 11.0
    assert LABEL_LINE >= QFontMetricsF(style.font(style.LABEL_PT)).height()
    background = style.BACKGROUND
    for colour in (style.EDGE_LABEL, style.EDGE_LABEL_INFERRED):
        assert _contrast(colour, background) >= 5.5


@pytest.mark.parametrize("italic", [False, True], ids=["declared", "inferred"])
def test_a_labels_rectangle_holds_its_drawn_text_and_little_more(qtbot: QtBot, italic: bool) -> None:
    metrics = QFontMetricsF(style.font(style.LABEL_PT, italic=italic))
    texts = _labels() | {"".join(CHAR_WIDTHS), "batch × sequence × 64", "unknown rank", "seq(map(int64,float))"}
    assert len(texts) > 100
    for text in texts:
        drawn = metrics.horizontalAdvance(text)
        assert drawn <= label_width(text) <= drawn * 1.12 + 2, text


def test_labels_at_1_to_1_are_painted_11_units_high(qtbot: QtBot) -> None:
    model = onnx.load(str(EXPORTS / "resnet_float.onnx"), load_external_data=False)
    scene = GraphLayout(ModelIndex(model)).build()
    spots = label_spots(scene)
    assert len(spots.edge) >= 1
    view = GraphView()
    qtbot.addWidget(view)
    view.resize(400, 300)
    view.set_drawable(Drawable(scene))
    view.set_scale(1.0)
    x, y = float(spots.x[0]), float(spots.y[0])
    width = label_width(scene.edge_label[int(spots.edge[0])])
    view.center_on(QPointF(x + width / 2, y + LABEL_LINE / 2))
    image = view.grab().toImage()
    top_left = view.map_from_scene(QPointF(x, y))
    rows = [r for r in range(int(top_left.y()) - 2, int(top_left.y() + LABEL_LINE) + 2)
            if any(_dark(image.pixelColor(c, r)) for c in range(int(top_left.x()), int(top_left.x() + width)))]
    assert 8 <= max(rows) - min(rows) + 1 <= LABEL_LINE   # a 9-unit font's digits were 7 rows high


def _dark(colour: QColor) -> bool:
    return colour.lightness() < 120   # the label's text, not the grey edge beside it


def _contrast(a: QColor, b: QColor) -> float:
    def luminance(c: QColor) -> float:
        def channel(v: float) -> float:
            return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4
        return 0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF()) + 0.0722 * channel(c.blueF())
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)
