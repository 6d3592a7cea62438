"""``onnxviz render``: real models to PNG/SVG with the canvas's painter; every corpus model renders."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import session_processes
from corpus_fixtures import CorpusModel
from onnx_data import LIGHT_MODELS, node_model
from PySide6.QtGui import QImage

from onnxviz.cli import main
from onnxviz.cli.render import ensure_gui_app, lay_out
from onnxviz.model.document import Document
from onnxviz.model.layout.drawable import Drawable
from onnxviz.ui.canvas.export import export_image


def test_render_example_png_and_svg(tmp_path: Path, example_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    png, svg = tmp_path / "example.png", tmp_path / "example.svg"
    assert main(["render", str(example_path), "-o", str(png)]) == 0
    assert "wrote" in capsys.readouterr().out
    image = QImage(str(png))
    assert image.width() > 200 and image.height() > 1000
    assert main(["render", str(example_path), "-o", str(svg), "--names"]) == 0
    text = svg.read_text()
    assert "<svg" in text and ">/stem/" in text   # node names instead of op types


def test_render_left_to_right_with_tensor_names(tmp_path: Path, example_path: Path) -> None:
    png, svg = tmp_path / "across.png", tmp_path / "across.svg"
    assert main(["render", str(example_path), "-o", str(png), "--left-to-right"]) == 0
    image = QImage(str(png))
    assert image.width() > 1000 and image.height() < image.width() / 2
    assert main(["render", str(example_path), "-o", str(svg), "--tensor-names"]) == 0
    assert ">image: batch × 3 × 32 × 32<" in svg.read_text()


@pytest.mark.parametrize("folder", ["test_if", "test_loop11", "test_scan9_sum", "test_range_float_type_positive_delta_expanded"])
def test_render_control_flow_models_and_their_bodies(tmp_path: Path, folder: str) -> None:
    path = node_model(folder)
    out = tmp_path / "g.png"
    assert main(["render", str(path), "-o", str(out)]) == 0
    assert QImage(str(out)).width() > 50
    scopes = [s for s in Document.open(path).index.graphs if s]
    assert scopes
    assert main(["render", str(path), "-o", str(out), "--scope", scopes[0], "--expand-all"]) == 0


def test_render_expand_all_draws_every_node(tmp_path: Path) -> None:
    ensure_gui_app()
    doc = Document.open(LIGHT_MODELS / "light_resnet50.onnx")
    scene = lay_out(doc.index, "", expand_all=True)
    from onnxviz.model.layout.scene import BoxKind

    assert BoxKind.GROUP not in {r.kind for r in scene.box_ref}
    collapsed = lay_out(doc.index, "", expand_all=False)
    assert scene.n_boxes >= collapsed.n_boxes


def test_render_errors_are_one_line(tmp_path: Path, example_path: Path) -> None:
    cases = [
        (["render", str(tmp_path / "missing.onnx"), "-o", str(tmp_path / "a.png")], "missing.onnx"),
        (["render", str(example_path), "-o", str(tmp_path / "a.txt")], "must end in .png or .svg"),
        (["render", str(example_path), "-o", str(tmp_path / "nowhere" / "a.png")], "does not exist"),
        (["render", str(example_path), "-o", str(tmp_path / "a.png"), "--scope", "7.body"], "no graph scope"),
    ]
    for argv, message in cases:
        result = subprocess.run([sys.executable, "-m", "onnxviz", *argv], capture_output=True, text=True, timeout=120)
        assert result.returncode == 2, result.stderr
        assert result.stderr.startswith("onnxviz: error:") and message in result.stderr
        assert "Traceback" not in result.stderr


def test_render_leaves_no_process_behind_on_an_error(tmp_path: Path, example_path: Path) -> None:
    """Shape inference begins in a child before the scope is checked: an unknown scope waits for that child,
    so nothing of the command's session is alive once it has exited."""
    argv = ["render", str(example_path), "-o", str(tmp_path / "a.png"), "--scope", "7.body"]
    with subprocess.Popen([sys.executable, "-m", "onnxviz", *argv], stderr=subprocess.PIPE, text=True,
                          start_new_session=True) as proc:
        _, err = proc.communicate(timeout=120)
    assert proc.returncode == 2 and "no graph scope" in err
    assert session_processes(proc.pid) == [], "a process of the command outlived it"


def test_every_corpus_model_renders(tmp_path: Path, corpus_model: CorpusModel) -> None:
    """Each graph of a conformance model, laid out as ``render`` lays it out (no inference), draws (small
    images)."""
    ensure_gui_app()
    out = tmp_path / "g.png"
    for scene in corpus_model.scenes:
        export_image(Drawable(scene), out, scale=0.25)
        assert QImage(str(out)).width() > 0


def test_edge_labels_placed_on_first_use_draw_the_same_picture(tmp_path: Path, example_path: Path) -> None:
    """``render`` places the edge labels only when the painter reads them (a big graph's picture is drawn too
    far out for them): at 1:1 they are read and drawn, the picture the window's way of placing them draws."""
    ensure_gui_app()
    scene = lay_out(Document.open(example_path).index, "", expand_all=True)
    lazy, placed = Drawable(scene, labels_now=False), Drawable(scene)
    assert lazy._spots is None and placed._spots is not None
    export_image(lazy, tmp_path / "lazy.png")
    export_image(placed, tmp_path / "placed.png")
    assert lazy._spots is not None and (lazy.label_row == placed.label_row).all()
    assert QImage(str(tmp_path / "lazy.png")) == QImage(str(tmp_path / "placed.png"))
    far = Drawable(scene, labels_now=False)
    export_image(far, tmp_path / "far.png", scale=0.3)  # below the labels' scale: none drawn, none placed
    assert far._spots is None
    far.retext(scene)
    assert far._spots is None and len(far.labels.edge) == len(placed.labels.edge)
