"""Draws a :class:`Drawable` with a QPainter: the one drawing routine of the window,
``onnxviz render`` and image export.

Nothing here creates per-node objects that outlive a paint: visible boxes and
edge segments are culled with numpy and, when zoomed out, drawn as batched
``drawRects``/``drawLines`` calls per colour. Text is only drawn when it is
legible (level of detail by zoom factor).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFontMetricsF, QImage, QPainter, QPainterPath, QPen, QPolygonF

from onnxviz.model.layout.drawable import Drawable
from onnxviz.model.layout.labels import LABEL_LINE
from onnxviz.model.layout.scene import BoxKind
from onnxviz.model.layout.util import distinct
from onnxviz.ui.canvas import raster, style
from onnxviz.ui.canvas.batch import draw_lines, draw_rects

OUTER_CAPTION = "from the outer graph"
LABEL_WIDTH = 640.0   # room given to an edge label's text (a tensor name and its shape; the layout keeps it free)


@dataclass
class PaintOptions:
    """What to draw on top of the scene itself; box and edge numbers are rows of the scene."""

    show_names: bool = False
    selected_box: int = -1
    selected_edges: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    neighbour_boxes: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    badges: dict[int, str] = field(default_factory=dict)          # box -> "error" / "warning"
    overlay: np.ndarray | None = None                              # (n_boxes, 4) uint8 RGBA, alpha 0 = none
    flagged_box: int = -1
    enterable: frozenset[int] = frozenset()                       # boxes with a graph inside (If, Loop, calls)
    outer: frozenset[int] = frozenset()                            # inputs a subgraph reads from outside it
    body_toggles: dict[int, bool] = field(default_factory=dict)    # If/Loop/Scan box -> bodies shown inside it
    selected_frame: int = -1                                       # an expanded group selected by its title
    background: QColor | None = None                               # what the scene is drawn on; None: the canvas's


class ScenePainter:
    """Call :meth:`paint` for each frame."""

    def paint(self, p: QPainter, d: Drawable, view: QRectF, scale: float, opts: PaintOptions) -> None:
        """Draw the part of ``d`` inside ``view`` (scene coordinates); the painter maps scene to device."""
        x0, y0, x1, y1 = view.left(), view.top(), view.right(), view.bottom()
        boxes = d.visible_boxes(x0, y0, x1, y1)
        segs = d.visible_segments(x0, y0, x1, y1)
        detailed = scale >= style.TEXT_SCALE
        p.setRenderHint(QPainter.RenderHint.Antialiasing, detailed)
        p.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
        self._paint_frames(p, d, view, scale, style.BACKGROUND if opts.background is None else opts.background)
        if detailed:
            labels = scale >= style.LABEL_SCALE
            holes = _label_holes(d, segs, view) if labels and d.ghost_box else None
            self._paint_edges_detailed(p, d, segs, scale, opts, holes)
            if labels:  # under the boxes: a long label never covers a box
                _paint_edge_labels(p, d, segs)
            for b in boxes:
                _paint_box(p, d, int(b), scale, opts)
        else:
            if scale >= style.EDGE_MIN_SCALE:
                self._paint_edges_far(p, d, segs, opts)
            self._paint_boxes_far(p, d, boxes, opts, scale)
        self._paint_marks(p, d, boxes, scale, opts)

    # -- far away: batches -----------------------------------------------------------
    def _paint_edges_far(self, p: QPainter, d: Drawable, segs: np.ndarray, opts: PaintOptions) -> None:
        if len(segs) == 0 or len(segs) > style.MAX_EDGE_SEGMENTS_FAR:
            return
        self._draw_lines(p, d.seg[segs], QPen(style.EDGE, 0))
        if len(opts.selected_edges):
            chosen = segs[np.isin(d.seg_edge[segs], opts.selected_edges)]
            self._draw_lines(p, d.seg[chosen], QPen(style.SELECTION, 0))

    def _paint_boxes_far(self, p: QPainter, d: Drawable, boxes: np.ndarray, opts: PaintOptions,
                         scale: float) -> None:
        if len(boxes) == 0:
            return
        if raster.can_rasterize(p, len(boxes)):
            boxes = raster.rasterize_tiny(p, d, boxes, opts.overlay)
            if len(boxes) == 0:
                return
        p.setPen(Qt.PenStyle.NoPen)
        # boxes at least one device pixel big, so that nothing vanishes when zoomed out
        min_size = 1.2 / max(scale, 1e-9)
        if opts.overlay is not None:
            keys = _colour_keys(opts.overlay[boxes])
        else:
            keys = d.scene.box_category[boxes].astype(np.int64)
        for key in distinct(keys):
            chosen = boxes[keys == key]
            colour = _key_colour(int(key), opts.overlay is not None)
            p.setBrush(colour)
            self._draw_rects(p, d, chosen, min_size)
        if d.ghost_box:   # a diff's added nodes: its green, whatever the overlay
            p.setBrush(style.GHOST)
            self._draw_rects(p, d, boxes[d.scene.box_kind[boxes] == BoxKind.GHOST], min_size)

    def _draw_rects(self, p: QPainter, d: Drawable, rows: np.ndarray, min_size: float) -> None:
        draw_rects(p, np.column_stack((d.x0[rows], d.y0[rows], np.maximum(d.scene.box_w[rows], min_size),
                                       np.maximum(d.scene.box_h[rows], min_size))))

    def _draw_lines(self, p: QPainter, seg: np.ndarray, pen: QPen) -> None:
        if len(seg) == 0:
            return
        pen.setCosmetic(True)
        p.setPen(pen)
        draw_lines(p, seg)

    # -- close up ----------------------------------------------------------------------
    def _paint_edges_detailed(self, p: QPainter, d: Drawable, segs: np.ndarray, scale: float,
                              opts: PaintOptions, holes: QPainterPath | None = None) -> None:
        """Every visible edge; ``holes`` (the edge labels' rectangles, in a scene with ghosts) is where a
        ghost's edges are not drawn: laid out after the scene, they would run through its labels."""
        edges = distinct(d.seg_edge[segs])
        selected = np.isin(edges, opts.selected_edges)
        # a value captured from the enclosing graph: dashed, like its input box
        outer = np.isin(d.scene.edge_src[edges], np.fromiter(opts.outer, np.int64)) \
            if opts.outer else np.zeros(len(edges), bool)
        ghost = d.ghost_edges(edges)   # to or from a node only the other model has: dashed, its green
        for chosen, colour, width, dashed in ((edges[~selected & ~outer & ~ghost], style.EDGE, 1.2, False),
                                              (edges[~selected & outer & ~ghost], style.EDGE, 1.2, True),
                                              (edges[~selected & ghost], style.GHOST, 1.6, True),
                                              (edges[selected & ~ghost], style.SELECTION, 2.4, False),
                                              (edges[selected & ghost], style.SELECTION, 2.4, False)):
            if not len(chosen):
                continue
            path = QPainterPath()
            heads = QPainterPath()
            for e in chosen:
                pts = d.scene.edge_polyline(int(e))
                if len(pts) < 2:
                    continue
                _add_polyline(path, pts)
                if scale >= style.ARROW_SCALE:
                    _add_arrow(heads, pts, 4.0 + width)
            p.save()
            if holes is not None and ghost[np.searchsorted(edges, chosen[0])]:
                p.setClipPath(holes)
            p.setPen(QPen(colour, width, Qt.PenStyle.DashLine if dashed else Qt.PenStyle.SolidLine))
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawPath(path)
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(colour)
            p.drawPath(heads)
            p.restore()

    # -- group frames ------------------------------------------------------------------
    def _paint_frames(self, p: QPainter, d: Drawable, view: QRectF, scale: float, background: QColor) -> None:
        g = d.scene.group_rect
        if not len(g):
            return
        rows = np.flatnonzero((g[:, 0] + g[:, 2] >= view.left()) & (g[:, 0] <= view.right())
                              & (g[:, 1] + g[:, 3] >= view.top()) & (g[:, 1] <= view.bottom()))
        rows = rows[np.argsort(d.scene.group_depth[rows], kind="stable")]
        if scale < style.TEXT_SCALE:   # far away: square frames in batches, tiny ones left out
            rows = rows[(g[rows, 2] * scale >= 3) & (g[rows, 3] * scale >= 3)]
            _fill_nested(p, g[rows], d.scene.group_depth[rows], background)
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.setPen(QPen(style.FRAME_BORDER, 0))
            draw_rects(p, g[rows])
        else:
            p.setBrush(style.FRAME_FILL)
            p.setPen(QPen(style.FRAME_BORDER, 1.0))
            around = view.adjusted(-20, -20, 20, 20)   # huge frames: only the part on screen is rasterized
            for r in rows:
                x, y, w, h = (float(v) for v in g[r])
                p.drawRoundedRect(QRectF(x, y, w, h).intersected(around), 8.0, 8.0)
        if scale < style.FRAME_LABEL_SCALE:
            return
        p.setFont(style.font(style.FRAME_PT, bold=True))
        for r in rows:
            x, y, w, _ = (float(v) for v in g[r])
            label = d.scene.group_path[r].rsplit("/", 1)[-1] or d.scene.group_path[r]
            p.setPen(style.FRAME_TEXT)
            p.drawText(QRectF(x + 10, y + 2, max(w - 34, 1), style.FRAME_PT + 8),
                       Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                       _elide(p, label, max(w - 34, 1)))
            _draw_toggle(p, toggle_rect(d, frame=int(r)), expanded=True)

    # -- selection, badges, overlay markers ---------------------------------------------
    def _paint_marks(self, p: QPainter, d: Drawable, boxes: np.ndarray, scale: float, opts: PaintOptions) -> None:
        px = 1.0 / max(scale, 1e-9)   # one device pixel in scene units
        p.setBrush(Qt.BrushStyle.NoBrush)
        for b in opts.neighbour_boxes:
            _outline(p, d, int(b), QPen(style.NEIGHBOUR, 2.0 * px), 2.0 * px)
        if opts.selected_box >= 0:
            _outline(p, d, opts.selected_box, QPen(style.SELECTION, max(2.5, 3.0 * px)), 3.0 * px)
        if 0 <= opts.selected_frame < len(d.scene.group_rect):
            x, y, w, h = (float(v) for v in d.scene.group_rect[opts.selected_frame])
            p.setPen(QPen(style.SELECTION, max(2.5, 3.0 * px)))
            p.drawRoundedRect(QRectF(x, y, w, h), 8.0, 8.0)
        if opts.flagged_box >= 0:
            _outline(p, d, opts.flagged_box, QPen(style.FLAG, max(3.0, 4.0 * px)), 6.0 * px)
        visible = set(boxes.tolist()) if opts.badges else set()
        radius = max(5.0, 4.0 * px)
        for b, severity in opts.badges.items():
            if b in visible:
                p.setPen(QPen(style.BACKGROUND, max(1.2, px)))
                p.setBrush(style.SEVERITY_COLOURS.get(severity, style.SEVERITY_COLOURS["warning"]))
                p.drawEllipse(QPointF(float(d.x1[b]), float(d.y0[b])), radius, radius)


# -- one box close up ------------------------------------------------------------------------
def _fill_nested(p: QPainter, rects: np.ndarray, depth: np.ndarray, background: QColor) -> None:
    """Fill frames nested in one another on ``background`` (each inside the frames of lower depth around it, none
    over a sibling) as their translucent fill, once per frame over a pixel, leaves them: each depth at once in the
    colour that many layers compose to, without blending (at 61k nodes 150 MP blended: 0.5 s)."""
    p.setPen(Qt.PenStyle.NoPen)
    p.setCompositionMode(QPainter.CompositionMode.CompositionMode_Source)  # a translucent background's too
    for k, colour in enumerate(_layered(background, int(depth.max()) + 1 if len(depth) else 0)):
        p.setBrush(colour)
        draw_rects(p, rects[depth == k])
    p.setCompositionMode(QPainter.CompositionMode.CompositionMode_SourceOver)


_layers: dict[tuple[int, int, int], list[QColor]] = {}


def _layered(background: QColor, n: int) -> list[QColor]:
    """``background`` under 1 to ``n`` layers of the frames' fill, as Qt's raster engine blends them."""
    key = (background.rgba(), style.FRAME_FILL.rgba(), n)
    if key not in _layers:
        image = QImage(8, 1, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(background)
        p = QPainter(image)
        colours = []
        for _ in range(n):
            p.fillRect(QRectF(0, 0, 8, 1), style.FRAME_FILL)
            colours.append(image.pixelColor(0, 0))
        p.end()
        _layers[key] = colours
    return _layers[key]


def _paint_box(p: QPainter, d: Drawable, b: int, scale: float, opts: PaintOptions) -> None:
    s = d.scene
    rect = QRectF(float(d.x0[b]), float(d.y0[b]), float(s.box_w[b]), float(s.box_h[b]))
    kind = int(s.box_kind[b])
    if kind in (BoxKind.INPUT, BoxKind.OUTPUT):
        _paint_terminal(p, s.box_title[b], rect, outer=b in opts.outer)
        return
    if kind == BoxKind.GROUP:
        _paint_group_box(p, d, b, rect, scale, opts)
        return
    if kind == BoxKind.GHOST:
        _paint_ghost_box(p, d, b, rect, scale, opts)
        return
    _paint_op_box(p, d, b, rect, scale, opts)


def _paint_ghost_box(p: QPainter, d: Drawable, b: int, rect: QRectF, scale: float, opts: PaintOptions) -> None:
    """A node only the other model of a diff has: a dashed green outline, its op type in green, then
    what it is ("added in B")."""
    s = d.scene
    p.setPen(QPen(style.GHOST, 1.8, Qt.PenStyle.DashLine))
    p.setBrush(style.BACKGROUND)
    p.drawRoundedRect(rect, 4, 4)
    title = (s.box_name[b] or s.box_title[b]) if opts.show_names else s.box_title[b]
    p.setPen(style.GHOST)
    p.setFont(style.font(style.TITLE_PT, bold=True))
    p.drawText(QRectF(rect.x() + 4, rect.y(), rect.width() - 8, style.HEADER_H), Qt.AlignmentFlag.AlignCenter,
               _elide(p, title, rect.width() - 8))
    if scale >= style.BODY_SCALE and s.box_lines[b]:
        p.setFont(style.font(style.BODY_PT, italic=True))
        p.drawText(QRectF(rect.x() + 4, rect.y() + style.HEADER_H, rect.width() - 8, rect.height() - style.HEADER_H),
                   Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop, _elide(p, s.box_lines[b][0], rect.width() - 8))


def _paint_terminal(p: QPainter, title: str, rect: QRectF, outer: bool) -> None:
    """A graph input or output; one a subgraph reads from the enclosing graph is dashed and says so."""
    p.setPen(QPen(style.TERMINAL_BORDER, 1.2, Qt.PenStyle.DashLine if outer else Qt.PenStyle.SolidLine))
    p.setBrush(style.BACKGROUND if outer else style.TERMINAL_FILL)
    p.drawRoundedRect(rect, rect.height() / 2, rect.height() / 2)
    p.setPen(style.TEXT)
    p.setFont(style.font(style.TITLE_PT, bold=True))
    if not outer:
        p.drawText(rect, Qt.AlignmentFlag.AlignCenter, _elide(p, title, rect.width() - 12))
        return
    mid = rect.center().y()
    top = QRectF(rect.x(), rect.y(), rect.width(), mid - rect.y() + 1)
    bottom = QRectF(rect.x(), mid + 2, rect.width(), rect.bottom() - mid - 2)
    p.drawText(top, Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignBottom, _elide(p, title, rect.width() - 16))
    p.setFont(style.font(style.BODY_PT, italic=True))
    p.setPen(style.TEXT_DIM)
    p.drawText(bottom, Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop, OUTER_CAPTION)


def _overlay_colour(opts: PaintOptions, b: int) -> QColor | None:
    """Box ``b``'s overlay colour; grey when the overlay has no value for it (e.g. all NaN), never a
    category colour that would read as a value; None without an overlay."""
    if opts.overlay is None:
        return None
    return QColor(*[int(v) for v in opts.overlay[b]]) if opts.overlay[b, 3] > 0 else style.NO_OVERLAY_VALUE


def _header_path(rect: QRectF, header_h: float, radius: float) -> QPainterPath:
    """The top band of a box, rounded above and square below when the box goes on under it."""
    head = QPainterPath()
    head.setFillRule(Qt.FillRule.WindingFill)
    head.addRoundedRect(QRectF(rect.x(), rect.y(), rect.width(), header_h), radius, radius)
    if header_h < rect.height():
        head.addRect(QRectF(rect.x(), rect.y() + header_h / 2, rect.width(), header_h / 2))
    return head


def _paint_op_box(p: QPainter, d: Drawable, b: int, rect: QRectF, scale: float, opts: PaintOptions) -> None:
    s = d.scene
    header = _overlay_colour(opts, b) or style.category_colour(int(s.box_category[b]))
    title = (s.box_name[b] or s.box_title[b]) if opts.show_names else s.box_title[b]
    lines = s.box_lines[b] if scale >= style.BODY_SCALE else []
    header_h = style.HEADER_H
    if not s.box_lines[b] or header_h > rect.height() - 6:
        header_h = rect.height()   # nothing below the header: the whole box is the header
    if header_h < rect.height():
        p.setPen(QPen(style.BOX_BORDER, 1.0))
        p.setBrush(style.BOX_BODY)
        p.drawRoundedRect(rect, 4, 4)
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(header)
    p.drawPath(_header_path(rect, header_h, 4))
    text_colour = style.text_on(header)
    p.setPen(text_colour)
    p.setFont(style.font(style.TITLE_PT, bold=True))
    title_rect = QRectF(rect.x() + 4, rect.y(), rect.width() - 8, min(header_h, style.HEADER_H))
    right = rect.right()
    if b in opts.body_toggles:   # +: show the bodies inside the box, -: put them away
        _draw_toggle(p, toggle_rect(d, box=b), expanded=opts.body_toggles[b])
        right -= 18
        title_rect.setRight(title_rect.right() - 18)
    if b in opts.enterable:
        title_rect.setRight(title_rect.right() - 12)
        _draw_nested_mark(p, QRectF(right - 16, rect.y() + 5, 11, 10), text_colour)
    p.setPen(text_colour)   # the toggle drew in its own colour
    p.drawText(title_rect, Qt.AlignmentFlag.AlignCenter, _elide(p, title, title_rect.width()))
    if lines:
        _paint_lines(p, lines, QRectF(rect.x() + 7, rect.y() + header_h + 2, rect.width() - 12,
                                      rect.height() - header_h - 2))


def _paint_lines(p: QPainter, lines: list[str], area: QRectF) -> None:
    p.setFont(style.font(style.BODY_PT))
    p.setPen(style.TEXT_DIM)
    step = style.LINE_H
    for k, line in enumerate(lines):
        y = area.y() + k * step
        if y + step > area.bottom() + 2:
            break
        p.drawText(QRectF(area.x(), y, area.width(), step), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                   _elide(p, line, area.width()))


def _paint_group_box(p: QPainter, d: Drawable, b: int, rect: QRectF, scale: float, opts: PaintOptions) -> None:
    """A collapsed group; under an overlay its title band takes the largest value it hides."""
    s = d.scene
    p.setPen(QPen(style.GROUP_BORDER, 1.2, Qt.PenStyle.DashLine))
    p.setBrush(style.GROUP_FILL)
    p.drawRoundedRect(rect, 6, 6)
    band = _overlay_colour(opts, b)
    title_colour = style.TEXT
    if band is not None:
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(band)
        p.drawPath(_header_path(rect.adjusted(1, 1, -1, 0), min(style.HEADER_H + 2, rect.height() - 1), 5))
        title_colour = style.text_on(band)
    # a second, offset outline suggests a stack of nodes
    p.setPen(QPen(style.GROUP_BORDER, 1.0))
    p.setBrush(Qt.BrushStyle.NoBrush)
    p.drawLine(QPointF(rect.left() + 4, rect.bottom() + 3), QPointF(rect.right() - 4, rect.bottom() + 3))
    p.setPen(title_colour)
    p.setFont(style.font(style.TITLE_PT, bold=True))
    title = QRectF(rect.x() + 8, rect.y(), rect.width() - 32, style.HEADER_H + 2)
    p.drawText(title, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
               _elide(p, s.box_title[b], title.width()))
    _draw_toggle(p, toggle_rect(d, box=b), expanded=False)
    if scale >= style.BODY_SCALE and s.box_lines[b]:
        _paint_lines(p, s.box_lines[b], QRectF(rect.x() + 8, title.bottom() + 1, rect.width() - 14,
                                               rect.bottom() - title.bottom() - 2))


def _draw_nested_mark(p: QPainter, r: QRectF, colour: QColor) -> None:
    """Two stacked frames: this node holds a graph that double-click opens."""
    p.save()
    p.setPen(QPen(colour, 1.2))
    p.setBrush(Qt.BrushStyle.NoBrush)
    p.drawRect(QRectF(r.x() + 3, r.y(), r.width() - 3, r.height() - 3))
    p.drawRect(QRectF(r.x(), r.y() + 3, r.width() - 3, r.height() - 3))
    p.restore()
    p.setPen(colour)


def _draw_toggle(p: QPainter, r: QRectF, expanded: bool) -> None:
    """The +/- button of a group: '+' expands a collapsed group, '-' collapses a frame."""
    p.setPen(QPen(style.GROUP_BORDER, 1.0))
    p.setBrush(style.BOX_BODY)
    p.drawRoundedRect(r, 3, 3)
    p.setPen(QPen(style.FRAME_TEXT, 1.6))
    c = r.center()
    p.drawLine(QPointF(r.left() + 3.5, c.y()), QPointF(r.right() - 3.5, c.y()))
    if not expanded:
        p.drawLine(QPointF(c.x(), r.top() + 3.5), QPointF(c.x(), r.bottom() - 3.5))


def frame_title_rect(d: Drawable, frame: int) -> QRectF:
    """The band at the top of an expanded group frame where its name is drawn (a click there selects it)."""
    x, y, w, _ = (float(v) for v in d.scene.group_rect[frame])
    return QRectF(x, y, w, style.FRAME_PT + 12)


def toggle_rect(d: Drawable, box: int = -1, frame: int = -1) -> QRectF:
    """Where the +/- button of a collapsed group box or an expanded group frame is drawn."""
    if box >= 0:
        return QRectF(float(d.x1[box]) - 18, float(d.y0[box]) + 4, 13, 13)
    x, y, w, _ = (float(v) for v in d.scene.group_rect[frame])
    return QRectF(x + w - 20, y + 5, 13, 13)


def _label_rects(d: Drawable, segs: np.ndarray) -> list[QRectF]:
    """The rectangles the visible edge labels' texts take."""
    s, spots = d.scene, d.labels
    rows = d.label_row[distinct(d.seg_edge[segs])]
    metrics = {False: QFontMetricsF(style.font(style.LABEL_PT)), True: QFontMetricsF(style.font(style.LABEL_PT, italic=True))}
    out = []
    for row in rows[rows >= 0]:
        e = int(spots.edge[row])
        width = metrics[bool(s.edge_inferred[e])].horizontalAdvance(s.edge_label[e]) + 4
        x = float(spots.x[row]) - (width - 2 if spots.left[row] else 2)
        out.append(QRectF(x, float(spots.y[row]), width, LABEL_LINE))
    return out


def _label_holes(d: Drawable, segs: np.ndarray, view: QRectF) -> QPainterPath | None:
    """``view`` without the visible edge labels (a clip path), or None when no label shows."""
    rects = _label_rects(d, segs)
    if not rects:
        return None
    path = QPainterPath()
    path.setFillRule(Qt.FillRule.OddEvenFill)   # the labels never overlap: each one a hole
    path.addRect(view.adjusted(-100, -100, 100, 100))
    for r in rects:
        path.addRect(r)
    return path


def _paint_edge_labels(p: QPainter, d: Drawable, segs: np.ndarray) -> None:
    """The labels at the spots the layout gave them (one per value leaving a box, never overlapping)."""
    s, spots = d.scene, d.labels
    rows = d.label_row[distinct(d.seg_edge[segs])]
    declared, inferred = style.font(style.LABEL_PT), style.font(style.LABEL_PT, italic=True)
    height = LABEL_LINE
    for row in rows[rows >= 0]:
        e = int(spots.edge[row])
        is_inferred = bool(s.edge_inferred[e])
        p.setFont(inferred if is_inferred else declared)
        p.setPen(style.EDGE_LABEL_INFERRED if is_inferred else style.EDGE_LABEL)
        x, y = float(spots.x[row]), float(spots.y[row])
        if spots.left[row]:
            p.drawText(QRectF(x - LABEL_WIDTH, y, LABEL_WIDTH, height),
                       Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop, s.edge_label[e])
        else:
            p.drawText(QRectF(x, y, LABEL_WIDTH, height),
                       Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop, s.edge_label[e])


def _outline(p: QPainter, d: Drawable, b: int, pen: QPen, margin: float) -> None:
    if not 0 <= b < d.scene.n_boxes:
        return
    p.setPen(pen)
    p.setBrush(Qt.BrushStyle.NoBrush)
    rect = QRectF(float(d.x0[b]), float(d.y0[b]), float(d.scene.box_w[b]), float(d.scene.box_h[b]))
    p.drawRoundedRect(rect.adjusted(-margin, -margin, margin, margin), 5, 5)


def _add_polyline(path: QPainterPath, pts: np.ndarray) -> None:
    """A polyline with its corners rounded off by quadratic curves through the bend points."""
    path.moveTo(float(pts[0][0]), float(pts[0][1]))
    if len(pts) == 2:
        path.lineTo(float(pts[1][0]), float(pts[1][1]))
        return
    for k in range(1, len(pts) - 1):
        mid = (pts[k] + pts[k + 1]) / 2 if k < len(pts) - 2 else pts[k + 1]
        path.quadTo(float(pts[k][0]), float(pts[k][1]), float(mid[0]), float(mid[1]))


def _add_arrow(path: QPainterPath, pts: np.ndarray, size: float) -> None:
    tip = pts[-1].astype(np.float64)
    direction = tip - pts[-2]
    length = float(np.hypot(*direction))
    if length < 1e-6:
        return
    ux, uy = direction / length
    bx, by = tip[0] - ux * size * 1.6, tip[1] - uy * size * 1.6
    path.addPolygon(QPolygonF([QPointF(tip[0], tip[1]), QPointF(bx - uy * size * 0.7, by + ux * size * 0.7),
                               QPointF(bx + uy * size * 0.7, by - ux * size * 0.7)]))
    path.closeSubpath()


def _elide(p: QPainter, text: str, width: float) -> str:
    return QFontMetricsF(p.font()).elidedText(text, Qt.TextElideMode.ElideRight, max(width, 1.0))


# -- overlay colours, quantized so far-away boxes can be batched per colour --------------------
_NO_OVERLAY = -1


def _colour_keys(rgba: np.ndarray) -> np.ndarray:
    q = (rgba[:, :3].astype(np.int64) >> 3)
    keys = (q[:, 0] << 10) | (q[:, 1] << 5) | q[:, 2]
    keys[rgba[:, 3] == 0] = _NO_OVERLAY
    return keys


def _key_colour(key: int, overlay: bool) -> QBrush:
    if not overlay:
        return QBrush(style.category_colour(key, far=True))
    if key == _NO_OVERLAY:
        return QBrush(style.NO_OVERLAY_VALUE)
    return QBrush(QColor(((key >> 10) & 31) << 3 | 4, ((key >> 5) & 31) << 3 | 4, (key & 31) << 3 | 4))
