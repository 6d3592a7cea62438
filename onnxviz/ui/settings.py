"""Where the window keeps what it remembers between runs (recent files, theme, geometry).

One INI file per user, found through QSettings' user scope, so tests can point
every window at a temporary folder with :func:`use_settings_dir`.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings

ORGANIZATION = "onnxviz"
APPLICATION = "onnxviz"


def open_settings() -> QSettings:
    """The user's settings (an INI file in the platform's config folder)."""
    return QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORGANIZATION, APPLICATION)


def use_settings_dir(folder: str | Path) -> None:
    """Make every later :func:`open_settings` use ``folder`` (tests; portable installs)."""
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(folder))


def read_bool(settings: QSettings, key: str, default: bool) -> bool:
    value = settings.value(key, default)
    if isinstance(value, str):  # INI files give strings back
        return value.lower() in ("1", "true", "yes")
    return bool(value)


def read_list(settings: QSettings, key: str) -> list[str]:
    value = settings.value(key, [])
    if value is None:
        return []
    if isinstance(value, str):  # a one-element list comes back as a bare string
        return [value] if value else []
    if not isinstance(value, (list, tuple)):  # a hand-edited or damaged file: start afresh
        return []
    return [str(v) for v in value]


def read_bytes(settings: QSettings, key: str) -> QByteArray | None:
    """A saved window geometry/state, or None when missing or not bytes (a damaged file)."""
    value = settings.value(key)
    if isinstance(value, (bytes, bytearray)):
        return QByteArray(bytes(value))
    return value if isinstance(value, QByteArray) else None
