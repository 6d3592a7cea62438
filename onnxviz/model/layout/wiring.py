"""The wiring of each level of a scope's drawing: its units (items, child groups, entry and exit ports) and the
edges between them, as rows, made once per level (whatever is expanded inside it)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from onnxviz.model.layout.groups import MAX_DEPTH, GroupTree
from onnxviz.model.layout.scope import ScopeGraph
from onnxviz.model.layout.util import distinct, runs


@dataclass(frozen=True)
class Wiring:
    """One level's units and edges, as rows: entry ports, units (in file order), exit ports."""

    units: np.ndarray                         # unit codes (item id, or n_items + group id)
    in_vals: np.ndarray                       # value id of each entry port
    out_vals: np.ndarray                      # value id of each exit port
    in_port: dict[int, int]                   # value id -> entry port row
    out_port: dict[int, int]                  # value id -> exit port row
    triples: np.ndarray                       # (k, 3) distinct (src row, dst row, value id), sorted: the level's edges


class LevelWiring:
    """The :class:`Wiring` of each level (group) of one scope's tree, made on first need and kept."""

    def __init__(self, graph: ScopeGraph, tree: GroupTree) -> None:
        self.graph = graph
        self.tree = tree
        # made on first need: each item's place in the tree's order, the edges sorted by their ends' places there
        # with each level's runs of them, and each level's run of the tree's order
        self._by_place: tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]], np.ndarray, np.ndarray] | None = None
        self._levels: dict[int, Wiring] = {}

    def of(self, g: int) -> Wiring:
        wiring = self._levels.get(g)
        if wiring is None:
            self.wire_all([g])
            wiring = self._levels[g]
        return wiring

    def wire_all(self, levels: list[int]) -> None:
        """Wire the levels (groups, -1 for the root) not wired yet, all in one pass over arrays: per level, its
        units (items, child groups) and ports, and the edges between them (numpy's fixed cost per level was most of
        a level's wiring, at 61k nodes 13.5k levels of a few boxes)."""
        todo = list(dict.fromkeys(g for g in levels if g not in self._levels))
        if not todo:
            return
        sg, tree = self.graph, self.tree
        n_codes = sg.n_items + tree.n_groups
        place, sorts, lo_of, hi_of = self._places()
        gs = np.array(todo, np.int64)
        lo, hi = lo_of[gs], hi_of[gs]
        col = np.append(tree.depth, -1)[gs] + 1   # the depth column of its child groups (the root: 0)
        # each level's members (its run of the tree's order) and their unit codes, levels one after another
        mem_level, mem_pos = runs(lo, hi)
        members = tree.order[mem_pos]
        codes = self._codes(members, col[mem_level])
        units_level, units = _first_codes(mem_level, members, codes, n_codes)
        # each level's edges: those from or to a member, in ascending order
        parts = [runs(bounds[gs, 0], bounds[gs, 1]) for _order, bounds in sorts]
        edge_level = np.concatenate([parts[0][0], parts[1][0]])
        edge_id = np.concatenate([order[pos] for (order, _b), (_l, pos) in zip(sorts, parts, strict=True)])
        keys = distinct(edge_level * max(1, len(sg.e_src)) + edge_id)
        edge_level, edge_id = keys // max(1, len(sg.e_src)), keys % max(1, len(sg.e_src))
        vals = sg.e_val[edge_id]
        ends = []
        for end in (sg.e_src[edge_id], sg.e_dst[edge_id]):
            p = place[end]
            inside = (lo[edge_level] <= p) & (p < hi[edge_level])
            ends.append(np.where(inside, self._codes(end, col[edge_level]), -1))
        src_code, dst_code = ends
        in_level, in_vals = _pairs(edge_level[src_code < 0], vals[src_code < 0], len(sg.values))
        out_level, out_vals = _pairs(edge_level[dst_code < 0], vals[dst_code < 0], len(sg.values))
        k = len(todo)
        n_in = np.bincount(in_level, minlength=k)
        n_units = np.bincount(units_level, minlength=k)
        unit_row = _ranks(units_level, k) + n_in[units_level]
        in_row = _ranks(in_level, k)
        out_row = _ranks(out_level, k) + (n_in + n_units)[out_level]
        unit_keys, in_keys, out_keys = (units_level * n_codes + units, in_level * len(sg.values) + in_vals,
                                        out_level * len(sg.values) + out_vals)
        src_row = np.where(src_code >= 0, _lookup(unit_keys, unit_row, edge_level * n_codes + src_code),
                           _lookup(in_keys, in_row, edge_level * len(sg.values) + vals))
        dst_row = np.where(dst_code >= 0, _lookup(unit_keys, unit_row, edge_level * n_codes + dst_code),
                           _lookup(out_keys, out_row, edge_level * len(sg.values) + vals))
        keep = src_row != dst_row
        rows = np.stack([edge_level[keep], src_row[keep], dst_row[keep], vals[keep]], 1)
        span = int(rows[:, 1:3].max(initial=0)) + 1   # sorted by (level, source row) then (target row, value)
        first, second = rows[:, 0] * span + rows[:, 1], rows[:, 2] * max(1, len(sg.values)) + rows[:, 3]
        order = np.lexsort((second, first))
        rows, first, second = rows[order], first[order], second[order]
        if len(rows) > 1:
            rows = rows[np.concatenate([[True], (first[1:] != first[:-1]) | (second[1:] != second[:-1])])]
        cut = [np.searchsorted(a, np.arange(k + 1)).tolist() for a in (units_level, in_level, out_level, rows[:, 0])]
        in_list, out_list = in_vals.tolist(), out_vals.tolist()
        for j, g in enumerate(todo):
            (u0, u1), (i0, i1), (o0, o1), (t0, t1) = [(c[j], c[j + 1]) for c in cut]
            level_in, level_out = in_list[i0:i1], out_list[o0:o1]
            first_out = len(level_in) + u1 - u0
            self._levels[g] = Wiring(
                units[u0:u1], in_vals[i0:i1], out_vals[o0:o1],
                {v: r for r, v in enumerate(level_in)}, {v: first_out + r for r, v in enumerate(level_out)},
                rows[t0:t1, 1:])

    def _codes(self, items: np.ndarray, col: np.ndarray) -> np.ndarray:
        """The unit code of each item in a level whose child groups sit at depth column ``col`` of the tree."""
        deep = col >= MAX_DEPTH
        child = self.tree.ancestors[self.tree.item_group[items], np.where(deep, 0, col)]
        return np.where((child >= 0) & ~deep, self.graph.n_items + child, items)

    def _places(self) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]], np.ndarray, np.ndarray]:
        """Each item's place in the tree's order; the edges sorted by their source's (target's) place there, with
        each level's run of them; each level's run of the tree's order (indexed by group id, the root's last)."""
        if self._by_place is None:
            tree = self.tree
            place = np.empty(len(tree.order), np.int64)
            place[tree.order] = np.arange(len(place))
            keys = tree.item_group[tree.order]
            lo = np.append(np.searchsorted(keys, np.arange(tree.n_groups)), 0)
            hi = np.append(np.searchsorted(keys, tree.end), len(tree.order))
            sorts = []
            for ends in (self.graph.e_src, self.graph.e_dst):
                order = np.argsort(place[ends], kind="stable")
                ordered = place[ends][order]
                sorts.append((order, np.stack([np.searchsorted(ordered, lo), np.searchsorted(ordered, hi)], 1)))
            self._by_place = (place, sorts, lo, hi)
        return self._by_place


