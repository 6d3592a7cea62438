"""The graph layout: a :class:`~onnxviz.model.layout.scene.Scene` for one scope of a model.

The scope is laid out level by level: the root holds top-level nodes,
terminals and groups; each expanded group is a nested block laid out on its
own (:mod:`onnxviz.model.layout.blocks`, :mod:`onnxviz.model.layout.layers`)
and cached. Expanding or collapsing a group lays out only that group and then
resizes it in place in each enclosing level, pushing what is beside and below
it; the rest of the drawing does not move.

Small scopes open fully expanded, big ones as an overview of collapsed groups
(a big graph whose node names form no groups is split into runs of nodes).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING

import numpy as np

from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.layout.blocks import (
    ENTRY_GAP,
    UNIT_BLOCK,
    UNIT_GROUP,
    UNIT_IN,
    UNIT_ITEM,
    UNIT_OUT,
    Block,
)
from onnxviz.model.layout.composer import Levels, compose_scene
from onnxviz.model.layout.groups import MAX_DEPTH, GroupTree, build_groups, group_path_of
from onnxviz.model.layout.labels import label_room, label_width
from onnxviz.model.layout.layers import (
    DUMMY_W,
    LAYER_GAP,
    LAYER_GAP_ACROSS,
    PORT_GAP_ACROSS,
    LevelLayout,
    Placement,
    place_units,
)
from onnxviz.model.layout.options import LEFT_TO_RIGHT, LayoutOptions
from onnxviz.model.layout.scene import BoxKind, Category, Scene
from onnxviz.model.layout.scope import TITLE_CHAR_W, BoxText, ScopeGraph, build_scope_graph, clip, item_text
from onnxviz.model.layout.util import SMALL_ROWS, unique_rows, unique_small
from onnxviz.model.progress import CancelToken, ProgressFn, no_progress
from onnxviz.model.text import label_shape_text

if TYPE_CHECKING:
    from onnx import TypeProto

SMALL_SCOPE = 400      # scopes up to this many nodes open with every group expanded
WRAPPER_SHARE = 0.5    # a group holding more than this share of the nodes opens expanded
AUTO_GROUP_NODES = 5000  # above this, a graph without name scopes is shown in runs of nodes
AUTO_GROUP_SIZE = 500
EDGE_NAME_TEXT = 40    # characters of a tensor name shown on its edge
PROGRESS_STEP = 0.005   # the least move of the progress reported (at most 200 reports per text)
KEEP_PLACEMENT = 1000  # levels of this many units keep their placement (relabelling lays out only the gaps again)


@dataclass(frozen=True)
class _Wiring:
    """One level's units and edges, as rows: entry ports, units (in file order), exit ports."""

    units: np.ndarray                         # unit codes (item id, or n_items + group id)
    in_vals: np.ndarray                       # value id of each entry port
    out_vals: np.ndarray                      # value id of each exit port
    row_of: dict[int, int]                    # unit code -> row
    in_port: dict[int, int]                   # value id -> entry port row
    out_port: dict[int, int]                  # value id -> exit port row
    triples: np.ndarray                       # (k, 3) distinct (src row, dst row, value id), sorted
    edge_of: dict[tuple[int, int, int], int]  # a row of ``triples`` -> its level edge


