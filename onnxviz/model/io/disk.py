"""Writing files so that a failure or a kill at any point leaves the user's files as they were.

Every file is written to a temporary file beside its target, named for what it is
(``.model.onnx.onnxviz-saving-4242.tmp``: hidden, our own, the writing process), flushed to disk,
then renamed over the target in one step. The temporary file is removed on every failure path;
one left by a killed process is removed the next time onnxviz saves into that folder. A new file is
created with mode 0666 less the umask, as any program's; a replaced file keeps its mode.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import zip_longest
from pathlib import Path
from typing import BinaryIO

from onnxviz.model.errors import SaveError

_TEMP_MARK = ".onnxviz-saving-"
_TEMP_NAME = re.compile(r"^\..+\.onnxviz-saving-(\d+)\.tmp$")
_CHUNK = 8 * 1024 * 1024
# copy_file_range's answers that mean "not here" (old kernel, two file systems, a file system without it)
_NO_KERNEL_COPY = {errno.ENOSYS, errno.EXDEV, errno.EINVAL, errno.EOPNOTSUPP, errno.EBADF, errno.EPERM}
Write = Callable[[bytes | memoryview], object]


@dataclass(frozen=True)
class FileStamp:
    """What identifies one version of a file without reading it: a rewrite in place changes the
    size or the modification time, a replacement by rename changes the inode."""

    size: int
    mtime_ns: int
    inode: int
    device: int

    @classmethod
    def of(cls, path: Path) -> FileStamp | None:
        """The stamp of ``path`` now; None when there is no such file."""
        try:
            st = os.stat(path)
        except OSError:
            return None
        return cls(st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev)


def temp_path(target: Path) -> Path:
    """The temporary file a save of ``target`` writes first."""
    return target.with_name(f".{target.name}{_TEMP_MARK}{os.getpid()}.tmp")


Written = Callable[[int], object]  # told the size of each chunk once it is written; may raise to give up


def write_chunks(data: bytes | memoryview, write: Write, written: Written | None = None) -> None:
    """Hand ``data`` to ``write`` a chunk at a time; ``written`` hears of each chunk's size (and may raise)."""
    view = memoryview(data)
    for at in range(0, len(view), _CHUNK):
        chunk = view[at:at + _CHUNK]
        write(chunk)
        if written is not None:
            written(len(chunk))


def atomic_write(target: Path, data: bytes | memoryview, written: Written | None = None) -> None:
    """Write ``data`` to ``target`` in one step (see the module's docstring), a chunk at a time."""
    atomic_write_with(target, lambda write: write_chunks(data, write, written))


def atomic_copy(source: Path, target: Path, written: Written | None = None) -> None:
    """Copy ``source`` to ``target`` in one step, a chunk at a time (in the kernel where it can: no byte passes
    through this process, and the GIL is free throughout)."""
    try:
        src = open(source, "rb")  # closed by the with below
    except FileNotFoundError as exc:
        raise SaveError(f"{source.name} could not be read: it is gone.", str(exc)) from exc
    with src, _replacing(target) as dst:
        if not _copy_in_kernel(src, dst, written):
            while chunk := src.read(_CHUNK):
                dst.write(chunk)
                if written is not None:
                    written(len(chunk))


def _copy_in_kernel(src: BinaryIO, dst: BinaryIO, written: Written | None) -> bool:
    """Copy ``src`` to ``dst`` with ``copy_file_range`` (Linux), ``written`` told of each chunk; False, with nothing
    copied, when this system or these file systems cannot (then the caller copies through memory). Some file
    systems answer "nothing to copy" for a file that has bytes: that is taken as "cannot" too."""
    copy = getattr(os, "copy_file_range", None)
    if copy is None:
        return False
    try:
        count = copy(src.fileno(), dst.fileno(), _CHUNK)
    except OSError as exc:
        if exc.errno in _NO_KERNEL_COPY:
            return False
        raise
    if count == 0 and os.fstat(src.fileno()).st_size > 0:
        return False
    while count:
        if written is not None:
            written(count)
        count = copy(src.fileno(), dst.fileno(), _CHUNK)
    return True


def atomic_write_with(target: Path, produce: Callable[[Write], object]) -> None:
    """Write what ``produce`` hands to its ``write`` argument into ``target`` in one step."""
    with _replacing(target) as f:
        produce(f.write)


@contextlib.contextmanager
def _replacing(target: Path) -> Iterator[BinaryIO]:
    """A new temporary file beside ``target`` to write; when the block ends, it is synced and renamed over
    ``target``. On any failure the temporary file is removed and ``target`` stays as it was."""
    if target.is_dir():
        raise SaveError(f"{target} is a folder; choose a file name.")
    remove_stale_temps(target.parent)
    tmp = temp_path(target)
    try:
        with _new_file(tmp) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        _keep_mode(target, tmp)
        os.replace(tmp, target)
        _sync_folder(target.parent)
    except OSError as exc:
        raise SaveError(f"could not save {target.name}: {exc.strerror or exc}.", str(exc)) from exc
    finally:
        _remove_quietly(tmp)


@contextlib.contextmanager
def _new_file(path: Path) -> Iterator[BinaryIO]:
    """``path`` created anew for writing, never following a link; the umask applies to its mode."""
    _remove_quietly(path)  # our own pid's leftover; a stranger's file of that name is not ours to keep
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o666)
    with os.fdopen(fd, "wb", buffering=0) as f:
        yield f


def _keep_mode(target: Path, tmp: Path) -> None:
    try:
        st = os.stat(target)
    except FileNotFoundError:
        return
    os.chmod(tmp, stat.S_IMODE(st.st_mode))


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable (a power cut right after it keeps the new file)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems cannot sync a folder; the data itself was synced
    finally:
        os.close(fd)


def _remove_quietly(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def remove_stale_temps(folder: Path) -> list[Path]:
    """Remove the temporary files that killed saves (by processes no longer running) left in ``folder``;
    returns what was removed. Only regular files named as this module names them are touched."""
    removed: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        match = _TEMP_NAME.match(entry.name)
        if match is None or _running(int(match.group(1))):
            continue
        with contextlib.suppress(OSError):
            if entry.is_file(follow_symlinks=False):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
    return removed


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return False  # a leftover of this process is never in use: each save removes its own
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def same_content(path: Path, data: bytes | memoryview) -> bool:
    """True if the file at ``path`` holds exactly ``data`` (read a chunk at a time)."""
    view = memoryview(data)
    return _same_stream(path, len(view), (view[at:at + _CHUNK] for at in range(0, len(view), _CHUNK)))


def same_files(a: Path, b: Path) -> bool:
    """True if ``a`` and ``b`` are one file, or two files with the same bytes."""
    try:
        return os.path.samefile(a, b) or _same_stream(a, os.stat(b).st_size, _chunks(b))
    except OSError:
        return False


def _same_stream(path: Path, size: int, chunks: Iterator[bytes | memoryview]) -> bool:
    """True if the file at ``path`` is ``size`` bytes long and reads as ``chunks`` (of :data:`_CHUNK` bytes)."""
    try:
        return os.stat(path).st_size == size and all(x == y for x, y in zip_longest(_chunks(path), chunks))
    except OSError:
        return False


def _chunks(path: Path) -> Iterator[bytes]:
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            yield chunk
