"""Every file onnxviz writes goes through here, so that a full disk or a kill never costs the user a file.

One mechanism for every write (models, data files, run dumps, exported tensors and pictures, the run's
scratch files, the log): the bytes go to the kernel through :class:`SystemCalls` (one object, so a test
can put a faulty disk under all of them), a short count is followed by a write of the rest, an error or a
count of 0 ends the write, and the file's size on disk is compared with what was meant to be written
before anything is renamed.

A file is written to a temporary file beside its target, named for what it is
(``.model.onnx.onnxviz-saving-4242.tmp``: hidden, our own, the writing process), flushed to disk,
then renamed over the target in one step. The temporary file is removed on every failure path; one
left by a killed process is removed the next time onnxviz opens a model in that folder or saves into
it. A new file is created with mode 0666 less the umask, as any program's (a copy takes its source's
mode); a replaced file keeps its mode. A target that is a symbolic link keeps the link: the file it
leads to is replaced (atomically, beside itself). Errors name the file as the caller named it, in
words (``could not save model.onnx: the disk is full.``), the system's own text in the details.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from itertools import zip_longest
from pathlib import Path

from onnxviz.model.errors import SaveError

TEMP_MARK = ".onnxviz-saving-"
_TEMP_NAME = re.compile(r"^\..+\.onnxviz-saving-(\d+)\.tmp$")
_CHUNK = 8 * 1024 * 1024
# copy_file_range's answers that mean "not here" (old kernel, two file systems, a file system without it)
_NO_KERNEL_COPY = {errno.ENOSYS, errno.EXDEV, errno.EINVAL, errno.EOPNOTSUPP, errno.EBADF, errno.EPERM}
Write = Callable[[bytes | memoryview], object]
Written = Callable[[int], object]  # told the size of each chunk once it is written; may raise to give up


class SystemCalls:
    """The calls by which onnxviz's bytes reach a disk: each looked up on ``os`` when made. Tests put a
    faulty disk in :data:`SYSTEM`'s place (short counts, ENOSPC, EIO... at any chunk)."""

    def write(self, fd: int, data: memoryview) -> int:
        return os.write(fd, data)

    def copy_file_range(self, src: int, dst: int, count: int, offset_src: int) -> int:
        """``count`` bytes of ``src`` from ``offset_src`` to ``dst`` at its position; raises ENOSYS without it."""
        copy = getattr(os, "copy_file_range", None)
        if copy is None:
            raise OSError(errno.ENOSYS, "copy_file_range is not available")
        return int(copy(src, dst, count, offset_src))

    def fsync(self, fd: int) -> None:
        os.fsync(fd)

    def replace(self, source: Path, target: Path) -> None:
        os.replace(source, target)


SYSTEM = SystemCalls()


def system() -> SystemCalls:
    """The calls in use now (a test may have replaced them)."""
    return SYSTEM


_REASONS = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "your disk quota is used up",
    errno.EIO: "the disk reported a write error (EIO)",
    errno.EFBIG: "the file would be larger than its file system allows",
    errno.EROFS: "the disk is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.ENOENT: "its folder does not exist",
    errno.ENOTDIR: "its folder does not exist",
    errno.ENAMETOOLONG: "the name is too long",
    errno.EISDIR: "it is a folder",
    errno.EBUSY: "the file is busy",
    errno.ETXTBSY: "the file is busy",
    errno.EXDEV: "it is on another disk",
    errno.ELOOP: "it is a loop of links",
}


def reason(exc: OSError) -> str:
    """What went wrong, in words people read (no errno number, no path): "the disk is full"."""
    if exc.errno in _REASONS:
        return _REASONS[exc.errno]
    return (exc.strerror or "the system refused the write").lower()


class DiskError(SaveError):
    """A file could not be written; ``reason`` says why in words, ``name`` is the file as the caller named it.
    Whatever was being replaced is as it was, and no temporary file is left."""

    def __init__(self, name: str, why: str, details: str = "", verb: str = "save") -> None:
        super().__init__(f"could not {verb} {name}: {why}.", details)
        self.name = name
        self.reason = why


class ShortWrite(OSError):
    """The disk took fewer bytes than it was given, and none when asked for the rest."""

    def __init__(self, meant: int, landed: int) -> None:
        super().__init__(errno.ENOSPC, f"{landed:,} of {meant:,} bytes reached the disk")


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
        return cls.from_stat(st)

    @classmethod
    def from_stat(cls, st: os.stat_result) -> FileStamp:
        return cls(st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev)

    def same_file(self, other: FileStamp) -> bool:
        """The same inode (perhaps rewritten in place), not a file renamed over it."""
        return (self.inode, self.device) == (other.inode, other.device)


