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
from onnxviz.model.layout.wiring import LevelWiring
from onnxviz.model.progress import CancelToken, ProgressFn, no_progress

PROGRESS_STEP = 0.005   # the least move of the progress reported (at most 200 reports per text)
KEEP_PLACEMENT = 1000  # levels of this many units keep their placement (relabelling lays out only the gaps again)


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
            self.wire()   # every shown level at once (one pass over arrays), before each is laid out
            self._block(-1)
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
                row = old.row_of[self.graph.n_items + child]
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

    # -- laying out one level -------------------------------------------------------------
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
        kind, ref, w, h = self._unit_table(wiring.units, wiring.in_vals, wiring.out_vals)
        src_dx, dst_dx = self._port_offsets(kind, ref, triples)
        lay = self._level_layout(kind, w, h, triples, src_dx, dst_dx)
        title_w = len(self.tree.title(g)) * TITLE_CHAR_W + 44 if g >= 0 else 0.0  # the title and the - button
        self._report(g)
        return Block(g, kind, ref, lay, wiring.row_of, wiring.in_port, wiring.out_port, wiring.edge_of,
                     triples[:, 2].copy(), min_width=title_w, across=self.options.across).fit_frame()

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
        gap = self.texts.label_room(len(w), triples) if self.options.across else LAYER_GAP
        label_w = None if self.options.across else self.texts.label_widths(kind, triples)
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
            elif code - n in self.expansion.opened:
                sub = self._block(code - n)
                kinds.append(UNIT_BLOCK)
                refs.append(code - n)
                sizes.append((sub.width, sub.height))
            else:
                kinds.append(UNIT_GROUP)
                refs.append(code - n)
                sizes.append(self.texts.group_size(code - n))
        kinds += [UNIT_OUT] * len(out_vals)
        refs += out_vals.tolist()
        sizes += [(DUMMY_W, 0.0)] * len(out_vals)
        size = np.array(sizes, float).reshape(-1, 2)
        return np.array(kinds, np.int8), np.array(refs, np.int64), size[:, 0], size[:, 1]
