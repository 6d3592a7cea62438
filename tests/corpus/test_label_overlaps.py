"""Edge labels over a corpus: no label overlaps another label or any box, and no edge runs through a label's
text (the operator conformance
models, the wheel's suites, bench/synth.py and bench/shaped.py models, and the real exports under
tests/data/exports/), with shapes inferred as the window infers them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import TEST_DATA
from corpus_fixtures import CorpusModel
from label_checks import assert_no_label_overlaps, edge_crossings, overlaps
from shaped import bert_legacy, qdq_cnn
from synth import build as synth_build

from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.graph.validation import infer_types
from onnxviz.model.layout.engine import GraphLayout
from onnxviz.model.layout.labels import label_spots
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
