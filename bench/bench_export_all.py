"""Run > Export All Values: a finished run's values written into a new folder as ``run --dump`` writes them
(``store.export_run``, what the window's action runs in the background), timed after a capturing run of the model.

    python bench/bench_export_all.py [--runs 3] [FILE ...]

Defaults to bench/synth.py's 300-layer model (12k nodes, 12,312 values). The run is made once (in its worker
process, its values in shared memory, as the window's are); each export goes into a fresh temporary folder, removed
after. Prints the run's time, each export's wall and CPU time, the size of values.bin and the load average; compare
with ``bench/bench_dump.py``'s "plain" (a plain onnxruntime run of every value) at the same load.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

from synth import synth_file

from onnxviz.model.document import Document
from onnxviz.model.runner import RunOptions, run_model
from onnxviz.model.runner.inputs import build_feeds, input_specs
from onnxviz.model.runner.store import PACK_FILE, export_run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(f"load {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    for path in args.files or [synth_file(300)]:
        doc = Document.open(path)
        feeds = build_feeds(input_specs(doc.model), {}, {}, seed=0)
        start = time.perf_counter()
        result = run_model(doc.model, feeds, RunOptions(capture=True), index=doc.index, base_dir=doc.base_dir)
        ran = time.perf_counter() - start
        figures = []
        try:
            for _ in range(args.runs):
                folder = Path(tempfile.mkdtemp(prefix="onnxviz-export-"))
                try:
                    wall, cpu = time.perf_counter(), time.process_time()
                    count = export_run(result, folder / "values")
                    figures.append((time.perf_counter() - wall, time.process_time() - cpu))
                    size = (folder / "values" / PACK_FILE).stat().st_size
                finally:
                    shutil.rmtree(folder, ignore_errors=True)
        finally:
            result.cleanup()
        shown = ", ".join(f"{w:.2f} s (CPU {c:.2f} s)" for w, c in figures)
        print(f"{path.name}: run with every value captured {ran:.2f} s; export of {count} values "
              f"({size / 1e6:.1f} MB in {PACK_FILE}): {shown}")
    print(f"load {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
