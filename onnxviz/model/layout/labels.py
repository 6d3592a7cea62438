"""Where the shape labels of edges go: beside their own edge, as near its source as is free.

Each value leaving a box gets one label, placed at the first free spot going down its edge (going
right when the graph flows left to right): on the side facing away from its box's other edges, else
on the other.
A spot is free when its text, with a little air, overlaps no other label and no box, and no edge of another
box runs through its text (a box's own edges fan out from one point: its labels stack beside them). A label with no
free spot anywhere along its edge is left out (the edge's tooltip still gives the shape), so labels
never run together or cover each other (a Loop's "1" and "5x1", neighbouring columns of shapes).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np

from onnxviz.model.layout.scene import Scene
from onnxviz.model.layout.util import PASS_ROWS, tolist_in_slices

LABEL_SIZE = 11.0   # the labels' text size in scene units (pixels at 1:1), as Netron's
LABEL_LINE = 15.0   # scene units between stacked labels: the label text and a little air
GAP = 4.0           # between the edge and its label
RIGHTWARD = 0.05    # dx/dy beyond which an edge heads right and its label goes on its left
CHAR_WIDTH = 11.0   # a character the table below does not list (the widest listed one)
AIR = 4.0           # kept free left and right of a label, so two never read as one
STEP_ACROSS = 16.0  # between two tried spots along an edge that runs left to right
MAX_TRIES = 40      # spots tried along one edge (on each side)
CELL = 160.0        # grid cell of the box index
LABEL_CELL = 48.0   # grid cell of the label index
MAX_LEAN = 3.0      # dx/dy of an edge a label beside it makes room for
MAX_ROOM = 260.0    # the most room between two layers laid out left to right that labels may ask for
BOLD = 1.15         # a frame's bold title is at most this much wider than a label of the same text
STACKED = 3         # left to right, lines above (below) an edge a label that fits nowhere along it may go
WHOLE_SCENE = 500   # labels (edges) from which the whole-scene passes in numpy beat the checks one at a time

Rect = tuple[float, float, float, float]

# Advance widths of the label font (DejaVu Sans, regular or italic, whichever is wider) at LABEL_SIZE,
# rounded up to half a unit, measured with Qt's font metrics: the rectangle a label is given is never
# narrower than its text drawn, and not much wider (so labels pack as tightly as they are drawn).
_WIDTHS = {3.5: " ',.IJijl", 4.0: "-/:;\\f|", 4.5: "!()[]t", 5.0: "r", 5.5: '"*_`', 6.0: "?sz",
           6.5: "FLckvxy", 7.0: "$0123456789EPSTYabdeghnopqu{}", 7.5: "K", 8.0: "ABCRVXZ", 8.5: "DHNU",
           9.0: "&GOQw", 9.5: "#+<=>M^~\u00d7", 10.5: "%", 11.0: "@Wm"}
CHAR_WIDTHS = {c: w for w, chars in _WIDTHS.items() for c in chars}


@dataclass(frozen=True)
class LabelSpots:
    """One row per label: ``edge``'s text starts at (``x``, ``y``), or ends at ``x`` when ``left``
    (the edge heads right, so its left side is the free one)."""

    edge: np.ndarray   # (k,) int64
    x: np.ndarray      # (k,) float64
    y: np.ndarray      # (k,) float64, the text's top
    left: np.ndarray   # (k,) bool


@lru_cache(maxsize=1 << 14)   # the same shapes label many edges
def label_width(text: str) -> float:
    """The width of ``text`` drawn as a label (at most: every character's advance rounded up)."""
    get = CHAR_WIDTHS.get
    return sum(get(c, CHAR_WIDTH) for c in text)


def label_room(text: str) -> float:
    """The length of edge a label needs to lie along it, left to right (capped: a longer one goes beside)."""
    return min(label_width(text) + 2 * GAP + 2 * AIR, MAX_ROOM)


def label_rect(x: float, y: float, left: bool, text: str) -> Rect:
    """(x0, y0, x1, y1) of a label's text drawn at a spot."""
    width = label_width(text)
    x0 = x - width if left else x
    return x0, y, x0 + width, y + LABEL_LINE


class _Grid:
    """Rectangles bucketed by grid cell: is a new one free of all of them?"""

    def __init__(self) -> None:
        self.cells: dict[tuple[int, int], list[Rect]] = {}

    def add(self, r: Rect) -> None:
        cells = self.cells
        rows = range(int(r[1] // LABEL_CELL), int(r[3] // LABEL_CELL) + 1)
        for i in range(int(r[0] // LABEL_CELL), int(r[2] // LABEL_CELL) + 1):
            for j in rows:
                found = cells.get((i, j))
                if found is None:
                    cells[(i, j)] = [r]
                else:
                    found.append(r)

    def free(self, r: Rect) -> bool:
        x0, y0, x1, y1 = r
        get = self.cells.get
        rows = range(int(y0 // LABEL_CELL), int(y1 // LABEL_CELL) + 1)
        for i in range(int(x0 // LABEL_CELL), int(x1 // LABEL_CELL) + 1):
            for j in rows:
                for a in get((i, j), ()):
                    if x0 < a[2] and a[0] < x1 and y0 < a[3] and a[1] < y1:
                        return False
        return True


class _Boxes:
    """The boxes, bucketed by the grid cell of their top-left corner (built with numpy: a scene may
    hold 100k boxes and few of them are ever near a label)."""

    def __init__(self, scene: Scene) -> None:
        x0, y0 = scene.box_x.astype(np.float64), scene.box_y.astype(np.float64)
        x1, y1 = x0 + scene.box_w, y0 + scene.box_h
        kx, ky = np.floor(x0 / CELL).astype(np.int64), np.floor(y0 / CELL).astype(np.int64)
        order = np.lexsort((ky, kx))
        keys = np.stack([kx[order], ky[order]], 1)
        starts = np.flatnonzero(np.r_[True, np.any(keys[1:] != keys[:-1], axis=1)]) if len(keys) else np.zeros(0, int)
        self._keys, self._starts = keys, starts
        self.reach_x = int(float(scene.box_w.max()) // CELL) + 1 if scene.n_boxes else 0
        self.reach_y = int(float(scene.box_h.max()) // CELL) + 1 if scene.n_boxes else 0
        self._cells = _CellIndex(keys[:, 0], keys[:, 1])
        self._sorted = np.stack([v[order] for v in (x0, y0, x1, y1)], 1)

    @cached_property
    def _lists(self) -> tuple[dict[tuple[int, int], tuple[int, int]], list[Rect]]:
        """For :meth:`free`: each cell's slice of the boxes, the boxes' rectangles (made on the first label whose
        first spot is not free: most scenes need none)."""
        keys, starts = self._keys, self._starts
        ends = np.r_[starts[1:], len(keys)] if len(starts) else starts
        slices = {(a, b): (s, e) for (a, b), s, e in   # lists of Python ints: no int() per entry
                  zip(tolist_in_slices(keys[starts]), starts.tolist(), ends.tolist(), strict=True)}
        return slices, [tuple(r) for r in tolist_in_slices(self._sorted)]

    def free(self, r: Rect) -> bool:
        x0, y0, x1, y1 = r
        slices, rects = self._lists
        get = slices.get
        rows = range(int(y0 // CELL) - self.reach_y, int(y1 // CELL) + 1)
        for i in range(int(x0 // CELL) - self.reach_x, int(x1 // CELL) + 1):
            for j in rows:
                found = get((i, j))
                if found is None:
                    continue
                for a in rects[found[0]:found[1]]:
                    if x0 < a[2] and a[0] < x1 and y0 < a[3] and a[1] < y1:
                        return False
        return True

    def free_many(self, r: np.ndarray) -> np.ndarray:
        """:meth:`free` of each row (x0, y0, x1, y1) of ``r``, in numpy: the same cells looked in, the same test."""
        i0 = np.floor_divide(r[:, 0], CELL).astype(np.int64) - self.reach_x
        j0 = np.floor_divide(r[:, 1], CELL).astype(np.int64) - self.reach_y
        i1, j1 = np.floor_divide(r[:, 2], CELL).astype(np.int64), np.floor_divide(r[:, 3], CELL).astype(np.int64)
        row, found = self._cells.pairs(i0, j0, i1, j1)
        a, q = self._sorted[found], r[row]
        hit = (q[:, 0] < a[:, 2]) & (a[:, 0] < q[:, 2]) & (q[:, 1] < a[:, 3]) & (a[:, 1] < q[:, 3])
        free = np.ones(len(r), bool)
        free[row[hit]] = False
        return free


class _CellIndex:
    """Entries sorted by grid cell (column, then row): for many rectangles of cells at once, the (rectangle,
    entry) pairs of every entry in their cells, with numpy."""

    def __init__(self, cx: np.ndarray, cy: np.ndarray) -> None:
        self.low = int(cy.min()) - 1 if len(cy) else 0
        self.span = int(cy.max()) - self.low + 2 if len(cy) else 1   # rows low .. high + 1: every key one cell
        keys = cx * self.span + (cy - self.low)
        firsts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]]) if len(keys) else np.zeros(0, np.int64)
        # each cell holding entries once, with its first entry and how many (one search in the cells, not two in
        # every entry); a last cell no key reaches, so that a search past them all finds no entries
        self.cells = np.r_[keys[firsts], np.iinfo(np.int64).max]
        self.first = np.r_[firsts, len(keys)]
        self.count = np.diff(self.first, append=len(keys))

    def pairs(self, i0: np.ndarray, j0: np.ndarray, i1: np.ndarray, j1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(rectangle, entry) of each entry in each cell (i, j), i0 <= i <= i1 and j0 <= j <= j1, of each rectangle."""
        j0, j1 = np.clip(j0, self.low, self.low + self.span - 1), np.clip(j1, self.low, self.low + self.span - 1)
        rows = j1 - j0 + 1
        count = (i1 - i0 + 1) * rows
        rect = np.repeat(np.arange(len(count)), count)
        k = np.arange(len(rect)) - np.repeat(np.cumsum(count) - count, count)
        cell = (i0[rect] + k // rows[rect]) * self.span + (j0[rect] + k % rows[rect] - self.low)
        at = np.searchsorted(self.cells, cell)
        lo, n = self.first[at], np.where(self.cells[at] == cell, self.count[at], 0)
        pair_rect = np.repeat(rect, n)
        entry = np.arange(len(pair_rect)) - np.repeat(np.cumsum(n) - n, n) + np.repeat(lo, n)
        return pair_rect, entry


class _Segments:
    """The edges' segments, bucketed by the grid cells their bounding boxes cover (made with numpy): does a
    label's text cross an edge? Edges are drawn as curves through these points, near enough to them."""

    def __init__(self, scene: Scene) -> None:
        pts, off = scene.edge_points.astype(np.float64), scene.edge_offsets
        starts = np.arange(len(pts) - 1) if len(pts) > 1 else np.zeros(0, np.int64)
        last = np.zeros(len(pts), bool)
        last[np.maximum(off[1:] - 1, 0)] = True   # no segment from an edge's last point to the next edge's first
        starts = starts[~last[:-1]] if len(starts) else starts
        a, b = pts[starts], pts[starts + 1]
        self._ends = np.concatenate([a, b], axis=1)
        edge = np.searchsorted(off, starts, side="right") - 1
        self._source = scene.edge_src[edge] if len(starts) else np.zeros(0, np.int64)  # the box its edge leaves
        lo, hi = np.floor(np.minimum(a, b) / LABEL_CELL).astype(np.int64), np.floor(np.maximum(a, b) / LABEL_CELL
                                                                                     ).astype(np.int64)
        span = hi - lo + 1
        count = span[:, 0] * span[:, 1] if len(starts) else np.zeros(0, np.int64)
        which = np.repeat(np.arange(len(count)), count)
        k = np.arange(len(which)) - np.repeat(np.cumsum(count) - count, count)
        cx = lo[which, 0] + k // np.maximum(span[which, 1], 1)
        cy = lo[which, 1] + k % np.maximum(span[which, 1], 1)
        order = np.lexsort((cy, cx))
        self._which, self._cx, self._cy = which[order], cx[order], cy[order]
        self._cells = _CellIndex(self._cx, self._cy)

    @cached_property
    def _lists(self) -> tuple[dict[tuple[int, int], tuple[int, int]], list[int], list[list[float]], list[int]]:
        """For :meth:`free`: each cell's slice of ``which``, the segments in cell order, each segment's ends and
        source box (made on the first label whose first spot is not free: most scenes need none)."""
        keys = np.stack([self._cx, self._cy], 1)
        firsts = np.flatnonzero(np.r_[True, np.any(keys[1:] != keys[:-1], axis=1)]) if len(keys) else \
            np.zeros(0, np.int64)
        ends = np.r_[firsts[1:], len(keys)] if len(firsts) else firsts
        slices = {(i, j): (f, e) for (i, j), f, e in   # lists of Python ints: no int() per entry
                  zip(tolist_in_slices(keys[firsts]), firsts.tolist(), ends.tolist(), strict=True)}
        return slices, tolist_in_slices(self._which), tolist_in_slices(self._ends), self._source.tolist()

    def free(self, r: Rect, source: int) -> bool:
        """No segment crosses the rectangle ``r``, but those of the edges leaving box ``source``: a node's
        edges fan out from one point, and its labels stack beside them there."""
        x0, y0, x1, y1 = r
        slices, which, segments, sources = self._lists
        get = slices.get
        seen: set[int] = set()
        rows = range(int(y0 // LABEL_CELL), int(y1 // LABEL_CELL) + 1)
        for i in range(int(x0 // LABEL_CELL), int(x1 // LABEL_CELL) + 1):
            for j in rows:
                found = get((i, j))
                if found is None:
                    continue
                for s in which[found[0]:found[1]]:
                    if s not in seen:
                        seen.add(s)
                        if sources[s] != source and _crosses(segments[s], r):
                            return False
        return True

    def free_many(self, r: np.ndarray, source: np.ndarray) -> np.ndarray:
        """:meth:`free` of each row (x0, y0, x1, y1) of ``r`` with its ``source``, in numpy: the same segments
        looked at, the same test."""
        i0, j0 = np.floor_divide(r[:, 0], LABEL_CELL).astype(np.int64), np.floor_divide(r[:, 1], LABEL_CELL).astype(np.int64)
        i1, j1 = np.floor_divide(r[:, 2], LABEL_CELL).astype(np.int64), np.floor_divide(r[:, 3], LABEL_CELL).astype(np.int64)
        row, found = self._cells.pairs(i0, j0, i1, j1)
        seg = self._which[found]
        other = self._source[seg] != source[row]
        row, seg = row[other], seg[other]
        hit = _crosses_many(self._ends[seg], r[row])
        free = np.ones(len(r), bool)
        free[row[hit]] = False
        return free


def _crosses(seg: list[float], r: Rect) -> bool:
    """Whether the segment (x0, y0, x1, y1) meets the rectangle (Liang-Barsky clipping)."""
    ax, ay, bx, by = seg
    x0, y0, x1, y1 = r
    dx, dy = bx - ax, by - ay
    t0, t1 = 0.0, 1.0
    for p, q in ((-dx, ax - x0), (dx, x1 - ax), (-dy, ay - y0), (dy, y1 - ay)):
        if p == 0:
            if q < 0:
                return False
            continue
        t = q / p
        if p < 0:
            t0 = max(t0, t)
        else:
            t1 = min(t1, t)
        if t0 > t1:
            return False
    return True


def _crosses_many(seg: np.ndarray, r: np.ndarray) -> np.ndarray:
    """:func:`_crosses` of each row of ``seg`` with the same row of ``r``: the same arithmetic, in numpy (once
    t0 > t1 it stays so: the early returns change no answer)."""
    ax, ay, bx, by = seg.T
    dx, dy = bx - ax, by - ay
    t0, t1 = np.zeros(len(seg)), np.ones(len(seg))
    meets = np.ones(len(seg), bool)
    for p, q in ((-dx, ax - r[:, 0]), (dx, r[:, 2] - ax), (-dy, ay - r[:, 1]), (dy, r[:, 3] - ay)):
        flat = p == 0
        meets &= ~(flat & (q < 0))
        with np.errstate(divide="ignore", invalid="ignore"):
            t = q / np.where(flat, 1.0, p)
        t0 = np.where(~flat & (p < 0), np.maximum(t0, t), t0)
        t1 = np.where(~flat & (p > 0), np.minimum(t1, t), t1)
    return meets & ~(t0 > t1)


def text_band(r: Rect) -> Rect:
    """The part of a label's rectangle its letters cover, which no edge may cross."""
    return r[0], r[1] + 2.0, r[2], r[3] - 2.0


def label_spots(scene: Scene) -> LabelSpots:
    """A free spot for the label of each value leaving a box (one per value, even with several edges)."""
    edge, outer = _labelled_edges(scene)
    if not len(edge):
        return LabelSpots(np.zeros(0, np.int64), np.zeros(0), np.zeros(0), np.zeros(0, bool))
    boxes, edges, marks = _Boxes(scene), _Segments(scene), frame_marks(scene)
    if len(edge) >= WHOLE_SCENE:
        first, free, padded = _first_spots(scene, edge, outer, boxes, edges)
        taken = free.copy()   # at its first spot, free of boxes and edges, apart from every other first spot:
        taken[free] = _apart(padded[free], marks)   # placed there unless a label placed elsewhere before it meets it
    else:   # a small scene: every label checked one at a time
        first = LabelSpots(edge, np.zeros(len(edge)), np.zeros(len(edge)), np.zeros(len(edge), bool))
        free, padded, taken = np.zeros(len(edge), bool), np.zeros((len(edge), 4)), np.zeros(len(edge), bool)
    start = len(edge) if taken.all() else int(np.argmin(taken))   # until the first other label, none placed elsewhere
    spots = LabelSpots(edge, first.x.copy(), first.y.copy(), first.left.copy())
    if start < len(edge):
        _place_one_by_one(scene, spots, outer, free, padded, taken, start, (marks, boxes, edges))
    keep = np.flatnonzero(taken)
    return LabelSpots(edge[keep], spots.x[keep], spots.y[keep], spots.left[keep])


def _place_one_by_one(scene: Scene, spots: LabelSpots, outer: np.ndarray, free: np.ndarray, padded: np.ndarray,
                      taken: np.ndarray, start: int, obstacles: tuple[np.ndarray, _Boxes, _Segments]) -> None:
    """Labels ``start`` on, in order: one free at its first spot and apart from the other first spots stays there
    unless a label placed at another spot meets it; any other takes the first of its spots (:func:`_candidates`)
    free of the labels placed so far, the boxes and other boxes' edges, or none. Writes ``spots`` and ``taken``."""
    marks, boxes, edges = obstacles
    grid, elsewhere = _Grid(), _Grid()   # every label placed, and the frame marks; the labels placed elsewhere
    for mark in marks.tolist():   # a label over a frame's name or its button hides it
        grid.add(tuple(mark))
    pending: list[Rect] = [tuple(r) for r in padded[:start][taken[:start]].tolist()]   # placed, not yet in the grid
    across, offsets, points = scene.direction == "LR", scene.edge_offsets.tolist(), scene.edge_points
    placed: list[tuple[int, float, float, bool]] = []
    took = taken[start:].tolist()
    rows = zip(range(start, len(took) + start), spots.edge[start:].tolist(), outer[start:].tolist(),
               free[start:].tolist(), took, tolist_in_slices(padded[start:]), strict=True)
    for i, e, out, at_first, alone, first in rows:
        if at_first:   # free of boxes and edges: free of the labels placed so far?
            if alone and (not elsewhere.cells or elsewhere.free(first)):
                pending.append(first)
                continue
            _flush(pending, grid)
            if grid.free(first):
                grid.add(first)
                took[i - start] = True
                continue
        took[i - start] = False
        _flush(pending, grid)
        text = scene.edge_label[e]
        for spot in _candidates(points[offsets[e]:offsets[e + 1]].tolist(), text, across, out):
            x0, y0, x1, y1 = label_rect(spot[0], spot[1], spot[2], text)
            rect = (x0 - AIR, y0, x1 + AIR, y1)
            if grid.free(rect) and boxes.free(rect) and edges.free(text_band((x0, y0, x1, y1)), int(scene.edge_src[e])):
                grid.add(rect)
                elsewhere.add(rect)
                placed.append((i, *spot))
                took[i - start] = True
                break
    taken[start:] = took
    if placed:
        row, x, y, left = (list(v) for v in zip(*placed, strict=True))
        spots.x[row], spots.y[row], spots.left[row] = x, y, left


def _flush(pending: list[Rect], grid: _Grid) -> None:
    for r in pending:
        grid.add(r)
    pending.clear()


def _apart(padded: np.ndarray, marks: np.ndarray) -> np.ndarray:
    """Per rectangle (x0, y0, x1, y1), whether it overlaps no other of them and no frame mark: such a label, at its
    first spot, can meet only labels placed at another spot (found for all at once in numpy: the grid's check
    one label at a time was most of what was left of the labels' time)."""
    rects = np.concatenate([padded, marks]).reshape(-1, 4)
    lo = np.floor_divide(rects[:, :2], LABEL_CELL).astype(np.int64)
    hi = np.floor_divide(rects[:, 2:], LABEL_CELL).astype(np.int64)
    span = hi - lo + 1
    count = span[:, 0] * span[:, 1]
    owner = np.repeat(np.arange(len(rects)), count)   # each rectangle once in each cell it covers
    k = np.arange(len(owner)) - np.repeat(np.cumsum(count) - count, count)
    cx, cy = lo[owner, 0] + k // span[owner, 1], lo[owner, 1] + k % span[owner, 1]
    order = np.lexsort((cy, cx))
    cells, owner = _CellIndex(cx[order], cy[order]), owner[order]
    n = len(padded)
    alone = np.ones(n, bool)
    for start in range(0, n, PASS_ROWS):
        stop = min(n, start + PASS_ROWS)
        row, entry = cells.pairs(lo[start:stop, 0], lo[start:stop, 1], hi[start:stop, 0], hi[start:stop, 1])
        row, other = row + start, owner[entry]
        a, b = rects[row], rects[other]
        meet = (row != other) & (a[:, 0] < b[:, 2]) & (b[:, 0] < a[:, 2]) & (a[:, 1] < b[:, 3]) & (b[:, 1] < a[:, 3])
        alone[row[meet]] = False
    return alone


def _first_spots(scene: Scene, edge: np.ndarray, outer: np.ndarray, boxes: _Boxes,
                 edges: _Segments) -> tuple[LabelSpots, np.ndarray, np.ndarray]:
    """Per labelled edge, its first spot (what :func:`_candidates` tries first), whether it is free of boxes and of
    other boxes' edges, and the rectangle it keeps to itself (its text and the air left and right of it); for all
    labels at once in numpy, a slice of rows at a time (one check per label in Python was most of the labels' time).
    Only the first spot of an edge whose first segment heads along the flow is found here (the others are not free
    here and are tried one by one)."""
    parts = []
    for start in range(0, len(edge), PASS_ROWS):
        e = edge[start:start + PASS_ROWS]
        x, y, left, known = _first_spot_rows(scene, e, outer[start:start + PASS_ROWS])
        width = np.array([label_width(scene.edge_label[k]) for k in e.tolist()], np.float64)
        x0 = np.where(left, x - width, x)
        x1 = x0 + width
        padded = np.stack([x0 - AIR, y, x1 + AIR, y + LABEL_LINE], 1)
        free = known & boxes.free_many(padded)
        free &= edges.free_many(np.stack([x0, y + 2.0, x1, y + LABEL_LINE - 2.0], 1), scene.edge_src[e])
        parts.append((x, y, left, free, padded))
    x, y, left, free, padded = (np.concatenate(p) for p in zip(*parts, strict=True))
    return LabelSpots(edge, x, y, left), free, padded


def _first_spot_rows(scene: Scene, e: np.ndarray,
                     outer: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(x, y, left) of the first spot :func:`_candidates` gives each edge ``e``, and whether it is known here:
    its first segment heads along the flow, so the spot is at the edge's first point."""
    start = scene.edge_offsets[e]
    p0 = scene.edge_points[start].astype(np.float64)
    p1 = scene.edge_points[np.minimum(start + 1, len(scene.edge_points) - 1)].astype(np.float64)
    if scene.direction == "LR":  # above the edge at its start, text along it
        known = (scene.edge_offsets[e + 1] - start >= 2) & (p1[:, 0] > p0[:, 0])
        return p0[:, 0] + GAP, p0[:, 1] - LABEL_LINE - 1.0, np.zeros(len(e), bool), known
    known = (scene.edge_offsets[e + 1] - start >= 2) & (p1[:, 1] > p0[:, 1])
    dx, dy = p1[:, 0] - p0[:, 0], np.where(known, p1[:, 1] - p0[:, 1], 1.0)
    left = ~outer
    slope = np.minimum(np.maximum(np.where(left, -(dx / dy), dx / dy), 0.0), MAX_LEAN)
    away = GAP + slope * LABEL_LINE
    return np.where(left, p0[:, 0] - away, p0[:, 0] + away), p0[:, 1] + 1.0, left, known


def frame_marks(scene: Scene) -> np.ndarray:
    """(x0, y0, x1, y1) of what each group frame draws in its top band, two rows a frame: its name (bold, from 10
    units in, cut to the frame's width) and its − button at the right."""
    g = scene.group_rect.astype(np.float64).reshape(-1, 4)
    x, y, w = g[:, 0], g[:, 1], g[:, 2]
    title = np.array([label_width(path.rsplit("/", 1)[-1] or path) for path in scene.group_path], np.float64)
    name = np.stack([x + 10, y + 2, x + 10 + np.minimum(title * BOLD, np.maximum(w - 34, 1.0)), y + 21], 1)
    button = np.stack([x + w - 22, y + 3, x + w - 5, y + 20], 1)
    return np.stack([name, button], 1).reshape(-1, 4)


def _labelled_edges(scene: Scene) -> tuple[np.ndarray, np.ndarray]:
    """The edges (int64) given a label, and whether each label goes first on its outer side (bool): one edge per
    (source box, value) with a label,
    sources top to bottom (left to right), each source's straightest edge first.

    The edges of a box all start at one point, so a label there must sit on the side facing away
    from its box's other edges: right of an edge heading right, left of one heading left, and left of
    a straight one only when a sibling heads right (a Loop's two outputs)."""
    if scene.n_edges < max(WHOLE_SCENE, 1) or int(scene.edge_src.min()) < 0:
        return _labelled_edges_one_by_one(scene)
    src = scene.edge_src.astype(np.int64)
    ids: dict[str, int] = {}
    value = np.array([ids.setdefault(v, len(ids)) for v in scene.edge_value], np.int64)
    keep = np.flatnonzero(np.array([bool(t) for t in scene.edge_label], bool) & (np.diff(scene.edge_offsets) >= 2))
    if len(keep) == 0:
        return np.zeros(0, np.int64), np.zeros(0, bool)
    key = src[keep] * len(ids) + value[keep]
    order = np.argsort(key, kind="stable")   # the first edge of each (source, value): the one labelled
    firsts = np.ones(len(order), bool)
    firsts[1:] = key[order][1:] != key[order][:-1]
    labelled = np.sort(keep[order[firsts]])
    first = np.array(_first_slopes(scene))
    rightward = np.zeros(scene.n_boxes, bool)
    rightward[src[first > RIGHTWARD]] = True   # a box with an edge heading right (left), labelled or not
    leftward = np.zeros(scene.n_boxes, bool)
    leftward[src[first < -RIGHTWARD]] = True
    flow = (scene.box_x if scene.direction == "LR" else scene.box_y).astype(np.float64)
    s, slope = src[labelled], first[labelled]
    labelled = labelled[np.lexsort((np.abs(slope), s, flow[s]))]  # sources in flow order, straightest first
    s, slope = src[labelled], first[labelled]
    outer = (slope > RIGHTWARD) | ((np.abs(slope) <= RIGHTWARD) & ~(rightward[s] & ~leftward[s]))
    return labelled.astype(np.int64, copy=False), outer


def _labelled_edges_one_by_one(scene: Scene) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_labelled_edges` in Python's dicts (a small scene, or one with an edge of no source box)."""
    by_source: dict[int, list[int]] = {}
    seen: set[tuple[int, str]] = set()
    offsets = scene.edge_offsets.tolist()
    sources = scene.edge_src.tolist()
    across = scene.direction == "LR"
    for e, (src, value, label) in enumerate(zip(sources, scene.edge_value, scene.edge_label, strict=True)):
        if label and (src, value) not in seen and offsets[e + 1] - offsets[e] >= 2:
            seen.add((src, value))
            by_source.setdefault(src, []).append(e)
    if not by_source:
        return np.zeros(0, np.int64), np.zeros(0, bool)
    first = _first_slopes(scene)
    slopes: dict[int, list[float]] = {src: [] for src in by_source}
    for e, src in enumerate(sources):
        if src in slopes:
            slopes[src].append(first[e])
    flow = scene.box_x if across else scene.box_y
    out: list[tuple[int, bool]] = []
    starts = flow.tolist()
    for src in sorted(by_source, key=lambda b: (starts[b], b)):
        edges = by_source[src]
        edges.sort(key=lambda e: abs(first[e]))
        rightward = any(v > RIGHTWARD for v in slopes[src])
        leftward = any(v < -RIGHTWARD for v in slopes[src])
        for e in edges:
            slope = first[e]
            outer = slope > RIGHTWARD or (abs(slope) <= RIGHTWARD and not (rightward and not leftward))
            out.append((e, outer))  # outer: right (below, left to right); else left (above)
    return np.array([e for e, _ in out], np.int64), np.array([outer for _, outer in out], bool)


Points = list[list[float]]


def _first_slopes(scene: Scene) -> list[float]:
    """Per edge, :func:`_slope` of its first segment in flow coordinates (0 for an edge of one point)."""
    off = scene.edge_offsets
    if scene.n_edges == 0 or len(scene.edge_points) < 2:
        return [0.0] * scene.n_edges
    start = np.minimum(off[:-1], len(scene.edge_points) - 2)
    p0, p1 = scene.edge_points[start].astype(np.float64), scene.edge_points[start + 1].astype(np.float64)
    across_, along_ = (1, 0) if scene.direction == "LR" else (0, 1)
    dx, dy = p1[:, across_] - p0[:, across_], p1[:, along_] - p0[:, along_]
    with np.errstate(divide="ignore", invalid="ignore"):
        slope = np.where(dy > 0, dx / np.where(dy > 0, dy, 1.0), np.where(dx == 0, 0.0, np.copysign(np.inf, dx)))
    slope[np.diff(off) < 2] = 0.0
    return slope.tolist()


def _flow(pts: Points, across: bool) -> Points:
    """The polyline with the flow direction as its second coordinate (x and y swapped left to right)."""
    return [[b, a] for a, b in pts] if across else pts


def _candidates(pts: Points, text: str, across: bool, right: bool) -> Iterator[tuple[float, float, bool]]:
    """Spots (x, y, left) along the edge from its source on: first on the ``right`` side of it (below
    it, left to right) or the left (above), then on the other side. A label right of an edge heading
    right starts far enough out that the edge does not run through it."""
    flow = _flow(pts, across)
    length = flow[-1][1] - flow[0][1]
    if across:  # text runs along the edge: above it, then below it, stepping right
        room = length - label_width(text) - 2 * GAP
        depths = [k * STEP_ACROSS for k in range(min(MAX_TRIES, int(max(room, 0.0) // STEP_ACROSS) + 1))]
        for below in (False, True):
            for d in depths:
                y, x = _point_at_depth(flow, d)
                yield x + GAP, (y + 2.0 if below else y - LABEL_LINE - 1.0), False
        y, x = _point_at_depth(flow, 0.0)   # then further above (below) its start: over (under) the next box
        for k in range(1, STACKED + 1):
            yield x + GAP, y - (k + 1) * LABEL_LINE - 1.0, False
            yield x + GAP, y + 2.0 + k * LABEL_LINE, False
        return
    room = length - LABEL_LINE
    depths = [k * LABEL_LINE for k in range(min(MAX_TRIES, int(max(room, 0.0) // LABEL_LINE) + 1))]
    for left in (not right, right):
        for d in depths:
            x, y = _point_at_depth(flow, d)
            slope = min(max(-_slope(flow, d) if left else _slope(flow, d), 0.0), MAX_LEAN)
            away = GAP + slope * LABEL_LINE  # where the edge is at the label's bottom, and a gap
            yield (x - away if left else x + away), y + 1.0, left


def _segment_at(pts: Points, depth: float) -> int:
    """The segment of the polyline that reaches ``depth`` below its first point (the last one if none)."""
    target = pts[0][1] + depth
    for i in range(len(pts) - 1):
        if pts[i + 1][1] >= target:
            return i
    return len(pts) - 2


def _slope(pts: Points, depth: float) -> float:
    """dx/dy of the polyline at ``depth`` (inf for a level segment)."""
    i = _segment_at(pts, depth)
    dx, dy = pts[i + 1][0] - pts[i][0], pts[i + 1][1] - pts[i][1]
    if dy <= 0:
        return 0.0 if dx == 0 else float(np.copysign(np.inf, dx))
    return dx / dy


def _point_at_depth(pts: Points, depth: float) -> tuple[float, float]:
    """The point of the polyline ``depth`` below its first point (its end when it is shorter)."""
    i = _segment_at(pts, depth)
    (x0, y0), (x1, y1) = pts[i], pts[i + 1]
    target = pts[0][1] + depth
    if target >= y1:
        return x1, y1
    if target <= y0:
        return x0, y0
    t = (target - y0) / (y1 - y0)
    return x0 + t * (x1 - x0), target
