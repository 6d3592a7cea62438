"""Run Both: A and B run on the same inputs, their values paired through the diff's alignment (over several
samples, each pair's worst); the canvas coloured by each node's error, the Layers table, a value's pair in the
Values tab, the comparison in the Activations panel too."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QObject

from onnxviz.model.errors import OnnxvizError, sentence
from onnxviz.model.matching import CrossRun, ModelDiff, compare_models
from onnxviz.model.matching.samples import SamplesRun, compare_samples
from onnxviz.model.progress import CancelToken, ProgressFn
from onnxviz.model.runner.compare import PairSpec, ValueDiff
from onnxviz.model.runner.errors import RunError
from onnxviz.model.runner.store import value_key
from onnxviz.model.selection import SelectionState
from onnxviz.ui.diff.navigation import select_value
from onnxviz.ui.ports import Feeds
from onnxviz.ui.tasks import Task

if TYPE_CHECKING:
    from onnxviz.model.runner.sizes import GeneratedInputs
    from onnxviz.ui.canvas.canvas import GraphCanvas
    from onnxviz.ui.diff.dock import DiffDock
    from onnxviz.ui.diff.state import DiffState
    from onnxviz.ui.diff.work import DiffTasks
    from onnxviz.ui.ports import RunApi, ShownDocument, Status


class RunBoth(QObject):
    """Runs both models and shows their paired values (:attr:`DiffState.cross`)."""

    def __init__(self, state: DiffState, document: ShownDocument, canvas: GraphCanvas, dock: DiffDock, status: Status,
                 tasks: DiffTasks, run: Callable[[], RunApi], show_b: Callable[[bool], None],
                 compared: Callable[[], None], parent: QObject) -> None:
        super().__init__(parent)
        self.state, self.document, self.canvas, self.dock, self.status = state, document, canvas, dock, status
        self.tasks, self.run, self.show_b, self.compared = tasks, run, show_b, compared
        dock.run_both_requested.connect(self.run_both)
        dock.layers.pair_chosen.connect(self.show_layer)
        dock.run_with_inputs_requested.connect(self.run_both_with_inputs)

    def run_both(self, feeds: Mapping[str, np.ndarray] | Feeds | None = None) -> Task | None:
        """Run A and B on the same inputs (``feeds`` for A's inputs, or generated) in the runner's worker
        process, B fed through the alignment, pair the values through the diff's alignment and colour the
        nodes by their error."""
        doc_a, doc_b, diff = self.document.doc, self.state.doc_b, self.state.diff
        if doc_a is None or doc_b is None or diff is None:
            return None
        self.tasks.cancel()

        def work(progress: ProgressFn, token: CancelToken) -> CrossRun | SamplesRun:
            if feeds is None or isinstance(feeds, Mapping):
                given, generated = feeds, None
            elif feeds.samples:
                readers = [functools.partial(_sample_inputs, feeds, path) for path in feeds.samples]
                return compare_samples(doc_a.index, doc_b.index, readers, [Path(p).name for p in feeds.samples],
                                       base_dir_a=doc_a.base_dir, base_dir_b=doc_b.base_dir,
                                       alignment=diff.alignment, progress=progress, token=token)
            else:
                given, generated = feeds.to_run()
            return compare_models(doc_a.index, doc_b.index, given, base_dir_a=doc_a.base_dir,
                                  base_dir_b=doc_b.base_dir, alignment=diff.alignment, progress=progress, token=token,
                                  generated=generated)

        task = Task(work, "Running A and B", parent=self)
        task.finished.connect(lambda cross: self._compared(task, diff, cross))
        task.failed.connect(lambda exc, tb: self.tasks.failed(task, exc, tb, "The models could not be run"))
        task.cancelled.connect(lambda: self.tasks.cancelled(task, "Run Both was cancelled."))
        return self.tasks.start(task, "Running A and B on the same inputs...")

    def run_both_with_inputs(self) -> None:
        """Run Both on the inputs picked in the Run with Inputs... dialog (files, images, values: the run
        feature's, remembered for A's next run too); B reads them through the alignment."""
        doc = self.document.doc
        if doc is None or self.state.diff is None:
            return
        try:
            self.run().ask_inputs(doc, self.run_both)
        except RunError as exc:
            self.status.show_message(sentence(exc.message), 10000)
            self.status.show_error("Run Both", sentence(exc.message), exc.details)

    def _compared(self, task: Task, diff: ModelDiff, ran: CrossRun | SamplesRun) -> None:
        if task is not self.tasks.task or diff is not self.state.diff:
            ran.cleanup()
            return
        self.tasks.task = None
        self.drop_runs()
        over = ran if isinstance(ran, SamplesRun) else None
        cross = ran if isinstance(ran, CrossRun) else ran.as_cross()  # each pair's worst, added error too
        self.state.cross, self.state.over = cross, over
        self.dock.set_measures(True)
        self.dock.colouring.setCurrentIndex(max(0, self.dock.colouring.findData("sqnr_loss")))  # emits: colours
        self.dock.show_layers(cross)
        worst = cross.worst_first()
        said = f"; the lowest SQNR {worst[0].sqnr_db:.2f} dB at {worst[0].name}" if worst else ""
        samples = f" over {len(over.labels)} samples (each pair's worst)" if over is not None else ""
        self.status.show_message(f"Ran A and B{samples}: {len(cross.diffs)} values paired{said}.", 10000)
        doc_a, doc_b = self.document.doc, self.state.doc_b
        if doc_a is not None and doc_b is not None:  # A's run compared with B's: the Activations panel shows it too
            main = [d for d in cross.diffs if "::" not in d.name]
            pairs = [PairSpec(d.name, d.other, *cross.views.get((d.name, d.other), (None, None))) for d in main]
            self.run().show_comparison(
                cross, doc_a, cross.result_a, cross.result_b, main, pairs, f"{doc_b.name} (B)",
                over.pairs if over is not None else None, over.labels if over is not None else None)
        self.on_selection(self.document.doc.selection.state if self.document.doc is not None else SelectionState())
        self.compared()

    def on_selection(self, state: SelectionState) -> None:
        cross = self.state.cross
        if cross is None:
            return
        self.show_pair(self.pair_of(cross, state))

    def show_pair(self, pair: ValueDiff | None) -> None:
        cross = self.state.cross
        if cross is None:
            return
        if pair is None:
            self.dock.values.show_message("This node's outputs have no partner in B's run (or were not captured).")
            return
        try:
            a, b = cross.arrays(pair)   # an integer value read as the floats it stands for
        except (OnnxvizError, KeyError, OSError, ValueError) as exc:
            self.dock.values.show_message(f"The values could not be read: {exc}")
            return
        self.dock.values.show_pair(a, b, pair)

    def show_layer(self, row: int) -> None:
        """A pair chosen in the Layers table: A's value selected on A's graph (its node shown), the pair in
        the Values tab, its figures in the status bar."""
        cross, doc = self.state.cross, self.document.doc
        if cross is None or doc is None or not 0 <= row < len(self.dock.layers.rows):
            return
        layer = self.dock.layers.rows[row]
        d = layer.diff
        record = cross.result_a.values.get(d.name)
        self.show_b(False)
        if record is not None and record.node >= 0:
            self.canvas.reveal_node(record.scope, record.node)
        elif record is None or not select_value(doc, record.scope, record.name):
            doc.selection.clear()
        self.show_pair(d)
        added = f", added SQNR {layer.added_sqnr:.2f} dB" if layer.added_sqnr == layer.added_sqnr else ""
        self.status.show_message(
            f"{d.name} vs {d.other}: SQNR {d.sqnr_db:.2f} dB, cosine {d.cosine:.6f}, max |B-A| "
            f"{d.max_abs_error:.4g}{added}.", 10000)

    @staticmethod
    def pair_of(cross: CrossRun, state: SelectionState) -> ValueDiff | None:
        by_name = {d.name: d for d in cross.diffs}
        if state.value:
            return by_name.get(value_key(state.scope, state.value))
        g = cross.alignment.index_a.graphs.get(state.scope)
        if state.node < 0 or g is None or state.node >= len(g.nodes):
            return None
        keys = [value_key(state.scope, y) for y in g.nodes[state.node].output]
        return next((by_name[k] for k in keys if k in by_name), None)

    def drop_runs(self, reason: str = "") -> None:
        """Remove the last Run Both's runs; the Activations panel, which shows them, says ``reason``."""
        if self.state.cross is not None:
            self.run().forget(self.state.cross, reason or "Run Both was run again.")
            self.state.cross.cleanup()
            self.state.cross = None
            self.dock.show_layers(None)
        self.state.over = None


def _sample_inputs(feeds: Feeds, path: str) -> tuple[dict[str, np.ndarray], GeneratedInputs | None]:
    """(the run's thread) A's inputs for one sample: its arrays, the other inputs as the dialog chose them."""
    return feeds.with_sample(path).to_run()