def _first_codes(level: np.ndarray, members: np.ndarray, codes: np.ndarray, n_codes: int) -> tuple[np.ndarray, np.ndarray]:
    """Per level, its distinct unit codes ordered by their lowest member item (file order): (level, code) rows."""
    by_member = np.lexsort((members, level))
    key = (level * n_codes + codes)[by_member]
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    first = np.ones(len(key), bool)
    first[1:] = sorted_key[1:] != sorted_key[:-1]
    firsts = np.sort(order[first])   # the first place of each (level, code) in member order
    key = key[firsts]
    return key // n_codes, key % n_codes


def _pairs(level: np.ndarray, vals: np.ndarray, span: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct (level, value) pairs, sorted."""
    keys = distinct(level * max(1, span) + vals)
    return keys // max(1, span), keys % max(1, span)


def _ranks(level: np.ndarray, k: int) -> np.ndarray:
    """Each row's place among its level's rows (``level`` ascending)."""
    starts = np.searchsorted(level, np.arange(k))
    return np.arange(len(level)) - starts[level]


def _lookup(keys: np.ndarray, rows: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """The row of each ``wanted`` key among the distinct ``keys`` (-1 where absent)."""
    if len(keys) == 0:
        return np.full(len(wanted), -1, np.int64)
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    at = order[np.minimum(np.searchsorted(ordered, wanted), len(keys) - 1)]
    return np.where(keys[at] == wanted, rows[at], -1)
