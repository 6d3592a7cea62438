"""Pictures of the real exports of tests/data/exports/ (and onnx's Loop conformance model) as onnxviz shows
them in a 1400x900 window, to set beside Netron's (see exports/README.md):

    QT_QPA_PLATFORM=offscreen python docs/screenshots/make_export_screens.py [MODEL_STEM ...]

exports/<model>_first.png  the window as the file opens (no click)
exports/<model>_fit.png    after Fit (the whole graph)
exports/<model>_100.png    at 1:1, the top of the graph (where Netron opens)

Optional second step, Netron's pictures of the same models (made once and committed; skipped with a note
when the tool is absent):

    python docs/screenshots/make_export_screens.py --netron-only --netron-shot PATH/netron_shot.py \
        --netron-python /tmp/netron-venv/bin/python

exports/netron_<model>.png  Netron as it opens the file: at 1:1, the top of the graph (its first view and
                            its 100% are the same picture; netron_shot.py cannot zoom, so there is no fit)
Settings are fresh (a temporary folder): nobody's saved layout, theme or view options leak in. The PNGs
are reduced to a 256-colour palette to keep them small.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
OUT = HERE / "exports"
EXPORTS = REPO / "tests" / "data" / "exports"
W, H = 1400, 900
sys.path[:0] = [str(REPO), str(REPO / "bench")]

from gui_probe import scratch_folder  # noqa: E402
from PySide6.QtCore import QEventLoop, QPointF, Qt, QTimer  # noqa: E402
from PySide6.QtGui import QImage  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from onnxviz.ui.canvas.view import GraphView  # noqa: E402


def models(folder: Path) -> dict[str, Path]:
    """The exports, plus onnx's own Loop conformance model (test_loop11) and a 4-bit BERT (bert_legacy quantized
    by onnxruntime's MatMulNBitsQuantizer: MatMulNBits, GatherBlockQuantized) written into ``folder``."""
    found = {p.stem: p for p in sorted(EXPORTS.glob("*.onnx"))}
    found["loop11"] = conformance_model("Loop", "test_loop11", folder)
    found["bert_int4"] = int4_model(folder)
    return found


def int4_model(folder: Path) -> Path:
    """tests/data/exports/bert_legacy.onnx quantized to 4 bits as tests/model/graph/test_symbolic_shapes.py quantizes it."""
    import logging

    import onnx

    sys.path.insert(0, str(REPO / "tests"))
    from test_symbolic_shapes import int4_bert

    logging.getLogger("onnxruntime.quantization").setLevel(logging.WARNING)  # a line per node otherwise
    path = folder / "bert_int4.onnx"
    onnx.save(int4_bert(), str(path))
    return path


def conformance_model(op: str, name: str, folder: Path) -> Path:
    """The model of onnx's node test ``name``, made by onnx's own test generators (no files needed)."""
    import onnx
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():  # the other generators' numpy warnings
        warnings.simplefilter("ignore")
        case = next(c for c in collect_testcases(op) if c.name == name)
    assert case.model is not None, name
    path = folder / f"{name}.onnx"
    onnx.save(case.model, str(path))
    return path


def save_small(image: QImage, path: Path) -> None:
    """Save as an 8-bit palette PNG (a few times smaller than 32-bit, text still crisp)."""
    small = image.convertToFormat(QImage.Format.Format_Indexed8, Qt.ImageConversionFlag.ThresholdDither
                                  | Qt.ImageConversionFlag.AvoidDither)
    small.save(str(path), quality=9)  # PNG from the suffix; 9: strong zlib compression


def settle(rounds: int = 8) -> None:
    for _ in range(rounds):
        QApplication.processEvents()


def pause(ms: int) -> None:
    """Let background work (the Model panel's figures) finish, as it would before a user looks."""
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def top_at_one_to_one(view: GraphView) -> None:
    """1:1 with the top of the graph in sight (where Netron opens), left-aligned when it is wider."""
    view.home()
    assert view.drawable is not None
    x, y, w, _ = view.drawable.bounds
    centre = view.center.x()
    view.set_scale(1.0)
    half_w, half_h = view.width() / 2, view.height() / 2
    cx = x + w / 2 if w <= 2 * half_w else max(centre, x + half_w - 20)
    view.center_on(QPointF(cx, y - 20 + half_h))


def onnxviz_pictures(stem: str, path: Path) -> None:
    from gui_probe import fresh_window, wait_for

    window = fresh_window(W, H)
    window.remember_window_state = False
    canvas = window.canvas
    window.open_path(path)
    wait_for(canvas.scene_ready, 300)
    pause(2500)
    window.grab().save(str(OUT / f"{stem}_first.png"))
    canvas.fit()
    settle()
    window.grab().save(str(OUT / f"{stem}_fit.png"))
    top_at_one_to_one(canvas.view)
    settle()
    window.grab().save(str(OUT / f"{stem}_100.png"))
    window.set_document(None)
    window.close()
    settle()
    for kind in ("first", "fit", "100"):
        shrink(OUT / f"{stem}_{kind}.png")


def shrink(path: Path) -> None:
    save_small(QImage(str(path)), path)


def netron_pictures(stem: str, path: Path, tool: Path, python: str) -> None:
    out = OUT / f"netron_{stem}.png"
    subprocess.run([python, str(tool), str(path), str(out), "--size", f"{W}x{H}"], check=True)
    shrink(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("stems", nargs="*", help="only these models (file stems, or loop11)")
    parser.add_argument("--netron-only", action="store_true", help="only Netron's pictures")
    parser.add_argument("--netron-shot", type=Path, help="netron_shot.py (Netron's pictures are skipped without it)")
    parser.add_argument("--netron-python", default=sys.executable, help="the Python that has netron and playwright")
    a = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    folder = scratch_folder("onnxviz-export-screens-")
    chosen = {k: v for k, v in models(folder).items() if not a.stems or k in a.stems}
    if not a.netron_only:
        from gui_probe import fresh_app

        fresh_app()  # settings in a temporary folder, never the user's
        for stem, path in chosen.items():
            onnxviz_pictures(stem, path)
            print(f"{stem}: onnxviz pictures written")
    if a.netron_shot is None or not a.netron_shot.is_file():
        print("Netron's pictures skipped: pass --netron-shot PATH/netron_shot.py (and --netron-python) to make them")
        return
    QApplication.instance() or QApplication([])  # for QImage's palette conversion
    for stem, path in chosen.items():
        netron_pictures(stem, path, a.netron_shot, a.netron_python)


if __name__ == "__main__":
    main()
