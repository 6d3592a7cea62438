"""``onnxviz run``: statistics of the outputs, --dump with index.json, inputs from files, errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import dumped, run_cli, session_processes
from onnx import TensorProto, numpy_helper
from onnx_data import node_model

from onnxviz.model.runner.store import RunResult


def test_run_prints_output_statistics(capsys: pytest.CaptureFixture[str], example_path: Path) -> None:
    code, out, err = run_cli(capsys, "run", str(example_path))
    assert code == 0
    assert "ran on onnxruntime (graph optimizations off)" in out
    assert "inputs: image float32 [1, 3, 32, 32] (generated)" in out
    assert "probabilities: float32 [1, 10]  min " in out
    assert "the generated inputs ran with --dim batch=1" in err


def test_run_dump_writes_index_and_one_file_of_values(capsys: pytest.CaptureFixture[str], example_path: Path,
                                                      tmp_path: Path) -> None:
    dump = tmp_path / "dump"
    code, out, _ = run_cli(capsys, "run", str(example_path), "--dim", "batch=3", "--seed", "7",
                        "--dump", str(dump), "--json")
    assert code == 0
    printed = json.loads(out)
    assert printed["outputs"][0]["shape"] == [3, 10] and printed["values"] == 25
    index = json.loads((dump / "index.json").read_text())
    conv = index["values"]["stem.conv"]
    assert conv["op_type"] == "Conv" and conv["node"] == 0 and conv["engine"] == "onnxruntime"
    assert conv["shape"] == [3, 16, 16, 16] and conv["stats"]["dtype"] == "float32"
    assert {v["file"] for v in index["values"].values()} == {"values.bin"}
    assert not list(dump.glob("*.npy"))
    array = dumped(dump, "stem.conv")
    assert array.shape == (3, 16, 16, 16)
    assert conv["stats"]["maximum"] == pytest.approx(float(array.max()))
    probs = dumped(dump, "probabilities")
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-5)
    moved = tmp_path / "moved"
    dump.rename(moved)  # the folder holds its values itself: read from where it is now
    result = RunResult.load(moved)
    np.testing.assert_array_equal(result.array("stem.conv"), array)


def test_run_uses_given_inputs_same_as_npz(capsys: pytest.CaptureFixture[str], example_path: Path,
                                           tmp_path: Path) -> None:
    image = np.random.default_rng(1).random((2, 3, 32, 32), dtype=np.float32)
    np.save(tmp_path / "image.npy", image)
    np.savez(tmp_path / "inputs.npz", image=image)
    (tmp_path / "image.pb").write_bytes(numpy_helper.from_array(image).SerializeToString())
    outs = []
    for args in (["--input", f"image={tmp_path / 'image.npy'}"], ["--inputs", str(tmp_path / "inputs.npz")],
                 ["--input", f"image={tmp_path / 'image.pb'}", "--engine", "reference"]):
        code, out, err = run_cli(capsys, "run", str(example_path), "--json", *args)
        assert code == 0 and "set to 1" not in err
        outs.append(json.loads(out)["outputs"][0])
    assert outs[0]["shape"] == [2, 10]
    assert outs[0]["max"] == outs[1]["max"] == pytest.approx(outs[2]["max"], rel=1e-5)
    assert outs[2]["engine"] == "reference"


@pytest.mark.parametrize(("args", "message"), [
    (["--input", "image=x.npy"], "x.npy does not exist"),
    (["--input", "nope=x.npy"], "the model has no input named 'nope'; its inputs are: image"),
    (["--dim", "batch=zero"], "'batch=zero' is not NAME=SIZE"),
    (["--input", "image"], "'image' is not NAME=PATH"),
])
def test_run_bad_arguments_are_one_line(capsys: pytest.CaptureFixture[str], example_path: Path,
                                        args: list[str], message: str) -> None:
    code, _, err = run_cli(capsys, "run", str(example_path), *args)
    assert code == 2
    assert message in err and err.count("\n") == 1 and err.startswith("onnxviz: error: ")


def test_run_refuses_invalid_model(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from onnx import helper

    graph = helper.make_graph([helper.make_node("Relu", ["ghost"], ["y"], name="relu")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    path = tmp_path / "bad.onnx"
    path.write_bytes(helper.make_model(graph, ir_version=8).SerializeToString())
    code, _, err = run_cli(capsys, "run", str(path))
    assert code == 2
    assert "cannot run: input 'ghost' of relu is not defined by anything" in err


def test_run_wrong_input_shape(capsys: pytest.CaptureFixture[str], example_path: Path, tmp_path: Path) -> None:
    np.save(tmp_path / "small.npy", np.zeros((1, 3, 8, 8), np.float32))
    code, _, err = run_cli(capsys, "run", str(example_path), "--input", f"image={tmp_path / 'small.npy'}")
    assert code == 2
    assert "input 'image' expects size 32 on axis 2" in err


def test_run_refuses_a_generated_input_too_big_for_memory(capsys: pytest.CaptureFixture[str],
                                                          example_path: Path) -> None:
    code, out, err = run_cli(capsys, "run", str(example_path), "--dim", "batch=100000000")
    assert code == 2 and not out
    assert "input 'image' would take 1.1 TB (100000000×3×32×32 float32)" in err
    assert err.rstrip().endswith("choose smaller sizes for batch") and "Traceback" not in err


def test_run_notes_a_given_array_converted_to_the_inputs_type(capsys: pytest.CaptureFixture[str],
                                                              example_path: Path, tmp_path: Path) -> None:
    np.save(tmp_path / "ints.npy", np.ones((1, 3, 32, 32), np.int64))
    code, _, err = run_cli(capsys, "run", str(example_path), "--input", f"image={tmp_path / 'ints.npy'}")
    assert code == 0 and "note: input 'image' was given as int64 and converted to float32" in err
    np.save(tmp_path / "floats.npy", np.ones((1, 3, 32, 32), np.float32))
    code, _, err = run_cli(capsys, "run", str(example_path), "--input", f"image={tmp_path / 'floats.npy'}")
    assert code == 0 and "converted" not in err


def test_run_reads_external_data(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import onnx
    from onnx import helper

    weight = numpy_helper.from_array(np.arange(64 * 8, dtype=np.float32).reshape(64, 8), "w")
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])], [weight])
    model = helper.make_model(graph, ir_version=8, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, tmp_path / "m.onnx", save_as_external_data=True, location="m.data", size_threshold=0)
    np.savez(tmp_path / "in.npz", x=np.ones((1, 64), np.float32))
    dump = tmp_path / "dump"
    code, _, err = run_cli(capsys, "run", str(tmp_path / "m.onnx"), "--inputs", str(tmp_path / "in.npz"),
                        "--dump", str(dump))
    assert code == 0, err
    y = dumped(dump, "y")
    np.testing.assert_array_equal(y, np.arange(64 * 8, dtype=np.float32).reshape(64, 8).sum(axis=0, keepdims=True))


def test_run_dump_has_values_inside_scan_body(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    dump = tmp_path / "dump"
    code, out, _ = run_cli(capsys, "run", str(node_model("test_scan9_sum")),
                        "--dump", str(dump))
    assert code == 0
    assert "inside 0.body (reference evaluator): iteration 3 of 3, the last one" in out
    index = json.loads((dump / "index.json").read_text())
    inner = index["values"]["0.body::sum_out"]
    assert inner["scope"] == "0.body" and inner["name"] == "sum_out" and inner["engine"] == "reference"
    np.testing.assert_array_equal(dumped(dump, "0.body::sum_out"), dumped(dump, "y"))
    assert index["values"]["y"]["scope"] == ""


@pytest.mark.parametrize("engine", ["ort", "reference"])
def test_run_all_nan_output_shows_counts_and_first_node(capfd: pytest.CaptureFixture[str], tmp_path: Path,
                                                        engine: str) -> None:
    capsys = capfd  # the worker process writes to the real stderr: a numpy warning would land there
    from tests.model.runner.test_runner import _nan_model

    path = tmp_path / "nan.onnx"
    path.write_bytes(_nan_model().SerializeToString())
    code, out, err = run_cli(capsys, "run", str(path), "--engine", engine)
    assert code == 0
    assert "y: float32 [2, 3]  NaN 6  Inf 0" in out  # every element NaN: no min/max, but the counts
    assert "--dump DIR captures every value" in out
    assert "RuntimeWarning" not in err
    code, out, _ = run_cli(capsys, "run", str(path), "--engine", engine, "--dump", str(tmp_path / engine))
    assert "first NaN/Inf: d (output of Sqrt node 'sqrt')" in out
    code, out, _ = run_cli(capsys, "run", str(path), "--engine", engine, "--dump", str(tmp_path / engine), "--json")
    assert json.loads(out)["first_nonfinite"] == {"name": "d", "node": "sqrt", "op_type": "Sqrt"}


@pytest.mark.parametrize(("content", "message"), [
    (b"PK\x03\x04 not a zip", "bad.npz is an .npz file that is truncated or damaged"),
    (None, "bad.npz holds one unnamed array; an inputs file must be an .npz"),
])
def test_run_bad_inputs_file_is_one_sentence(capsys: pytest.CaptureFixture[str], example_path: Path,
                                             tmp_path: Path, content: bytes | None, message: str) -> None:
    bad = tmp_path / "bad.npz"
    if content is None:  # a .npy under any name
        with bad.open("wb") as f:
            np.save(f, np.zeros((1, 3, 32, 32), np.float32))
    else:
        bad.write_bytes(content)
    code, _, err = run_cli(capsys, "run", str(example_path), "--inputs", str(bad))
    assert code == 2
    assert err == f"onnxviz: error: {message}\n"



def _bad_array_files(folder: Path) -> dict[str, str]:
    """File name -> the one sentence ``--input x=FILE`` must give for it (no word of pickles)."""
    from onnx import helper

    (folder / "t.npy").write_text("1 2 3\n")
    (folder / "empty.npy").write_bytes(b"")
    (folder / "empty.pb").write_bytes(b"")
    (folder / "model.pb").write_bytes(helper.make_model(helper.make_graph([], "g", [], [])).SerializeToString())
    (folder / "text.pb").write_text("not a tensor\n")
    np.save(folder / "objects.npy", np.array([{"a": 1}], dtype=object))
    np.savez(folder / "objects.npz", x=np.array([{"a": 1}], dtype=object))
    np.save(folder / "short.npy", np.zeros((1, 3, 32, 32), np.float32))
    (folder / "short.npy").write_bytes((folder / "short.npy").read_bytes()[:-100])
    (folder / "folder.npy").mkdir()
    return {"t.npy": "t.npy is not a NumPy array file (.npy or .npz)",
            "empty.npy": "empty.npy is empty", "empty.pb": "empty.pb is empty",
            "model.pb": "model.pb is not an ONNX TensorProto file", "text.pb": "text.pb is not an ONNX TensorProto file",
            "objects.npy": "objects.npy holds Python objects; onnxviz loads plain arrays only, never pickles",
            "objects.npz": "objects.npz's array 'x' holds Python objects; onnxviz loads plain arrays only, never pickles",
            "short.npy": "short.npy is a NumPy file that is truncated or damaged",
            "folder.npy": f"{folder / 'folder.npy'} is a folder, not an array file"}


def test_run_input_that_is_no_array_file_is_one_sentence(capsys: pytest.CaptureFixture[str], example_path: Path,
                                                         tmp_path: Path) -> None:
    for file, message in _bad_array_files(tmp_path).items():
        code, _, err = run_cli(capsys, "run", str(example_path), "--input", f"image={tmp_path / file}")
        assert code == 2
        assert err == f"onnxviz: error: {message}\n", file
    code, _, err = run_cli(capsys, "run", str(example_path), "--inputs", str(tmp_path / "t.npy"))
    assert err == "onnxviz: error: t.npy is not a NumPy array file (.npy or .npz)\n"

def test_run_bfloat16_input(capsys: pytest.CaptureFixture[str]) -> None:
    """A bfloat16 input crosses to the worker in an .npz, which keeps it as raw bytes ('|V2')."""
    model = node_model("test_castlike_FLOAT_to_BFLOAT16_expanded")
    code, out, err = run_cli(capsys, "run", str(model), "--json")
    assert code == 0, err
    assert json.loads(out)["outputs"][0]["dtype"] == "bfloat16"


def _chain_model(path: Path, count: int) -> Path:
    """``count`` unnamed Relu nodes in a row, except the first, named 'first'."""
    import onnx
    from onnx import helper

    nodes = [helper.make_node("Relu", [f"v{i}"], [f"v{i + 1}"], name="first" if i == 0 else "")
             for i in range(count)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("v0", TensorProto.FLOAT, [64, 64])],
                              [helper.make_tensor_value_info(f"v{count}", TensorProto.FLOAT, [64, 64])])
    onnx.save(helper.make_model(graph, ir_version=8, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def test_run_profile_prints_slowest_nodes(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = _chain_model(tmp_path / "chain.onnx", 12)
    code, out, _ = run_cli(capsys, "run", str(path), "--profile")
    assert code == 0
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("slowest nodes (10 of 12, "))
    table = lines[start + 1:start + 12]
    assert table[0].split() == ["node", "op", "type", "ms", "share"]
    assert len({len(row) for row in table}) == 1  # aligned: every row as wide as the header
    assert all(row.split()[-1].endswith("%") for row in table[1:])
    assert any(row.split()[0] in ("first", "Relu") for row in table[1:])
    code, out, _ = run_cli(capsys, "run", str(path), "--profile", "--json")
    slowest = json.loads(out)["slowest_nodes"]
    assert len(slowest) == 10 and {t["op_type"] for t in slowest} == {"Relu"}
    assert [t["ms"] for t in slowest] == sorted((t["ms"] for t in slowest), reverse=True)
    assert 0 < sum(t["share"] for t in slowest) <= 1
    assert {t["name"] for t in slowest} <= {"first", ""} and all(0 <= t["position"] < 12 for t in slowest)


def test_run_profile_names_unnamed_nodes_by_position(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run_cli(capsys, "run", str(_chain_model(tmp_path / "chain.onnx", 3)), "--profile")
    assert code == 0
    assert "slowest nodes (3 of 3, " in out
    for label in ("first ", "Relu node 1 ", "Relu node 2 "):
        assert f"\n  {label}" in out


def test_run_profile_without_onnxruntime_says_so(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = _chain_model(tmp_path / "chain.onnx", 2)
    code, out, _ = run_cli(capsys, "run", str(path), "--profile", "--engine", "reference")
    assert code == 0
    assert "no node times: the profiler times onnxruntime runs only, and this one ran on reference" in out
    code, out, _ = run_cli(capsys, "run", str(path), "--json")
    assert json.loads(out)["slowest_nodes"] is None


def test_run_help_describes_profile(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "run", "--help")
    assert code == 0
    assert "print the 10 slowest nodes" in " ".join(out.split())


def test_run_float8e5m2_input_and_dump(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """float8_e5m2 is the one ml_dtypes type numpy writes as a descriptor it cannot read back ('<f1')."""
    from onnxviz.model.runner.store import RunResult

    code, out, err = run_cli(capsys, "run", str(node_model("test_castlike_FLOAT8E5M2_to_FLOAT_expanded")), "--json")
    assert code == 0, err
    assert json.loads(out)["outputs"][0]["dtype"] == "float32"
    code, _, err = run_cli(capsys, "run", str(node_model("test_cast_FLOAT_to_FLOAT8E5M2")), "--dump", str(tmp_path))
    assert code == 0, err
    result = RunResult.load(tmp_path)
    out_array, in_array = result.array("output"), result.array("input")
    assert str(out_array.dtype) == "float8_e5m2"
    np.testing.assert_allclose(out_array.astype(np.float32), in_array, rtol=0.25)


def test_run_dump_folder_that_cannot_be_made_is_one_sentence(capsys: pytest.CaptureFixture[str],
                                                             example_path: Path, tmp_path: Path) -> None:
    (tmp_path / "file.txt").write_text("a file, not a folder")
    dump = tmp_path / "file.txt" / "dump"
    code, _, err = run_cli(capsys, "run", str(example_path), "--dump", str(dump))
    assert code == 2
    assert err.endswith(f"onnxviz: error: the folder {dump} could not be made: its folder does not exist\n")


def test_run_negative_seed_is_a_usage_error(capsys: pytest.CaptureFixture[str], example_path: Path) -> None:
    code, _, err = run_cli(capsys, "run", str(example_path), "--seed", "-1")  # was an 'unexpected internal error'
    assert code == 2
    assert err.startswith("usage: onnxviz run ")
    assert err.endswith("onnxviz: error: argument --seed: '-1' is not a whole number of 0 or more\n")


@pytest.mark.parametrize("model", ["example", "unreadable"])
def test_run_dump_leaves_no_process_behind(tmp_path: Path, example_path: Path, model: str) -> None:
    """The command starts its runner process before it reads the model: that process ends with the command, after a
    dump or when the model cannot be read."""
    path = example_path if model == "example" else tmp_path / "bad.onnx"
    if model == "unreadable":
        path.write_bytes(b"not a model")
    dump = tmp_path / "dump"
    with subprocess.Popen([sys.executable, "-m", "onnxviz", "run", str(path), "--dump", str(dump)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True) as proc:
        out, err = proc.communicate(timeout=300)
    assert (proc.returncode, "Traceback" in err) == ((0, False) if model == "example" else (2, False)), err
    assert ("values written to" in out) == (model == "example")
    assert session_processes(proc.pid) == [], "a process of the command outlived it"

