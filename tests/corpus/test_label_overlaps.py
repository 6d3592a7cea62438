"""Edge labels over a corpus: no label overlaps another label, any box or a group frame's name or button, and
no edge runs through a label's text (the operator conformance
models, the wheel's suites, bench/synth.py and bench/shaped.py models, and the real exports under
tests/data/exports/), with shapes inferred as the window infers them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import TEST_DATA
from corpus_fixtures import CorpusModel
from label_checks import assert_no_label_overlaps, edge_crossings, label_rects, overlaps
from shaped import bert_legacy, qdq_cnn
from synth import build as synth_build

from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.graph.validation import infer_types
from onnxviz.model.layout.engine import GraphLayout
from onnxviz.model.layout.labels import frame_marks, label_spots
from onnxviz.model.layout.scene import Scene

EXPORTS = TEST_DATA / "exports"
EXPORT_FILES = sorted(EXPORTS.glob("*.onnx"))


def _lay_out_all(model: onnx.ModelProto) -> list[Scene]:
    index = ModelIndex(model)
    index.set_inferred(infer_types(model).types)
    return [GraphLayout(index, scope).build() for scope in index.graphs]


def test_labels_overlap_nothing_in_the_corpus(corpus_model: CorpusModel) -> None:
    for scene in corpus_model.labelled_scenes:
        assert_no_label_overlaps(scene)


@pytest.mark.parametrize("path", EXPORT_FILES, ids=[p.stem for p in EXPORT_FILES])
def test_labels_overlap_nothing_in_the_exports(path: Path) -> None:
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
