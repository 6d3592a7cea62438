"""The overlay's key (a colour bar, or swatches with labels) in a strip of its own between the canvas's
header row and the graph: it never covers a box. The strip is one row when the title and the key fit
side by side, two when not; its arrow folds it away (the graph gets the room) and the header row's
"Key" button brings it back."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFontMetricsF, QLinearGradient, QPainter, QPaintEvent, QPen, QResizeEvent
from PySide6.QtWidgets import QHBoxLayout, QSizePolicy, QToolButton, QWidget

from onnxviz.ui.canvas import style
from onnxviz.ui.canvas.marks import BEYOND_RGBA, Legend
from onnxviz.ui.widgets.names import plain_tooltip

BAR_WIDTH = 220.0   # of a colour bar
ROW = 18.0          # the title's row
BAR_ROWS = 26.0     # a colour bar and the range under it
KEY_ROWS = 16.0     # swatches with labels
GAP = 18.0          # between the title and the key on one row
PAD = 4.0           # above and below


def legend_title(legend: Legend) -> str:
    """The key's title with how its scale was chosen: "max |x|, log scale", "..., 1st-99th percentile"."""
    return ", ".join([legend.title, *(["log scale"] if legend.log else []), *([legend.basis] if legend.basis else [])])


def beyond_label(legend: Legend) -> str:
    """The key's entry for boxes whose values are attention-mask fills, drawn in a colour of their own."""
    return f"|x| \u2265 1e30 (a mask's fill): {legend.beyond} box{'es' if legend.beyond != 1 else ''}"


def title_width(legend: Legend) -> float:
    return QFontMetricsF(style.font(11, bold=True)).horizontalAdvance(legend_title(legend))


def key_width(legend: Legend) -> float:
    """The swatches with their labels (or the bar), and the mask fills' entry, on one line."""
    small = QFontMetricsF(style.font(10))
    labels = [*(s[0] for s in legend.swatches), legend.scheme.blank] if legend.swatches else []
    keys = sum(25 + small.horizontalAdvance(label) for label in labels) if labels else BAR_WIDTH + 12
    return keys + (25 + small.horizontalAdvance(beyond_label(legend)) if legend.beyond else 0.0)


def key_height(legend: Legend) -> float:
    return KEY_ROWS if legend.swatches else BAR_ROWS


def strip_height(legend: Legend, width: float) -> int:
    """The strip's height at ``width`` (of its drawing area): the title, with the key beside or under it."""
    if title_width(legend) + GAP + key_width(legend) <= width:
        return int(max(ROW, key_height(legend)) + 2 * PAD)
    return int(ROW + key_height(legend) + 2 * PAD)


def paint_key(p: QPainter, area: QRectF, legend: Legend) -> None:
    """The key from ``area``'s top left: the swatches, or the bar with its range; then the mask fills' entry."""
    p.setFont(style.font(10))
    if legend.swatches:
        x = area.x()
        entries = [(QColor(*c), label) for label, c in legend.swatches]
        for colour, label in [*entries, (QColor(style.NO_OVERLAY_VALUE), legend.scheme.blank)]:
            x = _paint_entry(p, QPointF(x, area.y()), colour, label) + 12
    else:
        _paint_bar(p, QRectF(area.x(), area.y() + 1, BAR_WIDTH, 9), legend)
        x = area.x() + BAR_WIDTH + 12
    if legend.beyond:
        _paint_entry(p, QPointF(x, area.y()), QColor(*BEYOND_RGBA), beyond_label(legend))


def _paint_bar(p: QPainter, bar: QRectF, legend: Legend) -> None:
    gradient = QLinearGradient(bar.topLeft(), bar.topRight())
    for k, c in enumerate(legend.colours):
        gradient.setColorAt(k / max(len(legend.colours) - 1, 1), QColor(*[int(v) for v in c]))
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(gradient)
    p.drawRect(bar)
    p.setPen(style.TEXT_DIM)
    below = QRectF(bar.x(), bar.bottom() + 1, bar.width(), 14)
    p.drawText(below, Qt.AlignmentFlag.AlignLeft, legend.scheme.text(legend.lo))
    p.drawText(below, Qt.AlignmentFlag.AlignRight, legend.scheme.text(legend.hi))
    if legend.zero is not None:  # a diverging bar: where 0 is, marked and labelled
        x = bar.x() + legend.zero * bar.width()
        p.setPen(QPen(style.TEXT, 1))
        p.drawLine(QPointF(x, bar.top() - 2), QPointF(x, bar.bottom() + 2))
        if 0.15 < legend.zero < 0.85:  # else it would run into the range's own labels
            p.setPen(style.TEXT_DIM)
            p.drawText(QRectF(x - 10, bar.bottom() + 1, 20, 14), Qt.AlignmentFlag.AlignHCenter, "0")
    else:
        _paint_entry(p, QPointF(bar.center().x() - 34, bar.bottom() + 1), QColor(style.NO_OVERLAY_VALUE), "no value")


