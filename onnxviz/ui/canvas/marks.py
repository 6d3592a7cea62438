"""Badges and value overlays mapped from (scope, node) keys onto the boxes of the shown scene."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from html import escape
from typing import TYPE_CHECKING, Any

import numpy as np

from onnxviz.model.layout.drawable import Drawable
from onnxviz.model.layout.scene import BoxKind
from onnxviz.model.text import duration_text
from onnxviz.ui.canvas import style

if TYPE_CHECKING:
    from pyqtgraph import ColorMap

RGBA = tuple[int, int, int, int]
SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}
COLOUR_MAP = "viridis"
DIVERGING_MAP = "CET-D1"  # blue - near white at 0 - red
LEGEND_STEPS = 16
LOG_SPAN = 1e3  # non-negative values spanning more decades than this are coloured on a log scale
LOG_FLOOR = 1e-12  # on a log scale, values below the largest times this (zeros too) take the lowest colour
MASK_LEVEL = 1e30  # |value| at least this: an attention mask's fill (-3.4e38), drawn apart from the scale
ROBUST_MIN = 20  # boxes needed before the scale may leave out the top and bottom percent
OUTLIER_SPAN = 10.0  # the scale is the 1st to 99th percentile when the full range is this many times wider
BEYOND_RGBA: RGBA = (214, 39, 40, 255)  # mask-like values: a colour of their own, named on the key


@dataclass(frozen=True)
class Scheme:
    """How an overlay's values are read: ``kind`` "level" (the default), "signed" (a diverging map
    centred at zero when the values straddle it), "flag" (0 no, 1 yes; ``states`` names both),
    "category" (0, 1, ... index ``states`` and ``colours``; a group box takes its highest) or
    "duration" (microseconds: a box shows the sum of the nodes it stands for). ``blank`` names the
    boxes without a value on the key."""

    kind: str = "level"
    states: tuple[str, ...] = ("no", "yes")
    colours: tuple[RGBA, ...] = ()
    blank: str = "no value"

    def text(self, v: float) -> str:
        if self.kind == "duration":
            return duration_text(v)
        if self.kind == "flag":
            return self.states[v > 0]
        if self.kind == "category":
            return self.states[int(v)] if 0 <= v < len(self.states) else f"{v:g}"
        return f"{v:.4g}"


LEVEL = Scheme()


@dataclass(frozen=True)
class Legend:
    """What the overlay's key says: a colour bar from ``lo`` to ``hi`` (linear or logarithmic, with
    ``zero`` the fraction of the bar where 0 sits on a diverging one), or, when ``swatches`` is set,
    separate colours with their labels (a flag's states, or the one value every box has)."""

    title: str
    lo: float
    hi: float
    colours: np.ndarray  # (k, 4) RGBA bytes from lo to hi
    log: bool = False
    scheme: Scheme = LEVEL
    zero: float | None = None
    swatches: tuple[tuple[str, RGBA], ...] = ()
    basis: str = ""  # how the scale was chosen, said on the key ("1st-99th percentile")
    beyond: int = 0  # boxes with mask-like values, drawn in BEYOND_RGBA


@dataclass(frozen=True)
class Overlay:
    """An overlay worked out for the shown scene: its colours, key and each box's value."""

    rgba: np.ndarray    # (n_boxes, 4) RGBA bytes, alpha 0 where no value
    legend: Legend
    values: np.ndarray  # (n_boxes,) the value a box shows; NaN for none
    counts: np.ndarray  # (n_boxes,) how many nodes' values it combines


def group_box_of(d: Drawable, layout: Any, node: int) -> int:
    """The collapsed group box hiding ``node`` (its innermost collapsed ancestor group), or -1."""
    try:
        path = layout.group_of(node)
    except (IndexError, KeyError, ValueError):
        return -1
    while path:
        box = d.group_box.get(path, -1)
        if box >= 0:
            return box
        path = path.rsplit("/", 1)[0] if "/" in path else ""
    return -1


def worst_badges(badges: dict[tuple[str, int], str], scope: str, box_of: Callable[[int], int],
                 d: Drawable | None = None) -> dict[int, str]:
    """Box -> the most severe badge among the nodes it shows (of equal ones, the last given). With the
    drawable ``d``, its node -> box table finds the boxes at once (100k badges: 40 -> 5 ms); ``box_of``
    those it has none for."""
    keyed = [(node, severity) for (s, node), severity in badges.items() if s == scope]
    if not keyed:
        return {}
    nodes = np.fromiter((n for n, _ in keyed), np.int64, len(keyed))
    if d is not None:
        boxes = _boxes_showing(d, nodes, box_of)
        missing = np.flatnonzero(boxes < 0)
        boxes[missing] = np.fromiter((box_of(int(n)) for n in nodes[missing]), np.int64, len(missing))
    else:
        boxes = np.fromiter((box_of(int(n)) for n in nodes), np.int64, len(nodes))
    ranks = np.fromiter((SEVERITY_RANK.get(sev, 0) for _, sev in keyed), np.int64, len(keyed))
    order = np.lexsort((np.arange(len(keyed)), ranks, boxes))   # by box, then rank, then as given
    last = order[np.append(boxes[order][1:] != boxes[order][:-1], True)]   # each box's worst, last given
    return {int(boxes[i]): keyed[i][1] for i in last if boxes[i] >= 0}


def overlay_colours(d: Drawable, values: dict[tuple[str, int], float], scope: str,
                    box_of: Callable[[int], int], title: str = "", scheme: Scheme = LEVEL,
                    bodies: Mapping[str, Callable[[int], int]] | None = None) -> Overlay:
    """Each box's colour by the value it shows, and the key; the scale spans the boxes' values only
    (a node drawn by no box of its own, e.g. a weight folded into its consumer, does not stretch it).

    A collapsed group box takes the largest value among the nodes it hides; durations add up
    instead, and a folded node's time is added to the box listing it. Vectorised over the scene's
    node -> box table (a run of a 100k-node model gives 100k values); ``box_of`` serves scenes
    without one. ``bodies`` maps the scope of each body drawn inside its node to the box row showing
    a node of it: a body's node takes its own graph's value, never that of the shown graph's node
    at the same position.
    """
    pairs = [(node, value) for (s, node), value in values.items() if s == scope]
    nodes = np.fromiter((n for n, _ in pairs), np.int64, len(pairs))
    vals = np.fromiter((v for _, v in pairs), np.float64, len(pairs))
    boxes = _boxes_showing(d, nodes, box_of, folded=scheme.kind == "duration")
    if bodies:
        inside = [(row, value) for (s, node), value in values.items() if s in bodies and (row := bodies[s](node)) >= 0]
        boxes = np.concatenate([boxes, np.fromiter((r for r, _ in inside), np.int64, len(inside))])
        vals = np.concatenate([vals, np.fromiter((v for _, v in inside), np.float64, len(inside))])
    shown = np.isfinite(vals) & (boxes >= 0)
    per_box, counts = _per_box(d.scene.n_boxes, boxes[shown], vals[shown], scheme.kind == "duration")
    coloured = np.flatnonzero(counts)
    rgba = np.zeros((d.scene.n_boxes, 4), np.uint8)
    if scheme.kind == "flag":
        legend = _flag_legend(title, scheme)
        rgba[coloured] = np.where(per_box[coloured, None] > 0, legend.swatches[1][1], legend.swatches[0][1])
        return Overlay(rgba, legend, per_box, counts)
    if scheme.kind == "category":
        legend = _category_legend(title, scheme)
        rgba[coloured] = legend.colours[np.clip(per_box[coloured].astype(np.int64), 0, len(legend.colours) - 1)]
        return Overlay(rgba, legend, per_box, counts)
    drawn = per_box[coloured]
    if len(drawn) and drawn.min() == drawn.max():
        legend = _single_legend(title, scheme, float(drawn[0]))
        rgba[coloured] = legend.swatches[0][1]
        return Overlay(rgba, legend, per_box, counts)
    masks = (np.abs(drawn) >= MASK_LEVEL) & (scheme.kind != "duration")
    on_scale = drawn[~masks]
    scale = _Scale.fit(on_scale if len(on_scale) else np.zeros(1), scheme.kind)
    cmap = _colour_map(DIVERGING_MAP if scale.zero is not None else COLOUR_MAP)
    rgba[coloured] = cmap.map(np.clip(scale.positions(drawn), 0.0, 1.0), mode="byte")
    rgba[coloured[masks]] = BEYOND_RGBA
    steps = scale.positions(scale.ticks(LEGEND_STEPS))
    legend = Legend(title, scale.lo, scale.hi, cmap.map(steps, mode="byte"), scale.log, scheme, scale.zero,
                    basis=scale.basis, beyond=int(masks.sum()))
    return Overlay(rgba, legend, per_box, counts)


def _per_box(n_boxes: int, boxes: np.ndarray, vals: np.ndarray, add: bool) -> tuple[np.ndarray, np.ndarray]:
    """Each box's value (the sum or the largest of its nodes'; NaN for none) and how many it combines."""
    counts = np.bincount(boxes, minlength=n_boxes)
    if add:
        per_box = np.bincount(boxes, weights=vals, minlength=n_boxes).astype(np.float64)
    else:
        per_box = np.full(n_boxes, -np.inf)
        np.maximum.at(per_box, boxes, vals)
    per_box[counts == 0] = np.nan
    return per_box, counts


def _flag_legend(title: str, scheme: Scheme) -> Legend:
    no, yes = (_rgba(c.red(), c.green(), c.blue(), c.alpha()) for c in (style.FLAG_NO, style.FLAG_YES))
    swatches = ((scheme.states[0], no), (scheme.states[1], yes))
    return Legend(title, 0.0, 1.0, np.array([no, yes], np.uint8), scheme=scheme, swatches=swatches)


def _category_legend(title: str, scheme: Scheme) -> Legend:
    swatches = tuple(zip(scheme.states, scheme.colours, strict=True))
    return Legend(title, 0.0, float(len(swatches) - 1), np.array(scheme.colours, np.uint8).reshape(-1, 4),
                  scheme=scheme, swatches=swatches)


def _single_legend(title: str, scheme: Scheme, value: float) -> Legend:
    """Every box has the same value: a gradient from x to x would say nothing."""
    colour = _rgba(*_colour_map(COLOUR_MAP).map(np.array([0.5]), mode="byte")[0].tolist())
    return Legend(title, value, value, np.array([colour], np.uint8), scheme=scheme,
                  swatches=((f"every box: {scheme.text(value)}", colour),))


def _colour_map(name: str) -> ColorMap:
    """pyqtgraph's colour map ``name``; pyqtgraph is imported here, when an overlay is first coloured,
    not when the window starts."""
    from pyqtgraph import colormap

    return colormap.get(name)


def _rgba(r: int, g: int, b: int, a: int) -> RGBA:
    return (int(r), int(g), int(b), int(a))


@dataclass(frozen=True)
class _Scale:
    """Where a value sits on the colour bar. Activations often span many decades (squeezenet's
    max |x|: 0.001 to 9e9), which a linear bar shows as one colour; then the bar is logarithmic.
    A diverging bar (signed values either side of 0) puts 0 at the map's neutral middle, with the
    larger side reaching its end."""

    lo: float
    hi: float
    log: bool
    zero: float | None = None  # fraction of the bar where 0 is, on a diverging bar
    basis: str = ""  # how lo and hi were chosen, when not simply the smallest and largest value

    @staticmethod
    def fit(finite: np.ndarray, kind: str = "level") -> _Scale:
        """The scale of ``finite`` values. On a linear bar, when a few outliers make the full range ten
        times wider than the 1st to 99th percentile (and there are enough boxes), the percentiles span it
        instead and the outliers take the end colours (a log bar already shows many decades)."""
        full = _Scale._full(finite, float(finite.min()), float(finite.max()), kind)
        if full.log or kind == "duration" or len(finite) < ROBUST_MIN:
            return full
        p1, p99 = (float(v) for v in np.percentile(finite, [1, 99]))
        if not p99 > p1 or full.hi - full.lo <= OUTLIER_SPAN * (p99 - p1):
            return full
        inner = finite[(finite >= p1) & (finite <= p99)]
        return replace(_Scale._full(inner, p1, p99, kind), basis="1st-99th percentile")

    @staticmethod
    def _full(finite: np.ndarray, lo: float, hi: float, kind: str) -> _Scale:
        if kind == "signed" and lo < 0 < hi:
            return _Scale(lo, hi, False, -lo / (hi - lo))
        positive = finite[finite > 0]
        # times stay linear: the few nodes that take most of the run are what is looked for
        if kind != "duration" and lo >= 0 and positive.size and hi / float(positive.min()) > LOG_SPAN:
            return _Scale(max(float(positive.min()), hi * LOG_FLOOR), hi, True)
        return _Scale(lo, hi, False)

    def ticks(self, k: int) -> np.ndarray:
        """``k`` values evenly spread along the bar."""
        if self.log:
            return np.logspace(math.log10(self.lo), math.log10(self.hi), k)
        return np.linspace(self.lo, self.hi, k)

    def positions(self, v: np.ndarray) -> np.ndarray:
        """Places on the colour map, 0 to 1."""
        if self.hi <= self.lo:
            return np.full(len(v), 0.5)
        if self.zero is not None:
            return 0.5 + 0.5 * v / max(-self.lo, self.hi)
        if self.log:
            low = math.log10(self.lo)
            return (np.log10(np.maximum(v, self.lo)) - low) / (math.log10(self.hi) - low)
        return (v - self.lo) / (self.hi - self.lo)


def _boxes_showing(d: Drawable, nodes: np.ndarray, box_of: Callable[[int], int], folded: bool = False) -> np.ndarray:
    """The box showing each node: its own OP box, or the collapsed group box hiding it; else -1
    (a Constant listed inside its consumer's box has no box of its own), or with ``folded`` that
    consumer's box."""
    table = d.scene.node_box
    if not len(table):
        return np.fromiter((box_of(int(n)) for n in nodes), np.int64, len(nodes))
    inside = (nodes >= 0) & (nodes < len(table))
    boxes = np.where(inside, table[np.where(inside, nodes, 0)], -1)
    valid = boxes >= 0
    safe = np.where(valid, boxes, 0)
    own = (d.scene.box_kind[safe] == BoxKind.GROUP) | (d.box_node[safe] == nodes) | folded
    return np.where(valid & own, boxes, -1)


def overlay_note(overlay: Overlay, box: int, group: bool = False) -> str:
    """The tooltip line telling the overlay's value of ``box``."""
    legend = overlay.legend
    if not 0 <= box < len(overlay.values) or not overlay.counts[box]:
        return f"{escape(legend.title)}: no value"
    value = legend.scheme.text(float(overlay.values[box]))
    n = int(overlay.counts[box])
    if group:
        value += f" ({'the sum' if legend.scheme.kind == 'duration' else 'the largest'} of {n} nodes inside)"
    elif n > 1:  # only durations credit a box with the nodes folded into it
        value += f", including {n - 1} node{'s' if n > 2 else ''} folded into this box"
    return f"{escape(legend.title)}: <b>{escape(value)}</b>"
