"""What checking every write costs: open, then save after one edit, in place and as a copy beside its data,
and with the weights in a data file of their own, on the transformer-shaped models of bench/synth.py.

    python bench/bench_save.py [--layers 300 1500] [--runs 5]

Each figure is the median of ``--runs`` in one process (after a first, unmeasured round), in a temporary
folder on the disk of ``TMPDIR``. Run it with ``PYTHONPATH`` pointing at another checkout's code to compare.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import onnx

sys.path.insert(0, str(Path(__file__).parent))

import synth  # noqa: E402

import onnxviz  # noqa: E402


def _timed(action: Callable[[], object], runs: int) -> float:
    action()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _figures(folder: Path, layers: int, runs: int, say: Callable[[str, float], None]) -> None:
    plain = folder / "plain.onnx"
    onnx.save(synth.build(layers), plain)
    (folder / "ext").mkdir()
    external = folder / "ext" / "model.onnx"
    onnx.save_model(synth.build(layers), str(external), save_as_external_data=True, location="model.onnx.data")
    (folder / "copy").mkdir()
    counter = iter(range(10**6))

    def edited(path: Path) -> onnxviz.Document:
        doc = onnxviz.open(str(path))
        doc.edit.rename_node(0, f"renamed{next(counter)}")
        return doc

    doc = edited(plain)
    ext = edited(external)
    say("open", _timed(lambda: onnxviz.open(str(plain)), runs))
    say("open, external data", _timed(lambda: onnxviz.open(str(external)), runs))

    def save_in_place() -> None:
        doc.edit.rename_node(0, f"renamed{next(counter)}")
        doc.save()

    def save_copy() -> None:
        ext.edit.rename_node(0, f"renamed{next(counter)}")
        ext.save(folder / "copy" / f"m{next(counter)}.onnx")

    say("save in place", _timed(save_in_place, runs))
    say("Save As beside its data (copy)", _timed(save_copy, runs))
    separate = edited(external)

    def save_separately() -> None:
        separate.edit.rename_node(0, f"renamed{next(counter)}")
        try:
            separate.save(external="file")
        except onnxviz.OnnxvizError:  # code before the two-file save was one step asks to replace its own file
            separate.save(external="file", replace_data=True)

    say("save, weights in a data file", _timed(save_separately, runs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, nargs="+", default=[300])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(f"onnxviz from {Path(onnxviz.__file__).parent}")
    for layers in args.layers:
        folder = Path(tempfile.mkdtemp(prefix="onnxviz-bench-save-"))
        def say(what: str, seconds: float, layers: int = layers) -> None:
            print(f"{layers} layers: {what}: {seconds * 1000:.1f} ms", flush=True)

        try:
            _figures(folder, layers, args.runs, say)
        finally:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
