"""Layered (Sugiyama-style) placement of one level of boxes: the core of the layout.

Steps: break cycles (reverse back edges of a priority-ordered topological
sort), longest-path layering with side computations pulled down next to their
consumers, one dummy unit per layer crossed by a long edge (so long edges are
routed in their own slot, never through boxes), barycenter ordering sweeps,
then x placement: each unit wants to sit under the median of its neighbours
(a real node wins over a dummy, so the main path stays straight and residual
edges run beside it) and a weighted isotonic regression (pool adjacent
violators) keeps each layer in order with actual box widths as separation.

Every loop is bounded; cycles, self loops and isolated units are fine.

igraph's ``Graph.layout_sugiyama`` (C, fast) was evaluated first: its Python
binding returns positions of the real vertices only (no dummy points for long
edges), on a unit grid that ignores box widths, and does not keep the main
path straight; re-spacing and routing would have been needed anyway, so the
layering and placement here are written for this job.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from onnxviz.model.layout.ordering import CHECK_EVERY, order_layers
from onnxviz.model.layout.util import unique_pairs
from onnxviz.model.progress import CancelToken, ProgressFn, no_progress

BOX_GAP = 24.0      # horizontal space between two boxes
DUMMY_GAP = 12.0    # between an edge slot and anything
DUMMY_W = 2.0
LAYER_GAP = 20.0    # vertical space between layers: room for one line of edge labels (15 high), as Netron spaces them
LABEL_LINE = 16.0   # the gap grows by this for each more line of labels below a layer (two where they could meet:
                    # each other, or a taller box beside; one per value a box sends, they start at one point)
MAX_LINES = 4       # label lines the gap below a layer makes room for, at most
MAX_LEAN = 45.0     # how far out a label beside a slanting edge moves at most (labels.py: MAX_LEAN lines of 15)
LABEL_REACH = 12.0  # beyond its text, how far a label beside its edge reaches from the edge (gap and air)
LAYER_GAP_ACROSS = 96.0  # the same laid out for a left-to-right drawing: labels run along the edges there
PORT_GAP_ACROSS = 20.0   # left to right, between a frame's ports and its boxes
DUMMY_WEIGHT = 0.02 # dummies give way to boxes
FREE_WEIGHT = 0.05  # a unit without neighbours on the sweep side barely pulls
CHAIN_WEIGHT = 8.0    # a unit continuing a chain keeps in line before others
SPINE_WEIGHT = 1000.0
ARRIVAL_STEP = 14.0  # between the ends of two edges entering one box
ARRIVAL_SPAN = 0.6   # the share of a box's width its entering edges spread over, at most
BACK_EDGE_MARGIN = 8.0  # a back edge's lane: right of the level, in the gaps between layers  # the main path stays on its line


@dataclass
class _Plain:
    x: list[float]
    y: list[float]
    w: list[float]
    h: list[float]
    layer: list[int]
    band_top: list[float]
    band_bottom: list[float]
    edge_src: list[int]
    edge_dst: list[int]
    edge_reversed: list[bool]
    width: float
    arrival_dx: list[float]


@dataclass
class LevelLayout:
    """Positions of one level's units (first ``n_units`` rows) and edge slots (dummy rows after)."""

    n_units: int
    x: np.ndarray           # left
    y: np.ndarray           # top
    w: np.ndarray
    h: np.ndarray
    layer: np.ndarray
    band_top: np.ndarray    # per layer
    band_bottom: np.ndarray
    edge_src: np.ndarray    # unit rows
    edge_dst: np.ndarray
    edge_chain: list[list[int]]   # dummy rows from the upper end to the lower end
    edge_reversed: np.ndarray     # True: a back edge of a cycle, routed upwards

    def plain(self) -> _Plain:
        """The arrays as Python lists (fast scalar access), made once per layout."""
        cached = self.__dict__.get("_plain")
        if cached is None:
            cached = _Plain(self.x.tolist(), self.y.tolist(), self.w.tolist(), self.h.tolist(),
                            self.layer.tolist(), self.band_top.tolist(), self.band_bottom.tolist(),
                            self.edge_src.tolist(), self.edge_dst.tolist(), self.edge_reversed.tolist(),
                            self.size()[0], self._arrival_dx().tolist())
            self.__dict__["_plain"] = cached
        return cached

    def _arrival_dx(self) -> np.ndarray:
        """Per edge, where it enters its target relative to the target's centre: the edges into one box
        side by side in the order they come from (left to right), so that none meets another at its end."""
        n = len(self.edge_dst)
        dx = np.zeros(n)
        if n < 2:
            return dx
        last = np.array([c[-1] if c else -1 for c in self.edge_chain], np.int64)
        src = np.where(last >= 0, last, self.edge_src)
        come = self.x[src] + self.w[src] / 2
        dst = self.edge_dst
        order = np.lexsort((np.arange(n), come, dst))
        d_sorted = dst[order]
        starts = np.flatnonzero(np.r_[True, d_sorted[1:] != d_sorted[:-1]])
        counts = np.diff(np.r_[starts, n])
        k = np.repeat(counts, counts)
        rank = np.arange(n) - np.repeat(starts, counts)
        w = self.w[d_sorted]
        step = np.minimum(ARRIVAL_STEP, ARRIVAL_SPAN * w / np.maximum(k - 1, 1))
        dx[order] = (rank - (k - 1) / 2) * step
        dx[self.edge_reversed.astype(bool)] = 0.0
        return dx

    def polyline(self, e: int, src_dx: float = 0.0, dst_dx: float | None = None) -> list[tuple[float, float]]:
        """Route of edge ``e`` from the source's bottom to the target's top (local coordinates); without
        ``dst_dx`` (a port's offset) it enters beside the other edges into its target (:meth:`_arrival_dx`)."""
        p = self.plain()
        s, t = p.edge_src[e], p.edge_dst[e]
        x, w, layer, top, bottom = p.x, p.w, p.layer, p.band_top, p.band_bottom
        sx = x[s] + w[s] / 2 + src_dx
        tx = x[t] + w[t] / 2 + (p.arrival_dx[e] if dst_dx is None else dst_dx)
        pts = [(sx, p.y[s] + p.h[s])]
        chain = self.edge_chain[e]
        if p.edge_reversed[e]:  # a back edge of a cycle: up a lane right of everything
            lane = p.width + BACK_EDGE_MARGIN
            below = bottom[layer[s]] + BACK_EDGE_MARGIN
            above = top[layer[t]] - BACK_EDGE_MARGIN
            pts += [(sx, below), (lane, below), (lane, above), (tx, above), (tx, p.y[t])]
            return pts
        below = bottom[layer[s]]
        if below > pts[0][1] and (chain or layer[t] > layer[s]):
            pts.append((sx, below))
        for d in chain:
            cx = x[d] + w[d] / 2
            pts += [(cx, top[layer[d]]), (cx, bottom[layer[d]])]
        pts.append((tx, p.y[t]))
        return pts

    def size(self) -> tuple[float, float]:
        """(width, height), made once per layout (repeated levels share theirs)."""
        cached = self.__dict__.get("_size")
        if cached is None:
            cached = (0.0, 0.0) if len(self.x) == 0 else (float((self.x + self.w).max()), float((self.y + self.h).max()))
            self.__dict__["_size"] = cached
        return cached


