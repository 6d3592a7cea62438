"""Makes the pictures of the model diff (README, docs/window.md), offscreen:

    QT_QPA_PLATFORM=offscreen python docs/screenshots/make_diff_screens.py

diff-view.png: resnet_float.onnx compared with its int8 QDQ version (File > Compare With...), a changed
Conv selected; diff-added.png: the same merged view of A with the QDQ model's added nodes as dashed green
ghost boxes between their neighbours, an added QuantizeLinear selected (B's fields in the Node panel); diff-weights.png: the Quantized weights tab (float weights against the dequantized int8 ones);
diff-values.png: after Run Both, the value of a Relu the quantizer removed in A, B and B - A;
diff-layers.png: the float ResNet against onnxruntime's QOperator copy after Run Both, the Layers tab, worst SQNR first;
diff-exports.png: torch's legacy and dynamo exports of one BERT (every node renamed), a rewired Range selected;
compare-activations.png: Run > Compare with Model... (float vs int8), the Activations panel's "Both runs" tab.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QEventLoop, QSettings, QTimer, SignalInstance
from PySide6.QtWidgets import QApplication

if TYPE_CHECKING:
    from onnxviz.ui.main_window import MainWindow

HERE = Path(__file__).parent
EXPORTS = HERE.parent.parent / "tests" / "data" / "exports"


def wait(signal: SignalInstance, ms: int = 120000) -> None:
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

    folder = tempfile.TemporaryDirectory(prefix="onnxviz-screens-")  # the user's settings: neither read nor written
    w = MainWindow(QSettings(f"{folder.name}/onnxviz.ini", QSettings.Format.IniFormat))
    w.remember_window_state = False
    w.resize(1600, 1000)
    w.show()
    w.open_path(EXPORTS / "resnet_float.onnx")
    wait(w.loading_finished)
    settle()
    w.diff.compare_with(EXPORTS / "resnet_int8_qdq.onnx")
    wait(w.diff.diff_shown)
    rows = [k for k, d in enumerate(w.diff.dock.differences) if d.kind == "node_changed"
            and "layer1/conv2" in (d.a or "")]   # mid-graph: centred
    w.diff.dock.list.setCurrentRow(rows[0])
    settle()
    w.grab().save(str(HERE / "diff-view.png"))
    b_nodes = w.diff.doc_b.index.main.nodes  # type: ignore[union-attr]
    added = next(k for k, d in enumerate(w.diff.dock.differences) if d.kind == "node_added"
                 and b_nodes[d.node_b].op_type == "QuantizeLinear" and "layer1" in b_nodes[d.node_b].name)
    w.diff.dock.list.setCurrentRow(added)  # only B has it: its ghost box in A's graph
    settle()
    w.grab().save(str(HERE / "diff-added.png"))
    w.diff.dock.tabs.setCurrentWidget(w.diff.dock.weights_table)
    w.diff.dock.weights_table.setCurrentCell(0, 0)  # back on A's graph, the weight in the Weights panel
    settle()
    w.grab().save(str(HERE / "diff-weights.png"))
    w.diff.run_both()
    wait(w.diff.runs_compared)
    relu = next(i for i, n in enumerate(w.doc.index.main.nodes) if n.name == "/layer2/Relu_1")  # type: ignore[union-attr]
    w.canvas.reveal_node("", relu)
    settle()
    w.diff.dock.tabs.setCurrentWidget(w.diff.dock.values)
    settle(10)
    w.grab().save(str(HERE / "diff-values.png"))
    w.diff.close_diff()
    layers_picture(w)
    w.open_path(EXPORTS / "bert_legacy.onnx")
    wait(w.loading_finished)
    settle()
    w.diff.compare_with(EXPORTS / "bert_dynamo.onnx")
    wait(w.diff.diff_shown)
    w.diff.dock.list.setCurrentRow(next(k for k, d in enumerate(w.diff.dock.differences)
                                        if d.kind == "node_changed" and d.details.get("changes") != ["name"]))
    settle()
    w.grab().save(str(HERE / "diff-exports.png"))
    w.diff.close_diff()
    w.open_path(EXPORTS / "resnet_float.onnx")
    wait(w.loading_finished)
    settle()
    run = w.run_controller
    run.run(compare="file", other_path=EXPORTS / "resnet_int8_qdq.onnx")
    wait(run.run_finished)
    relu = next(i for i, n in enumerate(w.doc.index.main.nodes) if n.name == "/layer1/Relu_1")  # type: ignore[union-attr]
    w.canvas.reveal_node("", relu)
    settle()
    run.dock.tabs.setCurrentWidget(run.dock.pair_page)
    settle(10)
    w.grab().save(str(HERE / "compare-activations.png"))
    w.set_document(None)
    settle(3)
    app.quit()


def layers_picture(w: MainWindow) -> None:
    """diff-layers.png: the float ResNet against its QOperator copy after Run Both, the Layers tab with the
    worst SQNR selected."""
    from tests.quantized_models import quantized, reference, sample

    w.diff.compare_with(quantized("resnet_qoperator"))
    wait(w.diff.diff_shown)
    w.diff.run_both(sample(reference("resnet_qoperator").stem))
    wait(w.diff.runs_compared)
    dock = w.diff.dock
    dock.layers.select_worst()
    dock.tabs.setCurrentWidget(dock.layers)
    settle(10)
    w.grab().save(str(HERE / "diff-layers.png"))
    w.diff.close_diff()


if __name__ == "__main__":  # the runner's worker processes import this module again
    main()
