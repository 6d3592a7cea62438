"""The command line: info and check, text and JSON, and their exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli
from onnx import TensorProto, helper


def test_info_json_keys(capsys: pytest.CaptureFixture[str], example_path: Path) -> None:
    code, out, _ = run_cli(capsys, "info", str(example_path), "--json")
    assert code == 0
    info = json.loads(out)
    assert info["opsets"] == {"ai.onnx": 18}
    assert info["inputs"] == [{"name": "image", "dtype": "float32", "shape": ["batch", 3, 32, 32]}]
    assert info["outputs"][0]["shape"] == ["batch", 10]
    assert info["nodes"] == info["nodes_total"] == 24
    assert info["op_types"]["MatMul"] == 6
    assert info["parameters"] == 6351 and info["parameter_bytes"] == (6351 - 4) * 4 + 4 * 8  # 4 int64 values
    assert info["metadata"] == {"author": "onnxviz", "license": "Apache-2.0"}
    assert info["producer"]["name"] == "onnxviz-examples"


def test_info_text(capsys: pytest.CaptureFixture[str], example_path: Path) -> None:
    code, out, _ = run_cli(capsys, "info", str(example_path))
    assert code == 0
    assert "image: float32 [batch, 3, 32, 32]" in out
    assert "Conv" in out


def test_check_valid_and_invalid(capsys: pytest.CaptureFixture[str], example_path: Path, tmp_path: Path) -> None:
    code, out, _ = run_cli(capsys, "check", str(example_path), "--json")
    assert code == 0 and json.loads(out) == {"valid": True, "errors": 0, "warnings": 0, "notes": 0, "problems": []}
    graph = helper.make_graph([helper.make_node("Relu", ["nope"], ["y"], name="r")], "g", [],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(helper.make_model(graph).SerializeToString())
    code, out, _ = run_cli(capsys, "check", str(bad), "--json")
    report = json.loads(out)
    assert code == 1 and report["valid"] is False and report["errors"] >= 1
    assert any(p["node"] == "r" and p["value"] == "nope" for p in report["problems"])


def test_unreadable_file_one_line_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "empty.onnx"
    path.write_bytes(b"")
    for cmd in ("info", "check"):
        code, out, err = run_cli(capsys, cmd, str(path))
        assert code == 2
        assert err.startswith("onnxviz: error: ") and err.count("\n") == 1
        assert "Traceback" not in err


def test_console_entry_point_runs_as_module(example_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "onnxviz", "info", str(example_path), "--json"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0
    assert json.loads(result.stdout)["nodes"] == 24


@pytest.mark.parametrize(("text", "message"), [
    ("hello, this is not a model\n", "at line 1, column 6: expected character = not found"),
    ("<ir_version: 8>\nagraph (float[2] x) => (float[2] y) {\n  y = Relu(x\n}\n",
     "at line 4, column 1: expected character ) not found"),
])
def test_text_model_syntax_error_names_line_and_column(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                       text: str, message: str) -> None:
    """onnx.parser's error is bytes: it was shown as "b'[ParseError at position ...]\\nError context: ...'"."""
    path = tmp_path / "model.txt"
    path.write_text(text)
    code, _, err = run_cli(capsys, "check", str(path), "--text")
    assert code == 2
    assert err == f"onnxviz: error: model.txt could not be parsed as a text-format model {message}\n"


def test_check_lines_call_an_info_a_note_as_the_window_does() -> None:
    from onnxviz.cli.check import problem_line
    from onnxviz.model.problems import Problem, Severity

    assert problem_line(Problem(Severity.INFO, "no type for an input")) == "note: no type for an input"
    assert problem_line(Problem(Severity.WARNING, "w", node=2)) == "warning: w [node #2]"


def test_info_text_lists_the_first_metadata_entries_and_json_all(capsys: pytest.CaptureFixture[str],
                                                                 tmp_path: Path) -> None:
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    helper.set_model_props(model, {f"key{k}": "v" * (1000 if k == 0 else 1) for k in range(5000)})
    path = tmp_path / "meta.onnx"
    path.write_bytes(model.SerializeToString())
    code, out, _ = run_cli(capsys, "info", str(path))
    assert code == 0 and "key49: v" in out and "key50:" not in out
    assert "... and 4,950 more (all of them with --json)" in out and max(map(len, out.splitlines())) < 300
    code, out, _ = run_cli(capsys, "info", str(path), "--json")
    assert len(json.loads(out)["metadata"]) == 5000


def _named_model(path: Path, output: str) -> Path:
    graph = helper.make_graph([helper.make_node("Relu", ["x"], [output], name="n\x1b[2J")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info(output, TensorProto.FLOAT, [1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    path.write_bytes(model.SerializeToString())
    return path


def test_no_command_prints_a_control_bidi_or_newline_character_from_a_file(capsys: pytest.CaptureFixture[str],
                                                                            tmp_path: Path) -> None:
    """A broken model named 'x.onnx: valid\\nreal.onnx' printed a forged 'x.onnx: valid' line; run and render
    printed ESC and U+202E raw. Every line is escaped as the window escapes names; JSON keeps the data."""
    forged = tmp_path / "x.onnx: valid\nreal.onnx"
    graph = helper.make_graph([helper.make_node("Relu", ["nope"], ["y"])], "g", [],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    forged.write_bytes(helper.make_model(graph).SerializeToString())  # opens, with a problem
    code, out, _ = run_cli(capsys, "check", str(forged))
    assert code == 1 and "x.onnx: valid\n" not in out and "x.onnx: valid\\x0areal.onnx: " in out
    model = _named_model(tmp_path / "m\x1b[31m\u202eln.onnx", "y\u202e\x1b]0;t\x07")
    outputs = [run_cli(capsys, *args) for args in (["info", str(model)], ["check", str(model)], ["run", str(model)],
                                                   ["render", str(model), "-o", str(tmp_path / "m.svg")])]
    for code, out, err in outputs:
        assert code in (0, 1), err
        assert not any(c in out + err for c in "\x1b\u202e\x07"), out + err
    assert "m\\x1b[31m\\u202eln.onnx: ran on" in outputs[2][1] and "y\\u202e\\x1b]0;t\\x07: float32" in outputs[2][1]
    code, out, _ = run_cli(capsys, "info", str(model), "--json")
    assert "\u202e" not in out and "\\u202e" in out
    assert json.loads(out)["outputs"][0]["name"] == "y\u202e\x1b]0;t\x07"
