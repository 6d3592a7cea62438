"""The Python API's results: onnxviz.compare and onnxviz.diff return typed dataclasses whose to_dict() is
what the command's --json prints (the command run as a user runs it, in a process of its own), onnxviz.run
returns numpy arrays equal to onnxruntime's own, and the package exports what the README names."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from conftest import EXAMPLE, REPO

import onnxviz

EXPORTS = REPO / "tests" / "data" / "exports"
FLOAT, QDQ = EXPORTS / "resnet_float.onnx", EXPORTS / "resnet_int8_qdq.onnx"


def cli_json(*args: str | Path) -> dict[str, object]:
    """``onnxviz ARGS --json`` in a process of its own, as a script in CI runs it."""
    done = subprocess.run([sys.executable, "-m", "onnxviz", *map(str, args), "--json"], capture_output=True,
                          text=True, timeout=300, cwd=REPO, env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert done.returncode in (0, 1), done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


def _image(seed: int = 3) -> np.ndarray:
    spec = onnx.load(FLOAT).graph.input[0].type.tensor_type.shape.dim
    shape = [d.dim_value or 1 for d in spec]
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_compare_is_the_commands_result_typed(tmp_path: Path) -> None:
    x = _image()
    name = onnx.load(FLOAT).graph.input[0].name
    np.savez(tmp_path / "x.npz", **{name: x})
    result = onnxviz.compare(FLOAT, QDQ, {name: x}, tolerance={"sqnr_db": 20})
    assert result.to_dict() == cli_json("compare", FLOAT, QDQ, "--inputs", tmp_path / "x.npz",
                                        "--tolerance", "sqnr_db=20.0")
    assert isinstance(result, onnxviz.CompareResult) and (result.a, result.b) == ("resnet_float.onnx",
                                                                                 "resnet_int8_qdq.onnx")
    assert result.pairs and all(isinstance(p, onnxviz.PairMeasure) for p in result.pairs)
    first = result.to_dict()["pairs"][0]  # type: ignore[index]
    assert (result.pairs[0].a, result.pairs[0].b, result.pairs[0].sqnr_db, result.pairs[0].how) == \
        (first["a"], first["b"], first["sqnr_db"], first["how"])
    assert result.within_tolerance == (result.beyond_tolerance == 0)
    assert result.weights and all(isinstance(w, onnxviz.WeightMeasure) and w.quantized_b for w in result.weights)
    frame = result.to_pandas()
    assert list(frame["a"]) == [p.a for p in result.pairs] and "sqnr_db" in frame.columns
    assert len(result.to_pandas("weights")) == len(result.weights)
    result.to_dict()["pairs"].clear()  # type: ignore[attr-defined]
    assert result.to_dict()["pairs"]  # a copy each time


def test_compare_of_models_held_in_memory_measures_the_same() -> None:
    x = _image(5)
    name = onnx.load(FLOAT).graph.input[0].name
    from_files = onnxviz.compare(FLOAT, QDQ, {name: x})
    held = onnxviz.compare(onnx.load(FLOAT), QDQ.read_bytes(), {name: x})
    assert [(p.a, p.b, p.max_abs, p.cosine) for p in held.pairs] == \
        [(p.a, p.b, p.max_abs, p.cosine) for p in from_files.pairs]
    assert held.a == f"{onnx.load(FLOAT).graph.name}.onnx"


def test_diff_is_the_commands_result_typed(tmp_path: Path) -> None:
    model = onnx.load(EXAMPLE)
    model.graph.node[4].name = "renamed"
    onnx.save(model, tmp_path / "renamed.onnx")
    result = onnxviz.diff(EXAMPLE, model)
    expected = cli_json("diff", EXAMPLE, tmp_path / "renamed.onnx")
    expected["b"] = result.b  # the command names the file; a model held in memory goes by its graph's name
    assert result.to_dict() == expected
    assert not result.identical and result.counts == {"node_changed": 1}
    change = result.differences[0]
    assert isinstance(change, onnxviz.DiffEntry)
    assert (change.kind, change.b, change.node_a, change.details["changes"]) == ("node_changed", "renamed", 4,
                                                                               ["name"])
    assert result.alignment.pairs == result.alignment.nodes_a == 24
    assert list(result.to_pandas()["kind"]) == ["node_changed"]
    assert onnxviz.diff(EXAMPLE, EXAMPLE).identical


def test_run_returns_onnxruntimes_values_as_arrays() -> None:
    x = np.random.default_rng(0).standard_normal((2, 3, 32, 32)).astype(np.float32)
    session = ort.InferenceSession(str(EXAMPLE), providers=["CPUExecutionProvider"])
    expected = session.run(None, {"image": x})[0]
    out = onnxviz.run(EXAMPLE, {"image": x})
    assert isinstance(out, onnxviz.RunOutput) and out.engine == "onnxruntime" and out.values == {}
    np.testing.assert_allclose(out["probabilities"], expected, rtol=1e-5, atol=1e-6)
    assert out.outputs["probabilities"].flags.writeable  # a copy of its own, nothing left on disk
    # every value, checked against onnxruntime asked for an intermediate value as an output
    model = onnx.load(EXAMPLE)
    relu = next(n for n in model.graph.node if n.op_type == "Relu")
    everything = onnxviz.run(model, {"image": x}, capture="all")
    model.graph.output.append(onnx.ValueInfoProto(name=relu.output[0]))
    direct = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(everything.values[relu.output[0]], direct.run([relu.output[0]], {"image": x})[0],
                               rtol=1e-5, atol=1e-6)
    assert "image" in everything.values and len(everything.values) >= len(model.graph.node)
    part = onnxviz.run(EXAMPLE, {"image": x}, capture=[relu.output[0]])
    assert relu.output[0] in part.values and len(part.values) < len(everything.values)


def test_api_errors_are_one_sentence(tmp_path: Path) -> None:
    with pytest.raises(onnxviz.OnnxvizError, match="no input named 'nope'"):
        onnxviz.run(EXAMPLE, {"nope": np.zeros(1)})
    with pytest.raises(onnxviz.OnnxvizError, match="a dict is not a model"):
        onnxviz.diff({}, EXAMPLE)
    with pytest.raises(onnxviz.OnnxvizError, match="missing.onnx: no such file"):
        onnxviz.compare(tmp_path / "missing.onnx", EXAMPLE)
    with pytest.raises(onnxviz.OnnxvizError, match="capture"):
        onnxviz.run(EXAMPLE, capture="everything")
    with pytest.raises(onnxviz.OnnxvizError, match="engine"):
        onnxviz.run(EXAMPLE, engine="tensorrt")
    unread = onnx.load(EXAMPLE)
    onnx.external_data_helper.convert_model_to_external_data(unread, location="w.bin", size_threshold=0)
    with pytest.raises(onnxviz.OnnxvizError, match="pass the model's path"):
        onnxviz.diff(unread, EXAMPLE)


def test_the_package_exports_what_the_readme_names() -> None:
    from onnxviz.model.io.saving import SaveQuestion

    assert onnxviz.SaveQuestion is SaveQuestion and issubclass(onnxviz.SaveQuestion, onnxviz.OnnxvizError)
    for name in onnxviz.__all__:
        assert getattr(onnxviz, name) is not None, name
    assert {"show", "compare", "diff", "run", "open", "SaveQuestion", "ModelWindow"} <= set(dir(onnxviz))
    with pytest.raises(AttributeError):
        _ = onnxviz.nothing_here  # type: ignore[attr-defined]


def test_importing_the_package_imports_neither_onnx_nor_qt() -> None:
    code = "import sys, onnxviz; print(sorted(m for m in ('onnx', 'numpy', 'PySide6') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert done.stdout.strip() == "[]", done.stderr
