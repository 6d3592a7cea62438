"""The widget that shows a Drawable: zoom, pan, hit-testing and painting from arrays."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from PySide6.QtCore import QEvent, QPoint, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import (
    QHelpEvent,
    QKeyEvent,
    QMouseEvent,
    QNativeGestureEvent,
    QPainter,
    QPaintEvent,
    QResizeEvent,
    QWheelEvent,
)
from PySide6.QtWidgets import QToolTip, QWidget

from onnxviz.model.layout.drawable import Drawable
from onnxviz.ui.canvas import style
from onnxviz.ui.canvas.painting import PaintOptions, ScenePainter, frame_title_rect, toggle_rect

MIN_SCALE, MAX_SCALE = 1e-4, 8.0
FIT_MARGIN = 24.0
FIT_READABLE = 0.7  # the graph opens whole when fitting it keeps box titles at least 7.7 px (of 11), body rows 7
CLICK_SLOP = 4  # pixels the mouse may move for a press/release to count as a click


def fit_scale(width: float, height: float, room_width: float, room_height: float) -> float:
    """The zoom that shows a ``width`` x ``height`` scene rectangle whole in a room of that many pixels."""
    sx = max(room_width - 2 * FIT_MARGIN, 10) / max(width, 1.0)
    sy = max(room_height - 2 * FIT_MARGIN, 10) / max(height, 1.0)
    return min(sx, sy)


def opening_start(lo: np.ndarray, hi: np.ndarray, in_lo: np.ndarray, in_hi: np.ndarray,
                  whole: tuple[float, float], room: float) -> float:
    """Where a view ``room`` pixels across (at 1:1) starts so that no box spanning ``lo``..``hi`` across it
    (those in sight at the graph's start) is cut off at either side: the whole graph's span centred when it
    fits, else those boxes centred when they fit, else the window whose sides run between boxes holding the
    most inputs (``in_lo``..``in_hi``), then the most boxes, then nearest the inputs (the graph's column),
    centred on what it holds."""
    if whole[1] - whole[0] + 2 * FIT_MARGIN <= room:
        return (whole[0] + whole[1] - room) / 2
    if not len(lo):
        return whole[0] - FIT_MARGIN
    first, last = float(lo.min()), float(hi.max())
    if last - first + 2 * FIT_MARGIN <= room:
        return (first + last - room) / 2
    lo_s, hi_s, in_lo_s, in_hi_s = np.sort(lo), np.sort(hi), np.sort(in_lo), np.sort(in_hi)

    def through(edge: np.ndarray) -> np.ndarray:   # boxes a line runs through: begun before it, not ended
        return np.searchsorted(lo_s, edge, "left") - np.searchsorted(hi_s, edge, "right")

    def cuts(side: np.ndarray, inward: float) -> np.ndarray:   # boxes a side cuts, or that sit in its margin
        return through(side) + through(side + inward * FIT_MARGIN / 2)

    def held(v: np.ndarray, los: np.ndarray, his: np.ndarray) -> np.ndarray:   # wholly inside, when clean
        return np.searchsorted(his, v + room - FIT_MARGIN, "right") - np.searchsorted(los, v + FIT_MARGIN, "left")

    starts = np.concatenate([lo - FIT_MARGIN, hi + FIT_MARGIN - room])
    left = cuts(starts, 1)
    bad = left + cuts(starts + room, -1)
    want = (float(in_lo.min() + in_hi.max()) / 2) if len(in_lo) else first + room / 2
    order = np.lexsort((np.abs(starts + room / 2 - want), -held(starts, lo_s, hi_s),
                        -held(starts, in_lo_s, in_hi_s), left, bad))
    best = float(starts[order[0]])
    inside = (lo >= best) & (hi <= best + room)
    if not bad[order[0]] and inside.any():   # centred on what it holds, if that cuts nothing either
        centred = np.array([float(lo[inside].min() + hi[inside].max() - room) / 2])
        if not (cuts(centred, 1) + cuts(centred + room, -1)).any():
            return float(centred[0])
    return best


class GraphView(QWidget):
    """Draws a :class:`Drawable` under a scale + centre transform; emits what the user clicks."""

    box_clicked = Signal(int)
    edge_clicked = Signal(int)
    empty_clicked = Signal()
    box_double_clicked = Signal(int)
    frame_toggled = Signal(int)        # row of an expanded group frame whose '-' was clicked
    frame_clicked = Signal(int)        # row of an expanded group frame whose title band was clicked
    box_toggled = Signal(int)          # collapsed GROUP box whose '+' was clicked
    step_requested = Signal(str)       # "up" / "down" / "left" / "right"
    activate_requested = Signal()      # Enter: open the selected box (subgraph, group)
    back_requested = Signal()          # Backspace: leave the subgraph
    view_changed = Signal()
    painted = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.last_click: QPointF | None = None  # scene position of the last click (which row of a box it hit)
        self.drawable: Drawable | None = None
        self.options = PaintOptions()
        self.message = ""   # shown in the middle when there is nothing (or nothing good) to draw
        self.scale = 1.0
        self.center = QPointF(0, 0)
        self._painter = ScenePainter()
        self._press: QPoint | None = None
        self._press_center = QPointF()
        self._dragging = False
        self._auto_view = False
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setMouseTracking(False)
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
        self.grabGesture(Qt.GestureType.PinchGesture)
        self.setMinimumSize(200, 150)
        self.tooltip_provider: Callable[[int, int], str] | None = None   # (box, edge) -> rich text

    @property
    def auto_view(self) -> bool:
        """Whether the view is still the opening one (the user has not moved it since)."""
        return self._auto_view

    # -- transform -----------------------------------------------------------------------
    def set_drawable(self, drawable: Drawable | None, keep_view: bool = False) -> None:
        self.drawable = drawable
        if not keep_view:
            self.home()
        self.update()
        self.view_changed.emit()

    def home(self) -> None:
        """The opening view: the whole graph when it reads at that zoom, else its start (top, or left end)
        at 1:1 across the boxes and labels in sight there, none cut off at a side, its inputs in sight."""
        self.fit()
        self._auto_view = True   # re-applied on resize until the user moves the view
        d = self.drawable
        if d is None or self.scale >= FIT_READABLE:
            return
        lr = d.scene.direction == "LR"
        x, y, w, h = d.bounds
        start = (x if lr else y) - FIT_MARGIN
        length, room = (self.width(), self.height()) if lr else (self.height(), self.width())
        x0, y0, x1, y1, inputs = d.sights(start + length)   # what is in sight along the graph at 1:1
        lo, hi = (y0, y1) if lr else (x0, x1)
        first = opening_start(lo, hi, lo[inputs], hi[inputs], (y, y + h) if lr else (x, x + w), room)
        mid_along, mid_across = start + length / 2, first + room / 2
        self.scale = 1.0
        self.center = QPointF(mid_along, mid_across) if lr else QPointF(mid_across, mid_along)
        self.update()
        self.view_changed.emit()

    def map_to_scene(self, pos: QPointF) -> QPointF:
        return QPointF(self.center.x() + (pos.x() - self.width() / 2) / self.scale,
                       self.center.y() + (pos.y() - self.height() / 2) / self.scale)

    def map_from_scene(self, pos: QPointF) -> QPointF:
        return QPointF((pos.x() - self.center.x()) * self.scale + self.width() / 2,
                       (pos.y() - self.center.y()) * self.scale + self.height() / 2)

    def visible_scene_rect(self) -> QRectF:
        w, h = self.width() / self.scale, self.height() / self.scale
        return QRectF(self.center.x() - w / 2, self.center.y() - h / 2, w, h)

    def fit(self) -> None:
        """Show the whole graph (never magnified beyond 1:1)."""
        self._auto_view = False
        if self.drawable is None or self.drawable.scene.n_boxes == 0:
            self.scale, self.center = 1.0, QPointF(0, 0)
        else:
            self.fit_rect(QRectF(*self.drawable.bounds), max_scale=1.0)
        self.update()
        self.view_changed.emit()

    def fit_rect(self, rect: QRectF, max_scale: float = MAX_SCALE) -> None:
        scale = fit_scale(rect.width(), rect.height(), self.width(), self.height())
        self.scale = float(np.clip(min(scale, max_scale), MIN_SCALE, MAX_SCALE))
        self.center = rect.center()

    def set_scale(self, scale: float, anchor: QPointF | None = None) -> None:
        """Zoom to ``scale``, keeping the scene point under ``anchor`` (widget coordinates) in place."""
        anchor = anchor if anchor is not None else QPointF(self.width() / 2, self.height() / 2)
        self._auto_view = False
        fixed = self.map_to_scene(anchor)
        self.scale = float(np.clip(scale, MIN_SCALE, MAX_SCALE))
        self.center = QPointF(fixed.x() - (anchor.x() - self.width() / 2) / self.scale,
                              fixed.y() - (anchor.y() - self.height() / 2) / self.scale)
        self.update()
        self.view_changed.emit()

    def place(self, scale: float, center: QPointF) -> None:
        """Show the scene at ``scale`` around ``center``, as the user had put it (a reload keeps it)."""
        self._auto_view = False
        self.scale = float(np.clip(scale, MIN_SCALE, MAX_SCALE))
        self.center = QPointF(center)
        self.update()
        self.view_changed.emit()

    def zoom_by(self, factor: float, anchor: QPointF | None = None) -> None:
        self.set_scale(self.scale * factor, anchor)

    def center_on(self, point: QPointF) -> None:
        self._auto_view = False
        self.center = QPointF(point)
        self.update()
        self.view_changed.emit()

    def ensure_visible(self, rect: QRectF, min_scale: float = style.READ_SCALE) -> None:
        """Bring ``rect`` into view, zooming in far enough to read it if needed."""
        self._auto_view = False
        if self.scale < min_scale:
            self.scale = min_scale
        if not self.visible_scene_rect().adjusted(20, 20, -20, -20).contains(rect):
            self.center = rect.center()
        self.update()
        self.view_changed.emit()

    # -- painting ------------------------------------------------------------------------
    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt override
        p = QPainter(self)
        try:
            self._paint(p)
        finally:  # a painter left active by an error (its frame kept by the traceback) crashed the process
            p.end()
        self.painted.emit()

    def _paint(self, p: QPainter) -> None:
        p.fillRect(self.rect(), style.BACKGROUND)
        if self.drawable is not None:
            p.save()
            p.translate(self.width() / 2, self.height() / 2)
            p.scale(self.scale, self.scale)
            p.translate(-self.center.x(), -self.center.y())
            self._painter.paint(p, self.drawable, self.visible_scene_rect(), self.scale, self.options)
            p.restore()
        if self.message:
            p.setPen(style.TEXT_DIM)
            p.setFont(style.font(13))
            p.drawText(QRectF(self.rect()).adjusted(40, 40, -40, -40),
                       Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap, self.message)

    # -- mouse -----------------------------------------------------------------------------
    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802
        delta = event.angleDelta().y() or event.angleDelta().x()
        if event.modifiers() & Qt.KeyboardModifier.ShiftModifier and not event.pixelDelta().isNull():
            self._pan_pixels(QPointF(event.pixelDelta()))
        elif delta:
            self.zoom_by(math.pow(1.0015, delta), event.position())
        event.accept()

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.NativeGesture and isinstance(event, QNativeGestureEvent):
            if event.gestureType() == Qt.NativeGestureType.ZoomNativeGesture:
                self.zoom_by(1.0 + event.value(), event.position())
                return True
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            self._show_tooltip(event)
            return True
        if event.type() == QEvent.Type.Gesture:
            pinch = event.gesture(Qt.GestureType.PinchGesture)  # type: ignore[attr-defined]
            if pinch is not None:
                self.zoom_by(pinch.scaleFactor(), self.mapFromGlobal(pinch.centerPoint().toPoint()).toPointF())
                return True
        return super().event(event)

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if event.button() in (Qt.MouseButton.LeftButton, Qt.MouseButton.MiddleButton):
            self._press = event.position().toPoint()
            self._press_center = QPointF(self.center)
            self._dragging = False
        self.setFocus()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if self._press is None:
            return
        moved = event.position().toPoint() - self._press
        if not self._dragging and moved.manhattanLength() > CLICK_SLOP:
            self._dragging = True
            self.setCursor(Qt.CursorShape.ClosedHandCursor)
        if self._dragging:
            self._auto_view = False
            self.center = QPointF(self._press_center.x() - moved.x() / self.scale,
                                  self._press_center.y() - moved.y() / self.scale)
            self.update()
            self.view_changed.emit()

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if self._press is not None and not self._dragging and event.button() == Qt.MouseButton.LeftButton:
            self._click(self.map_to_scene(event.position()))
        self._press = None
        self._dragging = False
        self.unsetCursor()

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if self.drawable is None or event.button() != Qt.MouseButton.LeftButton:
            return
        pos = self.map_to_scene(event.position())
        box = self.drawable.box_at(pos.x(), pos.y())
        if box >= 0:
            self.box_double_clicked.emit(box)
            return
        frame = self.drawable.group_frame_at(pos.x(), pos.y())
        if frame >= 0:
            self.frame_toggled.emit(frame)

    def _click(self, pos: QPointF) -> None:
        d = self.drawable
        if d is None:
            return
        box = d.box_at(pos.x(), pos.y())
        self.last_click = pos
        if box >= 0:
            if toggle_rect(d, box=box).adjusted(-3, -3, 3, 3).contains(pos) \
                    and (self._is_group(box) or box in self.options.body_toggles):
                self.box_toggled.emit(box)
            else:
                self.box_clicked.emit(box)
            return
        frame = d.group_frame_at(pos.x(), pos.y())
        if frame >= 0 and toggle_rect(d, frame=frame).adjusted(-3, -3, 3, 3).contains(pos):
            self.frame_toggled.emit(frame)
            return
        if frame >= 0 and frame_title_rect(d, frame).contains(pos):
            self.frame_clicked.emit(frame)
            return
        edge = d.edge_at(pos.x(), pos.y(), max(4.0 / self.scale, 2.0))
        if edge >= 0:
            self.edge_clicked.emit(edge)
        else:
            self.empty_clicked.emit()

    def _show_tooltip(self, event: QHelpEvent) -> None:
        d, provider = self.drawable, self.tooltip_provider
        text = ""
        if d is not None and provider is not None:
            pos = self.map_to_scene(QPointF(event.pos()))
            box = d.box_at(pos.x(), pos.y())
            edge = -1 if box >= 0 else d.edge_at(pos.x(), pos.y(), max(4.0 / self.scale, 2.0))
            if box >= 0 or edge >= 0:
                text = provider(box, edge)
        if text:
            QToolTip.showText(event.globalPos(), text, self)
        else:
            QToolTip.hideText()

    def _is_group(self, box: int) -> bool:
        from onnxviz.model.layout.scene import BoxKind

        return self.drawable is not None and int(self.drawable.scene.box_kind[box]) == BoxKind.GROUP

    def _pan_pixels(self, delta: QPointF) -> None:
        self._auto_view = False
        self.center = QPointF(self.center.x() - delta.x() / self.scale, self.center.y() - delta.y() / self.scale)
        self.update()
        self.view_changed.emit()

    # -- keyboard --------------------------------------------------------------------------
    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        key = event.key()
        steps: dict[int, str] = {Qt.Key.Key_Up: "up", Qt.Key.Key_Down: "down", Qt.Key.Key_Left: "left",
                                 Qt.Key.Key_Right: "right"}
        if key in steps and not event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            self.step_requested.emit(steps[key])
        elif key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.activate_requested.emit()
        elif key == Qt.Key.Key_Backspace:
            self.back_requested.emit()
        elif key in (Qt.Key.Key_Plus, Qt.Key.Key_Equal):
            self.zoom_by(1.25)
        elif key == Qt.Key.Key_Minus:
            self.zoom_by(0.8)
        elif key in steps:  # Ctrl+arrows pan
            dx = {"left": -1, "right": 1}.get(steps[key], 0) * self.width() / 4
            dy = {"up": -1, "down": 1}.get(steps[key], 0) * self.height() / 4
            self._pan_pixels(QPointF(-dx, -dy))
        else:
            super().keyPressEvent(event)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        if self._auto_view:   # the window is still settling: keep the opening view right
            self.home()
        self.view_changed.emit()

