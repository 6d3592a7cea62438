"""Per-scene arrays the painter and the hit-tester need, derived once from a Scene.

Pure numpy (no Qt), so it can be built off the GUI thread right after the layout.
"""

from __future__ import annotations

from dataclasses import InitVar, dataclass, field

import numpy as np

from onnxviz.model.layout.labels import LabelSpots, label_rect, label_spots
from onnxviz.model.layout.scene import BoxKind, Scene
from onnxviz.model.layout.util import distinct


@dataclass
class Drawable:
    """A :class:`Scene` plus derived arrays: box extents, edge segments, lookup tables."""

    scene: Scene
    x0: np.ndarray = field(init=False)
    y0: np.ndarray = field(init=False)
    x1: np.ndarray = field(init=False)
    y1: np.ndarray = field(init=False)
    seg: np.ndarray = field(init=False)        # (m, 4) x0, y0, x1, y1 of every edge segment
    seg_edge: np.ndarray = field(init=False)   # (m,) edge of each segment
    _seg_lo: np.ndarray = field(init=False, repr=False)
    _seg_hi: np.ndarray = field(init=False, repr=False)
    node_box: dict[int, int] = field(init=False)    # node position -> OP box row
    group_box: dict[str, int] = field(init=False)   # group path -> collapsed GROUP box row
    value_box: dict[str, int] = field(init=False)   # terminal value name -> INPUT/OUTPUT box row
    ghost_box: dict[int, int] = field(init=False)   # a ghost's key -> its GHOST box row (a diff's added nodes)
    box_node: np.ndarray = field(init=False)        # OP box row -> its node position; -1 for other boxes
    bounds: tuple[float, float, float, float] = field(init=False)
    # where the edge labels go: placed now (the window builds its drawing off the GUI thread), or on first use (a
    # render too far out to draw them never places them: 0.6 s of CPU at 61k nodes)
    labels_now: InitVar[bool] = True
    _spots: tuple[LabelSpots, np.ndarray] | None = field(init=False, default=None, repr=False)

    def __post_init__(self, labels_now: bool) -> None:
        s = self.scene
        self.x0 = s.box_x.astype(np.float32, copy=False)
        self.y0 = s.box_y.astype(np.float32, copy=False)
        self.x1 = self.x0 + s.box_w
        self.y1 = self.y0 + s.box_h
        self.seg, self.seg_edge = _segments(s)
        # per-segment bounding boxes as contiguous (2, m) arrays: rows x, y
        self._seg_lo = np.ascontiguousarray(np.minimum(self.seg[:, 0:2], self.seg[:, 2:4]).T)
        self._seg_hi = np.ascontiguousarray(np.maximum(self.seg[:, 0:2], self.seg[:, 2:4]).T)
        self.node_box, self.group_box, self.value_box, self.ghost_box = {}, {}, {}, {}
        self.box_node = np.full(s.n_boxes, -1, np.int64)
        for i, ref in enumerate(s.box_ref):
            if ref.kind == BoxKind.OP:
                self.node_box[ref.node] = i
                self.box_node[i] = ref.node
            elif ref.kind == BoxKind.GROUP:
                self.group_box[ref.group] = i
            elif ref.kind == BoxKind.GHOST:
                self.ghost_box[ref.node] = i
            else:
                self.value_box.setdefault(ref.value, i)
        self.bounds = s.bounds()
        if labels_now:
            self._place_labels()

    @property
    def labels(self) -> LabelSpots:
        """Where each edge label is drawn."""
        return self._place_labels()[0]

    @property
    def label_row(self) -> np.ndarray:
        """Edge -> its row in :attr:`labels`; -1 for none."""
        return self._place_labels()[1]

    def _place_labels(self) -> tuple[LabelSpots, np.ndarray]:
        if self._spots is None:
            spots = label_spots(self.scene)
            row = np.full(self.scene.n_edges, -1, np.int64)
            row[spots.edge] = np.arange(len(spots.edge))
            self._spots = spots, row
        return self._spots

    def retext(self, scene: Scene) -> None:
        """Draw ``scene`` from now on: the same boxes and edges in the same places, other texts
        (a renamed node). Everything derived here stays valid."""
        assert scene.box_ref is self.scene.box_ref and scene.edge_points is self.scene.edge_points
        placed = self._spots is not None
        if scene.edge_label != self.scene.edge_label:
            self._spots = None
        self.scene = scene
        if placed:  # placed again now, as they were
            self._place_labels()

    def sights(self, until: float = np.inf) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """x0, y0, x1, y1 of what a view should show whole or not at all, of those starting before ``until``
        along the flow (y top to bottom, x left to right): the boxes, then the edge labels; and which are
        input boxes."""
        along = self.x0 if self.scene.direction == "LR" else self.y0
        boxes = np.flatnonzero(along <= until)
        spots = self.labels
        rows = np.flatnonzero((spots.x if self.scene.direction == "LR" else spots.y) <= until).tolist()
        rects = np.array([label_rect(float(spots.x[r]), float(spots.y[r]), bool(spots.left[r]),
                                     self.scene.edge_label[int(spots.edge[r])]) for r in rows],
                         np.float64).reshape(-1, 4)
        inputs = np.concatenate([self.scene.box_kind[boxes] == 1, np.zeros(len(rects), bool)])
        return (np.concatenate([self.x0[boxes], rects[:, 0]]), np.concatenate([self.y0[boxes], rects[:, 1]]),
                np.concatenate([self.x1[boxes], rects[:, 2]]), np.concatenate([self.y1[boxes], rects[:, 3]]), inputs)

    def ghost_edges(self, edges: np.ndarray) -> np.ndarray:
        """Which of ``edges`` lead to or from a ghost box (a mask)."""
        if not self.ghost_box:
            return np.zeros(len(edges), bool)
        kind = self.scene.box_kind
        return (kind[self.scene.edge_src[edges]] == BoxKind.GHOST) | (kind[self.scene.edge_dst[edges]] == BoxKind.GHOST)

    def _covers_all(self, x0: float, y0: float, x1: float, y1: float) -> bool:
        bx, by, bw, bh = self.bounds
        return x0 <= bx and y0 <= by and x1 >= bx + bw and y1 >= by + bh

    def visible_boxes(self, x0: float, y0: float, x1: float, y1: float) -> np.ndarray:
        """Rows of the boxes intersecting the rectangle."""
        if self._covers_all(x0, y0, x1, y1):
            return np.arange(self.scene.n_boxes)
        mask = (self.y1 >= y0) & (self.y0 <= y1) & (self.x1 >= x0) & (self.x0 <= x1)
        return np.flatnonzero(mask)

    def visible_segments(self, x0: float, y0: float, x1: float, y1: float) -> np.ndarray:
        if self._covers_all(x0, y0, x1, y1):
            return np.arange(len(self.seg))
        lo, hi = self._seg_lo, self._seg_hi
        mask = (hi[1] >= y0) & (lo[1] <= y1) & (hi[0] >= x0) & (lo[0] <= x1)
        return np.flatnonzero(mask)

    def box_at(self, x: float, y: float) -> int:
        """Row of the topmost box containing the point, or -1."""
        hits = np.flatnonzero((self.x0 <= x) & (x <= self.x1) & (self.y0 <= y) & (y <= self.y1))
        return int(hits[-1]) if len(hits) else -1

    def edge_at(self, x: float, y: float, tolerance: float) -> int:
        """The edge passing nearest the point within ``tolerance`` scene units, or -1."""
        rows = self.visible_segments(x - tolerance, y - tolerance, x + tolerance, y + tolerance)
        if not len(rows):
            return -1
        s = self.seg[rows].astype(np.float64)
        d = _point_segment_distance(x, y, s)
        best = int(np.argmin(d))
        return int(self.seg_edge[rows[best]]) if d[best] <= tolerance else -1

    def group_frame_at(self, x: float, y: float) -> int:
        """Row in ``group_rect`` of the innermost expanded group frame under the point, or -1."""
        g = self.scene.group_rect
        if not len(g):
            return -1
        inside = (g[:, 0] <= x) & (x <= g[:, 0] + g[:, 2]) & (g[:, 1] <= y) & (y <= g[:, 1] + g[:, 3])
        rows = np.flatnonzero(inside)
        if not len(rows):
            return -1
        return int(rows[np.argmax(self.scene.group_depth[rows])])

    def edges_of_box(self, box: int) -> np.ndarray:
        s = self.scene
        return np.flatnonzero((s.edge_src == box) | (s.edge_dst == box))

    def neighbours(self, box: int) -> tuple[np.ndarray, np.ndarray]:
        """(producers, consumers) box rows of a box."""
        s = self.scene
        return distinct(s.edge_src[s.edge_dst == box]), distinct(s.edge_dst[s.edge_src == box])


