"""The wiring of each level of a scope's drawing: its units (items, child groups, entry and exit ports) and the
edges between them, as rows, made once per level (whatever is expanded inside it)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from onnxviz.model.layout.groups import MAX_DEPTH, GroupTree
from onnxviz.model.layout.scope import ScopeGraph
from onnxviz.model.layout.util import SMALL_ROWS, unique_rows, unique_small


@dataclass(frozen=True)
class Wiring:
    """One level's units and edges, as rows: entry ports, units (in file order), exit ports."""

    units: np.ndarray                         # unit codes (item id, or n_items + group id)
    in_vals: np.ndarray                       # value id of each entry port
    out_vals: np.ndarray                      # value id of each exit port
    row_of: dict[int, int]                    # unit code -> row
    in_port: dict[int, int]                   # value id -> entry port row
    out_port: dict[int, int]                  # value id -> exit port row
    triples: np.ndarray                       # (k, 3) distinct (src row, dst row, value id), sorted
    edge_of: dict[tuple[int, int, int], int]  # a row of ``triples`` -> its level edge


class LevelWiring:
    """The :class:`Wiring` of each level (group) of one scope's tree, made on first need and kept."""

    def __init__(self, graph: ScopeGraph, tree: GroupTree) -> None:
        self.graph = graph
        self.tree = tree
        n = graph.n_items
        # made on first need: each item's place in the tree's order, and the edges sorted by their ends' places
        self._by_place: tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]] | None = None
        self._scratch = np.full(n, -1, np.int64)
        self._code_row = np.full(n + tree.n_groups, -1, np.int64)   # scratch: unit code -> row
        self._value_row = np.full(len(graph.values), -1, np.int64)  # scratch: value id -> port row
        self._levels: dict[int, Wiring] = {}

    def of(self, g: int) -> Wiring:
        wiring = self._levels.get(g)
        if wiring is None:
            wiring = self._levels[g] = self.wire(g)
        return wiring

    def wire(self, g: int) -> Wiring:
        """The units of level ``g`` (its items, child groups and ports) and the edges between them."""
        sg = self.graph
        members = self.tree.members(g)
        codes = self._unit_codes(g, members)
        units = first_by_priority(members, codes)
        edges = self._incident_edges(members)
        if len(members) <= SMALL_ROWS and len(edges) <= 4 * SMALL_ROWS:
            return self._wire_small(members, codes, units, edges)
        scratch = self._scratch
        scratch[members] = codes  # temporarily: unit code per member
        src_code = scratch[sg.e_src[edges]]
        dst_code = scratch[sg.e_dst[edges]]
        scratch[members] = -1
        vals = sg.e_val[edges]
        in_vals = unique_small(vals[src_code < 0])
        out_vals = unique_small(vals[dst_code < 0])
        n_in, n_units = len(in_vals), len(units)
        code_row, value_row = self._code_row, self._value_row   # scratch: rows of codes and ports
        code_row[units] = np.arange(n_in, n_in + n_units)
        value_row[in_vals] = np.arange(n_in)
        src_row = np.where(src_code >= 0, code_row[src_code], value_row[vals])
        value_row[in_vals] = -1
        value_row[out_vals] = np.arange(n_in + n_units, n_in + n_units + len(out_vals))
        dst_row = np.where(dst_code >= 0, code_row[dst_code], value_row[vals])
        value_row[out_vals] = -1
        code_row[units] = -1
        triples = np.stack([src_row, dst_row, vals], 1)
        triples = unique_rows(triples[triples[:, 0] != triples[:, 1]])
        return Wiring(
            units, in_vals, out_vals, {int(c): n_in + k for k, c in enumerate(units.tolist())},
            {int(v): k for k, v in enumerate(in_vals.tolist())},
            {int(v): n_in + n_units + k for k, v in enumerate(out_vals.tolist())}, triples,
            {(a, b, v): e for e, (a, b, v) in enumerate(triples.tolist())})

    def _wire_small(self, members: np.ndarray, codes: np.ndarray, units: np.ndarray, edges: np.ndarray) -> Wiring:
        """:meth:`wire` of a level of a few boxes, in Python's lists and sets (numpy's fixed cost per call was
        most of it): the same units, ports and edges."""
        sg = self.graph
        code_of = dict(zip(members.tolist(), codes.tolist(), strict=True))
        vals = sg.e_val[edges].tolist()
        src_code = [code_of.get(x, -1) for x in sg.e_src[edges].tolist()]
        dst_code = [code_of.get(x, -1) for x in sg.e_dst[edges].tolist()]
        in_vals = sorted({v for v, c in zip(vals, src_code, strict=True) if c < 0})
        out_vals = sorted({v for v, c in zip(vals, dst_code, strict=True) if c < 0})
        unit_codes = units.tolist()
        n_in, n_units = len(in_vals), len(unit_codes)
        row_of = {c: n_in + k for k, c in enumerate(unit_codes)}
        in_port = {v: k for k, v in enumerate(in_vals)}
        out_port = {v: n_in + n_units + k for k, v in enumerate(out_vals)}
        rows = {(row_of[a] if a >= 0 else in_port[v], row_of[b] if b >= 0 else out_port[v], v)
                for a, b, v in zip(src_code, dst_code, vals, strict=True)}
        triples = sorted(r for r in rows if r[0] != r[1])
        dtype = sg.e_val.dtype
        return Wiring(units, np.array(in_vals, dtype), np.array(out_vals, dtype), row_of, in_port, out_port,
                      np.array(triples, np.int64).reshape(-1, 3), {t: e for e, t in enumerate(triples)})

    def _unit_codes(self, g: int, members: np.ndarray) -> np.ndarray:
        col = int(self.tree.depth[g]) + 1 if g >= 0 else 0
        if col >= MAX_DEPTH:
            return members.copy()
        child = self.tree.ancestors[self.tree.item_group[members], col]
        return np.where(child >= 0, self.graph.n_items + child, members)

    def _incident_edges(self, members: np.ndarray) -> np.ndarray:
        """The edges from or to ``members``, a group's items: a run of the tree's order, so the edges whose
        source (target) lies in it are a run of the edges sorted by their source's (target's) place there."""
        if len(members) == self.graph.n_items:
            return np.arange(len(self.graph.e_src))
        if len(members) == 0:
            return np.zeros(0, np.int64)
        if self._by_place is None:
            place = np.empty(len(self.tree.order), np.int64)
            place[self.tree.order] = np.arange(len(place))
            sorts = []
            for ends in (self.graph.e_src, self.graph.e_dst):
                order = np.argsort(place[ends], kind="stable")
                sorts.append((order, place[ends][order]))
            self._by_place = (place, sorts)
        place, sorts = self._by_place
        lo = int(place[members[0]])
        runs = [order[np.searchsorted(keys, lo):np.searchsorted(keys, lo + len(members))] for order, keys in sorts]
        return unique_small(np.concatenate(runs))


def first_by_priority(members: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Distinct unit codes ordered by their lowest member item (file order)."""
    if len(members) <= SMALL_ROWS:  # a dict keeps the first of each code, met in ascending members
        seen = dict.fromkeys(code for _m, code in sorted(zip(members.tolist(), codes.tolist(), strict=True)))
        return np.array(list(seen), codes.dtype)
    order = np.argsort(members, kind="stable")
    by_item = codes[order]
    uniq, first = np.unique(by_item, return_index=True)
    return uniq[np.argsort(first, kind="stable")]
