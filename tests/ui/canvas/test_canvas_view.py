"""The graph view on a hand-made scene: painting, level of detail, zoom, pan, hit-testing, export."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import hostile
import numpy as np
import onnx
import pytest
from conftest import REPO
from PySide6.QtCore import QPoint, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QImage, QPainter
from pytestqt.qtbot import QtBot

from onnxviz.model.errors import OnnxvizError
from onnxviz.model.layout.drawable import Drawable
from onnxviz.model.layout.scene import BoxKind, BoxRef, Category, Scene
from onnxviz.ui.canvas import style
from onnxviz.ui.canvas.export import export_image
from onnxviz.ui.canvas.painting import PaintOptions, ScenePainter
from onnxviz.ui.canvas.view import GraphView


def chain_scene(n: int = 4, with_group: bool = True) -> Scene:
    """input -> Conv -> Relu -> ... -> output, plus a collapsed group box beside the chain."""
    kinds = [BoxKind.INPUT] + [BoxKind.OP] * n + [BoxKind.OUTPUT]
    refs = [BoxRef(BoxKind.INPUT, value="x")] + [BoxRef(BoxKind.OP, node=i) for i in range(n)]
    refs.append(BoxRef(BoxKind.OUTPUT, value="y"))
    cats = [Category.TERMINAL] + [Category.CONV if i % 2 == 0 else Category.ACTIVATION for i in range(n)]
    cats.append(Category.TERMINAL)
    titles = ["x"] + ["Conv" if i % 2 == 0 else "Relu" for i in range(n)] + ["y"]
    if with_group:
        kinds.append(BoxKind.GROUP)
        refs.append(BoxRef(BoxKind.GROUP, group="encoder"))
        cats.append(Category.GROUP)
        titles.append("encoder")
    count = len(kinds)
    ys = np.arange(count, dtype=np.float32) * 80
    xs = np.zeros(count, np.float32)
    if with_group:
        xs[-1], ys[-1] = 200, 80
    points, offsets = [], [0]
    for i in range(n + 1):
        points += [(60.0, ys[i] + 40), (60.0, ys[i + 1])]
        offsets.append(len(points))
    return Scene(
        box_x=xs, box_y=ys, box_w=np.full(count, 120, np.float32), box_h=np.full(count, 40, np.float32),
        box_kind=np.array(kinds, np.int8), box_category=np.array(cats, np.int8), box_title=titles,
        box_name=[""] + [f"node{i}" for i in range(n)] + [""] * (count - n - 1),
        box_lines=[[] for _ in range(count)], box_ref=refs,
        edge_src=np.arange(n + 1, dtype=np.int32), edge_dst=np.arange(1, n + 2, dtype=np.int32),
        edge_value=["x"] + [f"v{i}" for i in range(n)], edge_label=["1x3x8x8"] * (n + 1),
        edge_inferred=np.array([False] + [True] * n), edge_offsets=np.array(offsets, np.int64),
        edge_points=np.array(points, np.float32),
    )


def render(d: Drawable, scale: float, size: int = 400, options: PaintOptions | None = None) -> QImage:
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(style.BACKGROUND)
    p = QPainter(image)
    p.scale(scale, scale)
    ScenePainter().paint(p, d, QRectF(0, 0, size / scale, size / scale), scale, options or PaintOptions())
    p.end()
    return image


def colours(image: QImage) -> set[int]:
    ptr = image.constBits()
    arr = np.frombuffer(ptr, np.uint32, image.width() * image.height())
    return set(np.unique(arr).tolist())


def test_drawable_segments_and_hit_testing(qapp: object) -> None:
    d = Drawable(chain_scene(3))
    assert d.seg.shape == (4, 4)          # one segment per two-point edge
    assert d.box_at(60, 100) == 1         # inside the first op box
    assert d.box_at(500, 500) == -1
    assert d.edge_at(60, 60, 3.0) == 0    # between the input and the first op
    assert d.node_box == {0: 1, 1: 2, 2: 3}
    assert d.group_box == {"encoder": 5}
    producers, consumers = d.neighbours(2)
    assert producers.tolist() == [1] and consumers.tolist() == [3]


def test_level_of_detail_far_boxes_are_flat_close_ones_have_text(qapp: object) -> None:
    d = Drawable(chain_scene(3))
    far = render(d, 0.2)
    # far away: only the flat category colours, the edge colour and the background (no text antialiasing)
    assert len(colours(far)) <= 8
    assert QColor(far.pixel(int(60 * 0.2), int(100 * 0.2))) == style.category_colour(Category.CONV, far=True)
    close = render(d, 1.0)
    assert len(colours(close)) > 30         # antialiased text and rounded corners


def test_titles_are_drawn_as_long_as_they_are_legible(qapp: object) -> None:
    """A 49-node graph fitted at 0.4 showed flat boxes without titles; from TEXT_SCALE on, titles are drawn."""
    d = Drawable(chain_scene(3))

    def title_colours(scale: float) -> int:   # inside the first Conv box (scene 0,80 120x40)
        crop = render(d, scale).copy(int(4 * scale) + 1, int(84 * scale) + 1, int(112 * scale) - 2,
                                     int(32 * scale) - 2)
        return len(colours(crop))

    assert style.TEXT_SCALE <= 0.4 and title_colours(0.4) > 4      # antialiased letters on the header
    assert title_colours(0.3) == 1                                  # far away: a flat box


def test_wheel_zooms_around_the_cursor(qtbot: QtBot) -> None:
    view = GraphView()
    qtbot.addWidget(view)
    view.resize(600, 400)
    view.show()
    view.set_drawable(Drawable(chain_scene()))
    anchor = QPointF(150, 120)
    before = view.map_to_scene(anchor)
    scale = view.scale
    qtbot.wait(1)
    from PySide6.QtGui import QWheelEvent

    event = QWheelEvent(anchor, view.mapToGlobal(anchor), QPoint(0, 0), QPoint(0, 240),
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    view.wheelEvent(event)
    assert view.scale > scale * 1.3
    after = view.map_to_scene(anchor)
    assert abs(after.x() - before.x()) < 1e-3 and abs(after.y() - before.y()) < 1e-3


def test_fit_shows_everything_and_drag_pans(qtbot: QtBot) -> None:
    view = GraphView()
    qtbot.addWidget(view)
    view.resize(300, 300)
    view.show()
    d = Drawable(chain_scene(8))
    view.set_drawable(d)
    assert view.scale == pytest.approx(1.0)      # too tall to read when fitted: opens at 1:1 on its top
    assert view.visible_scene_rect().top() < d.bounds[1]
    view.fit()
    assert view.visible_scene_rect().contains(QRectF(*d.bounds))
    center = QPointF(view.center)
    qtbot.mousePress(view, Qt.MouseButton.LeftButton, pos=QPoint(150, 150))
    qtbot.mouseMove(view, QPoint(170, 190))
    qtbot.mouseRelease(view, Qt.MouseButton.LeftButton, pos=QPoint(170, 190))
    assert view.center.y() < center.y() and view.center.x() < center.x()


def test_click_box_edge_and_empty_space(qtbot: QtBot) -> None:
    view = GraphView()
    qtbot.addWidget(view)
    view.resize(400, 700)
    view.show()
    view.set_drawable(Drawable(chain_scene(3)))
    view.set_scale(1.0)
    view.center_on(QPointF(100, 200))
    box_pos = view.map_from_scene(QPointF(60, 100)).toPoint()
    with qtbot.waitSignal(view.box_clicked) as hit:
        qtbot.mouseClick(view, Qt.MouseButton.LeftButton, pos=box_pos)
    assert hit.args == [1]
    edge_pos = view.map_from_scene(QPointF(60, 60)).toPoint()
    with qtbot.waitSignal(view.edge_clicked) as hit:
        qtbot.mouseClick(view, Qt.MouseButton.LeftButton, pos=edge_pos)
    assert hit.args == [0]
    with qtbot.waitSignal(view.empty_clicked):
        qtbot.mouseClick(view, Qt.MouseButton.LeftButton, pos=view.map_from_scene(QPointF(350, 300)).toPoint())
    plus = view.map_from_scene(QPointF(200 + 120 - 14, 80 + 12)).toPoint()
    with qtbot.waitSignal(view.box_toggled) as hit:
        qtbot.mouseClick(view, Qt.MouseButton.LeftButton, pos=plus)
    assert hit.args == [5]


def test_export_png_and_svg(tmp_path: Path, qtbot: QtBot) -> None:
    d = Drawable(chain_scene())
    png = export_image(d, tmp_path / "g.png")
    image = QImage(str(png))
    assert image.width() > 120 and image.height() > 400
    assert len(colours(image.convertToFormat(QImage.Format.Format_ARGB32))) > 20
    svg = export_image(d, tmp_path / "g.svg").read_text()
    assert "<svg" in svg and "Conv" in svg and "encoder" in svg
    with pytest.raises(OnnxvizError, match="cannot write"):
        export_image(d, tmp_path / "g.xyz")
    with pytest.raises(OnnxvizError, match="does not exist"):
        export_image(d, tmp_path / "missing" / "g.png")


def test_many_tiny_boxes_are_written_as_pixels(qapp: object) -> None:
    from onnxviz.ui.canvas import raster

    n = 6000
    s = chain_scene(n, with_group=False)
    d = Drawable(s)
    scale = 0.002     # every box well under a pixel
    image = QImage(300, 1000, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(style.BACKGROUND)
    p = QPainter(image)
    p.scale(scale, scale)
    assert raster.can_rasterize(p, n)
    ScenePainter().paint(p, d, QRectF(0, 0, 300 / scale, 1000 / scale), scale, PaintOptions())
    p.end()
    conv = style.category_colour(Category.CONV, far=True).rgb()
    column = [image.pixel(0, y) for y in range(0, int(n * 80 * scale))]
    assert column.count(conv) > len(column) // 4


def test_tall_graphs_export_in_columns(qapp: object, tmp_path: Path) -> None:
    from onnxviz.ui.canvas.export import plan_page

    d = Drawable(chain_scene(600, with_group=False))   # 48000 units tall, 120 wide
    page = plan_page(d)
    assert len(page.slices) > 1 and page.scale == 1.0
    for top, _ in page.slices[1:]:   # cuts fall between boxes
        assert not ((d.y0 < top) & (d.y1 > top)).any()
    out = export_image(d, tmp_path / "tall.png")
    image = QImage(str(out))
    assert len(page.slices) * 120 < image.width() and image.height() < 48000 / 2


def test_overlay_box_without_a_value_is_grey_near_and_far(qapp: object) -> None:
    """With an overlay on, a box it has no value for (e.g. an all-NaN output) is grey at every zoom,
    not its category colour, which would read as a value of the colour map."""
    d = Drawable(chain_scene(3, with_group=False))
    overlay = np.zeros((d.scene.n_boxes, 4), np.uint8)
    overlay[1] = (68, 4, 84, 255)  # survives the far view's colour quantization  # node0 has a value; node1 (box 2) has none
    for scale in (0.2, 1.0):
        image = render(d, scale, options=PaintOptions(overlay=overlay))
        assert QColor(image.pixel(int(30 * scale), int(90 * scale))) == QColor(68, 4, 84)
        assert QColor(image.pixel(int(30 * scale), int(170 * scale))) == style.NO_OVERLAY_VALUE, scale


def test_overlay_colours_a_collapsed_group_near_and_far(qapp: object) -> None:
    """A collapsed group takes the largest value it hides: its box shows the overlay colour at every
    zoom (close up, in its title band), so a big model's overview of groups can be read by value."""
    d = Drawable(chain_scene(3, with_group=True))
    group = d.scene.n_boxes - 1
    overlay = np.zeros((d.scene.n_boxes, 4), np.uint8)
    overlay[group] = (68, 4, 84, 255)  # survives the far view's colour quantization
    for scale in (0.2, 1.0):
        image = render(d, scale, options=PaintOptions(overlay=overlay))
        assert QColor(image.pixel(int(204 * scale), int(90 * scale))) == QColor(68, 4, 84), scale