class GraphLayout:
    """Lays out one scope; ``build`` runs in a worker thread, the rest is quick."""

    def __init__(self, index: ModelIndex, scope: str = "", expanded: Iterable[str] | None = None,
                 options: LayoutOptions | None = None) -> None:
        self.index = index
        self.scope = scope
        self.options = options or LayoutOptions()   # set before build; edge_names may change before relabel
        self.graph: ScopeGraph = build_scope_graph(index, scope)
        self._plain_tree: GroupTree | None = None   # the tree of the names alone, when runs replaced it
        self._run_of = np.zeros(0, np.int64)        # then: per item, its run of nodes (-1: none)
        self._run_labels: list[str] = []
        self.tree: GroupTree = self._group_tree()
        n = self.graph.n_items
        # made on first need: each item's place in the tree's order, and the edges sorted by their ends' places
        self._by_place: tuple[np.ndarray, list[tuple[np.ndarray, list[list[int]]]]] | None = None
        self._scratch = np.full(n, -1, np.int64)
        self._code_row = np.full(n + self.tree.n_groups, -1, np.int64)   # scratch: unit code -> row
        self._value_row = np.full(len(self.graph.values), -1, np.int64)  # scratch: value id -> port row
        self._wirings: dict[int, _Wiring] = {}   # per level: its units and edges (whatever is expanded)
        self._texts: dict[int, BoxText] = {}
        self._group_texts: dict[int, BoxText] = {}
        self._group_sizes: dict[tuple[int, bool, bool], tuple[float, float]] = {}
        self._blocks: dict[tuple[int, tuple[int, ...]], Block] = {}
        self._shapes: dict[tuple[bytes, ...], LevelLayout] = {}
        self._placements: dict[tuple[bytes, ...], Placement] = {}   # of big levels, kept when labels change
        self._keys: dict[int, tuple[int, ...]] = {}
        self._labels: dict[int, tuple[str, bool]] = {}
        self._shape_texts: dict[bytes, str] = {}   # a type's bytes -> its label text
        self._expanded: set[int] = set()
        self._shown_expanded = np.zeros(0, np.int64)
        self._set_expanded(self._initial_expanded(expanded))
        self._scene = Scene(scope=scope)
        self._vids: list[int] = []   # the value id of each edge of the scene
        self._progress: ProgressFn = no_progress
        self._cancel: CancelToken | None = None
        self._done_items = 0
        self._own_items: list[int] | None = None
        self._said = 0.0
        self._told = (-1.0, "")   # the progress last passed on

    def _group_tree(self) -> GroupTree:
        """Name-scope groups; a big graph whose names form none is split into runs of nodes instead."""
        names = self.graph.item_names()
        tree = build_groups(names)
        node_items = self.graph.node_item[self.graph.node_item >= 0]   # ascending, as the items are
        grouped = int(np.count_nonzero(tree.item_group[node_items] >= 0))
        if len(node_items) <= AUTO_GROUP_NODES or grouped >= len(node_items) / 2:
            return tree
        nodes = node_items.tolist()
        self._plain_tree = tree
        self._run_of = np.full(len(names), -1, np.int64)
        positions = self.graph.item_node
        for start in range(0, len(nodes), AUTO_GROUP_SIZE):
            run = nodes[start:start + AUTO_GROUP_SIZE]
            self._run_of[run] = len(self._run_labels)
            self._run_labels.append(f"nodes {positions[run[0]]}-{positions[run[-1]]}")  # positions, as in the file
            for i in run:
                names[i] = self._grouping_name(i, names[i])
        return build_groups(names)

    def _grouping_name(self, item: int, name: str) -> str:
        """The name the group tree is built from: in a graph split into runs of nodes, inside its run."""
        run = int(self._run_of[item]) if len(self._run_of) else -1
        return f"{self._run_labels[run]}/{name or 'node'}" if run >= 0 else name

    # -- public API ------------------------------------------------------------------
    @property
    def scene(self) -> Scene:
        return self._scene

    @property
    def expanded(self) -> frozenset[str]:
        return frozenset(self.tree.paths[g] for g in self._expanded)

    def build(self, progress: ProgressFn = no_progress, cancel: CancelToken | None = None) -> Scene:
        self._progress, self._cancel, self._done_items, self._said = progress, cancel, 0, 0.0
        self._told = (0.0, "Laying out the graph")
        try:
            progress(*self._told)
            self._block(-1)
            progress(0.95, "Routing edges")
            self._scene = self._compose()
            progress(1.0, "Layout done")
        finally:
            self._progress, self._cancel = no_progress, None
        return self._scene

    def expand(self, group: str) -> Scene:
        """Open ``group`` (and the groups around it, so it shows)."""
        g = self.tree.id_of.get(group)
        if g is not None and any(a not in self._expanded for a in self.tree.chain(g)):
            for a in self.tree.chain(g):
                if a not in self._expanded:
                    self._toggle(a, True)
            self._scene = self._compose()
        return self._scene

    def collapse(self, group: str) -> Scene:
        g = self.tree.id_of.get(group)
        if g is not None and g in self._expanded:
            self._toggle(g, False)
            self._scene = self._compose()
        return self._scene

    def reveal(self, node: int) -> Scene:
        """Expand every group around ``node`` so it has its own box."""
        g = self._group_id_of(node)
        return self.expand(self.tree.paths[g]) if g >= 0 else self._scene

    def group_of(self, node: int) -> str:
        g = self._group_id_of(node)
        return self.tree.paths[g] if g >= 0 else ""

    def group_nodes(self, group: str) -> list[int]:
        """Positions of the nodes inside ``group`` at any depth (those drawn within another box too), ascending."""
        g = self.tree.id_of.get(group)
        if g is None:
            return []
        end = int(self.tree.end[g])
        return [n for n in range(len(self.graph.node_item)) if g <= self._group_id_of(n) < end]

    def relabel(self) -> Scene:
        """The scene again after inference filled ``index.inferred``: new edge labels, and when they differ
        from the drawn ones, the shown levels laid out again, since the room between layers follows the
        labels (a new Scene: the one being drawn is never changed under the painter)."""
        self._labels.clear()
        self._shape_texts.clear()
        labelled = self._labelled(self._scene, self._vids)
        if labelled.edge_label == self._scene.edge_label:
            self._scene = labelled   # the same texts: only whether they were inferred may have changed
            return self._scene
        self._blocks.clear()
        self._shapes.clear()
        self._scene = self._compose()
        return self._scene

    def refresh_nodes(self, nodes: Iterable[int]) -> Scene | None:
        """The scene again after edits that changed only the names, doc strings or non-graph attributes
        of these nodes of the main graph (the index was updated in place, see ``Change.nodes``): their
        boxes get their new texts and nothing moves. None when that would not be what a new layout
        draws: a node whose name puts it in another name-scope group, a box whose size changes, another
        scope. Quick: no level is laid out again.

        Group trees are built from the names; a node whose name places it exactly in the innermost group
        the tree has it in leaves the tree as it was (its old place was that group, or single-node
        groups inside it that are dropped anyway), so positions, group boxes and counts stay right."""
        sg = self.graph
        if self.scope != "":
            return None
        items: set[int] = set()
        for node in nodes:
            if not 0 <= node < len(sg.node_item):
                return None
            item = int(sg.node_item[node])
            if item >= 0:
                if not self._in_its_group(item):
                    return None
                items.add(item)
            else:  # a constant listed inside its readers' boxes: their lines show its shape
                items.update(sg.drawn_readers(node))
        changed: dict[int, BoxText] = {}
        for item in sorted(items):
            old = self._texts.get(item)
            if old is None:
                continue  # never laid out (inside a collapsed group): a later layout reads the new text
            new = item_text(sg, item)
            if new.size(self.options.names) != old.size(self.options.names):
                return None
            if new != old:
                changed[item] = new
        self._texts.update(changed)
        if not changed:
            return self._scene
        scene = self._scene
        titles, names, lines = list(scene.box_title), list(scene.box_name), list(scene.box_lines)
        categories = scene.box_category.copy()
        for item, text in changed.items():
            node = sg.item_node[item]
            box = scene.box_of_node(node)
            ref = scene.box_ref[box] if box >= 0 else None
            if ref is None or ref.kind != BoxKind.OP or ref.node != node:
                continue  # shown by its collapsed group's box
            titles[box], names[box], lines[box], categories[box] = text.title, text.name, text.lines, text.category
        # a new Scene: the one being drawn is never changed under the painter
        self._scene = dataclasses.replace(scene, box_title=titles, box_name=names, box_lines=lines,
                                          box_category=categories)
        return self._scene

    def _in_its_group(self, item: int) -> bool:
        """Whether the item's name places it in the innermost group the tree has it in (in each tree)."""
        name = self.graph.graph.nodes[self.graph.item_node[item]].name
        trees = [(self.tree, self._grouping_name(item, name))]
        if self._plain_tree is not None:  # the runs were chosen from the plain names' tree
            trees.append((self._plain_tree, name))
        for tree, grouping_name in trees:
            g = int(tree.item_group[item])
            if group_path_of(grouping_name) != (tree.paths[g] if g >= 0 else ""):
                return False
        return True

    # -- composing the scene -------------------------------------------------------------
    def _compose(self) -> Scene:
        """The scene of the shown levels, composed from plain data, with its edges labelled."""
        # the shown levels: the root and each shown expanded group; the collapsed groups in them: those whose
        # parent is shown; every item of a laid-out level had its text made then
        shown = np.zeros(self.tree.n_groups + 1, bool)
        shown[[-1, *self._shown_expanded.tolist()]] = True
        blocks = {g: self._block(g) for g in np.flatnonzero(shown[:-1]).tolist() + [-1]}
        groups = np.flatnonzero(shown[self.tree.parent] & ~shown[:-1]).tolist()
        levels = Levels(self.scope, self.graph, self.tree, blocks, MappingProxyType(self._texts),
                        {g: self.group_text(g) for g in groups}, self.visible_codes())
        scene, self._vids = compose_scene(levels)
        return self._labelled(self._oriented(scene), self._vids)

    def _oriented(self, scene: Scene) -> Scene:
        """The scene turned for a left-to-right drawing: every level was laid out top to bottom with
        each box's width and height swapped, so swapping x and y gives boxes their real size, edges
        leaving on the right and group titles along the frames' top."""
        if not self.options.across:
            return scene
        return dataclasses.replace(
            scene, direction=LEFT_TO_RIGHT, box_x=scene.box_y, box_y=scene.box_x, box_w=scene.box_h,
            box_h=scene.box_w, edge_points=np.ascontiguousarray(scene.edge_points[:, ::-1]),
            group_rect=np.ascontiguousarray(scene.group_rect[:, [1, 0, 3, 2]]))

    def _size(self, text: BoxText) -> tuple[float, float]:
        """A box's size as this level lays it out (turned for a left-to-right drawing)."""
        w, h = text.size(self.options.names)
        return (h, w) if self.options.across else (w, h)

    def _group_size(self, g: int) -> tuple[float, float]:
        """:meth:`_size` of group ``g``'s box (kept: relabelling and expanding lay levels out again)."""
        key = (g, self.options.names, self.options.across)
        size = self._group_sizes.get(key)
        if size is None:
            size = self._group_sizes[key] = self._size(self.group_text(g))
        return size

    def _labelled(self, scene: Scene, vids: Iterable[int]) -> Scene:
        """``scene`` with the labels of its edges, whose value ids are ``vids``."""
        labels = [self.edge_label(v) for v in vids]
        return dataclasses.replace(scene, edge_label=[t for t, _ in labels],
                                   edge_inferred=np.array([inf for _, inf in labels], bool))

    def item_text(self, item: int) -> BoxText:
        text = self._texts.get(item)
        if text is None:
            text = self._texts[item] = item_text(self.graph, item)
        return text

    def group_text(self, g: int) -> BoxText:
        text = self._group_texts.get(g)
        if text is None:
            count = int(self.tree.count[g])
            text = self._group_texts[g] = BoxText(clip(self.tree.title(g)), self.tree.paths[g], [f"{count} nodes"],
                                                  Category.GROUP)
        return text

    def edge_label(self, vid: int) -> tuple[str, bool]:
        """(shape text, came from inference?) of value ``vid``."""
        if vid < 0:
            return "", False
        label = self._labels.get(vid)
        if label is None:
            t, inferred = self.index.type_of(self.scope, self.graph.values[vid])
            text = self._shape_label(t)
            if self.options.edge_names:
                name = clip(self.graph.values[vid], EDGE_NAME_TEXT)
                text = f"{name}: {text}" if text else name
            label = self._labels[vid] = (text, bool(inferred and t is not None))
        return label

    def _shape_label(self, t: TypeProto | None) -> str:
        """``label_shape_text(t)``, made once per distinct type (a model's values share a few hundred types:
        at 123k values the texts took ~15% of an expanded layout, a type's bytes ~a tenth of its text's time)."""
        if t is None:
            return label_shape_text(t)
        key = t.SerializeToString()
        text = self._shape_texts.get(key)
        if text is None:
            text = self._shape_texts[key] = label_shape_text(t)
        return text

    def visible_codes(self) -> np.ndarray:
        """Per item: its own id, or ``n_items + group`` of the outermost collapsed group holding it."""
        n = self.graph.n_items
        anc = self.tree.ancestors   # per group (and the root, last): worked out per group, then per item
        expanded = np.zeros(self.tree.n_groups + 1, bool)
        expanded[-1] = True
        if self._expanded:
            expanded[np.fromiter(self._expanded, np.int64, len(self._expanded))] = True
        hidden = (anc >= 0) & ~expanded[anc]
        first = hidden.argmax(axis=1)
        shown_as = np.where(hidden.any(axis=1), anc[np.arange(len(anc)), first], -1)[self.tree.item_group]
        return np.where(shown_as >= 0, n + shown_as, np.arange(n))

    # -- expansion ---------------------------------------------------------------------
    def _initial_expanded(self, expanded: Iterable[str] | None) -> set[int]:
        tree = self.tree
        if expanded is not None:
            return {tree.id_of[p] for p in expanded if p in tree.id_of}
        nodes = int(np.count_nonzero(self.graph.node_item >= 0))
        if nodes <= SMALL_SCOPE:
            return set(range(tree.n_groups))
        return set(np.flatnonzero(tree.count > WRAPPER_SHARE * nodes).tolist())

    def _set_expanded(self, ids: set[int]) -> None:
        """Expanded groups; those inside a collapsed group stay remembered but do not count."""
        self._expanded = ids
        parent = self.tree.parent
        shown: set[int] = set()
        for g in sorted(ids):  # pre-order: parents come first
            if parent[g] < 0 or parent[g] in shown:
                shown.add(g)
        self._shown_expanded = np.array(sorted(shown), np.int64)
        self._keys.clear()

    def _toggle(self, g: int, expand: bool) -> None:
        chain = self.tree.chain(int(self.tree.parent[g])) if g >= 0 else []
        old_keys = {a: self._key(a) for a in [-1, *chain, g]}
        if any((a, old_keys[a]) not in self._blocks for a in [-1, *chain]):
            self._set_expanded(self._expanded | {g} if expand else self._expanded - {g})
            return  # nothing laid out yet: the next build lays out from scratch
        self._set_expanded(self._expanded | {g} if expand else self._expanded - {g})
        child = g
        for level in [*reversed(chain), -1]:
            key = (level, self._key(level))
            if key not in self._blocks:
                old = self._blocks[(level, old_keys[level])]
                row = old.row_of[self.graph.n_items + child]
                if child in self._expanded:  # the new frame's main entry goes where the box was
                    sub = self._block(child)
                    w, h, kind, shift = sub.width, sub.height, UNIT_BLOCK, -sub.main_in_dx()
                    if old.kind[row] == UNIT_BLOCK:  # a frame that grew: keep its entry where it was
                        before = self._blocks[(child, old_keys[child])]
                        shift += before.main_in_dx()
                else:  # the box goes where the old frame's main entry was
                    w, h = self._size(self.group_text(child))
                    kind = UNIT_GROUP
                    shift = self._blocks[(child, old_keys[child])].main_in_dx()
                self._blocks[key] = old.resized(row, w, h, kind, shift)
            child = level

    def _group_id_of(self, node: int) -> int:
        if not 0 <= node < len(self.graph.node_item):
            return -1
        item = int(self.graph.node_item[node])
        if item >= 0:
            return int(self.tree.item_group[item])
        path = group_path_of(self.graph.graph.nodes[node].name)
        while path and path not in self.tree.id_of:
            path = path.rpartition("/")[0]
        return self.tree.id_of.get(path, -1)

    def _key(self, g: int) -> tuple[int, ...]:
        """The shown expanded groups strictly inside ``g``: with ``g`` they determine its block."""
        key = self._keys.get(g)
        if key is None:
            ids = self._shown_expanded
            if g < 0:
                key = tuple(ids.tolist())
            else:
                lo, hi = np.searchsorted(ids, (g + 1, self.tree.end[g])).tolist()
                key = tuple(ids[lo:hi].tolist())
            self._keys[g] = key
        return key

    # -- laying out one level -------------------------------------------------------------
    def _block(self, g: int) -> Block:
        key = (g, self._key(g))
        block = self._blocks.get(key)
        if block is None:
            block = self._blocks[key] = self._lay_out_level(g)
        return block

    def _lay_out_level(self, g: int) -> Block:
        if self._cancel is not None:
            self._cancel.check()
        wiring = self._wirings.get(g)
        if wiring is None:
            wiring = self._wirings[g] = self._wire(g)
        triples = wiring.triples
        kind, ref, w, h = self._unit_table(wiring.units, wiring.in_vals, wiring.out_vals)
        src_dx, dst_dx = self._port_offsets(kind, ref, triples)
        lay = self._level_layout(kind, w, h, triples, src_dx, dst_dx)
        title_w = len(self.tree.title(g)) * TITLE_CHAR_W + 44 if g >= 0 else 0.0  # the title and the - button
        self._report(g)
        return Block(g, kind, ref, lay, wiring.row_of, wiring.in_port, wiring.out_port, wiring.edge_of,
                     triples[:, 2].copy(), min_width=title_w, across=self.options.across).fit_frame()

    def _wire(self, g: int) -> _Wiring:
        """The units of level ``g`` (its items, child groups and ports) and the edges between them."""
        sg = self.graph
        members = self.tree.members(g)
        codes = self._unit_codes(g, members)
        units = _first_by_priority(members, codes)
        edges = self._incident_edges(g, members)
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
        return _Wiring(
            units, in_vals, out_vals, {int(c): n_in + k for k, c in enumerate(units.tolist())},
            {int(v): k for k, v in enumerate(in_vals.tolist())},
            {int(v): n_in + n_units + k for k, v in enumerate(out_vals.tolist())}, triples,
            {(a, b, v): e for e, (a, b, v) in enumerate(triples.tolist())})

    def _wire_small(self, members: np.ndarray, codes: np.ndarray, units: np.ndarray, edges: np.ndarray) -> _Wiring:
        """:meth:`_wire` of a level of a few boxes, in Python's lists and sets (numpy's fixed cost per call was
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
        return _Wiring(units, np.array(in_vals, dtype), np.array(out_vals, dtype), row_of, in_port, out_port,
                       np.array(triples, np.int64).reshape(-1, 3), {t: e for e, t in enumerate(triples)})

    def _port_offsets(self, kind: np.ndarray, ref: np.ndarray,
                      triples: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per level edge: where it leaves / enters a nested group's frame, from the frame's centre."""
        src_dx = np.zeros(len(triples))
        dst_dx = np.zeros(len(triples))
        kinds = kind.tolist()
        if UNIT_BLOCK not in kinds:
            return src_dx, dst_dx
        refs = ref.tolist()
        for e, (a, b, v) in enumerate(triples.tolist()):
            if kinds[a] == UNIT_BLOCK:
                sub = self._block(refs[a])
                src_dx[e] = sub.port_dx(sub.out_port[v])
            if kinds[b] == UNIT_BLOCK:
                sub = self._block(refs[b])
                dst_dx[e] = sub.port_dx(sub.in_port[v])
        return src_dx, dst_dx

    def _level_layout(self, kind: np.ndarray, w: np.ndarray, h: np.ndarray, triples: np.ndarray,
                      src_dx: np.ndarray, dst_dx: np.ndarray) -> LevelLayout:
        """Lay out one level; levels of identical shape (repeated layers) share one result."""
        gap = self._label_room(len(w), triples) if self.options.across else LAYER_GAP
        label_w = None if self.options.across else self._label_widths(kind, triples)
        shape = (kind.tobytes(), w.tobytes(), h.tobytes(), triples[:, :2].tobytes(), src_dx.tobytes(),
                 dst_dx.tobytes(), gap.tobytes() if isinstance(gap, np.ndarray) else b"",
                 b"" if label_w is None else label_w.tobytes())
        lay = self._shapes.get(shape)
        if lay is None:
            placement = self._placements.get(shape[:6])   # the same units and edges, placed before other labels
            if placement is None:
                base = min(0.9, 0.9 * self._done_items / max(1, self.graph.n_items))

                def progress(f: float, text: str) -> None:
                    self._say(base + (0.9 - base) * f, text)
                placement = place_units(w, h, triples[:, 0], triples[:, 1], kind == UNIT_IN, kind == UNIT_OUT,
                                        self._cancel, src_dx, dst_dx, progress if len(w) > 2000 else no_progress)
                if len(w) >= KEEP_PLACEMENT:
                    self._placements[shape[:6]] = placement
            lay = self._shapes[shape] = placement.layout(gap, label_w,
                                                         PORT_GAP_ACROSS if self.options.across else ENTRY_GAP)
        return lay

    def _label_widths(self, kind: np.ndarray, triples: np.ndarray) -> np.ndarray:
        """Per level edge, the width of the label this level draws beside it below its source: one per
        (box, value), none for edges leaving a port or a nested frame (their labels sit elsewhere)."""
        widths: list[float] = []
        seen: set[tuple[int, int]] = set()
        kinds = kind.tolist()
        for a, _b, vid in triples.tolist():
            width = 0.0
            if (kinds[a] == UNIT_ITEM or kinds[a] == UNIT_GROUP) and (a, vid) not in seen:
                seen.add((a, vid))
                text = self.edge_label(vid)[0]
                width = label_width(text) if text else 0.0
            widths.append(width)
        return np.array(widths, float)

    def _label_room(self, n_units: int, triples: np.ndarray) -> np.ndarray:
        """Per unit, the room after it (left to right) that the labels of the values it sends need to lie
        along their edges (labels run along the flow there): at least :data:`LAYER_GAP_ACROSS`."""
        room = np.full(n_units, LAYER_GAP_ACROSS)
        for unit, vid in zip(triples[:, 0].tolist(), triples[:, 2].tolist(), strict=True):
            need = label_room(self.edge_label(vid)[0])
            if need > room[unit]:
                room[unit] = need
        return room

    def _report(self, g: int) -> None:
        if self._own_items is None:   # per group (after the root's, first): the items directly in it
            self._own_items = np.bincount(self.tree.item_group + 1, minlength=self.tree.n_groups + 1).tolist()
        self._done_items += self._own_items[g + 1]
        total = max(1, self.graph.n_items)
        self._say(min(0.9, 0.9 * self._done_items / total), "Laying out the graph")

    def _say(self, fraction: float, text: str) -> None:
        """Report progress, never going backwards, and only when it moved by a step of :data:`PROGRESS_STEP`
        or its text changed: each report is a signal the GUI thread handles (one per level was 27k at 123k
        nodes, ~20% of the window's Expand All)."""
        self._said = max(self._said, fraction)
        told, told_text = self._told
        if self._said - told >= PROGRESS_STEP or text != told_text:
            self._told = (self._said, text)
            self._progress(self._said, text)

    def _unit_codes(self, g: int, members: np.ndarray) -> np.ndarray:
        col = int(self.tree.depth[g]) + 1 if g >= 0 else 0
        if col >= MAX_DEPTH:
            return members.copy()
        child = self.tree.ancestors[self.tree.item_group[members], col]
        return np.where(child >= 0, self.graph.n_items + child, members)

    def _unit_table(self, units: np.ndarray, in_vals: np.ndarray,
                    out_vals: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        n = self.graph.n_items
        kinds = [UNIT_IN] * len(in_vals)
        refs = in_vals.tolist()
        sizes = [(DUMMY_W, 0.0)] * len(in_vals)
        names, across = self.options.names, self.options.across
        for code in units.tolist():
            if code < n:
                kinds.append(UNIT_ITEM)
                refs.append(code)
                w, h = self.item_text(code).size(names)
                sizes.append((h, w) if across else (w, h))
            elif code - n in self._expanded:
                sub = self._block(code - n)
                kinds.append(UNIT_BLOCK)
                refs.append(code - n)
                sizes.append((sub.width, sub.height))
            else:
                kinds.append(UNIT_GROUP)
                refs.append(code - n)
                sizes.append(self._group_size(code - n))
        kinds += [UNIT_OUT] * len(out_vals)
        refs += out_vals.tolist()
        sizes += [(DUMMY_W, 0.0)] * len(out_vals)
        size = np.array(sizes, float).reshape(-1, 2)
        return np.array(kinds, np.int8), np.array(refs, np.int64), size[:, 0], size[:, 1]

    def _incident_edges(self, g: int, members: np.ndarray) -> np.ndarray:
        """The edges from or to ``members``, group ``g``'s items: a run of the tree's order, so the edges whose
        source (target) lies in it are a run of the edges sorted by their source's (target's) place there
        (each group's two runs found at once for all groups, on first need)."""
        if len(members) == self.graph.n_items:
            return np.arange(len(self.graph.e_src))
        if len(members) == 0:
            return np.zeros(0, np.int64)
        if self._by_place is None:
            place = np.empty(len(self.tree.order), np.int64)
            place[self.tree.order] = np.arange(len(place))
            keys = self.tree.item_group[self.tree.order]
            lo = np.searchsorted(keys, np.arange(self.tree.n_groups))   # each group's run of the tree's order
            hi = np.searchsorted(keys, self.tree.end)
            sorts = []
            for ends in (self.graph.e_src, self.graph.e_dst):
                order = np.argsort(place[ends], kind="stable")
                ordered = place[ends][order]
                sorts.append((order, np.stack([np.searchsorted(ordered, lo), np.searchsorted(ordered, hi)], 1).tolist()))
            self._by_place = (place, sorts)
        _place, sorts = self._by_place
        runs = [order[bounds[g][0]:bounds[g][1]] for order, bounds in sorts]
        return unique_small(np.concatenate(runs))


def _first_by_priority(members: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Distinct unit codes ordered by their lowest member item (file order)."""
    if len(members) <= SMALL_ROWS:  # a dict keeps the first of each code, met in ascending members
        seen = dict.fromkeys(code for _m, code in sorted(zip(members.tolist(), codes.tolist(), strict=True)))
        return np.array(list(seen), codes.dtype)
    order = np.argsort(members, kind="stable")
    by_item = codes[order]
    uniq, first = np.unique(by_item, return_index=True)
    return uniq[np.argsort(first, kind="stable")]
