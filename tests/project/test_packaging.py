"""A non-editable install works: the wheel carries the icon, the example and the command.

The wheel is built from the repository and installed (without dependencies) into
a fresh virtual environment that borrows the dependencies of the test venv; the
installed ``onnxviz`` command is then run from outside the repository.
scripts/check-install.sh does the same with every dependency from PyPI.
"""

from __future__ import annotations

import ast
import configparser
import os
import re
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest
from conftest import REPO

# each runtime dependency (distribution name) and the top-level module onnxviz imports it as
DEPENDENCIES = {"PySide6-Essentials": "PySide6", "onnx": "onnx", "onnxruntime": "onnxruntime", "numpy": "numpy",
                "pyqtgraph": "pyqtgraph", "ml-dtypes": "ml_dtypes", "sympy": "sympy"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", str(REPO), "-w", str(out)],
                   check=True, capture_output=True, timeout=600)
    return next(out.glob("onnxviz-*.whl"))


def test_wheel_carries_data_entry_point_and_dependencies(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
        metadata = zf.read(meta).decode()
        entry_points = zf.read(meta.replace("METADATA", "entry_points.txt")).decode()
        example = zf.read("onnxviz/resources/examples/example.onnx")
    assert "onnxviz/ui/icons/onnxviz.svg" in names
    assert example == (REPO / "resources" / "examples" / "example.onnx").read_bytes()  # no drift
    assert "onnxviz = onnxviz.cli:main" in entry_points
    assert "License-Expression: Apache-2.0" in metadata  # the SPDX form, not the deprecated table
    required = set(re.findall(r"^Requires-Dist: ([A-Za-z0-9_.-]+)(?!.*extra ==)", metadata, re.MULTILINE))
    assert required == set(DEPENDENCIES)


def _imported_top_modules() -> set[str]:
    found: set[str] = set()
    for path in (REPO / "onnxviz").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return found


def test_every_declared_dependency_is_imported() -> None:
    """A dependency nothing imports only costs users a download (igraph was one)."""
    assert set(DEPENDENCIES.values()) <= _imported_top_modules()


def test_installed_command_runs_outside_the_repo(wheel: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")  # borrow onnx, PySide6, ...
    # without PYTHONPATH: a repository on it (its onnxviz.egg-info) would pass for an installed onnxviz
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"QT_QPA_PLATFORM": "offscreen"}
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps",
                    "--no-index", str(wheel)], check=True, capture_output=True, timeout=300, env=env)
    where = subprocess.run(
        [str(python), "-c", "import onnxviz; from onnxviz.ui.app import example_model_path, package_file; "
         "print(onnxviz.__file__); print(example_model_path()); print(package_file('ui', 'icons', 'onnxviz.svg'))"],
        check=True, capture_output=True, text=True, cwd=tmp_path, env=env).stdout.split()
    assert all(p.startswith(str(env_dir)) and Path(p).is_file() for p in where)
    info = subprocess.run([str(env_dir / "bin" / "onnxviz"), "info", where[1]], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=120)
    assert info.returncode == 0, info.stderr
    assert "nodes" in info.stdout.lower()


def test_desktop_entry_and_mime_type_match() -> None:
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str  # type: ignore[assignment,method-assign]
    entry.read(REPO / "resources" / "onnxviz.desktop")
    desktop = entry["Desktop Entry"]
    assert desktop["Exec"] == "onnxviz %f" and desktop["Icon"] == "onnxviz"
    assert "application/x-onnx" in desktop["MimeType"].split(";")
    mime = (REPO / "resources" / "onnxviz-mime.xml").read_text()
    assert 'type="application/x-onnx"' in mime and 'pattern="*.onnx"' in mime


def test_install_desktop_script_puts_files_in_place(tmp_path: Path) -> None:
    result = subprocess.run(["sh", str(REPO / "scripts" / "install-desktop.sh"), str(tmp_path)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "applications" / "onnxviz.desktop").is_file()
    assert (tmp_path / "mime" / "packages" / "onnxviz.xml").is_file()
    assert (tmp_path / "icons" / "hicolor" / "scalable" / "apps" / "onnxviz.svg").is_file()
