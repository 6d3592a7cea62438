"""Builds hostile run-input files (nothing big is committed): zip bombs, lying .npy headers, TensorProto
.pb files whose external data points elsewhere, FIFOs, links to /dev/zero, names with control characters.

Each :class:`InputCase` is given as input ``x`` of ``MODELS[case.model]`` (``--input x=FILE``, or
``--inputs FILE`` when ``whole``) and must be refused with ``message`` (a fragment of the one sentence,
as the terminal shows it), or run when ``message`` is empty. The command runs in ``folder/cwd``.
"""

from __future__ import annotations

import io
import os
import random
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from hostile import flip_bits
from numpy.lib import format as npy_format
from onnx import TensorProto, helper, numpy_helper

SHAPE = (1, 3, 8, 8)  # input x of model.onnx (it also looks like an image); free.onnx's x is [n]
BOMB_BYTES = 512 << 20  # declared by bomb.npz's member, about 0.5 MB on disk
MODELS = {"model": "model.onnx", "free": "free.onnx"}


@dataclass(frozen=True)
class InputCase:
    name: str
    build: Callable[[Path], Path]  # writes the input into folder/inputs, returns its path
    message: str  # a fragment of the refusal as printed (names escaped); "" = it runs
    model: str = "model"
    whole: bool = False  # --inputs FILE rather than --input x=FILE


def build_models(folder: Path) -> None:
    for key, shape in (("model", list(SHAPE)), ("free", ["n"])):
        graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
        model.ir_version = 8
        (folder / MODELS[key]).write_bytes(model.SerializeToString())


def _npy_header(shape: tuple[int, ...], descr: str = "<f4", size: int = 0) -> bytes:
    buf = io.BytesIO()
    npy_format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": False, "shape": shape})
    header = buf.getvalue()
    if size:  # a header padded far beyond numpy's 10,000-byte limit
        header = header[:8] + (len(header) - 10 + size).to_bytes(2, "little") + header[10:-1] + b" " * size + b"\n"
    return header


