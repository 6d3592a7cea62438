"""Turning the laid-out levels of one scope into one flat :class:`Scene`.

The composer reads plain data only (:class:`Levels`: the scope's graph and group
tree, the shown levels' blocks, the texts of the boxes, which unit shows each
item); the layout engine gathers it and labels the edges afterwards, by the value
ids the composer hands back.

Boxes get absolute positions by walking the nested blocks. An edge between
two visible boxes in different levels is the concatenation of its route in
each level it passes: out of the source's groups through their exit ports,
across the innermost level holding both ends, and into the target's groups
through their entry ports.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from operator import attrgetter

import numpy as np

from onnxviz.model.layout.blocks import UNIT_BLOCK, UNIT_GROUP, UNIT_IN, UNIT_ITEM, UNIT_OUT, Block
from onnxviz.model.layout.groups import GroupTree
from onnxviz.model.layout.scene import BoxKind, BoxRef, Scene
from onnxviz.model.layout.scope import BoxText, ScopeGraph
from onnxviz.model.layout.util import distinct_ids, runs, unique_rows

Point = tuple[float, float]
ABSOLUTE = -2   # the "level" of a route in the scene's own place (at (0, 0))


@dataclass(frozen=True)
class Levels:
    """Everything the composer reads about one laid-out scope.

    A unit code is an item id, or ``n_items + group id`` for a collapsed group.
    """

    scope: str
    graph: ScopeGraph
    tree: GroupTree
    blocks: Mapping[int, Block]          # each shown level: -1 (the root) and every shown expanded group
    item_texts: Mapping[int, BoxText]    # per item id: its box's text (at least every item in those levels)
    group_texts: Mapping[int, BoxText]   # per group id: its box's text (every collapsed group in those levels)
    visible: np.ndarray                  # per item: the unit code of the box showing it


class _Rows:
    """Every shown level's unit rows, one level after another (in ``blocks``' order), as arrays for both the boxes'
    places and the level edges' routes; repeated levels share their layout, whose rows are read once."""

    def __init__(self, blocks: Mapping[int, Block]) -> None:
        self.levels = list(blocks)
        self.blocks = [blocks[g] for g in self.levels]
        self.count = np.array([len(b.kind) for b in self.blocks], np.int64)   # per level: its rows
        self.start = np.cumsum(self.count) - self.count                        # per level: its first row
        self.kind = np.concatenate([b.kind for b in self.blocks])
        self.ref = np.concatenate([b.ref for b in self.blocks]).astype(np.int64)
        lay_slot: dict[int, int] = {}
        self.lay_of = np.array([lay_slot.setdefault(id(b.lay), len(lay_slot)) for b in self.blocks], np.int64)
        self.lays = list({id(b.lay): b.lay for b in self.blocks}.values())   # the distinct layouts
        lay_rows = np.array([len(lay.x) for lay in self.lays], np.int64)
        first = (np.cumsum(lay_rows) - lay_rows)[self.lay_of]
        self.level, at = runs(first, first + self.count)   # per row: its level's place; its layout's row
        self.rect = np.stack([np.concatenate([getattr(lay, a) for lay in self.lays]).astype(np.float64)[at]
                              for a in "xywh"], 1)   # per row: x, y, w, h in its level's own place


