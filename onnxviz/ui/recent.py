"""The File > Open Recent menu, newest first, persisted in the settings."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

from onnxviz.model.events import Signal
from onnxviz.ui.settings import read_list

KEY = "recent/files"
MAX_FILES = 12


class RecentFiles:
    """A list of absolute paths kept in ``settings`` and mirrored into a menu."""

    def __init__(self, settings: QSettings, menu: QMenu, open_path: Callable[[str], None]) -> None:
        self.settings = settings
        self.menu = menu
        self._open_path = open_path
        self.changed: Signal[list[str]] = Signal()  # the new list, newest first
        self.menu.aboutToShow.connect(self.rebuild_menu)
        self.rebuild_menu()

    def paths(self) -> list[str]:
        return read_list(self.settings, KEY)

    def add(self, path: str | Path) -> None:
        full = str(Path(path).absolute())
        paths = [full] + [p for p in self.paths() if p != full]
        self._store(paths[:MAX_FILES])

    def clear(self) -> None:
        self._store([])

    def _store(self, paths: list[str]) -> None:
        self.settings.setValue(KEY, paths)
        self.settings.sync()
        self.rebuild_menu()
        self.changed.emit(paths)

    def rebuild_menu(self) -> None:
        self.menu.clear()
        paths = self.paths()
        for number, path in enumerate(paths, start=1):
            self.menu.addAction(self._action_for(number, Path(path)))
        if not paths:
            empty = self.menu.addAction("No recent files")
            empty.setEnabled(False)
        self.menu.addSeparator()
        clear = self.menu.addAction("Clear Recent Files")
        clear.setEnabled(bool(paths))
        clear.triggered.connect(self.clear)

    def _action_for(self, number: int, path: Path) -> QAction:
        prefix = f"&{number} " if number < 10 else ""
        label = f"{path.name}    {short_folder(path.parent)}".replace("&", "&&")  # '&' is a mnemonic marker
        action = QAction(prefix + label, self.menu)
        action.setData(str(path))
        action.setToolTip(str(path))
        action.setStatusTip(str(path))
        if not path.exists():
            action.setEnabled(False)
            action.setText(action.text() + "  (missing)")
        action.triggered.connect(lambda _=False, p=str(path): self._open_path(p))
        return action


def short_folder(folder: Path) -> str:
    home = Path.home()
    try:
        return "~/" + str(folder.relative_to(home))
    except ValueError:
        return str(folder)
