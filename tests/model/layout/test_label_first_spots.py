"""The labels' edges are chosen and ordered, and their first spots checked (free of boxes and of other boxes' edges),
for all labels at once in numpy: the same answers as the one-by-one checks, and the same spots for every label."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import cast

import numpy as np
import onnx
import pytest
from conftest import TEST_DATA
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.graph.validation import infer_types
from onnxviz.model.layout import labels
from onnxviz.model.layout.engine import GraphLayout
from onnxviz.model.layout.options import LEFT_TO_RIGHT, LayoutOptions
from onnxviz.model.layout.scene import Scene

EXPORTS = sorted((TEST_DATA / "exports").glob("*.onnx"))
# scene points are float32; a few grid cells either side of 0, on a coarse grid or not (so that edges and
# rectangles often touch exactly, where a strict or a loose comparison answers differently)
COORD = st.one_of(st.floats(-400, 400, width=32), st.integers(-12, 12).map(lambda k: k * 32.0))
SIZE = st.one_of(st.floats(1, 300, width=32), st.integers(1, 8).map(lambda k: k * 32.0))


def _rects(n: int) -> st.SearchStrategy[np.ndarray]:
    return hnp.arrays(np.float64, (n, 4), elements=COORD).map(
        lambda r: np.concatenate([r[:, :2], r[:, :2] + np.abs(r[:, 2:]) / 2], 1))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 40).flatmap(lambda n: st.tuples(
    hnp.arrays(np.float32, (n, 2), elements=COORD), hnp.arrays(np.float32, (n, 2), elements=SIZE))),
    st.integers(0, 30).flatmap(_rects))
def test_boxes_checked_at_once_answer_as_one_by_one(boxes: tuple[np.ndarray, np.ndarray], rects: np.ndarray) -> None:
    (xy, wh) = boxes
    scene = cast(Scene, SimpleNamespace(box_x=xy[:, 0], box_y=xy[:, 1], box_w=wh[:, 0], box_h=wh[:, 1],
                                        n_boxes=len(xy)))
    index = labels._Boxes(scene)
    expected = [index.free(tuple(r)) for r in rects.tolist()]
    assert index.free_many(rects).tolist() == expected


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(2, 5), max_size=12).flatmap(lambda sizes: st.tuples(
    st.just(sizes), hnp.arrays(np.float32, (sum(sizes), 2), elements=COORD),
    st.lists(st.integers(0, 3), min_size=len(sizes), max_size=len(sizes)))),
    st.integers(0, 30).flatmap(lambda n: st.tuples(_rects(n), st.lists(st.integers(0, 3), min_size=n, max_size=n))))
def test_edges_checked_at_once_answer_as_one_by_one(edges: tuple[list[int], np.ndarray, list[int]],
                                                    queries: tuple[np.ndarray, list[int]]) -> None:
    sizes, points, sources = edges
    rects, query_sources = queries
    offsets = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    scene = cast(Scene, SimpleNamespace(edge_points=points, edge_offsets=offsets,
                                        edge_src=np.array(sources, np.int64)))
    index = labels._Segments(scene)
    expected = [index.free(tuple(r), s) for r, s in zip(rects.tolist(), query_sources, strict=True)]
    assert index.free_many(rects, np.array(query_sources, np.int64)).tolist() == expected


def _one_by_one(monkeypatch: pytest.MonkeyPatch, scene: Scene) -> labels.LabelSpots:
    with monkeypatch.context() as patch:
        patch.setattr(labels, "WHOLE_SCENE", 1 << 40)   # every label checked one at a time, however big the scene
        return labels.label_spots(scene)


@pytest.mark.parametrize("direction", ["TB", LEFT_TO_RIGHT])
@pytest.mark.parametrize("path", EXPORTS, ids=[p.stem for p in EXPORTS])
def test_the_first_spots_at_once_give_every_label_the_spot_one_by_one_gives(
        monkeypatch: pytest.MonkeyPatch, path: Path, direction: str) -> None:
    model = onnx.load(str(path), load_external_data=False)
    index = ModelIndex(model)
    index.set_inferred(infer_types(model).types)
    collapsed = GraphLayout(index, options=LayoutOptions(direction=direction))
    collapsed.build()
    scene = GraphLayout(index, expanded=collapsed.tree.paths, options=LayoutOptions(direction=direction)).build()
    expected = _one_by_one(monkeypatch, scene)
    monkeypatch.setattr(labels, "WHOLE_SCENE", 0)   # the whole-scene passes, however small the scene
    for at_once, one_by_one in zip(labels._labelled_edges(scene), labels._labelled_edges_one_by_one(scene), strict=True):
        np.testing.assert_array_equal(at_once, one_by_one)
    found = labels.label_spots(scene)
    assert len(found.edge) > 0
    for name in ("edge", "x", "y", "left"):
        np.testing.assert_array_equal(getattr(found, name), getattr(expected, name))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 30).flatmap(lambda n: st.tuples(_rects(n), st.lists(st.booleans(), min_size=n, max_size=n))),
       st.integers(0, 6).flatmap(_rects))
def test_labels_apart_overlap_no_other_first_spot_and_no_frame_mark(spots: tuple[np.ndarray, list[bool]],
                                                                     marks: np.ndarray) -> None:
    rects, given = spots
    padded = [tuple(r) if g else None for r, g in zip(rects.tolist(), given, strict=True)]
    mark_list = [tuple(m) for m in marks.tolist()]
    chosen = rects[np.array(given, bool)].reshape(-1, 4)

    def meets(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
        return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]

    expected = [not any(o is not None and k != i and meets(r, o) for k, o in enumerate(padded))
                and not any(meets(r, m) for m in mark_list) for i, r in enumerate(padded) if r is not None]
    assert labels._apart(chosen, marks).tolist() == expected
