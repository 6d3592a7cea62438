"""Badges and value overlays mapped from (scope, node) keys onto the boxes of the shown scene."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from pyqtgraph import colormap

from onnxviz.model.scene import BoxKind
from onnxviz.ui.canvas.drawable import Drawable

SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}
COLOUR_MAP = "viridis"
LEGEND_STEPS = 16


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
                    box_of: Callable[[int], int]) -> tuple[np.ndarray, tuple[float, float, np.ndarray]]:
    """(n_boxes, 4) RGBA per box (alpha 0 where no value) and the legend (min, max, colours).

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
        return rgba, (0.0, 0.0, legend_colours)
    lo, hi = float(vals[finite].min()), float(vals[finite].max())
    boxes = _boxes_showing(d, nodes, box_of)
    shown = finite & (boxes >= 0)
    per_box = np.full(d.scene.n_boxes, -np.inf)
    np.maximum.at(per_box, boxes[shown], vals[shown])
    coloured = np.flatnonzero(np.isfinite(per_box))
    t = (per_box[coloured] - lo) / (hi - lo) if hi > lo else np.full(len(coloured), 0.5)
    rgba[coloured] = cmap.map(t, mode="byte")
    return rgba, (lo, hi, legend_colours)


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
