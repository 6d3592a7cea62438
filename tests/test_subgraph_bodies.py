"""If/Loop/Scan bodies on the canvas: values a body reads from the enclosing graph are drawn as such
(dashed, captioned), when the body is opened and when it is shown inside its node."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QPointF
from PySide6.QtGui import QImage
from pytestqt.qtbot import QtBot
from test_canvas import TIMEOUT, open_window

from onnxviz.model.layout.scene import BoxKind
from onnxviz.ui.canvas import style
from onnxviz.ui.canvas.canvas import GraphCanvas

VAD_IF = Path(__file__).parent / "data" / "exports" / "vad_if.onnx"


def box_of_value(canvas: GraphCanvas, value: str) -> int:
    d = canvas.drawable
    assert d is not None
    return next(b for b, ref in enumerate(d.scene.box_ref) if ref.kind != BoxKind.OP and ref.value == value)


def border_gaps(canvas: GraphCanvas, image: QImage, box: int) -> int:
    """Breaks in the middle stretch of a box's top border, pixel by pixel (a line is drawn darker than the
    background; antialiased, it may fall on two rows)."""
    d = canvas.drawable
    assert d is not None
    left = canvas.view.map_from_scene(QPointF(float(d.x0[box]) + 25, float(d.y0[box]))).toPoint()
    right = canvas.view.map_from_scene(QPointF(float(d.x1[box]) - 25, float(d.y0[box]))).toPoint()
    dark = [min(image.pixelColor(x, left.y() + k).lightness() for k in (-1, 0, 1)) < style.BACKGROUND.lightness() - 40
            for x in range(left.x(), right.x())]
    assert sum(dark) > len(dark) / 2   # the border is there
    return sum(1 for a, b in zip(dark, dark[1:], strict=False) if a and not b)


def test_an_opened_body_draws_its_outer_scope_reads_dashed(qtbot: QtBot) -> None:
    window, canvas = open_window(qtbot, VAD_IF)
    assert not canvas.view.options.outer   # the main graph's inputs are its own
    if_node = next(i for i, node in enumerate(window.doc.model.graph.node) if node.op_type == "If")
    with qtbot.waitSignal(canvas.scene_ready, timeout=TIMEOUT):
        canvas.enter_scope(f"{if_node}.then_branch")
    captured = {box_of_value(canvas, "/Unsqueeze_output_0"), box_of_value(canvas, "/Constant_2_output_0")}
    assert canvas.view.options.outer == captured
    own_output = box_of_value(canvas, "/Gemm_output_0")
    canvas.view.set_scale(1.0)
    canvas.view.fit()
    image = canvas.view.grab().toImage()
    for box in captured:
        assert border_gaps(canvas, image, box) >= 5   # dashed
    assert border_gaps(canvas, image, own_output) == 0   # solid
