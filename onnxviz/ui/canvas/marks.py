"""Badges and value overlays mapped from (scope, node) keys onto the boxes of the shown scene."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from pyqtgraph import colormap

from onnxviz.model.scene import BoxKind
from onnxviz.ui.canvas.drawable import Drawable

SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}
COLOUR_MAP = "viridis"
LEGEND_STEPS = 16
LOG_SPAN = 1e3  # non-negative values spanning more decades than this are coloured on a log scale
LOG_FLOOR = 1e-12  # on a log scale, values below the largest times this (zeros too) take the lowest colour


@dataclass(frozen=True)
class Legend:
    """What the overlay's colour bar says: from ``lo`` to ``hi``, linear or logarithmic."""

    title: str
    lo: float
    hi: float
    colours: np.ndarray  # (k, 4) RGBA bytes from lo to hi
    log: bool = False


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


def worst_badges(badges: dict[tuple[str, int], str], scope: str, box_of: Callable[[int], int]) -> dict[int, str]:
    """Box -> the most severe badge among the nodes it shows."""
    out: dict[int, str] = {}
    for (s, node), severity in badges.items():
        if s != scope:
            continue
        box = box_of(node)
        if box >= 0 and SEVERITY_RANK.get(severity, 0) >= SEVERITY_RANK.get(out.get(box, ""), -1):
            out[box] = severity
    return out


def overlay_colours(d: Drawable, values: dict[tuple[str, int], float], scope: str,
                    box_of: Callable[[int], int], title: str = "") -> tuple[np.ndarray, Legend]:
    """(n_boxes, 4) RGBA per box (alpha 0 where no value) and the legend.

    A collapsed group box takes the largest value among the nodes it hides. Vectorised over the
    scene's node -> box table (a run of a 100k-node model gives 100k values); ``box_of`` serves
    scenes without one.
    """
    pairs = [(node, value) for (s, node), value in values.items() if s == scope]
    nodes = np.fromiter((n for n, _ in pairs), np.int64, len(pairs))
    vals = np.fromiter((v for _, v in pairs), np.float64, len(pairs))
    finite = np.isfinite(vals)
    cmap = colormap.get(COLOUR_MAP)
    legend_colours = cmap.map(np.linspace(0.0, 1.0, LEGEND_STEPS), mode="byte")
    rgba = np.zeros((d.scene.n_boxes, 4), np.uint8)
    if not finite.any():
        return rgba, Legend(title, 0.0, 0.0, legend_colours)
    scale = _Scale.fit(vals[finite])
    boxes = _boxes_showing(d, nodes, box_of)
    shown = finite & (boxes >= 0)
    per_box = np.full(d.scene.n_boxes, -np.inf)
    np.maximum.at(per_box, boxes[shown], vals[shown])
    coloured = np.flatnonzero(np.isfinite(per_box))
    rgba[coloured] = cmap.map(scale.positions(per_box[coloured]), mode="byte")
    return rgba, Legend(title, scale.lo, scale.hi, legend_colours, scale.log)


@dataclass(frozen=True)
class _Scale:
    """Where a value sits on the colour bar. Activations often span many decades (squeezenet's
    max |x|: 0.001 to 9e9), which a linear bar shows as one colour; then the bar is logarithmic."""

    lo: float
    hi: float
    log: bool

    @staticmethod
    def fit(finite: np.ndarray) -> _Scale:
        lo, hi = float(finite.min()), float(finite.max())
        positive = finite[finite > 0]
        if lo >= 0 and positive.size and hi / float(positive.min()) > LOG_SPAN:
            return _Scale(max(float(positive.min()), hi * LOG_FLOOR), hi, True)
        return _Scale(lo, hi, False)

    def positions(self, v: np.ndarray) -> np.ndarray:
        if self.hi <= self.lo:
            return np.full(len(v), 0.5)
        if self.log:
            low = math.log10(self.lo)
            return (np.log10(np.maximum(v, self.lo)) - low) / (math.log10(self.hi) - low)
        return (v - self.lo) / (self.hi - self.lo)


def _boxes_showing(d: Drawable, nodes: np.ndarray, box_of: Callable[[int], int]) -> np.ndarray:
    """The box showing each node: its own OP box, or the collapsed group box hiding it; else -1
    (a Constant listed inside its consumer's box has no box of its own)."""
    table = d.scene.node_box
    if not len(table):
        return np.fromiter((box_of(int(n)) for n in nodes), np.int64, len(nodes))
    inside = (nodes >= 0) & (nodes < len(table))
    boxes = np.where(inside, table[np.where(inside, nodes, 0)], -1)
    valid = boxes >= 0
    safe = np.where(valid, boxes, 0)
    own = (d.scene.box_kind[safe] == BoxKind.GROUP) | (d.box_node[safe] == nodes)
    return np.where(valid & own, boxes, -1)
