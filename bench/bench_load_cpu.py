"""CPU time of the Python parts of opening a model, each measured alone: the GUI's load (open, then the index,
its checks and the node-name table) and what the two analysis workers do besides onnx's C++ (deciding which
weights to leave out, the schema checks, the figures' index and parameters, packing the inferred types).

    python bench/bench_load_cpu.py [--runs 3] [--repeat 5] [FILE]

Defaults to the 123k-node model of bench/synth.py (3000 layers). Each part runs ``--repeat`` times in a fresh
process (``time.process_time``, no profiler, the garbage collector off as in the loading thread and the
workers), ``--runs`` processes per part; prints the least of them, in milliseconds. On a shared CPU compare
two checkouts by alternating them (``PYTHONPATH``) and look at the least of several runs only.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from synth import synth_file

PARTS = ("open", "prepare", "slimmed", "schema_problems", "structure_index", "parameters", "inferred_types")

# Runs in the child: one part of the load, ``repeat`` times, on the model at argv[1]; prints the least CPU time.
CHILD = r"""
import gc, sys, time
gc.disable()
import onnx
from onnxviz.model.document import Document
from onnxviz.model.graph import inference, validation
from onnxviz.model.graph.index import index_escaping_text
from onnxviz.model.graph.summary import parameters

path, part, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = open(path, "rb").read()
model = onnx.ModelProto.FromString(data)

def prepare():
    doc = Document.open(path, pause=lambda: None)
    start = time.process_time()
    doc.prepare()
    return time.process_time() - start

def timed(work):
    start = time.process_time()
    work()
    return time.process_time() - start

def inferred_types():  # what the inference worker does with onnx's result: read and pack the types
    light = validation.slimmed(data, model)[2]
    inferred = onnx.shape_inference.infer_shapes(light, check_type=True, strict_mode=True, data_prop=True)
    start = time.process_time()
    types = {}
    inference._collect_types("", inferred.graph, types)
    {scope: validation.pack_types(table) for scope, table in types.items()}
    return time.process_time() - start

index = index_escaping_text(model, structure_only=True)[0] if part == "parameters" else None
parts = {
    "open": lambda: timed(lambda: Document.open(path, pause=lambda: None)),
    "prepare": prepare,
    "slimmed": lambda: timed(lambda: validation.slimmed(data, model)),
    "schema_problems": lambda: timed(lambda: validation.schema_problems(model)),
    "structure_index": lambda: timed(lambda: index_escaping_text(model, structure_only=True)),
    "parameters": lambda: timed(lambda: parameters(index)),
    "inferred_types": inferred_types,
}
print(min(parts[part]() for _ in range(repeat)) * 1000)
"""


def measure(path: Path, part: str, repeat: int) -> float:
    out = subprocess.run([sys.executable, "-c", CHILD, str(path), part, str(repeat)],
                         check=True, capture_output=True, text=True)
    return float(out.stdout.strip())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", nargs="?", type=Path, help="a model (default: the 123k-node synthetic one)")
    parser.add_argument("--runs", type=int, default=3, help="fresh processes per part")
    parser.add_argument("--repeat", type=int, default=5, help="times each part runs in a process")
    args = parser.parse_args()
    path = args.file or synth_file(3000)
    total = 0.0
    for part in PARTS:
        best = min(measure(path, part, args.repeat) for _ in range(args.runs))
        total += best
        print(f"{part:16s} {best:8.1f} ms CPU")
    print(f"{'total':16s} {total:8.1f} ms CPU (slimmed runs in both workers: count it twice for the whole load)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
