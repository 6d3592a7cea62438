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
from onnxviz.model.layout.scene import BoxKind, BoxRef, Scene
from onnxviz.model.layout.scope import BoxText, ScopeGraph
from onnxviz.model.layout.util import tolist_in_slices, unique_rows

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
        self.segments: dict[tuple[int, int], tuple[int, int]] = {}   # (level, level edge) -> (route, level)
        self.local_routes: dict[tuple[int, int, float, float | None], int] = {}  # -> a route in a layout's place
        self.route_points: list[Point] = []   # every such route's points, one after another
        self.route_start: list[int] = []      # per route: its first point there
        self.units: dict[int, tuple[list[int], list[int], list[int]]] = {}  # per level: its blocks' rows as lists
        self.chains: dict[int, list[int]] = {}
        self.scene = Scene(scope=levels.scope)
        self.code_box: dict[int, int] = {}
        self.item_group: list[int] = levels.tree.item_group.tolist()
        self.group_parent: list[int] = levels.tree.parent.tolist()

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

    def node_boxes(self, visible: np.ndarray) -> np.ndarray:
        node_item = self.levels.graph.node_item
        box_of_code = np.full(self.n_items + self.levels.tree.n_groups + 1, -1, np.int64)
        if self.code_box:
            codes = np.fromiter(self.code_box.keys(), np.int64)
            box_of_code[codes] = np.fromiter(self.code_box.values(), np.int64)
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
        pieces: list[tuple[int, int]] = []   # each edge's routes in its levels, one edge after another
        counts: list[int] = []
        srcs: list[int] = []
        dsts: list[int] = []
        vids: list[int] = []
        for a, b, v in tolist_in_slices(triples):
            sb, db = self.code_box.get(a, -1), self.code_box.get(b, -1)
            if sb < 0 or db < 0:
                continue
            srcs.append(sb)
            dsts.append(db)
            found = self.route(a, b, v, sb, db)
            pieces += found
            counts.append(len(found))
            vids.append(v)
        s.edge_value = [sg.values[v] for v in vids]
        s.edge_src = np.array(srcs, np.int32)
        s.edge_dst = np.array(dsts, np.int32)
        s.edge_points, s.edge_offsets = self._points(pieces, counts)
        return vids

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
        found = self.segments.get((level, e))
        if found is not None:
            return found
        block = self.blocks[level]
        lay = block.lay
        units = self.units.get(level)
        if units is None:
            units = self.units[level] = (block.kind.tolist(), block.ref.tolist(), block.edge_val.tolist())
        kind, ref, edge_val = units
        plain = lay.plain()
        v, src, dst = edge_val[e], plain.edge_src[e], plain.edge_dst[e]
        src_dx = 0.0
        dst_dx: float | None = None  # a box's own spot for the edge, beside the others into it
        if kind[src] == UNIT_BLOCK:
            sub = self.blocks[ref[src]]
            src_dx = sub.port_dx(sub.out_port[v])
        if kind[dst] == UNIT_BLOCK:
            sub = self.blocks[ref[dst]]
            dst_dx = sub.port_dx(sub.in_port[v])
        # repeated levels share their layout: its route of an edge is made once, then moved to each level
        key = (id(lay), e, src_dx, dst_dx)
        local = self.local_routes.get(key)
        if local is None:
            local = self.local_routes[key] = self._new_route(lay.polyline(e, src_dx, dst_dx))
        found = self.segments[(level, e)] = (local, level)
        return found

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