def _segments(s: Scene) -> tuple[np.ndarray, np.ndarray]:
    pts = s.edge_points.astype(np.float32, copy=False)
    offsets = s.edge_offsets.astype(np.int64, copy=False)
    if len(pts) < 2 or s.n_edges == 0:
        return np.zeros((0, 4), np.float32), np.zeros(0, np.int32)
    valid = np.ones(len(pts) - 1, bool)
    ends = offsets[1:-1] - 1          # the last point of each edge but the final one
    valid[ends[(ends >= 0) & (ends < len(valid))]] = False
    counts = np.diff(offsets)
    owner = np.repeat(np.arange(s.n_edges, dtype=np.int32), counts)[:-1]
    seg = np.concatenate([pts[:-1], pts[1:]], axis=1)[valid]
    return np.ascontiguousarray(seg), owner[valid]


def _point_segment_distance(x: float, y: float, s: np.ndarray) -> np.ndarray:
    dx, dy = s[:, 2] - s[:, 0], s[:, 3] - s[:, 1]
    length2 = dx * dx + dy * dy
    t = np.clip(((x - s[:, 0]) * dx + (y - s[:, 1]) * dy) / np.maximum(length2, 1e-12), 0.0, 1.0)
    px, py = s[:, 0] + t * dx - x, s[:, 1] + t * dy - y
    return np.sqrt(px * px + py * py)