def layered_layout(w: np.ndarray, h: np.ndarray, src: np.ndarray, dst: np.ndarray,
                   top: np.ndarray | None = None, bottom: np.ndarray | None = None,
                   cancel: CancelToken | None = None, src_dx: np.ndarray | None = None,
                   dst_dx: np.ndarray | None = None, progress: ProgressFn = no_progress,
                   layer_gap: float | np.ndarray = LAYER_GAP,
                   label_w: np.ndarray | None = None, entry_gap: float = LAYER_GAP / 2) -> LevelLayout:
    """Place ``len(w)`` units (rows in priority order, e.g. file order) joined by edges ``src -> dst``.

    ``top``/``bottom`` are boolean masks of units pinned to the first/last layer
    (a group's entry and exit ports). ``src_dx``/``dst_dx`` give, per edge, where
    it leaves/enters its unit relative to the unit's centre (a port on a nested
    group's frame), so such edges can be drawn straight too. ``layer_gap``: room between two
    layers, or per unit the room below its layer (the widest of the layer's units counts, never less
    than :data:`LAYER_GAP`), so the labels of long shapes fit along their edges left to right;
    layers for the edges and their labels. ``label_w``: per edge, the width of the label drawn beside it
    below its source (0: none, or drawn at another edge of the same value); a layer gets a line more
    below it where two of its labels could meet, else ``layer_gap``. ``entry_gap``: between the entry ports
    (a frame's top) and the first boxes. Coordinates start at (0, 0).
    """
    return place_units(w, h, src, dst, top, bottom, cancel, src_dx, dst_dx, progress).layout(
        layer_gap, label_w, entry_gap)


