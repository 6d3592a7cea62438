"""Ghost boxes: nodes another model has and the shown one lacks, drawn into a laid-out scene.

The model diff shows A's graph; a node only B has (added in B) has no box of A's layout. This module
appends one box per such node to a finished :class:`Scene` (kind :attr:`BoxKind.GHOST`, its ref's
``node`` the caller's key), beside the boxes of the A nodes it reads from and feeds, between them
along the flow, with edges to and from them. A chain of added nodes is stacked in its own column.
Nothing of the scene moves: the ghosts go where no box is, so a scene without ghosts costs nothing.
Ghosts whose neighbours all hide in one collapsed group are not drawn one by one: one ghost box beside
the group says how many it holds (its ref's ``group`` names the group; opening it shows them).

Plain data, no Qt; :func:`merge_ghosts` is all a caller needs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from onnxviz.model.layout.categories import category_of
from onnxviz.model.layout.inline import Embedded, concatenate
from onnxviz.model.layout.scene import BoxKind, BoxRef, Scene
from onnxviz.model.layout.scope import BoxText

Endpoint = int | str   # an A node's position in its graph, or the name of an A graph input/output
ALONG_GAP = 36.0       # between a ghost and the boxes before/after it, along the flow
ACROSS_GAP = 40.0      # beside the neighbours' boxes
SIDE_GAP = 20.0        # between ghosts of one level
STEP = 8.0             # an edge's straight piece out of and into a box
MARGIN = 10.0          # free room kept around a ghost column
MAX_TRIES = 400        # moves aside before a column is placed where it is (never a hang)
MAX_GHOSTS = 3000      # ghosts drawn one by one in a scene; the rest are counted by one box
MAX_CHAIN = 300        # a longer chain of added nodes is counted, not drawn (B's graph shows it)


@dataclass(frozen=True)
class Ghost:
    """One node the shown graph lacks. ``key`` comes back as the ghost box's ``BoxRef.node``;
    ``sources``/``targets`` are the shown graph's nodes (or graph inputs/outputs) it reads from and
    feeds; ``after`` the keys of other ghosts of the same graph feeding it."""

    scope: str
    key: int
    op_type: str
    domain: str = ""
    name: str = ""
    sources: tuple[Endpoint, ...] = ()
    targets: tuple[Endpoint, ...] = ()
    after: tuple[int, ...] = ()
    note: str = "added in B"
    group: str = ""      # a ghost standing for the ghosts inside this collapsed group

    def text(self) -> BoxText:
        return BoxText(self.op_type, self.name, [self.note], category_of(self.op_type, self.domain))


@dataclass
class _Column:
    """The ghosts of one connected chain, level by level along the flow."""

    members: list[Ghost]
    level: dict[int, int]                 # key -> level
    sources: list[int]                    # box rows before it
    targets: list[int]                    # box rows after it
    ends: dict[int, tuple[list[int], list[int]]]   # key -> the rows it reads from and feeds


def merge_ghosts(scene: Scene, ghosts: Mapping[str, Sequence[Ghost]], embedded: Iterable[Embedded] = (),
                 names: bool = False) -> Scene:
    """``scene`` (graph ``scene.scope``, with the bodies in ``embedded`` drawn inside their nodes) with
    the ghosts of every graph it shows appended; ``scene`` itself is left as is. ``ghosts`` maps a graph's
    scope to its ghosts. Returns ``scene`` when none applies."""
    rows: list[tuple[Ghost, list[int], list[int]]] = []
    for scope, offset, part in [(scene.scope, 0, scene)] + [(e.scope, e.box_start, e.scene) for e in embedded]:
        mine = ghosts.get(scope, ())
        terminals = {r.value: k for k, r in enumerate(part.box_ref) if r.kind in (BoxKind.INPUT, BoxKind.OUTPUT)} \
            if mine else {}
        for g in mine:
            rows.append((g, _rows(part, g.sources, offset, terminals), _rows(part, g.targets, offset, terminals)))
    if not rows:
        return scene
    flip = scene.direction == "LR"
    along, across, along_size, across_size = (scene.box_x, scene.box_y, scene.box_w, scene.box_h) if flip else \
        (scene.box_y, scene.box_x, scene.box_h, scene.box_w)
    placer = _Placer(np.asarray(across, np.float64), np.asarray(along, np.float64),
                     np.asarray(across_size, np.float64), np.asarray(along_size, np.float64), flip, names, len(rows))
    placer.avoid(scene.group_rect)
    for column in _gathered(scene, _columns(rows)):
        placer.place(column)
    return concatenate([scene, placer.part(scene.n_boxes, flip)], scene)


def _rows(part: Scene, ends: tuple[Endpoint, ...], offset: int, terminals: dict[str, int]) -> list[int]:
    """The box rows (of the combined scene) showing ``ends`` in ``part``: a node's box (or its collapsed
    group's), a graph input's or output's box."""
    out = []
    for end in ends:
        row = part.box_of_node(end) if isinstance(end, int) else terminals.get(end, -1)
        if row >= 0 and offset + row not in out:
            out.append(offset + row)
    return out


