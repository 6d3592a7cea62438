"""Light and dark appearance: Fusion with hand-picked palettes, following the system by default."""

from __future__ import annotations

from enum import Enum

from PySide6.QtCore import QObject, QSettings, Qt, Signal
from PySide6.QtGui import QAction, QActionGroup, QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QMenu, QWidget

from onnxviz.ui.settings import read_text, sync

KEY = "appearance/theme"

Role = QPalette.ColorRole
Group = QPalette.ColorGroup


class Theme(str, Enum):
    SYSTEM = "system"
    LIGHT = "light"
    DARK = "dark"


# (role, colour) for the active/inactive groups, then the disabled overrides.
_LIGHT = {
    Role.Window: "#f3f3f3", Role.WindowText: "#1f1f1f", Role.Base: "#ffffff", Role.AlternateBase: "#f4f6f9",
    Role.ToolTipBase: "#ffffff", Role.ToolTipText: "#1f1f1f", Role.PlaceholderText: "#8c8c8c",
    Role.Text: "#1f1f1f", Role.Button: "#f6f6f6", Role.ButtonText: "#1f1f1f", Role.BrightText: "#c01c28",
    Role.Light: "#ffffff", Role.Midlight: "#e8e8e8", Role.Mid: "#c8c8c8", Role.Dark: "#a0a0a0",
    Role.Shadow: "#6e6e6e", Role.Highlight: "#2f6fd6", Role.HighlightedText: "#ffffff",
    Role.Link: "#1a5fb4", Role.LinkVisited: "#613583",
}
_LIGHT_DISABLED = {Role.WindowText: "#9a9a9a", Role.Text: "#9a9a9a", Role.ButtonText: "#9a9a9a",
                   Role.Highlight: "#c4c4c4", Role.HighlightedText: "#f0f0f0"}
_DARK = {
    Role.Window: "#2b2b2e", Role.WindowText: "#e4e4e6", Role.Base: "#1f1f22", Role.AlternateBase: "#27272a",
    Role.ToolTipBase: "#3a3a3e", Role.ToolTipText: "#f0f0f0", Role.PlaceholderText: "#85858a",
    Role.Text: "#e4e4e6", Role.Button: "#35353a", Role.ButtonText: "#e4e4e6", Role.BrightText: "#ff6b6b",
    Role.Light: "#4a4a50", Role.Midlight: "#3d3d42", Role.Mid: "#2a2a2e", Role.Dark: "#18181b",
    Role.Shadow: "#0c0c0e", Role.Highlight: "#3b78e0", Role.HighlightedText: "#ffffff",
    Role.Link: "#78aeff", Role.LinkVisited: "#c19cf0",
}
_DARK_DISABLED = {Role.WindowText: "#727278", Role.Text: "#727278", Role.ButtonText: "#727278",
                  Role.Highlight: "#45454a", Role.HighlightedText: "#a0a0a0"}


def make_palette(dark: bool) -> QPalette:
    colours, disabled = (_DARK, _DARK_DISABLED) if dark else (_LIGHT, _LIGHT_DISABLED)
    palette = QPalette()
    for role, colour in colours.items():
        palette.setColor(role, QColor(colour))
    for role, colour in disabled.items():
        palette.setColor(Group.Disabled, role, QColor(colour))
    return palette


def system_prefers_dark() -> bool:
    return QGuiApplication.styleHints().colorScheme() == Qt.ColorScheme.Dark


def read_theme(settings: QSettings) -> Theme:
    return Theme(read_text(settings, KEY, Theme.SYSTEM.value, tuple(t.value for t in Theme)))


class ThemeManager(QObject):
    """Applies the chosen theme to the whole application and remembers the choice."""

    changed = Signal(bool)  # True when the effective appearance is dark

    def __init__(self, settings: QSettings, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.settings = settings
        self.choice = read_theme(settings)
        QGuiApplication.styleHints().colorSchemeChanged.connect(self._on_system_scheme_changed)

    @property
    def is_dark(self) -> bool:
        if self.choice is Theme.SYSTEM:
            return system_prefers_dark()
        return self.choice is Theme.DARK

    def set_choice(self, choice: Theme) -> None:
        self.choice = choice
        self.settings.setValue(KEY, choice.value)
        sync(self.settings)
        self.apply()

    def apply(self) -> None:
        app = QApplication.instance()
        if not isinstance(app, QApplication):
            return
        if app.style().name().lower() != "fusion":
            app.setStyle("Fusion")
        dark = self.is_dark
        palette = make_palette(dark)
        if app.palette() != palette:  # a new window with the current theme changes nothing
            app.setPalette(palette)
            _repolish_style_sheets(app)
        self.changed.emit(dark)

    def _on_system_scheme_changed(self, _scheme: Qt.ColorScheme) -> None:
        if self.choice is Theme.SYSTEM:
            self.apply()


def _repolish_style_sheets(app: QApplication) -> None:
    """Qt resolves ``palette(...)`` in style sheets when they are set; set them again so they follow."""
    # only widgets inside live windows: allWidgets() also lists widgets being destroyed (a crash)
    for window in app.topLevelWidgets():
        for widget in [window, *window.findChildren(QWidget)]:
            sheet = widget.styleSheet()
            if sheet:
                widget.setStyleSheet(sheet)


def add_theme_menu(view_menu: QMenu, manager: ThemeManager) -> QActionGroup:
    """View > Theme: System, Light or Dark, the current choice checked; returns the choices' group."""
    view_menu.addSeparator()
    menu = view_menu.addMenu("&Theme")
    group = QActionGroup(menu)
    for theme, label in ((Theme.SYSTEM, "&System"), (Theme.LIGHT, "&Light"), (Theme.DARK, "&Dark")):
        action = QAction(label, menu)
        action.triggered.connect(lambda _=False, t=theme: manager.set_choice(t))
        action.setCheckable(True)
        action.setChecked(manager.choice is theme)
        action.setData(theme.value)
        group.addAction(action)
        menu.addAction(action)
    return group
