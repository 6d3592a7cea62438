"""Makes the pictures of transforms (docs/window.md), offscreen:

    QT_QPA_PLATFORM=offscreen python docs/screenshots/make_transform_screens.py

transform-dialog.png: Transform > Quantize Static (int8)... on resnet_float.onnx, calibrated on its sample input,
two Convs kept in float; transform-summary.png: after it, the model replaced (one undo step), the diff marked on
the result's graph and the Transform panel's operators before/after; transform-cost.png: See What It Cost (each
layer's SQNR against the float model, worst first, and both models' onnxruntime timing); transform-variants.png:
after one Conv kept in float and Quantize Again, the session's three variants.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from PySide6.QtCore import QEventLoop, QSettings, QTimer, SignalInstance
from PySide6.QtWidgets import QApplication

HERE = Path(__file__).parent
REPO = HERE.parent.parent
EXPORTS = REPO / "tests" / "data" / "exports"
sys.path.insert(0, str(REPO))  # tests.window_fixtures, however the script is started


def wait(signal: SignalInstance, ms: int = 300000) -> None:
    loop = QEventLoop()
    signal.connect(loop.quit)
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def settle(rounds: int = 40) -> None:
    from tests.window_fixtures import settle as settle_tasks

    for _ in range(rounds):
        settle_tasks()
        QTimer.singleShot(25, lambda: None)
        QApplication.processEvents()


def main() -> None:
    app = QApplication([])
    from onnxviz.ui.main_window import MainWindow
    from onnxviz.ui.transform.dialog import TransformDialog

    folder = tempfile.TemporaryDirectory(prefix="onnxviz-screens-")  # the user's settings: neither read nor written
    w = MainWindow(QSettings(f"{folder.name}/onnxviz.ini", QSettings.Format.IniFormat))
    w.remember_window_state = False
    w.resize(1600, 1000)
    w.show()
    w.open_path(EXPORTS / "resnet_float.onnx")
    wait(w.loading_finished)
    settle()
    c = w.transforms
    c.excluded = ("/layer1/conv2/Conv", "/layer2/conv1/Conv")
    dialog = c.open_dialog("quantize-static")
    assert isinstance(dialog, TransformDialog)
    dialog._add_path(str(EXPORTS / "inputs" / "resnet_float.npz"))
    dialog.st_channel.setChecked(True)
    settle()
    dialog.grab().save(str(HERE / "transform-dialog.png"))
    dialog.reject()
    c.excluded = ()
    dialog = c.open_dialog("quantize-static")
    assert isinstance(dialog, TransformDialog)
    dialog._add_path(str(EXPORTS / "inputs" / "resnet_float.npz"))
    dialog.ok.click()
    wait(c.transformed)
    if not w.diff.active:
        wait(w.diff.diff_shown)
    settle()
    w.grab().save(str(HERE / "transform-summary.png"))
    c.dock.runs.setValue(20)
    c.dock.cost_button.click()
    wait(c.cost_shown)
    settle()
    w.grab().save(str(HERE / "transform-cost.png"))
    worst_conv = next(k for k, layer in enumerate(c.dock.layers) if layer.op == "Conv")
    c.keep_layers_in_float([worst_conv])
    c.quantize_again()
    wait(c.transformed)
    settle()
    c.dock.cost_button.click()
    wait(c.cost_shown)
    settle()
    c.dock.tabs.setCurrentIndex(2)
    c.dock.variant_table.selectRow(1)
    settle()
    w.grab().save(str(HERE / "transform-variants.png"))
    w.doc.undo()  # type: ignore[union-attr]
    w.doc.undo()  # type: ignore[union-attr]
    w.close()
    app.processEvents()


if __name__ == "__main__":
    main()
