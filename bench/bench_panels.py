"""Figures for the inspector panels and tensor statistics (prints medians; no assertions), and the
GUI thread's longest pause while the Weights panel reads a 50M-element weight (goal: under 100 ms).

    .venv/bin/python bench/bench_panels.py [MODEL.onnx]     (default: the 123k-node model of bench/synth.py)
"""

from __future__ import annotations

import functools
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from synth import synth_file

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
from onnx import TensorProto, numpy_helper  # noqa: E402

from onnxviz.model.graph.tensors import tensor_stats  # noqa: E402


def median_seconds(fn: Callable[[], object], runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bench_stats() -> None:
    values = np.random.default_rng(0).standard_normal(50_000_000).astype(np.float32)
    inline = numpy_helper.from_array(values, "w")
    t = median_seconds(lambda: tensor_stats(inline), 3)
    print(f"tensor_stats 50M float32 inline:   {t:6.2f} s  ({values.nbytes / t / 1e6:6.0f} MB/s)")
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "w.bin").write_bytes(values.tobytes())
        external = TensorProto(name="w", dims=[values.size], data_type=TensorProto.FLOAT,
                               data_location=TensorProto.EXTERNAL)
        external.external_data.add(key="location", value="w.bin")
        t = median_seconds(lambda: tensor_stats(external, Path(folder)), 3)
        print(f"tensor_stats 50M float32 external: {t:6.2f} s  ({values.nbytes / t / 1e6:6.0f} MB/s, memory-mapped)")


def _select_big_weight(path: Path) -> tuple[float, float]:
    """(seconds until shown, longest GUI pause) for selecting the weight ``big`` of ``path`` in a new window."""
    from gui_probe import GuiStallProbe, fresh_window, wait_for, wait_until

    window = fresh_window()
    window.open_path(path)
    wait_for(window.loading_finished)
    wait_until(lambda: not window.validation.busy and window.panels.raw_panel._task is None)
    view, probe = window.panels.weights_panel.view, GuiStallProbe(interval_ms=5)
    start = time.perf_counter()
    window.doc.selection.select_value("", "big")
    wait_until(lambda: view.prepared is not None and not view.is_busy)
    found = time.perf_counter() - start, probe.worst
    window.close()
    return found


def bench_big_weight(runs: int = 3) -> None:
    """Select a 50M-element (200 MB) inline weight in the window: the longest GUI pause until it is shown."""
    import onnx
    from gui_probe import fresh_app
    from onnx import helper

    fresh_app()
    with tempfile.TemporaryDirectory(prefix="onnxviz-bench-weight-") as folder:
        path = Path(folder) / "big.onnx"
        big = numpy_helper.from_array(np.arange(50_000_000, dtype=np.float32), "big")
        graph = helper.make_graph([helper.make_node("Identity", ["big"], ["y"])], "g", [],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [50_000_000])], [big])
        onnx.save(helper.make_model(graph), path)
        shown, pauses = zip(*[_select_big_weight(path) for _ in range(runs)], strict=True)
    print(f"select a 50M-element weight (window): shown in {statistics.median(shown):5.2f} s, "
          f"longest GUI pause {statistics.median(pauses) * 1000:5.0f} ms median of {runs} "
          f"(worst {max(pauses) * 1000:.0f} ms)")


def bench_window(model: Path) -> None:
    from PySide6.QtCore import QEventLoop, QSettings, QTimer

    from onnxviz.ui.app import ensure_app
    from onnxviz.ui.main_window import MainWindow

    ensure_app()
    with tempfile.TemporaryDirectory() as folder:
        QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, folder)
        window = MainWindow()
        window.open_path(model)
        loop = QEventLoop()
        window.loading_finished.connect(loop.quit)
        loop.exec()
        doc = window.doc
        assert doc is not None
        while window.validation.busy:
            wait = QEventLoop()
            QTimer.singleShot(50, wait.quit)
            wait.exec()
        panels = window.panels  # type: ignore[attr-defined]

        def settle() -> None:
            """Let the panels' background work finish: it competes for the GIL with the GUI thread."""
            while panels.model_panel._task is not None or panels.raw_panel._task is not None:
                wait = QEventLoop()
                QTimer.singleShot(20, wait.quit)
                wait.exec()

        def timed(select: Callable[[], None]) -> float:
            settle()
            start = time.perf_counter()
            select()
            doc.selection.clear()
            return time.perf_counter() - start

        n = len(doc.model.graph.node)
        picks = [n // 7, n // 3, n // 2, n - 5, 11]
        node_times = [timed(functools.partial(doc.selection.select_node, "", i)) for i in picks]
        names = [doc.model.graph.node[i].output[0] for i in picks]
        value_times = [timed(functools.partial(doc.selection.select_value, "", v)) for v in names]
        settle()
        model_time = median_seconds(lambda: panels.model_panel.show_document(doc), 3)
        print(f"{model.name}: {doc.index.node_count():,} nodes")
        print(f"  select node + clear (GUI thread):  {statistics.median(node_times) * 1000:7.1f} ms median")
        print(f"  select value + clear (GUI thread): {statistics.median(value_times) * 1000:7.1f} ms median")
        print(f"  model panel rebuild (GUI thread):  {model_time * 1000:7.1f} ms median")
        from onnxviz.model.graph.flops import graph_costs
        from onnxviz.model.graph.rawtext import model_text

        print(f"  FLOP estimate (background):        {median_seconds(lambda: graph_costs(doc.index), 3):7.2f} s")
        print(f"  raw model text (background):       {median_seconds(lambda: model_text(doc.model), 3):7.2f} s")
        window.close()


if __name__ == "__main__":
    bench_stats()
    bench_big_weight()
    bench_window(Path(sys.argv[1]) if len(sys.argv) > 1 else synth_file(3000))
