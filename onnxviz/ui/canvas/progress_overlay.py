"""'Laying out the graph [=====] Cancel' floating over the canvas (when the window has no task bar)."""

from __future__ import annotations

from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QProgressBar, QPushButton, QWidget


class LayoutProgress(QFrame):
    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("layoutProgress")
        self.setStyleSheet("#layoutProgress { background: palette(window); border: 1px solid palette(mid);"
                           " border-radius: 6px; }")
        self.label = QLabel("")
        self.bar = QProgressBar()
        self.bar.setTextVisible(False)
        self.bar.setFixedHeight(10)
        self.cancel = QPushButton("Cancel")
        row = QHBoxLayout(self)
        row.setContentsMargins(12, 6, 8, 6)
        row.setSpacing(10)
        row.addWidget(self.label)
        row.addWidget(self.bar, 1)
        row.addWidget(self.cancel)

    def start(self, label: str) -> None:
        self.label.setText(label + "...")
        self.bar.setRange(0, 0)   # busy until the first real fraction arrives
        self.show()
        self.raise_()

    def set_progress(self, fraction: float, text: str) -> None:
        if fraction > 0:
            self.bar.setRange(0, 1000)
            self.bar.setValue(int(fraction * 1000))
        if text:
            self.label.setText(text + "...")
