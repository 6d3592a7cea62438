"""What the window shows before a model is open (and when no canvas is installed)."""

from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from onnxviz.ui.recent import is_file, short_folder

RECENT_SHOWN = 6


class WelcomeWidget(QWidget):
    open_requested = Signal()
    example_requested = Signal()
    recent_requested = Signal(str)  # a path from the recent-files list

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
        self.recent = QLabel()
        self.recent.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.recent.setTextInteractionFlags(Qt.TextInteractionFlag.LinksAccessibleByMouse
                                            | Qt.TextInteractionFlag.LinksAccessibleByKeyboard)
        self.recent.linkActivated.connect(self.recent_requested)
        layout = QVBoxLayout(self)
        layout.addStretch(1)
        layout.addWidget(logo)
        layout.addWidget(title)
        layout.addSpacing(6)
        layout.addWidget(self.hint)
        layout.addSpacing(12)
        layout.addLayout(buttons)
        layout.addSpacing(18)
        layout.addWidget(self.recent)
        layout.addStretch(2)
        self.set_recent([])

    def set_recent(self, paths: list[str]) -> None:
        """List the newest recent files that still exist as links."""
        present = [Path(p) for p in paths if is_file(p)][:RECENT_SHOWN]
        self.recent.setVisible(bool(present))
        rows = "".join(
            f"<tr><td align='right'><a href='{html.escape(str(p), quote=True)}'>{html.escape(p.name)}</a></td>"
            f"<td style='color: palette(placeholder-text); padding-left: 12px'>{html.escape(short_folder(p.parent))}</td></tr>"
            for p in present)
        self.recent.setText(f"<p style='color: palette(placeholder-text)'>Recent</p><table align='center'>{rows}</table>")

    def setText(self, text: str) -> None:  # noqa: N802 - the QLabel API the placeholder used to have
        self.hint.setText(text)

    def text(self) -> str:
        return self.hint.text()
