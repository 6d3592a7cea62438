"""Where the window keeps what it remembers between runs (recent files, theme, geometry).

One INI file per user, found through QSettings' user scope, so tests can point
every window at a temporary folder with :func:`use_settings_dir`.

The file is anyone's to edit or damage, and nothing in it may stop the app or slow its start: a file
that is not a regular file (a FIFO, a link to ``/dev/zero``) or is bigger than :data:`MAX_FILE_BYTES`
is moved aside unread, and each value is read through a ``read_*`` function here that checks its type
and size; a bad one is dropped from the file with a line in the app log (:func:`~onnxviz.ui.applog.warn`).
"""

from __future__ import annotations

import json
import os
import re
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings, QStandardPaths

from onnxviz.model.text import display_name
from onnxviz.ui.applog import warn

ORGANIZATION = "onnxviz"
APPLICATION = "onnxviz"
MAX_FILE_BYTES = 4_000_000  # what onnxviz writes is a few KB; QSettings reads the whole file as it starts (~20 ms a MB)
MAX_BYTES_VALUE = 64_000     # a window geometry or state (a few hundred bytes to a few KB when written by Qt)
MAX_JSON_CHARS = 64_000      # of a value onnxviz writes as JSON (remembered dimension sizes: a few hundred)
MAX_JSON_DEPTH = 8           # its nesting: onnxviz writes one level (a 100,000-deep array made json recurse out)
BRIEF_CHARS = 120            # of a dropped value quoted in the log
LOGGED_ITEMS = 3             # bad items of one list named in the log; the rest are counted
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off", "")
_folder: Path | None = None  # set by use_settings_dir


def settings_file() -> Path:
    """The INI file :func:`open_settings` reads (``~/.config/onnxviz/onnxviz.ini`` on Linux)."""
    base = _folder if _folder is not None else Path(
        QStandardPaths.writableLocation(QStandardPaths.StandardLocation.GenericConfigLocation))
    return base / ORGANIZATION / f"{APPLICATION}.ini"


def open_settings() -> QSettings:
    """The user's settings (an INI file in the platform's config folder), the file set aside first if
    it cannot be read safely; settings kept for this run only if even that fails."""
    path = settings_file()
    if not _set_aside_if_unsafe(path):
        spare = Path(tempfile.mkdtemp(prefix="onnxviz-settings-")) / f"{APPLICATION}.ini"
        return QSettings(str(spare), QSettings.Format.IniFormat)
    settings = QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORGANIZATION, APPLICATION)
    settings.setFallbacksEnabled(False)  # only the user's file: no system-wide defaults mixed in
    return settings


def use_settings_dir(folder: str | Path) -> None:
    """Make every later :func:`open_settings` use ``folder`` (tests; portable installs)."""
    global _folder
    _folder = Path(folder)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(folder))


