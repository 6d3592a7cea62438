"""Edge labels over a corpus: no label overlaps another label, any box or a group frame's name or button, and
no edge runs through a label's text (the operator conformance
models, the wheel's suites, bench/synth.py and bench/shaped.py models, and the real exports under
tests/data/exports/), with shapes inferred as the window infers them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx_data import corpus_models, model_id
from shaped import bert_legacy, qdq_cnn
from synth import build as synth_build

from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.graph.validation import infer_types
from onnxviz.model.layout.engine import GraphLayout
from onnxviz.model.layout.labels import frame_marks, label_rect, label_spots
from onnxviz.model.layout.scene import Scene

EXPORTS = Path(__file__).resolve().parent / "data" / "exports"
CORPUS = corpus_models() + sorted(EXPORTS.glob("*.onnx"))


def _ids(paths: list[Path]) -> list[str]:
    return [p.stem if p.is_relative_to(EXPORTS) else model_id(p) for p in paths]


def label_rects(scene: Scene) -> np.ndarray:
    spots = label_spots(scene)
    rows = [label_rect(float(x), float(y), bool(left), scene.edge_label[int(e)])
            for e, x, y, left in zip(spots.edge, spots.x, spots.y, spots.left, strict=True)]
    return np.array(rows, float).reshape(-1, 4)


def overlaps(a: np.ndarray, b: np.ndarray, same: bool) -> int:
    """Pairs of rectangles (x0, y0, x1, y1) of ``a`` and ``b`` that intersect (a sweep in x)."""
    count = 0
    order = np.argsort(b[:, 0])
    bx0 = b[order, 0]
    for i, (x0, y0, x1, y1) in enumerate(a.tolist()):
        end = int(np.searchsorted(bx0, x1, side="left"))
        cand = order[:end]
        cand = cand[(b[cand, 2] > x0) & (b[cand, 1] < y1) & (b[cand, 3] > y0)]
        count += int(np.count_nonzero(cand > i)) if same else len(cand)
    return count


def edge_crossings(scene: Scene, labels: np.ndarray, sources: list[int]) -> int:
    """Labels whose text (their rectangle less 2 units above and below) an edge of another box than the
    label's (``sources``: each label's box) passes through: each edge's polyline sampled every half unit."""
    if not len(labels) or len(scene.edge_points) < 2:
        return 0
    band = labels + np.array([0.0, 2.0, 0.0, -2.0])
    pts, off = scene.edge_points.astype(float), scene.edge_offsets.tolist()
    samples, owners = [], []
    for e in range(scene.n_edges):
        line = pts[off[e]:off[e + 1]]
        for a, b in zip(line[:-1], line[1:], strict=True):
            n = int(np.hypot(*(b - a)) * 2) + 2
            samples.append(a + np.linspace(0.0, 1.0, n)[:, None] * (b - a))
            owners.append(np.full(n, int(scene.edge_src[e])))
    if not samples:
        return 0
    p, owner = np.concatenate(samples), np.concatenate(owners)
    order = np.argsort(p[:, 0])
    px = p[order, 0]
    crossed = 0
    for (x0, y0, x1, y1), source in zip(band.tolist(), sources, strict=True):
        near = order[np.searchsorted(px, x0, "right"):np.searchsorted(px, x1, "left")]
        hit = (p[near, 1] > y0) & (p[near, 1] < y1) & (owner[near] != source)
        crossed += bool(np.any(hit))
    return crossed


def assert_no_label_overlaps(scene: Scene) -> None:
    labels = label_rects(scene)
    boxes = np.stack([scene.box_x, scene.box_y, scene.box_x + scene.box_w, scene.box_y + scene.box_h], 1)
    assert overlaps(labels, labels, same=True) == 0
    assert overlaps(labels, boxes.astype(float), same=False) == 0
    assert overlaps(labels, np.array(frame_marks(scene), float).reshape(-1, 4), same=False) == 0
    assert edge_crossings(scene, labels, [int(scene.edge_src[e]) for e in label_spots(scene).edge]) == 0