def _bomb(folder: Path) -> Path:
    """A .npz of zeros, deflated: its zip directory declares BOMB_BYTES for ``x``."""
    path = folder / "bomb.npz"
    chunk = bytes(16 << 20)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf, \
            zf.open("x.npy", "w", force_zip64=True) as member:
        member.write(_npy_header((BOMB_BYTES // 4,)))
        for _ in range(BOMB_BYTES // len(chunk)):
            member.write(chunk)
    return path


def _lying_npz(folder: Path) -> Path:
    """A small member whose .npy header claims 4 TB."""
    path = folder / "lying.npz"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("x.npy", _npy_header((1 << 40,)) + bytes(64))
    return path


def _damaged_stream(folder: Path) -> Path:
    """An .npz whose deflated member's stream is broken (zlib's own error, not zipfile's)."""
    path = folder / "stream.npz"
    np.savez_compressed(path, x=np.arange(np.prod(SHAPE), dtype=np.float32).reshape(SHAPE))
    data = bytearray(path.read_bytes())
    start = data.find(b"x.npy") + len("x.npy") + 20  # into the packed bytes, past the local header's name
    data[start:start + 24] = b"\xff" * 24
    path.write_bytes(bytes(data))
    return path


def _size_lie(folder: Path) -> Path:
    """An .npz of ~250 bytes whose zip directory and .npy header agree on 1 GiB of values."""
    path = folder / "size_lie.npz"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("x.npy", _npy_header((1 << 28,)) + bytes(64))
    data = bytearray(path.read_bytes())
    at = data.rfind(b"PK\x01\x02") + 24  # the central directory's uncompressed size
    data[at:at + 4] = ((1 << 30) + len(_npy_header((1 << 28,)))).to_bytes(4, "little")
    path.write_bytes(bytes(data))
    return path


def _many_dims(folder: Path) -> Path:
    path = folder / "dims.pb"
    path.write_bytes(TensorProto(name="x", data_type=TensorProto.FLOAT, dims=[1] * 3000,
                                 float_data=[0.0]).SerializeToString())
    return path


def _write(name: str, data: bytes) -> Callable[[Path], Path]:
    def build(folder: Path) -> Path:
        (folder / name).write_bytes(data)
        return folder / name
    return build


def _pickled(folder: Path) -> Path:
    np.save(folder / "objects.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    return folder / "objects.npy"


def _external_pb(name: str, location: str, prepare: Callable[[Path], None] = lambda _: None) -> Callable[[Path], Path]:
    """A TensorProto for x whose values are stored in ``location``."""
    def build(folder: Path) -> Path:
        prepare(folder)
        tensor = TensorProto(name="x", data_type=TensorProto.FLOAT, dims=SHAPE)
        tensor.data_location = TensorProto.EXTERNAL
        tensor.external_data.add(key="location", value=location)
        (folder / name).write_bytes(tensor.SerializeToString())
        return folder / name
    return build


VALUES = np.arange(np.prod(SHAPE), dtype=np.float32).tobytes()


def _outside_link(folder: Path) -> None:
    (folder / "link.bin").symlink_to(folder.parent / "secret.bin")


def _beside(folder: Path) -> None:
    (folder / "values.bin").write_bytes(VALUES)


def _fifo(name: str) -> Callable[[Path], Path]:
    def build(folder: Path) -> Path:
        os.mkfifo(folder / name)
        return folder / name
    return build


def _link(name: str, target: str) -> Callable[[Path], Path]:
    def build(folder: Path) -> Path:
        (folder / name).symlink_to(target)
        return folder / name
    return build


def _missing(name: str) -> Callable[[Path], Path]:
    return lambda folder: folder / name


NOT_A_FILE = "is not a regular file (a pipe, device or socket); only files are read"

CASES = [
    InputCase("npz_bomb", _bomb, "bomb.npz's array 'x' holds 512.0 MB, far more than input 'x' (1×3×8×8 float32) "
              "can take; refused before reading it"),
    InputCase("npz_bomb_inputs", lambda f: f / "bomb.npz", "bomb.npz's array 'x' holds 512.0 MB", whole=True),
    InputCase("npz_lying_header", _lying_npz, "input 'x' expects 4 dimensions (1×3×8×8) but the array has shape "
              "1099511627776"),
    InputCase("npz_lying_header_free", lambda f: f / "lying.npz", "lying.npz's array 'x' would take 4.0 TB, more "
              "than the", model="free"),
    InputCase("npy_huge_shape", _write("huge.npy", _npy_header((1 << 40,)) + bytes(16)),
              "huge.npy would take 4.0 TB, more than the", model="free"),
    InputCase("npy_huge_header", _write("header.npy", _npy_header(SHAPE, size=20000) + bytes(768)),
              "header.npy is a NumPy file that is truncated or damaged"),
    InputCase("npy_short", _write("short.npy", _npy_header(SHAPE) + bytes(100)),
              "short.npy is a NumPy file that is truncated or damaged"),
    InputCase("npy_unbalanced_header", _write("open.npy", _npy_header(SHAPE).replace(b"}", b"(") + bytes(768)),
              "open.npy is a NumPy file that is truncated or damaged"),
    InputCase("npz_damaged_stream", _damaged_stream, "stream.npz's array 'x' is an .npz file that is truncated or damaged"),
    InputCase("npz_size_lie", _size_lie, "size_lie.npz is an .npz file that is truncated or damaged", model="free"),
    InputCase("pb_many_dims", _many_dims, "expects 1 dimension (n) but the array has shape "
              "1×1×1×1×...×1×1×1×1 (3000 dimensions)", model="free"),
    InputCase("npy_pickled", _pickled, "objects.npy holds Python objects; onnxviz loads plain arrays only, never pickles"),
    InputCase("pb_absolute", _external_pb("absolute.pb", "/etc/passwd"),
              "tensor 'x' points to an absolute path '/etc/passwd'; refused, only files in absolute.pb's folder are read"),
    InputCase("pb_dotdot", _external_pb("dotdot.pb", "../secret.bin"),
              "tensor 'x' points outside dotdot.pb's folder ('../secret.bin'); refused"),
    InputCase("pb_symlink_out", _external_pb("linked.pb", "link.bin", _outside_link),
              "tensor 'x' file 'link.bin' is a link that leads outside linked.pb's folder; refused"),
    InputCase("pb_name_in_cwd", _external_pb("cwd.pb", "in_cwd.bin"),
              "tensor 'x' is stored in 'in_cwd.bin', which does not exist next to cwd.pb"),
    InputCase("pb_external_beside", _external_pb("beside.pb", "values.bin", _beside), ""),
    InputCase("fifo_npy", _fifo("fifo.npy"), f"fifo.npy {NOT_A_FILE}"),
    InputCase("fifo_npz_inputs", _fifo("fifo.npz"), f"fifo.npz {NOT_A_FILE}", whole=True),
    InputCase("dev_zero_pb", _link("zero.pb", "/dev/zero"), f"zero.pb {NOT_A_FILE}"),
    InputCase("dev_zero_npy", _link("zero.npy", "/dev/zero"), f"zero.npy {NOT_A_FILE}"),
    InputCase("name_escape", _fifo("e\x1b[31m.npy"), f"e\\x1b[31m.npy {NOT_A_FILE}"),
    InputCase("name_bidi", _fifo("a\u202eypn.npy"), f"a\\u202eypn.npy {NOT_A_FILE}"),
    InputCase("name_newline", _missing("x.npy: fine\nrun.npy"), "x.npy: fine\\x0arun.npy does not exist"),
]


def build_all(folder: Path) -> dict[str, tuple[InputCase, Path]]:
    """The models in ``folder``, the inputs in ``folder/inputs``, a secret beside them and the cwd."""
    build_models(folder)
    inputs, cwd = folder / "inputs", folder / "cwd"
    inputs.mkdir()
    cwd.mkdir()
    (folder / "secret.bin").write_bytes(VALUES)
    (cwd / "in_cwd.bin").write_bytes(VALUES)  # what a .pb's location used to be read from
    return {case.name: (case, case.build(inputs)) for case in CASES}


def cli_args(folder: Path, case: InputCase, path: Path) -> list[str]:
    given = ["--inputs", str(path)] if case.whole else ["--input", f"x={path}"]
    return ["run", str(folder / MODELS[case.model]), *given]


# -- mutated run inputs (tests/corpus/test_fuzz.py, scripts/fuzz_long.py --inputs) ------------------------------

FUZZ_SPECS = {  # what a mutant is read as: x of model.onnx, with free sizes, of unknown rank, as strings
    "fixed": ("x", TensorProto.FLOAT, SHAPE), "free": ("x", TensorProto.FLOAT, ("n", "c", "h", "w")),
    "unranked": ("x", TensorProto.FLOAT, None), "strings": ("x", TensorProto.STRING, None),
}
_DESCRS = ["<f4", ">f8", "<i8", "|u1", "|b1", "<c16", "<f2", "|O", "<U7", "|S3", "|V16", "<m8[s]", "<M8[D]",
           "[('a', '<f4')]", "<f99", "", "'", "<f4\\x00"]
_DIMS = [0, 1, 3, 8, 2**20, 2**26, 2**31, 2**40, 2**63 - 1, 2**64, -1, 10**30]
_ORDERS = ["False", "True", "0", "'x'"]


def input_seeds() -> list[tuple[str, bytes]]:
    """Valid files for input x (1×3×8×8 float32): an .npy, .npz stored and deflated, a TensorProto .pb
    with raw data and one with float_data."""
    array = np.arange(np.prod(SHAPE), dtype=np.float32).reshape(SHAPE)
    npy, stored, deflated = io.BytesIO(), io.BytesIO(), io.BytesIO()
    np.save(npy, array)
    np.savez(stored, x=array)
    np.savez_compressed(deflated, x=array)
    floats = helper.make_tensor("x", TensorProto.FLOAT, SHAPE, array.ravel().tolist())
    return [(".npy", npy.getvalue()), (".npz", stored.getvalue()), (".npz", deflated.getvalue()),
            (".pb", numpy_helper.from_array(array, "x").SerializeToString()), (".pb", floats.SerializeToString())]


def input_mutant(rng: random.Random, seeds: list[tuple[str, bytes]]) -> tuple[str, str, bytes]:
    """(how, suffix, bytes): a seed with bit flips, cut, spliced bytes, or a header that lies (an .npy
    header's shape, type, order, length or version; an .npz's zip sizes, offsets, CRC or method; a .pb's
    dims, type, data or external location)."""
    suffix, data = rng.choice(seeds)
    how = rng.choice(("flip", "cut", "splice", "header", "header"))
    if how == "flip":
        return how, suffix, flip_bits(data, [(rng.random(), rng.randrange(8)) for _ in range(rng.randint(1, 12))])
    if how == "cut":
        return how, suffix, data[:rng.randrange(len(data))] + rng.randbytes(rng.randrange(8))
    if how == "splice":
        at = rng.randrange(len(data))
        return how, suffix, data[:at] + rng.randbytes(rng.randint(1, 16)) + data[at + rng.randrange(16):]
    lie = {".npy": _npy_lie, ".npz": _zip_lie, ".pb": _pb_lie}[suffix]
    return how, suffix, lie(rng, data)


def _npy_lie(rng: random.Random, data: bytes, dims: list[int] | None = None) -> bytes:
    """An .npy whose header dict, length field or version says something else than its data."""
    shape = tuple(rng.choice(_DIMS) for _ in range(rng.randrange(6))) if dims is None else tuple(dims)
    descr = rng.choice(_DESCRS)
    typed = descr if descr.startswith("[") else repr(descr)
    header = f"{{'descr': {typed}, 'fortran_order': {rng.choice(_ORDERS)}, 'shape': {shape!r}, }}"
    if rng.random() < 0.2:
        header = rng.choice(["{}", "[1, 2]", "{'descr': '<f4'}", "__import__('os')", "{'shape': (1,) * 64}",
                             "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'x': 1}"])
    body = header.encode("latin1") + b" " * rng.randrange(64) + b"\n"
    major = rng.choice([1, 1, 2, 3, 0, 255])
    length = len(body) + rng.choice([0, 0, 0, -1, 1, -len(body), 1 << 15, rng.randrange(1 << 16)])
    width = 2 if major == 1 else 4
    prefix = b"\x93NUMPY" + bytes([major, 0]) + (max(length, 0) % (1 << (8 * width))).to_bytes(width, "little")
    values = data[-768:]
    return prefix + body + values[:rng.randrange(len(values) + 1)] + rng.randbytes(rng.randrange(4))


def _zip_lie(rng: random.Random, data: bytes) -> bytes:
    """The .npz with fields of its local header, central directory or end record rewritten, or its
    member replaced by a lying .npy."""
    buf = bytearray(data)
    fields = {b"PK\x03\x04": [(6, 2), (8, 2), (14, 4), (18, 4), (22, 4), (26, 2), (28, 2)],
              b"PK\x01\x02": [(8, 2), (10, 2), (16, 4), (20, 4), (24, 4), (28, 2), (30, 2), (42, 4)],
              b"PK\x05\x06": [(8, 2), (10, 2), (12, 4), (16, 4), (20, 2)]}
    if rng.random() < 0.25:  # a member whose .npy header lies, in an archive whose sizes agree
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", rng.choice([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])) as zf:
            zf.writestr(rng.choice(["x.npy", "y.npy", "x", "../x.npy", "x.npy/"]), _npy_lie(rng, data))
        return out.getvalue()
    for _ in range(rng.randint(1, 3)):
        magic = rng.choice(list(fields))
        at = bytes(buf).rfind(magic)
        if at < 0:
            continue
        offset, width = rng.choice(fields[magic])
        value = rng.choice([0, 1, (1 << (8 * width)) - 1, rng.randrange(1 << (8 * width)), len(buf), 1 << 30])
        end = min(at + offset + width, len(buf))
        buf[at + offset:end] = (value % (1 << (8 * width))).to_bytes(width, "little")[:end - at - offset]
    return bytes(buf)


def _pb_lie(rng: random.Random, data: bytes) -> bytes:
    """The TensorProto with other dims, type, data fields or an external location."""
    t = TensorProto.FromString(data)
    for _ in range(rng.randint(1, 3)):
        kind = rng.randrange(6)
        if kind == 0:
            t.ClearField("dims")
            t.dims.extend(rng.choice([d for d in _DIMS if -2**63 <= d < 2**63]) for _ in range(rng.randrange(6)))
        elif kind == 1:
            t.data_type = rng.choice([rng.randrange(30), 0, 8, 16, 17, 22, 23, 24, 25])
        elif kind == 2:
            t.raw_data = t.raw_data[:rng.randrange(len(t.raw_data) + 1)] if t.raw_data else rng.randbytes(7)
        elif kind == 3:
            t.string_data.extend([rng.randbytes(rng.randrange(9)) for _ in range(rng.randrange(4))])
            t.int64_data.extend(rng.randrange(-2**63, 2**63) for _ in range(rng.randrange(4)))
        elif kind == 4:
            t.data_location = TensorProto.EXTERNAL
            del t.external_data[:]
            for key, value in rng.sample(_EXTERNAL_ENTRIES, rng.randint(1, 3)):
                t.external_data.add(key=key, value=value)
        else:
            t.segment.begin, t.segment.end = rng.randrange(-9, 9), rng.randrange(-9, 2**40)
    return t.SerializeToString()


_EXTERNAL_ENTRIES = [("location", "values.bin"), ("location", "../secret.bin"), ("location", "/dev/zero"),
                     ("location", "."), ("location", ""), ("location", "x\x00y"), ("offset", "-5"),
                     ("offset", "99999999999999999999"), ("length", "768"), ("length", "-1"), ("length", "1e3"),
                     ("checksum", "x"), ("location", "values.bin"), ("offset", "4"), ("length", str(1 << 40))]


def exercise_input(folder: Path, suffix: str, data: bytes, spec_key: str) -> str:
    """Reads ``data`` as a run-input file the ways the tool does (one input; for an .npz, also all of
    them and its names) in ``folder``, where ``values.bin`` lies beside it and ``secret.bin`` above.
    Returns "read" or "refused: ..."; a refusal that is not one sentence raises AssertionError, and
    any other exception propagates."""
    from onnxviz.model.runner import RunError
    from onnxviz.model.runner.input_files import inputs_file_names, read_array_file, read_inputs_file
    from onnxviz.model.runner.inputs import InputSpec

    (folder / "values.bin").write_bytes(VALUES)
    (folder.parent / "secret.bin").write_bytes(VALUES)
    path = folder / f"input{suffix}"
    path.write_bytes(data)
    spec = InputSpec(*FUZZ_SPECS[spec_key])  # type: ignore[arg-type]
    outcome = "read"
    readers = [lambda: read_array_file(path, spec)]
    if suffix == ".npz":
        readers += [lambda: inputs_file_names(path), lambda: read_inputs_file(path, [spec])]
    for read in readers:
        try:
            read()
        except RunError as exc:
            assert_one_sentence(exc.message)
            outcome = f"refused: {exc.message}"
    return outcome


def assert_one_sentence(message: str) -> None:
    """A refusal as the user reads it: one line ending in a full stop, short, without a traceback."""
    assert message.endswith((".", ".)")) and "\n" not in message and len(message) < 600, repr(message)
    assert "Traceback" not in message and "Error:" not in message, repr(message)
