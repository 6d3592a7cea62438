"""A faulty disk under every file write of onnxviz, for the tests.

:class:`FaultyDisk` takes the place of ``onnxviz.model.io.disk.SYSTEM`` (the one object through which
every byte onnxviz writes reaches a disk) and numbers the calls it sees: each ``write`` and each
``copy_file_range`` is a chunk, each ``fsync`` and each ``replace`` (rename) a step. At the call chosen it
misbehaves as a disk does: a short count (part of the chunk taken; the rest left to the caller), a count of
0, or an error (ENOSPC, EDQUOT, EIO, EFBIG), or it kills the process there (``os._exit``, for the tests that
save in a child process). :func:`count_calls` runs a write once without a fault to learn how many calls of
each kind it makes, so a test can put a fault at every one.
"""

from __future__ import annotations

import errno
import os
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from onnxviz.model.io import disk

ERRNOS = {"ENOSPC": errno.ENOSPC, "EDQUOT": errno.EDQUOT, "EIO": errno.EIO, "EFBIG": errno.EFBIG}
CHUNK_FAULTS = ("short", "zero", *ERRNOS)  # what a chunk can suffer
STEP_FAULTS = ("EIO",)  # what an fsync or a rename can suffer
KILLED = 137


@dataclass
class FaultyDisk(disk.SystemCalls):
    """The calls of :class:`~onnxviz.model.io.disk.SystemCalls`, with a fault at call number ``at`` of kind
    ``on`` ("chunk": write and copy_file_range; "fsync"; "replace"); ``fault`` is one of :data:`CHUNK_FAULTS`,
    "EIO", or "kill". A short count is followed by ENOSPC when ``then_full``. ``seen`` counts every kind."""

    on: str = "chunk"
    at: int = -1
    fault: str = "ENOSPC"
    then_full: bool = False
    seen: Counter[str] = field(default_factory=Counter)
    struck: bool = False
    _full: bool = False

    def _strike(self, kind: str) -> bool:
        number = self.seen[kind]
        self.seen[kind] += 1
        if self._full and kind == "chunk":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        if kind != self.on or number != self.at:
            return False
        self.struck = True
        if self.fault == "kill":
            os._exit(KILLED)
        if self.fault in ERRNOS:
            raise OSError(ERRNOS[self.fault], os.strerror(ERRNOS[self.fault]))
        return True

    def write(self, fd: int, data: memoryview) -> int:
        if not self._strike("chunk"):
            return super().write(fd, data)
        if self.fault == "zero":
            return 0
        part = max(1, len(data) // 3) if len(data) > 1 else 0  # "short": a third of it lands
        self._full = self.then_full
        return super().write(fd, data[:part]) if part else 0

    def copy_file_range(self, src: int, dst: int, count: int, offset_src: int) -> int:
        self.seen["kernel copies"] += 1
        if not self._strike("chunk"):
            return super().copy_file_range(src, dst, count, offset_src)
        if self.fault == "zero":
            return 0
        self._full = self.then_full
        return super().copy_file_range(src, dst, max(1, count // 3), offset_src)

    def fsync(self, fd: int) -> None:
        if self._strike("fsync"):
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        super().fsync(fd)

    def replace(self, source: Path, target: Path) -> None:
        if self._strike("replace"):
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        super().replace(source, target)


@contextmanager
def faulty(monkeypatch: pytest.MonkeyPatch, **kwargs: object) -> Iterator[FaultyDisk]:
    """Every write of onnxviz goes to a :class:`FaultyDisk` made of ``kwargs`` within the block."""
    double = FaultyDisk(**kwargs)  # type: ignore[arg-type]
    with monkeypatch.context() as m:
        m.setattr(disk, "SYSTEM", double)
        yield double


def count_calls(monkeypatch: pytest.MonkeyPatch, action: Callable[[], object]) -> Counter[str]:
    """How many calls of each kind ``action`` makes when nothing goes wrong."""
    with faulty(monkeypatch) as double:
        action()
    return double.seen


def small_chunks(monkeypatch: pytest.MonkeyPatch, size: int = 4096) -> None:
    """Writes and copies in chunks of ``size`` bytes, so a small model has many chunk boundaries."""
    monkeypatch.setattr(disk, "_CHUNK", size)


def temporary_files(root: Path) -> list[str]:
    """Files a save leaves only while it runs: temporary files and journals."""
    return sorted(p.name for p in root.rglob(f"*{disk.TEMP_MARK}*"))


def one_sentence(message: str) -> None:
    """A message a user reads: one sentence, no errno number, no temporary file's name, no path."""
    assert message.endswith("."), message
    assert "\n" not in message and "Errno" not in message and disk.TEMP_MARK not in message, message
    assert "/" not in message, message
