"""Which groups of a scope's tree are open: those asked for, and of them those shown (not inside a closed one)."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from onnxviz.model.layout.groups import GroupTree

SMALL_SCOPE = 400      # scopes up to this many nodes open with every group expanded
WRAPPER_SHARE = 0.5    # a group holding more than this share of the nodes opens expanded


class Expansion:
    """The open groups of one tree; a group inside a closed one stays remembered but does not count."""

    def __init__(self, tree: GroupTree, opened: set[int]) -> None:
        self.tree = tree
        self.opened: set[int] = set()
        self.shown = np.zeros(0, np.int64)   # the shown open groups, ascending (pre-order)
        self._keys: dict[int, tuple[int, ...]] = {}
        self.set(opened)

    @staticmethod
    def first(tree: GroupTree, nodes: int, expanded: Iterable[str] | None) -> set[int]:
        """The groups open at first: those of ``expanded`` (paths); else, in a scope of ``nodes`` nodes, all of
        them when it is small, or those holding most of its nodes."""
        if expanded is not None:
            return {tree.id_of[p] for p in expanded if p in tree.id_of}
        if nodes <= SMALL_SCOPE:
            return set(range(tree.n_groups))
        return set(np.flatnonzero(tree.count > WRAPPER_SHARE * nodes).tolist())

    @property
    def paths(self) -> frozenset[str]:
        return frozenset(self.tree.paths[g] for g in self.opened)

    def set(self, ids: set[int]) -> None:
        """Open the groups ``ids`` (and only them)."""
        self.opened = ids
        parent = self.tree.parent
        shown: set[int] = set()
        for g in sorted(ids):  # pre-order: parents come first
            if parent[g] < 0 or parent[g] in shown:
                shown.add(g)
        self.shown = np.array(sorted(shown), np.int64)
        self._keys.clear()

    def key(self, g: int) -> tuple[int, ...]:
        """The shown open groups strictly inside ``g``: with ``g`` they determine its block."""
        key = self._keys.get(g)
        if key is None:
            ids = self.shown
            if g < 0:
                key = tuple(ids.tolist())
            else:
                lo, hi = np.searchsorted(ids, (g + 1, self.tree.end[g])).tolist()
                key = tuple(ids[lo:hi].tolist())
            self._keys[g] = key
        return key

    def visible_codes(self, n_items: int) -> np.ndarray:
        """Per item: its own id, or ``n_items + group`` of the outermost collapsed group holding it."""
        anc = self.tree.ancestors   # per group (and the root, last): worked out per group, then per item
        expanded = np.zeros(self.tree.n_groups + 1, bool)
        expanded[-1] = True
        if self.opened:
            expanded[np.fromiter(self.opened, np.int64, len(self.opened))] = True
        hidden = (anc >= 0) & ~expanded[anc]
        first = hidden.argmax(axis=1)
        shown_as = np.where(hidden.any(axis=1), anc[np.arange(len(anc)), first], -1)[self.tree.item_group]
        return np.where(shown_as >= 0, n_items + shown_as, np.arange(n_items))
