"""Speed of the model diff (alignment + structural diff) on two versions of a synthetic transformer.

    python bench/bench_diff.py [--window] [LAYERS ...]   (default: 300 3000, i.e. 12,311 and 123,011 nodes)

B is A with every node renamed (as another exporter or an optimizer names them), one node deleted, one
inserted, one attribute and one weight changed: the matcher has to align it by structure. Prints, per
size: reading both files, indexing them, aligning, the diff (wall clock, and the CPU time of align + diff,
which other work on the machine inflates less), and the fraction of nodes aligned.
With ``--window`` (run with QT_QPA_PLATFORM=offscreen) it times the window instead: File > Compare With...
from the call until the diff is in the dock and the canvas shows A's graph marked (added nodes drawn as
ghost boxes), the canvas idle again.
Goals (issue 19): 12k nodes in at most 2 s, 123k nodes in at most 15 s.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper
from synth import synth_file

from onnxviz.model.document import Document
from onnxviz.model.matching import align_models, diff_models


def edited_copy(model: onnx.ModelProto) -> onnx.ModelProto:
    """Every node renamed, the first Sigmoid deleted, a Relu inserted, a Softmax axis and a weight changed."""
    b = onnx.ModelProto()
    b.CopyFrom(model)
    nodes = b.graph.node
    for k, node in enumerate(nodes):
        node.name = f"node_{k}"
    sigmoid = next(n for n in nodes if n.op_type == "Sigmoid")
    for n in nodes:
        n.input[:] = [sigmoid.input[0] if x == sigmoid.output[0] else x for x in n.input]
    nodes.remove(sigmoid)
    softmax = next(n for n in nodes if n.op_type == "Softmax")
    softmax.attribute[0].i = 2
    at = next(k for k, n in enumerate(nodes) if n.op_type == "MatMul")
    source = nodes[at].output[0]
    for n in nodes:
        n.input[:] = ["inserted" if x == source else x for x in n.input]
    nodes.insert(at + 1, helper.make_node("Relu", [source], ["inserted"], name="inserted"))
    weight = next(t for t in b.graph.initializer if t.dims and len(t.dims) == 2)
    weight.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(weight) + np.float32(0.25), weight.name))
    return b


def measure(layers: int) -> None:
    path_a = synth_file(layers)
    with tempfile.TemporaryDirectory() as folder:
        path_b = Path(folder) / "b.onnx"
        onnx.save(edited_copy(onnx.load(str(path_a))), str(path_b))
        start = time.perf_counter()
        doc_a, doc_b = Document.open(path_a), Document.open(path_b)
        read = time.perf_counter() - start
        start = time.perf_counter()
        index_a, index_b = doc_a.index, doc_b.index
        indexed = time.perf_counter() - start
        start, cpu = time.perf_counter(), time.process_time()
        alignment = align_models(index_a, index_b)
        aligned = time.perf_counter() - start
        start = time.perf_counter()
        result = diff_models(index_a, index_b, base_dir_a=doc_a.base_dir, base_dir_b=doc_b.base_dir,
                             alignment=alignment)
        diffed = time.perf_counter() - start
        cpu = time.process_time() - cpu
    pairs, na, nb = alignment.counts()
    others = {k: n for k, n in result.counts().items() if k != "node_changed"}
    print(f"{na:>7,} nodes: read {read:.2f} s, index {indexed:.2f} s, align {aligned:.2f} s, "
          f"diff {diffed:.2f} s -> align + diff {aligned + diffed:.2f} s (CPU {cpu:.2f} s); {pairs:,}/{na:,} aligned "
          f"({100 * pairs / na:.2f}%), {len(result.differences):,} differences, besides renames: {others}")


def measure_window(layers: int) -> None:
    from PySide6.QtCore import QEventLoop, QSettings, QTimer

    from onnxviz.ui.app import ensure_app
    from onnxviz.ui.main_window import MainWindow

    ensure_app()
    path_a = synth_file(layers)
    with tempfile.TemporaryDirectory() as folder:
        QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, folder)
        path_b = Path(folder) / "b.onnx"
        onnx.save(edited_copy(onnx.load(str(path_a))), str(path_b))
        window = MainWindow()
        window.show()

        def wait_until(done: Callable[[], bool]) -> None:
            while not done():
                loop = QEventLoop()
                QTimer.singleShot(10, loop.quit)
                loop.exec()

        window.open_path(path_a)
        wait_until(lambda: window.doc is not None and window.canvas.drawable is not None and not window.canvas.busy)
        shown: list[float] = []
        window.diff.diff_shown.connect(lambda: shown.append(time.perf_counter()))
        start = time.perf_counter()
        window.diff.compare_with(path_b)
        wait_until(lambda: bool(shown) and not window.canvas.busy)
        end = time.perf_counter()
        n = len(window.doc.model.graph.node) if window.doc is not None else 0
        print(f"{n:>7,} nodes: window Compare With... to diff shown {shown[0] - start:.2f} s, "
              f"to the marked canvas idle {end - start:.2f} s; {len(window.diff.dock.differences):,} differences")
        window.set_document(None)
        window.close()


def main(argv: list[str]) -> int:
    window = "--window" in argv
    for layers in [int(a) for a in argv if a != "--window"] or [300, 3000]:
        (measure_window if window else measure)(layers)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
