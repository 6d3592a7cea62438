"""A model whose graph field is written many times over (protobuf merges the copies into one graph: every node,
input, output and weight N times, every name N times) against one of the same graph with every name made
unique: ``onnxviz info`` and ``onnxviz check`` on each, in fresh processes, alternately. The repeated one must
not be slower than about twice the other (it was quadratic: 5-6 s at 4,000 copies, 46 s at 13,477).

    python bench/bench_repeated_graph.py [--copies 2834] [--runs 3]

Both files are made from the example model (24 nodes, 19 weights) in a temporary folder, removed after.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import onnx

EXAMPLE = Path(__file__).resolve().parents[1] / "resources" / "examples" / "example.onnx"


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def repeated(model: onnx.ModelProto, copies: int) -> bytes:
    """The model with its graph field (7) written ``copies`` times: what concatenating files of it does."""
    head = onnx.ModelProto()
    head.CopyFrom(model)
    head.ClearField("graph")
    graph = model.graph.SerializeToString()
    return head.SerializeToString() + (b"\x3a" + _varint(len(graph)) + graph) * copies


def unique(model: onnx.ModelProto, copies: int) -> bytes:
    """One graph holding ``copies`` copies of the model's graph, each name prefixed by its copy."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    g = out.graph
    for field in ("node", "input", "output", "initializer", "value_info"):
        g.ClearField(field)
    for k in range(copies):
        part = onnx.GraphProto()
        part.CopyFrom(model.graph)
        rename = {name: f"c{k}/{name}" for name in _names(part)}
        for n in part.node:
            n.name = f"c{k}/{n.name}"
            n.input[:] = [rename.get(x, x) for x in n.input]
            n.output[:] = [rename.get(x, x) for x in n.output]
        for v in (*part.input, *part.output, *part.value_info, *part.initializer):
            v.name = rename.get(v.name, v.name)
        for field in ("node", "input", "output", "initializer", "value_info"):
            getattr(g, field).extend(getattr(part, field))
    return out.SerializeToString()


def _names(g: onnx.GraphProto) -> set[str]:
    return {x for n in g.node for x in (*n.input, *n.output) if x} | {v.name for v in (*g.input, *g.initializer)}


def timed(args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "onnxviz", *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=False)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=2834)  # 68,016 nodes
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    model = onnx.load(str(EXAMPLE))
    with tempfile.TemporaryDirectory() as folder:
        files = {"repeated names": Path(folder) / "repeated.onnx", "unique names": Path(folder) / "unique.onnx"}
        files["repeated names"].write_bytes(repeated(model, args.copies))
        files["unique names"].write_bytes(unique(model, args.copies))
        print(f"{args.copies:,} copies of the example's graph: {args.copies * len(model.graph.node):,} nodes; "
              f"load {open('/proc/loadavg').read().split()[0]}")
        for command in ("info", "check"):
            times: dict[str, list[float]] = {name: [] for name in files}
            for _ in range(args.runs):
                for name, path in files.items():
                    times[name].append(timed([command, str(path)]))
            line = ", ".join(f"{name} {statistics.median(t):.2f} s ({min(t):.2f}-{max(t):.2f})"
                             for name, t in times.items())
            ratio = statistics.median(times["repeated names"]) / statistics.median(times["unique names"])
            print(f"onnxviz {command}: {line}; repeated / unique {ratio:.2f}x")


if __name__ == "__main__":
    main()
