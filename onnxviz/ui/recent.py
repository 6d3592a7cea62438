"""The File > Open Recent menu, newest first, persisted in the settings."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

from onnxviz.model.events import Signal
from onnxviz.ui.settings import read_list, sync
from onnxviz.ui.widgets.names import plain_tooltip

KEY = "recent/files"
MAX_FILES = 12
MAX_PATH_BYTES = 4096  # Linux's PATH_MAX
MAX_NAME_BYTES = 255   # of one component (NAME_MAX): a longer one made Path.exists() raise at start-up


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
        return read_list(self.settings, KEY, MAX_FILES, path_problem)

    def add(self, path: str | Path) -> None:
        full = str(Path(path).absolute())
        paths = [full] + [p for p in self.paths() if p != full]
        self._store(paths[:MAX_FILES])

    def clear(self) -> None:
        self._store([])

    def _store(self, paths: list[str]) -> None:
        self.settings.setValue(KEY, paths)
        sync(self.settings)
        self.changed.emit(paths)  # the menu is made again as it opens (aboutToShow)

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
        action.setToolTip(plain_tooltip(str(path)))
        action.setStatusTip(str(path))
        if not is_file(path):
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


def path_problem(path: str) -> str:
    """Why ``path`` cannot be a recent file ('' if it can): the settings file is anyone's to edit."""
    encoded = path.encode("utf-8", "surrogateescape")
    if not os.path.isabs(path):
        return "not an absolute path"
    if "\x00" in path:
        return "a NUL character"
    if len(encoded) > MAX_PATH_BYTES:
        return f"longer than {MAX_PATH_BYTES} bytes"
    if any(len(part) > MAX_NAME_BYTES for part in encoded.split(b"/")):
        return f"a folder or file name longer than {MAX_NAME_BYTES} bytes"
    return ""


def is_file(path: str | Path) -> bool:
    """Whether ``path`` is a file now; False for any path the system refuses to look at."""
    try:
        return Path(path).is_file()
    except (OSError, ValueError):
        return False
