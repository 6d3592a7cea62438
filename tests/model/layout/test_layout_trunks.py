"""Edges from one producer to far consumers: the producer sinks towards its consumers and its edges share
one trunk of slots that they leave next to each consumer (no band of parallel lines)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from conftest import TEST_DATA

from onnxviz.model.graph.index import ModelIndex
from onnxviz.model.graph.validation import infer_types
from onnxviz.model.layout.engine import GraphLayout
from onnxviz.model.layout.layers import layered_layout
from onnxviz.model.layout.scene import Scene

BERT_DYNAMO = TEST_DATA / "exports" / "bert_dynamo.onnx"


def _spine_with_fan(fan_to: list[int], extra_preds: int = 0) -> tuple[np.ndarray, np.ndarray, int]:
    """Units 0..9 in a chain; unit 10 reads unit 0 (and ``extra_preds`` more chain units) and feeds ``fan_to``."""
    src = list(range(9)) + [0] + list(range(1, 1 + extra_preds)) + [10] * len(fan_to)
    dst = list(range(1, 10)) + [10] * (1 + extra_preds) + fan_to
    return np.array(src), np.array(dst), 11


def test_a_producer_feeding_more_units_than_feed_it_sits_above_its_first_consumer() -> None:
    src, dst, n = _spine_with_fan([5, 7, 9])
    lay = layered_layout(np.full(n, 60.0), np.full(n, 20.0), src, dst)
    assert lay.layer[10] == lay.layer[5] - 1   # not right under unit 0, where longest-path layering puts it


def test_a_unit_fed_as_often_as_it_feeds_stays_where_its_inputs_are() -> None:
    src, dst, n = _spine_with_fan([5, 9], extra_preds=1)
    lay = layered_layout(np.full(n, 60.0), np.full(n, 20.0), src, dst)
    assert lay.layer[10] == lay.layer[1] + 1


def test_edges_of_one_producer_share_one_trunk() -> None:
    src, dst, n = _spine_with_fan([5, 7, 9])
    lay = layered_layout(np.full(n, 60.0), np.full(n, 20.0), src, dst)
    chains = {int(b): lay.edge_chain[e] for e, (a, b) in enumerate(zip(lay.edge_src, lay.edge_dst, strict=True)) if a == 10}
    assert chains[5] == []   # the first consumer is right below
    assert len(chains[7]) == 2 and chains[9][:2] == chains[7] and len(chains[9]) == 4
    slots = {d for chain in chains.values() for d in chain}
    assert len(slots) == 4   # one slot per layer crossed, not one per edge


def _scene(path: Path) -> Scene:
    model = onnx.load(str(path), load_external_data=False)
    index = ModelIndex(model)
    index.set_inferred(infer_types(model).types)
    return GraphLayout(index).build()


def _points(scene: Scene, e: int) -> list[tuple[float, float]]:
    off = scene.edge_offsets
    return [(round(float(x), 1), round(float(y), 1)) for x, y in scene.edge_points[off[e]:off[e + 1]]]


def test_bert_dynamo_shape_concat_sends_one_trunk_down_from_just_above_its_first_reshape() -> None:
    scene = _scene(BERT_DYNAMO)
    model = onnx.load(str(BERT_DYNAMO), load_external_data=False)
    concat = next(k for k, n in enumerate(model.graph.node) if n.name == "node_Concat_23")
    box = scene.box_of_node(concat)
    edges = [e for e in range(scene.n_edges) if scene.edge_src[e] == box]
    assert len(edges) == 6
    first = min(float(scene.box_y[scene.edge_dst[e]]) for e in edges)
    below = float(scene.box_y[box] + scene.box_h[box])
    assert first - below < 100   # one layer gap (and a label's room) above its first consumer
    # every point of a shorter edge's route but its end (its consumer's top) lies on the longest route:
    # one trunk runs down, not six parallel lines
    routes = sorted((_points(scene, e) for e in edges), key=len)
    longest = set(routes[-1])
    for route in routes[:-1]:
        assert set(route[:-1]) <= longest
