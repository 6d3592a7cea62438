"""Builds hostile run-input files (nothing big is committed): zip bombs, lying .npy headers, TensorProto
.pb files whose external data points elsewhere, FIFOs, links to /dev/zero, names with control characters.

Each :class:`InputCase` is given as input ``x`` of ``MODELS[case.model]`` (``--input x=FILE``, or
``--inputs FILE`` when ``whole``) and must be refused with ``message`` (a fragment of the one sentence,
as the terminal shows it), or run when ``message`` is empty. The command runs in ``folder/cwd``.
"""

from __future__ import annotations

import io
import os
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.lib import format as npy_format
from onnx import TensorProto, helper

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
    InputCase("npz_bomb", _bomb, "bomb.npz's array 'x' holds 512.0 MB, far more than input 'x' (1x3x8x8 float32) "
              "can take; refused before reading it"),
    InputCase("npz_bomb_inputs", lambda f: f / "bomb.npz", "bomb.npz's array 'x' holds 512.0 MB", whole=True),
    InputCase("npz_lying_header", _lying_npz, "input 'x' expects 4 dimensions (1x3x8x8) but the array has shape "
              "1099511627776"),
    InputCase("npz_lying_header_free", lambda f: f / "lying.npz", "lying.npz's array 'x' would take 4.0 TB, more "
              "than the", model="free"),
    InputCase("npy_huge_shape", _write("huge.npy", _npy_header((1 << 40,)) + bytes(16)),
              "huge.npy would take 4.0 TB, more than the", model="free"),
    InputCase("npy_huge_header", _write("header.npy", _npy_header(SHAPE, size=20000) + bytes(768)),
              "header.npy is a NumPy file that is truncated or damaged"),
    InputCase("npy_short", _write("short.npy", _npy_header(SHAPE) + bytes(100)),
              "short.npy is a NumPy file that is truncated or damaged"),
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
