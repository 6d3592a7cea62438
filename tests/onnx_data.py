"""The ONNX conformance data the tests read: the onnx wheel's model suites, and its operator cases
written out once into the repository's cache folder.

The wheel ships ``onnx/backend/test/data/{light,simple,pytorch-converted,pytorch-operator}`` but not
the operator ("node") cases: those are Python code in ``onnx.backend.test.case.node``. The first use
writes each case as ``node/<test name>/model.onnx`` plus ``test_data_set_0/{input,output}_<i>.pb``
(the layout of the ONNX repository's data folder) into ``.cache/onnxviz-tests/node-onnx-<version>-v<N>/``,
so an onnx upgrade writes them anew. Writing goes to a private folder renamed into place when
complete, so pytest processes started together never see half a folder.

    python tests/onnx_data.py OUT     # write the node cases into OUT/node (what the first use runs)
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

import onnx
from onnx import numpy_helper

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / ".cache" / "onnxviz-tests"
ONNX_DATA = Path(onnx.__file__).parent / "backend" / "test" / "data"
LIGHT_MODELS = ONNX_DATA / "light"
WHEEL_SUITES = ("light", "simple", "pytorch-converted", "pytorch-operator")
FORMAT = 1  # raise when the written layout changes, so old caches are not used


@functools.cache
def node_cases() -> Path:
    """The folder of operator cases (one sub-folder per case), written on first use."""
    final = CACHE / f"node-onnx-{onnx.__version__}-v{FORMAT}"
    if not final.is_dir():
        _write_atomically(final)
    return final / "node"


def node_model(case: str) -> Path:
    """The model of one operator case, e.g. ``node_model("test_loop11")``."""
    return node_cases() / case / "model.onnx"


def corpus_models() -> list[Path]:
    """Every model.onnx of the operator cases, then every model of the wheel's suites."""
    wheel = sorted(p for suite in WHEEL_SUITES for p in (ONNX_DATA / suite).rglob("*.onnx"))
    return sorted(node_cases().glob("*/model.onnx")) + wheel


def model_id(path: Path) -> str:
    """A short test id: the suite and the case, e.g. ``node/test_abs`` or ``light/light_resnet50``."""
    for root in (node_cases().parent, ONNX_DATA):
        if path.is_relative_to(root):
            rel = path.relative_to(root)
            return str(rel.parent if rel.name == "model.onnx" else rel.with_suffix(""))
    return path.stem


def _write_atomically(final: Path) -> None:
    CACHE.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=CACHE, prefix=f".{final.name}-"))
    work.chmod(0o755)  # mkdtemp makes it private
    try:
        done = subprocess.run([sys.executable, __file__, str(work)], capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"writing the ONNX node cases failed:\n{done.stderr[-3000:]}")
        try:
            os.rename(work, final)
        except OSError:
            if not final.is_dir():  # not another process that finished first
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _serialized(value: Any, info: onnx.ValueInfoProto) -> bytes:
    """A case's input or output as the .pb message its declared type calls for."""
    if isinstance(value, onnx.TensorProto):
        return value.SerializeToString()
    kind = info.type.WhichOneof("value")
    make = {"sequence_type": numpy_helper.from_list, "optional_type": numpy_helper.from_optional,
            "map_type": numpy_helper.from_dict}.get(kind, numpy_helper.from_array)
    return make(value, info.name).SerializeToString()


def _write_case(folder: Path, model: onnx.ModelProto, data_sets: list[tuple[list[Any], list[Any]]]) -> None:
    folder.mkdir(parents=True)
    (folder / "model.onnx").write_bytes(model.SerializeToString())
    for k, (inputs, outputs) in enumerate(data_sets):
        data = folder / f"test_data_set_{k}"
        data.mkdir()
        for prefix, values, infos in (("input", inputs, model.graph.input), ("output", outputs, model.graph.output)):
            for i, (value, info) in enumerate(zip(values, infos, strict=False)):
                (data / f"{prefix}_{i}.pb").write_bytes(_serialized(value, info))


def write_node_cases(out: Path) -> int:
    """Write every operator case of the installed onnx into OUT/node; the number written."""
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the cases' own numpy overflow warnings
        cases = collect_testcases()
    for case in cases:
        assert case.model is not None and case.data_sets is not None
        _write_case(out / "node" / case.name, case.model, case.data_sets)
    return len(cases)


if __name__ == "__main__":
    print(f"{write_node_cases(Path(sys.argv[1]))} node cases written")
