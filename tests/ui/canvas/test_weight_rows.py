"""A click on a weight row of a box shows that weight in the Weights panel (the node stays selected): the
int8 weight of a QDQ Conv, through the DequantizeLinear folded into the row."""

from __future__ import annotations

from conftest import TEST_DATA
from PySide6.QtCore import QPointF
from pytestqt.qtbot import QtBot
from test_subgraph_bodies import click_at
from window_fixtures import open_canvas

from onnxviz.ui.canvas import style

EXPORTS = TEST_DATA / "exports"


def test_clicking_a_weight_row_opens_the_weight(qtbot: QtBot) -> None:
    window, canvas = open_canvas(qtbot, EXPORTS / "resnet_int8_qdq.onnx")
    d = canvas.drawable
    assert d is not None
    conv = next(b for b, t in enumerate(d.scene.box_title) if t == "Conv")
    node = d.scene.box_ref[conv].node
    canvas.view.set_scale(1.0)
    canvas.view.center_on(QPointF(float(d.x0[conv] + d.scene.box_w[conv] / 2), float(d.y0[conv] + d.scene.box_h[conv] / 2)))
    row = QPointF(float(d.x0[conv]) + 20, float(d.y0[conv]) + style.HEADER_H + 2 + style.LINE_H / 2)
    click_at(qtbot, canvas, row)
    assert window.doc.selection.state.node == node                    # the node is selected
    weights = window.panels.weights_panel
    quantized = window.doc.model.graph.node[node].input[1]            # the DequantizeLinear's output
    stored = next(n.input[0] for n in window.doc.model.graph.node if quantized in n.output)
    assert weights.shown == ("init", "", stored)                       # and its int8 weight is shown
    assert not window.panels.docks["Weights"].visibleRegion().isEmpty()
