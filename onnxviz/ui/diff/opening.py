"""Opening a diff: B read and aligned with A (the matcher of :mod:`onnxviz.model.matching`) in a background
thread, and what A's and B's graphs then show (their nodes' categories, B's added nodes as ghosts in A's), in the
words of a plain diff or of a transform's."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from onnxviz.model.document import Document
from onnxviz.model.layout.ghosts import Ghost
from onnxviz.model.matching import Difference, ModelDiff, diff_models
from onnxviz.model.matching.ghosts import added_ghosts
from onnxviz.model.progress import CancelToken, ProgressFn
from onnxviz.ui.canvas.marks import Scheme
from onnxviz.ui.diff.dock import COLOURS

FUNCTION_KINDS = ("function_added", "function_removed", "function_changed")
DOCK_SHARE = 0.4  # of the window's height, for the Differences dock when a diff opens
MODEL_FILTER = "ONNX models (*.onnx);;All files (*)"
RENAMED_RGBA = (222, 203, 160, 255)  # a node that changed its name only (another exporter): muted
CATEGORY = {"renamed": 0, "node_changed": 1, "node_removed": 2, "node_added": 2}  # a group box shows its highest
DIFF_SCHEME = Scheme("category", ("renamed only", "changed", "removed in B", "added in B (dashed)"),
                     (RENAMED_RGBA, COLOURS["node_changed"], COLOURS["node_removed"], COLOURS["node_added"]),
                     blank="same in B")
DIFF_SCHEME_B = Scheme("category", ("renamed only", "changed", "added in B"),
                       (RENAMED_RGBA, COLOURS["node_changed"], COLOURS["node_added"]), blank="same in A")


@dataclass(frozen=True)
class Wording:
    """How A's canvas names what differs: the overlay's title, its legend, what the dashed ghosts are (a
    transform's diff shows its result as A and the model before as B: there, what is only in A is what the
    transform added)."""

    title: str = "Differences with B"
    scheme: Scheme = DIFF_SCHEME
    dashed: str = "only in B"
    ghost_note: str = "added in B"
    none_dashed: str = "nothing added"
    ghost_tip: str = "only in B (added)"
    only_in_b: str = "added in B"      # the list's words for a kind ending in _added (only B has it)
    only_in_a: str = "removed in B"    # ... and in _removed (only A has it)

    def kind(self, kind: str) -> str:
        """A difference's kind in words: ``node_added`` -> ``node added in B``, ``value_info_changed`` ->
        ``value_info changed``."""
        subject, _, verb = kind.rpartition("_")
        said = {"added": self.only_in_b, "removed": self.only_in_a}.get(verb, verb)
        return f"{subject} {said}"


AS_B = Wording()
AFTER_TRANSFORM = Wording(
    "What the transform changed",
    Scheme("category", ("renamed only", "changed", "added by the transform", "removed by it (dashed)"),
           DIFF_SCHEME.colours, blank="unchanged"),
    "removed by the transform", "removed by the transform", "nothing removed",
    "only in the model before (removed by the transform)", "removed by the transform", "added by the transform")


@dataclass
class Opened:
    """The finished diff: B's document and every difference."""

    doc_b: Document
    diff: ModelDiff
    marks: dict[tuple[str, int], float]   # A's nodes to colour: (scope, node) -> category
    summary: str
    marks_b: dict[tuple[str, int], float] = field(default_factory=dict)  # B's nodes, for B's graph
    ghosts: dict[str, list[Ghost]] = field(default_factory=dict)  # B's added nodes drawn in A's graphs, per A scope
    wording: Wording = AS_B


def open_diff(doc_a: Document, path: Path, wording: Wording, progress: ProgressFn, token: CancelToken) -> Opened:
    """(a background thread) B read from ``path`` and diffed against A, with the marks and ghosts A's and B's
    graphs show."""
    progress(0.0, f"Reading {path.name}")
    doc_b = Document.open(path)
    token.check()
    diff = diff_models(doc_a.index, doc_b.index, base_dir_a=doc_a.base_dir, base_dir_b=doc_b.base_dir,
                       progress=lambda f, t: progress(0.1 + 0.9 * f, t), token=token)
    ghosts = {scope: [g if g.group else dataclasses.replace(g, note=wording.ghost_note) for g in gs]
              for scope, gs in added_ghosts(diff).items()}
    return Opened(doc_b, diff, diff_marks(diff), diff.summary(wording.kind), diff_marks(diff, side_b=True), ghosts,
                  wording)


def diff_marks(diff: ModelDiff, side_b: bool = False) -> dict[tuple[str, int], float]:
    """A's changed and removed nodes of every graph (``side_b``: B's changed and added ones), as the
    canvas colours them (off the GUI thread)."""
    if side_b:
        return {(d.scope_b, d.node_b): float(CATEGORY[_category(d)]) for d in diff.differences
                if d.node_b >= 0 and d.kind in CATEGORY}
    return {(d.scope_a, d.node_a): float(CATEGORY[_category(d)]) for d in diff.differences
            if d.node_a >= 0 and d.kind in CATEGORY}


def _category(d: Difference) -> str:
    return "renamed" if d.kind == "node_changed" and d.details.get("changes") == ["name"] else d.kind
