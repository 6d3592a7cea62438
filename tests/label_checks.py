"""Counters of what an edge label runs into, for the layout tests: labels over labels, labels over boxes,
and edges through a label's text (tests/corpus/test_label_overlaps.py checks the counters themselves)."""

from __future__ import annotations

import numpy as np

from onnxviz.model.layout.labels import frame_marks, label_rect, label_spots
from onnxviz.model.layout.scene import Scene


def label_rects(scene: Scene) -> np.ndarray:
    spots = label_spots(scene)
    rows = [label_rect(float(x), float(y), bool(left), scene.edge_label[int(e)])
            for e, x, y, left in zip(spots.edge, spots.x, spots.y, spots.left, strict=True)]
    return np.array(rows, float).reshape(-1, 4)


def overlaps(a: np.ndarray, b: np.ndarray, same: bool) -> int:
    """Pairs of rectangles (x0, y0, x1, y1) of ``a`` and ``b`` that intersect (a sweep in x)."""
    count = 0
    order = np.argsort(b[:, 0])
    bx0 = b[order, 0]
    for i, (x0, y0, x1, y1) in enumerate(a.tolist()):
        end = int(np.searchsorted(bx0, x1, side="left"))
        cand = order[:end]
        cand = cand[(b[cand, 2] > x0) & (b[cand, 1] < y1) & (b[cand, 3] > y0)]
        count += int(np.count_nonzero(cand > i)) if same else len(cand)
    return count


def edge_crossings(scene: Scene, labels: np.ndarray, sources: list[int]) -> int:
    """Labels whose text (their rectangle less 2 units above and below) an edge of another box than the
    label's (``sources``: each label's box) passes through: each edge's polyline sampled every half unit."""
    if not len(labels) or len(scene.edge_points) < 2:
        return 0
    band = labels + np.array([0.0, 2.0, 0.0, -2.0])
    pts, off = scene.edge_points.astype(float), scene.edge_offsets.tolist()
    samples, owners = [], []
    for e in range(scene.n_edges):
        line = pts[off[e]:off[e + 1]]
        for a, b in zip(line[:-1], line[1:], strict=True):
            n = int(np.hypot(*(b - a)) * 2) + 2
            samples.append(a + np.linspace(0.0, 1.0, n)[:, None] * (b - a))
            owners.append(np.full(n, int(scene.edge_src[e])))
    if not samples:
        return 0
    p, owner = np.concatenate(samples), np.concatenate(owners)
    order = np.argsort(p[:, 0])
    px = p[order, 0]
    crossed = 0
    for (x0, y0, x1, y1), source in zip(band.tolist(), sources, strict=True):
        near = order[np.searchsorted(px, x0, "right"):np.searchsorted(px, x1, "left")]
        hit = (p[near, 1] > y0) & (p[near, 1] < y1) & (owner[near] != source)
        crossed += bool(np.any(hit))
    return crossed


def assert_no_label_overlaps(scene: Scene) -> None:
    labels = label_rects(scene)
    boxes = np.stack([scene.box_x, scene.box_y, scene.box_x + scene.box_w, scene.box_y + scene.box_h], 1)
    assert overlaps(labels, labels, same=True) == 0
    assert overlaps(labels, boxes.astype(float), same=False) == 0
    assert overlaps(labels, np.array(frame_marks(scene), float).reshape(-1, 4), same=False) == 0
    assert edge_crossings(scene, labels, [int(scene.edge_src[e]) for e in label_spots(scene).edge]) == 0
