"""The data files a model reads, remembered as they were when it was read.

A model is all of its files: a save that leaves the model pointing at a data file another program
rewrote since would write a model the window never showed. So when a model is opened (or saved), each
external data file it reads is remembered by its identity (size, modification time, inode, and a digest of
its size and of blocks spread over it, which tells a same-size rewrite on a file system with coarse times),
and held open: when another program replaces the file (a rename, the usual way), the bytes the window read
stay readable through the held file, and a save can write them into a new data file. A file rewritten in
place has lost those bytes; only reloading helps then.
"""

from __future__ import annotations

import hashlib
import mmap
import os
import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

import onnx

from onnxviz.model.errors import OnnxvizError
from onnxviz.model.io.disk import FileStamp
from onnxviz.model.io.external import external_ref, resolve_location

_SAMPLES = 64  # blocks read for the digest of each data file
_BLOCK = 4096
HOLD_AT_MOST = 128  # data files held open per model (a model of one file per tensor keeps file descriptors for all)


class DataState(Enum):
    UNCHANGED = "unchanged"
    REPLACED = "replaced"  # another file (or none) is at its place now; the bytes read are held
    LOST = "lost"  # rewritten in place, or replaced while not held: the bytes read are gone


def sample_digest(fd: int, size: int) -> bytes:
    """A digest of ``size`` and of :data:`_SAMPLES` blocks spread over the file open as ``fd`` (first and last
    included): reading 256 KiB tells most same-size rewrites of a file of any size."""
    h = hashlib.blake2b(size.to_bytes(8, "little"), digest_size=16)
    if size <= _SAMPLES * _BLOCK:
        h.update(os.pread(fd, size, 0))
        return h.digest()
    step = (size - _BLOCK) // (_SAMPLES - 1)
    for k in range(_SAMPLES):
        h.update(os.pread(fd, _BLOCK, k * step))
    return h.digest()


@dataclass
class HeldFile:
    """One data file: where the model reads it (``path``: the model's folder and the location, links unresolved,
    so a link pointed elsewhere is a change), its identity when read, and the file itself held open (``fd``,
    None beyond :data:`HOLD_AT_MOST` files; closed with the last reference to it)."""

    location: str
    base_dir: Path
    stamp: FileStamp
    digest: bytes
    fd: int | None

    @property
    def path(self) -> Path:
        return self.base_dir / self.location

    def state(self) -> DataState:
        """What became of the bytes read since (see the module's text). A file whose size and sampled
        blocks are the same is taken as unchanged when only its time moved (``touch``)."""
        if self.fd is not None and not self._holds_what_was_read():
            return DataState.LOST  # the file held was rewritten in place
        now = _stamp_and_digest(self.path)
        if now is None:
            return DataState.REPLACED if self.fd is not None else DataState.LOST
        stamp, digest = now
        if stamp.same_file(self.stamp):
            return DataState.UNCHANGED if (stamp.size, digest) == (self.stamp.size, self.digest) else DataState.LOST
        if self.fd is None:
            return DataState.LOST
        return DataState.UNCHANGED if same_bytes(self.fd, self.path) else DataState.REPLACED

    def _holds_what_was_read(self) -> bool:
        assert self.fd is not None
        try:
            size = os.fstat(self.fd).st_size
            return size == self.stamp.size and sample_digest(self.fd, size) == self.digest
        except OSError:
            return False


def _stamp_and_digest(path: Path) -> tuple[FileStamp, bytes] | None:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        stamp = FileStamp.from_stat(os.fstat(fd))
        return stamp, sample_digest(fd, stamp.size)
    except OSError:
        return None
    finally:
        os.close(fd)


def same_bytes(fd: int, path: Path) -> bool:
    """Whether the file open as ``fd`` and the one at ``path`` hold the same bytes."""
    try:
        with open(path, "rb") as f:
            size = os.fstat(fd).st_size
            if os.fstat(f.fileno()).st_size != size:
                return False
            at = 0
            while at < size:
                chunk = f.read(8 << 20)
                if not chunk or chunk != os.pread(fd, len(chunk), at):
                    return False
                at += len(chunk)
            return True
    except OSError:
        return False


class DataFiles:
    """Every external data file of a model as it was read: by location (as the model names it)."""

    def __init__(self, files: dict[str, HeldFile]) -> None:
        self.files = files

    @classmethod
    def of(cls, tensors: Iterable[onnx.TensorProto], base_dir: Path | None) -> DataFiles:
        """The data files ``tensors`` (a model's, stored externally) are read from in ``base_dir``, as they are now
        (those that cannot be read are left out: they are load problems already)."""
        files: dict[str, HeldFile] = {}
        if base_dir is None:
            return cls(files)
        seen: set[str] = set()
        for tensor in tensors:
            location = next((e.value for e in tensor.external_data if e.key == "location"), "")
            if location in seen:
                continue
            seen.add(location)
            held = _hold(base_dir, location, keep_open=len(files) < HOLD_AT_MOST)
            if held is not None:
                files[location] = held
        return cls(files)

    def refreshed(self) -> DataFiles:
        """The same files, each one whose stamp moved (touched, or replaced by the same bytes: a save checked it
        is unchanged) held anew, as it is now."""
        files = {}
        for location, held in self.files.items():
            if FileStamp.of(held.path) == held.stamp:
                files[location] = held
            else:
                again = _hold(held.base_dir, location, keep_open=held.fd is not None)
                if again is not None:
                    files[location] = again
        return DataFiles(files)

    def changed(self) -> dict[str, DataState]:
        """The data files whose bytes are no longer the ones read, with what became of them."""
        states = {location: held.state() for location, held in self.files.items()}
        return {location: state for location, state in states.items() if state is not DataState.UNCHANGED}

    def fd(self, location: str) -> int | None:
        held = self.files.get(location)
        return held.fd if held is not None else None

    def tensor_bytes(self, tensor: onnx.TensorProto) -> memoryview | None:
        """``tensor``'s bytes from the held file it was read from (memory-mapped), or None when its file is not held."""
        ref = external_ref(tensor)
        fd = self.fd(ref.location)
        if fd is None:
            return None
        size = os.fstat(fd).st_size
        length = size - ref.offset if ref.length is None else ref.length
        if ref.offset + length > size:
            raise OnnxvizError(f"tensor '{tensor.name}': external file '{ref.location}' is shorter than its offset "
                               "and length.")
        if length == 0:
            return memoryview(b"")
        return memoryview(mmap.mmap(fd, 0, access=mmap.ACCESS_READ))[ref.offset:ref.offset + length]


def _hold(base_dir: Path, location: str, keep_open: bool) -> HeldFile | None:
    try:
        fd = os.open(resolve_location(base_dir, location), os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except (OnnxvizError, OSError):
        return None
    try:
        stamp = FileStamp.from_stat(os.fstat(fd))
        digest = sample_digest(fd, stamp.size)
    except OSError:
        os.close(fd)
        return None
    if not keep_open:
        os.close(fd)
    held = HeldFile(location, base_dir, stamp, digest, fd if keep_open else None)
    if keep_open:
        weakref.finalize(held, os.close, fd)  # the file is let go with the last reference to it
    return held