def _paint_entry(p: QPainter, at: QPointF, colour: QColor, label: str) -> float:
    """A small square of ``colour`` and its label from ``at``; returns where the label ends."""
    p.setPen(QPen(style.PANEL_BORDER, 1))
    p.setBrush(colour)
    p.drawRect(QRectF(at.x(), at.y() + 3, 9, 9))
    p.setPen(style.TEXT_DIM)
    width = p.fontMetrics().horizontalAdvance(label)
    p.drawText(QRectF(at.x() + 13, at.y(), width + 2, 14), Qt.AlignmentFlag.AlignLeft, label)
    return at.x() + 13 + width


class _Key(QWidget):
    """The title and (unfolded) the key, painted."""

    def __init__(self, strip: LegendStrip) -> None:
        super().__init__(strip)
        self.strip = strip
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return QSize(200, int(ROW + 2 * PAD))

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt override
        legend = self.strip.legend
        if legend is None:
            return
        p = QPainter(self)
        try:
            p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
            font = style.font(11, bold=True)
            p.setFont(font)
            p.setPen(style.TEXT)
            title = QFontMetricsF(font).elidedText(legend_title(legend), Qt.TextElideMode.ElideRight, self.width() - 4)
            p.drawText(QRectF(0, PAD, self.width(), ROW), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                       title)
            one_row = self.height() < ROW + key_height(legend) + 2 * PAD
            at = QPointF(title_width(legend) + GAP, PAD + 2) if one_row else QPointF(0, PAD + ROW)
            paint_key(p, QRectF(at.x(), at.y(), self.width() - at.x(), key_height(legend)), legend)
        finally:
            p.end()


class LegendStrip(QWidget):
    """The key of the canvas's overlay (``set_legend``), hidden without one. ``fold_button`` (in the strip)
    folds it away; ``toggle`` (a checkable "Key" button for the header row, shown while there is a key)
    folds and unfolds it."""

    folded_changed = Signal(bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.legend: Legend | None = None
        self.folded = False
        self.fold_button = QToolButton()
        self.fold_button.setAutoRaise(True)
        self.fold_button.setArrowType(Qt.ArrowType.UpArrow)
        self.fold_button.setToolTip("Fold the key away (the header's Key button shows it again)")
        self.fold_button.clicked.connect(lambda: self.set_folded(True))
        self.toggle = QToolButton()
        self.toggle.setText("Key")
        self.toggle.setCheckable(True)
        self.toggle.setChecked(True)
        self.toggle.setAutoRaise(True)
        self.toggle.setToolTip("Show or fold the key of the graph's colours")
        self.toggle.toggled.connect(lambda on: self.set_folded(not on))
        self.toggle.hide()
        self.key = _Key(self)
        row = QHBoxLayout(self)
        row.setContentsMargins(6, 0, 8, 0)
        row.setSpacing(4)
        row.addWidget(self.fold_button, 0, Qt.AlignmentFlag.AlignTop)
        row.addWidget(self.key, 1)
        self.hide()

    def set_legend(self, legend: Legend | None) -> None:
        self.legend = legend
        self.toggle.setVisible(legend is not None)
        self.setVisible(legend is not None and not self.folded)
        if legend is not None:
            self.key.setToolTip(plain_tooltip(legend_title(legend)))
            self._fit()
        self.key.update()

    def set_folded(self, folded: bool) -> None:
        if folded == self.folded:
            return
        self.folded = folded
        self.toggle.setChecked(not folded)
        self.setVisible(self.legend is not None and not folded)
        self.folded_changed.emit(folded)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        if self.legend is not None:
            width = self.width() - self.fold_button.sizeHint().width() - 18
            self.setFixedHeight(strip_height(self.legend, width))
