"""Hostile run inputs (tests/hostile_inputs.py) through ``onnxviz run`` and the Run inputs dialog: each is
refused in one sentence naming it escaped, without reading what it must not read, in bounded memory."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import threading
from pathlib import Path

import hostile_inputs
import onnx
import pytest
from pytestqt.qtbot import QtBot

from onnxviz.model.runner.inputs import input_specs
from onnxviz.ui.run.input_sources import InputChoice, InputPlan
from onnxviz.ui.run.inputs_dialog import InputsDialog
from onnxviz.ui.widgets.names import unbreak

TIMEOUT_S = 20.0
ADDRESS_SPACE = 3 << 30  # the interpreter, onnx and onnxruntime reserve ~2.5 GB; a 512 MB bomb would not fit
MAX_RSS_MB = 400


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, tuple[hostile_inputs.InputCase, Path]]]:
    folder = tmp_path_factory.mktemp("hostile_inputs")
    return folder, hostile_inputs.build_all(folder)


def _bounded() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


# the command's own peak (VmHWM, of its memory since exec: ru_maxrss would count the test process's,
# inherited through fork), written as it exits
_MAIN = """import atexit, re, sys
atexit.register(lambda: open(sys.argv[1], "w").write(re.search(r"VmHWM:\\s*(\\d+)", open("/proc/self/status").read())[1]))
from onnxviz.cli import main
sys.exit(main(sys.argv[2:]))"""


def run_cli(args: list[str], cwd: Path) -> tuple[int, str, str, float]:
    """Exit code, stdout, stderr and peak RSS (MB) of the ``onnxviz ARGS`` command, killed after TIMEOUT_S."""
    out, err, peak = cwd / "stdout.txt", cwd / "stderr.txt", cwd / "peak.txt"
    peak.unlink(missing_ok=True)
    with out.open("wb") as o, err.open("wb") as e:
        proc = subprocess.Popen([sys.executable, "-c", _MAIN, str(peak), *args], cwd=cwd, stdout=o, stderr=e,
                                env={**os.environ, "QT_QPA_PLATFORM": "offscreen"}, preexec_fn=_bounded)
        timer = threading.Timer(TIMEOUT_S, proc.kill)
        timer.start()
        code = proc.wait()
        timer.cancel()
    return code, out.read_text("utf-8"), err.read_text("utf-8"), int(peak.read_text()) / 1024


@pytest.mark.parametrize("name", [c.name for c in hostile_inputs.CASES])
def test_cli_refuses_each_hostile_input_in_one_sentence(built: tuple[Path, dict], name: str) -> None:
    folder, cases = built
    case, path = cases[name]
    code, out, err, peak_mb = run_cli(hostile_inputs.cli_args(folder, case, path), folder / "cwd")
    if not case.message:
        assert code == 0 and "y: float32 [1, 3, 8, 8]" in out, err
        return
    assert code == 2, (code, err)
    assert err.startswith("onnxviz: error: ") and err.count("\n") == 1, err
    assert case.message in err, err
    assert "\x1b" not in err + out and "\u202e" not in err + out
    assert peak_mb < MAX_RSS_MB, f"{name}: {peak_mb:.0f} MB"


def _dialog(qtbot: QtBot, folder: Path, model: str, choice: InputChoice) -> InputsDialog:
    specs = input_specs(onnx.load(str(folder / hostile_inputs.MODELS[model])))
    dialog = InputsDialog(specs, InputPlan({"x": choice}, {}), "model.onnx")
    qtbot.addWidget(dialog)
    return dialog


@pytest.mark.parametrize("name", [c.name for c in hostile_inputs.CASES if c.message and not c.whole])
def test_run_inputs_dialog_refuses_each_hostile_input_in_its_error_line(qtbot: QtBot, built: tuple[Path, dict],
                                                                        name: str) -> None:
    folder, cases = built
    case, path = cases[name]
    dialog = _dialog(qtbot, folder, case.model, InputChoice("file", str(path)))
    dialog.accept()
    assert dialog.feeds is None and not dialog.error.isHidden()
    shown = unbreak(dialog.error.text())
    assert case.message.lower() in shown.lower() and "\n" not in shown, shown


def test_dialog_loads_a_bomb_by_its_names_and_refuses_it_at_run(qtbot: QtBot, built: tuple[Path, dict]) -> None:
    folder, cases = built
    dialog = _dialog(qtbot, folder, "model", InputChoice())
    dialog.load_npz(str(cases["npz_bomb"][1]))  # reads the zip directory only
    assert dialog.error.isHidden() and dialog.rows[0].choice().source == "file"
    dialog.accept()
    assert unbreak(dialog.error.text()).startswith("bomb.npz's array 'x' holds 512.0 MB, far more than input 'x'")


@pytest.mark.parametrize(("file", "make"), [("fifo.png", os.mkfifo),
                                            ("zero.png", lambda p: p.symlink_to("/dev/zero"))])
def test_an_image_input_that_is_no_file_is_refused(qtbot: QtBot, built: tuple[Path, dict], file: str,
                                                   make: object) -> None:
    folder, _ = built
    path = folder / "inputs" / file
    make(path)  # type: ignore[operator]
    dialog = _dialog(qtbot, folder, "model", InputChoice("image", str(path)))
    dialog.accept()
    assert dialog.error.text() == f"{file} {hostile_inputs.NOT_A_FILE}."
