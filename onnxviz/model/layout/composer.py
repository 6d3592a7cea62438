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

import numpy as np

from onnxviz.model.layout.blocks import UNIT_BLOCK, UNIT_GROUP, UNIT_ITEM, Block
from onnxviz.model.layout.groups import GroupTree
from onnxviz.model.layout.layers import LevelLayout
from onnxviz.model.layout.scene import BoxKind, BoxRef, Scene
from onnxviz.model.layout.scope import BoxText, ScopeGraph
from onnxviz.model.layout.util import distinct_ids, tolist_in_slices, unique_rows

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


class _Composer:
    def __init__(self, levels: Levels) -> None:
        self.levels = levels
        self.n_items = levels.graph.n_items
        self.blocks = levels.blocks
        self.origin: dict[int, Point] = {}
        # made by level_routes, for the edges of every level one level after another:
        self.edge_start: dict[int, int] = {}      # per level: its first edge among them
        self.level_route: list[int] = []          # per edge: its route in its layout's place (-1: none)
        self.level_route_array = np.zeros(0, np.int64)
        self.edge_level = np.zeros(0, np.int64)  # per edge: its level
        self.row_of_code = np.zeros(0, np.int64)  # per unit code: its row among every level's rows, -1 if none
        self.edge_keys = np.zeros(0, np.int64)   # the edges by (their ends' rows, value), sorted
        self.edge_order = np.zeros(0, np.int64)  # the edge at each place there
        self.edge_hi = (0, 0)                     # the rows' and the values' count in those keys
        self.route_points: list[Point] = []   # every such route's points, one after another
        self.route_start: list[int] = []      # per route: its first point there
        self.chains: dict[int, list[int]] = {}
        self.scene = Scene(scope=levels.scope)
        self.code_box: dict[int, int] = {}
        tree = levels.tree
        self.item_group: list[int] = tree.item_group.tolist()
        self.group_parent: list[int] = tree.parent.tolist()
        # per unit code (and a last -1): the group whose level holds it (home_of)
        self.home = np.concatenate([tree.item_group[:self.n_items], tree.parent[:tree.n_groups], [-1]])

    # -- boxes ----------------------------------------------------------------------------
    def place_boxes(self) -> None:
        sg, tree = self.levels.graph, self.levels.tree
        item_texts, group_texts = self.levels.item_texts, self.levels.group_texts
        xs: list[float] = []
        ys: list[float] = []
        ws: list[float] = []
        hs: list[float] = []
        kinds: list[int] = []
        cats: list[int] = []
        frames: list[tuple[str, tuple[float, float, float, float], int]] = []
        s = self.scene
        stack: list[tuple[int, float, float]] = [(-1, 0.0, 0.0)]
        while stack:
            g, ox, oy = stack.pop()
            block = self.blocks[g]
            self.origin[g] = (ox, oy)
            lay = block.lay
            plain = lay.plain()
            for row, (kind, ref) in enumerate(zip(block.kind.tolist(), block.ref.tolist(), strict=True)):
                x, y = ox + plain.x[row], oy + plain.y[row]
                if kind == UNIT_BLOCK:
                    sub = self.blocks[ref]
                    frames.append((tree.paths[ref], (x, y, plain.w[row], plain.h[row]), int(tree.depth[ref])))
                    stack.append((ref, x + sub.pad_x, y + sub.pad_top))
                    continue
                if kind not in (UNIT_ITEM, UNIT_GROUP):
                    continue
                if kind == UNIT_ITEM:
                    text = item_texts[ref]
                    item_kind = sg.item_kind[ref]
                    node = sg.item_node[ref]
                    s.box_ref.append(BoxRef(item_kind, node=node, value=sg.item_value[ref]))
                    code = ref
                else:
                    text = group_texts[ref]
                    item_kind = BoxKind.GROUP
                    s.box_ref.append(BoxRef(BoxKind.GROUP, group=tree.paths[ref]))
                    code = self.n_items + ref
                self.code_box[code] = len(xs)
                xs.append(x)
                ys.append(y)
                ws.append(plain.w[row])
                hs.append(plain.h[row])
                kinds.append(int(item_kind))
                cats.append(int(text.category))
                s.box_title.append(text.title)
                s.box_name.append(text.name)
                s.box_lines.append(text.lines)
        s.box_x = np.array(xs, np.float32)
        s.box_y = np.array(ys, np.float32)
        s.box_w = np.array(ws, np.float32)
        s.box_h = np.array(hs, np.float32)
        s.box_kind = np.array(kinds, np.int8)
        s.box_category = np.array(cats, np.int8)
        frames.sort(key=lambda f: f[2])
        s.group_path = [f[0] for f in frames]
        s.group_rect = np.array([f[1] for f in frames], np.float32).reshape(-1, 4)
        s.group_depth = np.array([f[2] for f in frames], np.int16)

    def box_of_code(self) -> np.ndarray:
        """Per unit code (and a last -1): the box showing it, -1 if none."""
        box_of_code = np.full(self.n_items + self.levels.tree.n_groups + 1, -1, np.int64)
        if self.code_box:
            codes = np.fromiter(self.code_box.keys(), np.int64)
            box_of_code[codes] = np.fromiter(self.code_box.values(), np.int64)
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
        same = self.same_level(triples)
        pieces: list[tuple[int, int]] = []   # each edge's routes in its levels, one edge after another
        counts: list[int] = []
        for (a, b, v), sb, db, route, level in zip(tolist_in_slices(triples), srcs.tolist(), dsts.tolist(),
                                                   *same, strict=True):
            if route >= 0:
                pieces.append((route, level))
                counts.append(1)
                continue
            found = self.route(a, b, v, sb, db)
            pieces += found
            counts.append(len(found))
        vids = triples[:, 2].tolist()
        s.edge_value = [sg.values[v] for v in vids]
        s.edge_src = srcs.astype(np.int32)
        s.edge_dst = dsts.astype(np.int32)
        s.edge_points, s.edge_offsets = self._points(pieces, counts)
        return vids

    def same_level(self, triples: np.ndarray) -> tuple[list[int], list[int]]:
        """Per edge (unit, unit, value) with both ends in one level (the common case): its route there and the
        level, looked up for all edges at once among the levels' edges; -1 and -1 for the others."""
        self.level_routes()
        route = np.full(len(triples), -1, np.int64)
        level = route.copy()
        if len(self.edge_keys) and len(triples):
            a, b, v = triples.T
            src, dst = self.row_of_code[a], self.row_of_code[b]
            rows, hi = self.edge_hi
            key = (src * rows + dst) * hi + v
            at = np.minimum(np.searchsorted(self.edge_keys, key), len(self.edge_keys) - 1)
            same = (src >= 0) & (dst >= 0) & (v < hi) & (self.edge_keys[at] == key) \
                & (self.edge_level[self.edge_order[at]] == self.home[a]) & (self.home[a] == self.home[b])
            edge = self.edge_order[at[same]]
            route[same] = self.level_route_array[edge]
            level[same] = self.edge_level[edge]
        return route.tolist(), level.tolist()

    def _points(self, pieces: list[tuple[int, int]], counts: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """The edges' points (each piece's route moved to its level's place, in one pass over arrays: repeated
        levels share their routes) and each edge's first point there."""
        start = np.array([*self.route_start, len(self.route_points)], np.int64)
        if not pieces:
            return np.zeros((0, 2), np.float32), np.zeros(len(counts) + 1, np.int64)
        route, level = np.array(pieces, np.int64).reshape(-1, 2).T
        lengths = (start[1:] - start[:-1])[route]
        first = np.cumsum(lengths) - lengths   # each piece's first point among the edges'
        index = np.arange(int(lengths.sum())) + np.repeat(start[route] - first, lengths)
        levels = list(self.origin)
        slot = {g: k for k, g in enumerate(levels)}
        origin = np.array([self.origin[g] for g in levels], np.float64).reshape(-1, 2)
        local = np.array(self.route_points, np.float64).reshape(-1, 2)
        moved = local[index] + origin[np.repeat([slot[g] for g in level.tolist()], lengths)]
        piece_end = np.cumsum(lengths)
        edge_end = piece_end[np.cumsum(counts) - 1] if counts else np.zeros(0, np.int64)
        return moved.astype(np.float32), np.concatenate([[0], edge_end]).astype(np.int64)

    def home_of(self, code: int) -> int:
        """Group whose level holds unit ``code`` (item id, or n_items + group id); -1 for the root."""
        return self.item_group[code] if code < self.n_items else self.group_parent[code - self.n_items]

    def chain(self, g: int) -> list[int]:
        found = self.chains.get(g)
        if found is None:
            found = self.chains[g] = self.levels.tree.chain(g)
        return found

    def route(self, a: int, b: int, v: int, sb: int, db: int) -> list[tuple[int, int]]:
        """The edge from unit ``a`` to unit ``b`` (value ``v``; boxes ``sb``, ``db``): its (route, level) pieces."""
        try:
            return self._route(a, b, v)
        except KeyError:  # not expected; never lose an edge over it
            s = self.scene
            self.origin.setdefault(ABSOLUTE, (0.0, 0.0))
            return [(self._new_route([(float(s.box_x[sb] + s.box_w[sb] / 2), float(s.box_y[sb] + s.box_h[sb])),
                                      (float(s.box_x[db] + s.box_w[db] / 2), float(s.box_y[db]))]), ABSOLUTE)]

    def _route(self, a: int, b: int, v: int) -> list[tuple[int, int]]:
        n = self.n_items
        home_a, home_b = self.home_of(a), self.home_of(b)
        if home_a == home_b:  # the common case: both ends in one level
            block = self.blocks[home_a]
            return [self.segment(home_a, block.edge_of[(block.row_of[a], block.row_of[b], v)])]
        up = self.chain(home_a)
        down = self.chain(home_b)
        k = 0
        while k < len(up) and k < len(down) and up[k] == down[k]:
            k += 1
        pieces: list[tuple[int, int]] = []
        code = a
        for level in reversed(up[k:]):
            block = self.blocks[level]
            pieces.append(self.segment(level, block.edge_of[(block.row_of[code], block.out_port[v], v)]))
            code = n + level
        lca = up[k - 1] if k else -1
        block = self.blocks[lca]
        target = b if k == len(down) else n + down[k]
        pieces.append(self.segment(lca, block.edge_of[(block.row_of[code], block.row_of[target], v)]))
        for j in range(k, len(down)):
            level = down[j]
            block = self.blocks[level]
            target = b if j == len(down) - 1 else n + down[j + 1]
            pieces.append(self.segment(level, block.edge_of[(block.in_port[v], block.row_of[target], v)]))
        return pieces

    def segment(self, level: int, e: int) -> tuple[int, int]:
        """Edge ``e`` of ``level``'s layout: (its route in the layout's own place, the level)."""
        route = self.level_route[self.edge_start[level] + e]
        if route < 0:
            raise KeyError((level, e))
        return route, level

    def level_routes(self) -> None:
        """Every edge of every level: its route in its layout's own place, for all levels at once. Repeated
        levels share their layout: a route is made once per (layout, edge, source port's and target port's
        offsets), then moved to each level. An edge from or to a nested frame leaves or enters at the port of its
        value there (-1: no such port)."""
        levels = list(self.blocks)
        lay_slot: dict[int, int] = {}
        lays: list[LevelLayout] = []
        kinds, refs, vals, srcs, dsts, xs, ws = [], [], [], [], [], [], []
        lay_of: list[int] = []
        n_edges: list[int] = []
        port_level: list[int] = []
        port_val: list[int] = []
        port_row: list[int] = []
        port_out: list[int] = []
        slot_of = np.full(self.levels.tree.n_groups + 1, -1, np.int64)
        rows = edges = 0
        for k, g in enumerate(levels):
            block = self.blocks[g]
            lay = block.lay
            slot_of[g] = k
            self.edge_start[g] = edges
            n = len(block.edge_val)
            lay_of.append(lay_slot.setdefault(id(lay), len(lay_slot)))
            if len(lay_slot) > len(lays):
                lays.append(lay)
            n_edges.append(n)
            kinds.append(block.kind)
            refs.append(block.ref)
            vals.append(block.edge_val)
            srcs.append(lay.edge_src[:n] + rows)
            dsts.append(lay.edge_dst[:n] + rows)
            xs.append(lay.x[:len(block.kind)])
            ws.append(lay.w[:len(block.kind)])
            for ports, out in ((block.in_port, 0), (block.out_port, 1)):
                port_level += [k] * len(ports)
                port_val += ports.keys()
                port_row += [rows + r for r in ports.values()]
                port_out += [out] * len(ports)
            rows += len(block.kind)
            edges += n
        self.level_route = [-1] * edges
        if not edges:
            return
        kind, ref = np.concatenate(kinds), np.concatenate(refs)
        self.edge_level = np.repeat(np.array(levels, np.int64), n_edges)
        x, w = (np.concatenate(a).astype(np.float64) for a in (xs, ws))
        val, src, dst = (np.concatenate(a).astype(np.int64) for a in (vals, srcs, dsts))
        # each box's or frame's unit code and row among all levels' rows; each level edge by its ends' rows, value
        unit = np.flatnonzero(kind <= UNIT_BLOCK)
        self.row_of_code = np.full(self.n_items + self.levels.tree.n_groups + 1, -1, np.int64)
        self.row_of_code[np.where(kind[unit] == UNIT_ITEM, ref[unit], self.n_items + ref[unit])] = unit
        self.edge_hi = (rows, int(val.max()) + 1)
        keys = (src * rows + dst) * self.edge_hi[1] + val
        self.edge_order = np.argsort(keys, kind="stable")
        self.edge_keys = keys[self.edge_order]
        counts = np.array(n_edges, np.int64)
        lay_k = np.repeat(np.array(lay_of, np.int64), counts)
        e = np.arange(edges) - np.repeat(np.cumsum(counts) - counts, counts)
        # each port's offset from its frame's centre (Block.port_dx), found by (frame's level, out or in, value)
        pad_x = np.array([self.blocks[g].pad_x for g in levels], np.float64)
        width = np.array([self.blocks[g].width for g in levels], np.float64)
        p_level, p_row = np.array(port_level, np.int64), np.array(port_row, np.int64)
        p_dx = pad_x[p_level] + x[p_row] + w[p_row] / 2 - width[p_level] / 2
        hi = max(int(val.max()), max(port_val, default=0)) + 1
        p_key = (p_level * 2 + np.array(port_out, np.int64)) * hi + np.array(port_val, np.int64)
        order = np.argsort(p_key, kind="stable")
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
        level_route = np.full(edges, -1, np.int64)
        level_route[good] = np.array(made, np.int64)[route]
        self.level_route, self.level_route_array = level_route.tolist(), level_route

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
