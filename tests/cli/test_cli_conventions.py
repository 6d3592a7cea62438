"""The command line's conventions: --version, exit codes in every --help, and `check`'s severities: a valid
model that the installed onnxruntime cannot run (-1 dims, a custom domain, an IR version too new, a missing
locale, complex64 weights) passes a CI gate unless --strict."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import run_cli
from onnx import TensorProto, helper, numpy_helper

from onnxviz.cli import EXIT_STATUS, SUBCOMMANDS


def _model(nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto], outputs: list[onnx.ValueInfoProto],
           initializers: list[onnx.TensorProto] | None = None, domains: dict[str, int] | None = None,
           ir_version: int = 8) -> onnx.ModelProto:
    opsets = [helper.make_opsetid(d, v) for d, v in {"": 17, **(domains or {})}.items()]
    model = helper.make_model(helper.make_graph(nodes, "g", inputs, outputs, initializers or []),
                              opset_imports=opsets)
    model.ir_version = ir_version
    onnx.checker.check_model(model)  # each is valid ONNX: only onnxruntime (or the -1 dims) stands in the way
    return model


def paddle_like() -> onnx.ModelProto:
    """PaddleOCR's exports declare dynamic sizes as -1."""
    return _model([helper.make_node("Relu", ["x"], ["y"])],
                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [-1, 3, -1, -1])],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [-1, 3, -1, -1])])


def custom_domain() -> onnx.ModelProto:
    """An operator of a declared custom domain (a plug-in onnxruntime has not loaded)."""
    return _model([helper.make_node("Decode", ["x"], ["y"], domain="com.example.ops")],
                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])], domains={"com.example.ops": 1})


def newest_ir() -> onnx.ModelProto:
    """The IR version the installed onnx writes, which the installed onnxruntime may not read yet."""
    return _model([helper.make_node("Relu", ["x"], ["y"])],
                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])], ir_version=onnx.IR_VERSION)


def string_normalizer() -> onnx.ModelProto:
    """A scikit-learn text pipeline's StringNormalizer with a locale this machine lacks (no machine has this
    one, so the test means the same everywhere)."""
    node = helper.make_node("StringNormalizer", ["x"], ["y"], case_change_action="LOWER", locale="zz_ZZ")
    return _model([node], [helper.make_tensor_value_info("x", TensorProto.STRING, [None])],
                  [helper.make_tensor_value_info("y", TensorProto.STRING, [None])])


def complex_weight() -> onnx.ModelProto:
    """A complex64 weight: valid ONNX that onnxruntime has no type for."""
    weight = numpy_helper.from_array(np.array([1 + 2j, 3 - 1j], np.complex64), "w")
    return _model([helper.make_node("Identity", ["w"], ["y"])], [],
                  [helper.make_tensor_value_info("y", TensorProto.COMPLEX64, [2])], [weight])


def _onnxruntime_reads_newest_ir() -> bool:
    import onnxruntime as ort

    try:
        ort.InferenceSession(newest_ir().SerializeToString(), providers=["CPUExecutionProvider"])
    except Exception as exc:  # noqa: BLE001 - onnxruntime's own exception types
        return "IR version" not in str(exc)
    return True


CASES = {
    "paddle": (paddle_like, "declares size -1"),
    "custom_domain": (custom_domain, "com.example.ops"),
    "ir_too_new": (newest_ir, f"IR version {onnx.IR_VERSION} is newer than"),
    "locale": (string_normalizer, "locale"),
    "complex64": (complex_weight, "complex64"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_valid_model_onnxruntime_cannot_run_passes_check_with_warnings(
        case: str, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    make, words = CASES[case]
    if case == "ir_too_new" and _onnxruntime_reads_newest_ir():
        pytest.skip(f"this onnxruntime reads IR version {onnx.IR_VERSION}, the newest the installed onnx writes")
    path = tmp_path / f"{case}.onnx"
    onnx.save(make(), path)
    code, out, err = run_cli(capsys, "check", str(path))
    assert code == 0, out + err
    lines = out.splitlines()
    assert any(line.startswith("warning: ") and words in line for line in lines), out
    assert not any(line.startswith("error: ") for line in lines), out
    assert lines[-1].startswith(f"{case}.onnx: valid, ") and "warning" in lines[-1], out
    code, out, _ = run_cli(capsys, "check", str(path), "--json")
    report = json.loads(out)
    assert code == 0 and report["valid"] is True and report["errors"] == 0 and report["warnings"] >= 1
    assert {p["severity"] for p in report["problems"]} <= {"warning", "info"}
    code, _, _ = run_cli(capsys, "check", str(path), "--strict")
    assert code == 1


def test_check_exits_1_on_errors_and_2_when_the_file_cannot_be_read(capsys: pytest.CaptureFixture[str],
                                                                   tmp_path: Path) -> None:
    graph = helper.make_graph([helper.make_node("Relu", ["nope"], ["y"], name="r")], "g", [],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    bad = tmp_path / "bad.onnx"
    onnx.save(helper.make_model(graph), bad)
    code, out, _ = run_cli(capsys, "check", str(bad))
    assert code == 1 and re.fullmatch(r"bad\.onnx: \d+ errors?(, \d+ warnings?)?", out.splitlines()[-1])
    code, out, _ = run_cli(capsys, "check", str(bad), "--json")
    assert code == 1 and json.loads(out)["valid"] is False
    (tmp_path / "cut.onnx").write_bytes(bad.read_bytes()[:9])
    for args in (["check", str(tmp_path / "cut.onnx")], ["check", str(tmp_path / "missing.onnx"), "--strict"]):
        code, out, err = run_cli(capsys, *args)
        assert code == 2 and out == "" and err.startswith("onnxviz: error: ") and err.count("\n") == 1


def test_a_model_without_problems_passes_strict(capsys: pytest.CaptureFixture[str], example_path: Path) -> None:
    code, out, _ = run_cli(capsys, "check", str(example_path), "--strict")
    assert code == 0 and out.strip().endswith("example.onnx: valid")


def test_version_prints_one_line_and_exits_0() -> None:
    import onnxruntime

    import onnxviz

    done = subprocess.run([sys.executable, "-m", "onnxviz", "--version"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == ""
    line = done.stdout.strip()
    assert "\n" not in line and line.startswith(f"onnxviz {onnxviz.__version__} (")
    assert f"onnxruntime {onnxruntime.__version__}" in line and f"onnx {onnx.__version__}" in line


@pytest.mark.parametrize("command", [*SUBCOMMANDS, ""])
def test_every_help_says_what_the_exit_codes_mean(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, *([command] if command else []), "--help")
    text = " ".join(out.split())  # argparse wraps the epilog
    assert code == 0
    assert f"exit status: {EXIT_STATUS[command or 'gui']}" in text
    assert "2 on an error" in text and "130 when interrupted" in text
