"""Left to right, edge labels run along their edges: the room between two layers grows with the labels
of the values leaving them (also once inferred shapes arrive), and a label that still does not fit goes
above or below its edge's start; none overlaps another label or a box."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from conftest import TEST_DATA
from label_checks import assert_no_label_overlaps

from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.graph.validation import infer_types
from onnxviz.model.layout.engine import GraphLayout
from onnxviz.model.layout.labels import label_rect, label_spots, label_width
from onnxviz.model.layout.options import LEFT_TO_RIGHT, LayoutOptions
from onnxviz.model.layout.scene import Scene

EXPORTS = TEST_DATA / "exports"
MODELS = sorted(EXPORTS.glob("*.onnx"))


def _values(scene: Scene) -> set[tuple[int, str]]:
    return {(int(s), v) for s, v, t in zip(scene.edge_src, scene.edge_value, scene.edge_label, strict=True) if t}


def _across(index: ModelIndex, **options: object) -> GraphLayout:
    layout = GraphLayout(index, options=LayoutOptions(direction=LEFT_TO_RIGHT, **options))  # type: ignore[arg-type]
    layout.build()
    return layout


@pytest.mark.parametrize("path", MODELS, ids=[p.stem for p in MODELS])
def test_almost_every_shape_label_is_shown_left_to_right_and_none_overlaps(path: Path) -> None:
    model = onnx.load(str(path), load_external_data=False)
    index = ModelIndex(model)
    index.set_inferred(infer_types(model).types)
    scene = _across(index).scene
    assert_no_label_overlaps(scene)
    # long shapes were dropped before (mlp: 0 of 14); now a label an edge of another box would cross everywhere
    # along its own edge is left to the tooltip (bert_dynamo: 2 of 90; gpt2_dynamo, added later: 3 of 75)
    assert len(label_spots(scene).edge) >= 0.96 * len(_values(scene))


def test_labels_lie_along_their_edge_where_the_edge_is_long_enough() -> None:
    model = onnx.load(str(EXPORTS / "mlp_int4_matmulnbits.onnx"), load_external_data=False)
    index = ModelIndex(model)
    index.set_inferred(infer_types(model).types)
    scene = _across(index).scene
    spots = label_spots(scene)
    along = 0
    for e, x, y, left in zip(spots.edge.tolist(), spots.x.tolist(), spots.y.tolist(), spots.left.tolist(), strict=True):
        start, end = scene.edge_polyline(e)[0], scene.edge_polyline(e)[-1]
        x0, y0, x1, y1 = label_rect(x, y, left, scene.edge_label[e])
        if x1 <= end[0] and abs(y1 - start[1]) < 20:
            along += 1
    assert along == len(spots.edge)   # in the widened gaps, right above or below the edge


def test_inferred_shapes_widen_the_gaps_when_they_arrive() -> None:
    model = onnx.load(str(EXPORTS / "bert_dynamo.onnx"), load_external_data=False)
    del model.graph.value_info[:]   # shapes only inference knows
    index = ModelIndex(model)
    layout = _across(index)   # as the window does: laid out before inference is done
    before = layout.scene.bounds()[2]
    index.set_inferred(infer_types(model).types)
    scene = layout.relabel()
    assert scene.bounds()[2] > before
    assert_no_label_overlaps(scene)
    assert len(label_spots(scene).edge) >= 0.97 * len(_values(scene))   # see above


def test_a_label_longer_than_any_gap_goes_beside_its_edge() -> None:
    model = onnx.load(str(EXPORTS / "gpt2_legacy.onnx"), load_external_data=False)
    index = ModelIndex(model)
    index.set_inferred(infer_types(model).types)
    scene = _across(index, edge_names=True).scene   # "name: shape" labels, some longer than the widest gap
    assert max(label_width(t) for t in scene.edge_label) > 260
    assert_no_label_overlaps(scene)
    assert len(label_spots(scene).edge) >= 0.9 * len(_values(scene))
