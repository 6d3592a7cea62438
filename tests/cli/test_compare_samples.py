"""``compare --inputs`` over several samples: each pair's figures per sample, their mean and their worst, checked
against single-sample comparisons of the same samples; and ``diff --hide`` with every changed attribute's
values."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import TEST_DATA, run_cli
from onnx import helper

EXPORTS = TEST_DATA / "exports"
FLOAT, QDQ = EXPORTS / "resnet_float.onnx", EXPORTS / "resnet_int8_qdq.onnx"
MEASURES = ("max_abs", "max_rel", "cosine", "sqnr_db", "outside")


def _samples(folder: Path, count: int) -> list[Path]:
    folder.mkdir()
    paths = []
    for k in range(count):
        image = np.random.default_rng([k, 7]).standard_normal((1, 3, 32, 32)).astype(np.float32) * (1 + k)
        paths.append(folder / f"sample_{k}.npz")
        np.savez(paths[-1], image=image)
    return paths


def test_several_samples_give_each_pairs_mean_and_worst_as_single_runs_do(capsys: pytest.CaptureFixture[str],
                                                                          tmp_path: Path) -> None:
    paths = _samples(tmp_path / "calibration", 3)
    code, out, err = run_cli(capsys, "compare", str(FLOAT), str(QDQ), "--inputs", str(tmp_path / "calibration"),
                             "--json")
    assert code in (0, 1), err
    over = json.loads(out)
    assert over["samples"] == ["sample_0.npz", "sample_1.npz", "sample_2.npz"]
    singles = []
    for path in paths:
        code, out, err = run_cli(capsys, "compare", str(FLOAT), str(QDQ), "--inputs", str(path), "--json")
        assert code in (0, 1), err
        singles.append({(p["a"], p["b"]): p for p in json.loads(out)["pairs"]})
    assert {(p["a"], p["b"]) for p in over["pairs"]} == set(singles[0])
    for pair in over["pairs"]:
        per_sample = [s[(pair["a"], pair["b"])] for s in singles]
        for m in MEASURES:
            figures = [p[m] for p in per_sample]
            assert [s[m] for s in pair["samples"]] == figures
            assert pair["mean"][m] == pytest.approx(float(np.mean(figures)), rel=1e-12)
            worst = min(figures) if m in ("cosine", "sqnr_db") else max(figures)
            assert pair[m] == worst
        assert pair["beyond"] == [] or pair["outside"] > 0
        added = [s[(pair["a"], pair["b"])]["added"] for s in singles]  # the error B's layer adds on its own
        assert [s["added"] for s in pair["samples"]] == added
        if all(a is not None for a in added):
            assert pair["added"]["sqnr_db"] == min(a["sqnr_db"] for a in added)
            assert pair["mean"]["added"]["sqnr_db"] == pytest.approx(float(np.mean([a["sqnr_db"] for a in added])))
    assert sum(p["added"] is not None for p in over["pairs"]) >= 7  # every Conv at least
    worst_first = [p["sqnr_db"] for p in over["pairs"]]  # --sort sqnr by default, as for one sample
    assert worst_first == sorted(worst_first)
    single = json.loads(run_cli(capsys, "compare", str(FLOAT), str(QDQ), "--inputs", str(paths[0]), "--json")[1])
    for key in ("aligned_fraction", "aligned_nodes_fraction", "values_a", "unmatched_a", "unmatched_b"):
        assert over[key] == single[key], key  # one shape of result, one sample or several
    code, text, _ = run_cli(capsys, "compare", str(FLOAT), str(QDQ), "--inputs", *map(str, paths))
    assert text.startswith("resnet_float.onnx vs resnet_int8_qdq.onnx over 3 samples: 17 value pairs")
    top = over["pairs"][0]
    assert f"{top['mean']['max_rel']:.4g} / {top['max_rel']:.4g}" in text


@pytest.mark.parametrize(("sort", "field", "lowest_first"), [("sqnr", "sqnr_db", True), ("cosine", "cosine", True),
                                                             ("max_abs", "max_abs", False), ("max_rel", "max_rel", False)])
def test_several_samples_are_sorted_by_the_measure_asked_for(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                            sort: str, field: str, lowest_first: bool) -> None:
    paths = _samples(tmp_path / "calibration", 2)
    code, out, err = run_cli(capsys, "compare", str(FLOAT), str(QDQ), "--inputs", *map(str, paths), "--json",
                             "--sort", sort)
    assert code in (0, 1), err
    figures = [p[field] for p in json.loads(out)["pairs"] if p["max_abs"] != 0]
    assert len(figures) > 10 and figures == sorted(figures, reverse=not lowest_first)
    _, text, _ = run_cli(capsys, "compare", str(FLOAT), str(QDQ), "--inputs", *map(str, paths), "--sort", sort)
    first = json.loads(out)["pairs"][0]
    assert text.splitlines()[2].lstrip("! ").split()[0] == first["a"]  # the text table's first row is the JSON's first pair


def test_several_samples_compare_the_deployed_sessions_as_one_sample_does(capsys: pytest.CaptureFixture[str],
                                                                         tmp_path: Path) -> None:
    paths = _samples(tmp_path / "calibration", 2)
    code, out, err = run_cli(capsys, "compare", str(FLOAT), str(QDQ), "--inputs", *map(str, paths), "--json",
                             "--optimized")
    assert code in (0, 1), err
    over = json.loads(out)
    assert over["optimized"] and over["ran_a"]["optimized"] and over["ran_b"]["optimized"]
    singles = []
    for path in paths:
        code, out, err = run_cli(capsys, "compare", str(FLOAT), str(QDQ), "--inputs", str(path), "--json",
                                 "--optimized")
        assert code in (0, 1), err
        singles.append({(p["a"], p["b"]): p for p in json.loads(out)["pairs"]})
    assert {(p["a"], p["b"]) for p in over["pairs"]} == set(singles[0])
    for pair in over["pairs"]:
        assert [s["sqnr_db"] for s in pair["samples"]] == [s[(pair["a"], pair["b"])]["sqnr_db"] for s in singles]
    outputs = [p for p in over["pairs"] if p["a"] == "logits"]  # the deployed sessions' output, compared
    assert len(outputs) == 1 and outputs[0]["measured_samples"] == 2


def test_one_sample_folder_compares_as_one_npz(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from onnx import numpy_helper

    paths = _samples(tmp_path / "one", 1)
    image = np.load(paths[0])["image"]
    folder = tmp_path / "pb"
    folder.mkdir()
    (folder / "input_0.pb").write_bytes(numpy_helper.from_array(image, "image").SerializeToString())
    code, a, _ = run_cli(capsys, "compare", str(FLOAT), str(QDQ), "--inputs", str(paths[0]), "--json")
    code_b, b, _ = run_cli(capsys, "compare", str(FLOAT), str(QDQ), "--inputs", str(folder), "--json")
    assert code == code_b and json.loads(a)["pairs"] == json.loads(b)["pairs"] and "samples" not in json.loads(a)
    ran = json.loads(a)["ran_a"]
    assert ran == {"engine": "onnxruntime", "optimized": False, "dims": {},
                   "inputs": [{"name": "image", "shape": [1, 3, 32, 32], "dtype": "float32", "generated": False}]}
    _, text, _ = run_cli(capsys, "compare", str(FLOAT), str(QDQ))
    assert "A ran on onnxruntime, graph optimizations off; inputs: image float32 [1, 3, 32, 32] (generated)" in text


def _renamed_copy(tmp_path: Path) -> Path:
    """BERT with every node renamed (another exporter's naming), one LayerNormalization's epsilon and one
    Softmax's axis changed, and an axis written on a Gather that had none (its default, 0)."""
    model = onnx.load(str(EXPORTS / "bert_legacy.onnx"))
    gather = next(n for n in model.graph.node if n.name == "/word_embeddings/Gather")  # no axis written
    for i, node in enumerate(model.graph.node):
        node.name = f"renamed_{i}"
    norm = next(n for n in model.graph.node if n.op_type == "LayerNormalization")
    next(a for a in norm.attribute if a.name == "epsilon").f = 1e-3
    softmax = next(n for n in model.graph.node if n.op_type == "Softmax")
    next(a for a in softmax.attribute if a.name == "axis").i = 1
    gather.attribute.append(helper.make_attribute("axis", 1))
    path = tmp_path / "renamed.onnx"
    onnx.save(model, path)
    return path


def test_diff_hides_renames_and_gives_every_changed_attributes_values(capsys: pytest.CaptureFixture[str],
                                                                      tmp_path: Path) -> None:
    a, b = EXPORTS / "bert_legacy.onnx", _renamed_copy(tmp_path)
    code, out, _ = run_cli(capsys, "diff", str(a), str(b), "--json")
    everything = json.loads(out)
    assert code == 1 and len(everything["differences"]) == 212 and "hidden" not in everything
    code, out, _ = run_cli(capsys, "diff", str(a), str(b), "--json", "--hide", "renames,value_info")
    shown = json.loads(out)
    assert code == 1 and shown["hidden"] == {"renames": 209, "value_info": 0}
    assert shown["counts"] == everything["counts"]  # the models' differences; the list is what is shown
    model_a, model_b = onnx.load(str(a)), onnx.load(str(b))
    listed = {d["b"]: d for d in shown["differences"]}
    assert len(listed) == 3
    for d in listed.values():
        node_a, node_b = model_a.graph.node[d["node_a"]], model_b.graph.node[d["node_b"]]
        for entry in d["attribute_values"]:
            attr_a = next((x for x in node_a.attribute if x.name == entry["name"]), None)
            attr_b = next(x for x in node_b.attribute if x.name == entry["name"])
            assert entry["b"] == pytest.approx(helper.get_attribute_value(attr_b))
            if attr_a is None:  # absent in A: the schema's default, said to be one
                schema = onnx.defs.get_schema(node_a.op_type, node_a.domain)
                default = helper.get_attribute_value(schema.attributes[entry["name"]].default_value)
                assert entry["a"] == default and entry["a_default"] is True
            else:
                assert entry["a"] == pytest.approx(helper.get_attribute_value(attr_a))
    epsilon = next(d for d in shown["differences"] if d["op_type"] == "LayerNormalization")
    assert epsilon["attribute_values"] == [{"name": "epsilon", "a": 1e-12, "b": 0.001}]
    code, text, _ = run_cli(capsys, "diff", str(a), str(b), "--hide", "renames")
    lines = text.splitlines()
    assert lines[0].endswith("(209 hidden: 209 renames)") and len(lines) == 4
    assert "/word_embeddings/Gather -> renamed_" in lines[1]
    assert lines[1].endswith(": op_type Gather; changes name, attributes; attributes axis (default 0) -> 1")
    assert lines[2].endswith("attributes epsilon 1e-12 -> 0.001")
    assert lines[3].endswith("attributes axis -1 -> 1")


def test_diff_of_renames_only_exits_0_when_they_are_hidden(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    model = onnx.load(str(FLOAT))
    for i, node in enumerate(model.graph.node):
        node.name = f"n{i}"
    onnx.save(model, tmp_path / "renamed.onnx")
    code, _, _ = run_cli(capsys, "diff", str(FLOAT), str(tmp_path / "renamed.onnx"))
    assert code == 1
    code, out, _ = run_cli(capsys, "diff", str(FLOAT), str(tmp_path / "renamed.onnx"), "--hide", "renames")
    assert code == 0 and out.count("\n") == 1 and f"({len(model.graph.node)} hidden: " in out
    code, _, err = run_cli(capsys, "diff", str(FLOAT), str(FLOAT), "--hide", "names")
    assert code == 2 and "--hide: 'names' is not one of renames, value_info" in err


def test_the_python_api_reads_a_comparison_over_a_folder_of_samples(tmp_path: Path) -> None:
    """onnxviz.compare(inputs=FOLDER) read the node fraction as aligned_fraction (0.22 for a QDQ copy whose
    every value is paired): the JSON of several samples now has one sample's keys."""
    import onnxviz

    _samples(tmp_path / "calibration", 2)
    result = onnxviz.compare(FLOAT, QDQ, inputs=tmp_path / "calibration", sort="cosine")
    assert result.to_dict()["samples"] == ["sample_0.npz", "sample_1.npz"]
    assert result.aligned_fraction == 1.0 and result.unmatched_a == [] and len(result.pairs) == 17
    cosines = [p.cosine for p in result.pairs if p.max_abs != 0]
    assert cosines == sorted(cosines) and sum(p.added is not None for p in result.pairs) >= 7