@dataclass
class Placement:
    """Units placed in layers and in x (:func:`place_units`); :meth:`layout` adds the room between layers,
    which follows the edge labels, so new labels need only that part again."""

    slots: _Slots
    src: np.ndarray        # the edges kept (no self loops)
    dst: np.ndarray
    reversed_: np.ndarray
    keep: np.ndarray       # which of the given edges were kept

    def layout(self, layer_gap: float | np.ndarray = LAYER_GAP, label_w: np.ndarray | None = None,
               entry_gap: float = LAYER_GAP / 2) -> LevelLayout:
        """The level laid out (see :func:`layered_layout` for the arguments)."""
        widths = None if label_w is None else np.asarray(label_w, float)[self.keep]
        return self.slots.result(self.src, self.dst, self.reversed_, layer_gap, widths, entry_gap)


def place_units(w: np.ndarray, h: np.ndarray, src: np.ndarray, dst: np.ndarray,
                top: np.ndarray | None = None, bottom: np.ndarray | None = None,
                cancel: CancelToken | None = None, src_dx: np.ndarray | None = None,
                dst_dx: np.ndarray | None = None, progress: ProgressFn = no_progress) -> Placement:
    """The layers, order and x of :func:`layered_layout`'s units, before the room between layers."""
    n = len(w)
    top = np.zeros(n, bool) if top is None else top
    bottom = np.zeros(n, bool) if bottom is None else bottom
    src = np.asarray(src, np.int64)
    dst = np.asarray(dst, np.int64)
    keep = src != dst
    src, dst = src[keep], dst[keep]
    src_dx = np.zeros(len(src)) if src_dx is None else np.asarray(src_dx, float)[keep]
    dst_dx = np.zeros(len(src)) if dst_dx is None else np.asarray(dst_dx, float)[keep]
    order_pos = _topological_positions(n, src, dst, top)
    reversed_ = order_pos[src] > order_pos[dst]
    up = np.where(reversed_, dst, src)
    down = np.where(reversed_, src, dst)
    pairs = unique_pairs(up, down)
    layer = _layers(n, pairs, order_pos, top, bottom)
    check = cancel.check if cancel is not None else _never
    check()
    rows = zip(src.tolist(), dst.tolist(), src_dx.tolist(), dst_dx.tolist(), reversed_.tolist(), strict=True)
    offsets = {(a, b): (sd, dd) for a, b, sd, dd, r in rows if not r and (sd or dd)}
    progress(0.2, "Ordering layers")
    graph = _Slots(n, layer, w, h, pairs, offsets, check)
    graph.order_layers(iterations=2 if graph.size < 20000 else 1)
    progress(0.6, "Placing boxes")
    graph.place_x(iterations=2 if graph.size < 20000 else 1)
    graph.straighten_chains()
    return Placement(graph, src, dst, reversed_, keep)


def _never() -> None:
    """A cancel check that never cancels."""


def _topological_positions(n: int, src: np.ndarray, dst: np.ndarray, top: np.ndarray) -> np.ndarray:
    """Position of each unit in a topological order preferring low rows; cycles are cut at the lowest row."""
    if len(src) == 0 or bool(np.all((src < dst) | top[src])) and not bool(top[dst].any()):
        return np.argsort(np.argsort(~top, kind="stable"), kind="stable")
    indeg = np.zeros(n, np.int64)
    np.add.at(indeg, dst, 1)
    succ = _adjacency(n, src, dst)
    heap = [i for i in range(n) if indeg[i] == 0 or top[i]]
    heapq.heapify(heap)
    placed = np.zeros(n, bool)
    pos = np.zeros(n, np.int64)
    next_free = 0
    count = 0
    while count < n:
        if not heap:  # a cycle: release the lowest unplaced row
            while placed[next_free]:
                next_free += 1
            heap.append(next_free)
        i = heapq.heappop(heap)
        if placed[i]:
            continue
        placed[i] = True
        pos[i] = count
        count += 1
        for j in succ[i]:
            indeg[j] -= 1
            if indeg[j] == 0 and not placed[j]:
                heapq.heappush(heap, j)
    return pos


