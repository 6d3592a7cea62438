#!/bin/sh
# Register onnxviz with the Linux desktop for the current user: menu entry, icon,
# and the .onnx file type, so a file manager opens models with `onnxviz FILE`.
# Usage: scripts/install-desktop.sh [PREFIX]   (default ~/.local/share)
set -eu
here="$(cd "$(dirname "$0")/.." && pwd)"
share="${1:-${XDG_DATA_HOME:-$HOME/.local/share}}"
mkdir -p "$share/applications" "$share/mime/packages" "$share/icons/hicolor/scalable/apps"
cp "$here/resources/onnxviz.desktop" "$share/applications/onnxviz.desktop"
cp "$here/resources/onnxviz-mime.xml" "$share/mime/packages/onnxviz.xml"
cp "$here/onnxviz/ui/icons/onnxviz.svg" "$share/icons/hicolor/scalable/apps/onnxviz.svg"
command -v update-mime-database >/dev/null 2>&1 && update-mime-database "$share/mime" || true
command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database "$share/applications" || true
command -v gtk-update-icon-cache >/dev/null 2>&1 && gtk-update-icon-cache -q -t "$share/icons/hicolor" || true
command -v onnxviz >/dev/null 2>&1 || echo "note: put 'onnxviz' on your PATH (e.g. pip install . or pipx install .) so the menu entry can start it"
echo "installed onnxviz desktop entry, icon and MIME type into $share"
