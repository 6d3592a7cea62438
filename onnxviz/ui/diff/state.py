"""The diff shown in one window: B's document, the differences, the canvas's marks and ghosts, the side shown,
the last Run Both's runs. One object that the diff's parts share (the controller's, each part reads and sets
its own fields)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from onnxviz.ui.diff.dock import DIFFERENCES
from onnxviz.ui.diff.opening import AS_B, Wording

if TYPE_CHECKING:
    from onnxviz.model.document import Document
    from onnxviz.model.layout.ghosts import Ghost
    from onnxviz.model.matching import CrossRun, ModelDiff
    from onnxviz.model.matching.samples import SamplesRun


@dataclass
class DiffState:
    doc_b: Document | None = None
    diff: ModelDiff | None = None
    marks: dict[tuple[str, int], float] = field(default_factory=dict)  # A's nodes to colour
    marks_b: dict[tuple[str, int], float] = field(default_factory=dict)  # B's nodes, for B's graph
    ghosts: dict[str, list[Ghost]] = field(default_factory=dict)  # B's added nodes drawn in A's graphs, per A scope
    wording: Wording = AS_B  # how A's canvas names the differences of the diff shown
    ghost_of: dict[int, Ghost] = field(default_factory=dict)  # a difference's row -> its ghost
    showing_b: bool = False  # the canvas shows B's graph
    cross: CrossRun | None = None  # the last Run Both's runs
    over: SamplesRun | None = None  # Run Both over several samples (cross: its last sample's runs)
    colouring: str = DIFFERENCES

    @property
    def active(self) -> bool:
        return self.diff is not None
