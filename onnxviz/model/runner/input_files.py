"""Array files given as run inputs (.npy, .npz, TensorProto .pb), read as the hostile files they may be.

Only regular files are opened: a FIFO would block for ever and /dev/zero never ends. Sizes are checked
from what the file says before anything is read or decompressed (an .npz member's size from the zip
directory, an .npy header's shape and type, a .pb's file size) against what the input can take
(:func:`~onnxviz.model.runner.inputs.check_given`, :func:`~onnxviz.model.runner.inputs.file_limit`).
A .pb's external data is read only from the .pb's own folder, under the rules of a model's external
data (:func:`~onnxviz.model.io.external.resolve_location`). Pickles never load.
"""

from __future__ import annotations

import lzma
import math
import os
import re
import stat
import zipfile
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, BinaryIO

import numpy as np
import onnx
from numpy.lib import format as npy_format
from onnx import numpy_helper

from onnxviz.model.errors import OnnxvizError
from onnxviz.model.graph.checks import tensor_problem
from onnxviz.model.graph.summary import human_bytes
from onnxviz.model.io.external import external_ref, is_external, read_external_bytes
from onnxviz.model.runner.errors import RunError
from onnxviz.model.runner.inputs import (
    InputSpec,
    check_file_size,
    check_given,
    file_limit,
    np_dtype,
    unknown_input,
)
from onnxviz.model.text import display_name

NUMPY_MAGIC = (b"\x93NUMPY", b"PK\x03\x04", b"PK\x05\x06")  # .npy, .npz (a zip; an empty zip)
_NPY_HEADERS = {(1, 0): npy_format.read_array_header_1_0, (2, 0): npy_format.read_array_header_2_0}
# what zipfile raises for a damaged archive or member: its own checks, and its decompressors' (bzip2: OSError)
_ZIP_DAMAGE = (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError, RuntimeError, zlib.error,
               lzma.LZMAError)


@contextmanager
def open_regular(path: str | Path, kind: str = "an array file") -> Iterator[tuple[BinaryIO, int]]:
    """The open file and its size; RunError, before anything blocks, unless it is a non-empty regular
    file (a FIFO, a device such as /dev/zero, a socket or a folder is refused)."""
    p = Path(path)
    try:
        _regular_size(p, os.stat(p), kind)  # nothing but a file is opened: opening some devices acts
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))  # a FIFO swapped in: no wait
    except ValueError as exc:  # a NUL character
        raise RunError(f"'{p.name}' is not a valid file name.", str(exc)) from exc
    except FileNotFoundError as exc:
        raise RunError(f"{p} does not exist.", str(exc)) from exc
    except IsADirectoryError as exc:
        raise RunError(f"{p} is a folder, not {kind}.", str(exc)) from exc
    except OSError as exc:
        raise RunError(f"{p.name} could not be read ({exc.strerror or exc}).", str(exc)) from exc
    try:
        size = _regular_size(p, os.fstat(fd), kind)  # of what was opened: no swap after a check
        f = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with f:
        yield f, size


def _regular_size(p: Path, info: os.stat_result, kind: str) -> int:
    if stat.S_ISDIR(info.st_mode):
        raise RunError(f"{p} is a folder, not {kind}.")
    if not stat.S_ISREG(info.st_mode):
        raise RunError(f"{p.name} is not a regular file (a pipe, device or socket); only files are read.")
    if info.st_size == 0:
        raise RunError(f"{p.name} is empty.")
    return info.st_size


def read_regular_file(path: str | Path, limit: int, kind: str) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes (see :func:`open_regular`)."""
    p = Path(path)
    with open_regular(p, kind) as (f, size):
        if size > limit:
            raise RunError(f"{p.name} is {human_bytes(size)}, more than the {human_bytes(limit)} {kind} may have.")
        return f.read(limit + 1)[:limit]


def read_array_file(path: str | Path, spec: InputSpec) -> np.ndarray:
    """The array for ``spec`` from an .npy, a single-array or named .npz, or a TensorProto .pb."""
    p = Path(path)
    with open_regular(p) as (f, size):
        if p.suffix.lower() == ".pb":
            check_file_size(p.name, size, spec)
            return _to_array(p, _parse_tensor(p, f, size), spec)
        archive = _open_numpy(p, f, size, spec)
        if isinstance(archive, np.ndarray):
            return archive
        with archive:
            members = _npz_members(archive)
            if spec.name in members:
                return _read_member(p, archive, size, members[spec.name], spec)
            if len(members) == 1:
                return _read_member(p, archive, size, next(iter(members.values())), spec)
            raise RunError(f"{p.name} holds {len(members)} arrays but none named '{display_name(spec.name, 60)}'.")


def read_inputs_file(path: str | Path, specs: list[InputSpec]) -> dict[str, np.ndarray]:
    """Every array of an .npz, each named after one of ``specs`` and checked against it before it is read."""
    p = Path(path)
    by_name = {s.name: s for s in specs}
    with _open_npz(p) as (archive, members, size):
        for name in members:
            if name not in by_name:
                raise unknown_input(name, specs)
        return {name: _read_member(p, archive, size, info, by_name[name]) for name, info in members.items()}


def inputs_file_names(path: str | Path) -> list[str]:
    """The names of an .npz's arrays, from its zip directory (nothing is decompressed)."""
    with _open_npz(Path(path)) as (_, members, _size):
        return list(members)


