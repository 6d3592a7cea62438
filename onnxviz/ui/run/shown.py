"""The runs the Activations panel shows (the window's last run, a comparison, another feature's) and what the
panel's summary says of them."""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.runner import RunResult
from onnxviz.model.runner.compare import (
    DEFAULT_TOLERANCE,
    PairSpec,
    Tolerance,
    ValueDiff,
    first_exceeding,
    worst,
)
from onnxviz.model.runner.sizes import expression_names
from onnxviz.model.runner.store import ValueRecord, value_key
from onnxviz.ui.widgets.names import wrappable

if TYPE_CHECKING:
    from onnxviz.model.matching.samples import PairOverSamples


@dataclass
class ShownRuns:
    """The run shown, the other run it was compared with and their differences."""

    result: RunResult | None = None
    other: RunResult | None = None
    diffs: list[ValueDiff] | None = None
    over: list[PairOverSamples] | None = None  # of diffs, when they gather several samples
    samples: list[str] = field(default_factory=list)
    owner: object | None = None  # another feature whose runs are shown (the diff's Run Both): not ours
    pairs: list[PairSpec] | None = None  # of diffs, when the other run is another model
    tolerance: Tolerance = DEFAULT_TOLERANCE  # of diffs, and of the next comparison
    other_label: str = ""  # what the last comparison compared with
    overlay_key: str = ""

    def drop(self) -> None:
        """Forget the runs (their files removed, unless they are another feature's)."""
        for r in (self.result, self.other):
            if r is not None and self.owner is None:  # another feature's runs are its to remove
                r.cleanup()
        self.result = self.other = None
        self.diffs = None
        self.over, self.samples = None, []
        self.owner = None

    def drop_other(self) -> None:
        """Forget the other run of a comparison with another model: the shown run stays."""
        if self.other is not None:
            self.other.cleanup()
        self.other, self.diffs, self.pairs, self.over, self.samples = None, None, None, None, []

    # -- a node's values ---------------------------------------------------------------------------
    def records_of(self, index: ModelIndex | None, scope: str, node: int) -> list[ValueRecord]:
        """The node's outputs by name (so a run from before an edit still finds its values)."""
        graph = index.graphs.get(scope) if index is not None else None
        if self.result is None or graph is None or node >= len(graph.nodes):
            return []
        found = (self.result.record(scope, n) for n in graph.nodes[node].output)
        return [r for r in found if r is not None]

    def structured_of(self, index: ModelIndex | None, scope: str, node: int) -> list[str]:
        """Keys of the node's outputs that are sequences or maps."""
        graph = index.graphs.get(scope) if index is not None else None
        if self.result is None or graph is None or node >= len(graph.nodes):
            return []
        return [k for k in (value_key(scope, n) for n in graph.nodes[node].output) if k in self.result.structured]

    def compare_colouring(self) -> str:
        """The first colouring of a comparison: by SQNR against another model (a quantized copy differs
        everywhere; its worst layer is the one of lowest SQNR, as compare and Run Both say), else by relative
        error (two engines or a saved copy: equal but for rounding)."""
        return "sqnr_loss" if self.pairs is not None else "rel_error"

    # -- the summary -------------------------------------------------------------------------------
    def summary(self, label: str) -> str:
        assert self.result is not None
        r = self.result
        ms = 1000 * r.timings.get("run_s", 0.0)
        text = f"Ran <b>{name_html(label)}</b> on {html.escape(r.what_ran())} in {ms:.1f} ms: {len(r.values)} values"
        text += f" and {len(r.structured)} sequences or maps." if r.structured else "."
        bad = r.first_nonfinite()
        if bad is not None:
            text += f" First NaN/Inf: <b>{name_html(bad.node_name or bad.name)}</b>."
        if r.scopes:
            text += (f"<br>Values inside {len(r.scopes)} If/Loop/Scan bodies or local functions come from the "
                     "reference evaluator (If: the chosen branch; Loop/Scan: the last iteration; a function: its "
                     "first call). Enter a body to see them.")
        if self.diffs is not None:
            text += "<br>" + self._comparison_text()
        text += f"<br>Inputs: {html.escape(wrappable(r.inputs_text(), 1000)) or 'none'}."
        chosen = ", ".join(f"{d}={size}" for d, size in r.dims.items() if expression_names(d) is None)
        if chosen:
            text += f" Sizes chosen: {html.escape(wrappable(chosen, 400))} (Run with Inputs... sets others)."
        for note in r.notes:
            text += f"<br>Note: {html.escape(wrappable(note, 1000))}"
        return text

    def _comparison_text(self) -> str:
        """Relative error first: a max abs error of 4e+04 on values of 9e+09 is float32 rounding."""
        diffs = self.diffs or []
        text = f"Compared with {name_html(self.other_label)}: {len(diffs)} values"
        if self.over is not None:
            return text + self._samples_text()
        rel, big = worst(diffs, "rel_error"), worst(diffs, "max_abs_error")
        if rel is not None and big is not None:
            text += (f"{self._lowest_sqnr(diffs)}, worst relative error {rel.rel_error:.3g} ({name_html(rel.name)}), "
                     f"worst max abs error {big.max_abs_error:.3g}")
        outside = [d for d in diffs if d.outside > 0]
        first = first_exceeding(diffs)
        if first is None:
            return text + f". All within {self.tolerance.text()}."
        return (text + f". {len(outside)} differ beyond {self.tolerance.text()}, "
                f"the first <b>{name_html(first.name)}</b>.")

    def _lowest_sqnr(self, diffs: list[ValueDiff]) -> str:
        """Against another model (a quantized copy: every value differs), the pair of lowest SQNR first, as
        compare sorts by default."""
        if self.pairs is None or not diffs:
            return ""
        # a comparison with another model: the matcher is imported by now
        from onnxviz.model.matching.crossrun import badness

        low = min(diffs, key=lambda d: (badness(d, "sqnr"), d.order))
        return f", lowest SQNR {low.sqnr_db:.2f} dB (<b>{name_html(low.name)}</b>)"

    def _samples_text(self) -> str:
        """A comparison over several samples: the worst pair's relative error (its mean beside it), the
        pairs beyond tolerance in some sample; the values shown are the last sample's."""
        over = self.over or []
        n = len(self.samples)
        text = f" over {n} samples (each figure its worst over them; the values shown are the last sample's, " \
               f"{name_html(self.samples[-1]) if self.samples else ''})"
        text += self._lowest_sqnr([p.worst for p in over])
        worst_pair = max(over, key=lambda p: p.worst.measure("rel_error"), default=None)
        if worst_pair is not None:
            text += (f", worst relative error {worst_pair.worst.rel_error:.3g} ({name_html(worst_pair.worst.name)}; "
                     f"mean over the samples {worst_pair.mean.rel_error:.3g}), mean cosine of that value "
                     f"{worst_pair.mean.cosine:.6f}")
        beyond = [p for p in over if p.worst.outside > 0]
        if not beyond:
            return text + f". All within {self.tolerance.text()} in every sample."
        return (text + f". {len(beyond)} differ beyond {self.tolerance.text()} in some sample, the first "
                f"<b>{name_html(beyond[0].worst.name)}</b>.")


def name_html(name: str) -> str:
    """A node, value or file name in the dock's summary: escaped, cut and free to wrap."""
    return html.escape(wrappable(name, 120))


def not_captured(scope: str) -> str:
    if not scope:
        return "This node's outputs were not captured in this run."
    if scope.startswith("fn:"):
        return "This function was not called in this run, or the run's notes say why its values were not captured."
    return ("This body did not run (its If branch was not chosen, or its Loop/Scan ran no iteration), "
            "or the run's notes say why its values were not captured.")
