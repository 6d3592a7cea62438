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
from types import MappingProxyType

import numpy as np

from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.layout.blocks import ENTRY_GAP, UNIT_BLOCK, UNIT_GROUP, UNIT_IN, UNIT_ITEM, UNIT_OUT, Block
from onnxviz.model.layout.composer import Levels, compose_scene
from onnxviz.model.layout.expansion import Expansion
from onnxviz.model.layout.grouping import Grouping
from onnxviz.model.layout.groups import GroupTree
from onnxviz.model.layout.layers import (
    DUMMY_W,
    LAYER_GAP,
    PORT_GAP_ACROSS,
    LevelLayout,
    Placement,
    place_units,
)
from onnxviz.model.layout.options import LEFT_TO_RIGHT, LayoutOptions
from onnxviz.model.layout.scene import BoxKind, Scene
from onnxviz.model.layout.scope import TITLE_CHAR_W, BoxText, ScopeGraph, build_scope_graph, item_text
from onnxviz.model.layout.texts import LayoutTexts
from onnxviz.model.layout.util import runs
from onnxviz.model.layout.wiring import LevelWiring, Wiring
from onnxviz.model.progress import CancelToken, ProgressFn, no_progress

CANCEL_ITEMS = 20_000  # box texts made between two checks of the cancel
PROGRESS_STEP = 0.005   # the least move of the progress reported (at most 200 reports per text)
KEEP_PLACEMENT = 1000  # levels of this many units keep their placement (relabelling lays out only the gaps again)


@dataclasses.dataclass(frozen=True)
class _Units:
    """One level's unit rows before it is laid out (its nested frames' rows get their sizes then)."""

    kind: np.ndarray                # UNIT_* per row
    ref: np.ndarray                 # item id, group id or value id per row
    w: np.ndarray
    h: np.ndarray
    label_w: np.ndarray | None      # per level edge (None left to right: the labels lie along the edges)
    frames: list[int]               # rows of nested frames


