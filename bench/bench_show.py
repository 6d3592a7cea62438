"""How long ``onnxviz.show`` keeps the caller waiting, and how soon the window shows the model.

    python bench/bench_show.py [--runs 3] [--layers 10 300]

For each synth model (bench/synth.py, loaded into memory as a ModelProto, as a script holds it): the time
``show()`` takes to return (writing the model to the hand-over folder and starting the window's process), the
time until the window has drawn it (``wait_shown``), and an ``update()`` of the same window with the model
changed, until drawn again. Offscreen unless a display is set. Medians of ``--runs`` windows.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import onnx
from synth import synth_file

import onnxviz


def measure(model: onnx.ModelProto) -> dict[str, float]:
    start = time.perf_counter()
    window = onnxviz.show(model)
    returned = time.perf_counter() - start
    window.wait_shown(300)
    shown = time.perf_counter() - start
    model.graph.node[0].name += "_v2"
    start = time.perf_counter()
    window.update(model)
    update_returned = time.perf_counter() - start
    window.wait_shown(300)
    updated = time.perf_counter() - start
    window.close(60)
    return {"show returns": returned, "drawn": shown, "update returns": update_returned, "drawn again": updated}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--layers", type=int, nargs="+", default=[10, 300])
    args = parser.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    for layers in args.layers:
        model = onnx.load(synth_file(layers))
        runs = [measure(model) for _ in range(args.runs)]
        figures = ", ".join(f"{key} {statistics.median(r[key] for r in runs):.2f} s" for key in runs[0])
        print(f"synth{layers} ({len(model.graph.node):,} nodes): {figures}")


if __name__ == "__main__":
    main()