def _gathered(scene: Scene, columns: list[_Column]) -> list[_Column]:
    """The columns, those whose neighbours all hide in one collapsed group replaced by one ghost per
    group that counts them, and beyond :data:`MAX_GHOSTS` (or in chains longer than :data:`MAX_CHAIN`)
    by one ghost that counts the rest (numbered -1, -2, ... as keys; no edges)."""
    out: list[_Column] = []
    hidden: dict[int, int] = {}   # group box row -> ghosts inside
    rest, drawn = 0, 0
    for c in columns:
        ends = set(c.sources) | set(c.targets)
        row = ends.pop() if len(ends) == 1 else -1
        if row >= 0 and scene.box_kind[row] == BoxKind.GROUP:
            hidden[row] = hidden.get(row, 0) + len(c.members)
        elif drawn + len(c.members) > MAX_GHOSTS or len(c.members) > MAX_CHAIN:
            rest += len(c.members)
        else:
            out.append(c)
            drawn += len(c.members)
    counts = [(n, scene.box_ref[row].group, [row]) for row, n in hidden.items()] + ([(rest, "", [])] if rest else [])
    for k, (n, path, rows) in enumerate(counts):
        note = f"inside {path.rsplit('/', 1)[-1]}" if path else "more: Show B's graph"
        g = Ghost(scene.scope, -1 - k, f"{n} added in B", note=note, group=path)
        out.append(_Column([g], {g.key: 0}, rows, rows, {g.key: ([], [])}))
    return out


def _columns(rows: list[tuple[Ghost, list[int], list[int]]]) -> list[_Column]:
    """The ghosts grouped into chains (connected through ``after`` within one graph), each ghost's level
    the length of the longest chain of ghosts before it."""
    by_key = {(g.scope, g.key): (g, src, dst) for g, src, dst in rows}
    parent = {k: k for k in by_key}

    def root(k: tuple[str, int]) -> tuple[str, int]:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    for g, _, _ in rows:
        for a in g.after:
            if (g.scope, a) in by_key:
                parent[root((g.scope, g.key))] = root((g.scope, a))
    level: dict[tuple[str, int], int] = {}
    for g, _, _ in rows:   # in the other model's order, which is topological: a ghost's feeders come first
        level[(g.scope, g.key)] = 1 + max((level.get((g.scope, a), -1) for a in g.after), default=-1)
    columns: dict[tuple[str, int], _Column] = {}
    for g, src, dst in rows:
        c = columns.setdefault(root((g.scope, g.key)), _Column([], {}, [], [], {}))
        c.members.append(g)
        c.ends[g.key] = (src, dst)
        c.level[g.key] = level[(g.scope, g.key)]
        c.sources += src
        c.targets += dst
    for c in columns.values():
        c.sources, c.targets = list(dict.fromkeys(c.sources)), list(dict.fromkeys(c.targets))
    return list(columns.values())


