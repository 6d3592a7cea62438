"""``onnxviz diff`` and ``onnxviz compare``, run as a user runs them (a separate process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import onnx
import pytest
from conftest import REPO
from onnx import helper

EXPORTS = REPO / "tests" / "data" / "exports"
FLOAT, QDQ = EXPORTS / "resnet_float.onnx", EXPORTS / "resnet_int8_qdq.onnx"


def onnxviz(*args: str | Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "onnxviz", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=300, cwd=REPO)


def _edited_copy(tmp_path: Path) -> Path:
    model = onnx.load(FLOAT)
    relu = next(n for n in model.graph.node if n.op_type == "Relu")
    relu.op_type = "Sigmoid"
    gemm = next(n for n in model.graph.node if n.op_type == "Gemm")
    gemm.attribute.append(helper.make_attribute("alpha", 2.0))
    path = tmp_path / "edited.onnx"
    onnx.save(model, path)
    return path


def test_diff_of_identical_models_exits_0() -> None:
    proc = onnxviz("diff", FLOAT, FLOAT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("resnet_float.onnx vs resnet_float.onnx: identical;")
    proc = onnxviz("diff", FLOAT, FLOAT, "--json")
    assert json.loads(proc.stdout)["identical"] is True and json.loads(proc.stdout)["differences"] == []


def test_diff_prints_every_difference_and_exits_1(tmp_path: Path) -> None:
    edited = _edited_copy(tmp_path)
    proc = onnxviz("diff", FLOAT, edited, "--json")
    assert proc.returncode == 1, proc.stderr
    printed = json.loads(proc.stdout)
    assert printed["identical"] is False
    differences = printed["differences"]
    assert [(d["kind"], d["changes"]) for d in differences] == [("node_changed", ["op_type"]),
                                                                 ("node_changed", ["attributes"])]
    assert differences[0]["a"] == differences[0]["b"] and differences[0]["op_type_b"] == "Sigmoid"
    assert differences[1]["attributes"] == ["alpha"] and differences[1]["node_a"] >= 0
    text = onnxviz("diff", FLOAT, edited)
    assert text.returncode == 1
    lines = text.stdout.splitlines()
    assert lines[0].endswith("2 differences: 2 node_changed; 16 of 16 / 16 nodes aligned (100.0%)")
    assert len(lines) == 3 and lines[1].startswith("node_changed: ")


def test_diff_of_float_and_quantized_lists_the_quantizers_work() -> None:
    printed = json.loads(onnxviz("diff", FLOAT, QDQ, "--json").stdout)
    kinds = {d["kind"] for d in printed["differences"]}
    assert {"node_added", "node_removed", "weight_added", "model_changed"} <= kinds
    removed = {d["op_type"] for d in printed["differences"] if d["kind"] == "node_removed"}
    added = {d["op_type"] for d in printed["differences"] if d["kind"] == "node_added"}
    assert removed == {"Relu"} and added == {"QuantizeLinear", "DequantizeLinear"}


@pytest.mark.parametrize("args", [("missing.onnx", FLOAT), (FLOAT,), (REPO / "README.md", FLOAT)])
def test_diff_errors_are_one_sentence_and_exit_2(args: tuple[str | Path, ...]) -> None:
    proc = onnxviz("diff", *args)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1].startswith("onnxviz: error: ")
    assert "Traceback" not in proc.stderr


def test_compare_float_and_qdq_pairs_layers_worst_first() -> None:
    proc = onnxviz("compare", FLOAT, QDQ, "--inputs", EXPORTS / "inputs" / "resnet_float.npz", "--json")
    assert proc.returncode == 1, proc.stderr  # quantization error is beyond the default rtol 1e-3
    printed = json.loads(proc.stdout)
    pairs = printed["pairs"]
    assert {"a", "b", "max_abs", "max_rel", "cosine", "sqnr_db"} <= set(pairs[0])
    assert [p["sqnr_db"] for p in pairs] == sorted(p["sqnr_db"] for p in pairs)  # worst SQNR first
    relu = next(p for p in pairs if p["a"] == "/stem/stem.2/Relu_output_0")
    assert relu["b"] == "/stem/stem.2/Relu_output_0_DequantizeLinear_Output"
    assert relu["cosine"] > 0.99 and 20 < relu["sqnr_db"] < 60 and relu["max_rel"] < 0.1
    assert printed["unmatched_a"] == [] and printed["unmatched_b"] == []
    weights = printed["weights"]  # float weights against the DequantizeLinear of the int8 ones
    assert len(weights) == 14 and {"a", "b", "max_abs", "max_rel", "cosine", "sqnr_db"} <= set(weights[0])
    conv = next(w for w in weights if w["a"] == "onnx::Conv_62")
    assert conv["b"] == "onnx::Conv_62_quantized" and conv["quantized_b"] and not conv["quantized_a"]
    assert conv["cosine"] > 0.9999 and 40 < conv["sqnr_db"] < 60 and conv["max_rel"] < 0.01
    within = onnxviz("compare", FLOAT, QDQ, "--tolerance", "sqnr_db=20", "--tolerance", "cosine=0.99")
    assert within.returncode == 0, within.stdout + within.stderr
    lines = within.stdout.splitlines()
    assert "value pairs, 0 beyond tolerance" in lines[0]
    assert lines[1].split() == ["A", "B", "max_abs", "max_rel", "cosine", "sqnr_db", "added_sqnr"]
    assert "14 quantized weight pairs (through their DequantizeLinear):" in lines


def test_compare_of_a_model_with_itself_is_exact() -> None:
    proc = onnxviz("compare", FLOAT, FLOAT, "--json")
    assert proc.returncode == 0, proc.stderr
    pairs = json.loads(proc.stdout)["pairs"]
    assert len(pairs) == 16 and all(p["max_abs"] == 0 and p["a"] == p["b"] for p in pairs)


def test_compare_of_unrelated_models_is_an_error() -> None:
    proc = onnxviz("compare", FLOAT, EXPORTS / "sklearn_text_zipmap.onnx")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip() == ("onnxviz: error: no value of resnet_float.onnx pairs with a numeric value of "
                                   "sklearn_text_zipmap.onnx: the two graphs have nothing in common to compare")


@pytest.mark.parametrize(("args", "message"), [
    (["--tolerance", "speed=3"], "is not MEASURE=VALUE"),
    (["--tolerance", "cosine=high"], "is not a number"),
    (["--inputs", "missing.npz"], "missing.npz"),
])
def test_compare_errors_are_one_sentence_and_exit_2(args: list[str], message: str) -> None:
    proc = onnxviz("compare", FLOAT, QDQ, *args)
    assert proc.returncode == 2
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_compare_feeds_renamed_inputs_and_pairs_renamed_values(tmp_path: Path) -> None:
    model = onnx.load(FLOAT)
    renamed = {"image": "pixels"}
    for k, node in enumerate(model.graph.node):
        node.name = f"n{k}"
        node.input[:] = [renamed.setdefault(x, f"v{len(renamed)}") if x else x for x in node.input]
        node.output[:] = [renamed.setdefault(x, f"v{len(renamed)}") for x in node.output]
    for value in list(model.graph.input) + list(model.graph.output) + list(model.graph.value_info):
        value.name = renamed.get(value.name, value.name)
    for t in model.graph.initializer:
        t.name = renamed.get(t.name, t.name)
    path = tmp_path / "renamed.onnx"
    onnx.save(model, path)
    proc = onnxviz("compare", FLOAT, path, "--inputs", EXPORTS / "inputs" / "resnet_float.npz", "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    printed = json.loads(proc.stdout)
    assert len(printed["pairs"]) == 16 and all(p["max_abs"] == 0 for p in printed["pairs"])
    assert all(p["b"] == renamed[p["a"]] for p in printed["pairs"])
    assert printed["unmatched_a"] == printed["unmatched_b"] == [] and printed["aligned_fraction"] == 1.0
    assert printed["aligned_nodes_fraction"] == 1.0 and printed["values_a"] == 16


def test_diff_reads_external_weights_from_each_models_folder(tmp_path: Path) -> None:
    from onnx import numpy_helper

    paths = []
    for side, delta in (("a", 0.0), ("b", 0.125)):
        model = onnx.load(FLOAT)
        weight = next(t for t in model.graph.initializer if len(t.dims) == 4)
        weight.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(weight) + delta, weight.name))
        folder = tmp_path / side
        folder.mkdir()
        onnx.save(model, folder / "model.onnx", save_as_external_data=True, location="weights.bin",
                  size_threshold=0)
        paths.append(folder / "model.onnx")
    proc = onnxviz("diff", *paths, "--json")
    assert proc.returncode == 1, proc.stderr
    (change,) = json.loads(proc.stdout)["differences"]
    assert change["kind"] == "weight_changed" and change["changes"] == ["values"]
    assert change["max_abs"] == pytest.approx(0.125) and change["a"] == change["b"] == weight.name
    (tmp_path / "b" / "weights.bin").unlink()
    broken = onnxviz("diff", *paths)
    assert broken.returncode == 2 and "Traceback" not in broken.stderr
