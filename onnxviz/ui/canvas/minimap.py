"""An overview of the whole graph in a corner of the canvas; click or drag to move the view."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QImage, QMouseEvent, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QWidget

from onnxviz.ui.canvas import style
from onnxviz.ui.canvas.painting import PaintOptions, ScenePainter
from onnxviz.ui.canvas.view import GraphView

SIDE = 170  # the longer side of the minimap in pixels
PAD = 6


class Minimap(QWidget):
    """Follows ``view``: redraws its viewport rectangle on every view change."""

    def __init__(self, view: GraphView, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.view = view
        self._image: QImage | None = None
        self._image_for: object = None
        self._area = QRectF()
        self._scale = 1.0
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setToolTip("Overview: click or drag to move the view")
        view.view_changed.connect(self._follow)

    def refresh(self) -> None:
        """Redraw the overview (after a theme change)."""
        self._image_for = None
        self._follow()

    def _follow(self) -> None:
        d = self.view.drawable
        if d is not self._image_for:
            self._rebuild()
        enabled = getattr(self.parentWidget(), "_minimap_enabled", True)
        self.setVisible(enabled and d is not None and d.scene.n_boxes > 0)
        self.update()

    def _rebuild(self) -> None:
        d = self.view.drawable
        self._image_for = d
        self._image = None
        if d is None or d.scene.n_boxes == 0:
            return
        x, y, w, h = d.bounds
        self._area = QRectF(x, y, max(w, 1.0), max(h, 1.0))
        self._scale = (SIDE - 2 * PAD) / max(self._area.width(), self._area.height())
        size = QSize(max(24, round(self._area.width() * self._scale) + 2 * PAD),
                     max(24, round(self._area.height() * self._scale) + 2 * PAD))
        self.resize(size)
        image = QImage(size, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(style.PANEL)
        p = QPainter(image)
        try:
            p.translate(PAD, PAD)
            p.scale(self._scale, self._scale)
            p.translate(-self._area.x(), -self._area.y())
            ScenePainter().paint(p, d, self._area, min(self._scale, style.TEXT_SCALE * 0.99), PaintOptions())
        finally:  # see GraphView.paintEvent
            p.end()
        self._image = image
        self.reposition()

    def reposition(self) -> None:
        parent = self.parentWidget()
        if parent is None:
            return
        origin = self.view.mapTo(parent, QPoint(0, 0))
        self.move(origin.x() + self.view.width() - self.width() - 12,
                  origin.y() + self.view.height() - self.height() - 12)
        self.raise_()

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        if self._image is None:
            return
        p = QPainter(self)
        try:
            self._paint(p, self._image)
        finally:  # see GraphView.paintEvent
            p.end()

    def _paint(self, p: QPainter, image: QImage) -> None:
        p.drawImage(0, 0, image)
        p.setPen(QPen(style.PANEL_BORDER, 1))
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawRect(self.rect().adjusted(0, 0, -1, -1))
        view = self.view.visible_scene_rect()
        r = QRectF(self._to_mini(view.topLeft()), self._to_mini(view.bottomRight()))
        r = r.intersected(QRectF(self.rect()).adjusted(1, 1, -1, -1))
        p.setPen(QPen(style.SELECTION, 1.5))
        p.setBrush(QColor(26, 115, 232, 40))
        p.drawRect(r)

    def _to_mini(self, pt: QPointF) -> QPointF:
        return QPointF(PAD + (pt.x() - self._area.x()) * self._scale, PAD + (pt.y() - self._area.y()) * self._scale)

    def _to_scene(self, pt: QPointF) -> QPointF:
        return QPointF(self._area.x() + (pt.x() - PAD) / self._scale, self._area.y() + (pt.y() - PAD) / self._scale)

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        self.view.center_on(self._to_scene(event.position()))

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if event.buttons() & Qt.MouseButton.LeftButton:
            self.view.center_on(self._to_scene(event.position()))