class CheckedFile:
    """A file open for writing whose every write is checked: a short count is followed by a write of the
    rest, and a count of 0 or an error ends it (an ``OSError``). ``count`` is the bytes the disk took."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.count = 0

    def write(self, data: bytes | memoryview) -> int:
        view = memoryview(data).cast("B")
        size = len(view)
        calls = system()
        while len(view):
            landed = calls.write(self.fd, view[:_CHUNK])
            if landed <= 0:
                raise ShortWrite(size, size - len(view))
            self.count += landed
            view = view[landed:]
        return size

    def writelines(self, pieces: list[bytes | memoryview]) -> None:
        for piece in pieces:
            self.write(piece)

    def tell(self) -> int:
        """Bytes written so far (zipfile asks; the file cannot seek)."""
        return self.count

    def flush(self) -> None:
        """Nothing is buffered here."""

    def copy_from(self, src: int, size: int, written: Written | None) -> None:
        """The first ``size`` bytes of the file open as ``src``, in the kernel where it can (no byte passes
        through this process, and the GIL is free throughout), else through memory."""
        done = self._copy_in_kernel(src, size, written)
        while done < size:
            chunk = os.pread(src, min(_CHUNK, size - done), done)
            if not chunk:
                raise OSError(errno.EIO, "the source file became shorter while it was copied")
            self.write(chunk)
            done += len(chunk)
            if written is not None:
                written(len(chunk))

    def _copy_in_kernel(self, src: int, size: int, written: Written | None) -> int:
        """Bytes copied with ``copy_file_range`` (Linux); 0 when this system or these file systems cannot (then
        the rest goes through memory). Some file systems answer "nothing to copy" for a file that has bytes:
        that is taken as "cannot" too."""
        calls, done = system(), 0
        while done < size:
            try:
                count = calls.copy_file_range(src, self.fd, min(_CHUNK, size - done), done)
            except OSError as exc:
                if done == 0 and exc.errno in _NO_KERNEL_COPY:
                    return 0
                raise
            if count <= 0:
                if done == 0:
                    return 0
                raise ShortWrite(size, done)
            done += count
            self.count += count
            if written is not None:
                written(count)
        return done


def temp_path(target: Path) -> Path:
    """The temporary file a save of ``target`` writes first."""
    return target.with_name(f".{target.name}{TEMP_MARK}{os.getpid()}.tmp")


def write_chunks(data: bytes | memoryview, write: Write, written: Written | None = None) -> None:
    """Hand ``data`` to ``write`` a chunk at a time; ``written`` hears of each chunk's size (and may raise)."""
    view = memoryview(data)
    for at in range(0, len(view), _CHUNK):
        chunk = view[at:at + _CHUNK]
        write(chunk)
        if written is not None:
            written(len(chunk))


def atomic_write(target: Path, data: bytes | memoryview, written: Written | None = None, *,
                 durable: bool = True, verb: str = "save", shown: str | None = None) -> None:
    """Write ``data`` to ``target`` in one step (see the module's docstring), a chunk at a time."""
    size = memoryview(data).nbytes
    atomic_write_with(target, lambda file: write_chunks(data, file.write, written), size, durable=durable,
                      verb=verb, shown=shown)


def atomic_write_with(target: Path, produce: Callable[[CheckedFile], object], size: int | None = None, *,
                      durable: bool = True, follow_link: bool = True, verb: str = "save",
                      shown: str | None = None) -> None:
    """Write what ``produce`` hands to the file it is given into ``target`` in one step. ``size``: the bytes it
    means to write, when known (checked too). ``durable=False``: not synced (a scratch file, no one's copy).
    ``follow_link=False``: a link at ``target`` is replaced by the file, not the file it leads to. An error
    says "could not ``verb`` ``shown``" (default: the target's name)."""
    with replacing(target, size, durable=durable, follow_link=follow_link, verb=verb, shown=shown) as f:
        produce(f)


