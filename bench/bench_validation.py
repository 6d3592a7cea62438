"""Live validation latency: time from an edit to its validation result applied to the document.

    python bench/bench_validation.py [MODEL] [--edits N]

Prints the median (and min/max) over N attribute edits of a 12k-node model
(default /tmp/synth300.onnx, made by ``python ../shared/bench/synth.py 300``),
plus the split between the parts of one validation pass.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", default="/tmp/synth300.onnx")
    parser.add_argument("--edits", type=int, default=10)
    args = parser.parse_args()

    from PySide6.QtCore import QCoreApplication, QEventLoop, QTimer

    import onnxviz
    from onnxviz.model.validation import validate
    from onnxviz.ui.validation import ValidationService

    app = QCoreApplication.instance() or QCoreApplication(sys.argv)
    doc = onnxviz.open(args.model)
    nodes = [i for i, n in enumerate(doc.model.graph.node) if n.op_type == "Transpose"][: args.edits]
    print(f"{args.model}: {len(doc.model.graph.node)} nodes, {doc.model.ByteSize() / 1e6:.1f} MB")
    service = ValidationService()
    service.set_document(doc)
    loop = QEventLoop()
    service.finished.connect(lambda _r: loop.quit())
    QTimer.singleShot(60000, loop.quit)
    loop.exec()  # the validation after opening

    latencies = []
    for k, i in enumerate(nodes):
        perm = list(doc.model.graph.node[i].attribute[0].ints)
        start = time.perf_counter()
        doc.set_attribute(i, "perm", perm[::-1] if k % 2 else perm)  # an edit (or a no-op on odd k)
        if not doc.undo_stack.can_undo or doc.undo_stack.commands[-1].label.find("perm") < 0:
            doc.rename_node(i, f"renamed_{k}")
        loop.exec()
        latencies.append((time.perf_counter() - start) * 1000)
    del app

    print(f"edit -> validation applied, over {len(latencies)} edits: median {statistics.median(latencies):.0f} ms"
          f" (min {min(latencies):.0f}, max {max(latencies):.0f}; debounce included: 0 ms when idle)")
    data = doc.model.SerializeToString()
    wall, cpu = [], []
    for _ in range(5):
        t0, c0 = time.perf_counter(), time.process_time()
        validate(data, None, 0)
        wall.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
    print(f"one validation pass: {statistics.median(wall):.0f} ms wall, {statistics.median(cpu):.0f} ms CPU "
          f"(wall > CPU means the cores were busy with other work; load average {os.getloadavg()[0]:.1f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