@contextmanager
def _open_npz(p: Path) -> Iterator[tuple[zipfile.ZipFile, dict[str, zipfile.ZipInfo], int]]:
    """The archive, its arrays' members and the file's size."""
    with open_regular(p) as (f, size):
        archive = _open_numpy(p, f, size, None)
        if isinstance(archive, np.ndarray):
            raise RunError(f"{p.name} holds one unnamed array; an inputs file must be an .npz.")
        with archive:
            yield archive, _npz_members(archive), size


def _open_numpy(p: Path, f: BinaryIO, size: int, spec: InputSpec | None) -> np.ndarray | zipfile.ZipFile:
    """An .npy's array (read when ``spec`` is given), or the .npz's zip archive, opened."""
    head = f.read(8)
    f.seek(0)
    if not head.startswith(NUMPY_MAGIC):
        raise RunError(f"{p.name} is not a NumPy array file (.npy or .npz).")
    if head.startswith(b"\x93NUMPY"):
        if spec is None:
            raise RunError(f"{p.name} holds one unnamed array; an inputs file must be an .npz.")
        return _read_npy(f, size, spec, p.name, "a NumPy")
    try:
        return zipfile.ZipFile(f)
    except _ZIP_DAMAGE as exc:
        raise RunError(f"{p.name} is an .npz file that is truncated or damaged.", str(exc)) from exc


def _npz_members(archive: zipfile.ZipFile) -> dict[str, zipfile.ZipInfo]:
    """Array name -> its member, as numpy names them (``x.npy`` holds ``x``)."""
    return {info.filename[:-4]: info for info in archive.infolist() if info.filename.endswith(".npy")}


def _read_member(p: Path, archive: zipfile.ZipFile, archive_size: int, info: zipfile.ZipInfo,
                 spec: InputSpec) -> np.ndarray:
    where = f"{p.name}'s array '{display_name(info.filename[:-4], 60)}'"
    check_file_size(where, info.file_size, spec)  # the zip directory's size: nothing decompressed yet
    if info.file_size > _unpacked_limit(info, archive_size):  # a directory that lies about the size
        raise RunError(f"{p.name} is an .npz file that is truncated or damaged.",
                       f"member {info.filename!r} claims {info.file_size} bytes from {info.compress_size} packed")
    try:
        with archive.open(info) as member:
            return _read_npy(member, info.file_size, spec, where, "an .npz")
    except _ZIP_DAMAGE as exc:
        raise RunError(f"{p.name} is an .npz file that is truncated or damaged.", str(exc)) from exc


DEFLATE_MAX_RATIO = 1032  # the most a deflate stream expands (zlib's technical notes)


def _unpacked_limit(info: zipfile.ZipInfo, archive_size: int) -> int:
    """The most bytes ``info``'s packed bytes, which are in an archive of ``archive_size``, can unpack to
    (other methods than store and deflate: no limit known before decompressing)."""
    packed = min(info.compress_size, archive_size)
    if info.compress_type == zipfile.ZIP_STORED:
        return packed
    if info.compress_type == zipfile.ZIP_DEFLATED:
        return packed * DEFLATE_MAX_RATIO
    return info.file_size