class _Placer:
    """Puts columns of ghosts where no box is; works in (across, along) coordinates: x and y when the
    graph flows down, y and x when it flows right."""

    def __init__(self, across: np.ndarray, along: np.ndarray, across_size: np.ndarray, along_size: np.ndarray,
                 flip: bool, names: bool, most: int) -> None:
        self.a0, self.l0 = across, along
        self.a1, self.l1 = across + across_size, along + along_size
        self.flip, self.names = flip, names
        self.rects: list[tuple[float, float, float, float]] = []   # placed ghosts: across, along, size across, size along
        self.placed = np.zeros((4, most), np.float64)   # the same as arrays: across from, to, along from, to
        self.frames = np.zeros((4, 0), np.float64)      # group frames, in the same order

    def avoid(self, rects: np.ndarray) -> None:
        """Keep ghosts off the frames ``rects`` (x, y, w, h): a ghost straddling a frame's border would
        read as one of its members."""
        r = np.asarray(rects, np.float64).reshape(-1, 4)
        x, y = (r[:, 1], r[:, 0]) if self.flip else (r[:, 0], r[:, 1])
        w, h = (r[:, 3], r[:, 2]) if self.flip else (r[:, 2], r[:, 3])
        self.frames = np.stack([x, x + w, y, y + h])
        self.ghosts: list[Ghost] = []
        self.links: list[tuple[int, int]] = []   # (from, to) rows, ghosts counted from the scene's end

    def place(self, column: _Column) -> None:
        sizes = {g.key: self._size(g) for g in column.members}
        by_level: dict[int, list[Ghost]] = {}
        for g in column.members:
            by_level.setdefault(column.level[g.key], []).append(g)
        levels = sorted(by_level)
        depth = {lv: max(sizes[g.key][1] for g in gs) for lv, gs in by_level.items()}
        widths = {lv: sum(sizes[g.key][0] for g in gs) + SIDE_GAP * (len(gs) - 1) for lv, gs in by_level.items()}
        total_along = sum(depth.values()) + ALONG_GAP * (len(levels) - 1)
        total_across = max(widths.values())
        start_along, start_across = self._anchor(column, total_along)
        start_across = self._free(start_across, start_along, total_across, total_along)
        first = len(self.ghosts)
        at_along = start_along
        for lv in levels:
            at_across = start_across
            for g in by_level[lv]:
                w, h = sizes[g.key]
                self.rects.append((at_across, at_along + (depth[lv] - h) / 2, w, h))
                self.placed[:, len(self.ghosts)] = (at_across, at_across + w, at_along, at_along + depth[lv])
                self.ghosts.append(g)
                at_across += w + SIDE_GAP
            at_along += depth[lv] + ALONG_GAP
        self._link(column, first)

    def _size(self, g: Ghost) -> tuple[float, float]:
        w, h = g.text().size(self.names)
        return (h, w) if self.flip else (w, h)

    def _anchor(self, column: _Column, total: float) -> tuple[float, float]:
        """Where the column starts: along the flow between the boxes before and after it, across the
        flow just beside them (beside the whole graph when it has no neighbour drawn)."""
        src, dst = column.sources, column.targets
        after = float(self.l1[src].max()) if src else None
        before = float(self.l0[dst].min()) if dst else None
        if after is not None and before is not None:
            along = (after + before - total) / 2
        elif after is not None:
            along = after + ALONG_GAP
        elif before is not None:
            along = before - ALONG_GAP - total
        else:
            along = float(self.l0.min()) if len(self.l0) else 0.0
        near = src + dst
        across = float(self.a1[near].max()) if near else float(self.a1.max()) if len(self.a1) else 0.0
        return along, across + ACROSS_GAP

    def _free(self, across: float, along: float, width: float, depth: float) -> float:
        """``across`` moved further aside until the column's room overlaps no box and no ghost."""
        for _ in range(MAX_TRIES):
            lo_a, hi_a = across - MARGIN, across + width + MARGIN
            lo_l, hi_l = along - MARGIN, along + depth + MARGIN
            hit = (self.a1 > lo_a) & (self.a0 < hi_a) & (self.l1 > lo_l) & (self.l0 < hi_l)
            p, f = self.placed[:, :len(self.ghosts)], self.frames
            ghost_hit = (p[1] > lo_a) & (p[0] < hi_a) & (p[3] > lo_l) & (p[2] < hi_l)
            frame_hit = (f[1] > lo_a) & (f[0] < hi_a) & (f[3] > lo_l) & (f[2] < hi_l)
            ends = np.concatenate([self.a1[hit], p[1, ghost_hit], f[1, frame_hit]])
            if not len(ends):
                return across
            across = float(ends.max()) + ACROSS_GAP
        return across

    def _link(self, column: _Column, first: int) -> None:
        """Edges: the boxes before the column into its ghosts, ghost to ghost, ghosts into the boxes after."""
        row = {g.key: first + k for k, g in enumerate(self.ghosts[first:])}
        for g in column.members:
            for a in g.after:
                if a in row:
                    self.links.append((-1 - row[a], -1 - row[g.key]))
        for g in column.members:
            src, dst = column.ends[g.key]
            self.links += [(s, -1 - row[g.key]) for s in src] + [(-1 - row[g.key], t) for t in dst]

    def part(self, n_boxes: int, flip: bool) -> Scene:
        """The ghosts as a scene to append after ``n_boxes`` boxes (rows of ghosts counted from there)."""
        r = np.array(self.rects, np.float64).reshape(-1, 4)
        a, lv, w, d = r[:, 0], r[:, 1], r[:, 2], r[:, 3]
        x, y, bw, bh = (lv, a, d, w) if flip else (a, lv, w, d)
        texts = [g.text() for g in self.ghosts]
        src, dst, points = [], [], []
        for s, t in self.links:
            s_row, t_row = (n_boxes + (-1 - s) if s < 0 else s), (n_boxes + (-1 - t) if t < 0 else t)
            src.append(s_row)
            dst.append(t_row)
            points.append(self._route(self._rect(s), self._rect(t)))
        offsets = np.cumsum([0] + [len(p) for p in points]).astype(np.int64)
        pts = np.concatenate(points).astype(np.float32) if points else np.zeros((0, 2), np.float32)
        if flip:
            pts = pts[:, ::-1].copy()
        n, m = len(self.ghosts), len(src)
        return Scene(
            box_x=x.astype(np.float32), box_y=y.astype(np.float32), box_w=bw.astype(np.float32),
            box_h=bh.astype(np.float32), box_kind=np.full(n, BoxKind.GHOST, np.int8),
            box_category=np.array([t.category for t in texts], np.int8).reshape(n),
            box_title=[t.title for t in texts], box_name=[t.name for t in texts], box_lines=[t.lines for t in texts],
            box_ref=[BoxRef(BoxKind.GHOST, g.key, "", g.group) for g in self.ghosts],
            edge_src=np.array(src, np.int32), edge_dst=np.array(dst, np.int32), edge_value=[""] * m,
            edge_label=[""] * m, edge_inferred=np.zeros(m, bool), edge_offsets=offsets, edge_points=pts)

    def _rect(self, row: int) -> tuple[float, float, float, float]:
        """(across, along, size across, size along) of a scene box (row >= 0) or a ghost (row < 0)."""
        if row < 0:
            return self.rects[-1 - row]
        return (float(self.a0[row]), float(self.l0[row]), float(self.a1[row] - self.a0[row]),
                float(self.l1[row] - self.l0[row]))

    @staticmethod
    def _route(s: tuple[float, float, float, float], t: tuple[float, float, float, float]) -> np.ndarray:
        """From box ``s`` to box ``t``: out of its end and into the other's start when ``t`` lies further
        along the flow; side to side when the two sit beside each other (a ghost beside its neighbour)."""
        sx, sy, tx, ty = s[0] + s[2] / 2, s[1] + s[3], t[0] + t[2] / 2, t[1]
        if ty - sy >= 2 * STEP:
            step = min(ALONG_GAP / 2, (ty - sy) / 3)
            return np.array([(sx, sy), (sx, sy + step), (tx, ty - step), (tx, ty)], np.float64)
        s_mid, t_mid = s[1] + s[3] / 2, t[1] + t[3] / 2
        if s[0] + s[2] <= t[0]:   # t to the right
            x0, x1 = s[0] + s[2], t[0]
            return np.array([(x0, s_mid), (x0 + STEP, s_mid), (x1 - STEP, t_mid), (x1, t_mid)], np.float64)
        x0, x1 = s[0], t[0] + t[2]
        return np.array([(x0, s_mid), (x0 - STEP, s_mid), (x1 + STEP, t_mid), (x1, t_mid)], np.float64)
