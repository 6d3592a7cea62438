"""Edit, undo and index-rebuild latency on big models (medians of a few repetitions).

    python bench/bench_edits.py [MODEL ...]

Defaults to the 12k- and 123k-node models of bench/synth.py (300 and 3000 layers, made on first
use into .cache/onnxviz-tests/).
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from synth import synth_file

import onnxviz
from onnxviz.model.document import Document


def timed(fn: Callable[[], object], repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def bench(path: str) -> None:
    doc: Document = onnxviz.open(path)
    _ = doc.index
    nodes = doc.model.graph.node
    i = next(k for k, n in enumerate(nodes) if n.op_type == "Transpose")
    ref = doc.node_ids[i]
    perm = list(nodes[i].attribute[0].ints)
    value = nodes[i].output[0]
    flip = iter(range(10**6))

    def set_attr() -> None:
        doc.edit.set_attribute(ref, "perm", perm[::-1] if next(flip) % 2 == 0 else perm)

    def undo_redo() -> None:
        doc.undo()
        doc.redo()

    def rebuild_index() -> None:
        doc.invalidate()
        _ = doc.index

    def undo_all() -> None:
        for _ in range(doc.undo_stack.index):
            doc.undo()

    figures = {
        "set attribute (by id)": timed(set_attr),
        "undo": timed(undo_redo) / 2,
        "rename node (by name)": timed(lambda: doc.edit.rename_node(ref, f"n{next(flip)}")),
        "index rebuild after an edit": timed(rebuild_index),
        "rename value everywhere": timed(lambda: doc.edit.rename_value(doc.model.graph.node[i].output[0],
                                                                  f"{value}_{next(flip)}")),
        "insert node on an edge": timed(lambda: doc.edit.insert_on_value(doc.model.graph.node[i].output[0], "Relu")),
        "undo all": timed(undo_all, repeat=1),
    }
    print(f"{Path(path).name}: {len(nodes)} nodes")
    for label, ms in figures.items():
        print(f"  {label:30s} {ms:8.1f} ms")


def main() -> int:
    for path in sys.argv[1:] or [str(synth_file(n)) for n in (300, 3000)]:
        bench(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