def _set_aside_if_unsafe(path: Path) -> bool:
    """Move ``path`` to ``<name>.set-aside`` if it is not a regular file of at most :data:`MAX_FILE_BYTES`
    (reading a FIFO would wait forever, a link to /dev/zero would fill the memory); False if it is unsafe
    and could not be moved."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return True  # missing (the usual first start) or unreachable: QSettings reads nothing either
    if stat.S_ISREG(info.st_mode) and info.st_size <= MAX_FILE_BYTES:
        return True
    what = f"{info.st_size:,} bytes" if stat.S_ISREG(info.st_mode) else "not a regular file"
    aside = path.with_name(path.name + ".set-aside")
    try:
        os.replace(path, aside)
    except OSError as exc:
        warn(f"The settings file {path} is {what} and could not be moved aside ({exc.strerror}): "
             "settings are not remembered this time.")
        return False
    warn(f"The settings file {path} is {what}: moved to {aside}; starting with default settings.")
    return True


def sync(settings: QSettings) -> bool:
    """Write ``settings`` to their file now; False, with a line in the log (once per file), when it could not be
    written (a full disk, a folder that cannot be written). Qt writes the file anew and renames it into place
    only once it is complete (QSaveFile), so the file then keeps what it held."""
    settings.sync()
    if settings.status() == QSettings.Status.NoError:
        return True
    name = settings.fileName()
    if name not in _unwritable:
        _unwritable.add(name)
        warn(f"Settings could not be saved to {name} (the disk may be full, or the folder read-only); "
             "it keeps what it held.")
    return False


_unwritable: set[str] = set()  # settings files whose failure the log has told


def drop(settings: QSettings, key: str, value: object, why: str) -> None:
    """Remove ``key`` from the file, saying so in the log."""
    warn(f"Settings: dropped {key} = {_brief(value)}: {why}.")
    settings.remove(key)


def _brief(value: object) -> str:
    if isinstance(value, (list, tuple, dict)) and len(value) > LOGGED_ITEMS:
        return f"a {type(value).__name__} of {len(value):,} items"
    return display_name(repr(value), BRIEF_CHARS)  # the file is at most MAX_FILE_BYTES


def read_bool(settings: QSettings, key: str, default: bool) -> bool:
    value = settings.value(key, default)
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE + _FALSE:  # INI files give strings back
        return value.strip().lower() in _TRUE
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    drop(settings, key, value, "not true or false")
    return default


def read_text(settings: QSettings, key: str, default: str, choices: tuple[str, ...]) -> str:
    """One of ``choices`` (``default`` when missing or anything else)."""
    value = settings.value(key, default)
    if isinstance(value, str) and value in choices:
        return value
    drop(settings, key, value, f"not one of {', '.join(choices)}")
    return default


def read_list(settings: QSettings, key: str, limit: int, problem: Callable[[str], str] = lambda _: "") -> list[str]:
    """At most ``limit`` strings for which ``problem`` says nothing; the rest are dropped from the file
    (the first few named in the log)."""
    value = settings.value(key, [])
    if value is None or value == "":
        return []
    if isinstance(value, str):  # a one-element list comes back as a bare string
        value = [value]
    if not isinstance(value, (list, tuple)):  # a hand-edited or damaged file: start afresh
        drop(settings, key, value, "not a list")
        return []
    kept: list[str] = []
    bad: list[str] = []
    for item in value:
        why = problem(item) if isinstance(item, str) else "not text"
        if why:
            bad.append(f"{_brief(item)} ({why})")
        elif len(kept) < limit:
            kept.append(item)
    if bad or len(value) > len(kept) + len(bad):
        extra = len(value) - len(kept) - len(bad)
        warn(f"Settings: {key} kept {len(kept)} of {len(value):,} entries"
             + (f"; {len(bad):,} were not usable: {', '.join(bad[:LOGGED_ITEMS])}" if bad else "")
             + (f"; {extra:,} past the first {limit}" if extra else "") + ".")
        settings.setValue(key, kept)
    return kept


def read_json_object(settings: QSettings, key: str) -> dict[str, object]:
    """A JSON object onnxviz wrote as text (``{}`` when missing): a value that is no such text, is over
    :data:`MAX_JSON_CHARS`, nests deeper than :data:`MAX_JSON_DEPTH` (looked at before parsing) or is no
    object is dropped from the file with a line in the log."""
    value = settings.value(key, "")
    if value is None or value == "":
        return {}
    why = "not text" if not isinstance(value, str) else \
        f"over {MAX_JSON_CHARS:,} characters" if len(value) > MAX_JSON_CHARS else \
        f"nested over {MAX_JSON_DEPTH} levels deep" if json_depth(value) > MAX_JSON_DEPTH else ""
    if not why and isinstance(value, str):
        try:
            data = json.loads(value)
        except ValueError:
            data, why = None, "not JSON"
        if not why and not isinstance(data, dict):
            why = "not a JSON object"
        if not why:
            return data  # type: ignore[no-any-return]  # a dict, checked
    drop(settings, key, value, why)
    return {}


def json_depth(text: str) -> int:
    """How deep ``text``'s arrays and objects nest (brackets inside strings not counted); one pass in C for
    text without strings or escapes, else a scan."""
    if '"' not in text:
        opened = [m.start() for m in _BRACKETS.finditer(text)]
        depth = deepest = 0
        for k in opened:
            depth += 1 if text[k] in "[{" else -1
            deepest = max(deepest, depth)
        return deepest
    depth = deepest = 0
    in_string = escaped = False
    for c in text:
        if in_string:
            escaped, in_string = (False, True) if escaped else (c == "\\", c != '"')
        elif c == '"':
            in_string = True
        elif c in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "]}":
            depth -= 1
    return deepest


_BRACKETS = re.compile(r"[\[\]{}]")


def read_bytes(settings: QSettings, key: str) -> QByteArray | None:
    """A saved window geometry/state, or None when missing, not bytes or too big (a damaged file)."""
    value = settings.value(key)
    if value is None:
        return None
    data = bytes(value.data()) if isinstance(value, QByteArray) else bytes(value) \
        if isinstance(value, (bytes, bytearray)) else None
    if data is None or len(data) > MAX_BYTES_VALUE:
        drop(settings, key, value if data is None else f"{len(data):,} bytes", "not a saved window layout")
        return None
    return QByteArray(data)
