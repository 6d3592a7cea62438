"""The bar above the canvas that shows which graph or subgraph is displayed and leads back."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QMenu, QSizePolicy, QToolButton, QWidget

from onnxviz.model.graph.index import ModelIndex, scope_label
from onnxviz.ui.widgets.layouts import clear_layout
from onnxviz.ui.widgets.names import name_tooltip, plain_tooltip

SHOWN_LEVELS = 5  # deeper trails show the main graph, a "..." menu of the middle, and the last levels


def scope_trail(scope: str) -> list[str]:
    """Scopes from the main graph down to ``scope`` for a subgraph scope."""
    if not scope:
        return [""]
    if scope.startswith("fn:"):
        return ["", scope]
    parts = scope.split("/")
    return [""] + ["/".join(parts[: k + 1]) for k in range(len(parts))]


class Breadcrumb(QWidget):
    """Buttons for each level of the trail; clicking one emits ``scope_clicked``.

    It never widens the window: a deep trail (ten nested bodies, a function entered from a function...)
    folds its middle levels into a "..." menu, and what still does not fit is cut on the right.
    """

    scope_clicked = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._layout = QHBoxLayout(self)
        self._layout.setContentsMargins(6, 0, 6, 0)
        self._layout.setSpacing(2)
        self.buttons: list[QToolButton] = []
        self.folded: QToolButton | None = None  # the "..." button of a deep trail
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)

    def set_trail(self, index: ModelIndex | None, trail: list[str]) -> None:
        clear_layout(self._layout)
        self.buttons = []
        self.folded = None
        hidden = trail[1:len(trail) - SHOWN_LEVELS + 1] if len(trail) > SHOWN_LEVELS else []
        for k, scope in enumerate(trail):
            if 0 < k <= len(hidden):
                if k == 1:
                    self._add_separator()
                    self.folded = self._folded_button(index, hidden)
                    self._layout.addWidget(self.folded)
                continue
            if k:
                self._add_separator()
            button = QToolButton()
            button.setText(scope_label(index, scope))
            button.setAutoRaise(True)
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
            if k == len(trail) - 1:
                button.setStyleSheet("QToolButton { font-weight: bold; border: none; }")
                button.setToolTip(name_tooltip(scope) if scope else "The model's main graph")
            else:
                button.setStyleSheet("QToolButton { color: palette(link); }")  # the theme's link colour
                button.setToolTip(plain_tooltip(f"Back to {scope_label(index, scope)}"))
                button.clicked.connect(lambda _=False, s=scope: self.scope_clicked.emit(s))
            self.buttons.append(button)
            self._layout.addWidget(button)
        self._layout.addStretch(1)

    def _add_separator(self) -> None:
        sep = QLabel("›")
        sep.setStyleSheet("color: #8a929b; font-size: 14px;")
        self._layout.addWidget(sep)

    def _folded_button(self, index: ModelIndex | None, scopes: list[str]) -> QToolButton:
        button = QToolButton()
        button.setText("…")
        button.setAutoRaise(True)
        button.setToolTip(f"{len(scopes)} more levels")
        button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(button)
        for scope in scopes:
            action = menu.addAction(scope_label(index, scope))
            action.triggered.connect(lambda _=False, s=scope: self.scope_clicked.emit(s))
        button.setMenu(menu)
        return button
