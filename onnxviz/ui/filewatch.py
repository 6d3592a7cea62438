"""Notice when the open file changes on disk, debounced, including editors that replace the file.

QFileSystemWatcher stops watching a path once it is deleted or renamed over, which
is what most tools do when they save; so the folder is watched as well and the
file is re-added whenever it is back. A change is only reported when the file's
(size, mtime) differ from what we last saw, so our own saves are not reported.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal

Stamp = tuple[int, int] | None  # (size, mtime_ns), None when the file is missing


def file_stamp(path: Path) -> Stamp:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns)


class FileWatcher(QObject):
    """Watches one file; emits :attr:`changed` once the file settles after a change."""

    changed = Signal(str)  # the path

    def __init__(self, debounce_ms: int = 400, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.path: Path | None = None
        self._stamp: Stamp = None
        self._watcher = QFileSystemWatcher(self)
        self._watcher.fileChanged.connect(self._poke)
        self._watcher.directoryChanged.connect(self._poke_if_ours)
        self._timer = QTimer(self, singleShot=True, interval=debounce_ms)
        self._timer.timeout.connect(self._settle)

    def watch(self, path: str | Path | None) -> None:
        """Start watching ``path`` (None stops)."""
        self._unwatch_all()
        self.path = Path(path).absolute() if path is not None else None
        if self.path is None:
            return
        self._stamp = file_stamp(self.path)
        self._watcher.addPath(str(self.path.parent))
        self._rewatch_file()

    def _unwatch_all(self) -> None:
        paths = self._watcher.files() + self._watcher.directories()
        if paths:
            self._watcher.removePaths(paths)
        self._timer.stop()

    def _rewatch_file(self) -> None:
        if self.path is not None and self.path.exists() and str(self.path) not in self._watcher.files():
            self._watcher.addPath(str(self.path))

    def _poke(self, _path: str) -> None:
        self._timer.start()  # restart: an editor writing in chunks produces a burst of events

    def _poke_if_ours(self, _folder: str) -> None:
        # a busy folder (downloads, build output) must not keep postponing our own file's change
        # (only file events postpone the report; folder events just make sure one is coming)
        if self.path is not None and not self._timer.isActive() and file_stamp(self.path) != self._stamp:
            self._timer.start()

    def _settle(self) -> None:
        if self.path is None:
            return
        self._rewatch_file()
        stamp = file_stamp(self.path)
        if stamp is None or stamp == self._stamp:
            return  # deleted (maybe mid-replace; the folder event brings us back) or unchanged
        self._stamp = stamp
        self.changed.emit(str(self.path))
