"""Name-scope groups: ``/encoder/layers.3/attn/MatMul`` or ``layers.3.attn.q.MatMul`` nest.

A node name is split on ``/`` (or, when it has none, on ``.``); the last piece
is the node's own name and the pieces before it are the nested groups. A
numeric piece such as the ``3`` of ``layers.3`` stays with the piece before it,
so ``layers.3`` is one level. Group paths join the levels with ``/``, e.g.
``"layers.3/attn"``. Groups holding a single node are not groups.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

MAX_DEPTH = 12  # deeper name pieces stay in the innermost group
WALK_CHARS = 1 << 16  # a name's prefix is parsed from its parent prefix's when its parts x length are at most this


def dotted_levels(text: str) -> list[str]:
    """``layers.3.attn`` -> ``["layers.3", "attn"]`` (numbers stay with the piece before them)."""
    out: list[str] = []
    for token in text.split("."):
        if not token:
            continue
        if token.isdigit() and out:
            out[-1] = f"{out[-1]}.{token}"
        else:
            out.append(token)
    return out


def scope_levels(name: str) -> list[str]:
    """The nested group levels a node name places the node in (outermost first)."""
    if "/" in name:
        parts = [p for p in name.split("/") if p]
        levels = [lv for part in parts[:-1] for lv in dotted_levels(part)]
    elif "." in name:
        levels = dotted_levels(name)[:-1]
    else:
        return []
    return levels[:MAX_DEPTH]


def group_path_of(name: str) -> str:
    """Innermost group path of a node name, before single-node groups are dropped."""
    return "/".join(scope_levels(name))


@dataclass
class GroupTree:
    """Groups of one scope, numbered in pre-order so a subtree is the id range ``[g, end[g])``."""

    paths: list[str]
    parent: np.ndarray          # parent group id, -1 for top-level groups
    depth: np.ndarray           # 0 for top-level groups
    end: np.ndarray             # subtree of g is ids g .. end[g]-1
    count: np.ndarray           # items in the group and its descendants
    # (n_groups + 1, MAX_DEPTH): ancestor id at each depth, -1 past the group's depth; last row = root
    ancestors: np.ndarray
    item_group: np.ndarray      # innermost group of each item, -1 for none
    order: np.ndarray           # items sorted by innermost group (members of a subtree are contiguous)
    id_of: dict[str, int]
    sorted_keys: np.ndarray | None = None  # item_group[order], for member lookups

    @property
    def n_groups(self) -> int:
        return len(self.paths)

    def title(self, g: int) -> str:
        return self.paths[g].rsplit("/", 1)[-1]

    def members(self, g: int) -> np.ndarray:
        """Items inside group ``g`` at any depth (``g == -1``: every item)."""
        if g < 0:
            return self.order
        if self.sorted_keys is None:
            self.sorted_keys = self.item_group[self.order]
        keys = self.sorted_keys
        lo = int(np.searchsorted(keys, g, side="left"))
        hi = int(np.searchsorted(keys, self.end[g], side="left"))
        return self.order[lo:hi]

    def chain(self, g: int) -> list[int]:
        """``g`` and its ancestors, outermost first."""
        out: list[int] = []
        while g >= 0:
            out.append(g)
            g = int(self.parent[g])
        return out[::-1]


def build_groups(names: Sequence[str]) -> GroupTree:
    """Group tree of the items named ``names`` (terminals get ``""`` and belong to no group)."""
    # names under one '/' prefix share their groups: each prefix is parsed once, from its parent prefix
    keys = [n[:n.rfind("/") + 1] or ("" if "." not in n else n) if n[-1:] != "/" else n.rstrip("/").rpartition("/")[0] + "/"
            for n in names]
    raw = _RawGroups()
    for key in dict.fromkeys(keys):
        raw.of_key(key)
    item_raw = np.fromiter(map(raw.keys.__getitem__, keys), np.int64, len(names))
    depth = np.array(raw.depth, np.int64)
    parent_arr = np.array(raw.parent, np.int64)
    counts = np.bincount(item_raw[item_raw >= 0], minlength=len(raw.parent)).astype(np.int64)
    _add_to_parents(counts, parent_arr, depth)
    return _preorder(raw.paths, parent_arr, depth, counts, item_raw)


class _RawGroups:
    """Groups in the order their paths are first met (a parent before its children)."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.paths: list[str] = []
        self.parent: list[int] = []
        self.depth: list[int] = []              # levels from the top, 1 for a top-level group
        self.keys: dict[str, int] = {"": -1}    # a name's key -> its innermost group

    def of_key(self, key: str) -> int:
        """The innermost group of the names with this key: ``"a/b.3/"`` (the part of a name before its last
        '/'), a dotted name without '/', or ``""``."""
        found = self.keys.get(key)
        if found is not None:
            return found
        if not key.endswith("/"):
            gid = self.keys[key] = self._extend(-1, dotted_levels(key)[:-1])
            return gid
        if key.count("/") * len(key) > WALK_CHARS:   # a freak name: parsed whole (walking up copies each prefix)
            gid = self.keys[key] = self._extend(-1, scope_levels(key + "x"))
            return gid
        cut = key.rfind("/", 0, len(key) - 1) + 1   # the last part starts here; before it, the parent's key
        parent = self.keys.get(key[:cut])
        if parent is None:   # at most 256 deep (parts x length are bounded above)
            parent = self.of_key(key[:cut])
        part = key[cut:-1]
        gid = self.keys[key] = self._extend(parent, dotted_levels(part) if "." in part else (part,)) if part else parent
        return gid

    def _extend(self, gid: int, levels: Sequence[str]) -> int:
        """The group ``levels`` below group ``gid`` (-1: the top), made where missing; at most MAX_DEPTH deep."""
        for level in levels:
            depth = self.depth[gid] if gid >= 0 else 0
            if depth >= MAX_DEPTH:
                break
            path = f"{self.paths[gid]}/{level}" if gid >= 0 else level
            found = self.ids.get(path)
            if found is None:
                found = self.ids[path] = len(self.paths)
                self.paths.append(path)
                self.parent.append(gid)
                self.depth.append(depth + 1)
            gid = found
        return gid


