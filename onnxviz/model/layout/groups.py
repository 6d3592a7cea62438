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

    def item_ancestors(self, items: np.ndarray) -> np.ndarray:
        """(len(items), MAX_DEPTH) ancestor ids of each item's innermost group."""
        return self.ancestors[self.item_group[items]]


def build_groups(names: Sequence[str]) -> GroupTree:
    """Group tree of the items named ``names`` (terminals get ``""`` and belong to no group)."""
    raw_ids: dict[str, int] = {}
    raw_parent: list[int] = []
    raw_count: list[int] = []
    # names under one '/' prefix share their groups: parse each prefix once
    keys = [name.rstrip("/").rpartition("/")[0] + "/" if "/" in name else name if "." in name else ""
            for name in names]
    cache: dict[str, int] = {"": -1}
    for key in dict.fromkeys(keys):
        if key:
            levels = scope_levels(key + "x") if key.endswith("/") else scope_levels(key)
            cache[key] = _intern(levels, raw_ids, raw_parent, raw_count)
    item_raw = np.fromiter((cache[k] for k in keys), np.int64, len(names))
    counts = np.zeros(len(raw_parent), np.int64)
    np.add.at(counts, item_raw[item_raw >= 0], 1)
    parent_arr = np.array(raw_parent, np.int64)
    for g in range(len(raw_parent) - 1, -1, -1):  # children always have larger raw ids
        if parent_arr[g] >= 0:
            counts[parent_arr[g]] += counts[g]
    return _preorder(list(raw_ids), parent_arr, counts, item_raw)


def _intern(levels: list[str], ids: dict[str, int], parent: list[int], count: list[int]) -> int:
    gid = -1
    path = ""
    for level in levels:
        path = f"{path}/{level}" if path else level
        found = ids.get(path)
        if found is None:
            found = len(parent)
            ids[path] = found
            parent.append(gid)
            count.append(0)
        gid = found
    return gid


def _preorder(raw_paths: list[str], raw_parent: np.ndarray, counts: np.ndarray,
              item_raw: np.ndarray) -> GroupTree:
    keep = counts >= 2
    # an item whose innermost group was dropped belongs to the nearest kept ancestor
    nearest = np.arange(len(raw_parent))
    for g in range(len(raw_parent)):
        if not keep[g]:
            p = int(raw_parent[g])
            nearest[g] = nearest[p] if p >= 0 else -1
    children: dict[int, list[int]] = {}
    for g in range(len(raw_parent)):
        if keep[g]:
            children.setdefault(int(raw_parent[g]), []).append(g)
    new_id = np.full(len(raw_parent) + 1, -1, np.int64)  # index -1 maps root to -1
    paths: list[str] = []
    parent: list[int] = []
    depth: list[int] = []
    end: list[int] = []
    stack: list[tuple[int, int, int, bool]] = [(c, -1, 0, False) for c in reversed(children.get(-1, []))]
    while stack:
        raw, par, d, done = stack.pop()
        if done:
            end[int(new_id[raw])] = len(paths)
            continue
        new_id[raw] = len(paths)
        paths.append(raw_paths[raw])
        parent.append(par)
        depth.append(d)
        end.append(0)
        stack.append((raw, par, d, True))
        stack.extend((c, int(new_id[raw]), d + 1, False) for c in reversed(children.get(raw, [])))
    n = len(paths)
    nearest_ext = np.append(nearest, -1)  # index -1 (no group) stays -1
    item_group = new_id[nearest_ext[item_raw]]
    ancestors = np.full((n + 1, MAX_DEPTH), -1, np.int64)
    for g in range(n):
        if parent[g] >= 0:
            ancestors[g] = ancestors[parent[g]]
        ancestors[g, depth[g]] = g
    count = np.zeros(n, np.int64)
    np.add.at(count, item_group[item_group >= 0], 1)
    for g in range(n - 1, -1, -1):
        if parent[g] >= 0:
            count[parent[g]] += count[g]
    return GroupTree(
        paths=paths, parent=np.array(parent, np.int64), depth=np.array(depth, np.int64),
        end=np.array(end, np.int64), count=count, ancestors=ancestors, item_group=item_group,
        order=np.argsort(item_group, kind="stable"), id_of={p: g for g, p in enumerate(paths)},
    )
