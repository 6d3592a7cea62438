"""Save As of a model whose weights are in an external data file (issue 20, item 2): wall time until the
window says it is saved, and the longest GUI-thread pause meanwhile (the window must stay responsive while the
data file is copied).

    python bench/bench_save_as.py [--gib 2.0] [--runs 2]

Generates, in a temporary folder deleted afterwards, a model whose ``--gib`` GiB of float32 weights (256 MiB
matrices) are in one data file beside it; each run is a fresh offscreen window that opens it and saves it as a
new name in another folder (File > Save As, the dialog answered by the bench), which copies the data file.
Prints, per run: the seconds from the click until the save is done, the longest GUI-thread pause (5 ms timer)
over the same span, and the bytes written. The page cache holds the source after the first run ("warm").
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SIDE = 8192  # weights are SIDE x SIDE float32: 256 MiB each

GENERATE = r"""
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper

count, side, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
data_name = "weights.bin"
graph = helper.make_graph([], "external", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, side])], [])
value, offset = "x", 0
with open(f"{out}.dir/{data_name}", "wb") as data:
    for i in range(count):
        block = np.full((side, side), 1.0 / (i + 2), np.float32).tobytes()
        data.write(block)
        t = onnx.TensorProto(name=f"w{i}", data_type=TensorProto.FLOAT, dims=[side, side],
                             data_location=TensorProto.EXTERNAL)
        for key, v in (("location", data_name), ("offset", str(offset)), ("length", str(len(block)))):
            t.external_data.add(key=key, value=v)
        offset += len(block)
        graph.initializer.append(t)
        graph.node.append(helper.make_node("MatMul", [value, f"w{i}"], [f"h{i}"], name=f"matmul{i}"))
        value = f"h{i}"
graph.output.append(helper.make_tensor_value_info(value, TensorProto.FLOAT, [1, side]))
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), f"{out}.dir/model.onnx")
"""

CHILD = r"""
import sys, time
sys.path.insert(0, sys.argv[3])
from gui_probe import GuiStallProbe, fresh_app, fresh_window, wait_until
fresh_app()
from onnxviz.ui import main_window
window = fresh_window()
window.open_path(sys.argv[1])
wait_until(lambda: window.doc is not None and not window.task_progress.running, 600)
target = sys.argv[2]
main_window.QFileDialog.getSaveFileName = lambda *args: (target, "")
probe = GuiStallProbe(interval_ms=5)
start = time.perf_counter()
window.save_as_action.trigger()
wait_until(lambda: str(window.doc.path) == target and not window.task_progress.running, 600)
seconds = time.perf_counter() - start
probe.tick()
print("RESULT", seconds, probe.worst)
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gib", type=float, default=2.0, help="GiB of external weights (256 MiB matrices)")
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    count = max(round(args.gib * 4), 1)
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(REPO))
    print(f"{'run':<5} {'weights GiB':>11} {'save s':>7} {'pause ms':>8} {'written GiB':>11}")
    with tempfile.TemporaryDirectory(prefix="onnxviz-save-as-", dir=os.environ.get("BENCH_TMP")) as tmp:
        source = Path(tmp) / "source"
        Path(f"{source}.dir").mkdir()
        subprocess.run([sys.executable, "-c", GENERATE, str(count), str(SIDE), str(source)], check=True, env=env)
        model = Path(f"{source}.dir") / "model.onnx"
        for run in range(args.runs):
            out_dir = Path(tmp) / f"copy{run}"
            out_dir.mkdir()
            target = out_dir / "saved.onnx"
            result = subprocess.run([sys.executable, "-c", CHILD, str(model), str(target), str(REPO / "bench")],
                                    env=env, capture_output=True, text=True, timeout=1200)
            line = next((x for x in result.stdout.splitlines() if x.startswith("RESULT")), None)
            if result.returncode != 0 or line is None:
                print(result.stderr[-2000:], file=sys.stderr)
                return 1
            seconds, pause = map(float, line.split()[1:])
            written = sum(f.stat().st_size for f in out_dir.iterdir()) / 2**30
            print(f"{run + 1:<5} {count / 4:>11.2f} {seconds:>7.2f} {pause * 1000:>8.0f} {written:>11.2f}", flush=True)
            for f in out_dir.iterdir():
                f.unlink()  # room on the disk for the next run
    return 0


if __name__ == "__main__":
    start = time.perf_counter()
    code = main()
    print(f"({time.perf_counter() - start:.0f} s in all)")
    raise SystemExit(code)
