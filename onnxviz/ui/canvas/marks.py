"""Badges and value overlays mapped from (scope, node) keys onto the boxes of the shown scene."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from pyqtgraph import colormap

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

    A collapsed group box takes the largest value among the nodes it hides.
    """
    per_box: dict[int, float] = {}
    for (s, node), value in values.items():
        if s != scope or not np.isfinite(value):
            continue
        box = box_of(node)
        if box >= 0:
            per_box[box] = max(value, per_box.get(box, -np.inf))
    cmap = colormap.get(COLOUR_MAP)
    legend_colours = cmap.map(np.linspace(0.0, 1.0, LEGEND_STEPS), mode="byte")
    rgba = np.zeros((d.scene.n_boxes, 4), np.uint8)
    finite = [v for (s, _), v in values.items() if s == scope and np.isfinite(v)]
    if not per_box:
        lo, hi = (min(finite), max(finite)) if finite else (0.0, 0.0)
        return rgba, (float(lo), float(hi), legend_colours)
    lo, hi = float(min(finite)), float(max(finite))
    boxes = np.fromiter(per_box.keys(), np.int64)
    vals = np.fromiter(per_box.values(), np.float64)
    t = (vals - lo) / (hi - lo) if hi > lo else np.full(len(vals), 0.5)
    rgba[boxes] = cmap.map(t, mode="byte")
    return rgba, (lo, hi, legend_colours)