def _adjacency(n: int, a: np.ndarray, b: np.ndarray) -> list[list[int]]:
    adj: list[list[int]] = [[] for _ in range(n)]
    for i, j in zip(a.tolist(), b.tolist(), strict=True):
        adj[i].append(j)
    return adj


def _layers(n: int, pairs: np.ndarray, order_pos: np.ndarray, top: np.ndarray,
            bottom: np.ndarray) -> np.ndarray:
    """Longest-path layers; sources (constant makers, inputs) and units feeding more units than feed
    them (a Concat of shape values read by every layer) sink next to their first consumer: moving such a
    unit down shortens more edges than it lengthens."""
    order = np.argsort(order_pos).tolist()
    preds = _adjacency(n, pairs[:, 1], pairs[:, 0])
    succs = _adjacency(n, pairs[:, 0], pairs[:, 1])
    base = 1 if bool(top.any()) else 0
    layer = [0] * n
    top_l = top.tolist()
    bottom_l = bottom.tolist()
    for v in order:
        if top_l[v]:
            continue
        layer[v] = max([layer[u] + 1 for u in preds[v]], default=base)
        if layer[v] < base:
            layer[v] = base
    for v in reversed(order):  # sources, and units with more consumers than producers, sink (shorter edges)
        if top_l[v] or bottom_l[v] or not succs[v] or len(preds[v]) >= len(succs[v]):
            continue
        target = min(layer[s] for s in succs[v]) - 1
        if target > layer[v]:
            layer[v] = target
    if bottom.any():
        last = max([layer[v] for v in range(n) if not bottom_l[v]], default=base - 1) + 1
        for v in np.flatnonzero(bottom).tolist():
            layer[v] = max(last, base)
    return np.array(layer, np.int64)