def atomic_copy(source: Path, target: Path, written: Written | None = None, *, source_fd: int | None = None,
                follow_link: bool = False) -> None:
    """Copy ``source`` (or the file open as ``source_fd``, the one a model was read from) to ``target`` in one
    step, a chunk at a time. A new ``target`` takes the source's mode."""
    try:
        fd = os.open(source, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)) if source_fd is None else os.dup(source_fd)
    except FileNotFoundError as exc:
        raise SaveError(f"{source.name} could not be read: it is gone.", str(exc)) from exc
    except OSError as exc:
        raise SaveError(f"{source.name} could not be read: {reason(exc)}.", str(exc)) from exc
    try:
        st = os.fstat(fd)
        with replacing(target, st.st_size, follow_link=follow_link, mode=stat.S_IMODE(st.st_mode)) as dst:
            dst.copy_from(fd, st.st_size, written)
    finally:
        os.close(fd)


@contextlib.contextmanager
def replacing(target: Path, size: int | None = None, *, durable: bool = True, follow_link: bool = True,
              mode: int | None = None, verb: str = "save", shown: str | None = None) -> Iterator[CheckedFile]:
    """A new temporary file beside ``target`` to write; when the block ends, it is synced, its size checked
    (against ``size`` when given, and against what was written) and renamed over ``target``. On any failure
    the temporary file is removed and ``target`` stays as it was. ``mode``: a new file's (else 0666 less the
    umask); a replaced file keeps its own."""
    if target.is_dir():
        raise SaveError(f"{target} is a folder; choose a file name.")
    real = _written_path(target) if follow_link else target
    remove_stale_temps(real.parent)
    tmp = temp_path(real)
    try:
        with _new_file(tmp) as f:
            yield f
            if durable:
                system().fsync(f.fd)
            _check_size(f, size)
        _set_mode(real, tmp, mode)
        system().replace(tmp, real)
        if durable:
            sync_folder(real.parent)
    except OSError as exc:
        raise DiskError(shown or target.name, reason(exc), _details(exc), verb) from exc
    finally:
        _remove_quietly(tmp)


class Batch:
    """Files written as one (a run's values: hundreds of .npy files and their index): each to its temporary
    file, checked as any other, and all renamed into place only once every one is complete; a failure
    removes them all, so a folder never holds half of them. Use as a context manager (committed at the end
    of the block, abandoned on an exception); errors say "could not ``verb`` ``shown``"."""

    def __init__(self, shown: str, *, verb: str = "write", durable: bool = False) -> None:
        self.shown, self.verb, self.durable = shown, verb, durable
        self._staged: list[tuple[Path, Path]] = []  # (temporary file, target)
        self._open: list[tuple[CheckedFile, Path]] = []  # files written piece by piece, checked at commit

    def __enter__(self) -> Batch:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, *_: object) -> None:
        if kind is None:
            self.commit()
            return
        self.abandon()
        if isinstance(exc, OSError):  # a write to a file of the batch written piece by piece
            raise DiskError(self.shown, reason(exc), _details(exc), self.verb) from exc

    def write(self, target: Path, data: bytes | memoryview) -> None:
        size = memoryview(data).nbytes
        self.write_with(target, lambda file: write_chunks(data, file.write), size)

    def write_with(self, target: Path, produce: Callable[[CheckedFile], object], size: int | None = None) -> None:
        """``target``'s bytes, from what ``produce`` writes to the file it is given (checked against ``size``)."""
        file = self.open(target)
        with self._saying():
            produce(file)
            self._close(file, size)

    def open(self, target: Path) -> CheckedFile:
        """A file to write ``target``'s bytes into a piece at a time, until the batch commits."""
        tmp = temp_path(target)
        with self._saying():
            fd = _create(tmp)
        self._staged.append((tmp, target))
        file = CheckedFile(fd)
        self._open.append((file, tmp))
        return file

    def commit(self) -> None:
        """Every file checked and closed, then renamed into place."""
        with self._saying():
            for file, _ in list(self._open):
                self._close(file, None)
            for tmp, target in self._staged:
                system().replace(tmp, target)
        if self.durable and self._staged:
            sync_folder(self._staged[0][1].parent)
        self._staged = []

    def abandon(self) -> None:
        for file, _ in self._open:
            with contextlib.suppress(OSError):
                os.close(file.fd)
        self._open = []
        for tmp, _ in self._staged:
            _remove_quietly(tmp)
        self._staged = []

    def _close(self, file: CheckedFile, size: int | None) -> None:
        if self.durable:
            system().fsync(file.fd)
        _check_size(file, size)
        self._open = [(f, t) for f, t in self._open if f is not file]
        os.close(file.fd)

    @contextlib.contextmanager
    def _saying(self) -> Iterator[None]:
        try:
            yield
        except OSError as exc:
            self.abandon()
            raise DiskError(self.shown, reason(exc), _details(exc), self.verb) from exc


