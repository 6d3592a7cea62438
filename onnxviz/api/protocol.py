"""The messages between ``onnxviz.show``'s handle and its window, a process of its own (``onnxviz --remote
FOLDER``): one JSON object per line, the handle's requests on the window's stdin, the window's events on its
stdout (the window's own prints go to stderr). No model passes through them: a model held in memory is
written to a file in FOLDER, a folder of the handle's own that the window removes when it ends.

Requests (``op``), each with an ``id``:

* ``show``: ``path`` (a model file), ``name`` (the title of a copy made for the window, with no file of its
  own; None for the user's own file), ``inputs`` (input name -> .npy file to run the model with, or none);
* ``screenshot``: ``path``, a PNG to write of the window as it is;
* ``close``: close the window, as its user would (unsaved edits are asked about).

Events (``event``): ``ready`` (the window is up), ``shown`` (``id``, ``name``, ``nodes``: the model is drawn),
``failed`` (``id``, ``message``: it could not be opened), ``kept`` (``id``: the user kept their unsaved edits
rather than take the new model), ``ran`` (``id``, ``ok``, ``message``: the run with the given inputs ended),
``screenshot`` (``id``, ``ok``, ``message``), ``closed`` (the window closed; the process ends).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from onnxviz.model.errors import OnnxvizError
from onnxviz.model.io.disk import atomic_write, process_alive

REMOTE_OPTION = "--remote"
FOLDER_PREFIX = "onnxviz-show-"  # the hand-over folders (tempfile.mkdtemp's prefix)
PID_FILE = "window.pid"  # in a hand-over folder: the process of the window it belongs to
UNCLAIMED_S = 3600.0  # a hand-over folder no window has claimed for this long was left by a failed start
MAX_LINE = 1 << 20  # bytes: no message comes near it (paths and names); a longer line is not read whole


def encode(message: dict[str, Any]) -> bytes:
    """``message`` as one line (non-ASCII escaped: a newline in a name cannot split it)."""
    return json.dumps(message, ensure_ascii=True).encode("ascii") + b"\n"


def decode(line: bytes) -> dict[str, Any] | None:
    """The message of one line, or None when it is not one (a stray print, a cut line)."""
    try:
        message = json.loads(line)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


def read_message(stream: IO[bytes] | FdLines) -> dict[str, Any] | None:
    """The next message on ``stream``, skipping lines that are none; None at its end."""
    while True:
        line = stream.readline(MAX_LINE)
        if not line:
            return None
        message = decode(line)
        if message is not None:
            return message


class FdLines:
    """Lines read straight from a file descriptor, without Python's buffered file: a thread blocked reading
    stdin through ``sys.stdin`` holds that file's lock, and the interpreter then aborts as it ends."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._pending = b""

    def readline(self, limit: int = MAX_LINE) -> bytes:
        while b"\n" not in self._pending and len(self._pending) < limit:
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                break
            self._pending += chunk
        cut = self._pending.find(b"\n") + 1 or min(len(self._pending), limit)
        line, self._pending = self._pending[:cut], self._pending[cut:]
        return line


def send(stream: IO[bytes], message: dict[str, Any]) -> bool:
    """Write ``message`` to ``stream``; False when nobody reads it any more (the other side has gone)."""
    try:
        stream.write(encode(message))
        stream.flush()
    except (OSError, ValueError):  # BrokenPipeError; ValueError: the stream was closed
        return False
    return True


@dataclass
class Link:
    """The window's side of the link: requests come on ``requests`` (stdin), events go to ``events`` (the
    original stdout); ``first`` is the first request (None when the handle went away before sending one)."""

    folder: Path
    requests: FdLines
    events: IO[bytes]
    first: dict[str, Any] | None

    @classmethod
    def take(cls, folder: str) -> Link:
        """Take stdin and stdout for the protocol, before anything prints: the process's own prints (and its
        libraries') go to stderr from now on, never among the events; then read the first request."""
        events = os.fdopen(os.dup(1), "wb")
        os.dup2(2, 1)
        requests = FdLines(sys.stdin.fileno())
        link = cls(Path(folder), requests, events, read_message(requests))
        link.claim()
        return link

    def claim(self) -> None:
        """Say which process the folder belongs to, so that it is removed if this one is killed (see
        :func:`remove_stale_folders`)."""
        if self.folder.name.startswith(FOLDER_PREFIX) and self.folder.is_dir():
            try:
                atomic_write(self.folder / PID_FILE, str(os.getpid()).encode("ascii"), durable=False)
            except OnnxvizError:
                pass  # the folder is then removed only when this window ends

    def send(self, message: dict[str, Any]) -> bool:
        return send(self.events, message)

    def remove_folder(self) -> None:
        """Remove the hand-over folder: only one the handle made (``onnxviz-show-*`` in the temporary
        folder), never a folder ``--remote`` was given by mistake."""
        folder = self.folder.resolve()
        if folder.name.startswith(FOLDER_PREFIX) and folder.parent == Path(tempfile.gettempdir()).resolve():
            shutil.rmtree(folder, ignore_errors=True)

    def remove_before(self, ident: int) -> None:
        """Remove the files handed over for the requests before ``ident`` (their models are no longer shown)."""
        if not self.folder.name.startswith(FOLDER_PREFIX):
            return
        for sub in self.folder.iterdir():
            if sub.name.isdigit() and int(sub.name) < ident:
                shutil.rmtree(sub, ignore_errors=True)


def remove_stale_folders(temp: Path | None = None) -> list[Path]:
    """Remove the hand-over folders of windows that were killed (their process is gone) or never started
    (unclaimed for an hour); returns them. A window removes its own folder when it ends normally."""
    temp = temp or Path(tempfile.gettempdir())
    removed = []
    for folder in temp.glob(f"{FOLDER_PREFIX}*"):
        if folder.is_dir() and not folder.is_symlink() and _abandoned(folder):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def _abandoned(folder: Path) -> bool:
    try:
        pid = int((folder / PID_FILE).read_text(encoding="ascii").strip())
    except FileNotFoundError:
        try:
            return time.time() - folder.stat().st_mtime > UNCLAIMED_S
        except OSError:
            return False
    except (OSError, ValueError):
        return False
    return not process_alive(pid)


    return True
