"""One laid-out level: the direct contents of the scope root or of one expanded group.

A level's units are its own nodes and terminals, its child groups (a box when
collapsed, a nested block when expanded) and, for a group, one entry port per
value coming in from outside (pinned to the top) and one exit port per value
leaving (pinned to the bottom). Ports sit exactly on the frame's top and bottom
edge, so an edge into a group is the parent level's route to the frame plus the
group's own route from the port.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from onnxviz.model.layout.layers import LevelLayout

FRAME_PAD = 14.0     # frame border to contents, left and right (left to right: top and bottom)
FRAME_FOOT = 8.0     # frame bottom to contents' exit ports (top to bottom)
FRAME_HEADER = 22.0  # frame top to contents (the group's title is drawn there)
ENTRY_GAP = 4.0      # entry ports (on the frame's top) to the first boxes, below the title (top to bottom)

UNIT_ITEM = 0        # a node or terminal box
UNIT_GROUP = 1       # a collapsed group box
UNIT_BLOCK = 2       # an expanded group: a nested block
UNIT_IN = 3          # entry port
UNIT_OUT = 4         # exit port


@dataclass
class Block:
    group: int                          # -1 for the scope root
    kind: np.ndarray                    # UNIT_* per unit row
    ref: np.ndarray                     # item id, group id or value id per unit row
    lay: LevelLayout
    in_port: dict[int, int]             # value id -> row
    out_port: dict[int, int]
    edge_val: np.ndarray
    width: float = 0.0                  # frame size
    height: float = 0.0
    pad_x: float = 0.0                  # frame corner to the layout's (0, 0)
    pad_top: float = 0.0
    min_width: float = 0.0              # room for the frame's title
    across: bool = False                # laid out for a left-to-right drawing (x and y swapped when drawn)

    def fit_frame(self) -> Block:
        cw, ch = self.lay.size()
        if self.group < 0:
            self.width, self.height, self.pad_x, self.pad_top = cw, ch, 0.0, 0.0
            return self
        if self.across:  # drawn turned: this layout's left side becomes the frame's top, where the title goes
            self.width, self.pad_x = cw + FRAME_HEADER + FRAME_PAD, FRAME_HEADER
            self.height = max(ch + 2 * FRAME_PAD, self.min_width)
            self.pad_top = (self.height - ch) / 2
            return self
        self.width = max(cw + 2 * FRAME_PAD, self.min_width)
        self.pad_x = (self.width - cw) / 2
        self.pad_top = FRAME_HEADER
        self.height = ch + FRAME_HEADER + FRAME_FOOT
        return self

    def group_row(self, g: int) -> int:
        """The row of group ``g``'s unit (its box or its nested frame)."""
        return int(np.flatnonzero((self.ref == g) & ((self.kind == UNIT_GROUP) | (self.kind == UNIT_BLOCK)))[0])

    def port_dx(self, row: int) -> float:
        """Port's x offset from the frame's centre."""
        plain = self.lay.plain()
        return float(self.pad_x + plain.x[row] + plain.w[row] / 2 - self.width / 2)

    def main_in_dx(self) -> float:
        """Offset from the frame's centre of the entry port feeding the most units (0 if none)."""
        if not self.in_port:
            return 0.0
        fed = np.bincount(self.lay.edge_src, minlength=len(self.kind))
        rows = list(self.in_port.values())
        return self.port_dx(max(rows, key=lambda r: (fed[r], -r)))

    def resized(self, row: int, w1: float, h1: float, kind: int, centre_shift: float = 0.0) -> Block:
        """A copy where unit ``row`` has size (w1, h1) and its centre moved by ``centre_shift``.

        Growth pushes the others aside and down: units left of the unit's old
        centre move left by what it grew on the left, units right of it move
        right by what it grew on the right, units below move down by the extra
        height. Shrinking pulls the units below up as far as the unit's
        neighbours allow. So everything else keeps its relative position within
        its side. (The centre shift keeps a frame's entry port, or a collapsed
        box, under the edge that was coming into the old unit.)
        """
        lay = self.lay
        x, y, w, h = lay.x.copy(), lay.y.copy(), lay.w.copy(), lay.h.copy()
        top, bottom = lay.band_top.copy(), lay.band_bottom.copy()
        cx = x[row] + w[row] / 2
        old_left, old_right, old_bottom = x[row], x[row] + w[row], y[row] + h[row]
        if w1 <= w[row]:  # stay inside the old extent: nothing beside needs to move
            centre_shift = min(max(centre_shift, old_left + w1 / 2 - cx), old_right - w1 / 2 - cx)
        grow_left = old_left - (cx + centre_shift - w1 / 2)
        grow_right = (cx + centre_shift + w1 / 2) - old_right
        eps = 1e-6
        centres = x + w / 2
        if grow_left > 0:
            x[centres < cx - eps] -= grow_left
        if grow_right > 0:
            x[centres > cx + eps] += grow_right
        below = y >= old_bottom - eps
        dh = h1 - h[row]
        if dh < 0:  # pull up no further than the tallest neighbour beside the unit
            beside = ~below
            beside[row] = False
            limit = max([y[row] + h1, *(y[beside] + h[beside]).tolist()])
            dh = limit - old_bottom
        if abs(dh) > eps:
            y[below] += dh
            top[top >= old_bottom - eps] += dh
            bottom[bottom >= old_bottom - eps] += dh
        x[row], w[row], h[row] = cx + centre_shift - w1 / 2, w1, h1
        x -= x.min()
        kinds = self.kind.copy()
        kinds[row] = kind
        new_lay = replace(lay, x=x, y=y, w=w, h=h, band_top=top, band_bottom=bottom)
        return replace(self, kind=kinds, lay=new_lay).fit_frame()