def _create(path: Path) -> int:
    _remove_quietly(path)
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                   | getattr(os, "O_CLOEXEC", 0), 0o666)


def write_npy(file: CheckedFile, array: object) -> None:
    """``array`` as an .npy file's bytes into ``file`` (numpy writes it a chunk at a time; no pickles)."""
    import numpy as np

    np.save(file, np.asanyarray(array), allow_pickle=False)  # type: ignore[arg-type]  # a file-like object


def write_npz(file: CheckedFile, arrays: Mapping[str, object], compressed: bool = False) -> None:
    """``arrays`` as an .npz file's bytes into ``file``, as ``numpy.savez`` writes them (a zip written as it goes:
    the file cannot seek; no pickles)."""
    import zipfile

    import numpy as np

    method = zipfile.ZIP_DEFLATED if compressed else zipfile.ZIP_STORED
    with zipfile.ZipFile(file, "w", method, allowZip64=True) as archive:  # type: ignore[call-overload]  # file-like
        for name, array in arrays.items():
            with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asanyarray(array), allow_pickle=False)


def _written_path(target: Path) -> Path:
    """Where a write of ``target`` lands: the file a symbolic link leads to (every link resolved), so the
    link stays a link; ``target`` itself otherwise."""
    if not target.is_symlink():
        return target
    return Path(os.path.realpath(target))


def _check_size(f: CheckedFile, size: int | None) -> None:
    """The file on disk holds every byte written, and those are every byte meant."""
    on_disk = os.fstat(f.fd).st_size
    meant = f.count if size is None else size
    if on_disk != f.count or f.count != meant:
        raise ShortWrite(meant, min(on_disk, f.count))


def _details(exc: OSError) -> str:
    """The system's own words, without the temporary file's name."""
    return f"{exc.strerror or exc} (errno {exc.errno})" if exc.errno is not None else str(exc)


@contextlib.contextmanager
def _new_file(path: Path) -> Iterator[CheckedFile]:
    """``path`` created anew for writing, never following a link; the umask applies to its mode (an own
    pid's leftover of that name is removed first: a stranger's file of that name is not ours to keep)."""
    fd = _create(path)
    try:
        yield CheckedFile(fd)
    finally:
        os.close(fd)


def _set_mode(target: Path, tmp: Path, mode: int | None) -> None:
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        if mode is None:
            return
    os.chmod(tmp, mode & 0o777)


def sync_folder(folder: Path) -> None:
    """Make a rename or removal in ``folder`` durable (a power cut right after it keeps the new file)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        system().fsync(fd)
    except OSError:
        pass  # some file systems cannot sync a folder; the data itself was synced
    finally:
        os.close(fd)


def write_whole(fd: int, data: bytes | memoryview) -> None:
    """``data`` into the new, empty file open as ``fd``, every byte checked; raises OSError."""
    file = CheckedFile(fd)
    file.write(data)
    _check_size(file, memoryview(data).nbytes)


def append_text(path: Path, text: str) -> None:
    """``text`` at the end of ``path`` (a log), every byte checked; raises OSError."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0), 0o666)
    try:
        CheckedFile(fd).write(text.encode("utf-8", "backslashreplace"))
    finally:
        os.close(fd)


def _remove_quietly(path: Path) -> None:
    """Remove ``path`` if it is there; an error doing so never hides the error being handled (a read-only
    file system refuses even to unlink a file that was never made: EROFS, not ENOENT)."""
    if not os.path.lexists(path):
        return
    with contextlib.suppress(OSError):  # what is left is removed when a model in its folder is next opened
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
        if match is None or running(int(match.group(1))):
            continue
        with contextlib.suppress(OSError):
            if entry.is_file(follow_symlinks=False):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
    return removed


def running(pid: int) -> bool:
    """Whether a save by process ``pid`` may still be writing (this process's own leftovers never are)."""
    if pid == os.getpid():
        return False  # a leftover of this process is never in use: each save removes its own
    return process_alive(pid)


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` may still run (True when that cannot be told: another user's, or no such check)."""
    if os.name != "posix":
        return True  # Windows' os.kill would end it
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
