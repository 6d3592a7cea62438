"""The expanded layout alone: every name-scope group of a model open (what Expand All and ``render --expand-all``
lay out), its CPU time, then with the drawing's preparation (``Drawable``: the edge labels' spots), in fresh
processes, with the inferred shapes' edge labels and no cycle collection meanwhile (as the window and ``render`` run
it); with ``--against CHECKOUT``, alternately with another checkout of onnxviz (put first on PYTHONPATH).

    python bench/bench_expanded_layout.py [--runs 2] [--against CHECKOUT] [FILE ...]

Defaults to bench/synth.py's 3000-layer model (123k nodes, made on first use into .cache/onnxviz-tests/). Prints
each run's figures and the load average before and after (the machine is shared: CPU times follow the load less
than wall times do).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from synth import synth_file

CHILD = r"""
import gc, sys, time
import onnx
from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.layout.engine import GraphLayout
from onnxviz.ui.app import ensure_app
app = ensure_app()
try:
    from onnxviz.model.layout.drawable import Drawable
except ImportError:  # a checkout from before it moved
    from onnxviz.ui.canvas.drawable import Drawable
from onnxviz.model.graph.validation import infer_types
model = onnx.load(sys.argv[1], load_external_data=False)
index = ModelIndex(model)
index.set_inferred(infer_types(model).types)  # every edge labelled with its shape, as in the window and render
layout = GraphLayout(index)
layout.build()
gc.disable()  # as the window's layout thread and ``onnxviz render`` run it (process_tuning.building)
cpu, wall = time.process_time(), time.perf_counter()
scene = GraphLayout(index, expanded=layout.tree.paths).build()
laid, laid_wall = time.process_time() - cpu, time.perf_counter() - wall
Drawable(scene)
print(f"layout CPU {laid:.2f} s (wall {laid_wall:.2f}); with Drawable CPU {time.process_time() - cpu:.2f} s "
      f"(wall {time.perf_counter() - wall:.2f}); {scene.n_boxes} boxes, {scene.n_edges} edges")
"""


def one(path: Path, checkout: Path | None) -> str:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    if checkout is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(checkout.resolve()), env.get("PYTHONPATH", "")])
    out = subprocess.run([sys.executable, "-c", CHILD, str(path)], capture_output=True, text=True, env=env,
                         cwd=Path(__file__).parent, check=False)
    return out.stdout.strip() or out.stderr.strip()[-500:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--against", type=Path, help="another checkout of onnxviz, run alternately with this one")
    args = parser.parse_args()
    print(f"load {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    for path in args.files or [synth_file(3000)]:
        for _ in range(args.runs):
            print(f"{path.name}: {one(path.resolve(), None)}", flush=True)
            if args.against is not None:
                print(f"{path.name} ({args.against}): {one(path.resolve(), args.against)}", flush=True)
    print(f"load {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