class _Composer:
    def __init__(self, levels: Levels) -> None:
        self.levels = levels
        self.n_items = levels.graph.n_items
        self.blocks = levels.blocks
        self.rows = _Rows(levels.blocks)
        self.origin: dict[int, Point] = {}
        # made by level_routes, for the edges of every level one level after another:
        self.level_route = np.zeros(0, np.int64)  # per edge: its route in its layout's place (-1: none)
        self.edge_level = np.zeros(0, np.int64)  # per edge: its level
        self.row_of_code = np.zeros(0, np.int64)  # per unit code: its row among every level's rows, -1 if none
        self.edge_keys = np.zeros(0, np.int64)   # the edges by (their ends' rows, value), sorted
        self.edge_order = np.zeros(0, np.int64)  # the edge at each place there
        self.edge_hi = (0, 0)                     # the rows' and the values' count in those keys
        self.slot_of = np.zeros(0, np.int64)     # per level (and a last: the root): its place among the levels
        self.port_keys = np.zeros(0, np.int64)   # every port by (its level's place, out or in, value), sorted
        self.port_rows = np.zeros(0, np.int64)   # its row among every level's rows
        self.port_hi = 0                          # the values' count in those keys
        self.route_points: list[Point] = []   # every such route's points, one after another
        self.route_start: list[int] = []      # per route: its first point there
        self.scene = Scene(scope=levels.scope)
        self.box_code = np.zeros(0, np.int64)   # per box: the unit code it shows
        tree = levels.tree
        # per unit code (and a last -1): the group whose level holds it
        self.home = np.concatenate([tree.item_group[:self.n_items], tree.parent[:tree.n_groups], [-1]])

    # -- boxes ----------------------------------------------------------------------------
    def place_boxes(self) -> None:
        """Every box's and frame's place: the levels walked for their origins (their nested frames' rows only),
        then the boxes of every level at once, level after level in the walk's order, row after row."""
        r = self.rows
        levels, count, start, kind, ref, level, rect = r.levels, r.count, r.start, r.kind, r.ref, r.level, r.rect
        slot = {g: k for k, g in enumerate(levels)}
        frames = self._walk(slot, kind, ref, rect, start)
        walked = np.array([slot[g] for g in self.origin], np.int64)   # the levels in the walk's order
        rows = runs(start[walked], start[walked] + count[walked])[1]
        rows = rows[kind[rows] <= UNIT_GROUP]   # UNIT_ITEM or UNIT_GROUP
        origin = np.zeros((len(levels), 2))
        origin[walked] = np.array(list(self.origin.values()), np.float64).reshape(-1, 2)
        x, y = origin[level[rows]].T + rect[rows, :2].T
        self._boxes(kind[rows], ref[rows], x, y, rect[rows, 2], rect[rows, 3])
        frames.sort(key=lambda f: f[2])
        s = self.scene
        s.group_path = [f[0] for f in frames]
        s.group_rect = np.array([f[1] for f in frames], np.float32).reshape(-1, 4)
        s.group_depth = np.array([f[2] for f in frames], np.int16)

    def _walk(self, slot: dict[int, int], kind: np.ndarray, ref: np.ndarray, rect: np.ndarray,
              start: np.ndarray) -> list[tuple[str, tuple[float, float, float, float], int]]:
        """Each level's origin (``origin``, in the walk's order: from the root, a level's nested frames pushed
        row after row, the last pushed walked first) and each nested frame: (path, rect, depth)."""
        paths = self.levels.tree.paths
        at = np.flatnonzero(kind == UNIT_BLOCK)
        frames_of: dict[int, list[int]] = {}
        for j, k in enumerate((np.searchsorted(start, at, side="right") - 1).tolist()):
            frames_of.setdefault(k, []).append(j)
        rects, refs = rect[at].tolist(), ref[at].tolist()
        depth = self.levels.tree.depth[ref[at]].tolist()
        found: list[tuple[str, tuple[float, float, float, float], int]] = []
        stack: list[tuple[int, float, float]] = [(-1, 0.0, 0.0)]
        while stack:
            g, ox, oy = stack.pop()
            self.origin[g] = (ox, oy)
            for j in frames_of.get(slot[g], ()):
                (fx, fy, fw, fh), sub = rects[j], refs[j]
                fx, fy = ox + fx, oy + fy
                found.append((paths[sub], (fx, fy, fw, fh), depth[j]))
                block = self.blocks[sub]
                stack.append((sub, fx + block.pad_x, fy + block.pad_top))
        return found

    def _boxes(self, kind: np.ndarray, ref: np.ndarray, x: np.ndarray, y: np.ndarray, w: np.ndarray,
               h: np.ndarray) -> None:
        """The scene's boxes: items' (``kind`` UNIT_ITEM, ``ref`` the item) and collapsed groups' (the group), in
        this order, with their places."""
        sg, tree, s = self.levels.graph, self.levels.tree, self.scene
        item = kind == UNIT_ITEM
        items, groups = ref[item].tolist(), ref[~item].tolist()
        item_kinds = list(map(sg.item_kind.__getitem__, items))
        texts = [*map(self.levels.item_texts.__getitem__, items), *map(self.levels.group_texts.__getitem__, groups)]
        refs = [*map(BoxRef, item_kinds, map(sg.item_node.__getitem__, items), map(sg.item_value.__getitem__, items)),
                *(BoxRef(BoxKind.GROUP, group=tree.paths[g]) for g in groups)]
        kinds = np.array([*item_kinds, *[BoxKind.GROUP] * len(groups)], np.int8)
        at = np.argsort(~item, kind="stable")   # each box's place in those lists: items first, then groups
        place = np.empty(len(at), np.int64)
        place[at] = np.arange(len(at))
        take = place.tolist()
        texts, s.box_ref = list(map(texts.__getitem__, take)), list(map(refs.__getitem__, take))
        s.box_title = list(map(attrgetter("title"), texts))
        s.box_name = list(map(attrgetter("name"), texts))
        s.box_lines = list(map(attrgetter("lines"), texts))
        s.box_category = np.fromiter(map(attrgetter("category"), texts), np.int8, len(texts))
        s.box_kind = kinds[place]
        s.box_x, s.box_y, s.box_w, s.box_h = (a.astype(np.float32) for a in (x, y, w, h))
        self.box_code = np.where(item, ref, self.n_items + ref)

    def box_of_code(self) -> np.ndarray:
        """Per unit code (and a last -1): the box showing it, -1 if none."""
        box_of_code = np.full(self.n_items + self.levels.tree.n_groups + 1, -1, np.int64)
        box_of_code[self.box_code] = np.arange(len(self.box_code))
        return box_of_code

    def node_boxes(self, visible: np.ndarray) -> np.ndarray:
        node_item = self.levels.graph.node_item
        box_of_code = self.box_of_code()
        out = np.where(node_item >= 0, box_of_code[visible[node_item]], -1)
        # a Constant (or a weight's Identity, DequantizeLinear...) listed inside its reader's box is shown by that box
        sg = self.levels.graph
        for node in np.flatnonzero(node_item < 0).tolist():
            readers = sg.drawn_readers(node)
            if readers:
                out[node] = box_of_code[visible[readers[0]]]
        return out

    # -- edges -----------------------------------------------------------------------------
    def route_edges(self, visible: np.ndarray) -> list[int]:
        """Route every edge between two boxes; returns each edge's value id."""
        sg = self.levels.graph
        s = self.scene
        if len(sg.e_src):
            triples = np.stack([visible[sg.e_src], visible[sg.e_dst], sg.e_val], 1)
            triples = triples[triples[:, 0] != triples[:, 1]]
            triples = unique_rows(triples)
        else:
            triples = np.zeros((0, 3), np.int64)
        box_of_code = self.box_of_code()
        srcs, dsts = box_of_code[triples[:, 0]], box_of_code[triples[:, 1]]
        shown = (srcs >= 0) & (dsts >= 0)
        triples, srcs, dsts = triples[shown], srcs[shown], dsts[shown]
        self.level_routes()
        edge, route, level, lost = self.level_pieces(triples)
        if len(lost):   # not expected; never lose an edge over it
            pieces = [np.concatenate(a) for a in zip((edge, route, level), self.straight(lost, srcs, dsts), strict=True)]
            edge, route, level = (a[np.argsort(pieces[0], kind="stable")] for a in pieces)
        vids = triples[:, 2].tolist()
        s.edge_value = [sg.values[v] for v in vids]
        s.edge_src = srcs.astype(np.int32)
        s.edge_dst = dsts.astype(np.int32)
        s.edge_points, s.edge_offsets = self._points(route, level, np.bincount(edge, minlength=len(triples)))
        return vids

    def level_pieces(self, triples: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every edge (unit, unit, value)'s pieces, edge after edge, for all edges at once: its route in each level
        it passes, out of the source's groups through their exit ports (the innermost first), across the innermost
        level holding both ends (the only piece of an edge within one level: the common case), into the target's
        groups through their entry ports. Returns each piece's (edge, route, level), and the edges with a piece
        not found (no pieces of theirs then)."""
        n, tree = self.n_items, self.levels.tree
        a, b, v = (np.asarray(c, np.int64) for c in triples.reshape(-1, 3).T)
        home_a, home_b = self.home[a], self.home[b]
        up, down = tree.ancestors[home_a], tree.ancestors[home_b]   # each chain of groups from the top
        depth = np.append(tree.depth + 1, 0)
        n_up, n_down = depth[home_a], depth[home_b]
        k = ((up == down) & (up >= 0)).sum(1)   # the levels both chains share
        last = up.shape[1] - 1
        edge = np.arange(len(a))

        def at(chain: np.ndarray, rows: np.ndarray, j: np.ndarray) -> np.ndarray:
            return chain[rows, np.minimum(j, last)]

        ue, uj = runs(k, n_up)   # the levels left upwards: from the source's level, its code's row to the exit port
        u_code = np.where(uj == n_up[ue] - 1, a[ue], n + at(up, ue, uj + 1))
        u_level = at(up, ue, uj)
        lca = np.where(k > 0, at(up, edge, k - 1), -1)
        l_code = np.where(n_up == k, a, n + at(up, edge, k))
        l_target = np.where(n_down == k, b, n + at(down, edge, k))
        de, dj = runs(k, n_down)   # the levels entered downwards: from the entry port to the target's row
        d_level = at(down, de, dj)
        d_target = np.where(dj == n_down[de] - 1, b[de], n + at(down, de, dj + 1))
        piece = np.concatenate([ue, edge, de])
        place = np.concatenate([n_up[ue] - 1 - uj, n_up - k, n_up[de] - k[de] + 1 + dj - k[de]])
        level = np.concatenate([u_level, lca, d_level])
        src = np.concatenate([self.row_of_code[u_code], self.row_of_code[l_code], self.port_row(d_level, 0, v[de])])
        dst = np.concatenate([self.port_row(u_level, 1, v[ue]), self.row_of_code[l_target],
                              self.row_of_code[d_target]])
        route = self.level_edge_route(src, dst, v[piece], level)
        lost = np.zeros(len(a), bool)
        lost[piece[route < 0]] = True
        keep = ~lost[piece]
        order = np.lexsort((place[keep], piece[keep]))
        return piece[keep][order], route[keep][order], level[keep][order], np.flatnonzero(lost)

    def port_row(self, level: np.ndarray, out: int, v: np.ndarray) -> np.ndarray:
        """The row of each value's port (exit port if ``out``, else entry port) in each level, -1 if none."""
        slot = self.slot_of[level] if len(self.slot_of) else np.full(len(level), -1, np.int64)
        key = (slot * 2 + out) * self.port_hi + v
        if not len(self.port_keys):
            return np.full(len(level), -1, np.int64)
        at = np.minimum(np.searchsorted(self.port_keys, key), len(self.port_keys) - 1)
        return np.where((slot >= 0) & (v < self.port_hi) & (self.port_keys[at] == key), self.port_rows[at], -1)

    def level_edge_route(self, src: np.ndarray, dst: np.ndarray, v: np.ndarray, level: np.ndarray) -> np.ndarray:
        """The route of each level edge (source row, target row, value) of ``level``, -1 if there is none."""
        if not len(self.edge_keys):
            return np.full(len(src), -1, np.int64)
        rows, hi = self.edge_hi
        key = (src * rows + dst) * hi + v
        at = np.minimum(np.searchsorted(self.edge_keys, key), len(self.edge_keys) - 1)
        edge = self.edge_order[at]
        found = (src >= 0) & (dst >= 0) & (v < hi) & (self.edge_keys[at] == key) & (self.edge_level[edge] == level)
        return np.where(found, self.level_route[edge], -1)

    def straight(self, edges: np.ndarray, srcs: np.ndarray, dsts: np.ndarray) -> tuple[np.ndarray, ...]:
        """A straight line from the source box's bottom to the target box's top for each of ``edges`` (their
        boxes ``srcs``, ``dsts``), in the scene's own place: (edge, route, level) per edge."""
        s = self.scene
        self.origin.setdefault(ABSOLUTE, (0.0, 0.0))
        routes = [self._new_route([(float(s.box_x[sb] + s.box_w[sb] / 2), float(s.box_y[sb] + s.box_h[sb])),
                                   (float(s.box_x[db] + s.box_w[db] / 2), float(s.box_y[db]))])
                  for sb, db in zip(srcs[edges].tolist(), dsts[edges].tolist(), strict=True)]
        return edges, np.array(routes, np.int64), np.full(len(edges), ABSOLUTE, np.int64)

    def _points(self, route: np.ndarray, level: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The edges' points (each piece's route moved to its level's place, in one pass over arrays: repeated
        levels share their routes) and each edge's first point there, from the pieces' routes and levels (edge
        after edge) and each edge's count of pieces."""
        start = np.array([*self.route_start, len(self.route_points)], np.int64)
        if not len(route):
            return np.zeros((0, 2), np.float32), np.zeros(len(counts) + 1, np.int64)
        lengths = (start[1:] - start[:-1])[route]
        first = np.cumsum(lengths) - lengths   # each piece's first point among the edges'
        index = np.arange(int(lengths.sum())) + np.repeat(start[route] - first, lengths)
        levels = np.array(list(self.origin), np.int64)
        slot = np.zeros(int(levels.max()) + 3, np.int64)   # per level + 2 (ABSOLUTE is -2)
        slot[levels + 2] = np.arange(len(levels))
        origin = np.array(list(self.origin.values()), np.float64).reshape(-1, 2)
        local = np.array(self.route_points, np.float64).reshape(-1, 2)
        moved = local[index] + origin[np.repeat(slot[level + 2], lengths)]
        edge_end = np.cumsum(lengths)[np.cumsum(counts) - 1]
        return moved.astype(np.float32), np.concatenate([[0], edge_end]).astype(np.int64)

    def level_routes(self) -> None:
        """Every edge of every level: its route in its layout's own place, for all levels at once. Repeated
        levels share their layout: a route is made once per (layout, edge, source port's and target port's
        offsets), then moved to each level. An edge from or to a nested frame leaves or enters at the port of its
        value there (-1: no such port)."""
        r = self.rows
        levels, blocks = r.levels, r.blocks
        slot_of = np.full(self.levels.tree.n_groups + 1, -1, np.int64)
        slot_of[levels] = np.arange(len(levels))
        self.slot_of = slot_of
        counts = np.array([len(b.edge_val) for b in blocks], np.int64)
        edges = int(counts.sum())
        self.level_route = np.full(edges, -1, np.int64)
        if not edges:
            return
        kind, ref, first_row, row_level, lay_of, lays = r.kind, r.ref, r.start, r.level, r.lay_of, r.lays
        rows = len(kind)
        x, w = r.rect[:, 0], r.rect[:, 2]
        # repeated levels share their layout: each distinct layout's edges once, each level's read from them
        lay_edges = np.array([len(lay.edge_src) for lay in lays], np.int64)
        edge_slot, at = runs((np.cumsum(lay_edges) - lay_edges)[lay_of], (np.cumsum(lay_edges) - lay_edges)[lay_of] + counts)
        src, dst = (np.concatenate([getattr(lay, a) for lay in lays]).astype(np.int64)[at] + first_row[edge_slot]
                    for a in ("edge_src", "edge_dst"))
        val = np.concatenate([b.edge_val for b in blocks]).astype(np.int64)
        self.edge_level = np.array(levels, np.int64)[edge_slot]
        # each box's or frame's unit code and row among all levels' rows; each level edge by its ends' rows, value
        unit = np.flatnonzero(kind <= UNIT_BLOCK)
        self.row_of_code = np.full(self.n_items + self.levels.tree.n_groups + 1, -1, np.int64)
        self.row_of_code[np.where(kind[unit] == UNIT_ITEM, ref[unit], self.n_items + ref[unit])] = unit
        self.edge_hi = (rows, int(val.max()) + 1)
        keys = (src * rows + dst) * self.edge_hi[1] + val
        self.edge_order = np.argsort(keys, kind="stable")
        self.edge_keys = keys[self.edge_order]
        lay_k = lay_of[edge_slot]
        e = np.arange(edges) - (np.cumsum(counts) - counts)[edge_slot]
        # the ports: rows of entry and exit ports (their ref is their value)
        p_row = np.flatnonzero((kind == UNIT_IN) | (kind == UNIT_OUT))
        p_level = row_level[p_row]
        port_val, port_out = ref[p_row].astype(np.int64), (kind[p_row] == UNIT_OUT).astype(np.int64)
        # each port's offset from its frame's centre (Block.port_dx), found by (frame's level, out or in, value)
        pad_x = np.array([b.pad_x for b in blocks], np.float64)
        width = np.array([b.width for b in blocks], np.float64)
        p_dx = pad_x[p_level] + x[p_row] + w[p_row] / 2 - width[p_level] / 2
        hi = max(int(val.max()), int(port_val.max(initial=0))) + 1
        p_key = (p_level * 2 + port_out) * hi + port_val
        order = np.argsort(p_key, kind="stable")
        self.port_keys, self.port_rows, self.port_hi = p_key[order], p_row[order], hi
        p_key, p_dx = np.append(p_key[order], -1), np.append(p_dx[order], np.nan)

        def port(end: np.ndarray, out: int) -> tuple[np.ndarray, np.ndarray]:
            """Per edge: whether its end is a nested frame; the offset of its value's port there (NaN: none)."""
            frame = kind[end] == UNIT_BLOCK
            key = (slot_of[np.where(frame, ref[end], -1)] * 2 + out) * hi + val
            at = np.minimum(np.searchsorted(p_key[:-1], key), len(p_key) - 2)
            at[(p_key[at] != key) | (key < 0)] = -1
            return frame, np.where(frame, p_dx[at], 0.0)

        _, src_dx = port(src, 1)
        dst_frame, dst_dx = port(dst, 0)
        good = np.flatnonzero(~(np.isnan(src_dx) | np.isnan(dst_dx)))
        if not len(good):
            return
        # a route per distinct (layout, edge, source's offset, target's offset or none)
        route, _ = distinct_ids(lay_k[good] * (int(e.max()) + 1) + e[good])
        for offset in (src_dx[good], np.where(dst_frame[good], dst_dx[good], -np.inf)):
            ids, _ = distinct_ids(offset)
            route, first = distinct_ids(route * (int(ids.max()) + 1) + ids)
        made = [self._new_route(lays[k].polyline(j, sdx, ddx if frame else None))
                for k, j, sdx, ddx, frame in zip(*(a[good[first]].tolist() for a in (lay_k, e, src_dx, dst_dx,
                                                                                       dst_frame)), strict=True)]
        self.level_route[good] = np.array(made, np.int64)[route]

    def _new_route(self, points: list[Point]) -> int:
        self.route_start.append(len(self.route_points))
        self.route_points += points
        return len(self.route_start) - 1


def compose_scene(levels: Levels) -> tuple[Scene, list[int]]:
    """The scene of ``levels``, its edges not labelled yet (``edge_label`` is empty), and each edge's value id."""
    composer = _Composer(levels)
    composer.place_boxes()
    vids = composer.route_edges(levels.visible)
    composer.scene.node_box = composer.node_boxes(levels.visible)
    return composer.scene, vids
