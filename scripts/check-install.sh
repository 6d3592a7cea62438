#!/bin/sh
# `pip install .` (not editable) into a brand-new virtual environment, all
# dependencies from PyPI, then use the installed command from outside the repo:
# `onnxviz info` on the bundled example and a window screenshot of it.
# Usage: scripts/check-install.sh [VENV_DIR]   (default: a temporary folder)
set -eu
repo="$(cd "$(dirname "$0")/.." && pwd)"
venv="${1:-$(mktemp -d)/venv}"
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet "$repo"
cd "$(mktemp -d)"
example="$("$venv/bin/python" -c 'from onnxviz.ui.app import example_model_path; print(example_model_path())')"
case "$example" in "$repo"*) echo "example resolved inside the repo, not the installed package: $example"; exit 1;; esac
"$venv/bin/onnxviz" info "$example"
QT_QPA_PLATFORM="${QT_QPA_PLATFORM:-offscreen}" "$venv/bin/onnxviz" --example --screenshot "$PWD/installed.png"
test -s "$PWD/installed.png"
echo "ok: installed onnxviz works ($venv, screenshot $PWD/installed.png)"
