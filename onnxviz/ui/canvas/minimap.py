"""An overview of the graph beside the canvas or in a corner of it; click or drag to move the view.

A graph whose whole would be too thin to read at the minimap's size (an expanded 12k-node
transformer is 1,800 times taller than wide) is shown as a *strip*: the part around the viewport, at
a scale where the graph's narrow side spans a good share of the minimap, following the view. A track
along the strip's long edge shows the whole graph's extent with the strip and the viewport on it;
clicking or dragging the track moves the view anywhere. Only a band of the strip around the viewport
is ever drawn into an image (redrawn when the view leaves it), so a strip of a 123k-node graph costs
what a screenful costs.

It is shown only for a graph too big to read whole in the canvas. Where it sits is the user's choice (:data:`PLACES`): docked beside the view (right of a tall graph,
under a wide one), taking space from the canvas rather than covering it, or floating in a corner.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QEvent, QObject, QPoint, QPointF, QRect, QRectF, QSize, Qt, QTimer
from PySide6.QtGui import QColor, QImage, QMouseEvent, QPainter, QPaintEvent, QPen, QResizeEvent, QShowEvent
from PySide6.QtWidgets import QGridLayout, QWidget

from onnxviz.ui.canvas import style
from onnxviz.ui.canvas.painting import PaintOptions, ScenePainter
from onnxviz.ui.canvas.view import FIT_READABLE, GraphView, fit_scale

DOCKED = "docked"
PLACES = (DOCKED, "bottom-right", "bottom-left", "top-right", "top-left")
PLACE_NAMES = {DOCKED: "Docked Beside the Graph", "bottom-right": "Bottom Right Corner",
               "bottom-left": "Bottom Left Corner", "top-right": "Top Right Corner", "top-left": "Top Left Corner"}
SIDE = 170          # the longer side of a floating minimap that shows the whole graph
STRIP = QSize(130, 240)   # a floating strip: its narrow and its long side
DOCK_SIDE = 150     # the narrow side of a docked minimap
PAD = 6
TRACK = 10          # thickness of the strip's track
MARGIN = 12         # between a floating minimap and the view's edge
READABLE = 0.5      # the graph's narrow side spans at least this share of the minimap's
BAND = 3            # the image drawn covers this many strip lengths
HOLDS = 0.8         # the view's rectangle spans at most this share of a strip's length


@dataclass(frozen=True)
class Frame:
    """How the minimap maps the scene: ``mini = PAD + (scene - origin) * scale``."""

    origin: QPointF
    scale: float
    tall: bool      # the graph's long side is vertical (the strip scrolls up and down)
    strip: bool     # only part of the graph is shown; the track shows the whole


def fit_frame(area: QRectF, inner: QSize, centre: QPointF, seen: QRectF | None = None) -> Frame:
    """The whole ``area`` in ``inner`` pixels when its narrow side stays readable; else a strip around
    ``centre`` (the view's centre) with the narrow side at :data:`READABLE` of the minimap's, zoomed out
    enough to hold ``seen`` (the view's scene rectangle) along its length: a view that shows much of the
    graph (after Fit) is never magnified, and one that shows all of it gets the whole graph."""
    tall = area.height() >= area.width()
    fit = min(inner.width() / area.width(), inner.height() / area.height())
    narrow_px, narrow = (inner.width(), area.width()) if tall else (inner.height(), area.height())
    long_px = inner.height() if tall else inner.width()
    scale = READABLE * narrow_px / narrow
    if seen is not None and not seen.isEmpty():
        scale = min(scale, HOLDS * long_px / (seen.height() if tall else seen.width()))
    strip = fit < scale
    scale = scale if strip else fit
    half_w, half_h = inner.width() / 2 / scale, inner.height() / 2 / scale
    cx, cy = area.center().x(), area.center().y()
    if strip and tall:
        cy = min(max(centre.y(), area.top() + half_h), area.bottom() - half_h)
    elif strip:
        cx = min(max(centre.x(), area.left() + half_w), area.right() - half_w)
    return Frame(QPointF(cx - half_w, cy - half_h), scale, tall, strip)


class Minimap(QWidget):
    """Follows ``view``; lives in ``host`` (the view's parent, laid out by a QGridLayout with the view at 0, 0)."""

    def __init__(self, view: GraphView, host: QWidget) -> None:
        super().__init__(host)
        self.view = view
        self.host = host   # (an exception in eventFilter would take the process down: nothing there may raise)
        self.place = DOCKED
        self.enabled = True
        self.frame: Frame | None = None
        self._area = QRectF()
        self._image: QImage | None = None
        self._image_for: object = None
        self._band = QRectF()     # the scene rectangle drawn into the image
        self._image_scale = 0.0
        self._held: Frame | None = None   # the frame kept while dragging inside the strip
        self._dragging_track = False
        self._painter = ScenePainter()
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setToolTip("Overview: click or drag to move the view")
        view.view_changed.connect(self._follow)
        host.installEventFilter(self)
        self._follow()   # a view that already shows a graph

    # -- placement ---------------------------------------------------------------------------
    def set_place(self, place: str) -> None:
        self.place = place if place in PLACES else DOCKED
        self._arrange()

    def set_enabled(self, on: bool) -> None:
        self.enabled = on
        self._arrange()

    def _has_graph(self) -> bool:
        """A graph too big to read whole in the space the view and a docked minimap share (the view
        then opens at 1:1 on its top, see GraphView.home)."""
        d = self.view.drawable
        if d is None or d.scene.n_boxes == 0:
            return False
        _, _, w, h = d.bounds
        room = self.host.size()
        return fit_scale(w, h, room.width(), room.height()) < FIT_READABLE

    def _arrange(self) -> None:
        """Dock into the host's grid or float over the view, sized for the graph; hidden without one."""
        grid = self.host.layout()
        assert isinstance(grid, QGridLayout)
        grid.removeWidget(self)
        self.setMinimumSize(0, 0)
        self.setMaximumSize(16777215, 16777215)
        if not (self.enabled and self._has_graph()):
            self.hide()
            return
        tall = self._area.height() >= self._area.width()
        if self.place == DOCKED:
            if tall:
                self.setFixedWidth(DOCK_SIDE)
                grid.addWidget(self, 0, 1)
            else:
                self.setFixedHeight(DOCK_SIDE)
                grid.addWidget(self, 1, 0)
        else:
            self.setFixedSize(self._floating_size(tall))
            self.reposition()
        self.show()
        self._refit()

    def _floating_size(self, tall: bool) -> QSize:
        long_ = max(self._area.width(), self._area.height())
        fit = (SIDE - 2 * PAD) / max(long_, 1.0)
        whole = QSize(max(24, round(self._area.width() * fit) + 2 * PAD),
                      max(24, round(self._area.height() * fit) + 2 * PAD))
        narrow = whole.width() if tall else whole.height()
        if narrow - 2 * PAD >= READABLE * (SIDE - 2 * PAD):
            return whole
        return STRIP if tall else STRIP.transposed()

    def reposition(self) -> None:
        """A floating minimap goes back to its corner of the view (after a resize)."""
        if self.place == DOCKED or not self.isVisible() and not self.enabled:
            return
        view = QRect(self.view.mapTo(self.host, QPoint(0, 0)), self.view.size())
        x = view.left() + MARGIN if self.place.endswith("left") else view.right() - self.width() - MARGIN + 1
        y = view.top() + MARGIN if self.place.startswith("top") else view.bottom() - self.height() - MARGIN + 1
        self.move(x, y)
        self.raise_()

    def covers_view(self) -> QRect:
        """The part of the view this minimap hides (empty when docked or hidden), in view coordinates."""
        if not self.isVisible() or self.place == DOCKED:
            return QRect()
        return QRect(self.view.mapFrom(self.host, self.pos()), self.size()).intersected(self.view.rect())

    # -- following the view ----------------------------------------------------------------------
    def refresh(self) -> None:
        """Redraw the overview (after a theme change)."""
        self._image_for = None
        self._follow()

    def _follow(self) -> None:
        d = self.view.drawable
        if d is not self._image_for:
            self._image_for = d
            self._image = None
            if d is not None:
                x, y, w, h = d.bounds
                self._area = QRectF(x, y, max(w, 1.0), max(h, 1.0))
            self._arrange()
            return
        self._refit()

    def _inner(self) -> QSize:
        """The pixels the graph is drawn in: inside the padding, beside the track."""
        size = QSize(self.width() - 2 * PAD, self.height() - 2 * PAD)
        if self.frame is not None and self.frame.strip:
            size = QSize(size.width() - TRACK, size.height()) if self.frame.tall \
                else QSize(size.width(), size.height() - TRACK)
        return QSize(max(size.width(), 8), max(size.height(), 8))

    def _refit(self) -> None:
        if not self.isVisible() or not self._has_graph():
            return
        self.reposition()
        if self._held is not None:
            self.frame = self._held
        else:
            seen = self.view.visible_scene_rect()
            whole = fit_frame(self._area, QSize(self.width() - 2 * PAD, self.height() - 2 * PAD), self.view.center,
                              seen)
            self.frame = whole   # a strip leaves room for its track; fit again in what is left
            if whole.strip:
                self.frame = fit_frame(self._area, self._inner(), self.view.center, seen)
        self._ensure_image()
        self.update()

    def _window(self) -> QRectF:
        """The scene rectangle the minimap shows."""
        assert self.frame is not None
        inner = self._inner()
        s = self.frame.scale
        return QRectF(self.frame.origin, QSize(inner.width(), inner.height()).toSizeF() / s)

    def _ensure_image(self) -> None:
        """Draw the band of the graph around the shown window, unless the image already holds it."""
        d = self.view.drawable
        assert self.frame is not None and d is not None
        window = self._window().intersected(self._area)
        scale = self.frame.scale
        if self._image is not None and self._band.contains(window) and abs(self._image_scale - scale) < 1e-9:
            return
        band = QRectF(self._area)
        if self.frame.strip and self.frame.tall:
            band.setTop(window.top() - window.height() * (BAND - 1) / 2)
            band.setHeight(window.height() * BAND)
        elif self.frame.strip:
            band.setLeft(window.left() - window.width() * (BAND - 1) / 2)
            band.setWidth(window.width() * BAND)
        band = band.intersected(self._area)
        size = QSize(max(1, round(band.width() * scale)), max(1, round(band.height() * scale)))
        image = QImage(size, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(style.PANEL)
        p = QPainter(image)
        try:
            p.scale(scale, scale)
            p.translate(-band.x(), -band.y())
            self._painter.paint(p, d, band, min(scale, style.TEXT_SCALE * 0.99), PaintOptions(background=style.PANEL))
        finally:  # see GraphView.paintEvent
            p.end()
        self._image, self._band, self._image_scale = image, band, scale

    # -- painting ----------------------------------------------------------------------------
    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        if self._image is None or self.frame is None:
            return
        p = QPainter(self)
        try:
            self._paint(p, self._image, self.frame)
        finally:  # see GraphView.paintEvent
            p.end()

    def _paint(self, p: QPainter, image: QImage, frame: Frame) -> None:
        p.fillRect(self.rect(), style.PANEL)
        inner = QRectF(PAD, PAD, self._inner().width(), self._inner().height())
        p.save()
        p.setClipRect(inner)
        p.drawImage(self._to_mini(self._band.topLeft()), image)
        p.restore()
        p.setPen(QPen(style.PANEL_BORDER, 1))
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawRect(self.rect().adjusted(0, 0, -1, -1))
        view = self.view.visible_scene_rect()
        r = QRectF(self._to_mini(view.topLeft()), self._to_mini(view.bottomRight())).intersected(inner)
        if not r.isEmpty():
            p.setPen(QPen(style.SELECTION, 1.5))
            p.setBrush(QColor(26, 115, 232, 40))
            p.drawRect(r)
        if frame.strip:
            self._paint_track(p, frame)

    def track_rect(self) -> QRectF:
        """Where the track lies (a strip only): along the far long edge."""
        if self.frame is not None and self.frame.tall:
            return QRectF(self.width() - PAD - TRACK + 3, PAD, TRACK - 3, self.height() - 2 * PAD)
        return QRectF(PAD, self.height() - PAD - TRACK + 3, self.width() - 2 * PAD, TRACK - 3)

    def _on_track(self, window: QRectF, tall: bool) -> QRectF:
        """``window`` (scene) as a stretch of the track, at least 3 pixels long."""
        track = self.track_rect()
        if tall:
            k = track.height() / self._area.height()
            top = track.top() + (window.top() - self._area.top()) * k
            return QRectF(track.left(), top, track.width(), max(window.height() * k, 3.0)).intersected(track)
        k = track.width() / self._area.width()
        left = track.left() + (window.left() - self._area.left()) * k
        return QRectF(left, track.top(), max(window.width() * k, 3.0), track.height()).intersected(track)

    def _paint_track(self, p: QPainter, frame: Frame) -> None:
        track = self.track_rect()
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(style.PANEL_BORDER)
        p.drawRoundedRect(track, 2, 2)
        p.setBrush(style.TEXT_DIM)
        p.drawRect(self._on_track(self._window(), frame.tall))
        p.setBrush(style.SELECTION)
        p.drawRect(self._on_track(self.view.visible_scene_rect(), frame.tall))

    def _to_mini(self, pt: QPointF) -> QPointF:
        assert self.frame is not None
        f = self.frame
        return QPointF(PAD + (pt.x() - f.origin.x()) * f.scale, PAD + (pt.y() - f.origin.y()) * f.scale)

    def _to_scene(self, pt: QPointF) -> QPointF:
        assert self.frame is not None
        f = self.frame
        return QPointF(f.origin.x() + (pt.x() - PAD) / f.scale, f.origin.y() + (pt.y() - PAD) / f.scale)

    def _track_to_scene(self, pt: QPointF) -> QPointF:
        """A point of the track: that place along the graph's long side, the view's place across it."""
        track, centre = self.track_rect(), self.view.center
        if self.frame is not None and self.frame.tall:
            y = self._area.top() + (pt.y() - track.top()) / track.height() * self._area.height()
            return QPointF(centre.x(), min(max(y, self._area.top()), self._area.bottom()))
        x = self._area.left() + (pt.x() - track.left()) / track.width() * self._area.width()
        return QPointF(min(max(x, self._area.left()), self._area.right()), centre.y())

    # -- mouse ---------------------------------------------------------------------------------
    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        on_track = self.frame is not None and self.frame.strip \
            and self.track_rect().adjusted(-3, -3, 3, 3).contains(event.position())
        self._held = None if on_track else self.frame   # dragging in the strip: the strip keeps still
        self._move_to(event.position(), on_track)
        self._dragging_track = on_track

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if event.buttons() & Qt.MouseButton.LeftButton:
            self._move_to(event.position(), self._dragging_track)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        self._held = None
        self._dragging_track = False
        self._refit()

    def _move_to(self, pos: QPointF, on_track: bool) -> None:
        if self.frame is not None:
            self.view.center_on(self._track_to_scene(pos) if on_track else self._to_scene(pos))

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._refit()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        """The host resized: a graph may now fit (no minimap) or no longer fit."""
        if watched is self.host and event.type() == QEvent.Type.Resize and self._has_graph() != self.isVisible():
            QTimer.singleShot(0, self, self._arrange)
        return False

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802
        super().showEvent(event)
        self._refit()


def make_host(view: GraphView) -> QWidget:
    """The widget holding ``view`` with room for a docked minimap at its right or under it."""
    host = QWidget()
    grid = QGridLayout(host)
    grid.setContentsMargins(0, 0, 0, 0)
    grid.setSpacing(0)
    grid.addWidget(view, 0, 0)
    grid.setRowStretch(0, 1)
    grid.setColumnStretch(0, 1)
    return host