def _add_to_parents(values: np.ndarray, parent: np.ndarray, depth: np.ndarray) -> None:
    """Each group's value plus those of all its descendants, in place (deepest groups first)."""
    for d in range(int(depth.max(initial=0)), 1, -1):
        rows = np.flatnonzero(depth == d)
        np.add.at(values, parent[rows], values[rows])


def _preorder(raw_paths: list[str], raw_parent: np.ndarray, raw_depth: np.ndarray, counts: np.ndarray,
              item_raw: np.ndarray) -> GroupTree:
    """The groups holding two items or more, numbered in pre-order (children in the order they were met)."""
    keep = counts >= 2   # a group's parent holds at least its items: kept groups' ancestors are all kept
    n_raw, top = len(raw_parent), int(raw_depth.max(initial=0))
    # an item whose innermost group was dropped belongs to the nearest kept ancestor
    nearest = np.where(keep, np.arange(n_raw), -1)
    # per kept group, its raw ancestors from the top (-1 after its own depth): sorted, that is pre-order
    chains = np.full((n_raw, max(top, 1)), -1, np.int64)
    for d in range(1, top + 1):
        rows = np.flatnonzero(raw_depth == d)
        if d > 1:
            up = raw_parent[rows]
            nearest[rows] = np.where(keep[rows], rows, nearest[up])
            chains[rows] = chains[up]
        chains[rows, d - 1] = rows
    kept = np.flatnonzero(keep)
    order = kept[np.lexsort(chains[kept].T[::-1])] if len(kept) else kept
    n = len(order)
    new_id = np.full(n_raw + 1, -1, np.int64)   # index -1 maps "no group" to -1
    new_id[order] = np.arange(n)
    parent = new_id[raw_parent[order]]
    depth = raw_depth[order] - 1
    size = np.ones(n, np.int64)
    _add_to_parents(size, parent, depth + 1)
    ancestors = np.full((n + 1, MAX_DEPTH), -1, np.int64)
    ancestors[:n, :chains.shape[1]] = new_id[chains[order]]
    item_group = new_id[np.append(nearest, -1)[item_raw]]
    count = np.bincount(item_group[item_group >= 0], minlength=n).astype(np.int64)
    _add_to_parents(count, parent, depth + 1)
    paths = [raw_paths[g] for g in order.tolist()]
    return GroupTree(
        paths=paths, parent=parent, depth=depth, end=np.arange(n, dtype=np.int64) + size, count=count,
        ancestors=ancestors, item_group=item_group, order=np.argsort(item_group, kind="stable"),
        id_of={p: g for g, p in enumerate(paths)},
    )
