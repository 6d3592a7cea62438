"""See What It Cost: the models before and after a transform run on the same inputs (each layer's error) and
timed, in the Transform dock's table; a layer's node selected on the graph shown."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject

from onnxviz.model.errors import OnnxvizError, sentence
from onnxviz.model.progress import CancelToken, ProgressFn
from onnxviz.model.transform import Timing
from onnxviz.model.transform.cost import LayerError, compare_files, layer_errors
from onnxviz.ui.tasks import Task, waiting_pool

if TYPE_CHECKING:
    from onnxviz.model.transform import Variant
    from onnxviz.ui.transform.host import TransformHost


@dataclass
class Cost:
    """What See What It Cost found: each layer's error (before -> after), both models' timing, and how many
    values of each side have no partner."""

    layers: list[LayerError]
    timings: list[Timing]
    unpaired: tuple[int, int]


class CostReport(QObject):
    """The cost of the last transform (or of a variant against the model it was made from)."""

    def __init__(self, host: TransformHost, parent: QObject) -> None:
        super().__init__(parent)
        self.host = host
        self.measured: tuple[int | None, int | None] = (None, None)  # the variants the cost table compares

    def see_cost(self, runs: int = 20, variant: int | None = None) -> Task | None:
        """Run the models before and after the last transform (or ``variant`` and the model it was made from) on
        the same inputs (the runner's worker processes, every value captured, the model before as the reference),
        measure each layer, then time both in onnxruntime (its own worker process, every graph optimization on)."""
        before, after = self._pair() if variant is None else self._made_from(variant)
        if before is None or after is None or self.host.outcome is None or self.host.document.doc is None:
            self.host.say("Transform the model first: the cost is that of a transform (the original has none).")
            return None
        if self.host.task is not None and not self.host.task.done:
            self.host.say("A transform is running; wait for it or cancel it first.")
            return None
        sample, transformer, runs = self.host.outcome.sample, self.host.transformer, max(3, runs)

        def work(progress: ProgressFn, token: CancelToken) -> Cost:
            cross = compare_files(before.path, after.path, sample, progress=lambda f, t: progress(0.8 * f, t),
                                  token=token)
            try:
                layers = layer_errors(cross)
                paired = (len(cross.pairing.unmatched_a), len(cross.pairing.unmatched_b))
            finally:
                cross.cleanup()
            timings = transformer.time([before.path, after.path], sample, runs,
                                       progress=lambda f, t: progress(0.8 + 0.2 * f, t), token=token)
            return Cost(layers, timings, paired)

        task = Task(work, "Running and timing both models", parent=self)
        task.finished.connect(lambda cost: self._cost_found(task, before, after, cost))
        task.failed.connect(lambda exc, tb: self._cost_failed(task, exc, tb))
        task.cancelled.connect(lambda: self._cost_failed(task, None, ""))
        self.host.task = task
        self.host.tasks.track_task(task)
        self.host.status.show_message("Running both models on the same inputs, then timing them...")
        task.start(waiting_pool())
        self.host.update_actions()
        return task

    def _made_from(self, key: int) -> tuple[Variant | None, Variant | None]:
        after = self.host.variants.get(key)
        source = after.source if after is not None else None
        return (self.host.variants.get(source) if source is not None else None), after

    def _pair(self) -> tuple[Variant | None, Variant | None]:
        get = self.host.variants.get
        return (get(self.host.before_key) if self.host.before_key is not None else None,
                get(self.host.after_key) if self.host.after_key is not None else None)

    def _cost_found(self, task: Task, before: Variant, after: Variant, cost: Cost) -> None:
        if task is not self.host.task:
            return
        self.host.task = None
        before.speed_ms, after.speed_ms = cost.timings[0].median_ms, cost.timings[1].median_ms
        self.measured = (before.key, after.key)
        worst = next((r for r in cost.layers if not math.isnan(r.sqnr_db)), None)
        if worst is not None:
            after.worst_sqnr, after.worst_layer = worst.sqnr_db, worst.before_node or worst.before
        unpaired_a, unpaired_b = cost.unpaired
        self.host.dock.set_layers(cost.layers, f"{len(cost.layers)} layers paired by the matcher, worst SQNR first, each "
                             f"against the model before; {unpaired_a} values before and {unpaired_b} after have no "
                             "partner. Click a row to select its node.")
        self.host.dock.set_timing(cost.timings, [f"Before ({before.name})", f"After ({after.name})"])
        self.host.dock.tabs.setCurrentIndex(1)
        self.host.show_dock()
        self.host.show_variants()
        self.host.update_actions()
        self.host.say(f"{after.name}: worst layer {worst.before_node or worst.before} at {worst.sqnr_db:.1f} dB; "
                  f"{cost.timings[1].median_ms:.3g} ms against {cost.timings[0].median_ms:.3g} ms."
                  if worst is not None else f"{after.name}: no layer paired.")
        self.host.cost_shown.emit()

    def _cost_failed(self, task: Task, exc: object, tb: str) -> None:
        if task is not self.host.task:
            return
        self.host.task = None
        self.host.update_actions()
        if exc is None:
            self.host.say("See What It Cost was cancelled.")
            return
        message = sentence(exc.message) if isinstance(exc, OnnxvizError) else f"The models could not be run: {exc}."
        self.host.say(message)
        self.host.status.show_error("See What It Cost", message, getattr(exc, "details", "") or tb)

    def show_layer(self, row: int) -> None:
        """A layer of the cost table: its node selected on the graph shown (the model before or after)."""
        if not 0 <= row < len(self.host.dock.layers):
            return
        layer = self.host.dock.layers[row]
        shown, (before, after) = self.host.shown_key, self.measured
        place = layer.at_after if shown == after else layer.at_before if shown == before else None
        if place is None or place[1] < 0:
            self.host.say("The model shown is neither the model before the transform nor its result.")
            return
        self.host.diff().show_b(False)
        self.host.canvas.reveal_node(*place)
