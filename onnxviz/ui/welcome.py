"""What the window shows before a model is open (and when no canvas is installed)."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget


class WelcomeWidget(QWidget):
    open_requested = Signal()
    example_requested = Signal()

    def __init__(self, icon: QIcon, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        logo = QLabel()
        logo.setPixmap(icon.pixmap(96, 96))
        logo.setAlignment(Qt.AlignmentFlag.AlignCenter)
        title = QLabel("<span style='font-size:20pt; font-weight:600'>onnxviz</span>")
        title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.hint = QLabel("Open an ONNX model with File > Open (Ctrl+O), or drop a .onnx file here.")
        self.hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.hint.setWordWrap(True)
        open_button = QPushButton("Open Model...")
        open_button.setDefault(True)
        open_button.clicked.connect(self.open_requested)
        example_button = QPushButton("Open Example")
        example_button.clicked.connect(self.example_requested)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(open_button)
        buttons.addWidget(example_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addStretch(1)
        layout.addWidget(logo)
        layout.addWidget(title)
        layout.addSpacing(6)
        layout.addWidget(self.hint)
        layout.addSpacing(12)
        layout.addLayout(buttons)
        layout.addStretch(2)

    def setText(self, text: str) -> None:  # noqa: N802 - the QLabel API the placeholder used to have
        self.hint.setText(text)

    def text(self) -> str:
        return self.hint.text()