_FAILING_PAINT = """import sys
from onnxviz.model.document import Document
from onnxviz.model.layout.engine import GraphLayout
from onnxviz.ui.app import ensure_app
from onnxviz.model.layout.drawable import Drawable
from onnxviz.ui.canvas.painting import ScenePainter
from onnxviz.ui.canvas.view import GraphView
app = ensure_app()
view = GraphView()
view.resize(200, 100)
view.set_drawable(Drawable(GraphLayout(Document.open(sys.argv[1]).index).build()))
def fail(*_args):
    raise ValueError("drawing failed")
paint = ScenePainter.paint
ScenePainter.paint = fail
view.show()
try:
    view.repaint()
    app.processEvents()
except ValueError:
    pass
ScenePainter.paint = paint
view.repaint()
app.processEvents()
print("painted again")
"""


def test_a_paint_that_fails_ends_its_painter(tmp_path: Path) -> None:
    """An error while drawing left the window's painter active: Qt ended the paint with it active and
    the process died of SIGSEGV (3 runs in 3), as bench_canvas's child once did. In a process of its own."""
    onnx.save(hostile.valid_model(), tmp_path / "m.onnx")
    root = REPO
    done = subprocess.run([sys.executable, "-X", "faulthandler", "-c", _FAILING_PAINT, str(tmp_path / "m.onnx")],
                          env={**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(root)},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "painted again" in done.stdout, done.stderr[-3000:]
    assert "drawing failed" in done.stderr  # reported, not swallowed
