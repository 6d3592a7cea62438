"""What the canvas draws over the boxes of the model: badges (problems), an overlay (boxes coloured by a
value, with its key in the legend strip) and ghosts (boxes of nodes only another model has)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

from onnxviz.model.layout.ghosts import Ghost
from onnxviz.ui.canvas.jobs import LayoutJobs, edit_job
from onnxviz.ui.canvas.legend import LegendStrip
from onnxviz.ui.canvas.marks import LEVEL, Overlay, Scheme, overlay_colours, worst_badges
from onnxviz.ui.canvas.shown import ShownGraph
from onnxviz.ui.canvas.view import GraphView

NodeKey = tuple[str, int]   # (scope, node)


class OverlayRequest(NamedTuple):
    """The overlay asked for: a value per node, its title, the node flagged, the colour scheme."""

    values: dict[NodeKey, float]
    title: str
    flagged: NodeKey | None
    scheme: Scheme


class CanvasMarks:
    """Badges, overlay and ghosts as asked for, and as drawn on the shown scene."""

    def __init__(self, shown: ShownGraph, view: GraphView, legend_strip: LegendStrip, jobs: LayoutJobs) -> None:
        self.shown, self.view, self.legend_strip, self.jobs = shown, view, legend_strip, jobs
        self._badges: dict[NodeKey, str] = {}
        self._overlay: OverlayRequest | None = None
        self.shown_overlay: Overlay | None = None   # the overlay as drawn on the shown scene
        self._ghosts: Mapping[str, Sequence[Ghost]] = {}   # scope -> boxes of nodes only another model has
        self.describe_ghost: Callable[[int], str] = str   # a ghost's key -> its tooltip (html)

    @property
    def overlay(self) -> OverlayRequest | None:
        """The overlay asked for (drawn on every scene shown until cleared), or None."""
        return self._overlay

    @property
    def badges(self) -> dict[NodeKey, str]:
        """The badges asked for: (scope, node) -> "error" | "warning"."""
        return dict(self._badges)

    @property
    def ghosts(self) -> Mapping[str, Sequence[Ghost]]:
        """The ghosts drawn into every scene: scope -> ghosts."""
        return self._ghosts

    def clear(self) -> None:
        """A new document: no badges, overlay or ghosts."""
        self._badges, self._overlay, self.shown_overlay = {}, None, None
        self.legend_strip.set_legend(None)
        self._ghosts = {}

    def set_ghosts(self, ghosts: Mapping[str, Sequence[Ghost]], describe: Callable[[int], str] = str) -> None:
        """Draw ``ghosts`` (per scope) into every scene from now on, the shown one at once (nothing is
        laid out again); ``describe`` gives a ghost's tooltip. An empty mapping takes them away."""
        if not ghosts and not self._ghosts:
            return
        self._ghosts, self.describe_ghost = ghosts, describe
        self.jobs.submit(edit_job("Marking", lambda lay, p, t: lay.scene))

    def set_badges(self, badges: dict[NodeKey, str]) -> None:
        """Mark nodes with a small red ("error") or orange ("warning") badge."""
        self._badges = dict(badges)
        self.apply()

    def set_overlay(self, values: dict[NodeKey, float] | None, title: str,
                    flagged: NodeKey | None = None, scheme: Scheme = LEVEL) -> None:
        """Colour every op box by its value (with a legend); ``flagged`` gets a strong marker."""
        if values is None:
            self.clear_overlay()
            return
        self._overlay = OverlayRequest(dict(values), title, flagged, scheme)
        self.apply()
        shown = self.shown
        if flagged is not None and flagged[0] == shown.scope and shown.drawable is not None:
            box = shown.box_of_node(flagged[1])
            if box >= 0:
                self.view.ensure_visible(shown.box_rect(box), min_scale=self.view.scale)

    def clear_overlay(self) -> None:
        self._overlay = None
        self.apply()

    def apply(self) -> None:
        """Draw the badges and the overlay asked for on the shown scene."""
        opts, shown = self.view.options, self.shown
        d = shown.drawable
        opts.badges, opts.overlay, opts.flagged_box = {}, None, -1
        self.shown_overlay = None
        if self._overlay is None:
            self.legend_strip.set_legend(None)
        if d is not None:
            opts.badges = worst_badges(self._badges, shown.scope, shown.box_of_node, d)
            if self._overlay is not None:
                values, title, flagged, scheme = self._overlay
                drawn = overlay_colours(d, values, shown.scope, shown.box_of_node, title, scheme, shown.body_rows())
                opts.overlay, self.shown_overlay = drawn.rgba, drawn
                self.legend_strip.set_legend(drawn.legend)   # kept while a scene is being made: no jump
                if flagged is not None and flagged[0] == shown.scope:
                    opts.flagged_box = shown.box_of_node(flagged[1])
        self.view.update()
