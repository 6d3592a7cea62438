"""Edit, undo and index-rebuild latency on big models (medians of a few repetitions), and the edits that
restate declared types on a copy with value_info for every value.

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


def bench_declared(path: str) -> None:
    """Edits that restate declared types, on a copy of the model with value_info for every value (as exporters
    write them): an attribute edit that changes no type, one whose new types reach the whole graph (a Transpose's
    perm reversed), and a batch dimension made dynamic everywhere it goes."""
    import tempfile

    import onnx

    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / f"{Path(path).stem}_value_info.onnx"
        onnx.save(onnx.shape_inference.infer_shapes(onnx.load(path)), copy)
        doc: Document = onnxviz.open(str(copy))
        _ = doc.index
        nodes = doc.model.graph.node
        soft = doc.node_ids[next(k for k, n in enumerate(nodes) if n.op_type == "Softmax")]
        tr = doc.node_ids[next(k for k, n in enumerate(nodes) if n.op_type == "Transpose")]
        perm = list(nodes[doc.edit.locate(tr)[1]].attribute[0].ints)
        flip = iter(range(10**6))
        figures = {
            "attribute, types unchanged": timed(lambda: doc.edit.set_attribute(soft, "axis", [-1, 3][next(flip) % 2])),
            "attribute, types change": timed(lambda: doc.edit.set_attribute(
                tr, "perm", perm[::-1] if next(flip) % 2 == 0 else perm), repeat=3),
        }
        for _ in range(doc.undo_stack.index):
            doc.undo()
        start = time.perf_counter()
        doc.edit.set_dimension(doc.model.graph.input[0].name, 0, "batch")
        figures["batch made dynamic"] = (time.perf_counter() - start) * 1000
        ops = len(doc.undo_stack.commands[-1].ops)
        print(f"{copy.name}: {len(nodes)} nodes, {len(doc.model.graph.value_info)} value_info")
        for label, ms in figures.items():
            print(f"  {label:30s} {ms:8.1f} ms")
        print(f"  (the batch reached {ops - 1} declared types)")


def main() -> int:
    for path in sys.argv[1:] or [str(synth_file(n)) for n in (300, 3000)]:
        bench(path)
        bench_declared(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