class _Slots:
    """Units plus one dummy per crossed layer, ordered within layers and placed in x."""

    def __init__(self, n: int, layer: np.ndarray, w: np.ndarray, h: np.ndarray, pairs: np.ndarray,
                 offsets: dict[tuple[int, int], tuple[float, float]], check: Callable[[], None]) -> None:
        self.n = n
        self.check = check  # raises when the user cancels; called every CHECK_EVERY layers
        self.layer: list[int] = layer.tolist()
        self.w: list[float] = np.asarray(w, float).tolist()
        self.h: list[float] = np.asarray(h, float).tolist()
        self.rank: list[float] = [float(i) for i in range(n)]
        self.dummy: list[bool] = [False] * n
        self.preds: list[list[int]] = [[] for _ in range(n)]
        self.succs: list[list[int]] = [[] for _ in range(n)]
        self.chains: dict[tuple[int, int], list[int]] = {}
        # x[v] - x[u] that draws link u -> v vertical (ports off the centre), when not 0
        self.delta: dict[tuple[int, int], float] = {}
        # the slots an edge of a unit's (leaving at one spot) passes, shared by its other edges: a producer
        # with far consumers sends one trunk down that its edges leave next to each consumer
        self.trunks: dict[tuple[int, float], list[int]] = {}
        for a, b in pairs.tolist():
            self._link(a, b, *offsets.get((a, b), (0.0, 0.0)))
        self.size = len(self.layer)
        n_layers = max(self.layer, default=-1) + 1
        self.layers: list[list[int]] = [[] for _ in range(n_layers)]
        for v in sorted(range(self.size), key=self.rank.__getitem__):
            self.layers[self.layer[v]].append(v)
        self.x: list[float] = [0.0] * self.size

    def _link(self, a: int, b: int, out_dx: float, in_dx: float) -> None:
        trunk = self.trunks.setdefault((a, out_dx), [])
        span = self.layer[b] - self.layer[a] - 1
        chain: list[int] = trunk[:span]
        prev = chain[-1] if chain else a
        for lay in range(self.layer[a] + 1 + len(chain), self.layer[b]):
            d = len(self.layer)
            self.layer.append(lay)
            self.w.append(DUMMY_W)
            self.h.append(0.0)
            self.rank.append(self.rank[a] + 0.5)
            self.dummy.append(True)
            self.preds.append([prev])
            self.succs.append([])
            self.succs[prev].append(d)
            chain.append(d)
            trunk.append(d)
            prev = d
        self.succs[prev].append(b)
        self.preds[b].append(prev)
        self.chains[(a, b)] = chain
        if out_dx or in_dx:
            path = [a, *chain, b]
            self.delta[(path[0], path[1])] = out_dx
            self.delta[(path[-2], path[-1])] = self.delta.get((path[-2], path[-1]), 0.0) - in_dx

    # -- ordering -----------------------------------------------------------------------
    def order_layers(self, iterations: int) -> None:
        order_layers(self.layers, self.preds, self.succs, iterations, self.check)

    # -- x placement -------------------------------------------------------------------
    def find_spine(self) -> None:
        """Mark the path through the most real units: it is drawn as one straight vertical line."""
        best = [0] * self.size
        back = [-1] * self.size
        for layer in self.layers:
            for v in layer:
                preds = self.preds[v]
                if preds:
                    u = max(preds, key=lambda p: (best[p], -self.rank[p]))
                    best[v], back[v] = best[u], u
                if not self.dummy[v]:
                    best[v] += 1
        self.spine = [False] * self.size
        self.spine_x: dict[int, float] = {}
        if not self.size:
            return
        v = max(range(self.size), key=lambda k: (best[k], -self.rank[k]))
        path = []
        while v >= 0:
            self.spine[v] = True
            path.append(v)
            v = back[v]
        path.reverse()
        x = 0.0
        self.spine_x[path[0]] = x
        for u, v in zip(path[:-1], path[1:], strict=True):
            x += self.delta.get((u, v), 0.0)
            self.spine_x[v] = x

    def place_x(self, iterations: int) -> None:
        self.find_spine()
        x = self.x
        for layer in self.layers:
            cur = 0.0
            for k, v in enumerate(layer):
                if k:
                    cur += self._separation(layer[k - 1], v)
                x[v] = cur
            spine = [v for v in layer if self.spine[v]]
            shift = x[spine[0]] - self.spine_x[spine[0]] if spine else cur / 2
            for v in layer:
                x[v] -= shift
        for _ in range(iterations):
            for lay in range(1, len(self.layers)):
                self._place_layer(lay, True)
            for lay in range(len(self.layers) - 2, -1, -1):
                self._place_layer(lay, False)
        for lay in range(1, len(self.layers)):
            self._place_layer(lay, True)

    def straighten_chains(self) -> None:
        """Put each 1:1 chain (and each long edge's slots) on one vertical line where there is room.

        Works on final positions and only moves a unit within the free space
        between its neighbours, so nothing starts to overlap.
        """
        index = [0] * self.size
        for layer in self.layers:
            for k, v in enumerate(layer):
                index[v] = k
        chains: list[list[int]] = []
        for v in range(self.size):
            preds = self.preds[v]
            if len(preds) == 1 and len(self.succs[preds[0]]) == 1:
                continue  # not a chain head
            chain = [v]
            while len(self.succs[chain[-1]]) == 1 and len(self.preds[self.succs[chain[-1]][0]]) == 1:
                chain.append(self.succs[chain[-1]][0])
            if len(chain) > 1 and not any(self.spine[u] for u in chain):
                chains.append(chain)
        chains.sort(key=len, reverse=True)
        for chain in chains:
            self._align(chain, index)

    def _align(self, chain: list[int], index: list[int]) -> None:
        x = self.x
        shift = [0.0]  # x[v] - x[chain[0]] when the chain is drawn straight
        for u, v in zip(chain[:-1], chain[1:], strict=True):
            shift.append(shift[-1] + self.delta.get((u, v), 0.0))
        lo, hi = -float("inf"), float("inf")
        for v, d in zip(chain, shift, strict=True):
            layer = self.layers[self.layer[v]]
            k = index[v]
            if k > 0:
                lo = max(lo, x[layer[k - 1]] + self._separation(layer[k - 1], v) - d)
            if k + 1 < len(layer):
                hi = min(hi, x[layer[k + 1]] - self._separation(v, layer[k + 1]) - d)
        if lo > hi:
            return
        starts = sorted(x[v] - d for v, d in zip(chain, shift, strict=True) if not self.dummy[v]) \
            or [x[chain[0]]]
        target = min(max(starts[len(starts) // 2], lo), hi)
        for v, d in zip(chain, shift, strict=True):
            x[v] = target + d

    def _separation(self, a: int, b: int) -> float:
        gap = DUMMY_GAP if self.dummy[a] or self.dummy[b] else BOX_GAP
        return (self.w[a] + self.w[b]) / 2 + gap

    def _place_layer(self, lay: int, down: bool) -> None:
        if lay % CHECK_EVERY == 0:
            self.check()
        layer = self.layers[lay]
        x = self.x
        if len(layer) == 1:   # a layer of one unit (a chain): where it wants, as the fit below would put it
            x[layer[0]] = self._wanted(layer[0], down)[0] - 0.0 + 0.0   # as the sums below: -0.0 too
            return
        targets: list[float] = []
        weights: list[float] = []
        offset = 0.0
        for k, v in enumerate(layer):
            if k:
                offset += self._separation(layer[k - 1], v)
            want, weight = self._wanted(v, down)
            targets.append(want - offset)
            weights.append(weight)
        fitted = _isotonic(targets, weights)
        offset = 0.0
        for k, v in enumerate(layer):
            if k:
                offset += self._separation(layer[k - 1], v)
            x[v] = fitted[k] + offset

    def _wanted(self, v: int, down: bool) -> tuple[float, float]:
        """Where ``v`` would like its centre (under its predecessors or above its successors)."""
        if self.spine[v]:
            return self.spine_x[v], SPINE_WEIGHT
        nb = self.preds[v] if down else self.succs[v]
        x = self.x
        base = DUMMY_WEIGHT if self.dummy[v] else 1.0
        if not nb:
            return x[v], FREE_WEIGHT
        delta = self.delta
        if len(nb) == 1:
            u = nb[0]
            # a link of a chain (u's only neighbour on this side is v) holds on harder
            linked = len(self.succs[u]) == 1 if down else len(self.preds[u]) == 1
            want = x[u] + (delta.get((u, v), 0.0) if down else -delta.get((v, u), 0.0)) if delta else x[u]
            return want, base * CHAIN_WEIGHT if linked else base
        real = [u for u in nb if not self.dummy[u]]
        pick = real if real else nb
        if delta:
            xs = sorted(x[u] + delta.get((u, v), 0.0) if down else x[u] - delta.get((v, u), 0.0)
                        for u in pick)
        else:
            xs = sorted(x[u] for u in pick)
        m = len(xs) // 2
        return (xs[m] if len(xs) % 2 else (xs[m - 1] + xs[m]) / 2), base

    # -- result -----------------------------------------------------------------------
    def _gaps(self, gap_of: float | np.ndarray) -> list[float]:
        """The room below each layer: one for all, or the most any of the layer's units asks for."""
        if not isinstance(gap_of, np.ndarray):
            return [float(gap_of)] * len(self.layers)
        per_unit = gap_of.tolist()
        n = self.n
        return [max(LAYER_GAP, *(per_unit[v] for v in layer if v < n)) for layer in self.layers]

    def _label_lines(self, src: np.ndarray, label_w: np.ndarray) -> list[int]:
        """Per layer, the lines of labels below it to make room for: one, a line more where a label is beside
        a box of its layer that reaches lower than its source (it goes below that box, in steps of a line)
        and one more where labels leaving it could meet (two within reach of each other); one per value
        for a box sending several."""
        reach_of: dict[int, float] = {}
        count: dict[int, int] = {}
        for s, lw in zip(src.tolist(), label_w.tolist(), strict=True):
            if lw > 0:  # a unit sending several labelled values: room for them side by side
                reach_of[s] = reach_of.get(s, 0.0) + lw + LABEL_REACH
                count[s] = count.get(s, 0) + 1
        by_layer: dict[int, list[int]] = {}
        for s in reach_of:
            by_layer.setdefault(self.layer[s], []).append(s)
        lines = [1] * len(self.layers)
        for lay, sources in by_layer.items():
            pos = {v: k for k, v in enumerate(self.layers[lay])}
            spans, lower = [], False
            for s in sources:
                lo, hi = self._label_span(s, reach_of[s], MAX_LEAN)
                if self._taller_beside(lay, pos[s], lo, hi):  # lower down, its edge has slanted further
                    lower = True
                    lo, hi = self._label_span(s, reach_of[s], float("inf"))
                spans.append((lo, hi))
            lines[lay] = min(MAX_LINES, max(max(count[s] for s in sources), 1 + lower + _overlap(spans)))
        return lines

    def _label_span(self, s: int, reach: float, lean: float) -> tuple[float, float]:
        """The x range the labels of unit ``s`` may take: right of a straight edge or one heading right,
        left of one heading left (or of a straight one beside one heading right), as labels.py puts them,
        and as far out as a slanting edge leans (at most ``lean``)."""
        x, delta = self.x, self.delta
        dxs = [x[v] - x[s] - delta.get((s, v), 0.0) for v in self.succs[s]] or [0.0]
        straight = any(abs(d) <= 1.0 for d in dxs)
        right = any(d > 1.0 for d in dxs)
        left = any(d < -1.0 for d in dxs) or (straight and right)
        lo = x[s] - min(max(-min(dxs), 0.0), lean) - reach if left else x[s]
        hi = x[s] + min(max(max(dxs), 0.0), lean) + reach if right or straight else x[s]
        return lo, hi

    def _taller_beside(self, lay: int, k: int, lo: float, hi: float) -> bool:
        """Whether a box of layer ``lay`` within ``lo``..``hi`` reaches lower than its ``k``-th unit."""
        layer, x, w, h = self.layers[lay], self.x, self.w, self.h
        s = layer[k]
        for step in (-1, 1):
            j = k + step
            while 0 <= j < len(layer) and x[layer[j]] - w[layer[j]] / 2 < hi and lo < x[layer[j]] + w[layer[j]] / 2:
                if h[layer[j]] > h[s]:
                    return True
                j += step
        return False

    def result(self, src: np.ndarray, dst: np.ndarray, reversed_: np.ndarray,
               gap_of: float | np.ndarray, label_w: np.ndarray | None = None,
               entry_gap: float = LAYER_GAP / 2) -> LevelLayout:
        n_layers = len(self.layers)
        heights = [max((self.h[v] for v in layer), default=0.0) for layer in self.layers]
        gaps = self._gaps(gap_of)
        if label_w is not None:
            forward = ~reversed_
            lines = self._label_lines(src[forward], label_w[forward])
            gaps = [max(g, LAYER_GAP + (k - 1) * LABEL_LINE) for g, k in zip(gaps, lines, strict=True)]
        band_top = np.zeros(n_layers)
        y = 0.0
        for lay in range(n_layers):
            band_top[lay] = y
            # port layers (zero height) hug the frame: the entry gap below the entry ports; above the exit
            # ports half a gap and the room of the labels beyond one line (left to right: the entry gap)
            port_next = lay + 1 < n_layers and heights[lay + 1] == 0 and lay + 1 == n_layers - 1
            exit_gap = gaps[lay] - LAYER_GAP / 2 if label_w is not None else entry_gap
            if heights[lay] == 0:
                y += entry_gap if lay == 0 and n_layers > 1 else LAYER_GAP / 2
            else:
                y += heights[lay] + (exit_gap if port_next else gaps[lay])
        band_bottom = band_top + np.array(heights)
        layer = np.array(self.layer, np.int64)
        w = np.array(self.w)
        xs = np.array(self.x) - w / 2
        if len(xs):
            xs -= float(np.min(xs))
        ys = band_top[layer] if n_layers else np.zeros(0)
        chains = []
        for s, t, r in zip(src.tolist(), dst.tolist(), reversed_.tolist(), strict=True):
            chains.append(self.chains.get((t, s) if r else (s, t), []))
        return LevelLayout(
            n_units=self.n, x=xs, y=np.asarray(ys, float), w=w, h=np.array(self.h), layer=layer,
            band_top=band_top, band_bottom=band_bottom, edge_src=src, edge_dst=dst,
            edge_chain=chains, edge_reversed=reversed_,
        )


def _overlap(spans: list[tuple[float, float]]) -> bool:
    """Whether two of the ranges (lo, hi) overlap."""
    end = -float("inf")
    for lo, hi in sorted(spans):
        if lo < end:
            return True
        end = max(end, hi)
    return False


def _isotonic(values: list[float], weights: list[float]) -> list[float]:
    """Weighted least-squares non-decreasing fit (pool adjacent violators)."""
    means: list[float] = []
    wsum: list[float] = []
    sizes: list[int] = []
    for v, wt in zip(values, weights, strict=True):
        means.append(v)
        wsum.append(wt)
        sizes.append(1)
        while len(means) > 1 and means[-2] > means[-1]:
            m2, w2, s2 = means.pop(), wsum.pop(), sizes.pop()
            total = wsum[-1] + w2
            means[-1] = (means[-1] * wsum[-1] + m2 * w2) / total
            wsum[-1] = total
            sizes[-1] += s2
    out: list[float] = []
    for m, s in zip(means, sizes, strict=True):
        out.extend([m] * s)
    return out
