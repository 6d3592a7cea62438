"""Live validation latency: time from an edit to its validation result applied to the document.

    python bench/bench_validation.py [MODEL] [--edits N]

Prints the median (and min/max) over N edits (node renames) of a 12k-node model
(default: bench/synth.py's 300 layers, made on first use into .cache/onnxviz-tests/),
plus the split between the parts of one validation pass.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

from synth import synth_file

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?")
    parser.add_argument("--edits", type=int, default=10)
    args = parser.parse_args()

    from PySide6.QtCore import QCoreApplication, QEventLoop, QTimer

    import onnxviz
    from onnxviz.model.validation import validate
    from onnxviz.ui.validation import ValidationService

    app = QCoreApplication.instance() or QCoreApplication(sys.argv)
    model = args.model or str(synth_file(300))
    doc = onnxviz.open(model)
    nodes = [i for i, n in enumerate(doc.model.graph.node) if n.op_type == "Transpose"][: args.edits]
    print(f"{model}: {len(doc.model.graph.node)} nodes, {doc.model.ByteSize() / 1e6:.1f} MB")
    service = ValidationService()
    service.set_document(doc)
    loop = QEventLoop()
    service.finished.connect(lambda _r: loop.quit())
    QTimer.singleShot(60000, loop.quit)
    loop.exec()  # the validation after opening

    def applied_after(edit: object) -> float:
        start = time.perf_counter()
        edit()  # type: ignore[operator]
        loop.exec()
        return (time.perf_counter() - start) * 1000

    # each edit renames another node: every state is new to the validator and the model stays valid
    latencies = [applied_after(lambda i=i: doc.rename_node(i, f"bench_{i}")) for i in nodes]
    undo_latencies = [applied_after(doc.undo) for _ in range(min(5, len(nodes)))]
    del app

    print(f"edit -> validation applied, over {len(latencies)} edits: median {statistics.median(latencies):.0f} ms"
          f" (min {min(latencies):.0f}, max {max(latencies):.0f})")
    print(f"undo -> validation applied (state seen before): median {statistics.median(undo_latencies):.0f} ms")
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