class GraphLayout:
    """Lays out one scope; ``build`` runs in a worker thread, the rest is quick. Its parts: the groups
    (:class:`~onnxviz.model.layout.grouping.Grouping`), which of them are open
    (:class:`~onnxviz.model.layout.expansion.Expansion`), each level's units and edges
    (:class:`~onnxviz.model.layout.wiring.LevelWiring`) and the words drawn
    (:class:`~onnxviz.model.layout.texts.LayoutTexts`); here, each level laid out once per set of open groups
    inside it, and the scene composed from the shown levels."""

    def __init__(self, index: ModelIndex, scope: str = "", expanded: Iterable[str] | None = None,
                 options: LayoutOptions | None = None) -> None:
        self.index = index
        self.scope = scope
        self.graph: ScopeGraph = build_scope_graph(index, scope)
        self.grouping = Grouping(self.graph)
        self.tree: GroupTree = self.grouping.tree
        self.texts = LayoutTexts(index, scope, self.graph, self.tree, options or LayoutOptions())
        self.wiring = LevelWiring(self.graph, self.tree)
        nodes = int(np.count_nonzero(self.graph.node_item >= 0))
        self.expansion = Expansion(self.tree, Expansion.first(self.tree, nodes, expanded))
        self._blocks: dict[tuple[int, tuple[int, ...]], Block] = {}
        self._shapes: dict[tuple[bytes, ...], LevelLayout] = {}
        self._placements: dict[tuple[bytes, ...], Placement] = {}   # of big levels, kept when labels change
        self._scene = Scene(scope=scope)
        self._vids: list[int] = []   # the value id of each edge of the scene
        self._progress: ProgressFn = no_progress
        self._cancel: CancelToken | None = None
        self._done_items = 0
        self._own_items: list[int] | None = None
        self._units: dict[int, _Units] = {}   # while laying out: the unit rows of the levels not laid out yet
        self._said = 0.0
        self._told = (-1.0, "")   # the progress last passed on

    # -- public API ------------------------------------------------------------------
    @property
    def options(self) -> LayoutOptions:
        """Set before build; ``edge_names`` may change before :meth:`relabel`."""
        return self.texts.options

    @options.setter
    def options(self, options: LayoutOptions) -> None:
        self.texts.options = options

    @property
    def scene(self) -> Scene:
        return self._scene

    @property
    def expanded(self) -> frozenset[str]:
        return self.expansion.paths

    def build(self, progress: ProgressFn = no_progress, cancel: CancelToken | None = None) -> Scene:
        self._progress, self._cancel, self._done_items, self._said = progress, cancel, 0, 0.0
        self._told = (0.0, "Laying out the graph")
        try:
            progress(*self._told)
            self._lay_out_shown()
            progress(0.95, "Routing edges")
            self._scene = self._compose()
            progress(1.0, "Layout done")
        finally:
            self._progress, self._cancel = no_progress, None
        return self._scene

    def expand_all(self) -> None:
        """Open every group (before building)."""
        self.expansion.set(set(range(self.tree.n_groups)))

    def wire(self) -> None:
        """Wire each shown level now (its units and edges need neither texts nor types: ``render`` wires while
        shape inference runs in a child process)."""
        self.wiring.wire_all([-1, *self.expansion.shown.tolist()])

    def expand(self, group: str) -> Scene:
        """Open ``group`` (and the groups around it, so it shows)."""
        g = self.tree.id_of.get(group)
        if g is not None and any(a not in self.expansion.opened for a in self.tree.chain(g)):
            for a in self.tree.chain(g):
                if a not in self.expansion.opened:
                    self._toggle(a, True)
            self._scene = self._compose()
        return self._scene

    def collapse(self, group: str) -> Scene:
        g = self.tree.id_of.get(group)
        if g is not None and g in self.expansion.opened:
            self._toggle(g, False)
            self._scene = self._compose()
        return self._scene

    def reveal(self, node: int) -> Scene:
        """Expand every group around ``node`` so it has its own box."""
        g = self.grouping.group_id_of(node)
        return self.expand(self.tree.paths[g]) if g >= 0 else self._scene

    def group_of(self, node: int) -> str:
        g = self.grouping.group_id_of(node)
        return self.tree.paths[g] if g >= 0 else ""

    def group_nodes(self, group: str) -> list[int]:
        """Positions of the nodes inside ``group`` at any depth (those drawn within another box too), ascending."""
        g = self.tree.id_of.get(group)
        if g is None:
            return []
        end = int(self.tree.end[g])
        return [n for n in range(len(self.graph.node_item)) if g <= self.grouping.group_id_of(n) < end]

    def relabel(self) -> Scene:
        """The scene again after inference filled ``index.inferred``: new edge labels, and when they differ
        from the drawn ones, the shown levels laid out again, since the room between layers follows the
        labels (a new Scene: the one being drawn is never changed under the painter)."""
        self.texts.forget_labels()
        labelled = self.texts.labelled(self._scene, self._vids)
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
                if not self.grouping.in_its_group(item):
                    return None
                items.add(item)
            else:  # a constant listed inside its readers' boxes: their lines show its shape
                items.update(sg.drawn_readers(node))
        changed: dict[int, BoxText] = {}
        for item in sorted(items):
            old = self.texts.items.get(item)
            if old is None:
                continue  # never laid out (inside a collapsed group): a later layout reads the new text
            new = item_text(sg, item)
            if new.size(self.options.names) != old.size(self.options.names):
                return None
            if new != old:
                changed[item] = new
        self.texts.items.update(changed)
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

    # -- composing the scene -------------------------------------------------------------
    def _compose(self) -> Scene:
        """The scene of the shown levels, composed from plain data, with its edges labelled."""
        # the shown levels: the root and each shown expanded group; the collapsed groups in them: those whose
        # parent is shown; every item of a laid-out level had its text made then
        shown = np.zeros(self.tree.n_groups + 1, bool)
        shown[[-1, *self.expansion.shown.tolist()]] = True
        self._lay_out_shown()
        blocks = {g: self._block(g) for g in np.flatnonzero(shown[:-1]).tolist() + [-1]}
        groups = np.flatnonzero(shown[self.tree.parent] & ~shown[:-1]).tolist()
        levels = Levels(self.scope, self.graph, self.tree, blocks, MappingProxyType(self.texts.items),
                        {g: self.group_text(g) for g in groups}, self.visible_codes())
        scene, self._vids = compose_scene(levels)
        return self.texts.labelled(self._oriented(scene), self._vids)

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

    def item_text(self, item: int) -> BoxText:
        return self.texts.item(item)

    def group_text(self, g: int) -> BoxText:
        return self.texts.group(g)

    def edge_label(self, vid: int) -> tuple[str, bool]:
        """(shape text, came from inference?) of value ``vid``."""
        return self.texts.edge_label(vid)

    def visible_codes(self) -> np.ndarray:
        """Per item: its own id, or ``n_items + group`` of the outermost collapsed group holding it."""
        return self.expansion.visible_codes(self.graph.n_items)

    # -- expansion ---------------------------------------------------------------------
    def _toggle(self, g: int, expand: bool) -> None:
        chain = self.tree.chain(int(self.tree.parent[g])) if g >= 0 else []
        old_keys = {a: self.expansion.key(a) for a in [-1, *chain, g]}
        if any((a, old_keys[a]) not in self._blocks for a in [-1, *chain]):
            self.expansion.set(self.expansion.opened | {g} if expand else self.expansion.opened - {g})
            return  # nothing laid out yet: the next build lays out from scratch
        self.expansion.set(self.expansion.opened | {g} if expand else self.expansion.opened - {g})
        child = g
        for level in [*reversed(chain), -1]:
            key = (level, self.expansion.key(level))
            if key not in self._blocks:
                old = self._blocks[(level, old_keys[level])]
                row = old.group_row(child)
                if child in self.expansion.opened:  # the new frame's main entry goes where the box was
                    sub = self._block(child)
                    w, h, kind, shift = sub.width, sub.height, UNIT_BLOCK, -sub.main_in_dx()
                    if old.kind[row] == UNIT_BLOCK:  # a frame that grew: keep its entry where it was
                        before = self._blocks[(child, old_keys[child])]
                        shift += before.main_in_dx()
                else:  # the box goes where the old frame's main entry was
                    w, h = self.texts.size(self.group_text(child))
                    kind = UNIT_GROUP
                    shift = self._blocks[(child, old_keys[child])].main_in_dx()
                self._blocks[key] = old.resized(row, w, h, kind, shift)
            child = level

    # -- laying out the levels -------------------------------------------------------------
    def _lay_out_shown(self) -> None:
        """Lay out every shown level not laid out yet, their wiring and unit rows first made for all of them at once
        (one pass over arrays: numpy's fixed cost per level was most of a level's)."""
        todo = [g for g in [-1, *self.expansion.shown.tolist()] if (g, self.expansion.key(g)) not in self._blocks]
        if not todo:
            return
        self.wiring.wire_all(todo)
        try:
            self._units = self._unit_tables(todo)
            for g in todo:   # the root first: it lays out the levels inside it (a nested frame's level first)
                self._block(g)
        finally:
            self._units = {}

    def _block(self, g: int) -> Block:
        key = (g, self.expansion.key(g))
        block = self._blocks.get(key)
        if block is None:
            block = self._blocks[key] = self._lay_out_level(g)
        return block

    def _lay_out_level(self, g: int) -> Block:
        if self._cancel is not None:
            self._cancel.check()
        wiring = self.wiring.of(g)
        triples = wiring.triples
        units = self._units.pop(g, None) or self._unit_tables([g])[g]
        kind, ref, w, h = units.kind, units.ref, units.w, units.h
        for row in units.frames:   # a nested frame's size: its level laid out first
            sub = self._block(int(ref[row]))
            w[row], h[row] = sub.width, sub.height
        src_dx, dst_dx = self._port_offsets(kind, ref, triples)
        lay = self._level_layout(kind, w, h, triples, src_dx, dst_dx, units.label_w)
        title_w = len(self.tree.title(g)) * TITLE_CHAR_W + 44 if g >= 0 else 0.0  # the title and the - button
        self._report(g)
        return Block(g, kind, ref, lay, wiring.in_port, wiring.out_port, triples[:, 2].copy(), min_width=title_w,
                     across=self.options.across).fit_frame()

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
                      src_dx: np.ndarray, dst_dx: np.ndarray, label_w: np.ndarray | None) -> LevelLayout:
        """Lay out one level; levels of identical shape (repeated layers) share one result."""
        gap = self.texts.label_room(len(w), triples) if self.options.across else LAYER_GAP
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

    def _unit_tables(self, levels: list[int]) -> dict[int, _Units]:
        """Each level's unit rows (entry ports, units, exit ports: kind, ref, size) and the widths of the labels
        it draws, made for all ``levels`` at once. A nested frame's row gets its size when the level is laid out."""
        n, across = self.graph.n_items, self.options.across
        wirings = [self.wiring.of(g) for g in levels]
        n_in, n_units, n_out, n_edges = (np.array([len(x) for x in rows], np.int64) for rows in zip(
            *[(w.in_vals, w.units, w.out_vals, w.triples) for w in wirings], strict=True))
        size = n_in + n_units + n_out
        start = np.cumsum(size) - size
        kind = np.empty(int(size.sum()), np.int8)
        ref = np.empty(len(kind), np.int64)
        w, h = np.full(len(kind), DUMMY_W), np.zeros(len(kind))
        for (lo, hi), k, vals in (((start, start + n_in), UNIT_IN, [x.in_vals for x in wirings]),
                                  ((start + n_in + n_units, start + size), UNIT_OUT, [x.out_vals for x in wirings])):
            at = runs(lo, hi)[1]
            kind[at], ref[at] = k, np.concatenate(vals)
        at = runs(start + n_in, start + n_in + n_units)[1]
        codes = np.concatenate([x.units for x in wirings])
        item = codes < n
        group = np.where(item, -1, codes - n)
        opened = self.expansion.opened
        kind[at] = np.where(item, UNIT_ITEM, UNIT_GROUP)
        ref[at] = np.where(item, codes, group)
        groups = at[~item]
        kind[groups[[g in opened for g in group[~item].tolist()]]] = UNIT_BLOCK
        boxes = at[item]
        sizes = self._item_sizes(codes[item].tolist())
        w[boxes], h[boxes] = (sizes[:, 1], sizes[:, 0]) if across else (sizes[:, 0], sizes[:, 1])
        collapsed = at[kind[at] == UNIT_GROUP]
        sizes = np.array([self.texts.group_size(g) for g in ref[collapsed].tolist()], float).reshape(-1, 2)
        w[collapsed], h[collapsed] = sizes[:, 0], sizes[:, 1]
        label_w = None if across else self._label_widths(wirings, kind, start, n_edges)
        frames = np.flatnonzero(kind == UNIT_BLOCK)
        frame_level = np.searchsorted(start, frames, side="right") - 1
        frame_cut = np.searchsorted(frame_level, np.arange(len(levels) + 1)).tolist()
        frame_rows = (frames - start[frame_level]).tolist()
        cut = np.concatenate([[0], np.cumsum(size)]).tolist()
        edge_cut = np.concatenate([[0], np.cumsum(n_edges)]).tolist()
        return {g: _Units(kind[cut[j]:cut[j + 1]], ref[cut[j]:cut[j + 1]], w[cut[j]:cut[j + 1]], h[cut[j]:cut[j + 1]],
                          None if label_w is None else label_w[edge_cut[j]:edge_cut[j + 1]],
                          frame_rows[frame_cut[j]:frame_cut[j + 1]])
                for j, g in enumerate(levels)}

    def _item_sizes(self, items: list[int]) -> np.ndarray:
        """Each item's box size (its text made now if not yet) as (w, h) rows, a slice at a time between checks of
        the cancel (an array per slice: one ``np.array`` of 123k sizes held the GIL ~60 ms)."""
        names = self.options.names
        sizes = [np.zeros((0, 2))]
        for first in range(0, len(items), CANCEL_ITEMS):
            if self._cancel is not None:
                self._cancel.check()
            sizes.append(np.array([self.item_text(code).size(names) for code in items[first:first + CANCEL_ITEMS]],
                                  float).reshape(-1, 2))
        return np.concatenate(sizes)

    def _label_widths(self, wirings: list[Wiring], kind: np.ndarray, start: np.ndarray,
                      n_edges: np.ndarray) -> np.ndarray:
        """Per level edge, levels one after another, the width of the label its level draws beside it below its
        source: one per (box, value), at its first edge; none for edges leaving a port or a nested frame (their
        labels sit elsewhere)."""
        triples = np.concatenate([x.triples for x in wirings]).reshape(-1, 3)
        level = np.repeat(np.arange(len(wirings)), n_edges)
        src_kind = kind[start[level] + triples[:, 0]]
        labelled = np.flatnonzero((src_kind == UNIT_ITEM) | (src_kind == UNIT_GROUP))
        span = int(triples[:, 2].max()) + 1 if len(triples) else 1
        keys = (level[labelled] * (int(triples[:, 0].max(initial=0)) + 1) + triples[labelled, 0]) * span \
            + triples[labelled, 2]
        order = np.argsort(keys, kind="stable")
        first = np.ones(len(order), bool)
        first[1:] = keys[order[1:]] != keys[order[:-1]]
        rows = labelled[order[first]]
        widths = np.zeros(len(triples))
        widths[rows] = self.texts.label_widths(triples[rows, 2])
        return widths
