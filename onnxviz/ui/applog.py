"""The app log: a text file in the user's data folder where what went wrong is written for later.

:func:`warn` is for damage the app recovered from on its own (a settings entry it dropped): logged and
appended to the file, never shown in a dialog.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from PySide6.QtCore import QStandardPaths

from onnxviz.model.io.disk import append_text

log = logging.getLogger("onnxviz")
_log_file: Path | None = None  # set by use_log_file (tests)


def log_path() -> Path:
    if _log_file is not None:
        return _log_file
    base = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppLocalDataLocation) or str(Path.home())
    return Path(base) / "onnxviz.log"


def use_log_file(path: Path | None) -> None:
    """Write the log to ``path`` from now on (None: the user's data folder)."""
    global _log_file
    _log_file = path


def append_log(text: str, path: Path | None = None) -> None:
    """``text`` and a newline at the end of the log file (a log that cannot be written is no reason to stop)."""
    try:
        target = path if path is not None else log_path()
        target.parent.mkdir(parents=True, exist_ok=True)
        append_text(target, text + "\n")  # every byte checked: a full disk is an OSError, not a cut line
    except OSError:
        pass


def warn(text: str) -> None:
    log.warning(text)
    append_log(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {text}")
