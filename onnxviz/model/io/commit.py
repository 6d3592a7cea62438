"""A save that writes a model and its data files is one step: the model file's rename commits it.

The data files a save writes never take the place of a file the model being replaced reads: they get
names of their own (``model.onnx.data``, or ``model.onnx.1.data`` while the old model reads the first), so
until the model file is renamed into place the old model reads its old data, and after it the new model
its new data. Before the first data file is written, a journal beside the model (``.model.onnx.onnxviz-
saving-PID.journal``) names the files the save creates and the old data files the new model no longer reads;
after the rename those old files are removed, then the journal. A kill at any point leaves either the old
model with its old data or the new model with its new data; the journal it leaves lets the next open or save
in that folder finish: when the model file names the new files, the old ones go, else the new ones do.

An old data file is removed only when it is named after the model (``model.onnx.data``, ``model.onnx.3.data``)
or was written by onnxviz for it, and no other model file in the folder mentions its name.
"""

from __future__ import annotations

import contextlib
import json
import mmap
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from onnxviz.model.io.disk import TEMP_MARK, atomic_write, remove_stale_temps, running, sync_folder

_JOURNAL_NAME = re.compile(r"^\..+\.onnxviz-saving-(\d+)\.journal$")
_MODEL_SUFFIXES = (".onnx",)


def journal_path(model: Path) -> Path:
    return model.with_name(f".{model.name}{TEMP_MARK}{os.getpid()}.journal")


def mentions(path: Path, name: str) -> bool:
    """Whether the file at ``path`` holds the bytes of ``name`` (a model naming a data file does; read through
    a memory map, a few GB a second). True when the file cannot be read: then nothing is assumed unused."""
    try:
        with open(path, "rb") as f:
            if os.fstat(f.fileno()).st_size == 0:
                return False
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
                return m.find(name.encode("utf-8")) >= 0
    except FileNotFoundError:
        return False
    except (OSError, ValueError):
        return True


def family(model: Path, location: str) -> bool:
    """Whether data file ``location`` is named after ``model``: ``model.onnx.data`` or ``model.onnx.<n>.data``."""
    return re.fullmatch(re.escape(model.name) + r"(\.\d+)?\.data", location) is not None


def used_elsewhere(folder: Path, location: str, model: Path) -> bool:
    """Whether a model file in ``folder`` other than ``model`` mentions data file ``location``."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return True
    for entry in entries:
        if entry.name.endswith(_MODEL_SUFFIXES) and entry.name != model.name and mentions(Path(entry.path), location):
            return True
    return False


@dataclass
class Journal:
    """What a save of ``model`` creates (``new``) and retires (``old``): data file locations in its folder."""

    model: Path
    new: list[str] = field(default_factory=list)
    old: list[str] = field(default_factory=list)
    path: Path | None = None

    def begin(self) -> None:
        """Written (synced) before the first data file, when the save creates or retires any."""
        if not self.new and not self.old:
            return
        self.path = journal_path(self.model)
        text = json.dumps({"model": self.model.name, "new": self.new, "old": self.old})
        atomic_write(self.path, text.encode("utf-8"), shown=self.model.name)

    def finish(self) -> None:
        """After the commit: the old data files the new model does not read are removed, then the journal."""
        _remove_unread(self.model, self.old)
        self.close()

    def abandon(self) -> None:
        """The save failed before its commit: the files it created are removed, then the journal."""
        _remove_unread(self.model, self.new)
        self.close()

    def close(self) -> None:
        if self.path is not None:
            sync_folder(self.model.parent)
            with contextlib.suppress(OSError):
                self.path.unlink()
            self.path = None


def _remove_unread(model: Path, locations: list[str]) -> None:
    """Remove each data file of ``locations`` (in ``model``'s folder) that no model file there mentions."""
    folder = model.parent
    for location in locations:
        if mentions(model, location) or used_elsewhere(folder, location, model):
            continue
        with contextlib.suppress(OSError):
            (folder / location).unlink()


def recover(folder: Path) -> None:
    """Finish what killed saves left in ``folder``: their temporary files removed, each journal of a process no
    longer running played forward (the model file names its new data files: the old ones go) or back (it does
    not: the new ones go)."""
    remove_stale_temps(folder)
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        match = _JOURNAL_NAME.match(entry.name)
        if match is None or running(int(match.group(1))) or not entry.is_file(follow_symlinks=False):
            continue
        journal = _read(Path(entry.path))
        if journal is not None:  # whichever files the model file does not name are the ones to go
            _remove_unread(journal.model, [*journal.new, *journal.old])
            journal.close()


def _read(path: Path) -> Journal | None:
    try:
        data = json.loads(path.read_bytes())
        model = path.parent / str(data["model"])
        new, old = [str(n) for n in data["new"]], [str(n) for n in data["old"]]
    except (OSError, ValueError, KeyError, TypeError):
        with contextlib.suppress(OSError):
            path.unlink()  # not a journal onnxviz wrote whole (each is written in one step)
        return None
    if any(not _inside(n) for n in (*new, *old)) or "/" in model.name:
        return None  # names another folder: not ours
    return Journal(model, new, old, path)


def _inside(location: str) -> bool:
    return bool(location) and not location.startswith(("/", "\\")) and ".." not in re.split(r"[/\\]", location)