def _read_npy(f: IO[bytes], size: int, spec: InputSpec, where: str, kind: str) -> np.ndarray:
    """The array of an .npy stream of ``size`` bytes, its header checked against ``spec`` before its
    values are read (into one buffer of exactly their size)."""
    damaged = f"{where} is {kind} file that is truncated or damaged."
    shape, fortran, dtype = _npy_header(f, where, damaged)
    if dtype.hasobject:
        raise RunError(f"{where} holds Python objects; onnxviz loads plain arrays only, never pickles.")
    check_given(spec, shape, dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    check_file_size(where, nbytes, spec)
    if nbytes > size - f.tell():
        raise RunError(damaged)
    try:  # uninitialised: only what is read takes memory (a bzip2 member's claimed size cannot be checked)
        array = np.empty(shape, dtype, order="F" if fortran else "C")
    except (MemoryError, ValueError) as exc:
        raise RunError(f"{where} would take {human_bytes(nbytes)}, more memory than is free.", str(exc)) from exc
    if nbytes and _read_into(f, array.reshape(-1, order="A").view(np.uint8).data) < nbytes:
        raise RunError(damaged)
    return array


def _npy_header(f: IO[bytes], where: str, damaged: str) -> tuple[tuple[int, ...], bool, np.dtype]:
    """(shape, fortran order, dtype) from an .npy stream's header; RunError ``damaged`` when numpy cannot
    parse it."""
    try:
        version = npy_format.read_magic(f)
    except Exception as exc:  # noqa: BLE001 - short reads, and a damaged .npz member's decompressor errors
        raise RunError(damaged, str(exc)) from exc
    read_header = _NPY_HEADERS.get(version)
    if read_header is None:
        raise RunError(f"{where} is a NumPy file of format {version[0]}.{version[1]}, which onnxviz does not read.")
    try:
        shape, fortran, dtype = read_header(f)
    except Exception as exc:  # noqa: BLE001 - numpy parses the header's text as Python literals: ValueError,
        raise RunError(damaged, str(exc)) from exc  # SyntaxError, tokenize.TokenError, TypeError, RecursionError...
    if any(d < 0 for d in shape):
        raise RunError(damaged, f"negative dimension in {shape}")
    return shape, fortran, dtype


def _read_into(f: IO[bytes], view: memoryview) -> int:
    done = 0
    while done < len(view):
        n = f.readinto(view[done:])  # type: ignore[attr-defined]  # every binary file object has it
        if not n:
            break
        done += n
    return done


def _parse_tensor(p: Path, f: BinaryIO, size: int) -> onnx.TensorProto:
    """A TensorProto .pb's message (its size checked by the caller first)."""
    tensor = onnx.TensorProto()
    try:
        tensor.ParseFromString(f.read(size))
        if any(d < 0 for d in tensor.dims):
            raise ValueError("negative dimension")
    except Exception as exc:  # noqa: BLE001 - protobuf's DecodeError
        raise RunError(f"{p.name} is not an ONNX TensorProto file.", str(exc)) from exc
    return tensor


def _to_array(p: Path, tensor: onnx.TensorProto, spec: InputSpec) -> np.ndarray:
    """The TensorProto of ``p`` as the array for ``spec``: checked against it, its external data read only
    from the .pb's own folder."""
    try:
        dtype = np_dtype(tensor.data_type)
    except RunError as exc:
        raise RunError(f"{p.name} is not an ONNX TensorProto file.", exc.message) from exc
    check_given(spec, tuple(tensor.dims), dtype)
    if is_external(tensor):
        _inline_external(p, tensor, spec)
    unsound = tensor_problem(tensor)  # a sound TensorProto whose data does not match its dims is said so
    if unsound:
        raise RunError(f"{p.name} holds a TensorProto that cannot be read: {unsound.removeprefix('tensor ')}.")
    check_file_size(p.name, math.prod(tensor.dims) * dtype.itemsize, spec)  # what unpacking it would take
    try:
        return numpy_helper.to_array(tensor)
    except Exception as exc:  # noqa: BLE001 - to_array's TypeError/ValueError/KeyError: it parsed, so it is one
        why = display_name(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__, 200)
        raise RunError(f"{p.name} holds a TensorProto that cannot be read: {why.rstrip('.')}.", str(exc)) from exc


def _inline_external(p: Path, tensor: onnx.TensorProto, spec: InputSpec) -> None:
    """The tensor's external data copied in, once its file is known to be inside the .pb's folder and
    its length fits the input; the tensor no longer names a file."""
    try:
        ref = external_ref(tensor)
        data = read_external_bytes(tensor, p.parent, owner=p.name)  # mapped: nothing is read yet
        check_file_size(f"{p.name}'s external data '{display_name(ref.location, 60)}'", len(data), spec)
        tensor.raw_data = bytes(data)
    except OnnxvizError as exc:
        raise RunError(exc.message, exc.details) from exc
    del tensor.external_data[:]
    tensor.data_location = onnx.TensorProto.DEFAULT


# -- inputs from a folder, and samples -------------------------------------------------------------
_INPUT_PB = re.compile(r"input_(\d+)\.pb", re.IGNORECASE)
_DATA_SET = re.compile(r"test_data_set_(\d+)", re.IGNORECASE)
MAX_SAMPLES = 10_000


def read_inputs(path: str | Path, specs: list[InputSpec]) -> dict[str, np.ndarray]:
    """The inputs of one sample: an .npz of arrays named after the inputs, or a folder of ``input_N.pb``
    TensorProto files (the onnx test data layout; see :func:`read_pb_folder`)."""
    p = Path(path)
    if p.is_dir():
        samples = input_samples([p], specs)
        if len(samples) != 1:
            raise RunError(f"{p} holds {len(samples)} samples; give one of them (such as {samples[0].label}).")
        return samples[0].read(specs)
    return read_inputs_file(p, specs)


def read_pb_folder(folder: str | Path, specs: list[InputSpec]) -> dict[str, np.ndarray]:
    """The ``input_N.pb`` files of a folder (as onnx's backend test data and the model zoo lay them out): each
    a TensorProto for the input it names, or else for the N-th input (initializers with defaults not counted);
    each file's size is checked before it is read, and its array against its input."""
    d = Path(folder)
    files = _pb_files(d)
    if not files:
        raise RunError(f"{d} holds no input_N.pb files.")
    by_name = {s.name: s for s in specs}
    limit = max((file_limit(s) for s in specs), default=0)
    out: dict[str, np.ndarray] = {}
    for n, p in files:
        with open_regular(p) as (f, size):
            if size > limit:
                raise RunError(f"{p.name} holds {human_bytes(size)}, more than any input of the model can take; "
                               "refused before reading it.")
            tensor = _parse_tensor(p, f, size)
        spec = by_name.get(tensor.name) or (specs[n] if n < len(specs) else None)
        if spec is None:
            raise RunError(f"{p.name} is input number {n}, but the model has {len(specs)} inputs"
                           + (f" and none named '{display_name(tensor.name, 60)}'." if tensor.name else "."))
        if spec.name in out:
            raise RunError(f"{p.name} gives input '{display_name(spec.name, 60)}' a second time.")
        check_file_size(p.name, size, spec)
        out[spec.name] = _to_array(p, tensor, spec)
    return out


def _pb_files(folder: Path) -> list[tuple[int, Path]]:
    try:
        names = sorted(os.listdir(folder))
    except OSError as exc:
        raise RunError(f"the folder {folder} could not be read ({exc.strerror or exc}).", str(exc)) from exc
    found = [(int(m.group(1)), folder / name) for name in names if (m := _INPUT_PB.fullmatch(name))]
    return sorted(found)


@dataclass(frozen=True)
class Sample:
    """One set of inputs: an .npz file or a folder of ``input_N.pb`` files, read when asked."""

    path: Path

    @property
    def label(self) -> str:
        return self.path.name

    def read(self, specs: list[InputSpec]) -> dict[str, np.ndarray]:
        if self.path.is_dir():
            return read_pb_folder(self.path, specs)
        return read_inputs_file(self.path, specs)


def input_samples(paths: Sequence[str | Path], specs: list[InputSpec]) -> list[Sample]:
    """The samples of ``paths``: each an .npz file, a folder of ``input_N.pb`` files (one sample), or a
    folder of ``test_data_set_N`` folders or of .npz files (one sample each, in order). Nothing is read yet
    but the folders' listings; RunError for a path that holds no sample."""
    samples: list[Sample] = []
    for path in paths:
        p = Path(path)
        samples += _samples_of(p) if p.is_dir() else [Sample(p)]
        if len(samples) > MAX_SAMPLES:
            raise RunError(f"more than {MAX_SAMPLES:,} samples were given; compare a part of them.")
    return samples


def _samples_of(folder: Path) -> list[Sample]:
    if _pb_files(folder):
        return [Sample(folder)]
    try:
        entries = sorted(folder.iterdir(), key=lambda e: _sample_order(e.name))
    except OSError as exc:
        raise RunError(f"the folder {folder} could not be read ({exc.strerror or exc}).", str(exc)) from exc
    sets = [Sample(e) for e in entries if _DATA_SET.fullmatch(e.name) and e.is_dir() and _pb_files(e)]
    arrays = [Sample(e) for e in entries if e.suffix.lower() == ".npz" and e.is_file()]
    if not sets and not arrays:
        raise RunError(f"{folder} holds no input_N.pb files, test_data_set_N folders or .npz files.")
    return sets + arrays


def _sample_order(name: str) -> tuple[str, int, str]:
    """Names in numeric order: sample_2 before sample_10."""
    m = re.search(r"(\d+)(?=\D*$)", name)
    return (name[: m.start()] if m else name, int(m.group(1)) if m else -1, name)
