"""Where the shape labels of edges go: beside their edge just below the source box, and the
labels of one box's outputs stacked a line apart, so they never overlap.

All edges of a box leave from about the same point (its bottom centre): labels placed at the
start of each edge were drawn on top of each other (a Loop's "1" and "5x1", a Split's parts).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from onnxviz.model.layout.scene import Scene

LABEL_LINE = 13.0   # scene units between stacked labels: the 9 pt label text and a little air
GAP = 4.0           # between the edge and its label
RIGHTWARD = 0.05    # dx/dy beyond which an edge heads right and its label goes on its left
CHAR_WIDTH = 7.5    # a 9 pt character at most, to tell whether two labels would collide


@dataclass(frozen=True)
class LabelSpots:
    """One row per label: ``edge``'s text starts at (``x``, ``y``), or ends at ``x`` when ``left``
    (the edge heads right, so its left side is the free one)."""

    edge: np.ndarray   # (k,) int64
    x: np.ndarray      # (k,) float64
    y: np.ndarray      # (k,) float64, the text's top
    left: np.ndarray   # (k,) bool


def label_spots(scene: Scene) -> LabelSpots:
    """A spot for the label of each value leaving a box (one per value, even with several edges)."""
    by_source: dict[int, list[int]] = {}
    seen: set[tuple[int, str]] = set()
    for e in range(scene.n_edges):
        key = (int(scene.edge_src[e]), scene.edge_value[e])
        if not scene.edge_label[e] or key in seen or len(scene.edge_polyline(e)) < 2:
            continue
        seen.add(key)
        by_source.setdefault(key[0], []).append(e)
    rows: list[tuple[int, float, float, bool]] = []
    for edges in by_source.values():
        edges.sort(key=lambda e: abs(_slope(scene.edge_polyline(e), 0.0)))  # the straightest edge on top
        rows += _stack(scene, edges)
    if not rows:
        return LabelSpots(np.zeros(0, np.int64), np.zeros(0), np.zeros(0), np.zeros(0, bool))
    edge, x, y, left = zip(*rows, strict=True)
    return LabelSpots(np.array(edge, np.int64), np.array(x, np.float64), np.array(y, np.float64),
                      np.array(left, bool))


def _stack(scene: Scene, edges: list[int]) -> list[tuple[int, float, float, bool]]:
    """The labels of one box's outputs a line apart down their edges; those that do not fit above
    the next layer go just above their edge's end (the targets are apart), or wherever they are free."""
    placed: list[tuple[int, float, float, bool]] = []
    for k, e in enumerate(edges):
        pts = scene.edge_polyline(e)
        room = float(pts[-1][1] - pts[0][1]) - LABEL_LINE
        if k * LABEL_LINE <= room:
            placed.append(_spot(e, pts, k * LABEL_LINE))
            continue
        tries = [_spot(e, pts, max(room, 0.0))] + [_spot(e, pts, j * LABEL_LINE) for j in range(k)]
        free = [t for t in tries if not any(_collide(scene, t, q) for q in placed)]
        placed.append(free[0] if free else _spot(e, pts, k * LABEL_LINE))
    return placed


def _spot(e: int, pts: np.ndarray, depth: float) -> tuple[int, float, float, bool]:
    x, y = _point_at_depth(pts, depth)
    left = _slope(pts, depth) > RIGHTWARD
    return e, (x - GAP if left else x + GAP), y + 1.0, left


def _extent(scene: Scene, spot: tuple[int, float, float, bool]) -> tuple[float, float, float, float]:
    e, x, y, left = spot
    width = CHAR_WIDTH * len(scene.edge_label[e])
    x0 = x - width if left else x
    return x0, y, x0 + width, y + LABEL_LINE


def _collide(scene: Scene, a: tuple[int, float, float, bool], b: tuple[int, float, float, bool]) -> bool:
    ax0, ay0, ax1, ay1 = _extent(scene, a)
    bx0, by0, bx1, by1 = _extent(scene, b)
    return ax0 < bx1 and bx0 < ax1 and ay0 < by1 and by0 < ay1


def _segment_at(pts: np.ndarray, depth: float) -> int:
    """The segment of the polyline that reaches ``depth`` below its first point (the last one if none)."""
    target = float(pts[0][1]) + depth
    for i in range(len(pts) - 1):
        if float(pts[i + 1][1]) >= target:
            return i
    return len(pts) - 2


def _slope(pts: np.ndarray, depth: float) -> float:
    """dx/dy of the polyline at ``depth`` (inf for a level segment)."""
    i = _segment_at(pts, depth)
    dx, dy = float(pts[i + 1][0] - pts[i][0]), float(pts[i + 1][1] - pts[i][1])
    if dy <= 0:
        return 0.0 if dx == 0 else float(np.copysign(np.inf, dx))
    return dx / dy


def _point_at_depth(pts: np.ndarray, depth: float) -> tuple[float, float]:
    """The point of the polyline ``depth`` below its first point (its end when it is shorter)."""
    i = _segment_at(pts, depth)
    x0, y0, x1, y1 = float(pts[i][0]), float(pts[i][1]), float(pts[i + 1][0]), float(pts[i + 1][1])
    target = float(pts[0][1]) + depth
    if target >= y1:
        return x1, y1
    if target <= y0:
        return x0, y0
    t = (target - y0) / (y1 - y0)
    return x0 + t * (x1 - x0), target
