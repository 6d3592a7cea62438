"""Live validation latency: time from an edit to its validation result applied to the document.

    python bench/bench_validation.py [MODEL] [--edits N]

Prints the median (and min/max) over N edits (node renames) of a 12k-node model
(default: bench/synth.py's 300 layers, made on first use into .cache/onnxviz-tests/),
for the first pass (checker, inference, schema checks) and for onnxruntime's check that
follows it, plus the time of one pass of each.
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
    from onnxviz.model.graph.session_check import runtime_problems
    from onnxviz.model.graph.validation import validate
    from onnxviz.ui.validation import ValidationService

    app = QCoreApplication.instance() or QCoreApplication(sys.argv)
    model = args.model or str(synth_file(300))
    doc = onnxviz.open(model)
    nodes = [i for i, n in enumerate(doc.model.graph.node) if n.op_type == "Transpose"][: args.edits]
    print(f"{model}: {len(doc.model.graph.node)} nodes, {doc.model.ByteSize() / 1e6:.1f} MB")
    service = ValidationService()
    service.set_document(doc)
    loop = QEventLoop()
    first: list[float] = []
    service.finished.connect(lambda _r: first.append(time.perf_counter()))
    service.finished.connect(lambda _r: None if service.busy else loop.quit())
    service.runtime_checked.connect(lambda _r: loop.quit())
    QTimer.singleShot(60000, loop.quit)
    loop.exec()  # the validation after opening
    if service.busy:
        loop.exec()

    def applied_after(edit: object) -> tuple[float, float]:
        """Milliseconds to the first pass applied, and to onnxruntime's check done."""
        start = time.perf_counter()
        first.clear()
        edit()  # type: ignore[operator]
        while not first or service.busy:
            loop.exec()
        return (first[0] - start) * 1000, (time.perf_counter() - start) * 1000

    # each edit renames another node: every state is new to the validator and the model stays valid
    latencies = [applied_after(lambda i=i: doc.edit.rename_node(i, f"bench_{i}")) for i in nodes]
    undo_latencies = [applied_after(doc.undo)[0] for _ in range(min(5, len(nodes)))]
    del app

    for k, what in enumerate(("validation applied", "onnxruntime's check done")):
        times = [pair[k] for pair in latencies]
        print(f"edit -> {what}, over {len(times)} edits: median {statistics.median(times):.0f} ms"
              f" (min {min(times):.0f}, max {max(times):.0f})")
    print(f"undo -> validation applied (state seen before): median {statistics.median(undo_latencies):.0f} ms")
    data = doc.model.SerializeToString()
    for label, check in (("one validation pass", lambda: validate(data, None, 0, runtime=False)),
                         ("onnxruntime's check", lambda: runtime_problems(doc.model, data))):
        wall, cpu = [], []
        for _ in range(5):
            t0, c0 = time.perf_counter(), time.process_time()
            check()
            wall.append((time.perf_counter() - t0) * 1000)
            cpu.append((time.process_time() - c0) * 1000)
        print(f"{label}: {statistics.median(wall):.0f} ms wall, {statistics.median(cpu):.0f} ms CPU "
              f"(wall > CPU means the cores were busy with other work; load average {os.getloadavg()[0]:.1f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