def _lay_out_all(model: onnx.ModelProto) -> list[Scene]:
    index = ModelIndex(model)
    index.set_inferred(infer_types(model).types)
    return [GraphLayout(index, scope).build() for scope in index.graphs]


@pytest.mark.parametrize("path", CORPUS, ids=_ids(CORPUS))
def test_labels_overlap_nothing_in_the_corpus(path: Path) -> None:
    for scene in _lay_out_all(onnx.load(str(path), load_external_data=False)):
        assert_no_label_overlaps(scene)


@pytest.mark.parametrize("make", [lambda: synth_build(10), bert_legacy, qdq_cnn], ids=["synth10", "bert", "qdq"])
def test_labels_overlap_nothing_and_almost_all_are_shown(make: object) -> None:
    model = make()  # type: ignore[operator]
    for scene in _lay_out_all(model):
        assert_no_label_overlaps(scene)
        values = {(int(s), v) for s, v, t in zip(scene.edge_src, scene.edge_value, scene.edge_label, strict=True) if t}
        assert len(label_spots(scene).edge) >= 0.9 * len(values)


def test_the_counter_sees_an_overlap() -> None:
    a = np.array([[0.0, 0.0, 10.0, 10.0], [5.0, 5.0, 20.0, 20.0], [30.0, 0.0, 40.0, 10.0]])
    assert overlaps(a, a, same=True) == 1
    assert overlaps(a[:1], a[1:], same=False) == 1


def test_the_crossing_counter_sees_an_edge_through_a_label() -> None:
    scene = Scene(edge_offsets=np.array([0, 2]), edge_points=np.array([[5.0, -10.0], [5.0, 30.0]], np.float32),
                  edge_src=np.array([0]), edge_dst=np.array([1]))
    assert edge_crossings(scene, np.array([[0.0, 0.0, 10.0, 15.0]]), [1]) == 1
    assert edge_crossings(scene, np.array([[6.0, 0.0, 16.0, 15.0]]), [1]) == 0
    assert edge_crossings(scene, np.array([[0.0, 0.0, 10.0, 15.0]]), [0]) == 0   # its own box's edge


def framed_edge(frame_x: float) -> Scene:
    """A box feeding one inside a group frame whose top band (its name, its − button) the edge crosses."""
    f32 = np.float32
    return Scene(box_x=np.array([0, 0], f32), box_y=np.array([0, 200], f32), box_w=np.array([80, 80], f32),
                 box_h=np.array([20, 20], f32), box_kind=np.zeros(2, np.int8),
                 edge_src=np.array([0], np.int32), edge_dst=np.array([1], np.int32), edge_value=["v"],
                 edge_label=["batch × 64 × (floor(height/2 - 1/2) + 1)"], edge_inferred=np.zeros(1, bool),
                 edge_offsets=np.array([0, 2]), edge_points=np.array([[40, 20], [40, 200]], f32),
                 group_path=["model/model.0/conv_stem_block"], group_rect=np.array([[frame_x, 30, 400, 160]], f32),
                 group_depth=np.zeros(1, np.int16))


@pytest.mark.parametrize("frame_x", [-10.0, -338.0])   # the label's first spot over the frame's name, its button
def test_no_label_over_a_frames_name_or_button(frame_x: float) -> None:
    # a detector's long labels lay over group frames' names and "−" buttons
    scene = framed_edge(frame_x)
    labels = label_rects(scene)
    assert len(labels) == 1
    assert overlaps(labels, np.array(frame_marks(scene), float), same=False) == 0
    plain = label_rects(framed_edge(2000.0))   # with the frame out of the way: the first spot, by the source
    assert labels[0, 1] > plain[0, 1]                                       # moved down its own edge
    assert labels[0, 0] == plain[0, 0]                                      # beside it, as before
