"""CPU of the canvas's first layout of a model, in isolation: what its layout thread does for a newly
opened document (``InlineLayout`` of the main graph, collapsed, then the ``Drawable`` with its label
spots) and, once inferred shapes arrive, the relabel job (new edge labels, the levels laid out again,
a new ``Drawable``).

    python bench/bench_first_layout.py                   # bench/synth.py's 3000 layers (made if missing)
    python bench/bench_first_layout.py MODEL.onnx --runs 5
    python bench/bench_first_layout.py --gc              # with cycle collections, as the canvas ran it before

Each run is a fresh process (the first layout of a process is the one a user waits for); the jobs run
under ``process_tuning.building()`` as the canvas runs them (no cycle collection meanwhile). Figures are
``time.process_time()`` of the jobs alone: robust to a busy machine, unlike wall time.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from synth import synth_file


@contextlib.contextmanager
def _job(collect: bool) -> Iterator[None]:
    from onnxviz.model.process_tuning import building, settle

    if collect:   # collections on, the result settled afterwards
        yield
        settle()
        return
    with building():
        yield


def measure(path: Path, collect: bool) -> dict[str, float]:
    from onnxviz.model.document import Document
    from onnxviz.model.graph.validation import infer_types
    from onnxviz.model.layout.drawable import Drawable
    from onnxviz.model.layout.inline import InlineLayout
    from onnxviz.model.layout.options import LayoutOptions
    from onnxviz.model.process_tuning import building
    from onnxviz.model.progress import CancelToken

    with building():  # as the window opens a document
        doc = Document.open(path)
        doc.prepare()
    inferred = infer_types(doc.model).types
    index = doc.index
    start = time.process_time()
    with _job(collect):
        layout = InlineLayout(index, "", None)
        layout.options = LayoutOptions()
        drawable = Drawable(layout.build(lambda _f, _t: None, CancelToken()))
    first = time.process_time()
    index.set_inferred(inferred)
    with _job(collect):
        relabelled = Drawable(layout.relabel())
    end = time.process_time()
    return {"first": first - start, "relabel": end - first, "boxes": drawable.scene.n_boxes,
            "labels": len(relabelled.labels.edge)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--gc", action="store_true", help="cycle collections on during the jobs")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    path = args.model or synth_file(3000)
    if args.child:
        print(json.dumps(measure(path, args.gc)))
        return
    runs = []
    for _ in range(args.runs):
        cmd = [sys.executable, __file__, str(path), "--child", *(["--gc"] if args.gc else [])]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True)
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    first, relabel = ([r[k] for r in runs] for k in ("first", "relabel"))
    print(f"{path.name}: {runs[0]['boxes']} boxes, {runs[0]['labels']} labels after inference; CPU over {len(runs)} "
          f"processes (median, min-max): first layout {statistics.median(first):.3f} s "
          f"({min(first):.3f}-{max(first):.3f}), relabel {statistics.median(relabel):.3f} s "
          f"({min(relabel):.3f}-{max(relabel):.3f})")


if __name__ == "__main__":
    main()
