"""Shared fixtures: paths to the bundled example, the onnx wheel's models and ../shared."""

from __future__ import annotations

import os
from pathlib import Path

import onnx
import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
pytest_plugins = ["window_fixtures"]  # make_window, for the desktop tests

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "resources" / "examples" / "example.onnx"
SHARED = Path(os.environ.get("ONNXVIZ_SHARED", REPO.parent / "shared"))
NODE_TESTS = SHARED / "onnx-node-tests"
LIGHT_MODELS = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"


def corpus_models() -> list[Path]:
    """Every model.onnx of the ONNX conformance data (empty if ../shared is absent)."""
    if not NODE_TESTS.is_dir():
        return []
    return sorted(NODE_TESTS.rglob("*.onnx"))


def synth_script() -> Path:
    return SHARED / "bench" / "synth.py"


@pytest.fixture
def example_path() -> Path:
    return EXAMPLE


@pytest.fixture
def example_copy(tmp_path: Path) -> Path:
    dst = tmp_path / "example.onnx"
    dst.write_bytes(EXAMPLE.read_bytes())
    return dst


@pytest.fixture(scope="session")
def synth_small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 10-layer transformer-shaped model from ../shared/bench/synth.py (~350 nodes)."""
    import runpy

    out = tmp_path_factory.mktemp("synth") / "synth10.onnx"
    mod = runpy.run_path(str(synth_script()))
    onnx.save(mod["build"](10), out)
    return out


@pytest.fixture(autouse=True)
def _isolated_settings(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Every test's windows remember (recent files, theme, docks) in a fresh folder, never the user's, and
    log to a file of their own."""
    from onnxviz.ui.applog import use_log_file
    from onnxviz.ui.settings import use_settings_dir

    folder = tmp_path_factory.mktemp("settings")
    use_settings_dir(folder)
    use_log_file(folder / "onnxviz.log")


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run ``onnxviz ARGS`` in-process: (exit code, stdout, stderr)."""
    from onnxviz.cli import main

    try:
        code = main(list(args))
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err
