"""Make the README's and docs/window.md's pictures: `python docs/screenshots/make_screenshots.py` (works offscreen).

window.png       the example with a node selected (canvas, inspector, problems, status bar)
edit-problem.png after an edit that breaks shape inference: badge on the node, Problems panel
activations.png  after Run (F9): a value's activation heatmap in the Activations panel
window-dark.png  the first picture in the dark theme
Each picture uses fresh settings, so nobody's saved layout leaks into it.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QEventLoop, QTimer  # noqa: E402
from PySide6.QtWidgets import QTabWidget  # noqa: E402

from onnxviz.ui.app import ensure_app, example_model_path  # noqa: E402
from onnxviz.ui.main_window import MainWindow  # noqa: E402
from onnxviz.ui.settings import use_settings_dir  # noqa: E402
from onnxviz.ui.theme import Theme  # noqa: E402

_SETTINGS = tempfile.TemporaryDirectory(prefix="onnxviz-shots-")  # removed when the script exits

OUT = Path(__file__).resolve().parent


def settle(ms: int = 600) -> None:
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def wait_for(condition: Callable[[], bool], timeout_ms: int = 60000) -> None:
    waited = 0
    while not condition() and waited < timeout_ms:
        settle(100)
        waited += 100
    if not condition():
        raise SystemExit("timed out waiting for the window")


def fresh_window() -> MainWindow:
    use_settings_dir(_SETTINGS.name)
    window = MainWindow()
    window.theme.set_choice(Theme.LIGHT)
    window.resize(1400, 860)
    window.show()
    window.open_path(example_model_path())
    wait_for(lambda: window.doc is not None and bool(window.doc.index.inferred.get("")))
    settle(1200)  # layout and first paint
    return window


def node_index(window: MainWindow, name: str) -> int:
    assert window.doc is not None
    return next(i for i, n in enumerate(window.doc.model.graph.node) if n.name == name)


def main() -> int:
    ensure_app()
    window = fresh_window()
    doc = window.doc
    assert doc is not None
    doc.selection.select_node("", node_index(window, "/stem/conv/Conv"))
    settle()
    window.grab().save(str(OUT / "window.png"))
    window.theme.set_choice(Theme.DARK)
    settle()
    window.grab().save(str(OUT / "window-dark.png"))
    window.theme.set_choice(Theme.LIGHT)

    add = next(i for i, n in enumerate(doc.model.graph.node) if n.op_type == "Add")
    doc.edit.set_input(add, 1, "image")  # 3x32x32 cannot be added to 16x8x8: shape inference objects
    doc.selection.select_node("", add)
    wait_for(lambda: bool(doc.problems))
    settle(1500)
    window.grab().save(str(OUT / "edit-problem.png"))
    doc.undo()
    doc.selection.clear()
    run = getattr(window, "run_controller", None)
    if run is not None:
        run.inputs.plan(doc).dims["batch"] = 1  # what the inputs dialog would ask for
        finished: list[bool] = []
        run.run_finished.connect(lambda: finished.append(True))
        run.run()
        wait_for(lambda: bool(finished))
        doc.selection.select_node("", node_index(window, "/stem/relu/Relu"))
        settle(800)
        for tabs in run.dock.findChildren(QTabWidget):  # show the heatmap of a slice
            for i in range(tabs.count()):
                if tabs.tabText(i) == "Slices":
                    tabs.setCurrentIndex(i)
        settle(1200)
        window.grab().save(str(OUT / "activations.png"))

    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
