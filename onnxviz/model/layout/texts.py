"""The words of one scope's drawing, made once and kept: each item's and each collapsed group's box text (and its
size as a level lays it out), and each value's edge label (its shape, inferred or declared; its name too when
the options say so), with the room the labels take between layers."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.graph.inference import PackedTypes
from onnxviz.model.layout.groups import GroupTree
from onnxviz.model.layout.labels import label_room, label_width
from onnxviz.model.layout.layers import LAYER_GAP_ACROSS
from onnxviz.model.layout.options import LayoutOptions
from onnxviz.model.layout.scene import Category, Scene
from onnxviz.model.layout.scope import BoxText, ScopeGraph, clip, item_text
from onnxviz.model.text import label_shape_text

if TYPE_CHECKING:
    from onnx import TypeProto

EDGE_NAME_TEXT = 40    # characters of a tensor name shown on its edge


class LayoutTexts:
    """Box texts and edge labels of one scope (``options`` may change between layouts: see
    :meth:`forget_labels`)."""

    def __init__(self, index: ModelIndex, scope: str, graph: ScopeGraph, tree: GroupTree,
                 options: LayoutOptions) -> None:
        self.index, self.scope, self.graph, self.tree, self.options = index, scope, graph, tree, options
        self.items: dict[int, BoxText] = {}   # per item laid out so far
        self._groups: dict[int, BoxText] = {}
        self._group_sizes: dict[tuple[int, bool, bool], tuple[float, float]] = {}
        self._labels: dict[int, tuple[str, bool]] = {}
        self._shape_texts: dict[bytes, str] = {}   # a type's bytes -> its label text
        self._widths: dict[str, float] = {}        # a label's text -> its width

    def item(self, item: int) -> BoxText:
        text = self.items.get(item)
        if text is None:
            text = self.items[item] = item_text(self.graph, item)
        return text

    def group(self, g: int) -> BoxText:
        text = self._groups.get(g)
        if text is None:
            count = int(self.tree.count[g])
            text = self._groups[g] = BoxText(clip(self.tree.title(g)), self.tree.paths[g], [f"{count} nodes"],
                                             Category.GROUP)
        return text

    def size(self, text: BoxText) -> tuple[float, float]:
        """A box's size as a level lays it out (turned for a left-to-right drawing)."""
        w, h = text.size(self.options.names)
        return (h, w) if self.options.across else (w, h)

    def group_size(self, g: int) -> tuple[float, float]:
        """:meth:`size` of group ``g``'s box (kept: relabelling and expanding lay levels out again)."""
        key = (g, self.options.names, self.options.across)
        size = self._group_sizes.get(key)
        if size is None:
            size = self._group_sizes[key] = self.size(self.group(g))
        return size

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

    def _inferred_labels(self, vids: list[int]) -> None:
        """The labels of those of ``vids`` that inference alone typed (no declared type), not made yet, once per
        distinct type (a model's 100k+ values share a few hundred): what :meth:`edge_label` gives them."""
        inferred = self.index.inferred.get(self.scope)
        if not isinstance(inferred, PackedTypes):
            return
        at, types = inferred.grouped()
        declared, names, labels = self.graph.graph.declared, self.graph.values, self._labels
        by_type: dict[int, str] = {}
        for vid in vids:
            if vid < 0 or vid in labels:
                continue
            name = names[vid]
            k = at.get(name) if name not in declared else None
            if k is None:
                continue
            text = by_type.get(k)
            if text is None:
                text = by_type[k] = self._shape_label(types[k])
            if self.options.edge_names:
                clipped = clip(name, EDGE_NAME_TEXT)
                labels[vid] = (f"{clipped}: {text}" if text else clipped, True)
            else:
                labels[vid] = (text, True)

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

    def forget_labels(self) -> None:
        """Inference filled the index (or the options changed): labels are made again when next asked for."""
        self._labels.clear()
        self._shape_texts.clear()

    def labelled(self, scene: Scene, vids: Iterable[int]) -> Scene:
        """``scene`` with the labels of its edges, whose value ids are ``vids``."""
        vids = list(vids)
        self._inferred_labels(vids)
        labels = [self.edge_label(v) for v in vids]
        return dataclasses.replace(scene, edge_label=[t for t, _ in labels],
                                   edge_inferred=np.array([inf for _, inf in labels], bool))

    def label_widths(self, vids: np.ndarray) -> np.ndarray:
        """The width of each value's edge label (0 without one), once per distinct text."""
        widths: list[float] = []
        listed = vids.tolist()
        self._inferred_labels(listed)
        for vid in listed:
            text = self.edge_label(vid)[0]
            width = self._widths.get(text)
            if width is None:
                width = self._widths[text] = label_width(text) if text else 0.0
            widths.append(width)
        return np.array(widths, float)

    def label_room(self, n_units: int, triples: np.ndarray) -> np.ndarray:
        """Per unit, the room after it (left to right) that the labels of the values it sends need to lie
        along their edges (labels run along the flow there): at least :data:`LAYER_GAP_ACROSS`."""
        room = np.full(n_units, LAYER_GAP_ACROSS)
        self._inferred_labels(triples[:, 2].tolist())
        for unit, vid in zip(triples[:, 0].tolist(), triples[:, 2].tolist(), strict=True):
            need = label_room(self.edge_label(vid)[0])
            if need > room[unit]:
                room[unit] = need
        return room
