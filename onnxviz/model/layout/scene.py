"""The drawable description of one graph: plain arrays, no Qt.

This is the contract between the layout (``onnxviz.model.layout.engine``), which
produces a :class:`Scene` from a document's index, and everything that draws
(the canvas widget, ``onnxviz render``, PNG/SVG export), which only reads it.

Coordinates are scene units (pixels at zoom 1:1), y grows downwards, data
flows top to bottom. Boxes are addressed by their row in the arrays.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np


class BoxKind(IntEnum):
    OP = 0          # an operator node
    INPUT = 1       # a graph input (terminal)
    OUTPUT = 2      # a graph output (terminal)
    GROUP = 3       # a collapsed name-scope group standing for many nodes
    GHOST = 4       # a node only the other model of a diff has (``onnxviz.model.layout.ghosts``)


class Category(IntEnum):
    """Header colour classes of operator boxes."""

    OTHER = 0
    CONV = 1            # convolution / linear (Conv, Gemm, MatMul...)
    ACTIVATION = 2
    NORMALIZATION = 3
    POOLING = 4
    TENSOR = 5          # shape / layout manipulation
    ELEMENTWISE = 6     # arithmetic
    REDUCTION = 7
    CONTROL = 8         # If, Loop, Scan, function calls
    QUANTIZATION = 9
    CUSTOM = 10         # a domain other than ai.onnx / ai.onnx.ml
    ATTENTION = 11
    CONSTANT = 12
    TERMINAL = 13       # graph input / output boxes
    GROUP = 14


@dataclass(frozen=True)
class BoxRef:
    """What a box stands for in the document.

    ``node`` is the node's position in the scope's node list (OP boxes);
    ``value`` the value name (INPUT/OUTPUT boxes); ``group`` the name-scope
    path such as ``"encoder/layers.3"`` (GROUP boxes).
    """

    kind: BoxKind
    node: int = -1
    value: str = ""
    group: str = ""


@dataclass
class Scene:
    """Everything needed to draw one graph scope.

    Box arrays all have length ``n_boxes``; edge arrays length ``n_edges``.
    Edge ``i``'s polyline is ``edge_points[edge_offsets[i]:edge_offsets[i+1]]``
    (an (k, 2) float array, first point on the source box's bottom, last point
    on the target box's top).
    """

    scope: str = ""
    direction: str = "TB"   # "TB": data flows top to bottom; "LR": left to right (edges leave boxes on the right)
    # boxes
    box_x: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))  # left
    box_y: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))  # top
    box_w: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    box_h: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    box_kind: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int8))
    box_category: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int8))
    box_title: list[str] = field(default_factory=list)      # op type, value name or group name
    box_name: list[str] = field(default_factory=list)       # node name ("" if none)
    box_lines: list[list[str]] = field(default_factory=list)  # e.g. ["W <64x3x7x7>", "B <64>"]
    box_ref: list[BoxRef] = field(default_factory=list)
    # edges
    edge_src: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    edge_dst: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    edge_value: list[str] = field(default_factory=list)
    edge_label: list[str] = field(default_factory=list)    # shape text such as "1x64x56x56", "" if unknown
    edge_inferred: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))  # label from inference
    edge_offsets: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int64))
    edge_points: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), np.float32))
    # expanded name-scope groups, drawn as frames behind their members
    group_path: list[str] = field(default_factory=list)
    group_rect: np.ndarray = field(default_factory=lambda: np.zeros((0, 4), np.float32))  # x, y, w, h
    group_depth: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int16))
    # node position -> row of the box showing it (its collapsed group's box if hidden), -1 if none;
    # empty when the producer did not fill it
    node_box: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))

    @property
    def n_boxes(self) -> int:
        return len(self.box_x)

    @property
    def n_edges(self) -> int:
        return len(self.edge_src)

    def edge_polyline(self, i: int) -> np.ndarray:
        return self.edge_points[self.edge_offsets[i]:self.edge_offsets[i + 1]]

    def bounds(self) -> tuple[float, float, float, float]:
        """(x, y, w, h) enclosing every box, edge point and group frame."""
        if self.n_boxes == 0:
            return (0.0, 0.0, 0.0, 0.0)
        xs = [self.box_x.min(), (self.box_x + self.box_w).max()]
        ys = [self.box_y.min(), (self.box_y + self.box_h).max()]
        if len(self.edge_points):
            xs += [self.edge_points[:, 0].min(), self.edge_points[:, 0].max()]
            ys += [self.edge_points[:, 1].min(), self.edge_points[:, 1].max()]
        if len(self.group_rect):
            g = self.group_rect
            xs += [g[:, 0].min(), (g[:, 0] + g[:, 2]).max()]
            ys += [g[:, 1].min(), (g[:, 1] + g[:, 3]).max()]
        x0, x1, y0, y1 = float(min(xs)), float(max(xs)), float(min(ys)), float(max(ys))
        return (x0, y0, x1 - x0, y1 - y0)

    def box_of_node(self, node: int) -> int:
        """Row of the box that shows node ``node`` (its collapsed group's box if hidden), or -1."""
        if len(self.node_box):
            return int(self.node_box[node]) if 0 <= node < len(self.node_box) else -1
        for i, ref in enumerate(self.box_ref):
            if ref.kind == BoxKind.OP and ref.node == node:
                return i
        return -1
