"""Shared fixtures: paths to the bundled example, the ONNX conformance data (tests/onnx_data.py) and
the transformer-shaped models of bench/synth.py."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import onnx
import outside_reads
import pytest
from synth import build as synth_build

outside_reads.install()
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
pytest_plugins = ["window_fixtures", "corpus_fixtures"]  # make_window for the desktop tests, corpus_model

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "resources" / "examples" / "example.onnx"
TEST_DATA = REPO / "tests" / "data"  # the committed test data: exports/, startup_modules.txt


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
    """A 10-layer transformer-shaped model from bench/synth.py (421 nodes)."""
    out = tmp_path_factory.mktemp("synth") / "synth10.onnx"
    onnx.save(synth_build(10), out)
    return out


@pytest.fixture(autouse=True)
def _reads_only_the_repository() -> Iterator[None]:
    """Fails a test that opened or listed anything outside the repository, temporary folders, the
    Python installation and system folders (tests/outside_reads.py); collection's reads count for the first."""
    yield
    outside = outside_reads.take()
    assert not outside, f"read outside the repository: {sorted(set(outside))[:5]}"


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


def session_processes(sid: int) -> list[int]:
    """The processes of session ``sid`` (from /proc: Linux): a command started with ``start_new_session`` has
    left none behind when this is empty after it exited."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # ended meanwhile
            continue
        if int(fields[3]) == sid:  # after the state, the parent and the group: the session
            found.append(int(stat.parent.name))
    return found


def dumped(dump: Path, key: str) -> Any:
    """The value ``key`` of a ``run --dump`` folder, read as the README says: from its index.json entry, the bytes
    at ``offset`` of ``values.bin``, or its own .npy file (strings)."""
    import json

    import numpy as np

    entry = json.loads((dump / "index.json").read_text())["values"][key]
    if "offset" not in entry:
        return np.load(dump / entry["file"])
    return np.memmap(dump / entry["file"], entry["numpy_dtype"], "r", entry["offset"], tuple(entry["shape"]))

